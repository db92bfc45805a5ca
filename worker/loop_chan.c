/*
 * The user worker's channel to the master: connections handed over
 * (MSG_CONN), the verdict and relay hand-off round trips, status,
 * reload and the operations of usmbctl.  The loop itself is
 * worker/loop.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "daemon/admmsg.h"
#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "shm/shm.h"
#include "worker/conn_priv.h"
#include "worker/ctlmsg.h"
#include "worker/handoff.h"
#include "worker/pipe.h"
#include "worker/loop_priv.h"
#include "worker/relay.h"
#include "worker/samr_db.h"
#include "worker/state.h"
#include "worker/worker.h"

#define WK_AUTH_SECS	30

/*
 * The worker's verdict round trip.  It blocks this connection's processing
 * (and the others') for the master's answer: acceptable for now, since a
 * second session on a worker is rare; a non-blocking state machine is the
 * follow-up.  Other messages that arrive meanwhile are handled or flagged.
 */
static void wk_chan_msg(struct msg *m);

static int
wk_auth(struct conn *c, const struct authmsg_req *req, struct authmsg_rep *rep)
{
	uint32_t id = wk.next_id++;
	int n, guard;

	c->priv->auth_id = id;	/* a relay names the verdict by it */
	n = authmsg_req_encode(req, wk.obuf, sizeof(wk.obuf));
	if (n < 0 || msg_send(wk.chan, MSG_AUTH_REQ, id, wk.obuf, (size_t)n, -1) < 0)
		return -1;
	for (guard = 0; guard < 1000; guard++) {
		struct pollfd pfd = { wk.chan, POLLIN, 0 };
		struct msg m;
		int rc;

		if (poll(&pfd, 1, WK_AUTH_SECS * 1000) <= 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		rc = msg_recv(wk.chan, &m, wk.mbuf, sizeof(wk.mbuf));
		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			wk.shutdown = 1;
			return -1;
		}
		if (m.type == MSG_AUTH_REP && m.id == id)
			return authmsg_rep_decode(rep, m.payload, m.len) < 0 ? -1 : 0;
		wk_chan_msg(&m);
	}
	return -1;
}

/*
 * An administrator's NetrFileClose or NetrSessionDel (daemon/admreq.c):
 * the master asks every worker and answers with a WERROR.  Like wk_auth
 * it blocks this worker's loop, but for at most WK_ADMIN_MS (the master
 * answers by ADMMSG_TIMEOUT_MS whatever the other workers do); what
 * arrives on the channel meanwhile is handled, this worker's own part of
 * the request among it (worker/ctlmsg.c, which knows it is inside the
 * wait).  A rare call of an administrator: no state machine for it.
 */
#define WK_ADMIN_MS	(ADMMSG_TIMEOUT_MS + 1000)

static uint32_t
wk_admin(const struct admmsg_req *req)
{
	struct timespec ts;
	uint32_t id = wk.next_id++, werr = ADMMSG_WERR_NOT_ENOUGH_MEMORY;
	int64_t deadline;
	int n;

	n = admmsg_encode(req, wk.obuf, sizeof(wk.obuf));
	if (n < 0 || msg_send(wk.chan, MSG_ADMIN_REQ, id, wk.obuf, (size_t)n,
	    -1) < 0)
		return werr;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
	    WK_ADMIN_MS;
	ctlmsg_admin_waiting = 1;
	for (;;) {
		struct pollfd pfd = { wk.chan, POLLIN, 0 };
		struct msg m;
		int64_t now;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		if (now >= deadline)
			break;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		rc = msg_recv(wk.chan, &m, wk.mbuf, sizeof(wk.mbuf));
		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			wk.shutdown = 1;
			break;
		}
		if (m.type == MSG_ADMIN_REP && m.id == id) {
			if (m.len == 4)
				werr = le32_get(m.payload);
			break;
		}
		wk_chan_msg(&m);
	}
	ctlmsg_admin_waiting = 0;
	return werr;
}

