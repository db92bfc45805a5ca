/*
 * SESSION_SETUP (MS-SMB2 2.2.5, 2.2.6, 3.3.5.5): SPNEGO wrapping NTLMSSP,
 * the password check by the master (conn->priv->auth), key derivation,
 * signing and encryption requirements, guest and anonymous sessions and
 * re-authentication.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/kdf.h"
#include "proto/neg_ctx.h"
#include "proto/ntlmssp.h"
#include "proto/preauth.h"
#include "proto/sign.h"
#include "proto/spnego.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/relay.h"
#include "worker/smb2_session_priv.h"
#include "worker/state.h"
#include "worker/worker.h"

/*
 * Channel binding (MS-SMB2 3.3.5.5).  A SESSION_SETUP with
 * SMB2_SESSION_FLAG_BINDING for session S, or a signed one naming S, on a
 * gate's connection cannot be judged by the gate (it has no keys).  It
 * asks first, and the socket moves only for a binding that passes every
 * check but the authentication: MSG_BIND_CHECK (worker/bindcheck.h: S,
 * the connection's dialect, signing algorithm and cipher, the
 * CreditResponse the gate grants, the request) goes to the master, which
 * looks S up in its own session table (daemon/msess.c, filled from
 * MSG_SESSION_UP of the workers it started) and forwards it to the live
 * worker that announced S; unknown S: STATUS_USER_SESSION_DELETED, and
 * the gate answers that itself and keeps the client.  The worker
 * (worker/smb2_bind.c, sess_bind_judge) runs the checks below and sends
 * a refusal back whole (header and error body, signed with S's key when
 * the request verified), which the gate writes as it is (after checking
 * its ids and credits): a 2.x binding, a 3.x binding of a 2.x
 * connection's session, any mismatch, a bad signature is refused before
 * any socket moves.  Only STATUS_SUCCESS lets the gate send
 * MSG_HANDOFF_BIND (fd; payload u64 S + the connection state with no
 * session, worker/handoff.h, the binding request first among the extra
 * bytes), routed like the check, as MSG_CONN, and the worker judges it
 * again (sess_bind).  The checks verify the request's signature
 * with S's key (the algorithm of S's own connection) before answering
 * anything from S, and sign the refusal the same way (clients check
 * it): no/bad signature -> ACCESS_DENIED (INVALID_PARAMETER when
 * unsigned on a same-dialect 3.x channel), unsigned.  Then, in the order
 * Windows and Samba answer (sess_bind_match; smbtorture's
 * bind_negative_* tell them apart): S signs with AES-GMAC and the
 * channel does not -> REQUEST_OUT_OF_SEQUENCE; the channel signs with
 * AES-GMAC and S does not -> NOT_SUPPORTED; SMB 2.x channel ->
 * REQUEST_NOT_ACCEPTED (3.3.5.5: a 2.0.2 or 2.1 connection does not
 * bind); other cipher -> INVALID_PARAMETER; other dialect (a 3.x channel
 * of a session of a 2.x connection, 3.3.5.5.2) -> INVALID_PARAMETER.  A
 * non-binding SESSION_SETUP naming S on a connection that does not
 * carry S -> USER_SESSION_DELETED (a signed request gets it with
 * SMB2_FLAGS_SIGNED set and no signature: clients that require signing
 * look for the flag, not the signature).  A binding that passes every
 * check authenticates like a login: a channel slot (a struct session on
 * the new connection with S's id, `binding` set) runs NTLMSSP, the
 * AUTHENTICATE going to the master as MSG_AUTH_REQ; the verdict must be
 * the worker's uid and S's, not guest nor anonymous, else
 * ACCESS_DENIED; a failed logon -> its status, S untouched.  The
 * binding legs are verified and answered with S's key and algorithm
 * (MS-SMB2 3.3.4.1.1); the final SUCCESS with the channel's key,
 * derived from this authentication's session key (3.1.1: with the
 * preauth hash of this connection's binding exchange) and used with
 * this connection's signing algorithm.  A second binding of S on a
 * connection that already carries it -> ACCESS_DENIED.
 * SMB2_GLOBAL_CAP_MULTI_CHANNEL is advertised for 3.x when `max workers
 * per user` is 1 (the channels of a session must meet in one worker;
 * with several workers per user a binding routed to another worker
 * finds no S and gets USER_SESSION_DELETED). Serving (worker/conn.h,
 * struct session bound/chan): S, its trees and opens stay on the
 * connection that authenticated it (its home).  A channel slot points
 * at S and its home (bound, bound_conn); S lists its slots (chan[], at
 * most CONN_MAX_CHANNELS).  dispatch finds the slot by id on the
 * arriving connection, verifies with the channel's key, then serves the
 * request with req->conn = home and req->sess = S (trees and opens
 * found there, O(1) as before) and req->chan = the arriving connection:
 * the response, interim and final async responses (dispatch_park parks
 * on req->chan) go out there, signed with the channel's key; encryption
 * uses S's keys.  Wakes and ends of parked requests on S's opens
 * (conn_pending_wake_file, conn_pending_end_open) also reach the
 * channels' connections.  Breaks go to the open's home connection.
 * Re-authentication through a channel runs on its slot: a failed logon
 * ends S everywhere; a good one that came unsigned (the channel's key
 * not proven) -> ACCESS_DENIED, S kept.  LOGOFF on any channel ends S
 * everywhere.  A channel's connection closing frees only its slot (its
 * parked requests end).  S outlives its home connection while another
 * channel of S is alive (MS-SMB2 3.3.7.1): when the home's socket is
 * lost, worker/loop.c wk_close asks conn_keep_headless
 * (worker/conn_headless.c), and the home's struct conn stays, headless
 * (conn_private.headless; its fd shut down but kept open, so its
 * wk.conns slot is not reused; out of epoll; no longer counted in
 * MSG_CONN_COUNT), as the store of S's trees, opens and signing state:
 * channel slots keep pointing at it (bound_conn), so nothing moves and
 * no pointer changes.  There, output is discarded (conn_flush), break
 * notices go to a live channel of the open's session
 * (conn_notice_queue), the other sessions and channel slots it held end
 * as on a disconnect, and of its parked requests only CREATEs waiting
 * for a break (PARK_BREAK) of a kept session go on: the open they make
 * is what a replay of that CREATE on another channel gets
 * (worker/durable.c; FILE_NOT_AVAILABLE while still parked;
 * smbtorture's smb2.replay.dhv2-pending2*-sane).  When no session of it
 * has a channel left (the last one closed, LOGOFF, kill-session,
 * kill-client) the loop's sweep (wk_headless_sweep) frees it: the usual
 * disconnect (durable handles kept), one loop turn later.  Not done: a
 * CREATE parked on a channel that is not S's home ends with that
 * channel (its slot would have to move to a live connection and answer
 * nowhere); smb2.replay.dhv2-pending3* and smb2.multichannel's
 * oplocks.test2/3 and leases.test2/4 need a channel blocked with
 * iptables or Samba's FSCTL_SMBTORTURE hook (Samba 4.17 fails them
 * too). An unbound connection in a worker is served like a gate's:
 * anything but SESSION_SETUP gets STATUS_USER_SESSION_DELETED, and it
 * is closed after CONN_BIND_MAX_FAILS failed setups or
 * CONN_BIND_LOGIN_SECS.
 */

