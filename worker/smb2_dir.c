/*
 * SMB2 QUERY_DIRECTORY (MS-SMB2 2.2.33/2.2.34, server rules 3.3.5.18).
 *
 * A listing reads the directory through the open's fixed getdents64
 * buffer (struct file_dir), a buffer's worth at a time, so a directory of
 * any size is listed without being read whole.  An entry that does not fit
 * the client's output buffer stays in place for the next request.  A
 * pattern without wildcards is answered with one lookup instead of a scan.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/adouble.h"
#include "proto/fscc.h"
#include "proto/unicode.h"
#include "worker/conn.h"
#include "worker/dfs.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/namerule.h"
#include "worker/shortname.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/worker.h"
#include "worker/smb2_file.h"
#include "worker/smb2_notify.h"
#include "worker/smb2_posix.h"

/* MS-SMB2 2.2.33 */
#define SMB2_RESTART_SCANS		0x01
#define SMB2_RETURN_SINGLE_ENTRY	0x02
#define SMB2_INDEX_SPECIFIED		0x04
#define SMB2_REOPEN			0x10

#define DIR_OUT_OFFSET	(SMB2_HDR_LEN + 8)

static uint8_t	dir_name16[(255 * 4 + 1) * 2];
static char	dir_path[FILE_PATH_MAX + 256];
/* the stat of the entry dir_entry_info judged last (READ_DIR_ATTR) */
static struct vfs_stat	dir_ent_st;
/* one entry's xattr names (listxattr's largest answer is 64 KiB) */
static char	dir_xnames[65536];


static int
dir_has_wildcard(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] == '*' || p[i] == '?' || p[i] == '<' || p[i] == '>' ||
		    p[i] == '"')
			return 1;
	return 0;
}

static void
dir_restart(struct file_open *f)
{
	struct file_dir *d = f->dir;

	(void)file_vfs()->rewinddir(f->fd);
	d->len = d->pos = 0;
	d->eof = 0;
	d->dots = 0;
	d->returned = 0;
	d->searches = 0;
	d->started = 0;
}

/*
 * hide unreadable: is the entry one an open for reading would be granted?
 * Both locks (HACKING.md "Security descriptors"): the kernel's read
 * permission (on a directory too, as Samba asks for FILE_LIST_DIRECTORY)
 * and a stored descriptor's grant.  The worker's own files are judged from
 * the mode already read, with no system call: a POSIX ACL never changes
 * the owner's class.  A symlink is judged by its target (already found
 * inside the share) for the kernel's part; its target's descriptor is not
 * read, as that needs an open.
 */
static int
dir_entry_readable(struct tree *tree, int dirfd, const char *name,
    const struct vfs_stat *st, int link)
{
	uid_t euid = user_euid();	/* pinned: no system call */

	if (euid != 0 && st->uid == (uint32_t)euid) {
		if (!(st->mode & S_IRUSR))
			return 0;
	} else if (file_vfs()->accessat(dirfd, name, R_OK |
	    (link ? VFS_ACCESS_FOLLOW : 0)) != 0)
		return 0;
	return link || smb2_secdesc_entry_readable(tree, dirfd, name, st);
}

/*
 * hide unreadable for CHANGE_NOTIFY (worker/smb2_notify.c): would a
 * listing show rel's first len bytes, a name below the directory d
 * ("a/b/c" under a WATCH_TREE)?  Each
 * component as QUERY_DIRECTORY judges it in its own directory, opened
 * beneath d following no symlink; a name that is gone is not shown.
 */
