/*
 * Between the POSIX backend's files (vfs/posix.c, vfs/posix_xattr.c):
 * the xattr operations its table points at.
 */
#ifndef USMBD_VFS_POSIX_PRIV_H
#define USMBD_VFS_POSIX_PRIV_H

#include <stdio.h>
#include <sys/types.h>

/*
 * An fd may be O_PATH (an open without data access).  Calls that refuse
 * O_PATH fds go through /proc/self/fd/N, which names the inode the fd
 * already holds: nothing is resolved again from a path.
 */
static inline void
posix_fdpath(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

ssize_t	posix_getxattr(int fd, const char *name, void *buf, size_t len);
int	posix_setxattr(int fd, const char *name, const void *buf, size_t len,
	    int flags);
int	posix_removexattr(int fd, const char *name);
ssize_t	posix_listxattr(int fd, char *buf, size_t len);
/* An entry's, by name in dirfd (one component); a symlink not followed. */
ssize_t	posix_entxattr(int dirfd, const char *name, const char *xname,
	    void *buf, size_t len);
ssize_t	posix_entlistxattr(int dirfd, const char *name, char *buf,
	    size_t len);

#endif
