/*
 * What a CREATE asks of the file system before it opens anything
 * and what it asks of an opened named stream (worker/smb2_create_fs.c);
 * used by worker/smb2_create.c only.
 */
#ifndef USMBD_WORKER_SMB2_CREATE_FS_H
#define USMBD_WORKER_SMB2_CREATE_FS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

/* MS-SMB2 2.2.14 CreateAction */
#define FILE_SUPERSEDED		0
#define FILE_OPENED		1
#define FILE_CREATED		2
#define FILE_OVERWRITTEN	3

struct file_open;
struct tree;
struct vfs_stat;
struct vfs_dosinfo;

/* MS-DTYP 2.4.3: GENERIC_* rights mapped to the file rights. */
uint32_t	create_map_generic(uint32_t);
/* The parent of path ("" for a top-level name) in buf. */
void		create_parent(const char *path, char *buf, size_t len);
/*
 * The mode a create makes path with (smb2_posix_new_mode): only an
 * `inherit permissions` share pays a stat of the parent (one that fails
 * leaves the masks to apply).
 */
struct smb2_posix_req;
uint32_t	create_new_mode(const struct tree *, const char *path,
		    const struct smb2_posix_req *, int is_dir);
/*
 * What this user may do with path (which exists, stat'ed as st);
 * delete_only: just the DELETE bit (the parent's rights).
 */
uint32_t	create_maximal_access(struct tree *, const char *path,
		    const struct vfs_stat *st, int delete_only);
/*
 * Stats the name as spelled through an O_PATH open kept in *pfd (closed
 * first when >= 0).  links: CREATE_FOLLOW resolves symlinks beneath the
 * root, CREATE_NOFOLLOW the same but a final one is the object itself,
 * CREATE_NOLINKS follows none (-ELOOP before the last component; POSIX
 * handles).  0 or -errno.
 */
#define CREATE_FOLLOW	0
#define CREATE_NOFOLLOW	1
#define CREATE_NOLINKS	2
int		create_lookup(int root, const char *path, struct vfs_stat *st,
		    int *pfd, int links);
/* The DOS xattr of fd (opath: fd is an O_PATH open).  0 or -errno. */
int		create_dos_get(int fd, int opath, struct vfs_dosinfo *di);
/*
 * Opens (or creates, or truncates) the named stream of f, an xattr of
 * its file; *action says what was done.
 */
ntstatus_t	create_open_stream(struct file_open *f, int may_create,
		    int truncate, uint32_t *action);

#endif
