/*
 * Extended attributes as Windows sees them (MS-FSCC 2.4.15
 * FILE_FULL_EA_INFORMATION), kept as user xattrs named
 * "user.usmbd.ea.<NAME>", NAME spelt as the client wrote it.
 *
 * Windows compares EA names without case, so every lookup lists the
 * file's xattrs and compares the names without case (EA names are ASCII,
 * ea_name_ok).  NTFS also upper-cases the names it stores; usmbd keeps
 * them as written, as Samba does, because clients look for the name they
 * set: the Linux client compares the names of a query's answer with
 * memcmp, so `setxattr user.kcone` then `getxattr user.kcone` fails on a
 * server that answers KCONE.  Files whose EAs an older usmbd stored
 * upper-cased are read and replaced through the same comparison.
 *
 * A set of an EA whose name matches an existing one in another case
 * replaces it, and the new spelling stays (MS-FSA 2.1.5.15.5: the old
 * entry is removed, the new one added; Samba keeps the old spelling
 * instead, which the client that just wrote the new one cannot find).  A
 * set with an empty value deletes the EA whatever the case of its name.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/fscc.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/smb2_file.h"

#define EA_PREFIX	"user.usmbd.ea."
#define EA_PREFIX_LEN	(sizeof(EA_PREFIX) - 1)
#define EA_NAME_MAX	255
#define EA_VALUE_MAX	65535
#define EA_LIST_MAX	4096	/* entries walked in one request, at most */

/* The file's xattr names (one listing per request; the worker is
 * single-threaded) and one value. */
static char	ea_list[65536];
static uint8_t	ea_value[EA_VALUE_MAX];

/* MS-FSCC 2.4.15: what an EA name may not hold (as Windows refuses). */
static int
ea_name_ok(const uint8_t *n, size_t len)
{
	size_t i;

	if (len == 0 || len > EA_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (n[i] < 0x20 || n[i] >= 0x7f ||
		    strchr("\"*+,/:;<=>?[\\]|", n[i]) != NULL)
			return 0;
	return 1;
}

/* ASCII upper case; bytes past ASCII (a name set locally) stay. */
static unsigned char
ea_fold(unsigned char c)
{
	return c >= 'a' && c <= 'z' ? (unsigned char)(c - 'a' + 'A') : c;
}

/* Is the stored name s (NUL-terminated) name[0, len) without case? */
static int
ea_name_eq(const char *s, const uint8_t *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '\0' || ea_fold((unsigned char)s[i]) !=
		    ea_fold(name[i]))
			return 0;
	return s[len] == '\0';
}

static int
ea_xname(const uint8_t *n, size_t len, char *out, size_t cap)
{
	if (EA_PREFIX_LEN + len + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, EA_PREFIX, EA_PREFIX_LEN);
	memcpy(out + EA_PREFIX_LEN, n, len);
	out[EA_PREFIX_LEN + len] = '\0';
	return 0;
}

/*
 * Lists the file's xattrs into ea_list: the length used, 0 on a file
 * system that keeps no user xattrs (no EAs, then), or -errno.
 */
static ssize_t
ea_load(struct file_open *f)
{
	ssize_t n = file_vfs()->listxattr(f->fd, ea_list, sizeof(ea_list));

	if (n == -ENOTSUP || n == -EOPNOTSUPP)
		return 0;
	return n;
}

/* The EA xattr after x in ea_list[0, n) (NULL: the first); NULL at the end. */
static const char *
ea_next(const char *x, ssize_t n)
{
	x = x == NULL ? ea_list : x + strlen(x) + 1;
	for (; x < ea_list + n; x += strlen(x) + 1)
		if (strncmp(x, EA_PREFIX, EA_PREFIX_LEN) == 0 &&
		    x[EA_PREFIX_LEN] != '\0')
			return x;
	return NULL;
}

/*
 * The xattr holding the EA named name[0, len) without case: the exact
 * spelling when present (two spellings can only come from outside SMB),
 * else the first match; NULL when none.
 */
