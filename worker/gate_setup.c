/*
 * What the gate reads of a SESSION_SETUP before dispatching it: the
 * AUTHENTICATE (or Kerberos leg) whose verdict it fetches from the master
 * first, and a SESSION_SETUP naming a session this connection does not
 * carry, which the session's worker judges before any socket moves
 * (worker/bindcheck.h; the story at the top of worker/smb2_session.c).
 */
#include <stdio.h>
#include <string.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/ntlmssp.h"
#include "proto/smb2_hdr.h"
#include "proto/spnego.h"
#include "worker/dispatch.h"
#include "worker/gate_priv.h"
#include "worker/smb2_session_priv.h"

/*
 * Decodes frame m (header first) as a SESSION_SETUP request.  Returns 1
 * and fills gs when m is one with its fixed part whole, else 0.  The
 * security buffer is checked apart (gs->blob.err): the binding check
 * does not need it.
 */
int
gate_setup_decode(const uint8_t *m, size_t len, struct gate_setup *gs)
{
	struct cur r;
	uint16_t off, blen;

	if (len < SMB2_HDR_LEN + 24 || memcmp(m, "\xfeSMB", 4) != 0)
		return 0;
	cur_init(&r, m, len);
	cur_skip(&r, 12);			/* to Command */
	if (cur_le16(&r) != SMB2_SESSION_SETUP)
		return 0;
	cur_skip(&r, 40 - 14);			/* to SessionId */
	gs->sid = cur_le64(&r);
	cur_skip(&r, SMB2_HDR_LEN - 48 + 2);	/* Signature, StructureSize */
	gs->flags = cur_u8(&r);
	cur_skip(&r, 1 + 4 + 4);	/* SecurityMode, Capabilities, Channel */
	off = cur_le16(&r);
	blen = cur_le16(&r);
	if (r.err)
		return 0;
	gs->blob = cur_sub(&r, off, blen);
	return 1;
}

/*
 * Does the SESSION_SETUP gs carry a Kerberos leg in SPNEGO (an AP-REQ, or
 * the client's mechListMIC after Kerberos was chosen after another
 * mechanism) for a new session or one in its exchange (s), with a keytab
 * configured?  Then fills req (the token a view into the frame) as
 * worker/smb2_session_krb.c will.
 */
static int
gate_krb5_needed(struct conn *c, const struct gate_setup *gs,
    const struct session *s, struct authmsg_req *req)
{
	struct spnego_token sp;

	if (conf_keytab_path(c->conf) == NULL ||
	    (gs->sid != 0 && (s == NULL || s->state != SESS_IN_PROGRESS)))
		return 0;
	if (spnego_decode(gs->blob.p, cur_left(&gs->blob), &sp) < 0 ||
	    sp.kind == SPNEGO_RAW_NTLMSSP)
		return 0;
	if (sp.kind == SPNEGO_NEG_INIT && sp.krb5_preferred == 0)
		return 0;	/* the handler asks for another mechanism */
	return sess_krb5_areq(c, gs->sid != 0 ? s : NULL, &sp, req);
}

/*
 * Does the SESSION_SETUP gs carry an NTLMSSP AUTHENTICATE for a session in
 * its exchange?  Then fills req as worker/smb2_session.c will, with views
 * into the frame.  The handler parses the same bytes again;
 * gate_conn_auth() checks it is the same token.
 */
int
gate_auth_needed(struct conn *c, const struct gate_setup *gs,
    struct authmsg_req *req)
{
	struct spnego_token sp;
	struct session *s;

	if (gs->blob.err || cur_left(&gs->blob) == 0 ||
	    (gs->flags & SMB2_SESSION_FLAG_BINDING))
		return 0;
	s = conn_session_find(c, gs->sid);
	if (gate_krb5_needed(c, gs, s, req))
		return 1;
	if (s == NULL || s->auth == NULL || s->auth->step != 1)
		return 0;
	if (spnego_decode(gs->blob.p, cur_left(&gs->blob), &sp) < 0 ||
	    sp.mech_token == NULL ||
	    ntlmssp_msg_type(sp.mech_token, sp.mech_token_len) !=
	    NTLMSSP_AUTHENTICATE_MESSAGE)
		return 0;
	memset(req, 0, sizeof(*req));
	snprintf(req->client, sizeof(req->client), "%s", c->peer);
	req->negotiate = s->auth->negotiate;
	req->negotiate_len = s->auth->negotiate_len;
	req->challenge = s->auth->challenge;
	req->challenge_len = s->auth->challenge_len;
	req->authenticate = sp.mech_token;
	req->authenticate_len = (uint32_t)sp.mech_token_len;
	return 1;
}

int
gate_check_needed(struct conn *c, const struct gate_setup *gs,
    const uint8_t *m, size_t len, struct bindcheck_req *q,
    struct gate_check *k)
{
	struct conn_private *pv = c->priv;
	struct smb2_hdr h;
	uint16_t charge;

	if (gs->sid == 0 || conn_session_find(c, gs->sid) != NULL ||
	    smb2_hdr_decode(m, len, &h) != 0)
		return 0;
	/* Unsigned, no binding: the handler's USER_SESSION_DELETED. */
	if (!(gs->flags & SMB2_SESSION_FLAG_BINDING) &&
	    !(h.flags & SMB2_FLAGS_SIGNED))
		return 0;
	if (c->dialect == 0 || c->dialect == 0x02FF || h.next_command != 0 ||
	    (h.flags & (SMB2_FLAGS_RELATED_OPERATIONS |
	    SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND)) ||
	    len > BINDCHECK_REQ_MAX ||
	    smb2_req_size_ok(SMB2_SESSION_SETUP, m + SMB2_HDR_LEN,
	    len - SMB2_HDR_LEN) < 0)
		return -1;
	/*
	 * What dispatch would charge and grant (dispatch_decode,
	 * dispatch_rsp_close), on a copy: the window moves only if the
	 * worker's refusal is written here; a binding it lets through goes
	 * to the worker with the window as it is.
	 */
	k->after = pv->cred;
	charge = c->dialect == DIALECT_202 ? 1 : h.credit_charge;
	if (conn_credits_charge(&k->after, h.message_id, charge) < 0)
		return -1;
	k->credits = conn_credits_grant(&k->after, h.credits, h.credit_charge);
	k->sid = gs->sid;
	memset(q, 0, sizeof(*q));
	q->sid = gs->sid;
	q->dialect = c->dialect;
	q->signing_algo = c->signing_algo;
	q->cipher = c->cipher;
	q->credits = k->credits;
	q->msg = m;
	q->msg_len = (uint32_t)len;
	return 1;
}

int
gate_check_answer(struct conn *c, const struct gate_check *k,
    const struct bindcheck_req *q, const struct bindcheck_rep *rep)
{
	struct conn_private *pv = c->priv;
	size_t flen = SMB2_FRAME_LEN + q->msg_len;

	if (q->sid != k->sid || q->credits != k->credits ||
	    bindcheck_rsp_check(rep, q) != 0 || pv->rlen < flen) {
		conn_warnx(c, "binding to session %llx: a malformed answer of "
		    "its worker", (unsigned long long)k->sid);
		return -1;
	}
	pv->cred = k->after;
	/* The request goes before the answer overwrites nothing of it. */
	memmove(pv->rbuf, pv->rbuf + flen, pv->rlen - flen);
	pv->rlen -= flen;
	log_debug(3, "%s: binding to session %llx refused (%#x)", c->peer,
	    (unsigned long long)k->sid, rep->status);
	return dispatch_send_built(c, rep->rsp, rep->rsp_len);
}
