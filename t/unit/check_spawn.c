/*
 * Unit tests for the master's handling of child messages (daemon/spawn.c,
 * daemon/route.c): a real child process and a real SOCK_SEQPACKET channel
 * stand in for a gate or worker.  Every out-of-protocol message must get the
 * child killed (SIGKILL, seen by waitpid) and its channel closed, never
 * crash the master; well-formed ones change the child table.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"

static struct conf	test_conf;
static int		peer = -1;	/* the child's end */
static struct child	*c;

/* A child process that only waits to be killed. */
static void
start_child(enum child_role role)
{
	int sv[2];
	pid_t pid;

	test_conf.gate_processes = 0;
	test_conf.max_workers_per_user = 1;
	master.conf = &test_conf;
	master.conf_path = "/nonexistent.conf";
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(master.epfd, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* Gone on its own even if a failed test never kills it. */
		alarm(20);
		for (;;)
			pause();
	}
	c = &spawn_children[0];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->role = role;
	c->uid = 1000;
	c->chan = sv[0];
	c->started_ms = master_now_ms();
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	peer = sv[1];
}

static void
send_hello(uint32_t role)
{
	uint8_t p[4];

	le32_put(p, role);
	ck_assert_int_eq(msg_send(peer, MSG_HELLO, 0, p, 4, -1), 0);
	spawn_child_event(c);
	ck_assert_int_eq(c->hello, 1);
}

