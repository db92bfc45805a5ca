/*
 * The relay state (worker/relay.h, struct relay_state): what the owner
 * sends the master with MSG_RELAY for the relayed worker to finish the
 * session's setup with.  Kept apart from worker/relay.c's frame path.
 */
#include "worker/relay.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/spnego.h"
#include "worker/conn_priv.h"

static void
put_blob(struct wcur *w, const uint8_t *p, uint16_t n)
{
	wcur_le16(w, n);
	wcur_bytes(w, p, n);
}

int
relay_state_encode(const struct relay_state *st, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le32(&w, RELAY_VERSION);
	wcur_le64(&w, st->session_id);
	wcur_le64(&w, st->previous_id);
	wcur_u8(&w, st->spnego);
	put_blob(&w, st->negotiate, st->negotiate_len);
	put_blob(&w, st->challenge, st->challenge_len);
	put_blob(&w, st->mech_types, st->mech_types_len);
	wcur_bytes(&w, st->preauth, 64);
	wcur_u8(&w, st->krb_mech);
	wcur_u8(&w, st->krb_mic);
	wcur_le64(&w, st->krb_ctx);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
relay_state_decode(struct relay_state *st, const uint8_t *p, size_t len)
{
	struct cur r;

	memset(st, 0, sizeof(*st));
	cur_init(&r, p, len);
	if (cur_le32(&r) != RELAY_VERSION)
		return -EBADMSG;
	st->session_id = cur_le64(&r);
	st->previous_id = cur_le64(&r);
	st->spnego = cur_u8(&r);
	st->negotiate_len = cur_le16(&r);
	st->negotiate = cur_view(&r, st->negotiate_len);
	st->challenge_len = cur_le16(&r);
	st->challenge = cur_view(&r, st->challenge_len);
	st->mech_types_len = cur_le16(&r);
	st->mech_types = cur_view(&r, st->mech_types_len);
	cur_bytes(&r, st->preauth, 64);
	st->krb_mech = cur_u8(&r);
	st->krb_mic = cur_u8(&r);
	st->krb_ctx = cur_le64(&r);
	if (r.err || st->session_id == 0 || st->spnego > 1 ||
	    st->krb_mic > 1 || (st->krb_mech != 0 &&
	    st->krb_mech != SPNEGO_MECH_KRB5 &&
	    st->krb_mech != SPNEGO_MECH_KRB5_MS) ||
	    st->negotiate_len > sizeof(((struct sess_auth *)0)->negotiate) ||
	    st->challenge_len > sizeof(((struct sess_auth *)0)->challenge) ||
	    st->mech_types_len > sizeof(((struct sess_auth *)0)->mech_types))
		return -EBADMSG;
	return (int)(len - cur_left(&r));
}

/* A control record of the relay (worker/relay.h). */
int
relay_ctl_decode(struct relay_ctl *k, const uint8_t *p, size_t len)
{
	struct cur r;
	uint16_t i;

	cur_init(&r, p, len);
	k->granted = cur_le16(&r);
	k->n = cur_le16(&r);
	if (r.err || k->n > RELAY_CTL_IDS)
		return -EBADMSG;
	for (i = 0; i < k->n; i++) {
		k->mid[i] = cur_le64(&r);
		k->charge[i] = cur_le16(&r);
	}
	return r.err || cur_left(&r) != 0 ? -EBADMSG : 0;
}
