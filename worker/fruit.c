/*
 * macOS clients (worker/fruit.h): the AAPL context, AFP_AfpInfo's rules,
 * the READ_DIR_ATTR directory fields and the Time Machine volume size.
 * What Samba's vfs_fruit does over streams_xattr, written for usmbd's
 * streams (xattrs, vfs/xattr.c); AfpInfo either as a stream
 * (`fruit:metadata = stream`) or in netatalk's AppleDouble xattr
 * (`netatalk`, the default: proto/adouble.h).
 */
#include "worker/fruit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/adouble.h"
#include "proto/secdesc.h"
#include "proto/unicode.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/smb2.h"
#include "worker/smb2_create_ctx.h"

int
fruit_tree_on(const struct tree *tree)
{
	return tree != NULL && tree->share != NULL && tree->share->fruit;
}

int
fruit_name_native(const struct conf_share *sh)
{
	return sh != NULL && sh->fruit && sh->fruit_encoding == 1;
}

int
fruit_conn_aapl(const struct conn *c)
{
	return c != NULL && c->aapl;
}

int
fruit_zero_file_id(const struct conn *c, const struct tree *tree)
{
	return fruit_conn_aapl(c) && fruit_tree_on(tree) &&
	    tree->share->fruit_zero_file_id;
}

int
fruit_posix_rename(const struct conn *c, const struct tree *tree)
{
	return fruit_conn_aapl(c) && fruit_tree_on(tree) &&
	    tree->share->fruit_posix_rename;
}

int
fruit_aapl_want(const struct conn *c, const struct tree *tree,
    const uint8_t *data, uint32_t len, struct aapl_query *q,
    ntstatus_t *status)
{
	const struct conf *conf = c->conf;

	*status = STATUS_SUCCESS;
	if (!fruit_tree_on(tree))
		return 0;
	if (conf != NULL && !conf->fruit_aapl)
		return 0;
	if (aapl_query_decode(data, len, q) != 0) {
		*status = STATUS_INVALID_PARAMETER;
		return 0;
	}
	return 1;
}

void
fruit_aapl_reply(struct conn *c, const struct tree *tree,
    const struct aapl_query *q, struct wcur *w, uint8_t **prev)
{
	static uint8_t body[256 + 40], model16[256];
	const struct conf *conf = c->conf;
	const struct conf_share *sh = tree->share;
	const char *model = conf != NULL && conf->fruit_model != NULL &&
	    conf->fruit_model[0] != '\0' ? conf->fruit_model : "MacSamba";
	struct aapl_reply r;
	struct wcur bw;
	int n;

	memset(&r, 0, sizeof(r));
	r.bitmap = q->bitmap;
	r.server_caps = AAPL_UNIX_BASED;
	/* streams are always there: directory entries carry Finder info */
	if (q->client_caps & AAPL_SUPPORTS_READ_DIR_ATTR) {
		r.server_caps |= AAPL_SUPPORTS_READ_DIR_ATTR;
		c->aapl_rdattr = 1;
	}
	if (conf != NULL && conf->fruit_copyfile) {
		r.server_caps |= AAPL_SUPPORTS_OSX_COPYFILE;
		c->aapl_copyfile = 1;
	}
	if (conf != NULL && conf->fruit_nfs_aces)
		r.server_caps |= AAPL_SUPPORTS_NFS_ACE;
	if (sh->case_sensitive)
		r.volume_caps |= AAPL_CASE_SENSITIVE;
	if (sh->fruit_time_machine)
		r.volume_caps |= AAPL_FULL_SYNC;
	n = unicode_utf8_to_utf16(model, strlen(model), model16,
	    sizeof(model16));
	r.model16 = model16;
	r.model16_len = n > 0 ? (size_t)n : 0;
	wcur_init(&bw, body, sizeof(body));
	aapl_reply_put(&bw, &r);
	if (bw.err)
		return;
	smb2_create_put_ctx(w, prev, "AAPL", body, (uint32_t)wcur_off(&bw));
	c->aapl = 1;
}

int
fruit_stream_hidden(const struct file_open *f, const char *name,
    int64_t size, int aapl)
{
	const struct conf_share *sh = f->share;

	if (sh == NULL || !sh->fruit)
		return 0;
	if (strcasecmp(name, FRUIT_AFPINFO) == 0)
		return size != AFPINFO_SIZE;
	if (size == 0)
		return aapl || strcasecmp(name, FRUIT_RESOURCE) == 0;
	return 0;
}

