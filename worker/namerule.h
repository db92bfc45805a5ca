/*
 * Samba's name rules of a share: `veto files` (names that do not exist
 * for clients), `delete veto files` (a directory holding only such names
 * is deletable, and takes them along), `hide files` and `hide dot files`
 * (names shown with FILE_ATTRIBUTE_HIDDEN, nothing stored).  The patterns
 * are compiled at configuration load (daemon/conf_namepat.c); a share
 * without the keys costs one pointer test per name.
 */
#ifndef USMBD_WORKER_NAMERULE_H
#define USMBD_WORKER_NAMERULE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct conf_share;

/*
 * A client's path ('/'-separated, stream already split off): SUCCESS, or
 * what Samba answers for a vetoed component: OBJECT_NAME_NOT_FOUND for the
 * last one, OBJECT_PATH_NOT_FOUND for a directory on the way.
 */
ntstatus_t	namerule_check_path(const struct conf_share *, const char *path);
/*
 * The names the kernel resolved fd to (an open beneath root_fd, symlinks
 * inside the share followed), relative to the root, checked like a
 * client's path: a link whose own name is not vetoed does not lead to a
 * vetoed name.  as_parent: fd is the directory a new name goes in (every
 * match is OBJECT_PATH_NOT_FOUND).  Two readlinks of /proc/self/fd; only
 * on a share with veto files.
 */
ntstatus_t	namerule_check_fd(const struct conf_share *, int root_fd, int fd,
		    int as_parent);
/* The same for the directory path names its last component in. */
ntstatus_t	namerule_check_parent(const struct conf_share *, int root_fd,
		    const char *path);
/* Is this one name (a directory entry) vetoed?  1 or 0. */
int		namerule_vetoed(const struct conf_share *, const char *name,
		    size_t len);
/*
 * `veto oplock files`: does the last component of path (a file, no
 * stream) match?  1 or 0; Samba's is_in_path, no allocation.
 */
int		namerule_oplock_vetoed(const struct conf_share *,
		    const char *path);
/* attrs with FILE_ATTRIBUTE_HIDDEN added when the name is to be hidden. */
uint32_t	namerule_attrs(const struct conf_share *, const char *name,
		    size_t len, uint32_t attrs);
/* The same for a path: its last component decides. */
uint32_t	namerule_path_attrs(const struct conf_share *, const char *path,
		    uint32_t attrs);
/*
 * `delete veto files`: does this entry not keep its directory from being
 * deleted?  1 when the key is on and the name vetoed.
 */
int		namerule_deletable(const struct conf_share *, const char *name);
/*
 * `delete veto files`: removes the vetoed entries of the directory open as
 * dirfd (a vetoed directory with everything below it), leaving the rest.
 * 0, or -errno of the first failure.
 */
int		namerule_purge(const struct conf_share *, int dirfd);

#endif
