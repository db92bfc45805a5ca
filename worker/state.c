/*
 * The worker's side of the shared state (worker/state.h): one shm/ handle
 * and one message socket per process, opened on first use after the
 * privilege drop; the share-mode, delete-pending and lock checks the file
 * handlers call; and the oplock/lease break protocol between workers.
 */
#include "worker/state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/durable.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2_notify.h"
#include "worker/smb2_oplock.h"
#include "worker/smb2.h"
#include "worker/worker.h"

static struct {
	const struct conf *conf;
	struct shm	*shm;
	struct shm_wmsg	*wmsg;
	int		 shm_failed;	/* logged once, not retried */
	int		 wmsg_failed;
} st;

void
state_init(const struct conf *conf)
{
	st.conf = conf;
}

struct shm *
state_shm(void)
{
	int rc;

	if (st.shm != NULL || st.shm_failed || st.conf == NULL)
		return st.shm;
	rc = shm_attach(st.conf->lock_dir, st.conf->state_map_size, 0, 0,
	    &st.shm);
	if (rc != 0) {
		st.shm_failed = 1;
		st.shm = NULL;
		errno = -rc;
		log_warn("state env in %s unavailable", st.conf->lock_dir);
	} else
		shm_brlock_set_max(st.shm, (unsigned)st.conf->max_locks_per_file);
	return st.shm;
}

struct shm_wmsg *
state_wmsg(void)
{
	int rc;

	if (st.wmsg != NULL || st.wmsg_failed || st.conf == NULL)
		return st.wmsg;
	rc = shm_wmsg_open(st.conf->lock_dir, getpid(), &st.wmsg);
	if (rc != 0) {
		st.wmsg_failed = 1;
		st.wmsg = NULL;
		errno = -rc;
		log_warn("worker messages in %s/msg unavailable",
		    st.conf->lock_dir);
	}
	return st.wmsg;
}

void
state_close(void)
{
	if (st.wmsg != NULL)
		shm_wmsg_close(st.wmsg);
	if (st.shm != NULL)
		shm_detach(st.shm);
	st.wmsg = NULL;
	st.shm = NULL;
}

void
state_file_id(struct shm_file_id *fid, uint64_t dev, uint64_t ino,
    const char *stream)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	fid->dev = dev;
	fid->ino = ino;
	if (stream == NULL || *stream == '\0')
		return;
	for (; *stream; stream++) {
		h ^= (uint8_t)*stream;
		h *= 1099511628211ull;
	}
	fid->dev = (dev ^ (h << 32)) | (1ull << 63);
}

uint64_t
state_link_id(const struct tree *tree, const char *path)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */
	const char *p;

	/*
	 * The absolute name, as Samba's name hash: the share's path, then
	 * the path below it (the spelling on disk, also on a
	 * case-insensitive share: the name was resolved before the open).
	 */
	for (p = tree != NULL && tree->share != NULL && tree->share->path ?
	    tree->share->path : ""; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 1099511628211ull;
	}
	h ^= '/';
	h *= 1099511628211ull;
	for (p = path; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 1099511628211ull;
	}
	return h;
}

static void
state_open_fid(const struct open *op, struct shm_file_id *fid)
{
	fid->dev = op->state_dev;
	fid->ino = op->state_ino;
}

/* ---- breaks ---- */

/* Does this break need an acknowledgement (MS-SMB2 3.3.4.6, 3.3.4.7)? */
static int
state_break_needs_ack(const struct shm_break *b)
{
	if (b->is_lease)
		return (b->cur & (SHM_LEASE_W | SHM_LEASE_H)) != 0;
	return b->cur == SHM_OPLOCK_EXCLUSIVE || b->cur == SHM_OPLOCK_BATCH;
}

/*
 * Sends the new breaks of bs (to this worker's connections directly, to
 * others by message) and says whether the caller must wait for an ack.
 * Breaks that need no ack are settled in the state at once.
 */
/*
 * Must the opener wait for the acknowledgement?  For a lease only when it
 * loses W (dirty data to flush), or H on a sharing violation (the holder
 * may close its handles); an overwrite that takes R and H goes ahead.
 */
static int
state_break_blocks(const struct shm_break *b, int sharing)
{
	if (!state_break_needs_ack(b))
		return 0;
	if (!b->is_lease)
		return 1;
	if ((b->cur & SHM_LEASE_W) && !(b->new_level & SHM_LEASE_W))
		return 1;
	return sharing && (b->cur & SHM_LEASE_H) &&
	    !(b->new_level & SHM_LEASE_H);
}

/*
 * An opener waiting on b may go on 35 s after b started (MS-SMB2 3.3.2.1,
 * a timer per break); *deadline keeps the earliest of the breaks waited on.
 */
