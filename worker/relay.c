/*
 * Several users on one connection: the owner's frame path (worker/relay.h).
 * The relays of a connection, the client's frames forwarded to them, the
 * answers and control records passed back, and a relay's end.  How a
 * session comes to be relayed, and why that is safe: worker/relay_setup.c.
 */

/*
 * How it works.
 *
 * - What travels.  Both ways, frames in the client's framing (0x00 +
 *   24-bit length).  The owner routes a frame by its SessionId (the
 *   transform header's, or the first SMB2 header's: relay_route, before
 *   any decryption or dispatch) and writes it whole, signed or encrypted
 *   as the client sent it, CANCEL, compounds, break acks and
 *   reauthentications included (an unrelated compound of several
 *   sessions is split by element: relay_split); the other worker serves it like any
 *   connection's (interim and final async answers, lease and oplock
 *   break notices, CHANGE_NOTIFY completions all come back the same
 *   way).  After each frame it sends, the other worker sends a control
 *   record (RELAY_CTL_TYPE 0xA5 + 24-bit length; u16 credits granted,
 *   u16 n, n x {u64 MessageId, u16 CreditCharge} of the requests
 *   answered, interim answers counting and async final ones not;
 *   relay_trailer).  The owner forwards a frame only once its record is
 *   in (relay_next), charges those ids in its window and adds the grant
 *   (relay_apply), so the window stays the connection's and is right
 *   even for encrypted frames it cannot read.  An answer in the clear
 *   goes out only when it names ids of requests forwarded to that relay
 *   (worker/relay_mids.c), one sealed only on a relay allowed to seal
 *   (worker/relay_setup.c, security).  The relayed worker does
 *   not check the connection's window (conn_credits_spend only counts
 *   what it granted) but refuses a message id it has seen, or one older
 *   than CONN_MAX_CREDITS * 2 below the highest it has seen
 *   (conn_credits_replay, an anti-replay window: the owner could send a
 *   signed request of the session again), by closing the relay; it
 *   answers nothing by sendfile.  Writes to a relay never wait: what its
 *   socket does not take waits in its backlog (worker/relay_wq.c, two of
 *   the largest frames, allocated with the relay) and goes out when the
 *   socket is writable (EPOLLOUT); a backlog that cannot take the next
 *   frame, or whose head waited RELAY_WAIT_MS (1 s: checked at the next
 *   frame and by the loop's tick), drops the relay (relay_stalled: its
 *   worker was stopped by its user, or is wedged).  Its answers are
 *   read into the relay's buffer (two of the largest frames, RELAY_RBUF:
 *   the other worker holds at most one answer in the socket and writes
 *   one more before it reads again), so neither side can block the
 *   other and the owner's loop never waits on one; answers go to the client as its
 *   socket takes them (relay_pump, from conn_process), the owner's own
 *   answers between them, and the owner reads no more client frames
 *   while its output is stuck.  A relay whose buffer fills (the client
 *   slow to read) is not watched until it drains to half: the other
 *   worker's output then waits in the socket.
 * - When either side dies.  The other worker dies (or closes its end
 *   after the session's LOGOFF, or kill-session): the owner reads EOF,
 *   sends what answers are complete, answers the requests it forwarded
 *   in the clear that got none (worker/relay_inflight.c:
 *   USER_SESSION_DELETED, async for one that had its interim answer),
 *   and the sealed ones the other worker had read, from its ring
 *   (worker/relay_ring.c, relay_ring_take: only ids this connection's
 *   window still admits), and forgets the session, whose next
 *   requests get STATUS_USER_SESSION_DELETED from the owner; the master
 *   purges that worker's state as for any dead worker (durable handles
 *   kept).  The other worker takes nothing of its backlog for
 *   RELAY_WAIT_MS, or lags a full backlog behind (its user stopped it,
 *   or it is wedged): the same (relay_stalled).
 *   The owner dies or the client goes: the other worker reads
 *   EOF and frees the connection like any (durable handles kept, the
 *   rest released).  The owner's own LOGOFF leaves the connection and
 *   its relays alone.  A request for which the other worker would drop
 *   a connection of its own (a transform it cannot decrypt, a malformed
 *   frame) drops the client's: it sends RELAY_DROP_TYPE before closing
 *   (relay_drop, from conn_process) and the owner disconnects
 *   (relay_pump), as a server must (MS-SMB2 3.3.5.2.1.1; smbtorture
 *   4.22 smb2.session.anon-encryption3).
 */
