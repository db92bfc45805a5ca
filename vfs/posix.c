/*
 * The POSIX backend.  Every lookup starts at the share root fd and goes
 * through openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so neither "..",
 * an absolute symlink nor a symlink climbing out can leave the share.  Where
 * openat2 is missing (ENOSYS) a component walk with O_NOFOLLOW refuses every
 * symlink instead.  Operations on a name (mkdir, unlink, rename, link) open
 * the parent this way and act on the last component with the *at() call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <linux/quota.h>

#include "vfs/vfs.h"
#include "vfs/posix_priv.h"

static int posix_have_openat2 = 1;

static int	posix_entstat(int, const char *, struct vfs_stat *);

static int
posix_check_path(const char *path)
{
	const char *p = path, *s;
	size_t n;

	if (path[0] == '/')
		return -EXDEV;
	while (*p != '\0') {
		s = strchr(p, '/');
		n = s ? (size_t)(s - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

/* The fallback: one component at a time, no symlink followed at all. */
static int
posix_walk(int root, const char *path, int flags, mode_t mode)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *s;
	int dfd, fd;
	size_t n;

	if ((dfd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (*p == '\0') {
		close(dfd);
		fd = openat(root, ".", flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	for (;;) {
		s = strchr(p, '/');
		n = s ? (size_t)(s - p) : strlen(p);
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (s == NULL) {
			fd = openat(dfd, comp, flags | O_NOFOLLOW | O_CLOEXEC,
			    mode);
			if (fd < 0)
				fd = -errno;
			close(dfd);
			return fd;
		}
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(dfd);
		if (fd < 0)
			return errno == ENOTDIR ? -ENOTDIR : -errno;
		dfd = fd;
		p = s + 1;
	}
}

/*
 * openat2 beneath root with the extra RESOLVE_ flags asked for, or the
 * walk where the kernel has no openat2.  The walk follows no symlink,
 * and opens a final one with O_PATH; with RESOLVE_NO_SYMLINKS, a symlink
 * before the last name gives -ELOOP either way.
 */
static int
posix_open_resolve(int root, const char *path, int flags, mode_t mode,
    uint64_t resolve)
{
	struct open_how how;
	int fd, rc;

	if ((rc = posix_check_path(path)) != 0)
		return rc;
	if (posix_have_openat2) {
		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(flags | O_CLOEXEC);
		how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve;
		fd = (int)syscall(SYS_openat2, root, *path ? path : ".", &how,
		    sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != ENOSYS)
			return -errno;
		posix_have_openat2 = 0;
	}
	rc = posix_walk(root, path, flags, mode);
	return rc == -ENOTDIR && (resolve & RESOLVE_NO_SYMLINKS) ? -ELOOP : rc;
}

static int
posix_open(int root, const char *path, int flags, mode_t mode)
{
	return posix_open_resolve(root, path, flags, mode, 0);
}

/*
 * As posix_open, following no symlink in any component (POSIX handles:
 * the client follows links itself).  With O_PATH | O_NOFOLLOW a final
 * symlink is opened itself; a symlink before it gives -ELOOP.
 */
static int
posix_open_nolinks(int root, const char *path, int flags, mode_t mode)
{
	return posix_open_resolve(root, path, flags, mode,
	    RESOLVE_NO_SYMLINKS);
}

/*
 * The first symlink among the components of path before its last one:
 * an O_PATH fd of it and, in *end, where its name ends in path.  -ENOENT
 * when none is (the lookup failed for another reason).
 */
/*
 * The first symlink along path, one component at a time (O_NOFOLLOW, so
 * nothing is followed and nothing leaves root); last: the last component
 * counts too.
 */
static int
posix_link_walk(int root, const char *path, size_t *end, int last)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *s;
	struct stat st;
	int dfd, fd;
	size_t n;

	if (posix_check_path(path) != 0 || path[0] == '\0')
		return -ENOENT;
	if ((dfd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	for (;;) {
		s = strchr(p, '/');
		if (s == NULL && !last)
			break;
		n = s != NULL ? (size_t)(s - p) : strlen(p);
		memcpy(comp, p, n);
		comp[n] = '\0';
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		/* a directory the user may not search: say so (msdfs links) */
		if (fd < 0)
			return last && errno == EACCES ? -EACCES : -ENOENT;
		if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
			*end = (size_t)(p + n - path);
			return fd;
		}
		if (s == NULL || !S_ISDIR(st.st_mode)) {
			close(fd);
			return -ENOENT;
		}
		dfd = fd;
		p = s + 1;
	}
	close(dfd);
	return -ENOENT;
}

static int
posix_first_link(int root, const char *path, size_t *end)
{
	return posix_link_walk(root, path, end, 0);
}

static int
posix_first_link_any(int root, const char *path, size_t *end)
{
	return posix_link_walk(root, path, end, 1);
}

/*
 * quotactl_fd (Linux 5.14): the file system by a descriptor, no block
 * device name to find.  The worker's seccomp filter lets Q_GETQUOTA
 * through and nothing else (worker/confine.c).
 */
#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd	443
#endif

static int
posix_quota(int fd, int group, uint32_t id, struct vfs_quota *q)
{
	struct if_dqblk d;
	uint64_t lim;

	memset(&d, 0, sizeof(d));
	if (syscall(SYS_quotactl_fd, (unsigned)fd, QCMD(Q_GETQUOTA,
	    group ? GRPQUOTA : USRQUOTA), (unsigned)id, &d) != 0)
		return -errno;
	lim = d.dqb_bsoftlimit != 0 ? d.dqb_bsoftlimit : d.dqb_bhardlimit;
	q->limit = (d.dqb_valid & QIF_BLIMITS) ? lim * QIF_DQBLKSIZE : 0;
	q->used = (d.dqb_valid & QIF_SPACE) ? d.dqb_curspace : 0;
	return 0;
}

static ssize_t
posix_readlink(int fd, char *buf, size_t len)
{
	ssize_t n;

	/* an O_PATH fd of the link itself, with an empty name */
	n = readlinkat(fd, "", buf, len);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return n;
}

/*
 * Splits path into its parent (opened beneath root as O_PATH) and the last
 * component (a pointer into path).
 */
static int
posix_parent(int root, const char *path, int *pfd, const char **last)
{
	char parent[PATH_MAX];
	const char *slash;
	size_t n;
	int rc;

	if ((rc = posix_check_path(path)) != 0)
		return rc;
	if (*path == '\0')
		return -EINVAL;		/* the root itself has no name */
	slash = strrchr(path, '/');
	if (slash == NULL) {
		parent[0] = '\0';
		*last = path;
	} else {
		n = (size_t)(slash - path);
		if (n >= sizeof(parent))
			return -ENAMETOOLONG;
		memcpy(parent, path, n);
		parent[n] = '\0';
		*last = slash + 1;
	}
	*pfd = posix_open(root, parent, O_PATH | O_DIRECTORY, 0);
	return *pfd < 0 ? *pfd : 0;
}

static int
posix_mkdir(int root, const char *path, mode_t mode)
{
	const char *last;
	int pfd, rc;

	if ((rc = posix_parent(root, path, &pfd, &last)) != 0)
		return rc;
	rc = mkdirat(pfd, last, mode) < 0 ? -errno : 0;
	close(pfd);
	return rc;
}

static int
posix_unlink(int root, const char *path, int is_dir)
{
	const char *last;
	int pfd, rc;

	if ((rc = posix_parent(root, path, &pfd, &last)) != 0)
		return rc;
	rc = unlinkat(pfd, last, is_dir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
	close(pfd);
	return rc;
}

static int
posix_unlink_same(int root, const char *path, int is_dir, uint64_t dev,
    uint64_t ino)
{
	struct vfs_stat st;
	const char *last;
	int pfd, rc;

	if ((rc = posix_parent(root, path, &pfd, &last)) != 0)
		return rc;
	if ((rc = posix_entstat(pfd, last, &st)) == 0) {
		if (st.dev != dev || st.ino != ino ||
		    (S_ISDIR(st.mode) != 0) != (is_dir != 0))
			rc = -ESTALE;
		else if (unlinkat(pfd, last, is_dir ? AT_REMOVEDIR : 0) < 0)
			rc = -errno;
	}
	close(pfd);
	return rc;
}

/*
 * The file path (still dev/ino) becomes a symlink to target or a special
 * file of mode: made under a temporary name in the same directory, then
 * exchanged with the name in one renameat2, so the name never goes
 * missing; the file it held is removed after, or put back when another
 * file had taken the name meanwhile.
 */
static int
posix_make_special(int root, const char *path, uint64_t dev, uint64_t ino,
    mode_t mode, dev_t rdev, const char *target)
{
	char tmp[64];
	struct vfs_stat st;
	const char *last;
	int pfd, rc;

	if ((rc = posix_parent(root, path, &pfd, &last)) != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), ".usmbd-reparse.%llu.%d",
	    (unsigned long long)ino, (int)getpid());
	if (S_ISLNK(mode))
		rc = symlinkat(target, pfd, tmp);
	else if ((rc = mknodat(pfd, tmp, mode, rdev)) == 0)
		/* the mode asked for, whatever the umask took */
		rc = fchmodat(pfd, tmp, mode & 07777, AT_SYMLINK_NOFOLLOW);
	if (rc < 0) {
		rc = -errno;
		goto out;
	}
	if (renameat2(pfd, tmp, pfd, last, RENAME_EXCHANGE) < 0) {
		rc = -errno;
		(void)unlinkat(pfd, tmp, 0);
		goto out;
	}
	if ((rc = posix_entstat(pfd, tmp, &st)) == 0 &&
	    (st.dev != dev || st.ino != ino)) {
		/* not our file any more: give the name back */
		(void)renameat2(pfd, tmp, pfd, last, RENAME_EXCHANGE);
		rc = -ESTALE;
	}
	(void)unlinkat(pfd, tmp, 0);
out:
	close(pfd);
	return rc;
}

static int
posix_rename(int root, const char *from, const char *to, int replace)
{
	const char *lf, *lt;
	int pf, pt, rc;

	if ((rc = posix_parent(root, from, &pf, &lf)) != 0)
		return rc;
	if ((rc = posix_parent(root, to, &pt, &lt)) != 0) {
		close(pf);
		return rc;
	}
	rc = renameat2(pf, lf, pt, lt, replace ? 0 : RENAME_NOREPLACE);
	rc = rc < 0 ? -errno : 0;
	close(pf);
	close(pt);
	return rc;
}

static int
posix_link(int root, const char *from, const char *to)
{
	const char *lf, *lt;
	int pf, pt, rc;

	if ((rc = posix_parent(root, from, &pf, &lf)) != 0)
		return rc;
	if ((rc = posix_parent(root, to, &pt, &lt)) != 0) {
		close(pf);
		return rc;
	}
	/* no AT_SYMLINK_FOLLOW: a link to a symlink links the symlink */
	rc = linkat(pf, lf, pt, lt, 0) < 0 ? -errno : 0;
	close(pf);
	close(pt);
	return rc;
}

static int
posix_access(int root, const char *path, int mode)
{
	const char *last;
	int pfd, rc;

	if (*path == '\0')
		return faccessat(root, ".", mode, AT_EACCESS) < 0 ? -errno : 0;
	if ((rc = posix_parent(root, path, &pfd, &last)) != 0)
		return rc;
	rc = faccessat(pfd, last, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW);
	rc = rc < 0 ? -errno : 0;
	close(pfd);
	return rc;
}

static int
posix_accessat(int dirfd, const char *name, int mode)
{
	int rc;

	int follow = mode & VFS_ACCESS_FOLLOW;

	mode &= ~VFS_ACCESS_FOLLOW;
	if (strchr(name, '/') != NULL)
		return -EINVAL;
	if (*name == '\0')
		rc = (int)syscall(SYS_faccessat2, dirfd, "", mode,
		    AT_EACCESS | AT_EMPTY_PATH);
	else
		rc = faccessat(dirfd, name, mode, AT_EACCESS |
		    (follow ? 0 : AT_SYMLINK_NOFOLLOW));
	return rc < 0 ? -errno : 0;
}

static void
posix_fill(const struct statx *sx, struct vfs_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->dev = (uint64_t)sx->stx_dev_major << 32 | sx->stx_dev_minor;
	st->ino = sx->stx_ino;
	st->mode = sx->stx_mode;
	st->nlink = sx->stx_nlink;
	st->uid = sx->stx_uid;
	st->gid = sx->stx_gid;
	st->size = sx->stx_size;
	st->alloc = sx->stx_blocks * 512;
	st->rdev_major = sx->stx_rdev_major;
	st->rdev_minor = sx->stx_rdev_minor;
	st->atime.tv_sec = sx->stx_atime.tv_sec;
	st->atime.tv_nsec = sx->stx_atime.tv_nsec;
	st->mtime.tv_sec = sx->stx_mtime.tv_sec;
	st->mtime.tv_nsec = sx->stx_mtime.tv_nsec;
	st->ctime.tv_sec = sx->stx_ctime.tv_sec;
	st->ctime.tv_nsec = sx->stx_ctime.tv_nsec;
	if (sx->stx_mask & STATX_BTIME) {
		st->has_btime = 1;
		st->btime.tv_sec = sx->stx_btime.tv_sec;
		st->btime.tv_nsec = sx->stx_btime.tv_nsec;
	}
}

static int
posix_fstat(int fd, struct vfs_stat *st)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME,
	    &sx) < 0)
		return -errno;
	posix_fill(&sx, st);
	return 0;
}

