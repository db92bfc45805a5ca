/*
 * The ring of a relayed session's sealed requests in its worker
 * (worker/relay.h, HACKING.md "Requests in flight when the relayed worker
 * dies").
 *
 * Why a ring: when the relayed worker dies, the owner answers the
 * requests it forwarded and saw no answer to; a sealed one it cannot
 * read, so only the relayed worker knows its message id.  Telling the
 * owner with a write per request would cost a system call on every
 * relayed request; stores into memory both map cost none, and the owner
 * reads them only when the relay ends.
 *
 * Why this shape: the owner makes the memfd and seals its size before
 * anybody maps it, so the relayed worker's stores never fault (a file
 * that shrinks under a mapping raises SIGBUS) and the owner, which only
 * preads it, has nothing to map.  The relayed worker keeps what it wrote
 * in its own memory and never reads the ring back, so whatever the owner
 * writes there changes nothing it does.  F_SEAL_SEAL keeps either side
 * from adding a seal that would stop the other's writes.
 *
 * Why a slot is cleared only when the answer is all in the socket: the
 * owner takes a request as answered only once the whole answer frame has
 * come (relay.c relay_next); an answer built, or partly written, when the
 * worker dies never reaches the client.  Cleared then (relay_ring_sent),
 * the slot covers that too; set a moment too long (the worker dies right
 * after the send), the owner's window has the id charged by then and
 * refuses it (relay_inflight_collect).
 *
 * Why counters: a sealed frame the worker never decrypted (still in the
 * relay's socket, or read behind a frame the look-ahead does not pass,
 * worker/relay_ahead.c) has an id nobody alive can read; the counters let
 * the owner say how many.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/relay.h"

#define RING_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

struct relay_ring {
	uint8_t		*map;
	uint64_t	 used;	/* bit i: slot i holds mid[i] */
	uint64_t	 sending; /* bit i: its answer is in the output */
	uint64_t	 mid[RELAY_RING_SLOTS];
	uint64_t	 nread;		/* what the counters say */
	uint64_t	 nsealed;
	uint64_t	 nsealed_bytes;
};

int
relay_ring_create(void)
{
	int fd, e;

	fd = memfd_create("usmbd-relay-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, RELAY_RING_BYTES) != 0 ||
	    fcntl(fd, F_ADD_SEALS, RING_SEALS) != 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int
relay_ring_send(int fd, int ring)
{
	uint8_t type = RELAY_RING_TYPE;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &type, 1 };
	struct msghdr mh;
	struct cmsghdr *cm;

	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &ring, sizeof(int));
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
		return errno != 0 ? -errno : -EIO;
	return 0;
}

/* One fd of SCM_RIGHTS in mh, or -1; every other fd received is closed. */
static int
ring_take_fd(struct msghdr *mh)
{
	struct cmsghdr *cm;
	int fd = -1, n, i, got[4];

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (n > 4)
			n = 4;
		memcpy(got, CMSG_DATA(cm), (size_t)n * sizeof(int));
		for (i = 0; i < n; i++) {
			if (fd < 0)
				fd = got[i];
			else
				close(got[i]);
		}
	}
	return fd;
}

int
relay_ring_accept(int fd, struct relay_ring **out)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct relay_ring *r = NULL;
	struct iovec iov;
	struct msghdr mh;
	struct stat st;
	uint8_t type = 0;
	int ring = -1, seals, rc;
	ssize_t n;

	*out = NULL;
	iov.iov_base = &type;
	iov.iov_len = 1;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	/* Sent before the socket left the owner: it is there already. */
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0) {
		rc = -errno;
		goto out;
	}
	ring = ring_take_fd(&mh);
	rc = -EBADMSG;
	if (n != 1 || type != RELAY_RING_TYPE || ring < 0 ||
	    (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		goto out;
	/* Only a memfd has seals: size fixed, no write seal possible. */
	seals = fcntl(ring, F_GET_SEALS);
	if (seals < 0 || (seals & RING_SEALS) != RING_SEALS ||
	    (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) ||
	    fstat(ring, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != RELAY_RING_BYTES)
		goto out;
	rc = -ENOMEM;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		goto out;
	r->map = mmap(NULL, RELAY_RING_BYTES, PROT_READ | PROT_WRITE,
	    MAP_SHARED, ring, 0);
	if (r->map == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	/* What the owner put there is not ours to keep. */
	memset(r->map, 0, RELAY_RING_USED);
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (ring >= 0)
		close(ring);
	free(r);
	return rc;
}

void
relay_ring_free(struct relay_ring *r)
{
	if (r == NULL)
		return;
	munmap(r->map, RELAY_RING_BYTES);
	free(r);
}

/* A u64 of the page (a slot's id word, a counter): one aligned store. */
static void
ring_store_at(struct relay_ring *r, size_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)(r->map + off), v,
	    __ATOMIC_RELEASE);
}

static void
ring_store(struct relay_ring *r, unsigned i, uint64_t v)
{
	ring_store_at(r, (size_t)i * RELAY_RING_SLOT, v);
}

void
relay_ring_read(struct relay_ring *r, size_t n)
{
	if (r == NULL)
		return;
	r->nread += n;
	ring_store_at(r, RELAY_RING_COUNTS, r->nread);
}

void
relay_ring_note(struct relay_ring *r, const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	struct smb2_hdr h;
	const uint8_t *m;
	size_t mlen;
	unsigned i;

	if (r == NULL)
		return;
	r->nsealed++;
	r->nsealed_bytes += SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN + len;
	ring_store_at(r, RELAY_RING_COUNTS + 8, r->nsealed);
	ring_store_at(r, RELAY_RING_COUNTS + 16, r->nsealed_bytes);
	smb2_chain_init(&ch, msg, len);
	ch.tail_ok = 1;		/* an element split off (relay_split) */
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		if (smb2_hdr_decode(m, mlen, &h) != 0)
			return;
		/* A CANCEL gets no answer; a full ring notes no more. */
		if (h.command == SMB2_CANCEL || h.message_id == UINT64_MAX ||
		    ~r->used == 0)
			continue;
		i = (unsigned)__builtin_ctzll(~r->used);
		le16_put(r->map + (size_t)i * RELAY_RING_SLOT + 8, h.command);
		le16_put(r->map + (size_t)i * RELAY_RING_SLOT + 10,
		    h.credit_charge);
		ring_store(r, i, h.message_id + 1);
		r->mid[i] = h.message_id;
		r->used |= 1ull << i;
	}
}

