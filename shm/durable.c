/*
 * Durable handles: persistent id -> what a reconnect needs.  While the
 * handle is connected, its open record and locks carry the worker's pid;
 * on a disconnect (the connection dropped, or the worker died) they carry
 * pid 0 and the open keeps its share mode, lease and locks until a reconnect
 * reclaims it or the timeout expires.
 */
#include <errno.h>

#include "shm/shm_priv.h"

#define DURABLE_ENC_MAX	(160 + SHM_DURABLE_LOCK_SEQ + SHM_PATH_MAX + 2 * SHM_NAME_MAX)

static int
durable_encode(struct wcur *w, const struct shm_durable_rec *d)
{
	wcur_u8(w, SHM_REC_V1);
	wcur_le64(w, d->fid.dev);
	wcur_le64(w, d->fid.ino);
	shm_wstr(w, d->path);
	shm_wstr(w, d->share);
	shm_wstr(w, d->user);
	wcur_le32(w, d->access);
	wcur_le32(w, d->share_access);
	wcur_u8(w, d->oplock_level);
	wcur_bytes(w, d->lease_key, SHM_GUID_LEN);
	wcur_le32(w, d->lease_state);
	wcur_bytes(w, d->client_guid, SHM_GUID_LEN);
	wcur_bytes(w, d->create_guid, SHM_GUID_LEN);
	wcur_le32(w, d->timeout_ms);
	wcur_le64(w, d->disconnected_at);
	wcur_le32(w, (uint32_t)d->pid);
	wcur_le32(w, d->flags);
	/* last, always: shm_durable_lock_seq_txn patches it in place */
	wcur_bytes(w, d->lock_seq, SHM_DURABLE_LOCK_SEQ);
	return w->err ? -ENAMETOOLONG : 0;
}

int
shm_durable_decode(const void *buf, size_t len, struct shm_durable_rec *d)
{
	struct cur c;

	cur_init(&c, buf, len);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	d->fid.dev = cur_le64(&c);
	d->fid.ino = cur_le64(&c);
	shm_rstr(&c, d->path, sizeof(d->path));
	shm_rstr(&c, d->share, sizeof(d->share));
	shm_rstr(&c, d->user, sizeof(d->user));
	d->access = cur_le32(&c);
	d->share_access = cur_le32(&c);
	d->oplock_level = cur_u8(&c);
	cur_bytes(&c, d->lease_key, SHM_GUID_LEN);
	d->lease_state = cur_le32(&c);
	cur_bytes(&c, d->client_guid, SHM_GUID_LEN);
	cur_bytes(&c, d->create_guid, SHM_GUID_LEN);
	d->timeout_ms = cur_le32(&c);
	d->disconnected_at = cur_le64(&c);
	d->pid = (pid_t)cur_le32(&c);
	d->flags = cur_le32(&c);
	cur_bytes(&c, d->lock_seq, SHM_DURABLE_LOCK_SEQ);
	return c.err ? -EPROTO : 0;
}

int
shm_durable_put_txn(struct shm *s, MDB_txn *txn, const struct shm_durable_rec *d)
{
	uint8_t kb[8], buf[DURABLE_ENC_MAX];
	MDB_val k = { sizeof(kb), kb }, v = { 0, buf };
	struct wcur w;
	int rc;

	if (d->persistent_id == 0)
		return -EINVAL;
	shm_be64_put(kb, d->persistent_id);
	wcur_init(&w, buf, sizeof(buf));
	if ((rc = durable_encode(&w, d)) != 0)
		return rc;
	v.mv_size = wcur_off(&w);
	return shm_err(mdb_put(txn, s->db_durable, &k, &v, 0));
}

static int
durable_get_txn(struct shm *s, MDB_txn *txn, uint64_t id, struct shm_durable_rec *d)
{
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb }, v;
	int rc;

	shm_be64_put(kb, id);
	if ((rc = shm_err(mdb_get(txn, s->db_durable, &k, &v))) != 0)
		return rc;
	d->persistent_id = id;
	return shm_durable_decode(v.mv_data, v.mv_size, d);
}

/*
 * The open is flagged durable with its record: a close looks for a
 * durable record only when its open says it has one (shm/opens.c).
 */
