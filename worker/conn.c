/*
 * A client connection: its buffers (allocated once), framing, partial
 * reads and writes, the credit window, sessions and trees by id.  Its
 * pending async requests and notices are in worker/conn_pending.c.
 */
#include "worker/conn_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/crypt.h"
#include "proto/smb2_hdr.h"
#include "worker/dispatch.h"
#include "worker/state.h"
#include "worker/durable.h"
#include "worker/relay.h"
#include "worker/smb2_notify.h"
#include "worker/worker.h"

struct conn *
conn_new(const struct conf *conf, int fd, int role, const char *peer,
    size_t bufsize)
{
	struct conn *c;
	struct conn_private *pv;
	unsigned i;

	c = calloc(1, sizeof(*c));
	pv = calloc(1, sizeof(*pv));
	if (c == NULL || pv == NULL)
		goto fail;
	c->priv = pv;
	c->conf = conf;
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "%s", peer ? peer : "?");
	pv->role = role;
	pv->out_fd = -1;
	pv->rx_pfd[0] = pv->rx_pfd[1] = -1;
	pv->next_async_id = 1;
	conn_credits_init(&pv->cred, CONN_MAX_CREDITS);
	for (i = 0; i < CONN_MAX_TREES; i++)
		c->trees[i].root_fd = -1;
	if (conn_set_bufsize(c, bufsize) < 0)
		goto fail;
	if (role == CONN_ROLE_WORKER) {
		/*
		 * Room for CONN_MAX_OPENS slots, but nopens counts only the
		 * slots ever used (open_alloc raises it): an idle connection
		 * does not touch the 240 KiB table, and the scans stay short.
		 * No calloc: a slot is only read once open_alloc cleared it,
		 * and calloc would write zeros over recycled heap pages.
		 */
		pv->nopens = 0;
		pv->opens = malloc(CONN_MAX_OPENS * sizeof(*pv->opens));
		if (pv->opens == NULL)
			goto fail;
	}
	return c;
fail:
	if (c != NULL)
		c->fd = -1;
	conn_free(c);
	return NULL;
}

int
conn_set_bufsize(struct conn *c, size_t size)
{
	struct conn_private *pv = c->priv;
	uint8_t *r, *s;

	if (pv->rcap >= size)
		return 0;
	r = malloc(size);
	s = malloc(size);
	if (r == NULL || s == NULL) {
		free(r);
		free(s);
		return -ENOMEM;
	}
	if (pv->rlen > 0)
		memcpy(r, pv->rbuf, pv->rlen);
	free(pv->rbuf);
	free(pv->sbuf);
	pv->rbuf = r;
	pv->sbuf = s;
	pv->rcap = pv->scap = size;
	pv->max_frame = size - SMB2_FRAME_LEN;
	return 0;
}

void
conn_free(struct conn *c)
{
	struct conn_private *pv;
	int i;

	if (c == NULL)
		return;
	pv = c->priv;
	if (pv != NULL)
		conn_pending_drop(c, 0);
	if (pv != NULL && pv->role == CONN_ROLE_WORKER)
		smb2_notify_conn_gone(c);
	/* Durable opens outlive the connection (worker/durable.h). */
	if (pv != NULL && pv->opens != NULL && pv->role == CONN_ROLE_WORKER)
		durable_disconnect(c, NULL);
	if (pv != NULL && pv->opens != NULL)
		open_close_all(c);
	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use)
			conn_session_free(c, &c->sessions[i]);
	if (pv != NULL)
		conn_rx_release(c);	/* a payload being buffered: its pipe */
	if (pv != NULL)
		relay_conn_gone(c);
	if (pv != NULL)
		relay_ring_free(pv->relay_ring);
	if (pv != NULL && pv->relay_verdict != NULL) {
		/* An unused relayed verdict holds the session's keys. */
		explicit_bzero(pv->relay_verdict, sizeof(*pv->relay_verdict));
		free(pv->relay_verdict);
	}
	if (c->fd >= 0)
		close(c->fd);
	if (pv != NULL) {
		if (pv->out_fd >= 0 && pv->out_fd_owned)
			close(pv->out_fd);
		free(pv->rbuf);
		free(pv->sbuf);
		free(pv->ebuf);
		free(pv->zbuf);
		free(pv->opens);
		conn_pending_free_all(c);
		free(pv);
	}
	free(c);
}

