/*
 * The shared state's rules for POSIX opens (SMB3 POSIX extensions): a
 * delete-pending name goes at the close that leaves only POSIX opens of
 * it (SHM_OPEN_POSIX), and POSIX byte-range locks (an owner's locks
 * merged and split as fcntl's, advisory for POSIX I/O, binding for
 * Windows handles).  The rest of the layer is check_shm.c and
 * check_shm_locks.c.
 */
#include "shm_test.h"

START_TEST(test_posix_delete)
{
	struct shm *s = make_env(0);
	struct shm_open_rec p1 = mkopen(41, RD, S_ALL);
	struct shm_open_rec p2 = mkopen(42, RD | DEL, S_ALL);
	struct shm_open_rec w1 = mkopen(43, RD, S_ALL);
	struct shm_open_rec again = mkopen(44, RD, S_ALL);
	struct shm_close_result cr;
	int on;

	p1.link = p2.link = w1.link = again.link = 0x4444;
	p1.flags = p2.flags = again.flags = SHM_OPEN_POSIX;
	p2.create_options = SHM_FILE_DELETE_ON_CLOSE;
	/* rm of a file another POSIX open holds: the name goes now */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &p2, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	/* ... and is no longer delete pending: the last close deletes none */
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 41, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(cr.last_close, 1);

	/* a Windows open of the name holds it back: Windows semantics */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &p2, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &again, NULL), -EIDRM);
	/* ... until its close, which leaves only the POSIX one */
	ck_assert_int_eq(shm_open_remove(s, &F1, 43, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);

	/* disposition set by a Windows open, only POSIX opens left */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	w1.access |= DEL;
	ck_assert_int_eq(shm_open_insert(s, &F1, &w1, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 43, 1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 43, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(cr.last_close, 1);
	drop_env(s);
}
END_TEST

struct brl_seen {
	unsigned	n;
	uint64_t	off[8], len[8];
	int		excl[8];
};

static int
brl_collect(const struct shm_file_id *fid, const struct shm_brlock_rec *l,
    void *arg)
{
	struct brl_seen *b = arg;

	if (fid->ino == F1.ino && b->n < 8) {
		b->off[b->n] = l->offset;
		b->len[b->n] = l->length;
		b->excl[b->n] = l->exclusive;
		b->n++;
	}
	return 0;
}

/* F1's locks, by offset: "off+len/x|s ..." */
static const char *
brl_list(struct shm *s)
{
	static char out[256];
	struct brl_seen b = { 0 };
	size_t used = 0;
	unsigned i, j, k;

	ck_assert_int_eq(shm_foreach_brlock(s, brl_collect, &b), 0);
	out[0] = '\0';
	for (k = 0; k < b.n; k++) {
		for (i = 0, j = 0; i < b.n; i++)
			if (b.off[i] < b.off[j] || b.len[j] == UINT64_MAX - 1)
				j = i;
		used += (size_t)snprintf(out + used, sizeof(out) - used,
		    "%s%llu+%llu/%c", k ? " " : "",
		    (unsigned long long)b.off[j], (unsigned long long)b.len[j],
		    b.excl[j] ? 'x' : 's');
		b.off[j] = UINT64_MAX;
		b.len[j] = UINT64_MAX - 1;
	}
	return out;
}

START_TEST(test_posix_locks)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner p1 = { getpid(), 51 }, p2 = { getpid(), 52 };
	struct shm_brlock_owner w = { getpid(), 53 };
	const unsigned X = SHM_BRL_EXCLUSIVE | SHM_BRL_POSIX, S = SHM_BRL_POSIX;

	/* the owner's own locks merge, and never conflict */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 0, 10, X), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 10, 10, X), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 5, 3, X), 0);
	ck_assert_str_eq(brl_list(s), "0+20/x");
	/* another POSIX owner conflicts; its I/O passes, a Windows one not */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 19, 5, S), -EAGAIN);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &p2, 0, 5, 1 | SHM_BRL_POSIX),
	    0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &w, 0, 5, 0), -EAGAIN);
	/* a shared lock inside splits it: x, s, x */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 5, 5, S), 0);
	ck_assert_str_eq(brl_list(s), "0+5/x 5+5/s 10+10/x");
	ck_assert_int_eq(shm_brlock_check(s, &F1, &w, 5, 5, 0), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &w, 5, 5, 1), -EAGAIN);
	/* an unlock across pieces frees just that; an empty one is fine */
	ck_assert_int_eq(shm_brlock_unlock_posix(s, &F1, &p1, 3, 10, NULL), 0);
	ck_assert_str_eq(brl_list(s), "0+3/x 13+7/x");
	ck_assert_int_eq(shm_brlock_unlock_posix(s, &F1, &p1, 100, 10, NULL), 0);
	ck_assert_int_eq(shm_brlock_unlock(s, &F1, &p1, 100, 10, NULL), -ENOENT);
	/* the same type again joins what it touches */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 3, 10, X), 0);
	ck_assert_str_eq(brl_list(s), "0+20/x");
	/* a Windows lock meets POSIX ones with the Windows rules */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &w, 15, 10, 0), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &w, 20, 10, 0), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 25, 1, X), -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 25, 1, S), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &p1, 25, 1, 1 | SHM_BRL_POSIX),
	    -EAGAIN);
	/* all of the owner's locks go with one unlock */
	ck_assert_int_eq(shm_brlock_unlock_posix(s, &F1, &p1, 0, 1000, NULL), 0);
	ck_assert_str_eq(brl_list(s), "20+10/s 25+1/s");
	drop_env(s);
}
END_TEST

/* A shared lock over the owner's own exclusive bytes wakes the waiters. */
START_TEST(test_posix_downgrade_wakes)
{
	struct shm *s = make_env(0);
	struct shm_brlock_owner p1 = { getpid(), 61 }, p2 = { getpid(), 62 };
	const unsigned X = SHM_BRL_EXCLUSIVE | SHM_BRL_POSIX, S = SHM_BRL_POSIX;
	struct shm_brlock_range sh = { 0, 10, 0 }, ex = { 20, 5, 1 };
	struct shm_pids wake;
	unsigned failed;

	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p1, 0, 100, X), 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 0, 10, S | SHM_BRL_WAIT),
	    -EAGAIN);
	/* the downgrade of 0-9: the waiter is told, and then gets it */
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &p1, &sh, 1, S, &failed,
	    &wake), 0);
	ck_assert_str_eq(brl_list(s), "0+10/s 10+90/x");
	ck_assert_uint_eq(wake.n, 1);
	ck_assert_int_eq(wake.pid[0], getpid());
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 0, 10, S), 0);
	/* an exclusive lock over its own, or shared over shared: nobody */
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 20, 5, S | SHM_BRL_WAIT),
	    -EAGAIN);
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &p1, &ex, 1, S, &failed,
	    &wake), 0);
	ck_assert_uint_eq(wake.n, 0);
	ck_assert_int_eq(shm_brlock_lock_many(s, &F1, &p1, &sh, 1, S, &failed,
	    &wake), 0);
	ck_assert_uint_eq(wake.n, 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &p2, 20, 5, S), -EAGAIN);
	drop_env(s);
}
END_TEST

static Suite *
shm_posix_suite(void)
{
	Suite *su = suite_create("shm_posix");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_posix_delete);
	tcase_add_test(tc, test_posix_locks);
	tcase_add_test(tc, test_posix_downgrade_wakes);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(shm_posix_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
