/*
 * Async requests (MS-SMB2 3.3.4.2): parking a request in a per-connection
 * slot with its interim response, running it again when woken, its final
 * response; and unsolicited notices (break notifications).  The compound
 * walk and the response framing are in worker/dispatch.c.
 */
#include "worker/worker.h"
#include "worker/dispatch.h"
#include "worker/dispatch_priv.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/smb2_hdr.h"
#include "shm/shm.h"
#include "worker/conn_priv.h"

/*
 * Compound chains and async: a CREATE that waits for a break inside a
 * chain keeps the requests after it in its park slot (conn_pending
 * rest_len; their message ids charged on arrival); when the CREATE's
 * final response is built, they are served with its session, tree,
 * FileId and status as the related state and sent in the same frame
 * after it (worker/dispatch_async.c, smb2.compound.compound-break).  A
 * chain too long for the slot (CONN_PARK_BUF) gets
 * INSUFF_SERVER_RESOURCES for the rest.  A related request uses the
 * FileId its predecessor had or made, whatever FileId it carries itself
 * (MS-SMB2 3.3.5.2.7.2; worker/open.c open_fid_decode), and passes it
 * on.  A SET_INFO that waits for lease breaks (rename, delete on close)
 * sends no interim response (struct smb2_rsp no_interim,
 * dispatch_park_silent): it is answered once, synchronously, with its
 * credits, as Windows does; when it ends a chain, the chain's earlier
 * responses wait in its slot and go out with it, in one frame (held_*,
 * up to CONN_HELD_MAX; smb2.compound_async.rename_last).  In the middle
 * of a chain the requests after it wait in its slot as behind a CREATE,
 * the responses before it too, and the whole chain is answered in one
 * frame when it completes (smb2.compound_async.rename_middle).  The
 * Linux client renames an open file it holds a lease on with CREATE +
 * SET_INFO + CLOSE, where the CREATE waits (write caching) and then the
 * rename (handle caching): the rest, resumed after the first wait, parks
 * again already charged (dispatch_park_rest's charged).
 */

/* ---- async requests (MS-SMB2 3.3.4.2) ---- */

ntstatus_t
dispatch_park(struct smb2_req *req, struct smb2_rsp *rsp, int kind,
    uint64_t dev, uint64_t ino, uint64_t deadline_ms,
    struct conn_pending **out)
{
	/* Parked on the connection it arrived on: the answer goes there. */
	struct conn *c = req->chan != NULL ? req->chan : req->conn;
	struct conn_private *pv = c->priv;
	struct conn_pending *p = pv->resuming;
	size_t need;

	if (p == NULL || p->message_id != req->message_id) {
		/*
		 * Inside a chain only the last request, or a CREATE waiting
		 * for a break, may go async; Windows fails the others with
		 * INTERNAL_ERROR (MS-SMB2 3.3.5.2.7 note; smbtorture
		 * smb2.compound.interim2).  A SET_INFO waiting for lease
		 * breaks does too, with no interim: the chain waits with it
		 * (dispatch_park_silent; smb2.compound_async.rename_middle).
		 */
		if (req->next_command != 0 && req->command != SMB2_CREATE &&
		    req->command != SMB2_SET_INFO)
			return STATUS_INTERNAL_ERROR;
		/*
		 * No room to wait (CONN_MAX_PENDING a connection, pages of
		 * slots bounded per connection and per worker: what one
		 * client holds in a worker): "resources are constrained",
		 * STATUS_INSUFFICIENT_RESOURCES (MS-SMB2 3.3.4.2; smbtorture
		 * 4.22 smb2.credits.*_max_async_credits expect it past
		 * 511).  A CREATE or SET_INFO may keep its chain in the
		 * slot: it needs a big one.
		 */
		need = req->command == SMB2_CREATE ||
		    req->command == SMB2_SET_INFO ? CONN_PARK_BUF : req->len;
		if (pv->role != CONN_ROLE_WORKER || req->len > CONN_PARK_BUF)
			return STATUS_INSUFFICIENT_RESOURCES;
		p = conn_pending_add(c, req->message_id, req->session_id, need);
		if (p == NULL)
			return STATUS_INSUFFICIENT_RESOURCES;
		if (p->buf == NULL) {
			/* Once per slot; the slot keeps it for the next park. */
			p->buf = malloc(CONN_PARK_BUF);
			if (p->buf == NULL) {
				conn_pending_del(p);
				return STATUS_INSUFFICIENT_RESOURCES;
			}
			p->cap = CONN_PARK_BUF;
		}
		memcpy(p->buf, req->hdr, req->len);
		p->len = req->len;
		p->rest_len = 0;
		p->command = req->command;
		p->tree_id = req->tree != NULL ? req->tree->tree_id : req->tree_id;
		p->encrypted = req->encrypted;
		p->related = req->related;
		p->related_fp = req->related_fid_persistent;
		p->related_fv = req->related_fid_volatile;
	}
	if (p->kind != kind || p->since_ms == 0)
		p->since_ms = shm_now_ms();
	p->kind = kind;
	p->dev = dev;
	p->ino = ino;
	p->deadline_ms = deadline_ms;
	if (deadline_ms != 0)
		worker_tick_arm();
	rsp->async = 1;
	rsp->async_id = p->async_id;
	if (out != NULL)
		*out = p;
	return STATUS_PENDING;
}

