#include "worker/handoff.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/authmsg.h"
#include "daemon/log.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"

int
handoff_encode(const struct conn *c, const struct session *s,
    const uint8_t *extra, size_t extra_len, uint8_t *buf, size_t cap)
{
	const struct conn_credits *cr = &c->priv->cred;
	struct wcur w;
	uint32_t i;

	if (extra_len > HANDOFF_MAX_EXTRA)
		return -EMSGSIZE;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, HANDOFF_VERSION);
	wcur_str16(&w, c->peer, sizeof(c->peer));
	wcur_le16(&w, conn_peer_port(c));
	wcur_le16(&w, c->dialect);
	wcur_le32(&w, c->capabilities);
	wcur_le32(&w, c->client_capabilities);
	wcur_le16(&w, c->client_security_mode);
	wcur_le16(&w, c->security_mode);
	/*
	 * bit 0: signing required; bit 1: POSIX extensions negotiated;
	 * bit 2: chained compression; bits 3-6: the compression algorithms
	 * 1-4 (LZNT1, LZ77, LZ77+Huffman, Pattern_V1; worker/compress.h)
	 */
	wcur_u8(&w, (uint8_t)((c->signing_required ? 1 : 0) |
	    (c->posix ? 2 : 0) | (c->compress_chained ? 4 : 0) |
	    ((c->compress_algs >> 1 & 0xF) << 3)));
	wcur_bytes(&w, c->client_guid, 16);
	wcur_bytes(&w, c->server_guid, 16);
	wcur_le16(&w, c->signing_algo);
	wcur_le16(&w, c->cipher);
	wcur_le32(&w, c->max_read_size);
	wcur_le32(&w, c->max_write_size);
	wcur_le32(&w, c->max_trans_size);
	wcur_le64(&w, c->start_time);
	wcur_bytes(&w, c->priv->preauth, 64);
	wcur_le16(&w, c->client_ndialects);
	for (i = 0; i < c->client_ndialects && i < 64; i++)
		wcur_le16(&w, c->client_dialects[i]);
	/* credits: the window and which ids inside it are used already */
	wcur_le64(&w, cr->low);
	wcur_le32(&w, cr->range);
	wcur_le32(&w, cr->granted);
	for (i = 0; i < cr->range; i++) {
		uint64_t id = cr->low + i;
		unsigned b = (unsigned)(id % (CONN_MAX_CREDITS * 2));

		if (i % 8 == 0)
			wcur_u8(&w, 0);
		if (!w.err && (cr->bitmap[b / 8] >> (b % 8) & 1))
			w.p[-1] |= (uint8_t)(1u << (i % 8));
	}
	wcur_u8(&w, s == NULL);		/* a binding: no session travels */
	if (s == NULL)
		goto extra;
	/* the session */
	wcur_le64(&w, s->session_id);
	wcur_str16(&w, s->user, sizeof(s->user));
	wcur_le32(&w, s->uid);
	wcur_le32(&w, s->gid);
	wcur_u8(&w, (uint8_t)s->guest);
	wcur_u8(&w, (uint8_t)s->anonymous);
	wcur_u8(&w, (uint8_t)s->signing);
	wcur_u8(&w, (uint8_t)s->signing_required);
	wcur_u8(&w, (uint8_t)s->encrypt);
	wcur_le16(&w, s->cipher);
	wcur_le32(&w, s->ntlm_flags);
	wcur_bytes(&w, s->session_key, 16);
	wcur_bytes(&w, s->signing_key, 16);
	wcur_bytes(&w, s->enc_key, 32);
	wcur_bytes(&w, s->dec_key, 32);
	wcur_bytes(&w, s->app_key, 16);
	wcur_bytes(&w, s->preauth, 64);
	wcur_le64(&w, s->previous_id);
	/* A Kerberos session's end (CLOCK_MONOTONIC, shared by all). */
	wcur_le32(&w, s->expire);
