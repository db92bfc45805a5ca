/*
 * Durable handles (worker/durable.h): the create contexts, the disconnect
 * that keeps the open in shm/, and the reconnect that reclaims it.
 */
#include "worker/worker.h"
#include "worker/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/cur.h"
#include "shm/shm.h"
#include "vfs/vfs.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/namerule.h"
#include "worker/open.h"
#include "worker/recycle.h"
#include "worker/smb2.h"
#include "worker/snapshot.h"
#include "worker/state.h"

/*
 * The files of this worker's disconnected durable opens, kept open so a
 * reconnect here gets the same fd and file position back; a reconnect in
 * another worker (or after this table overflowed) reopens by path.
 */
#define DURABLE_PARKED_MAX	128
static struct durable_parked {
	uint64_t		 persistent_id;
	struct file_open	*f;
} parked[DURABLE_PARKED_MAX];
static unsigned nparked;

static struct file_open *
durable_unpark(uint64_t id)
{
	struct file_open *f;
	unsigned i;

	for (i = 0; i < nparked; i++) {
		if (parked[i].persistent_id != id)
			continue;
		f = parked[i].f;
		parked[i] = parked[--nparked];
		return f;
	}
	return NULL;
}

ntstatus_t
durable_parse_ctx(struct smb2_req *req, const uint8_t *name,
    const uint8_t *d, size_t len, struct state_open_req *r)
{
	struct cur c;
	unsigned bit, seen;

	if (memcmp(name, "DHnQ", 4) == 0)
		bit = DURABLE_CTX_DHNQ;
	else if (memcmp(name, "DHnC", 4) == 0)
		bit = DURABLE_CTX_DHNC;
	else if (memcmp(name, "DH2Q", 4) == 0)
		bit = DURABLE_CTX_DH2Q;
	else if (memcmp(name, "DH2C", 4) == 0)
		bit = DURABLE_CTX_DH2C;
	else
		return STATUS_SUCCESS;
	/*
	 * The v2 contexts count at every dialect: MS-SMB2 3.3.5.9.10 and
	 * 3.3.5.9.12 apply "to servers that implement the SMB 3.x dialect
	 * family", a condition on the server, where the spec means the
	 * connection it says Connection.Dialect (3.3.5.9, 3.3.5.15.9).  A
	 * 2.1 client's DH2C reconnect ignores the other fields as at 3.x
	 * (smbtorture smb2.durable-open.reopen2-lease at SMB2_10), as
	 * Samba 4.17 and 4.22 do.
	 */
	if (r->durable_seen & bit)
		return STATUS_INVALID_PARAMETER;	/* twice the same */
	r->durable_seen |= bit;
	seen = r->durable_seen;
	/* 3.3.5.9.6/7/10/12: v1 and v2 together, or DH2Q with DH2C. */
	if (((seen & (DURABLE_CTX_DHNQ | DURABLE_CTX_DHNC)) &&
	    (seen & (DURABLE_CTX_DH2Q | DURABLE_CTX_DH2C))) ||
	    ((seen & DURABLE_CTX_DH2Q) && (seen & DURABLE_CTX_DH2C)))
		return STATUS_INVALID_PARAMETER;
	if (d == NULL)
		return STATUS_INVALID_PARAMETER;
	cur_init(&c, d, len);
	switch (bit) {
	case DURABLE_CTX_DHNQ:
		/* 2.2.13.2.3: 16 reserved bytes */
		if (len != 16)
			return STATUS_INVALID_PARAMETER;
		r->durable = 1;
		r->durable_timeout_ms = 0;
		break;
	case DURABLE_CTX_DH2Q:
		/* 2.2.13.2.11: Timeout, Flags, Reserved, CreateGuid */
		if (len != 32)
			return STATUS_INVALID_PARAMETER;
		r->durable_timeout_ms = cur_le32(&c);
		cur_skip(&c, 4 + 8);	/* Flags: no persistent handles */
		cur_bytes(&c, r->create_guid, 16);
		r->durable = 2;
		break;
	case DURABLE_CTX_DHNC:
		/* 2.2.13.2.4: FileId */
		if (len != 16)
			return STATUS_INVALID_PARAMETER;
		r->reconnect_persistent = cur_le64(&c);
		r->reconnect = 1;
		break;
	case DURABLE_CTX_DH2C:
		/* 2.2.13.2.12: FileId, CreateGuid, Flags */
		if (len != 36)
			return STATUS_INVALID_PARAMETER;
		r->reconnect_persistent = cur_le64(&c);
		cur_skip(&c, 8);
		cur_bytes(&c, r->create_guid, 16);
		r->reconnect = 2;
		break;
	}
	return c.err ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

/*
 * shm/ expires a record past SHM_DURABLE_TIMEOUT_CAP_MS whatever it says:
 * never before what a worker grants (a resilient Timeout of 300 s is up
 * to 300,999 ms, worker/resilient.c).
 */
_Static_assert(DURABLE_TIMEOUT_MAX_MS + 999 <= SHM_DURABLE_TIMEOUT_CAP_MS,
    "the state would expire a granted timeout early");

uint32_t
durable_timeout_for(const struct state_open_req *r)
{
	uint32_t t = r->durable == 2 ? r->durable_timeout_ms : 0;

	if (t == 0)
		t = DURABLE_TIMEOUT_DEFAULT_MS;
	return t > DURABLE_TIMEOUT_MAX_MS ? DURABLE_TIMEOUT_MAX_MS : t;
}

/* What a read-only tree (read only, read list) never grants. */
#define DURABLE_WRITE_RIGHTS	(FILE_WRITE_DATA | FILE_APPEND_DATA | \
	FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | \
	DELETE_ACCESS | WRITE_DAC | WRITE_OWNER)

