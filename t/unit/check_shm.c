/*
 * The shared state layer: share modes, byte-range locks, leases, durable
 * handles, crash purge and worker messages.  Cross-process cases use real
 * processes: each child opens the env itself after fork (an LMDB handle is
 * never used across fork).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/shm.h"

static char tdir[64];

static void
rm_tree(const char *dir)
{
	char p[1024], m[256];
	DIR *d;
	struct dirent *e;

	snprintf(m, sizeof(m), "%s/msg", dir);
	if ((d = opendir(m)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", m, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(m);
	snprintf(p, sizeof(p), "%s/state.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/state.mdb-lock", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/state.hint", dir);
	unlink(p);
	rmdir(dir);
}

static struct shm *
make_env(size_t map)
{
	struct shm *s;
	int rc;

	snprintf(tdir, sizeof(tdir), "/tmp/check_shm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	rc = shm_attach(tdir, map, shm_readers_for(8), SHM_CREATE, &s);
	ck_assert_int_eq(rc, 0);
	return s;
}

static void
drop_env(struct shm *s)
{
	shm_detach(s);
	rm_tree(tdir);
}

static struct shm_open_rec
mkopen(uint64_t id, uint32_t access, uint32_t share)
{
	struct shm_open_rec r;

	memset(&r, 0, sizeof(r));
	r.persistent_id = id;
	r.pid = getpid();
	r.session_id = 7;
	r.access = access;
	r.share_access = share;
	return r;
}

#define RD	SHM_FILE_READ_DATA
#define WR	SHM_FILE_WRITE_DATA
#define DEL	SHM_DELETE
#define ATTR	0x00000080u	/* FILE_READ_ATTRIBUTES */
#define S_R	SHM_FILE_SHARE_READ
#define S_W	SHM_FILE_SHARE_WRITE
#define S_D	SHM_FILE_SHARE_DELETE
#define S_ALL	(S_R | S_W | S_D)

static const struct shm_file_id F1 = { 0x801, 0x1234 };
static const struct shm_file_id F2 = { 0x801, 0x1235 };

/* Can an open (a2, s2) join an existing (a1, s1)? */
static int
pair(struct shm *s, uint32_t a1, uint32_t s1, uint32_t a2, uint32_t s2)
{
	static uint64_t id = 100;
	struct shm_open_rec o1 = mkopen(++id, a1, s1), o2 = mkopen(++id, a2, s2);
	int rc;

	ck_assert_int_eq(shm_open_insert(s, &F1, &o1, NULL), 0);
	rc = shm_open_insert(s, &F1, &o2, NULL);
	if (rc == 0)
		ck_assert_int_eq(shm_open_remove(s, &F1, o2.persistent_id, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, o1.persistent_id, NULL), 0);
	return rc;
}

START_TEST(test_share_matrix)
{
	struct shm *s = make_env(0);

	ck_assert_int_eq(pair(s, RD, S_R, RD, S_R), 0);
	ck_assert_int_eq(pair(s, RD, S_R, WR, S_R | S_W), -EBUSY);
	ck_assert_int_eq(pair(s, RD, S_R | S_W, WR, S_R | S_W), 0);
	ck_assert_int_eq(pair(s, WR, S_R, RD, S_R), -EBUSY);	/* new denies write */
	ck_assert_int_eq(pair(s, WR, S_R, RD, S_R | S_W), 0);
	ck_assert_int_eq(pair(s, RD, S_R | S_W, DEL, S_ALL), -EBUSY);
	ck_assert_int_eq(pair(s, RD, S_ALL, DEL, S_ALL), 0);
	ck_assert_int_eq(pair(s, DEL, S_ALL, RD, S_R | S_W), -EBUSY);
	ck_assert_int_eq(pair(s, SHM_FILE_APPEND_DATA, S_R, RD, S_R), -EBUSY);
	ck_assert_int_eq(pair(s, SHM_FILE_EXECUTE, S_W, RD, S_ALL), -EBUSY);
	/* Attribute-only opens never conflict, either way round. */
	ck_assert_int_eq(pair(s, RD | WR | DEL, 0, ATTR, 0), 0);
	ck_assert_int_eq(pair(s, ATTR, 0, RD | WR | DEL, 0), 0);
	ck_assert_int_eq(pair(s, ATTR | 0x100000, 0, ATTR, 0), 0);	/* SYNCHRONIZE */
	drop_env(s);
}
END_TEST