void
relay_ring_answered(struct relay_ring *r, uint64_t mid)
{
	uint64_t left;
	unsigned i;

	if (r == NULL)
		return;
	for (left = r->used & ~r->sending; left != 0; left &= left - 1) {
		i = (unsigned)__builtin_ctzll(left);
		if (r->mid[i] == mid) {
			r->sending |= 1ull << i;
			return;
		}
	}
}

void
relay_ring_sent(struct relay_ring *r)
{
	uint64_t left;

	if (r == NULL || r->sending == 0)
		return;
	for (left = r->sending; left != 0; left &= left - 1)
		ring_store(r, (unsigned)__builtin_ctzll(left), 0);
	r->used &= ~r->sending;
	r->sending = 0;
}

/* ---- the owner ---- */

void
relay_fwd_note(struct relay_fwd *f, const uint8_t *msg, size_t len)
{
	f->bytes += SMB2_FRAME_LEN + len;
	if (len >= 4 && smb2_magic(msg, len) == SMB2_MAGIC_TRANSFORM) {
		f->sealed++;
		f->sealed_bytes += SMB2_FRAME_LEN + len;
	}
}

int
relay_ring_lost(const struct relay_fwd *f, const uint8_t *p, size_t len,
    struct relay_lost *out)
{
	uint64_t nread = 0, nsealed = 0, nbytes = 0;

	memset(out, 0, sizeof(*out));
	/* host order: one machine */
	if (p != NULL && len >= RELAY_RING_USED) {
		memcpy(&nread, p + RELAY_RING_COUNTS, 8);
		memcpy(&nsealed, p + RELAY_RING_COUNTS + 8, 8);
		memcpy(&nbytes, p + RELAY_RING_COUNTS + 16, 8);
	}
	/* An honest worker's counts: never past what was forwarded. */
	if (p == NULL || len < RELAY_RING_USED || nread > f->bytes ||
	    nsealed > f->sealed || nbytes > f->sealed_bytes || nbytes > nread ||
	    (nsealed == f->sealed) != (nbytes == f->sealed_bytes)) {
		out->sealed = f->sealed;
		out->sealed_bytes = f->sealed_bytes;
		out->unread = f->bytes;
		return -1;
	}
	out->sealed = f->sealed - nsealed;
	out->sealed_bytes = f->sealed_bytes - nbytes;
	out->unread = f->bytes - nread;
	return out->sealed > 0;
}

void
relay_ring_report(const char *peer, uint64_t sid, const char *user,
    const struct relay_fwd *f, const uint8_t *p, size_t len)
{
	struct relay_lost lost;
	int k;

	k = relay_ring_lost(f, p, len, &lost);
	if (k > 0)
		log_info("%s: relayed session %llx of %s: %llu sealed request%s "
		    "(%llu bytes) its worker never decrypted (%llu bytes "
		    "forwarded it never read) stay unanswered: no live process "
		    "holds the session's keys to read their message ids",
		    peer, (unsigned long long)sid, user,
		    (unsigned long long)lost.sealed, lost.sealed == 1 ? "" : "s",
		    (unsigned long long)lost.sealed_bytes,
		    (unsigned long long)lost.unread);
	else if (k < 0 && lost.sealed > 0)
		log_info("%s: relayed session %llx of %s: its worker's counts "
		    "in its ring are not believable; of %llu sealed request%s "
		    "forwarded, those it never decrypted stay unanswered",
		    peer, (unsigned long long)sid, user,
		    (unsigned long long)lost.sealed, lost.sealed == 1 ? "" : "s");
}
