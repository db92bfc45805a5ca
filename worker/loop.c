/*
 * The user worker: one epoll loop over the master channel, a signalfd, an
 * idle timerfd and every connection of this user, with fd-indexed arrays.
 * One bad connection is closed without disturbing the others.  What comes
 * by the master's channel is worker/loop_chan.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "shm/shm.h"
#include "worker/confine.h"
#include "worker/conn_priv.h"
#include "worker/ctlmsg.h"
#include "worker/dirlease.h"
#include "worker/loop_priv.h"
#include "worker/relay.h"
#include "worker/smb2_notify.h"
#include "worker/state.h"
#include "worker/unlink_as.h"
#include "worker/homes.h"
#include "worker/uring.h"
#include "worker/worker.h"

#define WK_MAX_EVENTS	64
#define WK_URING_SQ	256

/*
 * io_uring tags: the epoll fd's readiness, or a connection's receive or
 * poll as fd | kind << 32 | generation << 33 (a stale completion, of a
 * closed connection or a reused fd, carries another generation).
 */
#define WK_UD_EPOLL	UINT64_MAX
#define WK_UD_POLL	(1ull << 32)
/*
 * A connection's answer sent by the ring (wk_tx_ring): URING_UD_QUICK and
 * bit 61 (a relay's tags leave it clear, worker/relay.h), its generation
 * << 32, fd.
 */
#define WK_UD_SEND	(7ull << 61)
/*
 * Larger answers go by send(2) at once: the socket may well not take
 * them whole, and the ring's bounded wait (worker/uring.h) would then
 * hold them back.
 */
#define WK_TX_RING_MAX	(64 * 1024)

struct worker wk;

void
wk_count(void)
{
	uint8_t p[4];

	le32_put(p, (uint32_t)wk.nconns);
	(void)msg_send(wk.chan, MSG_CONN_COUNT, 0, p, sizeof(p), -1);
}

void
wk_idle_timer(void)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (wk.nconns == 0)
		its.it_value.tv_sec = wk.conf->worker_idle_timeout > 0 ?
		    wk.conf->worker_idle_timeout : 60;
	(void)timerfd_settime(wk.tfd, 0, &its, NULL);
}

static uint64_t
wk_rx_ud(const struct conn *c)
{
	return (uint64_t)(uint32_t)c->fd | (c->priv->rx_armed == 2 ?
	    WK_UD_POLL : 0) | (uint64_t)c->priv->rx_gen << 33;
}

/*
 * Takes the armed receive back, for a connection about to close.  The
 * cancel cannot reach a receive whose run the kernel has already queued
 * (its socket was readable when it was submitted): that one still writes
 * into rbuf at our next io_uring_enter, and only its completion says it
 * is done.  So a receive's buffer leaves the connection here and waits
 * for that completion (uring_bury).
 */
static void
wk_rx_disarm(struct conn *c)
{
	struct conn_private *pv = c->priv;
	uint64_t ud;

	if (!pv->rx_armed)
		return;
	ud = wk_rx_ud(c);
	if (pv->rx_armed != 1)
		(void)uring_cancel(ud);
	else {
		uring_bury(ud, pv->rbuf);
		pv->rbuf = NULL;
		pv->rcap = 0;
		pv->rlen = 0;
	}
	pv->rx_armed = 0;
}

static uint64_t
wk_tx_ud(const struct conn *c)
{
	return WK_UD_SEND | (uint64_t)(c->priv->tx_gen & 0x1fffffffu) << 32 |
	    (uint32_t)c->fd;
}

/*
 * A connection that closes with its answer in the ring: the send goes
 * now, before the socket closes and the buffer is freed.  Submitted,
 * it is done (MSG_DONTWAIT: sent, short or -EAGAIN at once, never left
 * waiting in the kernel); its completion comes later and is stale.
 */
static void
wk_tx_settle(struct conn *c)
{
	if (c->priv->tx != CONN_TX_RING)
		return;
	(void)uring_cancel(wk_tx_ud(c));	/* submits what is queued */
	c->priv->tx = CONN_TX_NONE;
}