START_TEST(test_conflict_details)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(11, RD | WR, 0), b = mkopen(12, RD, S_ALL);
	struct shm_open_conflict cf;
	int n;

	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	/* Another file is independent. */
	ck_assert_int_eq(shm_open_insert(s, &F2, &b, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, &cf), -EBUSY);
	ck_assert_uint_eq(cf.persistent_id, 11);
	ck_assert_int_eq(cf.pid, getpid());
	ck_assert_uint_eq(cf.access, RD | WR);
	ck_assert_uint_eq(cf.share_access, 0);
	/* The same persistent id twice is refused. */
	ck_assert_int_eq(shm_open_insert(s, &F2, &b, NULL), -EEXIST);
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 99, NULL), -ENOENT);
	drop_env(s);
}
END_TEST

START_TEST(test_delete_pending)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(21, RD | DEL, S_ALL), b = mkopen(22, RD, S_ALL);
	struct shm_open_rec c = mkopen(23, RD, S_ALL);
	struct shm_close_result cr;
	int on;

	a.create_options = SHM_FILE_DELETE_ON_CLOSE;
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 21, &cr), 0);
	ck_assert_int_eq(cr.last_close, 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, &on), 0);
	ck_assert_int_eq(on, 1);
	/* A new open of a delete-pending file fails. */
	ck_assert_int_eq(shm_open_insert(s, &F1, &c, NULL), -EIDRM);
	ck_assert_int_eq(shm_open_remove(s, &F1, 22, &cr), 0);
	ck_assert_int_eq(cr.last_close, 1);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, &on), 0);
	ck_assert_int_eq(on, 0);
	/* Set and cleared explicitly (SET_INFO disposition). */
	ck_assert_int_eq(shm_open_insert(s, &F1, &c, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 1), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 0), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 23, &cr), 0);
	ck_assert_int_eq(cr.last_close, 1);
	ck_assert_int_eq(cr.delete_file, 0);
	drop_env(s);
}
END_TEST

START_TEST(test_write_txns_per_pair)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(0, RD | WR, S_R);
	unsigned long before;

	ck_assert_int_eq(shm_id_alloc(s, &a.persistent_id), 0);
	ck_assert_uint_ne(a.persistent_id, 0);
	before = shm_write_count(s);
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1,
	    &(struct shm_brlock_owner){ getpid(), a.persistent_id }, 0, 100, 1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	ck_assert_uint_eq(shm_write_count(s) - before, 2);
	drop_env(s);
}
END_TEST

/* ---- processes ---- */

struct kid {
	pid_t	pid;
	int	to[2];		/* parent -> child */
	int	from[2];	/* child -> parent */
};

static void
kid_start(struct kid *k, void (*fn)(struct kid *))
{
	ck_assert_int_eq(pipe(k->to), 0);
	ck_assert_int_eq(pipe(k->from), 0);
	k->pid = fork();
	ck_assert_int_ne(k->pid, -1);
	if (k->pid == 0) {
		close(k->to[1]);
		close(k->from[0]);
		fn(k);
		_exit(0);
	}
	close(k->to[0]);
	close(k->from[1]);
}

/* A child's report: one int, within 10 s. */
static int
kid_read(struct kid *k)
{
	struct pollfd p = { k->from[0], POLLIN, 0 };
	int v = -9999;

	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	ck_assert_int_eq(read(k->from[0], &v, sizeof(v)), sizeof(v));
	return v;
}

