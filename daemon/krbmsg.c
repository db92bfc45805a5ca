#include "daemon/krbmsg.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"

/* A string: u16 length, bytes, no NUL; it must fit field with its NUL. */
static void
put_str(struct wcur *w, const char *s, size_t field)
{
	size_t n = strnlen(s, field - 1);

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, s, n);
}

static void
get_str(struct cur *c, char *dst, size_t field)
{
	uint16_t n = cur_le16(c);

	if (n >= field) {
		c->err = 1;
		dst[0] = '\0';
		return;
	}
	cur_bytes(c, dst, n);
	dst[c->err ? 0 : n] = '\0';
	if (!c->err && memchr(dst, '\0', n) != NULL)
		c->err = 1;
}

int
krbmsg_rep_encode(const struct krbmsg_rep *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	if (r->key_len > sizeof(r->key) || r->out_len > sizeof(r->out))
		return -EMSGSIZE;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, r->status);
	put_str(&w, r->principal, sizeof(r->principal));
	wcur_le32(&w, r->key_len);
	wcur_bytes(&w, r->key, r->key_len);
	wcur_le32(&w, r->lifetime);
	wcur_le32(&w, r->pac);
	wcur_le32(&w, r->out_len);
	wcur_bytes(&w, r->out, r->out_len);
	put_str(&w, r->why, sizeof(r->why));
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
krbmsg_rep_decode(struct krbmsg_rep *r, const uint8_t *p, size_t len)
{
	struct cur c;

	memset(r, 0, sizeof(*r));
	cur_init(&c, p, len);
	r->status = cur_le32(&c);
	get_str(&c, r->principal, sizeof(r->principal));
	r->key_len = cur_le32(&c);
	if (r->key_len > sizeof(r->key))
		goto bad;
	cur_bytes(&c, r->key, r->key_len);
	r->lifetime = cur_le32(&c);
	r->pac = cur_le32(&c);
	r->out_len = cur_le32(&c);
	if (r->out_len > sizeof(r->out))
		goto bad;
	cur_bytes(&c, r->out, r->out_len);
	get_str(&c, r->why, sizeof(r->why));
	if (c.err || cur_left(&c) != 0 || r->pac > 1)
		goto bad;
	/* A good ticket names someone and gives a key. */
	if (r->status == 0 && (r->principal[0] == '\0' || r->key_len == 0))
		goto bad;
	return 0;
bad:
	explicit_bzero(r, sizeof(*r));
	return -EBADMSG;
}
