/*
 * Oplock and lease break notifications (MS-SMB2 2.2.23, 3.3.4.6, 3.3.4.7)
 * and OPLOCK_BREAK acknowledgements (2.2.24, 2.2.25, 3.3.5.22).  The break
 * decision is made in the shared state by the opener's worker
 * (worker/state.c); the holder's worker only tells its client and, on the
 * acknowledgement, wakes the waiting openers (BREAK_ACK messages).
 */

/*
 * Lease break acks in another worker.
 *
 * - Lease break acks in another worker.  A client may acknowledge a
 *   lease break on any of its connections, so possibly in a worker
 *   (another user of the same client GUID) that holds no open of the
 *   lease.  The acking worker finds the file and the workers that hold
 *   opens of the lease with shm_lease_holders (client GUID + lease key
 *   -> fid + pids, disconnected opens left out) and sends each
 *   SHM_WMSG_BREAK_WAIT: "the break you wait on moved on, look again".
 *   Openers parked on that break (PARK_BREAK) in those workers re-run
 *   and go on at once.  When the ack starts a staged follow-up break (RH
 *   -> R after an overwrite), the acking worker sends it as
 *   SHM_WMSG_BREAK to one holder, which delivers it to its connection
 *   (worker/smb2_oplock.c, lease_ack_tell_holders).
 */
#include "worker/smb2_oplock.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/state.h"
#include "worker/worker.h"

#define SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED	0x01

struct oplock_deliver {
	const struct shm_file_id *fid;
	const struct shm_break	*b;
	pid_t			 breaker;
	int			 done;
};

/* Whether op holds what break b breaks: its lease key, or its oplock. */
static int
oplock_open_holds(const struct open *op, const struct shm_break *b)
{
	if ((op->kind != OPEN_FILE && op->kind != OPEN_DIR) || !op->state_in)
		return 0;
	if (b->is_lease)
		return op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE &&
		    memcmp(op->lease_key, b->lease_key, 16) == 0;
	return op->fid_persistent == b->persistent_id;
}

static void
oplock_add_breaker(struct open *op, pid_t pid)
{
	unsigned i;

	if (pid <= 0)
		return;		/* a follow-up break: its waiters are listed */
	for (i = 0; i < op->nbreakers; i++)
		if (op->breakers[i] == pid)
			return;
	if (op->nbreakers < sizeof(op->breakers) / sizeof(op->breakers[0]))
		op->breakers[op->nbreakers++] = pid;
	/* More waiters than slots: they retry at the 35 s deadline. */
}

/* The header of an unsolicited notification, MS-SMB2 3.3.4.6. */
static void
oplock_notice_hdr(uint8_t *buf, uint64_t sid)
{
	struct smb2_hdr h;

	memset(&h, 0, sizeof(h));
	h.command = SMB2_OPLOCK_BREAK;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	h.message_id = UINT64_MAX;
	h.session_id = sid;
	smb2_hdr_encode(buf, &h);
}

