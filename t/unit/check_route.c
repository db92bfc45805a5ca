/*
 * Unit tests for the verdict-token rule (daemon/route.c) and the gate
 * credits (daemon/spawn.c).  A gate serves many logins at once, so the
 * master keeps each successful verdict under the id of the MSG_AUTH_REQ it
 * answered; a hand-off names that id.  A verdict is used at most once, only
 * by the gate it was given to, and only within ROUTE_VERDICT_TTL_MS.
 *
 * The end-to-end cases use real SOCK_SEQPACKET channels: one for the gate
 * (a child process that only waits) and one for a fake user worker, whose
 * end the test reads to see what the master routed.
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

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"

static struct conf	test_conf;

static struct authmsg_rep
rep_ok(uid_t uid, const char *user)
{
	struct authmsg_rep r;

	memset(&r, 0, sizeof(r));
	r.status = STATUS_SUCCESS;
	r.uid = uid;
	r.gid = uid;
	memcpy(r.session_key, "0123456789abcdef", 16);
	strcpy(r.user, user);
	return r;
}

static struct child
fake_child(pid_t pid, enum child_role role)
{
	struct child c;

	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.role = role;
	c.chan = -1;
	return c;
}

/* ---- the table alone ---- */

START_TEST(test_take_once)
{
	struct child g = fake_child(101, CHILD_GATE);
	struct authmsg_rep r = rep_ok(1000, "alice"), out;

	route_verdict_record(&g, 7, &r, 1000);
	ck_assert_int_eq(route_verdict_take(&g, 7, 1001, &out), 0);
	ck_assert_uint_eq(out.uid, 1000);
	ck_assert_str_eq(out.user, "alice");
	/* Used: a second hand-off under the same verdict is refused. */
	ck_assert_int_eq(route_verdict_take(&g, 7, 1002, &out), -ENOENT);
}
END_TEST

START_TEST(test_other_token)
{
	struct child g = fake_child(102, CHILD_GATE);
	struct authmsg_rep a = rep_ok(1000, "alice"), b = rep_ok(1001, "bob"), out;

	/* Connection A authenticated alice (id 1), connection B bob (id 2). */
	route_verdict_record(&g, 1, &a, 1000);
	route_verdict_record(&g, 2, &b, 1000);
	ck_assert_int_eq(route_verdict_take(&g, 3, 1001, &out), -ENOENT);
	/* Each id routes by its own verdict, whatever the order. */
	ck_assert_int_eq(route_verdict_take(&g, 2, 1001, &out), 0);
	ck_assert_str_eq(out.user, "bob");
	ck_assert_int_eq(route_verdict_take(&g, 1, 1001, &out), 0);
	ck_assert_str_eq(out.user, "alice");
}
END_TEST

START_TEST(test_other_gate)
{
	struct child g1 = fake_child(103, CHILD_GATE), g2 = fake_child(104, CHILD_GATE);
	struct authmsg_rep r = rep_ok(1000, "alice"), out;

	route_verdict_record(&g1, 5, &r, 1000);
	/* Another gate cannot use it, even naming the same id... */
	ck_assert_int_eq(route_verdict_take(&g2, 5, 1001, &out), -ENOENT);
	/* ...and trying does not use it up for its owner. */
	ck_assert_int_eq(route_verdict_take(&g1, 5, 1001, &out), 0);
}
END_TEST

START_TEST(test_expired)
{
	struct child g = fake_child(105, CHILD_GATE);
	struct authmsg_rep r = rep_ok(1000, "alice"), out;

	route_verdict_record(&g, 9, &r, 5000);
	ck_assert_int_eq(route_verdict_take(&g, 9,
	    5000 + ROUTE_VERDICT_TTL_MS + 1, &out), -ENOENT);
	/* Gone for good, not just too old for that call. */
	ck_assert_int_eq(route_verdict_take(&g, 9, 5001, &out), -ENOENT);
	route_verdict_record(&g, 10, &r, 5000);
	ck_assert_int_eq(route_verdict_take(&g, 10,
	    5000 + ROUTE_VERDICT_TTL_MS, &out), 0);
}
END_TEST

START_TEST(test_failure_and_worker_not_kept)
{
	struct child g = fake_child(106, CHILD_GATE), w = fake_child(107, CHILD_WORKER);
	struct authmsg_rep bad = rep_ok(1000, "alice"), ok = rep_ok(1000, "alice");
	struct authmsg_rep out;

	bad.status = STATUS_LOGON_FAILURE;
	route_verdict_record(&g, 1, &bad, 1000);
	ck_assert_int_eq(route_verdict_take(&g, 1, 1001, &out), -ENOENT);
	/* A worker never hands off: its verdicts are not kept. */
	route_verdict_record(&w, 1, &ok, 1000);
	ck_assert_int_eq(route_verdict_take(&w, 1, 1001, &out), -ENOENT);
}
END_TEST

