/*
 * What travels on a relay beside the client's frames (worker/relay.h):
 * the relay state (struct relay_state: what the owner sends the master
 * with MSG_RELAY for the relayed worker to finish the session's setup
 * with), the control record after each answer and the drop record.
 * Kept apart from worker/relay.c's frame path.
 */
#include "worker/relay.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "proto/spnego.h"
#include "worker/conn_priv.h"
#include "worker/dispatch_priv.h"

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
	k->na = 0;
	if (!r.err && cur_left(&r) > 0) {
		k->na = cur_le16(&r);
		if (r.err || k->na > RELAY_CTL_IDS)
			return -EBADMSG;
		for (i = 0; i < k->na; i++) {
			k->async[i].mid = cur_le64(&r);
			k->async[i].async_id = cur_le64(&r);
			k->async[i].command = cur_le16(&r);
			k->async[i].final = cur_u8(&r);
		}
	}
	return r.err || cur_left(&r) != 0 ? -EBADMSG : 0;
}

/*
 * Does the answer frame msg (len) speak only for session sid?  The owner
 * passes the relayed worker's frames to the client untouched, so a worker
 * that answers under another session's id (the owner's user's, or another
 * relayed session's) would answer for a session it does not serve: on a
 * session that neither signs nor seals, a READ's data of its choosing.
 * A transform names its session in clear (MS-SMB2 2.2.41); a frame in
 * the clear, in each header of its chain, except a lease break notice,
 * which names none (3.3.4.7).
 */
static int
relay_answer_sid_ok(const uint8_t *msg, size_t len, uint64_t sid)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;
	uint64_t s;
	int r;

	switch (smb2_magic(msg, len)) {
	case SMB2_MAGIC_TRANSFORM:
		return len >= SMB2_TRANSFORM_HDR_LEN && le64_get(msg + 44) == sid;
	case SMB2_MAGIC_SMB2:
		break;
	default:
		return 0;
	}
	smb2_chain_init(&ch, msg, len);
	while ((r = smb2_chain_next(&ch, &m, &mlen)) == 1) {
		s = le64_get(m + 40);
		if (s != sid && (s != 0 || le16_get(m + 12) != SMB2_OPLOCK_BREAK ||
		    le64_get(m + 24) != UINT64_MAX))
			return 0;
	}
	return r == 0;
}

int
relay_answer_next(const uint8_t *b, size_t avail, uint64_t sid,
    size_t *flen, size_t *klen)
{
	long f;
	size_t k, need;

	if (avail < SMB2_FRAME_LEN)
		return 0;
	if (b[0] == RELAY_DROP_TYPE)
		return -2;
	f = smb2_frame_decode(b);
	if (f < 0 || (size_t)f > CONN_BUF_BIG)
		return -1;
	need = SMB2_FRAME_LEN + (size_t)f;
	if (avail < need + SMB2_FRAME_LEN)
		return 0;
	if (b[need] != RELAY_CTL_TYPE)
		return -1;
	k = (size_t)b[need + 1] << 16 | (size_t)b[need + 2] << 8 | b[need + 3];
	if (k > RELAY_CTL_MAX)
		return -1;
	if (avail < need + SMB2_FRAME_LEN + k)
		return 0;
	if (!relay_answer_sid_ok(b + SMB2_FRAME_LEN, (size_t)f, sid))
		return -1;
	*flen = (size_t)f;
	*klen = k;
	return 1;
}

/* The async states of a sealed frame's answers (relay_inflight_sealed). */
static void
relay_trailer_async(const uint8_t *sbuf, const struct dispatch_out *outs,
    int nout, struct wcur *w)
{
	uint16_t na = 0;
	uint8_t *cnt;
	int i;

	if ((cnt = wcur_reserve(w, 2)) == NULL)
		return;
	for (i = 0; i < nout && i < RELAY_CTL_IDS; i++) {
		const uint8_t *h = sbuf + outs[i].off;

		if (!(le32_get(h + 16) & SMB2_FLAGS_ASYNC_COMMAND))
			continue;
		wcur_le64(w, le64_get(h + 24));
		wcur_le64(w, le64_get(h + 32));
		wcur_le16(w, le16_get(h + 12));
		wcur_u8(w, le32_get(h + 8) != STATUS_PENDING);
		na++;
	}
	le16_put(cnt, na);
}

void
relay_drop(struct conn *c)
{
	static const uint8_t rec[SMB2_FRAME_LEN] = { RELAY_DROP_TYPE, 0, 0, 0 };

	if (c->priv->relayed)
		(void)send(c->fd, rec, sizeof(rec), MSG_NOSIGNAL | MSG_DONTWAIT);
}

size_t
relay_trailer(const struct conn *c, const struct dispatch_out *outs,
    int nout, int sealed, uint8_t *dst, size_t cap)
{
	const uint8_t *sbuf = c->priv->sbuf;
	struct wcur w;
	uint32_t granted = 0;
	uint16_t n = 0;
	int i;

	if (cap < RELAY_CTL_MAX)
		return 0;
	wcur_init(&w, dst, cap);
	wcur_le32(&w, 0);	/* the header, below */
	wcur_le16(&w, 0);
	wcur_le16(&w, 0);
	for (i = 0; i < nout && i < RELAY_CTL_IDS; i++) {
		const uint8_t *h = sbuf + outs[i].off;
		uint32_t flags = le32_get(h + 16);
		uint64_t mid = le64_get(h + 24);

		granted += le16_get(h + 14);
		/* Answered (or interim): cleared once all of it is sent. */
		relay_ring_answered(c->priv->relay_ring, mid);
		/* An async final answer's id was used by its interim one. */
		if (mid == UINT64_MAX || ((flags & SMB2_FLAGS_ASYNC_COMMAND) &&
		    le32_get(h + 8) != STATUS_PENDING))
			continue;
		wcur_le64(&w, mid);
		wcur_le16(&w, c->dialect == DIALECT_202 ? 1 : le16_get(h + 6));
		n++;
	}
	if (sealed)
		relay_trailer_async(sbuf, outs, nout, &w);
	if (w.err)
		return 0;
	dst[0] = RELAY_CTL_TYPE;
	dst[1] = (uint8_t)((wcur_off(&w) - 4) >> 16);
	dst[2] = (uint8_t)((wcur_off(&w) - 4) >> 8);
	dst[3] = (uint8_t)(wcur_off(&w) - 4);
	le16_put(dst + 4, (uint16_t)(granted > 0xffff ? 0xffff : granted));
	le16_put(dst + 6, n);
	return wcur_off(&w);
}