static void
oplock_deliver_conn(struct conn *c, void *arg)
{
	struct oplock_deliver *d = arg;
	const struct shm_break *b = d->b;
	struct conn_private *pv = c->priv;
	struct open *found = NULL;
	uint8_t msg[SMB2_HDR_LEN + 44];
	struct wcur w;
	uint32_t cur;
	unsigned i;

	if (d->done || pv->opens == NULL)
		return;
	if (b->is_lease && memcmp(c->client_guid, b->client_guid, 16) != 0)
		return;
	for (i = 0; i < pv->nopens; i++) {
		struct open *op = &pv->opens[i];

		if (oplock_open_holds(op, b)) {
			oplock_add_breaker(op, d->breaker);
			if (found == NULL)
				found = op;
		}
	}
	if (found == NULL)
		return;
	d->done = 1;
	/*
	 * The current state is the holder's own view: a break that came by
	 * message carries only the new state.
	 */
	cur = b->is_lease ? found->lease_state : found->oplock_level;
	if (b->is_lease) {
		struct shm_lease_rec l;
		struct shm *s = state_shm();

		/*
		 * While the break is in progress the record has the old state;
		 * one settled at once (R -> none after an ack in another
		 * worker) starts from the state the break names.
		 */
		if (s != NULL && shm_lease_get(s, b->client_guid, b->lease_key,
		    &l) == 0 && l.breaking)
			cur = l.state;
		else if (b->cur != 0)
			cur = b->cur;
	}
	wcur_init(&w, msg, sizeof(msg));
	wcur_zero(&w, SMB2_HDR_LEN);
	if (b->is_lease) {
		/* MS-SMB2 2.2.23.2 */
		oplock_notice_hdr(msg, 0);
		wcur_le16(&w, 44);
		wcur_le16(&w, found->lease_version == 2 ? b->epoch : 0);
		wcur_le32(&w, (cur & (SHM_LEASE_W | SHM_LEASE_H)) ?
		    SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED : 0);
		wcur_bytes(&w, b->lease_key, 16);
		wcur_le32(&w, cur);
		wcur_le32(&w, b->new_level);
		wcur_zero(&w, 12);	/* BreakReason, AccessMaskHint, ShareMaskHint */
	} else {
		/* MS-SMB2 2.2.23.1 */
		oplock_notice_hdr(msg, found->sess ? found->sess->session_id : 0);
		wcur_le16(&w, 24);
		wcur_u8(&w, (uint8_t)b->new_level);
		wcur_zero(&w, 5);
		wcur_le64(&w, found->fid_persistent);
		wcur_le64(&w, found->fid_volatile);
	}
	if (w.err || conn_notice_queue(c, msg, wcur_off(&w),
	    found->sess ? found->sess->session_id : 0) != 0) {
		conn_warnx(c, "break notification dropped (queue full)");
		return;
	}
	log_debug(3, "%s: %s break %x -> %x sent", c->peer,
	    b->is_lease ? "lease" : "oplock", cur, b->new_level);
	/* No ack comes for R -> none or level II -> none: settled now. */
	for (i = 0; i < pv->nopens; i++) {
		struct open *op = &pv->opens[i];

		if (op->kind == OPEN_FREE || !op->state_in)
			continue;
		if (b->is_lease && !(cur & (SHM_LEASE_W | SHM_LEASE_H)) &&
		    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE &&
		    memcmp(op->lease_key, b->lease_key, 16) == 0)
			op->lease_state = b->new_level;
		else if (!b->is_lease && op == found &&
		    cur == SMB2_OPLOCK_LEVEL_II)
			op->oplock_level = (uint8_t)b->new_level;
	}
	worker_kick(c);
}

void
smb2_oplock_break_deliver(const struct shm_file_id *fid,
    const struct shm_break *b, pid_t breaker)
{
	struct oplock_deliver d = { fid, b, breaker, 0 };

	worker_foreach_conn(oplock_deliver_conn, &d);
	if (!d.done) {
		/* The holder is gone from here: settle it so nobody waits. */
		struct shm *s = state_shm();

		if (s != NULL && b->is_lease)
			(void)shm_lease_break_ack(s, b->client_guid, b->lease_key,
			    b->new_level);
		else if (s != NULL)
			(void)shm_oplock_break_ack(s, fid, b->persistent_id,
			    (uint8_t)b->new_level);
		state_break_acked(fid, &breaker, 1);
	}
}

struct lease_acked {
	const uint8_t	*client_guid;
	const uint8_t	*key;
	uint32_t	 state;
	int		 keep_waiters;	/* a next break needs an ack too */
	int		 have;
	struct shm_file_id fid;
};

static void	lease_acked_conn(struct conn *, void *);

struct oplock_wait {
	const struct shm_break	*b;
	pid_t			 waiter;
	int			 found;
};

static void
oplock_wait_conn(struct conn *c, void *arg)
{
	struct oplock_wait *w = arg;
	const struct shm_break *b = w->b;
	struct conn_private *pv = c->priv;
	unsigned i;

	if (pv->opens == NULL ||
	    (b->is_lease && memcmp(c->client_guid, b->client_guid, 16) != 0))
		return;
	for (i = 0; i < pv->nopens; i++) {
		struct open *op = &pv->opens[i];

		if (oplock_open_holds(op, b)) {
			oplock_add_breaker(op, w->waiter);
			w->found = 1;
		}
	}
}

