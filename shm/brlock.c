/*
 * Byte-range locks.  All locks and blocked-lock waiters of a file are one
 * record (key: file id), so a lock request, with all its elements, is one
 * read-modify-write in one transaction.  READ and WRITE checks read the
 * record in place in a read transaction, and skip LMDB altogether when the
 * shared hint counter of the file's bucket says no file there has a record.
 *
 * Record v1: u8 version, u16 nlocks, u16 nwaiters,
 *   nlocks  x { u64 offset, u64 length, u64 persistent id, u32 pid,
 *               u8 flags: 1 exclusive, 2 a POSIX handle's (shm.h) }
 *   nwaiters x { u32 pid, u64 persistent id }
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

#define BRL_LOCK_LEN	29
#define BRL_WAIT_LEN	12
#define BRL_MAX		UINT16_MAX

/* Inclusive last byte; callers have rejected ranges that wrap. */
static uint64_t
brl_last(uint64_t off, uint64_t len)
{
	return off + len - 1;
}

static int
brl_range_valid(uint64_t off, uint64_t len)
{
	/* MS-SMB2 3.3.5.14: a range past 2^64 is STATUS_INVALID_LOCK_RANGE. */
	return len == 0 || off + (len - 1) >= off;
}

/*
 * Do two ranges overlap?  A zero-length range overlaps only a range that
 * contains it strictly after its start (Windows behaviour; Samba's
 * brl_overlap() agrees), and two zero-length ranges never do.
 */
static int
brl_overlap(uint64_t ao, uint64_t al, uint64_t bo, uint64_t bl)
{
	if (al == 0 && bl == 0)
		return 0;
	if (al == 0)
		return ao > bo && ao <= brl_last(bo, bl);
	if (bl == 0)
		return bo > ao && bo <= brl_last(ao, al);
	return ao <= brl_last(bo, bl) && bo <= brl_last(ao, al);
}

#define BRL_EXCL	0x1
#define BRL_POSIX	0x2

/* Does new lock n conflict with existing lock e? */
static int
brl_conflict(const struct shm_brlock_rec *n, const struct shm_brlock_rec *e)
{
	if (!n->exclusive && !e->exclusive)
		return 0;
	/* Two POSIX locks: the owner's own never conflict (they merge). */
	if (n->posix && e->posix)
		return n->owner.persistent_id != e->owner.persistent_id &&
		    brl_overlap(n->offset, n->length, e->offset, e->length);
	/* A shared lock may stack on the same open's exclusive lock. */
	if (!n->exclusive && e->exclusive &&
	    n->owner.persistent_id == e->owner.persistent_id)
		return 0;
	return brl_overlap(n->offset, n->length, e->offset, e->length);
}

static int
brl_grow(struct shm *s, unsigned nl, unsigned nw)
{
	if (nl > s->brl_cap) {
		unsigned cap = nl < 16 ? 16 : nl * 2;
		void *p = reallocarray(s->brl_buf, cap, sizeof(*s->brl_buf));

		if (p == NULL)
			return -ENOMEM;
		s->brl_buf = p;
		s->brl_cap = cap;
	}
	if (nw > s->wait_cap) {
		unsigned cap = nw < 16 ? 16 : nw * 2;
		void *p = reallocarray(s->wait_buf, cap, sizeof(*s->wait_buf));

		if (p == NULL)
			return -ENOMEM;
		s->wait_buf = p;
		s->wait_cap = cap;
	}
	return 0;
}

static void
brl_read_lock(struct cur *c, struct shm_brlock_rec *l)
{
	uint8_t fl;

	l->offset = cur_le64(c);
	l->length = cur_le64(c);
	l->owner.persistent_id = cur_le64(c);
	l->owner.pid = (pid_t)cur_le32(c);
	fl = cur_u8(c);
	l->exclusive = (fl & BRL_EXCL) != 0;
	l->posix = (fl & BRL_POSIX) != 0;
}

