/*
 * Several users on one connection (worker/relay.c): the relay state the
 * owner sends through the master, the control records the relayed worker
 * sends back, and the relayed worker's acceptance of a MSG_CONN with
 * AUTHMSG_IDENT_RELAY (the session in progress, the master's verdict and
 * key kept for its first setup, only for the worker of the verdict's uid).
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/dispatch_priv.h"
#include "worker/handoff.h"
#include "worker/relay.h"
#include "worker/uring.h"
#include "t/unit/testconn.h"
#include "t/unit/testlib.h"

static uint8_t	buf[64 * 1024];
static uint8_t	neg[40], chal[120], mech[24];

static void
mkstate(struct relay_state *st)
{
	memset(st, 0, sizeof(*st));
	memset(neg, 1, sizeof(neg));
	memset(chal, 2, sizeof(chal));
	memset(mech, 3, sizeof(mech));
	st->session_id = 0x1122334455667788ull;
	st->previous_id = 42;
	st->spnego = 1;
	st->negotiate = neg;
	st->negotiate_len = sizeof(neg);
	st->challenge = chal;
	st->challenge_len = sizeof(chal);
	st->mech_types = mech;
	st->mech_types_len = sizeof(mech);
	memset(st->preauth, 7, sizeof(st->preauth));
	st->krb_mech = 3;	/* SPNEGO_MECH_KRB5_MS */
	st->krb_mic = 1;
	st->krb_ctx = 0xabcdef0123456789ull;
}