static void
state_break_deadline(const struct shm_break *b, uint64_t *deadline)
{
	uint64_t now = shm_now_ms(), d;

	/* Unknown start (an older record): a full timeout from now. */
	d = (b->started_ms != 0 && b->started_ms <= now ? b->started_ms : now) +
	    STATE_BREAK_TIMEOUT_MS;
	if (*deadline == 0 || d < *deadline)
		*deadline = d;
}

/* A worker message of type about break b of the file fid. */
static void
state_wmsg_for_break(struct shm_wmsg_msg *m, int type,
    const struct shm_file_id *fid, const struct shm_break *b)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->fid = *fid;
	m->persistent_id = b->persistent_id;
	m->is_lease = b->is_lease;
	memcpy(m->lease_key, b->lease_key, SHM_GUID_LEN);
	memcpy(m->client_guid, b->client_guid, SHM_GUID_LEN);
}

static int
state_breaks_send(struct shm *s, const struct shm_file_id *fid,
    const struct shm_breaks *bs, int sharing, uint64_t *deadline)
{
	struct shm_wmsg_msg m;
	unsigned i;
	int wait = 0, rc;

	for (i = 0; i < bs->n; i++) {
		const struct shm_break *b = &bs->b[i];
		int ack = state_break_needs_ack(b);

		if (b->in_progress) {
			if (!b->must_wait && !state_break_blocks(b, sharing))
				continue;
			wait = 1;
			state_break_deadline(b, deadline);
			/* Be told when the holder acknowledges. */
			if (b->pid == getpid())
				smb2_oplock_break_wait(fid, b, getpid());
			else if (b->pid != 0 && state_wmsg() != NULL) {
				state_wmsg_for_break(&m, SHM_WMSG_BREAK_WAIT,
				    fid, b);
				(void)shm_wmsg_send(state_wmsg(), b->pid, &m);
			}
			continue;
		}
		if (b->pid == getpid())
			smb2_oplock_break_deliver(fid, b, getpid());
		else if (b->pid != 0 && state_wmsg() != NULL) {
			state_wmsg_for_break(&m, SHM_WMSG_BREAK, fid, b);
			m.level = b->new_level;
			m.epoch = b->epoch;
			rc = shm_wmsg_send(state_wmsg(), b->pid, &m);
			if (rc != 0)
				ack = 0;	/* the holder is gone: nothing to wait for */
		} else
			ack = 0;	/* disconnected durable: nobody to tell */
		if (!ack) {
			/* Settled now: R -> none and level II -> none need no ack. */
			if (b->is_lease)
				(void)shm_lease_break_ack(s, b->client_guid,
				    b->lease_key, b->new_level);
			else
				(void)shm_oplock_break_ack(s, fid,
				    b->persistent_id, (uint8_t)b->new_level);
		}
		if (ack && state_break_blocks(b, sharing)) {
			wait = 1;
			state_break_deadline(b, deadline);
		}
	}
	return wait;
}

/*
 * An opener's deadline passed: the breaks in progress on the file that
 * are 35 s old take effect without an ack (a lease ends at none, an oplock
 * at the level it was breaking to).  Younger breaks, started by other
 * openers or as a follow-up, keep their own timer.
 */
static void
state_breaks_force(struct shm *s, const struct shm_file_id *fid,
    const struct shm_break_req *br)
{
	uint64_t now = shm_now_ms();
	int n = shm_breaks_expire_before(s, fid, now > STATE_BREAK_TIMEOUT_MS ?
	    now - STATE_BREAK_TIMEOUT_MS : 0);

	(void)br;
	if (n > 0)
		log_debug(1, "%d break(s) on %llx:%llx timed out, forced", n,
		    (unsigned long long)fid->dev, (unsigned long long)fid->ino);
}

/*
 * Breaks what the new open conflicts with; STATUS_PENDING (parked) when it
 * must wait for an acknowledgement, STATUS_SUCCESS when it may go on.
 */
static ntstatus_t
state_break_wait(struct smb2_req *req, struct smb2_rsp *rsp, struct shm *s,
    const struct shm_file_id *fid, const struct shm_break_req *br)
{
	struct conn_pending *p = dispatch_resuming(req);
	struct shm_break_req r = *br;
	struct shm_breaks bs;
	uint64_t deadline = 0;
	int rc;

	if (p != NULL && p->deadline_ms != 0 && shm_now_ms() >= p->deadline_ms)
		state_breaks_force(s, fid, br);
	/* An opener that waited once keeps waiting while a lease breaks. */
	if (p != NULL && p->kind == PARK_BREAK)
		r.flags |= SHM_BREAK_RESUMED;
	rc = shm_open_breaks(s, fid, &r, 1, &bs);
	if (rc != 0 || bs.n == 0)
		return STATUS_SUCCESS;
	if (!state_breaks_send(s, fid, &bs,
	    (r.flags & (SHM_BREAK_SHARING | SHM_BREAK_HANDLE_ONLY)) != 0,
	    &deadline))
		return STATUS_SUCCESS;
	/*
	 * Wake at the earliest timeout of the breaks waited on (each break
	 * has its own start); never in the past, so that a break not yet
	 * expired does not spin the tick.
	 */
	if (deadline <= shm_now_ms())
		deadline = shm_now_ms() + 1000;
	return dispatch_park(req, rsp, PARK_BREAK, fid->dev, fid->ino, deadline,
	    NULL);
}