/*
 * Decodes the file's record into s->brl_buf / s->wait_buf (room for extra
 * more locks and one more waiter).  A missing record is an empty set.
 */
int
shm_brlock_any_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	struct cur c;

	if (shm_hint_zero(s, SHM_HINT_LOCKED, fid))
		return 0;
	shm_fid_key(key, fid);
	if (mdb_get(txn, s->db_brlocks, &k, &v) != 0)
		return 0;
	cur_init(&c, v.mv_data, v.mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return 0;
	return cur_le16(&c) > 0 && !c.err;	/* locks, not only waiters */
}

/* The record's parts (above): header, a lock, a waiter. */
#define BRL_HDR_LEN	5
#define BRL_LOCK_LEN	29
#define BRL_WAIT_LEN	12

/*
 * A file's record as any worker may have written it: the version, and a
 * length that is exactly what its counts say, checked before a buffer
 * grows for them.  0 and the counts, or -EPROTO.
 */
int
shm_brlock_decode(const void *val, size_t len, unsigned *nl, unsigned *nw)
{
	const uint8_t *p = val;

	if (len < BRL_HDR_LEN || p[0] != SHM_REC_V1)
		return -EPROTO;
	*nl = le16_get(p + 1);
	*nw = le16_get(p + 3);
	if (len != BRL_HDR_LEN + (size_t)*nl * BRL_LOCK_LEN +
	    (size_t)*nw * BRL_WAIT_LEN)
		return -EPROTO;
	return 0;
}

/* Lock i of a record shm_brlock_decode accepted. */
void
shm_brlock_rec_get(const void *val, unsigned i, struct shm_brlock_rec *l)
{
	struct cur c;

	cur_init(&c, (const uint8_t *)val + BRL_HDR_LEN +
	    (size_t)i * BRL_LOCK_LEN, BRL_LOCK_LEN);
	brl_read_lock(&c, l);
}

static int
brl_load(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    unsigned extra, unsigned *nl, unsigned *nw)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	struct cur c;
	unsigned i;
	int rc;

	*nl = *nw = 0;
	s->brl_had = 0;
	shm_fid_key(key, fid);
	rc = mdb_get(txn, s->db_brlocks, &k, &v);
	if (rc == MDB_NOTFOUND)
		return brl_grow(s, extra, 1);
	if (rc != 0)
		return shm_err(rc);
	s->brl_had = 1;
	if (shm_brlock_decode(v.mv_data, v.mv_size, nl, nw) != 0) {
		*nl = *nw = 0;
		return -EPROTO;
	}
	cur_init(&c, v.mv_data, v.mv_size);
	cur_skip(&c, BRL_HDR_LEN);
	if ((rc = brl_grow(s, *nl + extra, *nw + 1)) != 0)
		return rc;
	for (i = 0; i < *nl; i++)
		brl_read_lock(&c, &s->brl_buf[i]);
	for (i = 0; i < *nw; i++) {
		s->wait_buf[i].pid = (pid_t)cur_le32(&c);
		s->wait_buf[i].persistent_id = cur_le64(&c);
	}
	return c.err ? -EPROTO : 0;
}