int
smb2_dir_path_readable(struct tree *tree, const struct file_open *d,
    const char *rel, size_t len)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat st;
	char comp[256];
	const char *p = rel, *e;
	const char *end = rel + len;
	int fd = d->fd, nfd, rc = 0, link;
	size_t n;

	for (;;) {
		e = memchr(p, '/', (size_t)(end - p));
		n = (size_t)((e != NULL ? e : end) - p);
		if (n == 0 || n >= sizeof(comp))
			goto out;
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (vfs->entstat(fd, comp, &st) != 0)
			goto out;
		link = 0;
		if (S_ISLNK(st.mode)) {
			/* as a listing: the target, resolved beneath the root */
			if (e != NULL || (size_t)snprintf(dir_path,
			    sizeof(dir_path), "%s%s%.*s", d->path,
			    d->path[0] ? "/" : "", (int)(end - rel), rel) >=
			    sizeof(dir_path) ||
			    vfs->statat(tree->root_fd, dir_path, &st) != 0)
				goto out;
			link = 1;
		}
		if ((!S_ISREG(st.mode) && !S_ISDIR(st.mode)) ||
		    !dir_entry_readable(tree, fd, comp, &st, link))
			goto out;
		if (e == NULL) {
			rc = 1;
			goto out;
		}
		nfd = vfs->open_nolinks(fd, comp, O_RDONLY | O_DIRECTORY, 0);
		if (fd != d->fd)
			close(fd);
		fd = nfd;
		if (fd < 0)
			goto out;
		p = e + 1;
	}
out:
	if (fd >= 0 && fd != d->fd)
		close(fd);
	return rc;
}

/*
 * EaSize (worker/smb2_ea.c smb2_ea_size_names, the helper QUERY_INFO's
 * FileEaInformation uses) of one entry, from its xattr names in
 * dir_xnames[0, n): each EA's value size is one lgetxattr of size 0 by
 * the entry's /proc name (fd the directory, name the entry's) or, for
 * a symlink's target opened beneath the share, by that fd (name NULL).
 */
struct dir_ent_ref {
	int		 fd;
	const char	*name;		/* NULL: fd is the file itself */
};

static ssize_t
dir_ea_vsize(void *arg, const char *xname)
{
	const struct dir_ent_ref *r = arg;

	return r->name != NULL ? file_vfs()->entxattr(r->fd, r->name, xname,
	    NULL, 0) : file_vfs()->getxattr(r->fd, xname, NULL, 0);
}

/* Is xname one of the names in dir_xnames[0, n)? */
static int
dir_xname_listed(size_t n, const char *xname)
{
	size_t len = strlen(xname) + 1;
	const char *x, *end = dir_xnames + n;

	for (x = dir_xnames; x < end; x += strnlen(x, (size_t)(end - x)) + 1)
		if ((size_t)(end - x) >= len && memcmp(x, xname, len) == 0)
			return 1;
	return 0;
}

/*
 * The DOS attributes (returns has_dos) and, with ea non-NULL, the EaSize
 * of one regular file or directory of the listing.  Without EaSize one
 * lgetxattr of the DOS xattr, as before.  With it one llistxattr first:
 * the DOS xattr is read only when listed (a file made outside SMB has
 * none), and only a file with EAs costs more, one call per EA.  A file
 * system without user xattrs (ENOTSUP) has neither.
 */
static int
dir_entry_xattrs(int dirfd, const char *name, struct vfs_dosinfo *di,
    uint32_t *ea)
{
	const struct vfs_ops *vfs = file_vfs();
	struct dir_ent_ref ref = { dirfd, name };
	uint8_t buf[64];
	ssize_t n, l = -1;

	if (ea != NULL) {
		*ea = 0;
		l = vfs->entlistxattr(dirfd, name, dir_xnames,
		    sizeof(dir_xnames));
		if (l == -EOPNOTSUPP)
			return 0;
	}
	if (l >= 0 && !dir_xname_listed((size_t)l, VFS_XATTR_DOS))
		n = -1;
	else	/* no EaSize asked, or no list (then no EaSize either) */
		n = vfs->entxattr(dirfd, name, VFS_XATTR_DOS, buf, sizeof(buf));
	if (l > 0)
		*ea = smb2_ea_size_names(dir_xnames, (size_t)l, dir_ea_vsize,
		    &ref);
	return n > 0 && vfs_dos_decode(buf, (size_t)n, di) == 0;
}

