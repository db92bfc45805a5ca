/*
 * Routing a connection that a gate authenticated to a worker of that user.
 *
 * The identity comes from the verdict this master gave that very gate for
 * the authentication request the hand-off names (its message id), never
 * from the gate's payload: a compromised gate can only hand a connection to
 * a user it proved it authenticated, once per proof, and only soon after.
 * The payload is forwarded to the worker behind the identity the master
 * vouches for (daemon/authmsg.h, struct authmsg_ident), which is what the
 * worker serves the session as.  The gate keeps its copy of
 * the socket until MSG_HANDOFF_DONE says the worker acknowledged it.
 */
#include "daemon/route.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/authmsg.h"
#include "daemon/conf.h"
#include "daemon/listen.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msess.h"
#include "daemon/msg.h"
#include "daemon/passdb.h"
#include "daemon/spawn.h"
#include "daemon/unlinkmsg.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "shm/shm.h"

#define ROUTE_MAX_PENDING	256
#define ROUTE_ACK_TIMEOUT_MS	15000	/* a worker has this long to take a connection */
#define ROUTE_MAX_CHECKS	128	/* binding checks in flight (MSG_BIND_CHECK) */
#define ROUTE_GATE_CHECKS	64	/* of them, one gate's */
#define ROUTE_CHECK_MS		5000	/* a worker has this long to answer one */

/* A connection between MSG_HANDOFF and the worker's MSG_CONN_ACK. */
struct route_pending {
	int		 in_use;
	int		 fd;		/* master's copy; -1 once sent */
	uint8_t		*payload;
	uint32_t	 len;
	pid_t		 gate;		/* 0 once the gate is gone */
	uint32_t	 gate_id;	/* id of its MSG_HANDOFF, echoed in HANDOFF_DONE */
	pid_t		 worker;
	uint32_t	 conn_id;	/* id of our MSG_CONN */
	int64_t		 since_ms;
};

/* A successful verdict given to a gate, until its hand-off. */
struct route_verdict {
	pid_t		 gate;		/* 0: free */
	uint32_t	 id;		/* of the MSG_AUTH_REQ it answered */
	int64_t		 issued_ms;
	struct authmsg_rep rep;
};

/* A gate's MSG_BIND_CHECK forwarded to a worker, until its answer. */
struct route_check {
	pid_t		 gate;		/* 0: free */
	uint32_t	 gate_id;	/* of the gate's question */
	pid_t		 worker;
	uint32_t	 id;		/* of the question forwarded */
	int64_t		 since_ms;
};

static struct route_pending	route_q[ROUTE_MAX_PENDING];
static struct route_check	route_checks[ROUTE_MAX_CHECKS];
static uint32_t			route_next_check = 1;
static uint32_t			route_next_id = 1;
static struct route_verdict	route_verdicts[ROUTE_MAX_VERDICTS];

static void
route_verdict_free(struct route_verdict *v)
{
	explicit_bzero(v, sizeof(*v));
}

static void route_verdict_keep(const struct child *c, uint32_t id,
    const struct authmsg_rep *rep, int64_t now_ms);

void
route_verdict_record(const struct child *c, uint32_t id,
    const struct authmsg_rep *rep, int64_t now_ms)
{
	/* Workers never hand off (a relay is recorded by route_relay_record). */
	if (c->role != CHILD_GATE)
		return;
	route_verdict_keep(c, id, rep, now_ms);
}

void
route_relay_record(const struct child *c, uint32_t id,
    const struct authmsg_rep *rep, int64_t now_ms)
{
	if (c->role == CHILD_WORKER && rep->status == STATUS_SUCCESS &&
	    rep->uid != c->uid)
		route_verdict_keep(c, id, rep, now_ms);
}

