/*
 * Several users on one connection: how a session of another user comes to
 * be served by that user's worker (worker/relay.h).  The owner brokers
 * the relay through the master (relay_start); that user's worker takes
 * it (relay_accept).  The frames that follow are worker/relay.c's.
 */

/*
 * How it works.
 *
 * - How a session gets there.  The owner runs NEGOTIATE/CHALLENGE of
 *   the new session as for any session and sends the AUTHENTICATE to
 *   the master (MSG_AUTH_REQ).  The verdict names another uid: the
 *   master keeps it whole (daemon/route.c route_relay_record, under the
 *   owner's pid and the request id, once, 10 s) and answers the owner
 *   without the key and with AUTH_FLAG_RELAY.  The owner (relay_start,
 *   below) makes a SOCK_STREAM socketpair and sends MSG_RELAY: one end,
 *   the request id, the relay state (session id, PreviousSessionId, the
 *   NTLMSSP NEGOTIATE and CHALLENGE and SPNEGO mechTypes for the MIC,
 *   the 3.1.1 session hash before this request) and the connection
 *   state (worker/handoff.h, no session, the SESSION_SETUP frame as its
 *   extra bytes, the client's address and port).  The master
 *   (route_relay) takes the kept verdict, picks or starts a worker of
 *   that uid (max workers per user respected) and sends MSG_CONN with
 *   AUTHMSG_IDENT_RELAY, the whole verdict (the session key; for
 *   Kerberos also the whole key, the ticket's lifetime, the AP-REP and
 *   the helper's mechListMIC) and the owner's payload; its
 *   MSG_HANDOFF_DONE tells the owner (which waits for it, as for a
 *   verdict). The other worker (relay_accept) makes the session in
 *   progress from the relay state and runs the SESSION_SETUP as if it
 *   had arrived there: the master's verdict stands in for the
 *   MSG_AUTH_REQ, the keys are derived there, the MIC and the final
 *   response's signature made there.  Kerberos
 *   (worker/smb2_session_krb.c) goes the same way at the leg whose
 *   answer is the verdict: the AP-REQ of one leg (whose request has
 *   SessionId 0: the relayed worker takes the session the owner made)
 *   or two, or the client's mechListMIC of three (the relay state
 *   carries the chosen mechanism and the helper's context; the first
 *   legs ran on the owner, which holds no key for them).  The owner
 *   drops its slot of the session and sends no answer to that request
 *   (its message id is charged already).
 * - Security.  The owner never holds another user's key: the master
 *   gives it only to the worker of the verdict's uid (DESIGN.md,
 *   security model), so the owner cannot sign or encrypt as that user.
 *   But the owner can inject any bytes into the relay, so the session is
 *   safe only if its worker refuses every request that does not prove
 *   itself with the session's keys: a relayed session has signing
 *   required.  The other way round, the owner passes the relayed
 *   worker's answers to the client, which finds the request an answer
 *   is for by its message id: so the owner passes an answer only when
 *   it names the relay's session (relay_answer_next) and only the ids
 *   of requests it forwarded to that relay (worker/relay_mids.c).  It
 *   can check that in the clear only.  Hence the rule (relay_allowed):
 *   a session of another user is relayed when the connection requires
 *   signing (`server signing = mandatory`, or a client that requires
 *   it, as Windows 11 24H2 does), its traffic signed in the clear, or
 *   on 3.x sealed unless `relay sealed sessions = no` (relay_sealed_ok:
 *   without signing required the session is marked ENCRYPT_DATA,
 *   sess_keys).  Otherwise the owner answers ACCESS_DENIED and logs
 *   which settings allow it.  With `relay sealed sessions = no` a
 *   relay stays in the clear: the relayed worker never seals
 *   (sess_keys, smb2_tree.c) and a sealed frame the client sends on it
 *   unasked drops the connection (relay_route).  A compromised owner
 *   can still drop or delay the
 *   relayed frames, replay one (which ends the relay) or garble one
 *   (refused by its signature): a denial of service on that session, and
 *   it can grant the client bad credits; a compromised relayed worker
 *   can lie about credits and ids (the owner's window then refuses the
 *   client, a denial of service on that connection), and, on a sealed
 *   relay only, answer another session's request with data of its
 *   choosing where the client does not check whose key sealed the
 *   answer (MS-SMB2 3.2.5.1.3 skips that check once decryption
 *   succeeds; the Linux client does not make it; Samba's does).
 *   Re-authentication of a session as another user keeps the session
 *   where it is, marked (worker/smb2_reauth.c): its opens would have to
 *   move between workers.  An anonymous
 *   session is relayed like a user's (to the guest account's worker):
 *   its key is no secret from the owner, which saw the exchange, but
 *   anybody may be anonymous, so acting as it gains the owner nothing.
 * - Operations.  usmbctl status shows a relayed session under the worker
 *   serving it and, from the master's own table (daemon/msess.c
 *   msess_relay_expect, msess_owner: MSG_RELAY names the session id, and
 *   only a session that worker then announces gets the owner), the
 *   worker holding the socket: socket_pid in --json, "(relayed by PID)"
 *   in the table.  Its client address and port are the owner's (the
 *   hand-off's: the relayed worker's socket is a socketpair), the same
 *   as the owner shows for its own sessions.  kill-session reaches the
 *   serving worker like any session (its relayed connection, left with
 *   no session, closes, and the owner forgets the relay); kill-client by
 *   address, or address and port, drops both ends.
 */