/*
 * A symlink's target (path, found beneath the share root): its stat, its
 * DOS attributes (returns has_dos) and, with ea non-NULL, its EaSize, as
 * an open of the link through the share answers QUERY_INFO.  One O_PATH
 * open beneath the root; the xattrs are read through that fd, so nothing
 * outside the share is reached.  *rc is 0 or the lookup's error.
 */
static int
dir_link_target(struct tree *tree, const char *path, struct vfs_stat *st,
    struct vfs_dosinfo *di, uint32_t *ea, int *rc)
{
	const struct vfs_ops *vfs = file_vfs();
	struct dir_ent_ref ref;
	uint8_t buf[64];
	ssize_t l, n;
	int fd, has_dos = 0;

	if (ea != NULL)
		*ea = 0;
	if ((fd = vfs->open(tree->root_fd, path, O_PATH, 0)) < 0) {
		*rc = fd;
		return 0;
	}
	*rc = vfs->fstat(fd, st);
	if (*rc != 0 || (!S_ISREG(st->mode) && !S_ISDIR(st->mode)))
		goto out;
	n = vfs->getxattr(fd, VFS_XATTR_DOS, buf, sizeof(buf));
	has_dos = n > 0 && vfs_dos_decode(buf, (size_t)n, di) == 0;
	if (ea != NULL &&
	    (l = vfs->listxattr(fd, dir_xnames, sizeof(dir_xnames))) > 0) {
		ref.fd = fd;
		ref.name = NULL;
		*ea = smb2_ea_size_names(dir_xnames, (size_t)l, dir_ea_vsize,
		    &ref);
	}
out:
	close(fd);
	return has_dos;
}

/*
 * The stat and DOS view of one entry.  A symlink is shown as what it
 * points to when that stays inside the share, and hidden otherwise, as
 * are fifos, sockets and devices.  On a POSIX handle (pi non-NULL) they
 * are all shown as what they are, and nothing is followed.  Returns 0,
 * or -1 to skip the entry.
 */
static int
dir_entry_info(struct smb2_req *req, struct file_open *f, const char *name,
    int dot, int want_ea, struct fscc_info *fi, struct posix_info *pi)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_dosinfo di;
	struct vfs_stat st, lst;
	uint32_t ea = 0;
	int has_dos = 0, rc, link = 0, dfs = 0;
	struct tree *tree = req->tree;
	const char *slash;

	if (dot == 1)
		rc = vfs->fstat(f->fd, &st);
	else if (dot == 2) {
		if (f->path[0] == '\0')
			rc = vfs->fstat(f->fd, &st);	/* ".." of the root */
		else {
			slash = strrchr(f->path, '/');
			memcpy(dir_path, f->path, slash ? (size_t)(slash -
			    f->path) : 0);
			dir_path[slash ? slash - f->path : 0] = '\0';
			rc = vfs->statat(tree->root_fd, dir_path, &st);
		}
	} else {
		rc = vfs->entstat(f->fd, name, &st);
		if (rc == 0 && S_ISLNK(st.mode) && pi == NULL) {
			if ((size_t)snprintf(dir_path, sizeof(dir_path), "%s%s%s",
			    f->path, f->path[0] ? "/" : "", name) >=
			    sizeof(dir_path))
				return -1;
			/* resolved beneath the share root, or refused */
			lst = st;
			has_dos = dir_link_target(tree, dir_path, &st, &di,
			    want_ea ? &ea : NULL, &rc);
			link = 1;
			/* a DFS root's msdfs link: a directory that refers on */
			if (rc != 0 && (dfs = dfs_entry_link(req, f->fd,
			    name)) != 0) {
				st = lst;
				st.mode = S_IFDIR | (lst.mode & 0555);
				rc = 0;
			}
		} else if (rc == 0 && (S_ISREG(st.mode) || S_ISDIR(st.mode)))
			has_dos = dir_entry_xattrs(f->fd, name, &di,
			    want_ea ? &ea : NULL);
	}
	/* one test when the share has no hide unreadable */
	if (rc == 0 && dot == 0 && !dfs && tree->share != NULL &&
	    tree->share->hide_unreadable &&
	    (S_ISREG(st.mode) || S_ISDIR(st.mode)) &&
	    !dir_entry_readable(tree, f->fd, name, &st, link))
		return -1;
	if (rc == 0 && pi != NULL) {
		smb2_posix_from_stat(&st, &di, has_dos, pi);
		return 0;
	}
	if (rc != 0 || (!S_ISREG(st.mode) && !S_ISDIR(st.mode)))
		return -1;
	file_info_from_stat(&st, &di, has_dos, fi);
	fi->ea_size = ea;
	if (dfs)
		dfs_entry_info(fi);
	dir_ent_st = st;
	return 0;
}