#include "worker/relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay_priv.h"
#include "worker/uring.h"
#include "worker/worker.h"

static int	relay_watch(struct conn *, struct relay *);

static struct relay *
relay_find_fd(struct conn *c, int fd)
{
	struct relay_tab *t = c->priv->relays;
	unsigned i;

	for (i = 0; t != NULL && i < RELAY_MAX; i++)
		if (t->r[i].fd == fd)
			return &t->r[i];
	return NULL;
}

static int64_t
relay_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A new generation of io_uring tags: no stale completion matches it. */
static uint32_t
relay_gen(void)
{
	static uint32_t gen;

	return ++gen;
}

/* The io_uring tag of r's receive (worker/loop.c wk_uring_event). */
static uint64_t
relay_ud(const struct relay *r)
{
	return RELAY_UD_BIT | (uint64_t)(r->rx_gen & 0x1fffffffu) << 32 |
	    (uint32_t)r->fd;
}

/*
 * With io_uring, arms the receive of r's next answers into its buffer
 * (none while one is armed, at its end, or when the buffer is full: then
 * it pauses, as relay_read does).  0, or -1 when the ring refused it.
 */
static int
relay_arm(struct relay *r)
{
	if (!uring_active() || r->armed || r->eof || r->paused)
		return 0;
	if (r->rlen >= RELAY_RBUF) {
		r->paused = 1;
		return 0;
	}
	r->rx_gen = relay_gen();
	if (uring_recv(r->fd, r->rbuf + r->rlen, RELAY_RBUF - r->rlen,
	    relay_ud(r)) < 0)
		return -1;
	r->armed = 1;
	return 0;
}

/*
 * Takes r's armed receive back: the kernel may still write into the
 * buffer until its completion comes, so the buffer goes to the loop's
 * graves (uring_bury).  keep: r goes on with a copy of what it
 * had (the relay ends, its requests in flight are answered in it);
 * else r->rbuf is NULL.
 */
static void
relay_disarm(struct relay *r, int keep)
{
	uint8_t *old = r->rbuf;

	if (!r->armed)
		return;
	r->armed = 0;
	r->rbuf = keep ? malloc(RELAY_RBUF) : NULL;
	if (r->rbuf != NULL)
		memcpy(r->rbuf, old, r->rlen);
	else {
		r->rlen = r->head = r->sent = 0;
		r->gone = 1;	/* no room to answer its requests in */
	}
	uring_bury(relay_ud(r), old);
}

int
relay_received(struct conn *c, uint64_t ud, int32_t res)
{
	struct relay *r = relay_find_fd(c, (int)(uint32_t)ud);
	int rc;

	if (r != NULL && (ud & RELAY_UD_SEND)) {
		if (ud != r->wq.ud || r->wq.ring == 0)
			return -1;
		rc = relay_wq_sent(&r->wq, r->fd, res, relay_now_ms());

		if (rc < 0)
			relay_wq_discard(&r->wq);	/* gone: its EOF says so */
		else if (rc > 0) {
			relay_watch(c, r);		/* EPOLLOUT */
			worker_tick_arm();		/* relay_tick */
		}
		return 0;
	}
	if (r == NULL || !r->armed || ud != relay_ud(r))
		return -1;
	r->armed = 0;
	if (res > 0)
		r->rlen += (size_t)res;
	else if (res != -EAGAIN && res != -EINTR)
		r->eof = 1;
	/* Re-armed once relay_pump has passed the answers on. */
	return 0;
}

