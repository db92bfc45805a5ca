/*
 * Extended attributes as Windows sees them (MS-FSCC 2.4.15
 * FILE_FULL_EA_INFORMATION), kept as user xattrs named
 * "user.usmbd.ea.<NAME>".  Windows compares EA names without case and
 * reports them in upper case, so names are stored upper-cased.  A set with
 * an empty value deletes the EA.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/fscc.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/smb2_file.h"

#define EA_PREFIX	"user.usmbd.ea."
#define EA_NAME_MAX	255
#define EA_VALUE_MAX	65535

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

static int
ea_xname(const uint8_t *n, size_t len, char *out, size_t cap)
{
	size_t pl = strlen(EA_PREFIX), i;

	if (pl + len + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, EA_PREFIX, pl);
	for (i = 0; i < len; i++)
		out[pl + i] = (char)toupper(n[i]);
	out[pl + len] = '\0';
	return 0;
}

/*
 * Calls fn for each EA of the file: name (upper case, no prefix) and value
 * size.  Returns 0 or -errno.
 */
static int
ea_each(struct file_open *f, int (*fn)(void *, const char *, size_t), void *arg)
{
	const struct vfs_ops *vfs = file_vfs();
	size_t pl = strlen(EA_PREFIX);
	ssize_t n, vlen;
	const char *x;
	int rc;

	n = vfs->listxattr(f->fd, ea_list, sizeof(ea_list));
	if (n == -ENOTSUP || n == -EOPNOTSUPP)
		return 0;
	if (n < 0)
		return (int)n;
	for (x = ea_list; x < ea_list + n; x += strlen(x) + 1) {
		if (strncmp(x, EA_PREFIX, pl) != 0 || x[pl] == '\0')
			continue;
		vlen = vfs->getxattr(f->fd, x, NULL, 0);
		if (vlen < 0)
			continue;
		if ((rc = fn(arg, x + pl, (size_t)vlen)) != 0)
			return rc;
	}
	return 0;
}

static int
ea_size_cb(void *arg, const char *name, size_t vlen)
{
	uint32_t *total = arg;

	/* the size of the entry in FILE_FULL_EA_INFORMATION, 4-aligned */
	*total += (uint32_t)((8 + strlen(name) + 1 + vlen + 3) & ~(size_t)3);
	return 0;
}

uint32_t
smb2_ea_size(struct file_open *f)
{
	uint32_t total = 0;

	if (ea_each(f, ea_size_cb, &total) != 0)
		return 0;
	return total;
}

struct ea_put {
	struct file_open *f;
	struct wcur	*w;
	uint8_t		*prev;
	int		 count;
	int		 full;
	uint32_t	 need;		/* size of the entry that did not fit */
};

static int
ea_put_cb(void *arg, const char *name, size_t vlen)
{
	struct ea_put *p = arg;
	const struct vfs_ops *vfs = file_vfs();
	char xname[sizeof(EA_PREFIX) + EA_NAME_MAX + 1];
	size_t nlen = strlen(name), need;
	uint8_t *start;
	ssize_t n;

	if (nlen > EA_NAME_MAX || vlen > EA_VALUE_MAX)
		return 0;
	snprintf(xname, sizeof(xname), "%s%s", EA_PREFIX, name);
	n = vfs->getxattr(p->f->fd, xname, ea_value, sizeof(ea_value));
	if (n < 0)
		return 0;	/* gone meanwhile */
	need = 8 + nlen + 1 + (size_t)n;
	if (p->count > 0)
		need += (4 - (wcur_off(p->w) & 3)) & 3;
	if (need > wcur_left(p->w)) {
		/* MS-FSA 2.1.5.12.12: only complete entries are returned */
		p->full = 1;
		p->need = (uint32_t)need;
		return 1;
	}
	if (p->count > 0)
		wcur_zero(p->w, (4 - (wcur_off(p->w) & 3)) & 3);
	start = p->w->p;
	if (p->prev != NULL)
		le32_put(p->prev, (uint32_t)(start - p->prev));
	wcur_le32(p->w, 0);
	wcur_u8(p->w, 0);
	wcur_u8(p->w, (uint8_t)nlen);
	wcur_le16(p->w, (uint16_t)n);
	wcur_bytes(p->w, name, nlen + 1);
	wcur_bytes(p->w, ea_value, (size_t)n);
	p->prev = start;
	p->count++;
	return 0;
}

/*
 * MS-FSA 2.1.5.12.12: as many complete entries as the cursor holds;
 * BUFFER_TOO_SMALL when not even the first one fits (*need its size, the
 * minimum buffer MS-SMB2 2.2.2.2 reports), BUFFER_OVERFLOW when some do.
 * No Open.NextEaEntry is kept: every query starts at the first EA, as a
 * query with SL_RESTART_SCAN does.
 */
ntstatus_t
smb2_ea_query_need(struct file_open *f, struct wcur *w, uint32_t *need)
{
	struct ea_put p = { f, w, NULL, 0, 0, 0 };
	int rc;

	*need = 0;
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

	return smb2_ea_query_need(f, w, &need);
}

ntstatus_t
smb2_ea_set(struct file_open *f, const uint8_t *buf, size_t len)
{
	const struct vfs_ops *vfs = file_vfs();
	char xname[sizeof(EA_PREFIX) + EA_NAME_MAX + 1];
	struct fscc_ea ea;
	size_t pos;
	int guard, pass, rc;

	/* two passes: everything is checked before anything is written */
	for (pass = 0; pass < 2; pass++) {
		pos = 0;
		for (guard = 0; guard < 4096; guard++) {
			if (fscc_ea_next(buf, len, &pos, &ea) != 0)
				return STATUS_INVALID_PARAMETER;
			if (!ea_name_ok(ea.name, ea.name_len))
				return STATUS_INVALID_EA_NAME;
			if (pass == 1) {
				if ((rc = ea_xname(ea.name, ea.name_len, xname,
				    sizeof(xname))) != 0)
					return STATUS_INVALID_EA_NAME;
				if (ea.value_len == 0) {
					rc = vfs->removexattr(f->fd, xname);
					if (rc == -ENODATA)
						rc = 0;
				} else
					rc = vfs->setxattr(f->fd, xname,
					    ea.value, ea.value_len, 0);
				if (rc == -E2BIG || rc == -ENOSPC ||
				    rc == -ERANGE)
					return STATUS_EA_TOO_LARGE;
				if (rc != 0)
					return ntstatus_from_errno(rc);
			}
			if (ea.last)
				break;
		}
	}
	return STATUS_SUCCESS;
}
