/*
 * The shared state layer's locks: byte-range locks (semantics, waiters woken
 * by unlock, close and purge, across processes), leases and oplocks, and the
 * shared hint counters that let READ and WRITE skip LMDB.  The rest of the
 * layer is check_shm.c.
 */
#include "shm_test.h"

/* ---- byte-range locks ---- */

START_TEST(test_brlock_semantics)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner o1 = { getpid(), 1 }, o2 = { getpid(), 2 };
	struct shm_brlock_range rg[3];
	unsigned failed;

	/* No lock anywhere: the fast path. */
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 0, 10, 1), 0);
	/* Shared locks stack, across opens. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 0, 10, 0), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 5, 10, 0), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 0, 10, 0), 0);
	/* Exclusive over a shared range conflicts, even for the same open. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 8, 1, SHM_BRL_EXCLUSIVE), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 0, 1, SHM_BRL_EXCLUSIVE), -EAGAIN);
	/* Reads pass shared locks; writes are blocked by any shared lock. */
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 0, 100, 0), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 0, 1, 1), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 0, 1, 1), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 15, 5, 1), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F2, &o1, 0, 5, 1), 0);
	/* Unlock needs the exact range. */
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o1, 0, 9, NULL), -ENOENT);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o2, 0, 10, NULL), -ENOENT);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o1, 0, 10, NULL), 0);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o1, 0, 10, NULL), 0);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o1, 0, 10, NULL), -ENOENT);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &o2, 5, 10, NULL), 0);

	/* Exclusive: the owner reads and writes, others do neither. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 100, 50, SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 120, 10, 1), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 149, 10, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 150, 10, 1), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 120, 0, 1), 0);
	/* A shared lock may sit on the same open's exclusive lock. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 110, 5, 0), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 110, 5, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 100, 50, SHM_BRL_EXCLUSIVE), -EAGAIN);
	/* Zero-length: conflicts only strictly inside another lock. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 100, 0, SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 150, 0, SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 101, 0, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 150, 0, SHM_BRL_EXCLUSIVE), 0);
	/* Past 2^64: invalid; up to exactly 2^64: fine. */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, UINT64_MAX, 2, 0), -EINVAL);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, UINT64_MAX, 1, 0), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, UINT64_MAX - 9, 10,
	    SHM_BRL_EXCLUSIVE), -EAGAIN);

	/* Several ranges: all or none. */
	rg[0] = (struct shm_brlock_range){ 1000, 10, 1 };
	rg[1] = (struct shm_brlock_range){ 1010, 10, 1 };
	rg[2] = (struct shm_brlock_range){ 120, 1, 1 };	/* o1's range */
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 3, 0, &failed, NULL), -EAGAIN);
	ck_assert_uint_eq(failed, 2);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 1000, 20, 1), 0);
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 2, 0, &failed, NULL), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 1015, 1, 0), -EAGAIN);
	/* Overlap inside one request conflicts too. */
	rg[1].offset = 1005;
	rg[0].offset = 2000;
	rg[1].offset = 2005;
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 2, 0, &failed, NULL), -EAGAIN);
	ck_assert_uint_eq(failed, 1);

	/* Close removes every lock of the open. */
	ck_assert_int_eq(shm_brlock_remove_open(s, &F1, 2, NULL), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 1000, 20, 1), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 100, 1, 0), -EAGAIN);
	drop_env(s);
}
END_TEST

static int
count_lock(const struct shm_file_id *fid, const struct shm_brlock_rec *l, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

START_TEST(test_brlock_close_wakes)
{
	struct shm *s = make_env(0);
	struct shm_open_rec o = mkopen(31, RD | WR, S_ALL);
	struct shm_brlock_owner o1 = { getpid(), 31 }, w = { 4242, 32 };
	struct shm_close_result cr;
	int n = 0;

	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, 0, 10, SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &w, 5, 1,
	    SHM_BRL_EXCLUSIVE | SHM_BRL_WAIT), -EAGAIN);
	ck_assert_int_eq(shm_foreach_brlock(s, count_lock, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 31, &cr), 0);
	ck_assert_uint_eq(cr.wake.n, 1);
	ck_assert_int_eq(cr.wake.pid[0], 4242);
	n = 0;
	ck_assert_int_eq(shm_foreach_brlock(s, count_lock, &n), 0);
	ck_assert_int_eq(n, 0);
	/* Waiters were handed over, so cancelling finds nothing. */
	ck_assert_int_eq(shm_brlock_cancel_wait(s, &F1, &w), -ENOENT);
	drop_env(s);
}
END_TEST