/*
 * Re-authentication (MS-SMB2 3.3.5.5.2: SESSION_SETUP naming a valid
 * session) runs NTLMSSP again on the worker, the AUTHENTICATE going to
 * the master as MSG_AUTH_REQ.  Same uid: success, and the session keeps
 * its first keys, trees and opens.  Another uid, or anonymous or guest
 * (Windows and Samba allow it): success too for a session of a real
 * user on its home connection; the session stays in this worker with its
 * keys, marked reauth_other: its trees and handles keep the access they
 * were granted, anything needing new authority is refused until a
 * re-authentication as its own user (worker/smb2_reauth.c); the same
 * with Kerberos (worker/smb2_session_krb.c).  Otherwise (an anonymous
 * or guest session, a channel):
 * STATUS_ACCESS_DENIED and a log line, the session as it was.  A failed
 * logon (wrong password) removes the session, as Windows does.
 */

/*
 * Session expiry (MS-SMB2 3.3.5.5.3, 3.3.5.2.9).  Windows and Samba
 * expire a session only at the end of its Kerberos ticket; NTLM carries
 * no lifetime, so an NTLM session has expire = 0 and there is no
 * configuration key for it.  A Kerberos session (worker/smb2_session_krb.c)
 * gets the ticket's end; the check in worker/dispatch.c answers
 * STATUS_NETWORK_SESSION_EXPIRED from then on until a re-authentication
 * with a fresh ticket sets the session valid again, trees, opens and
 * locks kept.  No timer stands in for it: the next request sees it.
 */

#define SESS_RSP_BUF_OFF	(SMB2_HDR_LEN + 8)

struct sess_prev {
	uint64_t	 id;
	uid_t		 uid;
	const struct session *keep;
	struct conn	*answering;	/* its SESSION_SETUP answer is being built */
};

static void
sess_prev_conn(struct conn *c, void *arg)
{
	struct sess_prev *p = arg;
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS; i++) {
		struct session *o = &c->sessions[i];

		if (!o->in_use || o == p->keep || o->session_id != p->id ||
		    o->bound != NULL ||	/* a channel goes with its session */
		    o->state != SESS_VALID || o->uid != p->uid ||
		    o->anonymous || o->guest || o->reauth_other)
			continue;
		log_info("%s: session %llx of %s replaced by a new session "
		    "(PreviousSessionId)", c->peer,
		    (unsigned long long)o->session_id, o->user);
		/* Its next request gets STATUS_USER_SESSION_DELETED. */
		state_session_del(o);
		/*
		 * On the connection answering the new session's setup, the
		 * old one goes once that answer is sent (as a LOGOFF's
		 * session does): ending it answers its parked requests
		 * (NOTIFY_CLEANUP, smbtorture smb2.notify.session-reconnect),
		 * which must not be built in the send buffer that holds
		 * the setup's answer.
		 */
		if (c == p->answering && c->priv->free_after == NULL)
			c->priv->free_after = o;
		else
			conn_session_free(c, o);
	}
}

