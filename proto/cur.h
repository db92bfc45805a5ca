/*
 * Bounds-checked little-endian cursors over a buffer.
 *
 * A read cursor never reads past its end: a short read latches err, returns 0
 * and leaves p unchanged, so a decoder reads all its fields and checks err
 * once.  A write cursor does the same for the send buffer.  Nothing here
 * casts a struct onto the buffer.
 */
#ifndef USMBD_PROTO_CUR_H
#define USMBD_PROTO_CUR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cur {
	const uint8_t	*base;	/* offsets taken from a header are relative to this */
	const uint8_t	*p;
	const uint8_t	*end;
	int		 err;
};

struct wcur {
	uint8_t		*base;
	uint8_t		*p;
	uint8_t		*end;
	int		 err;
};

static inline void
cur_init(struct cur *c, const void *buf, size_t len)
{
	/*
	 * An empty view is often (NULL, 0), e.g. a create context with no
	 * data.  NULL + 0 is undefined in C, here and in every later cur_view
	 * of 0 bytes: point such a cursor at a valid empty string instead.
	 */
	if (buf == NULL) {
		buf = "";
		len = 0;
	}
	c->base = c->p = buf;
	c->end = c->base + len;
	c->err = 0;
}

static inline size_t
cur_left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static inline size_t
cur_off(const struct cur *c)
{
	return (size_t)(c->p - c->base);
}

/* Returns a pointer to the next n bytes and advances, or NULL and err. */
static inline const uint8_t *
cur_view(struct cur *c, size_t n)
{
	const uint8_t *v;

	if (c->err || n > cur_left(c)) {
		c->err = 1;
		return NULL;
	}
	v = c->p;
	c->p += n;
	return v;
}

static inline void
cur_skip(struct cur *c, size_t n)
{
	(void)cur_view(c, n);
}

static inline void
cur_bytes(struct cur *c, void *dst, size_t n)
{
	const uint8_t *v = cur_view(c, n);

	if (v != NULL)
		memcpy(dst, v, n);
	else
		memset(dst, 0, n);
}

static inline uint8_t
cur_u8(struct cur *c)
{
	const uint8_t *v = cur_view(c, 1);

	return v ? v[0] : 0;
}

static inline uint16_t
cur_le16(struct cur *c)
{
	const uint8_t *v = cur_view(c, 2);

	return v ? (uint16_t)(v[0] | v[1] << 8) : 0;
}