/* Takes an exclusive lock on F1 [0,100), then on command unlocks and wakes. */
static void
kid_locker(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_brlock_owner o = { getpid(), 7000 };
	struct shm_pids wake;
	struct shm_wmsg *m;

	if (shm_wmsg_prepare(tdir, getpid(), geteuid()) != 0 ||
	    shm_wmsg_open(tdir, getpid(), &m) != 0)
		_exit(4);
	kid_say(k->from[1], shm_brlock_lock(s, &F1, &o, 0, 100, SHM_BRL_EXCLUSIVE));
	if (kid_wait(k->to[0]) == 1) {
		int rc = shm_brlock_unlock(s, &F1, &o, 0, 100, &wake);

		if (rc == 0)
			rc = shm_wmsg_wake(m, &wake, &F1);
		kid_say(k->from[1], rc == 0 ? (int)wake.n : rc);
	}
	for (;;)
		kid_wait(k->to[0]);
}

static void
expect_released(struct shm_wmsg *m, pid_t from, const struct shm_file_id *fid)
{
	struct pollfd p = { shm_wmsg_fd(m), POLLIN, 0 };
	struct shm_wmsg_msg msg;

	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	ck_assert_int_eq(shm_wmsg_recv(m, &msg), 0);
	ck_assert_int_eq(msg.type, SHM_WMSG_LOCK_RELEASED);
	ck_assert_int_eq(msg.from, from);
	ck_assert_uint_eq(msg.fid.dev, fid->dev);
	ck_assert_uint_eq(msg.fid.ino, fid->ino);
}

START_TEST(test_brlock_cross_process)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner me = { getpid(), 8000 };
	struct shm_wmsg *m;
	struct kid a;

	ck_assert_int_eq(shm_wmsg_prepare(tdir, getpid(), geteuid()), 0);
	ck_assert_int_eq(shm_wmsg_open(tdir, getpid(), &m), 0);
	kid_start(&a, kid_locker);
	ck_assert_int_eq(kid_read(&a), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 50, 1, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &me, 50, 10,
	    SHM_BRL_EXCLUSIVE | SHM_BRL_WAIT), -EAGAIN);
	kid_say(a.to[1], 1);
	ck_assert_int_eq(kid_read(&a), 1);	/* one waiter woken: us */
	expect_released(m, a.pid, &F1);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &me, 50, 10, SHM_BRL_EXCLUSIVE), 0);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	shm_wmsg_close(m);
	drop_env(s);
}
END_TEST

START_TEST(test_purge_wakes_waiters)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner me = { getpid(), 8001 };
	struct shm_purge_result pr;
	struct shm_wmsg *m;
	struct kid a;

	ck_assert_int_eq(shm_wmsg_prepare(tdir, getpid(), geteuid()), 0);
	ck_assert_int_eq(shm_wmsg_open(tdir, getpid(), &m), 0);
	kid_start(&a, kid_locker);
	ck_assert_int_eq(kid_read(&a), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &me, 0, 1,
	    SHM_BRL_EXCLUSIVE | SHM_BRL_WAIT), -EAGAIN);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.locks, 1);
	ck_assert_uint_eq(pr.wake.n, 1);
	ck_assert_int_eq(pr.wake.pid[0], getpid());
	/* The master wakes them without a file id: retry everything. */
	ck_assert_int_eq(shm_wmsg_wake(m, &pr.wake, NULL), 0);
	expect_released(m, getpid(), &(struct shm_file_id){ 0, 0 });
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &me, 0, 1, SHM_BRL_EXCLUSIVE), 0);
	shm_wmsg_close(m);
	drop_env(s);
}
END_TEST

/* ---- leases and oplocks ---- */

static struct shm_open_rec
mklease(uint64_t id, uint8_t client, uint8_t key, uint32_t state)
{
	struct shm_open_rec r = mkopen(id, RD | WR, S_ALL);

	r.oplock_level = SHM_OPLOCK_LEASE;
	r.lease_state = state;
	r.lease_version = 2;
	memset(r.client_guid, client, SHM_GUID_LEN);
	memset(r.lease_key, key, SHM_GUID_LEN);
	return r;
}

