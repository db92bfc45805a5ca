/*
 * libFuzzer target: the master's decoders of what its children send
 * (daemon/msg.h).  A child may be compromised, and "the master never dies
 * on a child's message", so every decoder must take any bytes.
 *
 * The first input byte picks the decoder, the rest is its input:
 *
 *	0  msg_recv()            one datagram on a SOCK_SEQPACKET pair
 *	1  authmsg_req_decode()  MSG_AUTH_REQ (gate or worker)
 *	2  authmsg_rep_decode()  MSG_AUTH_REP (the children's side)
 *	3  unlinkmsg_decode()    MSG_UNLINK_AS (worker)
 *	4  unlinkmsg_decode()    MSG_UNLINK_DO (the worker's side)
 *	5  metrics_decode_add()  MSG_METRICS_REP
 *	6  ci_worker()           MSG_INFO_REP (daemon/ctl_info.c)
 *	7  authmsg_ident_decode() the identity heading MSG_CONN (the worker's side)
 *	8  admmsg_decode()       MSG_ADMIN_REQ (worker) and MSG_ADMIN_DO
 *
 * The small fixed payloads (MSG_HELLO, MSG_GATE_READY, MSG_CONN_COUNT, the
 * u64 of MSG_HANDOFF_BIND, the u32 of MSG_CTL_DONE) are read inline in
 * daemon/spawn.c, daemon/route.c and daemon/ctl_ops.c after a length
 * check; MSG_HANDOFF's payload is forwarded to the worker unread.
 *
 * Invariants checked beyond "no crash": a decoded view lies inside the
 * input, a decoded string is NUL-terminated in its field, a decoder that
 * accepts consumed exactly what the encoder writes for the result, and a
 * failed metrics decode leaves the sum untouched.
 *
 * Seeds: t/fuzz/corpus/ctlmsg, written by t/fuzz/gen_ctlmsg_seeds.c.
 * Run:
 *   make build/fuzz/fuzz_ctlmsg
 *   build/fuzz/fuzz_ctlmsg -max_total_time=60 t/fuzz/corpus/ctlmsg
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/admmsg.h"
#include "daemon/authmsg.h"
#include "daemon/msg.h"
#include "daemon/unlinkmsg.h"
#include "worker/metrics.h"

/*
 * ci_worker(), the MSG_INFO_REP decoder, is static to the file that renders
 * `usmbctl status`; it is compiled in here rather than exported for a test.
 * Its two public functions are then defined by this object, so the
 * archive's copy of ctl_info.o is never linked.
 */
#include "daemon/ctl_info.c"

enum {
	FZ_MSG_RECV,
	FZ_AUTH_REQ,
	FZ_AUTH_REP,
	FZ_UNLINK_AS,
	FZ_UNLINK_DO,
	FZ_METRICS,
	FZ_INFO_REP,
	FZ_IDENT,
	FZ_ADMIN,
	FZ_NDECODERS
};

static volatile uint32_t sink;

/* A view of n bytes at v lies inside [p, p + len). */
static void
fz_check_view(const uint8_t *v, size_t n, const uint8_t *p, size_t len)
{
	if (n == 0)
		return;
	if (v == NULL || v < p || v > p + len || n > (size_t)(p + len - v))
		abort();
}

static void
fz_check_str(const char *s, size_t cap)
{
	if (memchr(s, '\0', cap) == NULL)
		abort();
}

static void
fz_msg_recv(const uint8_t *p, size_t len)
{
	static uint8_t buf[MSG_BUF_SIZE];
	static int sv[2] = { -1, -1 };
	struct msg m;
	int rc;

	if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	if (send(sv[1], p, len, 0) != (ssize_t)len)
		return;
	rc = msg_recv(sv[0], &m, buf, sizeof(buf));
	if (rc != 0)
		return;
	/* Accepted: the header length is the datagram's, within the limit. */
	if (len < MSG_HDR_LEN || m.len != len - MSG_HDR_LEN ||
	    m.len > MSG_MAX_PAYLOAD || m.payload != buf + MSG_HDR_LEN ||
	    m.fd != -1 || memcmp(buf, p, len) != 0)
		abort();
	sink += m.type + m.id;
}

static void
fz_auth_req(const uint8_t *p, size_t len)
{
	static uint8_t out[MSG_MAX_PAYLOAD];
	struct authmsg_req r;
	int n;

	memset(&r, 0, sizeof(r));
	if (authmsg_req_decode(&r, p, len) != 0)
		return;
	fz_check_str(r.client, sizeof(r.client));
	fz_check_view(r.negotiate, r.negotiate_len, p, len);
	fz_check_view(r.challenge, r.challenge_len, p, len);
	fz_check_view(r.authenticate, r.authenticate_len, p, len);
	/* The client field's bytes past its NUL are not kept: compare lengths. */
	n = authmsg_req_encode(&r, out, sizeof(out));
	if (n < 0 || (size_t)n != len)
		abort();
	if (memcmp(out + sizeof(r.client), p + sizeof(r.client),
	    len - sizeof(r.client)) != 0)
		abort();
}

static void
fz_auth_rep(const uint8_t *p, size_t len)
{
	static uint8_t out[MSG_MAX_PAYLOAD];
	struct authmsg_rep r;
	int n;

	memset(&r, 0, sizeof(r));
	if (authmsg_rep_decode(&r, p, len) != 0)
		return;
	fz_check_str(r.user, sizeof(r.user));
	fz_check_str(r.domain, sizeof(r.domain));
	n = authmsg_rep_encode(&r, out, sizeof(out));
	if (n < 0 || (size_t)n != len)
		abort();
}