START_TEST(test_state)
{
	struct relay_state st, d;
	int n, i;

	mkstate(&st);
	n = relay_state_encode(&st, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(relay_state_decode(&d, buf, (size_t)n), n);
	ck_assert_uint_eq(d.session_id, st.session_id);
	ck_assert_uint_eq(d.previous_id, 42);
	ck_assert_uint_eq(d.challenge_len, sizeof(chal));
	ck_assert_mem_eq(d.challenge, chal, sizeof(chal));
	ck_assert_mem_eq(d.preauth, st.preauth, 64);
	ck_assert_uint_eq(d.krb_mech, 3);
	ck_assert_uint_eq(d.krb_mic, 1);
	ck_assert_uint_eq(d.krb_ctx, 0xabcdef0123456789ull);
	/* whatever follows is the connection state: not its business */
	ck_assert_int_eq(relay_state_decode(&d, buf, (size_t)n + 9), n);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(relay_state_decode(&d, buf, (size_t)i),
		    -EBADMSG);
	/* a NEGOTIATE larger than a session's exchange keeps */
	st.negotiate_len = 600;
	st.negotiate = buf + 8000;
	n = relay_state_encode(&st, buf, 4096);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(relay_state_decode(&d, buf, (size_t)n), -EBADMSG);
	/* no session id */
	mkstate(&st);
	st.session_id = 0;
	n = relay_state_encode(&st, buf, sizeof(buf));
	ck_assert_int_eq(relay_state_decode(&d, buf, (size_t)n), -EBADMSG);
}
END_TEST

START_TEST(test_ctl)
{
	struct relay_ctl k;
	struct wcur w;
	size_t n, i;

	wcur_init(&w, buf, sizeof(buf));
	wcur_le16(&w, 31);
	wcur_le16(&w, 2);
	wcur_le64(&w, 7);
	wcur_le16(&w, 1);
	wcur_le64(&w, 8);
	wcur_le16(&w, 4);
	n = wcur_off(&w);
	ck_assert_int_eq(relay_ctl_decode(&k, buf, n), 0);
	ck_assert_uint_eq(k.granted, 31);
	ck_assert_uint_eq(k.n, 2);
	ck_assert_uint_eq(k.mid[1], 8);
	ck_assert_uint_eq(k.charge[1], 4);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(relay_ctl_decode(&k, buf, i), -EBADMSG);
	ck_assert_int_eq(relay_ctl_decode(&k, buf, n + 1), -EBADMSG);
	/* more ids than a chain has answers */
	le16_put(buf + 2, RELAY_CTL_IDS + 1);
	memset(buf + 4, 0, (RELAY_CTL_IDS + 1) * 10);
	ck_assert_int_eq(relay_ctl_decode(&k, buf,
	    4 + (RELAY_CTL_IDS + 1) * 10), -EBADMSG);
	/* a sealed frame's async states: every truncation refused */
	wcur_init(&w, buf, sizeof(buf));
	wcur_le16(&w, 0);
	wcur_le16(&w, 1);
	wcur_le64(&w, 7);
	wcur_le16(&w, 1);
	wcur_le16(&w, 1);
	wcur_le64(&w, 7);
	wcur_le64(&w, 0x99);
	wcur_le16(&w, SMB2_LOCK);
	wcur_u8(&w, 0);
	n = wcur_off(&w);
	ck_assert_int_eq(relay_ctl_decode(&k, buf, n), 0);
	ck_assert_uint_eq(k.na, 1);
	ck_assert_uint_eq(k.async[0].async_id, 0x99);
	ck_assert_uint_eq(k.async[0].command, SMB2_LOCK);
	for (i = 4 + 10 + 1; i < n; i++)
		ck_assert_int_eq(relay_ctl_decode(&k, buf, i), -EBADMSG);
	ck_assert_int_eq(relay_ctl_decode(&k, buf, n + 1), -EBADMSG);
	le16_put(buf + 14, RELAY_CTL_IDS + 1);
	ck_assert_int_eq(relay_ctl_decode(&k, buf, n), -EBADMSG);
}
END_TEST

/*
 * A MSG_CONN payload of a relayed session of uid (flags) for user, from
 * an owner whose client is on a loopback TCP connection: the client's
 * port in *cport.
 */
static size_t
mkrelay(uint32_t uid, const char *user, uint32_t flags, uint16_t *cport)
{
	struct authmsg_ident id;
	struct authmsg_rep v;
	struct relay_state st;
	struct conn *g;
	size_t off;
	int cli, n;

	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_RELAY;
	id.uid = id.gid = uid;
	id.flags = flags;
	snprintf(id.user, sizeof(id.user), "%s", user);
	ck_assert_int_eq(authmsg_ident_encode(&id, buf, sizeof(buf)),
	    AUTHMSG_IDENT_LEN);
	off = AUTHMSG_IDENT_LEN;
	/* The master's whole verdict, as route_relay puts it. */
	memset(&v, 0, sizeof(v));
	v.uid = v.gid = uid;
	v.flags = flags;
	snprintf(v.user, sizeof(v.user), "%s", user);
	memset(v.session_key, 0x5a, sizeof(v.session_key));
	v.lifetime = 600;
	v.mech_out_len = 3;
	memcpy(v.mech_out, "rep", 3);
	n = authmsg_rep_encode(&v, buf + off + 4, sizeof(buf) - off - 4);
	ck_assert_int_gt(n, 0);
	le32_put(buf + off, (uint32_t)n);
	off += 4 + (size_t)n;
	mkstate(&st);
	n = relay_state_encode(&st, buf + off, sizeof(buf) - off);
	ck_assert_int_gt(n, 0);
	off += (size_t)n;
	g = conn_new(NULL, test_tcp_pair(&cli, cport), CONN_ROLE_WORKER,
	    "127.0.0.1", CONN_BUF_SMALL);
	ck_assert_ptr_nonnull(g);
	g->dialect = 0x0210;
	n = handoff_encode(g, NULL, (const uint8_t *)"\0\0\0\1x", 5, buf + off,
	    sizeof(buf) - off);
	ck_assert_int_gt(n, 0);
	conn_free(g);
	close(cli);
	return off + (size_t)n;
}

START_TEST(test_accept)
{
	struct conn *c;
	uint16_t cport;
	size_t n;
	int peer;

	n = mkrelay(1002, "bob", 0, &cport);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1002), 0);
	ck_assert(c->priv->relayed);
	/* The client's address and port, not its socketpair's (status). */
	ck_assert_str_eq(c->peer, "127.0.0.1");
	ck_assert_uint_ne(cport, 0);
	ck_assert_uint_eq(conn_peer_port(c), cport);
	ck_assert(c->sessions[0].in_use);
	ck_assert_int_eq(c->sessions[0].state, SESS_IN_PROGRESS);
	ck_assert_uint_eq(c->sessions[0].session_id, 0x1122334455667788ull);
	ck_assert_ptr_nonnull(c->sessions[0].auth);
	ck_assert_int_eq(c->sessions[0].auth->step, 1);
	ck_assert_uint_eq(c->sessions[0].auth->challenge_len, sizeof(chal));
	ck_assert_ptr_nonnull(c->priv->relay_verdict);
	ck_assert_str_eq(c->priv->relay_verdict->user, "bob");
	ck_assert_uint_eq(c->priv->relay_verdict->uid, 1002);
	ck_assert_uint_eq(c->priv->relay_verdict->session_key[0], 0x5a);
	ck_assert_uint_eq(c->priv->relay_verdict->lifetime, 600);
	ck_assert_uint_eq(c->priv->relay_verdict->mech_out_len, 3);
	ck_assert_uint_eq(c->priv->rlen, 5);
	conn_free(c);
	close(peer);

	/* the verdict is another uid's than this worker's */
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1001), -EBADMSG);
	ck_assert_ptr_null(c->priv->relay_verdict);
	conn_free(c);
	close(peer);
	/* a guest is never relayed */
	n = mkrelay(1002, "bob", AUTH_FLAG_GUEST, &cport);
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1002), -EBADMSG);
	conn_free(c);
	close(peer);
	/* a verdict that is not the identity's (the master's both) */
	n = mkrelay(1002, "bob", 0, &cport);
	buf[AUTHMSG_IDENT_LEN + 4 + 4 + 4 + 16] ^= 1;	/* the verdict's uid */
	c = test_worker_conn(&peer);
	ck_assert_int_eq(handoff_accept(c, buf, n, 1002), -EBADMSG);
	ck_assert_ptr_null(c->priv->relay_verdict);
	conn_free(c);
	close(peer);
	/* every truncation is refused */
	n = mkrelay(1002, "bob", 0, &cport);
	for (size_t i = 0; i < n; i++) {
		c = test_worker_conn(&peer);
		ck_assert_int_eq(handoff_accept(c, buf, i, 1002), -EBADMSG);
		conn_free(c);
		close(peer);
	}
}
END_TEST

