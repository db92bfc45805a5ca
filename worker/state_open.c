/*
 * An open's way into and out of the shared state (worker/state.h): the
 * lease context, the share-mode check and insert with the breaks it
 * causes, the grant and its response contexts, and the leave at close.
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
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/dirlease.h"
#include "worker/dispatch.h"
#include "worker/durable.h"
#include "worker/file_open.h"
#include "worker/namerule.h"
#include "worker/open.h"
#include "worker/smb2_notify.h"
#include "worker/smb2_oplock.h"
#include "worker/smb2.h"
#include "worker/worker.h"

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

ntstatus_t
state_open_klease_wait(struct smb2_req *req, struct smb2_rsp *rsp,
    const char *path)
{
	struct conn_pending *p = dispatch_resuming(req);
	uint64_t now = shm_now_ms();

	/*
	 * No event tells when another process lets go of its lease (the
	 * kernel signals the holder only), so the open is tried again on
	 * the worker's tick, as Samba polls it once a second.
	 */
	if (p != NULL && p->kind == PARK_KLEASE &&
	    now - p->since_ms >= STATE_KLEASE_WAIT_MS) {
		log_warnx("%s: a process outside usmbd kept a kernel lease "
		    "on \"%s\" for %u s: its open is refused",
		    req->conn->peer, path, STATE_KLEASE_WAIT_MS / 1000);
		return STATUS_SHARING_VIOLATION;
	}
	return dispatch_park(req, rsp, PARK_KLEASE, 0, 0,
	    now + STATE_KLEASE_RETRY_MS, NULL);
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

void
state_open_share_caching(struct state_open_req *r,
    const struct conf_share *sh, const char *path, int is_dir)
{
	if (sh == NULL || (sh->oplocks && sh->level2_oplocks &&
	    sh->veto_oplock_pat == NULL))
		return;
	if (!sh->oplocks || (!is_dir && namerule_oplock_vetoed(sh, path))) {
		r->lease = 0;
		r->oplock_level = SMB2_OPLOCK_LEVEL_NONE;
	}
	r->no_level2 = !sh->level2_oplocks;
}

/* One open on its way into the shared state (state_open_enter). */
struct state_entry {
	struct smb2_req	*req;
	struct smb2_rsp	*rsp;
	struct shm	*s;
	struct open	*op;
	struct file_open *f;
	const struct state_open_req *r;	/* what CREATE asks */
	struct state_open_grant *g;	/* what it gets */
	struct shm_file_id fid;
	struct shm_break_req br;	/* what this open would break */
	struct shm_breaks pre;		/* the holders to break once in */
	struct shm_open_rec rec;
	struct shm_open_grant sg;
	int		 lease;		/* a lease asked for and possible */
	int		 want_durable;
	int		 unlinked;	/* a purged open deleted the file */
};

/*
 * A directory is leased (R or RH, worker/dirlease.c) on a connection
 * told SMB2_GLOBAL_CAP_DIRECTORY_LEASING, with a v2 lease context
 * (MS-SMB2 3.3.5.9.11).  Otherwise it gets no lease, yet a key that
 * caches another file is still refused (MS-SMB2 3.3.5.9.8).
 */
static ntstatus_t
state_open_dir_lease(struct state_entry *e)
{
	struct shm_lease_rec l;

	if (!e->lease || !e->f->is_dir)
		return STATUS_SUCCESS;
	if ((e->req->conn->capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING) &&
	    e->r->lease_version == 2 && e->f->stream[0] == '\0')
		return STATUS_SUCCESS;
	if (shm_lease_get(e->s, e->req->conn->client_guid, e->r->lease_key,
	    &l) == 0 && (l.fid.dev != e->fid.dev || l.fid.ino != e->fid.ino))
		return STATUS_INVALID_PARAMETER;
	e->lease = 0;
	return STATUS_SUCCESS;
}