int
fruit_is_afpinfo(const struct file_open *f)
{
	const struct conf_share *sh = f->share;

	return sh != NULL && sh->fruit &&
	    strcasecmp(f->stream, FRUIT_AFPINFO) == 0;
}

int
fruit_is_resource(const struct file_open *f)
{
	const struct conf_share *sh = f->share;

	return sh != NULL && sh->fruit &&
	    strcasecmp(f->stream, FRUIT_RESOURCE) == 0;
}

int
fruit_rsrc_kept(const struct file_open *f)
{
	char xname[300];

	/*
	 * Samba's fruit_unlink_rsrc_stream: "OS X ignores resource fork
	 * stream delete requests"; an empty one goes, or it would linger
	 * unseen (empty forks are never listed).  One getxattr, at the last
	 * close of a delete-pending fork only.
	 */
	if (fruit_rsrc_file(f))
		return fruit_rsrc_size(f) > 0;
	return fruit_is_resource(f) &&
	    vfs_stream_xattr_name(f->stream, xname, sizeof(xname)) == 0 &&
	    file_vfs()->getxattr(f->fd, xname, NULL, 0) > 0;
}

/*
 * One buffer for netatalk's blob: the worker is single-threaded and no
 * caller holds it across another call here.
 */
static uint8_t fruit_ad[ADOUBLE_META_MAX];

int
fruit_meta_netatalk_share(const struct file_open *f)
{
	const struct conf_share *sh = f->share;

	return sh != NULL && sh->fruit &&
	    sh->fruit_metadata == FRUIT_META_NETATALK;
}

int
fruit_meta_netatalk(const struct file_open *f)
{
	return fruit_is_afpinfo(f) && fruit_meta_netatalk_share(f);
}

/* The stream xattr an older usmbd (or fruit:metadata = stream) wrote. */
static const char *
fruit_afpinfo_old(void)
{
	static char xname[64];

	if (xname[0] == '\0' &&
	    vfs_stream_xattr_name(FRUIT_AFPINFO, xname, sizeof(xname)) != 0)
		xname[0] = '\0';
	return xname;
}

/* A getxattr answer that means "no usable blob here". */
static int
fruit_ad_absent(ssize_t n)
{
	return n == -ENODATA || n == -ERANGE || n >= 0;
}

ssize_t
fruit_afpinfo_read(const struct file_open *f, uint8_t rec[AFPINFO_SIZE])
{
	const struct vfs_ops *vfs = file_vfs();
	ssize_t n;

	n = vfs->getxattr(f->fd, ADOUBLE_META_XATTR, fruit_ad,
	    sizeof(fruit_ad));
	if (n >= 0 && adouble_meta_to_afpinfo(fruit_ad, (size_t)n, rec) == 0)
		return AFPINFO_SIZE;
	if (!fruit_ad_absent(n))
		return n;
	/*
	 * A malformed blob (another program's) reads as none, as Samba's
	 * ad_read_meta; Samba also removes it, a read here writes nothing.
	 */
	n = vfs->getxattr(f->fd, fruit_afpinfo_old(), rec, AFPINFO_SIZE);
	if (n == AFPINFO_SIZE)
		return n;
	return n >= 0 || n == -ERANGE ? -ENODATA : n;
}

int
fruit_afpinfo_remove(struct file_open *f)
{
	const struct vfs_ops *vfs = file_vfs();
	int a, b;

	a = vfs->removexattr(f->fd, ADOUBLE_META_XATTR);
	if (a != 0 && a != -ENODATA)
		return a;
	b = vfs->removexattr(f->fd, fruit_afpinfo_old());
	if (b != 0 && b != -ENODATA)
		return b;
	return a == 0 || b == 0 ? 0 : -ENODATA;
}

int
fruit_afpinfo_listed(const struct file_open *f)
{
	ssize_t n;

	n = file_vfs()->getxattr(f->fd, ADOUBLE_META_XATTR, fruit_ad,
	    sizeof(fruit_ad));
	if (n < 0 || adouble_finderinfo_off(fruit_ad, (size_t)n) < 0)
		return -1;
	return adouble_meta_listed(fruit_ad, (size_t)n);
}