START_TEST(test_trailer)
{
	struct dispatch_out outs[3];
	struct relay_ctl k;
	struct conn *c;
	uint8_t t[RELAY_CTL_MAX];
	size_t n;
	int peer;

	c = test_worker_conn(&peer);
	c->dialect = 0x0300;
	test_rsp_hdr(c, 4, 10, 2, 5, 0, 0);
	/* an interim answer counts, its async final one does not */
	test_rsp_hdr(c, 100, 11, 1, 3, SMB2_FLAGS_ASYNC_COMMAND, 0x00000103);
	test_rsp_hdr(c, 200, 12, 1, 0, SMB2_FLAGS_ASYNC_COMMAND, 0);
	outs[0].off = 4;
	outs[1].off = 100;
	outs[2].off = 200;
	n = relay_trailer(c, outs, 3, 0, t, sizeof(t));
	ck_assert_uint_gt(n, 4);
	ck_assert_uint_eq(t[0], RELAY_CTL_TYPE);
	ck_assert_uint_eq((size_t)t[3], n - 4);
	ck_assert_int_eq(relay_ctl_decode(&k, t + 4, n - 4), 0);
	ck_assert_uint_eq(k.granted, 8);
	ck_assert_uint_eq(k.n, 2);
	ck_assert_uint_eq(k.mid[0], 10);
	ck_assert_uint_eq(k.charge[0], 2);
	ck_assert_uint_eq(k.mid[1], 11);
	ck_assert_uint_eq(k.na, 0);
	/* sealed: the async answers' states follow, in clear */
	le64_put(c->priv->sbuf + 100 + 32, 0x77);
	le64_put(c->priv->sbuf + 200 + 32, 0x78);
	le16_put(c->priv->sbuf + 100 + 12, SMB2_CHANGE_NOTIFY);
	n = relay_trailer(c, outs, 3, 1, t, sizeof(t));
	ck_assert_uint_eq((size_t)t[2] << 8 | t[3], n - 4);
	ck_assert_int_eq(relay_ctl_decode(&k, t + 4, n - 4), 0);
	ck_assert_uint_eq(k.n, 2);
	ck_assert_uint_eq(k.na, 2);
	ck_assert_uint_eq(k.async[0].mid, 11);
	ck_assert_uint_eq(k.async[0].async_id, 0x77);
	ck_assert_uint_eq(k.async[0].command, SMB2_CHANGE_NOTIFY);
	ck_assert_uint_eq(k.async[0].final, 0);
	ck_assert_uint_eq(k.async[1].mid, 12);
	ck_assert_uint_eq(k.async[1].final, 1);
	/* no room: nothing */
	ck_assert_uint_eq(relay_trailer(c, outs, 3, 0, t, 8), 0);
	conn_free(c);
	close(peer);
}
END_TEST