static void
sess_replace_previous(struct conn *c, struct session *s, struct conn *answering)
{
	struct sess_prev p;

	(void)c;
	if (s->previous_id == 0 || s->previous_id == s->session_id ||
	    s->anonymous || s->guest || s->state != SESS_VALID)
		return;
	p.id = s->previous_id;
	p.uid = s->uid;
	p.keep = s;
	p.answering = answering;
	s->previous_id = 0;
	/* A worker holds every session of its one user. */
	worker_foreach_conn(sess_prev_conn, &p);
}

void
smb2_session_replace_previous(struct conn *c, struct session *s)
{
	sess_replace_previous(c, s, NULL);
}

/* Writes the response body with a security buffer of n bytes at p. */
void
sess_rsp(struct smb2_rsp *rsp, uint16_t flags, const uint8_t *p, size_t n)
{
	wcur_le16(&rsp->body, 9);
	wcur_le16(&rsp->body, flags);
	wcur_le16(&rsp->body, n > 0 ? SESS_RSP_BUF_OFF : 0);
	wcur_le16(&rsp->body, (uint16_t)n);
	if (n > 0)
		wcur_bytes(&rsp->body, p, n);
}

static void
sess_lower(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < cap && src[i] != '\0'; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
	dst[i] = '\0';
}

/* Answers an NTLMSSP NEGOTIATE with a CHALLENGE. */
static ntstatus_t
sess_challenge(struct conn *c, struct session *s, const uint8_t *tok,
    size_t toklen, struct smb2_rsp *rsp)
{
	struct sess_auth *a = s->auth;
	uint32_t flags;
	uint8_t out[1200];
	char dns[64];
	int n;

	if (ntlmssp_decode_negotiate(tok, toklen, &flags) < 0 ||
	    toklen > sizeof(a->negotiate))
		return STATUS_INVALID_PARAMETER;
	memcpy(a->negotiate, tok, toklen);
	a->negotiate_len = (uint32_t)toklen;
	if (getrandom(a->server_challenge, 8, 0) != 8)
		return STATUS_INSUFF_SERVER_RESOURCES;
	sess_lower(dns, sizeof(dns), c->conf->netbios_name);
	n = ntlmssp_build_challenge(a->challenge, sizeof(a->challenge), flags,
	    a->server_challenge, c->conf->workgroup, c->conf->netbios_name, "",
	    dns, conn_filetime());
	if (n < 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	a->challenge_len = (uint32_t)n;
	a->step = 1;
	if (a->spnego) {
		n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_INCOMPLETE, 1,
		    a->challenge, a->challenge_len, NULL, 0);
		if (n < 0)
			return STATUS_INSUFF_SERVER_RESOURCES;
		sess_rsp(rsp, 0, out, (size_t)n);
	} else
		sess_rsp(rsp, 0, a->challenge, a->challenge_len);
	if (c->dialect == DIALECT_311 && s->state == SESS_IN_PROGRESS)
		c->priv->preauth_rsp_sess = s;
	return STATUS_MORE_PROCESSING_REQUIRED;
}