static void
route_verdict_keep(const struct child *c, uint32_t id,
    const struct authmsg_rep *rep, int64_t now_ms)
{
	struct route_verdict *v = NULL, *oldest = NULL, *mine = NULL;
	unsigned i, n = 0;

	if (rep->status != STATUS_SUCCESS) {
		/* A failed verdict routes nothing, and voids one under its id. */
		for (i = 0; i < ROUTE_MAX_VERDICTS; i++)
			if (route_verdicts[i].gate == c->pid &&
			    route_verdicts[i].id == id)
				route_verdict_free(&route_verdicts[i]);
		return;
	}
	for (i = 0; i < ROUTE_MAX_VERDICTS; i++) {
		struct route_verdict *e = &route_verdicts[i];

		if (e->gate != 0 && now_ms - e->issued_ms > ROUTE_VERDICT_TTL_MS)
			route_verdict_free(e);
		if (e->gate == 0) {
			if (v == NULL)
				v = e;
			continue;
		}
		if (e->gate == c->pid && e->id == id) {
			v = e;	/* the same id again: the new answer counts */
			break;
		}
		if (e->gate == c->pid) {
			n++;
			if (mine == NULL || e->issued_ms < mine->issued_ms)
				mine = e;
		}
		if (oldest == NULL || e->issued_ms < oldest->issued_ms)
			oldest = e;
	}
	/* One gate cannot crowd out the others' verdicts. */
	if (n >= ROUTE_GATE_VERDICTS && (v == NULL || v->gate != c->pid ||
	    v->id != id))
		v = mine;
	if (v == NULL) {
		log_warnx("verdict table full: the oldest unused verdict "
		    "(gate %d) is dropped", (int)oldest->gate);
		v = oldest;
	}
	route_verdict_free(v);
	v->gate = c->pid;
	v->id = id;
	v->issued_ms = now_ms;
	v->rep = *rep;
}

int
route_verdict_take(const struct child *gate, uint32_t id, int64_t now_ms,
    struct authmsg_rep *out)
{
	unsigned i;

	for (i = 0; i < ROUTE_MAX_VERDICTS; i++) {
		struct route_verdict *e = &route_verdicts[i];

		if (e->gate == 0 || e->gate != gate->pid || e->id != id)
			continue;
		if (now_ms - e->issued_ms > ROUTE_VERDICT_TTL_MS ||
		    now_ms < e->issued_ms) {
			route_verdict_free(e);
			return -ENOENT;
		}
		*out = e->rep;
		route_verdict_free(e);
		return 0;
	}
	return -ENOENT;
}

static void
route_verdict_forget(pid_t gate)
{
	unsigned i;

	for (i = 0; i < ROUTE_MAX_VERDICTS; i++)
		if (route_verdicts[i].gate == gate)
			route_verdict_free(&route_verdicts[i]);
}

/* A message to the gate gate_pid, if it is still there to take it. */
static void
route_gate_send(pid_t gate_pid, uint32_t type, uint32_t gate_id,
    const uint8_t *p, size_t len)
{
	struct child *gate;

	if (gate_pid <= 0 || (gate = spawn_find(gate_pid)) == NULL ||
	    gate->chan < 0)
		return;
	(void)spawn_send(gate, type, gate_id, p, len);
}

static void
route_done(pid_t gate_pid, uint32_t gate_id, uint32_t status)
{
	uint8_t p[4];

	le32_put(p, status);
	route_gate_send(gate_pid, MSG_HANDOFF_DONE, gate_id, p, sizeof(p));
}

static void
route_free(struct route_pending *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->payload);
	memset(q, 0, sizeof(*q));
	q->fd = -1;
}

/* A worker of uid with the least load, or a new one when the user may have more. */
static struct child *
route_pick_worker(const char *user, uid_t uid, gid_t gid)
{
	struct child *best = NULL;
	uint32_t best_load = 0;
	int i, n = 0;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];
		uint32_t load;

		if (c->pid <= 0 || c->role != CHILD_WORKER || c->dying ||
		    c->chan < 0 || c->uid != uid)
			continue;
		n++;
		load = c->nconn + c->queued;
		if (best == NULL || load < best_load) {
			best = c;
			best_load = load;
		}
	}
	if (best != NULL && (best_load == 0 ||
	    n >= master.conf->max_workers_per_user))
		return best;
	return spawn_worker(user, uid, gid);
}

/*
 * Passes the connection to w.  It is a gate's request forwarded, so a
 * channel that cannot take it costs the connection (the gate is told, the
 * client can try again), never the worker (daemon/spawn.h spawn_forward).
 */
static int
route_send(struct route_pending *q, struct child *w)
{
	int rc;

	rc = spawn_forward(w, MSG_CONN, q->conn_id, q->payload, q->len, q->fd);
	if (rc != 0) {
		route_done(q->gate, q->gate_id, STATUS_INSUFF_SERVER_RESOURCES);
		if (w->queued > 0)
			w->queued--;
		route_free(q);
		return rc;
	}
	close(q->fd);
	q->fd = -1;
	return 0;
}