int
dispatch_park_silent(struct conn *c, const struct smb2_req *req,
    struct dispatch_walk *w, const uint8_t *rest, size_t rest_len)
{
	struct conn *pc = req->chan != NULL ? req->chan : c;
	struct conn_pending *p = conn_pending_find(pc, 0, req->message_id);
	int last = rest_len == 0;
	size_t hl;
	int i;

	if (p == NULL)
		return -1;
	/*
	 * Inside a chain: the requests after it wait in the slot (their
	 * message ids charged now), and so do the responses before it.
	 */
	if (!last) {
		hl = w->woff - SMB2_FRAME_LEN;
		if (pc != c || w->nout > CONN_HELD_MAX || p->buf == NULL ||
		    rest_len + hl > p->cap - p->len)
			return -1;
		if (dispatch_park_rest(c, req->message_id, rest, rest_len,
		    w->charged) != 0)
			return -1;
	}
	p->silent = 1;
	/*
	 * The chain's earlier responses wait for it (Windows answers such a
	 * chain at once when its last request completes; smbtorture's
	 * smb2.compound_async.rename_last).  Too many or too large: they
	 * go now.
	 */
	hl = w->woff - SMB2_FRAME_LEN;
	if (w->nout == 0 || pc != c || w->nout > CONN_HELD_MAX ||
	    p->buf == NULL || hl > p->cap - p->len - p->rest_len)
		return 0;
	memcpy(p->buf + p->len + p->rest_len, c->priv->sbuf + SMB2_FRAME_LEN,
	    hl);
	p->held_len = hl;
	p->held_n = (unsigned)w->nout;
	for (i = 0; i < w->nout; i++) {
		p->held_off[i] = w->outs[i].off;
		p->held_olen[i] = w->outs[i].len;
		p->held_sign[i] = w->outs[i].sign_sess;
		p->held_sign_id[i] = w->outs[i].sign_sess != NULL ?
		    w->outs[i].sign_sess->session_id : 0;
	}
	p->held_encrypt = w->encrypt_rsp;
	w->nout = 0;		/* nothing goes out now */
	return 0;
}

/*
 * The held responses back in sbuf before the final one, into outs; how
 * many (0: none held, or a signing session gone: they are dropped).
 */
static int
dispatch_held_restore(struct conn *c, struct conn_pending *p,
    struct dispatch_out *outs)
{
	unsigned i;