/* Sets the session's keys and its signing and encryption requirements. */
ntstatus_t
sess_keys(struct conn *c, struct session *s, uint16_t *sflags)
{
	enum conf_encrypt enc = c->conf->smb_encrypt;
	struct smb2_keys k;

	*sflags = 0;
	if (s->anonymous)
		*sflags |= SMB2_SESSION_FLAG_IS_NULL;
	else if (s->guest)
		*sflags |= SMB2_SESSION_FLAG_IS_GUEST;
	if ((s->anonymous || s->guest) && enc == ENCRYPT_REQUIRED) {
		conn_warnx(c, "guest/anonymous session refused: smb encrypt = "
		    "required");
		return STATUS_ACCESS_DENIED;
	}
	if (s->guest) {
		/* No key to sign or seal with: its password was never checked. */
		s->signing = 0;
		s->signing_required = 0;
		return STATUS_SUCCESS;
	}
	/* Kerberos' AES-256 session key is longer (smb2_derive_keys_full). */
	if (s->auth != NULL && s->auth->full_key_len > 16)
		smb2_derive_keys_full(c->dialect, c->cipher, s->auth->full_key,
		    s->auth->full_key_len,
		    c->dialect == DIALECT_311 ? s->preauth : NULL, &k);
	else
		smb2_derive_keys(c->dialect, c->cipher, s->session_key,
		    c->dialect == DIALECT_311 ? s->preauth : NULL, &k);
	memcpy(s->signing_key, k.signing, sizeof(s->signing_key));
	memcpy(s->enc_key, k.enc, sizeof(s->enc_key));
	memcpy(s->dec_key, k.dec, sizeof(s->dec_key));
	memcpy(s->app_key, k.app, sizeof(s->app_key));
	explicit_bzero(&k, sizeof(k));
	s->signing = 1;
	s->signing_required = c->signing_required;
	s->cipher = c->dialect >= DIALECT_300 ? c->cipher : 0;
	if (s->anonymous && !c->priv->relayed) {
		/*
		 * The anonymous exchange's key (daemon/auth.c): as Samba 4.22,
		 * signing is never required of an anonymous session, nor is
		 * it sealed unasked; a request signed or sealed with the key
		 * is verified and answered alike, and a bad signature is
		 * refused as any (dispatch_check_signature).  The final
		 * SESSION_SETUP response goes unsigned (sess_authenticate).
		 */
		s->signing_required = 0;
		return STATUS_SUCCESS;
	}
	if (enc == ENCRYPT_REQUIRED || enc == ENCRYPT_DESIRED) {
		if (s->cipher != 0) {
			s->encrypt = enc == ENCRYPT_REQUIRED ||
			    (c->client_capabilities & SMB2_GLOBAL_CAP_ENCRYPTION) ||
			    c->dialect == DIALECT_311;
			if (s->encrypt)
				*sflags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
		} else if (enc == ENCRYPT_REQUIRED) {
			conn_warnx(c, "dialect %04x without encryption refused: "
			    "smb encrypt = required", c->dialect);
			return STATUS_ACCESS_DENIED;
		}
	}
	if (c->priv->relayed) {
		int sealed_ok = c->conf != NULL &&
		    c->conf->relay_sealed_sessions && s->cipher != 0;

		/*
		 * Relayed by a worker of another user: each request must prove
		 * itself with this session's keys, which that worker lacks
		 * (HACKING.md's security model).  Signing when the connection
		 * signs anyway (cheaper), else encryption on 3.x, which the
		 * owner passes on only with `relay sealed sessions = yes`: it
		 * cannot check a sealed answer (worker/relay_setup.c).
		 */
		s->signing_required = 1;
		if (s->encrypt && !sealed_ok) {
			if (enc == ENCRYPT_REQUIRED) {
				conn_warnx(c, "relayed session refused: `smb "
				    "encrypt = required`, and a relay carries "
				    "sealed traffic only with `relay sealed "
				    "sessions = yes`");
				return STATUS_ACCESS_DENIED;
			}
			s->encrypt = 0;		/* desired only */
			*sflags &= (uint16_t)~SMB2_SESSION_FLAG_ENCRYPT_DATA;
		}
		if (!c->signing_required && !s->encrypt) {
			if (!sealed_ok) {
				conn_warnx(c, "relayed session refused: neither "
				    "signed nor allowed to be sealed");
				return STATUS_ACCESS_DENIED;
			}
			s->encrypt = 1;
			*sflags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
		}
	}
	return STATUS_SUCCESS;
}

/*
 * A binding authenticated (MS-SMB2 3.3.5.5.3): the channel's signing key
 * comes from this authentication's session key (3.1.1: with the hash of
 * this connection's binding exchange), and the slot becomes a channel of
 * the session, which must still be here.  Encryption keys stay the
 * session's (dispatch encrypts a channel's traffic with them).
 */
ntstatus_t
sess_bind_keys(struct conn *c, struct session *ch, const uint8_t *key,
    uint16_t *sflags)
{
	struct sess_where w;
	struct smb2_keys k;

	sess_where_find(ch->session_id, &w);
	if (w.s == NULL || w.c == c)
		return STATUS_USER_SESSION_DELETED;
	if (w.s->uid != user_euid() || w.s->reauth_other)
		return STATUS_ACCESS_DENIED;	/* a channel is its user's */
	if (conn_channel_link(w.s, c, ch) < 0)
		return STATUS_INSUFFICIENT_RESOURCES;
	ch->bound_conn = w.c;
	smb2_derive_keys(c->dialect, c->cipher, key,
	    c->dialect == DIALECT_311 ? ch->preauth : NULL, &k);
	memcpy(ch->signing_key, k.signing, sizeof(ch->signing_key));
	explicit_bzero(&k, sizeof(k));
	snprintf(ch->user, sizeof(ch->user), "%s", w.s->user);
	ch->uid = w.s->uid;
	ch->gid = w.s->gid;
	ch->signing = 1;
	/* The channel's key signs with this connection's algorithm (the
	 * binding exchange used the session's). */
	ch->sign_algo = c->signing_algo;
	ch->signing_required = w.s->signing_required;
	ch->encrypt = w.s->encrypt;
	ch->cipher = w.s->cipher;
	ch->binding = 0;
	*sflags = w.s->encrypt ? SMB2_SESSION_FLAG_ENCRYPT_DATA : 0;
	return STATUS_SUCCESS;
}

/*
 * A re-authentication (MS-SMB2 3.3.5.5.2: SESSION_SETUP naming a valid
 * session) that the master verified, as an identity this worker cannot
 * serve and the session cannot be kept under (sess_reauth_other_ok: an
 * anonymous or guest session, a channel): the session keeps its
 * identity, keys, trees and opens, and the setup is refused.
 */
ntstatus_t
sess_reauth_refuse(struct conn *c, const struct session *s,
    const struct authmsg_rep *arep)
{
	/* Rate limited: a client may repeat this as often as it likes. */
	if (arep->flags & AUTH_FLAG_ANONYMOUS)
		conn_warnx(c, "re-authentication of session %llx of %s as "
		    "anonymous refused (a worker serves one user)",
		    (unsigned long long)s->session_id, s->user);
	else
		conn_warnx(c, "re-authentication of session %llx of %s as %s "
		    "(uid %u) refused (a worker serves one user)",
		    (unsigned long long)s->session_id, s->user, arep->user,
		    (unsigned)arep->uid);
	return STATUS_ACCESS_DENIED;
}

