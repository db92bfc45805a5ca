/*
 * The plain record operations shared by the databases whose records stand
 * alone (sessions, workers, notify: the main env's) and the cursor walk of
 * every listing: one key, one value, one transaction each.
 */
#include <errno.h>

#include "shm/shm_priv.h"

int
shm_rec_put(struct shm *s, MDB_dbi db, const void *key, size_t klen,
    const void *val, size_t vlen)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };
	MDB_txn *txn;
	int rc;

	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	return shm_wend(s, txn, shm_err(mdb_put(txn, db, &k, &v, 0)));
}

int
shm_rec_get(struct shm *s, MDB_dbi db, const void *key, size_t klen,
    shm_rec_decode_fn decode, void *out)
{
	MDB_val k = { klen, (void *)key }, v;
	MDB_txn *txn;
	int rc;

	if ((rc = shm_rbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_get(txn, db, &k, &v))) == 0)
		rc = decode(&k, &v, out);
	shm_rend(s, txn);
	return rc;
}

static int
shm_rec_del_once(struct shm *s, MDB_dbi db, const void *key, size_t klen)
{
	MDB_val k = { klen, (void *)key };
	MDB_txn *txn;
	int rc;

	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	return shm_wend(s, txn, shm_err(mdb_del(txn, db, &k, NULL)));
}

int
shm_rec_del(struct shm *s, MDB_dbi db, const void *key, size_t klen)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_rec_del_once(s, db, key, klen));
	return rc;
}

/* 1 when a visit stopped the walk, else 0 or -errno. */
static int
rec_walk(struct shm *s, struct shm_env *e, MDB_dbi db, shm_rec_visit_fn visit,
    void *arg)
{
	MDB_cursor *cu;
	MDB_val k, v;
	MDB_txn *txn;
	int rc, op = MDB_FIRST;

	if ((rc = shm_rbegin(s, e, &txn)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(txn, db, &cu)) != 0) {
		shm_rend(s, txn);
		return shm_err(rc);
	}
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (visit(&k, &v, arg) != 0)
			break;
	}
	mdb_cursor_close(cu);
	shm_rend(s, txn);
	return rc == 0 ? 1 : rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

int
shm_rec_walk(struct shm *s, struct shm_env *e, MDB_dbi db,
    shm_rec_visit_fn visit, void *arg)
{
	int rc = rec_walk(s, e, db, visit, arg);

	return rc < 0 ? rc : 0;
}

/*
 * Each data env's records in turn: a listing is consistent within an env,
 * not across envs (the files are independent).
 */
int
shm_rec_walk_data(struct shm *s, MDB_dbi db, shm_rec_visit_fn visit, void *arg)
{
	int rc = 0;

	for (unsigned i = shm_data_first(s); rc == 0 && i < s->nenv; i++)
		rc = rec_walk(s, &s->e[i], db, visit, arg);
	return rc < 0 ? rc : 0;
}