START_TEST(test_leases)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(41, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec a2 = mklease(42, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec b = mklease(43, 2, 0xb, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec bad = mklease(44, 1, 0xa, SHM_LEASE_R);
	struct shm_break_req req;
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_lease_rec l;

	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	/* The same lease on a second open of the same client breaks nothing. */
	memset(&req, 0, sizeof(req));
	req.access = RD | WR;
	req.share_access = S_ALL;
	memcpy(req.client_guid, a.client_guid, SHM_GUID_LEN);
	memcpy(req.lease_key, a.lease_key, SHM_GUID_LEN);
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a2, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	/* A lease key names one file. */
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &bad, NULL, &g, NULL), -EINVAL);

	/* Another client: W must go; one entry for the lease of two opens. */
	memcpy(req.client_guid, b.client_guid, SHM_GUID_LEN);
	memcpy(req.lease_key, b.lease_key, SHM_GUID_LEN);
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert(br.b[0].is_lease);
	ck_assert_int_eq(br.b[0].pid, getpid());
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_int_eq(br.b[0].in_progress, 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(l.breaking, 1);
	ck_assert_uint_eq(l.epoch, 2);
	/*
	 * A second opener waits for the same break (in progress, nothing
	 * sent again; it loses W, so the worker makes it wait).
	 */
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_int_eq(br.b[0].must_wait, 0);
	ck_assert_uint_eq(br.b[0].cur, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	req.flags = SHM_BREAK_SHARING;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R | SHM_LEASE_W);
	/* Acknowledgement must be within the break. */
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R | SHM_LEASE_W), -EINVAL);
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R | SHM_LEASE_H), 0);
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R), -ENOENT);
	/* The new open now gets R and H, not W. */
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_int_eq(g.nopens, 3);
	/* A write by b breaks a's whole lease (RH -> none, as Windows). */
	ck_assert_int_eq(shm_write_breaks(s, &F1, 43, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, 0);
	/* Attribute-only opens break nothing, unless they overwrite. */
	req.access = ATTR;
	req.flags = 0;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	req.flags = SHM_BREAK_TRUNCATE;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	/* The lease lives while one of its opens does. */
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), -ENOENT);
	drop_env(s);
}
END_TEST

/*
 * A directory rename's look at a file below it (issue 21): opens with an
 * H lease count as cached (also while H is being broken), the others as
 * bare; a file with no open has neither.
 */
START_TEST(test_handle_caching)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(61, 1, 0xa, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_open_rec b = mklease(62, 2, 0xb, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_open_rec plain = mkopen(63, RD, S_ALL);
	struct shm_break_req req;
	struct shm_breaks br;
	int cached, bare;

	ck_assert_int_eq(shm_open_handle_caching(s, &F1, &cached, &bare), 0);
	ck_assert_int_eq(cached + bare, 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &b, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_handle_caching(s, &F1, &cached, &bare), 0);
	ck_assert_int_eq(cached, 2);
	ck_assert_int_eq(bare, 0);
	/* a rename's break of H: still cached until acknowledged */
	memset(&req, 0, sizeof(req));
	req.access = 0x10000;	/* DELETE */
	req.flags = SHM_BREAK_HANDLE_ONLY;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 2);
	ck_assert_int_eq(shm_open_handle_caching(s, &F1, &cached, &bare), 0);
	ck_assert_int_eq(cached, 2);
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R), 0);
	ck_assert_int_eq(shm_open_handle_caching(s, &F1, &cached, &bare), 0);
	ck_assert_int_eq(cached, 1);
	ck_assert_int_eq(bare, 1);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &plain, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_handle_caching(s, &F1, &cached, &bare), 0);
	ck_assert_int_eq(cached, 1);
	ck_assert_int_eq(bare, 2);
	drop_env(s);
}
END_TEST

/*
 * Directory leases (issue 16): a change inside the directory breaks every
 * lease of its opens to none, but the one named as the changer's parent
 * lease key (by key alone, as Samba); a lease already breaking is not
 * broken again; an open without a lease is never listed.
 */
