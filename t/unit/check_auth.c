/*
 * Unit tests for daemon/auth.c: the throttle schedule, a malformed
 * MSG_AUTH_REQ (the child is dropped), a malformed AUTHENTICATE from a
 * client (a logon failure, the child stays), the anonymous verdict, and the
 * delay of replies to an address after repeated failures, served from the
 * timer queue without blocking.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/auth.h"
#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "proto/ntlmssp.h"
#include "proto/ntstatus.h"

static struct conf	test_conf;
static int		peer = -1;
static struct child	*c;
static uint8_t		*rbuf;

static void
setup(void)
{
	int sv[2];
	pid_t pid;

	test_conf.guest_account = "nobody";
	test_conf.map_to_guest = MAP_GUEST_NEVER;
	master.conf = &test_conf;
	master.passdb = NULL;
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(master.epfd, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(20);
		for (;;)
			pause();
	}
	c = &spawn_children[0];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->role = CHILD_GATE;
	c->chan = sv[0];
	c->hello = 1;
	c->started_ms = master_now_ms();
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	peer = sv[1];
	rbuf = malloc(MSG_BUF_SIZE);
	ck_assert_ptr_nonnull(rbuf);
}

static void
teardown(void)
{
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
	free(rbuf);
}

/* Sends an auth request whose AUTHENTICATE is auth/len, from client. */
static void
send_req(uint32_t id, const char *client, const uint8_t *auth, uint32_t len)
{
	struct authmsg_req r;
	uint8_t buf[1024];
	/* a CHALLENGE with a server challenge of its own each time */
	static uint8_t chal[32] = "NTLMSSP\0\2";
	static uint64_t next = 0x5eed;
	int n;

	memset(&r, 0, sizeof(r));
	snprintf(r.client, sizeof(r.client), "%s", client);
	r.negotiate = (const uint8_t *)"";
	le64_put(chal + 24, next++);
	r.challenge = chal;
	r.challenge_len = sizeof(chal);
	r.authenticate = auth;
	r.authenticate_len = len;
	n = authmsg_req_encode(&r, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(msg_send(peer, MSG_AUTH_REQ, id, buf, (size_t)n, -1), 0);
	spawn_child_event(c);
}

/* Receives the reply if one is there: 1 with *rep, 0 when none yet. */
static int
get_rep(uint32_t id, struct authmsg_rep *rep)
{
	struct msg m;
	int rc = msg_recv(peer, &m, rbuf, MSG_BUF_SIZE);

	if (rc == -EAGAIN)
		return 0;
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(m.type, MSG_AUTH_REP);
	ck_assert_uint_eq(m.id, id);
	ck_assert_int_eq(authmsg_rep_decode(rep, m.payload, m.len), 0);
	return 1;
}

/* A minimal AUTHENTICATE_MESSAGE (MS-NLMP 2.2.1.3) with empty fields. */
static size_t
build_anonymous(uint8_t *buf, size_t cap)
{
	struct wcur w;
	int i;

	wcur_init(&w, buf, cap);
	wcur_bytes(&w, "NTLMSSP\0", 8);
	le32_put(wcur_reserve(&w, 4), NTLMSSP_AUTHENTICATE_MESSAGE);
	/* LM, NT, domain, user, workstation, session key: len, max, offset */
	for (i = 0; i < 6; i++) {
		le16_put(wcur_reserve(&w, 2), 0);
		le16_put(wcur_reserve(&w, 2), 0);
		le32_put(wcur_reserve(&w, 4), 64);
	}
	le32_put(wcur_reserve(&w, 4), NTLMSSP_NEGOTIATE_UNICODE |
	    NTLMSSP_ANONYMOUS | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY);
	ck_assert_int_eq(w.err, 0);
	return wcur_off(&w);
}

START_TEST(test_delay_schedule)
{
	ck_assert_int_eq(auth_throttle_delay_ms(0), 0);
	ck_assert_int_eq(auth_throttle_delay_ms(2), 0);
	ck_assert_int_eq(auth_throttle_delay_ms(3), 500);
	ck_assert_int_eq(auth_throttle_delay_ms(4), 1000);
	ck_assert_int_eq(auth_throttle_delay_ms(5), 2000);
	ck_assert_int_eq(auth_throttle_delay_ms(6), 4000);
	ck_assert_int_eq(auth_throttle_delay_ms(7), 5000);
	ck_assert_int_eq(auth_throttle_delay_ms(1000), 5000);
}
END_TEST

START_TEST(test_malformed_request_kills)
{
	uint8_t junk[3] = { 1, 2, 3 };
	pid_t pid = c->pid;
	int st;

	ck_assert_int_eq(msg_send(peer, MSG_AUTH_REQ, 1, junk, sizeof(junk), -1), 0);
	spawn_child_event(c);
	ck_assert_int_eq(c->chan, -1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st));
}
END_TEST

