/*
 * The gate: an unprivileged pre-forked process that serves the NEGOTIATE
 * and SESSION_SETUP of up to GATE_SLOTS connections at once on one epoll
 * loop, asks the master for the password verdicts, and hands each
 * authenticated connection (socket + state) to the master for the user's
 * worker.
 *
 * Nothing here waits on one client: sockets are non-blocking, a login that
 * needs the master's verdict (MSG_AUTH_REQ) or its acknowledgement of a
 * hand-off (MSG_HANDOFF) parks its slot until the answer with that id
 * comes, and the other slots are served meanwhile.  Deadlines: the first
 * bytes within GATE_FIRST_SECS, the whole login within GATE_LOGIN_SECS.
 *
 * The master gives a gate connections against credits (MSG_GATE_READY):
 * one per free slot, so it never sends more than the gate can hold.  Each
 * connection ends with MSG_GATE_CONN_END (closed or handed off), which
 * frees its place in the master's per-address count.  After GATE_MAX_CONNS
 * connections the gate grants no more, says MSG_GATE_RETIRE, finishes its
 * logins and exits 0; the master has started a fresh one (fresh ASLR, no
 * leftovers of past clients).
 *
 * The SMB2 code is the same as the worker's: a SESSION_SETUP carrying an
 * NTLMSSP AUTHENTICATE is recognised before dispatch, its verdict fetched
 * asynchronously, and the request then dispatched with conn->priv->auth
 * answering from that verdict (gate_conn_auth).  One naming a session
 * this connection does not hold (a channel binding) is judged by that
 * session's worker first, and answered with the refusal it built, or
 * handed over when it may authenticate (worker/gate_setup.c,
 * worker/bindcheck.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/smb2_hdr.h"
#include "worker/confine.h"
#include "worker/conn_priv.h"
#include "worker/gate_priv.h"
#include "worker/handoff.h"
#include "worker/metrics.h"
#include "worker/worker.h"

#define GATE_SLOTS		64	/* logins served at once */
#define GATE_MAX_CONNS		1024	/* then retire: a fresh process takes over */
#define GATE_FIRST_SECS		5	/* accept to the first bytes */
#define GATE_LOGIN_SECS		15	/* accept to hand-off */
#define GATE_MASTER_SECS	30	/* the master's answer to a hand-off */
#define GATE_DRAIN_SECS		4	/* master shutting down (its grace is 5 s) */
#define GATE_BUF_SIZE		CONN_BUF_SMALL	/* per slot, before authentication */

enum gate_slot_state {
	SLOT_FREE = 0,
	SLOT_LOGIN,		/* reading and answering the client */
	SLOT_AUTH,		/* waiting for MSG_AUTH_REP with id token */
	SLOT_HANDOFF,		/* waiting for MSG_HANDOFF_DONE with id token */
	SLOT_BIND,		/* the same, for MSG_HANDOFF_BIND */
	SLOT_CHECK,		/* waiting for MSG_BIND_CHECK_REP with id token */
};

struct gate_slot {
	int		 state;
	struct conn	*c;
	uint32_t	 conn_id;	/* the master's, from MSG_NEW_CONN */
	uint32_t	 token;		/* id of our MSG_AUTH_REQ: names the verdict */
	int64_t		 deadline_ms;	/* of the current state */
	int64_t		 login_deadline_ms;
	int		 got_bytes;
	int		 bind_refused;	/* answered here as for no such session */
	int		 bind_ok;	/* its worker lets this binding through */
	unsigned	 bind_fails;	/* bindings refused on this connection */
	struct gate_check check;	/* the binding check asked */
	int		 no_bind;	/* MSG_NEW_CONN_NO_BIND: bindings answered here */
	/* The verdict, for the AUTHENTICATE token at want_tok only. */
	int		 have_rep;
	const uint8_t	*want_tok;
	size_t		 want_len;
	struct authmsg_rep rep;
	/* Allocated on the slot's first use and kept. */
	uint8_t		*rbuf;
	uint8_t		*sbuf;
	size_t		 rbuf_used;	/* high-water mark, wiped on release */
};