static int
posix_statat(int root, const char *path, struct vfs_stat *st)
{
	int fd, rc;

	if ((fd = posix_open(root, path, O_PATH, 0)) < 0)
		return fd;
	rc = posix_fstat(fd, st);
	close(fd);
	return rc;
}

static int
posix_entstat(int dirfd, const char *name, struct vfs_stat *st)
{
	struct statx sx;

	if (strchr(name, '/') != NULL)
		return -EINVAL;
	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
	    STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return -errno;
	posix_fill(&sx, st);
	return 0;
}

static int
posix_statfs(int fd, struct vfs_statfs *sf)
{
	struct statfs s;

	if (fstatfs(fd, &s) < 0)
		return -errno;
	sf->blocks = s.f_blocks;
	sf->bfree = s.f_bfree;
	sf->bavail = s.f_bavail;
	sf->bsize = (uint32_t)s.f_bsize;
	sf->namemax = (uint32_t)s.f_namelen;
	memcpy(&sf->fsid, &s.f_fsid, sizeof(sf->fsid));
	return 0;
}

static ssize_t
posix_pread(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (off > (uint64_t)INT64_MAX)
		return -EINVAL;
	do
		n = pread(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Writes all of buf: a short write is retried, as the client sent it all. */
static ssize_t
posix_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	size_t done = 0;
	ssize_t n;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	while (done < len) {
		n = pwrite(fd, p + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done > 0 ? (ssize_t)done : -errno;
		if (n == 0)
			return -ENOSPC;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int
posix_fsync(int fd, int data_only)
{
	return (data_only ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

static int
posix_ftruncate(int fd, uint64_t len)
{
	if (len > (uint64_t)INT64_MAX)
		return -EFBIG;
	return ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
}

static int
posix_reserve(int fd, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	return fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0 ?
	    -errno : 0;
}

static int
posix_punch_hole(int fd, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)off, (off_t)len) < 0 ? -errno : 0;
}

static int
posix_zero_range(int fd, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[65536];
	uint64_t done;
	ssize_t n;

	if (len == 0)
		return 0;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EINVAL;
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	    (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	/* a file system without ZERO_RANGE: write the zeros */
	for (done = 0; done < len; done += (uint64_t)n) {
		n = posix_pwrite(fd, zeros, len - done < sizeof(zeros) ?
		    (size_t)(len - done) : sizeof(zeros), off + done);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

static int64_t
posix_seek(int fd, int64_t off, int whence)
{
	off_t r = lseek(fd, (off_t)off, whence);

	return r < 0 ? -errno : (int64_t)r;
}

static ssize_t
posix_copy_range(int in, uint64_t in_off, int out, uint64_t out_off,
    size_t len)
{
	loff_t io = (loff_t)in_off, oo = (loff_t)out_off;
	ssize_t n;

	n = copy_file_range(in, &io, out, &oo, len, 0);
	return n < 0 ? -errno : n;
}

static int
posix_utimens(int fd, const struct timespec ts[2])
{
	char p[32];

	if (futimens(fd, ts) == 0)
		return 0;
	if (errno != EBADF)
		return -errno;
	posix_fdpath(fd, p, sizeof(p));
	return utimensat(AT_FDCWD, p, ts, 0) < 0 ? -errno : 0;
}

static int
posix_fchmod(int fd, mode_t mode)
{
	char p[32];

	if (fchmod(fd, mode) == 0)
		return 0;
	if (errno != EBADF)
		return -errno;
	posix_fdpath(fd, p, sizeof(p));
	return fchmodat(AT_FDCWD, p, mode, 0) < 0 ? -errno : 0;
}

static int
posix_fchown(int fd, uid_t uid, gid_t gid)
{
	/* AT_EMPTY_PATH works on O_PATH fds too */
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
}

static ssize_t
posix_getdents(int dirfd, void *buf, size_t len)
{
	long n = syscall(SYS_getdents64, dirfd, buf, len);

	return n < 0 ? -errno : (ssize_t)n;
}

static int
posix_rewinddir(int dirfd)
{
	return lseek(dirfd, 0, SEEK_SET) < 0 ? -errno : 0;
}

static int
posix_seekdir(int dirfd, int64_t cookie)
{
	return lseek(dirfd, (off_t)cookie, SEEK_SET) < 0 ? -errno : 0;
}

/*
 * FS_IOC_GETVERSION (ext2/3/4, xfs, btrfs... answer it; tmpfs and others
 * give ENOTTY).  An O_PATH fd cannot take an ioctl: that one goes through
 * a read-only reopen of /proc/self/fd/N (regular files and directories
 * only), closed at once.
 */
static int
posix_generation(int fd, uint32_t *gen)
{
	char p[32];
	int v = 0, rfd, rc;

	rc = ioctl(fd, FS_IOC_GETVERSION, &v);
	if (rc < 0 && errno == EBADF) {
		struct stat st;

		/* never reopen a device or a FIFO: opening one acts */
		if (fstat(fd, &st) != 0)
			return -errno;
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return -ENOTTY;
		posix_fdpath(fd, p, sizeof(p));
		rfd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (rfd < 0)
			return -errno;
		rc = ioctl(rfd, FS_IOC_GETVERSION, &v);
		if (rc < 0)
			rc = -errno;
		close(rfd);
		if (rc < 0)
			return rc;
	} else if (rc < 0)
		return -errno;
	*gen = (uint32_t)v;
	return 0;
}

/*
 * Block sharing.  statfs magics (linux/magic.h) and the XFS geometry
 * call, defined here so that the build needs no xfsprogs headers: the
 * layout is xfs_fs.h's struct xfs_fsop_geom (v5, 256 bytes; its first
 * 112 bytes are v4's, which kernels before 5.1 answer), whose flags say
 * whether the file system was made with reflink (mkfs.xfs -m reflink=1,
 * the default since xfsprogs 5.1; it cannot change after mkfs).
 */
#define POSIX_BTRFS_MAGIC	0x9123683Eu
#define POSIX_XFS_MAGIC		0x58465342u
#define POSIX_XFS_GEOM_REFLINK	(1u << 20)	/* XFS_FSOP_GEOM_FLAGS_REFLINK */

struct posix_xfs_geom {
	uint32_t	 blocksize, rtextsize, agblocks, agcount;
	uint32_t	 logblocks, sectsize, inodesize, imaxpct;
	uint64_t	 datablocks, rtblocks, rtextents, logstart;
	uint8_t		 uuid[16];
	uint32_t	 sunit, swidth;
	int32_t		 version;
	uint32_t	 flags;
	uint32_t	 logsectsize, rtsectsize, dirblocksize, logsunit;
	uint32_t	 sick, checked;			/* v5 from here */
	uint64_t	 reserved[17];
};
_Static_assert(sizeof(struct posix_xfs_geom) == 256, "xfs_fsop_geom v5");
_Static_assert(offsetof(struct posix_xfs_geom, flags) == 92,
    "xfs_fsop_geom flags");
#define POSIX_XFS_IOC_FSGEOMETRY	_IOR('X', 126, struct posix_xfs_geom)
#define POSIX_XFS_IOC_FSGEOMETRY_V4	_IOR('X', 124, uint8_t[112])

/* 1 when the XFS holding directory fd dir was made with reflink. */
static int
posix_xfs_reflink(int dir)
{
	struct posix_xfs_geom g;
	int fd, rc;

	/* an O_PATH fd takes no ioctl: a read-only open of the same directory */
	if ((fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	memset(&g, 0, sizeof(g));
	rc = ioctl(fd, POSIX_XFS_IOC_FSGEOMETRY, &g);
	if (rc < 0 && errno == ENOTTY)
		rc = ioctl(fd, POSIX_XFS_IOC_FSGEOMETRY_V4, &g);
	/* a kernel without either is older than XFS's reflink (4.9) */
	if (rc < 0)
		rc = errno == ENOTTY ? 0 : -errno;
	else
		rc = (g.flags & POSIX_XFS_GEOM_REFLINK) != 0;
	close(fd);
	return rc;
}

static int
posix_clone_unit(int dir)
{
	struct statfs s;
	int rc;

	if (fstatfs(dir, &s) < 0)
		return -errno;
	switch ((uint32_t)s.f_type) {
	case POSIX_BTRFS_MAGIC:
		break;
	case POSIX_XFS_MAGIC:
		if ((rc = posix_xfs_reflink(dir)) <= 0)
			return rc;
		break;
	default:
		return 0;
	}
	return s.f_bsize > 0 && s.f_bsize <= INT_MAX ? (int)s.f_bsize : 0;
}

static int
posix_clone_range(int in, uint64_t in_off, int out, uint64_t out_off,
    uint64_t len)
{
	struct file_clone_range r;

	memset(&r, 0, sizeof(r));
	r.src_fd = in;
	r.src_offset = in_off;
	r.src_length = len;
	r.dest_offset = out_off;
	return ioctl(out, FICLONERANGE, &r) < 0 ? -errno : 0;
}

/*
 * F_OFD_GETLK: one syscall, taken only by a LOCK request.  The range is
 * clipped to what off_t can name (len 0 there means "to the end"); an
 * SMB range that starts past it cannot meet a kernel lock.  An fd the
 * kernel refuses (O_PATH: an open without data access) holds no lock
 * and is reported free.
 */
static int
posix_lock_test(int fd, uint64_t off, uint64_t len, int exclusive)
{
	struct flock fl;

	if (len == 0 || off > (uint64_t)INT64_MAX)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)off;
	fl.l_len = len - 1 > (uint64_t)INT64_MAX - off ? 0 : (off_t)len;
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return errno == EBADF ? 0 : -errno;
	return fl.l_type == F_UNLCK ? 0 : -EAGAIN;
}

const struct vfs_ops vfs_posix = {
	.name = "posix",
	.open = posix_open,
	.open_nolinks = posix_open_nolinks,
	.first_link = posix_first_link,
	.first_link_any = posix_first_link_any,
	.readlink = posix_readlink,
	.make_special = posix_make_special,
	.mkdir = posix_mkdir,
	.unlink = posix_unlink,
	.unlink_same = posix_unlink_same,
	.rename = posix_rename,
	.link = posix_link,
	.access = posix_access,
	.accessat = posix_accessat,
	.fstat = posix_fstat,
	.statat = posix_statat,
	.statfs = posix_statfs,
	.quota = posix_quota,
	.entstat = posix_entstat,
	.entxattr = posix_entxattr,
	.entlistxattr = posix_entlistxattr,
	.pread = posix_pread,
	.pwrite = posix_pwrite,
	.fsync = posix_fsync,
	.ftruncate = posix_ftruncate,
	.fallocate = posix_reserve,
	.punch_hole = posix_punch_hole,
	.zero_range = posix_zero_range,
	.seek = posix_seek,
	.copy_range = posix_copy_range,
	.utimens = posix_utimens,
	.fchmod = posix_fchmod,
	.fchown = posix_fchown,
	.getdents = posix_getdents,
	.rewinddir = posix_rewinddir,
	.seekdir = posix_seekdir,
	.getxattr = posix_getxattr,
	.setxattr = posix_setxattr,
	.removexattr = posix_removexattr,
	.listxattr = posix_listxattr,
	.generation = posix_generation,
	.lock_test = posix_lock_test,
	.clone_unit = posix_clone_unit,
	.clone_range = posix_clone_range,
};