void
wk_close(struct conn *c)
{
	int fd = c->fd;

	wk_tx_settle(c);
	wk_rx_disarm(c);
	if (c->priv->headless) {
		/* Its socket was counted out already (below). */
		wk.conns[fd] = NULL;
		log_debug(2, "%s: sessions of the lost connection ended",
		    c->peer);
		conn_free(c);
		wk.nheadless--;
		return;
	}
	(void)epoll_ctl(wk.ep, EPOLL_CTL_DEL, fd, NULL);
	if (conn_keep_headless(c)) {
		/*
		 * A session living here has another channel (MS-SMB2
		 * 3.3.7.1): the connection stays, without its socket, as the
		 * home of that session's trees and opens.  The fd stays open
		 * (shut down) so its slot in wk.conns is not reused.
		 */
		(void)shutdown(fd, SHUT_RDWR);
		/* Other users' sessions had only this socket: they end. */
		relay_conn_gone(c);
		wk.nheadless++;
		log_debug(2, "%s: connection closed, its session lives on "
		    "another channel", c->peer);
	} else {
		wk.conns[fd] = NULL;
		log_debug(2, "%s: connection closed", c->peer);
		conn_free(c);
	}
	wk.nconns--;
	wk_count();
	wk_idle_timer();
}

/*
 * Headless connections whose sessions have no channel left (the last one
 * closed, LOGOFF, kill-session): the usual disconnect now.
 */
static void
wk_headless_sweep(void)
{
	int fd;

	for (fd = 0; fd < wk.hifd && wk.nheadless > 0; fd++) {
		struct conn *c = wk.conns[fd];

		if (c != NULL && conn_headless_done(c))
			wk_close(c);
	}
}

/*
 * With io_uring a connection is in the epoll set only while its output is
 * stuck (EPOLLOUT); its input comes by the ring (wk_rx_arm).  -1 only
 * when EPOLLOUT could not be armed (the connection would stall); going
 * back may fail harmlessly (a headless one is out of the set already).
 */
static int
wk_events(struct conn *c, uint32_t ev)
{
	struct epoll_event e;
	int rc;

	e.events = ev;
	e.data.fd = c->fd;
	if (!wk.uring)
		rc = epoll_ctl(wk.ep, EPOLL_CTL_MOD, c->fd, &e);
	else if (ev == EPOLLOUT)
		rc = epoll_ctl(wk.ep, EPOLL_CTL_ADD, c->fd, &e);
	else
		rc = epoll_ctl(wk.ep, EPOLL_CTL_DEL, c->fd, NULL);
	return ev == EPOLLOUT ? rc : 0;
}

/*
 * Arms the ring's receive for the connection's next bytes, straight into
 * its buffer: the wait and the read are then the one io_uring_enter of the
 * loop.  Not while output is stuck (the client is not reading: no new
 * requests until it does, as with epoll) and not on a headless one.
 * When nothing may be read now (a WRITE's payload is awaited whole,
 * conn_rx.c) or the buffer is full, a readiness poll does what EPOLLIN
 * did.  0, or -1 when the connection must be closed.
 */
int
wk_rx_arm(struct conn *c)
{
	struct conn_private *pv = c->priv;
	ssize_t want;
	int rc;

	if (!wk.uring || pv->rx_armed || pv->headless || pv->epoll_out)
		return 0;
	want = conn_read_want(c);
	pv->rx_gen = ++wk.rx_gen & 0x1fffffffu;	/* bits 62, 63: relays */
	pv->rx_armed = want > 0 ? 1 : 2;
	if (want > 0)
		rc = uring_recv(c->fd, pv->rbuf + pv->rlen, (size_t)want,
		    wk_rx_ud(c));
	else
		rc = uring_poll(c->fd, POLLIN, wk_rx_ud(c));
	if (rc < 0) {
		pv->rx_armed = 0;
		conn_warnx(c, "io_uring request refused (%d), disconnecting",
		    rc);
		return -1;
	}
	return 0;
}

static int
wk_has_session(const struct conn *c)
{
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use)
			return 1;
	return 0;
}