uint32_t
worker_relay_handoff(int client_fd, int fd, uint32_t id, const uint8_t *p,
    size_t len)
{
	int guard;

	if (msg_send(wk.chan, MSG_RELAY_PEER, id, NULL, 0, client_fd) < 0 ||
	    msg_send(wk.chan, MSG_RELAY, id, p, len, fd) < 0)
		return (uint32_t)-1;
	/* Like wk_auth: the master answers once a worker of that user took it. */
	for (guard = 0; guard < 1000; guard++) {
		struct pollfd pfd = { wk.chan, POLLIN, 0 };
		struct msg m;
		int rc;

		if (poll(&pfd, 1, WK_AUTH_SECS * 1000) <= 0) {
			if (errno == EINTR)
				continue;
			return (uint32_t)-1;
		}
		rc = msg_recv(wk.chan, &m, wk.mbuf, sizeof(wk.mbuf));
		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			wk.shutdown = 1;
			return (uint32_t)-1;
		}
		if (m.type == MSG_HANDOFF_DONE && m.id == id)
			return m.len == 4 ? le32_get(m.payload) : (uint32_t)-1;
		wk_chan_msg(&m);
	}
	return (uint32_t)-1;
}

static void
wk_add(struct msg *m)
{
	struct conn *c = NULL;
	struct epoll_event e;
	int fd = m->fd, fl;

	if (fd >= wk.maxfd) {
		log_warnx("connection fd %d beyond the table", fd);
		goto fail;
	}
	/* Small until a session has a disk tree (conn_rx_grow). */
	c = conn_new(wk.conf, fd, CONN_ROLE_WORKER, "", CONN_BUF_SMALL);
	if (c == NULL) {
		log_warnx("out of memory for a connection");
		goto fail;
	}
	if (handoff_accept(c, m->payload, m->len, user_euid()) < 0) {
		log_warnx("malformed connection state from the master");
		goto fail;
	}
	/* Its ring comes ahead of every frame (worker/relay_ring.c). */
	if (c->priv->relayed &&
	    (fl = relay_ring_accept(fd, &c->priv->relay_ring)) < 0) {
		log_warnx("relayed connection without its ring: %s",
		    strerror(-fl));
		goto fail;
	}
	c->priv->auth = wk_auth;
	pipe_admin_ask = wk_admin;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	e.events = EPOLLIN;
	e.data.fd = fd;
	if (!wk.uring && epoll_ctl(wk.ep, EPOLL_CTL_ADD, fd, &e) < 0)
		goto fail;
	wk.conns[fd] = c;
	wk.nconns++;
	if (fd + 1 > wk.hifd)
		wk.hifd = fd + 1;
	(void)msg_send(wk.chan, MSG_CONN_ACK, m->id, NULL, 0, -1);
	wk_count();
	wk_idle_timer();
	for (fl = 0; fl < CONN_MAX_SESSIONS; fl++)
		if (c->sessions[fl].in_use &&
		    c->sessions[fl].state == SESS_VALID &&
		    state_session_put(c, &c->sessions[fl]) == -EEXIST) {
			/*
			 * The gate picked an id another worker's session has
			 * (it cannot see the state): refused, the client
			 * logs in again and gets another.
			 */
			log_warnx("%s: session id %llx is taken: connection "
			    "refused", c->peer,
			    (unsigned long long)c->sessions[fl].session_id);
			wk_close(c);
			return;
		}
	log_debug(2, "%s: connection taken over (session %llx)", c->peer,
	    (unsigned long long)c->sessions[0].session_id);
	if (!c->sessions[0].in_use) {
		/* Routed for binding: no login of its own yet, so a login's
		 * deadline (the gate's is over for it). */
		c->priv->bind_deadline_ms = shm_now_ms() +
		    CONN_BIND_LOGIN_SECS * 1000;
		worker_tick_arm();
	} else
		/* The session set up in the gate may replace an older one. */
		smb2_session_replace_previous(c, &c->sessions[0]);
	/* Bytes the gate read past the last request: run them. */
	if (c->priv->rlen > 0)
		worker_kick(c);
	else if (wk_rx_arm(c) < 0)
		wk_close(c);
	return;
fail:
	if (c != NULL)
		conn_free(c);	/* closes fd */
	else
		close(fd);
}