static int
brl_store(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    unsigned nl, unsigned nw)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	struct wcur w;
	unsigned i;
	int rc;

	shm_fid_key(key, fid);
	if (nl == 0 && nw == 0) {
		rc = mdb_del(txn, s->db_brlocks, &k, NULL);
		if (rc == 0 && s->brl_had)
			shm_hint_add(s, SHM_HINT_LOCKED, fid, -1);
		s->brl_had = 0;
		return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	}
	if (nl > BRL_MAX || nw > BRL_MAX)
		return -ENOLCK;
	/* Counted before the record can be seen (shm_priv.h). */
	if (!s->brl_had)
		shm_hint_add(s, SHM_HINT_LOCKED, fid, 1);
	s->brl_had = 1;
	v.mv_size = 5 + (size_t)nl * BRL_LOCK_LEN + (size_t)nw * BRL_WAIT_LEN;
	v.mv_data = NULL;
	/* Encode straight into the page: the decoded copy is in s->*_buf. */
	if ((rc = mdb_put(txn, s->db_brlocks, &k, &v, MDB_RESERVE)) != 0)
		return shm_err(rc);
	wcur_init(&w, v.mv_data, v.mv_size);
	wcur_u8(&w, SHM_REC_V1);
	wcur_le16(&w, (uint16_t)nl);
	wcur_le16(&w, (uint16_t)nw);
	for (i = 0; i < nl; i++) {
		const struct shm_brlock_rec *l = &s->brl_buf[i];

		wcur_le64(&w, l->offset);
		wcur_le64(&w, l->length);
		wcur_le64(&w, l->owner.persistent_id);
		wcur_le32(&w, (uint32_t)l->owner.pid);
		wcur_u8(&w, (l->exclusive ? BRL_EXCL : 0) |
		    (l->posix ? BRL_POSIX : 0));
	}
	for (i = 0; i < nw; i++) {
		wcur_le32(&w, (uint32_t)s->wait_buf[i].pid);
		wcur_le64(&w, s->wait_buf[i].persistent_id);
	}
	return w.err ? -EIO : 0;
}

static void
brl_add_waiter(struct shm *s, unsigned *nw, const struct shm_brlock_owner *o)
{
	for (unsigned i = 0; i < *nw; i++)
		if (s->wait_buf[i].persistent_id == o->persistent_id) {
			s->wait_buf[i].pid = o->pid;
			return;
		}
	s->wait_buf[(*nw)++] = *o;	/* brl_load made room for one */
}

/* Do [alo, ahi] and [blo, bhi] overlap (adjacent: or sit side by side)? */
static int
brl_touch(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi, int adjacent)
{
	if (adjacent)
		return (ahi == UINT64_MAX || blo <= ahi + 1) &&
		    (bhi == UINT64_MAX || alo <= bhi + 1);
	return blo <= ahi && alo <= bhi;
}

static void
brl_drop(struct shm *s, unsigned *nl, unsigned i)
{
	memmove(&s->brl_buf[i], &s->brl_buf[i + 1],
	    (*nl - i - 1) * sizeof(s->brl_buf[0]));
	(*nl)--;
}

/* Is l one of the owner's POSIX locks of some bytes? */
static int
brl_posix_own(const struct shm_brlock_rec *l, const struct shm_brlock_owner *o)
{
	return l->posix && l->length > 0 &&
	    l->owner.persistent_id == o->persistent_id;
}

/*
 * Frees [lo, hi] from the owner's POSIX locks, as fcntl's F_UNLCK: a lock
 * across an end of it keeps its part outside.  type -1: every lock of the
 * owner; 0 or 1: only its locks of the other type (a lock of this type
 * taking the range over).  1 when a lock changed.  The owner's locks
 * never overlap each other, so at most one of them spans both ends: one
 * more lock at most (brl_load's extra).
 */
static int
brl_posix_cut(struct shm *s, unsigned *nl, const struct shm_brlock_owner *o,
    uint64_t lo, uint64_t hi, int type)
{
	struct shm_brlock_rec l, piece;
	unsigned i = 0, n = *nl;
	uint64_t last;
	int changed = 0;

	while (i < n) {
		l = s->brl_buf[i];
		last = brl_last(l.offset, l.length);
		if (!brl_posix_own(&l, o) || l.exclusive == type ||
		    !brl_touch(l.offset, last, lo, hi, 0)) {
			i++;
			continue;
		}
		/* the pieces go after the n locks looked at */
		brl_drop(s, nl, i);
		n--;
		changed = 1;
		if (l.offset < lo) {
			piece = l;
			piece.length = lo - l.offset;
			s->brl_buf[(*nl)++] = piece;
		}
		if (last > hi) {
			piece = l;
			piece.offset = hi + 1;
			piece.length = last - hi;
			s->brl_buf[(*nl)++] = piece;
		}
	}
	return changed;
}