/*
 * Whether c's answer may wait for the loop's next io_uring_enter, which
 * submits it and then waits for one completion more than the sends it
 * submits (worker/uring.h uring_send): only when that completion is sure
 * to come from outside.  So c's socket has (or gets, in wk_process) its
 * receive armed, and nothing is left for c to do that needs no new event:
 * no complete frame buffered, no woken request, no relay's answer
 * waiting (and each relay's receive armed).  Otherwise the answer goes by
 * send(2) at once and the next one is served in this turn, as before.
 */
static int
wk_tx_quiet(struct conn *c)
{
	struct conn_private *pv = c->priv;

	if (pv->out_len > WK_TX_RING_MAX || !uring_send_bounded() ||
	    pv->epoll_out || pv->headless || pv->dead || pv->rx_active ||
	    pv->rx_wait || conn_async_ready(c))
		return 0;
	if (!pv->rx_armed && pv->rlen > 0)
		return 0;	/* armed: what rbuf holds is an incomplete frame */
	return pv->relays == NULL || relay_quiet(c);
}

/* Hands c's deferred answer to the ring: 0, or -1 (send it at once). */
static int
wk_tx_ring(struct conn *c)
{
	struct conn_private *pv = c->priv;

	pv->tx_gen = ++wk.tx_gen & 0x1fffffffu;
	if (uring_send(c->fd, pv->out_p, pv->out_len,
	    MSG_NOSIGNAL | MSG_DONTWAIT, wk_tx_ud(c)) < 0)
		return -1;
	pv->tx = CONN_TX_RING;
	return 0;
}

static int	wk_process(struct conn *);

/* The ring's send of c's answer completed with res. */
static void
wk_tx_done(struct conn *c, int32_t res)
{
	struct conn_private *pv = c->priv;
	size_t n;

	pv->tx = CONN_TX_NONE;
	if (res > 0) {
		n = (size_t)res < pv->out_len ? (size_t)res : pv->out_len;
		pv->out_p += n;
		pv->out_len -= n;
	} else if (res != -EAGAIN && res != -EINTR && res != -ENOBUFS) {
		log_debug(2, "%s: send: %s", c->peer, strerror(-res));
		wk_close(c);
		return;
	}
	/* All sent: a relayed worker's ring forgets those ids. */
	if (!conn_output_pending(c))
		relay_ring_sent(pv->relay_ring);
	/* A short send or a full socket: the rest waits for EPOLLOUT. */
	if (wk_process(c) < 0)
		wk_close(c);
}

/*
 * Runs buffered frames; an answer goes by the ring when wk_tx_quiet
 * allows, else at once, and the next frames run; arms EPOLLOUT while
 * output is stuck.  0 or -1.
 */
static int
wk_process(struct conn *c)
{
	struct conn_private *pv = c->priv;
	int guard, rc;

	for (guard = 0; guard < 4096; guard++) {
		pv->tx_ring = wk.uring;
		rc = conn_process(c);
		pv->tx_ring = 0;
		if (rc < 0)
			return -1;
		if (pv->tx != CONN_TX_DEFERRED)
			break;
		if (wk_tx_quiet(c) && wk_tx_ring(c) == 0)
			break;
		pv->tx = CONN_TX_NONE;
		rc = conn_flush(c);
		if (rc == -EAGAIN)
			break;
		if (rc < 0)
			return -1;
	}
	if (pv->tx == CONN_TX_RING)
		return wk_rx_arm(c);	/* its completion comes (wk_tx_done) */
	/* A relayed connection whose session ended has done its work. */
	if (pv->relayed && !conn_output_pending(c) && !wk_has_session(c))
		return -1;
	if (conn_output_pending(c)) {
		if (!pv->epoll_out) {
			pv->epoll_out = 1;
			/* Neither armed nor watched, it would stall: close. */
			if (wk_events(c, EPOLLOUT) < 0)
				return -1;
		}
	} else if (pv->epoll_out) {
		pv->epoll_out = 0;
		(void)wk_events(c, EPOLLIN);
	}
	return wk_rx_arm(c);
}

