/*
 * The master's session table (daemon/msess.c): the first worker to claim
 * an id keeps it, a worker's share is bounded, a dead worker's sessions
 * go, and the open-addressing table stays consistent through many inserts
 * and removals (checked against a plain list).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/msess.h"

static unsigned	held[1024];	/* per fake worker pid */

START_TEST(test_first_claim_keeps)
{
	pid_t pid;
	uid_t uid;

	ck_assert_int_eq(msess_up(100, 1001, 0x1234, &held[100]), 0);
	/* again: fine */
	ck_assert_int_eq(msess_up(100, 1001, 0x1234, &held[100]), 0);
	/* another worker (alice's) cannot take bob's id */
	ck_assert_int_eq(msess_up(200, 1002, 0x1234, &held[200]), -EEXIST);
	/* nor the same worker under another uid */
	ck_assert_int_eq(msess_up(100, 1002, 0x1234, &held[100]), -EEXIST);
	ck_assert_int_eq(msess_find(0x1234, &pid, &uid), 0);
	ck_assert_int_eq(pid, 100);
	ck_assert_uint_eq(uid, 1001);
	/* only its holder ends it */
	msess_down(200, 0x1234, &held[200]);
	ck_assert_int_eq(msess_find(0x1234, &pid, &uid), 0);
	msess_down(100, 0x1234, &held[100]);
	ck_assert_int_eq(msess_find(0x1234, &pid, &uid), -ENOENT);
	ck_assert_int_eq(msess_up(100, 1001, 0, &held[100]), -EINVAL);
}
END_TEST

START_TEST(test_worker_share_and_death)
{
	pid_t pid;
	uid_t uid;
	uint64_t i;

	for (i = 1; i <= MSESS_PER_WORKER; i++)
		ck_assert_int_eq(msess_up(300, 1003, 0x300000000ull + i,
		    &held[300]), 0);
	ck_assert_int_eq(msess_up(300, 1003, 0x3ffffffffull, &held[300]), -ENOSPC);
	ck_assert_int_eq(msess_up(301, 1004, 0x3ffffffffull, &held[301]), 0);
	ck_assert_uint_eq(msess_count(300), MSESS_PER_WORKER);
	msess_child_gone(300);
	held[300] = 0;
	ck_assert_uint_eq(msess_count(300), 0);
	for (i = 1; i <= MSESS_PER_WORKER; i++)
		ck_assert_int_eq(msess_find(0x300000000ull + i, &pid, &uid),
		    -ENOENT);
	ck_assert_int_eq(msess_find(0x3ffffffffull, &pid, &uid), 0);
	ck_assert_int_eq(pid, 301);
	msess_child_gone(301);
	held[301] = 0;
}
END_TEST

START_TEST(test_random_against_list)
{
	enum { N = 20000 };
	static uint64_t ids[N];
	static int live[N];
	pid_t pid;
	uid_t uid;
	unsigned i, k;

	srandom(42);
	for (i = 0; i < N; i++) {
		/* small ids too: clustered home slots, long probe runs */
		ids[i] = (i & 1) ? ((uint64_t)random() << 31 | (uint64_t)random()) :
		    (uint64_t)(i + 1);
		ck_assert_int_eq(msess_up(400 + (pid_t)(i % 7), 1000 + i % 7,
		    ids[i], &held[400 + (pid_t)(i % 7)]), 0);
		live[i] = 1;
	}
	for (k = 0; k < 3 * N; k++) {
		i = (unsigned)random() % N;
		if (live[i]) {
			msess_down(400 + (pid_t)(i % 7), ids[i], &held[400 + (pid_t)(i % 7)]);
			live[i] = 0;
		} else {
			ck_assert_int_eq(msess_up(400 + (pid_t)(i % 7),
			    1000 + i % 7, ids[i], &held[400 + (pid_t)(i % 7)]), 0);
			live[i] = 1;
		}
	}
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(msess_find(ids[i], &pid, &uid),
		    live[i] ? 0 : -ENOENT);
		if (live[i])
			ck_assert_int_eq(pid, 400 + (pid_t)(i % 7));
	}
	msess_child_gone(403);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(msess_find(ids[i], &pid, &uid),
		    live[i] && i % 7 != 3 ? 0 : -ENOENT);
	for (i = 0; i < 7; i++)
		msess_child_gone(400 + (pid_t)i);
}
END_TEST

static Suite *
msess_suite(void)
{
	Suite *s = suite_create("msess");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_first_claim_keeps);
	tcase_add_test(tc, test_worker_share_and_death);
	tcase_add_test(tc, test_random_against_list);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(msess_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