START_TEST(test_replay)
{
	struct conn_credits cr;

	conn_credits_init(&cr, CONN_MAX_CREDITS);
	ck_assert_int_eq(conn_credits_replay(&cr, 100, 1), 0);
	/* the same id again: the owner replaying a signed request */
	ck_assert_int_eq(conn_credits_replay(&cr, 100, 1), -1);
	/* gaps (other sessions' ids) and ids below the highest are fine */
	ck_assert_int_eq(conn_credits_replay(&cr, 105, 4), 0);
	ck_assert_int_eq(conn_credits_replay(&cr, 102, 1), 0);
	ck_assert_int_eq(conn_credits_replay(&cr, 107, 1), -1);
	ck_assert_int_eq(conn_credits_replay(&cr, 109, 0), 0);
	/* far ahead: the window moves, its old ids are refused */
	ck_assert_int_eq(conn_credits_replay(&cr, 100000, 1), 0);
	ck_assert_int_eq(conn_credits_replay(&cr, 103, 1), -1);
	ck_assert_int_eq(conn_credits_replay(&cr,
	    100001 - CONN_MAX_CREDITS * 2, 1), 0);
	ck_assert_int_eq(conn_credits_replay(&cr, UINT64_MAX, 1), -1);
	/* a relayed connection keeps granting: what it spends comes back */
	conn_credits_init(&cr, 64);
	for (int i = 0; i < 100000; i++) {
		conn_credits_spend(&cr, 1);
		ck_assert_uint_gt(conn_credits_grant(&cr, 1, 1), 0);
	}
}
END_TEST