/*
 * MS-FSA 2.1.5.1.2: the share-mode check comes first; only an open that
 * passes it breaks the others' oplocks and leases.  What would break is
 * looked up (read only) before the insert, since the new open must not
 * count as one to break.  Disconnected durable opens in the way are
 * purged first (which may delete the file: unlinked).
 */
static void
state_open_breaks_before(struct state_entry *e)
{
	const struct state_open_req *r = e->r;
	struct shm_break_req *br = &e->br;
	struct conn_pending *resuming = dispatch_resuming(e->req);

	memset(br, 0, sizeof(*br));
	br->access = r->access;
	br->share_access = r->share_access;
	br->flags = r->truncate ? SHM_BREAK_TRUNCATE : 0;
	if (e->lease) {
		memcpy(br->lease_key, r->lease_key, 16);
		memcpy(br->client_guid, e->req->conn->client_guid, 16);
	}
	if (resuming != NULL && resuming->deadline_ms != 0 &&
	    shm_now_ms() >= resuming->deadline_ms)
		state_breaks_force(e->s, &e->fid, br);
	memset(&e->pre, 0, sizeof(e->pre));
	if (shm_open_breaks(e->s, &e->fid, br, 0, &e->pre) != 0)
		e->pre.n = 0;
	if (state_breaks_disconnected(&e->pre) &&
	    durable_purge_disconnected(&e->fid, e->op->tree,
	    &e->unlinked) > 0 &&
	    shm_open_breaks(e->s, &e->fid, br, 0, &e->pre) != 0)
		e->pre.n = 0;
}

/* The open's record: who holds it, how, under which name. */
static void
state_open_rec_fill(struct state_entry *e)
{
	const struct state_open_req *r = e->r;
	struct shm_open_rec *rec = &e->rec;
	struct open *op = e->op;
	struct file_open *f = e->f;

	memset(rec, 0, sizeof(*rec));
	rec->persistent_id = op->fid_persistent;
	rec->pid = shm_self(e->s);	/* no getpid() syscall per request */
	rec->session_id = op->sess != NULL ? op->sess->session_id : 0;
	rec->access = r->access;
	/*
	 * An overwrite meets the other opens' share modes as a writer,
	 * whatever it asked for (MS-FSA 2.1.5.1.2; Samba's open_access_mask,
	 * smb2.acls.OVERWRITE_READ_ONLY_FILE), but is kept as what it asked.
	 */
	rec->check_access = r->truncate ? SHM_FILE_WRITE_DATA : 0;
	rec->share_access = r->share_access;
	rec->create_options = r->create_options;
	rec->opened = (uint64_t)time(NULL);
	rec->link = state_link_id(op->tree, f->path);
	/* its name, for the administrator's list of open files */
	rec->name_share = op->tree != NULL ? tree_name(op->tree) : "";
	rec->name_path = f->path;
	rec->name_stream = f->stream;
	/* it never holds back the unlink of its name (shm/shm.h) */
	if (f->posix)
		rec->flags |= SHM_OPEN_POSIX;
	if (r->no_level2)
		rec->flags |= SHM_OPEN_NO_LEVEL2;
	memcpy(rec->client_guid, e->req->conn->client_guid, 16);
	if (f->stream[0] != '\0') {
		/* the file's share mode and delete pending state apply too */
		rec->has_base = 1;
		state_file_id(&rec->stream_base, f->dev, f->ino, NULL);
	}
	if (e->lease) {
		rec->oplock_level = SHM_OPLOCK_LEASE;
		rec->lease_state = r->lease_state;
		/*
		 * Never W on a directory: Windows 2022 and Samba drop the bit
		 * (MS-FSA 2.1.5.18 would refuse it; smb2.dirlease.leases).
		 */
		if (f->is_dir)
			rec->lease_state &= ~SHM_LEASE_W;
		memcpy(rec->lease_key, r->lease_key, 16);
		memcpy(rec->parent_lease_key, r->parent_lease_key, 16);
		rec->lease_version = r->lease_version;
		rec->lease_epoch = r->lease_epoch;
	} else if (f->is_dir)
		/* no oplocks on directories */
		rec->oplock_level = SHM_OPLOCK_NONE;
	else
		rec->oplock_level = r->oplock_level == SMB2_OPLOCK_LEVEL_LEASE ?
		    SHM_OPLOCK_NONE : r->oplock_level;
}

