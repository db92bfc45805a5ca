/*
 * The master's cleanup after a child died: everything the dead pid held
 * in one env goes in one write transaction of that env, so no other worker
 * ever sees a half-purged file (a stale share-mode entry, or a lock
 * without its open): a file's opens, leases and locks are all in its env.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

struct purge_open {
	struct shm_file_id fid;
	uint64_t	persistent_id;
	int		durable;
	int		lease;
	uint8_t		client_guid[SHM_GUID_LEN];
	uint8_t		lease_key[SHM_GUID_LEN];
};

struct purge_list {
	struct purge_open *v;
	size_t		 n, cap;
};

static int
purge_push(struct purge_list *l, const struct purge_open *o)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		void *p = reallocarray(l->v, cap, sizeof(*l->v));

		if (p == NULL)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = *o;
	return 0;
}

/* The dead worker's opens, collected first: the loop below edits the db. */
static int
purge_collect(struct shm *s, MDB_txn *txn, pid_t pid, struct purge_list *l)
{
	struct shm_open_rec r;
	struct purge_open po;
	struct shm_file_id fid;
	struct shm_ofile of;
	MDB_cursor *cu;
	MDB_val k, v;
	uint32_t i;
	int rc, op = MDB_FIRST, err = 0;

	if ((rc = mdb_cursor_open(txn, s->db_opens, &cu)) != 0)
		return shm_err(rc);
	while (err == 0 && (rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size != SHM_FID_KEY_LEN ||
		    shm_ofile_parse(v.mv_data, v.mv_size, &of) != 0)
			continue;
		shm_fid_from_key(&fid, k.mv_data);
		for (i = 0; i < of.n && err == 0; i++) {
			shm_orec_get(of.rec + (size_t)i * SHM_OREC_LEN, &r);
			if (r.pid != pid)
				continue;
			memset(&po, 0, sizeof(po));
			po.fid = fid;
			po.persistent_id = r.persistent_id;
			po.durable = (r.flags & SHM_OPEN_DURABLE) != 0;
			po.lease = r.oplock_level == SHM_OPLOCK_LEASE;
			memcpy(po.client_guid, r.client_guid, SHM_GUID_LEN);
			memcpy(po.lease_key, r.lease_key, SHM_GUID_LEN);
			err = purge_push(l, &po);
		}
	}
	mdb_cursor_close(cu);
	if (err != 0)
		return err;
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

static int
purge_keep_lock(struct shm_brlock_rec *l, void *arg)
{
	return l->owner.pid != *(const pid_t *)arg;
}

static int
purge_keep_waiter(struct shm_brlock_owner *w, void *arg)
{
	return w->pid != *(const pid_t *)arg;
}

/* Every lock and waiter record still carrying pid (durable ones were moved to 0). */
static int
purge_locks(struct shm *s, MDB_txn *txn, pid_t pid, struct shm_purge_result *res)
{
	struct shm_file_id *fids = NULL, fid;
	size_t n = 0, cap = 0, i;
	MDB_cursor *cu;
	MDB_val k, v;
	int rc, op = MDB_FIRST, err = 0;

	if ((rc = mdb_cursor_open(txn, s->db_brlocks, &cu)) != 0)
		return shm_err(rc);
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size != SHM_FID_KEY_LEN)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *p = reallocarray(fids, nc, sizeof(*fids));

			if (p == NULL) {
				err = -ENOMEM;
				break;
			}
			fids = p;
			cap = nc;
		}
		shm_fid_from_key(&fids[n++], k.mv_data);
	}
	mdb_cursor_close(cu);
	rc = err != 0 ? err : rc == MDB_NOTFOUND ? 0 : shm_err(rc);
	for (i = 0; rc == 0 && i < n; i++) {
		fid = fids[i];
		rc = shm_brlock_edit_txn(s, txn, &fid, purge_keep_lock,
		    purge_keep_waiter, &pid, &res->locks, &res->wake);
	}
	free(fids);
	return rc;
}

