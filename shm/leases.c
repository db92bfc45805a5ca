/*
 * Oplocks and leases.  An oplock is a field of its open record; a lease is
 * its own record (key: client GUID + lease key) shared by every open of that
 * client with that key, and it names the one file it caches.  This file
 * decides what a new open may be granted and what it must break; sending the
 * breaks and waiting for the acknowledgement is the worker's job.
 */

/*
 * Per-break 35 s timers.
 *
 * - Per-break 35 s timers.  Each break in progress records when it
 *   started (shm/leases.c); an opener waits until the earliest deadline
 *   of the breaks it waits on (state_break_deadline,
 *   STATE_BREAK_TIMEOUT_MS), and at that deadline only the breaks that
 *   are 35 s old take effect without an ack (shm_breaks_expire_before);
 *   younger breaks keep their own timer.
 */
#include <errno.h>

#include "shm/shm_priv.h"

#define LEASE_RWH	(SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H)
#define DATA_ACCESS	(SHM_FILE_READ_DATA | SHM_FILE_WRITE_DATA | \
	SHM_FILE_APPEND_DATA | SHM_FILE_EXECUTE | SHM_DELETE)
/*
 * A stat open (FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, READ_CONTROL,
 * SYNCHRONIZE and nothing else) neither breaks nor limits caching.
 */
#define STAT_ACCESS	(0x00000080 | 0x00000100 | 0x00020000 | 0x00100000)
#define READ_CONTROL	0x00020000

static void
lease_key(uint8_t *k, const uint8_t *client_guid, const uint8_t *key)
{
	memcpy(k, client_guid, SHM_GUID_LEN);
	memcpy(k + SHM_GUID_LEN, key, SHM_GUID_LEN);
}

static int
lease_decode(const MDB_val *k, const MDB_val *v, struct shm_lease_rec *l)
{
	struct cur c;

	if (k->mv_size != SHM_LEASE_KEY_LEN)
		return -EPROTO;
	memcpy(l->client_guid, k->mv_data, SHM_GUID_LEN);
	memcpy(l->lease_key, (const uint8_t *)k->mv_data + SHM_GUID_LEN, SHM_GUID_LEN);
	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	cur_bytes(&c, l->parent_key, SHM_GUID_LEN);
	l->fid.dev = cur_le64(&c);
	l->fid.ino = cur_le64(&c);
	l->state = cur_le32(&c);
	l->breaking_to = cur_le32(&c);
	l->epoch = cur_le16(&c);
	l->version = cur_u8(&c);
	l->breaking = cur_u8(&c);
	/* Added later: a record without it needs what its break asked. */
	l->required = cur_left(&c) >= 4 ? cur_le32(&c) : l->breaking_to;
	/* Added later too: without it a break's start is unknown (0). */
	l->break_started = cur_left(&c) >= 8 ? cur_le64(&c) : 0;
	return c.err ? -EPROTO : 0;
}

int
shm_lease_decode(const void *key, size_t klen, const void *val, size_t vlen,
    struct shm_lease_rec *l)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };

	return lease_decode(&k, &v, l);
}

static int
lease_get_txn(struct shm *s, MDB_txn *txn, const uint8_t *guid, const uint8_t *key,
    struct shm_lease_rec *l)
{
	uint8_t kb[SHM_LEASE_KEY_LEN];
	MDB_val k = { sizeof(kb), kb }, v;
	int rc;

	lease_key(kb, guid, key);
	if ((rc = mdb_get(txn, s->db_leases, &k, &v)) != 0)
		return shm_err(rc);
	return lease_decode(&k, &v, l);
}

static int
lease_put_txn(struct shm *s, MDB_txn *txn, const struct shm_lease_rec *l)
{
	uint8_t kb[SHM_LEASE_KEY_LEN], buf[64];
	MDB_val k = { sizeof(kb), kb }, v = { 0, buf };
	struct wcur w;

	lease_key(kb, l->client_guid, l->lease_key);
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_bytes(&w, l->parent_key, SHM_GUID_LEN);
	wcur_le64(&w, l->fid.dev);
	wcur_le64(&w, l->fid.ino);
	wcur_le32(&w, l->state);
	wcur_le32(&w, l->breaking_to);
	wcur_le16(&w, l->epoch);
	wcur_u8(&w, l->version);
	wcur_u8(&w, l->breaking);
	wcur_le32(&w, l->required);
	wcur_le64(&w, l->break_started);
	if (w.err)
		return -EINVAL;
	v.mv_size = wcur_off(&w);
	return shm_err(mdb_put(txn, s->db_leases, &k, &v, 0));
}

