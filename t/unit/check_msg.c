/*
 * Unit tests for daemon/msg.c over real SOCK_SEQPACKET socketpairs: round
 * trips with and without an fd, and every malformed datagram a child could
 * send (truncated, length mismatch, oversized, garbage, two fds), each of
 * which must give -EBADMSG without leaking a descriptor.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/msg.h"
#include "proto/cur.h"

static int sv[2];
static uint8_t *buf;

static void
setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	buf = malloc(MSG_BUF_SIZE);
	ck_assert_ptr_nonnull(buf);
}

static void
teardown(void)
{
	close(sv[0]);
	close(sv[1]);
	free(buf);
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Sends raw bytes with nfds copies of fd attached (one SCM_RIGHTS cmsg). */
static void
send_raw(const void *data, size_t len, const int *fds, int nfds)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)data, .iov_len = len };
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct msghdr mh;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	ck_assert_int_eq(sendmsg(sv[0], &mh, 0), (ssize_t)len);
}

static void
hdr_make(uint8_t *h, uint32_t type, uint32_t len, uint32_t id)
{
	le32_put(h, type);
	le32_put(h + 4, len);
	le32_put(h + 8, id);
}

START_TEST(test_round_trip_no_fd)
{
	struct msg m;
	const char payload[] = "hello, master";

	ck_assert_int_eq(msg_send(sv[0], MSG_HELLO, 77, payload, sizeof(payload), -1), 0);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_HELLO);
	ck_assert_uint_eq(m.id, 77);
	ck_assert_uint_eq(m.len, sizeof(payload));
	ck_assert_mem_eq(m.payload, payload, sizeof(payload));
	ck_assert_int_eq(m.fd, -1);

	/* an empty payload */
	ck_assert_int_eq(msg_send(sv[1], MSG_RELOAD, 0, NULL, 0, -1), 0);
	ck_assert_int_eq(msg_recv(sv[0], &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_RELOAD);
	ck_assert_uint_eq(m.len, 0);
	ck_assert_int_eq(m.fd, -1);
}
END_TEST

START_TEST(test_round_trip_fd)
{
	struct msg m;
	int p[2], base;
	char got[8] = { 0 };

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	base = count_fds();
	ck_assert_int_eq(msg_send(sv[0], MSG_NEW_CONN, 5, "127.0.0.1", 10, p[1]), 0);
	close(p[1]);	/* the sender closes its copy after a successful send */
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_NEW_CONN);
	ck_assert_str_eq((const char *)m.payload, "127.0.0.1");
	ck_assert_int_ge(m.fd, 0);
	/* received with MSG_CMSG_CLOEXEC */
	ck_assert_int_ne(fcntl(m.fd, F_GETFD) & FD_CLOEXEC, 0);
	/* the fd is the real write end: what we write comes out of p[0] */
	ck_assert_int_eq(write(m.fd, "ping", 4), 4);
	ck_assert_int_eq(read(p[0], got, sizeof(got)), 4);
	ck_assert_str_eq(got, "ping");
	close(m.fd);
	ck_assert_int_eq(count_fds(), base - 1);
	close(p[0]);
}
END_TEST

START_TEST(test_max_payload)
{
	struct msg m;
	uint8_t *big = calloc(1, MSG_MAX_PAYLOAD + 1);

	ck_assert_ptr_nonnull(big);
	big[MSG_MAX_PAYLOAD - 1] = 0xab;
	ck_assert_int_eq(msg_send(sv[0], MSG_STATUS_REP, 1, big, MSG_MAX_PAYLOAD, -1), 0);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.len, MSG_MAX_PAYLOAD);
	ck_assert_uint_eq(m.payload[MSG_MAX_PAYLOAD - 1], 0xab);
	/* one byte more is refused by the sender */
	ck_assert_int_eq(msg_send(sv[0], MSG_STATUS_REP, 1, big, MSG_MAX_PAYLOAD + 1, -1),
	    -EMSGSIZE);
	free(big);
}
END_TEST