static void
kid_say(int fd, int v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

static int
kid_wait(int fd)
{
	int v = -1;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		_exit(0);	/* parent gone */
	return v;
}

static int
kid_exit(struct kid *k)
{
	int st;

	ck_assert_int_eq(waitpid(k->pid, &st, 0), k->pid);
	close(k->to[1]);
	close(k->from[0]);
	return st;
}

static struct shm *
kid_attach(void)
{
	struct shm *s;

	if (shm_attach(tdir, 0, 0, 0, &s) != 0)
		_exit(2);
	return s;
}

/* Holds a deny-all open of F1 until killed. */
static void
kid_deny_all(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(1000 + getpid(), RD | WR | DEL, 0);

	kid_say(k->from[1], shm_open_insert(s, &F1, &o, NULL));
	for (;;)
		kid_wait(k->to[0]);
}

/* Tries a shared read open of F1 and reports. */
static void
kid_try_read(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(5000 + getpid(), RD, S_ALL);

	kid_say(k->from[1], shm_open_insert(s, &F1, &o, NULL));
	shm_detach(s);
}

START_TEST(test_two_process_sharing)
{
	struct shm *s = make_env(0);
	struct kid a, b, c;
	struct shm_purge_result pr;
	int st;

	kid_start(&a, kid_deny_all);
	ck_assert_int_eq(kid_read(&a), 0);
	kid_start(&b, kid_try_read);
	ck_assert_int_eq(kid_read(&b), -EBUSY);
	kid_exit(&b);
	/* The holder dies without closing: the master purges it. */
	kill(a.pid, SIGKILL);
	st = kid_exit(&a);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_uint_eq(pr.durable, 0);
	kid_start(&c, kid_try_read);
	ck_assert_int_eq(kid_read(&c), 0);
	kid_exit(&c);
	drop_env(s);
}
END_TEST

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
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 3, 0, &failed), -EAGAIN);
	ck_assert_uint_eq(failed, 2);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 1000, 20, 1), 0);
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 2, 0, &failed), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &o1, 1015, 1, 0), -EAGAIN);
	/* Overlap inside one request conflicts too. */
	rg[1].offset = 1005;
	rg[0].offset = 2000;
	rg[1].offset = 2005;
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &o2, rg, 2, 0, &failed), -EAGAIN);
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

	if (shm_wmsg_open(tdir, getpid(), &m) != 0)
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
	/* A second opener waits for the same break. */
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	req.flags = SHM_BREAK_SHARING;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_int_eq(br.b[0].in_progress, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_R);
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
	/* A write by b breaks a's R (H stays). */
	ck_assert_int_eq(shm_write_breaks(s, &F1, 43, 0, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert_uint_eq(br.b[0].new_level, SHM_LEASE_H);
	/* Attribute-only opens break nothing. */
	req.access = ATTR;
	req.flags = SHM_BREAK_TRUNCATE;
	ck_assert_int_eq(shm_open_breaks(s, &F1, &req, 0, &br), 0);
	ck_assert_uint_eq(br.n, 0);
	/* The lease lives while one of its opens does. */
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), -ENOENT);
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

/* ---- durable handles ---- */

static void
kid_durable(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(9001, RD | WR, S_R);
	struct shm_brlock_owner ow = { getpid(), 9001 };
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	int rc;

	snprintf(d->path, sizeof(d->path), "dir/file.txt");
	snprintf(d->share, sizeof(d->share), "data");
	snprintf(d->user, sizeof(d->user), "alice");
	memset(d->client_guid, 0xc1, SHM_GUID_LEN);
	memset(d->create_guid, 0xc2, SHM_GUID_LEN);
	d->flags = SHM_DURABLE_V2;
	d->timeout_ms = 60000;
	d->access = o.access;
	memcpy(o.client_guid, d->client_guid, SHM_GUID_LEN);
	rc = shm_open_insert_ex(s, &F1, &o, d, NULL, NULL);
	if (rc == 0)
		rc = shm_brlock_lock(s, &F1, &ow, 0, 10, SHM_BRL_EXCLUSIVE);
	kid_say(k->from[1], rc);
	for (;;)
		kid_wait(k->to[0]);
}

