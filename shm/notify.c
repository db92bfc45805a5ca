/*
 * Who watches a directory (CHANGE_NOTIFY): one record per watched
 * directory, fid -> the workers with an inotify watch on it and how many
 * each holds.  A worker that changes something inotify cannot express (a
 * named stream, an EA, a security descriptor) looks up the directory of
 * the file and sends NOTIFY messages to the workers listed.
 *
 * Value v1: u8 version, u32 n, n x (u32 pid, u32 count).
 *
 * The hint file counts the directories with a record, per bucket and in
 * all, with the over-count rule of the other counters (shm_priv.h): when
 * nobody watches anything, shm_notify_any() is one atomic load and the
 * caller need not even find the directory of the file.
 */

/*
 * The registry, in detail.
 *
 * - Notify watch registry (shm/notify.c).  The notify db maps a watched
 *   directory's file id to the workers with an inotify watch on it (pid,
 *   count).  A worker that makes a change inotify cannot express (named
 *   streams and EAs live in xattrs; a directory going delete pending)
 *   sends SHM_WMSG_NOTIFY to the listed workers.  The third state.hint
 *   counter (SHM_HINT_NOTIFY) counts watched directories per bucket, so
 *   with no watch anywhere the check is one atomic load.  state.hint
 *   counters only over-count (an increase before the commit, a decrease
 *   after it), so a zero is always true.  Watches of a dead worker are
 *   dropped by its purge.
 */
#include <errno.h>
#include <string.h>

#include "shm/shm_priv.h"

#define NOTIFY_REC_V1		1
#define NOTIFY_PIDS_MAX		SHM_PIDS_MAX
#define NOTIFY_VAL_MAX		(5 + NOTIFY_PIDS_MAX * 8)

struct notify_val {
	unsigned	n;
	pid_t		pid[NOTIFY_PIDS_MAX];
	uint32_t	count[NOTIFY_PIDS_MAX];
};

static int
notify_val_decode(const MDB_val *v, struct notify_val *out)
{
	struct cur c;
	unsigned i, n;

	cur_init(&c, v->mv_data, v->mv_size);
	if (cur_u8(&c) != NOTIFY_REC_V1)
		return -EBADMSG;
	n = cur_le32(&c);
	if (n > NOTIFY_PIDS_MAX)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		out->pid[i] = (pid_t)cur_le32(&c);
		out->count[i] = cur_le32(&c);
	}
	if (c.err)
		return -EBADMSG;
	out->n = n;
	return 0;
}

static size_t
notify_val_encode(const struct notify_val *nv, uint8_t *buf, size_t size)
{
	struct wcur w;
	unsigned i;

	wcur_init(&w, buf, size);
	wcur_u8(&w, NOTIFY_REC_V1);
	wcur_le32(&w, nv->n);
	for (i = 0; i < nv->n; i++) {
		wcur_le32(&w, (uint32_t)nv->pid[i]);
		wcur_le32(&w, nv->count[i]);
	}
	return w.err ? 0 : wcur_off(&w);
}

static void
notify_watched_add(struct shm *s, int delta)
{
	shm_hint_counter_add(&s->hint->watched, delta);
}

/* One directory's record gains (delta > 0) or loses a watch of pid. */
static int
notify_edit_txn(struct shm *s, MDB_txn *txn, const struct shm_file_id *fid,
    pid_t pid, int delta, int *keys)
{
	uint8_t key[SHM_FID_KEY_LEN], buf[NOTIFY_VAL_MAX];
	MDB_val k = { sizeof(key), key }, v;
	struct notify_val nv;
	unsigned i;
	size_t len;
	int rc, had;

	shm_fid_key(key, fid);
	memset(&nv, 0, sizeof(nv));
	rc = mdb_get(txn, s->db_notify, &k, &v);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return shm_err(rc);
	had = rc == 0;
	if (had && (rc = notify_val_decode(&v, &nv)) != 0)
		return rc;
	for (i = 0; i < nv.n; i++)
		if (nv.pid[i] == pid)
			break;
	if (delta > 0) {
		if (i == nv.n) {
			if (nv.n == NOTIFY_PIDS_MAX)
				return -ENOSPC;
			nv.pid[nv.n] = pid;
			nv.count[nv.n++] = 0;
		}
		nv.count[i]++;
	} else {
		if (i == nv.n)
			return 0;	/* not recorded (a full map at arm time) */
		if (--nv.count[i] == 0) {
			nv.pid[i] = nv.pid[nv.n - 1];
			nv.count[i] = nv.count[nv.n - 1];
			nv.n--;
		}
	}
	if (nv.n == 0) {
		if (!had)
			return 0;
		if ((rc = mdb_del(txn, s->db_notify, &k, NULL)) != 0)
			return shm_err(rc);
		shm_hint_add(s, SHM_HINT_NOTIFY, fid, -1);
		(*keys)--;
		return 0;
	}
	if ((len = notify_val_encode(&nv, buf, sizeof(buf))) == 0)
		return -EINVAL;
	v.mv_data = buf;
	v.mv_size = len;
	if ((rc = mdb_put(txn, s->db_notify, &k, &v, 0)) != 0)
		return shm_err(rc);
	if (!had) {
		shm_hint_add(s, SHM_HINT_NOTIFY, fid, 1);
		(*keys)++;
	}
	return 0;
}

