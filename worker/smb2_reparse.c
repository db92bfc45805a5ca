/*
 * Symlinks and special files as reparse points (worker/smb2_reparse.h).
 *
 * Reading: a symlink is an IO_REPARSE_TAG_SYMLINK buffer whose substitute
 * and print names are its target as stored (relative when it does not
 * start with '/'); a FIFO, socket or device an IO_REPARSE_TAG_NFS one, as
 * Samba 4.22 and the Linux client (fs/smb/client/reparse.c) use them.
 *
 * Creating: the Linux client makes the name with a CREATE (FILE_CREATE,
 * FILE_OPEN_REPARSE_POINT: an empty file) and sets the reparse point on
 * that handle.  The empty file is then replaced by a real symlink
 * (symlinkat, the target as given but for the symlink form's '\'
 * separators, never checked since never followed) or
 * a FIFO or socket (mknodat), made with the worker's credentials, so
 * local users and NFS see what the client made (Samba 4.22 keeps the
 * buffer in an xattr of the regular file instead).  Devices are refused
 * (ACCESS_DENIED): a worker has no CAP_MKNOD, and a share that lets
 * clients make device nodes is not something usmbd offers.  Other tags
 * are refused with NOT_SUPPORTED (Samba stores them in an xattr).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/dfs.h"
#include "proto/reparse.h"
#include "proto/smb2_hdr.h"
#include "proto/unicode.h"
#include "worker/conn.h"
#include "worker/dirlease.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_reparse.h"
#include "vfs/vfs.h"

#define FILE_SUPERSEDE		0
#define FILE_OVERWRITE		4
#define FILE_OVERWRITE_IF	5

/* Scratch of one request at a time (a worker serves one at a time). */
static char	rp_target[FILE_PATH_MAX];
static uint8_t	rp_target16[2 * FILE_PATH_MAX];
static uint8_t	rp_err[8 + REPARSE_HDR_LEN + 12 + 4 * FILE_PATH_MAX];
static size_t	rp_err_len;

/* The target of the symlink fd in UTF-16 (rp_target16): its length. */
static int
reparse_read_target(int fd, size_t *len16)
{
	ssize_t n;
	int m;

	if ((n = file_vfs()->readlink(fd, rp_target, sizeof(rp_target))) < 0)
		return (int)n;
	m = unicode_utf8_to_utf16(rp_target, (size_t)n, rp_target16,
	    sizeof(rp_target16));
	if (m < 0)
		return m;
	*len16 = (size_t)m;
	return 0;
}

static uint32_t
reparse_flags(void)
{
	return rp_target[0] == '/' ? 0 : SYMLINK_FLAG_RELATIVE;
}

/* The error response of the link fd, unparsed bytes of the name after it. */
static ntstatus_t
reparse_prepare_error(int fd, uint16_t unparsed)
{
	struct wcur w;
	size_t len16;
	int rc;

	rp_err_len = 0;
	if ((rc = reparse_read_target(fd, &len16)) != 0)
		return ntstatus_from_errno(rc);
	wcur_init(&w, rp_err, sizeof(rp_err));
	reparse_put_symlink_error(&w, rp_target16, len16, reparse_flags(),
	    unparsed);
	if (w.err)
		return STATUS_OBJECT_PATH_NOT_FOUND;
	rp_err_len = wcur_off(&w);
	return STATUS_STOPPED_ON_SYMLINK;
}

ntstatus_t
smb2_reparse_stopped(struct tree *tree, const char *path)
{
	size_t end;
	int fd, n;
	ntstatus_t status;

	fd = file_vfs()->first_link(tree->root_fd, path, &end);
	if (fd < 0)
		return STATUS_OBJECT_PATH_NOT_FOUND;
	/* the rest of the name, separator included, in UTF-16 bytes */
	n = unicode_utf8_to_utf16(path + end, strlen(path + end), rp_target16,
	    sizeof(rp_target16));
	status = n < 0 || n > UINT16_MAX ? STATUS_OBJECT_PATH_NOT_FOUND :
	    reparse_prepare_error(fd, (uint16_t)n);
	close(fd);
	return status;
}

ntstatus_t
smb2_reparse_found(const struct vfs_stat *st, int pfd, int posix,
    uint32_t opts, uint32_t disp)
{
	if (opts & FILE_OPEN_REPARSE_POINT) {
		/* the object itself: nothing to overwrite or supersede */
		if (disp == FILE_SUPERSEDE || disp == FILE_OVERWRITE ||
		    disp == FILE_OVERWRITE_IF)
			return STATUS_ACCESS_DENIED;
		return pfd >= 0 ? STATUS_SUCCESS : STATUS_ACCESS_DENIED;
	}
	if (posix && S_ISLNK(st->mode) && pfd >= 0)
		return reparse_prepare_error(pfd, 0);
	return STATUS_IO_REPARSE_TAG_NOT_HANDLED;
}

void
smb2_reparse_put_error(struct smb2_req *req, struct smb2_rsp *rsp,
    ntstatus_t status)
{
	if (status != STATUS_STOPPED_ON_SYMLINK || rp_err_len == 0)
		return;
	/* MS-SMB2 2.2.2.1: in an error context from 3.1.1, as Samba */
	smb2_error_encode(&rsp->body, req->conn->dialect == DIALECT_311,
	    rp_err, (uint32_t)rp_err_len);
	rp_err_len = 0;
}