uint8_t *
conn_ebuf(struct conn *c, size_t n)
{
	struct conn_private *pv = c->priv;

	if (pv->ecap < n) {
		/* Once per connection: the largest frame it can send. */
		size_t want = pv->scap + SMB2_TRANSFORM_HDR_LEN + 64;
		uint8_t *e;

		if (want < n)
			return NULL;
		e = malloc(want);
		if (e == NULL)
			return NULL;
		free(pv->ebuf);
		pv->ebuf = e;
		pv->ecap = want;
	}
	return pv->ebuf;
}

uint32_t
conn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)ts.tv_sec;
}

uint64_t
conn_filetime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec + 11644473600ull) * 10000000ull +
	    (uint64_t)ts.tv_nsec / 100;
}

void
conn_warnx(struct conn *c, const char *fmt, ...)
{
	struct conn_private *pv = c->priv;
	time_t now = time(NULL);
	char buf[512];	/* room for a long name and the settings named */
	va_list ap;

	/* At most 5 lines per connection per minute. */
	if (now - pv->warn_t >= 60) {
		pv->warn_t = now;
		pv->warn_n = 0;
	}
	if (pv->warn_n++ >= 5)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_warnx("%s: %s", c->peer, buf);
}

/* ---- credits and the message-id window ---- */

void
conn_credits_init(struct conn_credits *cr, uint32_t max)
{
	memset(cr, 0, sizeof(*cr));
	cr->low = 0;
	cr->range = 1;
	cr->granted = 1;
	cr->max = max > CONN_MAX_CREDITS ? CONN_MAX_CREDITS : max;
}

#define CRED_BITS	(CONN_MAX_CREDITS * 2)

static int
cred_bit(const struct conn_credits *cr, uint64_t id)
{
	unsigned b = (unsigned)(id % CRED_BITS);

	return cr->bitmap[b / 8] >> (b % 8) & 1;
}

static void
cred_set(struct conn_credits *cr, uint64_t id, int on)
{
	unsigned b = (unsigned)(id % CRED_BITS);

	if (on)
		cr->bitmap[b / 8] |= (uint8_t)(1u << (b % 8));
	else
		cr->bitmap[b / 8] &= (uint8_t)~(1u << (b % 8));
}

int
conn_credits_charge(struct conn_credits *cr, uint64_t mid, uint16_t charge)
{
	uint16_t i;

	if (charge == 0)
		charge = 1;
	if (charge > cr->granted || mid < cr->low ||
	    mid - cr->low >= cr->range || charge > cr->range - (mid - cr->low))
		return -1;
	for (i = 0; i < charge; i++)
		if (cred_bit(cr, mid + i))
			return -1;
	for (i = 0; i < charge; i++)
		cred_set(cr, mid + i, 1);
	cr->granted -= charge;
	/* Slide the window over the ids now used at its bottom. */
	while (cr->range > 0 && cred_bit(cr, cr->low)) {
		cred_set(cr, cr->low, 0);
		cr->low++;
		cr->range--;
	}
	return 0;
}

uint16_t
conn_credits_grant(struct conn_credits *cr, uint16_t requested, uint16_t charged)
{
	uint32_t want, room;

	/*
	 * Give what was asked (at least what the request cost, so a client
	 * that asks for 0 is not starved), never beyond max outstanding and
	 * never so many that the window outgrows the bitmap.
	 */
	want = requested;
	if (want < 1)
		want = 1;
	if (cr->granted >= cr->max)
		return 0;
	room = cr->max - cr->granted;
	if (cr->range + want > CRED_BITS)
		want = CRED_BITS - cr->range;
	if (want > room)
		want = room;
	(void)charged;
	cr->granted += want;
	cr->range += want;
	return (uint16_t)want;
}

void
conn_credits_spend(struct conn_credits *cr, uint16_t charge)
{
	if (charge == 0)
		charge = 1;
	cr->granted = charge > cr->granted ? 0 : cr->granted - charge;
	cr->range = charge > cr->range ? 0 : cr->range - charge;
}