/*
 * Watches r for what it may bring: answers unless its buffer is full or
 * its worker gone, room while frames wait for it.  0, or -1.
 */
static int
relay_watch(struct conn *c, struct relay *r)
{
	uint32_t ev = 0, old;

	if (!r->eof && !r->paused)
		ev |= EPOLLIN;
	if (!r->eof && relay_wq_stuck(&r->wq))
		ev |= EPOLLOUT;
	if ((ev & EPOLLIN) && relay_arm(r) < 0)
		return -1;
	if (ev == r->watched)
		return 0;
	old = r->watched;
	r->watched = ev;
	return worker_relay_watch(c, r->fd, old, ev);
}

static void
relay_close(struct conn *c, struct relay *r)
{
	struct relay_tab *t = c->priv->relays;

	relay_disarm(r, 0);
	worker_relay_watch(c, r->fd, r->watched, 0);
	close(r->fd);
	free(r->rbuf);
	free(r->inflight);
	free(r->mids);
	relay_wq_free(&r->wq);
	if (r->ring_fd >= 0)
		close(r->ring_fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->ring_fd = -1;
	t->n--;
}

/* Its session is gone from here; answers already sent on it still come. */
static void
relay_break(struct conn *c, struct relay *r, const char *why)
{
	if (r->sid != 0)
		log_info("%s: relayed session %llx of %s ends: %s", c->peer,
		    (unsigned long long)r->sid, r->user, why);
	r->sid = 0;
	relay_wq_discard(&r->wq);
	(void)shutdown(r->fd, SHUT_WR);
	relay_watch(c, r);
}

/* Reads what the relay has into its buffer: 0, or -1 when full. */
static int
relay_read(struct relay *r)
{
	ssize_t n;

	while (!r->eof && !r->armed) {	/* armed: the ring reads it */
		if (r->rlen >= RELAY_RBUF)
			return -1;
		size_t room = RELAY_RBUF - r->rlen;

		n = read(r->fd, r->rbuf + r->rlen, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			r->eof = 1;
			return 0;
		}
		r->rlen += (size_t)n;
		/* Short: all there was (the loop's epoll is level-triggered). */
		if ((size_t)n < room)
			return 0;
	}
	return 0;
}

/*
 * r's worker took none of what waits for it within RELAY_WAIT_MS, or its
 * backlog cannot take one more frame: its user's shell stopped it (the
 * worker runs as that user), or it is wedged.  The owner never waits on
 * it, and must not hold an unbounded queue for it: its session on this
 * connection ends at once, as if the worker had gone (relay_pump: the
 * answers complete in the buffer go out, the requests in flight get
 * USER_SESSION_DELETED, the relay closes).  What it has not read stays
 * unread: the frame cut short makes the stream useless anyway, and once
 * continued the worker reads EOF and frees the connection.
 */
static void
relay_stalled(struct conn *c, struct relay *r, int full)
{
	if (full)
		conn_warnx(c, "relayed session %llx of %s: its worker (uid %u) "
		    "lags %zu bytes behind (its backlog is full); the session "
		    "ends on this connection", (unsigned long long)r->sid,
		    r->user, (unsigned)r->uid, r->wq.len - r->wq.off);
	else
		conn_warnx(c, "relayed session %llx of %s: its worker (uid %u) "
		    "took no request for %d ms (stopped or wedged); the "
		    "session ends on this connection",
		    (unsigned long long)r->sid, r->user, (unsigned)r->uid,
		    RELAY_WAIT_MS);
	r->sid = 0;
	relay_disarm(r, 1);
	r->eof = 1;
	r->paused = 0;
	relay_wq_discard(&r->wq);
	relay_watch(c, r);
}

static struct relay *
relay_of(struct conn *c, uint64_t sid)
{
	struct relay_tab *t = c->priv->relays;
	unsigned i;

	for (i = 0; sid != 0 && i < RELAY_MAX; i++)
		if (t->r[i].fd >= 0 && t->r[i].sid == sid)
			return &t->r[i];
	return NULL;
}

/* One frame (or one element of a split compound) to r's worker. */
static void
relay_forward(struct conn *c, struct relay *r, const uint8_t *msg, size_t len)
{
	uint8_t hdr[SMB2_FRAME_LEN];
	int rc;

	smb2_frame_encode(hdr, (uint32_t)len);
	relay_inflight_note(r->inflight, msg, len);
	relay_fwd_note(&r->fwd, msg, len);
	if (relay_mids_note(r->mids, msg, len) < 0) {
		/* More than a client's credits let it have in flight. */
		relay_break(c, r, "more requests in flight than credits allow");
		return;
	}
	if (relay_wq_pending(&r->wq) && relay_wq_late(&r->wq, relay_now_ms())) {
		relay_stalled(c, r, 0);
		return;
	}
	rc = relay_wq_send(&r->wq, r->fd, hdr, msg, len, relay_now_ms);
	if (rc == -ENOBUFS)
		relay_stalled(c, r, 1);
	else if (rc < 0)
		relay_break(c, r, "its worker does not take requests");
	else if (relay_wq_stuck(&r->wq) && !(r->watched & EPOLLOUT)) {
		relay_watch(c, r);
		worker_tick_arm();	/* relay_tick: its deadline */
	}
}

/*
 * An unrelated compound (no element RELATED: MS-SMB2 3.3.5.2.7.1) naming
 * more than one session: -1 when it is not one (routed whole, by its
 * first SessionId, as a related chain must be), else each relayed
 * element is forwarded alone and the number of elements left here.
 * Samba serves each element as its session's in its one process; here
 * the sessions live in different workers, and the client may not expect
 * the answers of unrelated requests in one frame or in order (3.2.4.1.4).
 */
static int
relay_split(struct conn *c, const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;
	uint64_t first = 0;
	int mixed = 0, n = 0, r;

	smb2_chain_init(&ch, msg, len);
	while ((r = smb2_chain_next(&ch, &m, &mlen)) == 1) {
		if (le32_get(m + 16) & SMB2_FLAGS_RELATED_OPERATIONS)
			return -1;
		if (n++ == 0)
			first = le64_get(m + 40);
		else if (le64_get(m + 40) != first)
			mixed = 1;
	}
	if (r < 0 || !mixed)
		return -1;	/* a bad chain is refused by dispatch */
	n = 0;
	smb2_chain_init(&ch, msg, len);
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		struct relay *rl = relay_of(c, le64_get(m + 40));

		if (rl != NULL)
			relay_forward(c, rl, m, mlen);
		else
			n++;
	}
	return n;
}