ntstatus_t
state_rename_breaks(struct smb2_req *req, struct smb2_rsp *rsp,
    struct open *op)
{
	struct shm *s = state_shm();
	struct shm_break_req br;
	struct shm_file_id fid;

	if (!op->state_in || s == NULL)
		return STATUS_SUCCESS;
	/*
	 * Not the last request of a chain, a rename cannot wait
	 * (dispatch_park: INTERNAL_ERROR).  A renamer that holds no lease
	 * does not wait for the others' handle caching there, as Samba never
	 * does for one: the Linux client renames a file it holds open with
	 * CREATE + SET_INFO + CLOSE, with no lease on that CREATE.
	 */
	if (req->next_command != 0 && op->oplock_level != SMB2_OPLOCK_LEVEL_LEASE)
		return STATUS_SUCCESS;
	state_open_fid(op, &fid);
	memset(&br, 0, sizeof(br));
	br.access = op->access;
	br.share_access = 0;
	br.flags = SHM_BREAK_HANDLE_ONLY;
	/* The renamer's own lease keeps its handle caching. */
	if (op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE) {
		memcpy(br.lease_key, op->lease_key, 16);
		memcpy(br.client_guid, req->conn->client_guid, 16);
	}
	return state_break_wait(req, rsp, s, &fid, &br);
}

/* ---- opens ---- */

/*
 * The file this CREATE opened was just deleted (a purged durable open's
 * delete-on-close): the request runs again at once, from the name.
 */
static ntstatus_t
state_open_rerun(struct smb2_req *req, struct smb2_rsp *rsp,
    const struct shm_file_id *fid)
{
	ntstatus_t status;

	status = dispatch_park(req, rsp, PARK_BREAK, fid->dev, fid->ino,
	    shm_now_ms() + STATE_BREAK_TIMEOUT_MS, NULL);
	if (status == STATUS_PENDING)
		state_wake_local(PARK_BREAK, fid);
	return status;
}

/* Is a disconnected durable open among the holders to break? */
static int
state_breaks_disconnected(const struct shm_breaks *bs)
{
	unsigned i;

	for (i = 0; i < bs->n; i++)
		if (bs->b[i].pid == 0)
			return 1;
	return 0;
}

#define SMB2_LEASE_FLAG_BREAK_IN_PROGRESS	0x02
#define SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET	0x04

ntstatus_t
state_parse_lease_ctx(struct smb2_req *req, const uint8_t *d, size_t len,
    struct state_open_req *r)
{
	struct cur c;
	uint32_t flags;

	if (req->conn->dialect < 0x0210 ||
	    !(req->conn->capabilities & SMB2_GLOBAL_CAP_LEASING))
		return STATUS_SUCCESS;	/* MS-SMB2 3.3.5.9.8: ignored */
	if (len != 32 && len != 52)
		return STATUS_INVALID_PARAMETER;
	cur_init(&c, d, len);
	cur_bytes(&c, r->lease_key, 16);
	r->lease_state = cur_le32(&c) & (SHM_LEASE_R | SHM_LEASE_H | SHM_LEASE_W);
	flags = cur_le32(&c);
	cur_skip(&c, 8);	/* LeaseDuration */
	r->lease_version = 1;
	r->lease_epoch = 0;
	memset(r->parent_lease_key, 0, 16);
	if (len == 52 && req->conn->dialect >= 0x0300) {
		cur_bytes(&c, r->parent_lease_key, 16);
		r->lease_epoch = cur_le16(&c);
		r->lease_version = 2;
		/* MS-SMB2 2.2.13.2.10: the parent key counts only if flagged. */
		if (!(flags & SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET))
			memset(r->parent_lease_key, 0, 16);
	}
	if (c.err)
		return STATUS_INVALID_PARAMETER;
	r->lease = 1;
	r->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
	return STATUS_SUCCESS;
}