/* Moves every waiter to the wake set and forgets them: they retry. */
static void
brl_wake_all(struct shm *s, unsigned *nw, struct shm_pids *wake)
{
	for (unsigned i = 0; i < *nw; i++)
		shm_pids_add(wake, s->wait_buf[i].pid);
	*nw = 0;
}

/*
 * Adds the POSIX lock nr over its owner's own locks, as fcntl's F_SETLK:
 * the range is the new type's, joined with the owner's locks of that type
 * it overlaps or touches.  Two more locks at most.  1 when a shared lock
 * took bytes of an exclusive one over (a waiter may get them now).
 */
static int
brl_posix_take(struct shm *s, unsigned *nl, const struct shm_brlock_rec *nr)
{
	struct shm_brlock_rec *l;
	uint64_t lo = nr->offset, hi, last;
	unsigned i;
	int eased;

	if (nr->length == 0) {
		s->brl_buf[(*nl)++] = *nr;	/* covers no byte: kept apart */
		return 0;
	}
	hi = brl_last(nr->offset, nr->length);
	eased = brl_posix_cut(s, nl, &nr->owner, lo, hi, nr->exclusive) &&
	    !nr->exclusive;
again:
	for (i = 0; i < *nl; i++) {
		l = &s->brl_buf[i];
		last = brl_last(l->offset, l->length);
		if (!brl_posix_own(l, &nr->owner) ||
		    l->exclusive != nr->exclusive ||
		    !brl_touch(l->offset, last, lo, hi, 1))
			continue;
		lo = l->offset < lo ? l->offset : lo;
		hi = last > hi ? last : hi;
		brl_drop(s, nl, i);
		goto again;	/* the wider range may touch another */
	}
	s->brl_buf[*nl] = *nr;
	s->brl_buf[*nl].offset = lo;
	/* every byte from 0 (2^64 of them) is no length: the last left out */
	s->brl_buf[*nl].length = hi - lo + 1 == 0 ? UINT64_MAX : hi - lo + 1;
	(*nl)++;
	return eased;
}

int
shm_brlock_lock_many(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, const struct shm_brlock_range *rg,
    unsigned n, unsigned flags, unsigned *failed, struct shm_pids *wake)
{
	return shm_brlock_lock_many_seq(s, fid, o, rg, n, flags, failed, wake,
	    NULL);
}