int
relay_any(const struct conn *c)
{
	return c->priv->relays != NULL && c->priv->relays->n > 0;
}

int
relay_owns(struct conn *c, const uint8_t *m, size_t mlen)
{
	return c->priv->relays != NULL && mlen >= SMB2_HDR_LEN &&
	    relay_of(c, le64_get(m + 40)) != NULL;
}

int
relay_route(struct conn *c, const uint8_t *msg, size_t len, int *split)
{
	struct relay_tab *t = c->priv->relays;
	struct relay *r;
	uint64_t sid;
	int n;

	if (t == NULL || t->n == 0)
		return 0;
	/* The session: the transform's (MS-SMB2 2.2.41) or the header's. */
	if (len >= SMB2_TRANSFORM_HDR_LEN &&
	    smb2_magic(msg, len) == SMB2_MAGIC_TRANSFORM)
		sid = le64_get(msg + 44);
	else if (len >= SMB2_HDR_LEN && smb2_magic(msg, len) == SMB2_MAGIC_SMB2) {
		sid = le64_get(msg + 40);
		if (le32_get(msg + 20) != 0 &&
		    (n = relay_split(c, msg, len)) >= 0) {
			*split = 1;
			return n == 0;
		}
	} else
		return 0;
	r = relay_of(c, sid);
	if (r == NULL)
		return 0;
	if (!r->sealed_ok && smb2_magic(msg, len) == SMB2_MAGIC_TRANSFORM) {
		/*
		 * Its answer would be sealed, which this relay may not pass
		 * on (relay_next), and the request cannot be answered from
		 * here: its message id is sealed too.  A transform the
		 * server does not take drops the connection (MS-SMB2
		 * 3.3.5.2.1.1).
		 */
		conn_warnx(c, "relayed session %llx of %s: the client sealed "
		    "a request of it; a relay carries sealed traffic only "
		    "with `relay sealed sessions = yes`; disconnecting",
		    (unsigned long long)r->session_id, r->user);
		return -1;
	}
	relay_forward(c, r, msg, len);
	return 1;
}