/* The child must have been killed by the master and its channel closed. */
static void
assert_killed(pid_t pid)
{
	int st;

	ck_assert_int_eq(c->chan, -1);
	ck_assert_int_eq(c->dying, 1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(WTERMSIG(st), SIGKILL);
}

static void
assert_alive(pid_t pid)
{
	ck_assert_int_ge(c->chan, 0);
	ck_assert_int_eq(c->dying, 0);
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
	kill(pid, SIGKILL);
}

START_TEST(test_hello_ready)
{
	start_child(CHILD_GATE);
	send_hello(MSG_ROLE_GATE);
	ck_assert_ptr_null(spawn_ready_gate());
	ck_assert_int_eq(msg_send(peer, MSG_GATE_READY, 0, NULL, 0, -1), 0);
	spawn_child_event(c);
	ck_assert_ptr_eq(spawn_ready_gate(), c);
	assert_alive(c->pid);
}
END_TEST

START_TEST(test_unknown_type)
{
	pid_t pid;

	start_child(CHILD_GATE);
	pid = c->pid;
	send_hello(MSG_ROLE_GATE);
	ck_assert_int_eq(msg_send(peer, 999, 0, NULL, 0, -1), 0);
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_truncated)
{
	uint8_t junk[5] = { 1, 0, 0, 0, 9 };
	pid_t pid;

	start_child(CHILD_GATE);
	pid = c->pid;
	ck_assert_int_eq(send(peer, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_length_mismatch)
{
	uint8_t hdr[MSG_HDR_LEN];
	pid_t pid;

	start_child(CHILD_WORKER);
	pid = c->pid;
	le32_put(hdr, MSG_HELLO);
	le32_put(hdr + 4, 100);		/* claims 100 bytes, sends none */
	le32_put(hdr + 8, 0);
	ck_assert_int_eq(send(peer, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_before_hello)
{
	pid_t pid;

	start_child(CHILD_GATE);
	pid = c->pid;
	ck_assert_int_eq(msg_send(peer, MSG_GATE_READY, 0, NULL, 0, -1), 0);
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_hello_wrong_role)
{
	uint8_t p[4];
	pid_t pid;

	start_child(CHILD_GATE);
	pid = c->pid;
	le32_put(p, MSG_ROLE_WORKER);
	ck_assert_int_eq(msg_send(peer, MSG_HELLO, 0, p, 4, -1), 0);
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_wrong_role_message)
{
	pid_t pid;

	/* A worker has no business saying it is a ready gate. */
	start_child(CHILD_WORKER);
	pid = c->pid;
	send_hello(MSG_ROLE_WORKER);
	ck_assert_int_eq(msg_send(peer, MSG_GATE_READY, 0, NULL, 0, -1), 0);
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_unexpected_fd)
{
	int p[2];
	pid_t pid;

	start_child(CHILD_GATE);
	pid = c->pid;
	send_hello(MSG_ROLE_GATE);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(msg_send(peer, MSG_GATE_READY, 0, NULL, 0, p[1]), 0);
	close(p[1]);
	spawn_child_event(c);
	assert_killed(pid);
	/* The master closed the fd it received: the pipe has no writer left. */
	{
		char b;

		ck_assert_int_eq(read(p[0], &b, 1), 0);
	}
	close(p[0]);
}
END_TEST

START_TEST(test_conn_count_bad_len)
{
	uint8_t p[2] = { 1, 0 };
	pid_t pid;

	start_child(CHILD_WORKER);
	pid = c->pid;
	send_hello(MSG_ROLE_WORKER);
	ck_assert_int_eq(msg_send(peer, MSG_CONN_COUNT, 0, p, sizeof(p), -1), 0);
	spawn_child_event(c);
	assert_killed(pid);
}
END_TEST

START_TEST(test_conn_count)
{
	uint8_t p[4];

	start_child(CHILD_WORKER);
	send_hello(MSG_ROLE_WORKER);
	le32_put(p, 7);
	ck_assert_int_eq(msg_send(peer, MSG_CONN_COUNT, 0, p, sizeof(p), -1), 0);
	spawn_child_event(c);
	ck_assert_uint_eq(c->nconn, 7);
	assert_alive(c->pid);
}
END_TEST

/* A hand-off without a verdict from this master is refused, fd closed. */
START_TEST(test_handoff_without_verdict)
{
	uint8_t *buf = malloc(MSG_BUF_SIZE);
	struct msg m;
	int p[2];
	char b;

	ck_assert_ptr_nonnull(buf);
	start_child(CHILD_GATE);
	send_hello(MSG_ROLE_GATE);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(msg_send(peer, MSG_HANDOFF, 42, "state", 5, p[1]), 0);
	close(p[1]);
	spawn_child_event(c);
	ck_assert_int_eq(msg_recv(peer, &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_HANDOFF_DONE);
	ck_assert_uint_eq(m.id, 42);
	ck_assert_uint_eq(m.len, 4);
	ck_assert_uint_eq(le32_get(m.payload), STATUS_ACCESS_DENIED);
	ck_assert_int_eq(read(p[0], &b, 1), 0);
	close(p[0]);
	assert_alive(c->pid);
	free(buf);
}
END_TEST

/* A failed verdict does not let the gate route the connection either. */
START_TEST(test_handoff_failed_verdict)
{
	uint8_t *buf = malloc(MSG_BUF_SIZE);
	struct msg m;
	int p[2];

	ck_assert_ptr_nonnull(buf);
	start_child(CHILD_GATE);
	send_hello(MSG_ROLE_GATE);
	c->has_verdict = 1;
	c->verdict.status = STATUS_LOGON_FAILURE;
	c->verdict.uid = 1000;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(msg_send(peer, MSG_HANDOFF, 1, "x", 1, p[1]), 0);
	close(p[1]);
	spawn_child_event(c);
	ck_assert_int_eq(msg_recv(peer, &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_HANDOFF_DONE);
	ck_assert_uint_ne(le32_get(m.payload), 0);
	close(p[0]);
	assert_alive(c->pid);
	free(buf);
}
END_TEST

static Suite *
spawn_suite(void)
{
	Suite *s = suite_create("spawn");
	TCase *tc = tcase_create("child messages");

	tcase_add_test(tc, test_hello_ready);
	tcase_add_test(tc, test_unknown_type);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_length_mismatch);
	tcase_add_test(tc, test_before_hello);
	tcase_add_test(tc, test_hello_wrong_role);
	tcase_add_test(tc, test_wrong_role_message);
	tcase_add_test(tc, test_unexpected_fd);
	tcase_add_test(tc, test_conn_count_bad_len);
	tcase_add_test(tc, test_conn_count);
	tcase_add_test(tc, test_handoff_without_verdict);
	tcase_add_test(tc, test_handoff_failed_verdict);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(spawn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
