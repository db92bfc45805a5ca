/*
 * The owner's writes to a relay (worker/relay.h, struct relay_wq): never
 * waiting.  What the relay's socket does not take at once waits in a
 * backlog of fixed size, allocated when the relay is set up, and goes
 * out when the socket is writable again (EPOLLOUT).  Its head's age is
 * kept so that a relayed worker that takes nothing for RELAY_WAIT_MS
 * (stopped by its user, or wedged) can be told apart from a busy one.
 */
#include "worker/relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/uring.h"


int
relay_wq_init(struct relay_wq *q)
{
	memset(q, 0, sizeof(*q));
	/* Untouched pages cost nothing: only a backlog that grows uses them. */
	q->buf = malloc(RELAY_WQ_CAP);
	return q->buf == NULL ? -ENOMEM : 0;
}

/*
 * A send of the ring in flight reads the buffer until its completion: the
 * buffer goes to the ring's graves (worker/uring.c uring_bury) instead.
 */
static void
relay_wq_unring(struct relay_wq *q)
{
	if (q->ring == 0)
		return;
	uring_bury(q->ud, q->buf);
	q->buf = NULL;
	q->ring = 0;
}

void
relay_wq_free(struct relay_wq *q)
{
	relay_wq_unring(q);
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

void
relay_wq_discard(struct relay_wq *q)
{
	relay_wq_unring(q);	/* no more sends on it: its relay ends */
	q->off = q->len = 0;
}

/*
 * Hands what waits to the ring: 0, or -1 (the ring is full).  From the
 * buffer's start, so that nothing behind it ever needs moving while the
 * send is in flight (RELAY_WQ_CAP has room for it and two largest frames).
 */
static int
relay_wq_ring(struct relay_wq *q, int fd)
{
	if (q->off > 0) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
	}
	if (uring_send(fd, q->buf + q->off, q->len - q->off,
	    MSG_NOSIGNAL | MSG_DONTWAIT, q->ud) < 0)
		return -1;
	q->ring = q->len - q->off;
	return 0;
}

int
relay_wq_sent(struct relay_wq *q, int fd, int32_t res, int64_t now)
{
	size_t was = q->ring;

	q->ring = 0;
	if (res < 0 && res != -EAGAIN && res != -EINTR)
		return -EPIPE;
	if (res > 0) {
		q->off += (size_t)res;
		q->since_ms = now;	/* it takes requests: not stalled */
	}
	if (q->off == q->len) {
		q->off = q->len = 0;
		return 0;
	}
	/* Frames queued behind it meanwhile, and the socket took it all. */
	if (res > 0 && (size_t)res == was && relay_wq_ring(q, fd) == 0)
		return 0;
	return 1;	/* the socket is full: EPOLLOUT (relay_wq_flush) */
}

/* Appends p (n bytes) behind what waits: 0, or -ENOBUFS when it is full. */
static int
relay_wq_put(struct relay_wq *q, const uint8_t *p, size_t n, int64_t now)
{
	if (q->len - q->off + n > RELAY_WQ_CAP)
		return -ENOBUFS;
	if (q->off == q->len) {
		q->off = q->len = 0;
		q->since_ms = now;
	} else if (q->len + n > RELAY_WQ_CAP) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
	}
	memcpy(q->buf + q->len, p, n);
	q->len += n;
	return 0;
}

int
relay_wq_flush(struct relay_wq *q, int fd, int64_t now)
{
	ssize_t n;

	while (q->off < q->len && q->ring == 0) {	/* else: the ring's */
		n = send(fd, q->buf + q->off, q->len - q->off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -EPIPE;
		q->off += (size_t)n;
		q->since_ms = now;	/* it takes requests: not stalled */
	}
	if (q->ring == 0)
		q->off = q->len = 0;
	return 0;
}

int
relay_wq_send(struct relay_wq *q, int fd, const uint8_t hdr[SMB2_FRAME_LEN],
    const uint8_t *msg, size_t len, int64_t (*now)(void))
{
	struct iovec iov[2] = {
		{ (void *)hdr, SMB2_FRAME_LEN }, { (void *)msg, len }
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;
	size_t h;
	int64_t t;

	if (q->buf == NULL)
		return -EPIPE;	/* discarded with a send in flight */
	if (q->off < q->len) {
		/* Behind what waits, never ahead of it (one byte stream). */
		t = now();
		if (q->len - q->off + SMB2_FRAME_LEN + len > RELAY_WQ_CAP &&
		    relay_wq_flush(q, fd, t) < 0)
			return -EPIPE;
		if (q->len - q->off + SMB2_FRAME_LEN + len > RELAY_WQ_CAP)
			return -ENOBUFS;
		(void)relay_wq_put(q, hdr, SMB2_FRAME_LEN, t);
		(void)relay_wq_put(q, msg, len, t);
		return 0;
	}
	/*
	 * Small, with the ring: copied and sent by the loop's next
	 * io_uring_enter, as a non-blocking send (MSG_DONTWAIT: what the
	 * socket does not take comes back short, as from sendmsg here).
	 */
	if (q->ud != 0 && SMB2_FRAME_LEN + len <= RELAY_WQ_RING_MAX) {
		t = now();
		(void)relay_wq_put(q, hdr, SMB2_FRAME_LEN, t);
		(void)relay_wq_put(q, msg, len, t);
		if (relay_wq_ring(q, fd) == 0)
			return 0;
		return relay_wq_flush(q, fd, t);	/* the ring is full */
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno != EAGAIN)
		return -EPIPE;
	if (n == (ssize_t)(SMB2_FRAME_LEN + len))
		return 0;	/* the usual case: no clock, no copy */
	if (n < 0)
		n = 0;
	/* The rest waits; a frame fits an empty backlog (RELAY_WQ_CAP). */
	t = now();
	h = (size_t)n < SMB2_FRAME_LEN ? (size_t)n : SMB2_FRAME_LEN;
	if (relay_wq_put(q, hdr + h, SMB2_FRAME_LEN - h, t) < 0 ||
	    relay_wq_put(q, msg + ((size_t)n - h), len - ((size_t)n - h), t) < 0)
		return -ENOBUFS;
	return 0;
}

int
relay_wq_late(const struct relay_wq *q, int64_t now)
{
	return q->off < q->len && now - q->since_ms >= RELAY_WAIT_MS;
}