int
relay_input(struct conn *c, int fd, uint32_t ev)
{
	struct relay *r = relay_find_fd(c, fd);

	if (r == NULL)
		return -1;
	if ((ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) &&
	    relay_wq_stuck(&r->wq) &&
	    relay_wq_flush(&r->wq, r->fd, relay_now_ms()) < 0)
		relay_wq_discard(&r->wq);	/* gone: its EOF says so */
	/* The client is slow to take the answers: hold the worker back. */
	if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) && relay_read(r) < 0)
		r->paused = 1;
	relay_watch(c, r);
	return 0;
}

int
relay_tick(struct conn *c, int *need)
{
	struct relay_tab *t = c->priv->relays;
	int64_t now = relay_now_ms();
	int dropped = 0;
	unsigned i;

	for (i = 0; t != NULL && i < RELAY_MAX; i++) {
		struct relay *r = &t->r[i];

		if (r->fd < 0 || !relay_wq_pending(&r->wq))
			continue;
		if (relay_wq_late(&r->wq, now)) {
			relay_stalled(c, r, 0);
			dropped = 1;
		} else
			*need = 1;
	}
	return dropped;
}

/*
 * The control record after a frame: what the other worker granted goes
 * into this connection's window, the ids it used are marked used (the
 * setup request was charged here, before it was relayed).
 */
static int
relay_apply(struct conn *c, struct relay *r, const uint8_t *p, size_t len)
{
	struct conn_credits *cr = &c->priv->cred;
	struct relay_ctl k;
	uint16_t i;

	if (relay_ctl_decode(&k, p, len) != 0)
		return -1;
	for (i = 0; i < k.n; i++) {
		if (!r->setup_seen && k.mid[i] == r->setup_mid) {
			r->setup_seen = 1;
			continue;
		}
		if (conn_credits_charge(cr, k.mid[i], k.charge[i]) < 0)
			log_debug(1, "%s: relayed session %llx: message id %llu "
			    "outside the window (low %llu range %u granted %u)",
			    c->peer, (unsigned long long)r->sid,
			    (unsigned long long)k.mid[i],
			    (unsigned long long)cr->low, cr->range, cr->granted);
	}
	conn_credits_add(cr, k.granted);
	for (i = 0; i < k.na; i++)
		relay_inflight_sealed(r->inflight, &k.async[i]);
	return 0;
}

/*
 * The next answer of r (a frame and its control record) goes out: 1 sent
 * or queued, 0 none complete, -1 a malformed stream (or an answer under
 * another session's id: relay_answer_next), -2 a drop record.
 */