static struct route_pending *
route_slot(void)
{
	int i;

	for (i = 0; i < ROUTE_MAX_PENDING; i++)
		if (!route_q[i].in_use)
			return &route_q[i];
	return NULL;
}

/*
 * Queues m's socket for worker w, with the identity the master vouches for
 * (id) ahead of the gate's connection state p; sends it when w is up.
 */
static void
route_enqueue(struct route_pending *q, struct child *gate, const struct msg *m,
    const struct authmsg_ident *id, const uint8_t *p, size_t len,
    struct child *w, const char *user)
{
	q->payload = malloc(AUTHMSG_IDENT_LEN + len);
	if (q->payload == NULL ||
	    authmsg_ident_encode(id, q->payload, AUTHMSG_IDENT_LEN) < 0) {
		log_warn("hand-off of %s", user);
		free(q->payload);
		q->payload = NULL;
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_NO_MEMORY);
		return;
	}
	memcpy(q->payload + AUTHMSG_IDENT_LEN, p, len);
	q->in_use = 1;
	q->len = (uint32_t)(AUTHMSG_IDENT_LEN + len);
	q->fd = m->fd;
	q->gate = gate->pid;
	q->gate_id = m->id;
	q->worker = w->pid;
	q->since_ms = master_now_ms();
	q->conn_id = route_next_id++;
	if (route_next_id == 0)
		route_next_id = 1;
	w->queued++;
	log_debug(2, "routing a connection of %s from gate %d to worker %d",
	    user, (int)gate->pid, (int)w->pid);
	/* Before its hello the worker is not listening yet: queue until then. */
	if (w->hello)
		(void)route_send(q, w);
}

void
route_handoff(struct child *gate, const struct msg *m)
{
	struct authmsg_rep verdict, *v = &verdict;
	struct authmsg_ident id;
	struct route_pending *q = NULL;
	const char *user;
	struct passwd *pw;
	struct child *w;
	uid_t uid;
	gid_t gid;

	/* A verdict is good for one hand-off, by its gate, soon after. */
	if (route_verdict_take(gate, m->id, master_now_ms(), &verdict) != 0) {
		log_warnx("gate %d handed off a connection without a fresh "
		    "verdict for request %u", (int)gate->pid, m->id);
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_ACCESS_DENIED);
		return;
	}
	explicit_bzero(verdict.session_key, sizeof(verdict.session_key));
	uid = v->uid;
	gid = v->gid;
	user = v->user;
	if (user[0] == '\0') {
		/* Anonymous: served by a worker of the guest account. */
		pw = getpwuid(uid);
		user = pw != NULL ? pw->pw_name : master.conf->guest_account;
	}
	if (uid == 0) {
		log_warnx("refusing to route %s: uid 0 is never served", user);
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_ACCESS_DENIED);
		return;
	}
	q = route_slot();
	w = q != NULL ? route_pick_worker(user, uid, gid) : NULL;
	if (w == NULL) {
		log_warnx("no worker for %s: connection dropped%s", user,
		    q == NULL ? " (hand-off queue full)" : "");
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_INSUFF_SERVER_RESOURCES);
		return;
	}
	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_LOGIN;
	id.uid = v->uid;
	id.gid = v->gid;
	id.flags = v->flags;
	memcpy(id.user, v->user, sizeof(id.user));
	id.user[sizeof(id.user) - 1] = '\0';
	/* the kernel's word for the socket, not the gate's text */
	if (listen_peer_of(m->fd, id.peer, sizeof(id.peer)) != 0)
		log_warnx("gate %d handed off a connection of %s whose address "
		    "cannot be read", (int)gate->pid, user);
	route_enqueue(q, gate, m, &id, m->payload, m->len, w, user);
}

