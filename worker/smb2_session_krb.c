/*
 * SESSION_SETUP with Kerberos (MS-SMB2 3.3.5.5.3 with MS-SPNG, RFC 4178,
 * RFC 4121).  HACKING.md "Kerberos logons" has the whole flow.
 *
 * NEGOTIATE offers Kerberos (Microsoft's OID, the standard one) before
 * NTLMSSP when a keytab is configured.  A client whose first mechType is
 * Kerberos sends its AP-REQ optimistically in the NegTokenInit (or, when
 * it did not, gets accept-incomplete naming Kerberos and sends it in a
 * NegTokenResp).  The token goes to the master as it came (MSG_AUTH_REQ
 * with AUTHMSG_MECH_KRB5), which has the ticket helper judge it; this
 * process never reads the ticket.  The verdict brings the identity, the
 * session key (its first 16 bytes, as for Samba and Windows), the seconds
 * the ticket has left and the AP-REP, which the answer carries
 * (accept-completed, supportedMech in the first reply).
 *
 * Which mechanism: the client's first one we support (RFC 4178 3.2: the
 * acceptor's choice among the initiator's; Samba and Windows take the
 * first they support, and so do we): Kerberos when it comes before
 * NTLMSSP, or NTLMSSP is absent or refused (`ntlm auth = no`), and a
 * keytab is configured.  A client that lists NTLMSSP before Kerberos gets
 * NTLMSSP.  Mechanisms we do not know (NegoEx, 1.3.6.1.4.1.311.2.2.30,
 * which Windows 10 and later list first with an optimistic token) are
 * skipped with their token.
 *
 * mechListMIC (RFC 4178 5): when Kerberos is the client's first mechanism
 * and its token the one sent, the list was not changed by anyone and
 * neither side needs a MIC (as Samba answers an optimistic AP-REQ).
 * When Kerberos came after another mechanism, the MICs are exchanged,
 * made and checked in the ticket helper, which owns the GSS context:
 *   1. NegTokenInit [NegoEx, krb5, ..., NTLMSSP] + a NegoEx token ->
 *      request-mic, supportedMech Kerberos (the client's spelling), no
 *      token; the DER mechTypes kept in s->auth.
 *   2. NegTokenResp with the AP-REQ (AUTHMSG_MECH_KRB5 with mechTypes)
 *      -> the helper accepts it and signs the list; unless the client's
 *      MIC came too, it keeps the context: accept-incomplete, the AP-REP
 *      and our MIC, STATUS_MORE_PROCESSING_REQUIRED, no verdict yet.
 *   3. NegTokenResp with the client's mechListMIC (AUTHMSG_MECH_KRB5_MIC)
 *      -> the helper checks it over the list of step 2; the verdict comes
 *      only then: accept-completed, the session keys, or LOGON_FAILURE
 *      for a MIC that does not verify.
 *
 * Another user's ticket on a worker's connection: the verdict comes
 * without the key (AUTH_FLAG_RELAY) and the session is relayed to that
 * user's worker (worker/relay.h), which gets the whole verdict from the
 * master and answers this leg there: for three legs, the relay starts at
 * the client's MIC, the first two having run here.  A re-authentication
 * as another identity keeps the session here, marked reauth_other, as
 * for NTLM (worker/smb2_reauth.c).
 *
 * Session end: the session expires when the ticket does (s->expire,
 * worker/dispatch.c answers NETWORK_SESSION_EXPIRED), and a
 * re-authentication with a fresh ticket on the same session sets the new
 * end, trees, opens and locks kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/spnego.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"
#include "worker/smb2_session_priv.h"
#include "worker/state.h"
#include "worker/worker.h"

int
sess_krb5_choose(const struct conn *c, const struct spnego_token *sp)
{
	if (conf_keytab_path(c->conf) == NULL || sp->krb5_pos == 0)
		return 0;
	if (sp->ntlmssp_pos != 0 && sp->ntlmssp_pos < sp->krb5_pos &&
	    !c->conf->ntlm_disabled)
		return 0;
	return sp->krb5_mech;
}

int
sess_krb5_areq(const struct conn *c, const struct session *s,
    const struct spnego_token *sp, struct authmsg_req *req)
{
	const struct sess_auth *a = s != NULL ? s->auth : NULL;
	uint16_t tok_id;

	memset(req, 0, sizeof(*req));
	snprintf(req->client, sizeof(req->client), "%s", c->peer);
	if (sp->kind == SPNEGO_NEG_INIT)
		a = NULL;	/* a new exchange: the last one's state is void */
	if (sp->mech_token != NULL) {
		if (!spnego_krb5_token(sp->mech_token, sp->mech_token_len,
		    &tok_id) || tok_id != SPNEGO_KRB5_AP_REQ)
			return 0;
		req->mech = AUTHMSG_MECH_KRB5;
		req->authenticate = sp->mech_token;
		req->authenticate_len = (uint32_t)sp->mech_token_len;
		/*
		 * After a downgrade every AP-REQ goes with the list, so none
		 * passes without the MICs; a second one after ours: refused.
		 */
		if (a != NULL && a->krb_mic) {
			if (a->krb_ctx != 0)
				return 0;
			req->mech_types = a->mech_types;
			req->mech_types_len = a->mech_types_len;
			req->mic = sp->mech_list_mic;
			req->mic_len = (uint32_t)sp->mech_list_mic_len;
		}
		return 1;
	}
	if (sp->kind != SPNEGO_NEG_RESP || a == NULL || a->krb_ctx == 0 ||
	    sp->mech_list_mic_len == 0)
		return 0;
	req->mech = AUTHMSG_MECH_KRB5_MIC;
	req->authenticate = sp->mech_list_mic;
	req->authenticate_len = (uint32_t)sp->mech_list_mic_len;
	req->krb_ctx = a->krb_ctx;
	return 1;
}