int
worker_relay_watch(struct conn *c, int fd, uint32_t was, uint32_t events)
{
	uint32_t in = wk.uring ? EPOLLIN : 0;	/* the ring's, not epoll's */
	struct epoll_event e = { .events = events & ~in, .data.fd = fd };

	if (fd < 0 || fd >= wk.maxfd)
		return -1;
	if ((was & ~in) != e.events && epoll_ctl(wk.ep, !(was & ~in) ?
	    EPOLL_CTL_ADD : e.events != 0 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd,
	    &e) < 0 && e.events != 0)
		return -1;
	wk.rconns[fd] = events != 0 ? c : NULL;
	return 0;
}

/* A relay of connection c has answers, or room for what waits for it. */
static void
wk_relay_event(int fd, uint32_t ev)
{
	struct conn *c = wk.rconns[fd];

	if (relay_input(c, fd, ev) < 0 || wk_process(c) < 0)
		wk_close(c);
}

static void
wk_conn_event(int fd, uint32_t ev)
{
	struct conn *c = wk.conns[fd];
	ssize_t n;

	if (c == NULL)
		return;
	if (ev & EPOLLOUT) {
		int rc = conn_flush(c);

		if (rc < 0 && rc != -EAGAIN) {
			wk_close(c);
			return;
		}
		if (rc == 0 && wk_process(c) < 0) {
			wk_close(c);
			return;
		}
		return;
	}
	/* With io_uring EPOLLHUP/EPOLLERR come with EPOLLOUT only; an
	 * armed receive reports the end itself. */
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->priv->rx_armed) {
		n = conn_read(c);
		if (n == 0 || (n < 0 && n != -EAGAIN)) {
			wk_close(c);
			return;
		}
		if (wk_process(c) < 0)
			wk_close(c);
	}
}

void
worker_foreach_conn(void (*fn)(struct conn *, void *), void *arg)
{
	int fd;

	for (fd = 0; fd < wk.hifd && wk.conns != NULL; fd++)
		if (wk.conns[fd] != NULL)
			fn(wk.conns[fd], arg);
}

const char *
worker_user(void)
{
	return wk.user != NULL ? wk.user : "";
}

const struct conf *
worker_conf(void)
{
	return wk.conf;
}

void
worker_kick(struct conn *c)
{
	if (wk.conns == NULL || c->fd < 0 || c->fd >= wk.maxfd ||
	    wk.conns[c->fd] != c || wk.deferred[c->fd])
		return;
	wk.deferred[c->fd] = 1;
	wk.defer[wk.ndefer++] = c->fd;
}

static int
wk_setup(void)
{
	struct rlimit rl;
	sigset_t ss;
	struct epoll_event e;
	int fl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	wk.maxfd = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
	wk.conns = calloc((size_t)wk.maxfd, sizeof(*wk.conns));
	wk.rconns = calloc((size_t)wk.maxfd, sizeof(*wk.rconns));
	if (wk.rconns == NULL)
		return -1;
	wk.defer = calloc((size_t)wk.maxfd, sizeof(*wk.defer));
	wk.deferred = calloc((size_t)wk.maxfd, sizeof(*wk.deferred));
	if (wk.conns == NULL || wk.defer == NULL || wk.deferred == NULL)
		return -1;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGINT);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	wk.sigfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	wk.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	wk.ep = epoll_create1(EPOLL_CLOEXEC);
	if (wk.sigfd < 0 || wk.tfd < 0 || wk.ep < 0)
		return -1;
	fl = fcntl(wk.chan, F_GETFL);
	if (fl < 0 || fcntl(wk.chan, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	e.events = EPOLLIN;
	e.data.fd = wk.chan;
	if (epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.chan, &e) < 0)
		return -1;
	e.data.fd = wk.sigfd;
	if (epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.sigfd, &e) < 0)
		return -1;
	e.data.fd = wk.tfd;
	if (epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.tfd, &e) < 0)
		return -1;
	wk.tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (wk.tickfd < 0)
		return -1;
	/* Disarmed until something needs timing: worker_tick_arm(). */
	e.data.fd = wk.tickfd;
	if (epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.tickfd, &e) < 0)
		return -1;
	/* The state env and message socket: after the drop, as the user. */
	(void)state_shm();
	if ((wk.wmsgfd = e.data.fd = state_wmsg_fd()) >= 0 &&
	    epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.wmsgfd, &e) < 0)
		return -1;
	/* inotify: CHANGE_NOTIFY (else it fails), worker/dirlease.h's */
	if (((wk.notifyfd = e.data.fd = smb2_notify_fd()) >= 0 &&
	    epoll_ctl(wk.ep, EPOLL_CTL_ADD, wk.notifyfd, &e) < 0) ||
	    ((e.data.fd = dirlease_start(wk.conf)) >= 0 &&
	    epoll_ctl(wk.ep, EPOLL_CTL_ADD, e.data.fd, &e) < 0))
		return -1;
	/* Receives by io_uring when the kernel lets us (worker/uring.h). */
	if ((fl = uring_init(WK_URING_SQ)) == 0 &&
	    uring_poll(wk.ep, POLLIN, WK_UD_EPOLL) == 0)
		wk.uring = 1;
	else {
		if (fl == 0)
			uring_fini();
		log_debug(1, "io_uring not used (%s): epoll only",
		    strerror(fl < 0 ? -fl : ENOBUFS));
	}
	return 0;
}