static inline uint32_t
cur_le32(struct cur *c)
{
	const uint8_t *v = cur_view(c, 4);

	return v ? (uint32_t)v[0] | (uint32_t)v[1] << 8 |
	    (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24 : 0;
}

static inline uint64_t
cur_le64(struct cur *c)
{
	uint64_t lo = cur_le32(c);
	uint64_t hi = cur_le32(c);

	return lo | hi << 32;
}

static inline uint16_t
cur_be16(struct cur *c)
{
	const uint8_t *v = cur_view(c, 2);

	return v ? (uint16_t)(v[0] << 8 | v[1]) : 0;
}

static inline uint32_t
cur_be32(struct cur *c)
{
	const uint8_t *v = cur_view(c, 4);

	return v ? (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 |
	    (uint32_t)v[2] << 8 | (uint32_t)v[3] : 0;
}

/* Moves to an absolute offset from base (e.g. a buffer offset in a header). */
static inline void
cur_seek(struct cur *c, size_t off)
{
	if (c->err || off > (size_t)(c->end - c->base)) {
		c->err = 1;
		return;
	}
	c->p = c->base + off;
}

/*
 * A sub-cursor over [base+off, base+off+len) that must lie inside this
 * cursor's buffer; its own base is the start of the range.  An out-of-range
 * request latches err in both.
 */
static inline struct cur
cur_sub(struct cur *c, size_t off, size_t len)
{
	struct cur s;
	size_t size = (size_t)(c->end - c->base);

	if (c->err || off > size || len > size - off) {
		c->err = 1;
		cur_init(&s, c->base, 0);
		s.err = 1;
		return s;
	}
	cur_init(&s, c->base + off, len);
	return s;
}

static inline void
wcur_init(struct wcur *w, void *buf, size_t len)
{
	w->base = w->p = buf;
	w->end = w->base + len;
	w->err = 0;
}

static inline size_t
wcur_off(const struct wcur *w)
{
	return (size_t)(w->p - w->base);
}

static inline size_t
wcur_left(const struct wcur *w)
{
	return (size_t)(w->end - w->p);
}

/* Reserves n bytes and returns them for the caller to fill, or NULL. */
static inline uint8_t *
wcur_reserve(struct wcur *w, size_t n)
{
	uint8_t *v;

	if (w->err || n > wcur_left(w)) {
		w->err = 1;
		return NULL;
	}
	v = w->p;
	w->p += n;
	return v;
}

static inline void
wcur_bytes(struct wcur *w, const void *src, size_t n)
{
	uint8_t *v = wcur_reserve(w, n);

	if (v != NULL && n > 0)
		memcpy(v, src, n);
}

static inline void
wcur_zero(struct wcur *w, size_t n)
{
	uint8_t *v = wcur_reserve(w, n);

	if (v != NULL)
		memset(v, 0, n);
}

static inline void
wcur_u8(struct wcur *w, uint8_t x)
{
	uint8_t *v = wcur_reserve(w, 1);

	if (v != NULL)
		v[0] = x;
}

static inline void
le16_put(uint8_t *v, uint16_t x)
{
	v[0] = (uint8_t)x;
	v[1] = (uint8_t)(x >> 8);
}

static inline void
le32_put(uint8_t *v, uint32_t x)
{
	v[0] = (uint8_t)x;
	v[1] = (uint8_t)(x >> 8);
	v[2] = (uint8_t)(x >> 16);
	v[3] = (uint8_t)(x >> 24);
}

static inline void
le64_put(uint8_t *v, uint64_t x)
{
	le32_put(v, (uint32_t)x);
	le32_put(v + 4, (uint32_t)(x >> 32));
}

static inline uint16_t
le16_get(const uint8_t *v)
{
	return (uint16_t)(v[0] | v[1] << 8);
}

static inline uint32_t
le32_get(const uint8_t *v)
{
	return (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 |
	    (uint32_t)v[3] << 24;
}

static inline uint64_t
le64_get(const uint8_t *v)
{
	return (uint64_t)le32_get(v) | (uint64_t)le32_get(v + 4) << 32;
}

static inline void
wcur_le16(struct wcur *w, uint16_t x)
{
	uint8_t *v = wcur_reserve(w, 2);

	if (v != NULL)
		le16_put(v, x);
}

static inline void
wcur_le32(struct wcur *w, uint32_t x)
{
	uint8_t *v = wcur_reserve(w, 4);

	if (v != NULL)
		le32_put(v, x);
}

static inline void
wcur_le64(struct wcur *w, uint64_t x)
{
	uint8_t *v = wcur_reserve(w, 8);

	if (v != NULL)
		le64_put(v, x);
}

static inline void
wcur_be16(struct wcur *w, uint16_t x)
{
	uint8_t *v = wcur_reserve(w, 2);

	if (v != NULL) {
		v[0] = (uint8_t)(x >> 8);
		v[1] = (uint8_t)x;
	}
}

static inline void
wcur_be32(struct wcur *w, uint32_t x)
{
	uint8_t *v = wcur_reserve(w, 4);

	if (v != NULL) {
		v[0] = (uint8_t)(x >> 24);
		v[1] = (uint8_t)(x >> 16);
		v[2] = (uint8_t)(x >> 8);
		v[3] = (uint8_t)x;
	}
}

/* Pads with zeros to a multiple of a (a power of two) measured from base. */
static inline void
wcur_align(struct wcur *w, size_t a)
{
	size_t off = wcur_off(w);

	wcur_zero(w, ((off + a - 1) & ~(a - 1)) - off);
}

/*
 * The strings of the daemon's own messages: a u16 length, then the bytes
 * without a NUL.  wcur_str16 writes at most cap - 1 bytes of s;
 * cur_str16 takes one shorter than cap that holds no NUL into dst
 * (NUL-terminated, "" on failure): 0, or -1.
 */
static inline void
wcur_str16(struct wcur *w, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap - 1);

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, s, n);
}

static inline int
cur_str16(struct cur *c, char *dst, size_t cap)
{
	uint16_t n = cur_le16(c);
	const uint8_t *v;

	dst[0] = '\0';
	if (c->err || (size_t)n >= cap)
		return -1;
	if ((v = cur_view(c, n)) == NULL || memchr(v, '\0', n) != NULL)
		return -1;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

/*
 * The byte strings of the daemon's own messages: a u32 length, then the
 * bytes.  cur_blob32 returns a view into the message (NULL with the
 * cursor's error set when it is short) and its length in *len.
 */
static inline void
wcur_blob32(struct wcur *w, const uint8_t *p, uint32_t len)
{
	wcur_le32(w, len);
	wcur_bytes(w, p, len);
}

static inline const uint8_t *
cur_blob32(struct cur *c, uint32_t *len)
{
	*len = cur_le32(c);
	return cur_view(c, *len);
}

#endif
