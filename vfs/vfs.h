/*
 * The file-system backend interface.  A backend is a table of functions
 * over handles (file descriptors); every path it is given is relative to a
 * share root handle, '/'-separated, with components already checked by the
 * caller (no "", ".", ".."), and the backend guarantees that resolving it can
 * never leave the root, whatever symlinks the share holds.  Every function
 * returns 0 (or a count) or -errno.  This layer knows neither SMB nor LMDB.
 */
#ifndef USMBD_VFS_VFS_H
#define USMBD_VFS_VFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct vfs_stat {
	uint64_t	 dev;
	uint64_t	 ino;
	uint32_t	 mode;		/* S_IF* | permission bits */
	uint32_t	 nlink;
	uint32_t	 uid;
	uint32_t	 gid;
	uint64_t	 size;
	uint64_t	 alloc;		/* bytes allocated */
	uint32_t	 rdev_major;	/* a device's number */
	uint32_t	 rdev_minor;
	struct timespec	 atime;
	struct timespec	 mtime;
	struct timespec	 ctime;
	struct timespec	 btime;		/* birth time when has_btime */
	int		 has_btime;
};

struct vfs_statfs {
	uint64_t	 blocks;	/* in units of bsize */
	uint64_t	 bfree;
	uint64_t	 bavail;
	uint32_t	 bsize;
	uint32_t	 namemax;
	uint64_t	 fsid;
};

/* A user's or a group's block quota on a file system, in bytes. */
struct vfs_quota {
	uint64_t	 limit;		/* the soft limit, else the hard; 0: none */
	uint64_t	 used;
};

/* A Windows-side view kept by the backend next to the file (vfs/xattr.c). */
struct vfs_dosinfo {
	uint32_t	 attrs;		/* FILE_ATTRIBUTE_* the client set */
	uint64_t	 create_time;	/* FILETIME; 0 = unknown */
	/*
	 * A ChangeTime the client set (FILETIME, 0 = none), valid while the
	 * file's mtime is still change_mtime: a later write moves it on.
	 */
	uint64_t	 change_time;
	uint64_t	 change_mtime;
	/*
	 * A write time that hides the file's mtime while the open named by
	 * wt_owner (0 = none) lives: wt_old until wt_fire, then wt_fire
	 * (FILETIMEs; wt_fire VFS_WT_NEVER keeps wt_old).  Windows' delayed
	 * write-time update; the worker (smb2_rw.c) gives the rules.
	 */
	uint64_t	 wt_old;
	uint64_t	 wt_fire;
	uint64_t	 wt_owner;
};
#define VFS_WT_NEVER	UINT64_MAX

#define VFS_XATTR_DOS		"user.usmbd.dos"
/* accessat: follow a final symlink (one the caller found inside the share) */
#define VFS_ACCESS_FOLLOW	0x100
#define VFS_XATTR_ACL_ACCESS	"system.posix_acl_access"
#define VFS_XATTR_ACL_DEFAULT	"system.posix_acl_default"

/*
 * A POSIX ACL as the kernel keeps it in system.posix_acl_* (the format of
 * linux/posix_acl_xattr.h: version 2, then {tag u16, perm u16, id u32}
 * little endian).  perm holds the rwx bits (4, 2, 1).
 */
#define VFS_ACL_USER_OBJ	0x01
#define VFS_ACL_USER		0x02
#define VFS_ACL_GROUP_OBJ	0x04
#define VFS_ACL_GROUP		0x08
#define VFS_ACL_MASK		0x10
#define VFS_ACL_OTHER		0x20
#define VFS_ACL_MAX		64

struct vfs_acl_entry {
	uint16_t	 tag;
	uint16_t	 perm;
	uint32_t	 id;		/* uid or gid for USER / GROUP */
};

struct vfs_acl {
	unsigned		 n;
	struct vfs_acl_entry	 e[VFS_ACL_MAX];
};
#define VFS_XATTR_STREAM	"user.usmbd.stream."