START_TEST(test_same_id_again)
{
	struct child g = fake_child(108, CHILD_GATE);
	struct authmsg_rep a = rep_ok(1000, "alice"), b = rep_ok(1001, "bob");
	struct authmsg_rep bad = rep_ok(1000, "alice"), out;

	/* The latest answer under an id is the one that counts. */
	route_verdict_record(&g, 4, &a, 1000);
	route_verdict_record(&g, 4, &b, 1000);
	ck_assert_int_eq(route_verdict_take(&g, 4, 1001, &out), 0);
	ck_assert_str_eq(out.user, "bob");
	ck_assert_int_eq(route_verdict_take(&g, 4, 1001, &out), -ENOENT);
	/* A later failure under the id does not leave the old success. */
	bad.status = STATUS_LOGON_FAILURE;
	route_verdict_record(&g, 6, &a, 1000);
	route_verdict_record(&g, 6, &bad, 1000);
	ck_assert_int_eq(route_verdict_take(&g, 6, 1001, &out), -ENOENT);
}
END_TEST

START_TEST(test_one_gate_cannot_crowd_out)
{
	struct child g = fake_child(109, CHILD_GATE), h = fake_child(110, CHILD_GATE);
	struct authmsg_rep r = rep_ok(1000, "alice"), out;
	uint32_t i;

	route_verdict_record(&h, 1, &r, 1000);
	/* A gate piling up unused verdicts only pushes out its own. */
	for (i = 0; i < ROUTE_MAX_VERDICTS + 10; i++)
		route_verdict_record(&g, 100 + i, &r, 1000 + i);
	ck_assert_int_eq(route_verdict_take(&h, 1, 2200, &out), 0);
	ck_assert_int_eq(route_verdict_take(&g, 100, 2200, &out), -ENOENT);
	ck_assert_int_eq(route_verdict_take(&g, 100 + ROUTE_MAX_VERDICTS + 9,
	    2200, &out), 0);
}
END_TEST

START_TEST(test_gate_gone_forgets)
{
	struct child g = fake_child(111, CHILD_GATE);
	struct authmsg_rep r = rep_ok(1000, "alice"), out;

	route_verdict_record(&g, 3, &r, master_now_ms());
	route_child_gone(&g);
	/* A new gate that gets the same pid inherits nothing. */
	ck_assert_int_eq(route_verdict_take(&g, 3, master_now_ms(), &out), -ENOENT);
}
END_TEST

/* ---- through the master's message handling ---- */

static int	gate_peer = -1, worker_peer = -1;
static struct child *gate_c, *worker_c;
static uint8_t	*buf;

/* A gate process that only waits, and a fake worker of uid 1000. */
static void
setup_children(void)
{
	int sv[2], wv[2];
	pid_t pid;

	test_conf.gate_processes = 0;
	test_conf.max_workers_per_user = 1;
	master.conf = &test_conf;
	master.conf_path = "/nonexistent.conf";
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(master.epfd, 0);
	buf = malloc(MSG_BUF_SIZE);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, wv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(20);
		for (;;)
			pause();
	}
	gate_c = &spawn_children[0];
	memset(gate_c, 0, sizeof(*gate_c));
	gate_c->pid = pid;
	gate_c->role = CHILD_GATE;
	gate_c->chan = sv[0];
	gate_c->hello = 1;
	gate_c->started_ms = master_now_ms();
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	gate_peer = sv[1];
	/* The worker slot needs no process: the master only writes to it. */
	worker_c = &spawn_children[1];
	memset(worker_c, 0, sizeof(*worker_c));
	worker_c->pid = pid + 100000;
	worker_c->role = CHILD_WORKER;
	worker_c->uid = 1000;
	worker_c->gid = 1000;
	strcpy(worker_c->user, "alice");
	worker_c->chan = wv[0];
	worker_c->hello = 1;
	worker_peer = wv[1];
	ck_assert_int_eq(fcntl(wv[1], F_SETFL, O_NONBLOCK), 0);
}

static void
teardown_children(void)
{
	kill(gate_c->pid, SIGKILL);
	waitpid(gate_c->pid, NULL, 0);
	free(buf);
}

/* Sends MSG_HANDOFF id with a fresh pipe as the "socket"; returns its read end. */
static int
send_handoff(uint32_t id)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(msg_send(gate_peer, MSG_HANDOFF, id, "state", 5, p[1]), 0);
	close(p[1]);
	spawn_child_event(gate_c);
	return p[0];
}

/* The HANDOFF_DONE status for id, or -1 if none came. */
static long
handoff_status(uint32_t id)
{
	struct msg m;

	if (msg_recv(gate_peer, &m, buf, MSG_BUF_SIZE) != 0)
		return -1;
	ck_assert_uint_eq(m.type, MSG_HANDOFF_DONE);
	ck_assert_uint_eq(m.id, id);
	ck_assert_uint_eq(m.len, 4);
	return (long)le32_get(m.payload);
}

