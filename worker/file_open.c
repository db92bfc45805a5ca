/*
 * Per-open file state, its free lists, and what the file handlers share:
 * client name parsing, handle lookup, the FSCC view of a file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/adouble.h"
#include "proto/reparse.h"
#include "proto/unicode.h"
#include "worker/conn.h"
#include "worker/dfs.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/file_wt.h"
#include "worker/namerule.h"
#include "worker/open.h"
#include "worker/smb2.h"

#define FILE_CHUNK	64
#define DIR_CHUNK	4

static struct file_open	*file_free;
static struct file_open	*file_live;
static struct file_dir	*dir_free;

const struct vfs_ops *
file_vfs(void)
{
	return &vfs_posix;
}

/*
 * The lists grow by a chunk when empty (the first opens of a process, or a
 * new high-water mark) and records go back to them on close: after warm-up
 * the request path does not allocate.
 */
struct file_open *
file_open_get(void)
{
	struct file_open *f, *chunk;
	int i;

	if (file_free == NULL) {
		if ((chunk = calloc(FILE_CHUNK, sizeof(*chunk))) == NULL)
			return NULL;
		for (i = 0; i < FILE_CHUNK; i++) {
			chunk[i].next_free = file_free;
			file_free = &chunk[i];
		}
	}
	f = file_free;
	file_free = f->next_free;
	memset(f, 0, offsetof(struct file_open, path));
	f->path[0] = '\0';
	f->stream[0] = '\0';
	f->create_options = f->share_access = 0;
	f->delete_on_close = 0;
	f->position = 0;
	f->mode = 0;
	f->dir = NULL;
	f->next_free = NULL;
	f->fd = -1;
	f->share = NULL;
	f->root_fd = -1;
	f->live_prev = NULL;
	f->live_next = file_live;
	if (file_live != NULL)
		file_live->live_prev = f;
	file_live = f;
	return f;
}

const struct file_open *
file_open_next_below(const void *share, const char *path,
    const struct file_open *self, const struct file_open *prev)
{
	const struct file_open *g;
	size_t n = strlen(path);

	for (g = prev != NULL ? prev->live_next : file_live; g != NULL;
	    g = g->live_next)
		if (g != self && g->share == share &&
		    strncmp(g->path, path, n) == 0 && g->path[n] == '/')
			return g;
	return NULL;
}

int
file_open_busy_below(const void *share, const char *path,
    const struct file_open *self)
{
	return file_open_next_below(share, path, self, NULL) != NULL;
}

int
file_open_named(const void *share, const char *path)
{
	const struct file_open *g;

	for (g = file_live; g != NULL; g = g->live_next)
		if (g->share == share && strcmp(g->path, path) == 0)
			return 1;
	return 0;
}

void
file_open_renamed(const struct file_open *self, const char *from)
{
	struct file_open *g;

	for (g = file_live; g != NULL; g = g->live_next)
		if (g != self && g->share == self->share && g->dev == self->dev &&
		    g->ino == self->ino && strcmp(g->path, from) == 0)
			memcpy(g->path, self->path, sizeof(g->path));
}

const char *
file_open_client_path(const struct file_open *f)
{
	size_t n = strlen(f->path);

	if (!f->prev_version)
		return f->path;
	return f->path + n - (f->client_len < n ? f->client_len : n);
}

/*
 * A rename made in another worker (or on the server itself) moves f's file
 * under this worker's feet: f->path still names the old place, which may
 * be another file's by now.  The kernel keeps the name of every open's
 * dentry current, readable at /proc/self/fd/N, and the share root's own
 * is its prefix.  st is f's own fstat.  Returns 0 when f->path names f
 * (brought up to date if the file had moved), -ENOENT when f has no name
 * in the share any more (unlinked, or moved out of it).  One statat when
 * nothing moved.
 */