	if (p->held_len == 0)
		return 0;
	for (i = 0; i < p->held_n; i++) {
		struct session *s = p->held_sign[i];

		if (s != NULL && (!s->in_use ||
		    s->session_id != p->held_sign_id[i]))
			return 0;
	}
	memcpy(c->priv->sbuf + SMB2_FRAME_LEN, p->buf + p->len + p->rest_len,
	    p->held_len);
	for (i = 0; i < p->held_n; i++) {
		outs[i].off = p->held_off[i];
		outs[i].len = p->held_olen[i];
		outs[i].sign_sess = p->held_sign[i];
	}
	return (int)p->held_n;
}

int
dispatch_park_rest(struct conn *c, uint64_t mid, const uint8_t *rest,
    size_t len, int charged)
{
	struct conn_private *pv = c->priv;
	struct conn_pending *p = conn_pending_find(c, 0, mid);
	struct smb2_chain ch;
	struct smb2_hdr h;
	const uint8_t *m;
	size_t mlen;
	int r = 0;

	if (p == NULL || p->buf == NULL || len > p->cap - p->len)
		return 1;
	/*
	 * Their message ids are used now, as if they were served: a client
	 * sending a later id while they wait is inside its window.  The
	 * headers are checked again when they are served.
	 */
	smb2_chain_init(&ch, rest, len);
	/*
	 * Already charged: the rest of a chain resumed after an earlier
	 * wait, parked again behind a later member (the Linux client's
	 * CREATE + SET_INFO + CLOSE rename, where both the CREATE and the
	 * rename wait for breaks): charging them twice finds their ids used.
	 */
	while (!charged && (r = smb2_chain_next(&ch, &m, &mlen)) == 1) {
		uint16_t charge;

		if (smb2_hdr_decode(m, mlen, &h) < 0)
			return -1;
		if (h.command == SMB2_CANCEL)
			continue;
		charge = c->dialect == DIALECT_202 ? 1 : h.credit_charge;
		if (pv->relayed) {	/* the owner keeps the window */
			conn_credits_spend(&pv->cred, charge);
			if (conn_credits_replay(&pv->cred, h.message_id,
			    charge) < 0)
				return -1;
		} else if (conn_credits_charge(&pv->cred, h.message_id, charge) < 0) {
			conn_warnx(c, "message id %llu (charge %u) outside the "
			    "window, disconnecting",
			    (unsigned long long)h.message_id, charge);
			return -1;
		}
	}
	if (!charged && r < 0)
		return -1;
	memcpy(p->buf + p->len, rest, len);
	p->rest_len = len;
	return 0;
}

struct conn_pending *
dispatch_resuming(const struct smb2_req *req)
{
	struct conn_pending *p = (req->chan != NULL ? req->chan :
	    req->conn)->priv->resuming;

	return p != NULL && p->message_id == req->message_id ? p : NULL;
}

/*
 * The requests of a chain that waited behind a CREATE (dispatch_park_rest):
 * served now, with the CREATE's session, tree, FileId and status as the
 * related state, and sent in one frame after its final response.  They are
 * copied out of the slot first: serving them may park one in that slot.
 */
static int
dispatch_resume_rest(struct conn *c, struct conn_pending *p,
    const struct dispatch_out *firsts, int nfirst,
    const struct smb2_rsp *first_rsp, ntstatus_t st, int encrypt,
    struct session *hs)
{
	const struct dispatch_out *first = &firsts[nfirst - 1];
	static uint8_t rest[CONN_PARK_BUF];	/* one walk at a time */
	struct dispatch_walk w;
	size_t len = p->rest_len;

	memcpy(rest, p->buf + p->len, len);
	dispatch_walk_init(&w);
	memcpy(w.outs, firsts, (size_t)nfirst * sizeof(*firsts));
	w.nout = nfirst;
	w.woff = first->off + ((first->len + 7) & ~(size_t)7);
	w.rsp = *first_rsp;
	w.encrypted = p->encrypted;
	w.encrypt_rsp = encrypt;
	w.enc_sess = hs;
	w.charged = 1;
	w.prev_sid = p->session_id;
	w.prev_tid = p->tree_id;
	/* a CREATE's status and FileId; a SET_INFO passes its own on */
	if (p->command == SMB2_CREATE)
		w.prev_st = st;
	if (first_rsp->set_fid) {
		w.prev_fp = first_rsp->fid_persistent;
		w.prev_fv = first_rsp->fid_volatile;
	} else if (p->related) {
		w.prev_fp = p->related_fp;
		w.prev_fv = p->related_fv;
	}
	conn_pending_del(p);
	if (dispatch_walk(c, &w, rest, len) < 0)
		return -1;
	return dispatch_walk_end(c, &w);
}