int
conn_credits_replay(struct conn_credits *cr, uint64_t mid, uint16_t charge)
{
	uint64_t end, id;
	uint16_t i;

	if (charge == 0)
		charge = 1;
	if (mid > UINT64_MAX - charge)
		return -1;
	end = mid + charge;
	/* cr->low is the highest id seen + 1; newly covered bits are cleared. */
	if (end > cr->low) {
		if (end - cr->low >= CRED_BITS)
			memset(cr->bitmap, 0, sizeof(cr->bitmap));
		else
			for (id = cr->low; id < end; id++)
				cred_set(cr, id, 0);
		cr->low = end;
	}
	if (cr->low - mid > CRED_BITS)
		return -1;	/* older than the window: cannot tell, refuse */
	for (i = 0; i < charge; i++)
		if (cred_bit(cr, mid + i))
			return -1;
	for (i = 0; i < charge; i++)
		cred_set(cr, mid + i, 1);
	return 0;
}

void
conn_credits_add(struct conn_credits *cr, uint16_t granted)
{
	uint32_t n = granted;

	if (cr->range + n > CRED_BITS)
		n = CRED_BITS - cr->range;
	if (cr->granted + n > cr->max)
		n = cr->granted >= cr->max ? 0 : cr->max - cr->granted;
	cr->granted += n;
	cr->range += n;
}

/* ---- sessions and trees ---- */

struct session *
conn_session_find(struct conn *c, uint64_t id)
{
	int i;

	if (id == 0)
		return NULL;
	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use && c->sessions[i].session_id == id)
			return &c->sessions[i];
	return NULL;
}

struct session *
conn_transform_session(struct conn *c, const uint8_t *msg, size_t len,
    uint64_t *sid)
{
	struct session *s;

	/* A channel decrypts with its session's keys (MS-SMB2 3.3.5.2.1.1). */
	if (smb2_transform_session_id(msg, len, sid) < 0 ||
	    (s = conn_session_find(c, *sid)) == NULL)
		return NULL;
	if (s->bound != NULL)
		s = s->bound;
	if (s->cipher == 0 || (s->anonymous && !c->priv->user_authed))
		return NULL;
	return s;
}

int
conn_session_count(const struct conn *c)
{
	int i, n = 0;

	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use && c->sessions[i].state == SESS_VALID)
			n++;
	return n;
}

struct session *
conn_session_new(struct conn *c)
{
	struct session *s;
	uint64_t id;
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (!c->sessions[i].in_use)
			break;
	if (i == CONN_MAX_SESSIONS)
		return NULL;
	/*
	 * Random ids, 32 bits as Samba hands out: clients (smbtorture's
	 * smb2.session-id among them) keep the id in a 32-bit variable.
	 * Unique across the server: a worker looks in the state env here,
	 * and the insert (shm_session_put) refuses an id another process
	 * holds -- the only check a gate's id gets, at hand-off.
	 */
	do {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			return NULL;
		id &= 0xffffffffull;
	} while (id == 0 || conn_session_find(c, id) != NULL ||
	    (c->priv->role == CONN_ROLE_WORKER && state_session_id_taken(id)));
	s = &c->sessions[i];
	memset(s, 0, sizeof(*s));
	s->in_use = 1;
	s->session_id = id;
	s->state = SESS_IN_PROGRESS;
	return s;
}

/* Forgets channel slot ch in its session's channel list. */
static void
conn_channel_unlink(struct session *ch)
{
	struct session *s = ch->bound;
	unsigned i;

	for (i = 0; s != NULL && i < s->nchan; i++)
		if (s->chan[i] == ch) {
			s->nchan--;
			s->chan[i] = s->chan[s->nchan];
			s->chan_conn[i] = s->chan_conn[s->nchan];
			s->chan[s->nchan] = NULL;
			s->chan_conn[s->nchan] = NULL;
			break;
		}
	ch->bound = NULL;
	ch->bound_conn = NULL;
}

int
conn_channel_link(struct session *s, struct conn *cc, struct session *ch)
{
	if (s->nchan >= CONN_MAX_CHANNELS)
		return -1;
	s->chan[s->nchan] = ch;
	s->chan_conn[s->nchan] = cc;
	s->nchan++;
	ch->bound = s;
	return 0;
}

struct session *
conn_session_home(struct session *s, struct conn *c, struct conn **home)
{
	if (s != NULL && s->bound != NULL) {
		*home = s->bound_conn;
		return s->bound;
	}
	*home = c;
	return s;
}