START_TEST(test_dirlease_breaks)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(51, 1, 0xa, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_open_rec b = mklease(52, 2, 0xb, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_open_rec plain = mkopen(53, RD, S_ALL);
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_lease_rec l;
	uint8_t key_a[SHM_GUID_LEN], key_c[SHM_GUID_LEN];

	memset(key_a, 0xa, sizeof(key_a));
	memset(key_c, 0xc, sizeof(key_c));
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &plain, NULL, &g, NULL), 0);
	/* nothing on another directory */
	ck_assert_int_eq(shm_dirlease_breaks(s, &F2, NULL, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	/* the parent key spares its lease, whatever client names it */
	ck_assert_int_eq(shm_dirlease_breaks(s, &F1, key_a, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert(br.b[0].is_lease);
	ck_assert_int_eq(br.b[0].lease_key[0], 0xb);
	ck_assert_uint_eq(br.b[0].cur, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_uint_eq(br.b[0].new_level, 0);
	/* another key (or none): both break, marked in progress */
	ck_assert_int_eq(shm_dirlease_breaks(s, &F1, key_c, 1, &br), 0);
	ck_assert_uint_eq(br.n, 2);
	ck_assert_int_eq(br.b[0].in_progress, 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(l.breaking, 1);
	ck_assert_uint_eq(l.breaking_to, 0);
	/*
	 * The next change sends nothing again: the breaks are listed as in
	 * progress (a worker sends none; one breaking to R would be lowered
	 * to none by the ack's follow-up, shm_lease_rec.required).
	 */
	ck_assert_int_eq(shm_dirlease_breaks(s, &F1, NULL, 1, &br), 0);
	ck_assert_uint_eq(br.n, 2);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_int_eq(br.b[1].in_progress, 1);
	/* acked to none: nothing left to break */
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key, 0), 0);
	ck_assert_int_eq(shm_lease_break_ack(s, b.client_guid, b.lease_key, 0), 0);
	ck_assert_int_eq(shm_dirlease_breaks(s, &F1, NULL, 1, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	drop_env(s);
}
END_TEST

/*
 * MS-SMB2 3.3.5.9.8 / 3.3.5.9.11 as smbtorture's smb2.lease checks them: an
 * upgrade only to a strict superset, a v2 lease starting one past the
 * client's epoch, a sharing violation taking only H, stat opens ignored.
 */
/*
 * Samba 4.22's rules (smb2.lease.lease-epoch, durable-v2-open.nonstat-
 * and-lease): no read caching on a file with byte-range locks (a lease
 * granted nothing keeps the client's epoch); an open with READ_CONTROL
 * is not a stat open beside which W could be granted.
 */
START_TEST(test_lease_grant_limits)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(61, 1, 0xa, SHM_LEASE_R);
	struct shm_open_rec b = mklease(62, 1, 0xb, SHM_LEASE_R | SHM_LEASE_W |
	    SHM_LEASE_H);
	struct shm_open_rec rc = mkopen(63, ATTR | 0x00020000, S_ALL);
	struct shm_brlock_owner ow = { getpid(), 60 };
	struct shm_open_grant g;

	ck_assert_int_eq(shm_brlock_lock(s, &F1, &ow, 0, 1, SHM_BRL_EXCLUSIVE), 0);
	a.lease_epoch = 100;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, 0);
	ck_assert_uint_eq(g.lease_epoch, 100);
	/* beside a READ_CONTROL open: RH, not RWH */
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &rc, NULL, &g, NULL), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	drop_env(s);
}
END_TEST

START_TEST(test_lease_rules)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(51, 1, 0xa, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_open_rec a2 = mklease(52, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W);
	struct shm_open_rec a3 = mklease(53, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec st = mkopen(54, ATTR, S_ALL);
	struct shm_break_req req;
	struct shm_open_grant g;
	struct shm_breaks br;

	a.lease_epoch = 0x10;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &st, NULL, &g, NULL), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_uint_eq(g.lease_epoch, 0x11);
	/* RH asking RW is no superset: RH stays, epoch too. */
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a2, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_uint_eq(g.lease_epoch, 0x11);
	/* RWH is (the stat open does not count as another open). */
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a3, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	ck_assert_uint_eq(g.lease_epoch, 0x12);

	memset(&req, 0, sizeof(req));
	req.access = RD | WR;
	req.share_access = S_ALL;
	memset(req.client_guid, 2, SHM_GUID_LEN);
	memset(req.lease_key, 0xb, SHM_GUID_LEN);
	/* The first pass of a sharing violation leaves leases alone. */
	req.flags = SHM_BREAK_BATCH_ONLY;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	/* Then only H goes: RWH -> RW. */
	req.flags = SHM_BREAK_SHARING;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R | SHM_LEASE_W);
	/* An overwrite takes everything at once. */
	req.flags = SHM_BREAK_TRUNCATE;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, 0);
	drop_env(s);
}
END_TEST

/*
 * Staged breaks (smbtorture smb2.lease.breaking3): RWH breaking to RH for
 * one opener, an overwrite arrives meanwhile; the ack of RH starts RH -> R
 * (same epoch), the ack of R ends at none with no ack asked.
 */
