/* NDR 2.0 little-endian encoder and decoder (see proto/ndr.h). */
#include "proto/ndr.h"

#include <string.h>

#include "proto/secdesc.h"

void
ndr_align(struct cur *c, size_t a)
{
	size_t off = cur_off(c);

	cur_skip(c, ((off + a - 1) & ~(a - 1)) - off);
}

uint16_t
ndr_u16(struct cur *c)
{
	ndr_align(c, 2);
	return cur_le16(c);
}

uint32_t
ndr_u32(struct cur *c)
{
	ndr_align(c, 4);
	return cur_le32(c);
}

uint32_t
ndr_ptr(struct cur *c)
{
	return ndr_u32(c);
}

/*
 * Appends code point cp as UTF-8 to out[*n], keeping room for the NUL; on
 * overflow latches err.
 */
static void
ndr_utf8_put(struct cur *c, char *out, size_t outsize, size_t *n, uint32_t cp)
{
	uint8_t b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xC0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3F));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xE0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
		b[2] = (uint8_t)(0x80 | (cp & 0x3F));
		k = 3;
	} else {
		b[0] = (uint8_t)(0xF0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
		b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
		b[3] = (uint8_t)(0x80 | (cp & 0x3F));
		k = 4;
	}
	if (outsize == 0 || k > outsize - 1 - *n) {
		c->err = 1;
		return;
	}
	memcpy(out + *n, b, k);
	*n += k;
}

/*
 * units UTF-16LE code units at v into out as NUL-terminated UTF-8: an
 * embedded NUL is refused (it would truncate a name silently), a lone
 * surrogate becomes U+FFFD.  Returns the UTF-8 length; err on failure.
 */
static size_t
ndr_utf16_utf8(struct cur *c, const uint8_t *v, uint32_t units, char *out,
    size_t outsize)
{
	uint32_t i, u, lo;
	size_t n = 0;

	for (i = 0; i < units && !c->err; i++) {
		u = le16_get(v + (size_t)i * 2);
		if (u == 0) {
			c->err = 1;
			break;
		}
		if (u >= 0xD800 && u < 0xDC00 && i + 1 < units) {
			lo = le16_get(v + (size_t)(i + 1) * 2);
			if (lo >= 0xDC00 && lo < 0xE000) {
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				i++;
			} else
				u = 0xFFFD;
		} else if (u >= 0xD800 && u < 0xE000)
			u = 0xFFFD;	/* lone surrogate */
		ndr_utf8_put(c, out, outsize, &n, u);
	}
	if (c->err) {
		if (outsize > 0)
			out[0] = '\0';
		return 0;
	}
	if (outsize == 0) {
		c->err = 1;
		return 0;
	}
	out[n] = '\0';
	return n;
}

/*
 * The counts of a conformant varying UTF-16 array (max_count, offset,
 * actual_count) and a view of its actual_count units: the offset must be
 * 0 and actual_count within max_count and NDR_MAX_STRING.  NULL and err
 * otherwise.
 */
static const uint8_t *
ndr_varying16(struct cur *c, uint32_t *max, uint32_t *actual)
{
	uint32_t off;

	*max = ndr_u32(c);
	off = ndr_u32(c);
	*actual = ndr_u32(c);
	if (c->err)
		return NULL;
	if (off != 0 || *actual > *max || *actual > NDR_MAX_STRING) {
		c->err = 1;
		return NULL;
	}
	return cur_view(c, (size_t)*actual * 2);
}

size_t
ndr_string(struct cur *c, char *out, size_t outsize)
{
	uint32_t max, actual;
	const uint8_t *v;

	if (outsize > 0)
		out[0] = '\0';
	if ((v = ndr_varying16(c, &max, &actual)) == NULL)
		return 0;
	/* [string] arrays end with their NUL */
	if (actual == 0 || le16_get(v + (size_t)(actual - 1) * 2) != 0) {
		c->err = 1;
		return 0;
	}
	return ndr_utf16_utf8(c, v, actual - 1, out, outsize);
}

size_t
ndr_ustring_body(struct cur *c, uint16_t len, uint16_t maxlen, char *out,
    size_t outsize)
{
	uint32_t max, actual;
	const uint8_t *v;

	if (outsize > 0)
		out[0] = '\0';
	if ((v = ndr_varying16(c, &max, &actual)) == NULL)
		return 0;
	if (len % 2 != 0 || len > maxlen || actual != len / 2u ||
	    max != maxlen / 2u) {
		c->err = 1;
		return 0;
	}
	/* one trailing NUL some clients count in Length is not a name's */
	if (actual > 0 && le16_get(v + (size_t)(actual - 1) * 2) == 0)
		actual--;
	return ndr_utf16_utf8(c, v, actual, out, outsize);
}

int
ndr_unique_string(struct cur *c, char *out, size_t outsize)
{
	if (outsize > 0)
		out[0] = '\0';
	if (ndr_ptr(c) == 0)
		return 0;
	ndr_string(c, out, outsize);
	return c->err ? 0 : 1;
}

void
ndr_w_init(struct ndr_w *n, void *buf, size_t len)
{
	wcur_init(&n->w, buf, len);
	n->next_refid = NDR_REFID_FIRST;
}