void
route_relay(struct child *owner, const struct msg *m)
{
	struct authmsg_rep v;
	struct authmsg_ident id;
	struct route_pending *q;
	struct passwd *pw;
	const char *user;
	struct child *w;
	uint8_t *p;
	size_t len;
	int n = -1;

	/* A real user's or an anonymous session; a guest has no key. */
	if (m->len < 8 ||
	    route_verdict_take(owner, m->id, master_now_ms(), &v) != 0 ||
	    v.uid == owner->uid || v.uid == 0 ||
	    (v.user[0] == '\0') != ((v.flags & AUTH_FLAG_ANONYMOUS) != 0) ||
	    (v.flags & AUTH_FLAG_GUEST)) {
		log_warnx("worker %d asked to relay a session without a fresh "
		    "verdict of another user for request %u", (int)owner->pid,
		    m->id);
		explicit_bzero(&v, sizeof(v));
		close(m->fd);
		route_done(owner->pid, m->id, STATUS_ACCESS_DENIED);
		return;
	}
	user = v.user;
	if (user[0] == '\0') {
		/* Anonymous: served by a worker of the guest account. */
		pw = getpwuid(v.uid);
		user = pw != NULL ? pw->pw_name : master.conf->guest_account;
	}
	q = route_slot();
	w = q != NULL ? route_pick_worker(user, v.uid, v.gid) : NULL;
	p = w != NULL ? malloc(4 + AUTHMSG_REP_MAX + m->len - 8) : NULL;
	if (p == NULL || (n = authmsg_rep_encode(&v, p + 4,
	    AUTHMSG_REP_MAX)) < 0) {
		log_warnx("no worker for %s: relayed session dropped%s", user,
		    q == NULL ? " (hand-off queue full)" : "");
		explicit_bzero(&v, sizeof(v));
		if (p != NULL)
			explicit_bzero(p, 4 + AUTHMSG_REP_MAX);
		free(p);
		close(m->fd);
		route_done(owner->pid, m->id, STATUS_INSUFF_SERVER_RESOURCES);
		return;
	}
	memset(&id, 0, sizeof(id));
	id.kind = AUTHMSG_IDENT_RELAY;
	id.uid = v.uid;
	id.gid = v.gid;
	id.flags = v.flags & ~(uint32_t)AUTH_FLAG_RELAY;
	memcpy(id.user, v.user, sizeof(id.user));
	id.user[sizeof(id.user) - 1] = '\0';
	/*
	 * The address of the socket the owner showed for this relay, read
	 * here; none: the relayed worker's share host lists refuse it.
	 */
	if (owner->relay_peer_set && owner->relay_peer_id == m->id)
		memcpy(id.peer, owner->relay_peer, sizeof(id.peer));
	else
		log_warnx("worker %d relays session %llx without showing its "
		    "client's socket: share host lists will refuse it",
		    (int)owner->pid, (unsigned long long)le64_get(m->payload));
	owner->relay_peer_set = 0;
	/*
	 * The verdict, keys and (Kerberos) AP-REP included, goes to the
	 * verdict's own user's worker only.
	 */
	le32_put(p, (uint32_t)n);
	len = 4 + (size_t)n + m->len - 8;
	memcpy(p + 4 + n, m->payload + 8, m->len - 8);
	explicit_bzero(&v, sizeof(v));
	log_info("session %llx of %s relayed from worker %d (uid %u) to "
	    "worker %d", (unsigned long long)le64_get(m->payload),
	    id.user[0] != '\0' ? id.user : "(anonymous)", (int)owner->pid,
	    (unsigned)owner->uid, (int)w->pid);
	msess_relay_expect(le64_get(m->payload), owner->pid, w->pid,
	    master_now_ms());
	route_enqueue(q, owner, m, &id, p, len, w, user);
	explicit_bzero(p, len);
	free(p);
}

int
route_socket_msg(struct child *c, const struct msg *m)
{
	if (c->role != (m->type == MSG_HANDOFF ? CHILD_GATE : CHILD_WORKER) ||
	    m->fd < 0 || (m->type == MSG_RELAY_PEER && m->len != 0)) {
		if (m->fd >= 0)
			close(m->fd);
		return -1;
	}
	if (m->type == MSG_HANDOFF)
		route_handoff(c, m);
	else if (m->type == MSG_RELAY)
		route_relay(c, m);
	else
		route_relay_peer(c, m);
	return 0;
}

void
route_relay_peer(struct child *owner, const struct msg *m)
{
	owner->relay_peer_set = 1;
	owner->relay_peer_id = m->id;
	if (listen_peer_of(m->fd, owner->relay_peer,
	    sizeof(owner->relay_peer)) != 0)
		log_warnx("worker %d showed a socket for relay %u that none of "
		    "our listeners accepted", (int)owner->pid, m->id);
	close(m->fd);
}