/* Sends the final response of a slot: its handler run again, or final. */
static int
dispatch_resume(struct conn *c, struct conn_pending *p)
{
	struct conn_private *pv = c->priv;
	const struct dispatch_cmd *cmd;
	struct dispatch_out outs[CONN_HELD_MAX + 1];
	struct dispatch_out out;
	struct smb2_req req;
	struct smb2_rsp rsp;
	struct smb2_hdr h;
	struct session *s, *hs;
	ntstatus_t st = p->final;
	size_t base = SMB2_FRAME_LEN;
	int encrypt, nheld = 0;

	s = conn_session_find(c, p->session_id);
	/*
	 * An expired session's parked requests still get their final
	 * answers (a CANCEL's CANCELLED: smbtorture smb2.session.expire2*);
	 * they are not run again.
	 */
	if (smb2_hdr_decode(p->buf, p->len, &h) < 0 || h.command >= SMB2_NCOMMANDS ||
	    s == NULL || (s->state != SESS_VALID &&
	    !(s->state == SESS_EXPIRED && p->final != 0))) {
		if (p->cancel != NULL)
			p->cancel(c, p);
		conn_pending_del(p);
		return 0;
	}
	cmd = &dispatch_table[h.command];
	memset(&req, 0, sizeof(req));
	/* On a channel: its session's trees and opens, answered here. */
	req.sess = hs = conn_session_home(s, c, &req.conn);
	req.chan = c;
	req.command = h.command;
	req.credit_charge = h.credit_charge;
	req.flags = h.flags & ~SMB2_FLAGS_RELATED_OPERATIONS;
	req.message_id = h.message_id;
	req.async_id = p->async_id;
	req.tree_id = p->tree_id;
	req.session_id = p->session_id;
	req.channel_sequence = (uint16_t)h.status;
	req.hdr = p->buf;
	req.len = p->len;
	cur_init(&req.body, p->buf, p->len);
	cur_seek(&req.body, SMB2_HDR_LEN);
	req.encrypted = p->encrypted;
	req.related = p->related;
	req.related_fid_persistent = p->related_fp;
	req.related_fid_volatile = p->related_fv;
	if (cmd->needs_tree) {
		req.tree = conn_tree_find(req.conn, hs, p->tree_id);
		if (req.tree == NULL && st == 0)
			st = STATUS_NETWORK_NAME_DELETED;
	}
	/* a silent chain end: its chain's responses first (they wait too) */
	if (p->silent && (nheld = dispatch_held_restore(c, p, outs)) > 0)
		base = SMB2_FRAME_LEN + p->held_len;
	memset(&rsp, 0, sizeof(rsp));
	rsp.data_fd = -1;
	rsp.hdr = pv->sbuf + base;
	wcur_init(&rsp.body, rsp.hdr, pv->scap - base);
	wcur_zero(&rsp.body, SMB2_HDR_LEN);
	if (st == 0) {
		pv->resuming = p;
		st = cmd->fn(&req, &rsp);
		pv->resuming = NULL;
		if (st == STATUS_SUCCESS)
			dispatch_create_channel_sequence(&req, &rsp);
		if (st == STATUS_PENDING && p->in_use && p->final == 0)
			return 0;	/* parked again: still waiting */
	}
	if (p->cancel != NULL && st != STATUS_PENDING)
		p->cancel(c, p);
	if (rsp.body.err)
		return -1;
	if (wcur_off(&rsp.body) == SMB2_HDR_LEN)
		dispatch_error_body(&rsp.body);
	if (p->silent) {
		/* no interim went out: a plain answer, with the credits */
		rsp.async = 0;
		rsp.credits_granted = conn_credits_grant(&pv->cred,
		    h.credits, h.credit_charge);
	} else {
		rsp.async = 1;
		rsp.async_id = p->async_id;
		rsp.credits_granted = 0;	/* the interim granted them */
	}
	dispatch_rsp_hdr(&req, &rsp, st, p->session_id, p->tree_id);
	out.off = base;
	out.len = wcur_off(&rsp.body);
	out.sign_sess = s->signing && (s->signing_required ||
	    (h.flags & SMB2_FLAGS_SIGNED)) ? s : NULL;
	encrypt = (p->encrypted || hs->encrypt ||
	    (req.tree != NULL && req.tree->encrypt)) && hs->cipher != 0;
	if (rsp.data_fd >= 0 && encrypt)
		out.sign_sess = NULL;
	outs[nheld] = out;
	encrypt = encrypt || (nheld > 0 && p->held_encrypt);
	if (p->rest_len == 0) {
		conn_pending_del(p);
		return dispatch_finish(c, outs, nheld + 1, &rsp, encrypt, hs);
	}
	return dispatch_resume_rest(c, p, outs, nheld + 1, &rsp, st, encrypt,
	    hs);
}