/*
 * When an oplock break started.  An open with an oplock has no lease key,
 * so while SHM_OPEN_BREAKING the key's first 8 bytes hold the start
 * (shm_now_ms(), little-endian) and the record keeps its fixed size; an
 * older record has zeros there: start unknown.
 */
static uint64_t
oplock_break_started(const struct shm_open_rec *e)
{
	if (e->oplock_level == SHM_OPLOCK_LEASE || !(e->flags & SHM_OPEN_BREAKING))
		return 0;
	return le64_get(e->lease_key);
}

static void
oplock_break_start_set(struct shm_open_rec *e, uint64_t started)
{
	if (e->oplock_level == SHM_OPLOCK_LEASE)
		return;
	memset(e->lease_key, 0, SHM_GUID_LEN);
	le64_put(e->lease_key, started);
}

static int
same_lease(const struct shm_open_rec *e, const uint8_t *guid, const uint8_t *key)
{
	return e->oplock_level == SHM_OPLOCK_LEASE && !shm_guid_zero(key) &&
	    memcmp(e->client_guid, guid, SHM_GUID_LEN) == 0 &&
	    memcmp(e->lease_key, key, SHM_GUID_LEN) == 0;
}

/*
 * Calls fn for every open of a file's value (loaded or viewed); fn must not
 * edit the value.  fn returns nonzero to stop (negative: an error).
 */
static int
ofile_each(struct shm *s, MDB_txn *txn, const struct shm_ofile *of,
    int (*fn)(struct shm *, MDB_txn *, const struct shm_open_rec *, void *), void *arg)
{
	struct shm_open_rec e;
	int ret;

	for (uint32_t i = 0; i < of->n; i++) {
		shm_orec_get(of->rec + (size_t)i * SHM_OREC_LEN, &e);
		if ((ret = fn(s, txn, &e, arg)) != 0)
			return ret < 0 ? ret : 0;
	}
	return 0;
}

struct grant_scan {
	const struct shm_open_rec *new;
	int		others;		/* opens not sharing the new open's lease */
	int		others_w;	/* ... of which hold write caching */
	int		others_h;	/* ... of which hold an H lease */
	int		others_oplock;	/* ... of which hold an oplock */
};

static int
grant_visit(struct shm *s, MDB_txn *txn, const struct shm_open_rec *e, void *arg)
{
	struct grant_scan *g = arg;
	struct shm_lease_rec l;
	uint8_t lvl;

	if (g->new->oplock_level == SHM_OPLOCK_LEASE &&
	    same_lease(e, g->new->client_guid, g->new->lease_key))
		return 0;
	/*
	 * Another stat open leaves exclusive caching possible; one with
	 * READ_CONTROL is not a stat open here, as for oplocks (Samba's
	 * is_oplock_stat_open; smb2.durable-v2-open.nonstat-and-lease: RH,
	 * not RWH, next to such an open).
	 */
	if (e->oplock_level == SHM_OPLOCK_NONE &&
	    (e->access & ~(STAT_ACCESS & ~READ_CONTROL)) == 0)
		return 0;
	g->others++;
	/*
	 * An oplock whose break is in progress counts at the level it is
	 * breaking to: an opener that waited out the break timeout shares
	 * the file with the level II the holder was told to drop to.
	 */
	lvl = (e->flags & SHM_OPEN_BREAKING) && e->oplock_level != SHM_OPLOCK_LEASE ?
	    e->oplock_breaking_to : e->oplock_level;
	if (lvl == SHM_OPLOCK_EXCLUSIVE || lvl == SHM_OPLOCK_BATCH)
		g->others_w = 1;
	if (lvl == SHM_OPLOCK_II || lvl == SHM_OPLOCK_EXCLUSIVE ||
	    lvl == SHM_OPLOCK_BATCH)
		g->others_oplock = 1;
	else if (e->oplock_level == SHM_OPLOCK_LEASE &&
	    lease_get_txn(s, txn, e->client_guid, e->lease_key, &l) == 0) {
		if (l.state & SHM_LEASE_W)
			g->others_w = 1;
		if (l.state & SHM_LEASE_H)
			g->others_h = 1;
	}
	return 0;
}

/*
 * What the new open may hold next to the others (MS-FSA 2.1.5.17 and
 * MS-SMB2 3.3.5.9.8 / 3.3.5.9.11): exclusive caching (batch, exclusive, W)
 * only when it is alone; read caching unless another open still writes
 * behind a cache.  The lease record is created or updated here.
 */