/*
 * Handles the NTLMSSP AUTHENTICATE: verdict, identity, keys, MIC.  *keep
 * is set when a refused re-authentication leaves the session as it was.
 */
static ntstatus_t
sess_authenticate(struct smb2_req *req, struct session *s, const uint8_t *tok,
    size_t toklen, const struct spnego_token *sp, struct smb2_rsp *rsp,
    int *keep)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct sess_auth *a = s->auth;
	struct ntlmssp_auth na;
	struct authmsg_req areq;
	struct authmsg_rep arep;
	struct ntlmssp_keys nk;
	uint8_t mic[16], out[256];
	uint16_t sflags;
	int reauth = s->state != SESS_IN_PROGRESS, n, with_mic = 0, other = 0;
	int binding = s->binding;	/* sess_bind_keys clears it */
	ntstatus_t st;

	if (a->step != 1 || ntlmssp_decode_authenticate(tok, toklen, &na) < 0)
		return STATUS_INVALID_PARAMETER;
	memset(&areq, 0, sizeof(areq));
	snprintf(areq.client, sizeof(areq.client), "%s", c->peer);
	areq.negotiate = a->negotiate;
	areq.negotiate_len = a->negotiate_len;
	areq.challenge = a->challenge;
	areq.challenge_len = a->challenge_len;
	areq.authenticate = tok;
	areq.authenticate_len = (uint32_t)toklen;
	if (a->spnego && a->mech_types_len > 0 && reauth) {
		/*
		 * Should the verdict name another identity, whose key this
		 * worker never gets, the master checks the client's
		 * mechListMIC and makes ours (daemon/auth.c auth_ntlm_mic).
		 */
		areq.mech_types = a->mech_types;
		areq.mech_types_len = a->mech_types_len;
		areq.mic = sp->mech_list_mic;
		areq.mic_len = (uint32_t)sp->mech_list_mic_len;
	}
	memset(&arep, 0, sizeof(arep));
	if (pv->relay_verdict != NULL && !reauth) {
		/* Relayed here: the master's verdict came with the connection. */
		arep = *pv->relay_verdict;
		explicit_bzero(pv->relay_verdict, sizeof(*pv->relay_verdict));
		free(pv->relay_verdict);
		pv->relay_verdict = NULL;
	} else if (pv->auth == NULL || pv->auth(c, &areq, &arep) < 0) {
		conn_warnx(c, "no verdict from the master");
		return STATUS_LOGON_FAILURE;
	}
	if (arep.status != STATUS_SUCCESS)
		return arep.status;
	if (reauth && s->bound != NULL && !(req->flags & SMB2_FLAGS_SIGNED)) {
		/*
		 * Re-authentication through a channel proves itself with the
		 * channel's key (dispatch verified a signed request): an
		 * unsigned one is refused once the logon is known to be good
		 * (a bad one fails as such), and the session stays, as
		 * Windows and Samba answer (smbtorture bind_negative_*).
		 */
		explicit_bzero(&arep.session_key, sizeof(arep.session_key));
		*keep = 1;
		return STATUS_ACCESS_DENIED;
	}
	if (s->binding && ((arep.flags & (AUTH_FLAG_ANONYMOUS | AUTH_FLAG_GUEST)) ||
	    arep.uid != user_euid())) {
		/* A channel is the session's own user or nothing (3.3.5.5.2). */
		explicit_bzero(&arep.session_key, sizeof(arep.session_key));
		conn_warnx(c, "binding to session %llx as %s (uid %u) refused: "
		    "not the session's user", (unsigned long long)s->session_id,
		    arep.user, (unsigned)arep.uid);
		return STATUS_ACCESS_DENIED;
	}
	if (reauth && (((arep.flags & AUTH_FLAG_ANONYMOUS) && !s->anonymous) ||
	    arep.uid != s->uid || (pv->role == CONN_ROLE_WORKER &&
	    arep.uid != user_euid()))) {
		explicit_bzero(&arep.session_key, sizeof(arep.session_key));
		if (!sess_reauth_other_ok(c, s)) {
			*keep = 1;
			return sess_reauth_refuse(c, s, &arep);
		}
		other = 1;
	}
	/*
	 * A worker is one Unix user: another user's session is served by a
	 * worker of that user, this one relaying its frames (worker/relay.h).
	 */
	if (pv->role == CONN_ROLE_WORKER && arep.uid != user_euid() &&
	    (arep.flags & AUTH_FLAG_RELAY) && !binding && !reauth)
		return relay_start(req, s, &arep);
	if (pv->role == CONN_ROLE_WORKER && arep.uid != user_euid() && !other) {
		log_warnx("%s: session of user %s (uid %u) on a connection served "
		    "for uid %u: refused (guest, anonymous or not relayable)",
		    c->peer, arep.user, arep.uid, (unsigned)user_euid());
		return STATUS_ACCESS_DENIED;
	}
	if (!reauth && !s->binding) {
		snprintf(s->user, sizeof(s->user), "%s", arep.user);
		s->uid = arep.uid;
		s->gid = arep.gid;
		s->guest = (arep.flags & AUTH_FLAG_GUEST) != 0;
		s->anonymous = (arep.flags & AUTH_FLAG_ANONYMOUS) != 0;
		memcpy(s->session_key, arep.session_key, 16);
	}
	s->ntlm_flags = na.flags;
	/*
	 * SPNEGO mechListMIC (RFC 4178 5): check the client's, send ours.
	 * Not for anonymous or guest: the server holds no key the client
	 * shares (a guest's password was never checked), so neither side's
	 * MIC can be made or checked, and Samba skips it there too.  A
	 * re-authentication as another identity: the master withholds that
	 * user's key from this worker (DESIGN.md, security model), so the
	 * master checks the client's MIC and makes ours with it (MS-SPNG
	 * 3.2.5.1; daemon/auth.c auth_ntlm_mic), which this worker sends.
	 */
	if (a->spnego && !s->anonymous && a->mech_types_len > 0 && !other &&
	    !(arep.flags & (AUTH_FLAG_ANONYMOUS | AUTH_FLAG_GUEST))) {
		ntlmssp_sign_keys(arep.session_key, na.flags, &nk);
		if (sp->mech_list_mic_len > 0 &&
		    ntlmssp_mac_verify(&nk, 0, 0, a->mech_types, a->mech_types_len,
		    sp->mech_list_mic, sp->mech_list_mic_len) != 0) {
			conn_warnx(c, "bad SPNEGO mechListMIC");
			explicit_bzero(&nk, sizeof(nk));
			return STATUS_LOGON_FAILURE;
		}
		ntlmssp_mac(&nk, 1, 0, a->mech_types, a->mech_types_len, mic);
		explicit_bzero(&nk, sizeof(nk));
		with_mic = 1;
	} else if (a->spnego && a->mech_types_len > 0 && other &&
	    arep.mic_len == sizeof(mic) &&
	    !(arep.flags & (AUTH_FLAG_ANONYMOUS | AUTH_FLAG_GUEST))) {
		/* Made (and the client's checked) by the master, with the key. */
		memcpy(mic, arep.mic, sizeof(mic));
		with_mic = 1;
	}
	sflags = 0;
	st = STATUS_SUCCESS;
	if (binding)
		st = sess_bind_keys(c, s, arep.session_key, &sflags);
	explicit_bzero(&arep.session_key, sizeof(arep.session_key));
	if (binding) {
		if (st != STATUS_SUCCESS)
			return st;
	} else if (!reauth) {
		st = sess_keys(c, s, &sflags);
		if (st != STATUS_SUCCESS)
			return st;
	} else {
		/* As Samba: a re-authentication changes no flag nor key. */
		sflags = s->guest ? SMB2_SESSION_FLAG_IS_GUEST :
		    s->anonymous ? SMB2_SESSION_FLAG_IS_NULL : 0;
		if (s->encrypt)
			sflags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
		s->reauth_other = other;
	}
	if (a->spnego) {
		n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_COMPLETED, 0,
		    NULL, 0, with_mic ? mic : NULL, with_mic ? 16 : 0);
		if (n < 0)
			return STATUS_INSUFF_SERVER_RESOURCES;
		sess_rsp(rsp, sflags, out, (size_t)n);
	} else
		sess_rsp(rsp, sflags, NULL, 0);
	s->state = SESS_VALID;
	s->expire = 0;	/* NTLM sessions carry no ticket lifetime */
	free(s->auth);
	s->auth = NULL;
	/* MS-SMB2 3.3.5.5.3: the final response is signed (as Samba, not
	 * an anonymous session's: the client may not hold its key). */
	if (s->signing && !s->anonymous)
		pv->sign_final = s;
	if (!s->anonymous && !s->guest && !other)
		pv->user_authed = 1;
	if (s->bound != NULL) {
		log_info("%s: connection bound to session %llx of %s as a channel "
		    "(%u)", c->peer, (unsigned long long)s->session_id, s->user,
		    s->bound->nchan);
		return STATUS_SUCCESS;
	}
	if (!reauth)
		pv->logged_in = s;
	/* For `usmbctl status`; the gate's sessions are recorded on hand-off. */
	state_session_put(c, s);
	if (other)
		log_info("%s: session %llx of %s re-authenticated as %s%s: "
		    "its trees and handles keep their access, anything new "
		    "is refused until it is %s's again", c->peer,
		    (unsigned long long)s->session_id, s->user,
		    (arep.flags & AUTH_FLAG_ANONYMOUS) ? "anonymous" : arep.user,
		    (arep.flags & AUTH_FLAG_GUEST) ? " (guest)" : "", s->user);
	else
		log_info("%s: session %llx for %s%s%s", c->peer,
		    (unsigned long long)s->session_id,
		    s->anonymous ? "anonymous" : s->user,
		    s->guest ? " (guest)" : "", reauth ? " re-authenticated" : "");
	return STATUS_SUCCESS;
}