/* An unsolicited message (break notification) queued on the connection. */
static int
dispatch_notice(struct conn *c, const struct conn_notice *n)
{
	struct conn_private *pv = c->priv;
	struct dispatch_out out;
	struct smb2_rsp rsp;
	struct session *s = n->session_id ? conn_session_find(c, n->session_id) : NULL;
	struct conn *home;

	s = conn_session_home(s, c, &home);	/* a channel: its session's keys */

	memset(&rsp, 0, sizeof(rsp));
	rsp.data_fd = -1;
	memcpy(pv->sbuf + SMB2_FRAME_LEN, n->buf, n->len);
	out.off = SMB2_FRAME_LEN;
	out.len = n->len;
	out.sign_sess = NULL;	/* MS-SMB2 3.3.4.6/3.3.4.7: not signed */
	return dispatch_finish(c, &out, 1, &rsp, s != NULL && s->encrypt &&
	    s->cipher != 0, s);
}

static int
dispatch_async_run_now(struct conn *c)
{
	struct conn_private *pv = c->priv;
	unsigned i, left = 0;
	int rc;

	if (pv->tx == CONN_TX_DEFERRED) {
		pv->tx = CONN_TX_NONE;
		rc = conn_flush(c);
		if (rc < 0 && rc != -EAGAIN)
			return -1;
	}
	while (pv->nnotices > 0 && !conn_output_pending(c)) {
		struct conn_notice n = pv->notices[0];

		pv->nnotices--;
		memmove(&pv->notices[0], &pv->notices[1],
		    pv->nnotices * sizeof(pv->notices[0]));
		if (dispatch_notice(c, &n) < 0)
			return -1;
	}
	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || !p->ready)
			continue;
		if (conn_output_pending(c) || pv->dead) {
			left++;
			continue;
		}
		p->ready = 0;
		if (dispatch_resume(c, p) < 0)
			return -1;
	}
	pv->nready = left;
	return 0;
}

int
dispatch_async_run(struct conn *c)
{
	struct conn_private *pv = c->priv;
	int ring = pv->tx_ring, rc;

	/*
	 * Its callers end what the answers need right after (a LOGOFF frees
	 * the session that signs them, a tree disconnect its tree): each
	 * answer goes out now, none is left to the ring (conn_private.tx),
	 * and one left to it before goes first.
	 */
	pv->tx_ring = 0;
	rc = dispatch_async_run_now(c);
	pv->tx_ring = ring;
	return rc;
}

int
dispatch_async_complete(struct conn *c, struct conn_pending *p, ntstatus_t st)
{
	conn_pending_finish(c, p, st);
	return 0;
}
