/*
 * Worker records: pid -> role, user, connection count.  The master's child
 * table is the authority on who runs; this is what `usmbctl status` and the
 * workers themselves can see.
 */
#include <errno.h>

#include "shm/shm_priv.h"

#define WORKER_KEY_LEN	4
#define WORKER_ENC_MAX	(32 + SHM_NAME_MAX)

static void
worker_key(uint8_t *k, pid_t pid)
{
	uint32_t p = (uint32_t)pid;

	k[0] = (uint8_t)(p >> 24);
	k[1] = (uint8_t)(p >> 16);
	k[2] = (uint8_t)(p >> 8);
	k[3] = (uint8_t)p;
}

static int
worker_decode(const MDB_val *k, const MDB_val *v, struct shm_worker_rec *r)
{
	const uint8_t *kb = k->mv_data;
	struct cur c;

	/* Other key sizes hold module metadata (the id counter). */
	if (k->mv_size != WORKER_KEY_LEN)
		return -EPROTO;
	r->pid = (pid_t)((uint32_t)kb[0] << 24 | (uint32_t)kb[1] << 16 |
	    (uint32_t)kb[2] << 8 | kb[3]);
	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	r->role = cur_u8(&c);
	r->uid = (uid_t)cur_le32(&c);
	shm_rstr(&c, r->user, sizeof(r->user));
	r->nconn = cur_le32(&c);
	r->since = cur_le64(&c);
	return c.err ? -EPROTO : 0;
}

int
shm_worker_put(struct shm *s, const struct shm_worker_rec *r)
{
	uint8_t kb[WORKER_KEY_LEN], buf[WORKER_ENC_MAX];
	MDB_val k = { sizeof(kb), kb }, v = { 0, buf };
	struct wcur w;
	MDB_txn *txn;
	int rc;

	if (r->pid <= 0)
		return -EINVAL;
	worker_key(kb, r->pid);
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_u8(&w, r->role);
	wcur_le32(&w, (uint32_t)r->uid);
	shm_wstr(&w, r->user);
	wcur_le32(&w, r->nconn);
	wcur_le64(&w, r->since);
	if (w.err)
		return -EINVAL;
	v.mv_size = wcur_off(&w);
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_put(txn, s->db_workers, &k, &v, 0))) != 0) {
		shm_wabort(s, txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

int
shm_worker_get(struct shm *s, pid_t pid, struct shm_worker_rec *out)
{
	uint8_t kb[WORKER_KEY_LEN];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *txn;
	int rc;

	worker_key(kb, pid);
	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_get(txn, s->db_workers, &k, &v))) == 0)
		rc = worker_decode(&k, &v, out);
	shm_rend(s, txn);
	return rc;
}

static int
shm_worker_del_once(struct shm *s, pid_t pid)
{
	uint8_t kb[WORKER_KEY_LEN];
	MDB_val k = { sizeof(kb), kb };
	MDB_txn *txn;
	int rc;

	worker_key(kb, pid);
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_del(txn, s->db_workers, &k, NULL))) != 0) {
		shm_wabort(s, txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

int
shm_worker_del(struct shm *s, pid_t pid)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_worker_del_once(s, pid));
	return rc;
}

int
shm_foreach_worker(struct shm *s, shm_worker_fn fn, void *arg)
{
	struct shm_worker_rec r;
	MDB_cursor *cu;
	MDB_val k, v;
	MDB_txn *txn;
	int rc, op = MDB_FIRST;

	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->db_workers, &cu)) != 0) {
		shm_rend(s, txn);
		return shm_err(rc);
	}
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (worker_decode(&k, &v, &r) != 0)
			continue;
		if (fn(&r, arg) != 0)
			break;
	}
	mdb_cursor_close(cu);
	shm_rend(s, txn);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}
