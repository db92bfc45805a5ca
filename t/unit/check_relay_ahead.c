/*
 * A relayed worker's look-ahead (worker/relay_ahead.c): the sealed frames
 * read behind the one being served are decrypted in place and their
 * requests noted in the ring, so the owner answers them if the worker
 * dies; their turn serves the plaintext; a frame that does not decrypt
 * changes nothing before its turn; a full ring notes no more.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/crypt.h"
#include "proto/cur.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/relay.h"

#define REQ_LEN		73	/* a header and a 9-byte body */

struct ahead_t {
	struct conn	*c;
	struct session	*s;
	int		 peer;
	int		 sv[2];
	int		 ring;
	size_t		 flen[128];	/* each frame's bytes in rbuf, in order */
	unsigned	 nf;
};

static void
ahead_open(struct ahead_t *t, uint16_t cipher)
{
	int sv[2];

	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	t->c = conn_new(NULL, sv[0], CONN_ROLE_WORKER, "t", CONN_BUF_SMALL);
	ck_assert_ptr_nonnull(t->c);
	t->peer = sv[1];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, t->sv), 0);
	t->ring = relay_ring_create();
	ck_assert_int_ge(t->ring, 0);
	ck_assert_int_eq(relay_ring_send(t->sv[0], t->ring), 0);
	ck_assert_int_eq(relay_ring_accept(t->sv[1], &t->c->priv->relay_ring),
	    0);
	t->c->priv->relayed = 1;
	t->c->priv->user_authed = 1;
	t->c->dialect = 0x0300;
	t->s = conn_session_new(t->c);
	ck_assert_ptr_nonnull(t->s);
	t->s->state = SESS_VALID;
	t->s->cipher = cipher;
	t->s->encrypt = 1;
	memset(t->s->dec_key, 0x3c, sizeof(t->s->dec_key));
	memset(t->s->enc_key, 0x4d, sizeof(t->s->enc_key));
}

static void
ahead_close(struct ahead_t *t)
{
	conn_free(t->c);
	close(t->peer);
	close(t->ring);
	close(t->sv[0]);
	close(t->sv[1]);
}

static void
mkreq(uint8_t *p, uint16_t cmd, uint64_t mid, uint64_t sid)
{
	struct smb2_hdr h;

	memset(p, 0, REQ_LEN);
	memset(&h, 0, sizeof(h));
	h.command = cmd;
	h.message_id = mid;
	h.credit_charge = 1;
	h.session_id = sid;
	h.tree_id = 5;
	smb2_hdr_encode(p, &h);
	le16_put(p + 64, 9);
}

/*
 * Appends to rbuf a frame sealed for the session: n requests (cmd, mid,
 * mid + 1...) in one chain; bad: one byte of its ciphertext changed.
 */
static void
ahead_put(struct ahead_t *t, uint16_t cmd, uint64_t mid, unsigned n, int bad)
{
	struct conn_private *pv = t->c->priv;
	uint8_t plain[4 * 80], *f = pv->rbuf + pv->rlen;
	struct iovec iov;
	size_t len = 0;
	unsigned i;

	ck_assert_uint_le(n, 4);
	memset(plain, 0, sizeof(plain));
	for (i = 0; i < n; i++) {
		mkreq(plain + len, cmd, mid + i, t->s->session_id);
		if (i + 1 < n)
			le32_put(plain + len + 20, 80);	/* NextCommand */
		len += i + 1 < n ? 80 : REQ_LEN;
	}
	iov.iov_base = plain;
	iov.iov_len = len;
	ck_assert_uint_lt(pv->rlen + 4 + 52 + len + 64, pv->rcap);
	ck_assert_int_eq(smb2_encrypt(t->s->cipher, t->s->dec_key,
	    t->s->session_id, &iov, 1, f + 4, f + 4 + 52), (int)len);
	smb2_frame_encode(f, (uint32_t)(52 + len));
	if (bad)
		f[4 + 52 + 3] ^= 0x80;
	pv->rlen += 4 + 52 + len;
	t->flen[t->nf++] = 4 + 52 + len;
}