int
shm_lease_grant_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const struct shm_ofile *of, struct shm_open_rec *r, struct shm_open_grant *g)
{
	struct grant_scan gs = { .new = r };
	struct shm_lease_rec l;
	uint32_t want, asked;
	int rc;

	r->flags &= ~SHM_OPEN_BREAKING;
	r->oplock_breaking_to = 0;
	if (r->oplock_level == SHM_OPLOCK_NONE) {
		r->lease_state = 0;
		return 0;
	}
	if ((rc = ofile_each(s, txn, of, grant_visit, &gs)) != 0)
		return rc;
	if (r->oplock_level != SHM_OPLOCK_LEASE) {
		if (r->oplock_level != SHM_OPLOCK_II && r->oplock_level != SHM_OPLOCK_EXCLUSIVE &&
		    r->oplock_level != SHM_OPLOCK_BATCH)
			return -EINVAL;
		/*
		 * Next to a handle-caching lease an oplock would be broken
		 * by the very opens that lease is there for: none.
		 */
		if (gs.others_w || gs.others_h)
			r->oplock_level = SHM_OPLOCK_NONE;
		else if (gs.others > 0)
			r->oplock_level = SHM_OPLOCK_II;
		if ((r->flags & SHM_OPEN_NO_LEVEL2) &&
		    r->oplock_level == SHM_OPLOCK_II)
			r->oplock_level = SHM_OPLOCK_NONE;
		r->lease_state = 0;
		g->oplock_level = r->oplock_level;
		return 0;
	}
	if (shm_guid_zero(r->lease_key))
		return -EINVAL;
	/* R, RH, RW and RWH are the lease states a server grants. */
	want = r->lease_state & LEASE_RWH;
	if (!(want & SHM_LEASE_R))
		want = 0;
	asked = want;
	if (gs.others_w)
		want = 0;
	else if (gs.others > 0)
		want &= ~SHM_LEASE_W;
	/* Next to an oplock holder a lease gets no handle caching. */
	if (gs.others_oplock)
		want &= ~SHM_LEASE_H;
	/*
	 * No read caching of a file with byte-range locks (Samba's
	 * file_has_brlocks in grant_fsp_lease; smb2.lease.lease-epoch), and
	 * H or W alone are never granted.
	 */
	if (shm_brlock_any_txn(s, txn, fid))
		want = 0;
	/* Samba's level2 oplocks = no: R or RH alone is none */
	if ((r->flags & SHM_OPEN_NO_LEVEL2) && !(want & SHM_LEASE_W))
		want = 0;
	rc = lease_get_txn(s, txn, r->client_guid, r->lease_key, &l);
	if (rc == -ENOENT) {
		/* MS-SMB2 3.3.5.9.8, across data envs: shm/claim.c */
		if ((rc = shm_claim_take(s, txn, fid, r->client_guid,
		    r->lease_key)) != 0)
			return rc;
		shm_hint_add_bucket(s, SHM_HINT_LEASES,
		    shm_lease_bucket(r->client_guid, r->lease_key), 1);
		memset(&l, 0, sizeof(l));
		memcpy(l.client_guid, r->client_guid, SHM_GUID_LEN);
		memcpy(l.lease_key, r->lease_key, SHM_GUID_LEN);
		memcpy(l.parent_key, r->parent_lease_key, SHM_GUID_LEN);
		l.fid = *fid;
		l.version = r->lease_version == 2 ? 2 : 1;
		l.state = want;
		/*
		 * MS-SMB2 3.3.5.9.11: a v2 lease starts one past the client's;
		 * one granted nothing keeps the client's (lease-epoch).
		 */
		l.epoch = (uint16_t)(r->lease_epoch + (want != 0));
	} else if (rc != 0) {
		return rc;
	} else {
		/* MS-SMB2 3.3.5.9.8: one lease key caches one file. */
		if (l.fid.dev != fid->dev || l.fid.ino != fid->ino)
			return -EINVAL;
		/*
		 * MS-SMB2 3.3.5.9.8: an upgrade takes the state asked for only
		 * when it is a strict superset of the one held and can be held
		 * next to the other opens as a whole (RH asking RW keeps RH);
		 * it waits until a break in progress is over.
		 */
		if (!l.breaking && asked == want &&
		    (want & l.state) == l.state && want != l.state) {
			l.state = want;
			l.epoch++;
		}
	}
	if ((rc = lease_put_txn(s, txn, &l)) != 0)
		return rc;
	r->lease_state = l.state;
	g->oplock_level = SHM_OPLOCK_LEASE;
	g->lease_state = l.state;
	g->lease_epoch = l.epoch;
	g->lease_version = l.version;
	return 0;
}