ntstatus_t
state_open_enter(struct smb2_req *req, struct smb2_rsp *rsp, struct open *op,
    const struct state_open_req *r, struct state_open_grant *g)
{
	struct shm *s = state_shm();
	struct file_open *f = op->u.file;
	struct shm_file_id fid;
	struct shm_open_rec rec;
	struct shm_open_grant sg;
	struct shm_open_conflict conflict;
	struct shm_break_req br;
	struct shm_breaks pre;
	/* ~5 KiB: off the event loop's stack */
	static struct shm_durable_rec drec;
	ntstatus_t status;
	int rc, lease = r->lease && r->oplock_level == SMB2_OPLOCK_LEVEL_LEASE;
	int want_durable, unlinked = 0;

	memset(g, 0, sizeof(*g));
	if (s == NULL || f == NULL)
		return STATUS_SUCCESS;	/* local semantics only (logged once) */
	state_file_id(&fid, f->dev, f->ino, f->stream);
	if (lease && f->is_dir) {
		struct shm_lease_rec l;

		/*
		 * No SMB2_GLOBAL_CAP_DIRECTORY_LEASING: a directory gets no
		 * lease, yet a key that caches another file is still refused
		 * (MS-SMB2 3.3.5.9.8).
		 */
		if (shm_lease_get(s, req->conn->client_guid, r->lease_key,
		    &l) == 0 && (l.fid.dev != fid.dev || l.fid.ino != fid.ino))
			return STATUS_INVALID_PARAMETER;
		lease = 0;
	}

	memset(&br, 0, sizeof(br));
	br.access = r->access;
	br.share_access = r->share_access;
	br.flags = r->truncate ? SHM_BREAK_TRUNCATE : 0;
	if (lease) {
		memcpy(br.lease_key, r->lease_key, 16);
		memcpy(br.client_guid, req->conn->client_guid, 16);
	}
	/*
	 * MS-FSA 2.1.5.1.2: the share-mode check comes first; only an open
	 * that passes it breaks the others' oplocks and leases.  What would
	 * break is looked up (read only) before the insert, since the new
	 * open must not count as one to break.
	 */
	if (dispatch_resuming(req) != NULL &&
	    dispatch_resuming(req)->deadline_ms != 0 &&
	    shm_now_ms() >= dispatch_resuming(req)->deadline_ms)
		state_breaks_force(s, &fid, &br);
	memset(&pre, 0, sizeof(pre));
	if (shm_open_breaks(s, &fid, &br, 0, &pre) != 0)
		pre.n = 0;
	if (state_breaks_disconnected(&pre) &&
	    durable_purge_disconnected(&fid, op->tree, &unlinked) > 0 &&
	    shm_open_breaks(s, &fid, &br, 0, &pre) != 0)
		pre.n = 0;
	if (unlinked)
		return state_open_rerun(req, rsp, &fid);

	memset(&rec, 0, sizeof(rec));
	rec.persistent_id = op->fid_persistent;
	rec.pid = shm_self(s);	/* no getpid() syscall per request */
	rec.session_id = op->sess != NULL ? op->sess->session_id : 0;
	rec.access = r->access;
	rec.share_access = r->share_access;
	rec.create_options = r->create_options;
	rec.opened = (uint64_t)time(NULL);
	rec.link = state_link_id(op->tree, f->path);
	memcpy(rec.client_guid, req->conn->client_guid, 16);
	if (f->stream[0] != '\0') {
		/* the file's share mode and delete pending state apply too */
		rec.has_base = 1;
		state_file_id(&rec.stream_base, f->dev, f->ino, NULL);
	}
	if (lease) {
		rec.oplock_level = SHM_OPLOCK_LEASE;
		rec.lease_state = r->lease_state;
		memcpy(rec.lease_key, r->lease_key, 16);
		memcpy(rec.parent_lease_key, r->parent_lease_key, 16);
		rec.lease_version = r->lease_version;
		rec.lease_epoch = r->lease_epoch;
	} else if (f->is_dir)
		rec.oplock_level = SHM_OPLOCK_NONE;	/* no oplocks on directories */
	else
		rec.oplock_level = r->oplock_level == SMB2_OPLOCK_LEVEL_LEASE ?
		    SHM_OPLOCK_NONE : r->oplock_level;

	/*
	 * MS-SMB2 3.3.5.9.6 / 3.3.5.9.10: durable only with a batch oplock or
	 * a handle-caching lease asked for, never for a directory (nor, here,
	 * a named stream, which a reconnect could not reopen by path).  What
	 * is granted decides below; a record that turns out not durable is
	 * removed with the open at close.
	 */
	want_durable = r->durable && !f->is_dir && f->stream[0] == '\0' &&
	    op->sess != NULL && op->tree != NULL && op->tree->share != NULL &&
	    (lease ? (r->lease_state & SHM_LEASE_H) != 0 :
	    r->oplock_level == SMB2_OPLOCK_LEVEL_BATCH);
	if (want_durable) {
		memset(&drec, 0, sizeof(drec));
		snprintf(drec.path, sizeof(drec.path), "%s", f->path);
		snprintf(drec.share, sizeof(drec.share), "%s",
		    op->tree->share->name);
		snprintf(drec.user, sizeof(drec.user), "%s", op->sess->user);
		drec.access = r->access;
		drec.share_access = r->share_access;
		drec.oplock_level = rec.oplock_level;
		memcpy(drec.lease_key, rec.lease_key, 16);
		drec.lease_state = rec.lease_state;
		memcpy(drec.client_guid, rec.client_guid, 16);
		memcpy(drec.create_guid, r->create_guid, 16);
		drec.timeout_ms = durable_timeout_for(r);
		drec.flags = r->durable == 2 ? SHM_DURABLE_V2 : 0;
	}
	memset(&sg, 0, sizeof(sg));
	rc = shm_open_insert_ex(s, &fid, &rec, want_durable ? &drec : NULL,
	    &sg, &conflict);
	if (rc == -EBUSY && conflict.pid == 0 &&
	    durable_purge_disconnected(&fid, op->tree, &unlinked) > 0) {
		if (unlinked)
			return state_open_rerun(req, rsp, &fid);
		rc = shm_open_insert_ex(s, &fid, &rec,
		    want_durable ? &drec : NULL, &sg, &conflict);
	}
	if (rc == -EBUSY) {
		/*
		 * A sharing violation: a handle-caching holder may close its
		 * handle once told (MS-SMB2 3.3.4.7, batch / H lease).
		 */
		br.flags |= SHM_BREAK_BATCH_ONLY;
		status = state_break_wait(req, rsp, s, &fid, &br);
		if (status != STATUS_SUCCESS)
			return status;
		br.flags &= ~SHM_BREAK_BATCH_ONLY;
		/*
		 * Then handle caching: H leases.  Batch oplocks were broken to
		 * level II just above (MS-FSA 2.1.4.12: batch goes to level II,
		 * to none only for an overwrite), so this leaves them alone.
		 */
		br.flags |= SHM_BREAK_SHARING;
		status = state_break_wait(req, rsp, s, &fid, &br);
		if (status != STATUS_SUCCESS)
			return status;
		return STATUS_SHARING_VIOLATION;
	}
	if (rc == -EIDRM)
		return STATUS_DELETE_PENDING;
	if (rc == -EINVAL)
		return STATUS_INVALID_PARAMETER;	/* e.g. a lease key of another file */
	if (rc != 0) {
		errno = -rc;
		log_warn("state: open of \"%s\" not recorded", f->path);
		return rc == -ENOSPC ? STATUS_INSUFF_SERVER_RESOURCES :
		    STATUS_UNSUCCESSFUL;
	}
	if (pre.n > 0) {
		/* Passed: now break, and wait when an ack is needed. */
		status = state_break_wait(req, rsp, s, &fid, &br);
		if (status != STATUS_SUCCESS) {
			/*
			 * Not open while it waits: inserted again on the
			 * rerun.  Withdrawn, not closed: a delete-on-close
			 * CREATE must not leave its own name delete pending
			 * for its rerun to meet (the Linux client's unlink
			 * of a file it holds open with a lease).
			 */
			(void)shm_open_withdraw(s, &fid, rec.has_base ?
			    &rec.stream_base : NULL, op->fid_persistent);
			return status;
		}
	}
	op->state_in = 1;
	op->state_dev = fid.dev;
	op->state_ino = fid.ino;
	if (lease) {
		/*
		 * A lease keeps the version it was created with: a v1
		 * request for a v2 lease gets a v2 answer and v2 breaks
		 * (smbtorture smb2.lease.v2_epoch2 / v2_epoch3).
		 */
		uint8_t ver = sg.lease_version != 0 ? sg.lease_version :
		    r->lease_version;

		op->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		op->lease_state = sg.lease_state;
		memcpy(op->lease_key, r->lease_key, 16);
		op->lease_version = ver;
		g->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		g->lease = 1;
		g->lease_version = ver;
		g->lease_state = sg.lease_state;
		g->lease_epoch = sg.lease_epoch;
		memcpy(g->lease_key, r->lease_key, 16);
		memcpy(g->parent_lease_key, r->parent_lease_key, 16);
		smb2_oplock_lease_sync(req->conn->client_guid, r->lease_key,
		    sg.lease_state);
		{
			struct shm_lease_rec l;

			g->lease_breaking = shm_lease_get(s,
			    req->conn->client_guid, r->lease_key, &l) == 0 &&
			    l.breaking;
		}
	} else {
		op->oplock_level = sg.oplock_level;
		g->oplock_level = sg.oplock_level;
	}
	if (want_durable && (lease ? (sg.lease_state & SHM_LEASE_H) != 0 :
	    sg.oplock_level == SHM_OPLOCK_BATCH)) {
		op->durable = r->durable;
		op->durable_timeout_ms = drec.timeout_ms;
		memcpy(op->create_guid, r->create_guid, 16);
		g->durable = r->durable;
		g->durable_timeout_ms = drec.timeout_ms;
	}
	return STATUS_SUCCESS;
}