int
file_open_path_current(int root_fd, struct file_open *f,
    const struct vfs_stat *st)
{
	const struct vfs_ops *vfs = file_vfs();
	char p[32], root[FILE_PATH_MAX], now[FILE_PATH_MAX];
	struct vfs_stat tst;
	const char *rel;
	ssize_t rn, n;

	if (f->path[0] == '\0')
		return 0;
	if (vfs->statat(root_fd, f->path, &tst) == 0 && tst.dev == st->dev &&
	    tst.ino == st->ino)
		return 0;
	if (vfs != &vfs_posix)
		return -ENOENT;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", root_fd);
	if ((rn = readlink(p, root, sizeof(root) - 1)) <= 0)
		return -ENOENT;
	root[rn] = '\0';
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f->fd);
	if ((n = readlink(p, now, sizeof(now) - 1)) <= 0 ||
	    (size_t)n >= sizeof(now) - 1)
		return -ENOENT;
	now[n] = '\0';
	/* "/" as the root keeps its slash; any other root is followed by one */
	if (rn == 1 && root[0] == '/')
		rel = now + 1;
	else if (n > rn + 1 && memcmp(now, root, (size_t)rn) == 0 &&
	    now[rn] == '/')
		rel = now + rn + 1;
	else
		return -ENOENT;
	/*
	 * An unlinked file's link reads "<old name> (deleted)": the statat
	 * below refuses it, unless a file of that very name is f itself.
	 */
	if (rel[0] == '\0' || strlen(rel) >= sizeof(f->path) ||
	    vfs->statat(root_fd, rel, &tst) != 0 || tst.dev != st->dev ||
	    tst.ino != st->ino)
		return -ENOENT;
	log_debug(2, "\"%s\" was renamed to \"%s\" outside this worker",
	    f->path, rel);
	memmove(f->path, rel, strlen(rel) + 1);
	return 0;
}

struct file_dir *
file_dir_get(void)
{
	struct file_dir *d, *chunk;
	int i;

	if (dir_free == NULL) {
		if ((chunk = calloc(DIR_CHUNK, sizeof(*chunk))) == NULL)
			return NULL;
		for (i = 0; i < DIR_CHUNK; i++) {
			chunk[i].next_free = dir_free;
			dir_free = &chunk[i];
		}
	}
	d = dir_free;
	dir_free = d->next_free;
	d->len = d->pos = 0;
	d->started = d->eof = d->dots = d->returned = d->searches = 0;
	d->pattern[0] = '\0';
	d->pattern_len = 0;
	d->next_free = NULL;
	return d;
}

void
file_open_put(struct file_open *f)
{
	if (f->dir != NULL) {
		f->dir->next_free = dir_free;
		dir_free = f->dir;
		f->dir = NULL;
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->live_prev != NULL)
		f->live_prev->live_next = f->live_next;
	else if (file_live == f)
		file_live = f->live_next;
	if (f->live_next != NULL)
		f->live_next->live_prev = f->live_prev;
	f->live_prev = f->live_next = NULL;
	f->next_free = file_free;
	file_free = f;
}

static int
name_char_bad(unsigned char c)
{
	/* MS-FSCC 2.1.5.1: characters never valid in a file name */
	return c < 0x20 || c == '"' || c == '*' || c == '/' || c == ':' ||
	    c == '<' || c == '>' || c == '?' || c == '|';
}

static ntstatus_t
file_stream_parse(const char *s, char *stream, size_t scap)
{
	const char *type;
	size_t n;
	const char *p;

	/* s follows the first ':' : "name[:type]" or ":type" */
	type = strchr(s, ':');
	n = type ? (size_t)(type - s) : strlen(s);
	if (type != NULL && strcasecmp(type + 1, "$DATA") != 0)
		return STATUS_OBJECT_NAME_INVALID;
	if (n == 0) {
		if (type == NULL)
			return STATUS_OBJECT_NAME_INVALID;	/* "file:" */
		stream[0] = '\0';				/* "::$DATA" */
		return STATUS_SUCCESS;
	}
	if (n >= scap)
		return STATUS_OBJECT_NAME_INVALID;
	/* MS-FSCC 2.1.5.3: a stream name may hold anything but NUL, \ / : */
	for (p = s; p < s + n; p++)
		if (*p == '/' || *p == '\\' || *p == ':')
			return STATUS_OBJECT_NAME_INVALID;
	memcpy(stream, s, n);
	stream[n] = '\0';
	if (strstr(stream, "..") != NULL) {
		log_warnx("refused stream name \"%s\" (contains \"..\")",
		    stream);
		return STATUS_OBJECT_NAME_INVALID;
	}
	return STATUS_SUCCESS;
}

/*
 * posix: the POSIX pathname rules of a POSIX create (smb3posix.org, as
 * Samba's UCF_POSIX_PATHNAMES): ':' is a name character, not a stream
 * separator, and only the separators and control characters are refused.
 * dfs: a CREATE's name, which may carry the DFS prefix; a rename's or a
 * hard link's target never does (below).
 */