START_TEST(test_lease_staged_breaks)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(61, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_break_req req;
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_lease_rec l;
	struct shm_break next;
	int have;

	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_version, 2);
	memset(&req, 0, sizeof(req));
	req.access = RD | WR;
	req.share_access = S_ALL;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R | SHM_LEASE_H);
	/* The overwrite: no new break, but the next one will go to none. */
	req.flags = SHM_BREAK_TRUNCATE;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_uint_eq(l.required, 0);
	ck_assert_uint_eq(l.epoch, 2);
	/* Ack RH: the next break is RH -> R, with an ack, same epoch. */
	ck_assert_int_eq(shm_lease_break_ack_next(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R | SHM_LEASE_H, &next, &have), 0);
	ck_assert_int_eq(have, 1);
	ck_assert_uint_eq(next.cur, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_uint_eq(next.new_level, SHM_LEASE_R);
	ck_assert_uint_eq(next.epoch, 2);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(l.breaking, 1);
	/* A plain opener that already waited keeps waiting meanwhile. */
	req.flags = SHM_BREAK_RESUMED;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].must_wait, 1);
	/* Ack R: R -> none needs no ack, the lease is settled at none. */
	ck_assert_int_eq(shm_lease_break_ack_next(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R, &next, &have), 0);
	ck_assert_int_eq(have, 1);
	ck_assert_uint_eq(next.new_level, 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(l.breaking, 0);
	ck_assert_uint_eq(l.state, 0);
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	/* A late ack: nothing in progress. */
	ck_assert_int_eq(shm_lease_break_ack_next(s, a.client_guid, a.lease_key,
	    0, &next, &have), -ENOENT);
	drop_env(s);
}
END_TEST

/*
 * The ack timer ran out: a lease ends at none, an oplock at the level it
 * was breaking to; renames break H only; READ_CONTROL breaks oplocks only.
 */
START_TEST(test_breaks_expire_rename_readctl)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mklease(71, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec o = mkopen(72, RD | WR, S_ALL);
	struct shm_break_req req;
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_lease_rec l;
	struct shm_open_rec r;

	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	memset(&req, 0, sizeof(req));
	/* A rename by another key: RWH -> RW. */
	req.access = RD | 0x00010000;
	req.flags = SHM_BREAK_HANDLE_ONLY;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R | SHM_LEASE_W);
	/* READ_CONTROL alone is a stat open for leases. */
	req.access = 0x00020000;
	req.flags = 0;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	/* Break, then let it time out. */
	req.access = RD;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(shm_breaks_expire(s, &F1), 1);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(l.breaking, 0);
	ck_assert_uint_eq(l.state, 0);
	ck_assert_int_eq(shm_breaks_expire(s, &F1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 71, NULL), 0);

	/* An oplock: READ_CONTROL breaks it; the timeout leaves level II. */
	o.oplock_level = SHM_OPLOCK_BATCH;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &o, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_BATCH);
	req.access = 0x00020000;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_OPLOCK_II);
	ck_assert_int_eq(shm_breaks_expire(s, &F1), 1);
	ck_assert_int_eq(shm_open_get(s, &F1, 72, &r), 0);
	ck_assert_uint_eq(r.oplock_level, SHM_OPLOCK_II);
	ck_assert_uint_eq(r.flags & SHM_OPEN_BREAKING, 0);
	/* Renames leave oplocks alone. */
	req.access = RD;
	req.flags = SHM_BREAK_HANDLE_ONLY;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	drop_env(s);
}
END_TEST

/*
 * Each break has its own timer: a lease break started later survives the
 * expiry of an older one on the same file, and an oplock break keeps its
 * start in the open record.  shm_lease_holders() names the workers with
 * an open of a lease (an ack in another worker wakes them).
 */