struct gate {
	int		 chan;
	int		 epfd;
	struct conf	*conf;
	const char	*conf_path;
	uint32_t	 next_token;
	unsigned	 taken;		/* connections received */
	unsigned	 granted;	/* credits given to the master */
	unsigned	 active;	/* slots in use */
	int		 draining;	/* MSG_SHUTDOWN: no new connections */
	int		 master_gone;
	struct gate_slot slots[GATE_SLOTS];
	uint8_t		 mbuf[MSG_BUF_SIZE];
	uint8_t		 obuf[MSG_MAX_PAYLOAD];
};

static struct gate gate;

static int64_t
gate_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Sends to the master; the channel is non-blocking for reads, so a full
 * one is waited on here (bounded: a master that reads nothing for 10 s is
 * as good as gone).
 */
static int
gate_send(uint32_t type, uint32_t id, const void *p, size_t len, int fd)
{
	int rc, guard;

	for (guard = 0; guard < 100; guard++) {
		struct pollfd pfd = { gate.chan, POLLOUT, 0 };

		rc = msg_send(gate.chan, type, id, p, len, fd);
		if (rc != -EAGAIN)
			break;
		(void)poll(&pfd, 1, 100);
	}
	if (rc != 0) {
		errno = -rc;
		log_warn("message %u to the master", type);
		gate.master_gone = 1;
	}
	return rc;
}

static void
gate_grant(unsigned n)
{
	uint8_t p[4];

	if (gate.draining || gate.master_gone)
		return;
	if (n > GATE_MAX_CONNS - gate.granted)
		n = GATE_MAX_CONNS - gate.granted;
	if (n == 0)
		return;
	le32_put(p, n);
	if (gate_send(MSG_GATE_READY, 0, p, sizeof(p), -1) == 0)
		gate.granted += n;
}

static struct gate_slot *
gate_slot_of(const struct conn *c)
{
	return c->priv->host;
}

/*
 * Closes a slot's connection (or lets go of a handed-off one); to_bind:
 * it went to a worker for a channel binding, still unauthenticated.
 */