static const char *
ea_find(ssize_t n, const uint8_t *name, size_t len)
{
	const char *x, *found = NULL;

	for (x = ea_next(NULL, n); x != NULL; x = ea_next(x, n)) {
		if (!ea_name_eq(x + EA_PREFIX_LEN, name, len))
			continue;
		if (memcmp(x + EA_PREFIX_LEN, name, len) == 0)
			return x;
		if (found == NULL)
			found = x;
	}
	return found;
}

/*
 * Calls fn for each EA of the file: name (as stored, no prefix) and value
 * size.  Returns 0 or -errno.
 */
static int
ea_each(struct file_open *f, int (*fn)(void *, const char *, size_t), void *arg)
{
	const struct vfs_ops *vfs = file_vfs();
	ssize_t n, vlen;
	const char *x;
	int rc;

	if ((n = ea_load(f)) < 0)
		return (int)n;
	for (x = ea_next(NULL, n); x != NULL; x = ea_next(x, n)) {
		vlen = vfs->getxattr(f->fd, x, NULL, 0);
		if (vlen < 0)
			continue;
		if ((rc = fn(arg, x + EA_PREFIX_LEN, (size_t)vlen)) != 0)
			return rc;
	}
	return 0;
}

int
smb2_ea_on(const struct conf_share *share)
{
	return share == NULL || share->ea_support;
}

/*
 * EaSize from a list of xattr names (list[0, n), as listxattr gives it):
 * the length of the FILE_FULL_EA_INFORMATION list a query of every EA
 * returns (MS-FSCC 2.4.15: each entry 4-aligned, no padding after the
 * last), so a client that asks with a buffer of EaSize bytes gets them
 * all.  The EAs a query leaves out (a name or value too long for the
 * wire) are not counted.  Only EAs cost a call (vsize, the value's size
 * by name); a list without any costs none.
 */