struct release_scan {
	const uint8_t	*guid;
	const uint8_t	*key;
	int		 used;
};

static int
release_visit(struct shm *s, MDB_txn *txn, const struct shm_open_rec *e, void *arg)
{
	struct release_scan *r = arg;

	if (same_lease(e, r->guid, r->key)) {
		r->used = 1;
		return 1;
	}
	return 0;
}

/* The lease goes with the last open that uses it. */
int
shm_lease_release_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const struct shm_ofile *of, const uint8_t *guid, const uint8_t *key)
{
	struct release_scan r = { guid, key, 0 };
	uint8_t kb[SHM_LEASE_KEY_LEN];
	MDB_val k = { sizeof(kb), kb };
	int rc;

	if ((rc = ofile_each(s, txn, of, release_visit, &r)) != 0)
		return rc;
	if (r.used)
		return 0;
	lease_key(kb, guid, key);
	rc = mdb_del(txn, s->db_leases, &k, NULL);
	if (rc == 0) {
		shm_hint_add_bucket(s, SHM_HINT_LEASES, shm_lease_bucket(guid, key), -1);
		shm_claim_drop(s, txn, fid, guid, key);
	}
	return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

/* ---- breaks ---- */

enum break_mode { BREAK_OPEN, BREAK_WRITE, BREAK_DIR };

struct break_scan {
	enum break_mode	 mode;
	int		 required_updates;	/* breaks in progress to lower */
	const struct shm_break_req *req;
	uint64_t	 writer;		/* BREAK_WRITE: the writing open */
	struct shm_open_rec wrec;
	const uint8_t	*exempt_key;		/* BREAK_DIR: the changer's
						   parent lease key */
	struct shm_breaks *out;
	int		 oplocks_only;	/* a READ_CONTROL stat open */
};

static void
break_add(struct shm_breaks *out, const struct shm_break *b)
{
	if (out->n == SHM_BREAKS_MAX) {
		out->overflow = 1;
		return;
	}
	out->b[out->n++] = *b;
}

static int
break_visit(struct shm *s, MDB_txn *txn, const struct shm_open_rec *e, void *arg)
{
	struct break_scan *bs = arg;
	struct shm_break b;
	struct shm_lease_rec l;
	uint32_t flags = bs->mode == BREAK_OPEN ? bs->req->flags : 0;
	uint32_t cur, to;

	/*
	 * A write leaves the writer's own lease and exclusive caching alone,
	 * but its own level II oplock goes too (MS-FSA 2.1.5.3).
	 */
	if (bs->mode == BREAK_WRITE && e->persistent_id == bs->writer &&
	    (e->oplock_level != SHM_OPLOCK_II || (e->flags & SHM_OPEN_BREAKING)))
		return 0;
	/* A directory has no oplocks; its leases go but the changer's. */
	if (bs->mode == BREAK_DIR && (e->oplock_level != SHM_OPLOCK_LEASE ||
	    (bs->exempt_key != NULL &&
	    memcmp(e->lease_key, bs->exempt_key, SHM_GUID_LEN) == 0)))
		return 0;
	memset(&b, 0, sizeof(b));
	b.pid = e->pid;
	b.persistent_id = e->persistent_id;
	if (e->oplock_level == SHM_OPLOCK_LEASE) {
		if (bs->oplocks_only)
			return 0;
		if (bs->mode == BREAK_OPEN &&
		    same_lease(e, bs->req->client_guid, bs->req->lease_key))
			return 0;
		if (bs->mode == BREAK_WRITE && bs->wrec.oplock_level == SHM_OPLOCK_LEASE &&
		    same_lease(e, bs->wrec.client_guid, bs->wrec.lease_key))
			return 0;
		/* One entry per lease, however many opens share it. */
		for (unsigned i = 0; i < bs->out->n; i++)
			if (bs->out->b[i].is_lease &&
			    memcmp(bs->out->b[i].lease_key, e->lease_key, SHM_GUID_LEN) == 0 &&
			    memcmp(bs->out->b[i].client_guid, e->client_guid, SHM_GUID_LEN) == 0)
				return 0;
		if (lease_get_txn(s, txn, e->client_guid, e->lease_key, &l) != 0)
			return 0;
		/*
		 * What the operation leaves of the state the holder has now
		 * (while a break is in progress: the one not yet given up).
		 */
		cur = l.state;
		to = cur;
		if (bs->mode == BREAK_WRITE || bs->mode == BREAK_DIR) {
			/*
			 * Data changed under the cache: the whole lease goes,
			 * H too (Windows breaks RH to none on a write or a
			 * byte-range lock of another lease key; a directory's
			 * listing changed: Samba's contend_dirleases).
			 */
			to = 0;
		} else if (flags & SHM_BREAK_BATCH_ONLY) {
			return 0;
		} else if (flags & (SHM_BREAK_SHARING | SHM_BREAK_HANDLE_ONLY)) {
			/*
			 * MS-SMB2 3.3.4.7 / MS-FSA 2.1.5.1.2: an open that met a
			 * sharing violation (or a rename) only asks the holder
			 * to give up its handles (RWH -> RW); W stays.
			 */
			to &= ~SHM_LEASE_H;
		} else if (flags & SHM_BREAK_TRUNCATE) {
			/* An overwrite takes all cached data away: none. */
			to = 0;
		} else {
			to &= ~SHM_LEASE_W;
		}
		if ((e->flags & SHM_OPEN_NO_LEVEL2) && !(to & SHM_LEASE_W))
			to = 0;
		b.is_lease = 1;
		memcpy(b.lease_key, e->lease_key, SHM_GUID_LEN);
		memcpy(b.client_guid, e->client_guid, SHM_GUID_LEN);
		b.cur = l.state;
		b.new_level = to;
		b.epoch = l.epoch;
		b.started_ms = l.breaking ? l.break_started : 0;
		if (!l.breaking) {
			if (to == cur)
				return 0;
			break_add(bs->out, &b);
			return 0;
		}
		/*
		 * A break is in progress: no second notification; what this
		 * operation needs beyond it is recorded (required) and the
		 * acknowledgement starts the next break.  Like Windows, an
		 * opener waits while the lease is breaking when it has
		 * nothing of its own to break, or when it already waited.
		 */
		b.in_progress = 1;
		if ((cur & ~to) == 0) {
			if (bs->mode != BREAK_OPEN)
				return 0;
			b.must_wait = 1;
		} else {
			b.must_wait = bs->mode == BREAK_OPEN &&
			    (flags & SHM_BREAK_RESUMED) != 0;
			if (l.required & ~to)
				bs->required_updates++;
		}
		break_add(bs->out, &b);
		return 0;
	} else {
		if (flags & SHM_BREAK_HANDLE_ONLY)
			return 0;
		cur = (e->flags & SHM_OPEN_BREAKING) ? e->oplock_breaking_to : e->oplock_level;
		/* MS-FSA 2.1.5.1.2: a sharing violation spares exclusive ones. */
		if ((flags & (SHM_BREAK_BATCH_ONLY | SHM_BREAK_SHARING)) &&
		    cur != SHM_OPLOCK_BATCH)
			return 0;
		to = cur;
		if (bs->mode == BREAK_WRITE || (flags & SHM_BREAK_TRUNCATE))
			to = SHM_OPLOCK_NONE;
		else if (cur == SHM_OPLOCK_BATCH && (flags & SHM_BREAK_SHARING))
			to = SHM_OPLOCK_NONE;	/* batch caches the handle */
		else if (cur == SHM_OPLOCK_EXCLUSIVE || cur == SHM_OPLOCK_BATCH)
			to = (e->flags & SHM_OPEN_NO_LEVEL2) ? SHM_OPLOCK_NONE :
			    SHM_OPLOCK_II;
		if (to == cur)
			return 0;
		b.cur = e->oplock_level;
		b.new_level = to;
		b.in_progress = (e->flags & SHM_OPEN_BREAKING) != 0;
		b.started_ms = oplock_break_started(e);
	}
	break_add(bs->out, &b);
	return 0;
}

/* Records the breaks of out as in progress (write transaction, of loaded). */
static int
breaks_mark_txn(struct shm *s, MDB_txn *txn, struct shm_ofile *of,
    struct shm_breaks *out)
{
	struct shm_lease_rec l;
	struct shm_open_rec e;
	uint64_t now = shm_now_ms();
	uint8_t *p;
	int rc, i, dirty = 0;

	for (unsigned j = 0; j < out->n; j++) {
		struct shm_break *b = &out->b[j];

		if (b->in_progress && b->is_lease) {
			/* Lower what the next break after the ack goes to. */
			if ((rc = lease_get_txn(s, txn, b->client_guid, b->lease_key, &l)) != 0)
				return rc;
			if (!l.breaking || !(l.required & ~b->new_level))
				continue;
			l.required &= b->new_level;
			if ((rc = lease_put_txn(s, txn, &l)) != 0)
				return rc;
			continue;
		}
		if (b->in_progress)
			continue;
		if (b->is_lease) {
			if ((rc = lease_get_txn(s, txn, b->client_guid, b->lease_key, &l)) != 0)
				return rc;
			l.breaking = 1;
			l.breaking_to = b->new_level;
			l.required = b->new_level;
			l.break_started = now;
			l.epoch++;
			b->epoch = l.epoch;
			b->started_ms = now;
			if ((rc = lease_put_txn(s, txn, &l)) != 0)
				return rc;
			continue;
		}
		if ((i = shm_ofile_find(of, b->persistent_id)) < 0)
			return -ENOENT;
		p = of->rec + (size_t)i * SHM_OREC_LEN;
		shm_orec_get(p, &e);
		e.flags |= SHM_OPEN_BREAKING;
		e.oplock_breaking_to = (uint8_t)b->new_level;
		oplock_break_start_set(&e, now);
		b->started_ms = now;
		shm_orec_put(p, &e);
		dirty = 1;
	}
	return dirty ? 1 : 0;
}

/* BREAK_WRITE: the writing open, to tell its own lease from the others. */
static void
breaks_writer(struct break_scan *bs, const struct shm_ofile *of)
{
	int i;

	memset(&bs->wrec, 0, sizeof(bs->wrec));
	if (bs->mode == BREAK_WRITE && (i = shm_ofile_find(of, bs->writer)) >= 0)
		shm_orec_get(of->rec + (size_t)i * SHM_OREC_LEN, &bs->wrec);
}

static int
breaks_run(struct shm *s, const struct shm_file_id *fid, struct break_scan *bs,
    int mark)
{
	struct shm_ofile of;
	MDB_txn *txn;
	unsigned i;
	int rc, fresh = 0;

	memset(bs->out, 0, sizeof(*bs->out));
	bs->required_updates = 0;
	/*
	 * Stat opens break nothing, unless they overwrite the data.  Windows
	 * counts READ_CONTROL as a stat open for leases only: it still breaks
	 * an oplock (smbtorture smb2.oplock.statopen1, smb2.lease.statopen4).
	 */
	bs->oplocks_only = 0;
	if (bs->mode == BREAK_OPEN && (bs->req->access & ~STAT_ACCESS) == 0 &&
	    !(bs->req->flags & SHM_BREAK_TRUNCATE)) {
		if (!(bs->req->access & READ_CONTROL))
			return 0;
		bs->oplocks_only = 1;
	}
	/* No open of the file holds an oplock or lease: nothing to break. */
	if (shm_hint_zero(s, SHM_HINT_CACHING, fid))
		return 0;
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0) {
		breaks_writer(bs, &of);
		rc = ofile_each(s, txn, &of, break_visit, bs);
	}
	shm_rend(s, txn);
	if (rc != 0 || !mark)
		return rc;
	for (i = 0; i < bs->out->n; i++)
		fresh |= !bs->out->b[i].in_progress;
	if (!fresh && bs->required_updates == 0)
		return 0;
	/* Something new to break: recompute and mark under the write lock. */
	memset(bs->out, 0, sizeof(*bs->out));
	bs->required_updates = 0;
	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		goto fail;
	breaks_writer(bs, &of);
	if ((rc = ofile_each(s, txn, &of, break_visit, bs)) != 0 ||
	    (rc = breaks_mark_txn(s, txn, &of, bs->out)) < 0)
		goto fail;
	if (rc > 0 && (rc = shm_ofile_store(s, txn, fid, &of)) != 0)
		goto fail;
	return shm_wcommit(s, txn);
fail:
	shm_wabort(s, txn);
	memset(bs->out, 0, sizeof(*bs->out));
	return rc;
}