/*
 * The worker that announced session sid (daemon/msess.h, the master's own
 * table, never the shared state): alive and still of the uid it had, or
 * NULL.  The first worker to announce an id keeps it, so no worker can
 * draw another user's bindings to itself.
 */
static struct child *
route_session_worker(uint64_t sid, char *user, size_t cap)
{
	struct child *w;
	pid_t pid;
	uid_t uid;

	if (sid == 0 || msess_find(sid, &pid, &uid) != 0)
		return NULL;
	w = spawn_find(pid);
	if (w == NULL || w->role != CHILD_WORKER || w->dying || w->chan < 0 ||
	    w->uid != uid || uid == 0)
		return NULL;
	snprintf(user, cap, "%s", w->user);
	return w;
}

void
route_handoff_bind(struct child *gate, const struct msg *m)
{
	struct route_pending *q;
	struct authmsg_ident none = { .kind = AUTHMSG_IDENT_NONE };
	struct child *w;
	char user[SHM_NAME_MAX];
	uint64_t sid;

	sid = le64_get(m->payload);
	w = route_session_worker(sid, user, sizeof(user));
	if (w == NULL) {
		/* The gate answers the request and keeps the connection. */
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_USER_SESSION_DELETED);
		return;
	}
	q = route_slot();
	if (q == NULL) {
		log_warnx("hand-off queue full: binding to session %llx dropped",
		    (unsigned long long)sid);
		close(m->fd);
		route_done(gate->pid, m->id, STATUS_INSUFF_SERVER_RESOURCES);
		return;
	}
	log_debug(2, "binding to session %llx of %s: worker %d",
	    (unsigned long long)sid, user, (int)w->pid);
	(void)listen_peer_of(m->fd, none.peer, sizeof(none.peer));
	route_enqueue(q, gate, m, &none, m->payload + 8, m->len - 8, w, user);
}

/* The master's own answer to a gate's MSG_BIND_CHECK: a status, no response. */
static void
route_check_answer(pid_t gate_pid, uint32_t gate_id, uint32_t status)
{
	uint8_t p[8];

	le32_put(p, status);
	le32_put(p + 4, 0);
	route_gate_send(gate_pid, MSG_BIND_CHECK_REP, gate_id, p, sizeof(p));
}

/*
 * MSG_BIND_CHECK from a gate: to the worker that announced the session,
 * forwarded unread (the worker judges it: worker/bindcheck.h).  No socket
 * moves; the gate hands the connection over (MSG_HANDOFF_BIND) only when
 * the worker's answer lets it.
 */
static void
route_bind_check(struct child *gate, const struct msg *m)
{
	struct route_check *k = NULL;
	char user[SHM_NAME_MAX];
	int64_t now = master_now_ms();
	struct child *w;
	unsigned i, mine = 0;
	uint64_t sid;

	sid = le64_get(m->payload);
	w = route_session_worker(sid, user, sizeof(user));
	if (w == NULL) {
		route_check_answer(gate->pid, m->id, STATUS_USER_SESSION_DELETED);
		return;
	}
	for (i = 0; i < ROUTE_MAX_CHECKS; i++) {
		struct route_check *e = &route_checks[i];

		if (e->gate == gate->pid)
			mine++;
		if (e->gate == 0 && k == NULL)
			k = e;
	}
	/* One gate (one flood) cannot hold every place. */
	if (k == NULL || mine >= ROUTE_GATE_CHECKS) {
		static int64_t said;

		/* A flood's: one line a second. */
		if (now - said >= 1000) {
			said = now;
			log_warnx("binding checks: %s, session %llx of %s not "
			    "asked", k == NULL ? "table full" :
			    "gate over its share", (unsigned long long)sid, user);
		}
		route_check_answer(gate->pid, m->id,
		    STATUS_INSUFF_SERVER_RESOURCES);
		return;
	}
	k->id = route_next_check++;
	if (route_next_check == 0)
		route_next_check = 1;
	if (spawn_forward(w, MSG_BIND_CHECK, k->id, m->payload, m->len, -1) != 0) {
		route_check_answer(gate->pid, m->id,
		    STATUS_INSUFF_SERVER_RESOURCES);
		return;
	}
	k->gate = gate->pid;
	k->gate_id = m->id;
	k->worker = w->pid;
	k->since_ms = now;
	log_debug(3, "binding check of session %llx of %s: worker %d",
	    (unsigned long long)sid, user, (int)w->pid);
}

