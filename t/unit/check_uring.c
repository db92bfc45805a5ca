/*
 * Unit tests for worker/uring.c on real TCP-less socketpairs: a receive
 * lands in the caller's buffer, a poll is level-triggered (armed on a
 * ready fd it completes at once), a cancel of a waiting receive ends it
 * with -ECANCELED, a receive queued on a ready socket and then cancelled
 * still completes exactly once (the rule worker/loop.c's buffer list
 * relies on), more requests than SQ entries are all submitted, and
 * USMBD_IO_URING=0 refuses the ring.  Where the kernel forbids io_uring
 * the tests say so and pass: the worker then runs on epoll.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "worker/uring.h"

static int sv[2];
static int have_ring;

static void
setup(void)
{
	int rc;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	unsetenv("USMBD_IO_URING");
	rc = uring_init(8);
	have_ring = rc == 0;
	if (!have_ring)
		fprintf(stderr, "check_uring: no io_uring here (%s): skipped\n",
		    strerror(-rc));
}

static void
teardown(void)
{
	uring_fini();
	close(sv[0]);
	close(sv[1]);
}

/* Waits for completions until one tagged ud comes; returns it. */
static struct uring_cqe
wait_for(uint64_t ud)
{
	struct uring_cqe cq[16];
	int i, n, guard;

	for (guard = 0; guard < 100; guard++) {
		n = uring_wait(cq, 16);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++)
			if (cq[i].ud == ud)
				return cq[i];
	}
	ck_abort_msg("no completion for %llu", (unsigned long long)ud);
	return cq[0];
}

START_TEST(test_recv_into_buffer)
{
	char buf[64];
	struct uring_cqe c;

	if (!have_ring)
		return;
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(uring_recv(sv[0], buf, sizeof(buf), 7), 0);
	ck_assert_int_eq(write(sv[1], "hello", 5), 5);
	c = wait_for(7);
	ck_assert_int_eq(c.res, 5);
	ck_assert_mem_eq(buf, "hello", 5);
	/* EOF is a 0-byte completion. */
	ck_assert_int_eq(uring_recv(sv[0], buf, sizeof(buf), 8), 0);
	close(sv[1]);
	sv[1] = -1;
	c = wait_for(8);
	ck_assert_int_eq(c.res, 0);
}
END_TEST

START_TEST(test_poll_level_triggered)
{
	struct uring_cqe c;

	if (!have_ring)
		return;
	ck_assert_int_eq(write(sv[1], "x", 1), 1);
	/* Armed on an fd that is already readable: completes at once. */
	ck_assert_int_eq(uring_poll(sv[0], POLLIN, 11), 0);
	c = wait_for(11);
	ck_assert(c.res & POLLIN);
	/* Nothing read: armed again, it completes again. */
	ck_assert_int_eq(uring_poll(sv[0], POLLIN, 12), 0);
	c = wait_for(12);
	ck_assert(c.res & POLLIN);
}
END_TEST

START_TEST(test_cancel_waiting_recv)
{
	char buf[16];
	struct uring_cqe c;

	if (!have_ring)
		return;
	ck_assert_int_eq(uring_recv(sv[0], buf, sizeof(buf), 21), 0);
	ck_assert_int_eq(uring_cancel(21), 0);
	c = wait_for(21);
	ck_assert_int_eq(c.res, -ECANCELED);
	/* The socket is untouched: what comes next is read normally. */
	ck_assert_int_eq(write(sv[1], "ab", 2), 2);
	ck_assert_int_eq(read(sv[0], buf, sizeof(buf)), 2);
}
END_TEST

START_TEST(test_cancel_ready_recv_completes_once)
{
	char buf[16];
	struct uring_cqe cq[16];
	int i, n, seen = 0, guard;

	if (!have_ring)
		return;
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(write(sv[1], "data", 4), 4);
	ck_assert_int_eq(uring_recv(sv[0], buf, sizeof(buf), 31), 0);
	(void)uring_cancel(31);
	/* One completion, the data or -ECANCELED, then nothing more. */
	ck_assert_int_eq(uring_poll(sv[1], POLLOUT, 32), 0);
	for (guard = 0; guard < 10; guard++) {
		n = uring_wait(cq, 16);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++)
			if (cq[i].ud == 31) {
				seen++;
				ck_assert(cq[i].res == 4 || cq[i].res == -ECANCELED);
				if (cq[i].res == 4)
					ck_assert_mem_eq(buf, "data", 4);
			}
		if (seen > 0)
			break;
	}
	ck_assert_int_eq(seen, 1);
	/* Two more rounds (a ready poll each): no second completion of 31. */
	for (guard = 0; guard < 2; guard++) {
		ck_assert_int_eq(uring_poll(sv[1], POLLOUT, 33), 0);
		n = uring_wait(cq, 16);
		ck_assert_int_ge(n, 1);
		for (i = 0; i < n; i++)
			ck_assert(cq[i].ud != 31);
	}
}
END_TEST

START_TEST(test_more_requests_than_entries)
{
	struct uring_cqe cq[64];
	int i, n, got = 0, guard;

	if (!have_ring)
		return;
	/* 8 SQ entries: queueing 40 must flush on the way. */
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(uring_poll(sv[0], POLLIN, 100 + i), 0);
	ck_assert_int_eq(write(sv[1], "z", 1), 1);
	for (guard = 0; guard < 100 && got < 40; guard++) {
		n = uring_wait(cq, 64);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++) {
			ck_assert(cq[i].ud >= 100 && cq[i].ud < 140);
			got++;
		}
	}
	ck_assert_int_eq(got, 40);
}
END_TEST

START_TEST(test_env_off)
{
	uring_fini();
	setenv("USMBD_IO_URING", "0", 1);
	ck_assert_int_lt(uring_init(8), 0);
	ck_assert_int_eq(uring_active(), 0);
	ck_assert_int_eq(uring_recv(sv[0], NULL, 0, 1), -ENOBUFS);
	unsetenv("USMBD_IO_URING");
}
END_TEST

static Suite *
uring_suite(void)
{
	Suite *s = suite_create("uring");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_recv_into_buffer);
	tcase_add_test(tc, test_poll_level_triggered);
	tcase_add_test(tc, test_cancel_waiting_recv);
	tcase_add_test(tc, test_cancel_ready_recv_completes_once);
	tcase_add_test(tc, test_more_requests_than_entries);
	tcase_add_test(tc, test_env_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(uring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
