/*
 * DFS (MS-DFSC, MS-SMB2's DFS parts), Samba's `host msdfs`, `msdfs root`
 * and `msdfs proxy`: the share flags of a DFS root, the \server\share
 * prefix of a CREATE sent with SMB2_FLAGS_DFS_OPERATIONS,
 * STATUS_PATH_NOT_COVERED for a path through an msdfs link, and the
 * answers to FSCTL_DFS_GET_REFERRALS and _EX.  HACKING.md "DFS".
 */
#ifndef USMBD_WORKER_DFS_H
#define USMBD_WORKER_DFS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct smb2_req;
struct tree;
struct conf;
struct conf_share;

/* Is the share a DFS root now (host msdfs and msdfs root)? */
int		dfs_share_root(const struct conf *, const struct conf_share *);
/* Does this request's path carry the DFS prefix (flag and a DFS root)? */
int		dfs_req_prefixed(const struct smb2_req *);
/*
 * Samba's smb2_strip_dfs_path on a UTF-8 name, in place, when what it
 * starts with is a prefix: leading backslashes, the server name and the
 * share name go when the share is tree_name or conf_name (any case; NULL
 * names nothing) or ours(arg, host, len) says the server is this one;
 * any other name is left whole.
 * An empty name is INVALID_PARAMETER, a ':' in the share name of a
 * prefix OBJECT_NAME_INVALID.
 */
ntstatus_t	dfs_strip_prefix(char *path, const char *tree_name,
		    const char *conf_name,
		    int (*ours)(void *arg, const char *host, size_t len),
		    void *arg);
/* The same for a CREATE of req: its tree's name, this server's names. */
ntstatus_t	dfs_req_strip(const struct smb2_req *, char *path);
/*
 * After a lookup of path (share-relative, '/'-separated) failed on a DFS
 * root: STATUS_PATH_NOT_COVERED when one of its components is an msdfs
 * link, else STATUS_SUCCESS (the caller answers its own failure).
 */
ntstatus_t	dfs_path_covered(const struct smb2_req *, const char *path);
/*
 * A directory entry (dirfd, name) that is a symlink its share could not
 * resolve: 1 when it is an msdfs link of a DFS root, listed then as
 * Samba and Windows list one, a directory and a reparse point of tag
 * IO_REPARSE_TAG_DFS (dfs_entry_info on what the stat gave).
 */
struct fscc_info;
int		dfs_entry_link(const struct smb2_req *, int dirfd,
		    const char *name);
void		dfs_entry_info(struct fscc_info *);
/*
 * FSCTL_DFS_GET_REFERRALS (ex = 0) or _EX (ex = 1): the referral for
 * in, written to *out (a buffer of the worker, valid until the next
 * call), at most max_out bytes (more: STATUS_BUFFER_OVERFLOW, cut as
 * Samba cuts it).
 */
ntstatus_t	dfs_get_referrals(struct smb2_req *, const uint8_t *in,
		    size_t in_len, int ex, uint32_t max_out,
		    const uint8_t **out, uint32_t *out_len);

#endif