static ntstatus_t sess_setup(struct smb2_req *, struct smb2_rsp *);

/*
 * The client sent no token for the mechanism (SPNEGO_MECH_*) we take:
 * supportedMech that one, no token; neg_state accept-incomplete, or
 * request-mic when it is not the client's first (RFC 4178 5).
 */
static ntstatus_t
sess_ask_mech(struct conn *c, struct session *s, int mech, int neg_state,
    struct smb2_rsp *rsp)
{
	uint8_t out[64];
	int n = spnego_build_resp(out, sizeof(out), neg_state, mech, NULL, 0,
	    NULL, 0);

	if (n < 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	sess_rsp(rsp, 0, out, (size_t)n);
	if (c->dialect == DIALECT_311 && s->state == SESS_IN_PROGRESS)
		c->priv->preauth_rsp_sess = s;
	return STATUS_MORE_PROCESSING_REQUIRED;
}

/*
 * A connection routed here for binding has no session of its own and no
 * gate watching it: after CONN_BIND_MAX_FAILS failed setups it is closed
 * (the worker's tick enforces its login deadline).
 */
ntstatus_t
smb2_session_setup(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn_private *pv = req->conn->priv;
	ntstatus_t st = sess_setup(req, rsp);

	if (pv->bind_deadline_ms == 0 || st == STATUS_MORE_PROCESSING_REQUIRED)
		return st;
	if (st == STATUS_SUCCESS) {
		if (req->sess != NULL && !req->sess->sign_other)
			pv->bind_deadline_ms = 0;	/* a login of its own */
		return st;
	}
	if (++pv->bind_fails >= CONN_BIND_MAX_FAILS) {
		conn_warnx(req->conn, "%u failed session setups after a binding "
		    "hand-off, disconnecting", pv->bind_fails);
		pv->dead = 1;	/* after this answer */
	}
	return st;
}

static ntstatus_t
sess_setup(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct session *s;
	struct spnego_token sp;
	const uint8_t *buf, *tok;
	size_t toklen;
	uint16_t off, len;
	uint8_t flags;
	uint64_t previous_id;
	struct cur b;
	int type, fresh = 0, keep = 0;
	uint16_t tok_id = 0;
	ntstatus_t st;

	cur_skip(&req->body, 2);
	flags = cur_u8(&req->body);
	cur_skip(&req->body, 1 + 4 + 4);
	off = cur_le16(&req->body);
	len = cur_le16(&req->body);
	previous_id = cur_le64(&req->body);
	b = cur_sub(&req->body, off, len);
	buf = b.p;
	if (req->body.err || len == 0)
		return STATUS_INVALID_PARAMETER;
	if ((flags & SMB2_SESSION_FLAG_BINDING) && req->session_id != 0) {
		st = sess_bind(req, 1, &s);
		if (s == NULL)
			return st;	/* refused (signed by sess_bind) */
	} else if (req->session_id == 0 && pv->relay_verdict != NULL &&
	    c->sessions[0].in_use && c->sessions[0].state == SESS_IN_PROGRESS) {
		/*
		 * Relayed here on a one-leg Kerberos logon: the request has
		 * no SessionId yet; its session is the one the owner made
		 * (relay_accept), its preauth hash already the connection's.
		 */
		s = &c->sessions[0];
	} else if (req->session_id == 0) {
		s = conn_session_new(c);
		if (s == NULL)
			return STATUS_REQUEST_NOT_ACCEPTED;
		fresh = 1;
		if (c->dialect == DIALECT_311)
			memcpy(s->preauth, pv->preauth, sizeof(s->preauth));
	} else {
		s = conn_session_find(c, req->session_id);
		if (s == NULL && pv->role == CONN_ROLE_WORKER &&
		    (req->flags & SMB2_FLAGS_SIGNED))
			return sess_bind(req, 0, &s);	/* answered signed, if it verifies */
		if (s == NULL)
			return STATUS_USER_SESSION_DELETED;
		if (s->binding)
			return STATUS_REQUEST_NOT_ACCEPTED;	/* binding without the flag */
	}
	req->sess = s;
	if (s->state == SESS_IN_PROGRESS && previous_id != 0)
		s->previous_id = previous_id;
	if (c->dialect == DIALECT_311 && s->state == SESS_IN_PROGRESS) {
		/* Should the session be relayed, its worker hashes this again. */
		memcpy(pv->relay_preauth, s->preauth, sizeof(pv->relay_preauth));
		smb2_preauth_update(s->preauth, req->hdr, req->len);
	}
	if (s->auth == NULL) {
		/* Once per exchange, not per steady-state request. */
		s->auth = calloc(1, sizeof(*s->auth));
		if (s->auth == NULL) {
			st = STATUS_INSUFF_SERVER_RESOURCES;
			goto fail;
		}
	}
	if (spnego_decode(buf, len, &sp) < 0) {
		st = STATUS_INVALID_PARAMETER;
		goto fail;
	}
	tok = sp.mech_token;
	toklen = sp.mech_token_len;
	if (sp.kind == SPNEGO_NEG_INIT) {
		s->auth->spnego = 1;
		s->auth->krb_mech = sess_krb5_choose(c, &sp);
		s->auth->krb_mic = s->auth->krb_ctx = 0;
		if (!s->auth->krb_mech && !sp.ntlmssp_offered) {
			st = STATUS_LOGON_FAILURE;	/* only NTLMSSP here */
			goto fail;
		}
		if (sp.mech_types_len > sizeof(s->auth->mech_types)) {
			st = STATUS_INVALID_PARAMETER;
			goto fail;
		}
		memcpy(s->auth->mech_types, sp.mech_types, sp.mech_types_len);
		s->auth->mech_types_len = (uint32_t)sp.mech_types_len;
		if (s->auth->krb_mech && (!sp.krb5_preferred || toklen == 0)) {
			/*
			 * Kerberos (worker/smb2_session_krb.c), its token
			 * not sent; after another mechanism, whose token
			 * is dropped, with the MICs to come.
			 */
			s->auth->krb_mic = !sp.krb5_preferred;
			st = sess_ask_mech(c, s, s->auth->krb_mech,
			    s->auth->krb_mic ? SPNEGO_REQUEST_MIC :
			    SPNEGO_ACCEPT_INCOMPLETE, rsp);
			if (st != STATUS_MORE_PROCESSING_REQUIRED)
				goto fail;
			return st;
		}
		if (!s->auth->krb_mech && (!sp.ntlmssp_preferred || toklen == 0)) {
			/* Ask for an NTLMSSP token: accept-incomplete, no token. */
			uint8_t out[64];
			int n = spnego_build_resp(out, sizeof(out),
			    SPNEGO_ACCEPT_INCOMPLETE, 1, NULL, 0, NULL, 0);

			if (n < 0) {
				st = STATUS_INSUFF_SERVER_RESOURCES;
				goto fail;
			}
			sess_rsp(rsp, 0, out, (size_t)n);
			if (c->dialect == DIALECT_311 && s->state == SESS_IN_PROGRESS)
				pv->preauth_rsp_sess = s;
			return STATUS_MORE_PROCESSING_REQUIRED;
		}
	} else if (sp.kind == SPNEGO_NEG_RESP) {
		s->auth->spnego = 1;
	} else
		s->auth->spnego = 0;
	type = tok != NULL ? ntlmssp_msg_type(tok, toklen) : -1;
	if (tok != NULL && spnego_krb5_token(tok, toklen, &tok_id) &&
	    tok_id == SPNEGO_KRB5_AP_REQ && s->auth->spnego) {
		st = sess_krb5(req, s, tok, toklen, &sp, rsp, &keep);
		if (st == STATUS_SUCCESS && pv->no_response)
			return st;	/* relayed: s lives in another worker */
	} else if (tok == NULL && sp.kind == SPNEGO_NEG_RESP &&
	    s->auth->krb_ctx != 0) {
		st = sess_krb5(req, s, NULL, 0, &sp, rsp, &keep);	/* its MIC */
		if (st == STATUS_SUCCESS && pv->no_response)
			return st;
	} else if (type == NTLMSSP_NEGOTIATE_MESSAGE)
		st = sess_challenge(c, s, tok, toklen, rsp);
	else if (type == NTLMSSP_AUTHENTICATE_MESSAGE) {
		st = sess_authenticate(req, s, tok, toklen, &sp, rsp, &keep);
		if (st == STATUS_SUCCESS && pv->no_response)
			return st;	/* relayed: s lives in another worker */
	} else
		st = STATUS_INVALID_PARAMETER;
	if (st == STATUS_SUCCESS && pv->role == CONN_ROLE_WORKER && s->bound == NULL)
		sess_replace_previous(c, s, c);	/* the gate's: at hand-off */
	if (st == STATUS_MORE_PROCESSING_REQUIRED && s->binding)
		pv->sign_final = s;	/* with the session's key (3.3.4.1.1) */
	if (st == STATUS_SUCCESS || st == STATUS_MORE_PROCESSING_REQUIRED)
		return st;
fail:
	if (s->binding) {
		/*
		 * A failed binding leaves the session alone; the answer is
		 * signed with the session's key, then the slot goes.
		 */
		if (pv->preauth_rsp_sess == s)
			pv->preauth_rsp_sess = NULL;
		free(s->auth);
		s->auth = NULL;
		pv->sign_final = s;
		pv->free_after = s;
		rsp->body.p = rsp->body.base + SMB2_HDR_LEN;
		return st;
	}
	/* MS-SMB2 3.3.5.5.3: a failed setup removes the session. */
	if (!keep && (fresh || s->state == SESS_IN_PROGRESS ||
	    st == STATUS_LOGON_FAILURE || st == STATUS_ACCESS_DENIED)) {
		if (pv->preauth_rsp_sess == s)
			pv->preauth_rsp_sess = NULL;
		/* Through a channel: the session itself goes, everywhere. */
		if (s->bound != NULL)
			conn_session_free(s->bound_conn, s->bound);
		else
			conn_session_free(c, s);
		req->sess = NULL;
	} else {
		free(s->auth);
		s->auth = NULL;
	}
	/* The error body must not carry what a handler half wrote. */
	rsp->body.p = rsp->body.base + SMB2_HDR_LEN;
	return st;
}
