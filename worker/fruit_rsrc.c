/*
 * `fruit:resource = file` (worker/fruit.h): a file's AFP_Resource stream
 * is the resource-fork entry of the AppleDouble file "._NAME" in the
 * same directory, where Samba's vfs_fruit keeps it by default
 * (proto/adouble.h for the layout).  Written from the format and from
 * what Samba accepts; nothing copied.
 *
 * Every "._" file is opened beneath the share root as the user, no
 * symlink followed anywhere on the way (open_nolinks: RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, O_NOFOLLOW), O_NONBLOCK so that a FIFO planted
 * under that name never blocks the worker, and refused by fstat unless
 * it is a regular file of one name (no hard link), before any byte is
 * read or written.  No request keeps it open: each opens it, reads the
 * 82 bytes of header, does its I/O and closes it, so a rename of either
 * name is seen at once.
 *
 * Upgrade: an older usmbd (and `fruit:resource = stream`) kept the fork
 * as the stream xattr user.usmbd.stream.AFP_Resource.  Where no "._"
 * file holds a fork, that xattr is read; the next write, truncation or
 * delete moves it into (or removes it with) the "._" file.
 */
#include "worker/fruit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/adouble.h"
#include "vfs/vfs.h"
#include "worker/file_open.h"
#include "worker/recycle.h"

/* A bounce buffer for the upgrade move: the worker is single-threaded. */
static uint8_t fruit_rsrc_buf[65536];
/* and the copy's (fruit_rsrc_copy reads the older xattr through the first) */
static uint8_t fruit_rsrc_copybuf[65536];

int
fruit_rsrc_file(const struct file_open *f)
{
	const struct conf_share *sh = f->share;

	return !f->is_dir && f->path[0] != '\0' && fruit_is_resource(f) &&
	    sh->fruit_resource == FRUIT_RSRC_FILE;
}