/* The verdict for this leg (sp): 0 and arep, or an NTSTATUS to answer. */
static ntstatus_t
sess_krb5_verdict(struct conn *c, const struct session *s,
    const struct spnego_token *sp, struct authmsg_rep *arep)
{
	struct authmsg_req areq;

	memset(arep, 0, sizeof(*arep));
	if (c->priv->relay_verdict != NULL && s->state == SESS_IN_PROGRESS) {
		/* Relayed here: the master's verdict came with the connection. */
		*arep = *c->priv->relay_verdict;
		explicit_bzero(c->priv->relay_verdict,
		    sizeof(*c->priv->relay_verdict));
		free(c->priv->relay_verdict);
		c->priv->relay_verdict = NULL;
		return arep->status;
	}
	if (!sess_krb5_areq(c, s, sp, &areq))
		return STATUS_INVALID_PARAMETER;
	if (c->priv->auth == NULL || c->priv->auth(c, &areq, arep) < 0) {
		conn_warnx(c, "no verdict from the master");
		return STATUS_LOGON_FAILURE;
	}
	return arep->status;
}

/*
 * Does the verdict fit this session and process?  SUCCESS or why not;
 * *other is set for a re-authentication as another identity that keeps
 * the session here (worker/smb2_reauth.c), *relay for a new session of
 * another user, which that user's worker serves (worker/relay.h).
 */
static ntstatus_t
sess_krb5_fits(struct smb2_req *req, struct session *s,
    const struct authmsg_rep *arep, int reauth, int *keep, int *other,
    int *relay)
{
	struct conn *c = req->conn;
	int worker = c->priv->role == CONN_ROLE_WORKER;

	*other = *relay = 0;
	if (reauth && s->bound != NULL && !(req->flags & SMB2_FLAGS_SIGNED)) {
		*keep = 1;	/* as for NTLM: the channel's key not proven */
		return STATUS_ACCESS_DENIED;
	}
	if (s->binding && arep->uid != user_euid()) {
		conn_warnx(c, "binding to session %llx as %s (uid %u) refused: "
		    "not the session's user", (unsigned long long)s->session_id,
		    arep->user, (unsigned)arep->uid);
		return STATUS_ACCESS_DENIED;
	}
	if (reauth && (arep->uid != s->uid || s->anonymous || s->guest ||
	    (worker && arep->uid != user_euid()))) {
		if (!sess_reauth_other_ok(c, s)) {
			*keep = 1;
			return sess_reauth_refuse(c, s, arep);
		}
		*other = 1;
		return STATUS_SUCCESS;
	}
	if (worker && arep->uid != user_euid() && !reauth && !s->binding &&
	    (arep->flags & AUTH_FLAG_RELAY)) {
		*relay = 1;
		return STATUS_SUCCESS;
	}
	if (worker && arep->uid != user_euid()) {
		log_warnx("%s: Kerberos session of %s (uid %u) on a connection "
		    "served for uid %u: refused (not relayable)", c->peer,
		    arep->user, (unsigned)arep->uid, (unsigned)user_euid());
		return STATUS_ACCESS_DENIED;
	}
	return STATUS_SUCCESS;
}

/*
 * Step 2 of Kerberos after another mechanism: the helper took the AP-REQ
 * and waits for the client's mechListMIC.  accept-incomplete with the
 * AP-REP and our MIC; no identity or key yet.
 */
static ntstatus_t
sess_krb5_wait_mic(struct conn *c, struct session *s,
    const struct authmsg_rep *arep, struct smb2_rsp *rsp)
{
	uint8_t out[AUTH_MECH_OUT_MAX + AUTH_MIC_MAX + 64];
	int n;

	if (arep->krb_ctx == 0 || arep->mic_len == 0)
		return STATUS_LOGON_FAILURE;
	n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_INCOMPLETE, 0,
	    arep->mech_out, arep->mech_out_len, arep->mic, arep->mic_len);
	if (n < 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	s->auth->krb_ctx = arep->krb_ctx;
	sess_rsp(rsp, 0, out, (size_t)n);
	if (c->dialect == DIALECT_311 && s->state == SESS_IN_PROGRESS)
		c->priv->preauth_rsp_sess = s;
	return STATUS_MORE_PROCESSING_REQUIRED;
}

