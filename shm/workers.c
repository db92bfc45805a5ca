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
worker_decode(const MDB_val *k, const MDB_val *v, void *out)
{
	struct shm_worker_rec *r = out;
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
shm_worker_decode(const void *key, size_t klen, const void *val,
    size_t vlen, struct shm_worker_rec *r)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };

	return worker_decode(&k, &v, r);
}

int
shm_worker_put(struct shm *s, const struct shm_worker_rec *r)
{
	uint8_t kb[WORKER_KEY_LEN], buf[WORKER_ENC_MAX];
	struct wcur w;

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
	return shm_rec_put(s, s->db_workers, kb, sizeof(kb), buf, wcur_off(&w));
}

int
shm_worker_get(struct shm *s, pid_t pid, struct shm_worker_rec *out)
{
	uint8_t kb[WORKER_KEY_LEN];

	worker_key(kb, pid);
	return shm_rec_get(s, s->db_workers, kb, sizeof(kb), worker_decode, out);
}

int
shm_worker_del(struct shm *s, pid_t pid)
{
	uint8_t kb[WORKER_KEY_LEN];

	worker_key(kb, pid);
	return shm_rec_del(s, s->db_workers, kb, sizeof(kb));
}

struct worker_walk {
	shm_worker_fn		 fn;
	void			*arg;
	struct shm_worker_rec	 r;
};

static int
worker_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct worker_walk *w = arg;

	if (worker_decode(k, v, &w->r) != 0)
		return 0;
	return w->fn(&w->r, w->arg) != 0;
}

int
shm_foreach_worker(struct shm *s, shm_worker_fn fn, void *arg)
{
	struct worker_walk w = { .fn = fn, .arg = arg };

	return shm_rec_walk(s, shm_env_main(s), s->db_workers, worker_visit, &w);
}