uint16_t
conn_session_sign_algo(const struct session *s, const struct conn *c)
{
	/*
	 * A refused binding's answer, a binding exchange and a channel sign
	 * with the algorithm of the session's own connection (sess_bind).
	 */
	if (s->sign_other || s->binding || s->bound != NULL)
		return s->sign_algo;
	return c->signing_algo;
}

/*
 * A channel slot goes (its connection closed, or its session ended): the
 * session, its trees and opens stay with their home connection; only the
 * requests parked on this channel end.
 */
static void
conn_channel_free(struct conn *c, struct session *s)
{
	conn_channel_unlink(s);
	if (c->priv != NULL)
		conn_pending_drop(c, s->session_id);
	free(s->auth);
	smb2_sign_ctx_free(&s->sign_cx);
	smb2_crypt_ctx_free(&s->enc_cx);
	smb2_crypt_ctx_free(&s->dec_cx);
	explicit_bzero(s, sizeof(*s));
}

/* A session ends: the requests parked on its channels are answered. */
static void
conn_session_free_channels(struct session *s)
{
	unsigned guard;

	for (guard = 0; s->nchan > 0 && guard < CONN_MAX_CHANNELS; guard++) {
		struct conn *cc = s->chan_conn[s->nchan - 1];
		struct session *ch = s->chan[s->nchan - 1];

		if (cc->priv != NULL && cc->priv->role == CONN_ROLE_WORKER &&
		    s->state == SESS_VALID && !cc->priv->dead && cc->fd >= 0 &&
		    conn_pending_end_session(cc, s->session_id) > 0)
			(void)dispatch_async_run(cc);
		conn_channel_free(cc, ch);
	}
}

void
conn_session_free(struct conn *c, struct session *s)
{
	int i;

	if (s->bound != NULL) {
		conn_channel_free(c, s);
		return;
	}
	conn_session_free_channels(s);
	/*
	 * LOGOFF (or a session replaced): its parked requests are answered
	 * while the session can still sign, as a close of their handles
	 * would answer them (NOTIFY_CLEANUP, RANGE_NOT_LOCKED).
	 */
	if (c->priv != NULL && c->priv->role == CONN_ROLE_WORKER &&
	    s->state == SESS_VALID && !c->priv->dead && c->fd >= 0 &&
	    conn_pending_end_session(c, s->session_id) > 0)
		(void)dispatch_async_run(c);
	/* Before its trees: a tree disconnect would close them. */
	if (c->priv != NULL && c->priv->opens != NULL &&
	    c->priv->role == CONN_ROLE_WORKER && s->state == SESS_VALID)
		durable_disconnect(c, s);
	for (i = 0; i < CONN_MAX_TREES; i++)
		if (c->trees[i].in_use && c->trees[i].sess == s)
			conn_tree_free(c, &c->trees[i]);
	/* Only a session that was valid parked requests; a binding's or a
	 * refusal's slot shares the id of a session that may have. */
	if (c->priv != NULL && s->state != SESS_IN_PROGRESS)
		conn_pending_drop(c, s->session_id);
	if (c->priv != NULL && c->priv->role == CONN_ROLE_WORKER &&
	    s->state == SESS_VALID)
		state_session_del(s);
	if (c->priv != NULL && c->priv->opens != NULL)
		open_close_session(c, s);
	free(s->auth);
	smb2_sign_ctx_free(&s->sign_cx);
	smb2_crypt_ctx_free(&s->enc_cx);
	smb2_crypt_ctx_free(&s->dec_cx);
	explicit_bzero(s, sizeof(*s));
}

struct tree *
conn_tree_find(struct conn *c, struct session *s, uint32_t id)
{
	int i;

	for (i = 0; i < CONN_MAX_TREES; i++)
		if (c->trees[i].in_use && c->trees[i].tree_id == id &&
		    c->trees[i].sess == s)
			return &c->trees[i];
	return NULL;
}

struct tree *
conn_tree_new(struct conn *c, struct session *s)
{
	static uint32_t next_id;
	struct tree *t;
	int i;

	for (i = 0; i < CONN_MAX_TREES; i++)
		if (!c->trees[i].in_use)
			break;
	if (i == CONN_MAX_TREES)
		return NULL;
	t = &c->trees[i];
	memset(t, 0, sizeof(*t));
	t->in_use = 1;
	t->sess = s;
	t->root_fd = -1;
	/* Never 0 nor 0xFFFFFFFF (the related-compound tree id). */
	do
		t->tree_id = ++next_id;
	while (t->tree_id == 0 || t->tree_id == UINT32_MAX ||
	    conn_tree_find(c, s, t->tree_id) != t);
	return t;
}