static int
durable_flag_open_txn(struct shm *s, MDB_txn *txn, const struct shm_durable_rec *d)
{
	struct shm_open_rec o;
	struct shm_ofile of;
	uint8_t *p;
	int rc, i;

	if ((rc = shm_ofile_load(s, txn, &d->fid, &of)) != 0)
		return rc;
	if ((i = shm_ofile_find(&of, d->persistent_id)) < 0)
		return 0;
	p = of.rec + (size_t)i * SHM_OREC_LEN;
	shm_orec_get(p, &o);
	if (o.flags & SHM_OPEN_DURABLE)
		return 0;
	o.flags |= SHM_OPEN_DURABLE;
	shm_orec_put(p, &o);
	return shm_ofile_store(s, txn, &d->fid, &of);
}

int
shm_durable_put(struct shm *s, const struct shm_durable_rec *d)
{
	MDB_txn *txn;
	int rc;

	if ((rc = shm_wbegin(s, shm_env_fid(s, &d->fid), &txn)) != 0)
		return rc;
	if ((rc = shm_durable_put_txn(s, txn, d)) == 0)
		rc = durable_flag_open_txn(s, txn, d);
	return shm_wend(s, txn, rc);
}

int
shm_durable_get(struct shm *s, uint64_t id, struct shm_durable_rec *out)
{
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_durable_env(s, id, &e)) != 0 ||
	    (rc = shm_rbegin(s, e, &txn)) != 0)
		return rc;
	rc = durable_get_txn(s, txn, id, out);
	shm_rend(s, txn);
	return rc;
}

/* Moves the open record and its locks to pid (0: disconnected). */
static int
durable_rehome_txn(struct shm *s, MDB_txn *txn, const struct shm_durable_rec *d,
    pid_t pid, uint64_t session_id, int disconnected)
{
	struct shm_open_rec o;
	struct shm_ofile of;
	uint8_t *p;
	int rc, i;

	if ((rc = shm_ofile_load(s, txn, &d->fid, &of)) != 0)
		return rc;
	if ((i = shm_ofile_find(&of, d->persistent_id)) < 0)
		return -ENOENT;
	p = of.rec + (size_t)i * SHM_OREC_LEN;
	shm_orec_get(p, &o);
	o.pid = pid;
	if (session_id != 0)
		o.session_id = session_id;
	if (disconnected)
		o.flags |= SHM_OPEN_DISCONNECTED;
	else
		o.flags &= ~SHM_OPEN_DISCONNECTED;
	shm_orec_put(p, &o);
	if ((rc = shm_ofile_store(s, txn, &d->fid, &of)) != 0)
		return rc;
	return shm_brlock_repid_txn(s, txn, &d->fid, d->persistent_id, pid);
}

int
shm_durable_disconnect_txn(struct shm *s, MDB_txn *txn, uint64_t id, uint64_t now_ms,
    const uint8_t *lock_seq)
{
	/* ~5 KiB: the handle's scratch, off the stack of the event loop. */
	struct shm_durable_rec *d = &s->dscratch;
	int rc;

	if ((rc = durable_get_txn(s, txn, id, d)) != 0)
		return rc;
	d->flags |= SHM_DURABLE_DISCONNECTED;
	d->disconnected_at = now_ms;
	d->pid = 0;
	if (lock_seq != NULL)
		memcpy(d->lock_seq, lock_seq, SHM_DURABLE_LOCK_SEQ);
	if ((rc = shm_durable_put_txn(s, txn, d)) != 0)
		return rc;
	return durable_rehome_txn(s, txn, d, 0, 0, 1);
}

/*
 * The array is the record's last SHM_DURABLE_LOCK_SEQ bytes
 * (durable_encode): the entry is patched in a copy of the value, with no
 * decode of the ~5 KiB record, and put back only when it changes.
 */