/*
 * READ_DIR_ATTR (worker/fruit.h), once a Mac negotiated it: Apple's
 * meanings of a FileIdBothDirectoryInformation entry written at e (as
 * Samba's smbd_marshall_dir_entry): EaSize the maximal access, the short
 * name field the resource fork size and compressed Finder info,
 * Reserved2 the Unix mode; FileId 0 with fruit:zero_file_id.
 */
static void
dir_entry_aapl(struct smb2_req *req, struct file_open *f, const char *name,
    int dot, uint8_t *e)
{
	const struct vfs_stat *st = &dir_ent_st;
	uint32_t maxacc;

	if (fruit_zero_file_id(req->conn, req->tree))
		le64_put(e + 96, 0);
	if (!req->conn->aapl_rdattr || dot != 0)
		return;
	/* one access(2): the kernel says whether the user may write */
	maxacc = file_vfs()->accessat(f->fd, name, W_OK) == 0 &&
	    !req->tree->read_only ? FILE_ALL_ACCESS :
	    0x001200A9u;	/* FILE_GENERIC_READ | _EXECUTE */
	le32_put(e + 64, maxacc);
	fruit_dir_attr(f->share, f->fd, name, st, !req->tree->read_only &&
	    !f->prev_version && req->tree->share->fruit_convert_adouble,
	    e + 68);
	le16_put(e + 94, (uint16_t)st->mode);
}

/*
 * Does the level carry EaSize worth its calls?  The levels with the field
 * (MS-FSCC 2.4.8, 2.4.14, 2.4.16-2.4.18), on a share with `ea support`,
 * but not FileIdBothDirectoryInformation where READ_DIR_ATTR puts the
 * maximal access there (dir_entry_aapl).
 */
static int
dir_wants_ea(struct smb2_req *req, int klass)
{
	switch (klass) {
	case FileFullDirectoryInformation:
	case FileBothDirectoryInformation:
	case FileIdFullDirectoryInformation:
	case FileIdExtdDirectoryInformation:
		break;
	case FileIdBothDirectoryInformation:
		if (req->conn->aapl && req->conn->aapl_rdattr &&
		    fruit_tree_on(req->tree))
			return 0;
		break;
	default:
		return 0;
	}
	return smb2_ea_on(req->tree->share);
}

/* Appends one entry; 1 written, 0 did not fit, -1 skipped. */
static int
dir_emit(struct smb2_req *req, struct wcur *w, size_t limit_end, int klass,
    struct file_open *f, const char *name, int dot, uint8_t **prev)
{
	struct file_dir *d = f->dir;
	struct fscc_info fi;
	struct posix_info pi;
	struct wcur lim;
	const struct conf_share *share = req->tree->share;
	static char wire_buf[256 * 4];
	const char *wire = name;
	size_t start, wrote;
	int n16, exact, posix = klass == FILE_POSIX_INFORMATION;

