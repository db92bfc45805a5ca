/*
 * The worker's side of the shared state (worker/state.h): one shm/ handle
 * and one message socket per process, opened on first use after the
 * privilege drop; the delete-pending and lock checks the file handlers
 * call; and the oplock/lease break protocol between workers.  An open's
 * way into and out of the shared state (share modes, leases, durable
 * records) is in worker/state_open.c.
 */

/*
 * What Samba 4.22's smbtorture checks besides (issue 21).
 *
 * - What Samba 4.22's smbtorture checks besides (issue 21): an overwrite
 *   or supersede meets the share modes as a writer (shm_open_rec
 *   check_access: FILE_WRITE_DATA counted, not kept); delete on close
 *   breaks the other lease keys' handle caching (SET_INFO disposition
 *   and the CLOSE of a FILE_DELETE_ON_CLOSE handle wait for the ack; a
 *   close nobody waits on, at tdis, logoff or disconnect, only sends
 *   them: state_break_handle_caching); a lease is granted no read
 *   caching on a file with byte-range locks, and an open with
 *   READ_CONTROL is not a stat open beside which RWH could be granted
 *   (shm/leases.c); a durable open with an RH lease holding byte-range
 *   locks is not kept at disconnect (worker/durable.c
 *   durable_still_qualifies); a write or rename that must break a
 *   disconnected durable open's caching closes the disconnected opens
 *   (state_purge_unbreakable); a renamed file is reported once more as
 *   MODIFIED (attributes, creation) to the watches that do not see file
 *   names (worker/smb2_notify.c smb2_notify_renamed); the same change
 *   twice in a row is queued once, and a watch keeps its first request's
 *   buffer size as it keeps its filter (changes that never fit it answer
 *   NOTIFY_ENUM_DIR).
 */

/*
 * Named streams in the share modes.
 *
 * - Named streams in the share modes (MS-FSA 2.1.5.1.2, as Samba does
 *   it): a stream's opens are records under the stream's id
 *   (worker/state.c state_file_id) and a copy of each sits in its file's
 *   stream list (the opens db, key = the file's 16-byte key + 'S'; walks
 *   over file ids skip it; a copy whose open is gone, e.g. purged, is
 *   ignored and dropped).  An open of the file asking for DELETE fails
 *   with SHARING_VIOLATION while a stream is open without
 *   FILE_SHARE_DELETE; a file made delete pending stays (header only)
 *   while streams are open, its opens and its streams' get
 *   DELETE_PENDING, and the last stream close unlinks it
 *   (shm_open_remove_stream, shm_close_result.delete_base).
 */
#include "worker/state.h"
#include "worker/state_priv.h"

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
#include "worker/metrics.h"
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
	int		 stateless;	/* an IPC$-only worker: no env, ever */
} st;

void
state_init(const struct conf *conf, int stateless)
{
	st.conf = conf;
	/* Never opened, so never a failure to log either. */
	st.stateless = stateless;
	st.shm_failed = stateless;
	st.wmsg_failed = stateless;
}

int
state_is_stateless(void)
{
	return st.stateless;
}

void
state_metrics_fill(struct metrics *m)
{
	struct shm_hold h[SHM_TXN_KINDS];
	uint64_t mainn[SHM_TXN_KINDS];
	int i;

	/* Not state_shm(): asking for figures must not open the env. */
	if (st.shm == NULL)
		return;
	shm_hold_stats(st.shm, h);
	shm_main_txns(st.shm, mainn);
	for (i = 0; i < SHM_TXN_KINDS && i < METRICS_NTXN; i++) {
		m->txn[i].txns = h[i].txns;
		m->txn[i].hold_ns = h[i].hold_ns;
		m->txn[i].wait_ns = h[i].wait_ns;
		m->txn[i].main_txns = mainn[i];
	}
}