/* DHnQ (2.2.14.2.3) or DH2Q (2.2.14.2.12) response context. */
static void
state_put_durable_context(struct wcur *w, uint8_t **prev,
    const struct state_open_grant *g)
{
	uint8_t *start;

	while (wcur_off(w) % 8 != 0)
		wcur_u8(w, 0);
	start = w->p;
	if (*prev != NULL && !w->err)
		le32_put(*prev, (uint32_t)(start - *prev));
	wcur_le32(w, 0);		/* Next */
	wcur_le16(w, 16);		/* NameOffset */
	wcur_le16(w, 4);
	wcur_le16(w, 0);
	wcur_le16(w, 24);		/* DataOffset */
	wcur_le32(w, 8);
	wcur_bytes(w, g->durable == 2 ? "DH2Q" : "DHnQ", 4);
	wcur_zero(w, 4);
	if (g->durable == 2) {
		wcur_le32(w, g->durable_timeout_ms);
		wcur_le32(w, 0);	/* Flags: not persistent */
	} else
		wcur_zero(w, 8);	/* Reserved */
	*prev = start;
}

int
state_put_create_contexts(struct wcur *w, uint8_t **prev,
    const struct state_open_grant *g)
{
	uint8_t *start;
	uint32_t dlen;
	int zero_parent = 1, i;

	if (g->durable)
		state_put_durable_context(w, prev, g);
	if (!g->lease)
		return w->err ? -1 : 0;
	for (i = 0; i < 16; i++)
		zero_parent &= g->parent_lease_key[i] == 0;
	dlen = g->lease_version == 2 ? 52 : 32;
	/* MS-SMB2 2.2.14.2: an 8-aligned chain; the previous points here. */
	while (wcur_off(w) % 8 != 0)
		wcur_u8(w, 0);
	start = w->p;
	if (*prev != NULL && !w->err)
		le32_put(*prev, (uint32_t)(start - *prev));
	wcur_le32(w, 0);		/* Next */
	wcur_le16(w, 16);		/* NameOffset */
	wcur_le16(w, 4);
	wcur_le16(w, 0);
	wcur_le16(w, 24);		/* DataOffset */
	wcur_le32(w, dlen);
	wcur_bytes(w, "RqLs", 4);
	wcur_zero(w, 4);
	/* MS-SMB2 2.2.14.2.10 / 2.2.14.2.11 */
	wcur_bytes(w, g->lease_key, 16);
	wcur_le32(w, g->lease_state);
	wcur_le32(w, (g->lease_version == 2 && !zero_parent ?
	    SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET : 0) |
	    (g->lease_breaking ? SMB2_LEASE_FLAG_BREAK_IN_PROGRESS : 0));
	wcur_le64(w, 0);		/* LeaseDuration */
	if (g->lease_version == 2) {
		wcur_bytes(w, g->parent_lease_key, 16);
		wcur_le16(w, g->lease_epoch);
		wcur_le16(w, 0);
	}
	*prev = start;
	return w->err ? -1 : 0;
}

