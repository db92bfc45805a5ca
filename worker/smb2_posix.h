/*
 * SMB3 POSIX extensions in the worker (smb3posix.org): the POSIX create
 * context of a CREATE, the POSIX handles it makes, and the POSIX
 * information level of QUERY_INFO and QUERY_DIRECTORY.  The wire forms
 * are proto/posix.h; smb2_create.c, smb2_info.c and smb2_dir.c call these
 * hooks and keep no POSIX logic of their own.
 */
#ifndef USMBD_WORKER_SMB2_POSIX_H
#define USMBD_WORKER_SMB2_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"
#include "proto/posix.h"

struct smb2_req;
struct open;
struct file_open;
struct vfs_stat;
struct vfs_dosinfo;
struct wcur;

/* What a CREATE's POSIX context asks (struct create_ctx holds one). */
struct smb2_posix_req {
	int		 posix;		/* the context came, on a POSIX connection */
	uint32_t	 perms;		/* the mode for a new file (permission bits) */
};

/*
 * One create context of a CREATE: when it is the POSIX one (on a
 * connection that negotiated the extensions; elsewhere it is ignored, as
 * unknown contexts are, MS-SMB2 3.3.5.9), its mode goes into *pr.
 * STATUS_SUCCESS, or INVALID_PARAMETER for a malformed POSIX context.
 */
struct create_ctx_item;
ntstatus_t	smb2_posix_parse_ctx(struct smb2_req *,
		    const struct create_ctx_item *, struct smb2_posix_req *);
/*
 * The mode of a new file (is_dir 0) or directory: the share's create or
 * directory mask over 0666 / 0777, or over the POSIX context's mode, then
 * its force create / directory mode bits; or, parent_mode not 0 (the
 * parent's st_mode, given on an `inherit permissions` share only), the
 * parent's bits as Samba passes them on.
 */
struct conf_share;
uint32_t	smb2_posix_new_mode(const struct smb2_posix_req *,
		    const struct conf_share *, int is_dir, uint32_t parent_mode);
/* Does the share set modes beyond its masks (force bits, inheritance)? */
#define smb2_posix_mode_keys(sh)	((sh)->force_create_mode != 0 || \
	(sh)->force_directory_mode != 0 || (sh)->inherit_permissions)
/*
 * After a create made fd with mode (smb2_posix_new_mode's): a POSIX
 * create's mode, exactly (the process umask may have taken bits away; one
 * fchmod then, and *st_mode, the create's stat, follows it); on a share
 * with force or inherited bits, those the create left out are added.
 */
void		smb2_posix_created(const struct smb2_posix_req *,
		    const struct conf_share *, uint32_t mode, int fd,
		    uint32_t *st_mode);
/*
 * The create response's POSIX context for f, after *prev: from st and di
 * (what the create read and wrote) when st is not NULL, else read again.
 */
void		smb2_posix_put_create_ctx(struct wcur *, uint8_t **prev,
		    struct file_open *, const struct vfs_stat *st,
		    const struct vfs_dosinfo *di, int has_dos);
/* The POSIX view of a stat and the DOS xattr (has_dos: di is valid). */
void		smb2_posix_from_stat(const struct vfs_stat *,
		    const struct vfs_dosinfo *, int has_dos, struct posix_info *);
/* The same for an open file: one fstat and one xattr read. */
ntstatus_t	smb2_posix_fill(struct file_open *, struct posix_info *);
/*
 * The create response's POSIX context (16-byte name), chained after
 * *prev as worker/smb2_create.c chains its own.
 */
void		smb2_posix_put_ctx(struct wcur *, uint8_t **prev,
		    const struct posix_info *);
/*
 * SET_INFO of a security descriptor on a POSIX handle: a DACL of exactly
 * one ACE for S-1-5-88-3-MODE (the NFS mode SID) is a chmod to MODE's
 * permission bits, as Samba 4.22 takes it (smb2_nttrans.c); *status is
 * its result.  Returns 1 when it was such a chmod, 0 for any other
 * descriptor (the usual SET_INFO path then).
 */
int		smb2_posix_sd_chmod(struct open *, uint32_t which,
		    const uint8_t *sd, size_t len, ntstatus_t *status);
/* QUERY_INFO FILE_POSIX_INFORMATION: INVALID_LEVEL on a non-POSIX handle. */
ntstatus_t	smb2_posix_query_info(struct open *, struct wcur *);

#endif