START_TEST(test_break_timers_and_holders)
{
	struct shm *s = make_env(0);
	uint32_t rh = SHM_LEASE_R | SHM_LEASE_H;
	struct shm_open_rec a = mklease(81, 1, 0xa, rh | SHM_LEASE_W);
	struct shm_open_rec a2 = mklease(82, 1, 0xa, rh);
	struct shm_open_rec b = mklease(83, 1, 0xb, rh);
	struct shm_open_rec o = mkopen(84, RD | WR, S_ALL);
	struct shm_break_req req;
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_lease_rec la, lb;
	struct shm_open_rec r;
	struct shm_pids pids;
	struct shm_file_id fid;
	struct shm_break next;
	uint64_t ta, tb, to;
	int have;

	/* Lease a (RWH), broken to RH and acked; then lease b gets RH. */
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &a, NULL, &g, NULL), 0);
	memset(&req, 0, sizeof(req));
	req.access = RD | WR;
	req.share_access = S_ALL;
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_ne(br.b[0].started_ms, 0);
	ck_assert_int_eq(shm_lease_break_ack_next(s, a.client_guid, a.lease_key,
	    rh, &next, &have), 0);
	ck_assert_int_eq(have, 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &la), 0);
	ck_assert_uint_eq(la.break_started, 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, rh);

	/* Holders: a second open of lease a in another worker (pid). */
	a2.pid = getpid() + 1;
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &a2, NULL, &g, NULL), 0);
	ck_assert_int_eq(shm_lease_holders(s, a.client_guid, a.lease_key, &fid,
	    &pids), 0);
	ck_assert_uint_eq(fid.ino, F2.ino);
	ck_assert_uint_eq(pids.n, 2);
	ck_assert_int_eq(pids.pid[0], getpid());
	ck_assert_int_eq(pids.pid[1], getpid() + 1);
	ck_assert_int_eq(shm_lease_holders(s, b.client_guid, b.lease_key, &fid,
	    &pids), 0);
	ck_assert_uint_eq(pids.n, 1);
	memset(next.lease_key, 0xc, SHM_GUID_LEN);
	ck_assert_int_eq(shm_lease_holders(s, b.client_guid, next.lease_key,
	    &fid, &pids), -ENOENT);

	/* An opener of key b meets a sharing violation: a's H breaks (t_a). */
	memcpy(req.client_guid, b.client_guid, SHM_GUID_LEN);
	memcpy(req.lease_key, b.lease_key, SHM_GUID_LEN);
	req.flags = SHM_BREAK_SHARING;
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(memcmp(br.b[0].lease_key, a.lease_key, SHM_GUID_LEN), 0);
	ta = br.b[0].started_ms;
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &la), 0);
	ck_assert_uint_eq(la.break_started, ta);
	usleep(20000);
	/* Later, one of key a: b's H breaks, with its own start. */
	memcpy(req.lease_key, a.lease_key, SHM_GUID_LEN);
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	tb = br.b[0].started_ms;
	ck_assert_uint_gt(tb, ta);
	/* A plain opener sees both in progress, each with its start. */
	memset(req.lease_key, 0, SHM_GUID_LEN);
	req.flags = 0;
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 2);
	ck_assert_int_eq(br.b[0].in_progress && br.b[1].in_progress, 1);
	ck_assert(br.b[0].started_ms == ta || br.b[1].started_ms == ta);
	ck_assert(br.b[0].started_ms == tb || br.b[1].started_ms == tb);
	/* a's timer runs out: a ends at none, b still breaks. */
	ck_assert_int_eq(shm_breaks_expire_before(s, &F2, ta), 1);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &la), 0);
	ck_assert_int_eq(la.breaking, 0);
	ck_assert_uint_eq(la.state, 0);
	ck_assert_int_eq(shm_lease_get(s, b.client_guid, b.lease_key, &lb), 0);
	ck_assert_int_eq(lb.breaking, 1);
	ck_assert_uint_eq(lb.state, rh);
	ck_assert_uint_eq(lb.break_started, tb);
	ck_assert_int_eq(shm_breaks_expire_before(s, &F2, tb - 1), 0);
	ck_assert_int_eq(shm_breaks_expire_before(s, &F2, tb), 1);
	ck_assert_int_eq(shm_lease_get(s, b.client_guid, b.lease_key, &lb), 0);
	ck_assert_int_eq(lb.breaking, 0);
	ck_assert_int_eq(shm_open_remove(s, &F2, 81, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F2, 82, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F2, 83, NULL), 0);

	/* An oplock break: its start is kept in the record, then cleared. */
	o.oplock_level = SHM_OPLOCK_BATCH;
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &o, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_BATCH);
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	to = br.b[0].started_ms;
	ck_assert_uint_ne(to, 0);
	/* (an overwrite: it needs more than the level II in progress) */
	req.flags = SHM_BREAK_TRUNCATE;
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_uint_eq(br.b[0].started_ms, to);
	ck_assert_int_eq(shm_breaks_expire_before(s, &F2, to - 1), 0);
	ck_assert_int_eq(shm_breaks_expire_before(s, &F2, to), 1);
	ck_assert_int_eq(shm_open_get(s, &F2, 84, &r), 0);
	ck_assert_uint_eq(r.oplock_level, SHM_OPLOCK_II);
	ck_assert_uint_eq(r.flags & SHM_OPEN_BREAKING, 0);
	memset(next.lease_key, 0, SHM_GUID_LEN);
	ck_assert_int_eq(memcmp(r.lease_key, next.lease_key, SHM_GUID_LEN), 0);
	drop_env(s);
}
END_TEST