uint32_t
smb2_ea_size_names(const char *list, size_t n,
    ssize_t (*vsize)(void *, const char *), void *arg)
{
	const char *x, *end = list + n;
	uint64_t total = 0;
	size_t nlen;
	ssize_t vlen;

	for (x = list; x < end; x += strnlen(x, (size_t)(end - x)) + 1) {
		if ((size_t)(end - x) <= EA_PREFIX_LEN ||
		    strncmp(x, EA_PREFIX, EA_PREFIX_LEN) != 0)
			continue;
		nlen = strnlen(x + EA_PREFIX_LEN, (size_t)(end - x) -
		    EA_PREFIX_LEN);
		if (nlen == 0 || nlen > EA_NAME_MAX ||
		    x + EA_PREFIX_LEN + nlen >= end)
			continue;	/* empty, too long or not terminated */
		vlen = vsize(arg, x);
		if (vlen < 0 || vlen > EA_VALUE_MAX)
			continue;	/* gone meanwhile, or never sent */
		if (total > 0)
			total = (total + 3) & ~(uint64_t)3;
		total += 8 + nlen + 1 + (size_t)vlen;
	}
	return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

static ssize_t
ea_vsize_fd(void *arg, const char *xname)
{
	return file_vfs()->getxattr(*(const int *)arg, xname, NULL, 0);
}

uint32_t
smb2_ea_size(struct file_open *f)
{
	ssize_t n;

	if (!smb2_ea_on(f->share) || (n = ea_load(f)) <= 0)
		return 0;
	return smb2_ea_size_names(ea_list, (size_t)n, ea_vsize_fd, &f->fd);
}

struct ea_put {
	struct file_open *f;
	struct wcur	*w;
	uint8_t		*prev;
	int		 count;
	int		 full;
	uint32_t	 need;		/* size of the entry that did not fit */
};

/* Appends one entry; 1 when it does not fit (p->full), else 0. */
static int
ea_put_entry(struct ea_put *p, const void *name, size_t nlen,
    const uint8_t *value, size_t vlen)
{
	size_t need, pad;
	uint8_t *start;

	need = 8 + nlen + 1 + vlen;
	pad = p->count > 0 ? (4 - (wcur_off(p->w) & 3)) & 3 : 0;
	if (need + pad > wcur_left(p->w)) {
		/* MS-FSA 2.1.5.12.12: only complete entries are returned */
		p->full = 1;
		p->need = (uint32_t)need;
		return 1;
	}
	wcur_zero(p->w, pad);
	start = p->w->p;
	if (p->prev != NULL)
		le32_put(p->prev, (uint32_t)(start - p->prev));
	wcur_le32(p->w, 0);
	wcur_u8(p->w, 0);
	wcur_u8(p->w, (uint8_t)nlen);
	wcur_le16(p->w, (uint16_t)vlen);
	wcur_bytes(p->w, name, nlen);
	wcur_u8(p->w, 0);
	if (vlen > 0)
		wcur_bytes(p->w, value, vlen);
	p->prev = start;
	p->count++;
	return 0;
}

static int
ea_put_cb(void *arg, const char *name, size_t vlen)
{
	struct ea_put *p = arg;
	char xname[EA_PREFIX_LEN + EA_NAME_MAX + 1];
	size_t nlen = strlen(name);
	ssize_t n;

	if (nlen > EA_NAME_MAX || vlen > EA_VALUE_MAX)
		return 0;
	snprintf(xname, sizeof(xname), "%s%s", EA_PREFIX, name);
	n = file_vfs()->getxattr(p->f->fd, xname, ea_value, sizeof(ea_value));
	if (n < 0)
		return 0;	/* gone meanwhile */
	return ea_put_entry(p, name, nlen, ea_value, (size_t)n);
}

/*
 * The EAs named by a FILE_GET_EA_INFORMATION list, in its order: a name
 * found without case comes back with its stored spelling and value, a
 * name not found with the spelling asked for and an empty value (as
 * Windows answers, e.g. FastFat's FatQueryEaUserEaList; Samba's SMB1 list
 * query too).  A name asked for twice comes back twice (Windows answers
 * it once; not worth a quadratic walk of the list).  A malformed list is
 * EA_LIST_INCONSISTENT, a name no EA may have INVALID_EA_NAME.
 */
static ntstatus_t
ea_query_list(struct file_open *f, const uint8_t *list, size_t len,
    struct ea_put *p)
{
	struct fscc_get_ea g;
	size_t pos = 0;
	const char *x;
	ssize_t n, vl;
	int guard;

	if ((n = ea_load(f)) < 0)
		return ntstatus_from_errno((int)n);
	for (guard = 0; guard < EA_LIST_MAX; guard++) {
		if (fscc_get_ea_next(list, len, &pos, &g) != 0)
			return STATUS_EA_LIST_INCONSISTENT;
		if (!ea_name_ok(g.name, g.name_len))
			return STATUS_INVALID_EA_NAME;
		x = ea_find(n, g.name, g.name_len);
		vl = x != NULL ? file_vfs()->getxattr(f->fd, x, NULL, 0) : -1;
		if (vl >= 0) {
			if (ea_put_cb(p, x + EA_PREFIX_LEN, (size_t)vl) != 0)
				break;
		} else if (ea_put_entry(p, g.name, g.name_len, NULL, 0) != 0)
			break;
		if (g.last)
			break;
	}
	if (p->full)
		return p->count == 0 ? STATUS_BUFFER_TOO_SMALL :
		    STATUS_BUFFER_OVERFLOW;
	return STATUS_SUCCESS;
}

/*
 * MS-FSA 2.1.5.12.12: as many complete entries as the cursor holds;
 * BUFFER_TOO_SMALL when not even the first one fits (*need its size, the
 * minimum buffer MS-SMB2 2.2.2.2 reports), BUFFER_OVERFLOW when some do.
 * No Open.NextEaEntry is kept: every query starts at the first EA, as a
 * query with SL_RESTART_SCAN does.
 */
ntstatus_t
smb2_ea_query_need(struct file_open *f, const uint8_t *list, size_t list_len,
    struct wcur *w, uint32_t *need)
{
	struct ea_put p = { f, w, NULL, 0, 0, 0 };
	ntstatus_t status;
	int rc;

	*need = 0;
	/* ea support = no: as Samba, a file has none */
	if (!smb2_ea_on(f->share))
		return STATUS_NO_EAS_ON_FILE;
	if (list != NULL && list_len > 0) {
		status = ea_query_list(f, list, list_len, &p);
		if (status == STATUS_BUFFER_TOO_SMALL)
			*need = p.need;
		return status;
	}
	rc = ea_each(f, ea_put_cb, &p);
	if (rc < 0)
		return ntstatus_from_errno(rc);
	if (p.full) {
		*need = p.need;
		return p.count == 0 ? STATUS_BUFFER_TOO_SMALL :
		    STATUS_BUFFER_OVERFLOW;
	}
	return p.count == 0 ? STATUS_NO_EAS_ON_FILE : STATUS_SUCCESS;
}

ntstatus_t
smb2_ea_query(struct file_open *f, struct wcur *w)
{
	uint32_t need;

	return smb2_ea_query_need(f, NULL, 0, w, &need);
}

/*
 * Removes the xattrs of the EA named name[0, len) without case, but for
 * keep (its exact xattr name; NULL removes them all).
 */
static int
ea_drop(struct file_open *f, ssize_t n, const uint8_t *name, size_t len,
    const char *keep)
{
	const char *x;
	int rc;

	for (x = ea_next(NULL, n); x != NULL; x = ea_next(x, n)) {
		if (!ea_name_eq(x + EA_PREFIX_LEN, name, len) ||
		    (keep != NULL && strcmp(x, keep) == 0))
			continue;
		rc = file_vfs()->removexattr(f->fd, x);
		if (rc != 0 && rc != -ENODATA)
			return rc;
	}
	return 0;
}

/*
 * One EA of a set.  The new value is written under the new spelling
 * first and the other spellings removed after, so a failed write leaves
 * the EA as it was; when the file system is out of room for both, the
 * old spellings go first and the write is tried again.
 */
static int
ea_set_one(struct file_open *f, const struct fscc_ea *ea)
{
	const struct vfs_ops *vfs = file_vfs();
	char xname[EA_PREFIX_LEN + EA_NAME_MAX + 1];
	ssize_t n;
	int rc;

	if ((rc = ea_xname(ea->name, ea->name_len, xname,
	    sizeof(xname))) != 0)
		return rc;
	if ((n = ea_load(f)) < 0)
		return (int)n;
	if (ea->value_len == 0)
		return ea_drop(f, n, ea->name, ea->name_len, NULL);
	rc = vfs->setxattr(f->fd, xname, ea->value, ea->value_len, 0);
	if (rc == -ENOSPC && ea_find(n, ea->name, ea->name_len) != NULL) {
		if ((rc = ea_drop(f, n, ea->name, ea->name_len, xname)) != 0)
			return rc;
		rc = vfs->setxattr(f->fd, xname, ea->value, ea->value_len, 0);
	}
	if (rc != 0)
		return rc;
	return ea_drop(f, n, ea->name, ea->name_len, xname);
}

ntstatus_t
smb2_ea_set(struct file_open *f, const uint8_t *buf, size_t len)
{
	struct fscc_ea ea;
	size_t pos;
	int guard, pass, rc;

	if (!smb2_ea_on(f->share))
		return STATUS_EAS_NOT_SUPPORTED;
	/* two passes: everything is checked before anything is written */
	for (pass = 0; pass < 2; pass++) {
		pos = 0;
		for (guard = 0; guard < EA_LIST_MAX; guard++) {
			if (fscc_ea_next(buf, len, &pos, &ea) != 0)
				return STATUS_INVALID_PARAMETER;
			if (!ea_name_ok(ea.name, ea.name_len))
				return STATUS_INVALID_EA_NAME;
			if (pass == 1) {
				rc = ea_set_one(f, &ea);
				if (rc == -E2BIG || rc == -ENOSPC ||
				    rc == -ERANGE)
					return STATUS_EA_TOO_LARGE;
				/* a file system without user xattrs */
				if (rc == -EOPNOTSUPP)
					return STATUS_EAS_NOT_SUPPORTED;
				if (rc == -ENAMETOOLONG)
					return STATUS_INVALID_EA_NAME;
				if (rc != 0)
					return ntstatus_from_errno(rc);
			}
			if (ea.last)
				break;
		}
	}
	return STATUS_SUCCESS;
}
