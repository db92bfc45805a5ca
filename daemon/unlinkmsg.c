/*
 * MSG_UNLINK_AS / MSG_UNLINK_DO payloads (layout in daemon/unlinkmsg.h).
 */
#include "daemon/unlinkmsg.h"

#include <string.h>

#include "proto/cur.h"

static void
unlinkmsg_put_str(struct wcur *w, const char *s)
{
	size_t n = strlen(s);

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, s, n);
}

/* A string of at most cap - 1 bytes without NUL: 0, or -1. */
static int
unlinkmsg_get_str(struct cur *c, char *dst, size_t cap)
{
	uint16_t n = cur_le16(c);
	const uint8_t *v;

	if (c->err || (size_t)n >= cap)
		return -1;
	if ((v = cur_view(c, n)) == NULL || memchr(v, '\0', n) != NULL)
		return -1;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

int
unlinkmsg_encode(const struct unlinkmsg *u, int with_root, uint8_t *buf,
    size_t cap)
{
	struct wcur w;

	if (strlen(u->share) >= sizeof(u->share) ||
	    strlen(u->path) >= sizeof(u->path) ||
	    (with_root && strlen(u->root) >= sizeof(u->root)))
		return -1;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, u->uid);
	wcur_le64(&w, u->dev);
	wcur_le64(&w, u->ino);
	wcur_u8(&w, u->is_dir);
	unlinkmsg_put_str(&w, u->share);
	unlinkmsg_put_str(&w, u->path);
	if (with_root)
		unlinkmsg_put_str(&w, u->root);
	return w.err ? -1 : (int)wcur_off(&w);
}

int
unlinkmsg_decode(struct unlinkmsg *u, int with_root, const uint8_t *p,
    size_t len)
{
	struct cur c;

	memset(u, 0, sizeof(*u));
	cur_init(&c, p, len);
	u->uid = cur_le32(&c);
	u->dev = cur_le64(&c);
	u->ino = cur_le64(&c);
	u->is_dir = cur_u8(&c);
	if (unlinkmsg_get_str(&c, u->share, sizeof(u->share)) != 0 ||
	    unlinkmsg_get_str(&c, u->path, sizeof(u->path)) != 0)
		return -1;
	if (with_root && unlinkmsg_get_str(&c, u->root, sizeof(u->root)) != 0)
		return -1;
	if (c.err || cur_left(&c) != 0 || u->is_dir > 1)
		return -1;
	return 0;
}