int
shm_durable_lock_seq_txn(struct shm *s, MDB_txn *txn, uint64_t id,
    const struct shm_lock_seq *seq)
{
	uint8_t kb[8], buf[DURABLE_ENC_MAX];
	MDB_val k = { sizeof(kb), kb }, v;
	size_t at;
	int rc;

	if (seq == NULL || seq->index < 1 || seq->index > SHM_DURABLE_LOCK_SEQ)
		return 0;
	shm_be64_put(kb, id);
	rc = mdb_get(txn, s->db_durable, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;	/* not durable (any more): nothing to keep */
	if (rc != 0)
		return shm_err(rc);
	if (v.mv_size < 1 + SHM_DURABLE_LOCK_SEQ || v.mv_size > sizeof(buf) ||
	    ((const uint8_t *)v.mv_data)[0] != SHM_REC_V1)
		return -EPROTO;
	at = v.mv_size - SHM_DURABLE_LOCK_SEQ + (seq->index - 1);
	if (((const uint8_t *)v.mv_data)[at] == seq->value)
		return 0;
	memcpy(buf, v.mv_data, v.mv_size);
	buf[at] = seq->value;
	v.mv_data = buf;
	return shm_err(mdb_put(txn, s->db_durable, &k, &v, 0));
}

static int
shm_durable_disconnect_once(struct shm *s, uint64_t id, uint64_t now_ms,
    const uint8_t *lock_seq)
{
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_durable_env(s, id, &e)) != 0 ||
	    (rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	return shm_wend(s, txn, shm_durable_disconnect_txn(s, txn, id, now_ms,
	    lock_seq));
}

int
shm_durable_disconnect(struct shm *s, uint64_t id, uint64_t now_ms,
    const uint8_t *lock_seq)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_durable_disconnect_once(s, id, now_ms,
	    lock_seq));
	return rc;
}

static int
durable_expired(const struct shm_durable_rec *d, uint64_t now_ms)
{
	uint32_t t = d->timeout_ms < SHM_DURABLE_TIMEOUT_CAP_MS ?
	    d->timeout_ms : SHM_DURABLE_TIMEOUT_CAP_MS;

	return (d->flags & SHM_DURABLE_DISCONNECTED) &&
	    now_ms - d->disconnected_at >= t;
}

/* MS-SMB2 3.3.5.9.7 and 3.3.5.9.12: what identifies the handle, then whose. */
int
shm_durable_claim_match(const struct shm_durable_rec *d,
    const struct shm_durable_claim *cl)
{
	if (cl->v2 ? memcmp(d->create_guid, cl->create_guid, SHM_GUID_LEN) != 0 ||
	    !(d->flags & SHM_DURABLE_V2) : (d->flags & SHM_DURABLE_V2) != 0)
		return -ENOENT;
	if (memcmp(d->client_guid, cl->client_guid, SHM_GUID_LEN) != 0)
		return -ENOENT;
	if (cl->user == NULL || strcmp(d->user, cl->user) != 0)
		return -EACCES;
	return 0;
}

int
shm_durable_reclaim(struct shm *s, uint64_t id, const struct shm_durable_claim *cl,
    uint64_t now_ms, struct shm_durable_rec *out)
{
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_durable_env(s, id, &e)) != 0 ||
	    (rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = durable_get_txn(s, txn, id, out)) != 0 ||
	    (rc = shm_durable_claim_match(out, cl)) != 0)
		goto out;
	if (!(out->flags & SHM_DURABLE_DISCONNECTED)) {
		rc = -EBUSY;
		goto out;
	}
	if (durable_expired(out, now_ms)) {
		rc = -ENOENT;	/* shm_expire_durable() will remove it */
		goto out;
	}
	out->flags &= ~SHM_DURABLE_DISCONNECTED;
	out->disconnected_at = 0;
	out->pid = cl->pid;
	if ((rc = shm_durable_put_txn(s, txn, out)) != 0 ||
	    (rc = durable_rehome_txn(s, txn, out, cl->pid, cl->session_id, 0)) != 0)
		goto out;
	return shm_wcommit(s, txn);
out:
	shm_wabort(s, txn);
	return rc;
}

struct durable_walk {
	shm_durable_fn		 fn;
	void			*arg;
	struct shm_durable_rec	*d;
};

static int
durable_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct durable_walk *w = arg;

	if (k->mv_size != 8 || shm_durable_decode(v->mv_data, v->mv_size,
	    w->d) != 0)
		return 0;
	w->d->persistent_id = shm_be64_get(k->mv_data);
	return w->fn(w->d, w->arg) != 0;
}