struct vfs_ops {
	const char	*name;
	/*
	 * Opens path below root with open(2) flags (O_CREAT, O_EXCL,
	 * O_DIRECTORY, O_PATH, O_TRUNC...) and mode; "" opens the root.
	 * Returns a new fd (O_CLOEXEC) or -errno; -EXDEV or -ELOOP when the
	 * path would leave the root.
	 */
	int	(*open)(int root, const char *path, int flags, mode_t mode);
	/*
	 * The same following no symlink in any component (-ELOOP); with
	 * O_PATH | O_NOFOLLOW a final symlink is opened itself.
	 */
	int	(*open_nolinks)(int root, const char *path, int flags,
		    mode_t mode);
	/*
	 * After such an -ELOOP: an O_PATH fd of the first symlink among the
	 * components before the last, and where its name ends in path
	 * (*end); -ENOENT when there is none.
	 */
	int	(*first_link)(int root, const char *path, size_t *end);
	/*
	 * The same with the last component too (msdfs links, worker/dfs.c);
	 * -EACCES where a directory on the way may not be searched.
	 */
	int	(*first_link_any)(int root, const char *path, size_t *end);
	/* The target of the symlink fd (O_PATH), NUL-terminated in buf. */
	ssize_t	(*readlink)(int fd, char *buf, size_t len);
	/*
	 * Replaces the file path, while it is still dev/ino, by a symlink to
	 * target (mode S_IFLNK) or a special file of mode and rdev (FIFO,
	 * socket, device), atomically for the name; -ESTALE when another
	 * file took the name.  Never follows target.
	 */
	int	(*make_special)(int root, const char *path, uint64_t dev,
		    uint64_t ino, mode_t mode, dev_t rdev, const char *target);
	int	(*mkdir)(int root, const char *path, mode_t mode);
	/* Removes a file (is_dir = 0) or an empty directory. */
	int	(*unlink)(int root, const char *path, int is_dir);
	/*
	 * The same, only while path still names the file dev/ino (the
	 * backend's encoding, as fstat gives it; a final symlink not
	 * followed): -ESTALE when another file took the name.  A name that
	 * went by a rename elsewhere is never someone else's file deleted.
	 * A replacement between the check and the unlink cannot be excluded
	 * (POSIX has no unlink by inode).
	 */
	int	(*unlink_same)(int root, const char *path, int is_dir,
		    uint64_t dev, uint64_t ino);
	/* Renames within the root; replace = 0 fails with -EEXIST. */
	int	(*rename)(int root, const char *from, const char *to, int replace);
	int	(*link)(int root, const char *from, const char *to);
	/* Asks the kernel whether the caller may access path (R_OK|W_OK|X_OK). */
	int	(*access)(int root, const char *path, int mode);
	/*
	 * The same for one entry of an already open directory (name without
	 * '/', a final symlink not followed unless mode has
	 * VFS_ACCESS_FOLLOW); "" asks about dirfd itself.
	 * One syscall: for several questions about one name.
	 */
	int	(*accessat)(int dirfd, const char *name, int mode);
	int	(*fstat)(int fd, struct vfs_stat *);
	int	(*statat)(int root, const char *path, struct vfs_stat *);
	int	(*statfs)(int fd, struct vfs_statfs *);
	/*
	 * The block quota of user (group 0) or group (1) id on fd's file
	 * system (O_PATH will do); -ESRCH where quotas are off.
	 */
	int	(*quota)(int fd, int group, uint32_t id, struct vfs_quota *);
	/* One entry (a single name, no '/') of directory dirfd, not
	 * following a final symlink: for listings. */
	int	(*entstat)(int dirfd, const char *name, struct vfs_stat *);
	ssize_t	(*entxattr)(int dirfd, const char *name, const char *xname,
		    void *buf, size_t len);
	/* The xattr names of that entry (llistxattr: a final symlink is
	 * not followed), NUL-separated; len 0 asks for the size. */
	ssize_t	(*entlistxattr)(int dirfd, const char *name, char *buf,
		    size_t len);
	ssize_t	(*pread)(int fd, void *buf, size_t len, uint64_t off);
	ssize_t	(*pwrite)(int fd, const void *buf, size_t len, uint64_t off);
	int	(*fsync)(int fd, int data_only);
	int	(*ftruncate)(int fd, uint64_t len);
	/* Reserves space without changing the size. */
	int	(*fallocate)(int fd, uint64_t off, uint64_t len);
	int	(*punch_hole)(int fd, uint64_t off, uint64_t len);
	/* Zeros a range and keeps it allocated (a non-sparse file). */
	int	(*zero_range)(int fd, uint64_t off, uint64_t len);
	/* SEEK_DATA / SEEK_HOLE */
	int64_t	(*seek)(int fd, int64_t off, int whence);
	ssize_t	(*copy_range)(int in, uint64_t in_off, int out, uint64_t out_off,
		    size_t len);
	/* ts[0] access, ts[1] modification; UTIME_OMIT keeps one. */
	int	(*utimens)(int fd, const struct timespec ts[2]);
	int	(*fchmod)(int fd, mode_t mode);
	/* (uid_t)-1 / (gid_t)-1 keep one; the kernel decides who may. */
	int	(*fchown)(int fd, uid_t uid, gid_t gid);
	/*
	 * Reads directory entries in the Linux struct linux_dirent64 layout
	 * (d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name); 0 at the end.
	 * rewinddir restarts from the first entry.
	 */
	ssize_t	(*getdents)(int dirfd, void *buf, size_t len);
	int	(*rewinddir)(int dirfd);
	int	(*seekdir)(int dirfd, int64_t cookie);
	ssize_t	(*getxattr)(int fd, const char *name, void *buf, size_t len);
	int	(*setxattr)(int fd, const char *name, const void *buf, size_t len,
		    int flags);
	int	(*removexattr)(int fd, const char *name);
	ssize_t	(*listxattr)(int fd, char *buf, size_t len);
	/*
	 * The inode's generation number (what tells a file from an earlier
	 * one that had the same inode number): 0 or -errno, -ENOTTY or
	 * -EOPNOTSUPP where the file system keeps none.
	 */
	int	(*generation)(int fd, uint32_t *gen);
	/*
	 * Is [off, off + len) free of byte-range locks that processes other
	 * than the server hold through the kernel (fcntl POSIX or OFD locks)
	 * and that would conflict with a write lock (exclusive) or a read
	 * lock?  0 free, -EAGAIN held, -errno.  A read only test: the server
	 * keeps its own locks elsewhere.  NULL where the backend has none.
	 */
	int	(*lock_test)(int fd, uint64_t off, uint64_t len, int exclusive);
	/*
	 * Can files below directory dir (O_PATH will do) share blocks
	 * (reflink)?  The unit in bytes clones are aligned to (the file
	 * system's block size), 0 when they cannot, -errno.  A few syscalls:
	 * asked once per share connection.  NULL: never.
	 */
	int	(*clone_unit)(int dir);
	/*
	 * Makes [out_off, out_off + len) of out share the blocks of
	 * [in_off, in_off + len) of in (FICLONERANGE).  Offsets aligned to
	 * the unit; len too, unless the range ends at in's end of file.  In
	 * must be open for reading, out for writing.  0 or -errno.
	 */
	int	(*clone_range)(int in, uint64_t in_off, int out, uint64_t out_off,
		    uint64_t len);
};