void
conn_tree_free(struct conn *c, struct tree *t)
{
	if (c->priv != NULL && c->priv->opens != NULL)
		open_close_tree(c, t);
	/*
	 * What its closes did not answer (a CREATE parked on a break) is
	 * answered now: nothing of a tree that is gone stays parked.
	 */
	if (c->priv != NULL && c->priv->role == CONN_ROLE_WORKER &&
	    !c->priv->dead && c->fd >= 0 && t->sess != NULL &&
	    conn_pending_end_tree(c, t->sess->session_id, t->tree_id) > 0)
		(void)dispatch_async_run(c);
	if (t->root_fd >= 0)
		close(t->root_fd);
	state_tree_release(t);
	memset(t, 0, sizeof(*t));
	t->root_fd = -1;
}

int
conn_rsp_may_sendfile(const struct smb2_req *req)
{
	const struct session *s = req->sess;

	/* A relayed answer travels in one piece with its control record. */
	if (req->encrypted || (req->flags & SMB2_FLAGS_SIGNED) ||
	    req->conn->priv->relayed ||
	    (req->chan != NULL && req->chan->priv->relayed))
		return 0;
	if (s != NULL && (s->encrypt || s->signing_required))
		return 0;
	if (req->tree != NULL && req->tree->encrypt)
		return 0;
	return 1;
}

uint16_t
conn_peer_port(const struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c->priv->headless || c->priv->relayed)
		return c->priv->peer_port;
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == -1)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* ---- I/O ---- */

ssize_t
conn_read_want(struct conn *c)
{
	struct conn_private *pv = c->priv;
	size_t want;

	if (pv->rlen >= pv->rcap)
		return -ENOBUFS;
	want = pv->rcap - pv->rlen;
	/* A worker leaves a large WRITE's payload for splice (conn_rx.c). */
	if (pv->role == CONN_ROLE_WORKER)
		want = conn_rx_read_want(c, want);
	return (ssize_t)want;
}

void
conn_read_done(struct conn *c, size_t n)
{
	c->priv->rlen += n;
	relay_ring_read(c->priv->relay_ring, n);	/* a relayed one's */
}

