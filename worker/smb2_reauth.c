/*
 * Re-authentication as another identity (MS-SMB2 3.3.5.5.2): what a
 * session of this worker's user may still do once the master's verdict
 * on a re-authentication named someone else.
 *
 * Windows and Samba let a session re-authenticate as anybody, anonymous
 * included (smbtorture smb2.session.reauth2, reauth3), and judge
 * afterwards only new authority as the new identity: an open handle
 * keeps the access granted at its open, a tree its connect.  A worker is
 * its user for its whole life and switches no credentials (DESIGN.md),
 * so it cannot act as the new identity X; it can refuse to act for X.
 * So the session stays here, keys unchanged (as Windows: 3.3.5.5.3
 * derives keys at the first authentication only), marked reauth_other:
 *
 * - Who decides.  The identity is the master's verdict on the
 *   AUTHENTICATE, as for any logon (MSG_AUTH_REQ); the worker never
 *   takes it from the client.  X's session key is withheld from this
 *   worker (daemon/auth.c auth_answer): the master checks the client's
 *   SPNEGO mechListMIC and makes ours with that key (NTLM:
 *   auth_ntlm_mic; Kerberos: the ticket helper's, with its GSS
 *   context), and the session goes on signing and sealing with the keys
 *   of its first authentication.
 * - Served as before: requests on handles and trees the session already
 *   has (READ, WRITE, LOCK, FLUSH, QUERY_INFO of any class, security
 *   descriptors included, QUERY_DIRECTORY, CHANGE_NOTIFY, OPLOCK_BREAK
 *   acks, CLOSE, TREE_DISCONNECT, IOCTLs on a handle), SET_INFO that the
 *   handle's granted access decides alone (a DACL alone included:
 *   WRITE_DAC; smbtorture smb2.session.reauth4), LOGOFF, ECHO, CANCEL.
 * - Refused with STATUS_ACCESS_DENIED (smb2_session_may_act): what
 *   needs authority the handle does not carry, which Windows would judge
 *   as X: TREE_CONNECT, CREATE (durable reconnects included), SET_INFO
 *   of an owner, group, SACL or label, or of quota, rename and hard
 *   link (the target directory is checked as the caller), server-side
 *   copy (the source is named by a key, not by this session's handle).
 *   Relaying those to a worker of X would need the trees and handles
 *   there too; refusing never grants X anything it lacks.  A channel binding to the session
 *   and its replacement by PreviousSessionId are refused too (they are
 *   the session's user's).
 * - Back: a re-authentication that the master verifies as the
 *   session's own user clears the mark; everything works again.  Only
 *   a session of a real user is marked, by NTLM or Kerberos
 *   (worker/smb2_session_krb.c, which also takes the new ticket's end as
 *   the session's); anonymous and guest sessions and channels
 *   re-authenticated as another identity stay refused.
 */
#include "proto/cur.h"
#include "proto/fscc.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/smb2.h"
#include "worker/smb2_session_priv.h"
#include "worker/worker.h"

/* MS-SMB2 2.2.39 InfoType; 2.2.31 CtlCode. */
#define REAUTH_INFO_FILE		0x01
#define REAUTH_INFO_SECURITY		0x03
#define REAUTH_INFO_QUOTA		0x04
/* MS-DTYP 2.4.7: DACL, PROTECTED_DACL, UNPROTECTED_DACL */
#define REAUTH_SECINFO_DACL_ONLY	(0x00000004u | 0x80000000u | 0x20000000u)
#define REAUTH_FileLinkInformationEx	72	/* MS-FSCC 2.4.27.2 */
#define REAUTH_FSCTL_SRV_COPYCHUNK	0x001440F2u
#define REAUTH_FSCTL_SRV_COPYCHUNK_WRITE 0x001480F2u

int
sess_reauth_other_ok(const struct conn *c, const struct session *s)
{
	return c->priv->role == CONN_ROLE_WORKER && s->bound == NULL &&
	    !s->binding && !s->anonymous && !s->guest && s->uid == user_euid();
}

/* Does this SET_INFO need more than the handle's granted access? */
static int
reauth_setinfo_new(struct cur b)
{
	uint8_t type, cls;

	cur_skip(&b, 2);
	type = cur_u8(&b);
	cls = cur_u8(&b);
	if (b.err)
		return 1;
	if (type == REAUTH_INFO_SECURITY) {
		/*
		 * WRITE_DAC on the handle decides a DACL (MS-DTYP 2.5.3.4);
		 * an owner or group is judged against the caller's token,
		 * a SACL or label needs privileges: new authority.
		 */
		cur_skip(&b, 4 + 2 + 2);	/* BufferLength, BufferOffset, Reserved */
		return b.err || (cur_le32(&b) & ~REAUTH_SECINFO_DACL_ONLY) != 0 ||
		    b.err;
	}
	if (type == REAUTH_INFO_QUOTA)
		return 1;
	return type == REAUTH_INFO_FILE && (cls == FileRenameInformation ||
	    cls == FileLinkInformation || cls == FileRenameInformationEx ||
	    cls == REAUTH_FileLinkInformationEx);
}

static int
reauth_ioctl_new(struct cur b)
{
	uint32_t code;

	cur_skip(&b, 4);
	code = cur_le32(&b);
	return b.err || code == REAUTH_FSCTL_SRV_COPYCHUNK ||
	    code == REAUTH_FSCTL_SRV_COPYCHUNK_WRITE;
}

ntstatus_t
smb2_session_may_act(const struct smb2_req *req, uint16_t command)
{
	const struct session *s = req->sess;
	const char *what = "";
	int fresh;

	if (s == NULL || !s->reauth_other)
		return STATUS_SUCCESS;
	switch (command) {
	case SMB2_TREE_CONNECT:
		what = "TREE_CONNECT";
		fresh = 1;
		break;
	case SMB2_CREATE:
		what = "CREATE";
		fresh = 1;
		break;
	case SMB2_SET_INFO:
		what = "SET_INFO";
		fresh = reauth_setinfo_new(req->body);
		break;
	case SMB2_IOCTL:
		what = "IOCTL";
		fresh = reauth_ioctl_new(req->body);
		break;
	default:
		fresh = 0;
	}
	if (!fresh)
		return STATUS_SUCCESS;
	conn_warnx(req->conn, "%s of session %llx refused: re-authenticated "
	    "as another identity than %s", what,
	    (unsigned long long)s->session_id, s->user);
	return STATUS_ACCESS_DENIED;
}
