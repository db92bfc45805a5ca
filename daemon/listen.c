/*
 * The SMB listeners.  Every address of `interfaces` (none = 0.0.0.0 and ::,
 * the latter IPV6_V6ONLY) times every port of `smb ports`.  The master
 * accepts, checks `hosts allow` / `hosts deny`, and passes the socket to the
 * gate with the most room (credits, MSG_GATE_READY); while every gate is
 * full the listeners are not polled, so new connections wait in the
 * kernel's backlog instead of in the master.
 *
 * Each connection in a gate is counted against its client address (an IPv6
 * /64) from accept until the gate reports it closed or handed off
 * (MSG_GATE_CONN_END).  An address over LISTEN_PREAUTH_PER_ADDR makes its
 * oldest one go (MSG_GATE_DROP): many silent connections from one place
 * take at most that many of the gates' slots.  A connection a gate handed
 * to a worker for a channel binding (still unauthenticated there) stays
 * counted for LISTEN_BIND_HOLD_MS, the worker's own deadline for it
 * (held: it cannot be dropped, and it does not count against the
 * address's connections in the gates); an address with
 * LISTEN_BIND_PER_ADDR such bindings gets its next connections with
 * MSG_NEW_CONN_NO_BIND, so the gate answers their bindings itself.
 *
 * Many slow addresses: the pool grows (listen_gate_target, read by
 * daemon/spawn.c) while the gates' free slots run low, up to `max gate
 * processes`, and shrinks back to `gate processes` when they stand mostly
 * idle.  With the pool at its limit and no slot free, a waiting connection
 * makes the oldest unauthenticated one anywhere go (MSG_GATE_DROP) and the
 * listeners rest until the freed slot's credit comes back: slow clients
 * cost the oldest of them their place, never a new login its chance.
 */

/*
 * Pre-authentication fairness (issue 20).
 *
 * Pre-auth fairness (daemon/listen.c): the pool grows by one gate
 * whenever the gates' free slots fall below 16, up to max gate
 * processes, and gives the extra gates up after 30 s of little load
 * (listen_gate_target, which daemon/spawn.c spawn_tick keeps the pool
 * at).  With the pool at its limit and no slot free, an accepted
 * connection waits in the master (at most 32, 2 s) while the oldest
 * unauthenticated connection anywhere is dropped for it (MSG_GATE_DROP),
 * and an address that already has 2 connections waiting for a login is
 * refused at once, so the backlog keeps draining.  A connection a gate
 * handed to a worker for a channel binding stays counted against its
 * address for 20 s (MSG_GATE_CONN_END with u32 1; the worker closes an
 * unbound connection within CONN_BIND_LOGIN_SECS, but the master is not
 * told when a binding ends); an address with 256 such gets its next
 * connections with MSG_NEW_CONN_NO_BIND and the gate answers their
 * bindings itself (USER_SESSION_DELETED): one address parks at most 256
 * unauthenticated sockets, on 64 KiB buffers, in workers (smbtorture's
 * smb2.multichannel makes 132 bindings in a minute from one address).
 * Not done: the worker telling the master when such a connection is
 * bound or closed, which would allow a cap near the pre-auth one.  A 2.x
 * binding is still routed: smbtorture's bind_negative_smb2* need its
 * REQUEST_NOT_ACCEPTED signed with the session's key, which only the
 * worker has.
 */
#include "daemon/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "proto/cur.h"

#define LISTEN_BACKLOG		128
#define LISTEN_ACCEPT_BATCH	16
/* A gate ends a connection within ~45 s (login, hand-off); beyond: lost. */
#define LISTEN_PREAUTH_STALE_MS	120000
#define LISTEN_LOG_EVERY_S	10
/* worker/conn_priv.h CONN_BIND_LOGIN_SECS, with a margin */
#define LISTEN_BIND_HOLD_MS	20000
/*
 * Bindings of one address counted as waiting in workers (each on 64 KiB
 * buffers there: no session yet).  Far above the pre-auth cap, since a
 * binding that ended stays counted its 20 s: smbtorture's
 * smb2.multichannel makes over 64 in 20 s from one address.
 */
