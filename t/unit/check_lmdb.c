/*
 * The LMDB usmbd links (Debian's 0.9.24 with the patches in deps/lmdb):
 * a write transaction in steady state allocates nothing (the reclaimed-page
 * list is kept from one write transaction to the next instead of freed and
 * allocated again), and the patch changes no result: random puts, deletes
 * and aborted transactions, with a reader pinning old pages now and then,
 * read back exactly as a model says, and closing the environment frees
 * what was kept (LeakSanitizer runs at exit of this ASan build).
 *
 * Allocations are counted with the sanitizer's malloc hook, which sees
 * every malloc, calloc and realloc of the process.
 */
#include <check.h>
#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define NKEYS	512

/* The sanitizer runtime's hook (sanitizer/allocator_interface.h, which
 * gcc 12 does not install; the function is in libasan). */
int __sanitizer_install_malloc_and_free_hooks(
    void (*)(const volatile void *, size_t), void (*)(const volatile void *));

static volatile unsigned long	lm_mallocs;
static int			lm_counting;

static void
lm_malloc_hook(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	if (lm_counting)
		lm_mallocs++;
}

static void
lm_free_hook(const volatile void *p)
{
	(void)p;
}

struct lm {
	char	 dir[64];
	MDB_env	*env;
	MDB_dbi	 dbi;
	uint32_t model[NKEYS];	/* 0 = absent, else the value stored */
	uint64_t rng;
	int	 bad;		/* line of the first failed check in lm_write */
};

static uint32_t
lm_rand(struct lm *m)
{
	m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(m->rng >> 33);
}