void
ndr_put_align(struct ndr_w *n, size_t a)
{
	wcur_align(&n->w, a);
}

void
ndr_put_u16(struct ndr_w *n, uint16_t x)
{
	wcur_align(&n->w, 2);
	wcur_le16(&n->w, x);
}

void
ndr_put_u32(struct ndr_w *n, uint32_t x)
{
	wcur_align(&n->w, 4);
	wcur_le32(&n->w, x);
}

void
ndr_put_ptr(struct ndr_w *n, int present)
{
	if (!present) {
		ndr_put_u32(n, 0);
		return;
	}
	ndr_put_u32(n, n->next_refid);
	n->next_refid += 4;
}

/*
 * Decodes one code point from a NUL-terminated UTF-8 string and advances
 * *s; malformed, overlong or surrogate sequences give U+FFFD and consume
 * one byte.
 */
static uint32_t
ndr_utf8_next(const char **s)
{
	const uint8_t *p = (const uint8_t *)*s;
	uint32_t cp, min;
	int k, i;

	if (p[0] < 0x80) {
		*s += 1;
		return p[0];
	}
	if ((p[0] & 0xE0) == 0xC0) {
		k = 1; cp = p[0] & 0x1F; min = 0x80;
	} else if ((p[0] & 0xF0) == 0xE0) {
		k = 2; cp = p[0] & 0x0F; min = 0x800;
	} else if ((p[0] & 0xF8) == 0xF0) {
		k = 3; cp = p[0] & 0x07; min = 0x10000;
	} else
		goto bad;
	for (i = 1; i <= k; i++) {
		if ((p[i] & 0xC0) != 0x80)	/* also stops at the NUL */
			goto bad;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
		goto bad;
	*s += k + 1;
	return cp;
bad:
	*s += 1;
	return 0xFFFD;
}

size_t
ndr_utf16_len(const char *utf8)
{
	size_t n = 0;

	while (*utf8 != '\0')
		n += ndr_utf8_next(&utf8) >= 0x10000 ? 2 : 1;
	return n;
}

/* The code units of utf8 as UTF-16LE, no NUL. */
static void
ndr_put_utf16(struct ndr_w *n, const char *utf8)
{
	uint32_t cp;

	while (*utf8 != '\0' && !n->w.err) {
		cp = ndr_utf8_next(&utf8);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			wcur_le16(&n->w, (uint16_t)(0xD800 + (cp >> 10)));
			wcur_le16(&n->w, (uint16_t)(0xDC00 + (cp & 0x3FF)));
		} else
			wcur_le16(&n->w, (uint16_t)cp);
	}
}

void
ndr_put_string(struct ndr_w *n, const char *utf8)
{
	uint32_t units;

	if (utf8 == NULL)
		utf8 = "";
	units = (uint32_t)ndr_utf16_len(utf8) + 1;
	ndr_put_u32(n, units);		/* max_count */
	ndr_put_u32(n, 0);		/* offset */
	ndr_put_u32(n, units);		/* actual_count */
	ndr_put_utf16(n, utf8);
	wcur_le16(&n->w, 0);
}

void
ndr_put_ustring(struct ndr_w *n, const char *utf8)
{
	size_t units = utf8 != NULL ? ndr_utf16_len(utf8) : 0;

	/* Length and MaximumLength are bytes and 16 bits wide */
	if (units > NDR_MAX_STRING)
		n->w.err = 1;
	ndr_put_u16(n, (uint16_t)(units * 2));
	ndr_put_u16(n, (uint16_t)(units * 2));
	ndr_put_ptr(n, utf8 != NULL);
}

void
ndr_put_ustring_body(struct ndr_w *n, const char *utf8)
{
	uint32_t units;

	if (utf8 == NULL)
		return;
	units = (uint32_t)ndr_utf16_len(utf8);
	ndr_put_u32(n, units);		/* max_count */
	ndr_put_u32(n, 0);		/* offset */
	ndr_put_u32(n, units);		/* actual_count */
	ndr_put_utf16(n, utf8);
}

void
ndr_put_sid(struct ndr_w *out, const struct secdesc_sid *s)
{
	unsigned i;

	ndr_put_u32(out, s->nsub);
	wcur_u8(&out->w, s->revision);
	wcur_u8(&out->w, s->nsub);
	wcur_bytes(&out->w, s->auth, sizeof(s->auth));
	for (i = 0; i < s->nsub; i++)
		ndr_put_u32(out, s->sub[i]);
}

void
ndr_sid_decode(struct cur *in, struct secdesc_sid *s)
{
	uint32_t max;
	unsigned i;

	memset(s, 0, sizeof(*s));
	max = ndr_u32(in);
	s->revision = cur_u8(in);
	s->nsub = cur_u8(in);
	cur_bytes(in, s->auth, sizeof(s->auth));
	if (in->err || max != s->nsub || s->nsub > SECDESC_SUBAUTH_MAX ||
	    s->revision != 1) {
		in->err = 1;
		return;
	}
	for (i = 0; i < s->nsub; i++)
		s->sub[i] = ndr_u32(in);
}