void
state_open_leave(struct open *op, int *delete_file)
{
	state_open_leave_token(op, delete_file, NULL);
}

void
state_open_leave_token(struct open *op, int *delete_file, uint32_t *delete_uid)
{
	state_open_leave_ex(op, delete_file, delete_uid, NULL);
}

void
state_open_leave_ex(struct open *op, int *delete_file, uint32_t *delete_uid,
    int *delete_base)
{
	struct shm *s = state_shm();
	struct shm_close_result res;
	struct shm_file_id fid, base;
	int rc;

	if (delete_uid != NULL)
		*delete_uid = 0;
	if (delete_base != NULL)
		*delete_base = 0;
	if (!op->state_in || s == NULL)
		return;
	op->state_in = 0;
	state_open_fid(op, &fid);
	/*
	 * Delete-on-close set through SET_INFO (not a create option, which
	 * shm/ applies itself): the file becomes delete pending now.
	 */
	if (delete_file != NULL && *delete_file && op->u.file != NULL &&
	    !(op->u.file->create_options & SHM_FILE_DELETE_ON_CLOSE))
		(void)shm_open_set_delete_pending(s, &fid, op->fid_persistent, 1);
	memset(&res, 0, sizeof(res));
	if (op->u.file != NULL && op->u.file->stream[0] != '\0') {
		state_file_id(&base, op->u.file->dev, op->u.file->ino, NULL);
		rc = shm_open_remove_stream(s, &fid, &base, op->fid_persistent,
		    &res);
	} else
		rc = shm_open_remove(s, &fid, op->fid_persistent, &res);
	if (rc != 0 && rc != -ENOENT) {
		errno = -rc;
		log_warn("state: close of open %llx",
		    (unsigned long long)op->fid_persistent);
		return;
	}
	if (delete_file != NULL)
		*delete_file = rc == 0 ? res.delete_file : 0;
	if (delete_uid != NULL && rc == 0 && (res.delete_file || res.delete_base))
		*delete_uid = res.delete_uid;
	if (delete_base != NULL && rc == 0)
		*delete_base = res.delete_base;
	if ((res.wake.n > 0 || res.wake.overflow) && state_wmsg() != NULL)
		(void)shm_wmsg_wake(state_wmsg(), &res.wake, &fid);
	/*
	 * A client may answer a break by closing the handle (smbtorture
	 * smb2.oplock.batch3): the openers waiting on it go on now, not at
	 * the 35 s timeout.
	 */
	if (op->nbreakers > 0) {
		state_break_acked(&fid, op->breakers, op->nbreakers);
		op->nbreakers = 0;
	}
}

