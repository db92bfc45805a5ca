#include "daemon/krbmsg.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"

int
krbmsg_rep_encode(const struct krbmsg_rep *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	if (r->key_len > sizeof(r->key) || r->out_len > sizeof(r->out))
		return -EMSGSIZE;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, r->status);
	wcur_str16(&w, r->principal, sizeof(r->principal));
	wcur_le32(&w, r->key_len);
	wcur_bytes(&w, r->key, r->key_len);
	wcur_le32(&w, r->lifetime);
	wcur_le32(&w, r->pac);
	wcur_le32(&w, r->out_len);
	wcur_bytes(&w, r->out, r->out_len);
	wcur_str16(&w, r->why, sizeof(r->why));
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
krbmsg_rep_decode(struct krbmsg_rep *r, const uint8_t *p, size_t len)
{
	struct cur c;

	memset(r, 0, sizeof(*r));
	cur_init(&c, p, len);
	r->status = cur_le32(&c);
	if (cur_str16(&c, r->principal, sizeof(r->principal)) != 0)
		c.err = 1;
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
	if (cur_str16(&c, r->why, sizeof(r->why)) != 0)
		c.err = 1;
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