/*
 * The 1 s housekeeping tick (async deadlines, parked durable fds) runs only
 * while something needs it, so an idle or steady-state worker makes no
 * timer syscalls between requests.
 */
static int wk_tick_armed;

static void
wk_tick_set(int on)
{
	struct itimerspec its;

	if (on == wk_tick_armed || wk.tickfd < 0)
		return;
	memset(&its, 0, sizeof(its));
	if (on) {
		its.it_value.tv_sec = 1;
		its.it_interval.tv_sec = 1;
	}
	if (timerfd_settime(wk.tickfd, 0, &its, NULL) == 0)
		wk_tick_armed = on;
}

/*
 * Closes connections routed for binding with no session of their own past
 * their deadline (or too many failed setups), drops relays whose backlog
 * waited too long (relay_tick); non-zero while some remain (tick on).
 */
static int
wk_bind_tick(void)
{
	uint64_t now = shm_now_ms();
	int fd, i, need = 0;

	for (fd = 0; fd < wk.hifd && fd < wk.maxfd; fd++) {
		struct conn *c = wk.conns[fd];
		struct conn_private *pv;

		if (c != NULL && c->priv->relays != NULL &&
		    relay_tick(c, &need) && wk_process(c) < 0)
			wk_close(c);	/* it dropped a relay: answers go out */
		c = wk.conns[fd];
		if (c == NULL || c->priv->bind_deadline_ms == 0)
			continue;
		pv = c->priv;
		for (i = 0; i < CONN_MAX_SESSIONS; i++)
			if (c->sessions[i].in_use &&
			    c->sessions[i].state == SESS_VALID &&
			    !c->sessions[i].sign_other)
				break;
		if (i < CONN_MAX_SESSIONS) {
			pv->bind_deadline_ms = 0;	/* logged in: served as usual */
			continue;
		}
		if (pv->bind_deadline_ms <= now ||
		    pv->bind_fails >= CONN_BIND_MAX_FAILS) {
			log_info("%s: binding hand-off without a login in %d s "
			    "(%u failed setups), closed", c->peer,
			    CONN_BIND_LOGIN_SECS, pv->bind_fails);
			wk_close(c);
			continue;
		}
		need = 1;
	}
	return need;
}

void
worker_tick_arm(void)
{
	wk_tick_set(1);
}