/* Reopens the recorded file and checks it is still the same object. */
static ntstatus_t
durable_reopen(struct tree *tree, const struct shm_durable_rec *rec,
    struct file_open **out)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f;
	struct vfs_stat st;
	int r, w, flags, fd, rc;

	if ((f = file_open_get()) == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	f->share = tree->share;
	f->root_fd = tree->root_fd;
	snprintf(f->path, sizeof(f->path), "%s", rec->path);
	f->stream[0] = '\0';
	r = (rec->access & (FILE_READ_DATA | FILE_EXECUTE)) != 0;
	w = (rec->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)) != 0;
	flags = w ? (r ? O_RDWR : O_WRONLY) : (r ? O_RDONLY : O_PATH);
	if (flags != O_PATH)
		flags |= O_NONBLOCK | O_NOCTTY;
	fd = vfs->open(tree->root_fd, f->path, flags, 0);
	if (fd < 0) {
		log_debug(2, "durable reconnect: reopen of \"%s\": %s",
		    f->path, strerror(-fd));
		file_open_put(f);
		return STATUS_OBJECT_NAME_NOT_FOUND;
	}
	f->fd = fd;
	rc = vfs->fstat(fd, &st);
	if (rc != 0 || st.dev != rec->fid.dev || st.ino != rec->fid.ino) {
		/* renamed over or replaced: not the file that was open */
		log_debug(2, "durable reconnect: \"%s\" is another file now",
		    f->path);
		file_open_put(f);
		return STATUS_OBJECT_NAME_NOT_FOUND;
	}
	f->dev = st.dev;
	f->ino = st.ino;
	f->is_dir = 0;
	f->readable = (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_WRONLY;
	f->writable = (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_RDONLY;
	f->share_access = rec->share_access;
	*out = f;
	return STATUS_SUCCESS;
}

ntstatus_t
durable_reconnect(struct smb2_req *req, const uint8_t *name16, size_t name_len,
    const struct state_open_req *r, struct open **out,
    struct state_open_grant *g)
{
	static char path[FILE_PATH_MAX];
	char stream[FILE_STREAM_MAX];
	/* ~5 KiB each: off the event loop's stack */
	static struct shm_durable_rec rec;
	struct shm *s = state_shm();
	struct tree *tree = req->tree;
	struct shm_durable_claim cl;
	struct shm_open_rec orec;
	struct shm_lease_rec lr;
	struct file_open *f = NULL;
	struct open *op;
	ntstatus_t status;
	size_t skip;
	int rc;

	memset(g, 0, sizeof(*g));
	*out = NULL;
	if (s == NULL || req->sess == NULL || tree == NULL ||
	    tree->share == NULL || tree->root_fd < 0)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if (shm_durable_get(s, r->reconnect_persistent, &rec) != 0 ||
	    strcmp(rec.share, tree_name(tree)) != 0)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	/*
	 * MS-SMB2 3.3.5.9.7 / 3.3.5.9.12: a leased open comes back only with
	 * its lease key from its client; an open without a lease never with
	 * one.
	 */
	if (rec.oplock_level == SHM_OPLOCK_LEASE) {
		if (!r->lease || memcmp(rec.lease_key, r->lease_key, 16) != 0 ||
		    memcmp(rec.client_guid, req->conn->client_guid, 16) != 0)
			return STATUS_OBJECT_NAME_NOT_FOUND;
		/*
		 * The name is ignored for an oplock, but a lease belongs to
		 * a file name: another name is STATUS_INVALID_PARAMETER
		 * (what Windows and Samba answer).
		 */
		if (file_name_parse(req, name16, name_len, path, sizeof(path),
		    stream, sizeof(stream)) != STATUS_SUCCESS ||
		    stream[0] != '\0' || ((tree->share->case_sensitive ?
		    strcmp(path, rec.path) : strcasecmp(path, rec.path)) != 0 &&
		    snapshot_name_skip(tree->share, rec.path, path) == 0))
			return STATUS_INVALID_PARAMETER;
	} else if (r->lease)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	memset(&cl, 0, sizeof(cl));
	cl.user = req->sess->user;
	/*
	 * Only a lease ties the handle to its client GUID (checked above);
	 * an oplock handle may come back from a client with a new one.
	 */
	memcpy(cl.client_guid, rec.oplock_level == SHM_OPLOCK_LEASE ?
	    req->conn->client_guid : rec.client_guid, 16);
	/*
	 * As Samba: a DHnC also reclaims a v2 handle (it has no create GUID
	 * to show), and a DH2C with a zero create GUID a v1 handle
	 * (smb2.durable-v2-open.reopen2b, smb2.durable-open.reopen2-lease).
	 */
	if (rec.flags & SHM_DURABLE_V2) {
		cl.v2 = 1;
		memcpy(cl.create_guid, r->reconnect == 2 ? r->create_guid :
		    rec.create_guid, 16);
	} else {
		cl.v2 = r->reconnect == 2 &&
		    memcmp(r->create_guid, rec.create_guid, 16) != 0;
		memcpy(cl.create_guid, r->create_guid, 16);
	}
	cl.pid = shm_self(s);
	cl.session_id = req->sess->session_id;
	/*
	 * Whose handle it is, before the file is opened: another user must
	 * get the same answer whether or not his own rights would open it
	 * (smbtorture smb2.durable-open.reopen6 expects ACCESS_DENIED).
	 */
	if ((rc = shm_durable_claim_match(&rec, &cl)) != 0)
		return rc == -EACCES ? STATUS_ACCESS_DENIED :
		    STATUS_OBJECT_NAME_NOT_FOUND;
	/*
	 * The share's rules now, not when the handle was opened: a reload
	 * may have vetoed its name or limited this user to reading (read
	 * list), and a reconnect gets no more than a new open would.
	 */
	if ((status = namerule_check_path(tree->share, rec.path)) !=
	    STATUS_SUCCESS)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if (tree->read_only && (rec.access & DURABLE_WRITE_RIGHTS))
		return STATUS_ACCESS_DENIED;
	f = durable_unpark(rec.persistent_id);
	if (f == NULL &&
	    (status = durable_reopen(tree, &rec, &f)) != STATUS_SUCCESS)
		return status;
	/*
	 * A previous version's handle (TWrp) reopened by its stored name:
	 * the client's name tells where its own name starts (name queries).
	 */
	if (!f->prev_version && file_name_parse(req, name16, name_len, path,
	    sizeof(path), stream, sizeof(stream)) == STATUS_SUCCESS &&
	    (skip = snapshot_name_skip(tree->share, rec.path, path)) > 0) {
		f->prev_version = 1;
		f->client_len = (uint16_t)(strlen(rec.path) - skip);
	}
	rc = shm_durable_reclaim(s, r->reconnect_persistent, &cl, shm_now_ms(),
	    &rec);
	if (rc != 0) {
		log_debug(2, "durable reconnect of %llx refused: %s",
		    (unsigned long long)r->reconnect_persistent, strerror(-rc));
		file_open_put(f);
		return rc == -EACCES ? STATUS_ACCESS_DENIED :
		    STATUS_OBJECT_NAME_NOT_FOUND;
	}
	op = open_alloc(req->conn, req->sess, tree, OPEN_FILE);
	if (op == NULL) {
		/* reclaimed but unusable: give it back for a later retry */
		(void)shm_durable_disconnect(s, rec.persistent_id, shm_now_ms(),
		    NULL);
		file_open_put(f);
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	op->fid_persistent = rec.persistent_id;
	op->u.file = f;
	op->access = rec.access;
	op->state_in = 1;
	op->state_dev = rec.fid.dev;
	op->state_ino = rec.fid.ino;
	op->durable = r->reconnect;
	op->durable_timeout_ms = rec.timeout_ms;
	if (rec.flags & SHM_DURABLE_RESILIENT) {
		/* reconnected as it was: resilient, not durable */
		op->durable = 0;
		op->resilient = 1;
	}
	/* MS-SMB2 3.3.5.14: a lock replayed after the reconnect is known */
	memcpy(op->lock_seq + 1, rec.lock_seq, SHM_DURABLE_LOCK_SEQ);
	memcpy(op->create_guid, rec.create_guid, 16);
	/* The level now: a break while disconnected settled without an ack. */
	if (shm_open_get(s, &rec.fid, rec.persistent_id, &orec) == 0)
		op->oplock_level = orec.oplock_level;
	else
		op->oplock_level = rec.oplock_level;
	if (op->oplock_level == SHM_OPLOCK_LEASE &&
	    shm_lease_get(s, rec.client_guid, rec.lease_key, &lr) == 0) {
		op->lease_state = lr.state;
		op->lease_version = lr.version;
		memcpy(op->lease_key, rec.lease_key, 16);
		g->lease = 1;
		g->lease_version = lr.version;
		g->lease_state = lr.state;
		g->lease_epoch = lr.epoch;
		memcpy(g->lease_key, lr.lease_key, 16);
		memcpy(g->parent_lease_key, lr.parent_key, 16);
	}
	g->oplock_level = op->oplock_level;
	log_debug(2, "durable open %llx of \"%s\" reconnected",
	    (unsigned long long)op->fid_persistent, f->path);
	*out = op;
	return STATUS_SUCCESS;
}

/* The durable opens of sess, of tree, or of the whole connection. */
/*
 * MS-SMB2 3.3.7.1: a durable open outlives its connection only with a
 * batch oplock or a handle-caching lease.  One whose oplock or lease is
 * being broken, its client gone before it answered, is closed: the opener
 * that broke it goes on as if the client had been gone already, which is
 * what Windows and Samba give it (smbtorture smb2.durable-open.oplock and
 * .lease: the opener gets batch / RWH and a durable handle, and a
 * reconnect of the old one finds nothing), whichever of the disconnect
 * and the open came first.
 */
static int
durable_still_qualifies(struct shm *s, const struct open *op)
{
	struct shm_open_rec r;
	struct shm_lease_rec l;
	struct shm_file_id fid = { op->state_dev, op->state_ino };

	if (shm_open_get(s, &fid, op->fid_persistent, &r) != 0)
		return 1;
	/*
	 * Byte-range locks are kept across a disconnect only under write
	 * caching: a lease without W (RH) holding locks is closed, so a
	 * reconnect finds nothing (Samba's durable_disconnect refuses it
	 * the same way; smb2.durable-open.lock-noW-lease and
	 * durable-v2-open.lock-noW-lease).  A batch oplock keeps them.
	 */
	if (r.oplock_level == SHM_OPLOCK_LEASE)
		return shm_lease_get(s, r.client_guid, r.lease_key, &l) != 0 ||
		    (!l.breaking && (l.state & SHM_LEASE_H) &&
		    (op->nlocks == 0 || (l.state & SHM_LEASE_W)));
	if (r.flags & SHM_OPEN_BREAKING)
		return 0;
	return r.oplock_level == SHM_OPLOCK_BATCH;
}

static void
durable_disconnect_some(struct conn *c, const struct session *sess,
    const struct tree *tree)
{
	struct conn_private *pv = c->priv;
	struct shm *s = state_shm();
	struct open *op;
	unsigned i;
	int rc;

	if (pv == NULL || pv->opens == NULL || s == NULL)
		return;
	for (i = 0; i < pv->nopens; i++) {
		op = &pv->opens[i];
		if (op->kind != OPEN_FILE || (!op->durable && !op->resilient) ||
		    !op->state_in || op->u.file == NULL ||
		    (sess != NULL && op->sess != sess) ||
		    (tree != NULL && op->tree != tree))
			continue;
		/*
		 * A resilient open needs no caching to be kept (worker/
		 * resilient.h), but the client's own LOGOFF ends it: only a
		 * lost connection (or a session replaced after one) keeps it.
		 */
		if (op->resilient ? sess != NULL && sess->logged_off :
		    !durable_still_qualifies(s, op))
			continue;	/* closed normally by the caller */
		/* its LockSequenceArray too, for a lock replayed after */
		rc = shm_durable_disconnect(s, op->fid_persistent, shm_now_ms(),
		    op->lock_seq + 1);
		if (rc != 0) {
			errno = -rc;
			log_warn("durable open %llx: not kept",
			    (unsigned long long)op->fid_persistent);
			continue;	/* closed normally by the caller */
		}
		/* Kept in shm/ with its lease and locks; the fd parked. */
		op->state_in = 0;
		if (nparked < DURABLE_PARKED_MAX) {
			parked[nparked].persistent_id = op->fid_persistent;
			parked[nparked++].f = op->u.file;
			worker_tick_arm();
		} else
			file_open_put(op->u.file);
		op->u.file = NULL;
		open_release(op);
	}
}

void
durable_disconnect(struct conn *c, const struct session *sess)
{
	durable_disconnect_some(c, sess, NULL);
}

void
durable_disconnect_tree(struct conn *c, const struct tree *tree)
{
	durable_disconnect_some(c, NULL, tree);
}

int
durable_tick(void)
{
	static struct shm_durable_rec rec;
	struct shm *s = state_shm();
	unsigned i = 0;
	int rc;

	/* A parked fd lives as long as its disconnected record. */
	while (s != NULL && i < nparked) {
		rc = shm_durable_get(s, parked[i].persistent_id, &rec);
		if (rc == 0 && (rec.flags & SHM_DURABLE_DISCONNECTED)) {
			i++;
			continue;
		}
		file_open_put(parked[i].f);
		parked[i] = parked[--nparked];
	}
	return nparked > 0;
}

struct durable_scan {
	struct shm_file_id	 fid;
	uint64_t		 ids[32];
	uint8_t			 level[32];	/* its oplock level now */
	unsigned		 n;
};

static int
durable_scan_open(const struct shm_file_id *fid, const struct shm_open_rec *o,
    void *arg)
{
	struct durable_scan *sc = arg;

	if (fid->dev == sc->fid.dev && fid->ino == sc->fid.ino &&
	    (o->flags & SHM_OPEN_DISCONNECTED) && sc->n < 32) {
		sc->level[sc->n] = o->oplock_level;
		sc->ids[sc->n++] = o->persistent_id;
	}
	return 0;
}

unsigned
durable_purge_disconnected(const struct shm_file_id *fid,
    const struct tree *tree, int *unlinked)
{
	static struct shm_durable_rec rec;
	const struct vfs_ops *vfs = file_vfs();
	struct shm *s = state_shm();
	struct durable_scan sc;
	int have_rec, rc;
	struct shm_close_result res;
	struct file_open *f;
	unsigned i, n = 0;

	if (s == NULL)
		return 0;
	memset(&sc, 0, sizeof(sc));
	sc.fid = *fid;
	if (shm_foreach_open(s, durable_scan_open, &sc) != 0)
		return 0;
	for (i = 0; i < sc.n; i++) {
		have_rec = shm_durable_get(s, sc.ids[i], &rec) == 0;
		/*
		 * A resilient open with no handle caching has nothing it
		 * could be asked to give up: it stays, with its share mode
		 * and locks, as on Windows (the opener gets the sharing
		 * violation it would get were the client connected).  With
		 * a batch oplock or a lease it is closed like a durable open.
		 */
		if (have_rec && (rec.flags & SHM_DURABLE_RESILIENT) &&
		    sc.level[i] != SHM_OPLOCK_BATCH &&
		    sc.level[i] != SHM_OPLOCK_EXCLUSIVE &&
		    sc.level[i] != SHM_OPLOCK_LEASE)
			continue;
		memset(&res, 0, sizeof(res));
		if (shm_open_remove(s, fid, sc.ids[i], &res) != 0)
			continue;
		n++;
		/*
		 * Its delete-on-close happens now, as at any last close; the
		 * path is the record's, in this share only.
		 */
		if (res.delete_file && have_rec && tree != NULL &&
		    tree->share != NULL && tree->root_fd >= 0 &&
		    strcmp(rec.share, tree_name(tree)) == 0) {
			rc = tree->share->recycle_dir != NULL ?
			    recycle_unlink(tree->share, worker_user(),
			    tree->root_fd, rec.path, 0, fid->dev, fid->ino) :
			    vfs->unlink(tree->root_fd, rec.path, 0);
			/* its "._" file with it (worker/fruit.h) */
			if (rc == 0)
				(void)fruit_rsrc_unlinked(tree->share,
				    worker_user(), tree->root_fd, rec.path);
			if (rc == 0 && unlinked != NULL)
				*unlinked = 1;
		}
		log_debug(2, "durable open %llx closed: another open needs "
		    "its file", (unsigned long long)sc.ids[i]);
		if ((f = durable_unpark(sc.ids[i])) != NULL)
			file_open_put(f);
		if ((res.wake.n > 0 || res.wake.overflow) && state_wmsg() != NULL)
			(void)shm_wmsg_wake(state_wmsg(), &res.wake, fid);
	}
	return n;
}

/*
 * Creates that carried a DH2Q, for replay detection: a small ring per
 * worker.  An entry is only trusted after open_find() on the replaying
 * connection returns an open with the same persistent id (unique per
 * server start), so a stale or overwritten entry never names a wrong open.
 */
#define DURABLE_REPLAY_MAX	256
static struct durable_replay {
	uint8_t		 client_guid[16];
	uint8_t		 create_guid[16];
	uint64_t	 fid_persistent;
	uint64_t	 fid_volatile;
	uint32_t	 action;
	int		 in_use;
	int		 pending;	/* parked, not open yet */
	/* the parked request: compared, never dereferenced */
	const struct conn *pending_conn;
	uint64_t	 pending_mid;
} replays[DURABLE_REPLAY_MAX];
static unsigned replay_next;

static int
durable_guid_zero(const uint8_t *g)
{
	static const uint8_t zero[16];

	return memcmp(g, zero, 16) == 0;
}

static struct durable_replay *
durable_replay_lookup(const struct smb2_req *req, const uint8_t *create_guid)
{
	unsigned i;

	for (i = 0; i < DURABLE_REPLAY_MAX; i++)
		if (replays[i].in_use &&
		    memcmp(replays[i].create_guid, create_guid, 16) == 0 &&
		    memcmp(replays[i].client_guid, req->conn->client_guid,
		    16) == 0)
			return &replays[i];
	return NULL;
}

/* The entry of this create GUID (the same GUID again reuses it). */
static struct durable_replay *
durable_replay_slot(const struct smb2_req *req, const uint8_t *create_guid)
{
	struct durable_replay *e;

	if ((e = durable_replay_lookup(req, create_guid)) != NULL)
		return e;
	e = &replays[replay_next];
	replay_next = (replay_next + 1) % DURABLE_REPLAY_MAX;
	memset(e, 0, sizeof(*e));
	memcpy(e->client_guid, req->conn->client_guid, 16);
	memcpy(e->create_guid, create_guid, 16);
	return e;
}

void
durable_replay_note(struct smb2_req *req, const struct state_open_req *r,
    struct open *op, uint32_t action)
{
	struct durable_replay *e;

	if (r->durable != 2 || durable_guid_zero(r->create_guid))
		return;
	e = durable_replay_slot(req, r->create_guid);
	e->fid_persistent = op->fid_persistent;
	e->fid_volatile = op->fid_volatile;
	e->action = action;
	e->pending = 0;
	e->in_use = 1;
	op->replay_eligible = 1;
}

void
durable_replay_unfinished(struct smb2_req *req, const struct state_open_req *r,
    int pending)
{
	struct durable_replay *e;

	if (r->durable != 2 || durable_guid_zero(r->create_guid))
		return;
	if (pending) {
		e = durable_replay_slot(req, r->create_guid);
		e->pending = 1;
		e->pending_conn = req->conn;
		e->pending_mid = req->message_id;
		e->in_use = 1;
	} else if ((e = durable_replay_lookup(req, r->create_guid)) != NULL &&
	    e->pending)
		e->in_use = 0;	/* failed: a replay is a new create */
}

ntstatus_t
durable_replay_find(struct smb2_req *req, const struct state_open_req *r,
    uint8_t oplock_req, struct open **out, uint32_t *action,
    struct state_open_grant *g)
{
	struct shm *s = state_shm();
	struct durable_replay *e;
	struct shm_lease_rec lr;
	struct open *op;

	*out = NULL;
	if (r->durable != 2 || durable_guid_zero(r->create_guid))
		return STATUS_NOT_FOUND;
	if ((e = durable_replay_lookup(req, r->create_guid)) == NULL)
		return STATUS_NOT_FOUND;
	if (!(req->flags & SMB2_FLAGS_REPLAY_OPERATION)) {
		/* 3.3.5.9.10: the GUID of a live, replayable open again */
		op = e->pending ? NULL : open_find(req->conn,
		    e->fid_persistent, e->fid_volatile);
		return op != NULL && op->replay_eligible ?
		    STATUS_DUPLICATE_OBJECTID : STATUS_NOT_FOUND;
	}
	if (e->pending) {
		struct conn_pending *p;

		/* a parked request resuming finds its own entry: go on */
		if (dispatch_resuming(req) != NULL)
			return STATUS_NOT_FOUND;
		/* still parked on this connection: the client must wait */
		if (e->pending_conn == req->conn &&
		    (p = conn_pending_find(req->conn, 0, e->pending_mid)) !=
		    NULL && p->command == SMB2_CREATE)
			return STATUS_FILE_NOT_AVAILABLE;
		/* cancelled, or its connection is gone: a new create */
		e->in_use = 0;
		return STATUS_NOT_FOUND;
	}
	op = open_find(req->conn, e->fid_persistent, e->fid_volatile);
	if (op == NULL || op->kind != OPEN_FILE || op->u.file == NULL ||
	    op->sess != req->sess || op->tree != req->tree ||
	    !op->replay_eligible) {
		/*
		 * Closed, used since, or another connection's: nothing to
		 * replay here (the entry stays for its own connection).
		 */
		return STATUS_NOT_FOUND;
	}
	memset(g, 0, sizeof(*g));
	if (op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE) {
		/* the lease it holds, as it is now (an upgrade shows) */
		if (!r->lease || memcmp(r->lease_key, op->lease_key, 16) != 0)
			return STATUS_ACCESS_DENIED;
		g->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		g->lease = 1;
		g->lease_version = op->lease_version;
		g->lease_state = op->lease_state;
		memcpy(g->lease_key, op->lease_key, 16);
		if (s != NULL && shm_lease_get(s, req->conn->client_guid,
		    op->lease_key, &lr) == 0) {
			g->lease_state = lr.state;
			g->lease_epoch = lr.epoch;
			g->lease_version = lr.version;
			g->lease_breaking = lr.breaking;
			memcpy(g->parent_lease_key, lr.parent_key, 16);
		}
		if (op->durable == 2) {
			g->durable = 2;
			g->durable_timeout_ms = op->durable_timeout_ms;
		}
	} else {
		if (r->lease || oplock_req == SMB2_OPLOCK_LEVEL_LEASE)
			return STATUS_ACCESS_DENIED;
		/*
		 * What was asked for, within what the open holds; durable
		 * only when that is still a batch oplock.  The open itself
		 * keeps its oplock (Samba's smb2.replay.replay-dhv2-oplock2).
		 */
		g->oplock_level = oplock_req < op->oplock_level ? oplock_req :
		    op->oplock_level;
		if (op->durable == 2 &&
		    g->oplock_level == SMB2_OPLOCK_LEVEL_BATCH) {
			g->durable = 2;
			g->durable_timeout_ms = op->durable_timeout_ms;
		}
	}
	*action = e->action;
	*out = op;
	log_debug(2, "CREATE replay of open %llx",
	    (unsigned long long)op->fid_persistent);
	return STATUS_SUCCESS;
}
