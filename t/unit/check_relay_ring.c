/*
 * The relayed worker's ring of sealed ids (worker/relay_ring.c): its
 * slots and counters as the relayed worker writes them and the owner reads
 * them at the relay's end (never an id twice, never outside the window,
 * only once an answer is all in the socket), and the memfd the owner sends
 * for it, refused in every other shape.  The rest of the relay is in
 * check_relay.c.
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

/* A slot of the ring written by hand, as a hostile worker could. */
static void
ring_slot(int fd, unsigned i, uint64_t v, uint16_t cmd, uint16_t charge)
{
	uint8_t s[RELAY_RING_SLOT];

	memset(s, 0, sizeof(s));
	memcpy(s, &v, sizeof(v));
	le16_put(s + 8, cmd);
	le16_put(s + 10, charge);
	ck_assert_int_eq(pwrite(fd, s, sizeof(s), (off_t)i * RELAY_RING_SLOT),
	    (ssize_t)sizeof(s));
}

/* A ring the owner sends on sv[0]: accepted at sv[1] (*rr); its fd. */
static int
ring_pair(int sv[2], struct relay_ring **rr)
{
	int ring;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ring = relay_ring_create();
	ck_assert_int_ge(ring, 0);
	ck_assert_int_eq(relay_ring_send(sv[0], ring), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], rr), 0);
	return ring;
}

/*
 * The ring of a relayed worker's sealed ids (worker/relay_ring.c): what
 * it notes and clears, and what the owner takes of it when the worker
 * dies: only ids its own window still admits, whatever the ring says.
 */