START_TEST(test_inflight)
{
	static struct relay_inflight t;
	uint8_t f[2 * 80], out[1024];
	struct relay_ctl k;
	struct smb2_hdr h;
	size_t n;

	memset(&t, 0, sizeof(t));
	memset(f, 0, sizeof(f));
	/* a chain of a NOTIFY (8 + 72 bytes) and a READ, signed; a CANCEL */
	test_smb2_hdr(f, SMB2_CHANGE_NOTIFY, 7, SMB2_FLAGS_SIGNED, 0, 0);
	le32_put(f + 20, 80);	/* NextCommand */
	test_smb2_hdr(f + 80, SMB2_READ, 8, SMB2_FLAGS_SIGNED, 0, 0);
	relay_inflight_note(&t, f, sizeof(f));
	ck_assert_uint_eq(t.n, 2);
	test_smb2_hdr(f, SMB2_CANCEL, 7, 0, 0, 0);
	relay_inflight_note(&t, f, 73);
	ck_assert_uint_eq(t.n, 2);
	/* NOTIFY's interim answer: it waits on, async */
	test_smb2_hdr(f, SMB2_CHANGE_NOTIFY, 7, SMB2_FLAGS_SERVER_TO_REDIR |
	    SMB2_FLAGS_ASYNC_COMMAND, STATUS_PENDING, 0x99);
	relay_inflight_answered(&t, f, 73);
	ck_assert_uint_eq(t.n, 2);
	/* a break notice (mid -1) and an unknown id change nothing */
	test_smb2_hdr(f, SMB2_OPLOCK_BREAK, UINT64_MAX, 1, 0, 0);
	relay_inflight_answered(&t, f, 73);
	ck_assert_uint_eq(t.n, 2);
	/* the worker dies: two answers, each with its control record */
	n = relay_inflight_answer(&t, 0x1234, 0x0300, out, sizeof(out));
	ck_assert_uint_eq(t.n, 0);
	ck_assert_uint_eq(n, 2 * (4 + 73 + 4) + 4 + 14);
	/* the NOTIFY: async, its AsyncId, no id to charge (interim did) */
	ck_assert_int_eq(smb2_frame_decode(out), 73);
	ck_assert_int_eq(smb2_hdr_decode(out + 4, 73, &h), 0);
	ck_assert_uint_eq(h.status, STATUS_USER_SESSION_DELETED);
	ck_assert_uint_eq(h.message_id, 7);
	ck_assert_uint_eq(h.async_id, 0x99);
	ck_assert(h.flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert(h.flags & SMB2_FLAGS_SIGNED);	/* 3.x: the flag, as dispatch */
	ck_assert_uint_eq(h.session_id, 0x1234);
	ck_assert_uint_eq(out[77], RELAY_CTL_TYPE);
	ck_assert_int_eq(relay_ctl_decode(&k, out + 81, 4), 0);
	ck_assert_uint_eq(k.n, 0);
	/* the READ: sync, its id charged, its credits given back */
	ck_assert_int_eq(smb2_hdr_decode(out + 81 + 4 + 4, 73, &h), 0);
	ck_assert_uint_eq(h.message_id, 8);
	ck_assert_uint_eq(h.command, SMB2_READ);
	ck_assert_uint_eq(h.tree_id, 5);
	ck_assert_uint_eq(h.credits, 1);
	ck_assert(!(h.flags & SMB2_FLAGS_ASYNC_COMMAND));
	ck_assert_int_eq(relay_ctl_decode(&k, out + 85 + 77 + 4, 14), 0);
	ck_assert_uint_eq(k.n, 1);
	ck_assert_uint_eq(k.mid[0], 8);
	/* a full table notes no more; a room too small writes none */
	for (uint64_t i = 0; i < RELAY_INFLIGHT + 5; i++) {
		test_smb2_hdr(f, SMB2_READ, 100 + i, 0, 0, 0);
		relay_inflight_note(&t, f, 73);
	}
	ck_assert_uint_eq(t.n, RELAY_INFLIGHT);
	ck_assert_uint_eq(relay_inflight_answer(&t, 1, 0x0210, out, 50), 0);
	ck_assert_uint_eq(t.n, 0);
	/* an encrypted frame is not read */
	memcpy(f, "\xfdSMB", 4);
	relay_inflight_note(&t, f, 73);
	ck_assert_uint_eq(t.n, 0);
}
END_TEST

/*
 * An answer as the relayed worker writes it at p: frame header, the frame
 * (f, flen), a control record of ids 0 and one grant.  Its length.
 */
static size_t
mkanswer(uint8_t *p, const uint8_t *f, size_t flen)
{
	smb2_frame_encode(p, (uint32_t)flen);
	memcpy(p + SMB2_FRAME_LEN, f, flen);
	p += SMB2_FRAME_LEN + flen;
	p[0] = RELAY_CTL_TYPE;
	p[1] = p[2] = 0;
	p[3] = 4;
	le16_put(p + 4, 1);
	le16_put(p + 6, 0);
	return 2 * SMB2_FRAME_LEN + flen + 4;
}

/*
 * What the owner reads of a hostile relayed worker's stream
 * (relay_answer_next): lengths bounded, incomplete answers waited for,
 * and a frame that speaks for any session but the relay's refused (the
 * owner would pass it to the client as that session's answer).
 */
START_TEST(test_answer_next)
{
	static uint8_t a[2 * (CONN_BUF_BIG + 64)];
	const uint64_t sid = 0x77, alice = 0x55;
	uint8_t f[3 * 80];
	size_t n, i, flen = 0, klen = 0;

	/* an honest answer: every prefix is incomplete, the whole one taken */
	memset(f, 0, sizeof(f));
	test_smb2_hdr(f, SMB2_READ, 9, SMB2_FLAGS_SERVER_TO_REDIR, 0, 0);
	le64_put(f + 40, sid);
	n = mkanswer(a, f, 73);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(relay_answer_next(a, i, sid, &flen, &klen), 0);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), 1);
	ck_assert_uint_eq(flen, 73);
	ck_assert_uint_eq(klen, 4);
	/* the same answer under the owner's user's session */
	le64_put(a + SMB2_FRAME_LEN + 40, alice);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	/* ... or in the second element of a chain */
	test_smb2_hdr(f, SMB2_READ, 9, SMB2_FLAGS_SERVER_TO_REDIR, 0, 0);
	le64_put(f + 40, sid);
	le32_put(f + 20, 80);
	test_smb2_hdr(f + 80, SMB2_WRITE, 10, SMB2_FLAGS_SERVER_TO_REDIR, 0, 0);
	le64_put(f + 80 + 40, alice);
	n = mkanswer(a, f, 80 + 73);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	le64_put(a + SMB2_FRAME_LEN + 80 + 40, sid);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), 1);
	/* a chain that points outside itself or between headers */
	le32_put(a + SMB2_FRAME_LEN + 20, 84);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	le32_put(a + SMB2_FRAME_LEN + 20, 160);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	/* a lease break notice names no session; nothing else may */
	test_smb2_hdr(f, SMB2_OPLOCK_BREAK, UINT64_MAX, SMB2_FLAGS_SERVER_TO_REDIR,
	    0, 0);
	n = mkanswer(a, f, 73);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), 1);
	le64_put(a + SMB2_FRAME_LEN + 24, 9);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	test_smb2_hdr(f, SMB2_READ, UINT64_MAX, SMB2_FLAGS_SERVER_TO_REDIR, 0, 0);
	n = mkanswer(a, f, 73);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	/* a transform: its SessionId, whole */
	memset(f, 0, sizeof(f));
	f[0] = 0xFD;
	memcpy(f + 1, "SMB", 3);
	le64_put(f + 44, sid);
	n = mkanswer(a, f, SMB2_TRANSFORM_HDR_LEN + 20);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), 1);
	le64_put(a + SMB2_FRAME_LEN + 44, alice);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	n = mkanswer(a, f, SMB2_TRANSFORM_HDR_LEN - 1);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	/* SMB1, nothing, or a header cut short */
	f[0] = 0xFF;
	n = mkanswer(a, f, 73);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	n = mkanswer(a, f, 0);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	test_smb2_hdr(f, SMB2_READ, 9, SMB2_FLAGS_SERVER_TO_REDIR, 0, 0);
	le64_put(f + 40, sid);
	n = mkanswer(a, f, 63);
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	/* no control record after the frame, or one too long */
	n = mkanswer(a, f, 73);
	a[SMB2_FRAME_LEN + 73] = 0;
	ck_assert_int_eq(relay_answer_next(a, n, sid, &flen, &klen), -1);
	a[SMB2_FRAME_LEN + 73] = RELAY_CTL_TYPE;
	a[SMB2_FRAME_LEN + 73 + 1] = (uint8_t)((RELAY_CTL_MAX + 1) >> 16);
	a[SMB2_FRAME_LEN + 73 + 2] = (uint8_t)((RELAY_CTL_MAX + 1) >> 8);
	a[SMB2_FRAME_LEN + 73 + 3] = (uint8_t)(RELAY_CTL_MAX + 1);
	ck_assert_int_eq(relay_answer_next(a, sizeof(a), sid, &flen, &klen),
	    -1);
	/* a frame longer than any answer: refused before it is all there */
	smb2_frame_encode(a, CONN_BUF_BIG + 1);
	ck_assert_int_eq(relay_answer_next(a, SMB2_FRAME_LEN, sid, &flen,
	    &klen), -1);
	smb2_frame_encode(a, CONN_BUF_BIG);
	ck_assert_int_eq(relay_answer_next(a, SMB2_FRAME_LEN, sid, &flen,
	    &klen), 0);
	/* the drop record, or a header that is neither */
	a[0] = RELAY_DROP_TYPE;
	ck_assert_int_eq(relay_answer_next(a, SMB2_FRAME_LEN, sid, &flen,
	    &klen), -2);
	a[0] = RELAY_RING_TYPE;
	ck_assert_int_eq(relay_answer_next(a, SMB2_FRAME_LEN, sid, &flen,
	    &klen), -1);
}
END_TEST

