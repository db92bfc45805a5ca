/*
 * A lying owner (daemon/route.c route_relay_peer, daemon/listen.c
 * listen_peer_of): the worker that holds a connection shows the master its
 * client socket (MSG_RELAY_PEER) before it relays another user's session
 * (MSG_RELAY), and the master puts that socket's client address in the
 * identity ahead of the relayed worker's MSG_CONN; that worker's share
 * `hosts allow` / `hosts deny` judge it.  Here the test plays a
 * compromised owner (alice's worker, a real waiting process so that the
 * master may kill it) showing every kind of socket it can make, and reads
 * what bob's worker is told.
 *
 * bob's real client is 127.0.0.2, which the share refuses
 * (hosts allow = 127.0.0.5, hosts deny = ALL); the owner wants 127.0.0.5.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/listen.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"

#define L(...)	((char *const[]){ __VA_ARGS__, NULL })

static struct conf	test_conf;
static char		*ifs[3];
static int		owner_peer = -1, bob_peer = -1;
static struct child	*owner, *bob;
static uint8_t		*buf;
static uint16_t		port;		/* the master's listeners' */
static uint32_t		next_id = 40;
static pid_t		owner_pid, bob_pid;	/* ours to kill; 0: reaped */

static pid_t
waiting_child(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		alarm(20);
		for (;;)
			pause();
	}
	return pid;
}

static struct child *
worker_slot(int i, uid_t uid, const char *user, int *peer)
{
	struct child *c = &spawn_children[i];
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv), 0);
	memset(c, 0, sizeof(*c));
	c->pid = waiting_child();
	c->role = CHILD_WORKER;
	c->uid = uid;
	c->gid = uid;
	snprintf(c->user, sizeof(c->user), "%s", user);
	c->chan = sv[0];
	c->hello = 1;
	c->started_ms = master_now_ms();
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	*peer = sv[1];
	return c;
}

/* A port free on 127.0.0.1 and 127.0.0.3 now (the test's listeners). */
static uint16_t
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void
setup_master(int with_v6_any)
{
	memset(&test_conf, 0, sizeof(test_conf));
	test_conf.gate_processes = 0;
	test_conf.max_workers_per_user = 1;
	port = free_port();
	test_conf.ports[0] = port;
	test_conf.nports = 1;
	ifs[0] = "127.0.0.1";
	ifs[1] = with_v6_any ? "::" : NULL;
	ifs[2] = NULL;
	test_conf.interfaces = ifs;
	master.conf = &test_conf;
	master.conf_path = "/nonexistent.conf";
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(master.epfd, 0);
	buf = malloc(MSG_BUF_SIZE);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(listen_open(&test_conf), 0);
	owner = worker_slot(0, 1000, "alice", &owner_peer);
	bob = worker_slot(1, 1001, "bob", &bob_peer);
	owner_pid = owner->pid;
	bob_pid = bob->pid;
}

static void
setup_v4(void)
{
	setup_master(0);
}

static void
setup_v6_any(void)
{
	setup_master(1);
}

static void
teardown_master(void)
{
	if (owner_pid > 0) {
		kill(owner_pid, SIGKILL);
		waitpid(owner_pid, NULL, 0);
	}
	if (bob_pid > 0) {
		kill(bob_pid, SIGKILL);
		waitpid(bob_pid, NULL, 0);
	}
	listen_close();
	free(buf);
}

static void
addr4(struct sockaddr_in *a, const char *ip, uint16_t p)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(p);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &a->sin_addr), 1);
}

/* A TCP socket bound to ip:p (p 0: any port); -1 if the kernel refuses. */
static int
bound4(const char *ip, uint16_t p)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	addr4(&a, ip, p);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint16_t
port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	return ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Connects from src to dst:p, accepts on lfd; the accepted end. */
static int
accepted(int lfd, const char *src, const char *dst, uint16_t p, int *client)
{
	struct sockaddr_in a;
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd;

	*client = bound4(src, 0);
	ck_assert_int_ge(*client, 0);
	addr4(&a, dst, p);
	ck_assert_int_eq(connect(*client, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* The master's own listener on 127.0.0.1:port (ours: it opened it). */
static int
master_listener(void)
{
	int fd, v;
	socklen_t vl;

	for (fd = 3; fd < 1024; fd++) {
		vl = sizeof(v);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl) == 0 &&
		    v == 1 && port_of(fd) == port) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);

			ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss,
			    &sl), 0);
			if (ss.ss_family == AF_INET)
				return fd;
		}
	}
	ck_abort_msg("no listener on port %u", port);
	return -1;
}