/*
 * Stores rec's Finder info in the blob: the blob read and patched in
 * place (its comment and dates kept, as Samba's ad_fget + ad_fset), or a
 * new one; then the older stream xattr goes, so that it can never come
 * back from under a later delete.
 */
static int
fruit_afpinfo_store(int fd, const uint8_t rec[AFPINFO_SIZE])
{
	const struct vfs_ops *vfs = file_vfs();
	ssize_t n;
	size_t len;
	int rc;

	n = vfs->getxattr(fd, ADOUBLE_META_XATTR, fruit_ad,
	    sizeof(fruit_ad));
	if (!fruit_ad_absent(n))
		return (int)n;
	len = adouble_meta_set(fruit_ad, n > 0 ? (size_t)n : 0,
	    sizeof(fruit_ad), rec, (int64_t)time(NULL));
	if ((rc = vfs->setxattr(fd, ADOUBLE_META_XATTR, fruit_ad, len,
	    0)) != 0)
		return rc;
	rc = vfs->removexattr(fd, fruit_afpinfo_old());
	return rc == -ENODATA ? 0 : rc;
}

void
fruit_afpinfo_default(uint8_t rec[AFPINFO_SIZE])
{
	memset(rec, 0, AFPINFO_SIZE);
	rec[0] = 'A';
	rec[1] = 'F';
	rec[2] = 'P';
	rec[6] = 1;			/* version 0x00000100, big-endian */
}

ssize_t
fruit_afpinfo_write(struct file_open *f, const void *buf, size_t len,
    uint64_t off)
{
	const struct conf_share *sh = f->share;
	uint8_t rec[AFPINFO_SIZE], hdr[AFPINFO_SIZE];
	char xname[300];
	int rc;

	/*
	 * A Mac's rules (Samba's fruit_pwrite_meta, "verified against
	 * macOS"): at least 3 bytes, a whole record unless at 0, starting
	 * "AFP"; up to the Finder info nothing is written; otherwise the
	 * write is the record from its start, whatever the offset.
	 */
	if (len < 3 || (off != 0 && len < AFPINFO_SIZE))
		return -EINVAL;
	if (sh->fruit_validate_afpinfo && memcmp(buf, "AFP", 3) != 0)
		return -EINVAL;
	if (len <= AFPINFO_OFF_FINDERINFO)
		return (ssize_t)len;
	if ((rc = vfs_stream_xattr_name(f->stream, xname, sizeof(xname))) != 0)
		return rc;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, buf, len < AFPINFO_SIZE ? len : AFPINFO_SIZE);
	if (!aapl_afpinfo_valid(rec, sizeof(rec))) {
		if (sh->fruit_validate_afpinfo)
			return -EINVAL;
		/* Samba writes a header of its own then */
		fruit_afpinfo_default(hdr);
		memcpy(rec, hdr, 8);
	}
	rc = fruit_afpinfo_put(sh, f->fd, xname, rec);
	return rc < 0 ? rc : (ssize_t)len;
}

int
fruit_afpinfo_put(const struct conf_share *sh, int fd, const char *xname,
    const uint8_t rec[AFPINFO_SIZE])
{
	const struct vfs_ops *vfs = file_vfs();
	int rc, rc2;

	if (xname == NULL)
		xname = fruit_afpinfo_old();
	/* an all-zero Finder info deletes the stream, as on a Mac */
	if (aapl_afpinfo_empty(rec, AFPINFO_SIZE)) {
		/* netatalk's blob, and what an older usmbd wrote */
		rc = sh->fruit_metadata == FRUIT_META_NETATALK ?
		    vfs->removexattr(fd, ADOUBLE_META_XATTR) : -ENODATA;
		rc2 = vfs->removexattr(fd,
		    sh->fruit_metadata == FRUIT_META_NETATALK ?
		    fruit_afpinfo_old() : xname);
		if (rc != 0 && rc != -ENODATA)
			return rc;
		return rc2 != 0 && rc2 != -ENODATA ? rc2 : 0;
	}
	if (sh->fruit_metadata == FRUIT_META_NETATALK)
		return fruit_afpinfo_store(fd, rec);
	return vfs->setxattr(fd, xname, rec, AFPINFO_SIZE, 0);
}

ntstatus_t
fruit_afpinfo_eof(struct file_open *f, uint64_t eof)
{
	(void)f;
	/* OS X: ALLOTTED_SPACE_EXCEEDED past the record, else nothing */
	return eof > AFPINFO_SIZE ? STATUS_ALLOTTED_SPACE_EXCEEDED :
	    STATUS_SUCCESS;
}