void
smb2_oplock_break_wait(const struct shm_file_id *fid,
    const struct shm_break *b, pid_t waiter)
{
	struct oplock_wait w = { b, waiter, 0 };
	struct shm *s = state_shm();
	struct shm_lease_rec l;

	worker_foreach_conn(oplock_wait_conn, &w);
	/* Nobody holds it here: go on. */
	if (!w.found) {
		state_break_acked(fid, &waiter, 1);
		return;
	}
	if (!b->is_lease || s == NULL)
		return;		/* an oplock is acked on its own connection, here */
	if (shm_lease_get(s, b->client_guid, b->lease_key, &l) != 0) {
		state_break_acked(fid, &waiter, 1);
		return;
	}
	if (l.breaking) {
		/*
		 * In progress (or a follow-up after an ack elsewhere): the
		 * opens here hold what the record holds, and their waiters
		 * are told on the ack.
		 */
		struct lease_acked a;

		memset(&a, 0, sizeof(a));
		a.client_guid = b->client_guid;
		a.key = b->lease_key;
		a.state = l.state;
		a.keep_waiters = 1;
		worker_foreach_conn(lease_acked_conn, &a);
		return;
	}
	/*
	 * Over already: acknowledged before the waiter was listed, or on a
	 * connection of another worker (a client acks a lease break on any
	 * of its connections, and that worker sends this message to every
	 * holder of the lease).  The opens here take the acknowledged state
	 * and everyone waiting on them goes on, the new waiter too.
	 */
	{
		struct lease_acked a;

		memset(&a, 0, sizeof(a));
		a.client_guid = b->client_guid;
		a.key = b->lease_key;
		a.state = l.state;
		worker_foreach_conn(lease_acked_conn, &a);
	}
}

struct oplock_sync {
	const uint8_t	*client_guid;
	const uint8_t	*key;
	uint32_t	 state;
};

static void
oplock_sync_conn(struct conn *c, void *arg)
{
	struct oplock_sync *y = arg;
	struct conn_private *pv = c->priv;
	unsigned i;

	if (pv->opens == NULL ||
	    memcmp(c->client_guid, y->client_guid, 16) != 0)
		return;
	for (i = 0; i < pv->nopens; i++) {
		struct open *op = &pv->opens[i];

		if (op->kind != OPEN_FREE && op->state_in &&
		    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE &&
		    memcmp(op->lease_key, y->key, 16) == 0)
			op->lease_state = y->state;
	}
}

void
smb2_oplock_lease_sync(const uint8_t *client_guid, const uint8_t *key,
    uint32_t state)
{
	struct oplock_sync y = { client_guid, key, state };

	worker_foreach_conn(oplock_sync_conn, &y);
}

static ntstatus_t
oplock_ack(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	struct cur *c = &req->body;
	struct open *op;
	uint8_t level;
	int rc;
	ntstatus_t status;

	cur_skip(c, 2);
	level = cur_u8(c);
	cur_skip(c, 5);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	if (!op->state_in || s == NULL ||
	    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE)
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	fid.dev = op->state_dev;
	fid.ino = op->state_ino;
	/* MS-SMB2 3.3.5.22.1: only level II or none are acknowledged. */
	if (level != SMB2_OPLOCK_LEVEL_NONE && level != SMB2_OPLOCK_LEVEL_II)
		return STATUS_INVALID_PARAMETER;
	rc = shm_oplock_break_ack(s, &fid, op->fid_persistent, level);
	if (rc == -EINVAL) {
		/* More than the break allows: the open ends at none. */
		(void)shm_oplock_break_ack(s, &fid, op->fid_persistent,
		    SMB2_OPLOCK_LEVEL_NONE);
		op->oplock_level = SMB2_OPLOCK_LEVEL_NONE;
		state_break_acked(&fid, op->breakers, op->nbreakers);
		op->nbreakers = 0;
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	}
	if (rc != 0)
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	op->oplock_level = level;
	state_break_acked(&fid, op->breakers, op->nbreakers);
	op->nbreakers = 0;
	/* MS-SMB2 2.2.25.1 */
	wcur_le16(&rsp->body, 24);
	wcur_u8(&rsp->body, level);
	wcur_zero(&rsp->body, 5);
	wcur_le64(&rsp->body, op->fid_persistent);
	wcur_le64(&rsp->body, op->fid_volatile);
	return STATUS_SUCCESS;
}

/*
 * Every open of this worker sharing the lease takes the acknowledged state,
 * whichever connection of the client sent the ack (smbtorture
 * smb2.lease.v2_complex2 acks on another connection), and the openers
 * waiting on the break are told.
 */
static void
lease_acked_conn(struct conn *c, void *arg)
{
	struct lease_acked *a = arg;
	struct conn_private *pv = c->priv;
	unsigned i;

	if (pv->opens == NULL || memcmp(c->client_guid, a->client_guid, 16) != 0)
		return;
	for (i = 0; i < pv->nopens; i++) {
		struct open *op = &pv->opens[i];

		if (op->kind == OPEN_FREE || !op->state_in ||
		    op->oplock_level != SMB2_OPLOCK_LEVEL_LEASE ||
		    memcmp(op->lease_key, a->key, 16) != 0)
			continue;
		op->lease_state = a->state;
		a->fid.dev = op->state_dev;
		a->fid.ino = op->state_ino;
		a->have = 1;
		if (a->keep_waiters)
			continue;
		state_break_acked(&a->fid, op->breakers, op->nbreakers);
		op->nbreakers = 0;
	}
}

