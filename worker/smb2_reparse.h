/*
 * Symlinks and special files as reparse points (MS-FSCC 2.1.2): opening
 * them without following them, FSCTL_GET_REPARSE_POINT and
 * FSCTL_SET_REPARSE_POINT, and the Symbolic Link Error Response of a
 * CREATE that met a link (MS-SMB2 2.2.2.2.1).  The server never follows
 * a link on a client's behalf beyond what vfs/ resolves beneath the
 * share root: a target is stored and read back as data.
 */
#ifndef USMBD_WORKER_SMB2_REPARSE_H
#define USMBD_WORKER_SMB2_REPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct smb2_req;
struct smb2_rsp;
struct open;
struct tree;
struct cur;
struct wcur;
struct vfs_stat;

/* MS-SMB2 2.2.13 CreateOptions */
#define FILE_OPEN_REPARSE_POINT	0x00200000u

/*
 * A CREATE's lookup met a symlink before the last component of path (a
 * POSIX handle follows none: -ELOOP from vfs open_nolinks): the error
 * response is prepared for smb2_reparse_put_error; STOPPED_ON_SYMLINK,
 * or OBJECT_PATH_NOT_FOUND when no link is found.
 */
ntstatus_t	smb2_reparse_stopped(struct tree *, const char *path);
/*
 * A CREATE found path to be neither file nor directory (st; pfd an
 * O_PATH fd of the object itself): SUCCESS when it may open it itself
 * (FILE_OPEN_REPARSE_POINT, a disposition that changes nothing),
 * STOPPED_ON_SYMLINK for a link on a POSIX handle (the response
 * prepared), IO_REPARSE_TAG_NOT_HANDLED otherwise (as Samba).
 */
ntstatus_t	smb2_reparse_found(const struct vfs_stat *st, int pfd,
		    int posix, uint32_t opts, uint32_t disp);
/* The prepared error response, when status is STOPPED_ON_SYMLINK. */
void		smb2_reparse_put_error(struct smb2_req *, struct smb2_rsp *,
		    ntstatus_t status);
/* FSCTL_GET_REPARSE_POINT of the open into out. */
ntstatus_t	smb2_reparse_get(struct open *, struct wcur *out);
/* FSCTL_SET_REPARSE_POINT: the open's empty file becomes the object. */
ntstatus_t	smb2_reparse_set(struct open *, struct cur *in);

#endif