static int
purge_sessions(struct shm *s, MDB_txn *txn, pid_t pid, struct shm_purge_result *res)
{
	MDB_cursor *cu;
	MDB_val k, v;
	struct cur c;
	int rc, op = MDB_FIRST;

	if ((rc = mdb_cursor_open(txn, s->db_sessions, &cu)) != 0)
		return shm_err(rc);
	while ((rc = mdb_cursor_get(cu, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		cur_init(&c, v.mv_data, v.mv_size);
		if (cur_u8(&c) != SHM_REC_V1 || (pid_t)cur_le32(&c) != pid || c.err)
			continue;
		if ((rc = mdb_cursor_del(cu, 0)) != 0)
			break;
		res->sessions++;
	}
	mdb_cursor_close(cu);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : shm_err(rc);
}

/*
 * One env's part of the purge, in one write transaction: in a data env
 * the dead pid's opens (its durable ones disconnected), leases and locks;
 * in the main env its sessions, counted trees and worker record (with
 * one env, both).
 */
static int
shm_purge_env_once(struct shm *s, struct shm_env *e, pid_t pid,
    struct shm_purge_result *res)
{
	struct purge_list l = { 0 };
	uint8_t wk[4];
	MDB_val wkv = { sizeof(wk), wk };
	uint64_t now = shm_now_ms();
	MDB_txn *txn;
	size_t i;
	int rc, last, dp, data = s->nparts == 1 || e->idx != 0;

	memset(res, 0, sizeof(*res));
	if ((rc = shm_wbegin(s, e, &txn)) != 0)
		return rc;
	if (data && (rc = purge_collect(s, txn, pid, &l)) != 0)
		goto out;
	/* Durable opens first, so their locks move to pid 0 and survive. */
	for (i = 0; i < l.n; i++) {
		if (!l.v[i].durable)
			continue;
		rc = shm_durable_disconnect_txn(s, txn, l.v[i].persistent_id, now,
		    NULL);
		if (rc == 0)
			res->durable++;
		else if (rc == -ENOENT)
			l.v[i].durable = 0;	/* no record to reconnect to: drop it */
		else
			goto out;
	}
	for (i = 0; i < l.n; i++) {
		struct purge_open *po = &l.v[i];

		if (po->durable)
			continue;
		/* The open, and its lease when no other open uses it. */
		if ((rc = shm_open_drop_txn(s, txn, &po->fid, po->persistent_id, 0,
		    NULL, &last, &dp)) != 0)
			goto out;
		res->opens++;
		/* Nobody is left to unlink it (the master does no file I/O): counted. */
		if (dp)
			res->stale_delete++;
	}
	if (data && (rc = purge_locks(s, txn, pid, res)) != 0)
		goto out;
	if (e->idx == 0) {
		if ((rc = purge_sessions(s, txn, pid, res)) != 0)
			goto out;
		if ((rc = shm_tree_purge_txn(s, txn, pid, &res->trees)) != 0)
			goto out;
		wk[0] = (uint8_t)((uint32_t)pid >> 24);
		wk[1] = (uint8_t)((uint32_t)pid >> 16);
		wk[2] = (uint8_t)((uint32_t)pid >> 8);
		wk[3] = (uint8_t)pid;
		rc = mdb_del(txn, s->db_workers, &wkv, NULL);
		if (rc != 0 && rc != MDB_NOTFOUND) {
			rc = shm_err(rc);
			goto out;
		}
	}
	rc = shm_wcommit(s, txn);
	txn = NULL;
out:
	if (txn != NULL)
		shm_wabort(s, txn);
	if (rc != 0)
		memset(res, 0, sizeof(*res));
	free(l.v);
	return rc;
}

static void
purge_add(struct shm_purge_result *sum, const struct shm_purge_result *r)
{
	sum->opens += r->opens;
	sum->durable += r->durable;
	sum->locks += r->locks;
	sum->sessions += r->sessions;
	sum->trees += r->trees;
	sum->stale_delete += r->stale_delete;
	for (unsigned j = 0; j < r->wake.n; j++)
		shm_pids_add(&sum->wake, r->wake.pid[j]);
	if (r->wake.overflow)
		sum->wake.overflow = 1;
}

/*
 * Every env in turn, each its own transaction (no other worker sees a
 * half-purged file: a file lives in one env), each retried after growing
 * its map when full: a purge always has room to run.  An env that fails
 * does not keep the others from being purged.
 */
int
shm_purge_worker(struct shm *s, pid_t pid, struct shm_purge_result *res)
{
	struct shm_purge_result local, one;
	char path[PATH_MAX];
	unsigned i;
	int rc, first = 0;

	if (res == NULL)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (pid <= 0)
		return -EINVAL;
	for (i = 0; i < s->nenv; i++) {
		SHM_RETRY_FULL(s, rc, shm_purge_env_once(s, &s->e[i], pid, &one));
		if (rc != 0) {
			if (first == 0)
				first = rc;
			continue;
		}
		purge_add(res, &one);
	}
	/* the claims of the leases it held (shm/claim.c) */
	shm_claim_flush(s);
	if (first != 0)
		return first;
	(void)shm_reader_check(s);
	if (snprintf(path, sizeof(path), "%s/msg/%d", s->dir, (int)pid) < (int)sizeof(path))
		(void)unlink(path);
	log_debug(2, "state: purged pid %d: %u opens, %u durable kept, %u locks, "
	    "%u sessions, %u trees, %u waiters to wake", (int)pid, res->opens,
	    res->durable, res->locks, res->sessions, res->trees, res->wake.n);
	/* its CHANGE_NOTIFY watches (shm/notify.c); stale ones only cost */
	(void)shm_notify_purge(s, pid);
	return 0;
}