static int
route_bind_check_rep(struct child *w, const struct msg *m)
{
	struct child *gate;
	unsigned i;

	/* u32 status, u32 length, then none or one refusal. */
	if (m->len != 8 && m->len != 8 + MSG_BIND_CHECK_RSP_LEN)
		return -1;
	if (le32_get(m->payload + 4) != m->len - 8)
		return -1;
	for (i = 0; i < ROUTE_MAX_CHECKS; i++) {
		struct route_check *k = &route_checks[i];

		if (k->gate == 0 || k->worker != w->pid || k->id != m->id)
			continue;
		gate = spawn_find(k->gate);
		if (gate != NULL && gate->chan >= 0)
			(void)spawn_forward(gate, MSG_BIND_CHECK_REP, k->gate_id,
			    m->payload, m->len, -1);
		memset(k, 0, sizeof(*k));
		return 0;
	}
	/* Late (its question timed out) or never asked: nothing to do. */
	log_debug(2, "worker %d answered binding check %u nobody waits for",
	    (int)w->pid, m->id);
	return 0;
}

int
route_bind_check_msg(struct child *c, const struct msg *m)
{
	if (m->type == MSG_BIND_CHECK) {
		if (c->role != CHILD_GATE || m->len < 8)
			return -1;
		route_bind_check(c, m);
		return 0;
	}
	return c->role == CHILD_WORKER ? route_bind_check_rep(c, m) : -1;
}

/* Questions a gone child asked or was asked; and those past their time. */
static void
route_checks_sweep(pid_t gone, int64_t now)
{
	unsigned i;

	for (i = 0; i < ROUTE_MAX_CHECKS; i++) {
		struct route_check *k = &route_checks[i];

		if (k->gate == 0)
			continue;
		if (k->gate == gone)
			memset(k, 0, sizeof(*k));
		else if (k->worker == gone) {
			/* Its sessions are gone with it. */
			route_check_answer(k->gate, k->gate_id,
			    STATUS_USER_SESSION_DELETED);
			memset(k, 0, sizeof(*k));
		} else if (gone == 0 && now - k->since_ms > ROUTE_CHECK_MS) {
			log_warnx("worker %d did not answer a binding check "
			    "within %d s", (int)k->worker, ROUTE_CHECK_MS / 1000);
			route_check_answer(k->gate, k->gate_id,
			    STATUS_INSUFF_SERVER_RESOURCES);
			memset(k, 0, sizeof(*k));
		}
	}
}

void
route_worker_hello(struct child *w)
{
	int i;

	for (i = 0; i < ROUTE_MAX_PENDING && w->chan >= 0; i++) {
		struct route_pending *q = &route_q[i];

		if (q->in_use && q->worker == w->pid && q->fd >= 0)
			(void)route_send(q, w);
	}
}

void
route_conn_ack(struct child *w, uint32_t id)
{
	int i;

	for (i = 0; i < ROUTE_MAX_PENDING; i++) {
		struct route_pending *q = &route_q[i];

		if (q->in_use && q->worker == w->pid && q->conn_id == id &&
		    q->fd < 0) {
			route_done(q->gate, q->gate_id, 0);
			if (w->queued > 0)
				w->queued--;
			/* Counted until its MSG_CONN_COUNT catches up. */
			w->nconn++;
			route_free(q);
			return;
		}
	}
	log_warnx("worker %d acknowledged unknown connection %u", (int)w->pid, id);
}

void
route_child_gone(struct child *c)
{
	int i;

	for (i = 0; i < ROUTE_MAX_PENDING; i++) {
		struct route_pending *q = &route_q[i];

		if (!q->in_use)
			continue;
		if (c->role == CHILD_WORKER && q->worker == c->pid) {
			log_warnx("worker %d gone before taking a connection",
			    (int)c->pid);
			route_done(q->gate, q->gate_id, STATUS_INSUFF_SERVER_RESOURCES);
			route_free(q);
		} else if (c->role == CHILD_GATE && q->gate == c->pid)
			q->gate = 0;
	}
	if (c->role == CHILD_WORKER || c->role == CHILD_GATE)
		route_checks_sweep(c->pid, 0);
	if (c->role == CHILD_WORKER) {
		c->queued = 0;
		msess_child_gone(c->pid);
	}
	if (c->role == CHILD_GATE) {
		route_verdict_forget(c->pid);
		listen_gate_gone(c);
		c->active = 0;
	}
}