/*
 * Which of an entry's xattrs fruit_dir_attr reads (netatalk shares): one
 * listxattr says, so that an entry with none costs that one call.  All
 * of them (-1) when the list does not fit: each is probed then.
 */
#define FRUIT_HAS_RSRC	1
#define FRUIT_HAS_META	2
#define FRUIT_HAS_OLD	4
static int
fruit_dir_has(int dirfd, const char *name, const char *rsrc, const char *old)
{
	static char list[4096];
	ssize_t n;
	const char *x;
	int has = 0;

	n = file_vfs()->entlistxattr(dirfd, name, list, sizeof(list));
	if (n == -ERANGE)
		return -1;
	for (x = list; n > 0 && x < list + n; x += strlen(x) + 1) {
		if (strcmp(x, rsrc) == 0)
			has |= FRUIT_HAS_RSRC;
		else if (strcmp(x, ADOUBLE_META_XATTR) == 0)
			has |= FRUIT_HAS_META;
		else if (strcmp(x, old) == 0)
			has |= FRUIT_HAS_OLD;
	}
	return has;
}

void
fruit_dir_attr(const struct conf_share *sh, int dirfd, const char *name,
    const struct vfs_stat *st, int convert, uint8_t out[26])
{
	const struct vfs_ops *vfs = file_vfs();
	uint8_t rec[AFPINFO_SIZE];
	char xname[300];
	const char *old = fruit_afpinfo_old();
	ssize_t n;
	uint64_t rsize = 0;
	int has = -1;

	le16_put(out, 24);
	if (vfs_stream_xattr_name(FRUIT_RESOURCE, xname, sizeof(xname)) != 0)
		xname[0] = '\0';
	/*
	 * A Mac's "._" file met first here is converted (Samba's
	 * ad_convert in its readdir_attr), before its streams are read;
	 * the same open gives the fork's size.
	 */
	n = -ENOENT;
	if (convert)
		n = fruit_conv(sh, dirfd, name, -1, 1);
	/*
	 * netatalk's blob, else what an older usmbd wrote: a listxattr
	 * first, so that a file with neither (and no resource fork) costs
	 * one call instead of three getxattr.
	 */
	if (sh->fruit_metadata == FRUIT_META_NETATALK)
		has = fruit_dir_has(dirfd, name, xname, old);
	/* fruit:resource = file: "._NAME", else an older xattr fork */
	if (sh->fruit_resource == FRUIT_RSRC_FILE && S_ISREG(st->mode) &&
	    (convert || (n = fruit_rsrc_entsize(dirfd, name)) > 0) && n > 0)
		rsize = (uint64_t)n;
	else if (xname[0] != '\0' && (has & FRUIT_HAS_RSRC) &&
	    (n = vfs->entxattr(dirfd, name, xname, NULL, 0)) > 0)
		rsize = (uint64_t)n;
	le64_put(out + 2, rsize);
	n = -1;
	if (sh->fruit_metadata == FRUIT_META_NETATALK &&
	    (has & FRUIT_HAS_META)) {
		n = vfs->entxattr(dirfd, name, ADOUBLE_META_XATTR, fruit_ad,
		    sizeof(fruit_ad));
		n = n >= 0 && adouble_meta_to_afpinfo(fruit_ad, (size_t)n,
		    rec) == 0 ? AFPINFO_SIZE : -1;
	}
	if (n < 0 && (has & FRUIT_HAS_OLD) && old[0] != '\0')
		n = vfs->entxattr(dirfd, name, old, rec, sizeof(rec));
	aapl_finder_compress(n == AFPINFO_SIZE ? rec : NULL,
	    S_ISREG(st->mode), st->has_btime ? st->btime.tv_sec :
	    st->mtime.tv_sec, out + 10);
}