static int
notify_watch_once(struct shm *s, const struct shm_file_id *fids, unsigned n,
    pid_t pid, int delta)
{
	MDB_txn *txn;
	unsigned i;
	int rc, keys = 0;

	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
		return rc;
	for (i = 0, rc = 0; i < n && rc == 0; i++)
		rc = notify_edit_txn(s, txn, &fids[i], pid, delta, &keys);
	/* the all-bucket count over-counts like the buckets */
	if (rc == 0 && keys > 0)
		notify_watched_add(s, keys);
	rc = shm_wend(s, txn, rc);
	if (rc != 0 && keys > 0)
		notify_watched_add(s, -keys);
	else if (rc == 0 && keys < 0)
		notify_watched_add(s, keys);
	return rc;
}

int
shm_notify_watch(struct shm *s, const struct shm_file_id *fids, unsigned n,
    pid_t pid, int delta)
{
	int rc;

	if (n == 0 || pid <= 0 || (delta != 1 && delta != -1))
		return n == 0 ? 0 : -EINVAL;
	if (delta < 0) {
		/* a release path */
		SHM_RETRY_FULL(s, rc, notify_watch_once(s, fids, n, pid, delta));
		return rc;
	}
	return notify_watch_once(s, fids, n, pid, delta);
}

int
shm_notify_any(const struct shm *s)
{
	return __atomic_load_n(&s->hint->watched, __ATOMIC_ACQUIRE) != 0;
}

static int
notify_pids_decode(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct shm_pids *out = arg;
	struct notify_val nv;
	unsigned i;
	int rc;

	(void)k;
	if ((rc = notify_val_decode(v, &nv)) != 0)
		return rc;
	for (i = 0; i < nv.n; i++)
		shm_pids_add(out, nv.pid[i]);
	return 0;
}

int
shm_notify_decode(const void *val, size_t len, struct shm_pids *out)
{
	MDB_val v = { len, (void *)val };

	memset(out, 0, sizeof(*out));
	return notify_pids_decode(NULL, &v, out);
}

int
shm_notify_watchers(struct shm *s, const struct shm_file_id *fid,
    struct shm_pids *out)
{
	uint8_t key[SHM_FID_KEY_LEN];
	int rc;

	memset(out, 0, sizeof(*out));
	if (shm_hint_zero(s, SHM_HINT_NOTIFY, fid))
		return 0;
	shm_fid_key(key, fid);
	rc = shm_rec_get(s, s->db_notify, key, sizeof(key), notify_pids_decode,
	    out);
	return rc == -ENOENT ? 0 : rc;
}

/* The master's purge: a dead worker's watches (a walk, not per request). */
struct notify_purge {
	pid_t			pid;
	unsigned		n;
	struct shm_file_id	fid[64];
	uint32_t		count[64];
};

static int
notify_purge_visit(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct notify_purge *np = arg;
	struct notify_val nv;
	unsigned i;

	if (k->mv_size != SHM_FID_KEY_LEN || notify_val_decode(v, &nv) != 0)
		return 0;
	for (i = 0; i < nv.n; i++)
		if (nv.pid[i] == np->pid) {
			if (np->n == 64)
				return 1;
			shm_fid_from_key(&np->fid[np->n], k->mv_data);
			np->count[np->n++] = nv.count[i];
		}
	return 0;
}

int
shm_notify_purge(struct shm *s, pid_t pid)
{
	struct notify_purge np;
	unsigned i, j, guard;
	int rc = 0;

	if (pid <= 0)
		return -EINVAL;
	for (guard = 0; guard < 64; guard++) {
		memset(&np, 0, sizeof(np));
		np.pid = pid;
		if ((rc = shm_rec_walk(s, shm_env_main(s), s->db_notify, notify_purge_visit,
		    &np)) < 0 || np.n == 0)
			break;
		for (i = 0; i < np.n && rc == 0; i++)
			for (j = 0; j < np.count[i] && rc == 0; j++)
				rc = shm_notify_watch(s, &np.fid[i], 1, pid, -1);
		if (rc != 0)
			break;
	}
	return rc < 0 ? rc : 0;
}