extra:
	/* bytes read past the last request */
	wcur_le32(&w, (uint32_t)extra_len);
	wcur_bytes(&w, extra, extra_len);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
handoff_decode(struct conn *c, const uint8_t *p, size_t len)
{
	struct conn_private *pv = c->priv;
	struct conn_credits *cr = &pv->cred;
	struct session *s = &c->sessions[0];
	struct cur r;
	uint32_t i, extra;
	const uint8_t *x;
	uint8_t bind;

	cur_init(&r, p, len);
	if (cur_le32(&r) != HANDOFF_VERSION)
		return -EBADMSG;
	if (cur_str16(&r, c->peer, sizeof(c->peer)) != 0)
		r.err = 1;
	/*
	 * Used only on a relayed connection (conn_peer_port; a handed-off
	 * socket is asked itself).  Its owner could lie about it, as about
	 * the address: both are display values (usmbctl status; the master
	 * trusts nothing of a worker's report beyond display) and what
	 * kill-client matches, and that owner holds the client's socket
	 * anyway, so it can already end or starve the relayed session.
	 */
	pv->peer_port = cur_le16(&r);
	c->dialect = cur_le16(&r);
	c->capabilities = cur_le32(&r);
	c->client_capabilities = cur_le32(&r);
	c->client_security_mode = cur_le16(&r);
	c->security_mode = cur_le16(&r);
	c->signing_required = cur_u8(&r);
	c->posix = (c->signing_required & 2) != 0;
	c->compress_chained = (c->signing_required & 4) != 0;
	c->compress_algs = (uint32_t)(c->signing_required >> 3 & 0xF) << 1;
	c->signing_required &= 1;
	cur_bytes(&r, c->client_guid, 16);
	cur_bytes(&r, c->server_guid, 16);
	c->signing_algo = cur_le16(&r);
	c->cipher = cur_le16(&r);
	c->max_read_size = cur_le32(&r);
	c->max_write_size = cur_le32(&r);
	c->max_trans_size = cur_le32(&r);
	c->start_time = cur_le64(&r);
	cur_bytes(&r, pv->preauth, 64);
	c->client_ndialects = cur_le16(&r);
	if (c->client_ndialects > 64)
		return -EBADMSG;
	for (i = 0; i < c->client_ndialects; i++)
		c->client_dialects[i] = cur_le16(&r);
	conn_credits_init(cr, CONN_MAX_CREDITS);
	cr->low = cur_le64(&r);
	cr->range = cur_le32(&r);
	cr->granted = cur_le32(&r);
	if (cr->range > CONN_MAX_CREDITS * 2 || cr->granted > cr->range ||
	    cr->granted > CONN_MAX_CREDITS)
		return -EBADMSG;
	for (i = 0; i < cr->range; i += 8) {
		uint8_t bits = cur_u8(&r);
		uint32_t j;

		for (j = 0; j < 8 && i + j < cr->range; j++) {
			uint64_t id = cr->low + i + j;
			unsigned b = (unsigned)(id % (CONN_MAX_CREDITS * 2));

			if (bits >> j & 1)
				cr->bitmap[b / 8] |= (uint8_t)(1u << (b % 8));
		}
	}
	memset(s, 0, sizeof(*s));
	bind = cur_u8(&r);
	if (bind > 1)
		return -EBADMSG;
	if (bind)
		goto extra;
	s->in_use = 1;
	s->state = SESS_VALID;
	s->session_id = cur_le64(&r);
	if (cur_str16(&r, s->user, sizeof(s->user)) != 0)
		r.err = 1;
	s->uid = cur_le32(&r);
	s->gid = cur_le32(&r);
	s->guest = cur_u8(&r);
	s->anonymous = cur_u8(&r);
	s->signing = cur_u8(&r);
	s->signing_required = cur_u8(&r);
	s->encrypt = cur_u8(&r);
	s->cipher = cur_le16(&r);
	s->ntlm_flags = cur_le32(&r);
	cur_bytes(&r, s->session_key, 16);
	cur_bytes(&r, s->signing_key, 16);
	cur_bytes(&r, s->enc_key, 32);
	cur_bytes(&r, s->dec_key, 32);
	cur_bytes(&r, s->app_key, 16);
	cur_bytes(&r, s->preauth, 64);
	s->previous_id = cur_le64(&r);
	s->expire = cur_le32(&r);
extra:
	extra = cur_le32(&r);
	x = cur_view(&r, extra);
	/* A binding hand-off brings at least its request. */
	if (r.err || cur_left(&r) != 0 || extra > HANDOFF_MAX_EXTRA ||
	    extra > pv->rcap || (!bind && s->session_id == 0) ||
	    (bind && extra == 0) || c->dialect == 0) {
		memset(s, 0, sizeof(*s));
		return -EBADMSG;
	}
	memcpy(pv->rbuf, x, extra);
	pv->rlen = extra;
	return 0;
}