/* Does the ring hold mid in a slot?  How many slots are set? */
static int
ring_holds(int ring, uint64_t mid, unsigned *used)
{
	uint8_t snap[RELAY_RING_COUNTS];
	uint64_t v;
	unsigned i;
	int found = 0;

	ck_assert_int_eq(pread(ring, snap, sizeof(snap), 0),
	    (ssize_t)sizeof(snap));
	if (used != NULL)
		*used = 0;
	for (i = 0; i < RELAY_RING_SLOTS; i++) {
		memcpy(&v, snap + i * RELAY_RING_SLOT, sizeof(v));
		found |= v == mid + 1;
		if (used != NULL && v != 0)
			(*used)++;
	}
	return found;
}

static uint64_t
ring_count(int ring, size_t off)
{
	uint64_t v;

	ck_assert_int_eq(pread(ring, &v, sizeof(v),
	    (off_t)(RELAY_RING_COUNTS + off)), (ssize_t)sizeof(v));
	return v;
}

/* An answer waits in the output: conn_process serves no frame. */
static void
ahead_busy(struct ahead_t *t, int busy)
{
	static uint8_t pending[1];

	t->c->priv->out_p = pending;
	t->c->priv->out_len = busy ? 1 : 0;
}

static void
read_exact(int fd, uint8_t *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = read(fd, p, n);
		ck_assert_int_gt(k, 0);
		p += k;
		n -= (size_t)k;
	}
}

/* The relay's next frame and its control record: the answer's header. */
static void
ahead_answer(struct ahead_t *t, struct smb2_hdr *h)
{
	static uint8_t in[64 * 1024];
	size_t poff, plen;
	long flen;

	read_exact(t->peer, in, 4);
	flen = smb2_frame_decode(in);
	ck_assert_int_gt(flen, 52);
	ck_assert_int_lt(flen, (long)sizeof(in));
	read_exact(t->peer, in + 4, (size_t)flen);
	ck_assert_int_eq(smb2_decrypt(t->s->cipher, t->s->enc_key, in + 4,
	    (size_t)flen, &poff, &plen), 0);
	ck_assert_int_eq(smb2_hdr_decode(in + 4 + poff, plen, h), 0);
	ck_assert(h->flags & SMB2_FLAGS_SERVER_TO_REDIR);
	/* its control record */
	read_exact(t->peer, in, 4);
	ck_assert_uint_eq(in[0], RELAY_CTL_TYPE);
	read_exact(t->peer, in + 4, ((size_t)in[1] << 16) | in[2] << 8 | in[3]);
}

static const uint16_t ciphers[] = {
	SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
	SMB2_ENCRYPTION_AES256_GCM,
};

/*
 * Several sealed frames read at once while an answer waits: every request
 * of each is noted (a chain's each), the frames counted once; their turn
 * serves the plaintext decrypted ahead, noted no second time.
 */