static void
gate_slot_close(struct gate_slot *sl, int to_bind)
{
	struct conn *c = sl->c;
	struct conn_private *pv = c->priv;

	if (sl->state == SLOT_FREE)
		return;
	if (sl->state != SLOT_HANDOFF && sl->state != SLOT_BIND)
		(void)epoll_ctl(gate.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (pv->rbuf == sl->rbuf) {
		/* The slot's buffers outlive the connection. */
		if (pv->rlen > sl->rbuf_used)
			sl->rbuf_used = pv->rlen;
		pv->rbuf = NULL;
		pv->sbuf = NULL;
	}
	conn_free(c);
	/* NTLMSSP responses of the last client: not for the next one. */
	explicit_bzero(sl->rbuf, sl->rbuf_used);
	explicit_bzero(&sl->rep, sizeof(sl->rep));
	sl->rbuf_used = 0;
	sl->c = NULL;
	sl->state = SLOT_FREE;
	sl->have_rep = 0;
	sl->bind_refused = 0;
	sl->bind_ok = 0;
	sl->bind_fails = 0;
	gate.active--;
	if (!gate.master_gone) {
		uint8_t p[4];

		le32_put(p, 1);
		(void)gate_send(MSG_GATE_CONN_END, sl->conn_id, p,
		    to_bind ? sizeof(p) : 0, -1);
	}
	gate_grant(1);
}

static void
gate_slot_end(struct gate_slot *sl)
{
	gate_slot_close(sl, 0);
}

/* conn->priv->auth: the verdict fetched for exactly this AUTHENTICATE. */
static int
gate_conn_auth(struct conn *c, const struct authmsg_req *req,
    struct authmsg_rep *rep)
{
	struct gate_slot *sl = gate_slot_of(c);

	if (!sl->have_rep || req->authenticate != sl->want_tok ||
	    req->authenticate_len != sl->want_len) {
		conn_warnx(c, "AUTHENTICATE not in a lone SESSION_SETUP: refused");
		return -1;
	}
	*rep = sl->rep;
	sl->have_rep = 0;
	explicit_bzero(&sl->rep, sizeof(sl->rep));
	return 0;
}

static void
gate_auth_send(struct gate_slot *sl, const struct authmsg_req *req)
{
	struct epoll_event ev = { 0, { .u64 = (uint64_t)(sl - gate.slots) + 1 } };
	int n;

	sl->token = gate.next_token++;
	if (gate.next_token == 0)
		gate.next_token = 1;
	n = authmsg_req_encode(req, gate.obuf, sizeof(gate.obuf));
	if (n < 0 || gate_send(MSG_AUTH_REQ, sl->token, gate.obuf, (size_t)n,
	    -1) != 0) {
		if (n > 0)
			explicit_bzero(gate.obuf, (size_t)n);
		gate_slot_end(sl);
		return;
	}
	explicit_bzero(gate.obuf, (size_t)n);
	sl->want_tok = req->authenticate;
	sl->want_len = req->authenticate_len;
	sl->state = SLOT_AUTH;
	/* The request stays in rbuf: read nothing more until the verdict. */
	(void)epoll_ctl(gate.epfd, EPOLL_CTL_MOD, sl->c->fd, &ev);
}

/* Hands the authenticated connection over; the slot ends on HANDOFF_DONE. */
static void
gate_handoff(struct gate_slot *sl)
{
	struct conn *c = sl->c;
	struct conn_private *pv = c->priv;
	int n, rc;

	/* From now on the worker reads this socket. */
	(void)epoll_ctl(gate.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (pv->rlen > sl->rbuf_used)
		sl->rbuf_used = pv->rlen;
	n = handoff_encode(c, pv->logged_in, pv->rbuf, pv->rlen, gate.obuf,
	    sizeof(gate.obuf));
	if (n < 0) {
		conn_warnx(c, "connection state too large to hand off");
		sl->state = SLOT_HANDOFF;	/* so that end does not DEL again */
		gate_slot_end(sl);
		return;
	}
	/* The id names the verdict the master routes by. */
	rc = gate_send(MSG_HANDOFF, sl->token, gate.obuf, (size_t)n, c->fd);
	explicit_bzero(gate.obuf, (size_t)n);
	sl->state = SLOT_HANDOFF;
	if (rc != 0) {
		gate_slot_end(sl);
		return;
	}
	/* The socket stays open here until the worker has it. */
	sl->deadline_ms = gate_now_ms() + GATE_MASTER_SECS * 1000;
}

/*
 * Hands the unauthenticated connection, its pending binding request
 * first, to the master for the worker of session sid.  If the master
 * knows no such session the slot resumes (gate_handoff_done).
 */
static void
gate_bind_handoff(struct gate_slot *sl, uint64_t sid)
{
	struct conn *c = sl->c;
	struct conn_private *pv = c->priv;
	int n, rc;

	(void)epoll_ctl(gate.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	sl->state = SLOT_BIND;
	if (pv->rlen > sl->rbuf_used)
		sl->rbuf_used = pv->rlen;
	le64_put(gate.obuf, sid);
	n = handoff_encode(c, NULL, pv->rbuf, pv->rlen, gate.obuf + 8,
	    sizeof(gate.obuf) - 8);
	if (n < 0) {
		conn_warnx(c, "connection state too large to hand off");
		gate_slot_end(sl);
		return;
	}
	sl->token = gate.next_token++;
	if (gate.next_token == 0)
		gate.next_token = 1;
	rc = gate_send(MSG_HANDOFF_BIND, sl->token, gate.obuf, (size_t)n + 8,
	    c->fd);
	explicit_bzero(gate.obuf, (size_t)n + 8);
	if (rc != 0) {
		gate_slot_end(sl);
		return;
	}
	sl->deadline_ms = gate_now_ms() + GATE_MASTER_SECS * 1000;
}

/*
 * Asks the worker of the session the SESSION_SETUP q names to judge it
 * (MSG_BIND_CHECK); the slot waits for the answer (gate_check_rep) and
 * reads nothing more meanwhile.
 */
static void
gate_check_send(struct gate_slot *sl, const struct bindcheck_req *q)
{
	struct epoll_event ev = { 0, { .u64 = (uint64_t)(sl - gate.slots) + 1 } };
	int n;

	sl->token = gate.next_token++;
	if (gate.next_token == 0)
		gate.next_token = 1;
	n = bindcheck_req_encode(q, gate.obuf, sizeof(gate.obuf));
	if (n < 0 || gate_send(MSG_BIND_CHECK, sl->token, gate.obuf, (size_t)n,
	    -1) != 0) {
		gate_slot_end(sl);
		return;
	}
	sl->state = SLOT_CHECK;
	sl->deadline_ms = gate_now_ms() + GATE_MASTER_SECS * 1000;
	(void)epoll_ctl(gate.epfd, EPOLL_CTL_MOD, sl->c->fd, &ev);
}

/*
 * A SESSION_SETUP naming a session this connection lacks: asked about
 * (1: the slot waits), routed once its worker let it through (1: the
 * slot waits for the hand-off), or left to the handler (0).
 */
static int
gate_bind_step(struct gate_slot *sl, const struct gate_setup *gs,
    const uint8_t *m, size_t len)
{
	struct bindcheck_req q;
	int rc;

	if (sl->bind_ok) {
		sl->bind_ok = 0;
		if (sl->no_bind || !(gs->flags & SMB2_SESSION_FLAG_BINDING) ||
		    gs->sid != sl->check.sid) {
			sl->bind_refused = 1;
			return 0;
		}
		gate_bind_handoff(sl, gs->sid);
		return 1;
	}
	rc = gate_check_needed(sl->c, gs, m, len, &q, &sl->check);
	if (rc < 0)
		sl->bind_refused = 1;
	if (rc <= 0)
		return 0;
	gate_check_send(sl, &q);
	return 1;
}

/*
 * Answers the complete frames in rbuf, one at a time: a frame that needs
 * a verdict parks the slot before it is dispatched.
 */
static void
gate_slot_run(struct gate_slot *sl)
{
	struct conn *c = sl->c;
	struct conn_private *pv = c->priv;
	struct authmsg_req req;
	int guard;

	for (guard = 0; guard < 64; guard++) {
		long len = conn_frame_ready(c);
		struct gate_setup gs;
		size_t total, flen, rest;
		int rc, setup;

		if (len < 0)
			break;
		if (len == 0)
			return;
		/* Decoded once for both checks; the handler decodes it again. */
		setup = gate_setup_decode(pv->rbuf + SMB2_FRAME_LEN, (size_t)len,
		    &gs);
		if (setup && !sl->have_rep && gate_auth_needed(c, &gs, &req)) {
			gate_auth_send(sl, &req);
			return;
		}
		if (setup && !sl->bind_refused &&
		    gate_bind_step(sl, &gs, pv->rbuf + SMB2_FRAME_LEN,
		    (size_t)len))
			return;
		/* conn_process() takes all it has: show it one frame. */
		total = pv->rlen;
		flen = (size_t)len + SMB2_FRAME_LEN;
		pv->rlen = flen;
		rc = conn_process(c);
		rest = total - flen;
		if (rest > 0)
			memmove(pv->rbuf + pv->rlen, pv->rbuf + flen, rest);
		pv->rlen += rest;
		/* A verdict is for the request it was asked for. */
		sl->have_rep = 0;
		sl->bind_refused = 0;
		sl->bind_ok = 0;
		explicit_bzero(&sl->rep, sizeof(sl->rep));
		if (rc < 0 || pv->dead)
			break;
		if (pv->logged_in != NULL) {
			gate_handoff(sl);
			return;
		}
	}
	/* A bad frame, a fatal answer, or far too many frames before a login. */
	gate_slot_end(sl);
}

static void
gate_slot_readable(struct gate_slot *sl)
{
	struct conn *c = sl->c;
	struct conn_private *pv = c->priv;
	int guard;

	for (guard = 0; guard < 8; guard++) {
		ssize_t n = conn_read(c);

		if (n == -EAGAIN || n == -ENOBUFS)
			break;
		if (n <= 0) {
			gate_slot_end(sl);
			return;
		}
		if (!sl->got_bytes) {
			sl->got_bytes = 1;
			sl->deadline_ms = sl->login_deadline_ms;
		}
		if (pv->rlen > sl->rbuf_used)
			sl->rbuf_used = pv->rlen;
		if (pv->rlen == pv->rcap)
			break;
	}
	gate_slot_run(sl);
}

/* MSG_NEW_CONN: a client socket and the server's identity for it. */
static void
gate_new_conn(const struct msg *m)
{
	struct epoll_event ev;
	struct gate_slot *sl = NULL;
	struct conn_private *pv;
	struct conn *c;
	uint8_t guid[16];
	uint64_t start;
	char peer[64];
	struct cur r;
	const uint8_t *s, *nul;
	uint8_t flags = 0;
	int64_t now;
	unsigned i;

	gate.taken++;
	cur_init(&r, m->payload, m->len);
	cur_bytes(&r, guid, 16);
	start = cur_le64(&r);
	s = r.p;
	/* The peer address, NUL-terminated, then at most one flags byte. */
	nul = r.err || cur_left(&r) == 0 ? NULL : memchr(s, 0, cur_left(&r));
	if (nul == NULL || (size_t)(s + cur_left(&r) - nul) > 2) {
		log_warnx("malformed MSG_NEW_CONN");
		goto refuse;
	}
	if (nul + 1 < s + cur_left(&r))
		flags = nul[1];
	snprintf(peer, sizeof(peer), "%s", (const char *)s);
	for (i = 0; i < GATE_SLOTS; i++)
		if (gate.slots[i].state == SLOT_FREE) {
			sl = &gate.slots[i];
			break;
		}
	if (sl == NULL) {
		/* The credits say this cannot happen. */
		log_warnx("%s: no free slot, connection closed", peer);
		goto refuse;
	}
	if (sl->rbuf == NULL) {
		sl->rbuf = malloc(GATE_BUF_SIZE);
		sl->sbuf = malloc(GATE_BUF_SIZE);
		if (sl->rbuf == NULL || sl->sbuf == NULL) {
			free(sl->rbuf);
			free(sl->sbuf);
			sl->rbuf = sl->sbuf = NULL;
			log_warnx("%s: out of memory", peer);
			goto refuse;
		}
	}
	i = (unsigned)fcntl(m->fd, F_GETFL);
	if ((int)i == -1 || fcntl(m->fd, F_SETFL, (int)i | O_NONBLOCK) == -1) {
		log_warn("%s: O_NONBLOCK", peer);
		goto refuse;
	}
	/* Size 0: the slot's buffers, not new ones, are the connection's. */
	c = conn_new(gate.conf, m->fd, CONN_ROLE_GATE, peer, 0);
	if (c == NULL) {
		log_warnx("%s: out of memory", peer);
		goto refuse;
	}
	pv = c->priv;
	if (pv->rbuf == NULL) {
		pv->rbuf = sl->rbuf;
		pv->sbuf = sl->sbuf;
		pv->rcap = pv->scap = GATE_BUF_SIZE;
		pv->max_frame = GATE_BUF_SIZE - SMB2_FRAME_LEN;
	}
	memcpy(c->server_guid, guid, 16);
	c->start_time = start;
	pv->auth = gate_conn_auth;
	pv->host = sl;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(sl - gate.slots) + 1;
	if (epoll_ctl(gate.epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
		log_warn("%s: epoll_ctl", peer);
		if (pv->rbuf == sl->rbuf)
			pv->rbuf = pv->sbuf = NULL;
		c->fd = -1;	/* closed below */
		conn_free(c);
		goto refuse;
	}
	now = gate_now_ms();
	sl->c = c;
	sl->state = SLOT_LOGIN;
	sl->conn_id = m->id;
	sl->got_bytes = 0;
	sl->have_rep = 0;
	sl->no_bind = (flags & MSG_NEW_CONN_NO_BIND) != 0;
	sl->rbuf_used = 0;
	sl->deadline_ms = now + GATE_FIRST_SECS * 1000;
	sl->login_deadline_ms = now + GATE_LOGIN_SECS * 1000;
	gate.active++;
	metrics.gate.conns++;
	log_debug(3, "%s: connection %u in slot %u", peer, m->id,
	    (unsigned)(sl - gate.slots));
	goto out;
refuse:
	close(m->fd);
	(void)gate_send(MSG_GATE_CONN_END, m->id, NULL, 0, -1);
	gate_grant(1);
out:
	if (gate.taken >= GATE_MAX_CONNS && !gate.draining) {
		/* The last one: the master answers with MSG_SHUTDOWN (drain). */
		(void)gate_send(MSG_GATE_RETIRE, 0, NULL, 0, -1);
		gate.draining = 1;
	}
}

static struct gate_slot *
gate_slot_find(int state, uint32_t token, uint32_t conn_id)
{
	unsigned i;

	for (i = 0; i < GATE_SLOTS; i++) {
		struct gate_slot *sl = &gate.slots[i];

		if (sl->state == SLOT_FREE)
			continue;
		if (state != SLOT_FREE ? sl->state == state && sl->token == token :
		    sl->conn_id == conn_id)
			return sl;
	}
	return NULL;
}

static void
gate_auth_rep(const struct msg *m)
{
	struct gate_slot *sl = gate_slot_find(SLOT_AUTH, m->id, 0);
	struct epoll_event ev;

	if (sl == NULL)
		return;		/* that login ended while it waited */
	if (authmsg_rep_decode(&sl->rep, m->payload, m->len) != 0) {
		log_warnx("%s: malformed verdict", sl->c->peer);
		gate_slot_end(sl);
		return;
	}
	if (sl->rep.status != 0 &&
	    sl->rep.status != STATUS_MORE_PROCESSING_REQUIRED)
		metrics.gate.auth_failures++;
	sl->have_rep = 1;
	sl->state = SLOT_LOGIN;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(sl - gate.slots) + 1;
	(void)epoll_ctl(gate.epfd, EPOLL_CTL_MOD, sl->c->fd, &ev);
	gate_slot_run(sl);
}

/*
 * MSG_BIND_CHECK_REP: the session's worker judged the request (or the
 * master knows no such session, or got no answer).
 */
static void
gate_check_rep(const struct msg *m)
{
	struct gate_slot *sl = gate_slot_find(SLOT_CHECK, m->id, 0);
	struct conn_private *pv;
	struct bindcheck_req q;
	struct bindcheck_rep rep;
	struct epoll_event ev;
	long len;

	if (sl == NULL)
		return;		/* that login ended while it waited */
	pv = sl->c->priv;
	sl->state = SLOT_LOGIN;
	/* Back to the login's own clock, not the check's. */
	sl->deadline_ms = sl->login_deadline_ms;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(sl - gate.slots) + 1;
	len = conn_frame_ready(sl->c);
	if (bindcheck_rep_decode(&rep, m->payload, m->len) != 0 || len <= 0 ||
	    epoll_ctl(gate.epfd, EPOLL_CTL_MOD, sl->c->fd, &ev) != 0) {
		log_warnx("%s: malformed answer to a binding check", sl->c->peer);
		gate_slot_end(sl);
		return;
	}
	if (rep.rsp == NULL && rep.status == STATUS_SUCCESS)
		sl->bind_ok = 1;	/* the socket may go: gate_bind_step */
	else if (rep.rsp == NULL && rep.status == STATUS_USER_SESSION_DELETED)
		sl->bind_refused = 1;	/* the handler answers */
	else if (rep.rsp == NULL) {
		log_warnx("%s: binding to session %llx not checked (%#x): "
		    "closed", sl->c->peer, (unsigned long long)sl->check.sid,
		    rep.status);
		gate_slot_end(sl);
		return;
	} else {
		/* The worker's refusal, whole; the request it answers. */
		memset(&q, 0, sizeof(q));
		q.sid = sl->check.sid;
		q.credits = sl->check.credits;
		q.msg = pv->rbuf + SMB2_FRAME_LEN;
		q.msg_len = (uint32_t)len;
		if (gate_check_answer(sl->c, &sl->check, &q, &rep) != 0 ||
		    pv->dead) {
			gate_slot_end(sl);
			return;
		}
	}
	/*
	 * Refused bindings cost a worker's check each: a connection that
	 * keeps sending them gets as many as a routed one did, then is closed.
	 */
	if (!sl->bind_ok && ++sl->bind_fails >= CONN_BIND_MAX_FAILS) {
		/* Debug only: a flood would fill the log (dos_preauth.sh). */
		log_debug(5, "%s: %u bindings refused before a login, closed",
		    sl->c->peer, sl->bind_fails);
		gate_slot_end(sl);
		return;
	}
	gate_slot_run(sl);
}

static void
gate_handoff_done(const struct msg *m)
{
	struct gate_slot *sl = gate_slot_find(SLOT_HANDOFF, m->id, 0);
	struct epoll_event ev;

	if (sl == NULL && (sl = gate_slot_find(SLOT_BIND, m->id, 0)) != NULL &&
	    m->len == 4 && le32_get(m->payload) == STATUS_USER_SESSION_DELETED) {
		/* No such session: this gate answers and keeps the client. */
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u64 = (uint64_t)(sl - gate.slots) + 1;
		if (epoll_ctl(gate.epfd, EPOLL_CTL_ADD, sl->c->fd, &ev) != 0) {
			gate_slot_end(sl);
			return;
		}
		sl->state = SLOT_LOGIN;
		sl->deadline_ms = sl->login_deadline_ms;
		sl->bind_refused = 1;
		gate_slot_run(sl);
		return;
	}
	if (sl == NULL)
		return;
	if (m->len != 4 || le32_get(m->payload) != 0)
		log_warnx("%s: hand-off refused by the master (%#x)",
		    sl->c->peer, m->len == 4 ? le32_get(m->payload) : 0);
	else if (sl->state == SLOT_HANDOFF)
		metrics.gate.logins++;
	gate_slot_close(sl, sl->state == SLOT_BIND && m->len == 4 &&
	    le32_get(m->payload) == 0);
}

static void
gate_shutdown(const struct msg *m)
{
	int64_t cap = gate_now_ms() + GATE_DRAIN_SECS * 1000;
	unsigned i;

	gate.draining = 1;
	if (m->len == 4 && le32_get(m->payload) == 1)
		return;		/* retiring: the logins keep their deadlines */
	for (i = 0; i < GATE_SLOTS; i++)
		if (gate.slots[i].state != SLOT_FREE &&
		    gate.slots[i].deadline_ms > cap)
			gate.slots[i].deadline_ms = cap;
}

/*
 * This gate's counters (worker/metrics.h) to the master: the answer to
 * MSG_METRICS_REQ id, or with id 0 the final ones before it exits.
 */
static void
gate_metrics_send(uint32_t id)
{
	int n = metrics_encode(&metrics, gate.obuf, sizeof(gate.obuf));

	if (n > 0 && !gate.master_gone)
		(void)gate_send(MSG_METRICS_REP, id, gate.obuf, (size_t)n, -1);
}

/* Reads what the master sent; sets master_gone when the channel closed. */
static void
gate_chan_event(void)
{
	struct msg m;
	int i, rc;

	for (i = 0; i < 64 && !gate.master_gone; i++) {
		rc = msg_recv(gate.chan, &m, gate.mbuf, sizeof(gate.mbuf));
		if (rc == -EAGAIN)
			return;
		if (rc < 0) {
			if (rc != -EPIPE)
				log_warnx("channel: %s", strerror(-rc));
			gate.master_gone = 1;
			return;
		}
		if (m.type == MSG_NEW_CONN && m.fd >= 0) {
			gate_new_conn(&m);
			continue;
		}
		if (m.fd >= 0)
			close(m.fd);
		switch (m.type) {
		case MSG_AUTH_REP:
			gate_auth_rep(&m);
			break;
		case MSG_HANDOFF_DONE:
			gate_handoff_done(&m);
			break;
		case MSG_BIND_CHECK_REP:
			gate_check_rep(&m);
			break;
		case MSG_GATE_DROP: {
			struct gate_slot *sl = gate_slot_find(SLOT_FREE, 0, m.id);

			if (sl != NULL && sl->state != SLOT_HANDOFF &&
			    sl->state != SLOT_BIND) {
				log_debug(2, "%s: connection %u dropped for a "
				    "newer one", sl->c->peer, m.id);
				gate_slot_end(sl);
			}
			break;
		}
		case MSG_SHUTDOWN:
			gate_shutdown(&m);
			break;
		case MSG_RELOAD:
			/*
			 * Confined, a gate cannot read the config again: the
			 * master retires it on reload and starts a new one
			 * (daemon/spawn.c spawn_broadcast).
			 */
			log_debug(3, "reload ignored: this gate is replaced");
			break;
		case MSG_DEBUG_LEVEL:
			if (m.len == 4)
				log_level = (int)le32_get(m.payload);
			break;
		case MSG_PING: {
			/* The loop never blocks on a client: it can answer. */
			uint8_t p[4];

			le32_put(p, (uint32_t)getpid());
			(void)gate_send(MSG_PONG, m.id, p, sizeof(p), -1);
			break;
		}
		case MSG_METRICS_REQ:
			gate_metrics_send(m.id);
			break;
		default:
			log_debug(3, "message %u ignored", m.type);
			break;
		}
	}
}

/* Ends the slots past their deadline; returns ms to the next one, or -1. */
static int
gate_expire(void)
{
	int64_t now = gate_now_ms(), next = -1;
	unsigned i;

	for (i = 0; i < GATE_SLOTS; i++) {
		struct gate_slot *sl = &gate.slots[i];

		if (sl->state == SLOT_FREE)
			continue;
		if (sl->deadline_ms <= now) {
			if (sl->state == SLOT_HANDOFF || sl->state == SLOT_BIND)
				log_warnx("%s: no answer to the hand-off in %d s",
				    sl->c->peer, GATE_MASTER_SECS);
			else if (!sl->got_bytes)
				log_info("%s: nothing sent in %d s, closed",
				    sl->c->peer, GATE_FIRST_SECS);
			else
				log_info("%s: login not completed in %d s, closed",
				    sl->c->peer, GATE_LOGIN_SECS);
			if (sl->state != SLOT_HANDOFF && sl->state != SLOT_BIND)
				metrics.gate.timeouts++;
			gate_slot_end(sl);
			continue;
		}
		if (next < 0 || sl->deadline_ms - now < next)
			next = sl->deadline_ms - now;
	}
	return (int)next;
}

int
gate_main(struct conf *conf, const char *conf_path, int chan)
{
	struct epoll_event ev, evs[64];
	uint8_t role[4];
	int guard, i, n, rc = 0;

	log_set_tag("gate");
	signal(SIGPIPE, SIG_IGN);
	memset(&gate, 0, sizeof(gate));
	gate.chan = chan;
	gate.conf = conf;
	gate.conf_path = conf_path;
	gate.next_token = 1;
	gate.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (gate.epfd < 0 || (i = fcntl(chan, F_GETFL)) == -1 ||
	    fcntl(chan, F_SETFL, i | O_NONBLOCK) == -1) {
		log_warn("gate set-up");
		return 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = 0;
	if (epoll_ctl(gate.epfd, EPOLL_CTL_ADD, chan, &ev) != 0) {
		log_warn("epoll_ctl channel");
		return 1;
	}
	/*
	 * From here on a gate handles clients' bytes: no file system, and only
	 * the system calls of its loop (worker/confine.h).  Refusing to run
	 * unconfined: the master logs the exit and backs off.
	 */
	if ((i = confine_gate()) != 0) {
		errno = -i;
		log_warn("gate: cannot confine itself (seccomp, Landlock)");
		return 1;
	}
	le32_put(role, MSG_ROLE_GATE);
	if (gate_send(MSG_HELLO, 0, role, sizeof(role), -1) != 0)
		return 1;
	gate_grant(GATE_SLOTS);
	/* Bounded: each round waits for an event or a deadline. */
	for (guard = 0; guard < 1 << 30; guard++) {
		int timeout = gate_expire();

		if (gate.master_gone || (gate.draining && gate.active == 0))
			break;
		n = epoll_wait(gate.epfd, evs, 64, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("epoll_wait");
			rc = 1;
			break;
		}
		for (i = 0; i < n; i++) {
			uint64_t k = evs[i].data.u64;
			struct gate_slot *sl;

			if (k == 0) {
				gate_chan_event();
				continue;
			}
			if (k > GATE_SLOTS)
				continue;
			sl = &gate.slots[k - 1];
			if ((sl->state == SLOT_AUTH || sl->state == SLOT_CHECK) &&
			    (evs[i].events & (EPOLLERR | EPOLLHUP)))
				gate_slot_end(sl);	/* reset while it waited */
			else if (sl->state == SLOT_LOGIN)
				gate_slot_readable(sl);
		}
	}
	for (i = 0; i < GATE_SLOTS; i++) {
		struct gate_slot *sl = &gate.slots[i];

		if (sl->state != SLOT_FREE) {
			gate.master_gone = 1;	/* nothing more to tell */
			gate_slot_end(sl);
		}
		free(sl->rbuf);
		free(sl->sbuf);
	}
	/* Counted until the end: the master keeps them in its totals. */
	gate_metrics_send(0);
	return rc;
}
