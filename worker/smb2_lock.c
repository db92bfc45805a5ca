/*
 * SMB2 LOCK (MS-SMB2 2.2.26, 2.2.27, 3.3.5.14): byte-range locks kept in
 * the shared state, so a lock taken through one worker is seen by every
 * other.  A blocking lock (one element without FAIL_IMMEDIATELY) that meets
 * a conflict is parked and runs again whenever a LOCK_RELEASED message
 * names its file; CANCEL, close, logoff and disconnect end it.
 */

/*
 * POSIX locks.
 *
 * - A LOCK on a POSIX handle (SMB3 POSIX extensions) takes POSIX locks,
 *   as Samba 4.23 does (4.22 meant to: its smbd_smb2_lock_send set the
 *   POSIX flavour and then overwrote it with the Windows one, fixed by
 *   Samba commit 2bdf72a8227): locks of the same handle never conflict
 *   and are merged and split as fcntl's (a lock over the handle's own
 *   ranges takes them over with its type; an unlock frees any part of
 *   them and succeeds even when nothing was locked); a POSIX lock never
 *   refuses a POSIX handle's READ or WRITE (advisory), but does a Windows
 *   handle's, and a Windows lock binds a POSIX handle's I/O and locks as
 *   ever (shm/brlock.c, struct shm_brlock_owner.posix).  An exclusive
 *   lock needs a handle with write access (STATUS_INVALID_HANDLE, as
 *   Samba and fcntl's EBADF).  A shared lock taken over part of the
 *   handle's own exclusive range (a downgrade, as fcntl's F_RDLCK over
 *   an F_WRLCK) wakes the blocked waiters of the file at once, as an
 *   unlock does: a shared lock of another handle waiting there is granted
 *   now (shm_brlock_lock_many's wake).
 */

/*
 * Local locks.
 *
 * - Local locks: an SMB LOCK is not granted over a range a local process
 *   holds with fcntl() (POSIX or OFD locks): vfs lock_test (F_OFD_GETLK,
 *   one syscall per LOCK request, none on READ/WRITE); a blocking LOCK
 *   held up that way looks again every second (its park deadline).
 *   usmbd takes no kernel locks itself, so local processes do not see
 *   SMB locks.
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
/*
 * A blocking lock held up by a local process's kernel lock: no message
 * tells us when it goes, so the request looks again this often (Samba
 * polls such locks too).
 */
#define LOCK_KERNEL_RETRY_MS		1000


/* A parked lock is cancelled, closed or completed: drop its waiter record. */
static void
lock_cancel_wait(struct conn *c, struct conn_pending *p)
{
	struct shm *s = state_shm();
	struct shm_file_id fid = { p->dev, p->ino };
	struct shm_brlock_owner o = { 0, p->fid_persistent };

	if (s != NULL) {
		o.pid = shm_self(s);
		(void)shm_brlock_cancel_wait(s, &fid, &o);
	}
}

/* Parks a blocking lock until a LOCK_RELEASED names its file, or deadline. */
static ntstatus_t
lock_park(struct smb2_req *req, struct smb2_rsp *rsp, const struct open *op,
    const struct shm_file_id *fid, uint64_t deadline_ms)
{
	struct conn_pending *p;
	ntstatus_t status;

	status = dispatch_park(req, rsp, PARK_LOCK, fid->dev, fid->ino,
	    deadline_ms, &p);
	if (status != STATUS_PENDING)
		return status;
	p->fid_persistent = op->fid_persistent;
	p->fid_volatile = op->fid_volatile;
	p->cancel = lock_cancel_wait;
	return STATUS_PENDING;
}

/*
 * Does a process on the server itself (not through SMB) hold a kernel
 * byte-range lock (fcntl POSIX or OFD) that one of the ranges conflicts
 * with?  Samba's behaviour: an SMB lock is not granted over it.  One
 * lock_test on the hull of the ranges answers the usual case in one
 * syscall; only when that finds a lock are the ranges tested one by one
 * (a lock in a gap between them is no conflict).  A named stream is an
 * xattr, whose bytes no local lock covers.
 */
static int
lock_kernel_conflict(const struct open *op, const struct shm_brlock_range *rg,
    unsigned count)
{
	const struct vfs_ops *vfs = file_vfs();
	const struct file_open *f = op->u.file;
	uint64_t lo = UINT64_MAX, hi = 0, end;
	unsigned i;
	int excl = 0, rc;

	if (vfs->lock_test == NULL || f == NULL || f->stream[0] != '\0')
		return 0;
	for (i = 0; i < count; i++) {
		if (rg[i].length == 0)
			continue;	/* a zero-length lock covers no byte */
		end = rg[i].offset + (rg[i].length - 1);
		lo = rg[i].offset < lo ? rg[i].offset : lo;
		hi = end > hi ? end : hi;
		excl |= rg[i].exclusive;
	}
	if (lo > hi)
		return 0;
	rc = vfs->lock_test(f->fd, lo, hi - lo + 1, excl);
	if (rc != -EAGAIN || count == 1)
		return rc == -EAGAIN;
	for (i = 0; i < count; i++)
		if (rg[i].length > 0 && vfs->lock_test(f->fd, rg[i].offset,
		    rg[i].length, rg[i].exclusive) == -EAGAIN)
			return 1;
	return 0;
}

/*
 * MS-SMB2 3.3.5.14: lock sequence replay applies to durable and resilient
 * opens of 2.1 and later (a resilient open's 2.1 client replays a lock it
 * sent before a reconnect: smbtorture smb2.lock.replay_broken_windows),
 * and to every open of a 3.x connection whose NEGOTIATE offered
 * multichannel (a lock replayed on another channel must not be taken
 * twice); index 0 and indexes past 64 are not checked.
 */