void
route_tick(void)
{
	int64_t now = master_now_ms();
	struct child *w;
	int i;

	listen_tick();
	route_checks_sweep(0, now);
	for (i = 0; i < ROUTE_MAX_PENDING; i++) {
		struct route_pending *q = &route_q[i];

		if (!q->in_use || now - q->since_ms < ROUTE_ACK_TIMEOUT_MS)
			continue;
		log_warnx("worker %d did not take a connection within %d s",
		    (int)q->worker, ROUTE_ACK_TIMEOUT_MS / 1000);
		if ((w = spawn_find(q->worker)) != NULL && w->queued > 0)
			w->queued--;
		route_done(q->gate, q->gate_id, STATUS_IO_TIMEOUT);
		route_free(q);
	}
}

/* passdb_foreach: is the uid an enabled SMB user's? */
static int
route_uid_known(const struct passdb_entry *e, void *arg)
{
	const uid_t *uid = arg;

	return e->uid == *uid && !(e->flags & PASSDB_FLAG_DISABLED) ? 1 : 0;
}

int
route_unlink_as(struct child *from, const struct msg *m)
{
	static struct unlinkmsg u;
	static uint8_t buf[MSG_MAX_PAYLOAD];
	const struct conf_share *sh;
	struct passwd *pw;
	uid_t uid;
	int i, n, sent = 0, live = 0;

	if (unlinkmsg_decode(&u, 0, m->payload, m->len) != 0)
		return -1;
	uid = (uid_t)u.uid;
	/*
	 * Only for another user, never root, only an SMB user (or the guest
	 * account).  The path is not looked at here: the receiving worker
	 * acts only on a delete it vouched for itself (worker/unlink_as.c).
	 */
	if (uid == 0 || uid == from->uid) {
		log_warnx("worker %d asked a delete on close as uid %u: refused",
		    (int)from->pid, (unsigned)uid);
		return 0;
	}
	sh = conf_share_find(master.conf, u.share);
	if (sh == NULL || sh->is_ipc || sh->path == NULL ||
	    strlen(sh->path) >= sizeof(u.root)) {
		log_warnx("delete on close of %s\\%s: no such share", u.share,
		    u.path);
		return 0;
	}
	/*
	 * A root made per tree connect (%U in the path, [homes]) is not
	 * the master's to know: the file is left, as for a missing share.
	 */
	if (sh->path_varies || sh->is_homes) {
		log_warnx("delete on close of %s\\%s as uid %u: the share's "
		    "path is made per user: the file is left", u.share, u.path,
		    (unsigned)uid);
		return 0;
	}
	strcpy(u.root, sh->path);
	pw = getpwuid(uid);
	if (pw == NULL || (strcmp(pw->pw_name, master.conf->guest_account) != 0 &&
	    (master.passdb == NULL ||
	    passdb_foreach(master.passdb, route_uid_known, &uid) != 1))) {
		log_warnx("delete on close of %s\\%s: uid %u is no SMB user",
		    u.share, u.path, (unsigned)uid);
		return 0;
	}
	if ((n = unlinkmsg_encode(&u, 1, buf, sizeof(buf))) < 0) {
		log_warnx("delete on close of %s\\%s: too long", u.share, u.path);
		return 0;
	}
	/*
	 * Only a worker that vouched for the delete will act on it, and only
	 * a live one can have: every live worker of the user is told (one,
	 * usually), and none is started -- a fresh worker vouches for nothing.
	 */
	log_debug(2, "delete on close of %s\\%s: worker %d asks uid %u",
	    u.share, u.path, (int)from->pid, (unsigned)uid);
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		/* A retiring worker still holds what it vouched for. */
		if (c->pid > 0 && c->role == CHILD_WORKER &&
		    c->chan >= 0 && c->hello && c->uid == uid) {
			live++;
			if (spawn_forward(c, MSG_UNLINK_DO, 0, buf, (size_t)n,
			    -1) == 0)
				sent++;
		}
	}
	/* A drop was logged and counted by spawn_forward. */
	if (live == 0)
		log_warnx("delete on close of %s\\%s: no live worker of %s "
		    "(it vouched for the delete, if any, and is gone): the "
		    "file is left", u.share, u.path, pw->pw_name);
	return 0;
}
