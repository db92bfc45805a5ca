/*
 * A Mac's own "._" files converted as Samba's vfs_fruit converts them
 * (source3/lib/adouble.c ad_convert, read to understand; written here
 * for usmbd's streams): when the Finder info entry carries an ATTR block
 * of extended attributes, each becomes a named stream of the file (its
 * name mapped as Samba maps it: ':' is U+F022...), the fork is moved to
 * 82 and the file cut there (Samba's 82-byte layout, which
 * fruit_rsrc.c reads and writes); when the filler says "Mac OS X", the
 * Finder info becomes the file's AfpInfo (fruit:metadata decides where).
 * With fruit:wipe_intentionally_left_blank_rfork a fork that is a Mac's
 * empty resource map is emptied, with fruit:delete_empty_adfiles a "._"
 * file left without fork is removed.
 *
 * The "._" file is any user's input: it is opened as fruit_rsrc.c opens
 * it (beneath the share root as the user, no symlink followed, O_NONBLOCK,
 * a regular file of one name only), converted only when its owner owns
 * the file too, its header read whole (64 KiB at most, Samba's
 * limit) into a static buffer and every offset and length checked before
 * anything is written (proto/adouble.c adouble_conv_parse).  A malformed
 * one is left as it is.  Samba's filler "Netatalk" is written with the
 * converted header, so a file is converted once (Samba keeps a Mac's
 * filler when there was no ATTR block, and converts its Finder info again
 * at every open: a Finder info the Mac changed since is overwritten).
 *
 * Cost where there is nothing to convert: one openat2 (ENOENT), or an
 * openat2, fstat and an 82-byte pread of a "._" file already converted;
 * it is opened for writing only when it is to be converted (a close
 * after writing is an inotify IN_CLOSE_WRITE, which breaks directory
 * leases).
 */
#include "worker/fruit.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/adouble.h"
#include "proto/unicode.h"
#include "vfs/vfs.h"
#include "worker/file_open.h"

/* The header read whole, and the bounce buffer of the fork's move. */
static uint8_t conv_buf[ADOUBLE_CONV_MAX];
static uint8_t conv_move[65536];
static uint8_t conv_name16[1024];

/*
 * Each attribute of the ATTR block as a stream of dfd's file.  A name
 * that is no stream name here (a '/', "..", not UTF-8, too long) or is
 * one of the two Apple streams is left out, with a debug line: the rest
 * goes.
 */