static ntstatus_t
name_parse(struct smb2_req *req, const uint8_t *name16, size_t len,
    char *path, size_t cap, char *stream, size_t scap, int posix, int dfs)
{
	char *p, *comp, *colon;
	size_t n;
	int rc;
	ntstatus_t st;

	stream[0] = '\0';
	rc = unicode_utf16_to_utf8(name16, len, path, cap);
	if (rc == -ENAMETOOLONG)
		return STATUS_OBJECT_NAME_INVALID;
	if (rc < 0)
		return STATUS_OBJECT_NAME_INVALID;	/* bad UTF-16 */
	/* DFS_OPERATIONS on a DFS root: \server\share\ goes first */
	if (dfs && req != NULL && (req->flags & SMB2_FLAGS_DFS_OPERATIONS) &&
	    dfs_req_prefixed(req) &&
	    (st = dfs_req_strip(req, path)) != STATUS_SUCCESS)
		return st;
	/*
	 * '/' separates components like '\' (Samba accepts both, and
	 * clients rely on it); every component is then checked below, so
	 * "a/../b" is refused like "a\..\b".
	 */
	for (p = path; *p != '\0'; p++)
		if (*p == '/')
			*p = '\\';
	if (path[0] == '\\' || path[0] == '/') {
		log_warnx("%s: refused absolute name \"%s\"",
		    req->conn ? req->conn->peer : "?", path);
		return STATUS_INVALID_PARAMETER;
	}
	/* the stream part is on the last component only */
	colon = posix ? NULL : strchr(path, ':');
	if (colon != NULL) {
		if (strchr(colon, '\\') != NULL) {
			/* a separator in a stream name: an escape attempt */
			log_warnx("%s: refused stream name \"%s\" (holds a "
			    "separator)", req->conn ? req->conn->peer : "?",
			    colon + 1);
			return STATUS_OBJECT_NAME_INVALID;
		}
		*colon = '\0';
		if ((st = file_stream_parse(colon + 1, stream, scap)) !=
		    STATUS_SUCCESS)
			return st;
	}
	/* a trailing backslash names the same thing */
	n = strlen(path);
	if (n > 0 && path[n - 1] == '\\')
		path[--n] = '\0';
	for (comp = path; *comp != '\0'; comp = p + (*p != '\0')) {
		for (p = comp; *p != '\0' && *p != '\\'; p++)
			if (posix ? (unsigned char)*p < 0x20 :
			    name_char_bad((unsigned char)*p))
				return STATUS_OBJECT_NAME_INVALID;
		n = (size_t)(p - comp);
		if (n == 0)
			return STATUS_OBJECT_NAME_INVALID;
		if ((n == 1 && comp[0] == '.') ||
		    (n == 2 && comp[0] == '.' && comp[1] == '.')) {
			log_warnx("%s: refused name with a \"%.*s\" component",
			    req->conn ? req->conn->peer : "?", (int)n, comp);
			return STATUS_OBJECT_PATH_SYNTAX_BAD;
		}
		if (n > 255)
			return STATUS_OBJECT_NAME_INVALID;
		if (*p == '\\')
			*p = '/';
	}
	if (colon != NULL && path[0] == '\0' && stream[0] != '\0')
		return STATUS_OBJECT_NAME_INVALID;	/* a stream of the root */
	/*
	 * fruit:encoding = native: a Mac's U+F0xx for ':' and the like are
	 * stored as those characters, once the components are split and
	 * checked (the map never gives '/', so no component is added).
	 */
	if (!posix && req != NULL && req->tree != NULL &&
	    fruit_name_native(req->tree->share))
		(void)adouble_name_native(path);
	return STATUS_SUCCESS;
}

ntstatus_t
file_name_parse(struct smb2_req *req, const uint8_t *name16, size_t len,
    char *path, size_t cap, char *stream, size_t scap)
{
	return name_parse(req, name16, len, path, cap, stream, scap, 0, 1);
}

ntstatus_t
file_name_parse_target(struct smb2_req *req, const uint8_t *name16,
    size_t len, char *path, size_t cap, char *stream, size_t scap)
{
	/*
	 * Windows Server 2022 and Samba 4.22 (smb2_setinfo.c, "SMB2 rename
	 * paths are never DFS"; smbtorture3 SMB2-DFS-PATHS) take the
	 * target as share-relative whatever SMB2_FLAGS_DFS_OPERATIONS says.
	 */
	return name_parse(req, name16, len, path, cap, stream, scap, 0, 0);
}

ntstatus_t
file_name_parse_posix(struct smb2_req *req, const uint8_t *name16,
    size_t len, char *path, size_t cap, char *stream, size_t scap)
{
	return name_parse(req, name16, len, path, cap, stream, scap, 1, 1);
}

