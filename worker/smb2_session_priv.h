/*
 * What worker/smb2_session.c shares with worker/smb2_session_krb.c (the
 * Kerberos leg of SESSION_SETUP).
 */
#ifndef USMBD_WORKER_SMB2_SESSION_PRIV_H
#define USMBD_WORKER_SMB2_SESSION_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "worker/smb2.h"

struct authmsg_rep;
struct conn;
struct session;
struct spnego_token;

/* Where this worker serves session id (the session, not a channel). */
struct sess_where {
	uint64_t	 id;
	struct conn	*c;		/* its home connection, or NULL */
	struct session	*s;		/* NULL: not here */
};
void		sess_where_find(uint64_t id, struct sess_where *w);
/* What a binding's connection negotiated (worker/smb2_bind.c). */
struct sess_chan {
	uint16_t	 dialect;
	uint16_t	 signing_algo;
	uint16_t	 cipher;
};
/*
 * The checks of a SESSION_SETUP naming w's session from a connection that
 * does not carry it (own, or NULL when a gate asks): a refusal or
 * STATUS_SUCCESS; *sign: the answer is signed with the session's key.
 */
ntstatus_t	sess_bind_judge(const struct sess_chan *ch,
		    const struct conn *own, int binding, const uint8_t *hdr,
		    size_t len, const struct sess_where *w, int *sign);
/* sess_bind_judge for a request on this worker's connection req->conn. */
ntstatus_t	sess_bind(struct smb2_req *req, int binding,
		    struct session **out);
/* The response body with a security buffer of n bytes at p. */
void		sess_rsp(struct smb2_rsp *rsp, uint16_t flags, const uint8_t *p,
		    size_t n);
/* The session's keys and its signing and encryption requirements. */
ntstatus_t	sess_keys(struct conn *c, struct session *s, uint16_t *sflags);
/* A binding authenticated: the channel's key, the slot a channel. */
ntstatus_t	sess_bind_keys(struct conn *c, struct session *ch,
		    const uint8_t *key, uint16_t *sflags);
/* A re-authentication as another user: refused, the session kept. */
ntstatus_t	sess_reauth_refuse(struct conn *c, const struct session *s,
		    const struct authmsg_rep *arep);
/*
 * May session s of this worker be re-authenticated as another identity
 * (kept, marked reauth_other: worker/smb2_reauth.c)?
 */
int		sess_reauth_other_ok(const struct conn *c,
		    const struct session *s);
/*
 * A SPNEGO exchange whose token is a Kerberos AP-REQ: the verdict
 * through the master and the ticket helper, keys from the ticket's
 * session key, the AP-REP answered (worker/smb2_session_krb.c).
 */
ntstatus_t	sess_krb5(struct smb2_req *req, struct session *s,
		    const uint8_t *tok, size_t toklen,
		    const struct spnego_token *sp, struct smb2_rsp *rsp,
		    int *keep);
/*
 * The Kerberos mechanism to take from a client's NegTokenInit: its first
 * mechanism we support, when that is Kerberos and a keytab is configured
 * (SPNEGO_MECH_KRB5(_MS), the spelling the client used), else 0.
 */
int		sess_krb5_choose(const struct conn *c,
		    const struct spnego_token *sp);
/*
 * The master's request for a Kerberos leg of session s (NULL: a new one)
 * whose SPNEGO token is sp: its AP-REQ, or the client's mechListMIC for
 * the helper's context.  1 and req filled (views into sp's buffer and
 * s->auth), else 0.  The gate asks ahead with it; sess_krb5 the same.
 */
int		sess_krb5_areq(const struct conn *c, const struct session *s,
		    const struct spnego_token *sp, struct authmsg_req *req);

#endif
