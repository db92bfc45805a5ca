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
session_decode(const MDB_val *k, const MDB_val *v, void *out)
{
	struct shm_session_rec *r = out;
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
shm_session_decode(const void *key, size_t klen, const void *val,
    size_t vlen, struct shm_session_rec *r)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };

	return session_decode(&k, &v, r);
}

int
shm_session_put(struct shm *s, const struct shm_session_rec *r)
{
	uint8_t kb[8], buf[SESSION_ENC_MAX];
	MDB_val k = { sizeof(kb), kb }, v;
	struct shm_session_rec old;
	MDB_txn *txn;
	size_t n;
	int rc;

	if (r->session_id == 0)
		return -EINVAL;
	shm_be64_put(kb, r->session_id);
	if ((n = session_encode(buf, sizeof(buf), r)) == 0)
		return -EINVAL;
	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	/*
	 * Checked at insert: an id is one session's across the server.  The
	 * process that holds it may rewrite its record (re-authentication);
	 * anyone else gets -EEXIST, so that the master's routing by id
	 * (channel binding, kill-session) never reaches the wrong worker.
	 */
	rc = mdb_get(txn, s->db_sessions, &k, &v);
	if (rc == 0 && (session_decode(&k, &v, &old) != 0 ||
	    old.pid != r->pid)) {
		rc = -EEXIST;
		goto out;
	}
	if (rc != 0 && rc != MDB_NOTFOUND) {
		rc = shm_err(rc);
		goto out;
	}
	v.mv_size = n;
	v.mv_data = buf;
	rc = shm_err(mdb_put(txn, s->db_sessions, &k, &v, 0));
out:
	return shm_wend(s, txn, rc);
}

int
shm_session_get(struct shm *s, uint64_t id, struct shm_session_rec *out)
{
	uint8_t kb[8];

	shm_be64_put(kb, id);
	return shm_rec_get(s, s->db_sessions, kb, sizeof(kb), session_decode, out);
}

int
shm_session_del(struct shm *s, uint64_t id)
{
	uint8_t kb[8];

	shm_be64_put(kb, id);
	return shm_rec_del(s, s->db_sessions, kb, sizeof(kb));
}

struct session_walk {
	shm_session_fn		 fn;
	void			*arg;
	struct shm_session_rec	 r;
};

static int
session_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct session_walk *w = arg;

	if (session_decode(k, v, &w->r) != 0)
		return 0;
	return w->fn(&w->r, w->arg) != 0;
}

int
shm_foreach_session(struct shm *s, shm_session_fn fn, void *arg)
{
	struct session_walk w = { .fn = fn, .arg = arg };

	return shm_rec_walk(s, shm_env_main(s), s->db_sessions, session_visit, &w);
}
