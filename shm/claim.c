/*
 * Lease-key claims: MS-SMB2 3.3.5.9.8, "one lease key caches one file",
 * across the data envs.  A lease record lives in its file's env, so two
 * files of two envs opened with one new key would each find no record of
 * it in their own env.  The key's claim (the file it caches) lives in a
 * third place every opener of that key agrees on: the data env of
 * hash(client GUID, lease key), in its leases database under the key plus
 * one tag byte (33 bytes: never a lease record's key).
 *
 * The rule that makes it exact: a lease record is only ever created
 * holding the claim env's writer lock.  When the claim env is the file's,
 * that is the CREATE's own transaction; otherwise the CREATE holds both
 * locks (taken in env index order, so two openers never wait on each
 * other) and commits the file's env first.  So whoever holds the claim
 * env's lock sees every record of that key that will ever be created
 * while it holds it, and a claim naming another file is checked there:
 * a read of that file's env says whether its lease still lives (a
 * deletion needs no claim lock; it only makes a claim stale, and a stale
 * claim is taken over).  The last open of a lease drops the claim: in the
 * same transaction when the envs coincide, else later, in a transaction
 * of the claim env for a batch of them (shm_claim_drain: after a commit
 * once 64 wait, at the end of a purge or an expiry, at the worker's tick
 * and at detach), which checks again that the file's env has no record
 * (a new open of the same file may have made one meanwhile, under the
 * claim lock).  A claim waiting to be dropped refuses nobody.
 *
 * What it costs: with N data envs, a CREATE granting a new lease in
 * another env than its claim's ((N-1)/N of them) takes a second writer
 * lock for the length of its transaction, and the close that ends the
 * lease a share of a batched transaction; opens of a key that already
 * caches the file, and every unleased open, pay nothing more than one
 * read before the transaction (skipped when the key's hint bucket is
 * zero).
 * t/bench/README.md, "The lease-key claim".
 *
 * A process that dies between the two commits of a grant leaves a lease
 * without its claim (the next claim of the key is then not refused); one
 * that dies with claims waiting to be dropped leaves them stale: they
 * refuse nobody, and each goes when its key is claimed again.
 */
#include <errno.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

#define CLAIM_KEY_LEN	(SHM_LEASE_KEY_LEN + 1)
#define CLAIM_TAG	'C'
#define CLAIM_VAL_LEN	17

static void
claim_key(uint8_t *k, const uint8_t *guid, const uint8_t *key)
{
	memcpy(k, guid, SHM_GUID_LEN);
	memcpy(k + SHM_GUID_LEN, key, SHM_GUID_LEN);
	k[SHM_LEASE_KEY_LEN] = CLAIM_TAG;
}

int
shm_claim_decode(const void *val, size_t len, struct shm_file_id *fid)
{
	struct cur c;

	cur_init(&c, val, len);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	fid->dev = cur_le64(&c);
	fid->ino = cur_le64(&c);
	return c.err || cur_left(&c) != 0 ? -EPROTO : 0;
}