#define LISTEN_BIND_PER_ADDR	256
/* Free gate slots below this: one more gate (up to `max gate processes`). */
#define LISTEN_GROW_LOW		16
/* Connections per gate below which the extra gates are given up. */
#define LISTEN_SHRINK_PER_GATE	16
#define LISTEN_SHRINK_AFTER_MS	30000
/* How long an eviction may take to free a slot before another is tried. */
#define LISTEN_EVICT_WAIT_MS	250
/* Pool full: accepted connections waiting for an evicted slot. */
#define LISTEN_WAIT_MAX		32
#define LISTEN_WAIT_MAX_MS	2000
/* Pool full: an address with this many waiting for a login gets no more. */
#define LISTEN_FULL_PER_ADDR	2

/* A connection given to a gate, until MSG_GATE_CONN_END. */
struct listen_pre {
	pid_t		 gate;		/* 0: free entry */
	uint32_t	 id;		/* of its MSG_NEW_CONN */
	uint8_t		 key[17];	/* family, then the address (v6: /64) */
	int		 dropped;	/* MSG_GATE_DROP sent: not counted */
	int		 held;		/* gone to a worker for a binding */
	int64_t		 since_ms;
};

/* Accepted while the pool is full, until an evicted slot's credit. */
struct listen_wait {
	int		 fd;
	int64_t		 since_ms;
	uint8_t		 key[17];
	char		 peer[INET6_ADDRSTRLEN];
};

/* A held entry's gate: no process has it any more. */
#define LISTEN_HELD_GATE	((pid_t)-1)

static int	listen_fds[LISTEN_MAX];
/* each listener's own address, read once (listen_peer_of) */
static struct sockaddr_storage listen_addrs[LISTEN_MAX];
static int	listen_n;
static int	listen_polling;
static struct listen_pre listen_pre[LISTEN_PREAUTH_MAX];
static unsigned	listen_pre_hi;		/* entries [0, hi) may be in use */
static uint32_t	listen_next_id = 1;
static time_t	listen_log_t;		/* rate limit of the refusal lines */
static unsigned	listen_log_n;
static int	listen_extra;		/* gates beyond `gate processes` */
static int64_t	listen_busy_ms;		/* the last time the extra were needed */
static int64_t	listen_evict_ms;	/* an eviction waits for its slot: 0 none */
static struct listen_wait listen_waiting[LISTEN_WAIT_MAX];
static unsigned	listen_nwait;

static void	listen_log_limited(const char *peer, const char *what);
static int	listen_pool_full(void);
static void	listen_wait_flush(void);

