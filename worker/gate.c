/*
 * The gate: an unprivileged pre-forked process that serves NEGOTIATE and
 * SESSION_SETUP of one connection at a time, synchronously and with a
 * deadline, asks the master for the password verdict, and hands the
 * authenticated connection (socket + state) to the master for the user's
 * worker.  Exits after GATE_MAX_CONNS connections so a fresh process (fresh
 * ASLR, no leftovers of past clients) takes over.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "worker/conn_priv.h"
#include "worker/handoff.h"
#include "worker/worker.h"

#define GATE_MAX_CONNS		64
#define GATE_LOGIN_SECS		15	/* NEGOTIATE to hand-off */
#define GATE_MASTER_SECS	30	/* waiting for a verdict or a hand-off */

struct gate {
	int		 chan;
	struct conf	*conf;
	const char	*conf_path;
	uint32_t	 next_id;
	int		 shutdown;
	int		 reload;
	uint8_t		 mbuf[MSG_BUF_SIZE];
	uint8_t		 obuf[MSG_MAX_PAYLOAD];
};

static struct gate gate;

static long
gate_ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000 +
	    (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/*
 * Waits for the master's message of type want with id; other messages
 * only set flags.  Returns 0 with *m, or -1 (timeout, channel gone).
 */
static int
gate_wait(uint32_t want, uint32_t id, struct msg *m, int secs)
{
	struct timespec dl;
	int guard;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += secs;
	for (guard = 0; guard < 1000; guard++) {
		struct pollfd pfd = { gate.chan, POLLIN, 0 };
		long ms = gate_ms_left(&dl);
		int rc;

		if (ms <= 0 || poll(&pfd, 1, (int)ms) <= 0) {
			if (ms > 0 && errno == EINTR)
				continue;
			log_warnx("no answer from the master");
			return -1;
		}
		rc = msg_recv(gate.chan, m, gate.mbuf, sizeof(gate.mbuf));
		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			gate.shutdown = 1;
			return -1;
		}
		if (m->type == want && m->id == id)
			return 0;
		if (m->fd >= 0)
			close(m->fd);
		if (m->type == MSG_SHUTDOWN)
			gate.shutdown = 1;
		else if (m->type == MSG_RELOAD)
			gate.reload = 1;
	}
	return -1;
}

static int
gate_auth(struct conn *c, const struct authmsg_req *req, struct authmsg_rep *rep)
{
	struct msg m;
	uint32_t id = gate.next_id++;
	int n;

	n = authmsg_req_encode(req, gate.obuf, sizeof(gate.obuf));
	if (n < 0 || msg_send(gate.chan, MSG_AUTH_REQ, id, gate.obuf, (size_t)n,
	    -1) < 0)
		return -1;
	if (gate_wait(MSG_AUTH_REP, id, &m, GATE_MASTER_SECS) < 0)
		return -1;
	return authmsg_rep_decode(rep, m.payload, m.len) < 0 ? -1 : 0;
}

/* Hands the authenticated connection over; the caller then closes it. */
static void
gate_handoff(struct conn *c)
{
	struct conn_private *pv = c->priv;
	struct msg m;
	uint32_t id = gate.next_id++;
	int n;

	n = handoff_encode(c, pv->logged_in, pv->rbuf, pv->rlen, gate.obuf,
	    sizeof(gate.obuf));
	if (n < 0) {
		conn_warnx(c, "connection state too large to hand off");
		return;
	}
	if (msg_send(gate.chan, MSG_HANDOFF, id, gate.obuf, (size_t)n, c->fd) < 0) {
		log_warn("MSG_HANDOFF");
		return;
	}
	explicit_bzero(gate.obuf, (size_t)n);
	/* The socket stays open here until the worker has it. */
	if (gate_wait(MSG_HANDOFF_DONE, id, &m, GATE_MASTER_SECS) < 0)
		return;
	if (m.len != 4 || le32_get(m.payload) != 0)
		log_warnx("%s: hand-off refused by the master (%u)", c->peer,
		    m.len == 4 ? le32_get(m.payload) : 0);
}