START_TEST(test_ring)
{
	static struct relay_inflight t;
	static struct conn_credits cr, scratch;
	uint8_t f[3 * 80], snap[RELAY_RING_SLOTS * RELAY_RING_SLOT];
	uint8_t out[2048];
	struct relay_ring *rr = NULL;
	struct smb2_hdr h;
	int sv[2], ring;
	unsigned i, used;
	size_t n, off;

	ring = ring_pair(sv, &rr);
	/* a sealed chain: a SET_INFO, a CANCEL (no answer), a READ of 2 */
	memset(f, 0, sizeof(f));
	test_smb2_hdr(f, SMB2_SET_INFO, 2, 0, 0, 0);
	le32_put(f + 20, 80);
	test_smb2_hdr(f + 80, SMB2_CANCEL, 3, 0, 0, 0);
	le32_put(f + 80 + 20, 80);
	test_smb2_hdr(f + 160, SMB2_READ, 7, 0, 0, 0);
	le16_put(f + 160 + 6, 2);
	relay_ring_note(rr, f, sizeof(f));
	/* a WRITE answered and sent: its slot is free again */
	test_smb2_hdr(f, SMB2_WRITE, 9, 0, 0, 0);
	relay_ring_note(rr, f, 73);
	relay_ring_answered(rr, 9);
	relay_ring_answered(rr, 1234);	/* not there: nothing */
	relay_ring_sent(rr);
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	for (i = 0, used = 0; i < RELAY_RING_SLOTS; i++) {
		uint64_t v;

		memcpy(&v, snap + i * RELAY_RING_SLOT, sizeof(v));
		used += v != 0;
	}
	ck_assert_uint_eq(used, 2);
	/*
	 * The window [1, 21): the owner's own request 5 charged at its
	 * admission, another relay's request 6 in flight (charged in the
	 * scratch copy only, as relay.c relay_ring_take does), this relay's
	 * clear request 12 noted in flight.
	 */
	conn_credits_init(&cr, 512);
	ck_assert_int_eq(conn_credits_charge(&cr, 0, 1), 0);
	ck_assert_uint_eq(conn_credits_grant(&cr, 20, 1), 20);
	ck_assert_int_eq(conn_credits_charge(&cr, 5, 1), 0);
	memset(&t, 0, sizeof(t));
	test_smb2_hdr(f, SMB2_READ, 12, SMB2_FLAGS_SIGNED, 0, 0);
	relay_inflight_note(&t, f, 73);
	ck_assert_uint_eq(t.n, 1);
	scratch = cr;
	ck_assert_int_eq(conn_credits_charge(&scratch, 6, 1), 0);
	ck_assert_int_eq(conn_credits_charge(&scratch, 12, 1), 0);
	/* hostile slots */
	ring_slot(ring, 10, 50 + 1, SMB2_READ, 1);	/* out of the window */
	ring_slot(ring, 11, 7 + 1, SMB2_READ, 1);	/* a duplicate */
	ring_slot(ring, 12, 2 + 1, SMB2_SET_INFO, 1);	/* another */
	ring_slot(ring, 13, 5 + 1, SMB2_READ, 1);	/* the owner's own */
	ring_slot(ring, 14, 6 + 1, SMB2_READ, 1);	/* another relay's */
	ring_slot(ring, 15, 12 + 1, SMB2_READ, 1);	/* this relay's clear one */
	ring_slot(ring, 16, (0xdeadbeefull << 32) | 4, SMB2_READ, 1); /* torn */
	ring_slot(ring, 17, 8 + 1, SMB2_READ, 1);	/* inside the READ's 2 */
	ring_slot(ring, 18, 13 + 1, 0x99, 1);		/* no such command */
	ring_slot(ring, 19, 14 + 1, SMB2_CANCEL, 1);	/* never answered */
	ring_slot(ring, 20, 15 + 1, SMB2_WRITE, 500);	/* beyond the credits */
	ring_slot(ring, 21, 0, SMB2_WRITE, 1);		/* free */
	ring_slot(ring, 22, UINT64_MAX, SMB2_WRITE, 1);	/* id -2 */
	ring_slot(ring, 23, 10 + 1, SMB2_QUERY_INFO, 0); /* a charge of 0: 1 */
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	/* a short read takes whole slots only */
	ck_assert_uint_eq(relay_inflight_collect(&t, snap, RELAY_RING_SLOT - 1,
	    &scratch), 0);
	ck_assert_uint_eq(relay_inflight_collect(&t, snap, sizeof(snap),
	    &scratch), 3);
	ck_assert_uint_eq(t.n, 4);
	ck_assert_uint_eq(t.r[1].mid, 2);
	ck_assert_uint_eq(t.r[1].command, SMB2_SET_INFO);
	ck_assert_uint_eq(t.r[2].mid, 7);
	ck_assert_uint_eq(t.r[2].charge, 2);
	ck_assert_uint_eq(t.r[3].mid, 10);
	ck_assert_uint_eq(t.r[3].charge, 1);
	/* read again, every slot is refused: each id is charged now */
	ck_assert_uint_eq(relay_inflight_collect(&t, snap, sizeof(snap),
	    &scratch), 0);
	/* answered: sync, unsigned, its charge given back */
	n = relay_inflight_answer(&t, 0x77, 0x0300, out, sizeof(out));
	ck_assert_uint_eq(t.n, 0);
	off = 4 + 73 + 4 + 14;		/* the clear READ 12 first */
	ck_assert_uint_eq(n, 4 * off);
	ck_assert_int_eq(smb2_hdr_decode(out + off + 4, 73, &h), 0);
	ck_assert_uint_eq(h.message_id, 2);
	ck_assert_uint_eq(h.command, SMB2_SET_INFO);
	ck_assert_uint_eq(h.status, STATUS_USER_SESSION_DELETED);
	ck_assert(!(h.flags & (SMB2_FLAGS_SIGNED | SMB2_FLAGS_ASYNC_COMMAND)));
	ck_assert_int_eq(smb2_hdr_decode(out + 2 * off + 4, 73, &h), 0);
	ck_assert_uint_eq(h.message_id, 7);
	ck_assert_uint_eq(h.credits, 2);
	/* a full ring notes no more */
	for (i = 0; i < RELAY_RING_SLOTS + 6; i++) {
		test_smb2_hdr(f, SMB2_READ, 100 + i, 0, 0, 0);
		relay_ring_note(rr, f, 73);
	}
	relay_ring_free(rr);
	close(ring);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* Does the ring (its fd) hold mid in a slot? */
static int
ring_holds(int ring, uint64_t mid)
{
	uint8_t snap[RELAY_RING_COUNTS];
	uint64_t v;
	unsigned i;

	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	for (i = 0; i < RELAY_RING_SLOTS; i++) {
		memcpy(&v, snap + i * RELAY_RING_SLOT, sizeof(v));
		if (v == mid + 1)
			return 1;
	}
	return 0;
}

/* The ring's counter at RELAY_RING_COUNTS + off. */
static uint64_t
ring_count(int ring, size_t off)
{
	uint64_t v;

	ck_assert_int_eq(pread(ring, &v, sizeof(v),
	    (off_t)(RELAY_RING_COUNTS + off)), (ssize_t)sizeof(v));
	return v;
}

/*
 * The relayed worker clears a slot only once its answer is all in the
 * relay's socket (worker/conn.c conn_flush; the ring's send completion
 * in worker/loop.c wk_tx_done): an answer built, or cut short by a full
 * socket, leaves the id to the owner should the worker die then.  The
 * counters follow what it reads and decrypts.
 */
START_TEST(test_ring_sent)
{
	static uint8_t big[1024 * 1024], sink[64 * 1024];
	uint8_t f[80], t[RELAY_CTL_MAX];
	struct dispatch_out outs[1];
	struct conn *c;
	int peer, sv[2], ring, sndbuf = 4096, rc, guard;
	ssize_t n;

	c = test_worker_conn(&peer);
	ring = ring_pair(sv, &c->priv->relay_ring);
	c->priv->relayed = 1;
	c->dialect = 0x0300;
	memset(f, 0, sizeof(f));
	test_smb2_hdr(f, SMB2_READ, 9, 0, 0, 0);
	relay_ring_note(c->priv->relay_ring, f, 73);
	test_smb2_hdr(f, SMB2_READ, 10, 0, 0, 0);
	relay_ring_note(c->priv->relay_ring, f, 73);
	ck_assert_uint_eq(ring_count(ring, 8), 2);
	ck_assert_uint_eq(ring_count(ring, 16), 2 * (SMB2_FRAME_LEN + 52 + 73));
	conn_read_done(c, 100);
	conn_read_done(c, 158);
	ck_assert_uint_eq(ring_count(ring, 0), 258);
	/* READ 9's answer built (its control record made): still set */
	test_rsp_hdr(c, 4, 9, 1, 1, SMB2_FLAGS_SERVER_TO_REDIR, 0);
	outs[0].off = 4;
	outs[0].len = 64;
	ck_assert_uint_gt(relay_trailer(c, outs, 1, 1, t, sizeof(t)), 4);
	ck_assert(ring_holds(ring, 9));
	/* a socket that takes part of it: still set */
	ck_assert_int_eq(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
	    sizeof(sndbuf)), 0);
	ck_assert_int_eq(fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) |
	    O_NONBLOCK), 0);
	c->priv->out_p = big;
	c->priv->out_len = sizeof(big);
	ck_assert_int_eq(conn_flush(c), -EAGAIN);
	ck_assert_uint_gt(c->priv->out_len, 0);
	ck_assert(ring_holds(ring, 9));
	/* the owner reads on: once the last byte is in, the slot is free */
	for (guard = 0, rc = -EAGAIN; rc == -EAGAIN && guard < 100000;
	    guard++) {
		n = read(peer, sink, sizeof(sink));
		ck_assert_int_gt(n, 0);
		rc = conn_flush(c);
		if (rc == -EAGAIN)
			ck_assert(ring_holds(ring, 9));
	}
	ck_assert_int_eq(rc, 0);
	ck_assert(!ring_holds(ring, 9));
	ck_assert(ring_holds(ring, 10));	/* not answered */
	conn_free(c);		/* unmaps the ring; its page stays */
	ck_assert(ring_holds(ring, 10));
	close(peer);
	close(ring);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/*
 * The owner's side of the same moment: the worker wrote an answer whole
 * and died before clearing its slot.  The answer's control record charged
 * the id in the connection's window (relay.c relay_apply), so the slot
 * still set is refused and the client gets one answer, not two.  An
 * interim answer received puts its request in the table, async; its slot
 * adds no second one.
 */