static int
listen_one(const char *addr, uint16_t port)
{
	struct addrinfo hints, *res = NULL;
	char sport[8];
	int fd = -1, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	snprintf(sport, sizeof(sport), "%u", port);
	rc = getaddrinfo(addr, sport, &hints, &res);
	if (rc != 0) {
		log_warnx("interfaces: %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1) {
		log_warn("socket for %s port %u", addr, port);
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * An IPv6 listener takes IPv6 only (IPv4 has its own): a v4-mapped
	 * local address is then never one of ours (listen_is_ours).
	 */
	if (res->ai_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &one, sizeof(one)) == -1) {
		log_warn("IPV6_V6ONLY for %s port %u", addr, port);
		close(fd);
		fd = -1;
		goto out;
	}
	if (bind(fd, res->ai_addr, res->ai_addrlen) == -1 ||
	    listen(fd, LISTEN_BACKLOG) == -1) {
		log_warn("listen on %s port %u", addr, port);
		close(fd);
		fd = -1;
		goto out;
	}
	log_debug(2, "listening on %s port %u", addr, port);
out:
	freeaddrinfo(res);
	return fd;
}

int
listen_open(const struct conf *conf)
{
	static char *const any[] = { "0.0.0.0", "::", NULL };
	char *const *ifs = conf->interfaces != NULL ? conf->interfaces : any;
	int i, p, fd;

	listen_close();
	for (i = 0; ifs[i] != NULL; i++) {
		for (p = 0; p < conf->nports; p++) {
			if (listen_n >= LISTEN_MAX) {
				log_warnx("more than %d listeners", LISTEN_MAX);
				goto fail;
			}
			fd = listen_one(ifs[i], conf->ports[p]);
			if (fd == -1) {
				/* With no interfaces set, a host without IPv6 is fine. */
				if (conf->interfaces == NULL && strcmp(ifs[i], "::") == 0)
					continue;
				goto fail;
			}
			socklen_t sl = sizeof(listen_addrs[0]);

			memset(&listen_addrs[listen_n], 0, sizeof(listen_addrs[0]));
			(void)getsockname(fd, (struct sockaddr *)
			    &listen_addrs[listen_n], &sl);
			listen_fds[listen_n++] = fd;
		}
	}
	if (listen_n == 0) {
		log_warnx("no address to listen on");
		goto fail;
	}
	for (i = 0; i < listen_n; i++)
		if (master.epfd >= 0 && master_ev_add(listen_fds[i],
		    MASTER_EV_LISTEN, (uint32_t)i, 0) != 0) {
			log_warn("epoll_ctl listener");
			goto fail;
		}
	listen_polling = 0;
	listen_update_polling();
	return 0;
fail:
	listen_close();
	return -1;
}

void
listen_close(void)
{
	int i;

	for (i = 0; i < listen_n; i++) {
		master_ev_del(listen_fds[i]);
		close(listen_fds[i]);
	}
	listen_n = 0;
	listen_polling = 0;
	while (listen_nwait > 0)
		close(listen_waiting[--listen_nwait].fd);
}

static int
listen_strv_eq(char *const *a, char *const *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	for (; *a != NULL && *b != NULL; a++, b++)
		if (strcmp(*a, *b) != 0)
			return 0;
	return *a == NULL && *b == NULL;
}

int
listen_same(const struct conf *a, const struct conf *b)
{
	return a->nports == b->nports &&
	    memcmp(a->ports, b->ports, sizeof(a->ports[0]) * (size_t)a->nports) == 0 &&
	    listen_strv_eq(a->interfaces, b->interfaces);
}

/* Gates of the pool (alive, not on their way out) and their free slots. */
static int
listen_pool(unsigned *credits, unsigned *active)
{
	int i, n = 0;

	*credits = *active = 0;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		const struct child *c = &spawn_children[i];

		if (c->pid <= 0 || c->role != CHILD_GATE || c->dying ||
		    c->retiring)
			continue;
		n++;
		*credits += c->credits;
		*active += c->active;
	}
	return n;
}

int
listen_gate_target(void)
{
	const struct conf *conf = master.conf;
	int max = conf->max_gate_processes > conf->gate_processes ?
	    conf->max_gate_processes : conf->gate_processes;
	int want = conf->gate_processes + listen_extra;

	return want > max ? max : want;
}

/*
 * One more gate when the free slots run low and the pool has caught up
 * with its last growth; returns 1 if the target grew.
 */
static int
listen_grow(void)
{
	unsigned credits, active;
	int have = listen_pool(&credits, &active);
	int64_t now = master_now_ms();

	if (credits >= LISTEN_GROW_LOW)
		return 0;
	listen_busy_ms = now;
	if (have < listen_gate_target())
		return 0;
	if (master.conf->gate_processes + listen_extra >=
	    master.conf->max_gate_processes)
		return 0;
	listen_extra++;
	log_info("gates: %u free slots left, growing the pool to %d",
	    credits, listen_gate_target());
	return 1;
}

/* The extra gates go once they have stood mostly idle for a while. */
static void
listen_shrink(int64_t now)
{
	unsigned credits, active;
	int have = listen_pool(&credits, &active);

	if (listen_extra == 0 || now - listen_busy_ms < LISTEN_SHRINK_AFTER_MS)
		return;
	if (active >= (unsigned)have * LISTEN_SHRINK_PER_GATE)
		return;
	listen_extra--;
	listen_busy_ms = now;
	log_info("gates: load gone, pool back to %d", listen_gate_target());
}