static void
gate_serve(int fd, const uint8_t *p, size_t len)
{
	struct conn *c;
	struct timespec dl;
	struct timeval tv = { GATE_LOGIN_SECS, 0 };
	uint8_t guid[16];
	uint64_t start;
	char peer[64];
	struct cur r;
	const uint8_t *s;
	int guard, fl;

	cur_init(&r, p, len);
	cur_bytes(&r, guid, 16);
	start = cur_le64(&r);
	s = r.p;
	if (r.err || cur_left(&r) == 0 || memchr(s, 0, cur_left(&r)) !=
	    s + cur_left(&r) - 1) {
		log_warnx("malformed MSG_NEW_CONN");
		close(fd);
		return;
	}
	snprintf(peer, sizeof(peer), "%s", (const char *)s);
	/* Blocking I/O with timeouts: one client at a time. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c = conn_new(gate.conf, fd, CONN_ROLE_GATE, peer, CONN_BUF_SMALL);
	if (c == NULL) {
		log_warnx("%s: out of memory", peer);
		close(fd);
		return;
	}
	memcpy(c->server_guid, guid, 16);
	c->start_time = start;
	c->priv->auth = gate_auth;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += GATE_LOGIN_SECS;
	for (guard = 0; guard < 256 && !gate.shutdown; guard++) {
		long ready = conn_frame_ready(c);
		struct pollfd pfd = { fd, POLLIN, 0 };
		long ms;
		ssize_t n;

		if (ready < 0)
			break;
		if (ready > 0) {
			if (conn_process(c) < 0)
				break;
			if (c->priv->logged_in != NULL) {
				gate_handoff(c);
				break;
			}
			continue;
		}
		ms = gate_ms_left(&dl);
		if (ms <= 0 || poll(&pfd, 1, (int)ms) <= 0) {
			if (ms > 0 && errno == EINTR)
				continue;
			log_info("%s: login not completed in %d s, closed", peer,
			    GATE_LOGIN_SECS);
			break;
		}
		n = conn_read(c);
		if (n == 0 || (n < 0 && n != -EAGAIN))
			break;
	}
	conn_free(c);
}

static void
gate_reload(void)
{
	struct conf *nc;

	gate.reload = 0;
	if (conf_load(gate.conf_path, &nc, stderr) != 0) {
		log_warnx("reload of %s failed, keeping the old config",
		    gate.conf_path);
		return;
	}
	conf_free(gate.conf);
	gate.conf = nc;
}

int
gate_main(struct conf *conf, const char *conf_path, int chan)
{
	uint8_t role[4];
	int served = 0, guard;

	log_set_tag("gate");
	signal(SIGPIPE, SIG_IGN);
	gate.chan = chan;
	gate.conf = conf;
	gate.conf_path = conf_path;
	gate.next_id = 1;
	le32_put(role, MSG_ROLE_GATE);
	if (msg_send(chan, MSG_HELLO, 0, role, sizeof(role), -1) < 0) {
		log_warn("MSG_HELLO");
		return 1;
	}
	while (served < GATE_MAX_CONNS && !gate.shutdown) {
		struct msg m;
		int rc;

		if (gate.reload)
			gate_reload();
		if (msg_send(chan, MSG_GATE_READY, 0, NULL, 0, -1) < 0)
			return 1;
		for (guard = 0; guard < 1 << 20; guard++) {
			rc = msg_recv(chan, &m, gate.mbuf, sizeof(gate.mbuf));
			if (rc == -EAGAIN) {
				struct pollfd pfd = { chan, POLLIN, 0 };

				(void)poll(&pfd, 1, -1);
				continue;
			}
			if (rc < 0) {
				/* The master is gone: nothing left to do. */
				return rc == -EPIPE ? 0 : 1;
			}
			if (m.type == MSG_NEW_CONN && m.fd >= 0)
				break;
			if (m.fd >= 0)
				close(m.fd);
			if (m.type == MSG_SHUTDOWN)
				return 0;
			if (m.type == MSG_RELOAD)
				gate_reload();
			else if (m.type == MSG_DEBUG_LEVEL && m.len == 4)
				log_level = (int)le32_get(m.payload);
		}
		gate_serve(m.fd, m.payload, m.len);
		served++;
	}
	return 0;
}
