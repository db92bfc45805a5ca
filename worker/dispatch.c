/*
 * The dispatcher: transform decryption, the compound walk with the related
 * operation rules, the message-id window, signature checks, the const
 * command table.  The response frame (headers, padding, signatures,
 * encryption, bulk data by sendfile) is in worker/dispatch_out.c; async
 * requests (park, resume, notices) are in worker/dispatch_async.c.
 */
#include "worker/worker.h"
#include "worker/dispatch.h"
#include "worker/dispatch_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/crypt.h"
#include "proto/preauth.h"
#include "worker/relay.h"
#include "proto/sign.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/metrics.h"
#include "worker/smb2_file.h"
#include "worker/smb2_lock.h"
#include "worker/smb2_notify.h"
#include "worker/smb2_oplock.h"
#include "worker/smb2_pipe.h"

static ntstatus_t
route(smb2_handler_fn pipe_fn, smb2_handler_fn file_fn, struct smb2_req *req,
    struct smb2_rsp *rsp)
{
	smb2_handler_fn fn = req->tree->is_ipc ? pipe_fn : file_fn;

	return fn != NULL ? fn(req, rsp) : STATUS_NOT_SUPPORTED;
}

static ntstatus_t
d_create(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_create, smb2_create_handle, q, r);
}

static ntstatus_t
d_close(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_close, smb2_close_handle, q, r);
}

static ntstatus_t
d_flush(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_flush, smb2_flush_handle, q, r);
}

static ntstatus_t
d_read(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_read, smb2_read_handle, q, r);
}

static ntstatus_t
d_write(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_write, smb2_write_handle, q, r);
}

static ntstatus_t
d_lock(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(NULL, smb2_lock_handle, q, r);
}

static ntstatus_t
d_query_directory(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(NULL, smb2_query_directory_handle, q, r);
}

static ntstatus_t
d_change_notify(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(NULL, smb2_change_notify_handle, q, r);
}

static ntstatus_t
d_query_info(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(smb2_pipe_query_info, smb2_query_info_handle, q, r);
}

static ntstatus_t
d_set_info(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(NULL, smb2_set_info_handle, q, r);
}

static ntstatus_t
d_oplock_break(struct smb2_req *q, struct smb2_rsp *r)
{
	return route(NULL, smb2_oplock_break_handle, q, r);
}


/* MS-SMB2 2.2.1.2 command codes index this table. */
const struct dispatch_cmd dispatch_table[SMB2_NCOMMANDS] = {
	[SMB2_NEGOTIATE] = { smb2_negotiate, "NEGOTIATE", 0, 0, 1 },
	[SMB2_SESSION_SETUP] = { smb2_session_setup, "SESSION_SETUP", 0, 0, 1 },
	[SMB2_LOGOFF] = { smb2_logoff, "LOGOFF", 1, 0, 1 },
	[SMB2_TREE_CONNECT] = { smb2_tree_connect, "TREE_CONNECT", 1, 0, 0 },
	[SMB2_TREE_DISCONNECT] = { smb2_tree_disconnect, "TREE_DISCONNECT", 1, 1, 0 },
	[SMB2_CREATE] = { d_create, "CREATE", 1, 1, 0 },
	[SMB2_CLOSE] = { d_close, "CLOSE", 1, 1, 0 },
	[SMB2_FLUSH] = { d_flush, "FLUSH", 1, 1, 0 },
	[SMB2_READ] = { d_read, "READ", 1, 1, 0 },
	[SMB2_WRITE] = { d_write, "WRITE", 1, 1, 0 },
	[SMB2_LOCK] = { d_lock, "LOCK", 1, 1, 0 },
	[SMB2_IOCTL] = { smb2_ioctl, "IOCTL", 1, 1, 0 },
	[SMB2_CANCEL] = { smb2_cancel, "CANCEL", 0, 0, 1 },
	[SMB2_ECHO] = { smb2_echo, "ECHO", 0, 0, 1 },
	[SMB2_QUERY_DIRECTORY] = { d_query_directory, "QUERY_DIRECTORY", 1, 1, 0 },
	[SMB2_CHANGE_NOTIFY] = { d_change_notify, "CHANGE_NOTIFY", 1, 1, 0 },
	[SMB2_QUERY_INFO] = { d_query_info, "QUERY_INFO", 1, 1, 0 },
	[SMB2_SET_INFO] = { d_set_info, "SET_INFO", 1, 1, 0 },
	[SMB2_OPLOCK_BREAK] = { d_oplock_break, "OPLOCK_BREAK", 1, 1, 0 },
};


/*
 * The payload size a request moves, for the multi-credit charge
 * (MS-SMB2 3.3.5.2.5).
 */