int
shm_open_breaks(struct shm *s, const struct shm_file_id *fid,
    const struct shm_break_req *req, int mark, struct shm_breaks *out)
{
	struct break_scan bs = { .mode = BREAK_OPEN, .req = req, .out = out };

	return breaks_run(s, fid, &bs, mark);
}

struct hcache_scan {
	int	cached, bare;
};

static int
hcache_visit(struct shm *s, MDB_txn *txn, const struct shm_open_rec *e,
    void *arg)
{
	struct hcache_scan *hs = arg;
	struct shm_lease_rec l;

	if (e->oplock_level == SHM_OPLOCK_LEASE &&
	    lease_get_txn(s, txn, e->client_guid, e->lease_key, &l) == 0 &&
	    (l.state & SHM_LEASE_H))
		hs->cached++;
	else
		hs->bare++;
	return 0;
}

int
shm_open_handle_caching(struct shm *s, const struct shm_file_id *fid,
    int *cached, int *bare)
{
	struct hcache_scan hs = { 0, 0 };
	struct shm_ofile of;
	MDB_txn *txn;
	int rc;

	*cached = *bare = 0;
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0)
		rc = ofile_each(s, txn, &of, hcache_visit, &hs);
	shm_rend(s, txn);
	if (rc == -ENOENT)
		rc = 0;
	*cached = hs.cached;
	*bare = hs.bare;
	return rc;
}