	/* fruit:encoding = native: the name as a Mac knows it (fruit.h) */
	if (dot == 0 && !f->posix && fruit_name_native(share)) {
		if (adouble_name_private(name, strlen(name), wire_buf,
		    sizeof(wire_buf)) < 0)
			return -1;
		wire = wire_buf;
	}
	/* a POSIX handle matches names exactly (Samba's posix_dir_handle) */
	exact = f->posix || (share && share->case_sensitive);
	/* Windows matches a pattern against the short name too */
	if (!fscc_name_match(d->pattern, d->pattern_len, wire, strlen(wire),
	    exact) && (dot != 0 || f->posix || !shortname_pattern(share,
	    d->pattern, d->pattern_len, name, strlen(name), exact)))
		return -1;
	if (dot == 0 && namerule_vetoed(share, name, strlen(name)))
		return -1;
	n16 = unicode_utf8_to_utf16(wire, strlen(wire), dir_name16,
	    sizeof(dir_name16));
	if (n16 < 0) {
		log_debug(2, "listing: skipped a name that is not UTF-8");
		return -1;
	}
	if (dir_entry_info(req, f, name, dot, dir_wants_ea(req, klass),
	    &fi, posix ? &pi : NULL) != 0)
		return -1;
	if (dot == 0 && !posix) {
		fi.attrs = namerule_attrs(share, name, strlen(name), fi.attrs);
		if (klass == FileBothDirectoryInformation ||
		    klass == FileIdBothDirectoryInformation)
			fi.short_len = (uint8_t)shortname_listing(share, name,
			    strlen(name), fi.short16);
	}
	/* entries start 8-aligned from the start of the output buffer */
	start = (wcur_off(w) - DIR_OUT_OFFSET + 7) & ~(size_t)7;
	start += DIR_OUT_OFFSET;
	if (start > limit_end)
		return 0;
	lim = *w;
	lim.end = w->base + limit_end;
	lim.p = w->base + start;
	if (lim.p > lim.end)
		return 0;
	memset(w->p, 0, start - wcur_off(w));
	wrote = posix ? posix_put_dirent(&lim, &pi, dir_name16, (size_t)n16) :
	    fscc_put_dirent(&lim, klass, &fi, 0, dir_name16, (size_t)n16);
	if (wrote == 0)
		return 0;
	if (klass == FileIdBothDirectoryInformation && req->conn->aapl &&
	    fruit_tree_on(req->tree))
		dir_entry_aapl(req, f, name, dot, w->base + start);
	if (*prev != NULL)
		le32_put(*prev, (uint32_t)(start - (size_t)(*prev - w->base)));
	*prev = w->base + start;
	w->p = lim.p;
	return 1;
}

/* A pattern without wildcards names at most one entry. */
static int
dir_single(struct smb2_req *req, struct wcur *w, size_t limit_end, int klass,
    struct file_open *f, uint8_t **prev)
{
	static char full[FILE_PATH_MAX], one[256 * 4];
	struct file_dir *d = f->dir;
	struct vfs_stat st;
	const char *last;

	if (strcmp(d->pattern, ".") == 0)
		return dir_emit(req, w, limit_end, klass, f, ".", 1, prev);
	if (strcmp(d->pattern, "..") == 0)
		return dir_emit(req, w, limit_end, klass, f, "..", 2, prev);
	if (d->pattern_len >= sizeof(one))
		return -1;
	memcpy(one, d->pattern, d->pattern_len + 1);
	/* fruit:encoding = native: the name on disk (fruit.h) */
	if (!f->posix && fruit_name_native(req->tree->share))
		(void)adouble_name_native(one);
	if (file_vfs()->entstat(f->fd, one, &st) != 0 && !f->posix) {
		if ((size_t)snprintf(full, sizeof(full), "%s%s%s", f->path,
		    f->path[0] ? "/" : "", one) >= sizeof(full))
			return -1;
		if (!(req->tree->share && req->tree->share->case_sensitive))
			(void)vfs_name_resolve(file_vfs(), req->tree->root_fd,
			    full, sizeof(full));
		/* a short name: its long name (vetoed ones are not found) */
		if (shortname_on(req->tree->share) && mangle_shape(one,
		    d->pattern_len) && file_vfs()->statat(req->tree->root_fd,
		    full, &st) != 0)
			(void)shortname_resolve(req->tree, full, sizeof(full));
		last = strrchr(full, '/');
		last = last ? last + 1 : full;
		if (strlen(last) >= sizeof(one))
			return -1;
		memcpy(one, last, strlen(last) + 1);
	}
	return dir_emit(req, w, limit_end, klass, f, one, 0, prev);
}