static uint32_t
dispatch_payload(uint16_t cmd, const uint8_t *body, size_t blen)
{
	uint32_t a = 0, b = 0;

	switch (cmd) {
	case SMB2_READ:
	case SMB2_WRITE:
	case SMB2_CHANGE_NOTIFY:
	case SMB2_QUERY_INFO:
	case SMB2_SET_INFO:
		if (blen >= 8)
			a = le32_get(body + 4);
		break;
	case SMB2_QUERY_DIRECTORY:
		if (blen >= 32)
			a = le32_get(body + 28);
		break;
	case SMB2_IOCTL:
		if (blen >= 48) {
			a = le32_get(body + 28);
			b = le32_get(body + 44);
		}
		break;
	}
	return a > b ? a : b;
}

/*
 * Where the FileId sits in the body of a request that carries one
 * (MS-SMB2 2.2.15 to 2.2.39); -1 for the commands without one.
 */
static int
dispatch_fid_offset(uint16_t cmd)
{
	switch (cmd) {
	case SMB2_CLOSE:
	case SMB2_FLUSH:
	case SMB2_LOCK:
	case SMB2_IOCTL:
	case SMB2_QUERY_DIRECTORY:
	case SMB2_CHANGE_NOTIFY:
	case SMB2_OPLOCK_BREAK:
		return 8;
	case SMB2_READ:
	case SMB2_WRITE:
	case SMB2_SET_INFO:
		return 16;
	case SMB2_QUERY_INFO:
		return 24;
	}
	return -1;
}

/*
 * The FileId a related request after this one inherits (MS-SMB2
 * 3.3.5.2.7.2: the one used in processing the previous operation):
 * updates fp and fv when the request names a FileId of its own; a request
 * that names the related FileId (all ones) passes the inherited one on.
 */
static void
dispatch_used_fid(uint16_t cmd, const uint8_t *body, size_t blen,
    uint64_t *fp, uint64_t *fv)
{
	int off = dispatch_fid_offset(cmd);
	uint64_t p, v;

	if (off < 0 || blen < (size_t)off + 16)
		return;
	p = le64_get(body + off);
	v = le64_get(body + off + 8);
	if (p == SMB2_FID_RELATED && v == SMB2_FID_RELATED)
		return;
	*fp = p;
	*fv = v;
}

/*
 * The open a request names by its FileId (the inherited one when it names
 * the related FileId), if it is an open of the request's session.
 */
static struct open *
dispatch_req_open(const struct smb2_req *req)
{
	int off = dispatch_fid_offset(req->command);
	const uint8_t *body = req->hdr + SMB2_HDR_LEN;
	uint64_t p, v;
	struct open *o;

	if (off < 0 || req->len < SMB2_HDR_LEN + (size_t)off + 16)
		return NULL;
	p = le64_get(body + off);
	v = le64_get(body + off + 8);
	/* as open_fid_decode */
	if (req->related && !(req->related_fid_persistent == SMB2_FID_RELATED &&
	    req->related_fid_volatile == SMB2_FID_RELATED)) {
		p = req->related_fid_persistent;
		v = req->related_fid_volatile;
	} else if (p == SMB2_FID_RELATED && v == SMB2_FID_RELATED)
		return NULL;
	o = open_find(req->conn, p, v);
	return o != NULL && o->sess == req->sess ? o : NULL;
}

/*
 * MS-SMB2 3.3.5.2.10: a ChannelSequence newer than the open's (an
 * unsigned 16-bit difference of 1 to 0x7FFF) moves the open's on; an
 * older one means the request was sent before the client saw a channel
 * fail, and must not modify the file: WRITE, SET_INFO and IOCTL fail.
 * Other commands go on either way.  The spec's outstanding request
 * counts are not kept: a connection's requests are served one at a
 * time, and the only ones that stay outstanding (parked LOCK, NOTIFY, a
 * CREATE waiting for a break) are not counted, so a replayed modifying
 * request is judged by the sequence alone.
 */
static ntstatus_t
dispatch_check_channel_sequence(const struct conn *c, const struct smb2_req *req)
{
	struct open *o;
	uint16_t d;

	if (c->dialect < DIALECT_300 || (o = dispatch_req_open(req)) == NULL ||
	    !o->channel_sequence_set)
		return STATUS_SUCCESS;
	d = (uint16_t)(req->channel_sequence - o->channel_sequence);
	if (d == 0)
		return STATUS_SUCCESS;
	if (d <= 0x7FFF) {
		o->channel_sequence = (uint16_t)req->channel_sequence;
		return STATUS_SUCCESS;
	}
	switch (req->command) {
	case SMB2_WRITE:
	case SMB2_SET_INFO:
	case SMB2_IOCTL:
		return STATUS_FILE_NOT_AVAILABLE;
	}
	return STATUS_SUCCESS;
}

void
dispatch_create_channel_sequence(const struct smb2_req *req,
    const struct smb2_rsp *rsp)
{
	struct open *o;

	if (req->command != SMB2_CREATE || !rsp->set_fid ||
	    (o = open_find(req->conn, rsp->fid_persistent,
	    rsp->fid_volatile)) == NULL)
		return;
	/* A new open takes the CREATE's; a replayed one only moves on. */
	if (!o->channel_sequence_set ||
	    (uint16_t)(req->channel_sequence - o->channel_sequence) <= 0x7FFF)
		o->channel_sequence = (uint16_t)req->channel_sequence;
	o->channel_sequence_set = 1;
}