static void
fz_ident(const uint8_t *p, size_t len)
{
	uint8_t out[AUTHMSG_IDENT_LEN];
	struct authmsg_ident i;

	if (authmsg_ident_decode(&i, p, len) != 0)
		return;
	fz_check_str(i.user, sizeof(i.user));
	if (len < AUTHMSG_IDENT_LEN || i.kind > AUTHMSG_IDENT_RELAY ||
	    authmsg_ident_encode(&i, out, sizeof(out)) != AUTHMSG_IDENT_LEN ||
	    memcmp(out, p, 16) != 0)
		abort();
}

static void
fz_unlink(const uint8_t *p, size_t len, int with_root)
{
	static uint8_t out[MSG_MAX_PAYLOAD];
	static struct unlinkmsg u;
	int n;

	if (unlinkmsg_decode(&u, with_root, p, len) != 0)
		return;
	fz_check_str(u.share, sizeof(u.share));
	fz_check_str(u.path, sizeof(u.path));
	fz_check_str(u.root, sizeof(u.root));
	if (u.is_dir > 1 || (!with_root && u.root[0] != '\0'))
		abort();
	/* Strings without NUL, consumed exactly: the encoding is the input. */
	n = unlinkmsg_encode(&u, with_root, out, sizeof(out));
	if (n < 0 || (size_t)n != len || memcmp(out, p, len) != 0)
		abort();
}

static void
fz_admin(const uint8_t *p, size_t len)
{
	static struct admmsg_req r;
	uint8_t out[ADMMSG_MAX_LEN];
	int n;

	if (admmsg_decode(&r, p, len) != 0)
		return;
	fz_check_str(r.client, sizeof(r.client));
	fz_check_str(r.user, sizeof(r.user));
	if (r.op != ADMMSG_FILE_CLOSE && r.op != ADMMSG_SESS_DEL)
		abort();
	/* consumed exactly, strings without NUL: the encoding is the input */
	n = admmsg_encode(&r, out, sizeof(out));
	if (n < 0 || (size_t)n != len || memcmp(out, p, len) != 0)
		abort();
}

static void
fz_metrics(const uint8_t *p, size_t len)
{
	static struct metrics sum, before, zero;
	static uint8_t out[sizeof(struct metrics) * 2];
	int n;

	memcpy(&before, &sum, sizeof(sum));
	if (metrics_decode_add(&sum, p, len) != 0) {
		if (memcmp(&before, &sum, sizeof(sum)) != 0)
			abort();	/* "sum untouched" on failure */
		return;
	}
	/* Accepted: exactly one encoding's length. */
	n = metrics_encode(&zero, out, sizeof(out));
	if (n < 0 || (size_t)n != len)
		abort();
	/* Counters wrap on overflow; start afresh now and then. */
	if (sum.bytes_read > UINT64_MAX / 2)
		memset(&sum, 0, sizeof(sum));
}

static void
fz_info_rep(const uint8_t *p, size_t len)
{
	struct ctl_reply rep;
	struct ci ci;
	size_t i;

	memset(&ci, 0, sizeof(ci));
	memset(&rep, 0, sizeof(rep));
	rep.data = (uint8_t *)p;
	rep.len = (uint32_t)len;
	rep.type = MSG_INFO_REP;
	/* The report names its sender: let the fuzzer past that check. */
	rep.pid = len >= 8 ? (pid_t)le32_get(p + 4) : 1;
	ci_worker(&ci, &rep);
	ci_conn_idle(&ci);	/* a relayed session's idle time: its connection's */
	/* Each entry costs at least a string length (2 bytes) of input. */
	if (ci.ns + ci.nt + ci.no > len / 2 + 1 || ci.nc > len / 2 + 1)
		abort();
	for (i = 0; i < ci.nc; i++)
		fz_check_str(ci.c[i].addr, sizeof(ci.c[i].addr));
	for (i = 0; i < ci.ns; i++) {
		fz_check_str(ci.s[i].user, sizeof(ci.s[i].user));
		fz_check_str(ci.s[i].addr, sizeof(ci.s[i].addr));
	}
	for (i = 0; i < ci.nt; i++) {
		fz_check_str(ci.t[i].share, sizeof(ci.t[i].share));
		fz_check_str(ci.t[i].addr, sizeof(ci.t[i].addr));
	}
	for (i = 0; i < ci.no; i++) {
		fz_check_str(ci.o[i].share, sizeof(ci.o[i].share));
		fz_check_str(ci.o[i].path, sizeof(ci.o[i].path));
	}
	sink += (uint32_t)(ci.ns + ci.nt + ci.no) + (uint32_t)ci.truncated;
	ci_free(&ci);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	size_t len;

	if (size < 1 || size - 1 > MSG_BUF_SIZE)
		return 0;
	p = data + 1;
	len = size - 1;
	switch (data[0] % FZ_NDECODERS) {
	case FZ_MSG_RECV:
		fz_msg_recv(p, len);
		break;
	case FZ_AUTH_REQ:
		fz_auth_req(p, len);
		break;
	case FZ_AUTH_REP:
		fz_auth_rep(p, len);
		break;
	case FZ_ADMIN:
		fz_admin(p, len);
		break;
	case FZ_UNLINK_AS:
		fz_unlink(p, len, 0);
		break;
	case FZ_UNLINK_DO:
		fz_unlink(p, len, 1);
		break;
	case FZ_METRICS:
		fz_metrics(p, len);
		break;
	case FZ_INFO_REP:
		fz_info_rep(p, len);
		break;
	case FZ_IDENT:
		fz_ident(p, len);
		break;
	}
	return 0;
}