int
shm_brlock_lock_many_seq(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, const struct shm_brlock_range *rg,
    unsigned n, unsigned flags, unsigned *failed, struct shm_pids *wake,
    const struct shm_lock_seq *seq)
{
	MDB_txn *txn;
	unsigned nl, nw, orig, i, j;
	int rc, posix = (flags & SHM_BRL_POSIX) != 0, eased = 0;

	if (failed != NULL)
		*failed = 0;
	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	for (i = 0; i < n; i++)
		if (!brl_range_valid(rg[i].offset, rg[i].length)) {
			if (failed != NULL)
				*failed = i;
			return -EINVAL;
		}
	if (n == 0)
		return 0;
	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	/* a POSIX lock may split one of the owner's locks: room for two */
	if ((rc = brl_load(s, txn, fid, posix ? 2 * n : n, &nl, &nw)) != 0)
		goto out;
	orig = nl;
	if (s->brl_max_file != 0 && nl + n > s->brl_max_file) {
		static time_t last;

		if (time(NULL) != last) {
			last = time(NULL);
			log_warnx("state: refused a lock, `max locks per file` "
			    "(%u) reached", s->brl_max_file);
		}
		rc = -EDQUOT;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct shm_brlock_rec nr = {
			.owner = *o, .offset = rg[i].offset, .length = rg[i].length,
			.exclusive = rg[i].exclusive != 0, .posix = posix,
		};

		/* Earlier elements of the same request count as held. */
		for (j = 0; j < nl; j++)
			if (brl_conflict(&nr, &s->brl_buf[j]))
				break;
		if (j < nl) {
			if (failed != NULL)
				*failed = i;
			rc = -EAGAIN;
			break;
		}
		/* POSIX: checked against the others first, applied below */
		if (!posix)
			s->brl_buf[nl++] = nr;
	}
	for (i = 0; rc == 0 && posix && i < n; i++) {
		struct shm_brlock_rec nr = {
			.owner = *o, .offset = rg[i].offset, .length = rg[i].length,
			.exclusive = rg[i].exclusive != 0, .posix = 1,
		};

		eased |= brl_posix_take(s, &nl, &nr);
	}
	/* exclusive bytes turned shared: the waiters try again */
	if (eased && wake != NULL)
		brl_wake_all(s, &nw, wake);
	if (rc == -EAGAIN) {
		if (!(flags & SHM_BRL_WAIT))
			goto out;
		/* All or none: drop this request's locks, keep the waiter. */
		brl_add_waiter(s, &nw, o);
		if ((rc = brl_store(s, txn, fid, orig, nw)) != 0)
			goto out;
		rc = shm_wcommit(s, txn);
		return rc != 0 ? rc : -EAGAIN;
	}
	if ((rc = brl_store(s, txn, fid, nl, nw)) == 0 && seq != NULL)
		rc = shm_durable_lock_seq_txn(s, txn, o->persistent_id, seq);
out:
	if (rc != 0 && wake != NULL)
		memset(wake, 0, sizeof(*wake));
	return shm_wend(s, txn, rc);
}

void
shm_brlock_set_max(struct shm *s, unsigned per_file)
{
	s->brl_max_file = per_file;
}

int
shm_brlock_lock(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length,
    unsigned flags)
{
	struct shm_brlock_range r = {
		.offset = offset, .length = length,
		.exclusive = (flags & SHM_BRL_EXCLUSIVE) != 0,
	};

	return shm_brlock_lock_many(s, fid, o, &r, 1, flags, NULL, NULL);
}

static int
shm_brlock_unlock_once(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length,
    int posix, struct shm_pids *wake, const struct shm_lock_seq *seq)
{
	MDB_txn *txn;
	unsigned nl, nw, i, hit = UINT32_MAX;
	int rc;

	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = brl_load(s, txn, fid, 1, &nl, &nw)) != 0)
		goto out;
	if (posix) {
		/* any part of the owner's locks; nothing to free is no error */
		if (length == 0) {
			for (i = 0; i < nl; i++)
				if (s->brl_buf[i].posix &&
				    s->brl_buf[i].owner.persistent_id ==
				    o->persistent_id && s->brl_buf[i].length == 0 &&
				    s->brl_buf[i].offset == offset)
					break;
			if (i == nl)
				goto unchanged;
			brl_drop(s, &nl, i);
		} else if (!brl_posix_cut(s, &nl, o, offset,
		    brl_last(offset, length), -1))
			goto unchanged;
		goto store;
	}
	/* Exact range of this open; an exclusive lock goes before a shared one. */
	for (i = 0; i < nl; i++) {
		struct shm_brlock_rec *l = &s->brl_buf[i];

		if (l->owner.persistent_id != o->persistent_id ||
		    l->offset != offset || l->length != length)
			continue;
		if (hit == UINT32_MAX || l->exclusive)
			hit = i;
		if (l->exclusive)
			break;
	}
	if (hit == UINT32_MAX) {
		rc = -ENOENT;
		goto out;
	}
	brl_drop(s, &nl, hit);
store:
	brl_wake_all(s, &nw, wake);
	if ((rc = brl_store(s, txn, fid, nl, nw)) != 0 ||
	    (rc = shm_durable_lock_seq_txn(s, txn, o->persistent_id, seq)) != 0)
		goto out;
	return shm_wcommit(s, txn);