START_TEST(test_durable)
{
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_durable_claim cl;
	struct shm_purge_result pr;
	struct shm_open_rec r, w = mkopen(9002, WR, S_ALL);
	struct shm_brlock_owner me = { getpid(), 9002 };
	struct shm_pids wake;
	uint64_t t0;
	unsigned n;
	struct kid a;

	kid_start(&a, kid_durable);
	ck_assert_int_eq(kid_read(&a), 0);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 0);
	ck_assert_uint_eq(pr.durable, 1);
	ck_assert_uint_eq(pr.locks, 0);
	t0 = shm_now_ms();
	/* Kept: share mode, locks and the record, owned by nobody. */
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(r.pid, 0);
	ck_assert(r.flags & SHM_OPEN_DISCONNECTED);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), -EBUSY);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 0), -EAGAIN);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	ck_assert_str_eq(d->path, "dir/file.txt");
	ck_assert_str_eq(d->share, "data");
	ck_assert(d->flags & SHM_DURABLE_DISCONNECTED);
	ck_assert_uint_eq(d->fid.ino, F1.ino);

	/* Reclaim: wrong create GUID, wrong user, v1 for a v2 handle. */
	memset(&cl, 0, sizeof(cl));
	cl.user = "alice";
	cl.v2 = 1;
	cl.pid = getpid();
	cl.session_id = 77;
	memset(cl.client_guid, 0xc1, SHM_GUID_LEN);
	memset(cl.create_guid, 0xee, SHM_GUID_LEN);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -ENOENT);
	memset(cl.create_guid, 0xc2, SHM_GUID_LEN);
	cl.user = "bob";
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -EACCES);
	cl.user = "alice";
	cl.v2 = 0;
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -ENOENT);
	cl.v2 = 1;
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0 + 60000, d), -ENOENT);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), 0);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -EBUSY);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(r.pid, getpid());
	ck_assert_uint_eq(r.session_id, 77);
	/* The locks moved with it: the new owner may write its range. */
	ck_assert_int_eq(shm_brlock_check(s, &F1,
	    &(struct shm_brlock_owner){ getpid(), 9001 }, 0, 10, 1), 0);

	/* Disconnect again, then expire. */
	ck_assert_int_eq(shm_durable_disconnect(s, 9001, t0), 0);
	ck_assert_int_eq(shm_expire_durable(s, t0 + 59999, &n, &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shm_expire_durable(s, t0 + 60000, &n, &wake), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), -ENOENT);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), -ENOENT);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 1), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), 0);
	free(d);
	drop_env(s);
}
END_TEST

/* ---- sessions, workers, iteration ---- */

static int
count_session(const struct shm_session_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int
count_open(const struct shm_file_id *f, const struct shm_open_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

START_TEST(test_sessions_workers)
{
	struct shm *s = make_env(0);
	struct shm_session_rec r, g;
	struct shm_worker_rec w, wg;
	struct shm_purge_result pr;
	struct shm_open_rec o = mkopen(61, RD, S_ALL);
	int n = 0;

	memset(&r, 0, sizeof(r));
	r.session_id = 0x1000000000000001ull;
	r.pid = 31337;
	r.uid = 1001;
	snprintf(r.user, sizeof(r.user), "alice");
	snprintf(r.client_addr, sizeof(r.client_addr), "127.0.0.1:50000");
	r.dialect = 0x0311;
	r.signing = 1;
	r.encryption = 1;
	r.since = 1700000000;
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	r.session_id = 2;
	r.pid = getpid();
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	ck_assert_int_eq(shm_session_get(s, 0x1000000000000001ull, &g), 0);
	ck_assert_str_eq(g.user, "alice");
	ck_assert_str_eq(g.client_addr, "127.0.0.1:50000");
	ck_assert_uint_eq(g.dialect, 0x0311);
	ck_assert_int_eq(g.pid, 31337);
	ck_assert_int_eq(shm_foreach_session(s, count_session, &n), 0);
	ck_assert_int_eq(n, 2);

	memset(&w, 0, sizeof(w));
	w.pid = 31337;
	w.role = SHM_ROLE_WORKER;
	w.uid = 1001;
	snprintf(w.user, sizeof(w.user), "alice");
	w.nconn = 3;
	ck_assert_int_eq(shm_worker_put(s, &w), 0);
	ck_assert_int_eq(shm_worker_get(s, 31337, &wg), 0);
	ck_assert_uint_eq(wg.nconn, 3);
	o.pid = 31337;
	ck_assert_int_eq(shm_open_insert(s, &F2, &o, NULL), 0);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &n), 0);
	ck_assert_int_eq(n, 1);

	ck_assert_int_eq(shm_purge_worker(s, 31337, &pr), 0);
	ck_assert_uint_eq(pr.sessions, 1);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_int_eq(shm_session_get(s, 0x1000000000000001ull, &g), -ENOENT);
	ck_assert_int_eq(shm_session_get(s, 2, &g), 0);
	ck_assert_int_eq(shm_worker_get(s, 31337, &wg), -ENOENT);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(shm_session_del(s, 2), 0);
	ck_assert_int_eq(shm_session_del(s, 2), -ENOENT);
	drop_env(s);
}
END_TEST