int
shm_foreach_durable(struct shm *s, shm_durable_fn fn, void *arg)
{
	/* the handle's scratch: the callback may not call shm/ */
	struct durable_walk w = { fn, arg, &s->dscratch };

	return shm_rec_walk_data(s, s->db_durable, durable_visit, &w);
}

/*
 * Is any disconnected durable open past its timeout?  A read transaction
 * with the handle's renewed cursor: the periodic timer allocates nothing and
 * takes no write lock when there is nothing to expire (the usual case).
 */
static int
durable_any_expired(struct shm *s, struct shm_env *e, uint64_t now_ms)
{
	struct shm_durable_rec *d = &s->dscratch;
	MDB_val k, v;
	MDB_stat st;
	MDB_txn *txn;
	int rc, op = MDB_FIRST, found = 0;

	if ((rc = shm_rbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = mdb_stat(txn, s->db_durable, &st)) != 0 || st.ms_entries == 0)
		goto out;
	if (e->rcur_durable == NULL)
		rc = mdb_cursor_open(txn, s->db_durable, &e->rcur_durable);
	else
		rc = mdb_cursor_renew(txn, e->rcur_durable);
	if (rc != 0)
		goto out;
	while (!found && (rc = mdb_cursor_get(e->rcur_durable, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		found = k.mv_size == 8 &&
		    shm_durable_decode(v.mv_data, v.mv_size, d) == 0 &&
		    durable_expired(d, now_ms);
	}
	if (rc == MDB_NOTFOUND)
		rc = 0;
out:
	shm_rend(s, txn);
	return rc != 0 ? shm_err(rc) : found;
}

/*
 * What a disconnected durable open's end releases once its record is
 * deleted: the open (share mode, lease, name) and its byte-range locks,
 * whose waiters go into wake.  An open already gone is no error.
 */
static int
durable_drop_open_txn(struct shm *s, MDB_txn *txn,
    const struct shm_durable_rec *d, struct shm_pids *wake)
{
	int rc, last, dp;

	rc = shm_open_drop_txn(s, txn, &d->fid, d->persistent_id, 0, NULL,
	    &last, &dp);
	if (rc != 0 && rc != -ENOENT)
		return rc;
	return shm_brlock_remove_open_txn(s, txn, &d->fid, d->persistent_id,
	    wake);
}

static int
shm_expire_durable_once(struct shm *s, struct shm_env *e, uint64_t now_ms,
    unsigned *nexpired, struct shm_pids *wake)
{
	struct shm_durable_rec *d = &s->dscratch;
	MDB_val k, v;
	MDB_cursor *cu = NULL;
	MDB_txn *txn;
	unsigned n = 0;
	int rc, op = MDB_FIRST;

	if (nexpired != NULL)
		*nexpired = 0;
	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	if ((rc = durable_any_expired(s, e, now_ms)) <= 0)
		return rc;
	/* Rare from here on: a cursor of a write transaction (LMDB mallocs it). */
	if ((rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_cursor_open(txn, s->db_durable, &cu))) != 0)
		goto out;
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size != 8 || shm_durable_decode(v.mv_data, v.mv_size, d) != 0 ||
		    !durable_expired(d, now_ms))
			continue;
		d->persistent_id = shm_be64_get(k.mv_data);
		if ((rc = shm_err(mdb_cursor_del(cu, 0))) != 0)
			goto out;
		/* After mdb_cursor_del, MDB_NEXT returns the record that followed. */
		n++;
		if ((rc = durable_drop_open_txn(s, txn, d, wake)) != 0)
			goto out;
	}
	if (rc != MDB_NOTFOUND && rc != 0) {
		rc = shm_err(rc);
		goto out;
	}
	mdb_cursor_close(cu);
	cu = NULL;
	if ((rc = shm_wcommit(s, txn)) == 0 && nexpired != NULL)
		*nexpired = n;
	return rc;
out:
	if (cu != NULL)
		mdb_cursor_close(cu);
	shm_wabort(s, txn);
	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	return rc;
}