static int
relay_next(struct conn *c, struct relay *r)
{
	struct conn_private *pv = c->priv;
	const uint8_t *b = r->rbuf + r->head;
	size_t flen, klen, need;
	int rc, sealed;

	/* session_id: the answers the owner makes once sid is gone too */
	rc = relay_answer_next(b, r->rlen - r->head, r->session_id, &flen,
	    &klen);
	if (rc <= 0)
		return rc;
	need = SMB2_FRAME_LEN + flen;
	sealed = smb2_magic(b + SMB2_FRAME_LEN, flen) == SMB2_MAGIC_TRANSFORM;
	/*
	 * Only answers to requests it was sent (relay_mids.c); a sealed one
	 * is unreadable here, passed on only where the admin allowed sealed
	 * relays.  The owner's own answers (r->gone) need no check.
	 */
	if (!r->gone && (sealed ? !r->sealed_ok :
	    relay_mids_answered(r->mids, b + SMB2_FRAME_LEN, flen) < 0)) {
		conn_warnx(c, "relayed session %llx of %s: its worker (uid %u) "
		    "sent an answer %s; the session ends on this connection",
		    (unsigned long long)r->session_id, r->user,
		    (unsigned)r->uid, sealed ? "sealed on a relay in the clear" :
		    "to a request it was not sent");
		return -1;
	}
	if (relay_apply(c, r, b + need + SMB2_FRAME_LEN, klen) < 0)
		return -1;
	relay_inflight_answered(r->inflight, b + SMB2_FRAME_LEN, flen);
	r->sent = r->head + need + SMB2_FRAME_LEN + klen;
	pv->out_p = b;
	pv->out_len = need;
	return 1;
}

/*
 * Its worker is gone (or dropped): the sealed requests it had read and
 * not answered, from its ring, join the requests in flight to answer
 * (worker/relay_inflight.c), each only if this connection's window still
 * admits it once every id known in flight on the connection's other
 * relays and this one's is taken.  The sealed frames it never decrypted
 * are only counted, for the log.  The ring is read once, then closed.
 */
static void
relay_ring_take(struct conn *c, struct relay *r)
{
	static struct conn_credits scratch;
	uint8_t snap[RELAY_RING_USED];
	struct relay_tab *t = c->priv->relays;
	unsigned i, j, n;
	ssize_t got;

	got = pread(r->ring_fd, snap, sizeof(snap), 0);
	close(r->ring_fd);
	r->ring_fd = -1;
	relay_ring_report(c->peer, r->session_id, r->user, &r->fwd,
	    got > 0 ? snap : NULL, got > 0 ? (size_t)got : 0);
	if (got <= 0 || r->inflight == NULL)
		return;
	scratch = c->priv->cred;
	for (i = 0; i < RELAY_MAX; i++) {
		const struct relay_inflight *f = t->r[i].inflight;

		if (t->r[i].fd < 0 || f == NULL)
			continue;
		for (j = 0; j < f->n; j++)
			if (!f->r[j].async)	/* an interim's id is charged */
				(void)conn_credits_charge(&scratch,
				    f->r[j].mid, f->r[j].charge);
	}
	n = relay_inflight_collect(r->inflight, snap, (size_t)got, &scratch);
	if (n > 0)
		log_info("%s: relayed session %llx of %s: %u sealed request%s "
		    "its worker had read get USER_SESSION_DELETED", c->peer,
		    (unsigned long long)r->session_id, r->user, n,
		    n == 1 ? "" : "s");
}

