/*
 * libFuzzer target: a relayed worker's look-ahead over the frames it read
 * from the relay (worker/relay_ahead.c).  The frames are the client's
 * bytes, forwarded by the owner (another user's worker, which may be
 * compromised).  The input is a list of records, each u8 kind, u16 length
 * and that many bytes: raw bytes put into the receive buffer as they are
 * (any framing), or a plaintext the harness seals for the session (so the
 * fuzzer reaches what lies behind the decryption: the chain walk and the
 * ring's notes), sealed and then damaged, or sealed for another session
 * id.  Whatever it reads, the look-ahead stays inside the frames it
 * looked at, which are whole and inside the buffer; each frame's turn
 * gets its plaintext inside the frame, or none; the ring's counters never
 * count more sealed frames than there are; and consuming frames (as
 * conn_process does) never leaves the look-ahead past the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/crypt.h"
#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"

static struct conn *c;
static struct session *s;
static int sv[2] = { -1, -1 };
static int ringfd = -1;
static uint8_t key[32];

static void
setup(void)
{
	int fd[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	c = conn_new(NULL, fd[0], CONN_ROLE_WORKER, "fuzz", CONN_BUF_SMALL);
	if (c == NULL || (s = conn_session_new(c)) == NULL)
		abort();
	c->priv->relayed = 1;
	c->priv->user_authed = 1;
	c->dialect = 0x0311;
	s->state = SESS_VALID;
	memset(key, 0x3c, sizeof(key));
	memcpy(s->dec_key, key, sizeof(key));
}

/* A fresh ring, so every input can fill it from empty. */
static void
ring_new(void)
{
	relay_ring_free(c->priv->relay_ring);
	c->priv->relay_ring = NULL;
	if (ringfd >= 0)
		close(ringfd);
	ringfd = relay_ring_create();
	if (ringfd < 0 || relay_ring_send(sv[0], ringfd) != 0 ||
	    relay_ring_accept(sv[1], &c->priv->relay_ring) != 0)
		abort();
}

/* The ring's count of sealed frames decrypted. */
static uint64_t
ring_sealed(void)
{
	uint64_t v = 0;

	if (pread(ringfd, &v, sizeof(v), RELAY_RING_COUNTS + 8) != sizeof(v))
		abort();
	return v;
}

/* Appends one record's frame; the number of sealed frames it added. */
static unsigned
put(unsigned kind, const uint8_t *p, size_t n)
{
	struct conn_private *pv = c->priv;
	uint8_t *f = pv->rbuf + pv->rlen;
	struct iovec iov;

	if (kind % 4 == 0) {
		if (n > pv->rcap - pv->rlen)
			n = pv->rcap - pv->rlen;
		memcpy(f, p, n);
		pv->rlen += n;
		return 0;
	}
	if (n == 0 || pv->rcap - pv->rlen < 4 + 52 + n + 32)
		return 0;
	iov.iov_base = (void *)(uintptr_t)p;
	iov.iov_len = n;
	if (smb2_encrypt(s->cipher, key, s->session_id ^ (kind % 4 == 3),
	    &iov, 1, f + 4, f + 4 + 52) != (int)n)
		abort();
	smb2_frame_encode(f, (uint32_t)(52 + n));
	if (kind % 4 == 2)
		f[4 + 52 + (n - 1)] ^= 0x01;
	pv->rlen += 4 + 52 + n;
	return 1;
}

/* Each frame's turn, then its consumption, as conn_process does them. */
static void
turns(unsigned max)
{
	struct conn_private *pv = c->priv;
	struct session *ts;
	size_t poff, plen, end;
	long len;
	int k;

	while (max-- > 0 && pv->rlen >= 4) {
		len = smb2_frame_decode(pv->rbuf);
		if (len < 4 || (size_t)len > pv->max_frame ||
		    (size_t)len + 4 > pv->rlen)
			return;
		end = pv->ahead.end;
		k = relay_ahead_take(c, pv->rbuf + 4, (size_t)len, &ts, &poff,
		    &plen);
		if (k != 0 && end < (size_t)len + 4)
			abort();	/* never looked at, yet taken */
		if (k == 1 && (ts != s || poff + plen > (size_t)len))
			abort();
		memmove(pv->rbuf, pv->rbuf + len + 4, pv->rlen - (size_t)len -
		    4);
		pv->rlen -= (size_t)len + 4;
		relay_ahead_moved(c, (size_t)len + 4);
		relay_ahead(c);
		if (pv->ahead.end > pv->rlen)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t ciphers[] = {
		SMB2_ENCRYPTION_AES128_CCM, SMB2_ENCRYPTION_AES128_GCM,
		SMB2_ENCRYPTION_AES256_CCM, SMB2_ENCRYPTION_AES256_GCM,
	};
	struct conn_private *pv;
	unsigned sealed = 0;
	size_t off = 1, n;

	if (c == NULL)
		setup();
	if (size < 1)
		return 0;
	pv = c->priv;
	ring_new();
	pv->rlen = 0;
	memset(&pv->ahead, 0, sizeof(pv->ahead));
	s->cipher = ciphers[data[0] & 3];
	s->anonymous = (data[0] & 0x80) != 0;
	while (off + 3 <= size) {
		n = le16_get(data + off + 1);
		if (n > size - off - 3)
			n = size - off - 3;
		sealed += put(data[off], data + off + 3, n);
		off += 3 + n;
	}
	/* read at once while an answer waits */
	relay_ahead(c);
	if (pv->ahead.end > pv->rlen || ring_sealed() > sealed)
		abort();
	relay_ahead(c);		/* again: nothing twice */
	if (ring_sealed() > sealed)
		abort();
	turns(64);
	return 0;
}
