#include "daemon/krbmsg.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"

int
krbmsg_rep_encode(const struct krbmsg_rep *r, uint8_t *buf, size_t cap)
{
	struct wcur w;
	uint32_t i;

	if (r->key_len > sizeof(r->key) || r->out_len > sizeof(r->out) ||
	    r->mic_len > sizeof(r->mic) || r->pac_n_rids > PAC_MAX_RIDS)
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
	wcur_le64(&w, r->ctx);
	wcur_le32(&w, r->mic_len);
	wcur_bytes(&w, r->mic, r->mic_len);
	wcur_str16(&w, r->pac_domain, sizeof(r->pac_domain));
	wcur_le32(&w, r->pac_n_groups);
	wcur_le32(&w, r->pac_n_rids);
	for (i = 0; i < r->pac_n_rids; i++)
		wcur_le32(&w, r->pac_rids[i]);
	wcur_le32(&w, r->pac_extra_sids);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
krbmsg_rep_decode(struct krbmsg_rep *r, const uint8_t *p, size_t len)
{
	struct cur c;
	uint32_t i;

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
	r->ctx = cur_le64(&c);
	r->mic_len = cur_le32(&c);
	if (r->mic_len > sizeof(r->mic))
		goto bad;
	cur_bytes(&c, r->mic, r->mic_len);
	if (cur_str16(&c, r->pac_domain, sizeof(r->pac_domain)) != 0)
		c.err = 1;
	r->pac_n_groups = cur_le32(&c);
	r->pac_n_rids = cur_le32(&c);
	if (r->pac_n_rids > PAC_MAX_RIDS || r->pac_n_rids > r->pac_n_groups)
		goto bad;
	for (i = 0; i < r->pac_n_rids; i++)
		r->pac_rids[i] = cur_le32(&c);
	r->pac_extra_sids = cur_le32(&c);
	if (c.err || cur_left(&c) != 0 || r->pac > 1)
		goto bad;
	/* A context is kept only to wait for the client's MIC. */
	if ((r->ctx != 0) != (r->status == STATUS_MORE_PROCESSING_REQUIRED))
		goto bad;
	if (r->status == STATUS_MORE_PROCESSING_REQUIRED)
		return 0;
	/* A good ticket names someone and gives a key. */
	if (r->status == 0 && (r->principal[0] == '\0' || r->key_len == 0))
		goto bad;
	return 0;
bad:
	explicit_bzero(r, sizeof(*r));
	return -EBADMSG;
}

int
krbmsg_req_encode(const struct krbmsg_req *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le64(&w, r->ctx);
	wcur_blob32(&w, r->token, r->token_len);
	wcur_blob32(&w, r->mech_types, r->mech_types_len);
	wcur_blob32(&w, r->mic, r->mic_len);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
krbmsg_req_decode(struct krbmsg_req *r, const uint8_t *p, size_t len)
{
	struct cur c;

	memset(r, 0, sizeof(*r));
	cur_init(&c, p, len);
	r->ctx = cur_le64(&c);
	r->token = cur_blob32(&c, &r->token_len);
	r->mech_types = cur_blob32(&c, &r->mech_types_len);
	r->mic = cur_blob32(&c, &r->mic_len);
	if (c.err || cur_left(&c) != 0)
		goto bad;
	/* A new AP-REQ, or the client's MIC for a kept context: not both. */
	if (r->ctx == 0 ? r->token_len == 0 :
	    r->token_len != 0 || r->mic_len == 0 || r->mech_types_len != 0)
		goto bad;
	if (r->mech_types_len > AUTH_MECH_TYPES_MAX ||
	    (r->mic_len != 0 && r->ctx == 0 && r->mech_types_len == 0))
		goto bad;
	return 0;
bad:
	memset(r, 0, sizeof(*r));
	return -EBADMSG;
}