int
shm_write_breaks(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, int mark, struct shm_breaks *out)
{
	struct break_scan bs = { .mode = BREAK_WRITE, .writer = persistent_id, .out = out };

	return breaks_run(s, fid, &bs, mark);
}

int
shm_dirlease_breaks(struct shm *s, const struct shm_file_id *fid,
    const uint8_t *parent_key, int mark, struct shm_breaks *out)
{
	struct break_scan bs = { .mode = BREAK_DIR, .out = out };

	/*
	 * The key alone, as Samba compares it: smbtorture's second
	 * connection (another client GUID) naming the key is spared too.
	 */
	if (parent_key != NULL && !shm_guid_zero(parent_key))
		bs.exempt_key = parent_key;
	return breaks_run(s, fid, &bs, mark);
}

int
shm_lease_get(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct shm_lease_rec *out)
{
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_lease_env(s, guid, key, &e)) != 0 ||
	    (rc = shm_rbegin(s, e, &txn)) != 0)
		return rc;
	rc = lease_get_txn(s, txn, guid, key, out);
	shm_rend(s, txn);
	return rc;
}

int
shm_lease_get_fid(struct shm *s, const struct shm_file_id *fid,
    const uint8_t *guid, const uint8_t *key, struct shm_lease_rec *out)
{
	MDB_txn *txn;
	int rc;

	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	rc = lease_get_txn(s, txn, guid, key, out);
	shm_rend(s, txn);
	if (rc == 0 && (out->fid.dev != fid->dev || out->fid.ino != fid->ino))
		rc = -ENOENT;
	return rc;
}