#include "worker/relay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/handoff.h"
#include "worker/relay_priv.h"
#include "worker/worker.h"

static uint8_t relay_obuf[MSG_MAX_PAYLOAD];
static uint8_t relay_frame[SMB2_FRAME_LEN + HANDOFF_MAX_EXTRA];

/* ---- the owner ---- */

/*
 * May a relayed session of this connection seal its traffic?  Not when
 * the admin said no: the owner cannot read a sealed answer, so it cannot
 * check that the answer is for one of that session's requests (relay.c
 * relay_next), and a client may take it for another session's.
 */
static int
relay_sealed_ok(const struct conn *c)
{
	return c->conf != NULL && c->conf->relay_sealed_sessions &&
	    c->dialect >= DIALECT_300 && c->cipher != 0;
}

/*
 * May this connection carry a session its owner cannot vouch for?  Only
 * when every request of it will be signed (the connection requires
 * signing) or, where allowed, encrypted (relay_sealed_ok: the session
 * is marked ENCRYPT_DATA): the relayed worker then verifies each request
 * with the session's keys, which the owner never holds.
 */
static int
relay_allowed(const struct conn *c)
{
	return c->signing_required || relay_sealed_ok(c);
}

ntstatus_t
relay_start(struct smb2_req *req, struct session *s,
    const struct authmsg_rep *v)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct relay_state st;
	struct relay *r;
	int sv[2] = { -1, -1 }, n, m, e = 0;
	uint32_t status = (uint32_t)-1;

	if (!relay_allowed(c)) {
		conn_warnx(c, "session of %s (uid %u) on a connection served for "
		    "uid %u refused: relayed only with `server signing = "
		    "mandatory` (or a client requiring signing), or sealed on "
		    "SMB 3 with `relay sealed sessions = yes`",
		    v->user, (unsigned)v->uid, (unsigned)user_euid());
		return STATUS_ACCESS_DENIED;
	}
	if (req->related || req->encrypted || req->next_command != 0 ||
	    req->len + SMB2_FRAME_LEN > sizeof(relay_frame) ||
	    s->auth == NULL)
		return STATUS_REQUEST_NOT_ACCEPTED;
	r = relay_slot(c);
	if (r == NULL)
		return STATUS_REQUEST_NOT_ACCEPTED;
	memset(&st, 0, sizeof(st));
	st.session_id = s->session_id;
	st.previous_id = s->previous_id;
	st.spnego = (uint8_t)s->auth->spnego;
	st.negotiate = s->auth->negotiate;
	st.negotiate_len = (uint16_t)s->auth->negotiate_len;
	st.challenge = s->auth->challenge;
	st.challenge_len = (uint16_t)s->auth->challenge_len;
	st.mech_types = s->auth->mech_types;
	st.mech_types_len = (uint16_t)s->auth->mech_types_len;
	memcpy(st.preauth, pv->relay_preauth, sizeof(st.preauth));
	st.krb_mech = (uint8_t)s->auth->krb_mech;
	st.krb_mic = (uint8_t)s->auth->krb_mic;
	st.krb_ctx = s->auth->krb_ctx;
	le64_put(relay_obuf, s->session_id);	/* MSG_RELAY: daemon/msg.h */
	n = relay_state_encode(&st, relay_obuf + 8, sizeof(relay_obuf) - 8);
	n = n < 0 ? n : n + 8;
	smb2_frame_encode(relay_frame, (uint32_t)req->len);
	memcpy(relay_frame + SMB2_FRAME_LEN, req->hdr, req->len);
	/* Room for what the master puts ahead: the identity and verdict. */
	m = n < 0 ? -1 : handoff_encode(c, NULL, relay_frame,
	    SMB2_FRAME_LEN + req->len, relay_obuf + n, sizeof(relay_obuf) -
	    (AUTHMSG_IDENT_LEN + 4 + AUTHMSG_REP_MAX) - (size_t)n);
	if (m < 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) < 0) {
		log_warn("relay socketpair");
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	/* Its ring goes first, before the other end leaves this worker. */
	if ((r->ring_fd = relay_ring_create()) < 0 ||
	    (e = relay_ring_send(sv[0], r->ring_fd)) < 0) {
		log_warnx("relay ring: %s", strerror(r->ring_fd < 0 ?
		    -r->ring_fd : -e));
		goto fail;
	}
	r->rbuf = malloc(RELAY_RBUF);
	r->inflight = calloc(1, sizeof(*r->inflight));
	r->mids = calloc(1, sizeof(*r->mids));
	if (r->rbuf == NULL || r->inflight == NULL || r->mids == NULL ||
	    relay_wq_init(&r->wq) < 0 ||
	    relay_mids_add(r->mids, req->message_id) < 0)
		goto fail;
	status = worker_relay_handoff(c->fd, sv[1], pv->auth_id, relay_obuf,
	    (size_t)(n + m));
	close(sv[1]);
	sv[1] = -1;
	if (status != 0)
		goto refused;
	r->sid = r->session_id = s->session_id;
	r->uid = v->uid;
	snprintf(r->user, sizeof(r->user), "%s", v->user);
	r->setup_mid = req->message_id;
	r->sealed_ok = relay_sealed_ok(c);
	if (relay_attach(c, r, sv[0]) < 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	log_info("%s: session %llx of %s served by a worker of uid %u, "
	    "relayed", c->peer, (unsigned long long)s->session_id,
	    v->user[0] != '\0' ? v->user : "(anonymous)", (unsigned)v->uid);
	/* It lives there now; its worker answers this request. */
	conn_session_free(c, s);
	req->sess = NULL;
	pv->no_response = 1;
	return STATUS_SUCCESS;
refused:
	log_warnx("%s: session of %s could not be relayed (status %08x)",
	    c->peer, v->user[0] != '\0' ? v->user : "(anonymous)", status);
fail:
	free(r->rbuf);
	r->rbuf = NULL;
	free(r->inflight);
	r->inflight = NULL;
	free(r->mids);
	r->mids = NULL;
	relay_wq_free(&r->wq);
	if (r->ring_fd >= 0)
		close(r->ring_fd);
	r->ring_fd = -1;
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return status != 0 && status != (uint32_t)-1 ? status :
	    STATUS_INSUFF_SERVER_RESOURCES;
}

/* ---- the relayed worker ---- */

int
relay_accept(struct conn *c, const struct authmsg_ident *id,
    const uint8_t *p, size_t len, uid_t self)
{
	struct conn_private *pv = c->priv;
	struct session *s = &c->sessions[0];
	struct relay_state st;
	struct authmsg_rep *v;
	uint32_t vlen;
	int n;

	/* A real user's or an anonymous session: a guest has no key. */
	if (id->uid != (uint32_t)self || len < 4 ||
	    (id->flags & AUTH_FLAG_GUEST) ||
	    (id->user[0] == '\0') != ((id->flags & AUTH_FLAG_ANONYMOUS) != 0))
		return -EBADMSG;
	vlen = le32_get(p);
	if (vlen > AUTHMSG_REP_MAX || vlen > len - 4)
		return -EBADMSG;
	n = relay_state_decode(&st, p + 4 + vlen, len - 4 - vlen);
	if (n < 0 || handoff_decode(c, p + 4 + vlen + n,
	    len - 4 - vlen - (size_t)n) != 0 || s->in_use)
		return -EBADMSG;
	v = calloc(1, sizeof(*v));
	s->auth = calloc(1, sizeof(*s->auth));
	if (v == NULL || s->auth == NULL ||
	    authmsg_rep_decode(v, p + 4, vlen) != 0 ||
	    v->status != 0 || v->uid != id->uid || v->gid != id->gid ||
	    v->flags != id->flags || strcmp(v->user, id->user) != 0) {
		/* The verdict is the identity's, as the master vouches. */
		if (v != NULL)
			explicit_bzero(v, sizeof(*v));
		free(v);
		free(s->auth);
		s->auth = NULL;
		return -EBADMSG;
	}
	pv->relay_verdict = v;
	pv->relayed = 1;
	/*
	 * The owner serves another uid than this worker, and guest and
	 * anonymous sessions are the guest account's: it got the
	 * connection with a real user's session, so the connection has
	 * been authenticated (conn_private.user_authed).
	 */
	pv->user_authed = 1;
	/* The window stays the owner's: here, only grants and replays. */
	memset(pv->cred.bitmap, 0, sizeof(pv->cred.bitmap));
	pv->cred.low = 0;
	s->in_use = 1;
	s->state = SESS_IN_PROGRESS;
	s->session_id = st.session_id;
	s->previous_id = st.previous_id;
	memcpy(s->preauth, st.preauth, sizeof(s->preauth));
	s->auth->step = 1;
	s->auth->spnego = st.spnego;
	memcpy(s->auth->negotiate, st.negotiate, st.negotiate_len);
	s->auth->negotiate_len = st.negotiate_len;
	memcpy(s->auth->challenge, st.challenge, st.challenge_len);
	s->auth->challenge_len = st.challenge_len;
	memcpy(s->auth->mech_types, st.mech_types, st.mech_types_len);
	s->auth->mech_types_len = st.mech_types_len;
	s->auth->krb_mech = st.krb_mech;
	s->auth->krb_mic = st.krb_mic;
	s->auth->krb_ctx = st.krb_ctx;
	return 0;
}