/* The epoll set's events: the master channel, timers, signals, stuck output. */
static void
wk_dispatch(const struct epoll_event *evs, int n)
{
	int i, fd;

	for (i = 0; i < n && !wk.shutdown; i++) {
		fd = evs[i].data.fd;
		if (fd == wk.chan)
			wk_chan();
		else if (fd == wk.sigfd) {
			struct signalfd_siginfo si;

			while (read(wk.sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					wk.reload = 1;
				else
					wk.shutdown = 1;
			}
		} else if (fd == wk.wmsgfd) {
			state_wmsg_event();
		} else if (fd == wk.notifyfd) {
			smb2_notify_event();
		} else if (fd == dirlease_fd()) {
			dirlease_event();
		} else if (fd == wk.tickfd) {
			uint64_t x;

			(void)read(wk.tickfd, &x, sizeof(x));
			int need = state_tick() | unlink_as_tick() |
			    conn_rx_tick();

			if (!wk_bind_tick() && !need)
				wk_tick_set(0);
		} else if (fd == wk.tfd) {
			uint64_t x;

			(void)read(wk.tfd, &x, sizeof(x));
			/* Vouched deletes live in this process only. */
			if (wk.nconns == 0 && unlink_as_held() > 0) {
				log_debug(2, "idle, kept for %u vouched "
				    "deletes", unlink_as_held());
				wk_idle_timer();
			} else if (wk.nconns == 0) {
				log_debug(1, "idle for %d s, exiting",
				    wk.conf->worker_idle_timeout);
				wk.shutdown = 1;
			}
		} else if (fd >= 0 && fd < wk.maxfd && wk.rconns[fd] != NULL)
			wk_relay_event(fd, evs[i].events);
		else
			wk_conn_event(fd, evs[i].events);
	}
}

/*
 * A completion of the ring: the epoll set is ready (its one-shot poll is
 * re-armed after taking one batch, so what stays ready fires again), or a
 * connection's receive or readiness poll is done.
 */
static void
wk_uring_event(const struct uring_cqe *cq)
{
	struct epoll_event evs[WK_MAX_EVENTS];
	struct conn *c;
	uint64_t ud = cq->ud;
	int fd, n;

	if (ud == WK_UD_EPOLL) {
		n = epoll_wait(wk.ep, evs, WK_MAX_EVENTS, 0);
		if (n > 0)
			wk_dispatch(evs, n);
		if (uring_poll(wk.ep, POLLIN, WK_UD_EPOLL) < 0) {
			log_warnx("io_uring: cannot re-arm the epoll poll");
			wk.shutdown = 1;
		}
		return;
	}
	fd = (int)(uint32_t)ud;
	if ((ud & WK_UD_SEND) == WK_UD_SEND) {	/* a connection's answer */
		c = fd >= 0 && fd < wk.maxfd ? wk.conns[fd] : NULL;
		if (c != NULL && c->priv->tx == CONN_TX_RING && ud == wk_tx_ud(c))
			wk_tx_done(c, cq->res);
		return;		/* else of a connection closed meanwhile */
	}
	if (ud & RELAY_UD_BIT) {	/* a relay's answers (worker/relay.h) */
		c = fd >= 0 && fd < wk.maxfd ? wk.rconns[fd] : NULL;
		if (c != NULL && relay_received(c, ud, cq->res) == 0 &&
		    wk_process(c) < 0)
			wk_close(c);
		return;
	}
	c = fd >= 0 && fd < wk.maxfd ? wk.conns[fd] : NULL;
	if (c == NULL || !c->priv->rx_armed ||
	    c->priv->rx_gen != (uint32_t)(ud >> 33))
		return;		/* of a connection closed meanwhile */
	c->priv->rx_armed = 0;
	if (ud & WK_UD_POLL) {
		wk_conn_event(fd, EPOLLIN);
		return;
	}
	if (cq->res == -EAGAIN || cq->res == -EINTR) {
		if (wk_rx_arm(c) < 0)
			wk_close(c);
		return;
	}
	if (cq->res <= 0) {
		if (cq->res < 0)
			log_debug(2, "%s: receive: %s", c->peer,
			    strerror(-cq->res));
		wk_close(c);
		return;
	}
	conn_read_done(c, (size_t)cq->res);
	if (wk_process(c) < 0)
		wk_close(c);
}

int
worker_main(struct conf *conf, const char *conf_path, int chan,
    const char *user, uid_t uid, gid_t gid, int ipc_only)
{
	struct epoll_event evs[WK_MAX_EVENTS];
	struct uring_cqe cqs[WK_MAX_EVENTS];
	uint8_t role[4];
	char tag[96];
	int i, n, fd;

	snprintf(tag, sizeof(tag), "worker %s", user);
	log_set_tag(tag);
	memset(&wk, 0, sizeof(wk));
	wk.chan = chan;
	wk.conf = conf;
	wk.conf_path = conf_path;
	wk.user = user;
	wk.next_id = 1;
	wk.wmsgfd = -1;
	wk.notifyfd = -1;
	state_init(conf, ipc_only);
	if (wk_setup() < 0) {
		log_warn("worker set-up");
		return 1;
	}
	/*
	 * Share modes, byte-range locks, leases and their breaks hold
	 * between users only through the state env and the worker messages.
	 * Without them this worker would serve files as if no one else had
	 * them open: it refuses instead -- it never says hello, so the master
	 * gives its connections back (STATUS_INSUFF_SERVER_RESOURCES).  An
	 * IPC$-only worker opens no file of a share, so it needs neither.
	 */
	if (!ipc_only && (state_shm() == NULL || wk.wmsgfd < 0)) {
		log_warnx("refusing the connections of %s: no shared state (%s "
		    "in %s): cross-user share modes, locks and lease breaks "
		    "would not hold", user, state_shm() == NULL ?
		    "state env" : "message socket", conf->lock_dir);
		return 1;
	}
	/* [homes] and %-paths: the user's own names, once (worker/homes.c) */
	homes_init(user, gid);
	/* What a file server never needs is refused from here on. */
	if ((n = confine_worker()) != 0) {
		errno = -n;
		log_warn("worker: cannot install its seccomp filter");
		return 1;
	}
	le32_put(role, MSG_ROLE_WORKER);
	if (msg_send(chan, MSG_HELLO, 0, role, sizeof(role), -1) < 0)
		return 1;
	wk_idle_timer();
	log_debug(1, "worker for %s (uid %u gid %u) ready", user, (unsigned)uid,
	    (unsigned)gid);
	while (!wk.shutdown) {
		if (wk.uring) {
			n = uring_wait(cqs, WK_MAX_EVENTS);
			if (n < 0) {
				errno = -n;
				log_warn("io_uring_enter");
				break;
			}
			for (i = 0; i < n && !wk.shutdown; i++)
				wk_uring_event(&cqs[i]);
		} else {
			n = epoll_wait(wk.ep, evs, WK_MAX_EVENTS, -1);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				log_warn("epoll_wait");
				break;
			}
			wk_dispatch(evs, n);
		}
		/*
		 * Connections kicked (woken requests, break notices) or taken
		 * over with bytes already buffered.  What they answer goes out
		 * at once (dispatch_async_run): the answers this turn left to
		 * the ring go first, so one that woke a request is not
		 * overtaken by that request's answer (smbtorture 4.22
		 * smb2.compound_async.rename_last: the lease break ack's answer
		 * before the answer of the rename it released).
		 */
		if (wk.ndefer > 0 && wk.uring)
			(void)uring_send_now();
		while (wk.ndefer > 0 && !wk.shutdown) {
			struct conn *c;

			fd = wk.defer[--wk.ndefer];
			wk.deferred[fd] = 0;
			c = fd < wk.maxfd ? wk.conns[fd] : NULL;
			if (c != NULL && wk_process(c) < 0)
				wk_close(c);
		}
		if (wk.nheadless > 0)
			wk_headless_sweep();
		if (wk.reload)
			wk_reload();
	}
	uring_fini();	/* pending receives, then their buffers */
	for (fd = 0; fd < wk.maxfd; fd++)
		if (wk.conns[fd] != NULL) {
			conn_free(wk.conns[fd]);
			wk.conns[fd] = NULL;
		}
	/* Kept in the master's totals: counters never go down. */
	ctlmsg_metrics_final(wk.chan);
	wk_chan_drain();
	state_close();
	return 0;
}