/* Each data env in its own transaction; the counts and wake sets add up. */
int
shm_expire_durable(struct shm *s, uint64_t now_ms, unsigned *nexpired,
    struct shm_pids *wake)
{
	struct shm_pids w;
	unsigned i, j, n, sum = 0;
	int rc = 0;

	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	for (i = shm_data_first(s); rc == 0 && i < s->nenv; i++) {
		SHM_RETRY_FULL(s, rc, shm_expire_durable_once(s, &s->e[i], now_ms,
		    &n, &w));
		if (rc != 0)
			break;
		sum += n;
		for (j = 0; wake != NULL && j < w.n; j++)
			shm_pids_add(wake, w.pid[j]);
		if (wake != NULL && w.overflow)
			wake->overflow = 1;
	}
	if (nexpired != NULL)
		*nexpired = rc == 0 ? sum : 0;
	shm_claim_flush(s);
	return rc;
}

/* ---- an administrator's end of a disconnected open (shm_end_durable) ---- */

struct durable_pick {
	shm_durable_fn	 match;
	void		*arg;
	uint64_t	 ids[SHM_DURABLE_END_MAX];
	unsigned	 n;
};

static int
durable_pick_visit(const struct shm_durable_rec *d, void *arg)
{
	struct durable_pick *p = arg;

	if (!(d->flags & SHM_DURABLE_DISCONNECTED) || !p->match(d, p->arg))
		return 0;
	p->ids[p->n++] = d->persistent_id;
	return p->n == SHM_DURABLE_END_MAX;
}

/*
 * One picked record, judged again under the writer lock (a reconnect may
 * have reclaimed it since the read walk): still disconnected, still
 * matching, and its open, if any, disconnected too -- a forged record
 * flagged disconnected must not end a connected open behind its worker's
 * back.  1 when it was ended, 0 when it no longer qualifies.
 */
static int
durable_end_once(struct shm *s, uint64_t id, shm_durable_fn match, void *arg,
    struct shm_pids *wake)
{
	struct shm_durable_rec *d = &s->dscratch;
	struct shm_open_rec o;
	struct shm_ofile of;
	struct shm_env *e;
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb };
	MDB_txn *txn;
	int rc, i;

	memset(wake, 0, sizeof(*wake));
	if ((rc = shm_durable_env(s, id, &e)) != 0 ||
	    (rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	rc = durable_get_txn(s, txn, id, d);
	if (rc == -ENOENT || rc == -EPROTO ||
	    (rc == 0 && (!(d->flags & SHM_DURABLE_DISCONNECTED) ||
	    !match(d, arg)))) {
		rc = 0;
		goto out;
	}
	if (rc != 0)
		goto out;
	if ((rc = shm_ofile_load(s, txn, &d->fid, &of)) != 0 && rc != -ENOENT)
		goto out;
	if (rc == 0 && (i = shm_ofile_find(&of, id)) >= 0) {
		shm_orec_get(of.rec + (size_t)i * SHM_OREC_LEN, &o);
		if (!(o.flags & SHM_OPEN_DISCONNECTED)) {
			rc = 0;
			goto out;
		}
	}
	shm_be64_put(kb, id);
	if ((rc = shm_err(mdb_del(txn, s->db_durable, &k, NULL))) != 0 ||
	    (rc = durable_drop_open_txn(s, txn, d, wake)) != 0)
		goto out;
	if ((rc = shm_wcommit(s, txn)) != 0)
		return rc;
	return 1;
out:
	shm_wabort(s, txn);
	memset(wake, 0, sizeof(*wake));
	return rc;
}

int
shm_end_durable(struct shm *s, shm_durable_fn match, void *arg,
    unsigned *nended, struct shm_pids *wake)
{
	static struct durable_pick p;
	struct shm_pids w;
	unsigned i, j;
	int rc;

	*nended = 0;
	memset(wake, 0, sizeof(*wake));
	memset(&p, 0, sizeof(p));
	p.match = match;
	p.arg = arg;
	/* A read walk first: the writer lock is taken per match only. */
	if ((rc = shm_foreach_durable(s, durable_pick_visit, &p)) < 0)
		return rc;
	for (i = 0; i < p.n; i++) {
		SHM_RETRY_FULL(s, rc, durable_end_once(s, p.ids[i], match, arg,
		    &w));
		if (rc < 0)
			break;
		*nended += (unsigned)rc;
		for (j = 0; j < w.n; j++)
			shm_pids_add(wake, w.pid[j]);
		if (w.overflow)
			wake->overflow = 1;
		rc = 0;
	}
	shm_claim_flush(s);
	return rc;
}