static void
wk_status(struct msg *m)
{
	int n;

	n = snprintf((char *)wk.obuf, sizeof(wk.obuf),
	    "{\"pid\":%d,\"user\":\"%s\",\"connections\":%d}", (int)getpid(),
	    wk.user, wk.nconns);
	if (n > 0 && (size_t)n < sizeof(wk.obuf))
		(void)msg_send(wk.chan, MSG_STATUS_REP, m->id, wk.obuf, (size_t)n, -1);
}

static void
wk_chan_msg(struct msg *m)
{
	if (m->type == MSG_CONN && m->fd >= 0) {
		wk_add(m);
		return;
	}
	if (m->fd >= 0)
		close(m->fd);
	/* Operations (usmbctl: worker/ctlmsg.c); a gate's binding check. */
	if (ctlmsg_handle(m) || smb2_bind_check_msg(wk.chan, m))
		return;
	switch (m->type) {
	case MSG_SHUTDOWN:
		wk.shutdown = 1;
		break;
	case MSG_RELOAD:
		wk.reload = 1;
		break;
	case MSG_DEBUG_LEVEL:
		if (m->len == 4)
			log_level = (int)le32_get(m->payload);
		break;
	case MSG_STATUS_REQ:
		wk_status(m);
		break;
	case MSG_USERS:
		if (samr_db_set(m->payload, m->len) != 0)
			log_warnx("bad account list from the master");
		break;
	default:
		log_warnx("unexpected message %u from the master", m->type);
	}
}

void
wk_chan(void)
{
	int guard;

	for (guard = 0; guard < 64; guard++) {
		struct msg m;
		int rc = msg_recv(wk.chan, &m, wk.mbuf, sizeof(wk.mbuf));

		if (rc == -EAGAIN)
			return;
		if (rc < 0) {
			log_debug(1, "master channel closed");
			wk.shutdown = 1;
			return;
		}
		wk_chan_msg(&m);
	}
}

/*
 * The master's messages still queued when the worker ends, read and
 * dropped (a descriptor among them closed): a seqpacket socket closed
 * with unread data resets its peer, and the master, reading ECONNRESET,
 * would lose this worker's last log lines and metrics queued before
 * them (a reload's account list arrives after the MSG_RELOAD that made
 * an IPC$-only worker exit).  Bounded; the channel does not block.
 */
void
wk_chan_drain(void)
{
	int guard;

	for (guard = 0; guard < 1024; guard++) {
		struct msg m;

		if (msg_recv(wk.chan, &m, wk.mbuf, sizeof(wk.mbuf)) < 0)
			break;
		if (m.fd >= 0)
			close(m.fd);
	}
}

/*
 * Swaps in a new config; trees follow their share by name, and those of
 * removed shares are kept or closed (--force): worker/ctlmsg.h.
 */
void
wk_reload(void)
{
	struct conf *nc;

	wk.reload = 0;
	if (conf_load(wk.conf_path, &nc, stderr) != 0) {
		log_warnx("reload of %s failed, keeping the old config",
		    wk.conf_path);
		return;
	}
	ctlmsg_reload_conf(wk.conf, nc);
	wk.conf = nc;
	log_info("configuration reloaded");
	/* Guests now need a worker with the state, which this one can't get. */
	if (state_is_stateless() && !user_worker_ipc_only(nc, user_euid())) {
		log_warnx("a share is `guest ok` now: IPC$-only worker exits");
		wk.shutdown = 1;
	}
}
