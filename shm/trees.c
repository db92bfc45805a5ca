/*
 * Tree connects counted per share: every disk share's, for `max
 * connections` (Samba's key: the tree connects to a share across the whole
 * server) and srvsvc's NetrConnectionEnum (worker/state_tree.c).
 * A record per counted tree in the main env's "trees" database:
 *
 *   key   share name (ASCII letters folded to lower case, as share names
 *         are matched) | 0x00 | be32 worker pid | be64 tree key
 *   value u8 version, le32 pid, le64 tree key, le64 since (realtime s)
 *
 * and beside them the share's count of those records:
 *
 *   key   share name (folded) | 0x00
 *   value u8 version, le32 count
 *
 * The claim reads the count and writes the record and the count in one
 * write transaction: two workers racing for the last slot cannot both get
 * it.  No cursor on a tree connect's or disconnect's path (a cursor of a
 * write transaction is a malloc in LMDB): two gets and two puts, or a
 * delete, a get and a put.  Only trees of shares with the key have a
 * record.  A dead worker's records go in the purge (shm/purge.c), as its
 * sessions do, each taking its share's count down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shm/shm_priv.h"

#define TREE_KEY_MAX	(SHM_NAME_MAX + 12)
#define TREE_VAL_LEN	(1 + 4 + 8 + 8)

/* The share's prefix (name | 0x00): its length, or 0 when it cannot be one. */
static size_t
tree_prefix(const char *share, uint8_t *kb)
{
	size_t n = strlen(share), i;

	if (n == 0 || n >= SHM_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		uint8_t ch = (uint8_t)share[i];

		kb[i] = ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch + 32) : ch;
	}
	kb[n] = 0;
	return n + 1;
}

static size_t
tree_key(const char *share, pid_t pid, uint64_t key, uint8_t *kb)
{
	size_t n = tree_prefix(share, kb);

	if (n == 0)
		return 0;
	kb[n] = (uint8_t)((uint32_t)pid >> 24);
	kb[n + 1] = (uint8_t)((uint32_t)pid >> 16);
	kb[n + 2] = (uint8_t)((uint32_t)pid >> 8);
	kb[n + 3] = (uint8_t)pid;
	shm_be64_put(kb + n + 4, key);
	return n + 12;
}

int
shm_tree_decode(const void *key, size_t klen, const void *val, size_t vlen,
    struct shm_tree_rec *r)
{
	const uint8_t *k = key;
	const uint8_t *nul = klen > 12 ? memchr(k, 0, klen - 12) : NULL;
	struct cur c;
	size_t n;

	/* the name ends at the first NUL, exactly 12 bytes before the end */
	if (nul == NULL || (n = (size_t)(nul - k)) == 0 || n + 13 != klen ||
	    n >= sizeof(r->share))
		return -EPROTO;
	memcpy(r->share, k, n);
	r->share[n] = '\0';
	r->pid = (pid_t)((uint32_t)k[n + 1] << 24 | (uint32_t)k[n + 2] << 16 |
	    (uint32_t)k[n + 3] << 8 | k[n + 4]);
	r->tree_key = shm_be64_get(k + n + 5);
	cur_init(&c, val, vlen);
	if (cur_u8(&c) != SHM_REC_V1 || (pid_t)cur_le32(&c) != r->pid ||
	    cur_le64(&c) != r->tree_key)
		return -EPROTO;
	r->since = cur_le64(&c);
	if (c.err || cur_left(&c) != 0 || r->pid <= 0 || r->tree_key == 0)
		return -EPROTO;
	return 0;
}

int
shm_tree_counter_decode(const void *val, size_t vlen, uint32_t *n)
{
	struct cur c;

	cur_init(&c, val, vlen);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	*n = cur_le32(&c);
	return c.err || cur_left(&c) != 0 ? -EPROTO : 0;
}