/*
 * MS-SMB2 3.3.5.9.6 / 3.3.5.9.10: durable only with a batch oplock or a
 * handle-caching lease asked for, never for a directory (nor, here, a
 * named stream, which a reconnect could not reopen by path).  What is
 * granted decides in state_open_grant_fill; a record that turns out not
 * durable is removed with the open at close.  Fills drec when wanted.
 */
static int
state_open_durable_rec(struct state_entry *e, struct shm_durable_rec *drec)
{
	const struct state_open_req *r = e->r;
	struct open *op = e->op;
	struct file_open *f = e->f;

	e->want_durable = r->durable && !f->is_dir && f->stream[0] == '\0' &&
	    op->sess != NULL && op->tree != NULL && op->tree->share != NULL &&
	    (e->lease ? (r->lease_state & SHM_LEASE_H) != 0 :
	    r->oplock_level == SMB2_OPLOCK_LEVEL_BATCH);
	if (!e->want_durable)
		return 0;
	memset(drec, 0, sizeof(*drec));
	snprintf(drec->path, sizeof(drec->path), "%s", f->path);
	snprintf(drec->share, sizeof(drec->share), "%s",
	    tree_name(op->tree));
	snprintf(drec->user, sizeof(drec->user), "%s", op->sess->user);
	drec->access = r->access;
	drec->share_access = r->share_access;
	drec->oplock_level = e->rec.oplock_level;
	memcpy(drec->lease_key, e->rec.lease_key, 16);
	drec->lease_state = e->rec.lease_state;
	memcpy(drec->client_guid, e->rec.client_guid, 16);
	memcpy(drec->create_guid, r->create_guid, 16);
	drec->timeout_ms = durable_timeout_for(r);
	drec->flags = r->durable == 2 ? SHM_DURABLE_V2 : 0;
	return 1;
}

/*
 * The share-mode check and the insert, in one transaction (shm/).  A
 * sharing violation first breaks what may close its handle; a
 * disconnected durable open in the way is purged and the insert tried
 * again.
 */
static ntstatus_t
state_open_insert(struct state_entry *e, struct shm_durable_rec *drec)
{
	struct shm_open_conflict conflict;
	struct shm_break_req *br = &e->br;
	ntstatus_t status;
	int rc;

	memset(&e->sg, 0, sizeof(e->sg));
	rc = shm_open_insert_ex(e->s, &e->fid, &e->rec, drec, &e->sg,
	    &conflict);
	if (rc == -EBUSY && conflict.pid == 0 &&
	    durable_purge_disconnected(&e->fid, e->op->tree,
	    &e->unlinked) > 0) {
		if (e->unlinked)
			return state_open_rerun(e->req, e->rsp, &e->fid);
		rc = shm_open_insert_ex(e->s, &e->fid, &e->rec, drec, &e->sg,
		    &conflict);
	}
	if (rc == -EBUSY) {
		/*
		 * A sharing violation: a handle-caching holder may close its
		 * handle once told (MS-SMB2 3.3.4.7, batch / H lease).
		 */
		br->flags |= SHM_BREAK_BATCH_ONLY;
		status = state_break_wait(e->req, e->rsp, e->s, &e->fid, br);
		if (status != STATUS_SUCCESS)
			return status;
		br->flags &= ~SHM_BREAK_BATCH_ONLY;
		/*
		 * Then handle caching: H leases.  Batch oplocks were broken to
		 * level II just above (MS-FSA 2.1.4.12: batch goes to level II,
		 * to none only for an overwrite), so this leaves them alone.
		 */
		br->flags |= SHM_BREAK_SHARING;
		status = state_break_wait(e->req, e->rsp, e->s, &e->fid, br);
		if (status != STATUS_SUCCESS)
			return status;
		return STATUS_SHARING_VIOLATION;
	}
	if (rc == -EIDRM)
		return STATUS_DELETE_PENDING;
	if (rc == -EINVAL)
		/* e.g. a lease key of another file */
		return STATUS_INVALID_PARAMETER;
	if (rc != 0) {
		errno = -rc;
		log_warn("state: open of \"%s\" not recorded", e->f->path);
		return rc == -ENOSPC ? STATUS_INSUFF_SERVER_RESOURCES :
		    STATUS_UNSUCCESSFUL;
	}
	return STATUS_SUCCESS;
}

