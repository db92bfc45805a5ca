/*
 * Tree connects counted per share, for `max connections` (Samba's key: the
 * tree connects to a share across the whole server; worker/state_tree.c).
 * A record per counted tree in the main env's "trees" database:
 *
 *   key   share name (ASCII letters folded to lower case, as share names
 *         are matched) | 0x00 | be32 worker pid | be64 tree key
 *   value u8 version, le32 pid, le64 tree key, le64 since (realtime s)
 *
 * Keys sort by share, so counting a share's trees is a range walk of
 * exactly its records, and the claim counts and inserts in one write
 * transaction: two workers racing for the last slot cannot both get it.
 * Only trees of shares with the key have a record.  A dead worker's
 * records go in the purge (shm/purge.c), as its sessions do.
 */
#include <errno.h>
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

/* Records under prefix kb[0..n), n of them at most `stop` (counting stops). */
static int
tree_count_txn(struct shm *s, MDB_txn *txn, const uint8_t *kb, size_t n,
    uint32_t stop, uint32_t *count)
{
	MDB_cursor *cu;
	MDB_val k = { n, (void *)kb }, v;
	int rc, op = MDB_SET_RANGE;

	*count = 0;
	if ((rc = mdb_cursor_open(txn, s->db_trees, &cu)) != 0)
		return shm_err(rc);
	while ((stop == 0 || *count < stop) &&
	    (rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size < n || memcmp(k.mv_data, kb, n) != 0)
			break;
		(*count)++;
	}
	mdb_cursor_close(cu);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
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
	/* at most max are walked: a full share costs max steps, no more */
	if ((rc = tree_count_txn(s, txn, kb, n - 12, max, count)) != 0)
		goto out;
	if (*count >= max) {
		rc = -EUSERS;
		goto out;
	}
	k.mv_size = n;
	k.mv_data = kb;
	rc = shm_err(mdb_put(txn, s->db_trees, &k, &v, MDB_NOOVERWRITE));
	if (rc == 0)
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

int
shm_tree_release(struct shm *s, const char *share, pid_t pid, uint64_t key)
{
	uint8_t kb[TREE_KEY_MAX];
	size_t n;

	if ((n = tree_key(share, pid, key, kb)) == 0)
		return -EINVAL;
	return shm_rec_del(s, s->db_trees, kb, n);
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
	rc = tree_count_txn(s, txn, kb, n, 0, count);
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
 * record of pid.  The pid is read from the key, so a record whose value
 * does not decode goes too when its key names pid.
 */
int
shm_tree_purge_txn(struct shm *s, MDB_txn *txn, pid_t pid, unsigned *n)
{
	MDB_cursor *cu;
	MDB_val k, v;
	int rc, op = MDB_FIRST;

	if ((rc = mdb_cursor_open(txn, s->db_trees, &cu)) != 0)
		return shm_err(rc);
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		const uint8_t *kb = k.mv_data;
		pid_t kp;

		op = MDB_NEXT;
		if (k.mv_size < 13)
			continue;
		kp = (pid_t)((uint32_t)kb[k.mv_size - 12] << 24 |
		    (uint32_t)kb[k.mv_size - 11] << 16 |
		    (uint32_t)kb[k.mv_size - 10] << 8 | kb[k.mv_size - 9]);
		if (kp != pid)
			continue;
		if ((rc = mdb_cursor_del(cu, 0)) != 0)
			break;
		(*n)++;
	}
	mdb_cursor_close(cu);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}