START_TEST(test_ring_answered_once)
{
	static struct relay_inflight t;
	static struct conn_credits cr, scratch;
	uint8_t f[80], snap[RELAY_RING_USED], out[1024];
	struct relay_ctl_async a;
	struct relay_ring *rr = NULL;
	struct smb2_hdr h;
	int sv[2], ring;
	size_t n;

	ring = ring_pair(sv, &rr);
	memset(f, 0, sizeof(f));
	test_smb2_hdr(f, SMB2_READ, 3, 0, 0, 0);
	relay_ring_note(rr, f, 73);
	test_smb2_hdr(f, SMB2_CHANGE_NOTIFY, 4, 0, 0, 0);
	relay_ring_note(rr, f, 73);
	test_smb2_hdr(f, SMB2_WRITE, 5, 0, 0, 0);
	relay_ring_note(rr, f, 73);
	/* READ 3 answered, NOTIFY 4's interim: sent, the worker dies */
	relay_ring_answered(rr, 3);
	relay_ring_answered(rr, 4);
	ck_assert(ring_holds(ring, 3) && ring_holds(ring, 4));
	/* what the owner took of them: each id charged, the interim noted */
	conn_credits_init(&cr, 512);
	ck_assert_int_eq(conn_credits_charge(&cr, 0, 1), 0);
	ck_assert_uint_eq(conn_credits_grant(&cr, 20, 1), 20);
	ck_assert_int_eq(conn_credits_charge(&cr, 3, 1), 0);
	ck_assert_int_eq(conn_credits_charge(&cr, 4, 1), 0);
	memset(&t, 0, sizeof(t));
	memset(&a, 0, sizeof(a));
	a.mid = 4;
	a.async_id = 0x44;
	a.command = SMB2_CHANGE_NOTIFY;
	relay_inflight_sealed(&t, &a);
	ck_assert_uint_eq(t.n, 1);
	scratch = cr;
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	/* only WRITE 5, whose answer never came */
	ck_assert_uint_eq(relay_inflight_collect(&t, snap, sizeof(snap),
	    &scratch), 1);
	ck_assert_uint_eq(t.n, 2);
	ck_assert_uint_eq(t.r[1].mid, 5);
	/* two answers: NOTIFY 4 async (as its interim), WRITE 5 sync */
	n = relay_inflight_answer(&t, 0x77, 0x0300, out, sizeof(out));
	ck_assert_uint_eq(n, (4 + 73 + 4 + 4) + (4 + 73 + 4 + 14));
	ck_assert_int_eq(smb2_hdr_decode(out + 4, 73, &h), 0);
	ck_assert_uint_eq(h.message_id, 4);
	ck_assert_uint_eq(h.async_id, 0x44);
	ck_assert(h.flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert_int_eq(smb2_hdr_decode(out + 85 + 4, 73, &h), 0);
	ck_assert_uint_eq(h.message_id, 5);
	ck_assert_uint_eq(h.status, STATUS_USER_SESSION_DELETED);
	relay_ring_free(rr);
	close(ring);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/*
 * The sealed frames the relayed worker never decrypted, from its ring's
 * counters against what the owner forwarded: counted for the log, and
 * counts that cannot be (another user's worker wrote them) not believed.
 */
START_TEST(test_ring_lost)
{
	struct relay_fwd fwd;
	struct relay_lost lost;
	struct relay_ring *rr = NULL;
	uint8_t f[120], snap[RELAY_RING_USED];
	uint64_t v;
	int sv[2], ring, i;

	ring = ring_pair(sv, &rr);
	memset(&fwd, 0, sizeof(fwd));
	memset(f, 0, sizeof(f));
	memcpy(f, "\xfdSMB", 4);
	for (i = 0; i < 3; i++)
		relay_fwd_note(&fwd, f, sizeof(f));	/* sealed, 124 each */
	test_smb2_hdr(f, SMB2_READ, 1, SMB2_FLAGS_SIGNED, 0, 0);
	relay_fwd_note(&fwd, f, 73);			/* signed, 77 */
	ck_assert_uint_eq(fwd.bytes, 3 * 124 + 77);
	ck_assert_uint_eq(fwd.sealed, 3);
	ck_assert_uint_eq(fwd.sealed_bytes, 3 * 124);
	/* nothing read yet: all three lost, all unread */
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), 1);
	ck_assert_uint_eq(lost.sealed, 3);
	ck_assert_uint_eq(lost.unread, 3 * 124 + 77);
	/* two read, one of them decrypted */
	relay_ring_read(rr, 2 * 124);
	test_smb2_hdr(f, SMB2_READ, 2, 0, 0, 0);
	relay_ring_note(rr, f, 68);
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), 1);
	ck_assert_uint_eq(lost.sealed, 2);
	ck_assert_uint_eq(lost.sealed_bytes, 2 * 124);
	ck_assert_uint_eq(lost.unread, 124 + 77);
	/* all read and decrypted: none */
	relay_ring_read(rr, 124 + 77);
	relay_ring_note(rr, f, 68);
	relay_ring_note(rr, f, 68);
	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), 0);
	ck_assert_uint_eq(lost.sealed, 0);
	ck_assert_uint_eq(lost.unread, 0);
	/* counts that cannot be: every sealed frame forwarded, not believed */
	v = fwd.bytes + 1;				/* read more than sent */
	memcpy(snap + RELAY_RING_COUNTS, &v, 8);
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), -1);
	ck_assert_uint_eq(lost.sealed, 3);
	v = 100;				/* decrypted more than read */
	memcpy(snap + RELAY_RING_COUNTS, &v, 8);
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), -1);
	v = fwd.bytes;
	memcpy(snap + RELAY_RING_COUNTS, &v, 8);
	v = 1;					/* all frames, not their bytes */
	memcpy(snap + RELAY_RING_COUNTS + 16, &v, 8);
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), -1);
	v = 4;					/* more frames than sent */
	memcpy(snap + RELAY_RING_COUNTS + 8, &v, 8);
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, sizeof(snap), &lost), -1);
	/* a short snapshot, or none */
	ck_assert_int_eq(relay_ring_lost(&fwd, snap, RELAY_RING_USED - 1,
	    &lost), -1);
	ck_assert_int_eq(relay_ring_lost(&fwd, NULL, 0, &lost), -1);
	ck_assert_uint_eq(lost.sealed, 3);
	relay_ring_free(rr);
	close(ring);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* Not a sealed memfd, or nothing sent: no ring, the relay refused. */