/* Passed the share modes: now break, and wait when an ack is needed. */
static ntstatus_t
state_open_break_others(struct state_entry *e)
{
	ntstatus_t status;

	if (e->pre.n == 0)
		return STATUS_SUCCESS;
	status = state_break_wait(e->req, e->rsp, e->s, &e->fid, &e->br);
	if (status != STATUS_SUCCESS) {
		/*
		 * Not open while it waits: inserted again on the rerun.
		 * Withdrawn, not closed: a delete-on-close CREATE must not
		 * leave its own name delete pending for its rerun to meet
		 * (the Linux client's unlink of a file it holds open with a
		 * lease).
		 */
		(void)shm_open_withdraw(e->s, &e->fid, e->rec.has_base ?
		    &e->rec.stream_base : NULL, e->op->fid_persistent);
		return status;
	}
	return STATUS_SUCCESS;
}

/* In: the open and the CREATE response take what was granted. */
static void
state_open_grant_fill(struct state_entry *e,
    const struct shm_durable_rec *drec)
{
	const struct state_open_req *r = e->r;
	struct state_open_grant *g = e->g;
	struct shm_open_grant *sg = &e->sg;
	struct open *op = e->op;

	op->state_in = 1;
	op->state_dev = e->fid.dev;
	op->state_ino = e->fid.ino;
	if (e->lease) {
		/*
		 * A lease keeps the version it was created with: a v1
		 * request for a v2 lease gets a v2 answer and v2 breaks
		 * (smbtorture smb2.lease.v2_epoch2 / v2_epoch3).
		 */
		uint8_t ver = sg->lease_version != 0 ? sg->lease_version :
		    r->lease_version;
		struct shm_lease_rec l;

		op->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		op->lease_state = sg->lease_state;
		memcpy(op->lease_key, r->lease_key, 16);
		memcpy(op->parent_lease_key, r->parent_lease_key, 16);
		op->lease_version = ver;
		g->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		g->lease = 1;
		g->lease_version = ver;
		g->lease_state = sg->lease_state;
		g->lease_epoch = sg->lease_epoch;
		memcpy(g->lease_key, r->lease_key, 16);
		memcpy(g->parent_lease_key, r->parent_lease_key, 16);
		smb2_oplock_lease_sync(e->req->conn->client_guid, r->lease_key,
		    sg->lease_state);
		/* the file is known: one read of its env (per leased CREATE) */
		g->lease_breaking = shm_lease_get_fid(e->s, &e->fid,
		    e->req->conn->client_guid, r->lease_key, &l) == 0 &&
		    l.breaking;
		/* a leased directory: local changes break it too */
		if (e->f->is_dir && sg->lease_state != 0)
			dirlease_watch_open(op);
	} else {
		op->oplock_level = sg->oplock_level;
		g->oplock_level = sg->oplock_level;
	}
	if (e->want_durable && (e->lease ?
	    (sg->lease_state & SHM_LEASE_H) != 0 :
	    sg->oplock_level == SHM_OPLOCK_BATCH)) {
		op->durable = r->durable;
		op->durable_timeout_ms = drec->timeout_ms;
		memcpy(op->create_guid, r->create_guid, 16);
		g->durable = r->durable;
		g->durable_timeout_ms = drec->timeout_ms;
	}
}