ntstatus_t
smb2_reparse_get(struct open *op, struct wcur *out)
{
	struct file_open *f = op->u.file;
	struct vfs_stat st;
	uint64_t type;
	size_t len16;
	int rc;

	if (op->kind != OPEN_FILE || f->stream[0] != '\0')
		return STATUS_NOT_A_REPARSE_POINT;
	if ((rc = file_vfs()->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	switch (st.mode & S_IFMT) {
	case S_IFLNK:
		if ((rc = reparse_read_target(f->fd, &len16)) != 0)
			return ntstatus_from_errno(rc);
		reparse_put_symlink(out, rp_target16, len16, reparse_flags(),
		    0);
		return STATUS_SUCCESS;
	case S_IFIFO:
		type = NFS_SPECFILE_FIFO;
		break;
	case S_IFSOCK:
		type = NFS_SPECFILE_SOCK;
		break;
	case S_IFCHR:
		type = NFS_SPECFILE_CHR;
		break;
	case S_IFBLK:
		type = NFS_SPECFILE_BLK;
		break;
	default:
		return STATUS_NOT_A_REPARSE_POINT;
	}
	reparse_put_nfs(out, type, NULL, 0, st.rdev_major, st.rdev_minor);
	return STATUS_SUCCESS;
}

/* What the buffer asks to make: its mode and, for a link, rp_target. */
static ntstatus_t
reparse_wanted(const struct reparse_data *d, uint32_t perms, mode_t *mode)
{
	const uint8_t *t16 = d->subst16;
	size_t t16_len = d->subst16_len;
	char *p;

	if (d->tag == IO_REPARSE_TAG_NFS) {
		switch (d->nfs_type) {
		case NFS_SPECFILE_FIFO:
			*mode = S_IFIFO | perms;
			return STATUS_SUCCESS;
		case NFS_SPECFILE_SOCK:
			*mode = S_IFSOCK | perms;
			return STATUS_SUCCESS;
		case NFS_SPECFILE_LNK:
			t16 = d->target16;
			t16_len = d->target16_len;
			break;
		default:
			/* devices: never made for a client */
			return STATUS_ACCESS_DENIED;
		}
	}
	/*
	 * Stored as given, unchecked: a name the server never follows.  An
	 * absolute symlink-form target without its leading separator (the
	 * 6.12 client drops it: flags 0, "etc\passwd") gets it back.
	 */
	p = rp_target;
	if (d->tag == IO_REPARSE_TAG_SYMLINK &&
	    !(d->flags & SYMLINK_FLAG_RELATIVE) && t16_len >= 2 &&
	    t16[0] != '\\' && t16[0] != '/' && t16[1] == 0)
		*p++ = '/';
	if (unicode_utf16_to_utf8(t16, t16_len, p,
	    sizeof(rp_target) - 1) <= 0)
		return STATUS_IO_REPARSE_DATA_INVALID;
	/*
	 * but for the separators of the symlink form's Windows path (MS-FSCC
	 * 2.1.2.4), which the Linux client sends even on a POSIX mount
	 * ("\\etc\\passwd"): '/' on disk, as local and NFS users and
	 * Samba's reading of a symlink (flags from the leading '/') expect
	 */
	if (d->tag == IO_REPARSE_TAG_SYMLINK)
		for (p = rp_target; (p = strchr(p, '\\')) != NULL; p++)
			*p = '/';
	*mode = S_IFLNK | 0777;
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_reparse_set(struct open *op, struct cur *in)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct reparse_data d;
	struct vfs_stat st, nst;
	size_t len = cur_left(in);
	const uint8_t *buf = cur_view(in, len);
	ntstatus_t status;
	mode_t mode;
	int rc, fd;

	if (op->kind != OPEN_FILE || f->stream[0] != '\0')
		return STATUS_INVALID_PARAMETER;
	/* MS-FSA 2.1.5.9.37: write data or attributes access */
	if (!(op->access & (FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES)) ||
	    (op->tree != NULL && op->tree->read_only))
		return STATUS_ACCESS_DENIED;
	rc = reparse_decode(buf, len, &d);
	if (rc < 0)
		return STATUS_IO_REPARSE_DATA_INVALID;
	if (rc > 0)
		return STATUS_NOT_SUPPORTED;
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	/* only what a CREATE just made: an empty regular file */
	if (!S_ISREG(st.mode) || st.size != 0)
		return STATUS_IO_REPARSE_TAG_MISMATCH;
	if ((status = reparse_wanted(&d, st.mode & 0777, &mode)) !=
	    STATUS_SUCCESS)
		return status;
	/*
	 * A symlink whose text is "msdfs:..." is an msdfs link on any share
	 * that is (or whose directory is also, or later becomes) an msdfs
	 * root: it sends every user's client, credentials and all, where its
	 * text says (worker/dfs.c).  That is the admin's to decide, never a
	 * client's (Samba keeps a client's reparse point in an xattr).
	 */
	if (S_ISLNK(mode) && dfs_link_is(rp_target, strlen(rp_target)))
		return STATUS_ACCESS_DENIED;
	rc = vfs->make_special(op->tree->root_fd, f->path, f->dev, f->ino,
	    mode, 0, rp_target);
	if (rc != 0)
		return ntstatus_from_errno(rc);
	/*
	 * The handle now names the new object (its shared-state record
	 * keeps the old file's id, which nothing else can open any more).
	 */
	fd = (f->posix ? vfs->open_nolinks : vfs->open)(op->tree->root_fd,
	    f->path, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return ntstatus_from_errno(fd);
	if ((rc = vfs->fstat(fd, &nst)) != 0) {
		close(fd);
		return ntstatus_from_errno(rc);
	}
	close(f->fd);
	f->fd = fd;
	f->dev = nst.dev;
	f->ino = nst.ino;
	f->readable = f->writable = 0;
	vfs_name_invalidate();
	/* a cached listing shows a file there: no longer true */
	dirlease_break_op(op, f->path);
	return STATUS_SUCCESS;
}