START_TEST(test_truncated)
{
	struct msg m;
	uint8_t h[MSG_HDR_LEN];
	int p[2], base;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	base = count_fds();
	hdr_make(h, MSG_HELLO, 0, 1);
	send_raw(h, 5, NULL, 0);		/* shorter than a header */
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(m.fd, -1);
	send_raw(h, 11, &p[1], 1);		/* ... and with an fd */
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(m.fd, -1);
	ck_assert_int_eq(count_fds(), base);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_length_mismatch)
{
	struct msg m;
	uint8_t d[MSG_HDR_LEN + 8];
	int p[2], base;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	base = count_fds();
	memset(d, 'x', sizeof(d));
	hdr_make(d, MSG_HELLO, 10, 1);		/* says 10, carries 8 */
	send_raw(d, sizeof(d), &p[1], 1);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(m.fd, -1);
	hdr_make(d, MSG_HELLO, 4, 1);		/* says 4, carries 8 */
	send_raw(d, sizeof(d), NULL, 0);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(count_fds(), base);
	/* the channel still works afterwards */
	ck_assert_int_eq(msg_send(sv[0], MSG_GATE_READY, 2, NULL, 0, -1), 0);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), 0);
	ck_assert_uint_eq(m.type, MSG_GATE_READY);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_oversized)
{
	struct msg m;
	size_t n = MSG_BUF_SIZE + 100;
	uint8_t *d = calloc(1, n);
	int p[2], base;

	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	base = count_fds();
	/* a consistent header, but more than the receive buffer: MSG_TRUNC */
	hdr_make(d, MSG_STATUS_REP, (uint32_t)(n - MSG_HDR_LEN), 1);
	send_raw(d, n, &p[1], 1);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(m.fd, -1);
	ck_assert_int_eq(count_fds(), base);
	/* a receive buffer larger than the limit still rejects len > max */
	{
		uint8_t *bigbuf = malloc(n);

		ck_assert_ptr_nonnull(bigbuf);
		send_raw(d, n, NULL, 0);
		ck_assert_int_eq(msg_recv(sv[1], &m, bigbuf, n), -EBADMSG);
		free(bigbuf);
	}
	close(p[0]);
	close(p[1]);
	free(d);
}
END_TEST

START_TEST(test_garbage)
{
	struct msg m;
	uint8_t d[200];
	unsigned seed = 12345;
	int i, j, bad = 0;

	/* pseudo-random datagrams; none may be taken for a message unless its
	 * length field happens to match, which we exclude by construction */
	for (i = 0; i < 200; i++) {
		size_t len = 1 + (size_t)(rand_r(&seed) % (int)sizeof(d));

		for (j = 0; j < (int)len; j++)
			d[j] = (uint8_t)rand_r(&seed);
		if (len >= MSG_HDR_LEN && le32_get(d + 4) == len - MSG_HDR_LEN)
			d[4] ^= 0x80;
		send_raw(d, len, NULL, 0);
		if (msg_recv(sv[1], &m, buf, MSG_BUF_SIZE) == -EBADMSG)
			bad++;
	}
	ck_assert_int_eq(bad, 200);
}
END_TEST

START_TEST(test_two_fds)
{
	struct msg m;
	uint8_t h[MSG_HDR_LEN];
	int p[2], q[2], fds[2], base;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(q, O_CLOEXEC), 0);
	base = count_fds();
	hdr_make(h, MSG_HANDOFF, 0, 9);
	fds[0] = p[1];
	fds[1] = q[1];
	send_raw(h, sizeof(h), fds, 2);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EBADMSG);
	ck_assert_int_eq(m.fd, -1);
	ck_assert_int_eq(count_fds(), base);
	/* both received copies were closed: closing ours leaves the pipes
	 * without a writer, so the readers see EOF */
	close(p[1]);
	close(q[1]);
	{
		char c;

		ck_assert_int_eq(read(p[0], &c, 1), 0);
		ck_assert_int_eq(read(q[0], &c, 1), 0);
	}
	close(p[0]);
	close(q[0]);
}
END_TEST

START_TEST(test_orderly_close)
{
	struct msg m;

	close(sv[0]);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EPIPE);
	ck_assert_int_eq(m.fd, -1);
	/* sending to a closed peer fails without SIGPIPE killing us */
	ck_assert_int_eq(msg_send(sv[1], MSG_HELLO, 1, NULL, 0, -1), -EPIPE);
	sv[0] = open("/dev/null", O_RDONLY);	/* for teardown */
}
END_TEST

START_TEST(test_nonblocking_empty)
{
	struct msg m;

	ck_assert_int_eq(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(msg_recv(sv[1], &m, buf, MSG_BUF_SIZE), -EAGAIN);
}
END_TEST

static Suite *
msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip_no_fd);
	tcase_add_test(tc, test_round_trip_fd);
	tcase_add_test(tc, test_max_payload);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_length_mismatch);
	tcase_add_test(tc, test_oversized);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_two_fds);
	tcase_add_test(tc, test_orderly_close);
	tcase_add_test(tc, test_nonblocking_empty);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(msg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
