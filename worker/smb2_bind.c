/*
 * Judging a channel binding (MS-SMB2 3.3.5.5): in this worker, for a
 * request on one of its connections (sess_bind), and for a gate that asks
 * before it hands a socket over (smb2_bind_check_serve, worker/bindcheck.h).
 * Both run the same checks (sess_bind_judge), in the order Windows and
 * Samba answer; the rest of the story (routing, channels, headless homes)
 * is at the top of worker/smb2_session.c.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/neg_ctx.h"
#include "proto/sign.h"
#include "proto/smb2_hdr.h"
#include "worker/bindcheck.h"
#include "worker/conn_priv.h"
#include "worker/smb2_session_priv.h"
#include "worker/worker.h"

static void
sess_where_conn(struct conn *c, void *arg)
{
	struct sess_where *w = arg;
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS && w->s == NULL; i++)
		if (c->sessions[i].in_use && c->sessions[i].state == SESS_VALID &&
		    c->sessions[i].bound == NULL &&	/* the session, not a channel */
		    c->sessions[i].session_id == w->id) {
			w->c = c;
			w->s = &c->sessions[i];
		}
}

void
sess_where_find(uint64_t id, struct sess_where *w)
{
	w->id = id;
	w->c = NULL;
	w->s = NULL;
	worker_foreach_conn(sess_where_conn, w);
}

/*
 * May a connection that negotiated ch become a channel of the session
 * served on connection sc (MS-SMB2 3.3.5.5.2)?  The checks run in the
 * order Windows and Samba answer them, since clients (and smbtorture's
 * bind_negative_* tests) tell the failures apart by status: a signing
 * algorithm that differs when either side uses AES-GMAC, an SMB 2 channel,
 * a different cipher, a different dialect (a 3.x channel of a session of
 * a 2.x connection included).  STATUS_SUCCESS: the binding may
 * authenticate.
 */
static ntstatus_t
sess_bind_match(const struct sess_chan *ch, const struct conn *sc)
{
	if (sc->signing_algo == SMB2_SIGNING_AES_GMAC &&
	    ch->signing_algo != sc->signing_algo)
		return STATUS_REQUEST_OUT_OF_SEQUENCE;
	if (ch->signing_algo == SMB2_SIGNING_AES_GMAC &&
	    ch->signing_algo != sc->signing_algo)
		return STATUS_NOT_SUPPORTED;
	if (ch->dialect < DIALECT_300)
		return STATUS_REQUEST_NOT_ACCEPTED;	/* no channels in SMB 2 */
	if (ch->cipher != sc->cipher)
		return STATUS_INVALID_PARAMETER;
	if (ch->dialect != sc->dialect)
		return STATUS_INVALID_PARAMETER;
	return STATUS_SUCCESS;
}

/* At most one line a second: a client may send these as fast as it likes. */
static void
sess_bind_warn(const char *peer, uint64_t sid)
{
	static time_t last;
	static unsigned quiet;
	time_t now = time(NULL);

	if (now == last) {
		quiet++;
		return;
	}
	log_warnx("%s: binding to session %llx: bad or no signature%s", peer,
	    (unsigned long long)sid, quiet > 0 ? " (and others not logged)" :
	    "");
	last = now;
	quiet = 0;
}

/*
 * The checks of a SESSION_SETUP naming session w->s from a connection that
 * does not carry it (own: that connection when it is in this worker, NULL
 * when a gate asks), with or without the binding flag.  Its signature is
 * checked with the session's key before anything is answered from the
 * session (no signing oracle for a stranger).  Returns the status: a
 * refusal, or STATUS_SUCCESS (a binding that may authenticate); *sign says
 * whether the answer is signed with the session's key (clients check it).
 */