unchanged:
	/* a POSIX unlock of nothing succeeds: its lock sequence counts */
	if (seq == NULL)
		goto out;
	if ((rc = shm_durable_lock_seq_txn(s, txn, o->persistent_id, seq)) != 0)
		goto out;
	return shm_wcommit(s, txn);
out:
	shm_wabort(s, txn);
	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	return rc;
}

int
shm_brlock_unlock(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length,
    struct shm_pids *wake)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_brlock_unlock_once(s, fid, o, offset, length,
	    0, wake, NULL));
	return rc;
}

int
shm_brlock_unlock_seq(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length,
    int posix, struct shm_pids *wake, const struct shm_lock_seq *seq)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_brlock_unlock_once(s, fid, o, offset, length,
	    posix != 0, wake, seq));
	return rc;
}

int
shm_brlock_unlock_posix(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length,
    struct shm_pids *wake)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_brlock_unlock_once(s, fid, o, offset, length,
	    1, wake, NULL));
	return rc;
}

int
shm_brlock_check(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o, uint64_t offset, uint64_t length, int write)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	MDB_txn *txn;
	struct cur c;
	struct shm_brlock_rec l;
	unsigned nl, i;
	int rc;

	if (length == 0)
		return 0;
	/* An I/O range running past 2^64 is checked up to the end. */
	if (!brl_range_valid(offset, length))
		length = UINT64_MAX - offset + 1;
	/* Fast path: no lock on this file (nor its bucket): no LMDB at all. */
	if (shm_hint_zero(s, SHM_HINT_LOCKED, fid))
		return 0;
	if ((rc = shm_rbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	shm_fid_key(key, fid);
	if ((rc = mdb_get(txn, s->db_brlocks, &k, &v)) != 0) {
		rc = rc == MDB_NOTFOUND ? 0 : shm_err(rc);
		goto out;
	}
	cur_init(&c, v.mv_data, v.mv_size);
	if (cur_u8(&c) != SHM_REC_V1) {
		rc = -EPROTO;
		goto out;
	}
	nl = cur_le16(&c);
	(void)cur_le16(&c);
	for (i = 0; i < nl && !c.err; i++) {
		brl_read_lock(&c, &l);
		if (!brl_overlap(offset, length, l.offset, l.length))
			continue;
		/* POSIX locks are advisory for a POSIX handle's I/O */
		if ((write & SHM_BRL_POSIX) && l.posix)
			continue;
		/*
		 * MS-FSA 2.1.4.10: an exclusive lock lets only its own open
		 * through; a shared lock blocks every write, its own open's too.
		 */
		if (l.exclusive ? l.owner.persistent_id != o->persistent_id :
		    (write & 1)) {
			rc = -EAGAIN;
			break;
		}
	}
	if (rc == 0 && c.err)
		rc = -EPROTO;
out:
	shm_rend(s, txn);
	return rc;
}

static int
shm_brlock_cancel_wait_once(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o)
{
	MDB_txn *txn;
	unsigned nl, nw, i, j;
	int rc;

	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	if ((rc = brl_load(s, txn, fid, 0, &nl, &nw)) != 0)
		goto out;
	for (i = j = 0; i < nw; i++)
		if (s->wait_buf[i].persistent_id != o->persistent_id)
			s->wait_buf[j++] = s->wait_buf[i];
	if (j == nw) {
		rc = -ENOENT;
		goto out;
	}
	rc = brl_store(s, txn, fid, nl, j);
out:
	return shm_wend(s, txn, rc);
}

int
shm_brlock_cancel_wait(struct shm *s, const struct shm_file_id *fid,
    const struct shm_brlock_owner *o)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_brlock_cancel_wait_once(s, fid, o));
	return rc;
}

int
shm_brlock_edit_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    shm_brl_keep_fn keep, shm_brl_keepw_fn keepw, void *arg, unsigned *nremoved,
    struct shm_pids *wake)
{
	unsigned nl, nw, i, j, k;
	int rc;