/* Makes the next on-disk entry available at d->buf + d->pos; 0 at the end. */
static int
dir_fill(struct file_open *f)
{
	struct file_dir *d = f->dir;
	ssize_t n;

	if (d->pos < d->len)
		return 1;
	if (d->eof)
		return 0;
	n = file_vfs()->getdents(f->fd, d->buf, sizeof(d->buf));
	if (n < 0)
		return (int)n;
	if (n == 0) {
		d->eof = 1;
		return 0;
	}
	d->len = (size_t)n;
	d->pos = 0;
	return 1;
}

ntstatus_t
smb2_query_directory_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body, pc;
	struct file_open *f;
	struct file_dir *d;
	struct open *op;
	struct wcur *w = &rsp->body;
	const uint8_t *pat16;
	uint8_t *outhdr, *prev = NULL;
	uint8_t klass, flags;
	uint16_t poff, plen;
	uint32_t outlen;
	size_t limit_end, count = 0;
	uint16_t reclen;
	const char *name;
	int rc, r, single;
	ntstatus_t status;

	if (cur_le16(c) != 33)
		return STATUS_INVALID_PARAMETER;
	klass = cur_u8(c);
	flags = cur_u8(c);
	cur_skip(c, 4);			/* FileIndex: positions are not kept */
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	poff = cur_le16(c);
	plen = cur_le16(c);
	outlen = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	f = op->u.file;
	/* the POSIX level only on a POSIX handle, as Samba */
	if (klass == FILE_POSIX_INFORMATION && !f->posix)
		return STATUS_INVALID_LEVEL;
	if (klass != FILE_POSIX_INFORMATION && fscc_dirent_fixed(klass) == 0)
		return STATUS_INVALID_INFO_CLASS;
	if (!f->is_dir)
		return STATUS_INVALID_PARAMETER;
	if (!(op->access & FILE_READ_DATA))
		return STATUS_ACCESS_DENIED;
	if (f->dir == NULL && (f->dir = file_dir_get()) == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	d = f->dir;
	if (flags & (SMB2_RESTART_SCANS | SMB2_REOPEN))
		dir_restart(f);
	if (!d->started || (flags & SMB2_REOPEN)) {
		if (plen > 0) {
			pc = cur_sub(c, poff, plen);
			pat16 = cur_view(&pc, plen);
			if (pat16 == NULL)
				return STATUS_INVALID_PARAMETER;
			rc = unicode_utf16_to_utf8(pat16, plen, d->pattern,
			    sizeof(d->pattern));
			if (rc < 0)
				return STATUS_OBJECT_NAME_INVALID;
			d->pattern_len = (size_t)rc;
		} else {
			d->pattern[0] = '*';
			d->pattern[1] = '\0';
			d->pattern_len = 1;
		}
		if (memchr(d->pattern, '\\', d->pattern_len) != NULL ||
		    memchr(d->pattern, '/', d->pattern_len) != NULL)
			return STATUS_OBJECT_NAME_INVALID;
		d->started = 1;
	}
	single = !dir_has_wildcard(d->pattern, d->pattern_len);

	/* MS-SMB2 2.2.34 */
	outhdr = wcur_reserve(w, 8);
	if (outhdr == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	limit_end = DIR_OUT_OFFSET + outlen;
	if (req->conn->max_trans_size != 0 &&
	    outlen > req->conn->max_trans_size)
		limit_end = DIR_OUT_OFFSET + req->conn->max_trans_size;
	if (limit_end > (size_t)(w->end - w->base))
		limit_end = (size_t)(w->end - w->base);

	if (single) {
		/* one lookup: the exact name, else its case-insensitive twin */
		if (d->dots == 0) {
			r = dir_single(req, w, limit_end, klass, f, &prev);
			if (r == 0) {
				w->p = outhdr;
				return STATUS_INFO_LENGTH_MISMATCH;
			}
			d->dots = 3;	/* answered; the next call ends it */
			if (r == 1) {
				count++;
				d->returned++;
			}
		}
		goto done;
	}

	while (count == 0 || !(flags & SMB2_RETURN_SINGLE_ENTRY)) {
		if (d->dots < 2) {
			r = dir_emit(req, w, limit_end, klass, f,
			    d->dots == 0 ? "." : "..", d->dots + 1, &prev);
			if (r == 0)
				break;
			d->dots++;
		} else {
			rc = dir_fill(f);
			if (rc < 0) {
				w->p = outhdr;
				return rc == -EBADF ? STATUS_ACCESS_DENIED :
				    ntstatus_from_errno(rc);
			}
			if (rc == 0)
				break;
			memcpy(&reclen, d->buf + d->pos + 16, 2);
			name = (const char *)d->buf + d->pos + 19;
			if (reclen == 0 || d->pos + reclen > d->len) {
				w->p = outhdr;
				return STATUS_DATA_ERROR;
			}
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				r = -1;
			else
				r = dir_emit(req, w, limit_end, klass, f, name,
				    0, &prev);
			if (r == 0)
				break;
			d->pos += reclen;
		}
		if (r == 1) {
			count++;
			d->returned++;
		}
	}
done:
	d->searches++;
	if (count == 0) {
		w->p = outhdr;
		if (d->searches == 1 && (d->eof || single))
			return STATUS_NO_SUCH_FILE;
		if (d->eof || single)
			return STATUS_NO_MORE_FILES;
		/* the next entry alone is larger than the output buffer */
		return STATUS_INFO_LENGTH_MISMATCH;
	}
	le16_put(outhdr, 9);
	le16_put(outhdr + 2, DIR_OUT_OFFSET);
	le32_put(outhdr + 4, (uint32_t)(wcur_off(w) - DIR_OUT_OFFSET));
	return STATUS_SUCCESS;
}

/*
 * hide unreadable for CHANGE_NOTIFY (worker/smb2_notify.c): is a change
 * of name one the watcher's listing would show?  judge: the name a moved
 * file has now (a rename's old half), or NULL.  A stream's change
 * ("file:stream", a worker's report) is judged by its file; any other
 * name is a file's, whole: one made locally or stored by fruit:encoding
 * = native may hold a ':'.  A name that is gone
 * (removed, moved out of sight) cannot be judged: -1, the watch
 * overflows, so the client lists the directory again (NOTIFY_ENUM_DIR)
 * and the listing leaves out what he may not read.
 */
int
smb2_dir_notify_visible(struct conn *c, uint64_t fid_p, uint64_t fid_v,
    uint32_t action, const char *name, const char *judge)
{
	struct open *op;

	/* (a stream's removal is REMOVED_STREAM: its file is there) */
	if (judge == NULL && (action == FILE_ACTION_REMOVED ||
	    action == FILE_ACTION_RENAMED_OLD_NAME))
		return -1;
	op = open_find(c, fid_p, fid_v);
	return op != NULL && op->u.file != NULL && op->tree != NULL &&
	    (judge != NULL ? smb2_dir_path_readable(op->tree, op->u.file,
	    judge, strlen(judge)) : smb2_dir_path_readable(op->tree,
	    op->u.file, name, fscc_notify_file_len(action, name,
	    strlen(name))));
}