ntstatus_t
sess_krb5(struct smb2_req *req, struct session *s, const uint8_t *tok,
    size_t toklen, const struct spnego_token *sp, struct smb2_rsp *rsp,
    int *keep)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct authmsg_rep arep;
	uint8_t out[AUTH_MECH_OUT_MAX + AUTH_MIC_MAX + 64];
	int reauth = s->state != SESS_IN_PROGRESS, binding = s->binding, n;
	int other = 0, relay = 0;
	int mech = s->auth->krb_mech != 0 ? s->auth->krb_mech : SPNEGO_MECH_KRB5;
	uint16_t sflags = 0;
	ntstatus_t st;

	if (conf_keytab_path(c->conf) == NULL)
		return STATUS_LOGON_FAILURE;	/* we never offered it */
	st = sess_krb5_verdict(c, s, sp, &arep);
	if (st == STATUS_MORE_PROCESSING_REQUIRED) {
		st = sess_krb5_wait_mic(c, s, &arep, rsp);
		goto out;
	}
	if (st == STATUS_SUCCESS)
		st = sess_krb5_fits(req, s, &arep, reauth, keep, &other, &relay);
	if (st != STATUS_SUCCESS)
		goto out;
	if (relay) {
		/* Another user's session: served by that user's worker. */
		st = relay_start(req, s, &arep);
		goto out;
	}
	if (!reauth && !binding) {
		snprintf(s->user, sizeof(s->user), "%s", arep.user);
		s->uid = arep.uid;
		s->gid = arep.gid;
		s->guest = 0;
		s->anonymous = 0;
		memcpy(s->session_key, arep.session_key, 16);
		if (arep.full_key_len <= sizeof(s->auth->full_key)) {
			s->auth->full_key_len = arep.full_key_len;
			memcpy(s->auth->full_key, arep.full_key,
			    arep.full_key_len);
		}
	}
	if (binding)
		st = sess_bind_keys(c, s, arep.session_key, &sflags);
	else if (!reauth)
		st = sess_keys(c, s, &sflags);
	else {
		/* As for NTLM: a re-authentication changes no flag nor key. */
		if (s->encrypt)
			sflags = SMB2_SESSION_FLAG_ENCRYPT_DATA;
		s->reauth_other = other;
	}
	if (st != STATUS_SUCCESS)
		goto out;
	/* supportedMech in the first reply of the exchange only. */
	n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_COMPLETED,
	    sp->kind == SPNEGO_NEG_INIT ? mech : 0, arep.mech_out,
	    arep.mech_out_len, arep.mic, arep.mic_len);
	if (n < 0) {
		st = STATUS_INSUFF_SERVER_RESOURCES;
		goto out;
	}
	sess_rsp(rsp, sflags, out, (size_t)n);
	s->state = SESS_VALID;
	/* MS-SMB2 3.3.5.5.3: the session ends with the ticket. */
	s->expire = conn_now() + (arep.lifetime > 0 ? arep.lifetime : 1);
	explicit_bzero(s->auth->full_key, sizeof(s->auth->full_key));
	free(s->auth);
	s->auth = NULL;
	if (s->signing)
		pv->sign_final = s;
	if (s->bound != NULL) {
		log_info("%s: connection bound to session %llx of %s as a "
		    "channel (Kerberos)", c->peer,
		    (unsigned long long)s->session_id, s->user);
		goto out;
	}
	if (!reauth)
		pv->logged_in = s;
	state_session_put(c, s);
	if (other)
		log_info("%s: session %llx of %s re-authenticated as %s "
		    "(Kerberos, %u s left): its trees and handles keep their "
		    "access, anything new is refused until it is %s's again",
		    c->peer, (unsigned long long)s->session_id, s->user,
		    arep.user, (unsigned)arep.lifetime, s->user);
	else
		log_info("%s: session %llx for %s (Kerberos, %u s left)%s",
		    c->peer, (unsigned long long)s->session_id, s->user,
		    (unsigned)arep.lifetime, reauth ? " re-authenticated" : "");
out:
	if (relay && st == STATUS_SUCCESS) {
		explicit_bzero(&arep, sizeof(arep));
		return st;	/* s is gone from this connection */
	}
	if (s->auth != NULL) {
		explicit_bzero(s->auth->full_key, sizeof(s->auth->full_key));
		s->auth->full_key_len = 0;
	}
	explicit_bzero(&arep, sizeof(arep));
	return st;
}