START_TEST(test_handoff_by_token)
{
	struct authmsg_rep r = rep_ok(1000, "alice");
	struct authmsg_ident id;
	struct msg m;
	int fd;

	setup_children();
	ck_assert_int_eq(fcntl(gate_peer, F_SETFL, O_NONBLOCK), 0);
	route_verdict_record(gate_c, 21, &r, master_now_ms());
	/* Named under another request id: refused, socket closed. */
	fd = send_handoff(22);
	ck_assert_int_eq(handoff_status(22), STATUS_ACCESS_DENIED);
	close(fd);
	ck_assert_int_eq(msg_recv(worker_peer, &m, buf, MSG_BUF_SIZE), -EAGAIN);
	/*
	 * Under its own id: routed to alice's worker, the gate's state
	 * verbatim behind the identity of the master's verdict.
	 */
	fd = send_handoff(21);
	ck_assert_int_eq(msg_recv(worker_peer, &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_CONN);
	ck_assert_uint_eq(m.len, AUTHMSG_IDENT_LEN + 5);
	ck_assert_int_eq(authmsg_ident_decode(&id, m.payload, m.len), 0);
	ck_assert_uint_eq(id.kind, AUTHMSG_IDENT_LOGIN);
	ck_assert_uint_eq(id.uid, 1000);
	ck_assert_str_eq(id.user, "alice");
	/* a pipe is no socket of our listeners: no address vouched for */
	ck_assert_str_eq(id.peer, "");
	ck_assert_mem_eq(m.payload + AUTHMSG_IDENT_LEN, "state", 5);
	ck_assert_int_ge(m.fd, 0);
	close(m.fd);
	close(fd);
	/* Nothing for the gate until the worker acknowledges. */
	ck_assert_int_eq(handoff_status(21), -1);
	/* The same verdict a second time: refused. */
	fd = send_handoff(21);
	ck_assert_int_eq(handoff_status(21), STATUS_ACCESS_DENIED);
	close(fd);
	ck_assert_int_ge(gate_c->chan, 0);	/* refused, not killed */
	teardown_children();
}
END_TEST

START_TEST(test_credits)
{
	uint8_t p[4];
	struct msg m;

	setup_children();
	ck_assert_ptr_null(spawn_ready_gate());
	le32_put(p, 64);
	ck_assert_int_eq(msg_send(gate_peer, MSG_GATE_READY, 0, p, 4, -1), 0);
	spawn_child_event(gate_c);
	ck_assert_uint_eq(gate_c->credits, 64);
	ck_assert_ptr_eq(spawn_ready_gate(), gate_c);
	/* The old form, no payload: one more. */
	ck_assert_int_eq(msg_send(gate_peer, MSG_GATE_READY, 0, NULL, 0, -1), 0);
	spawn_child_event(gate_c);
	ck_assert_uint_eq(gate_c->credits, 65);
	/* Retiring: no credits, MSG_SHUTDOWN (drain) back, not in the pool. */
	ck_assert_int_eq(msg_send(gate_peer, MSG_GATE_RETIRE, 0, NULL, 0, -1), 0);
	spawn_child_event(gate_c);
	ck_assert_uint_eq(gate_c->credits, 0);
	ck_assert_int_eq(gate_c->retiring, 1);
	ck_assert_ptr_null(spawn_ready_gate());
	ck_assert_int_eq(msg_recv(gate_peer, &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_SHUTDOWN);
	ck_assert_uint_eq(m.len, 4);
	ck_assert_uint_eq(le32_get(m.payload), 1);
	/* Credits after that are ignored; the gate lives on to drain. */
	ck_assert_int_eq(msg_send(gate_peer, MSG_GATE_READY, 0, NULL, 0, -1), 0);
	spawn_child_event(gate_c);
	ck_assert_ptr_null(spawn_ready_gate());
	ck_assert_int_ge(gate_c->chan, 0);
	teardown_children();
}
END_TEST

START_TEST(test_credits_overflow_kills)
{
	uint8_t p[4];
	pid_t pid;
	int st;

	setup_children();
	pid = gate_c->pid;
	le32_put(p, SPAWN_GATE_MAX_CREDITS + 1);
	ck_assert_int_eq(msg_send(gate_peer, MSG_GATE_READY, 0, p, 4, -1), 0);
	spawn_child_event(gate_c);
	ck_assert_int_eq(gate_c->chan, -1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
	free(buf);
}
END_TEST

static Suite *
route_suite(void)
{
	Suite *s = suite_create("route");
	TCase *tc = tcase_create("verdict tokens");
	TCase *te = tcase_create("through the channel");

	tcase_add_test(tc, test_take_once);
	tcase_add_test(tc, test_other_token);
	tcase_add_test(tc, test_other_gate);
	tcase_add_test(tc, test_expired);
	tcase_add_test(tc, test_failure_and_worker_not_kept);
	tcase_add_test(tc, test_same_id_again);
	tcase_add_test(tc, test_one_gate_cannot_crowd_out);
	tcase_add_test(tc, test_gate_gone_forgets);
	tcase_add_test(te, test_handoff_by_token);
	tcase_add_test(te, test_credits);
	tcase_add_test(te, test_credits_overflow_kills);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, te);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(route_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
