/*
 * DFS referral codecs (MS-DFSC 2.2.2 - 2.2.5): see proto/dfs.h.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "proto/dfs.h"
#include "proto/unicode.h"

#define DFS_V2_SIZE	22	/* MS-DFSC 2.2.5.2 */
#define DFS_V3_SIZE	34	/* 2.2.5.3 with the 16-byte ServiceSiteGuid */

/*
 * name (UTF-16LE) up to its first NUL unit; a name without one is taken
 * whole.  An odd length is no UTF-16 string.
 */
static int
dfs_name_view(const uint8_t *p, size_t len, const uint8_t **out,
    size_t *out_len)
{
	size_t i;

	if (len & 1)
		return -EINVAL;
	for (i = 0; i < len; i += 2)
		if (p[i] == 0 && p[i + 1] == 0)
			break;
	*out = p;
	*out_len = i;
	return 0;
}

int
dfs_req_decode(const uint8_t *in, size_t len, struct dfs_req *out)
{
	struct cur c;
	size_t n;

	memset(out, 0, sizeof(*out));
	cur_init(&c, in, len);
	out->max_level = cur_le16(&c);
	if (c.err)
		return -EINVAL;
	n = cur_left(&c);
	return dfs_name_view(cur_view(&c, n), n, &out->name16,
	    &out->name16_len);
}

int
dfs_req_ex_decode(const uint8_t *in, size_t len, struct dfs_req *out)
{
	struct cur c, d;
	const uint8_t *p;
	uint32_t dlen;
	uint16_t n;

	memset(out, 0, sizeof(*out));
	cur_init(&c, in, len);
	out->max_level = cur_le16(&c);
	out->flags = cur_le16(&c);
	dlen = cur_le32(&c);
	p = cur_view(&c, dlen);
	if (c.err || p == NULL)
		return -EINVAL;
	/* MS-DFSC 2.2.3.1: RequestData */
	cur_init(&d, p, dlen);
	n = cur_le16(&d);
	p = cur_view(&d, n);
	if (d.err || dfs_name_view(p, n, &out->name16, &out->name16_len) != 0)
		return -EINVAL;
	if (out->flags & DFS_REQ_FLAG_SITENAME) {
		n = cur_le16(&d);
		p = cur_view(&d, n);
		if (d.err || dfs_name_view(p, n, &out->site16,
		    &out->site16_len) != 0)
			return -EINVAL;
	}
	return 0;
}

int
dfs_link_is(const char *text, size_t len)
{
	return len >= 6 && strncasecmp(text, "msdfs:", 6) == 0;
}

int
dfs_link_parse(const char *text, size_t len, struct dfs_target *t,
    size_t max)
{
	const char *p, *end = text + len, *s;
	size_t n = 0;

	if (!dfs_link_is(text, len))
		return -EINVAL;
	for (p = text + 6; p < end && n < max; p = s + 1) {
		const char *q;

		for (s = p; s < end && *s != ','; s++)
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				return -EINVAL;
		for (q = p; q < s && (*q == '\\' || *q == '/'); q++)
			;
		if (q < s) {
			t[n].p = q;
			t[n].len = (size_t)(s - q);
			n++;
		}
		if (s >= end)
			break;
	}
	return n > 0 ? (int)n : -EINVAL;
}

/* UTF-8 as UTF-16LE with its NUL, '/' written as '\'; its offset in w. */
static int
dfs_put_str(struct wcur *w, const char *lead, const char *s, size_t len,
    size_t *off)
{
	uint8_t *v;
	size_t i;
	int n = 0, m = 0;

	*off = wcur_off(w);
	if (lead != NULL) {
		if ((m = unicode_utf8_to_utf16(lead, strlen(lead), w->p,
		    wcur_left(w))) < 0)
			goto fail;
		w->p += m;
	}
	if ((n = unicode_utf8_to_utf16(s, len, w->p, wcur_left(w))) < 0)
		goto fail;
	for (i = 0; i < (size_t)n; i += 2)
		if (w->p[i] == '/' && w->p[i + 1] == 0)
			w->p[i] = '\\';
	w->p += n;
	if ((v = wcur_reserve(w, 2)) == NULL)
		return -ENOSPC;
	v[0] = v[1] = 0;
	return 0;
fail:
	w->err = 1;
	return n == -EILSEQ || m == -EILSEQ ? -EINVAL : -ENOSPC;
}

int
dfs_rsp_encode(struct wcur *w, const struct dfs_rsp *r)
{
	uint16_t ver = r->max_level >= 4 ? 4 : r->max_level == 3 ? 3 : 2;
	size_t esize = ver == 2 ? DFS_V2_SIZE : DFS_V3_SIZE;
	size_t start = wcur_off(w), path_off, addr_off, i;
	uint8_t *hdr, *ent;
	int rc;

	if (r->nt == 0 || r->nt > DFS_MAX_TARGETS)
		return -EINVAL;
	hdr = wcur_reserve(w, 8);
	ent = wcur_reserve(w, esize * r->nt);
	if (hdr == NULL || ent == NULL)
		return -ENOSPC;
	le16_put(hdr, r->path_consumed);
	le16_put(hdr + 2, (uint16_t)r->nt);
	le32_put(hdr + 4, r->header_flags);
	/* DFSPath and DFSAlternatePath: one string for every entry */
	if ((rc = dfs_put_str(w, NULL, r->path, r->path_len, &path_off)) != 0)
		return rc;
	for (i = 0; i < r->nt; i++) {
		uint8_t *e = ent + i * esize;
		size_t eoff = start + 8 + i * esize;
		uint16_t flags = 0;

		if ((rc = dfs_put_str(w, "\\", r->t[i].p, r->t[i].len,
		    &addr_off)) != 0)
			return rc;
		/* offsets are from the entry's start and 16 bits wide */
		if (addr_off - eoff > UINT16_MAX)
			return -ENOSPC;
		memset(e, 0, esize);
		le16_put(e, ver);
		le16_put(e + 2, (uint16_t)esize);
		le16_put(e + 4, r->server_type);
		if (ver == 4 && i == 0)
			flags = DFS_ENTRY_TARGET_SET_BOUNDARY;
		le16_put(e + 6, flags);
		if (ver == 2) {
			le32_put(e + 8, 0);		/* Proximity */
			le32_put(e + 12, r->ttl);
			e += 16;
		} else {
			le32_put(e + 8, r->ttl);
			e += 12;
		}
		le16_put(e, (uint16_t)(path_off - eoff));
		le16_put(e + 2, (uint16_t)(path_off - eoff));
		le16_put(e + 4, (uint16_t)(addr_off - eoff));
		/* V3/V4: ServiceSiteGuid stays zero */
	}
	return w->err ? -ENOSPC : 0;
}
