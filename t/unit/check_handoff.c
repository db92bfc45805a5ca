/*
 * The identity of a handed-off session (worker/handoff.c handoff_accept):
 * a worker serves it as the master's verdict says, whatever the gate's
 * connection state claims; a verdict for another uid, a session with no
 * verdict, or a verdict with no session is refused.  The client's port
 * travels, but a worker that holds the socket asks the socket.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "worker/conn_priv.h"
#include "worker/handoff.h"
#include "t/unit/testconn.h"
#include "t/unit/testlib.h"

static uint8_t	buf[64 * 1024];

/*
 * A MSG_CONN payload: the master's identity (kind, uid, name, flags) and
 * a gate's state whose session claims gate_user / gate_uid (no session
 * when gate_user is NULL: a binding hand-off).
 */
static const char *mk_peer = "";	/* the master's reading; "" none */

static size_t
mkpayload(uint32_t kind, uint32_t uid, const char *user, uint32_t flags,
    const char *gate_user, uint32_t gate_uid)
{
	struct authmsg_ident id;
	struct conn *g;
	struct session *s = NULL;
	int peer, n;

	memset(&id, 0, sizeof(id));
	id.kind = kind;
	id.uid = uid;
	id.gid = uid;
	id.flags = flags;
	snprintf(id.user, sizeof(id.user), "%s", user);
	snprintf(id.peer, sizeof(id.peer), "%s", mk_peer);
	ck_assert_int_eq(authmsg_ident_encode(&id, buf, sizeof(buf)),
	    AUTHMSG_IDENT_LEN);
	g = test_worker_conn(&peer);
	g->dialect = 0x0311;
	snprintf(g->peer, sizeof(g->peer), "192.0.2.9");
	if (gate_user != NULL) {
		s = conn_session_new(g);
		ck_assert_ptr_nonnull(s);
		s->state = SESS_VALID;
		snprintf(s->user, sizeof(s->user), "%s", gate_user);
		s->uid = s->gid = gate_uid;
	}
	n = handoff_encode(g, s, (const uint8_t *)"x", gate_user ? 0 : 1,
	    buf + AUTHMSG_IDENT_LEN, sizeof(buf) - AUTHMSG_IDENT_LEN);
	ck_assert_int_gt(n, 0);
	conn_free(g);
	close(peer);
	return AUTHMSG_IDENT_LEN + (size_t)n;
}

START_TEST(test_master_identity_wins)
{
	struct conn *c;
	size_t n;
	int peer;

	/* the gate says bob (1002), the master's verdict says alice (1001) */
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1001, "alice", 0, "bob", 1002);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), 0);
	ck_assert(c->sessions[0].in_use);
	ck_assert_str_eq(c->sessions[0].user, "alice");
	ck_assert_uint_eq(c->sessions[0].uid, 1001);
	ck_assert_int_eq(c->sessions[0].guest, 0);
	conn_free(c);
	close(peer);

	/* a guest verdict makes a guest session, whatever the gate says */
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 65534, "nobody", AUTH_FLAG_GUEST,
	    "alice", 65534);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 65534), 0);
	ck_assert_int_eq(c->sessions[0].guest, 1);
	ck_assert_str_eq(c->sessions[0].user, "nobody");
	conn_free(c);
	close(peer);
}
END_TEST

/*
 * The client's address is the master's reading of the socket, not the
 * gate's text (192.0.2.9 in mkpayload); without one, the gate's text
 * stays for display and the connection is not vouched for, so a share's
 * host lists refuse it when the worker does not hold the socket.
 */
START_TEST(test_peer_is_the_masters)
{
	struct conn *c;
	size_t n;
	int peer;

	mk_peer = "203.0.113.5";
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1001, "alice", 0, "alice", 1001);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), 0);
	ck_assert_str_eq(c->peer, "203.0.113.5");
	ck_assert_int_eq(c->priv->peer_vouched, 1);
	conn_free(c);
	close(peer);
	mk_peer = "";
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1001, "alice", 0, "alice", 1001);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), 0);
	ck_assert_str_eq(c->peer, "192.0.2.9");
	ck_assert_int_eq(c->priv->peer_vouched, 0);
	conn_free(c);
	close(peer);
	/* a peer field without its NUL: the identity is refused */
	mk_peer = "203.0.113.5";
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1001, "alice", 0, "alice", 1001);
	memset(buf + 16 + AUTH_NAME_MAX, 'x', AUTHMSG_PEER_MAX);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), -EBADMSG);
	conn_free(c);
	close(peer);
	mk_peer = "";
}
END_TEST