/*
 * The owner shows fd (-1: shows nothing) for a relay of bob's session,
 * then relays it; *peer = the address bob's worker was told.  0, or -1
 * when the master routed nothing (the owner killed, say).
 */
static int
relay_showing(int fd, char *peer, size_t cap)
{
	struct authmsg_rep r;
	struct authmsg_ident id;
	struct msg m;
	uint8_t pl[9] = { 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 'x' };
	uint32_t rid = next_id++;
	int rv[2];

	memset(&r, 0, sizeof(r));
	r.status = STATUS_SUCCESS;
	r.uid = 1001;
	r.gid = 1001;
	memcpy(r.session_key, "0123456789abcdef", 16);
	strcpy(r.user, "bob");
	route_relay_record(owner, rid, &r, master_now_ms());
	if (fd >= 0) {
		ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY_PEER, rid, NULL,
		    0, fd), 0);
		spawn_child_event(owner);
	}
	if (owner->chan < 0)
		return -1;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    rv), 0);
	ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY, rid, pl, sizeof(pl),
	    rv[1]), 0);
	close(rv[1]);
	spawn_child_event(owner);
	close(rv[0]);
	if (msg_recv(bob_peer, &m, buf, MSG_BUF_SIZE) != 0)
		return -1;
	ck_assert_uint_eq(m.type, MSG_CONN);
	ck_assert_int_eq(authmsg_ident_decode(&id, m.payload, m.len), 0);
	ck_assert_uint_eq(id.kind, AUTHMSG_IDENT_RELAY);
	ck_assert_uint_eq(id.uid, 1001);
	if (m.fd >= 0)
		close(m.fd);
	snprintf(peer, cap, "%s", id.peer);
	return 0;
}

/* What bob's worker makes of peer at the share (worker/smb2_tree.c). */
static int
share_admits(const char *peer)
{
	if (peer[0] == '\0')
		return 0;	/* not vouched: every list refuses */
	return conf_peer_allowed(L("127.0.0.5"), L("ALL"), peer);
}