ntstatus_t
sess_bind_judge(const struct sess_chan *ch, const struct conn *own,
    int binding, const uint8_t *hdr, size_t len, const struct sess_where *w,
    int *sign)
{
	struct session *s = w->s;
	uint32_t flags;
	ntstatus_t st;

	*sign = 0;
	if (s == NULL)
		return STATUS_USER_SESSION_DELETED;
	if (w->c == own || s->anonymous || s->guest || !s->signing)
		return STATUS_REQUEST_NOT_ACCEPTED;
	flags = le32_get(hdr + 16);
	if (!(flags & SMB2_FLAGS_SIGNED) ||
	    smb2_verify_ctx(&s->sign_cx, w->c->signing_algo, s->signing_key,
	    hdr, len) != 0) {
		sess_bind_warn(own != NULL ? own->peer : "a gate's client",
		    s->session_id);
		return ch->dialect >= DIALECT_300 &&
		    ch->dialect == w->c->dialect &&
		    !(flags & SMB2_FLAGS_SIGNED) ? STATUS_INVALID_PARAMETER :
		    STATUS_ACCESS_DENIED;
	}
	*sign = 1;
	if (!binding)
		return STATUS_USER_SESSION_DELETED;	/* not bound to this channel */
	st = sess_bind_match(ch, w->c);
	/* A gate's connection cannot carry a channel of s yet. */
	if (st == STATUS_SUCCESS && own == NULL && s->nchan >= CONN_MAX_CHANNELS)
		st = STATUS_INSUFFICIENT_RESOURCES;	/* as Windows */
	return st;
}

/*
 * A SESSION_SETUP with SMB2_SESSION_FLAG_BINDING (binding), or a signed one
 * naming a session this connection does not carry, on one of this
 * worker's connections: a new channel for a session of this worker,
 * handed over by a gate after smb2_bind_check_serve let it through (or a
 * connection of the same user already here).  A refusal is signed as the
 * session signs.  One that passes gets a channel slot (*out) that runs
 * NTLMSSP like a login, signing with the session's key until the
 * channel's own key exists (sess_bind_keys).
 */
ntstatus_t
sess_bind(struct smb2_req *req, int binding, struct session **out)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct sess_chan sc = { c->dialect, c->signing_algo, c->cipher };
	struct sess_where w;
	struct session *ch;
	ntstatus_t st;
	int sign;

	*out = NULL;
	if (pv->role == CONN_ROLE_GATE)
		return STATUS_USER_SESSION_DELETED;	/* the master knows none */
	sess_where_find(req->session_id, &w);
	st = sess_bind_judge(&sc, c, binding, req->hdr, req->len, &w, &sign);
	if (!sign)
		return st;
	if (st == STATUS_SUCCESS) {
		ch = conn_session_find(c, w.s->session_id);
		if (ch != NULL && ch->binding && ch->state == SESS_IN_PROGRESS) {
			*out = ch;	/* the exchange goes on */
			return STATUS_SUCCESS;
		}
		if (ch != NULL)
			st = STATUS_ACCESS_DENIED;	/* bound here already */
		else if (w.s->nchan >= CONN_MAX_CHANNELS)
			st = STATUS_INSUFFICIENT_RESOURCES;	/* as Windows */
		else if ((ch = conn_session_new(c)) == NULL)
			st = STATUS_INSUFF_SERVER_RESOURCES;
		else {
			ch->session_id = w.s->session_id;
			ch->binding = 1;
			ch->signing = 1;
			ch->sign_algo = w.c->signing_algo;
			memcpy(ch->signing_key, w.s->signing_key,
			    sizeof(ch->signing_key));
			/* 3.1.1: this connection's hash goes into the channel's key. */
			if (c->dialect == DIALECT_311)
				memcpy(ch->preauth, pv->preauth, sizeof(ch->preauth));
			*out = ch;
			return STATUS_SUCCESS;
		}
	}
	/* A signed answer: a channel slot with the session's key, freed
	 * once the response is out. */
	ch = conn_session_new(c);
	if (ch == NULL)
		return st;
	ch->session_id = w.s->session_id;
	ch->state = SESS_IN_PROGRESS;
	ch->signing = 1;
	ch->sign_other = 1;
	ch->sign_algo = w.c->signing_algo;
	memcpy(ch->signing_key, w.s->signing_key, sizeof(ch->signing_key));
	req->sess = ch;
	pv->sign_final = ch;
	pv->free_after = ch;
	return st;
}

/*
 * The refusal of request h (a lone SESSION_SETUP of session sid): header
 * and error body as dispatch writes them (dispatch_rsp_hdr,
 * dispatch_error_body), CreditResponse as the gate grants it.
 */