START_TEST(test_oplocks)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(51, RD | WR, S_ALL), b = mkopen(52, RD, S_ALL);
	struct shm_break_req req = { .access = RD, .share_access = S_ALL };
	struct shm_open_grant g;
	struct shm_breaks br;
	struct shm_open_rec r;

	a.oplock_level = SHM_OPLOCK_BATCH;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_BATCH);
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert(!br.b[0].is_lease);
	ck_assert_uint_eq(br.b[0].persistent_id, 51);
	ck_assert_uint_eq(br.b[0].new_level, SHM_OPLOCK_II);
	ck_assert_int_eq(shm_oplock_break_ack(s, &F1, 51, SHM_OPLOCK_BATCH), -EINVAL);
	ck_assert_int_eq(shm_oplock_break_ack(s, &F1, 51, SHM_OPLOCK_II), 0);
	ck_assert_int_eq(shm_open_get(s, &F1, 51, &r), 0);
	ck_assert_uint_eq(r.oplock_level, SHM_OPLOCK_II);
	ck_assert_uint_eq(r.flags & SHM_OPEN_BREAKING, 0);
	/* Not alone any more: batch asked, level II granted. */
	b.oplock_level = SHM_OPLOCK_BATCH;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_II);
	/* Truncation breaks level II to none. */
	req.flags = SHM_BREAK_TRUNCATE;
	req.access = WR;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 2);
	ck_assert_uint_eq(br.b[0].new_level, SHM_OPLOCK_NONE);
	drop_env(s);
}
END_TEST

/*
 * level2 oplocks = no (SHM_OPEN_NO_LEVEL2): batch alone stays batch, its
 * break goes to none, a second opener asking batch or level II gets none;
 * a lease is RWH alone, R or RH never, and its break goes to none.
 */
START_TEST(test_no_level2)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(61, RD | WR, S_ALL), b = mkopen(62, RD, S_ALL);
	struct shm_open_rec la = mklease(63, 1, 0xa, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	struct shm_open_rec lb = mklease(64, 2, 0xb, SHM_LEASE_R | SHM_LEASE_H);
	struct shm_break_req req = { .access = RD, .share_access = S_ALL };
	struct shm_open_grant g;
	struct shm_breaks br;

	a.oplock_level = SHM_OPLOCK_BATCH;
	a.flags = SHM_OPEN_NO_LEVEL2;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_BATCH);
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_OPLOCK_NONE);
	ck_assert_int_eq(shm_oplock_break_ack(s, &F1, 61, SHM_OPLOCK_NONE), 0);
	b.oplock_level = SHM_OPLOCK_BATCH;
	b.flags = SHM_OPEN_NO_LEVEL2;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_NONE);

	la.flags = SHM_OPEN_NO_LEVEL2;
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &la, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.lease_state, SHM_LEASE_R | SHM_LEASE_W | SHM_LEASE_H);
	memcpy(req.client_guid, lb.client_guid, SHM_GUID_LEN);
	memcpy(req.lease_key, lb.lease_key, SHM_GUID_LEN);
	ck_assert_int_eq(shm_open_breaks(s, &F2, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert(br.b[0].is_lease);
	ck_assert_uint_eq(br.b[0].new_level, 0);
	drop_env(s);
	/* alone, R or RH asked: nothing, but the lease context stays */
	s = make_env(0);
	lb.flags = SHM_OPEN_NO_LEVEL2;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &lb, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_LEASE);
	ck_assert_uint_eq(g.lease_state, 0);
	b = mkopen(65, RD, S_ALL);
	b.oplock_level = SHM_OPLOCK_II;
	b.flags = SHM_OPEN_NO_LEVEL2;
	ck_assert_int_eq(shm_open_insert_ex(s, &F2, &b, NULL, &g, NULL), 0);
	ck_assert_uint_eq(g.oplock_level, SHM_OPLOCK_NONE);
	drop_env(s);
}
END_TEST