/*
 * The client's address is the master's word (getpeername of the real
 * socket, authmsg_ident peer), not the gate's or the owner's text, which
 * handoff_decode put there: the one a relayed or headless connection's
 * share host lists judge (worker/smb2_tree.c).  None: c->peer keeps the
 * text for display, and those lists refuse.
 */
static void
handoff_peer(struct conn *c, const struct authmsg_ident *id)
{
	c->priv->peer_vouched = id->peer[0] != '\0';
	if (c->priv->peer_vouched)
		snprintf(c->peer, sizeof(c->peer), "%s", id->peer);
}

int
handoff_accept(struct conn *c, const uint8_t *p, size_t len, uid_t self)
{
	struct session *s = &c->sessions[0];
	struct authmsg_ident id;

	if (len < AUTHMSG_IDENT_LEN || authmsg_ident_decode(&id, p, len) != 0)
		return -EBADMSG;
	if (id.kind == AUTHMSG_IDENT_RELAY) {
		/* Another user's session on a connection it does not hold. */
		if (relay_accept(c, &id, p + AUTHMSG_IDENT_LEN,
		    len - AUTHMSG_IDENT_LEN, self) != 0)
			return -EBADMSG;
		handoff_peer(c, &id);
		return 0;
	}
	if (handoff_decode(c, p + AUTHMSG_IDENT_LEN, len - AUTHMSG_IDENT_LEN) != 0)
		return -EBADMSG;
	handoff_peer(c, &id);
	if (id.kind == AUTHMSG_IDENT_NONE) {
		if (s->in_use)
			goto bad;	/* a session the master did not vouch for */
		return 0;
	}
	if (!s->in_use || id.uid != (uint32_t)self)
		goto bad;
	if (s->uid != id.uid || s->gid != id.gid ||
	    strcmp(s->user, id.user) != 0 ||
	    s->guest != ((id.flags & AUTH_FLAG_GUEST) != 0) ||
	    s->anonymous != ((id.flags & AUTH_FLAG_ANONYMOUS) != 0))
		log_warnx("%s: the gate's hand-off named %s (uid %u%s%s); served "
		    "as the master's verdict: %s (uid %u)", c->peer, s->user,
		    (unsigned)s->uid, s->guest ? ", guest" : "",
		    s->anonymous ? ", anonymous" : "",
		    id.user[0] ? id.user : "(anonymous)", (unsigned)id.uid);
	snprintf(s->user, sizeof(s->user), "%s", id.user);
	s->uid = id.uid;
	s->gid = id.gid;
	s->guest = (id.flags & AUTH_FLAG_GUEST) != 0;
	s->anonymous = (id.flags & AUTH_FLAG_ANONYMOUS) != 0;
	if (!s->guest && !s->anonymous)
		c->priv->user_authed = 1;
	return 0;
bad:
	memset(s, 0, sizeof(*s));
	return -EBADMSG;
}