static void
bind_check_refusal(const struct smb2_hdr *h, uint64_t sid, uint16_t credits,
    ntstatus_t st, uint8_t rsp[BINDCHECK_RSP_LEN])
{
	struct smb2_hdr o;

	memset(&o, 0, sizeof(o));
	o.credit_charge = h->credit_charge;
	o.status = st;
	o.command = SMB2_SESSION_SETUP;
	o.credits = credits;
	o.flags = SMB2_FLAGS_SERVER_TO_REDIR |
	    (h->flags & SMB2_FLAGS_PRIORITY_MASK);
	o.message_id = h->message_id;
	o.process_id = h->process_id;
	o.tree_id = h->tree_id;
	o.session_id = sid;
	smb2_hdr_encode(rsp, &o);
	/* MS-SMB2 2.2.2: StructureSize 9, no error contexts, one byte. */
	memset(rsp + SMB2_HDR_LEN, 0, BINDCHECK_RSP_LEN - SMB2_HDR_LEN);
	le16_put(rsp + SMB2_HDR_LEN, 9);
}

int
smb2_bind_check_serve(const uint8_t *p, size_t len, uint8_t *out, size_t cap)
{
	struct bindcheck_req q;
	struct bindcheck_rep rep;
	struct sess_chan sc;
	struct sess_where w;
	struct smb2_hdr h;
	uint8_t rsp[BINDCHECK_RSP_LEN];
	int binding, sign;

	memset(&rep, 0, sizeof(rep));
	if (bindcheck_req_decode(&q, p, len) != 0 ||
	    smb2_hdr_decode(q.msg, q.msg_len, &h) != 0 ||
	    h.command != SMB2_SESSION_SETUP || h.session_id != q.sid ||
	    (h.flags & (SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND)) ||
	    q.msg_len < SMB2_HDR_LEN + 3) {
		/* The gate ends the connection. */
		rep.status = STATUS_INVALID_PARAMETER;
		return bindcheck_rep_encode(&rep, out, cap);
	}
	binding = (q.msg[SMB2_HDR_LEN + 2] & SMB2_SESSION_FLAG_BINDING) != 0;
	sc.dialect = q.dialect;
	sc.signing_algo = q.signing_algo;
	sc.cipher = q.cipher;
	sess_where_find(q.sid, &w);
	rep.status = sess_bind_judge(&sc, NULL, binding, q.msg, q.msg_len, &w,
	    &sign);
	/*
	 * No such session here, or a setup without the binding flag that
	 * cannot be answered signed: the gate answers it as for a session
	 * it does not know (MS-SMB2 3.3.5.5: USER_SESSION_DELETED).  Or a
	 * binding that may go on: route it.
	 */
	if (w.s == NULL || (!binding && !sign)) {
		rep.status = STATUS_USER_SESSION_DELETED;
		return bindcheck_rep_encode(&rep, out, cap);
	}
	if (rep.status == STATUS_SUCCESS)
		return bindcheck_rep_encode(&rep, out, cap);
	bind_check_refusal(&h, q.sid, q.credits, rep.status, rsp);
	if (sign && smb2_sign_ctx(&w.s->sign_cx, w.c->signing_algo,
	    w.s->signing_key, rsp, sizeof(rsp)) != 0) {
		rep.status = STATUS_INVALID_PARAMETER;
		return bindcheck_rep_encode(&rep, out, cap);
	}
	log_debug(3, "binding to session %llx asked by a gate: %#x%s",
	    (unsigned long long)q.sid, rep.status, sign ? ", signed" : "");
	rep.rsp = rsp;
	rep.rsp_len = sizeof(rsp);
	return bindcheck_rep_encode(&rep, out, cap);
}

int
smb2_bind_check_msg(int chan, const struct msg *m)
{
	uint8_t out[16 + BINDCHECK_RSP_LEN];
	int n;

	if (m->type != MSG_BIND_CHECK)
		return 0;
	n = smb2_bind_check_serve(m->payload, m->len, out, sizeof(out));
	if (n > 0)
		(void)msg_send(chan, MSG_BIND_CHECK_REP, m->id, out, (size_t)n, -1);
	return 1;
}