/*
 * Ends the break of l at the acknowledged state: -ENOENT when no break is
 * in progress, -EINVAL when the state is outside the break (MS-SMB2
 * 3.3.5.22.2: the acknowledged state must be within what the break asked).
 */
static int
lease_ack_apply(struct shm_lease_rec *l, uint32_t state)
{
	if (!l->breaking)
		return -ENOENT;
	if (state & ~l->breaking_to)
		return -EINVAL;
	l->state = state;
	l->breaking = 0;
	l->breaking_to = 0;
	l->break_started = 0;
	return 0;
}

int
shm_lease_break_ack(struct shm *s, const uint8_t *guid, const uint8_t *key,
    uint32_t state)
{
	struct shm_lease_rec l;
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_lease_env(s, guid, key, &e)) != 0 ||
	    (rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = lease_get_txn(s, txn, guid, key, &l)) != 0 ||
	    (rc = lease_ack_apply(&l, state)) != 0)
		goto out;
	rc = lease_put_txn(s, txn, &l);
out:
	return shm_wend(s, txn, rc);
}

int
shm_lease_break_ack_next(struct shm *s, const uint8_t *guid, const uint8_t *key,
    uint32_t state, struct shm_break *next, int *have_next)
{
	struct shm_lease_rec l;
	struct shm_env *e;
	MDB_txn *txn;
	uint32_t to;
	int rc;

	*have_next = 0;
	if ((rc = shm_lease_env(s, guid, key, &e)) != 0 ||
	    (rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = lease_get_txn(s, txn, guid, key, &l)) != 0 ||
	    (rc = lease_ack_apply(&l, state)) != 0)
		goto out;
	if (state & ~l.required) {
		/*
		 * More is needed than this break asked: the next one goes
		 * in steps, as Windows does (smbtorture smb2.lease.breaking3):
		 * a lease that still caches handles or writes keeps R first.
		 * It carries the epoch of the break it follows.
		 */
		to = l.required & state;
		if (state & (SHM_LEASE_H | SHM_LEASE_W))
			to |= state & SHM_LEASE_R;
		if (to != state) {
			memset(next, 0, sizeof(*next));
			next->is_lease = 1;
			memcpy(next->lease_key, key, SHM_GUID_LEN);
			memcpy(next->client_guid, guid, SHM_GUID_LEN);
			next->cur = state;
			next->new_level = to;
			next->epoch = l.epoch;
			*have_next = 1;
			if (state & (SHM_LEASE_H | SHM_LEASE_W)) {
				/* A new break: its own 35 s from now. */
				l.breaking = 1;
				l.breaking_to = to;
				l.break_started = shm_now_ms();
				next->started_ms = l.break_started;
			} else
				l.state = to;	/* R -> none: no ack comes */
		}
	}
	rc = lease_put_txn(s, txn, &l);
out:
	return shm_wend(s, txn, rc);
}