START_TEST(test_honest_owner)
{
	char peer[AUTHMSG_PEER_MAX];
	int c, fd;

	/* bob's client 127.0.0.2 on the connection the master accepted */
	fd = accepted(master_listener(), "127.0.0.2", "127.0.0.1", port, &c);
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "127.0.0.2");
	ck_assert(!share_admits(peer));
	close(fd);
	close(c);
	/* showing nothing: no address, refused */
	ck_assert_int_eq(relay_showing(-1, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	ck_assert(!share_admits(peer));
}
END_TEST

/* (a) a socket the owner connected itself, from the address it wants */
START_TEST(test_own_connection)
{
	char peer[AUTHMSG_PEER_MAX];
	int l, fd, c;

	l = bound4("127.0.0.4", 0);
	ck_assert_int_eq(listen(l, 4), 0);
	/* from 127.0.0.5 (any port) to its own listener */
	c = accepted(l, "127.0.0.5", "127.0.0.4", port_of(l), &fd);
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	/* the other end: its peer is 127.0.0.5 itself */
	ck_assert_int_eq(relay_showing(c, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(c);
	close(fd);
	/*
	 * Bound to our port on another loopback address (the kernel lets
	 * it: our listener has 127.0.0.1 only), connected to 127.0.0.5.
	 */
	l = bound4("127.0.0.5", 0);
	ck_assert_int_eq(listen(l, 4), 0);
	fd = bound4("127.0.0.3", port);
	ck_assert_int_ge(fd, 0);
	{
		struct sockaddr_in a;

		addr4(&a, "127.0.0.5", port_of(l));
		ck_assert_int_eq(connect(fd, (struct sockaddr *)&a,
		    sizeof(a)), 0);
	}
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	ck_assert(!share_admits(peer));
	close(fd);
	close(l);
	/* the master's own address and port: the kernel refuses the bind */
	ck_assert_int_eq(bound4("127.0.0.1", port), -1);
}
END_TEST

/* (b) a listening socket; (c) UNIX sockets */
START_TEST(test_not_a_connection)
{
	char peer[AUTHMSG_PEER_MAX];
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	int l, sv[2];

	l = bound4("127.0.0.3", port);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(listen(l, 4), 0);
	ck_assert_int_eq(relay_showing(l, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(l);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(relay_showing(sv[0], peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(sv[0]);
	close(sv[1]);
	/* a bound UNIX stream socket, named like an address */
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(u.sun_path, sizeof(u.sun_path), "%c127.0.0.5", '\0');
	ck_assert_int_eq(bind(l, (struct sockaddr *)&u,
	    sizeof(sa_family_t) + 10), 0);
	ck_assert_int_eq(relay_showing(l, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(l);
	/*
	 * SCTP: a stream socket whose ports are not TCP's, so it can take our
	 * very address and port (where the kernel has SCTP; this one's
	 * absence is said, not hidden: the protocol check is in any case).
	 */
	l = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
	if (l >= 0) {
		struct sockaddr_in a;
		int c, fd;

		addr4(&a, "127.0.0.1", port);
		ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
		ck_assert_int_eq(listen(l, 4), 0);
		c = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
		addr4(&a, "127.0.0.5", 0);
		ck_assert_int_eq(bind(c, (struct sockaddr *)&a, sizeof(a)), 0);
		addr4(&a, "127.0.0.1", port);
		ck_assert_int_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
		fd = accept(l, NULL, NULL);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
		ck_assert_str_eq(peer, "");
		close(fd);
		close(c);
		close(l);
	} else
		fprintf(stderr, "check_route_peer: no SCTP here (%s): its case "
		    "not run\n", strerror(errno));
	/* a UDP socket on our port */
	l = socket(AF_INET, SOCK_DGRAM, 0);
	{
		struct sockaddr_in a;

		addr4(&a, "127.0.0.1", port);
		ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
		addr4(&a, "127.0.0.5", 9);
		ck_assert_int_eq(connect(l, (struct sockaddr *)&a, sizeof(a)), 0);
	}
	ck_assert_int_eq(relay_showing(l, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(l);
}
END_TEST

/* (d) accepted on a port the owner bound itself: 127.0.0.3 and our port */
START_TEST(test_own_listener)
{
	char peer[AUTHMSG_PEER_MAX];
	int l, fd, c;

	l = bound4("127.0.0.3", port);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(listen(l, 4), 0);
	fd = accepted(l, "127.0.0.5", "127.0.0.3", port, &c);
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	ck_assert(!share_admits(peer));
	close(fd);
	close(c);
	close(l);
}
END_TEST

/*
 * (d) with the master on "::" as well (the default interfaces listen on
 * 0.0.0.0 and ::): an IPv6 socket bound to a v4-mapped address on our
 * port is an IPv4 bind to the kernel, which our IPV6_V6ONLY listener on ::
 * does not conflict with; its local address is AF_INET6 on our port, as
 * the :: listener's connections are.  No v6-only listener accepts such a
 * connection, so none of them is ours.
 */
START_TEST(test_v4mapped_listener)
{
	char peer[AUTHMSG_PEER_MAX];
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct pollfd pfd;
	int l, fd, c, zero = 0;

	l = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
	    sizeof(zero)), 0);
	a.sin6_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET6, "::ffff:127.0.0.3", &a.sin6_addr), 1);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	c = bound4("127.0.0.5", 0);
	{
		struct sockaddr_in d;

		addr4(&d, "127.0.0.3", port);
		ck_assert_int_eq(connect(c, (struct sockaddr *)&d, sizeof(d)), 0);
	}
	pfd.fd = l;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
	fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	ck_assert(!share_admits(peer));
	close(fd);
	close(c);
	close(l);
}
END_TEST

/*
 * (e) another of the owner's own connections, one the master accepted
 * from 127.0.0.5: its address is what bob's worker gets.  The owner holds
 * that socket and could pass bob's frames over it as well, so the relay
 * would be on that connection; the address names a connection that
 * exists and that this owner holds (HACKING.md "Share keys").
 */
START_TEST(test_other_own_connection)
{
	char peer[AUTHMSG_PEER_MAX];
	int c, fd;

	fd = accepted(master_listener(), "127.0.0.5", "127.0.0.1", port, &c);
	ck_assert_int_eq(relay_showing(fd, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "127.0.0.5");
	close(fd);
	close(c);
}
END_TEST

/* A socket shown for one relay is not used for another. */
START_TEST(test_other_relay)
{
	char peer[AUTHMSG_PEER_MAX];
	int c, fd;

	fd = accepted(master_listener(), "127.0.0.5", "127.0.0.1", port, &c);
	ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY_PEER, 7, NULL, 0, fd),
	    0);
	spawn_child_event(owner);
	ck_assert_int_eq(relay_showing(-1, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	/* an honest socket then a bad one for the same relay: the last */
	ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY_PEER, next_id, NULL, 0,
	    fd), 0);
	spawn_child_event(owner);
	ck_assert_int_eq(relay_showing(c, peer, sizeof(peer)), 0);
	ck_assert_str_eq(peer, "");
	close(fd);
	close(c);
}
END_TEST

static void
assert_owner_killed(void)
{
	pid_t pid = owner_pid;
	int st;

	ck_assert_int_eq(owner->chan, -1);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	owner_pid = 0;
	ck_assert(WIFSIGNALED(st));
	/* bob's worker was given nothing */
	ck_assert_int_eq(msg_recv(bob_peer, &(struct msg){ 0 }, buf,
	    MSG_BUF_SIZE), -EAGAIN);
}

/* (f) no descriptor */
START_TEST(test_no_fd)
{
	ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY_PEER, 5, NULL, 0, -1),
	    0);
	spawn_child_event(owner);
	assert_owner_killed();
}
END_TEST

/* (f) two descriptors in one message */
START_TEST(test_two_fds)
{
	uint8_t hdr[12];
	union {
		struct cmsghdr	h;
		uint8_t		b[CMSG_SPACE(2 * sizeof(int))];
	} cb;
	struct iovec iov = { hdr, sizeof(hdr) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	int fds[2], c;

	fds[0] = accepted(master_listener(), "127.0.0.5", "127.0.0.1", port, &c);
	fds[1] = dup(fds[0]);
	le32_put(hdr, MSG_RELAY_PEER);
	le32_put(hdr + 4, 0);
	le32_put(hdr + 8, 5);
	memset(&cb, 0, sizeof(cb));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.b;
	mh.msg_controllen = sizeof(cb.b);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	ck_assert_int_eq(sendmsg(owner_peer, &mh, 0), (ssize_t)sizeof(hdr));
	spawn_child_event(owner);
	assert_owner_killed();
	close(fds[0]);
	close(fds[1]);
	close(c);
}
END_TEST

/* (f) a payload where there must be none; a message too short */
START_TEST(test_garbage)
{
	int c, fd;

	fd = accepted(master_listener(), "127.0.0.5", "127.0.0.1", port, &c);
	ck_assert_int_eq(msg_send(owner_peer, MSG_RELAY_PEER, 5, "127.0.0.5",
	    9, fd), 0);
	spawn_child_event(owner);
	assert_owner_killed();
	close(fd);
	close(c);
}
END_TEST

START_TEST(test_short)
{
	ck_assert_int_eq(send(owner_peer, "\x1f\0\0", 3, 0), 3);
	spawn_child_event(owner);
	assert_owner_killed();
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("route_peer");
	TCase *tc = tcase_create("the owner's socket");
	TCase *t6 = tcase_create("with a listener on ::");
	TCase *tk = tcase_create("malformed");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup_v4, teardown_master);
	tcase_add_test(tc, test_honest_owner);
	tcase_add_test(tc, test_own_connection);
	tcase_add_test(tc, test_not_a_connection);
	tcase_add_test(tc, test_own_listener);
	tcase_add_test(tc, test_other_own_connection);
	tcase_add_test(tc, test_other_relay);
	tcase_add_checked_fixture(t6, setup_v6_any, teardown_master);
	tcase_add_test(t6, test_v4mapped_listener);
	tcase_add_checked_fixture(tk, setup_v4, teardown_master);
	tcase_add_test(tk, test_no_fd);
	tcase_add_test(tk, test_two_fds);
	tcase_add_test(tk, test_garbage);
	tcase_add_test(tk, test_short);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, t6);
	suite_add_tcase(s, tk);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