/*
 * No gate has a free slot and the pool is at its limit: the oldest
 * unauthenticated connection (not one being handed off, not a held
 * binding) goes.  Its slot's credit comes back with MSG_GATE_READY.
 */
static void
listen_evict_oldest(void)
{
	struct listen_pre *oldest = NULL;
	struct child *g;
	unsigned i;

	for (i = 0; i < listen_pre_hi; i++) {
		struct listen_pre *e = &listen_pre[i];

		if (e->gate <= 0 || e->dropped || e->held)
			continue;
		if (oldest == NULL || e->since_ms < oldest->since_ms)
			oldest = e;
	}
	if (oldest == NULL)
		return;
	oldest->dropped = 1;
	listen_log_limited("the gates", "every slot taken, dropping the "
	    "oldest unauthenticated connection");
	g = spawn_find(oldest->gate);
	if (g != NULL && g->chan >= 0)
		(void)spawn_send(g, MSG_GATE_DROP, oldest->id, NULL, 0);
}

/* A connection waits and no gate has room: grow the pool or make room. */
static void
listen_relieve(void)
{
	unsigned credits, active;

	listen_evict_ms = master_now_ms();
	if (listen_grow())
		return;
	if (listen_pool(&credits, &active) < listen_gate_target())
		return;		/* a new gate is on its way */
	listen_evict_oldest();
}

void
listen_update_polling(void)
{
	int want, i;

	if (listen_evict_ms != 0 && (spawn_ready_gate() != NULL ||
	    master_now_ms() - listen_evict_ms >= LISTEN_EVICT_WAIT_MS))
		listen_evict_ms = 0;
	/*
	 * With no gate ready the listeners are still polled once, so that a
	 * waiting connection can ask for room (listen_relieve); then they
	 * rest until a credit comes back or the wait is over.
	 */
	if (listen_nwait > 0)
		listen_wait_flush();
	want = !master.shutting_down && master.epfd >= 0 &&
	    (spawn_ready_gate() != NULL || listen_pool_full() ||
	    (listen_evict_ms == 0 && spawn_count_alive() > 0));

	if (want == listen_polling)
		return;
	for (i = 0; i < listen_n; i++)
		(void)master_ev_mod(listen_fds[i], MASTER_EV_LISTEN, (uint32_t)i,
		    want ? EPOLLIN : 0);
	listen_polling = want;
}

/* Renders a peer address; a v4-mapped v6 address becomes plain v4. */
static void
listen_addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	(void)conf_addr_text((const struct sockaddr *)ss, buf, len);
}

/*
 * Is local (a connected socket's own address) one of our listeners'?
 * Never a v4-mapped IPv6 address: our IPv6 listeners are IPV6_V6ONLY and
 * accept none, while any process may bind an IPv6 socket to
 * ::ffff:a.b.c.d on our port (an IPv4 bind to the kernel, which a v6-only
 * wildcard listener does not conflict with) and accept or connect there:
 * without this check, with a listener on "::", a worker could show such a
 * socket and name its client address at will.
 */
static int
listen_is_ours(const struct sockaddr_storage *local)
{
	const struct sockaddr_in6 *l6 = (const void *)local;
	const struct sockaddr_in *l4 = (const void *)local;
	int i;

	if (local->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&l6->sin6_addr))
		return 0;
	for (i = 0; i < listen_n; i++) {
		const struct sockaddr_storage *ss = &listen_addrs[i];
		const struct sockaddr_in6 *s6 = (const void *)ss;
		const struct sockaddr_in *s4 = (const void *)ss;

		if (ss->ss_family != local->ss_family)
			continue;
		if (ss->ss_family == AF_INET && s4->sin_port == l4->sin_port &&
		    (s4->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    s4->sin_addr.s_addr == l4->sin_addr.s_addr))
			return 1;
		if (ss->ss_family == AF_INET6 && s6->sin6_port == l6->sin6_port &&
		    (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
		    IN6_ARE_ADDR_EQUAL(&s6->sin6_addr, &l6->sin6_addr)))
			return 1;
	}
	return 0;
}