/* More locks than the preallocated scratch; a close drops them all. */
START_TEST(test_many_locks_one_file)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner o1 = { getpid(), 1 }, o2 = { getpid(), 2 };
	struct shm_pids wake;
	uint64_t i;

	for (i = 0; i < 200; i++)
		ck_assert_int_eq(shm_brlock_lock(s, &F1, &o1, i * 100, 10,
		    SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 19905, 1, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 19910, 80, 1), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 10005, 1, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_remove_open(s, &F1, 1, &wake), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o2, 19905, 1, 1), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &o2, 10005, 1, 0), 0);
	drop_env(s);
}
END_TEST

/* Takes an exclusive lock on F2 (or, with 1, an oplock on it) and holds it. */
static void
kid_lock_f2(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_brlock_owner o = { getpid(), 77 };
	struct shm_open_rec r = mkopen(77, RD, S_ALL);
	struct shm_pids wake;
	int cmd;

	while ((cmd = kid_wait(k->to[0])) != 0) {
		switch (cmd) {
		case 1:
			kid_say(k->from[1], shm_brlock_lock(s, &F2, &o, 0, 10,
			    SHM_BRL_EXCLUSIVE));
			break;
		case 2:
			kid_say(k->from[1], shm_brlock_unlock(s, &F2, &o, 0, 10, &wake));
			break;
		case 3:
			r.oplock_level = SHM_OPLOCK_II;
			kid_say(k->from[1], shm_open_insert(s, &F2, &r, NULL));
			break;
		case 4:
			kid_say(k->from[1], shm_open_remove(s, &F2, 77, NULL));
			break;
		}
	}
	shm_detach(s);
}

/*
 * The READ/WRITE checks skip LMDB when the shared counters say the file has
 * no lock and no cached open: what another process does must still be seen
 * at once, and a failed (rolled back) change must not leave a count.
 */
START_TEST(test_hint_counters_cross_process)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner me = { getpid(), 5 };
	struct shm_open_rec w = mkopen(5, RD | WR, S_ALL);
	struct shm_breaks br;
	struct kid k;
	int cmd;

	ck_assert_int_eq(shm_open_insert(s, &F2, &w, NULL), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F2, &me, 0, 100, 0), 0);
	kid_start(&k, kid_lock_f2);
	cmd = 1;
	kid_say(k.to[1], cmd);
	ck_assert_int_eq(kid_read(&k), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F2, &me, 0, 100, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F2, &me, 0, 100, 1), -EAGAIN);
	/* A refused lock of ours (rolled back) leaves nothing behind. */
	ck_assert_int_eq(shm_brlock_lock(s, &F2, &me, 5, 1, 0), -EAGAIN);
	cmd = 2;
	kid_say(k.to[1], cmd);
	ck_assert_int_eq(kid_read(&k), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F2, &me, 0, 100, 1), 0);
	/* A level II oplock of the other process: our WRITE breaks it. */
	ck_assert_int_eq(shm_write_breaks(s, &F2, 5, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	cmd = 3;
	kid_say(k.to[1], cmd);
	ck_assert_int_eq(kid_read(&k), 0);
	ck_assert_int_eq(shm_write_breaks(s, &F2, 5, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].persistent_id, 77);
	ck_assert_uint_eq(br.b[0].new_level, SHM_OPLOCK_NONE);
	cmd = 4;
	kid_say(k.to[1], cmd);
	ck_assert_int_eq(kid_read(&k), 0);
	ck_assert_int_eq(shm_write_breaks(s, &F2, 5, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	cmd = 0;
	kid_say(k.to[1], cmd);
	kid_exit(&k);
	drop_env(s);
}
END_TEST

/* Each test runs twice: over one env, then over 8 data envs. */
static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, test_brlock_semantics);
	tcase_add_test(tc, test_brlock_close_wakes);
	tcase_add_test(tc, test_brlock_cross_process);
	tcase_add_test(tc, test_purge_wakes_waiters);
	tcase_add_test(tc, test_leases);
	tcase_add_test(tc, test_dirlease_breaks);
	tcase_add_test(tc, test_handle_caching);
	tcase_add_test(tc, test_lease_rules);
	tcase_add_test(tc, test_lease_grant_limits);
	tcase_add_test(tc, test_lease_staged_breaks);
	tcase_add_test(tc, test_breaks_expire_rename_readctl);
	tcase_add_test(tc, test_break_timers_and_holders);
	tcase_add_test(tc, test_oplocks);
	tcase_add_test(tc, test_no_level2);
	tcase_add_test(tc, test_many_locks_one_file);
	tcase_add_test(tc, test_hint_counters_cross_process);
}

int
main(void)
{
	return shm_test_run("shm-locks", add_tests);
}
