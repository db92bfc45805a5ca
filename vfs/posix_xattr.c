/*
 * The POSIX backend's extended attributes (vfs/posix_priv.h): of an open
 * file, O_PATH opens included (by their /proc name, which names the inode
 * the fd holds), and of one entry of a directory, for listings.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "vfs/vfs.h"
#include "vfs/posix_priv.h"

ssize_t
posix_getxattr(int fd, const char *name, void *buf, size_t len)
{
	char p[32];
	ssize_t n = fgetxattr(fd, name, buf, len);

	if (n < 0 && errno == EBADF) {
		posix_fdpath(fd, p, sizeof(p));
		n = getxattr(p, name, buf, len);
	}
	return n < 0 ? -errno : n;
}

int
posix_setxattr(int fd, const char *name, const void *buf, size_t len,
    int flags)
{
	char p[32];
	int rc = fsetxattr(fd, name, buf, len, flags);

	if (rc < 0 && errno == EBADF) {
		posix_fdpath(fd, p, sizeof(p));
		rc = setxattr(p, name, buf, len, flags);
	}
	return rc < 0 ? -errno : 0;
}

int
posix_removexattr(int fd, const char *name)
{
	char p[32];
	int rc = fremovexattr(fd, name);

	if (rc < 0 && errno == EBADF) {
		posix_fdpath(fd, p, sizeof(p));
		rc = removexattr(p, name);
	}
	return rc < 0 ? -errno : 0;
}

/*
 * getxattrat and listxattrat (Linux 6.13) read an entry's xattrs relative
 * to its directory fd: one component, AT_SYMLINK_NOFOLLOW, no /proc walk,
 * half the time of the /proc name below on a listing.  glibc 2.36 has no
 * wrappers; the numbers are the same on every architecture that has them.
 * An older kernel says ENOSYS once and the /proc name is used from then on.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#define POSIX_SYS_GETXATTRAT	464
#define POSIX_SYS_LISTXATTRAT	465
#endif

struct posix_xattr_args {	/* the kernel's struct xattr_args */
	uint64_t	 value;
	uint32_t	 size;
	uint32_t	 flags;
};

static int posix_xattrat_missing;

/* An entry's /proc name: the directory fd's plus one component. */
static int
posix_entpath(int dirfd, const char *name, char *p, size_t len)
{
	if (strchr(name, '/') != NULL)
		return -EINVAL;
	if ((size_t)snprintf(p, len, "/proc/self/fd/%d/%s", dirfd, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* The xattr of one entry of a directory; a final symlink is not followed. */
ssize_t
posix_entxattr(int dirfd, const char *name, const char *xname, void *buf,
    size_t len)
{
	char p[PATH_MAX];
	ssize_t n;
	int rc;

#ifdef POSIX_SYS_GETXATTRAT
	if (!posix_xattrat_missing) {
		struct posix_xattr_args a = { (uintptr_t)buf, (uint32_t)len, 0 };

		if (strchr(name, '/') != NULL || len > UINT32_MAX)
			return -EINVAL;
		n = syscall(POSIX_SYS_GETXATTRAT, dirfd, name,
		    AT_SYMLINK_NOFOLLOW, xname, &a, sizeof(a));
		if (n >= 0 || errno != ENOSYS)
			return n < 0 ? -errno : n;
		posix_xattrat_missing = 1;
	}
#endif
	if ((rc = posix_entpath(dirfd, name, p, sizeof(p))) != 0)
		return rc;
	n = lgetxattr(p, xname, buf, len);
	return n < 0 ? -errno : n;
}

/* The names of that entry's xattrs, the same way. */
ssize_t
posix_entlistxattr(int dirfd, const char *name, char *buf, size_t len)
{
	char p[PATH_MAX];
	ssize_t n;
	int rc;

#ifdef POSIX_SYS_LISTXATTRAT
	if (!posix_xattrat_missing) {
		if (strchr(name, '/') != NULL)
			return -EINVAL;
		n = syscall(POSIX_SYS_LISTXATTRAT, dirfd, name,
		    AT_SYMLINK_NOFOLLOW, buf, len);
		if (n >= 0 || errno != ENOSYS)
			return n < 0 ? -errno : n;
		posix_xattrat_missing = 1;
	}
#endif
	if ((rc = posix_entpath(dirfd, name, p, sizeof(p))) != 0)
		return rc;
	n = llistxattr(p, buf, len);
	return n < 0 ? -errno : n;
}

ssize_t
posix_listxattr(int fd, char *buf, size_t len)
{
	char p[32];
	ssize_t n = flistxattr(fd, buf, len);

	if (n < 0 && errno == EBADF) {
		posix_fdpath(fd, p, sizeof(p));
		n = listxattr(p, buf, len);
	}
	return n < 0 ? -errno : n;
}
