/*
 * 8.3 short names: the generator and the scan that maps a short name back
 * to its long name (vfs/mangle.h has the scheme).  The generator is pure
 * and allocates nothing; the scan reads the directory through one static
 * buffer, a buffer's worth at a time.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "proto/unicode.h"
#include "vfs/mangle.h"
#include "vfs/vfs.h"

#define MANGLE_SCANBUF	(32u << 10)
#define FNV_BASIS	0x811c9dc5u
#define FNV_PRIME	0x01000193u

static const char mangle_digits[36] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* The DOS device names: never a valid 8.3 name, with or without extension. */
static const char *const mangle_reserved[] = {
	"AUX", "CON", "NUL", "PRN",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
	NULL
};

static int
mangle_upper(int c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

/* May c appear in a valid 8.3 name as typed (Samba's is_8_3 rules)? */
static int
mangle_83_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && strchr("*?<>|:\\/\"+,[];=.", c) == NULL;
}

/* What our short names are made of: letters, digits and "_-$". */
static int
mangle_out_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '$';
}

static int
mangle_is_reserved(const char *name, size_t len)
{
	size_t i, n;

	for (i = 0; mangle_reserved[i] != NULL; i++) {
		n = strlen(mangle_reserved[i]);
		if (len >= n && (len == n || name[n] == '.') &&
		    unicode_casecmp(name, n, mangle_reserved[i], n) == 0)
			return 1;
	}
	return 0;
}

int
mangle_is_83(const char *name, size_t len)
{
	const char *dot = NULL;
	size_t i;

	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 1;
	if (len == 0 || len > 12)
		return 0;
	for (i = 0; i < len; i++) {
		if (name[i] == '.') {
			if (dot != NULL)
				return 0;	/* one dot at most */
			dot = name + i;
		} else if (!mangle_83_char((unsigned char)name[i]))
			return 0;
	}
	if (dot == NULL ? len > 8 : (dot == name ||
	    (size_t)(dot - name) > 8 || len - (size_t)(dot - name) - 1 < 1 ||
	    len - (size_t)(dot - name) - 1 > 3))
		return 0;
	return !mangle_is_reserved(name, len);
}

/* FNV-1a over the upper-cased code points, each as 3 bytes (< 0x110000). */
static uint32_t
mangle_hash(const char *name, size_t len)
{
	const char *p = name, *end = name + len;
	uint32_t h = FNV_BASIS, c;

	while (p < end) {
		c = unicode_upper(unicode_utf8_next(&p, end));
		h = (h ^ (c & 0xFF)) * FNV_PRIME;
		h = (h ^ ((c >> 8) & 0xFF)) * FNV_PRIME;
		h = (h ^ (c >> 16)) * FNV_PRIME;
	}
	return h;
}

/*
 * Up to max characters of [p, end) for a short name: spaces and dots
 * dropped, legal ASCII upper-cased, any other code point '_'.
 */
static size_t
mangle_take(const char *p, const char *end, char *out, size_t max)
{
	size_t n = 0;
	uint32_t c;

	while (p < end && n < max) {
		c = unicode_utf8_next(&p, end);
		if (c == ' ' || c == '.')
			continue;
		out[n++] = c < 0x80 && mangle_out_char((unsigned char)c) ?
		    (char)mangle_upper((int)c) : '_';
	}
	return n;
}

size_t
mangle_make(const char *name, size_t len, char *out)
{
	const char *end = name + len, *dot = NULL, *lead = name;
	uint32_t h;
	size_t n, i;

	if (mangle_is_83(name, len)) {
		memcpy(out, name, len);
		out[len] = '\0';
		return len;
	}
	while (lead < end && *lead == '.')
		lead++;		/* ".profile": no extension */
	for (i = (size_t)(lead - name); i < len; i++)
		if (name[i] == '.')
			dot = name + i;
	n = mangle_take(name, dot != NULL ? dot : end, out, 2);
	while (n < 2)
		out[n++] = '_';
	h = mangle_hash(name, len);
	for (i = 7; i >= 2; i--) {
		if (i == 6) {
			out[6] = '~';
			continue;
		}
		out[i] = mangle_digits[h % 36];
		h /= 36;
	}
	n = 8;
	if (dot != NULL) {
		out[8] = '.';
		n = 9 + mangle_take(dot + 1, end, out + 9, 3);
		if (n == 9)
			n = 8;	/* nothing usable after the dot */
	}
	out[n] = '\0';
	return n;
}

int
mangle_shape(const char *name, size_t len)
{
	size_t i;

	if (len < 8 || len > 12 || len == 9 || name[6] != '~')
		return 0;
	for (i = 0; i < 8; i++) {
		if (i == 6)
			continue;
		if (!mangle_out_char((unsigned char)name[i]))
			return 0;
		/* the hash digits: letters and digits only */
		if (i >= 2 && (name[i] == '_' || name[i] == '-' ||
		    name[i] == '$'))
			return 0;
	}
	if (len == 8)
		return 1;
	if (name[8] != '.')
		return 0;
	for (i = 9; i < len; i++)
		if (!mangle_out_char((unsigned char)name[i]))
			return 0;
	return 1;
}

static int
mangle_ascii_casecmp(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (mangle_upper((unsigned char)a[i]) !=
		    mangle_upper((unsigned char)b[i]))
			return 1;
	return 0;
}

int
mangle_is_short_of(const char *name, size_t len, const char *want,
    size_t wlen, int exact)
{
	char sn[MANGLE_MAX + 1];
	size_t n;

	if (mangle_is_83(name, len))
		return 0;	/* its only name is its long name */
	/* cheap first: the two lead characters */
	n = mangle_make(name, len, sn);
	if (n != wlen)
		return 0;
	return exact ? memcmp(sn, want, n) == 0 :
	    mangle_ascii_casecmp(sn, want, n) == 0;
}

int
mangle_find(const struct vfs_ops *ops, int dirfd, const char *want,
    size_t wlen, int exact, mangle_skip_fn skip, void *arg, char *out,
    size_t cap)
{
	static uint8_t buf[MANGLE_SCANBUF];
	uint32_t seen = 0;
	ssize_t n, off;
	uint16_t reclen;
	const char *nm;
	size_t len;

	for (;;) {
		if ((n = ops->getdents(dirfd, buf, sizeof(buf))) < 0)
			return (int)n;
		if (n == 0)
			return 0;
		for (off = 0; off < n; off += reclen) {
			/* linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
			if (off + 19 > n)
				return -EIO;
			memcpy(&reclen, buf + off + 16, 2);
			if (reclen < 20 || off + reclen > n)
				return -EIO;
			nm = (const char *)buf + off + 19;
			len = strnlen(nm, (size_t)reclen - 19);
			if (++seen > MANGLE_SCAN_MAX)
				return 0;	/* bounded: not found */
			if ((len == 1 && nm[0] == '.') ||
			    (len == 2 && nm[0] == '.' && nm[1] == '.'))
				continue;
			if (!mangle_is_short_of(nm, len, want, wlen, exact))
				continue;
			if (skip != NULL && skip(arg, nm, len))
				continue;
			if (len >= cap)
				return -ENAMETOOLONG;
			memcpy(out, nm, len);
			out[len] = '\0';
			return 1;
		}
	}
}