static int
fid_eq(const struct shm_file_id *a, const struct shm_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/*
 * Does the key's lease still cache file x?  ctxn is the claim env's
 * transaction (we hold its lock), wtxn s->w's.  1, 0 or -errno.
 */
static int
claim_live(struct shm *s, MDB_txn *wtxn, MDB_txn *ctxn, struct shm_env *c,
    const uint8_t *guid, const uint8_t *key, const struct shm_file_id *x)
{
	struct shm_env *ex = shm_env_fid(s, x);
	struct shm_lease_rec l;
	uint8_t kb[SHM_LEASE_KEY_LEN];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *t;
	int rc, live;

	memcpy(kb, guid, SHM_GUID_LEN);
	memcpy(kb + SHM_GUID_LEN, key, SHM_GUID_LEN);
	if (ex == s->w)
		t = wtxn;
	else if (ex == c)
		t = ctxn;
	else if ((rc = shm_rbegin(s, ex, &t)) != 0)
		return rc;
	rc = mdb_get(t, s->db_leases, &k, &v);
	live = rc == 0 && shm_lease_decode(kb, sizeof(kb), v.mv_data, v.mv_size,
	    &l) == 0 && fid_eq(&l.fid, x);
	if (t != wtxn && t != ctxn)
		shm_rend(s, t);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	return live;
}

struct shm_env *
shm_claim_plan(struct shm *s, const struct shm_file_id *fid,
    const uint8_t *guid, const uint8_t *key)
{
	struct shm_env *c = shm_env_claim(s, guid, key);
	struct shm_lease_rec l;

	if (s->nparts == 1 || c == shm_env_fid(s, fid))
		return NULL;
	/* The lease already caches this file: no new record, no claim. */
	if (!shm_hint_zero_bucket(s, SHM_HINT_LEASES, shm_lease_bucket(guid, key)) &&
	    shm_lease_get_fid(s, fid, guid, key, &l) == 0)
		return NULL;
	return c;
}

int
shm_claim_begin(struct shm *s, struct shm_env *c, const struct shm_env *w,
    int first)
{
	int rc;

	if (c == NULL || (first ? c->idx > w->idx : c->idx < w->idx))
		return 0;
	if ((rc = shm_wbegin2(s, c, &s->claim_txn, &s->claim_locked_ns)) != 0) {
		s->claim_txn = NULL;
		return rc;
	}
	s->claim_env = c;
	return 0;
}

int
shm_claim_end(struct shm *s, int commit)
{
	int rc;

	if (s->claim_txn == NULL)
		return 0;
	rc = shm_wend2(s, s->claim_env, s->claim_txn, s->claim_locked_ns, commit);
	if (rc != 0)
		log_warnx("state: a lease-key claim was not committed (%d); that "
		    "key is unguarded until its lease ends", rc);
	s->claim_txn = NULL;
	s->claim_env = NULL;
	return rc;
}

int
shm_claim_take(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const uint8_t *guid, const uint8_t *key)
{
	struct shm_env *c;
	struct shm_file_id x;
	uint8_t kb[CLAIM_KEY_LEN], vb[CLAIM_VAL_LEN];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *ct;
	struct wcur w;
	int rc;

	if (s->nparts == 1)
		return 0;
	c = shm_env_claim(s, guid, key);
	if (c == s->w)
		ct = txn;
	else if (s->claim_txn != NULL && s->claim_env == c)
		ct = s->claim_txn;
	else
		return -EDEADLK;
	claim_key(kb, guid, key);
	rc = mdb_get(ct, s->db_leases, &k, &v);
	if (rc == 0 && shm_claim_decode(v.mv_data, v.mv_size, &x) == 0) {
		if (fid_eq(&x, fid))
			return 0;
		if ((rc = claim_live(s, txn, ct, c, guid, key, &x)) != 0)
			return rc < 0 ? rc : -EINVAL;
		/* stale: the file it named has no lease of that key now */
	} else if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	wcur_init(&w, vb, sizeof(vb));
	wcur_u8(&w, SHM_REC_V1);
	wcur_le64(&w, fid->dev);
	wcur_le64(&w, fid->ino);
	v.mv_size = wcur_off(&w);
	v.mv_data = vb;
	return shm_err(mdb_put(ct, s->db_leases, &k, &v, 0));
}

/* Deletes the claim in txn (of its env) if it names fid. */
static int
claim_del(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const uint8_t *guid, const uint8_t *key, int check)
{
	struct shm_file_id x;
	uint8_t kb[CLAIM_KEY_LEN];
	MDB_val k = { sizeof(kb), kb }, v;
	int rc;

	claim_key(kb, guid, key);
	rc = mdb_get(txn, s->db_leases, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return shm_err(rc);
	/* another file's (ours was stale and taken over), or reclaimed */
	if (shm_claim_decode(v.mv_data, v.mv_size, &x) == 0 && !fid_eq(&x, fid))
		return 0;
	if (check && (rc = claim_live(s, txn, txn, s->w, guid, key, fid)) != 0)
		return rc < 0 ? rc : 0;
	rc = mdb_del(txn, s->db_leases, &k, NULL);
	return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

void
shm_claim_drop(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    const uint8_t *guid, const uint8_t *key)
{
	struct shm_unclaim *u;

	if (s->nparts == 1)
		return;
	if (shm_env_claim(s, guid, key) == s->w) {
		/* best effort: a claim left behind is stale, refusing nobody */
		(void)claim_del(s, txn, fid, guid, key, 0);
		return;
	}
	if (s->nunclaim == SHM_UNCLAIM_MAX)
		return;		/* left stale: refuses nobody, costs room */
	u = &s->unclaim[s->nunclaim++];
	memcpy(u->client_guid, guid, SHM_GUID_LEN);
	memcpy(u->lease_key, key, SHM_GUID_LEN);
	u->fid = *fid;
}

/* The waiting claims of env c, in one transaction of c. */
static int
claim_drop_env(struct shm *s, struct shm_env *c)
{
	MDB_txn *txn;
	unsigned i;
	int rc;

	if ((rc = shm_wbegin(s, c, &txn)) != 0)
		return rc;
	for (i = 0; rc == 0 && i < s->ndone; i++) {
		const struct shm_unclaim *u = &s->unclaim[i];

		if (shm_env_claim(s, u->client_guid, u->lease_key) == c)
			rc = claim_del(s, txn, &u->fid, u->client_guid,
			    u->lease_key, 1);
	}
	return shm_wend(s, txn, rc);
}

void
shm_claim_drain(struct shm *s)
{
	struct shm_env *c;
	unsigned i, j;
	int rc;

	/*
	 * A claim left a while names a file without its lease: it refuses
	 * nobody (shm_claim_take checks it), so batching costs only room.
	 * None of these transactions releases a lease.
	 */
	s->claim_draining = 1;
	while (s->ndone > 0) {
		c = shm_env_claim(s, s->unclaim[0].client_guid,
		    s->unclaim[0].lease_key);
		SHM_RETRY_FULL(s, rc, claim_drop_env(s, c));
		if (rc != 0)
			log_debug(1, "state: lease-key claims left stale (%d)", rc);
		for (i = j = 0; i < s->ndone; i++)
			if (shm_env_claim(s, s->unclaim[i].client_guid,
			    s->unclaim[i].lease_key) != c)
				s->unclaim[j++] = s->unclaim[i];
		s->ndone = s->nunclaim = j;
	}
	s->claim_draining = 0;
}

void
shm_claim_flush(struct shm *s)
{
	if (s != NULL && s->ndone > 0 && !s->claim_draining && s->claim_txn == NULL)
		shm_claim_drain(s);
}