static int
conv_xattrs(const struct adouble_conv *c, size_t len, int dfd,
    const char *path)
{
	struct adouble_xattr x;
	char sname[FILE_STREAM_MAX], xname[300];
	unsigned i;
	int rc;

	for (i = 0; i < c->nattr; i++) {
		if (adouble_conv_xattr(conv_buf, len, c, i, &x) != 0)
			return -EINVAL;
		if (adouble_xattr_stream_name(x.name, x.name_len, sname,
		    sizeof(sname)) < 0 ||
		    unicode_utf8_to_utf16(sname, strlen(sname), conv_name16,
		    sizeof(conv_name16)) < 0 ||
		    strcasecmp(sname, FRUIT_AFPINFO) == 0 ||
		    strcasecmp(sname, FRUIT_RESOURCE) == 0 ||
		    vfs_stream_xattr_name(sname, xname, sizeof(xname)) != 0) {
			log_debug(1, "._ file of \"%s\": attribute %u is no "
			    "stream name, left out", path, i);
			continue;
		}
		rc = file_vfs()->setxattr(dfd, xname, conv_buf + x.off, x.len,
		    0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The fork's len bytes from off to 82 (ascending: the target is lower). */
static int
conv_move_fork(int fd, uint64_t off, uint64_t len)
{
	const struct vfs_ops *vfs = file_vfs();
	uint64_t done = 0;
	size_t want;
	ssize_t n;

	while (done < len) {
		want = len - done > sizeof(conv_move) ? sizeof(conv_move) :
		    (size_t)(len - done);
		n = vfs->pread(fd, conv_move, want, off + done);
		if (n != (ssize_t)want)
			return n < 0 ? (int)n : -EIO;
		n = vfs->pwrite(fd, conv_move, want, ADOUBLE_RSRC_HDR + done);
		if (n != (ssize_t)want)
			return n < 0 ? (int)n : -EIO;
		done += want;
	}
	return 0;
}

/* The Finder info (Mac's filler) as the file's AfpInfo. */
static int
conv_finderinfo(const struct conf_share *sh, int dfd)
{
	uint8_t rec[AFPINFO_SIZE];

	fruit_afpinfo_default(rec);
	/* backup time "never", as Samba's afpinfo_new */
	rec[12] = 0x80;
	memcpy(rec + AFPINFO_OFF_FINDERINFO, conv_buf + ADOUBLE_RSRC_FI_OFF,
	    ADOUBLE_FINDERI_LEN);
	return fruit_afpinfo_put(sh, dfd, NULL, rec);
}

/*
 * Whether the "._" file adfd (st its stat), still open read-only, is to
 * be converted: its header read whole and well formed, its file (fd, or
 * path opened here into *dfd) a regular file or directory of the same
 * owner.  Judged before it is opened for writing, so that one that is
 * not converted is never closed after writing at each meeting (inotify's
 * IN_CLOSE_WRITE breaks the directory's leases, and every client that
 * lists again meets it again).  0, or -EINVAL (not to convert), -errno.
 */
static int
conv_judge(int root, const char *path, int fd, int adfd,
    const struct vfs_stat *st, int *dfd)
{
	const struct vfs_ops *vfs = file_vfs();
	struct adouble_conv c;
	struct vfs_stat dst;
	size_t want = st->size > sizeof(conv_buf) ? sizeof(conv_buf) :
	    (size_t)st->size;
	ssize_t n;
	int rc;

	*dfd = fd;
	n = vfs->pread(adfd, conv_buf, want, 0);
	if (n != (ssize_t)want)
		return n < 0 ? (int)n : -EIO;
	if (adouble_conv_parse(conv_buf, want, st->size, &c) != 0) {
		log_debug(1, "._ file of \"%s\" is malformed: not converted",
		    path);
		return -EINVAL;
	}
	if (fd < 0) {
		*dfd = vfs->open(root, path, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_NOCTTY, 0);
		if (*dfd < 0)
			return *dfd;
	}
	rc = vfs->fstat(*dfd, &dst);
	if (rc == 0 && !S_ISREG(dst.mode) && !S_ISDIR(dst.mode))
		rc = -EINVAL;
	/*
	 * The streams are written with the credentials of whoever meets
	 * the "._" file, often the file's owner: a "._" file of another
	 * owner (any local account or user may make one beside a file in a
	 * directory it can write) would write that owner's bytes over the
	 * file's streams, which its owner alone may write.
	 */
	if (rc == 0 && dst.uid != st->uid) {
		log_debug(1, "._ file of \"%s\" is not its owner's: not "
		    "converted", path);
		rc = -EINVAL;
	}
	return rc;
}

/*
 * Converts the "._" file adfd, opened for writing (st its stat, name its
 * path below root), of path, open as dfd (conv_judge): 0, 1 when it was
 * removed, or -errno.  Its header is read and parsed again: its owner
 * may have changed it since it was judged.
 */
static int
conv_do(const struct conf_share *sh, int root, const char *path, int dfd,
    int adfd, const struct vfs_stat *st, const char *name)
{
	const struct vfs_ops *vfs = file_vfs();
	uint8_t old[ADOUBLE_RSRC_HDR], hdr[ADOUBLE_RSRC_HDR];
	struct adouble_conv c;
	uint64_t rf_off, rf_len;
	size_t want = st->size > sizeof(conv_buf) ? sizeof(conv_buf) :
	    (size_t)st->size;
	ssize_t n;
	int rc, blank = 0;

	n = vfs->pread(adfd, conv_buf, want, 0);
	if (n != (ssize_t)want)
		return n < 0 ? (int)n : -EIO;
	if (adouble_conv_parse(conv_buf, want, st->size, &c) != 0)
		return -EINVAL;
	/* as Samba: the attributes, the Finder info, then the "._" file */
	if ((rc = conv_xattrs(&c, want, dfd, path)) != 0)
		goto out;
	if (c.osx && (rc = conv_finderinfo(sh, dfd)) != 0)
		goto out;
	memcpy(old, conv_buf, sizeof(old));
	rf_off = c.rf_off;
	rf_len = c.rf_len;
	if (c.fi_len > ADOUBLE_FINDERI_LEN) {
		if ((rc = conv_move_fork(adfd, rf_off, rf_len)) != 0)
			goto out;
		rf_off = ADOUBLE_RSRC_HDR;
	}
	if (sh->fruit_wipe_blank_rfork && rf_len == ADOUBLE_RFORK_BLANK_LEN &&
	    vfs->pread(adfd, conv_move, ADOUBLE_RFORK_BLANK_LEN, rf_off) ==
	    ADOUBLE_RFORK_BLANK_LEN &&
	    adouble_rfork_blank(conv_move, ADOUBLE_RFORK_BLANK_LEN)) {
		rf_len = 0;
		blank = 1;
	}
	adouble_conv_header(hdr, old, (uint32_t)rf_off, (uint32_t)rf_len);
	n = vfs->pwrite(adfd, hdr, sizeof(hdr), 0);
	if (n != (ssize_t)sizeof(hdr)) {
		rc = n < 0 ? (int)n : -EIO;
		goto out;
	}
	if ((c.fi_len > ADOUBLE_FINDERI_LEN || blank) &&
	    (rc = vfs->ftruncate(adfd, rf_off + rf_len)) != 0)
		goto out;
	log_debug(2, "._ file of \"%s\" converted: %u attributes, fork %llu",
	    path, c.nattr, (unsigned long long)rf_len);
	if (rf_len == 0 && sh->fruit_delete_empty_adfiles) {
		/* only while the name is still that file */
		rc = vfs->unlink_same(root, name, 0, st->dev, st->ino);
		rc = rc == 0 ? 1 : rc == -ENOENT || rc == -ESTALE ? 0 : rc;
	}
out:
	return rc;
}

/*
 * The "._" file again for writing, when it needs converting: a read-only
 * open first, so that a listing or an open with nothing to convert
 * closes no file opened for writing (inotify's IN_CLOSE_WRITE would break
 * the directory's leases).  The same file (dev/ino) or -ESTALE.
 */
static int
conv_open_rw(int root, const char *name, const struct vfs_stat *st)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat now;
	int fd, rc;

	fd = vfs->open_nolinks(root, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY, 0);
	if (fd < 0)
		return fd == -ENXIO ? -EINVAL : fd;
	rc = vfs->fstat(fd, &now);
	if (rc == 0 && (now.dev != st->dev || now.ino != st->ino))
		rc = -ESTALE;
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int64_t
fruit_conv(const struct conf_share *sh, int root, const char *path, int fd,
    int convert)
{
	const struct vfs_ops *vfs = file_vfs();
	char name[FILE_PATH_MAX + 2];
	struct adouble_rsrc r;
	struct vfs_stat st;
	ssize_t n;
	int adfd, dfd = -1, rw, rc;

	if ((rc = fruit_rsrc_name(path, name, sizeof(name))) != 0)
		return rc;
	adfd = vfs->open_nolinks(root, name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY, 0);
	if (adfd < 0)
		return adfd == -ENXIO ? -EINVAL : adfd;
	rc = vfs->fstat(adfd, &st);
	if (rc == 0 && !fruit_rsrc_own_inode(&st))
		rc = -EINVAL;
	if (rc != 0)
		goto out;
	n = vfs->pread(adfd, conv_buf, ADOUBLE_RSRC_HDR, 0);
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	/*
	 * A "._" file the user may not write is read, not converted (the
	 * kernel's word on the open inode: one faccessat2, before the
	 * header is read whole).
	 */
	if (convert && adouble_conv_wanted(conv_buf, (size_t)n) &&
	    vfs->accessat(adfd, "", W_OK) == 0) {
		if ((rc = conv_judge(root, path, fd, adfd, &st, &dfd)) == 0 &&
		    (rc = rw = conv_open_rw(root, name, &st)) >= 0) {
			rc = conv_do(sh, root, path, dfd, rw, &st, name);
			close(rw);
		}
		if (dfd != fd && dfd >= 0)
			close(dfd);
		if (rc == 1) {
			rc = -ENOENT;
			goto out;
		}
		/*
		 * Not converted: tried again at the next meeting, so at a
		 * debug level (any user can make one fail every time).
		 */
		if (rc < 0 && rc != -EINVAL)
			log_debug(1, "conversion of the ._ file of \"%s\": %s",
			    path, strerror(-rc));
		if ((rc = vfs->fstat(adfd, &st)) != 0)
			goto out;
		n = vfs->pread(adfd, conv_buf, ADOUBLE_RSRC_HDR, 0);
		if (n < 0) {
			rc = (int)n;
			goto out;
		}
	}
	rc = -EINVAL;
	if (adouble_rsrc_parse(conv_buf, (size_t)n, st.size, &r) == 0) {
		close(adfd);
		return (int64_t)r.len;
	}
out:
	close(adfd);
	return rc;
}