ssize_t
conn_read(struct conn *c)
{
	struct conn_private *pv = c->priv;
	ssize_t want, n;

	if ((want = conn_read_want(c)) <= 0)
		return want == 0 ? -EAGAIN : want;	/* 0: awaited whole */
	do
		n = read(c->fd, pv->rbuf + pv->rlen, (size_t)want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	conn_read_done(c, (size_t)n);
	return n;
}

long
conn_frame_ready(struct conn *c)
{
	struct conn_private *pv = c->priv;
	long len;

	if (pv->rlen < SMB2_FRAME_LEN)
		return 0;
	len = smb2_frame_decode(pv->rbuf);
	if (len < 0 || (size_t)len > pv->max_frame || len < 4) {
		conn_warnx(c, "bad frame length %ld (max %zu), disconnecting",
		    len, pv->max_frame);
		return -1;
	}
	if (pv->rlen < (size_t)len + SMB2_FRAME_LEN)
		return 0;
	return len;
}

int
conn_output_pending(const struct conn *c)
{
	return c->priv->out_len > 0 || c->priv->out_flen > 0;
}

int
conn_flush(struct conn *c)
{
	struct conn_private *pv = c->priv;
	ssize_t n;
	int guard;

	if (pv->headless) {
		/*
		 * The socket is gone (conn_keep_headless): the answer of a
		 * request that arrived on it has nowhere to go, MS-SMB2 3.3.7.1.
		 */
		if (pv->out_fd >= 0 && pv->out_fd_owned)
			close(pv->out_fd);
		pv->out_fd = -1;
		pv->out_fd_owned = 0;
		pv->out_len = 0;
		pv->out_flen = 0;
		return 0;
	}
	if (pv->tx == CONN_TX_RING)
		return -EAGAIN;		/* the ring has it until its completion */
	if (pv->tx_ring && pv->out_flen == 0 && pv->out_len > 0) {
		pv->tx = CONN_TX_DEFERRED;	/* the loop sends it (tx_ring) */
		return -EAGAIN;
	}
	/* Bounded: each round writes something or returns. */
	for (guard = 0; guard < 1 << 20 && conn_output_pending(c); guard++) {
		if (pv->out_len > 0) {
			n = send(c->fd, pv->out_p, pv->out_len, MSG_NOSIGNAL |
			    (pv->out_flen > 0 ? MSG_MORE : 0));
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return errno == EWOULDBLOCK ? -EAGAIN : -errno;
			}
			pv->out_p += n;
			pv->out_len -= (size_t)n;
			continue;
		}
		n = sendfile(c->fd, pv->out_fd, &pv->out_foff, pv->out_flen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		if (n == 0) {
			/* The file shrank under us: the frame length lies. */
			return -EIO;
		}
		pv->out_flen -= (size_t)n;
	}
	/*
	 * Done with the bulk data: close our dup, never the handler's fd (the
	 * open still uses it; closing it made the next request on the handle
	 * fail with EBADF).
	 */
	if (pv->out_fd >= 0 && pv->out_flen == 0) {
		if (pv->out_fd_owned)
			close(pv->out_fd);
		pv->out_fd = -1;
		pv->out_fd_owned = 0;
	}
	if (conn_output_pending(c))
		return -EAGAIN;
	/* All in the socket: the owner will read those answers whole. */
	relay_ring_sent(pv->relay_ring);
	return 0;
}

int
conn_process(struct conn *c)
{
	struct conn_private *pv = c->priv;
	size_t used = 0;
	long len;
	int rc = 0, guard;

	for (guard = 0; guard < 4096 && !conn_output_pending(c) && !pv->dead;
	    guard++) {
		size_t rest = pv->rlen - used;

		/* Other users' workers' answers (worker/relay.h). */
		if (pv->relays != NULL) {
			if (relay_pump(c) < 0) {
				rc = -1;
				break;
			}
			if (conn_output_pending(c))
				break;
		}

		/* Woken async requests and break notices go first. */
		if (conn_async_ready(c)) {
			if (dispatch_async_run(c) < 0) {
				rc = -1;
				break;
			}
			if (conn_output_pending(c))
				break;
		}

		if (rest < SMB2_FRAME_LEN || pv->rx_armed)
			break;	/* armed: what rbuf holds is an incomplete frame */
		/* conn_frame_ready() looks at the start of rbuf. */
		len = smb2_frame_decode(pv->rbuf + used);
		/* Large buffers once a session has a disk tree (conn_rx.c). */
		if (pv->role == CONN_ROLE_WORKER && pv->rcap < CONN_BUF_BIG &&
		    conn_rx_grow(c) < 0) {
			rc = -1;
			break;
		}
		if (len < 4 || (size_t)len > pv->max_frame) {
			conn_warnx(c, "bad frame length %ld, disconnecting", len);
			rc = -1;
			break;
		}
		if (rest < (size_t)len + SMB2_FRAME_LEN) {
			int sr;

			if (pv->role != CONN_ROLE_WORKER)
				break;
			/* An incomplete large WRITE: splice it (conn_rx.c). */
			if (used > 0) {
				memmove(pv->rbuf, pv->rbuf + used, rest);
				pv->rlen = rest;
				relay_ahead_moved(c, used);
				used = 0;
			}
			sr = conn_rx_splice_frame(c, (size_t)len);
			if (sr < 0)
				rc = -1;
			if (sr <= 0)
				break;
			continue;
		}
		if (dispatch_frame(c, pv->rbuf + used + SMB2_FRAME_LEN,
		    (size_t)len) < 0) {
			relay_drop(c);	/* relayed: the owner drops the client */
			rc = -1;
			break;
		}
		used += (size_t)len + SMB2_FRAME_LEN;
		if (pv->logged_in != NULL && pv->role == CONN_ROLE_GATE)
			break;	/* the gate hands off now */
	}
	if (used > 0) {
		memmove(pv->rbuf, pv->rbuf + used, pv->rlen - used);
		pv->rlen -= used;
		relay_ahead_moved(c, used);
	}
	/* A relayed worker notes the sealed frames read behind (relay.h). */
	if (rc == 0)
		relay_ahead(c);
	return rc;
}