int
fruit_copyfile(struct file_open *src, struct file_open *dst,
    uint64_t *copied)
{
	static uint8_t buf[65536];
	static char list[65536];
	const struct vfs_ops *vfs = file_vfs();
	size_t pl = strlen(VFS_XATTR_STREAM);
	struct vfs_stat st;
	const char *x;
	const struct conf_share *sh = src->share;
	uint64_t off = 0;
	ssize_t n, len;
	int rc, rsrc_file = sh != NULL && sh->fruit && !src->is_dir &&
	    sh->fruit_resource == FRUIT_RSRC_FILE;

	*copied = 0;
	if ((rc = vfs->fstat(src->fd, &st)) != 0)
		return rc;
	if ((rc = vfs->ftruncate(dst->fd, 0)) != 0)
		return rc;
	while (off < st.size) {
		n = vfs->copy_range(src->fd, off, dst->fd, off,
		    st.size - off > (1u << 30) ? (1u << 30) :
		    (size_t)(st.size - off));
		if (n == -EXDEV || n == -EINVAL || n == -EOPNOTSUPP ||
		    n == -ENOSYS) {
			n = vfs->pread(src->fd, buf, sizeof(buf), off);
			if (n > 0)
				n = vfs->pwrite(dst->fd, buf, (size_t)n, off);
		}
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;			/* the source shrank */
		off += (uint64_t)n;
	}
	*copied = off;
	/* fruit:resource = file: the fork from ._ file to ._ file */
	if (rsrc_file && (rc = fruit_rsrc_copy(src, dst)) != 0)
		return rc;
	/* the named streams: Finder info, resource fork, the rest */
	len = vfs->listxattr(src->fd, list, sizeof(list));
	for (x = list; len > 0 && x < list + len; x += strlen(x) + 1) {
		/* netatalk's blob is the Finder info too */
		if (strncmp(x, VFS_XATTR_STREAM, pl) != 0 &&
		    strcmp(x, ADOUBLE_META_XATTR) != 0)
			continue;
		/* an older xattr fork: copied above */
		if (rsrc_file && strcmp(x + pl, FRUIT_RESOURCE) == 0)
			continue;
		n = vfs->getxattr(src->fd, x, buf, sizeof(buf));
		if (n < 0)
			continue;		/* gone meanwhile */
		if ((rc = vfs->setxattr(dst->fd, x, buf, (size_t)n, 0)) != 0)
			return rc;
	}
	return 0;
}

/* Is NFS ACE mapping on for this connection and tree? */
static int
fruit_nfs_on(const struct conn *c, const struct tree *tree)
{
	return fruit_conn_aapl(c) && fruit_tree_on(tree) && c->conf != NULL &&
	    c->conf->fruit_nfs_aces;
}

/* S-1-5-88-kind-value */
static void
fruit_nfs_sid(struct secdesc_sid *sid, uint32_t kind, uint32_t value)
{
	memset(sid, 0, sizeof(*sid));
	sid->revision = 1;
	sid->nsub = 3;
	sid->auth[5] = 5;
	sid->sub[0] = 88;
	sid->sub[1] = kind;
	sid->sub[2] = value;
}

static int
fruit_nfs_is(const struct secdesc_sid *sid)
{
	static const uint8_t nt[6] = { 0, 0, 0, 0, 0, 5 };

	return sid->nsub >= 1 && memcmp(sid->auth, nt, 6) == 0 &&
	    sid->sub[0] == 88;
}

/* Drops every S-1-5-88 ACE; the mode ACE's value through *mode (1). */
static int
fruit_nfs_strip(struct secdesc *sd, uint32_t *mode)
{
	unsigned i, j;
	int found = 0;

	for (i = j = 0; i < sd->nace; i++) {
		const struct secdesc_sid *s = &sd->ace[i].sid;

		if (!fruit_nfs_is(s)) {
			sd->ace[j++] = sd->ace[i];
			continue;
		}
		if (!found && s->nsub == 3 && s->sub[1] == 3) {
			*mode = s->sub[2];
			found = 1;
		}
	}
	sd->nace = j;
	return found;
}

void
fruit_nfs_add(const struct conn *c, const struct tree *tree,
    const struct vfs_stat *st, struct secdesc *sd)
{
	static const uint32_t kind[3] = { 3, 1, 2 };
	uint32_t value[3], unused;
	unsigned k;

	if (!fruit_nfs_on(c, tree) || !sd->has_dacl)
		return;
	(void)fruit_nfs_strip(sd, &unused);
	value[0] = st->mode;
	value[1] = st->uid;
	value[2] = st->gid;
	for (k = 0; k < 3 && sd->nace < SECDESC_ACE_MAX; k++) {
		memset(&sd->ace[sd->nace], 0, sizeof(sd->ace[0]));
		sd->ace[sd->nace].type = ACCESS_DENIED_ACE_TYPE;
		fruit_nfs_sid(&sd->ace[sd->nace].sid, kind[k], value[k]);
		sd->nace++;
	}
}