/*
 * The count under prefix kb[0..n): 0 when absent.  One that does not
 * decode (only a worker writing garbage makes one) counts as none: the
 * records come back into the count as they are claimed and released.
 */
static int
tree_counter_get(struct shm *s, MDB_txn *txn, const uint8_t *kb, size_t n,
    uint32_t *count)
{
	MDB_val k = { n, (void *)kb }, v;
	int rc;

	*count = 0;
	rc = mdb_get(txn, s->db_trees, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return shm_err(rc);
	if (shm_tree_counter_decode(v.mv_data, v.mv_size, count) != 0)
		*count = 0;
	return 0;
}

static int
tree_counter_put(struct shm *s, MDB_txn *txn, const uint8_t *kb, size_t n,
    uint32_t count)
{
	MDB_val k = { n, (void *)kb }, v;
	uint8_t vb[5];
	int rc;

	if (count == 0) {
		rc = mdb_del(txn, s->db_trees, &k, NULL);
		return rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	}
	vb[0] = SHM_REC_V1;
	vb[1] = (uint8_t)count;
	vb[2] = (uint8_t)(count >> 8);
	vb[3] = (uint8_t)(count >> 16);
	vb[4] = (uint8_t)(count >> 24);
	v.mv_size = sizeof(vb);
	v.mv_data = vb;
	return shm_err(mdb_put(txn, s->db_trees, &k, &v, 0));
}

static int
shm_tree_claim_once(struct shm *s, const char *share, pid_t pid,
    uint64_t key, uint32_t max, uint32_t *count)
{
	uint8_t kb[TREE_KEY_MAX], vb[TREE_VAL_LEN];
	MDB_val k, v = { sizeof(vb), vb };
	struct wcur w;
	MDB_txn *txn;
	size_t n;
	int rc;

	if ((n = tree_key(share, pid, key, kb)) == 0)
		return -EINVAL;
	wcur_init(&w, vb, sizeof(vb));
	wcur_u8(&w, SHM_REC_V1);
	wcur_le32(&w, (uint32_t)pid);
	wcur_le64(&w, key);
	wcur_le64(&w, (uint64_t)time(NULL));
	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	if ((rc = tree_counter_get(s, txn, kb, n - 12, count)) != 0)
		goto out;
	if (*count >= max) {
		rc = -EUSERS;
		goto out;
	}
	k.mv_size = n;
	k.mv_data = kb;
	rc = mdb_put(txn, s->db_trees, &k, &v, MDB_NOOVERWRITE);
	if (rc == MDB_KEYEXIST) {
		rc = -EEXIST;
		goto out;
	}
	if ((rc = shm_err(rc)) != 0 ||
	    (rc = tree_counter_put(s, txn, kb, n - 12, *count + 1)) != 0)
		goto out;
	(*count)++;
out:
	return shm_wend(s, txn, rc);
}

int
shm_tree_claim(struct shm *s, const char *share, pid_t pid, uint64_t key,
    uint32_t max, uint32_t *count)
{
	uint32_t local;
	int rc;

	if (count == NULL)
		count = &local;
	*count = 0;
	if (pid <= 0 || key == 0 || max == 0)
		return -EINVAL;
	SHM_RETRY_FULL(s, rc, shm_tree_claim_once(s, share, pid, key, max,
	    count));
	return rc;
}

static int
shm_tree_release_once(struct shm *s, const uint8_t *kb, size_t n)
{
	MDB_val k = { n, (void *)kb };
	MDB_txn *txn;
	uint32_t count;
	int rc;

	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_del(txn, s->db_trees, &k, NULL))) != 0 ||
	    (rc = tree_counter_get(s, txn, kb, n - 12, &count)) != 0)
		goto out;
	rc = tree_counter_put(s, txn, kb, n - 12, count > 0 ? count - 1 : 0);
out:
	return shm_wend(s, txn, rc);
}