START_TEST(test_malformed_authenticate_fails)
{
	struct authmsg_rep rep;

	send_req(7, "192.0.2.1", (const uint8_t *)"garbage", 7);
	ck_assert_int_eq(get_rep(7, &rep), 1);
	ck_assert_uint_eq(rep.status, STATUS_LOGON_FAILURE);
	ck_assert_int_ge(c->chan, 0);
	ck_assert_int_eq(c->has_verdict, 1);
	ck_assert_uint_eq(c->verdict.status, STATUS_LOGON_FAILURE);
}
END_TEST

START_TEST(test_anonymous)
{
	struct authmsg_rep rep;
	struct passwd *pw = getpwnam("nobody");
	uint8_t msg[128];
	size_t n = build_anonymous(msg, sizeof(msg));
	static const uint8_t zero[16];

	ck_assert_ptr_nonnull(pw);
	send_req(3, "192.0.2.2", msg, (uint32_t)n);
	ck_assert_int_eq(get_rep(3, &rep), 1);
	ck_assert_uint_eq(rep.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rep.flags & AUTH_FLAG_ANONYMOUS, AUTH_FLAG_ANONYMOUS);
	ck_assert_uint_eq(rep.uid, pw->pw_uid);
	ck_assert_str_eq(rep.user, "");
	ck_assert_mem_eq(rep.session_key, zero, 16);
	ck_assert_uint_eq(c->verdict.uid, pw->pw_uid);
}
END_TEST

START_TEST(test_throttle_delays_third_failure)
{
	struct authmsg_rep rep;
	struct timespec ts = { 0, 100 * 1000000L };
	int i, got = 0;

	send_req(1, "192.0.2.9", (const uint8_t *)"x", 1);
	ck_assert_int_eq(get_rep(1, &rep), 1);
	send_req(2, "192.0.2.9", (const uint8_t *)"x", 1);
	ck_assert_int_eq(get_rep(2, &rep), 1);
	/* Another address is not slowed down by this one. */
	send_req(9, "192.0.2.10", (const uint8_t *)"x", 1);
	ck_assert_int_eq(get_rep(9, &rep), 1);
	send_req(3, "192.0.2.9", (const uint8_t *)"x", 1);
	ck_assert_int_eq(get_rep(3, &rep), 0);
	ck_assert_int_gt(auth_timeout_ms(), 300);
	ck_assert_int_le(auth_timeout_ms(), 500);
	/* The reply comes from auth_tick once due (0.5 s), not before. */
	for (i = 0; i < 20 && !got; i++) {
		nanosleep(&ts, NULL);
		auth_tick();
		got = get_rep(3, &rep);
		if (i < 3)
			ck_assert_int_eq(got, 0);
	}
	ck_assert_int_eq(got, 1);
	ck_assert_uint_eq(rep.status, STATUS_LOGON_FAILURE);
	ck_assert_int_eq(auth_timeout_ms(), -1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("verdicts");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_delay_schedule);
	tcase_add_test(tc, test_malformed_request_kills);
	tcase_add_test(tc, test_malformed_authenticate_fails);
	tcase_add_test(tc, test_anonymous);
	tcase_add_test(tc, test_throttle_delays_third_failure);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