static int
lock_seq_applies(const struct smb2_req *req, const struct open *op,
    uint32_t idx)
{
	const struct conn *c = req->conn;

	if (idx < 1 || idx > 64 || c->dialect < 0x0210)
		return 0;
	return op->durable || op->resilient || (c->dialect >= 0x0300 &&
	    (c->capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL));
}

ntstatus_t
smb2_lock_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct shm *s = state_shm();
	struct cur *c = &req->body;
	struct shm_brlock_range rg[LOCK_MAX_ELEMENTS];
	struct shm_brlock_owner owner;
	struct shm_lock_seq ls, *lsp = NULL;
	struct shm_file_id fid;
	struct shm_pids wake;
	struct open *op;
	uint32_t seq, seq_idx, first, fl[LOCK_MAX_ELEMENTS];
	uint16_t count;
	uint8_t seq_num;
	unsigned i, failed;
	int rc, unlock, blocking, posix;
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
	if (dispatch_resuming(req) == NULL && lock_seq_applies(req, op, seq_idx)) {
		if (op->lock_seq[seq_idx] == seq_num + 1)
			goto done;	/* a replay of a lock that was granted */
		/*
		 * A new sequence number: the entry is invalid until this
		 * request succeeds, so a failed one is not taken for done.
		 */
		op->lock_seq[seq_idx] = 0;
	}

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
	/* the pid the state handle took at attach: getpid is a syscall */
	owner.pid = shm_self(s);
	owner.persistent_id = op->fid_persistent;
	/* POSIX byte-range locks, "POSIX locks" above */
	posix = op->u.file != NULL && op->u.file->posix;
	unlock = (first & SMB2_LOCKFLAG_UNLOCK) != 0;
	/*
	 * A durable or resilient open's entry goes into its durable record
	 * in the lock's own transaction (shm.h struct shm_lock_seq): a
	 * worker killed with -9 loses its memory, not the array.  Other
	 * opens keep it in memory only, at no cost.
	 */
	if ((op->durable || op->resilient) &&
	    lock_seq_applies(req, op, seq_idx)) {
		ls.index = seq_idx;
		ls.value = (uint8_t)(seq_num + 1);
		lsp = &ls;
	}

	if (unlock) {
		for (i = 0; i < count; i++) {
			if (fl[i] != SMB2_LOCKFLAG_UNLOCK)
				return STATUS_INVALID_PARAMETER;
			memset(&wake, 0, sizeof(wake));
			/* the sequence with the last element: all were done */
			rc = shm_brlock_unlock_seq(s, &fid, &owner, rg[i].offset,
			    rg[i].length, posix, &wake, i + 1 == count ? lsp :
			    NULL);
			if ((wake.n > 0 || wake.overflow) && state_wmsg() != NULL)
				(void)shm_wmsg_wake(state_wmsg(), &wake, &fid);
			if (rc == -ENOENT)
				return STATUS_RANGE_NOT_LOCKED;
			if (rc != 0)
				return STATUS_UNSUCCESSFUL;
			open_locks_uncharge(op, 1);
		}
		goto done;
	}

	blocking = count == 1 && !(first & SMB2_LOCKFLAG_FAIL_IMMEDIATELY);
	for (i = 0; i < count; i++) {
		/* MS-FSA 2.1.5.7: a range past 2^64 is refused. */
		if (rg[i].length > 0 &&
		    rg[i].offset + (rg[i].length - 1) < rg[i].offset)
			return STATUS_INVALID_LOCK_RANGE;
		/* as fcntl's F_WRLCK on an fd not open for writing (Samba) */
		if (posix && rg[i].exclusive &&
		    !(op->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)))
			return STATUS_INVALID_HANDLE;
	}
	/*
	 * MS-FSA 2.1.5.7: taking a lock breaks level II oplocks (this
	 * open's own too) and other keys' read leases, as a write does.
	 */
	if (dispatch_resuming(req) == NULL)
		state_break_read_caching(op);
	if (lock_kernel_conflict(op, rg, count)) {
		if (!blocking)
			return STATUS_LOCK_NOT_GRANTED;
		/* parked with no waiter record: its deadline runs it again */
		return lock_park(req, rsp, op, &fid,
		    shm_now_ms() + LOCK_KERNEL_RETRY_MS);
	}
	/* README "Limits": refused as a conflict would be, and logged. */
	if (open_locks_charge(op, count) != 0)
		return STATUS_LOCK_NOT_GRANTED;
	rc = shm_brlock_lock_many_seq(s, &fid, &owner, rg, count,
	    (blocking ? SHM_BRL_WAIT : 0) | (posix ? SHM_BRL_POSIX : 0),
	    &failed, &wake, lsp);
	/* a POSIX downgrade: its bytes may be what a waiter wants */
	if (rc == 0 && (wake.n > 0 || wake.overflow) && state_wmsg() != NULL)
		(void)shm_wmsg_wake(state_wmsg(), &wake, &fid);
	if (rc != 0)
		open_locks_uncharge(op, count);
	if (rc == -EDQUOT)
		return STATUS_LOCK_NOT_GRANTED;	/* `max locks per file` */
	if (rc == -EINVAL)
		return STATUS_INVALID_LOCK_RANGE;
	if (rc == -EAGAIN) {
		if (!blocking)
			return STATUS_LOCK_NOT_GRANTED;
		status = lock_park(req, rsp, op, &fid, 0);
		if (status != STATUS_PENDING)
			(void)shm_brlock_cancel_wait(s, &fid, &owner);
		return status;
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
