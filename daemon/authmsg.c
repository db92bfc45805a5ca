#include "daemon/authmsg.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"

/* A fixed-size NUL-terminated string field. */
static void
put_str(struct wcur *w, const char *s, size_t field)
{
	size_t n = strnlen(s, field - 1);

	wcur_bytes(w, s, n);
	wcur_zero(w, field - n);
}

static void
get_str(struct cur *c, char *dst, size_t field)
{
	cur_bytes(c, dst, field);
	if (memchr(dst, '\0', field) == NULL)
		c->err = 1;
}

int
authmsg_req_encode(const struct authmsg_req *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	put_str(&w, r->client, sizeof(r->client));
	wcur_blob32(&w, r->negotiate, r->negotiate_len);
	wcur_blob32(&w, r->challenge, r->challenge_len);
	wcur_blob32(&w, r->authenticate, r->authenticate_len);
	wcur_le32(&w, r->mech);
	wcur_blob32(&w, r->mech_types, r->mech_types_len);
	wcur_blob32(&w, r->mic, r->mic_len);
	wcur_le64(&w, r->krb_ctx);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
authmsg_req_decode(struct authmsg_req *r, const uint8_t *p, size_t len)
{
	struct cur c;

	cur_init(&c, p, len);
	get_str(&c, r->client, sizeof(r->client));
	r->negotiate = cur_blob32(&c, &r->negotiate_len);
	r->challenge = cur_blob32(&c, &r->challenge_len);
	r->authenticate = cur_blob32(&c, &r->authenticate_len);
	r->mech = cur_le32(&c);
	r->mech_types = cur_blob32(&c, &r->mech_types_len);
	r->mic = cur_blob32(&c, &r->mic_len);
	r->krb_ctx = cur_le64(&c);
	return c.err || cur_left(&c) != 0 || r->mech > AUTHMSG_MECH_KRB5_MIC ?
	    -EBADMSG : 0;
}

int
authmsg_rep_encode(const struct authmsg_rep *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le32(&w, r->status);
	wcur_le32(&w, r->flags);
	wcur_bytes(&w, r->session_key, sizeof(r->session_key));
	wcur_le32(&w, r->uid);
	wcur_le32(&w, r->gid);
	put_str(&w, r->user, sizeof(r->user));
	put_str(&w, r->domain, sizeof(r->domain));
	wcur_le32(&w, r->lifetime);
	if (r->mech_out_len > sizeof(r->mech_out))
		return -EMSGSIZE;
	wcur_blob32(&w, r->mech_out, r->mech_out_len);
	if (r->full_key_len > sizeof(r->full_key))
		return -EMSGSIZE;
	wcur_blob32(&w, r->full_key, r->full_key_len);
	wcur_le64(&w, r->krb_ctx);
	if (r->mic_len > sizeof(r->mic))
		return -EMSGSIZE;
	wcur_blob32(&w, r->mic, r->mic_len);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
authmsg_rep_decode(struct authmsg_rep *r, const uint8_t *p, size_t len)
{
	struct cur c;

	cur_init(&c, p, len);
	r->status = cur_le32(&c);
	r->flags = cur_le32(&c);
	cur_bytes(&c, r->session_key, sizeof(r->session_key));
	r->uid = cur_le32(&c);
	r->gid = cur_le32(&c);
	get_str(&c, r->user, sizeof(r->user));
	get_str(&c, r->domain, sizeof(r->domain));
	r->lifetime = cur_le32(&c);
	r->mech_out_len = cur_le32(&c);
	if (r->mech_out_len > sizeof(r->mech_out))
		return -EBADMSG;
	cur_bytes(&c, r->mech_out, r->mech_out_len);
	r->full_key_len = cur_le32(&c);
	if (r->full_key_len > sizeof(r->full_key))
		return -EBADMSG;
	cur_bytes(&c, r->full_key, r->full_key_len);
	r->krb_ctx = cur_le64(&c);
	r->mic_len = cur_le32(&c);
	if (r->mic_len > sizeof(r->mic))
		return -EBADMSG;
	cur_bytes(&c, r->mic, r->mic_len);
	return c.err || cur_left(&c) != 0 ? -EBADMSG : 0;
}

int
authmsg_ident_encode(const struct authmsg_ident *i, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le32(&w, i->kind);
	wcur_le32(&w, i->uid);
	wcur_le32(&w, i->gid);
	wcur_le32(&w, i->flags);
	put_str(&w, i->user, sizeof(i->user));
	put_str(&w, i->peer, sizeof(i->peer));
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
authmsg_ident_decode(struct authmsg_ident *i, const uint8_t *p, size_t len)
{
	struct cur c;

	cur_init(&c, p, len < AUTHMSG_IDENT_LEN ? len : AUTHMSG_IDENT_LEN);
	i->kind = cur_le32(&c);
	i->uid = cur_le32(&c);
	i->gid = cur_le32(&c);
	i->flags = cur_le32(&c);
	get_str(&c, i->user, sizeof(i->user));
	get_str(&c, i->peer, sizeof(i->peer));
	if (c.err || cur_left(&c) != 0 || i->kind > AUTHMSG_IDENT_RELAY ||
	    (i->kind != AUTHMSG_IDENT_NONE && i->uid == 0))
		return -EBADMSG;
	return 0;
}
