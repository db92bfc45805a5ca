/*
 * Sessions, for `usmbctl status` and for the master's purge of a dead
 * worker: session id -> who, from where, how.
 */
#include <errno.h>

#include "shm/shm_priv.h"

#define SESSION_ENC_MAX	(64 + SHM_NAME_MAX + SHM_ADDR_MAX)

static size_t
session_encode(uint8_t *buf, size_t size, const struct shm_session_rec *r)
{
	struct wcur w;

	wcur_init(&w, buf, size);
	wcur_u8(&w, SHM_REC_V1);
	wcur_le32(&w, (uint32_t)r->pid);
	wcur_le32(&w, (uint32_t)r->uid);
	shm_wstr(&w, r->user);
	shm_wstr(&w, r->client_addr);
	wcur_le16(&w, r->dialect);
	wcur_u8(&w, r->signing);
	wcur_u8(&w, r->encryption);
	wcur_le64(&w, r->since);
	return w.err ? 0 : wcur_off(&w);
}

static int
session_decode(const MDB_val *k, const MDB_val *v, struct shm_session_rec *r)
{
	struct cur c;

	if (k->mv_size != 8)
		return -EPROTO;
	r->session_id = shm_be64_get(k->mv_data);
	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != SHM_REC_V1)
		return -EPROTO;
	r->pid = (pid_t)cur_le32(&c);
	r->uid = (uid_t)cur_le32(&c);
	shm_rstr(&c, r->user, sizeof(r->user));
	shm_rstr(&c, r->client_addr, sizeof(r->client_addr));
	r->dialect = cur_le16(&c);
	r->signing = cur_u8(&c);
	r->encryption = cur_u8(&c);
	r->since = cur_le64(&c);
	return c.err ? -EPROTO : 0;
}

int
shm_session_put(struct shm *s, const struct shm_session_rec *r)
{
	uint8_t kb[8], buf[SESSION_ENC_MAX];
	MDB_val k = { sizeof(kb), kb }, v = { 0, buf };
	MDB_txn *txn;
	int rc;

	if (r->session_id == 0)
		return -EINVAL;
	shm_be64_put(kb, r->session_id);
	if ((v.mv_size = session_encode(buf, sizeof(buf), r)) == 0)
		return -EINVAL;
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_put(txn, s->db_sessions, &k, &v, 0))) != 0) {
		shm_wabort(s, txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

int
shm_session_get(struct shm *s, uint64_t id, struct shm_session_rec *out)
{
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *txn;
	int rc;

	shm_be64_put(kb, id);
	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_get(txn, s->db_sessions, &k, &v))) == 0)
		rc = session_decode(&k, &v, out);
	shm_rend(s, txn);
	return rc;
}

static int
shm_session_del_once(struct shm *s, uint64_t id)
{
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb };
	MDB_txn *txn;
	int rc;

	shm_be64_put(kb, id);
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	if ((rc = shm_err(mdb_del(txn, s->db_sessions, &k, NULL))) != 0) {
		shm_wabort(s, txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

int
shm_session_del(struct shm *s, uint64_t id)
{
	int rc;

	SHM_RETRY_FULL(s, rc, shm_session_del_once(s, id));
	return rc;
}

int
shm_foreach_session(struct shm *s, shm_session_fn fn, void *arg)
{
	struct shm_session_rec r;
	MDB_cursor *cu;
	MDB_val k, v;
	MDB_txn *txn;
	int rc, op = MDB_FIRST;

	if ((rc = shm_rbegin(s, &txn)) != 0)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->db_sessions, &cu)) != 0) {
		shm_rend(s, txn);
		return shm_err(rc);
	}
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (session_decode(&k, &v, &r) != 0)
			continue;
		if (fn(&r, arg) != 0)
			break;
	}
	mdb_cursor_close(cu);
	shm_rend(s, txn);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}