ntstatus_t
file_open_lookup(struct smb2_req *req, struct cur *c, struct open **out)
{
	uint64_t p, v;
	struct open *op;
	ntstatus_t status;

	if ((status = open_fid_decode(req, c, &p, &v)) != STATUS_SUCCESS)
		return status;
	op = open_find(req->conn, p, v);
	if (op == NULL || (op->kind != OPEN_FILE && op->kind != OPEN_DIR) ||
	    op->u.file == NULL)
		return STATUS_FILE_CLOSED;
	if (req->tree != NULL && op->tree != req->tree)
		return STATUS_FILE_CLOSED;
	op->replay_eligible = 0;	/* MS-SMB2 3.3.5.x: used, not replayable */
	*out = op;
	return STATUS_SUCCESS;
}

int
file_info_from_stat(const struct vfs_stat *st, const struct vfs_dosinfo *di,
    int has_dos, struct fscc_info *fi)
{
	int dir = S_ISDIR(st->mode);

	memset(fi, 0, sizeof(*fi));
	fi->access = fscc_time_from_timespec(&st->atime);
	fi->write = fscc_time_from_timespec(&st->mtime);
	/*
	 * ChangeTime is the last write time, as Samba reports it: POSIX ctime
	 * also moves on every chmod, xattr write (our DOS attributes) and
	 * link, and a client that sets the write time expects to read the
	 * same value back as the change time.
	 */
	fi->change = fi->write;
	if (has_dos && di->change_time != 0 && di->change_mtime == fi->write)
		fi->change = di->change_time;	/* set by a client since */
	if (has_dos && di->create_time != 0)
		fi->creation = di->create_time;
	else if (st->has_btime)
		fi->creation = fscc_time_from_timespec(&st->btime);
	else
		fi->creation = fi->write;
	fi->eof = dir ? 0 : st->size;
	fi->alloc = dir ? 0 : st->alloc;
	fi->nlink = st->nlink;
	fi->file_id = st->ino;
	fi->directory = (uint8_t)dir;
	if (has_dos)
		fi->attrs = di->attrs & (FILE_ATTRIBUTE_SETTABLE |
		    FILE_ATTRIBUTE_SPARSE_FILE);
	else if (!dir)
		fi->attrs = FILE_ATTRIBUTE_ARCHIVE;
	if (dir)
		fi->attrs |= FILE_ATTRIBUTE_DIRECTORY;
	/* a symlink or special file opened itself is a reparse point */
	if (!dir && !S_ISREG(st->mode)) {
		fi->attrs |= FILE_ATTRIBUTE_REPARSE_POINT;
		fi->alloc = 0;
		fi->reparse_tag = S_ISLNK(st->mode) ? IO_REPARSE_TAG_SYMLINK :
		    IO_REPARSE_TAG_NFS;
	}
	if (fi->attrs == 0)
		fi->attrs = FILE_ATTRIBUTE_NORMAL;
	if (has_dos)		/* an open may defer the write time */
		file_wt_apply(st, di, fi);
	return 0;
}

int64_t
file_stream_size(struct file_open *f)
{
	char xname[300];
	ssize_t n;
	int rc;

	uint8_t rec[AFPINFO_SIZE];

	if ((rc = vfs_stream_xattr_name(f->stream, xname, sizeof(xname))) != 0)
		return rc;
	/* netatalk's blob is an AfpInfo of 60 bytes, or none (fruit.h) */
	if (fruit_meta_netatalk(f))
		return fruit_afpinfo_read(f, rec);
	/* a resource fork in a "._" file (fruit.h) */
	if (fruit_rsrc_file(f))
		return fruit_rsrc_size(f);
	n = file_vfs()->getxattr(f->fd, xname, NULL, 0);
	return n;
}

ntstatus_t
file_info_fill(struct file_open *f, struct fscc_info *fi)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_dosinfo di;
	struct vfs_stat st;
	int rc, has_dos;
	int64_t ssz;

	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	has_dos = vfs_dos_get(vfs, f->fd, &di) == 0;
	file_info_from_stat(&st, &di, has_dos, fi);
	fi->attrs = namerule_path_attrs(f->share, f->path, fi->attrs);
	fi->delete_pending = (uint8_t)(f->delete_on_close != 0);
	if (f->stream[0] != '\0') {
		ssz = file_stream_size(f);
		fi->eof = ssz > 0 ? (uint64_t)ssz : 0;
		/* AfpInfo opened, not yet written: a new record's size */
		if (ssz <= 0 && fruit_is_afpinfo(f))
			fi->eof = AFPINFO_SIZE;
		fi->alloc = (fi->eof + 4095) & ~4095ull;
		fi->directory = 0;
		fi->attrs &= ~FILE_ATTRIBUTE_DIRECTORY;
		if (fi->attrs == 0)
			fi->attrs = FILE_ATTRIBUTE_NORMAL;
	}
	return STATUS_SUCCESS;
}