/*
 * The owner's backlog (worker/relay_wq.c): a relay that takes nothing
 * never makes the owner wait; what its socket refuses waits, in order,
 * up to RELAY_WQ_CAP; the head's age says when it is late; once the peer
 * reads, it all arrives whole and in order.
 */
static int64_t wq_clock;

static int64_t
wq_now(void)
{
	return wq_clock;
}

START_TEST(test_wq)
{
	static uint8_t big[CONN_MAX_TRANS], got[CONN_MAX_TRANS + 64];
	struct relay_wq q;
	uint8_t hdr[SMB2_FRAME_LEN];
	size_t sent = 0, total = 0, i;
	int sv[2], rc, frames = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	ck_assert_int_eq(relay_wq_init(&q), 0);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + i / 4096);
	/* A small frame goes straight to the socket: nothing waits. */
	smb2_frame_encode(hdr, 100);
	wq_clock = 1000;
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, big, 100, wq_now), 0);
	ck_assert(!relay_wq_pending(&q));
	sent += SMB2_FRAME_LEN + 100;
	/* Frames of the largest size until the backlog refuses one. */
	smb2_frame_encode(hdr, sizeof(big));
	for (;;) {
		wq_clock += 10;
		rc = relay_wq_send(&q, sv[0], hdr, big, sizeof(big), wq_now);
		if (rc != 0)
			break;
		sent += SMB2_FRAME_LEN + sizeof(big);
		frames++;
		ck_assert(relay_wq_pending(&q));
		ck_assert_int_le(frames, 3);
	}
	ck_assert_int_eq(rc, -ENOBUFS);
	ck_assert_int_ge(frames, 2);
	/* Its head waits since the first frame it held. */
	ck_assert(!relay_wq_late(&q, 1010 + RELAY_WAIT_MS - 1));
	ck_assert(relay_wq_late(&q, 1010 + RELAY_WAIT_MS));
	/* The peer reads: everything comes, frame by frame, in order. */
	while (total < sent) {
		ssize_t n = read(sv[1], got, sizeof(got));

		if (n < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			wq_clock += 1;
			ck_assert_int_eq(relay_wq_flush(&q, sv[0], wq_clock), 0);
			/* Progress: the head's wait starts again. */
			ck_assert(!relay_wq_late(&q, wq_clock + 1));
			continue;
		}
		total += (size_t)n;
	}
	ck_assert_uint_eq(total, sent);
	ck_assert(!relay_wq_pending(&q));
	/* The peer gone: -EPIPE, never a wait. */
	close(sv[1]);
	smb2_frame_encode(hdr, 100);
	rc = relay_wq_send(&q, sv[0], hdr, big, 100, wq_now);
	ck_assert_int_eq(rc, -EPIPE);
	relay_wq_free(&q);
	close(sv[0]);
}
END_TEST