START_TEST(test_ahead_noted)
{
	struct ahead_t t;
	struct smb2_hdr h;
	size_t poff, plen;
	struct session *s;
	size_t all;
	unsigned i, used;

	for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		ahead_open(&t, ciphers[i]);
		ahead_put(&t, SMB2_READ, 20, 1, 0);
		ahead_put(&t, SMB2_READ, 21, 2, 0);	/* a chain: 21, 22 */
		ahead_put(&t, SMB2_WRITE, 23, 1, 0);
		all = t.c->priv->rlen;
		ahead_busy(&t, 1);
		ck_assert_int_eq(conn_process(t.c), 0);
		for (uint64_t m = 20; m <= 23; m++)
			ck_assert(ring_holds(t.ring, m, NULL));
		ck_assert(ring_holds(t.ring, 0, &used) == 0 && used == 4);
		ck_assert_uint_eq(ring_count(t.ring, 8), 3);
		ck_assert_uint_eq(ring_count(t.ring, 16), all);
		/* decrypted in place, for this session */
		ck_assert_int_eq(relay_ahead_take(t.c, t.c->priv->rbuf + 4,
		    t.flen[0] - 4, &s, &poff, &plen), 1);
		ck_assert_ptr_eq(s, t.s);
		ck_assert_uint_eq(plen, REQ_LEN);
		ck_assert_int_eq(smb2_hdr_decode(t.c->priv->rbuf + 4 + poff,
		    plen, &h), 0);
		ck_assert_uint_eq(h.message_id, 20);
		/* looked at again: nothing new, nothing twice */
		ck_assert_int_eq(conn_process(t.c), 0);
		ck_assert_uint_eq(ring_count(t.ring, 8), 3);
		/*
		 * Their turns (each answer sent at once): answered from
		 * the plaintext (no tree 5: an error), the slots cleared.
		 */
		ahead_busy(&t, 0);
		ck_assert_int_eq(conn_process(t.c), 0);
		ahead_answer(&t, &h);
		ck_assert_uint_eq(h.message_id, 20);
		ck_assert_uint_eq(h.command, SMB2_READ);
		ahead_answer(&t, &h);
		ck_assert_uint_eq(h.message_id, 21);
		ahead_answer(&t, &h);
		ck_assert_uint_eq(h.message_id, 23);
		ck_assert_uint_eq(h.command, SMB2_WRITE);
		ck_assert(ring_holds(t.ring, 0, &used) == 0 && used == 0);
		ck_assert_uint_eq(ring_count(t.ring, 8), 3);
		ck_assert_uint_eq(t.c->priv->rlen, 0);
		ck_assert_uint_eq(t.c->priv->ahead.end, 0);
		ahead_close(&t);
	}
}
END_TEST

/*
 * A frame that does not decrypt among them: the ones before it noted,
 * nothing of it or behind it, no warning and no drop before its turn;
 * at its turn the connection ends, as it always did.
 */
START_TEST(test_ahead_bad)
{
	struct ahead_t t;
	struct smb2_hdr h;
	size_t poff, plen;
	struct session *s;
	uint8_t drop[4];
	unsigned used;

	ahead_open(&t, SMB2_ENCRYPTION_AES128_GCM);
	ahead_put(&t, SMB2_READ, 30, 1, 0);
	ahead_put(&t, SMB2_READ, 31, 1, 1);
	ahead_put(&t, SMB2_READ, 32, 1, 0);
	ahead_busy(&t, 1);
	ck_assert_int_eq(conn_process(t.c), 0);
	ck_assert(!t.c->priv->dead);
	ck_assert(ring_holds(t.ring, 30, &used) && used == 1);
	ck_assert_uint_eq(ring_count(t.ring, 8), 1);
	ck_assert_int_eq(relay_ahead_take(t.c, t.c->priv->rbuf + t.flen[0] +
	    4, t.flen[1] - 4, &s, &poff, &plen), -1);
	/* behind it: never looked at */
	ck_assert_int_eq(relay_ahead_take(t.c, t.c->priv->rbuf + t.flen[0] +
	    t.flen[1] + 4, t.flen[2] - 4, &s, &poff, &plen), 0);
	/*
	 * READ 30's turn, then the bad frame's: the connection ends, the
	 * owner told to drop the client (RELAY_DROP_TYPE) after the answer.
	 */
	ahead_busy(&t, 0);
	ck_assert_int_eq(conn_process(t.c), -1);
	ahead_answer(&t, &h);
	ck_assert_uint_eq(h.message_id, 30);
	read_exact(t.peer, drop, sizeof(drop));
	ck_assert_uint_eq(drop[0], RELAY_DROP_TYPE);
	ck_assert(!ring_holds(t.ring, 32, NULL));
	ahead_close(&t);
}
END_TEST

/*
 * A full ring notes no more (as for the frame served); the frames are
 * still all decrypted and counted.
 */