void
state_open_withdraw(struct open *op)
{
	struct shm *s = state_shm();
	struct shm_file_id fid, base;
	struct file_open *f = op->u.file;

	if (!op->state_in || s == NULL)
		return;
	op->state_in = 0;
	state_open_fid(op, &fid);
	if (f != NULL && f->stream[0] != '\0')
		state_file_id(&base, f->dev, f->ino, NULL);
	(void)shm_open_withdraw(s, &fid, f != NULL && f->stream[0] != '\0' ?
	    &base : NULL, op->fid_persistent);
}

ntstatus_t
state_delete_pending_set(struct open *op, int on)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	int rc;

	if (!op->state_in || s == NULL)
		return STATUS_SUCCESS;
	state_open_fid(op, &fid);
	rc = shm_open_set_delete_pending(s, &fid, op->fid_persistent, on);
	if (rc == -ENOSPC)
		return STATUS_INSUFF_SERVER_RESOURCES;
	return rc == 0 ? STATUS_SUCCESS : STATUS_UNSUCCESSFUL;
}

int
state_delete_pending_get(struct open *op)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	int on = 0;

	if (!op->state_in || s == NULL)
		return 0;
	state_open_fid(op, &fid);
	if (shm_open_get_delete_pending(s, &fid, op->fid_persistent, &on) != 0)
		return 0;
	return on;
}

void
state_open_renamed(struct open *op, const char *from)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	int rc;

	if (!op->state_in || s == NULL || op->u.file == NULL)
		return;
	state_open_fid(op, &fid);
	rc = shm_open_relink(s, &fid, state_link_id(op->tree, from),
	    state_link_id(op->tree, op->u.file->path));
	if (rc != 0) {
		errno = -rc;
		log_warn("state: rename of \"%s\" not recorded", from);
	}
}

ntstatus_t
state_io_check(struct open *op, uint64_t off, uint64_t len, int write)
{
	struct shm *s = state_shm();
	struct shm_brlock_owner owner;
	struct shm_file_id fid;
	int rc;

	if (!op->state_in || s == NULL)
		return STATUS_SUCCESS;
	state_open_fid(op, &fid);
	owner.pid = shm_self(s);	/* no getpid() syscall per request */
	owner.persistent_id = op->fid_persistent;
	rc = shm_brlock_check(s, &fid, &owner, off, len, write);
	if (rc == -EAGAIN)
		return STATUS_FILE_LOCK_CONFLICT;
	/* MS-FSA 2.1.5.3: a write breaks level II oplocks and R leases. */
	if (write)
		state_break_read_caching(op);
	return STATUS_SUCCESS;
}

void
state_break_read_caching(struct open *op)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	struct shm_breaks bs;
	uint64_t deadline = 0;

	if (!op->state_in || s == NULL)
		return;
	state_open_fid(op, &fid);
	/* Level II and R -> none need no acknowledgement: nobody waits. */
	if (shm_write_breaks(s, &fid, op->fid_persistent, 1, &bs) == 0 &&
	    bs.n > 0)
		(void)state_breaks_send(s, &fid, &bs, 0, &deadline);
}

/* ---- sessions ---- */

int
state_session_id_taken(uint64_t id)
{
	struct shm *s = state_shm();
	struct shm_session_rec r;

	return s != NULL && shm_session_get(s, id, &r) == 0 &&
	    r.pid != getpid();
}

int
state_session_put(struct conn *c, struct session *sess)
{
	struct shm *s;
	struct shm_session_rec r;
	uint8_t sid[8];
	int rc;

	if (c->priv->role != CONN_ROLE_WORKER || (s = state_shm()) == NULL)
		return 0;
	memset(&r, 0, sizeof(r));
	r.session_id = sess->session_id;
	r.pid = getpid();
	r.uid = sess->uid;
	snprintf(r.user, sizeof(r.user), "%s", sess->anonymous ? "(anonymous)" :
	    sess->guest ? "(guest)" : sess->user);
	snprintf(r.client_addr, sizeof(r.client_addr), "%s", c->peer);
	r.dialect = c->dialect;
	r.signing = (uint8_t)(sess->signing && sess->signing_required ? 2 :
	    sess->signing ? 1 : 0);
	r.encryption = (uint8_t)(sess->encrypt ? 1 : 0);
	r.since = (uint64_t)time(NULL);
	if ((rc = shm_session_put(s, &r)) != 0)
		return rc;
	/* The master routes bindings by this, not by the shared state. */
	le64_put(sid, sess->session_id);
	(void)msg_send(MSG_CHILD_FD, MSG_SESSION_UP, 0, sid, sizeof(sid), -1);
	return 0;
}