/*
 * The ring's sends (worker/relay_wq.c, with io_uring): a small frame is
 * copied and sent by the next io_uring_enter, frames queued behind it
 * follow in order, a full socket answers -EAGAIN at once (MSG_DONTWAIT:
 * the wait that submitted it must not hang on it) and falls back to
 * EPOLLOUT, and a relay that ends with a send in flight buries its buffer.
 */
static int
wq_ring_wait(struct relay_wq *q, int fd, int peer, short ev)
{
	struct uring_cqe cq[8];
	int n, i, rc = 99;

	/* The loop's wait ends on another event: here the peer's poll. */
	ck_assert_int_eq(uring_poll(peer, ev, 7), 0);
	n = uring_wait(cq, 8);
	ck_assert_int_ge(n, 1);
	for (i = 0; i < n; i++)
		if (cq[i].ud == q->ud)
			rc = relay_wq_sent(q, fd, cq[i].res, wq_clock);
	if (n < 2) {	/* the poll's completion may come alone, later */
		n = uring_wait(cq, 8);
		for (i = 0; i < n; i++)
			if (cq[i].ud == q->ud)
				rc = relay_wq_sent(q, fd, cq[i].res, wq_clock);
	}
	return rc;
}

START_TEST(test_wq_ring)
{
	static uint8_t msg[4096], got[8192];
	struct relay_wq q;
	uint8_t hdr[SMB2_FRAME_LEN];
	size_t i, total = 0;
	ssize_t n;
	int sv[2];

	if (uring_init(16) != 0)
		return;		/* no io_uring here: the epoll path is test_wq */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv), 0);
	ck_assert_int_eq(relay_wq_init(&q), 0);
	q.ud = RELAY_UD_BIT | RELAY_UD_SEND | 5;
	ck_assert((q.ud & URING_UD_QUICK) == URING_UD_QUICK);
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13);
	wq_clock = 1000;
	smb2_frame_encode(hdr, 100);
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, msg, 100, wq_now), 0);
	ck_assert_uint_eq(q.ring, SMB2_FRAME_LEN + 100);
	ck_assert(relay_wq_pending(&q) && !relay_wq_stuck(&q));
	/* Not sent before the loop's io_uring_enter. */
	ck_assert_int_lt(read(sv[1], got, sizeof(got)), 0);
	/* One more behind it, in order. */
	smb2_frame_encode(hdr, 200);
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, msg + 100, 200,
	    wq_now), 0);
	ck_assert_uint_eq(q.ring, SMB2_FRAME_LEN + 100);
	ck_assert_int_eq(wq_ring_wait(&q, sv[0], sv[1], POLLIN), 0);
	if (q.ring != 0)	/* the rest went to the ring again */
		ck_assert_int_eq(wq_ring_wait(&q, sv[0], sv[1], POLLIN), 0);
	ck_assert(!relay_wq_pending(&q));
	while ((n = read(sv[1], got + total, sizeof(got) - total)) > 0)
		total += (size_t)n;
	ck_assert_uint_eq(total, 2 * SMB2_FRAME_LEN + 300);
	ck_assert_uint_eq(smb2_frame_decode(got), 100);
	ck_assert_mem_eq(got + SMB2_FRAME_LEN, msg, 100);
	ck_assert_uint_eq(smb2_frame_decode(got + SMB2_FRAME_LEN + 100), 200);
	ck_assert_mem_eq(got + 2 * SMB2_FRAME_LEN + 100, msg + 100, 200);
	/* A full socket: -EAGAIN at once, then EPOLLOUT's path. */
	while (send(sv[0], msg, sizeof(msg), MSG_DONTWAIT) > 0)
		;
	smb2_frame_encode(hdr, 100);
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, msg, 100, wq_now), 0);
	ck_assert_int_eq(wq_ring_wait(&q, sv[0], sv[1], POLLIN), 1);
	ck_assert(relay_wq_stuck(&q));
	ck_assert(!relay_wq_late(&q, 1000 + RELAY_WAIT_MS - 1));
	ck_assert(relay_wq_late(&q, 1000 + RELAY_WAIT_MS));
	/* Ended with a send in flight: its buffer is the ring's now. */
	relay_wq_discard(&q);
	while (read(sv[1], got, sizeof(got)) > 0)
		;
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, msg, 100, wq_now), 0);
	ck_assert_uint_gt(q.ring, 0);
	relay_wq_discard(&q);
	ck_assert(q.buf == NULL && !relay_wq_pending(&q));
	ck_assert_int_eq(relay_wq_send(&q, sv[0], hdr, msg, 100, wq_now),
	    -EPIPE);
	relay_wq_free(&q);
	uring_fini();	/* frees the buried buffer */
	close(sv[0]);
	close(sv[1]);
}
END_TEST

static Suite *
relay_suite(void)
{
	Suite *s = suite_create("relay");
	TCase *tc = tcase_create("codecs");

	tcase_add_test(tc, test_state);
	tcase_add_test(tc, test_ctl);
	tcase_add_test(tc, test_accept);
	tcase_add_test(tc, test_trailer);
	tcase_add_test(tc, test_replay);
	tcase_add_test(tc, test_inflight);
	tcase_add_test(tc, test_answer_next);
	tcase_add_test(tc, test_wq);
	tcase_add_test(tc, test_wq_ring);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