	/* In a write transaction a zero is exact: the file has no record. */
	if (shm_hint_zero(s, SHM_HINT_LOCKED, fid))
		return 0;
	if ((rc = brl_load(s, txn, fid, 0, &nl, &nw)) != 0)
		return rc;
	if (nl == 0 && nw == 0)
		return 0;
	for (i = j = 0; i < nl; i++)
		if (keep == NULL || keep(&s->brl_buf[i], arg))
			s->brl_buf[j++] = s->brl_buf[i];
	for (i = k = 0; i < nw; i++)
		if (keepw == NULL || keepw(&s->wait_buf[i], arg))
			s->wait_buf[k++] = s->wait_buf[i];
	if (nremoved != NULL)
		*nremoved += nl - j;
	/* A released range may unblock any waiter: wake them all to retry. */
	if (j < nl)
		brl_wake_all(s, &k, wake);
	return brl_store(s, txn, fid, j, k);
}

static int
brl_keep_not_open(struct shm_brlock_rec *l, void *arg)
{
	return l->owner.persistent_id != *(const uint64_t *)arg;
}

static int
brl_keepw_not_open(struct shm_brlock_owner *w, void *arg)
{
	return w->persistent_id != *(const uint64_t *)arg;
}

int
shm_brlock_remove_open_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_pids *wake)
{
	return shm_brlock_edit_txn(s, txn, fid, brl_keep_not_open,
	    brl_keepw_not_open, &persistent_id, NULL, wake);
}

struct brl_repid {
	uint64_t	persistent_id;
	pid_t		pid;
};

static int
brl_keep_repid(struct shm_brlock_rec *l, void *arg)
{
	const struct brl_repid *r = arg;

	if (l->owner.persistent_id == r->persistent_id)
		l->owner.pid = r->pid;
	return 1;
}

/* A durable open changed hands (disconnect: pid 0; reclaim: new worker). */
int
shm_brlock_repid_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    uint64_t persistent_id, pid_t pid)
{
	struct brl_repid r = { persistent_id, pid };

	return shm_brlock_edit_txn(s, txn, fid, brl_keep_repid, NULL, &r, NULL, NULL);
}

static int
shm_brlock_remove_open_once(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_pids *wake)
{
	MDB_txn *txn;
	int rc;

	if (wake != NULL)
		memset(wake, 0, sizeof(*wake));
	if ((rc = shm_wbegin(s, shm_env_fid(s, fid), &txn)) != 0)
		return rc;
	return shm_wend(s, txn,
	    shm_brlock_remove_open_txn(s, txn, fid, persistent_id, wake));
}

int
shm_brlock_remove_open(struct shm *s, const struct shm_file_id *fid,
    uint64_t persistent_id, struct shm_pids *wake)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_brlock_remove_open_once(s, fid, persistent_id, wake));
	return rc;
}

struct brlock_walk {
	shm_brlock_fn		 fn;
	void			*arg;
	struct shm_brlock_rec	 l;
};

static int
brlock_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct brlock_walk *w = arg;
	struct shm_file_id fid;
	struct cur c;
	unsigned nl, i;

	if (k->mv_size != SHM_FID_KEY_LEN)
		return 0;
	shm_fid_from_key(&fid, k->mv_data);
	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return 0;
	nl = cur_le16(&c);
	(void)cur_le16(&c);
	for (i = 0; i < nl; i++) {
		brl_read_lock(&c, &w->l);
		if (c.err)
			break;
		if (w->fn(&fid, &w->l, w->arg) != 0)
			return 1;
	}
	return 0;
}

int
shm_foreach_brlock(struct shm *s, shm_brlock_fn fn, void *arg)
{
	struct brlock_walk w = { .fn = fn, .arg = arg };

	return shm_rec_walk_data(s, s->db_brlocks, brlock_visit, &w);
}