int
shm_oplock_break_ack(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, uint8_t level)
{
	struct shm_open_rec e;
	struct shm_ofile of;
	uint8_t *p;
	MDB_txn *txn;
	int rc, i;

	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		goto out;
	if ((i = shm_ofile_find(&of, persistent_id)) < 0) {
		rc = -ENOENT;
		goto out;
	}
	p = of.rec + (size_t)i * SHM_OREC_LEN;
	shm_orec_get(p, &e);
	if (!(e.flags & SHM_OPEN_BREAKING)) {
		rc = -ENOENT;
		goto out;
	}
	/* Levels order as their values: NONE < II < EXCLUSIVE < BATCH. */
	if (level > e.oplock_breaking_to) {
		rc = -EINVAL;
		goto out;
	}
	e.oplock_level = level;
	e.oplock_breaking_to = 0;
	oplock_break_start_set(&e, 0);
	e.flags &= ~SHM_OPEN_BREAKING;
	shm_orec_put(p, &e);
	rc = shm_ofile_store(s, txn, fid, &of);
out:
	return shm_wend(s, txn, rc);
}

int
shm_breaks_expire(struct shm *s, const struct shm_file_id *fid)
{
	return shm_breaks_expire_before(s, fid, UINT64_MAX);
}

int
shm_breaks_expire_before(struct shm *s, const struct shm_file_id *fid,
    uint64_t started_by)
{
	struct shm_lease_rec l;
	struct shm_open_rec e;
	struct shm_ofile of;
	MDB_txn *txn;
	uint8_t *p;
	uint32_t i;
	int rc, ended = 0, dirty = 0;

	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = shm_ofile_load(s, txn, fid, &of)) != 0)
		goto out;
	for (i = 0; i < of.n; i++) {
		p = of.rec + (size_t)i * SHM_OREC_LEN;
		shm_orec_get(p, &e);
		if (e.oplock_level == SHM_OPLOCK_LEASE) {
			/* Several opens may share the lease: ended once. */
			if (lease_get_txn(s, txn, e.client_guid, e.lease_key,
			    &l) != 0 || !l.breaking || l.break_started > started_by)
				continue;
			l.state = 0;
			l.breaking = 0;
			l.breaking_to = 0;
			l.break_started = 0;
			if ((rc = lease_put_txn(s, txn, &l)) != 0)
				goto out;
			ended++;
			continue;
		}
		if (!(e.flags & SHM_OPEN_BREAKING) ||
		    oplock_break_started(&e) > started_by)
			continue;
		e.oplock_level = e.oplock_breaking_to;
		e.oplock_breaking_to = 0;
		oplock_break_start_set(&e, 0);
		e.flags &= ~SHM_OPEN_BREAKING;
		shm_orec_put(p, &e);
		dirty = 1;
		ended++;
	}
	if (dirty)
		rc = shm_ofile_store(s, txn, fid, &of);
out:
	rc = shm_wend(s, txn, rc);
	return rc != 0 ? rc : ended;
}

struct holders_scan {
	const uint8_t	*guid;
	const uint8_t	*key;
	struct shm_pids	*pids;
};

static int
holders_visit(struct shm *s, MDB_txn *txn, const struct shm_open_rec *e, void *arg)
{
	struct holders_scan *h = arg;

	(void)s;
	(void)txn;
	if (same_lease(e, h->guid, h->key))
		shm_pids_add(h->pids, e->pid);	/* skips 0: disconnected */
	return 0;
}

int
shm_lease_holders(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct shm_file_id *fid, struct shm_pids *pids)
{
	struct holders_scan h = { guid, key, pids };
	struct shm_lease_rec l;
	struct shm_ofile of;
	struct shm_env *e;
	MDB_txn *txn;
	int rc;

	memset(pids, 0, sizeof(*pids));
	if ((rc = shm_lease_env(s, guid, key, &e)) != 0 ||
	    (rc = shm_rbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = lease_get_txn(s, txn, guid, key, &l)) == 0) {
		*fid = l.fid;
		if ((rc = shm_ofile_view(s, txn, fid, &of)) == 0)
			rc = ofile_each(s, txn, &of, holders_visit, &h);
	}
	shm_rend(s, txn);
	return rc;
}