int
fruit_nfs_take(const struct conn *c, const struct tree *tree,
    struct secdesc *sd, uint32_t *mode, int *dacl_left)
{
	unsigned before = sd->nace;
	int chmod_asked;

	*dacl_left = 1;
	if (!fruit_nfs_on(c, tree) || !sd->has_dacl)
		return 0;
	chmod_asked = fruit_nfs_strip(sd, mode);
	*mode &= 0777;
	*dacl_left = !(before > 0 && sd->nace == 0);
	return chmod_asked;
}

/* The band-size of a sparse bundle's Info.plist, or 0. */
static uint64_t
fruit_tm_bandsize(int root, const char *bundle)
{
	static char plist[16384];
	const struct vfs_ops *vfs = file_vfs();
	char path[FILE_PATH_MAX];
	struct vfs_stat st;
	const char *k, *v;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/Info.plist", bundle) >=
	    sizeof(path))
		return 0;
	/*
	 * A user's file: never a fifo or device to wait on (O_NONBLOCK,
	 * then only a regular file is read), never outside the share
	 * (vfs open: beneath the root).
	 */
	if ((fd = vfs->open(root, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW,
	    0)) < 0)
		return 0;
	n = vfs->fstat(fd, &st) == 0 && S_ISREG(st.mode) ?
	    vfs->pread(fd, plist, sizeof(plist) - 1, 0) : -1;
	close(fd);
	if (n <= 0)
		return 0;
	plist[n] = '\0';
	if ((k = strstr(plist, "<key>band-size</key>")) == NULL ||
	    (v = strstr(k, "<integer>")) == NULL)
		return 0;
	return strtoull(v + strlen("<integer>"), NULL, 10);
}

/* The entries of bundle/bands, "." and ".." aside. */
static uint64_t
fruit_tm_nbands(int root, const char *bundle)
{
	static uint8_t dbuf[8192];
	const struct vfs_ops *vfs = file_vfs();
	char path[FILE_PATH_MAX];
	uint64_t count = 0;
	ssize_t n, at;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/bands", bundle) >=
	    sizeof(path))
		return 0;
	if ((fd = vfs->open(root, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
	    0)) < 0)
		return 0;
	while ((n = vfs->getdents(fd, dbuf, sizeof(dbuf))) > 0)
		for (at = 0; at + 19 < n; ) {
			uint16_t reclen = le16_get(dbuf + at + 16);
			const char *nm = (const char *)dbuf + at + 19;

			if (reclen == 0)
				break;
			if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0)
				count++;
			at += reclen;
		}
	close(fd);
	return count;
}

int
fruit_tm_size(const struct tree *tree, uint64_t *total512, uint64_t *free512)
{
	static uint8_t dbuf[8192];
	const struct conf_share *sh = tree->share;
	const struct vfs_ops *vfs = file_vfs();
	uint64_t used = 0, band, nb;
	const char *suffix = ".sparsebundle";
	size_t sl = strlen(suffix), nl;
	ssize_t n, at;
	int fd;

	if (sh == NULL || !sh->fruit || !sh->fruit_time_machine ||
	    sh->fruit_tm_max_size == 0)
		return -1;
	if ((fd = vfs->open(tree->root_fd, "", O_RDONLY | O_DIRECTORY, 0)) < 0)
		return -1;
	while ((n = vfs->getdents(fd, dbuf, sizeof(dbuf))) > 0)
		for (at = 0; at + 19 < n; ) {
			uint16_t reclen = le16_get(dbuf + at + 16);
			const char *nm = (const char *)dbuf + at + 19;

			if (reclen == 0)
				break;
			at += reclen;
			nl = strnlen(nm, 256);
			if (nl <= sl || strcmp(nm + nl - sl, suffix) != 0)
				continue;
			band = fruit_tm_bandsize(tree->root_fd, nm);
			nb = fruit_tm_nbands(tree->root_fd, nm);
			if (band != 0 && nb > UINT64_MAX / band)
				used = UINT64_MAX;
			else if (used + band * nb < used)
				used = UINT64_MAX;
			else
				used += band * nb;
		}
	close(fd);
	*total512 = sh->fruit_tm_max_size / 512;
	*free512 = used / 512 > *total512 ? 0 : *total512 - used / 512;
	return 0;
}