int
file_name_data_suffix(const uint8_t *name16, size_t len)
{
	static const char suffix[] = "::$DATA";
	size_t n = sizeof(suffix) - 1, i;
	const uint8_t *p;

	if (name16 == NULL || len < 2 * n)
		return 0;
	p = name16 + len - 2 * n;
	for (i = 0; i < n; i++)
		if (p[2 * i + 1] != 0 ||
		    toupper(p[2 * i]) != (unsigned char)suffix[i])
			return 0;
	return 1;
}

void
file_dos_unstorable(const struct file_open *f)
{
	static int said;

	if (said)
		return;
	said = 1;
	log_debug(1, "a share's file system keeps no user xattrs (met at "
	    "\"%s\"): DOS attributes and creation times set by clients are "
	    "dropped there", f->path[0] != '\0' ? f->path : ".");
}

int
file_stream_resolve(struct file_open *f)
{
	static char list[65536];
	const struct vfs_ops *vfs = file_vfs();
	size_t pl = strlen(VFS_XATTR_STREAM);
	char xname[300];
	const char *x;
	ssize_t n;

	/* netatalk's AfpInfo has fixed xattr names (fruit.h) */
	if (f->stream[0] == '\0' || fruit_meta_netatalk(f) ||
	    fruit_rsrc_file(f) ||
	    vfs_stream_xattr_name(f->stream, xname, sizeof(xname)) != 0)
		return 0;
	if (vfs->getxattr(f->fd, xname, NULL, 0) >= 0)
		return 0;			/* the exact name exists */
	n = vfs->listxattr(f->fd, list, sizeof(list));
	for (x = list; n > 0 && x < list + n; x += strlen(x) + 1) {
		if (strncmp(x, VFS_XATTR_STREAM, pl) != 0 ||
		    strlen(x + pl) >= sizeof(f->stream) ||
		    unicode_casecmp(x + pl, strlen(x + pl), f->stream,
		    strlen(f->stream)) != 0)
			continue;
		memcpy(f->stream, x + pl, strlen(x + pl) + 1);
		return 1;
	}
	return 0;
}

/*
 * Byte access to a named stream (an xattr of at most 64 KiB): read the
 * whole value, copy out or patch it, write it back.  One buffer: the
 * worker is single-threaded.
 */
static uint8_t file_stream_buf[65536];

ssize_t
file_stream_pread(struct file_open *f, void *buf, size_t len, uint64_t off)
{
	char xname[300];
	ssize_t n;
	int rc;

	if ((rc = vfs_stream_xattr_name(f->stream, xname, sizeof(xname))) != 0)
		return rc;
	if (fruit_rsrc_file(f))
		return fruit_rsrc_pread(f, buf, len, off);
	if (fruit_meta_netatalk(f))
		n = fruit_afpinfo_read(f, file_stream_buf);
	else
		n = file_vfs()->getxattr(f->fd, xname, file_stream_buf,
		    sizeof(file_stream_buf));
	if (n < 0)
		return n;
	if (off >= (uint64_t)n)
		return 0;
	if (len > (uint64_t)n - off)
		len = (size_t)((uint64_t)n - off);
	memcpy(buf, file_stream_buf + off, len);
	return (ssize_t)len;
}

ssize_t
file_stream_pwrite(struct file_open *f, const void *buf, size_t len,
    uint64_t off)
{
	char xname[300];
	size_t end;
	ssize_t n;
	int rc;

	if ((rc = vfs_stream_xattr_name(f->stream, xname, sizeof(xname))) != 0)
		return rc;
	if (fruit_rsrc_file(f))
		return fruit_rsrc_pwrite(f, buf, len, off);
	if (off > sizeof(file_stream_buf) ||
	    len > sizeof(file_stream_buf) - off)
		return -ENOSPC;		/* past what an xattr holds */
	n = file_vfs()->getxattr(f->fd, xname, file_stream_buf,
	    sizeof(file_stream_buf));
	if (n < 0)
		return n;
	if (off > (uint64_t)n)
		memset(file_stream_buf + n, 0, (size_t)(off - (uint64_t)n));
	memcpy(file_stream_buf + off, buf, len);
	end = off + len > (uint64_t)n ? (size_t)(off + len) : (size_t)n;
	rc = file_vfs()->setxattr(f->fd, xname, file_stream_buf, end, 0);
	if (rc == -E2BIG || rc == -ERANGE)
		return -ENOSPC;
	return rc < 0 ? rc : (ssize_t)len;
}