int
relay_pump(struct conn *c)
{
	struct conn_private *pv = c->priv;
	struct relay_tab *t = pv->relays;
	unsigned i;
	int rc, guard;

	if (t == NULL)
		return 0;
	for (i = 0; i < RELAY_MAX && t->n > 0; i++) {
		struct relay *r = &t->r[i];

		if (r->fd < 0)
			continue;
		for (guard = 0; guard < 1024; guard++) {
			if (conn_output_pending(c))
				return 0;
			if (r->sent > 0) {
				r->head = r->sent;
				r->sent = 0;
			}
			/* Not under an armed receive: it writes at rlen. */
			if (r->head > 0 && !r->armed) {
				memmove(r->rbuf, r->rbuf + r->head,
				    r->rlen - r->head);
				r->rlen -= r->head;
				r->head = 0;
			}
			if (r->paused && !r->eof && r->rlen < RELAY_RBUF / 2) {
				r->paused = 0;
				if (relay_watch(c, r) < 0 || relay_read(r) < 0)
					return -1;
			}
			rc = relay_next(c, r);
			if (rc == -2) {
				/* As its worker would drop a connection of its own. */
				conn_warnx(c, "relayed session %llx of %s: a request "
				    "its worker refused as a protocol violation; "
				    "disconnecting", (unsigned long long)r->sid,
				    r->user);
				return -1;
			}
			if (rc < 0) {
				relay_break(c, r, "malformed answer from its worker");
				relay_close(c, r);
				break;
			}
			if (rc == 0 && r->eof && !r->gone && r->ring_fd >= 0)
				relay_ring_take(c, r);
			if (rc == 0 && r->eof && !r->gone &&
			    r->inflight != NULL && r->inflight->n > 0) {
				/*
				 * Its requests still in flight are answered
				 * from here (worker/relay_inflight.c), in
				 * place of what it did not finish sending.
				 */
				r->gone = 1;
				r->head = 0;
				r->rlen = relay_inflight_answer(r->inflight,
				    r->session_id, c->dialect, r->rbuf,
				    RELAY_RBUF);
				relay_break(c, r, "its worker is gone");
				continue;
			}
			if (rc == 0) {
				if (r->eof) {
					relay_break(c, r, "its worker is gone");
					relay_close(c, r);
				} else if (relay_watch(c, r) < 0)
					return -1;	/* re-arms its receive */
				break;
			}
			rc = conn_flush(c);
			if (rc < 0 && rc != -EAGAIN)
				return -1;
		}
	}
	return 0;
}

int
relay_quiet(struct conn *c)
{
	struct relay_tab *t = c->priv->relays;
	unsigned i;

	for (i = 0; t != NULL && i < RELAY_MAX; i++) {
		struct relay *r = &t->r[i];
		size_t from = r->sent > 0 ? r->sent : r->head;

		if (r->fd < 0)
			continue;
		/* More to pass on, or to finish, without a new event. */
		if (r->eof || r->paused || r->rlen > from)
			return 0;
		if (relay_arm(r) < 0 || !r->armed)
			return 0;
	}
	return 1;
}

void
relay_conn_gone(struct conn *c)
{
	struct relay_tab *t = c->priv->relays;
	unsigned i;

	if (t == NULL)
		return;
	for (i = 0; i < RELAY_MAX; i++)
		if (t->r[i].fd >= 0)
			relay_close(c, &t->r[i]);
	free(t);
	c->priv->relays = NULL;
}

struct relay *
relay_slot(struct conn *c)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	if (pv->relays == NULL) {
		pv->relays = calloc(1, sizeof(*pv->relays));
		if (pv->relays == NULL)
			return NULL;
		for (i = 0; i < RELAY_MAX; i++)
			pv->relays->r[i].fd = pv->relays->r[i].ring_fd = -1;
	}
	for (i = 0; i < RELAY_MAX; i++)
		if (pv->relays->r[i].fd < 0)
			return &pv->relays->r[i];
	return NULL;
}

int
relay_attach(struct conn *c, struct relay *r, int fd)
{
	r->fd = fd;
	if (uring_active()) {	/* a frame sent by the loop's io_uring_enter */
		r->rx_gen = relay_gen();
		r->wq.ud = relay_ud(r) | RELAY_UD_SEND;
	}
	c->priv->relays->n++;
	if (relay_watch(c, r) < 0) {
		relay_break(c, r, "cannot watch its relay");
		relay_close(c, r);
		return -1;
	}
	return 0;
}