START_TEST(test_refused)
{
	struct conn *c;
	size_t n;
	int peer;

	/* a verdict for another uid than the worker's */
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1002, "bob", 0, "bob", 1002);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), -EBADMSG);
	ck_assert(!c->sessions[0].in_use);
	conn_free(c);
	close(peer);
	/* a session the master did not vouch for (a binding's ident) */
	n = mkpayload(AUTHMSG_IDENT_NONE, 0, "", 0, "alice", 1001);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), -EBADMSG);
	conn_free(c);
	close(peer);
	/* a binding hand-off: no identity, no session: fine */
	n = mkpayload(AUTHMSG_IDENT_NONE, 0, "", 0, NULL, 0);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), 0);
	conn_free(c);
	close(peer);
	/* a login verdict with no session behind it */
	n = mkpayload(AUTHMSG_IDENT_LOGIN, 1001, "alice", 0, NULL, 0);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), -EBADMSG);
	conn_free(c);
	close(peer);
	/* too short for the identity */
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, AUTHMSG_IDENT_LEN - 1, 1001),
	    -EBADMSG);
	conn_free(c);
	close(peer);
}
END_TEST

START_TEST(test_port)
{
	struct authmsg_ident id;
	struct session *s;
	struct conn *g, *c;
	uint16_t cport;
	size_t n;
	int cli, peer, m;

	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_LOGIN;
	id.uid = id.gid = 1001;
	snprintf(id.user, sizeof(id.user), "alice");
	ck_assert_int_eq(authmsg_ident_encode(&id, buf, sizeof(buf)),
	    AUTHMSG_IDENT_LEN);
	/* The gate holds the client's TCP socket: the port is the socket's. */
	g = conn_new(NULL, test_tcp_pair(&cli, &cport), CONN_ROLE_GATE,
	    "127.0.0.1", CONN_BUF_SMALL);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(conn_peer_port(g), cport);
	g->dialect = 0x0311;
	s = conn_session_new(g);
	ck_assert_ptr_nonnull(s);
	s->state = SESS_VALID;
	snprintf(s->user, sizeof(s->user), "alice");
	s->uid = s->gid = 1001;
	/* the compression negotiated travels in the flags byte */
	g->compress_algs = 1u << 2 | 1u << 4;
	g->compress_chained = g->posix = 1;
	m = handoff_encode(g, s, (const uint8_t *)"", 0, buf + AUTHMSG_IDENT_LEN,
	    sizeof(buf) - AUTHMSG_IDENT_LEN);
	ck_assert_int_gt(m, 0);
	n = AUTHMSG_IDENT_LEN + (size_t)m;
	conn_free(g);
	close(cli);

	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), 0);
	ck_assert_str_eq(c->peer, "127.0.0.1");
	ck_assert_uint_eq(c->priv->peer_port, cport);
	ck_assert_uint_eq(c->compress_algs, 1u << 2 | 1u << 4);
	ck_assert(c->compress_chained && c->posix && !c->signing_required);
	/* This worker holds the socket (here a socketpair): it asks it. */
	ck_assert_uint_eq(conn_peer_port(c), 0);
	conn_free(c);
	close(peer);

	/* every truncation is refused */
	for (size_t i = AUTHMSG_IDENT_LEN; i < n; i++) {
		c = test_worker_conn(&peer);
		ck_assert_int_eq(handoff_accept(c, buf, i, 1001), -EBADMSG);
		ck_assert(!c->sessions[0].in_use);
		conn_free(c);
		close(peer);
	}
}
END_TEST

static Suite *
handoff_suite(void)
{
	Suite *s = suite_create("handoff");
	TCase *tc = tcase_create("identity");

	tcase_add_test(tc, test_master_identity_wins);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_peer_is_the_masters);
	tcase_add_test(tc, test_port);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(handoff_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
