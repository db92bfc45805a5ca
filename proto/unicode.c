/*
 * UTF-16LE <-> UTF-8 conversion and case folding for name comparison.
 */
#include <errno.h>

#include "proto/unicode.h"

static int
utf8_put(char *dst, size_t cap, size_t *o, uint32_t c)
{
	size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

	if (*o + n >= cap)	/* keep room for the NUL */
		return -ENAMETOOLONG;
	switch (n) {
	case 1:
		dst[(*o)++] = (char)c;
		break;
	case 2:
		dst[(*o)++] = (char)(0xC0 | c >> 6);
		dst[(*o)++] = (char)(0x80 | (c & 0x3F));
		break;
	case 3:
		dst[(*o)++] = (char)(0xE0 | c >> 12);
		dst[(*o)++] = (char)(0x80 | (c >> 6 & 0x3F));
		dst[(*o)++] = (char)(0x80 | (c & 0x3F));
		break;
	default:
		dst[(*o)++] = (char)(0xF0 | c >> 18);
		dst[(*o)++] = (char)(0x80 | (c >> 12 & 0x3F));
		dst[(*o)++] = (char)(0x80 | (c >> 6 & 0x3F));
		dst[(*o)++] = (char)(0x80 | (c & 0x3F));
		break;
	}
	return 0;
}

int
unicode_utf16_to_utf8(const uint8_t *src, size_t len, char *dst, size_t cap)
{
	size_t i, o = 0;
	uint32_t c, lo;
	int rc;

	if (cap == 0)
		return -ENAMETOOLONG;
	dst[0] = '\0';
	if (len % 2 != 0)
		return -EILSEQ;
	for (i = 0; i < len; i += 2) {
		c = (uint32_t)src[i] | (uint32_t)src[i + 1] << 8;
		if (c == 0)
			return -EILSEQ;
		if (c >= 0xDC00 && c <= 0xDFFF)
			return -EILSEQ;		/* a low surrogate first */
		if (c >= 0xD800 && c <= 0xDBFF) {
			if (i + 3 >= len)
				return -EILSEQ;	/* high surrogate at the end */
			lo = (uint32_t)src[i + 2] | (uint32_t)src[i + 3] << 8;
			if (lo < 0xDC00 || lo > 0xDFFF)
				return -EILSEQ;	/* high not followed by low */
			c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
			i += 2;
		}
		if ((rc = utf8_put(dst, cap, &o, c)) != 0) {
			dst[0] = '\0';
			return rc;
		}
	}
	dst[o] = '\0';
	return (int)o;
}

/* Strict decode: -1 on any malformation. */
static int32_t
utf8_decode(const unsigned char *s, size_t len, size_t *used)
{
	uint32_t c;
	size_t n, k;

	if (len == 0)
		return -1;
	if (s[0] < 0x80) {
		*used = 1;
		return s[0];
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		c = s[0] & 0x07;
	} else
		return -1;
	if (len < n)
		return -1;
	for (k = 1; k < n; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return -1;
		c = c << 6 | (s[k] & 0x3F);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10FFFF ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return -1;
	*used = n;
	return (int32_t)c;
}

int
unicode_utf8_to_utf16(const char *src, size_t len, uint8_t *dst, size_t cap)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, o = 0, used = 0;
	int32_t c;
	uint32_t u, hi, lo;

	while (i < len) {
		if ((c = utf8_decode(s + i, len - i, &used)) < 0)
			return -EILSEQ;
		i += used;
		u = (uint32_t)c;
		if (u >= 0x10000) {
			if (o + 4 > cap)
				return -ENAMETOOLONG;
			u -= 0x10000;
			hi = 0xD800 + (u >> 10);
			lo = 0xDC00 + (u & 0x3FF);
			dst[o++] = (uint8_t)hi;
			dst[o++] = (uint8_t)(hi >> 8);
			dst[o++] = (uint8_t)lo;
			dst[o++] = (uint8_t)(lo >> 8);
		} else {
			if (o + 2 > cap)
				return -ENAMETOOLONG;
			dst[o++] = (uint8_t)u;
			dst[o++] = (uint8_t)(u >> 8);
		}
	}
	return (int)o;
}

uint32_t
unicode_utf8_next(const char **p, const char *end)
{
	size_t used = 0;
	int32_t c = utf8_decode((const unsigned char *)*p, (size_t)(end - *p),
	    &used);

	if (c < 0) {
		(*p)++;
		return 0xFFFD;
	}
	*p += used;
	return (uint32_t)c;
}

uint32_t
unicode_upper(uint32_t c)
{
	if (c >= 'a' && c <= 'z')
		return c - 32;
	if (c < 0xB5)
		return c;
	if (c == 0xB5)
		return 0x39C;		/* micro sign -> Greek capital mu */
	/* Latin-1: U+00E0..U+00FE except U+00F7 (division sign) */
	if (c >= 0xE0 && c <= 0xFE && c != 0xF7)
		return c - 32;
	if (c == 0xFF)
		return 0x178;
	/* Latin Extended-A: pairs, upper case even */
	if (c >= 0x100 && c <= 0x17F) {
		if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
			return (c & 1) ? c : c - 1;
		if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F)
			return c;
		return (c & 1) ? c - 1 : c;
	}
	/* Greek */
	if (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2)
		return c - 32;
	if (c == 0x3C2)
		return 0x3A3;		/* final sigma */
	/* Cyrillic */
	if (c >= 0x430 && c <= 0x44F)
		return c - 32;
	if (c >= 0x450 && c <= 0x45F)
		return c - 80;
	return c;
}

int
unicode_casecmp(const char *a, size_t alen, const char *b, size_t blen)
{
	const char *ae = a + alen, *be = b + blen;
	uint32_t ca, cb;

	while (a < ae && b < be) {
		/* fast path for ASCII */
		if ((unsigned char)*a < 0x80 && (unsigned char)*b < 0x80) {
			ca = (unsigned char)*a++;
			cb = (unsigned char)*b++;
			if (ca >= 'a' && ca <= 'z')
				ca -= 32;
			if (cb >= 'a' && cb <= 'z')
				cb -= 32;
		} else {
			ca = unicode_upper(unicode_utf8_next(&a, ae));
			cb = unicode_upper(unicode_utf8_next(&b, be));
		}
		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	if (a < ae)
		return 1;
	if (b < be)
		return -1;
	return 0;
}

uint32_t
unicode_casehash(const char *s, size_t len)
{
	const char *e = s + len;
	uint32_t h = 2166136261u, c;

	while (s < e) {
		c = unicode_upper(unicode_utf8_next(&s, e));
		h = (h ^ c) * 16777619u;
	}
	return h;
}