int
listen_peer_of(int fd, char *buf, size_t cap)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer), tl;
	int type = 0, proto = 0;

	if (cap > 0)
		buf[0] = '\0';
	/*
	 * TCP, not only a stream: an SCTP socket is SOCK_STREAM too, and its
	 * ports are not TCP's, so any process could bind one to our very
	 * address and port and accept an association from where it likes.
	 */
	tl = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
	    type != SOCK_STREAM ||
	    (tl = sizeof(proto), getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto,
	    &tl)) != 0 || proto != IPPROTO_TCP ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
	    !listen_is_ours(&local) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
	    conf_addr_text((const struct sockaddr *)&peer, buf, cap) != 0) {
		if (cap > 0)
			buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* The counting key of an address: v4 whole, v6 by its /64. */
static void
listen_addr_key(const char *addr, uint8_t key[17])
{
	int fam = conf_parse_addr(addr, key + 1);

	key[0] = (uint8_t)fam;
	if (fam == AF_INET6)
		memset(key + 1 + 8, 0, 8);
}

static struct listen_pre *
listen_pre_find(pid_t gate, uint32_t id)
{
	unsigned i;

	for (i = 0; i < listen_pre_hi; i++)
		if (listen_pre[i].gate == gate && listen_pre[i].id == id)
			return &listen_pre[i];
	return NULL;
}

static void
listen_pre_free(struct listen_pre *e)
{
	memset(e, 0, sizeof(*e));
	while (listen_pre_hi > 0 && listen_pre[listen_pre_hi - 1].gate == 0)
		listen_pre_hi--;
}

/* Counts the live entries of key; *oldest = the oldest of them. */
static unsigned
listen_pre_count(const uint8_t key[17], struct listen_pre **oldest)
{
	unsigned i, n = 0;

	*oldest = NULL;
	for (i = 0; i < listen_pre_hi; i++) {
		struct listen_pre *e = &listen_pre[i];

		if (e->gate == 0 || e->dropped || e->held ||
		    memcmp(e->key, key, 17) != 0)
			continue;
		n++;
		if (*oldest == NULL || e->since_ms < (*oldest)->since_ms)
			*oldest = e;
	}
	return n;
}

/* Connections of key waiting in workers for a binding (held entries). */
static unsigned
listen_held_count(const uint8_t key[17])
{
	unsigned i, n = 0;

	for (i = 0; i < listen_pre_hi; i++)
		if (listen_pre[i].held && memcmp(listen_pre[i].key, key, 17) == 0)
			n++;
	return n;
}

unsigned
listen_preauth_count(const char *addr)
{
	struct listen_pre *oldest;
	uint8_t key[17];

	listen_addr_key(addr, key);
	return listen_pre_count(key, &oldest);
}

/* One line per LISTEN_LOG_EVERY_S, with how many were not logged. */
static void
listen_log_limited(const char *peer, const char *what)
{
	time_t now = time(NULL);

	if (listen_log_t != 0 && now - listen_log_t < LISTEN_LOG_EVERY_S) {
		listen_log_n++;
		return;
	}
	log_warnx("connection from %s: %s (%u more such since the last line)",
	    peer, what, listen_log_n);
	listen_log_t = now;
	listen_log_n = 0;
}

/*
 * Makes room for one more connection of key: at the per-address limit the
 * address's oldest connection is dropped by its gate.  Returns the free
 * entry to use, or NULL (table full: refuse).
 */
static struct listen_pre *
listen_pre_admit(const uint8_t key[17], const char *peer)
{
	struct listen_pre *oldest, *e = NULL;
	struct child *g;
	unsigned i;

	for (i = 0; i < LISTEN_PREAUTH_MAX; i++)
		if (listen_pre[i].gate == 0) {
			e = &listen_pre[i];
			break;
		}
	if (e == NULL) {
		listen_log_limited(peer, "refused: too many connections "
		    "waiting for a login");
		return NULL;
	}
	if (listen_pre_count(key, &oldest) < LISTEN_PREAUTH_PER_ADDR)
		return e;
	listen_log_limited(peer, "over its share of unauthenticated "
	    "connections, dropping its oldest");
	oldest->dropped = 1;
	g = spawn_find(oldest->gate);
	if (g != NULL && g->chan >= 0)
		(void)spawn_send(g, MSG_GATE_DROP, oldest->id, NULL, 0);
	return e;
}

void
listen_conn_end(struct child *gate, uint32_t id, int to_bind)
{
	struct listen_pre *e = listen_pre_find(gate->pid, id);

	if (e == NULL) {
		log_debug(2, "gate %d ended unknown connection %u",
		    (int)gate->pid, id);
		return;
	}
	if (gate->active > 0)
		gate->active--;
	if (to_bind && !e->dropped) {
		/* Unauthenticated in a worker: still this address's. */
		e->gate = LISTEN_HELD_GATE;
		e->held = 1;
		e->since_ms = master_now_ms();
		return;
	}
	listen_pre_free(e);
}

void
listen_gate_gone(const struct child *gate)
{
	unsigned i;

	for (i = 0; i < listen_pre_hi; i++)
		if (listen_pre[i].gate == gate->pid)
			listen_pre_free(&listen_pre[i]);
}

void
listen_tick(void)
{
	static int64_t last;
	int64_t now = master_now_ms();
	struct child *g;
	unsigned i;

	if (now - last < 1000)
		return;
	last = now;
	listen_shrink(now);
	for (i = 0; i < listen_pre_hi; i++) {
		struct listen_pre *e = &listen_pre[i];

		if (e->held && now - e->since_ms >= LISTEN_BIND_HOLD_MS) {
			listen_pre_free(e);
			continue;
		}
		if (e->gate == 0 || e->held ||
		    now - e->since_ms < LISTEN_PREAUTH_STALE_MS)
			continue;
		log_warnx("gate %d never ended connection %u: no longer "
		    "counted", (int)e->gate, e->id);
		if ((g = spawn_find(e->gate)) != NULL && g->active > 0)
			g->active--;
		listen_pre_free(e);
	}
}

/*
 * MSG_NEW_CONN payload: server GUID, start FILETIME, peer address text,
 * flags.  An address with LISTEN_BIND_PER_ADDR bindings waiting in
 * workers gets no more binding hand-offs until some end.
 */
static int
listen_give(struct child *gate, int fd, const char *peer, const uint8_t key[17],
    uint32_t id)
{
	uint8_t buf[16 + 8 + INET6_ADDRSTRLEN + 1 + 1];
	struct wcur w;
	int rc, nobind = listen_held_count(key) >= LISTEN_BIND_PER_ADDR;

	wcur_init(&w, buf, sizeof(buf));
	wcur_bytes(&w, master.guid, 16);
	le64_put(wcur_reserve(&w, 8), master.started_filetime);
	wcur_bytes(&w, peer, strlen(peer) + 1);
	if (nobind) {
		wcur_u8(&w, MSG_NEW_CONN_NO_BIND);
		listen_log_limited(peer, "its share of unauthenticated "
		    "connections waits in workers for channel bindings: no "
		    "binding on this one");
	}
	if (w.err)
		return -EMSGSIZE;
	rc = msg_send(gate->chan, MSG_NEW_CONN, id, buf, wcur_off(&w), fd);
	if (rc != 0)
		spawn_kill(gate, "cannot pass a connection");
	return rc;
}

/* Passes fd to gate under a new entry of key; closes fd in any case. */
static void
listen_hand(struct child *gate, int fd, const char *peer, const uint8_t key[17])
{
	struct listen_pre *e;
	uint32_t id;
	int one = 1;

	e = listen_pre_admit(key, peer);
	/* A drop above may have killed a gate that stopped reading. */
	if (e == NULL || gate->chan < 0 || gate->dying) {
		close(fd);
		return;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	id = listen_next_id++;
	if (listen_next_id == 0)
		listen_next_id = 1;
	if (listen_give(gate, fd, peer, key, id) == 0) {
		e->gate = gate->pid;
		e->id = id;
		memcpy(e->key, key, sizeof(e->key));
		e->dropped = 0;
		e->held = 0;
		e->since_ms = master_now_ms();
		if ((unsigned)(e - listen_pre) >= listen_pre_hi)
			listen_pre_hi = (unsigned)(e - listen_pre) + 1;
		gate->credits--;
		gate->ready = gate->credits > 0;
		gate->active++;
		gate->nconn++;
		log_debug(3, "connection %u from %s to gate %d", id, peer,
		    (int)gate->pid);
		(void)listen_grow();
	} else
		log_warnx("connection from %s dropped: no gate took it", peer);
	close(fd);
}

/* Is the pool at its limit, every gate up? Then room is made by eviction. */
static int
listen_pool_full(void)
{
	unsigned credits, active;
	int target = listen_gate_target();

	return target >= master.conf->max_gate_processes &&
	    listen_pool(&credits, &active) >= target;
}

/* Gives the waiting connections to gates with room; drops stale ones. */
static void
listen_wait_flush(void)
{
	int64_t now = master_now_ms();
	struct listen_wait *w;
	struct child *gate;
	unsigned i, k = 0;

	for (i = 0; i < listen_nwait; i++) {
		w = &listen_waiting[i];
		gate = spawn_ready_gate();
		if (gate != NULL)
			listen_hand(gate, w->fd, w->peer, w->key);
		else if (now - w->since_ms >= LISTEN_WAIT_MAX_MS || master.shutting_down)
			close(w->fd);
		else
			listen_waiting[k++] = *w;
	}
	listen_nwait = k;
}

/*
 * Every slot taken and the pool at its limit: an address that already
 * has LISTEN_FULL_PER_ADDR connections waiting for a login is refused at
 * once (the backlog keeps draining, so a newcomer's SYN is not stuck
 * behind a flood); any other waits here while the oldest unauthenticated
 * connection makes room.  Returns 0 if fd was kept.
 */
static int
listen_wait_add(int fd, const char *peer, const uint8_t key[17])
{
	struct listen_pre *oldest;
	struct listen_wait *w;

	if (listen_nwait >= LISTEN_WAIT_MAX ||
	    listen_pre_count(key, &oldest) >= LISTEN_FULL_PER_ADDR) {
		listen_log_limited(peer, "refused: every gate slot is taken "
		    "and it already has connections waiting for a login");
		return -1;
	}
	w = &listen_waiting[listen_nwait++];
	w->fd = fd;
	w->since_ms = master_now_ms();
	memcpy(w->key, key, sizeof(w->key));
	snprintf(w->peer, sizeof(w->peer), "%s", peer);
	listen_evict_oldest();
	return 0;
}

void
listen_event(uint32_t idx)
{
	struct sockaddr_storage ss;
	char peer[INET6_ADDRSTRLEN];
	struct child *gate;
	uint8_t key[17];
	socklen_t sl;
	int i, fd;

	if (idx >= (uint32_t)listen_n)
		return;
	listen_wait_flush();
	for (i = 0; i < LISTEN_ACCEPT_BATCH; i++) {
		gate = spawn_ready_gate();
		if (gate == NULL && !listen_pool_full()) {
			listen_relieve();
			return;
		}
		sl = sizeof(ss);
		fd = accept4(listen_fds[idx], (struct sockaddr *)&ss, &sl,
		    SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		listen_addr_text(&ss, peer, sizeof(peer));
		if (!conf_peer_allowed(master.conf->hosts_allow,
		    master.conf->hosts_deny, peer)) {
			log_warnx("connection from %s refused by hosts allow/deny",
			    peer);
			close(fd);
			continue;
		}
		listen_addr_key(peer, key);
		if (gate != NULL)
			listen_hand(gate, fd, peer, key);
		else if (listen_wait_add(fd, peer, key) != 0)
			close(fd);
	}
}