/*
 * An open enters the shared state: the directory lease rule; what it
 * would break; its record (and its durable record); the share-mode
 * check and insert; the breaks it causes; the grant.
 */
ntstatus_t
state_open_enter(struct smb2_req *req, struct smb2_rsp *rsp, struct open *op,
    const struct state_open_req *r, struct state_open_grant *g)
{
	/* ~5 KiB: off the event loop's stack */
	static struct shm_durable_rec drec;
	struct state_entry e;
	ntstatus_t status;

	memset(g, 0, sizeof(*g));
	e.s = state_shm();
	e.f = op->u.file;
	if (e.s == NULL || e.f == NULL)
		return STATUS_SUCCESS;	/* local semantics only (logged once) */
	e.req = req;
	e.rsp = rsp;
	e.op = op;
	e.r = r;
	e.g = g;
	e.lease = r->lease && r->oplock_level == SMB2_OPLOCK_LEVEL_LEASE;
	e.unlinked = 0;
	state_file_id(&e.fid, e.f->dev, e.f->ino, e.f->stream);
	if ((status = state_open_dir_lease(&e)) != STATUS_SUCCESS)
		return status;
	state_open_breaks_before(&e);
	if (e.unlinked)
		return state_open_rerun(req, rsp, &e.fid);
	state_open_rec_fill(&e);
	if ((status = state_open_insert(&e, state_open_durable_rec(&e, &drec) ?
	    &drec : NULL)) != STATUS_SUCCESS ||
	    (status = state_open_break_others(&e)) != STATUS_SUCCESS)
		return status;
	state_open_grant_fill(&e, &drec);
	return STATUS_SUCCESS;
}

/*
 * The head of one response create context (MS-SMB2 2.2.14.2): an
 * 8-aligned chain whose previous member (*prev) is made to point here,
 * a 4-byte name at 16, its dlen bytes of data at 24, which the caller
 * writes next.
 */
static void
state_put_ctx_head(struct wcur *w, uint8_t **prev, const char name[4],
    uint32_t dlen)
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
	wcur_le32(w, dlen);
	wcur_bytes(w, name, 4);
	wcur_zero(w, 4);
	*prev = start;
}

/* DHnQ (2.2.14.2.3) or DH2Q (2.2.14.2.12) response context. */
static void
state_put_durable_context(struct wcur *w, uint8_t **prev,
    const struct state_open_grant *g)
{
	state_put_ctx_head(w, prev, g->durable == 2 ? "DH2Q" : "DHnQ", 8);
	if (g->durable == 2) {
		wcur_le32(w, g->durable_timeout_ms);
		wcur_le32(w, 0);	/* Flags: not persistent */
	} else
		wcur_zero(w, 8);	/* Reserved */
}

int
state_put_create_contexts(struct wcur *w, uint8_t **prev,
    const struct state_open_grant *g)
{
	uint32_t dlen;
	int zero_parent = 1, i;

	if (g->durable)
		state_put_durable_context(w, prev, g);
	if (!g->lease)
		return w->err ? -1 : 0;
	for (i = 0; i < 16; i++)
		zero_parent &= g->parent_lease_key[i] == 0;
	dlen = g->lease_version == 2 ? 52 : 32;
	state_put_ctx_head(w, prev, "RqLs", dlen);
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
	if (op->u.file != NULL && state_fid_is_stream(&fid)) {
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
	if (f != NULL && state_fid_is_stream(&fid))
		state_file_id(&base, f->dev, f->ino, NULL);
	(void)shm_open_withdraw(s, &fid, f != NULL &&
	    state_fid_is_stream(&fid) ? &base : NULL, op->fid_persistent);
}