START_TEST(test_ahead_full)
{
	struct ahead_t t;
	unsigned i, used;

	ahead_open(&t, SMB2_ENCRYPTION_AES128_GCM);
	for (i = 0; i < RELAY_RING_SLOTS + 6; i++)
		ahead_put(&t, SMB2_READ, 100 + i, 1, 0);
	ahead_busy(&t, 1);
	ck_assert_int_eq(conn_process(t.c), 0);
	ck_assert(ring_holds(t.ring, 100, &used) && used == RELAY_RING_SLOTS);
	ck_assert(ring_holds(t.ring, 100 + RELAY_RING_SLOTS - 1, NULL));
	ck_assert(!ring_holds(t.ring, 100 + RELAY_RING_SLOTS, NULL));
	ck_assert_uint_eq(ring_count(t.ring, 8), RELAY_RING_SLOTS + 6);
	ck_assert_uint_eq(t.c->priv->ahead.end, t.c->priv->rlen);
	ahead_close(&t);
}
END_TEST

/*
 * Nothing behind a LOGOFF (or SESSION_SETUP) is decrypted before it was
 * served, nor behind a frame of another session or a clear one.
 */
START_TEST(test_ahead_hold)
{
	struct ahead_t t;
	struct conn_private *pv;
	size_t n;
	unsigned used;

	ahead_open(&t, SMB2_ENCRYPTION_AES128_GCM);
	pv = t.c->priv;
	ahead_put(&t, SMB2_READ, 40, 1, 0);
	ahead_put(&t, SMB2_LOGOFF, 41, 1, 0);
	ahead_put(&t, SMB2_READ, 42, 1, 0);
	ahead_busy(&t, 1);
	ck_assert_int_eq(conn_process(t.c), 0);
	ck_assert(ring_holds(t.ring, 41, &used) && used == 2);
	ck_assert(!ring_holds(t.ring, 42, NULL));
	/* READ 40 and the LOGOFF served (as conn_process moves the rest) */
	n = t.flen[0] + t.flen[1];
	memmove(pv->rbuf, pv->rbuf + n, pv->rlen - n);
	pv->rlen -= n;
	relay_ahead_moved(t.c, n);
	ck_assert_uint_eq(pv->ahead.end, 0);
	relay_ahead(t.c);
	ck_assert(ring_holds(t.ring, 42, &used) && used == 3);
	/* another session's frame: neither it nor what follows */
	t.s->session_id ^= 1;
	ahead_put(&t, SMB2_READ, 43, 1, 0);
	t.s->session_id ^= 1;
	ahead_put(&t, SMB2_READ, 44, 1, 0);
	relay_ahead(t.c);
	ck_assert(ring_holds(t.ring, 0, &used) == 0 && used == 3);
	ahead_close(&t);
}
END_TEST

/*
 * A session gone between the look-ahead and the frame's turn (a kill,
 * an expiry): the frame is the undecryptable transform it would be then.
 */
START_TEST(test_ahead_gone)
{
	struct ahead_t t;
	size_t poff, plen;
	struct session *s;

	ahead_open(&t, SMB2_ENCRYPTION_AES128_CCM);
	ahead_put(&t, SMB2_READ, 60, 1, 0);
	ahead_put(&t, SMB2_READ, 61, 1, 0);
	ahead_busy(&t, 1);
	ck_assert_int_eq(conn_process(t.c), 0);
	ck_assert(ring_holds(t.ring, 61, NULL));
	conn_session_free(t.c, t.s);
	ck_assert_int_eq(relay_ahead_take(t.c, t.c->priv->rbuf + 4,
	    t.flen[0] - 4, &s, &poff, &plen), -1);
	ahead_busy(&t, 0);
	ck_assert_int_eq(conn_process(t.c), -1);
	ahead_close(&t);
}
END_TEST

static Suite *
relay_ahead_suite(void)
{
	Suite *s = suite_create("relay_ahead");
	TCase *tc = tcase_create("ahead");

	tcase_add_test(tc, test_ahead_noted);
	tcase_add_test(tc, test_ahead_bad);
	tcase_add_test(tc, test_ahead_full);
	tcase_add_test(tc, test_ahead_hold);
	tcase_add_test(tc, test_ahead_gone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relay_ahead_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