void
state_session_del(struct session *sess)
{
	struct shm *s = st.shm;	/* never attach just to delete */
	struct shm_session_rec r;
	uint8_t sid[8];

	if (sess->session_id == 0)
		return;
	/*
	 * Only a worker announces sessions (state_init ran: a gate's never
	 * reach the master's table).  A channel's slot shares its session's
	 * id: the session goes on.  The master forgets an id only for the
	 * worker that holds it.
	 */
	if (st.conf != NULL && sess->bound == NULL) {
		le64_put(sid, sess->session_id);
		(void)msg_send(MSG_CHILD_FD, MSG_SESSION_DOWN, 0, sid,
		    sizeof(sid), -1);
	}
	/* Only our own record: the id may be another worker's (refused). */
	if (s != NULL && shm_session_get(s, sess->session_id, &r) == 0 &&
	    r.pid == getpid())
		(void)shm_session_del(s, sess->session_id);
}

/* ---- worker messages and the tick ---- */

int
state_wmsg_fd(void)
{
	struct shm_wmsg *w = state_wmsg();

	return w != NULL ? shm_wmsg_fd(w) : -1;
}

struct state_wake {
	int		 kind;
	uint64_t	 dev, ino;
};

static void
state_wake_conn(struct conn *c, void *arg)
{
	const struct state_wake *w = arg;

	if (conn_pending_wake_file(c, w->kind, w->dev, w->ino) > 0)
		worker_kick(c);
}

void
state_wake_local(int kind, const struct shm_file_id *fid)
{
	struct state_wake w = { kind, fid ? fid->dev : 0, fid ? fid->ino : 0 };

	worker_foreach_conn(state_wake_conn, &w);
}

void
state_wmsg_event(void)
{
	struct shm_wmsg *w = state_wmsg();
	struct shm_wmsg_msg m;
	int guard, rc;

	if (w == NULL)
		return;
	for (guard = 0; guard < 256; guard++) {
		rc = shm_wmsg_recv(w, &m);
		if (rc == -EAGAIN)
			return;
		if (rc != 0)
			continue;	/* malformed: dropped */
		switch (m.type) {
		case SHM_WMSG_BREAK: {
			struct shm_break b;

			memset(&b, 0, sizeof(b));
			b.pid = getpid();
			b.is_lease = m.is_lease;
			b.persistent_id = m.persistent_id;
			memcpy(b.lease_key, m.lease_key, SHM_GUID_LEN);
			memcpy(b.client_guid, m.client_guid, SHM_GUID_LEN);
			b.new_level = m.level;
			b.epoch = m.epoch;
			b.cur = m.action;	/* 0 unless the sender knows it */
			smb2_oplock_break_deliver(&m.fid, &b, m.from);
			break;
		}
		case SHM_WMSG_BREAK_WAIT: {
			struct shm_break b;

			memset(&b, 0, sizeof(b));
			b.pid = getpid();
			b.is_lease = m.is_lease;
			b.persistent_id = m.persistent_id;
			memcpy(b.lease_key, m.lease_key, SHM_GUID_LEN);
			memcpy(b.client_guid, m.client_guid, SHM_GUID_LEN);
			smb2_oplock_break_wait(&m.fid, &b, m.from);
			break;
		}
		case SHM_WMSG_BREAK_ACK:
			state_wake_local(PARK_BREAK, &m.fid);
			break;
		case SHM_WMSG_LOCK_RELEASED:
			state_wake_local(PARK_LOCK, &m.fid);
			/* {0, 0}: the master purged a dead worker's state. */
			if (m.fid.dev == 0 && m.fid.ino == 0)
				state_wake_local(PARK_BREAK, NULL);
			break;
		case SHM_WMSG_NOTIFY:
			smb2_notify_wmsg(&m);
			break;
		}
	}
}

void
state_break_acked(const struct shm_file_id *fid, const pid_t *pids,
    unsigned n)
{
	struct shm_wmsg_msg m;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (pids[i] == getpid()) {
			state_wake_local(PARK_BREAK, fid);
			continue;
		}
		if (pids[i] <= 0 || state_wmsg() == NULL)
			continue;
		memset(&m, 0, sizeof(m));
		m.type = SHM_WMSG_BREAK_ACK;
		m.fid = *fid;
		(void)shm_wmsg_send(state_wmsg(), pids[i], &m);
	}
}

struct state_tick_arg {
	uint64_t	now;
	int		need;	/* a parked request still has a deadline */
};

static void
state_tick_conn(struct conn *c, void *arg)
{
	struct state_tick_arg *t = arg;

	if (conn_pending_tick(c, t->now) != 0)
		t->need = 1;
	if (conn_async_ready(c))
		worker_kick(c);
}

int
state_tick(void)
{
	struct state_tick_arg t = { shm_now_ms(), 0 };

	worker_foreach_conn(state_tick_conn, &t);
	return durable_tick() || t.need;
}