START_TEST(test_ring_refused)
{
	struct relay_ring *rr = (struct relay_ring *)1;
	int sv[2], p[2], fd;

	/* a pipe: no seals */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(relay_ring_send(sv[0], p[1]), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	ck_assert_ptr_null(rr);
	/* a memfd the owner could shrink under the mapping */
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, RELAY_RING_BYTES), 0);
	ck_assert_int_eq(relay_ring_send(sv[0], fd), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	/* sealed, but not the size */
	close(fd);
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_eq(ftruncate(fd, 64), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL), 0);
	ck_assert_int_eq(relay_ring_send(sv[0], fd), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	/* a frame's byte with no fd */
	ck_assert_int_eq(write(sv[0], "\0", 1), 1);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	/* nothing at all */
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EAGAIN);
	close(fd);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* Open descriptors of this process. */
static int
fd_count(void)
{
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * A hostile owner's ring: a write seal (the relayed worker's stores would
 * fault), a read-only descriptor of a proper ring (no writable mapping),
 * more descriptors than one (each closed, none kept).
 */
START_TEST(test_ring_hostile)
{
	struct relay_ring *rr = NULL;
	char cbuf[CMSG_SPACE(6 * sizeof(int))], path[64];
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec iov;
	uint8_t type = RELAY_RING_TYPE;
	int sv[2], fd, ro, before, fds[6], i;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	before = fd_count();
	/* every seal the ring needs, and a write seal besides */
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, RELAY_RING_BYTES), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL), 0);
	ck_assert_int_eq(relay_ring_send(sv[0], fd), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	ck_assert_ptr_null(rr);
	close(fd);
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_eq(ftruncate(fd, RELAY_RING_BYTES), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_FUTURE_WRITE | F_SEAL_SEAL), 0);
	ck_assert_int_eq(relay_ring_send(sv[0], fd), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	close(fd);
	/* sealed but not against more seals */
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_eq(ftruncate(fd, RELAY_RING_BYTES), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW),
	    0);
	ck_assert_int_eq(relay_ring_send(sv[0], fd), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	close(fd);
	/* a proper ring, opened read-only: no writable shared mapping */
	fd = relay_ring_create();
	ck_assert_int_ge(fd, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(ro, 0);
	ck_assert_int_eq(relay_ring_send(sv[0], ro), 0);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EACCES);
	ck_assert_ptr_null(rr);
	close(ro);
	/* six descriptors with the byte: refused, all closed */
	for (i = 0; i < 6; i++)
		fds[i] = fd;
	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &type;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	ck_assert_int_eq(sendmsg(sv[0], &mh, 0), 1);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), -EBADMSG);
	/* two: the first taken, the other closed */
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	mh.msg_controllen = CMSG_SPACE(2 * sizeof(int));
	ck_assert_int_eq(sendmsg(sv[0], &mh, 0), 1);
	ck_assert_int_eq(relay_ring_accept(sv[1], &rr), 0);
	ck_assert_ptr_nonnull(rr);
	relay_ring_free(rr);
	close(fd);
	ck_assert_int_eq(fd_count(), before);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

static Suite *
relay_ring_suite(void)
{
	Suite *s = suite_create("relay_ring");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ring);
	tcase_add_test(tc, test_ring_sent);
	tcase_add_test(tc, test_ring_answered_once);
	tcase_add_test(tc, test_ring_lost);
	tcase_add_test(tc, test_ring_refused);
	tcase_add_test(tc, test_ring_hostile);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relay_ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