/* ---- a full map ---- */

START_TEST(test_map_full)
{
	struct shm *s = make_env(256 * 1024), *s2;
	struct shm_session_rec r, g;
	struct shm_open_rec o = mkopen(71, RD, S_ALL);
	uint64_t i, last = 0;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	memset(r.user, 'u', sizeof(r.user) - 1);
	for (i = 1; i < 100000 && rc == 0; i++) {
		r.session_id = i;
		rc = shm_session_put(s, &r);
		if (rc == 0)
			last = i;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_gt(last, 10);
	/* Nothing half written; what was there is intact and readable. */
	ck_assert_int_eq(shm_session_get(s, last + 1, &g), -ENOENT);
	ck_assert_int_eq(shm_session_get(s, last, &g), 0);
	ck_assert_str_eq(g.user, r.user);
	/* Freeing room makes the env writable again. */
	for (i = 1; i <= 20; i++)
		ck_assert_int_eq(shm_session_del(s, i), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 71, NULL), 0);
	/* And another process can still open it. */
	ck_assert_int_eq(shm_attach(tdir, 256 * 1024, 0, 0, &s2), 0);
	ck_assert_int_eq(shm_session_get(s2, last, &g), 0);
	shm_detach(s2);
	drop_env(s);
}
END_TEST

/* ---- worker messages ---- */

/* ---- the cheap paths: one value per file, shared hint counters ---- */

static int
count_f1(const struct shm_file_id *fid, const struct shm_open_rec *r, void *arg)
{
	if (fid->dev == F1.dev && fid->ino == F1.ino)
		(*(int *)arg)++;
	return 0;
}

/* More opens of one file than the handle's preallocated scratch holds. */
START_TEST(test_many_opens_one_file)
{
	struct shm *s = make_env(0);
	struct shm_close_result cr;
	struct shm_open_rec o, g;
	const int N = 150;
	int i, n = 0;

	for (i = 0; i < N; i++) {
		o = mkopen(1000 + i, RD | WR, S_ALL);
		ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	}
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, N);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_f1, &n), 0);
	ck_assert_int_eq(n, N);
	ck_assert_int_eq(shm_open_get(s, &F1, 1000 + N / 2, &g), 0);
	ck_assert_uint_eq(g.access, RD | WR);
	ck_assert_int_eq(g.pid, getpid());
	/* A deny-write open now conflicts with all of them. */
	o = mkopen(5000, RD, S_R);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), -EBUSY);
	/* Middle, first, last...: each close keeps the others. */
	for (i = 0; i < N; i++) {
		uint64_t id = 1000 + (uint64_t)((i * 37) % N);

		ck_assert_int_eq(shm_open_remove(s, &F1, id, &cr), 0);
		ck_assert_int_eq(cr.last_close, i == N - 1);
		ck_assert_int_eq(shm_open_get(s, &F1, id, &g), -ENOENT);
	}
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
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