static ntstatus_t
dispatch_check_charge(struct conn *c, const struct smb2_hdr *h,
    const uint8_t *body, size_t blen)
{
	uint32_t payload = dispatch_payload(h->command, body, blen);
	uint32_t need;

	if (payload <= 65536)
		return STATUS_SUCCESS;
	if (!(c->capabilities & SMB2_GLOBAL_CAP_LARGE_MTU) ||
	    c->dialect == DIALECT_202)
		return STATUS_INVALID_PARAMETER;
	need = (payload - 1) / 65536 + 1;
	return h->credit_charge >= need ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

/* Is this request's signature acceptable?  (MS-SMB2 3.3.5.2.4) */
static ntstatus_t
dispatch_check_signature(struct conn *c, struct smb2_req *req,
    struct session *s)
{
	if (req->encrypted || s == NULL)
		return STATUS_SUCCESS;
	if (req->flags & SMB2_FLAGS_SIGNED) {
		if (!s->signing)
			return STATUS_SUCCESS;	/* a guest or no key yet */
		if (smb2_verify_ctx(&s->sign_cx, conn_session_sign_algo(s, c),
		    s->signing_key, req->hdr, req->len) != 0) {
			conn_warnx(c, "bad signature on %s, mid %llu",
			    req->command < SMB2_NCOMMANDS ?
			    dispatch_table[req->command].name : "?",
			    (unsigned long long)req->message_id);
			return STATUS_ACCESS_DENIED;
		}
		return STATUS_SUCCESS;
	}
	if (s->signing && s->signing_required && s->state == SESS_VALID &&
	    req->command != SMB2_SESSION_SETUP)
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
}

static int
dispatch_smb1(struct conn *c, const uint8_t *msg, size_t len)
{
	struct conn_private *pv = c->priv;
	struct smb2_req req;
	struct smb2_rsp rsp;
	struct dispatch_out out;
	struct smb2_hdr h = { .command = SMB2_NEGOTIATE,
	    .flags = SMB2_FLAGS_SERVER_TO_REDIR };
	ntstatus_t st;

	memset(&req, 0, sizeof(req));
	memset(&rsp, 0, sizeof(rsp));
	rsp.data_fd = -1;
	req.conn = c;
	req.hdr = msg;
	req.command = SMB2_NEGOTIATE;
	if (c->dialect != 0 || pv->smb1_neg ||
	    conn_credits_charge(&pv->cred, 0, 1) < 0)
		return -1;
	rsp.hdr = pv->sbuf + SMB2_FRAME_LEN;
	wcur_init(&rsp.body, rsp.hdr, pv->scap - SMB2_FRAME_LEN);
	wcur_zero(&rsp.body, SMB2_HDR_LEN);
	st = smb2_negotiate_smb1(c, msg, len, &rsp);
	if (st != STATUS_SUCCESS || rsp.body.err)
		return -1;
	rsp.credits_granted = conn_credits_grant(&pv->cred, 1, 1);
	/* The SMB1 request has no SMB2 header: a plain one for the reply. */
	h.credits = rsp.credits_granted;
	smb2_hdr_encode(rsp.hdr, &h);
	out.off = SMB2_FRAME_LEN;
	out.len = wcur_off(&rsp.body);
	out.sign_sess = NULL;
	return dispatch_finish(c, &out, 1, &rsp, 0, NULL);
}

int
dispatch_frame(struct conn *c, uint8_t *msg, size_t len)
{
	struct dispatch_walk w;
	struct session *enc_sess = NULL;
	size_t poff = 0, plen = 0;
	uint64_t sid;
	int encrypted = 0, ahead, routed, z;

	/* Another user's session: its own worker serves it (worker/relay.h). */
	dispatch_walk_init(&w);
	if (compress_frame(c, &msg, &len) < 0)	/* worker/compress.h */
		return -1;
	if (c->priv->relays != NULL &&
	    (routed = relay_route(c, msg, len, &w.split)) != 0)
		return routed < 0 ? -1 : 0;
	/* A relayed worker may have decrypted it already (relay_ahead.c). */
	ahead = relay_ahead_take(c, msg, len, &enc_sess, &poff, &plen);
	switch (ahead != 0 ? SMB2_MAGIC_TRANSFORM : smb2_magic(msg, len)) {
	case SMB2_MAGIC_SMB2:
		break;
	case SMB2_MAGIC_SMB1:
		return dispatch_smb1(c, msg, len);
	case SMB2_MAGIC_TRANSFORM:
		if (ahead == 0 &&
		    ((enc_sess = conn_transform_session(c, msg, len, &sid)) ==
		    NULL || smb2_decrypt_ctx(&enc_sess->dec_cx, enc_sess->cipher,
		    enc_sess->dec_key, msg, len, &poff, &plen) < 0))
			ahead = -1;
		if (ahead < 0) {
			conn_warnx(c, "undecryptable transform message");
			return -1;
		}
		msg += poff;
		len = plen;
		encrypted = 1;
		if ((z = compress_frame(c, &msg, &len)) < 0 ||
		    smb2_magic(msg, len) != SMB2_MAGIC_SMB2)
			return -1;
		/* Its ids, which the owner cannot read (worker/relay_ring.c). */
		if (ahead == 0 || z > 0)
			relay_ring_note(c->priv->relay_ring, msg, len);
		break;
	default:
		conn_warnx(c, "not an SMB2 message, disconnecting");
		return -1;
	}

	w.encrypted = encrypted;
	w.encrypt_rsp = encrypted;
	w.enc_sess = enc_sess;
	if (dispatch_walk(c, &w, msg, len) < 0)
		return -1;
	return dispatch_walk_end(c, &w);
}

void
dispatch_walk_init(struct dispatch_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->woff = SMB2_FRAME_LEN;
	w->rsp.data_fd = -1;
	w->prev_fp = w->prev_fv = SMB2_FID_RELATED;
	w->prev_st = STATUS_SUCCESS;
}

/* One request of a chain on its way through dispatch_walk. */
struct dispatch_one {
	const uint8_t	*m;		/* header + body */
	size_t		 mlen;
	struct smb2_hdr	 h;
	struct smb2_req	 req;
	const struct dispatch_cmd *cmd;	/* NULL: no such command */
	struct session	*s;		/* the session the header names */
	struct session	*chs;		/* s, when it is a channel slot */
	int		 ids_bad;	/* no valid session or tree */
	uint64_t	 sid;		/* the response's SessionId */
	uint32_t	 tid;		/* and TreeId */
	uint64_t	 mt0;		/* worker/metrics.h */
};

/*
 * The header, the order of NEGOTIATE, and the message-id window: a
 * request that fails one of these ends the connection (-1).
 */
static int
dispatch_decode(struct conn *c, struct dispatch_walk *w,
    const struct smb2_chain *ch, struct dispatch_one *d)
{
	struct conn_private *pv = c->priv;
	struct smb2_req *req = &d->req;
	struct smb2_hdr *h = &d->h;

	d->mt0 = metrics_clock();
	d->cmd = NULL;
	d->s = NULL;
	d->chs = NULL;
	d->ids_bad = 0;
	if (w->nout == CONN_MAX_COMPOUND ||
	    smb2_hdr_decode(d->m, d->mlen, h) < 0 ||
	    (h->flags & SMB2_FLAGS_SERVER_TO_REDIR)) {
		conn_warnx(c, "malformed SMB2 header, disconnecting");
		return -1;
	}
	memset(req, 0, sizeof(*req));
	req->conn = c;
	req->chan = c;
	req->command = h->command;
	req->credit_charge = h->credit_charge;
	req->credits_requested = h->credits;
	req->flags = h->flags;
	req->next_command = h->next_command;
	req->message_id = h->message_id;
	req->async_id = h->async_id;
	req->tree_id = h->tree_id;
	req->session_id = h->session_id;
	req->channel_sequence = (uint16_t)h->status;
	req->hdr = d->m;
	req->len = d->mlen;
	cur_init(&req->body, d->m, d->mlen);
	cur_seek(&req->body, SMB2_HDR_LEN);
	req->encrypted = w->encrypted;
	req->related_fid_persistent = SMB2_FID_RELATED;
	req->related_fid_volatile = SMB2_FID_RELATED;

	/* Only NEGOTIATE (and ECHO) before a dialect is chosen. */
	if (c->dialect == 0 || c->dialect == 0x02FF) {
		if (h->command != SMB2_NEGOTIATE || w->nout > 0 || !ch->done) {
			conn_warnx(c, "%s before NEGOTIATE, disconnecting",
			    h->command < SMB2_NCOMMANDS ?
			    dispatch_table[h->command].name : "command");
			return -1;
		}
	} else if (h->command == SMB2_NEGOTIATE) {
		conn_warnx(c, "second NEGOTIATE, disconnecting");
		return -1;
	}
	/*
	 * CANCEL uses the id of what it cancels and costs nothing.
	 * The rest of a chain parked behind a CREATE was charged
	 * when it arrived (dispatch_park_rest).
	 */
	if (h->command != SMB2_CANCEL && !w->charged) {
		uint16_t charge = c->dialect == DIALECT_202 ? 1 :
		    h->credit_charge;

		if (pv->relayed) {
			/* The owner keeps the window; a replay ends the relay. */
			conn_credits_spend(&pv->cred, charge);
			if (conn_credits_replay(&pv->cred, h->message_id,
			    charge) < 0) {
				conn_warnx(c, "relayed message id %llu used "
				    "before or too old, disconnecting",
				    (unsigned long long)h->message_id);
				return -1;
			}
		} else if (conn_credits_charge(&pv->cred, h->message_id, charge) < 0) {
			conn_warnx(c, "message id %llu (charge %u) outside the "
			    "window, disconnecting",
			    (unsigned long long)h->message_id, charge);
			return -1;
		}
	}
	return 0;
}

/*
 * Its place in the chain (MS-SMB2 3.3.5.2.7): a related request takes
 * the session, tree and FileId of the one before it, and fails when that
 * one failed as the rules say.  Sets the command.
 */
static ntstatus_t
dispatch_relate(struct dispatch_walk *w, struct dispatch_one *d)
{
	struct smb2_req *req = &d->req;

	if (d->h.flags & SMB2_FLAGS_RELATED_OPERATIONS) {
		if (w->nout == 0) {
			/* nothing to relate to: the chain fails on */
			d->ids_bad = 1;
			return STATUS_INVALID_PARAMETER;
		}
		req->related = 1;
		req->session_id = w->prev_sid;
		req->tree_id = w->prev_tid;
		req->related_fid_persistent = w->prev_fp;
		req->related_fid_volatile = w->prev_fv;
	}
	if (w->rest_st != STATUS_SUCCESS)
		/* the chain could not wait behind its CREATE */
		return w->rest_st;
	if (d->h.command >= SMB2_NCOMMANDS)
		/* No such command at all (not one we lack): as Samba. */
		return STATUS_INVALID_PARAMETER;
	d->cmd = &dispatch_table[d->h.command];
	if (req->related) {
		/*
		 * MS-SMB2 3.3.5.2.7.2: after a request that had no
		 * valid session or tree, the rest of the chain fails
		 * with INVALID_PARAMETER.  A failed CREATE's status
		 * carries down the chain to every request using its
		 * FileId; other failures do not (a WRITE refused on a
		 * read-only open leaves the READ after it alone, as
		 * Windows and Samba do: smb2.compound.related6).
		 */
		if (w->prev_ids_bad && d->cmd->needs_session) {
			d->ids_bad = 1;
			return STATUS_INVALID_PARAMETER;
		}
		if (w->prev_st != STATUS_SUCCESS)
			return w->prev_st;
	}
	return STATUS_SUCCESS;
}

/* What the role, the structure size and the credit charge allow. */
static ntstatus_t
dispatch_check_request(struct conn *c, const struct dispatch_one *d)
{
	struct conn_private *pv = c->priv;
	const uint8_t *body = d->m + SMB2_HDR_LEN;
	size_t blen = d->mlen - SMB2_HDR_LEN;

	if (pv->role == CONN_ROLE_GATE && !d->cmd->in_gate)
		/* No session is valid in the gate: the spec's answer. */
		return STATUS_USER_SESSION_DELETED;
	if (smb2_req_size_ok(d->h.command, body, blen) < 0)
		return STATUS_INVALID_PARAMETER;
	return dispatch_check_charge(c, &d->h, body, blen);
}

/* MS-SMB2 3.3.5.2.9 (as Samba): an expired session's LOGOFF, CLOSE, unlock. */
static int
dispatch_expired_ok(const struct smb2_req *req, uint16_t command)
{
	struct cur b = req->body;

	if (command != SMB2_LOCK)
		return command == SMB2_LOGOFF || command == SMB2_CLOSE;
	cur_skip(&b, 2 + 2 + 4 + 16 + 8 + 8);	/* to Locks[0].Flags (2.2.26) */
	return (cur_le32(&b) & 0x04u) != 0 && !b.err;	/* UNLOCK */
}

/*
 * The session the request names: valid, not expired, its signature and
 * its encryption as the session requires.  A channel's request is served
 * against its session on the session's home connection.
 */
static ntstatus_t
dispatch_find_session(struct conn *c, const struct dispatch_walk *w,
    struct dispatch_one *d)
{
	struct smb2_req *req = &d->req;
	uint16_t command = d->h.command;
	struct session *s;
	ntstatus_t st;

	s = d->s = conn_session_find(c, req->session_id);
	if (s != NULL && s->bound != NULL)
		d->chs = s;
	if (s != NULL && w->encrypted &&
	    (d->chs != NULL ? d->chs->bound : s) != w->enc_sess)
		/* A transform is for one session. */
		return STATUS_ACCESS_DENIED;
	if (d->cmd->needs_session) {
		if (s == NULL || s->state == SESS_IN_PROGRESS) {
			d->s = NULL;
			d->ids_bad = 1;
			return STATUS_USER_SESSION_DELETED;
		}
		/* A channel of an expired session: the same answer. */
		if (d->chs != NULL && d->chs->bound->state == SESS_EXPIRED &&
		    command != SMB2_LOGOFF)
			return STATUS_NETWORK_SESSION_EXPIRED;
		if (s->state == SESS_EXPIRED ||
		    (s->expire != 0 && conn_now() >= s->expire)) {
			s->state = SESS_EXPIRED;
			if (!dispatch_expired_ok(req, command)) {
				/* Signed (clients require it) if it verifies. */
				st = dispatch_check_signature(c, req, s);
				if (st != STATUS_SUCCESS) {
					d->s = NULL;
					return st;
				}
				req->sess = s;
				return STATUS_NETWORK_SESSION_EXPIRED;
			}
		}
		req->sess = s;
	} else if (s != NULL)
		req->sess = s;
	st = dispatch_check_signature(c, req, s);
	if (st != STATUS_SUCCESS) {
		if (st == STATUS_ACCESS_DENIED)
			/* a refused request is not signed back */
			d->s = NULL;
		return st;
	}
	if (s != NULL && s->encrypt && !w->encrypted &&
	    command != SMB2_SESSION_SETUP && s->state == SESS_VALID)
		return STATUS_ACCESS_DENIED;
	/*
	 * A channel: the request is served against its session and
	 * the trees and opens on the session's home connection; it
	 * is answered here (req.chan), signed with the channel's key.
	 * LOGOFF stays on the channel slot (dispatch ends the session
	 * after the answer, free_after).
	 */
	if (d->chs != NULL && d->cmd->needs_session && command != SMB2_LOGOFF)
		req->sess = conn_session_home(d->chs, c, &req->conn);
	return smb2_session_may_act(req, command);
}

/* The tree the request names, and the open's ChannelSequence. */
static ntstatus_t
dispatch_find_tree(struct conn *c, const struct dispatch_walk *w,
    struct dispatch_one *d)
{
	struct smb2_req *req = &d->req;

	if (d->cmd->needs_tree) {
		req->tree = conn_tree_find(req->conn, req->sess, req->tree_id);
		if (req->tree == NULL) {
			d->ids_bad = 1;
			return STATUS_NETWORK_NAME_DELETED;
		}
		if (req->tree->encrypt && !w->encrypted)
			return STATUS_ACCESS_DENIED;
	}
	return dispatch_check_channel_sequence(c, req);
}

/* May the request run?  Its status, if not. */
static ntstatus_t
dispatch_admit(struct conn *c, struct dispatch_walk *w,
    struct dispatch_one *d)
{
	ntstatus_t st;

	if ((st = dispatch_relate(w, d)) != STATUS_SUCCESS ||
	    (st = dispatch_check_request(c, d)) != STATUS_SUCCESS ||
	    (st = dispatch_find_session(c, w, d)) != STATUS_SUCCESS ||
	    (st = dispatch_find_tree(c, w, d)) != STATUS_SUCCESS)
		return st;
	log_debug(6, "%s: %s mid %llu sid %llx tid %u", c->peer, d->cmd->name,
	    (unsigned long long)d->h.message_id,
	    (unsigned long long)d->req.session_id, d->req.tree_id);
	return STATUS_SUCCESS;
}

/*
 * The response starts at woff; an admitted request runs its handler.
 * -1 when not even a header fits.
 */
static int
dispatch_serve(struct conn *c, struct dispatch_walk *w,
    struct dispatch_one *d, ntstatus_t *st)
{
	struct conn_private *pv = c->priv;

	w->rsp.hdr = pv->sbuf + w->woff;
	if (w->woff + SMB2_HDR_LEN + 16 > pv->scap)
		return -1;
	wcur_init(&w->rsp.body, w->rsp.hdr, pv->scap - w->woff);
	wcur_zero(&w->rsp.body, SMB2_HDR_LEN);
	w->rsp.data_fd = -1;
	w->rsp.data_len = 0;
	w->rsp.set_fid = 0;
	w->rsp.async = 0;
	w->rsp.no_interim = w->rsp.compress = 0;
	if (*st == STATUS_SUCCESS && d->cmd != NULL) {
		*st = d->cmd->fn(&d->req, &w->rsp);
		if (*st == STATUS_SUCCESS)
			dispatch_create_channel_sequence(&d->req, &w->rsp);
	}
	return 0;
}

/*
 * Only the last response of a chain may carry bulk data by sendfile:
 * one before it gets the data copied into its body now.
 */
static int
dispatch_bulk_inline(struct conn *c, struct dispatch_walk *w,
    const struct smb2_chain *ch)
{
	ssize_t n = -1;

	if (w->rsp.data_fd < 0 || w->rsp.data_len == 0 || ch->done)
		return 0;
	if (wcur_left(&w->rsp.body) >= w->rsp.data_len)
		n = pread(w->rsp.data_fd, w->rsp.body.p, w->rsp.data_len,
		    w->rsp.data_off);
	if (n < 0 || (size_t)n != w->rsp.data_len) {
		conn_warnx(c, "short read of bulk data");
		return -1;
	}
	w->rsp.body.p += n;
	w->rsp.data_fd = -1;
	w->rsp.data_len = 0;
	return 0;
}

/*
 * The response's body and header: an error body when the handler wrote
 * none, the ids, the credits granted; then its place in the frame.
 */
static int
dispatch_rsp_close(struct conn *c, struct dispatch_walk *w,
    struct dispatch_one *d, ntstatus_t st)
{
	struct conn_private *pv = c->priv;
	struct smb2_req *req = &d->req;
	uint16_t command = d->h.command;

	if (w->rsp.body.err) {
		conn_warnx(c, "response does not fit, disconnecting");
		return -1;
	}
	if (wcur_off(&w->rsp.body) == SMB2_HDR_LEN && st != STATUS_SUCCESS)
		dispatch_error_body(&w->rsp.body);
	if (wcur_off(&w->rsp.body) == SMB2_HDR_LEN)
		dispatch_error_body(&w->rsp.body);	/* never an empty body */
	/* The session may have been created (SESSION_SETUP) or ended. */
	d->sid = req->session_id;
	if (command == SMB2_SESSION_SETUP && req->sess != NULL)
		d->sid = req->sess->session_id;
	d->tid = req->tree_id;
	if (command == SMB2_TREE_CONNECT && req->tree != NULL &&
	    st == STATUS_SUCCESS)
		d->tid = req->tree->tree_id;
	w->rsp.credits_granted = command == SMB2_CANCEL ? 0 :
	    conn_credits_grant(&pv->cred, d->h.credits, d->h.credit_charge);
	dispatch_rsp_hdr(req, &w->rsp, st, d->sid, d->tid);
	metrics_request(command, st, d->mlen,
	    wcur_off(&w->rsp.body) + w->rsp.data_len, d->mt0);
	w->outs[w->nout].off = w->woff;
	w->outs[w->nout].len = wcur_off(&w->rsp.body);
	w->outs[w->nout].sign_sess = NULL;
	return 0;
}

/* Which key signs the response, and whether the frame is encrypted. */
static void
dispatch_rsp_protect(struct conn *c, struct dispatch_walk *w,
    const struct dispatch_one *d, ntstatus_t st)
{
	struct conn_private *pv = c->priv;
	const struct smb2_req *req = &d->req;
	struct session *ss;		/* signs the response */
	uint16_t command = d->h.command;

	/* A channel signs with its own key (MS-SMB2 3.3.4.1.1). */
	ss = d->chs != NULL && req->sess == d->chs->bound ? d->chs : req->sess;
	/* Sign when the session signs: not a guest, not pending. */
	if (ss != NULL && ss->signing && st != STATUS_PENDING &&
	    (pv->sign_final == ss ||
	    ((ss->state == SESS_VALID || ss->state == SESS_EXPIRED) &&
	    (ss->signing_required || (d->h.flags & SMB2_FLAGS_SIGNED)))))
		w->outs[w->nout].sign_sess = ss;
	if (pv->sign_final == ss)
		pv->sign_final = NULL;
	/*
	 * A signed request naming a session this connection does not
	 * carry (another channel's, or gone): the answer has no key
	 * to be signed with, but keeps the SIGNED flag, which clients
	 * that require signing look for before they take the status
	 * (they skip the check of the signature itself for it).
	 */
	if (w->outs[w->nout].sign_sess == NULL &&
	    st == STATUS_USER_SESSION_DELETED &&
	    (d->h.flags & SMB2_FLAGS_SIGNED) && c->dialect >= DIALECT_300)
		le32_put(w->rsp.hdr + 16, le32_get(w->rsp.hdr + 16) |
		    SMB2_FLAGS_SIGNED);
	if (req->sess != NULL && req->sess->encrypt &&
	    req->sess->state == SESS_VALID && command != SMB2_SESSION_SETUP)
		w->encrypt_rsp = 1;
	/*
	 * MS-SMB2 3.3.4.1.4: a tree that requires encryption seals
	 * the answers to requests on it, not the TREE_CONNECT that
	 * made it (which came in plain: the client has not turned
	 * encryption on yet, and smbclient refuses a sealed answer).
	 */
	if (req->tree != NULL && req->tree->encrypt &&
	    command != SMB2_TREE_CONNECT)
		w->encrypt_rsp = 1;
	if (w->encrypt_rsp && w->enc_sess == NULL)
		w->enc_sess = req->sess;
}

/*
 * The response takes its place in the chain, and what the next related
 * request inherits is noted: session, tree, status, FileId.
 */
static void
dispatch_chain_carry(struct dispatch_walk *w, const struct dispatch_one *d,
    ntstatus_t st)
{
	const struct smb2_req *req = &d->req;

	/*
	 * The next response starts 8-aligned from the start of this
	 * one (its NextCommand, set in dispatch_finish), not from
	 * sbuf: the 4-byte frame header shifts the two.
	 */
	w->woff += (w->outs[w->nout].len + 7) & ~(size_t)7;
	w->nout++;
	w->prev_sid = d->sid;
	w->prev_tid = d->tid;
	if (d->h.command == SMB2_CREATE)
		w->prev_st = st;
	w->prev_ids_bad = d->ids_bad;
	if (w->rsp.set_fid) {
		w->prev_fp = w->rsp.fid_persistent;
		w->prev_fv = w->rsp.fid_volatile;
	} else if (req->related) {
		/* it used the inherited FileId; its own only if none was */
		if (w->prev_fp == SMB2_FID_RELATED &&
		    w->prev_fv == SMB2_FID_RELATED)
			dispatch_used_fid(d->h.command, d->m + SMB2_HDR_LEN,
			    d->mlen - SMB2_HDR_LEN, &w->prev_fp, &w->prev_fv);
	} else if (!(d->h.flags & SMB2_FLAGS_RELATED_OPERATIONS)) {
		/* an unrelated request used its own FileId, or none */
		w->prev_fp = w->prev_fv = SMB2_FID_RELATED;
		dispatch_used_fid(d->h.command, d->m + SMB2_HDR_LEN,
		    d->mlen - SMB2_HDR_LEN, &w->prev_fp, &w->prev_fv);
	}
}

/*
 * Each request of a chain in turn: decode it, admit it (its place in
 * the chain, session, signature, tree), serve it, close its response
 * (body, header, signing, encryption) and carry to the next what a
 * related request inherits.
 */
int
dispatch_walk(struct conn *c, struct dispatch_walk *w, const uint8_t *msg,
    size_t len)
{
	struct conn_private *pv = c->priv;
	struct smb2_chain ch;
	struct dispatch_one d;
	ntstatus_t st;
	int r;

	pv->no_response = 0;
	smb2_chain_init(&ch, msg, len);
	ch.tail_ok = pv->relayed;	/* elements split off (relay_split) */
	while ((r = smb2_chain_next(&ch, &d.m, &d.mlen)) == 1) {
		if (w->split && relay_owns(c, d.m, d.mlen))
			continue;	/* its own worker answers it */
		if (dispatch_decode(c, w, &ch, &d) < 0)
			return -1;
		st = dispatch_admit(c, w, &d);
		if (dispatch_serve(c, w, &d, &st) < 0)
			return -1;
		if (pv->no_response) {
			/* CANCEL: no response at all (MS-SMB2 3.3.5.16). */
			pv->no_response = 0;
			continue;
		}
		/* answered once, when it completes, and the chain with it */
		if (st == STATUS_PENDING && w->rsp.no_interim &&
		    dispatch_park_silent(c, &d.req, w, ch.buf + ch.off,
		    ch.done ? 0 : ch.len - ch.off) == 0)
			return 0;
		if (dispatch_bulk_inline(c, w, &ch) < 0 ||
		    dispatch_rsp_close(c, w, &d, st) < 0)
			return -1;
		dispatch_rsp_protect(c, w, &d, st);
		dispatch_chain_carry(w, &d, st);
		if (pv->dead)
			break;
		if (st == STATUS_PENDING && d.h.command == SMB2_CREATE &&
		    !ch.done) {
			/*
			 * A CREATE waiting for a break inside a chain: the
			 * requests after it wait with it, answered after its
			 * final response (as Samba does; the related ones need
			 * its FileId); a chain too long to keep, at once.
			 */
			r = dispatch_park_rest(c, d.h.message_id,
			    ch.buf + ch.off, ch.len - ch.off, w->charged);
			if (r < 0)
				return -1;
			if (r == 0)
				return 0;
			w->rest_st = STATUS_INSUFF_SERVER_RESOURCES;
		}
	}
	if (r < 0) {
		conn_warnx(c, "bad compound chain (NextCommand), disconnecting");
		return -1;
	}
	return 0;
}

int
dispatch_walk_end(struct conn *c, struct dispatch_walk *w)
{
	struct conn_private *pv = c->priv;
	struct session *enc_sess = w->enc_sess;
	int encrypt_rsp = w->encrypt_rsp, r;

	/* One key per session and direction: a channel uses its session's. */
	if (enc_sess != NULL && enc_sess->bound != NULL)
		enc_sess = enc_sess->bound;
	if (encrypt_rsp && (enc_sess == NULL || enc_sess->cipher == 0))
		encrypt_rsp = 0;
	r = dispatch_finish(c, w->outs, w->nout, &w->rsp, encrypt_rsp, enc_sess);
	if (pv->free_after != NULL) {
		struct session *fs = pv->free_after;

		/*
		 * LOGOFF: the response was signed with the session's key.
		 * A LOGOFF on a channel ends the session on every channel.
		 * Also a session replaced by a SESSION_SETUP with its
		 * PreviousSessionId on this connection (worker/smb2_session.c):
		 * its parked requests are answered now, after the setup's.
		 */
		pv->free_after = NULL;
		if (fs->bound != NULL)
			conn_session_free(fs->bound_conn, fs->bound);
		else
			conn_session_free(c, fs);
	}
	if (r < 0)
		return -1;
	return pv->dead ? -1 : 0;
}