struct shm *
state_shm(void)
{
	int rc, i;

	if (st.shm != NULL || st.shm_failed || st.conf == NULL)
		return st.shm;
	/*
	 * The state process makes the databases in the files the master
	 * made (worker/statep.c); right after a start or a fresh
	 * environment they may not be there yet: wait for them, 2 s at most.
	 */
	for (i = 0; i < 40; i++) {
		rc = shm_attach(st.conf->lock_dir, st.conf->state_map_size, 0,
		    0, &st.shm);
		if (rc != -ENOENT)
			break;
		(void)usleep(50 * 1000);
	}
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
	/* FNV-1a; without a tree, of "" */
	uint64_t h = tree != NULL ? tree->path_hash : 14695981039346656037ull;
	const char *p;

	/*
	 * The absolute name, as Samba's name hash: the share's root (its
	 * path with substitutions made, hashed at the tree connect:
	 * worker/smb2_tree.c), then the path below it (the spelling on
	 * disk, also on a case-insensitive share: the name was resolved
	 * before the open).
	 */
	h ^= '/';
	h *= 1099511628211ull;
	for (p = path; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 1099511628211ull;
	}
	return h;
}

/*
 * Was fid made for a named stream?  state_file_id sets the top bit of a
 * stream's id, which no st_dev has; an open's record keeps the id it was
 * made with though a rename moves the handle to another stream, or to
 * the unnamed one (worker/smb2_setinfo.c), so its close removes the record
 * where it is.
 */
int
state_fid_is_stream(const struct shm_file_id *fid)
{
	return (fid->dev >> 63) != 0;
}

void
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
void
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
 * A disconnected durable open cannot acknowledge a break: when one of bs
 * would have to give up caching, the disconnected opens of the file are
 * closed instead, as Samba purges them (smbtorture's
 * smb2.durable-v2-open.purge-disconnected-rh-with-write and -with-rename:
 * the reconnect then finds nothing).
 */
static void state_break_read_caching_ex(struct open *, int purge);

static void
state_purge_unbreakable(const struct shm_file_id *fid, const struct tree *tree,
    const struct shm_breaks *bs)
{
	unsigned i;

	for (i = 0; i < bs->n; i++)
		if (bs->b[i].pid == 0) {
			(void)durable_purge_disconnected(fid, tree, NULL);
			return;
		}
}

/*
 * Breaks what the new open conflicts with; STATUS_PENDING (parked) when it
 * must wait for an acknowledgement, STATUS_SUCCESS when it may go on.
 */
ntstatus_t
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
	struct shm_breaks bs;

	if (!op->state_in || s == NULL)
		return STATUS_SUCCESS;
	/*
	 * Inside a chain too (the Linux client renames with CREATE +
	 * SET_INFO + CLOSE): a SET_INFO waits there silently and the chain
	 * with it (dispatch_park_silent), as Samba 4.22 and Windows do
	 * (smb2.compound_async.rename_middle).
	 */
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
	/* (a CREATE purges them itself: state_open_breaks_before) */
	if (dispatch_resuming(req) == NULL &&
	    shm_open_breaks(s, &fid, &br, 0, &bs) == 0)
		state_purge_unbreakable(&fid, op->tree, &bs);
	return state_break_wait(req, rsp, s, &fid, &br);
}

ntstatus_t
state_rename_parent_breaks(struct smb2_req *req, struct smb2_rsp *rsp,
    uint64_t dev, uint64_t ino)
{
	struct shm *s = state_shm();
	struct shm_break_req br;
	struct shm_file_id fid;

	if (s == NULL)
		return STATUS_SUCCESS;
	state_file_id(&fid, dev, ino, NULL);
	memset(&br, 0, sizeof(br));
	br.access = SHM_FILE_WRITE_DATA;	/* FILE_ADD_FILE */
	br.flags = SHM_BREAK_SHARING;
	return state_break_wait(req, rsp, s, &fid, &br);
}

ntstatus_t
state_rename_target(struct smb2_req *req, struct smb2_rsp *rsp,
    struct open *op, uint64_t dev, uint64_t ino)
{
	struct shm *s = state_shm();
	struct shm_break_req br;
	struct shm_file_id fid;
	ntstatus_t status;
	int n = 0;