extern const struct vfs_ops vfs_posix;

/* vfs/xattr.c: DOS attributes and creation time, over any backend. */
int	vfs_dos_get(const struct vfs_ops *, int fd, struct vfs_dosinfo *);
int	vfs_dos_set(const struct vfs_ops *, int fd, const struct vfs_dosinfo *);
/* Encoding of the xattr value, exposed for the unit test. */
size_t	vfs_dos_encode(const struct vfs_dosinfo *, uint8_t *buf, size_t len);
int	vfs_dos_decode(const uint8_t *buf, size_t len, struct vfs_dosinfo *);
/* Streams: the xattr name for a stream, -ENAMETOOLONG/-EINVAL when bad. */
int	vfs_stream_xattr_name(const char *stream, char *out, size_t len);

/*
 * vfs/acl.c: POSIX ACL xattr values.  decode checks the layout (not the
 * kernel's validity rules); encode sorts the entries into the order the
 * kernel requires and returns the length, or 0 when buf is too small.
 */
int	vfs_acl_decode(const uint8_t *buf, size_t len, struct vfs_acl *);
size_t	vfs_acl_encode(struct vfs_acl *, uint8_t *buf, size_t len);
/* -ENODATA when the file has no such ACL. */
int	vfs_acl_get(const struct vfs_ops *, int fd, int is_default,
	    struct vfs_acl *);