/* A handle inherited across fork is refused (no getpid() per transaction). */
START_TEST(test_handle_after_fork)
{
	struct shm *s = make_env(0);
	pid_t p;
	int st, n;

	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	p = fork();
	ck_assert_int_ne(p, -1);
	if (p == 0)
		_exit(shm_open_count(s, &F1, &n) == -EINVAL ? 0 : 1);
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(shm_self(s), getpid());
	drop_env(s);
}
END_TEST

START_TEST(test_wmsg)
{
	struct shm *s = make_env(0);
	struct shm_wmsg *a, *b;
	struct shm_wmsg_msg m, got;
	struct sockaddr_un sa;
	int fd;

	ck_assert_int_eq(shm_wmsg_open(tdir, 111111, &a), 0);
	ck_assert_int_eq(shm_wmsg_open(tdir, 222222, &b), 0);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), -EAGAIN);
	memset(&m, 0, sizeof(m));
	m.type = SHM_WMSG_NOTIFY;
	m.fid = F2;
	m.action = 1;
	m.filter = 0x3;
	snprintf(m.name, sizeof(m.name), "caf\xc3\xa9.txt");
	ck_assert_int_eq(shm_wmsg_send(a, 222222, &m), 0);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), 0);
	ck_assert_int_eq(got.type, SHM_WMSG_NOTIFY);
	ck_assert_int_eq(got.from, getpid());
	ck_assert_uint_eq(got.fid.ino, F2.ino);
	ck_assert_str_eq(got.name, m.name);
	ck_assert_uint_eq(got.filter, 3);
	m.type = SHM_WMSG_BREAK;
	m.is_lease = 1;
	memset(m.lease_key, 0x5a, SHM_GUID_LEN);
	m.level = SHM_LEASE_R;
	m.epoch = 3;
	ck_assert_int_eq(shm_wmsg_send(b, 111111, &m), 0);
	ck_assert_int_eq(shm_wmsg_recv(a, &got), 0);
	ck_assert_int_eq(got.is_lease, 1);
	ck_assert_uint_eq(got.lease_key[15], 0x5a);
	ck_assert_uint_eq(got.epoch, 3);
	/* A peer that does not exist. */
	ck_assert_int_eq(shm_wmsg_send(a, 333333, &m), -ENOENT);
	/* Garbage is refused, not half decoded. */
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/msg/222222", tdir);
	ck_assert_int_eq(sendto(fd, "Wxyz", 4, 0, (struct sockaddr *)&sa, sizeof(sa)), 4);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), -EBADMSG);
	close(fd);
	shm_wmsg_close(a);
	shm_wmsg_close(b);
	drop_env(s);
}
END_TEST

START_TEST(test_attach_without_create)
{
	struct shm *s;

	snprintf(tdir, sizeof(tdir), "/tmp/check_shm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	ck_assert_int_ne(shm_attach(tdir, 0, 0, 0, &s), 0);
	ck_assert_ptr_null(s);
	rm_tree(tdir);
}
END_TEST

static Suite *
shm_suite(void)
{
	Suite *su = suite_create("shm");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_share_matrix);
	tcase_add_test(tc, test_conflict_details);
	tcase_add_test(tc, test_delete_pending);
	tcase_add_test(tc, test_write_txns_per_pair);
	tcase_add_test(tc, test_two_process_sharing);
	tcase_add_test(tc, test_brlock_semantics);
	tcase_add_test(tc, test_brlock_close_wakes);
	tcase_add_test(tc, test_brlock_cross_process);
	tcase_add_test(tc, test_purge_wakes_waiters);
	tcase_add_test(tc, test_leases);
	tcase_add_test(tc, test_oplocks);
	tcase_add_test(tc, test_durable);
	tcase_add_test(tc, test_sessions_workers);
	tcase_add_test(tc, test_map_full);
	tcase_add_test(tc, test_wmsg);
	tcase_add_test(tc, test_attach_without_create);
	tcase_add_test(tc, test_many_opens_one_file);
	tcase_add_test(tc, test_many_locks_one_file);
	tcase_add_test(tc, test_hint_counters_cross_process);
	tcase_add_test(tc, test_handle_after_fork);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(shm_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