/* "dir/._name" for "dir/name"; -ENAMETOOLONG past FILE_PATH_MAX. */
int
fruit_rsrc_name(const char *path, char *out, size_t cap)
{
	const char *base = strrchr(path, '/');
	size_t dlen = base != NULL ? (size_t)(base - path) + 1 : 0;
	int n;

	base = base != NULL ? base + 1 : path;
	if (*base == '\0')
		return -EINVAL;
	n = snprintf(out, cap, "%.*s%s%s", (int)dlen, path,
	    ADOUBLE_RSRC_PREFIX, base);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The older stream xattr's name. */
static const char *
fruit_rsrc_old(void)
{
	static char xname[64];

	if (xname[0] == '\0' &&
	    vfs_stream_xattr_name(FRUIT_RESOURCE, xname, sizeof(xname)) != 0)
		xname[0] = '\0';
	return xname;
}

/*
 * Nothing but a regular file of one name is read or written.  The "._"
 * name is the server's choice, not the client's: a hard link planted
 * under it (by a local account that may write the directory) would have
 * the user's fork written into, or read from, whatever file it names,
 * anywhere on the file system (RESOLVE_BENEATH sees names, not inodes).
 * A second name made once the file is open names the fork itself.
 */
int
fruit_rsrc_own_inode(const struct vfs_stat *st)
{
	return S_ISREG(st->mode) && st->nlink == 1;
}

/*
 * Opens f's "._" file (flags O_RDONLY or O_RDWR, with O_CREAT to make a
 * new one) and parses its header into *r.  The fd, or -ENOENT when there
 * is none, -EINVAL when it is not a well formed "._" file (a symlink
 * gives -ELOOP, a FIFO or device -EINVAL), or -errno.  A new file gets
 * Samba's header; *made says so.
 */
static int
fruit_rsrc_open(const struct file_open *f, int flags, struct adouble_rsrc *r,
    int *made)
{
	const struct vfs_ops *vfs = file_vfs();
	const struct conf_share *sh = f->share;
	uint8_t hdr[ADOUBLE_RSRC_HDR];
	char name[FILE_PATH_MAX + 2];
	struct vfs_stat st;
	mode_t mode;
	ssize_t n;
	int fd, rc, creat = flags & O_CREAT;

	if (made != NULL)
		*made = 0;
	if (f->root_fd < 0)
		return -EBADF;
	if ((rc = fruit_rsrc_name(f->path, name, sizeof(name))) != 0)
		return rc;
	flags = (flags & ~O_CREAT) | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	fd = vfs->open_nolinks(f->root_fd, name, flags, 0);
	if (fd == -ENOENT && creat) {
		/* the user's create mask, as Samba creates it as the user */
		mode = (sh->create_mask & 0666) | (sh->force_create_mode & 0666);
		fd = vfs->open_nolinks(f->root_fd, name,
		    flags | O_CREAT | O_EXCL, mode);
		if (fd >= 0) {
			adouble_rsrc_new(hdr);
			n = vfs->pwrite(fd, hdr, sizeof(hdr), 0);
			if (n != (ssize_t)sizeof(hdr)) {
				rc = n < 0 ? (int)n : -EIO;
				(void)vfs->unlink(f->root_fd, name, 0);
				goto fail;
			}
			r->off = ADOUBLE_RSRC_HDR;
			r->len = 0;
			r->len_at = ADOUBLE_HDR_LEN + 8;	/* entry 0 */
			if (made != NULL)
				*made = 1;
			return fd;
		}
		if (fd == -EEXIST)	/* made meanwhile: open that one */
			fd = vfs->open_nolinks(f->root_fd, name, flags, 0);
	}
	if (fd < 0)
		return fd == -ENXIO ? -EINVAL : fd;
	if ((rc = vfs->fstat(fd, &st)) != 0)
		goto fail;
	rc = -EINVAL;
	if (!fruit_rsrc_own_inode(&st))
		goto fail;
	n = vfs->pread(fd, hdr, sizeof(hdr), 0);
	if (n < 0) {
		rc = (int)n;
		goto fail;
	}
	if (adouble_rsrc_parse(hdr, (size_t)n, st.size, r) != 0)
		goto fail;
	return fd;
fail:
	close(fd);
	return rc;
}

/* The older xattr's size: > 0, 0 when none or empty, or -errno. */
static ssize_t
fruit_rsrc_old_size(const struct file_open *f)
{
	ssize_t n = file_vfs()->getxattr(f->fd, fruit_rsrc_old(), NULL, 0);

	return n == -ENODATA ? 0 : n;
}

int64_t
fruit_rsrc_size(const struct file_open *f)
{
	struct adouble_rsrc r;
	ssize_t old;
	int fd;

	fd = fruit_rsrc_open(f, O_RDONLY, &r, NULL);
	if (fd >= 0) {
		close(fd);
		if (r.len > 0)
			return (int64_t)r.len;
	} else if (fd != -ENOENT && fd != -EINVAL)
		return fd;
	/* no fork in a "._" file: what an older usmbd kept (upgrade) */
	if ((old = fruit_rsrc_old_size(f)) != 0)
		return old;
	return fd >= 0 ? 0 : -ENODATA;
}

ssize_t
fruit_rsrc_pread(const struct file_open *f, void *buf, size_t len,
    uint64_t off)
{
	const struct vfs_ops *vfs = file_vfs();
	struct adouble_rsrc r;
	ssize_t n;
	int fd;

	fd = fruit_rsrc_open(f, O_RDONLY, &r, NULL);
	if (fd >= 0 && r.len > 0) {
		n = 0;
		if (off < r.len) {
			if (len > r.len - off)
				len = (size_t)(r.len - off);
			n = vfs->pread(fd, buf, len, r.off + off);
		}
		close(fd);
		return n;
	}
	if (fd >= 0)
		close(fd);
	else if (fd != -ENOENT && fd != -EINVAL)
		return fd;
	/* the older xattr (upgrade): at most what one xattr holds */
	n = vfs->getxattr(f->fd, fruit_rsrc_old(), fruit_rsrc_buf,
	    sizeof(fruit_rsrc_buf));
	if (n == -ENODATA)
		return fd >= 0 ? 0 : -ENODATA;
	if (n < 0)
		return n;
	if (off >= (uint64_t)n)
		return 0;
	if (len > (uint64_t)n - off)
		len = (size_t)((uint64_t)n - off);
	memcpy(buf, fruit_rsrc_buf + off, len);
	return (ssize_t)len;
}

/* Sets the fork's length in the entry table. */
static int
fruit_rsrc_setlen(int fd, const struct adouble_rsrc *r, uint64_t len)
{
	uint8_t b[4];
	ssize_t n;

	if (len > UINT32_MAX)
		return -EFBIG;
	adouble_rsrc_len_put(b, (uint32_t)len);
	n = file_vfs()->pwrite(fd, b, sizeof(b), r->len_at);
	return n == (ssize_t)sizeof(b) ? 0 : n < 0 ? (int)n : -EIO;
}

/*
 * Opens the "._" file for writing, made when missing; an older xattr
 * fork, if the "._" file holds none, is moved into it first (and the
 * xattr removed, so that a later delete cannot bring it back).
 */
static int
fruit_rsrc_open_write(struct file_open *f, struct adouble_rsrc *r)
{
	const struct vfs_ops *vfs = file_vfs();
	ssize_t n;
	int fd, rc;

	fd = fruit_rsrc_open(f, O_RDWR | O_CREAT, r, NULL);
	if (fd < 0)
		return fd;
	if (r->len > 0)
		return fd;
	n = vfs->getxattr(f->fd, fruit_rsrc_old(), fruit_rsrc_buf,
	    sizeof(fruit_rsrc_buf));
	if (n == -ENODATA)
		return fd;
	rc = (int)n;
	if (n < 0)
		goto fail;
	if (n > 0) {
		if ((rc = vfs->ftruncate(fd, r->off)) != 0)
			goto fail;
		if (vfs->pwrite(fd, fruit_rsrc_buf, (size_t)n, r->off) != n) {
			rc = -EIO;
			goto fail;
		}
		if ((rc = fruit_rsrc_setlen(fd, r, (uint64_t)n)) != 0)
			goto fail;
		r->len = (uint64_t)n;
	}
	rc = vfs->removexattr(f->fd, fruit_rsrc_old());
	if (rc != 0 && rc != -ENODATA)
		goto fail;
	return fd;
fail:
	close(fd);
	return rc;
}

ssize_t
fruit_rsrc_pwrite(struct file_open *f, const void *buf, size_t len,
    uint64_t off)
{
	struct adouble_rsrc r;
	ssize_t n;
	int fd, rc = 0;

	if (off > UINT32_MAX || len > UINT32_MAX - off)
		return -EFBIG;		/* the entry's length is 32 bits */
	if ((fd = fruit_rsrc_open_write(f, &r)) < 0)
		return fd;
	n = file_vfs()->pwrite(fd, buf, len, r.off + off);
	/* the fork is last: it grows at the end, its length updated */
	if (n > 0 && off + (uint64_t)n > r.len)
		rc = fruit_rsrc_setlen(fd, &r, off + (uint64_t)n);
	close(fd);
	return rc != 0 ? rc : n;
}

int
fruit_rsrc_truncate(struct file_open *f, uint64_t len)
{
	struct adouble_rsrc r;
	int fd, rc;

	if (len > UINT32_MAX)
		return -EFBIG;
	if ((fd = fruit_rsrc_open_write(f, &r)) < 0)
		return fd;
	rc = file_vfs()->ftruncate(fd, r.off + len);
	if (rc == 0)
		rc = fruit_rsrc_setlen(fd, &r, len);
	close(fd);
	return rc;
}

int
fruit_rsrc_create(struct file_open *f, int truncate, int *made)
{
	struct adouble_rsrc r;
	int fd, rc = 0, had;

	/* the older xattr's presence counts as the fork's (upgrade) */
	had = fruit_rsrc_old_size(f) > 0;
	fd = fruit_rsrc_open(f, O_RDWR | O_CREAT, &r, made);
	if (fd < 0)
		return fd;
	if (had && made != NULL)
		*made = 0;
	if (truncate) {
		if ((rc = file_vfs()->ftruncate(fd, r.off)) == 0)
			rc = fruit_rsrc_setlen(fd, &r, 0);
		if (rc == 0) {
			rc = file_vfs()->removexattr(f->fd, fruit_rsrc_old());
			if (rc == -ENODATA)
				rc = 0;
		}
	}
	close(fd);
	return rc;
}

int
fruit_rsrc_remove(struct file_open *f)
{
	char name[FILE_PATH_MAX + 2];
	int a, b;

	if (f->root_fd < 0)
		return -EBADF;
	if ((a = fruit_rsrc_name(f->path, name, sizeof(name))) != 0)
		return a;
	/* unlink never follows the last name: a symlink goes itself */
	a = file_vfs()->unlink(f->root_fd, name, 0);
	if (a != 0 && a != -ENOENT)
		return a;
	b = file_vfs()->removexattr(f->fd, fruit_rsrc_old());
	if (b != 0 && b != -ENODATA)
		return b;
	return a == 0 || b == 0 ? 0 : -ENODATA;
}

void
fruit_rsrc_rename(const struct conf_share *sh, int root, const char *from,
    const struct file_open *to)
{
	char a[FILE_PATH_MAX + 2], b[FILE_PATH_MAX + 2];
	int rc;

	if (sh == NULL || !sh->fruit || sh->fruit_resource != FRUIT_RSRC_FILE ||
	    to->is_dir)
		return;
	if (fruit_rsrc_name(from, a, sizeof(a)) != 0 ||
	    fruit_rsrc_name(to->path, b, sizeof(b)) != 0)
		return;
	/*
	 * As Samba's fruit_rename: the "._" file follows, replacing; a
	 * failure is logged, the data file has moved already.
	 */
	rc = file_vfs()->rename(root, a, b, 1);
	if (rc != 0 && rc != -ENOENT)
		log_info("rename of the resource fork of \"%s\": %s", from,
		    strerror(-rc));
}

int
fruit_rsrc_unlinked(const struct conf_share *sh, const char *user, int root,
    const char *path)
{
	const struct vfs_ops *vfs = file_vfs();
	char a[FILE_PATH_MAX + 2];
	struct vfs_stat st;
	int fd, rc;

	if (sh == NULL || !sh->fruit || sh->fruit_resource != FRUIT_RSRC_FILE ||
	    fruit_rsrc_name(path, a, sizeof(a)) != 0)
		return 0;
	/*
	 * With a bin, "._NAME" goes into it beside its file, by the bin's
	 * rules (worker/recycle.h), as Samba's fruit_unlinkat passes the
	 * unlink of the "._" file down to vfs_recycle: its own dev/ino
	 * (a symlink itself, never followed), so that a name replaced
	 * meanwhile is not moved.
	 */
	if (sh->recycle_dir != NULL) {
		fd = vfs->open_nolinks(root, a, O_PATH | O_NOFOLLOW, 0);
		if (fd == -ENOENT)
			return 0;
		if (fd >= 0) {
			rc = vfs->fstat(fd, &st);
			close(fd);
			if (rc == 0) {
				rc = recycle_unlink(sh, user, root, a, 0,
				    st.dev, st.ino);
				return rc == -ENOENT || rc == -ESTALE ? 0 : rc;
			}
		}
	}
	rc = vfs->unlink(root, a, 0);
	return rc == -ENOENT ? 0 : rc;
}

int
fruit_rsrc_copy(struct file_open *src, struct file_open *dst)
{
	uint64_t off = 0;
	int64_t size;
	ssize_t n, w;
	int rc;

	if ((size = fruit_rsrc_size(src)) == -ENODATA || size == 0)
		return 0;
	if (size < 0)
		return (int)size;
	if ((rc = fruit_rsrc_create(dst, 1, NULL)) != 0)
		return rc;
	/* through the bounce buffer: the older xattr may be the source */
	while (off < (uint64_t)size) {
		n = fruit_rsrc_pread(src, fruit_rsrc_copybuf,
		    sizeof(fruit_rsrc_copybuf), off);
		if (n <= 0)
			return n < 0 && n != -ENODATA ? (int)n : 0;
		if ((w = fruit_rsrc_pwrite(dst, fruit_rsrc_copybuf, (size_t)n,
		    off)) < 0)
			return (int)w;
		off += (uint64_t)n;
	}
	return 0;
}

int64_t
fruit_rsrc_entsize(int dirfd, const char *name)
{
	const struct vfs_ops *vfs = file_vfs();
	uint8_t hdr[ADOUBLE_RSRC_HDR];
	char ad[NAME_MAX + 3];
	struct adouble_rsrc r;
	struct vfs_stat st;
	ssize_t n;
	int fd, rc;

	if (snprintf(ad, sizeof(ad), "%s%s", ADOUBLE_RSRC_PREFIX, name) >=
	    (int)sizeof(ad))
		return -ENOENT;
	fd = vfs->open_nolinks(dirfd, ad, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY, 0);
	if (fd < 0)
		return fd;
	rc = vfs->fstat(fd, &st);
	n = rc == 0 && fruit_rsrc_own_inode(&st) ?
	    vfs->pread(fd, hdr, sizeof(hdr), 0) : -EINVAL;
	close(fd);
	if (n < 0 || adouble_rsrc_parse(hdr, (size_t)n, st.size, &r) != 0)
		return -EINVAL;
	return (int64_t)r.len;
}