/* An ACL of n == 0 removes it (-ENODATA when there was none is ignored). */
int	vfs_acl_set(const struct vfs_ops *, int fd, int is_default,
	    struct vfs_acl *);

/*
 * vfs/name.c: case-insensitive resolution.  Rewrites path (in place, same
 * buffer of size cap) so that each component that has no exact match takes
 * the spelling of the entry that matches it ignoring case.  Components that
 * match nothing are left as given (the caller then gets -ENOENT or creates
 * the name as the client spelled it).  Returns 0 or -errno.
 */
int	vfs_name_resolve(const struct vfs_ops *, int root, char *path,
	    size_t cap);
/*
 * The same when the caller has just seen path missing as spelled (its own
 * stat said -ENOENT): skips that first lookup.  1 when path was rewritten
 * (stat it again), 0 when left as it was, -errno.
 */
int	vfs_name_resolve_miss(const struct vfs_ops *, int root, char *path,
	    size_t cap);
/* Forget cached listings (e.g. after a create, rename or delete). */
void	vfs_name_invalidate(void);
/*
 * A note on the directory the last vfs_name_resolve_miss looked the name
 * up in (root/parent, parent "" for root itself), kept with its cached
 * listing while its inotify watch queues no change of the directory's own
 * attributes (IN_ATTRIB: xattrs, mode, owner, times).  Note only what was
 * read after that lookup; vfs_name_dir_noted is true only when root/parent
 * is that directory and the note still holds (the lookup drained the
 * queue first).  vfs_name_dir_forget: a request that did not look the
 * name up must not answer from an earlier one's lookup.
 */
void	vfs_name_dir_note(int root, const char *parent);
int	vfs_name_dir_noted(int root, const char *parent);
void	vfs_name_dir_forget(void);
/*
 * vfs/dirnote.c: directories known to have no stored descriptor, for
 * creates that look no name up (POSIX handles, case-sensitive shares).
 * init: the fanotify fd (before the worker's seccomp filter), or -1.
 * armed(1): the worker's ring polls that fd and calls event() at each
 * completion, ahead of later requests (worker/uring.c); otherwise each
 * noted() reads it first.  noted(): parent under the share root (dev,
 * ino) is known to have none (no system call).  watch(): marks it (and
 * the directories above it, under root) unless it is already; 0, or -1
 * when it cannot be.  none(): a read made after watch() found none.
 */
int	vfs_dirnote_init(void);
void	vfs_dirnote_armed(int on);
void	vfs_dirnote_event(void);
int	vfs_dirnote_noted(uint64_t dev, uint64_t ino, const char *parent);
int	vfs_dirnote_watch(int root, uint64_t dev, uint64_t ino,
	    const char *parent);
void	vfs_dirnote_none(uint64_t dev, uint64_t ino, const char *parent);

#endif