int
shm_tree_release(struct shm *s, const char *share, pid_t pid, uint64_t key)
{
	uint8_t kb[TREE_KEY_MAX];
	size_t n;
	int rc;

	if ((n = tree_key(share, pid, key, kb)) == 0)
		return -EINVAL;
	SHM_RETRY_FULL(s, rc, shm_tree_release_once(s, kb, n));
	return rc;
}

int
shm_tree_count(struct shm *s, const char *share, uint32_t *count)
{
	uint8_t kb[TREE_KEY_MAX];
	MDB_txn *txn;
	size_t n;
	int rc;

	*count = 0;
	if ((n = tree_prefix(share, kb)) == 0)
		return -EINVAL;
	if ((rc = shm_rbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	rc = tree_counter_get(s, txn, kb, n, count);
	shm_rend(s, txn);
	return rc;
}

struct tree_walk {
	shm_tree_fn		 fn;
	void			*arg;
	struct shm_tree_rec	 r;
};

static int
tree_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct tree_walk *w = arg;

	if (shm_tree_decode(k->mv_data, k->mv_size, v->mv_data, v->mv_size,
	    &w->r) != 0)
		return 0;
	return w->fn(&w->r, w->arg) != 0;
}

int
shm_foreach_tree(struct shm *s, shm_tree_fn fn, void *arg)
{
	struct tree_walk w = { .fn = fn, .arg = arg };

	return shm_rec_walk(s, shm_env_main(s), s->db_trees, tree_visit, &w);
}

/*
 * The purge's part (shm/purge.c, in its main-env transaction): every
 * record of pid, each taking its share's count down.  The pid is read
 * from the key, so a record whose value does not decode goes too when its
 * key names pid.  The keys are collected first (the loop edits the db);
 * the purge is no request: it may allocate.
 */
int
shm_tree_purge_txn(struct shm *s, MDB_txn *txn, pid_t pid, unsigned *n)
{
	struct { uint8_t k[TREE_KEY_MAX]; size_t len; } *v = NULL;
	size_t nv = 0, cap = 0, i;
	MDB_cursor *cu;
	MDB_val k, val;
	uint32_t count;
	int rc, op = MDB_FIRST, err = 0;

	if ((rc = mdb_cursor_open(txn, s->db_trees, &cu)) != 0)
		return shm_err(rc);
	while ((rc = mdb_cursor_get(cu, &k, &val, op)) == 0) {
		const uint8_t *kb = k.mv_data;

		op = MDB_NEXT;
		/* a tree's key: name | 0 | pid | key (a count's ends at its 0) */
		if (k.mv_size < 14 || k.mv_size > TREE_KEY_MAX ||
		    kb[k.mv_size - 13] != 0 ||
		    (pid_t)((uint32_t)kb[k.mv_size - 12] << 24 |
		    (uint32_t)kb[k.mv_size - 11] << 16 |
		    (uint32_t)kb[k.mv_size - 10] << 8 | kb[k.mv_size - 9]) != pid)
			continue;
		if (nv == cap) {
			size_t nc = cap ? cap * 2 : 16;
			void *p = reallocarray(v, nc, sizeof(*v));

			if (p == NULL) {
				err = -ENOMEM;
				break;
			}
			v = p;
			cap = nc;
		}
		memcpy(v[nv].k, kb, k.mv_size);
		v[nv++].len = k.mv_size;
	}
	mdb_cursor_close(cu);
	rc = err != 0 ? err : rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	for (i = 0; rc == 0 && i < nv; i++) {
		k.mv_size = v[i].len;
		k.mv_data = v[i].k;
		if ((rc = shm_err(mdb_del(txn, s->db_trees, &k, NULL))) != 0 ||
		    (rc = tree_counter_get(s, txn, v[i].k, v[i].len - 12,
		    &count)) != 0 ||
		    (rc = tree_counter_put(s, txn, v[i].k, v[i].len - 12,
		    count > 0 ? count - 1 : 0)) != 0)
			break;
		(*n)++;
	}
	free(v);
	return rc;
}