/*
 * The holders of the lease in other workers (the ack may come on any
 * connection of the client: two users' sessions of one Windows client are
 * served by two workers): a BREAK_WAIT tells each to look at the lease
 * again, so that its openers waiting on this break go on (or keep waiting
 * for a follow-up break) now, not at the timeout.  A follow-up break this
 * worker cannot deliver (no open of the lease here) goes to a holder.
 * More holders than a pid set holds: the rest wait for their timeout.
 */
static void
lease_ack_tell_holders(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct lease_acked *a, struct shm_break *next, int have_next)
{
	struct shm_wmsg_msg m;
	struct shm_pids holders;
	struct shm_file_id fid;
	pid_t self = getpid();
	unsigned i;

	if (shm_lease_holders(s, guid, key, &fid, &holders) != 0)
		return;
	if (!a->have)
		a->fid = fid;
	if (have_next && !a->have && state_wmsg() != NULL) {
		for (i = 0; i < holders.n; i++) {
			if (holders.pid[i] == self)
				continue;
			memset(&m, 0, sizeof(m));
			m.type = SHM_WMSG_BREAK;
			m.fid = fid;
			m.is_lease = 1;
			memcpy(m.lease_key, key, SHM_GUID_LEN);
			memcpy(m.client_guid, guid, SHM_GUID_LEN);
			m.level = next->new_level;
			m.epoch = next->epoch;
			m.action = next->cur;	/* the acked state: not known there */
			if (shm_wmsg_send(state_wmsg(), holders.pid[i], &m) == 0)
				break;	/* one notification per break */
		}
	}
	for (i = 0; i < holders.n && state_wmsg() != NULL; i++) {
		if (holders.pid[i] == self)
			continue;
		memset(&m, 0, sizeof(m));
		m.type = SHM_WMSG_BREAK_WAIT;
		m.fid = fid;
		m.is_lease = 1;
		memcpy(m.lease_key, key, SHM_GUID_LEN);
		memcpy(m.client_guid, guid, SHM_GUID_LEN);
		(void)shm_wmsg_send(state_wmsg(), holders.pid[i], &m);
	}
	/* Openers of this worker whose wait is listed in a holder's worker. */
	if (!a->keep_waiters)
		state_wake_local(PARK_BREAK, &fid);
}

static ntstatus_t
lease_ack(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *conn = req->conn;
	struct shm *s = state_shm();
	struct lease_acked a;
	struct shm_break next;
	struct cur *c = &req->body;
	uint8_t key[16];
	uint32_t state;
	int rc, have_next = 0;

	cur_skip(c, 2 + 2 + 4);		/* StructureSize, Reserved, Flags */
	cur_bytes(c, key, 16);
	state = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	if (s == NULL || conn->dialect < 0x0210)
		return STATUS_INVALID_PARAMETER;
	rc = shm_lease_break_ack_next(s, conn->client_guid, key, state, &next,
	    &have_next);
	if (rc == -EINVAL)
		return STATUS_REQUEST_NOT_ACCEPTED;
	if (rc != 0)
		return STATUS_UNSUCCESSFUL;
	memset(&a, 0, sizeof(a));
	a.client_guid = conn->client_guid;
	a.key = key;
	a.state = state;
	/* A next break that needs an ack keeps the openers waiting. */
	a.keep_waiters = have_next &&
	    (next.cur & (SHM_LEASE_W | SHM_LEASE_H)) != 0;
	worker_foreach_conn(lease_acked_conn, &a);
	lease_ack_tell_holders(s, conn->client_guid, key, &a, &next, have_next);
	if (a.have && have_next) {
		next.pid = getpid();
		smb2_oplock_break_deliver(&a.fid, &next, 0);
	}
	/* MS-SMB2 2.2.25.2 */
	wcur_le16(&rsp->body, 36);
	wcur_le16(&rsp->body, 0);
	wcur_le32(&rsp->body, 0);
	wcur_bytes(&rsp->body, key, 16);
	wcur_le32(&rsp->body, state);
	wcur_le64(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_oplock_break_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	uint16_t size;
	struct cur peek = req->body;

	size = cur_le16(&peek);
	if (size == 24)
		return oplock_ack(req, rsp);
	if (size == 36)
		return lease_ack(req, rsp);
	return STATUS_INVALID_PARAMETER;
}