	if (s == NULL)
		return STATUS_SUCCESS;
	state_file_id(&fid, dev, ino, NULL);
	memset(&br, 0, sizeof(br));
	br.access = DELETE_ACCESS;
	br.share_access = 0;
	br.flags = SHM_BREAK_HANDLE_ONLY;
	if (op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE) {
		memcpy(br.lease_key, op->lease_key, 16);
		memcpy(br.client_guid, req->conn->client_guid, 16);
	}
	status = state_break_wait(req, rsp, s, &fid, &br);
	if (status != STATUS_SUCCESS)
		return status;
	if (shm_open_count(s, &fid, &n) == 0 && n > 0)
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
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
	    state_link_id(op->tree, op->u.file->path),
	    op->tree != NULL ? tree_name(op->tree) : NULL, op->u.file->path);
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
	/* POSIX locks do not hold up a POSIX handle's I/O (shm/shm.h) */
	rc = shm_brlock_check(s, &fid, &owner, off, len, write |
	    (op->u.file != NULL && op->u.file->posix ? SHM_BRL_POSIX : 0));
	if (rc == -EAGAIN)
		return STATUS_FILE_LOCK_CONFLICT;
	/* MS-FSA 2.1.5.3: a write breaks level II oplocks and R leases. */
	if (write)
		state_break_read_caching_ex(op, 1);
	return STATUS_SUCCESS;
}

void
state_break_read_caching(struct open *op)
{
	state_break_read_caching_ex(op, 0);
}

/*
 * purge: a disconnected durable open that would lose its read caching is
 * closed (a WRITE; a LOCK that conflicts with its locks must still fail
 * on them, and one that does not leaves it be, as in Samba).
 */
static void
state_break_read_caching_ex(struct open *op, int purge)
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
	    bs.n > 0) {
		if (purge)
			state_purge_unbreakable(&fid, op->tree, &bs);
		(void)state_breaks_send(s, &fid, &bs, 0, &deadline);
	}
}

void
state_break_handle_caching(uint64_t dev, uint64_t ino)
{
	struct shm *s = state_shm();
	struct shm_break_req br;
	struct shm_file_id fid;
	struct shm_breaks bs;
	uint64_t deadline = 0;

	if (s == NULL)
		return;
	state_file_id(&fid, dev, ino, NULL);
	memset(&br, 0, sizeof(br));
	br.access = DELETE_ACCESS;
	br.flags = SHM_BREAK_HANDLE_ONLY;
	/* marked in progress: the holders acknowledge, nobody waits here */
	if (shm_open_breaks(s, &fid, &br, 1, &bs) == 0 && bs.n > 0)
		(void)state_breaks_send(s, &fid, &bs, 1, &deadline);
}

void
state_break_dir(uint64_t dev, uint64_t ino, const uint8_t *parent_key)
{
	struct shm *s = state_shm();
	struct shm_file_id fid;
	struct shm_breaks bs;
	uint64_t deadline = 0;

	if (s == NULL)
		return;
	state_file_id(&fid, dev, ino, NULL);
	/*
	 * Marked in progress and sent; the change goes on without waiting
	 * for the acknowledgement, as Samba 4.22's contend_dirleases does
	 * (smb2.dirlease.* expect the change's response at once).
	 */
	if (shm_dirlease_breaks(s, &fid, parent_key, 1, &bs) == 0 &&
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

	if (c->priv->role != CONN_ROLE_WORKER)
		return 0;
	/*
	 * An IPC$-only worker has no env: the master's table (msess.c)
	 * is then the only one that sees its ids, and refuses a taken one.
	 */
	if (st.stateless)
		goto announce;
	if ((s = state_shm()) == NULL)
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
announce:
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

	/* lease-key claims of closed leases (shm/claim.c): a tick that runs anyway */
	shm_claim_flush(st.shm);
	worker_foreach_conn(state_tick_conn, &t);
	return durable_tick() || t.need;
}
