/*
 * UTF-16LE (the wire) <-> UTF-8 (the file system), with validation, and the
 * simple case folding Windows name comparison needs.  Pure code, no I/O.
 */
#ifndef USMBD_PROTO_UNICODE_H
#define USMBD_PROTO_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Converts len bytes of UTF-16LE (len must be even) to UTF-8 in dst, NUL
 * terminated.  Returns the UTF-8 length, or -EILSEQ for an odd length, an
 * unpaired surrogate or an embedded NUL, -ENAMETOOLONG when dst is too small.
 */
int		unicode_utf16_to_utf8(const uint8_t *src, size_t len, char *dst,
		    size_t cap);
/*
 * Converts len bytes of UTF-8 to UTF-16LE in dst.  Returns the number of
 * bytes written, -EILSEQ for invalid UTF-8 (overlong, surrogate, > U+10FFFF,
 * truncated), -ENAMETOOLONG when dst is too small.
 */
int		unicode_utf8_to_utf16(const char *src, size_t len, uint8_t *dst,
		    size_t cap);
/*
 * Decodes one code point from valid UTF-8 at *p (< end) and advances; on
 * invalid input returns 0xFFFD and advances one byte.
 */
uint32_t	unicode_utf8_next(const char **p, const char *end);
/*
 * Upper-cases a code point the way Windows compares names: the Unicode
 * simple uppercase mapping of the BMP (fullwidth Latin, Greek, Cyrillic,
 * ...), never to ASCII from outside it.  Locale independent.
 */
uint32_t	unicode_upper(uint32_t c);
/* Compares two UTF-8 names ignoring case: 0 when equal. */
int		unicode_casecmp(const char *a, size_t alen, const char *b,
		    size_t blen);
/* A hash of the upper-cased name, for case-insensitive lookup tables. */
uint32_t	unicode_casehash(const char *s, size_t len);

#endif
