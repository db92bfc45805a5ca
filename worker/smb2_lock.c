/*
 * SMB2 LOCK (MS-SMB2 2.2.26, 2.2.27, 3.3.5.14): byte-range locks kept in
 * the shared state, so a lock taken through one worker is seen by every
 * other.  A blocking lock (one element without FAIL_IMMEDIATELY) that meets
 * a conflict is parked and runs again whenever a LOCK_RELEASED message
 * names its file; CANCEL, close, logoff and disconnect end it.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2_lock.h"
#include "worker/smb2.h"
#include "worker/state.h"

/* MS-SMB2 2.2.26.1 */
#define SMB2_LOCKFLAG_SHARED_LOCK	0x01u
#define SMB2_LOCKFLAG_EXCLUSIVE_LOCK	0x02u
#define SMB2_LOCKFLAG_UNLOCK		0x04u
#define SMB2_LOCKFLAG_FAIL_IMMEDIATELY	0x10u

#define LOCK_MAX_ELEMENTS		64



/* A parked lock is cancelled, closed or completed: drop its waiter record. */
static void
lock_cancel_wait(struct conn *c, struct conn_pending *p)
{
	struct shm *s = state_shm();
	struct shm_file_id fid = { p->dev, p->ino };
	struct shm_brlock_owner o = { getpid(), p->fid_persistent };

	if (s != NULL)
		(void)shm_brlock_cancel_wait(s, &fid, &o);
}

/*
 * MS-SMB2 3.3.5.14: lock sequence replay applies to resilient and durable
 * opens of 2.1 and later; index 0 is not checked.
 */
static int
lock_seq_applies(const struct smb2_req *req, const struct open *op,
    uint32_t idx)
{
	return req->conn->dialect >= 0x0210 && op->durable && idx >= 1 &&
	    idx <= 64;
}

ntstatus_t
smb2_lock_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct shm *s = state_shm();
	struct cur *c = &req->body;
	struct shm_brlock_range rg[LOCK_MAX_ELEMENTS];
	struct shm_brlock_owner owner;
	struct shm_file_id fid;
	struct conn_pending *p;
	struct open *op;
	uint32_t seq, seq_idx, first, fl[LOCK_MAX_ELEMENTS];
	uint16_t count;
	uint8_t seq_num;
	unsigned i, failed;
	int rc, unlock, blocking;
	ntstatus_t status;

	cur_skip(c, 2);
	count = cur_le16(c);
	seq = cur_le32(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	if (c->err || count == 0)
		return STATUS_INVALID_PARAMETER;
	if (count > LOCK_MAX_ELEMENTS)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (op->kind == OPEN_DIR)
		return STATUS_INVALID_PARAMETER;
	seq_num = seq & 0xF;
	seq_idx = seq >> 4;
	if (dispatch_resuming(req) == NULL && lock_seq_applies(req, op, seq_idx) &&
	    op->lock_seq[seq_idx] == seq_num + 1)
		goto done;	/* a replay of a lock that was granted */

	for (i = 0; i < count; i++) {
		rg[i].offset = cur_le64(c);
		rg[i].length = cur_le64(c);
		fl[i] = cur_le32(c);
		cur_skip(c, 4);
	}
	first = fl[0];
	/*
	 * Unlocks are validated one by one as they are done (an invalid
	 * element after a done unlock fails the request, the unlock stays);
	 * locks all up front, since they are taken all or none.
	 */
	for (i = 0; !(first & SMB2_LOCKFLAG_UNLOCK) && i < count; i++) {
		uint32_t kind = fl[i] & ~SMB2_LOCKFLAG_FAIL_IMMEDIATELY;

		if (kind != SMB2_LOCKFLAG_SHARED_LOCK &&
		    kind != SMB2_LOCKFLAG_EXCLUSIVE_LOCK)
			return STATUS_INVALID_PARAMETER;
		if (count > 1 && !(fl[i] & SMB2_LOCKFLAG_FAIL_IMMEDIATELY))
			return STATUS_INVALID_PARAMETER;
		rg[i].exclusive = kind == SMB2_LOCKFLAG_EXCLUSIVE_LOCK;
	}
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	if (s == NULL || !op->state_in)
		return STATUS_NOT_SUPPORTED;	/* no shared lock table here */
	fid.dev = op->state_dev;
	fid.ino = op->state_ino;
	owner.pid = getpid();
	owner.persistent_id = op->fid_persistent;
	unlock = (first & SMB2_LOCKFLAG_UNLOCK) != 0;

	if (unlock) {
		struct shm_pids wake;

		for (i = 0; i < count; i++) {
			if (fl[i] != SMB2_LOCKFLAG_UNLOCK)
				return STATUS_INVALID_PARAMETER;
			memset(&wake, 0, sizeof(wake));
			rc = shm_brlock_unlock(s, &fid, &owner, rg[i].offset,
			    rg[i].length, &wake);
			if ((wake.n > 0 || wake.overflow) && state_wmsg() != NULL)
				(void)shm_wmsg_wake(state_wmsg(), &wake, &fid);
			if (rc == -ENOENT)
				return STATUS_RANGE_NOT_LOCKED;
			if (rc != 0)
				return STATUS_UNSUCCESSFUL;
		}
		goto done;
	}

	blocking = count == 1 && !(first & SMB2_LOCKFLAG_FAIL_IMMEDIATELY);
	for (i = 0; i < count; i++) {
		/* MS-FSA 2.1.5.7: a range past 2^64 is refused. */
		if (rg[i].length > 0 &&
		    rg[i].offset + (rg[i].length - 1) < rg[i].offset)
			return STATUS_INVALID_LOCK_RANGE;
	}
	/*
	 * MS-FSA 2.1.5.7: taking a lock breaks level II oplocks (this
	 * open's own too) and other keys' read leases, as a write does.
	 */
	if (dispatch_resuming(req) == NULL)
		state_break_read_caching(op);
	rc = shm_brlock_lock_many(s, &fid, &owner, rg, count,
	    blocking ? SHM_BRL_WAIT : 0, &failed);
	if (rc == -EINVAL)
		return STATUS_INVALID_LOCK_RANGE;
	if (rc == -EAGAIN) {
		if (!blocking)
			return STATUS_LOCK_NOT_GRANTED;
		status = dispatch_park(req, rsp, PARK_LOCK, fid.dev, fid.ino, 0,
		    &p);
		if (status != STATUS_PENDING) {
			(void)shm_brlock_cancel_wait(s, &fid, &owner);
			return status;
		}
		p->fid_persistent = op->fid_persistent;
		p->fid_volatile = op->fid_volatile;
		p->cancel = lock_cancel_wait;
		return STATUS_PENDING;
	}
	if (rc != 0)
		return rc == -ENOSPC ? STATUS_INSUFF_SERVER_RESOURCES :
		    STATUS_UNSUCCESSFUL;
done:
	if (lock_seq_applies(req, op, seq_idx))
		op->lock_seq[seq_idx] = (uint8_t)(seq_num + 1);
	/* MS-SMB2 2.2.27 */
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}