static void
lm_open(struct lm *m)
{
	MDB_txn *txn;

	memset(m, 0, sizeof(*m));
	m->rng = 12345;
	strcpy(m->dir, "/tmp/usmbd-check-lmdb.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(m->dir));
	ck_assert_int_eq(mdb_env_create(&m->env), 0);
	ck_assert_int_eq(mdb_env_set_mapsize(m->env, 64UL << 20), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(m->env, 2), 0);
	/* usmbd's own flags (shm/env.c) */
	ck_assert_int_eq(mdb_env_open(m->env, m->dir, MDB_WRITEMAP | MDB_NOSYNC |
	    MDB_NOMETASYNC | MDB_NOTLS, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(m->env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "t", MDB_CREATE, &m->dbi), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
}

static void
lm_close(struct lm *m)
{
	char path[128];

	mdb_env_close(m->env);
	snprintf(path, sizeof(path), "%s/data.mdb", m->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock.mdb", m->dir);
	unlink(path);
	rmdir(m->dir);
}

/* One write transaction of a few random puts and deletes; abort it
 * instead of committing when `abort_it`, leaving the model as it was. */
/* Check's assertions allocate (they report their location): inside the
 * counted loops a failure is only noted, and asserted after. */
#define LM_CHECK(m, x)	do { if (!(x) && (m)->bad == 0) (m)->bad = __LINE__; } while (0)

static void
lm_write(struct lm *m, int abort_it)
{
	uint32_t saved[NKEYS], k, v;
	MDB_val key, val;
	MDB_txn *txn;
	int i, rc;

	memcpy(saved, m->model, sizeof(saved));
	LM_CHECK(m, mdb_txn_begin(m->env, NULL, 0, &txn) == 0);
	if (m->bad)
		return;
	for (i = 0; i < 4; i++) {
		k = lm_rand(m) % NKEYS;
		key.mv_size = sizeof(k);
		key.mv_data = &k;
		if (lm_rand(m) % 3 == 0) {
			rc = mdb_del(txn, m->dbi, &key, NULL);
			LM_CHECK(m, rc == 0 || rc == MDB_NOTFOUND);
			LM_CHECK(m, (rc == 0) == (m->model[k] != 0));
			m->model[k] = 0;
		} else {
			/* values of varying size, so pages split and merge */
			uint8_t buf[300];

			v = lm_rand(m) | 1;
			memset(buf, (int)(v & 0xff), sizeof(buf));
			memcpy(buf, &v, sizeof(v));
			val.mv_size = 4 + v % 296;
			val.mv_data = buf;
			LM_CHECK(m, mdb_put(txn, m->dbi, &key, &val, 0) == 0);
			m->model[k] = v;
		}
	}
	if (abort_it) {
		mdb_txn_abort(txn);
		memcpy(m->model, saved, sizeof(saved));
	} else {
		LM_CHECK(m, mdb_txn_commit(txn) == 0);
	}
}

static void
lm_verify(struct lm *m)
{
	MDB_cursor *cu;
	MDB_val key, val;
	MDB_txn *txn;
	uint32_t k, v, seen = 0, want = 0;
	int rc;

	for (k = 0; k < NKEYS; k++)
		want += m->model[k] != 0;
	ck_assert_int_eq(mdb_txn_begin(m->env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(mdb_cursor_open(txn, m->dbi, &cu), 0);
	while ((rc = mdb_cursor_get(cu, &key, &val, seen ? MDB_NEXT : MDB_FIRST)) == 0) {
		ck_assert_uint_eq(key.mv_size, sizeof(k));
		memcpy(&k, key.mv_data, sizeof(k));
		ck_assert_uint_lt(k, NKEYS);
		ck_assert_uint_ge(val.mv_size, 4);
		memcpy(&v, val.mv_data, sizeof(v));
		ck_assert_uint_eq(v, m->model[k]);
		ck_assert_uint_eq(val.mv_size, 4 + v % 296);
		seen++;
	}
	ck_assert_int_eq(rc, MDB_NOTFOUND);
	ck_assert_uint_eq(seen, want);
	mdb_cursor_close(cu);
	mdb_txn_abort(txn);
}

START_TEST(test_steady_state_no_alloc)
{
	static struct lm m;
	int i;

	__sanitizer_install_malloc_and_free_hooks(lm_malloc_hook, lm_free_hook);
	lm_open(&m);
	/* warm-up: the database, the freelist and the kept list grow */
	for (i = 0; i < 2000; i++)
		lm_write(&m, 0);
	lm_verify(&m);
	lm_mallocs = 0;
	lm_counting = 1;
	for (i = 0; i < 2000; i++)
		lm_write(&m, i % 10 == 9);
	lm_counting = 0;
	ck_assert_msg(m.bad == 0, "check at line %d failed", m.bad);
	/* stock 0.9.24 allocates the list in every write transaction that
	 * reuses freed pages: about one per transaction here */
	ck_assert_msg(lm_mallocs == 0, "%lu allocations in 2000 write transactions",
	    lm_mallocs);
	lm_verify(&m);
	lm_close(&m);
}
END_TEST

/* A process that opens an environment someone else filled (a worker
 * started after others wrote the state) allocates nothing either, from its
 * first write transaction on: the kept list and the page mdb_page_split
 * copies into are allocated at mdb_env_open (deps/lmdb/prime-spares.patch),
 * not by the first transaction that needs them. */
START_TEST(test_reopened_env_no_alloc)
{
	static struct lm m;
	MDB_txn *txn;
	int i;

	__sanitizer_install_malloc_and_free_hooks(lm_malloc_hook, lm_free_hook);
	lm_open(&m);
	for (i = 0; i < 2000; i++)
		lm_write(&m, 0);
	mdb_env_close(m.env);
	ck_assert_int_eq(mdb_env_create(&m.env), 0);
	ck_assert_int_eq(mdb_env_set_mapsize(m.env, 64UL << 20), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(m.env, 2), 0);
	ck_assert_int_eq(mdb_env_open(m.env, m.dir, MDB_WRITEMAP | MDB_NOSYNC |
	    MDB_NOMETASYNC | MDB_NOTLS, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(m.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "t", 0, &m.dbi), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	lm_verify(&m);
	lm_mallocs = 0;
	lm_counting = 1;
	for (i = 0; i < 2000; i++)
		lm_write(&m, i % 10 == 9);
	lm_counting = 0;
	ck_assert_msg(m.bad == 0, "check at line %d failed", m.bad);
	ck_assert_msg(lm_mallocs == 0,
	    "%lu allocations in a reopened environment's first 2000 write "
	    "transactions", lm_mallocs);
	lm_verify(&m);
	lm_close(&m);
}
END_TEST

START_TEST(test_model_with_readers)
{
	static struct lm m;
	MDB_txn *r = NULL;
	int i;

	lm_open(&m);
	for (i = 0; i < 6000; i++) {
		/* a reader pins the pages of its snapshot for a while: the
		 * freed pages pile up, then are reused all at once */
		if (i % 500 == 0) {
			if (r != NULL)
				mdb_txn_abort(r);
			ck_assert_int_eq(mdb_txn_begin(m.env, NULL, MDB_RDONLY, &r), 0);
		}
		if (i % 500 == 250 && r != NULL) {
			mdb_txn_abort(r);
			r = NULL;
		}
		lm_write(&m, lm_rand(&m) % 7 == 0);
		if (i % 250 == 0) {
			ck_assert_msg(m.bad == 0, "check at line %d failed", m.bad);
			lm_verify(&m);
		}
	}
	if (r != NULL)
		mdb_txn_abort(r);
	lm_verify(&m);
	lm_close(&m);
}
END_TEST

/*
 * A writer that dies holding the writer lock (a robust mutex: LMDB's
 * mdb_mutex_failed recovers it): the next writer gets it, whether it
 * comes after the death or already waits, and the dead one's uncommitted
 * put is gone.  Any change to how the lock is taken must keep this.
 * Each process opens its own env, as LMDB wants after fork.
 */
static void
lm_child_env(const char *dir, MDB_env **env, MDB_dbi *dbi)
{
	MDB_txn *txn;

	if (mdb_env_create(env) != 0 || mdb_env_set_mapsize(*env, 64UL << 20) ||
	    mdb_env_set_maxdbs(*env, 2) != 0 ||
	    mdb_env_open(*env, dir, MDB_WRITEMAP | MDB_NOSYNC | MDB_NOMETASYNC |
	    MDB_NOTLS, 0600) != 0 ||
	    mdb_txn_begin(*env, NULL, MDB_RDONLY, &txn) != 0 ||
	    mdb_dbi_open(txn, "t", 0, dbi) != 0 ||
	    mdb_txn_commit(txn) != 0)	/* an abort would drop the dbi */
		_exit(10);
}

/* A child that takes the writer lock, puts key 1 and waits to be killed. */
static pid_t
lm_holder(const char *dir)
{
	int fd[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		MDB_env *env;
		MDB_dbi dbi;
		MDB_txn *txn;
		uint32_t k = 1, v = 7;
		MDB_val key = { sizeof(k), &k }, val = { sizeof(v), &v };

		lm_child_env(dir, &env, &dbi);
		if (mdb_txn_begin(env, NULL, 0, &txn) != 0 ||
		    mdb_put(txn, dbi, &key, &val, 0) != 0)
			_exit(11);
		(void)write(fd[1], "x", 1);
		for (;;)
			pause();
	}
	close(fd[1]);
	ck_assert_int_eq(read(fd[0], &c, 1), 1);
	close(fd[0]);
	return pid;
}

/* A write txn of env that puts key k; 0 or the failing call's code. */
static int
lm_put_one(MDB_env *env, MDB_dbi dbi, uint32_t k)
{
	MDB_val key = { sizeof(k), &k }, val = { sizeof(k), &k };
	MDB_txn *txn;
	int rc;

	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0)
		return rc;
	if ((rc = mdb_put(txn, dbi, &key, &val, 0)) != 0) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

START_TEST(test_writer_dies_holding_lock)
{
	struct lm m;
	MDB_txn *txn;
	MDB_val key, val;
	uint32_t k = 1;
	pid_t holder, waiter;
	int st;

	lm_open(&m);
	/* after the death */
	holder = lm_holder(m.dir);
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &st, 0), holder);
	ck_assert_int_eq(lm_put_one(m.env, m.dbi, 2), 0);
	/* while waiting: a second child blocks on the lock, then the
	 * holder dies */
	holder = lm_holder(m.dir);
	waiter = fork();
	ck_assert_int_ge(waiter, 0);
	if (waiter == 0) {
		MDB_env *env;
		MDB_dbi dbi;

		alarm(20);
		lm_child_env(m.dir, &env, &dbi);
		_exit(lm_put_one(env, dbi, 3) == 0 ? 0 : 12);
	}
	usleep(200 * 1000);
	ck_assert_int_eq(waitpid(waiter, &st, WNOHANG), 0);	/* it waits */
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &st, 0), holder);
	ck_assert_int_eq(waitpid(waiter, &st, 0), waiter);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* the survivors' puts are there, the dead holders' is not */
	ck_assert_int_eq(mdb_txn_begin(m.env, NULL, MDB_RDONLY, &txn), 0);
	key.mv_size = sizeof(k);
	key.mv_data = &k;
	ck_assert_int_eq(mdb_get(txn, m.dbi, &key, &val), MDB_NOTFOUND);
	k = 2;
	ck_assert_int_eq(mdb_get(txn, m.dbi, &key, &val), 0);
	k = 3;
	ck_assert_int_eq(mdb_get(txn, m.dbi, &key, &val), 0);
	mdb_txn_abort(txn);
	ck_assert_int_eq(lm_put_one(m.env, m.dbi, 4), 0);
	lm_close(&m);
}
END_TEST

/*
 * A hostile writer of the data file (any process of the state group can
 * write it: shm/env.c opens it MDB_WRITEMAP, 0660) rewrites every record
 * of the freelist through its own mapping: how names what each entry
 * becomes.  Returns what the next write transaction that reuses freed
 * pages says (verify-freelist.patch: MDB_CORRUPTED, never a page written
 * outside the map).
 */
enum { LM_PAST_END, LM_META, LM_COUNT };

static int
lm_hostile_freelist(int how)
{
	struct lm m;
	MDB_cursor *cu;
	MDB_txn *txn;
	MDB_val key, val;
	uint32_t k;
	uint8_t buf[300];
	int i, n = 0, rc = 0;

	lm_open(&m);
	for (i = 0; i < 400; i++)
		lm_write(&m, 0);
	ck_assert_int_eq(m.bad, 0);
	ck_assert_int_eq(mdb_txn_begin(m.env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(mdb_cursor_open(txn, 0, &cu), 0);	/* FREE_DBI */
	while (mdb_cursor_get(cu, &key, &val, n ? MDB_NEXT : MDB_FIRST) == 0) {
		size_t *idl = val.mv_data, j;

		for (j = 1; j <= idl[0]; j++)
			idl[j] = how == LM_META ? 1 : ((size_t)1 << 30) + idl[0] - j;
		if (how == LM_COUNT)
			idl[0] = ((size_t)1 << 32) + 1;
		n++;
	}
	mdb_cursor_close(cu);
	mdb_txn_abort(txn);
	ck_assert_int_gt(n, 0);
	/* writes that need pages until one takes the freelist's */
	memset(buf, 7, sizeof(buf));
	for (i = 0; i < 50 && rc == 0; i++) {
		ck_assert_int_eq(mdb_txn_begin(m.env, NULL, 0, &txn), 0);
		for (k = 0; k < NKEYS && rc == 0; k++) {
			key.mv_size = sizeof(k);
			key.mv_data = &k;
			val.mv_size = sizeof(buf);
			val.mv_data = buf;
			rc = mdb_put(txn, m.dbi, &key, &val, 0);
		}
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	lm_close(&m);
	return rc;
}

START_TEST(test_hostile_freelist)
{
	ck_assert_int_eq(lm_hostile_freelist(LM_PAST_END), MDB_CORRUPTED);
	ck_assert_int_eq(lm_hostile_freelist(LM_META), MDB_CORRUPTED);
	ck_assert_int_eq(lm_hostile_freelist(LM_COUNT), MDB_CORRUPTED);
}
END_TEST

static Suite *
lmdb_suite(void)
{
	Suite *s = suite_create("lmdb");
	TCase *tc = tcase_create("lmdb");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_steady_state_no_alloc);
	tcase_add_test(tc, test_reopened_env_no_alloc);
	tcase_add_test(tc, test_model_with_readers);
	tcase_add_test(tc, test_writer_dies_holding_lock);
	tcase_add_test(tc, test_hostile_freelist);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lmdb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
