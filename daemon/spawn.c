/*
 * The child table: fork + exec of gates and user workers with their channel
 * on fd MSG_CHILD_FD, the gate pool with respawn backoff, and the dispatch of
 * what children send.  A child that breaks the protocol is killed; the
 * master never trusts or dies on a child's message.
 */

/*
 * Forwarding never kills.
 *
 * - Forwarding never kills (daemon/spawn.c spawn_forward).  What one
 *   child asks the master to pass to another (MSG_CONN with the client
 *   socket, MSG_UNLINK_DO) goes into at most half of the receiver's
 *   channel buffer (SIOCOUTQ against SO_SNDBUF, SPAWN_FWD_SHARE); past
 *   that, or when the send fails, it is dropped and counted (child and
 *   master.fwd_dropped, usmbd_forward_dropped_total in usmbctl metrics,
 *   a log line for the first drop and every 64th); a dropped MSG_CONN is
 *   answered to the gate with STATUS_INSUFF_SERVER_RESOURCES.
 *   MSG_UNLINK_AS is rate-limited per sending worker (SPAWN_UNLINK_RATE
 *   20/s, burst 200) before the master looks at it.  SIGKILL is left
 *   only where the master's own message (spawn_send: a verdict,
 *   HANDOFF_DONE, MSG_NEW_CONN, a usmbctl request, reload, shutdown)
 *   cannot be queued: with forwards held to half the buffer only its own
 *   few messages fill the rest, so that child has stopped reading its
 *   channel and can no longer be handed connections, reloaded or
 *   stopped.  MSG_UNLINK_AS is not checked against the state's delete
 *   tokens: any worker can write those, so such a check would prove
 *   nothing; the guarantee is the receiving worker's own vouch table
 *   (worker/unlink_as.c), which no other process can
 *   write.
 */
#include "daemon/spawn.h"
#include "daemon/userlist.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "daemon/admreq.h"
#include "daemon/auth.h"
#include "daemon/auth_krb.h"
#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/listen.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msess.h"
#include "daemon/msg.h"
#include "daemon/route.h"
#include "daemon/statectl.h"
#include "proto/cur.h"
#include "shm/shm.h"
#include "worker/worker.h"

struct child spawn_children[SPAWN_MAX_CHILDREN];

/*
 * Gate respawn backoff: a gate that dies within SPAWN_FAST_DEATH_MS of its
 * start doubles the delay before the next gate (up to SPAWN_BACKOFF_MAX_MS),
 * so a gate that cannot start does not turn the master into a fork loop.
 */
#define SPAWN_FAST_DEATH_MS	1000
#define SPAWN_BACKOFF_MIN_MS	100
#define SPAWN_BACKOFF_MAX_MS	10000

static int	spawn_backoff_ms;
static int64_t	spawn_next_gate_ms;

static uint8_t	spawn_buf[MSG_BUF_SIZE];

static struct child *
spawn_slot(void)
{
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (spawn_children[i].pid == 0)
			return &spawn_children[i];
	return NULL;
}

/*
 * Sanitizer builds (tests only) keep the master's stderr in children, so
 * that an ASan or UBSan report of a child reaches the test's log.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_KEEP_STDERR	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_KEEP_STDERR	1
#endif
#endif
#ifndef SPAWN_KEEP_STDERR
#define SPAWN_KEEP_STDERR	0
#endif

/*
 * In the child, between fork and exec: the channel goes to fd 3 (and
 * extra, when not -1: the writer's listening socket, to SDW_LISTEN_FD),
 * nothing else of the master's survives, and the signals the master
 * blocked for its signalfd are unblocked again.  Standard input, output
 * and error become /dev/null: in the foreground the master's stderr is
 * the log, and a child logs through the master (daemon/log.h), never by
 * writing it.
 */
static void __attribute__((noreturn))
spawn_exec(int chan, int extra, char **argv)
{
	sigset_t none;
	int nul, fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* out of the way of the numbers taken below */
	if (extra >= 0 && (extra = fcntl(extra, F_DUPFD_CLOEXEC,
	    SDW_LISTEN_FD + 1)) < 0)
		_exit(127);
	nul = open("/dev/null", O_RDWR);
	if (nul < 0)
		_exit(127);
	for (fd = 0; fd <= (SPAWN_KEEP_STDERR ? 1 : 2); fd++)
		if (nul != fd && dup2(nul, fd) == -1)
			_exit(127);
	/* Not on the channel's number, which dup2 is about to take. */
	if (nul > 2 && nul != chan)
		close(nul);
	if (chan == MSG_CHILD_FD) {
		/* dup2 onto itself keeps CLOEXEC: clear it by hand. */
		if (fcntl(chan, F_SETFD, 0) == -1)
			_exit(127);
	} else if (dup2(chan, MSG_CHILD_FD) == -1)
		_exit(127);
	if (extra >= 0 && dup2(extra, SDW_LISTEN_FD) == -1)
		_exit(127);
	closefrom(extra >= 0 ? SDW_LISTEN_FD + 1 : MSG_CHILD_FD + 1);
	execv("/proc/self/exe", argv);
	_exit(127);
}

_Static_assert(CHILD_ROLES <= sizeof(master.child_starts) /
    sizeof(master.child_starts[0]), "master.child_starts by role");

static const char *
spawn_role_name_of(enum child_role role)
{
	switch (role) {
	case CHILD_GATE:	return "gate";
	case CHILD_WORKER:	return "worker";
	case CHILD_STATE:	return "state";
	case CHILD_SDW:		return "sdw";
	case CHILD_KRB:		return "krb";
	}
	return "?";
}

/* The writers' listening socket, made once (spawn_sdw_tick), or -1. */
static int	spawn_sdw_ls = -1;

static struct child *
spawn_child(enum child_role role, const char *user, uid_t uid, gid_t gid)
{
	char level[16], suid[16], sgid[16];
	char *argv[16];
	struct child *c;
	int sv[2], n = 0;
	pid_t pid;

	c = spawn_slot();
	if (c == NULL) {
		log_warnx("child table full (%d): not starting a %s",
		    SPAWN_MAX_CHILDREN, role == CHILD_GATE ? "gate" :
		    role == CHILD_WORKER ? "worker" : "state process");
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair");
		return NULL;
	}
	snprintf(level, sizeof(level), "%d", log_level);
	snprintf(suid, sizeof(suid), "%u", (unsigned)uid);
	snprintf(sgid, sizeof(sgid), "%u", (unsigned)gid);
	argv[n++] = "usmbd";
	argv[n++] = "--child";
	argv[n++] = (char *)spawn_role_name_of(role);
	if (role == CHILD_WORKER) {
		argv[n++] = "--user";
		argv[n++] = (char *)user;
		argv[n++] = "--uid";
		argv[n++] = suid;
		argv[n++] = "--gid";
		argv[n++] = sgid;
	}
	argv[n++] = "-s";
	argv[n++] = master.conf_path;
	argv[n++] = "-d";
	argv[n++] = level;
	if (master.foreground)
		argv[n++] = "-F";
	argv[n] = NULL;

	pid = fork();
	if (pid == -1) {
		log_warn("fork");
		close(sv[0]);
		close(sv[1]);
		return NULL;
	}
	if (pid == 0) {
		close(sv[0]);
		/*
		 * Its private mailbox (shm/wmsg.c), made here, still as root,
		 * so that it exists before the worker looks for it.  A
		 * failure shows there: a worker without one refuses to serve.
		 */
		if (role == CHILD_WORKER || role == CHILD_STATE)
			(void)shm_wmsg_prepare(master.conf->lock_dir, getpid(),
			    uid);
		spawn_exec(sv[1], role == CHILD_SDW ? spawn_sdw_ls : -1,
		    argv);
	}
	close(sv[1]);
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1 ||
	    master_ev_add(sv[0], MASTER_EV_CHILD, (uint32_t)(c - spawn_children),
	    EPOLLIN) != 0) {
		log_warn("channel of child %d", (int)pid);
		close(sv[0]);
		kill(pid, SIGKILL);
		/* Keep the slot until reap.c collects it. */
		memset(c, 0, sizeof(*c));
		c->pid = pid;
		c->role = role;
		c->chan = -1;
		c->dying = 1;
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->role = role;
	c->uid = uid;
	c->gid = gid;
	if (user != NULL)
		snprintf(c->user, sizeof(c->user), "%s", user);
	c->chan = sv[0];
	c->started = time(NULL);
	c->started_ms = master_now_ms();
	master.child_starts[role]++;
	log_debug(2, "started %s%s%s pid %d", spawn_role_name(c),
	    user != NULL ? " " : "", user != NULL ? user : "", (int)pid);
	return c;
}

struct child *
spawn_gate(void)
{
	return spawn_child(CHILD_GATE, NULL, 0, 0);
}

struct child *
spawn_worker(const char *user, uid_t uid, gid_t gid)
{
	if (uid == 0) {
		log_warnx("refusing a worker for %s with uid 0", user);
		return NULL;
	}
	return spawn_child(CHILD_WORKER, user, uid, gid);
}

/*
 * The descriptor writer (worker/sdw.h): one, started with the gates and
 * again at once after it died (at most once a second).  The master binds
 * its listening socket once and hands the same one to every writer
 * (SDW_LISTEN_FD), so no writer's death or replacement leaves a gap: a
 * worker's connect waits in the backlog for the next writer and its
 * request is served when that one starts (the worker waits for an answer
 * up to SDW_TIMEOUT_MS).  It cannot read a new config (its allow-list
 * opens no file), so a reload replaces it: the old one is marked retiring
 * and keeps serving, the next tick starts its successor on the same
 * socket, and only the successor's hello ends the old one
 * (spawn_sdw_hello).  A worker whose connection a writer closes (or
 * loses, killed) connects again and retries its request once
 * (worker/sdw_client.c).
 */
static int64_t	spawn_next_sdw_ms;

static void
spawn_sdw_tick(int64_t now)
{
	int i;

	if (master.shutting_down || now < spawn_next_sdw_ms)
		return;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (spawn_children[i].pid > 0 &&
		    spawn_children[i].role == CHILD_SDW &&
		    !spawn_children[i].dying && !spawn_children[i].retiring)
			return;
	spawn_next_sdw_ms = now + 1000;
	if (spawn_sdw_ls < 0 &&
	    (spawn_sdw_ls = sdw_listen_socket(master.conf->lock_dir)) < 0) {
		/* the writer binds one itself, as a gap-prone fallback */
		errno = -spawn_sdw_ls;
		log_warn("descriptor writer's socket in %s",
		    master.conf->lock_dir);
		spawn_sdw_ls = -1;
	}
	(void)spawn_child(CHILD_SDW, NULL, 0, 0);
}

/* A writer said hello: the socket's name is its now; retire the others. */
static void
spawn_sdw_hello(const struct child *c)
{
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *o = &spawn_children[i];

		if (o == c || o->pid <= 0 || o->role != CHILD_SDW ||
		    !o->retiring || o->dying)
			continue;
		o->dying = 1;
		o->stopping = 1;
		(void)spawn_send(o, MSG_SHUTDOWN, 0, NULL, 0);
	}
}

/*
 * The ticket helper (worker/krb.c): one while a keytab is configured,
 * started with the gates and again at most once a second after it died;
 * a reload that turns Kerberos off ends it.
 */
static int64_t	spawn_next_krb_ms;

static void
spawn_krb_tick(int64_t now)
{
	int want = conf_keytab_path(master.conf) != NULL, i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid <= 0 || c->role != CHILD_KRB || c->dying)
			continue;
		if (!want) {
			c->stopping = 1;	/* asked for: not a death */
			spawn_kill(c, "Kerberos is off");
		}
		return;
	}
	if (!want || master.shutting_down || now < spawn_next_krb_ms)
		return;
	spawn_next_krb_ms = now + 1000;
	(void)spawn_child(CHILD_KRB, NULL, 0, 0);
}

struct child *
spawn_state(uid_t uid, gid_t gid)
{
	return spawn_child(CHILD_STATE, NULL, uid, gid);
}

const char *
spawn_role_name(const struct child *c)
{
	return spawn_role_name_of(c->role);
}

struct child *
spawn_find(pid_t pid)
{
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (spawn_children[i].pid == pid)
			return &spawn_children[i];
	return NULL;
}

struct child *
spawn_ready_gate(void)
{
	struct child *best = NULL;
	int i;

	/* The most room first: the load spreads over the gates. */
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->role == CHILD_GATE && c->credits > 0 &&
		    !c->dying && !c->retiring && c->chan >= 0 &&
		    (best == NULL || c->credits > best->credits))
			best = c;
	}
	return best;
}

int
spawn_count_alive(void)
{
	int i, n = 0;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (spawn_children[i].pid > 0)
			n++;
	return n;
}

static void
spawn_close_chan(struct child *c)
{
	if (c->chan >= 0) {
		master_ev_del(c->chan);
		close(c->chan);
		c->chan = -1;
	}
	c->ready = 0;
	c->credits = 0;
}

void
spawn_kill(struct child *c, const char *why)
{
	if (c->pid <= 0)
		return;
	log_warnx("killing %s %d%s%s: %s", spawn_role_name(c),
	    (int)c->pid, c->user[0] ? " " : "", c->user, why);
	spawn_close_chan(c);
	c->dying = 1;
	kill(c->pid, SIGKILL);
	route_child_gone(c);
}

int
spawn_send(struct child *c, uint32_t type, uint32_t id, const void *payload,
    size_t len)
{
	int rc;

	if (c->chan < 0)
		return -EPIPE;
	rc = msg_send(c->chan, type, id, payload, len, -1);
	if (rc != 0) {
		char why[64];

		/* A full channel means the child stopped reading: drop it. */
		snprintf(why, sizeof(why), "cannot send message %u: %s", type,
		    strerror(-rc));
		spawn_kill(c, why);
	}
	return rc;
}

int
spawn_forward(struct child *c, uint32_t type, uint32_t id, const void *payload,
    size_t len, int fd)
{
	int queued = 0, sndbuf = 0, rc;
	socklen_t sl = sizeof(sndbuf);

	if (c->chan < 0 || c->dying)
		return -EPIPE;
	/*
	 * What one child asks another to get goes only into a share of that
	 * child's channel, so that a flood through the master can neither
	 * crowd out the master's own messages (spawn_send kills when those
	 * cannot be queued) nor get anyone killed.
	 */
	if (ioctl(c->chan, SIOCOUTQ, &queued) == -1 ||
	    getsockopt(c->chan, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) == -1)
		rc = -errno;
	else if (queued > sndbuf / SPAWN_FWD_SHARE)
		rc = -ENOBUFS;
	else
		rc = msg_send(c->chan, type, id, payload, len, fd);
	if (rc == 0)
		return 0;
	c->fwd_dropped++;
	master.fwd_dropped++;
	/* The first drop for a child and then one in 64: bounded, yet seen. */
	if ((c->fwd_dropped & 63) == 1)
		log_warnx("message %u for %s %d%s%s dropped: %s (%llu so far)",
		    type, spawn_role_name(c),
		    (int)c->pid, c->user[0] ? " " : "", c->user,
		    rc == -ENOBUFS || rc == -EAGAIN ? "its channel is full" :
		    strerror(-rc), (unsigned long long)c->fwd_dropped);
	return rc;
}

void
spawn_broadcast(uint32_t type)
{
	uint8_t drain[4];
	int i;

	le32_put(drain, 1);
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		/*
		 * A gate is confined to the files it had open when it started
		 * (worker/confine.c): it cannot read a new config.  It is
		 * replaced instead -- retired as after its last connection,
		 * its logins in flight finish under the old config, and the
		 * next tick starts gates that load the new one.
		 */
		if (type == MSG_RELOAD && c->pid > 0 && c->role == CHILD_GATE) {
			if (c->dying || c->retiring || c->chan < 0)
				continue;
			c->retiring = 1;
			c->stopping = 1;
			c->credits = 0;
			c->ready = 0;
			(void)spawn_send(c, MSG_SHUTDOWN, 0, drain, sizeof(drain));
			continue;
		}
		/* The writer is replaced: spawn_sdw_tick, spawn_sdw_hello. */
		if (type == MSG_RELOAD && c->pid > 0 && c->role == CHILD_SDW) {
			if (!c->dying)
				c->retiring = 1;
			spawn_next_sdw_ms = 0;
			continue;
		}
		/* The ticket helper reads no config: it gets the keytab again. */
		if (type == MSG_RELOAD && c->pid > 0 && c->role == CHILD_KRB) {
			if (!c->dying && c->hello && c->chan >= 0)
				auth_krb_keytab(c);
			continue;
		}
		/*
		 * Accounts added or removed since (usmbctl user add), ahead
		 * of the reload: a worker the reload ends (an IPC$-only one)
		 * reads it first, rather than leave it unread behind the
		 * reload, which resets our end and loses its last lines.
		 */
		if (type == MSG_RELOAD && c->pid > 0 && c->chan >= 0 &&
		    c->role == CHILD_WORKER && c->hello && !c->dying)
			(void)userlist_send(c);
		if (c->pid > 0 && c->chan >= 0)
			(void)spawn_send(c, type, 0, NULL, 0);
		if (type == MSG_SHUTDOWN && c->pid > 0) {
			c->dying = 1;
			c->stopping = 1;
			c->ready = 0;
			c->credits = 0;
		}
	}
}

void
spawn_child_gone(struct child *c)
{
	int64_t lived = master_now_ms() - c->started_ms;

	spawn_close_chan(c);
	route_child_gone(c);
	/* the state process answers NetrFileClose too (its durable opens) */
	if (c->role == CHILD_WORKER || c->role == CHILD_STATE)
		admreq_child_gone(c->pid);
	if (c->role == CHILD_GATE && !master.shutting_down) {
		/* An unasked-for death right after start: do not fork-loop. */
		if (lived < SPAWN_FAST_DEATH_MS && !c->stopping) {
			spawn_backoff_ms = spawn_backoff_ms == 0 ?
			    SPAWN_BACKOFF_MIN_MS : spawn_backoff_ms * 2;
			if (spawn_backoff_ms > SPAWN_BACKOFF_MAX_MS)
				spawn_backoff_ms = SPAWN_BACKOFF_MAX_MS;
			spawn_next_gate_ms = master_now_ms() + spawn_backoff_ms;
			log_warnx("gate %d lived %lld ms: next gate in %d ms",
			    (int)c->pid, (long long)lived, spawn_backoff_ms);
		} else if (lived >= SPAWN_FAST_DEATH_MS)
			spawn_backoff_ms = 0;
	}
	memset(c, 0, sizeof(*c));
	c->chan = -1;
}

/*
 * Gates that count toward the pool: alive and not on their way out (a
 * retiring gate still finishes its logins, but its replacement starts now).
 */
static int
spawn_pool_size(void)
{
	int i, n = 0;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->role == CHILD_GATE && !c->dying &&
		    !c->retiring)
			n++;
	}
	return n;
}

void
spawn_tick(void)
{
	int64_t now = master_now_ms();
	int want = listen_gate_target(), have, i;

	/* A child that never says hello is stuck (or not ours): drop it. */
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && !c->hello && !c->dying &&
		    now - c->started_ms > SPAWN_HELLO_TIMEOUT * 1000)
			spawn_kill(c, "no hello");
	}
	have = spawn_pool_size();
	/* The pool shrank on reload: retire idle gates beyond it. */
	for (i = 0; i < SPAWN_MAX_CHILDREN && have > want; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->role == CHILD_GATE && !c->dying &&
		    !c->retiring && c->hello && c->active == 0) {
			c->dying = 1;
			c->stopping = 1;
			c->ready = 0;
			c->credits = 0;
			(void)spawn_send(c, MSG_SHUTDOWN, 0, NULL, 0);
			have--;
		}
	}
	spawn_sdw_tick(now);
	spawn_krb_tick(now);
	if (now < spawn_next_gate_ms)
		return;
	for (; have < want; have++) {
		if (spawn_gate() == NULL)
			break;
		/* While backing off, start one gate per delay. */
		if (spawn_backoff_ms > 0) {
			spawn_next_gate_ms = now + spawn_backoff_ms;
			break;
		}
	}
}

int
spawn_timeout_ms(void)
{
	int64_t now = master_now_ms();

	if (spawn_pool_size() < listen_gate_target() &&
	    spawn_next_gate_ms > now)
		return (int)(spawn_next_gate_ms - now);
	return -1;
}

/*
 * A child's MSG_LOG: written under the tag the master knows the child by
 * (its role and, for a worker, the user it started it for), never one the
 * child chose; log_emit escapes the text.
 */
static void
spawn_log_line(const struct child *c, int prio, const char *text, size_t len)
{
	char tag[AUTH_NAME_MAX + 16];

	if (c->role == CHILD_GATE)
		snprintf(tag, sizeof(tag), "gate");
	else if (c->role == CHILD_STATE)
		snprintf(tag, sizeof(tag), "state");
	else if (c->role == CHILD_KRB || c->role == CHILD_SDW)
		snprintf(tag, sizeof(tag), "%s", spawn_role_name_of(c->role));
	else
		snprintf(tag, sizeof(tag), "worker %s", c->user);
	log_emit(prio, tag, (int)c->pid, text, len);
}

/* MSG_HELLO: the role it was started as, once; 0 or -1. */
static int
spawn_hello(struct child *c, const struct msg *m)
{
	uint32_t want = c->role == CHILD_GATE ? MSG_ROLE_GATE :
	    c->role == CHILD_WORKER ? MSG_ROLE_WORKER :
	    c->role == CHILD_STATE ? MSG_ROLE_STATE :
	    c->role == CHILD_KRB ? MSG_ROLE_KRB : MSG_ROLE_SDW;
	struct cur cur;
	uint32_t role;

	cur_init(&cur, m->payload, m->len);
	role = cur_le32(&cur);
	if (cur.err || cur_left(&cur) != 0 || role != want || c->hello)
		return -1;
	c->hello = 1;
	if (c->role == CHILD_WORKER) {
		/* before its first connection: samr lists these accounts */
		(void)userlist_send(c);
		route_worker_hello(c);
	}
	else if (c->role == CHILD_STATE)
		statectl_hello(c);
	else if (c->role == CHILD_KRB)
		auth_krb_keytab(c);
	else if (c->role == CHILD_SDW)
		spawn_sdw_hello(c);
	return 0;
}

/* MSG_SESSION_UP / MSG_SESSION_DOWN: u64 session id, into daemon/msess.c. */
static int
spawn_session_msg(struct child *c, const struct msg *m)
{
	struct cur cur;
	uint64_t sid;
	int rc;

	cur_init(&cur, m->payload, m->len);
	sid = cur_le64(&cur);
	if (c->role != CHILD_WORKER || cur.err || cur_left(&cur) != 0)
		return -1;
	if (m->type == MSG_SESSION_DOWN) {
		msess_down(c->pid, sid, &c->nsess);
		return 0;
	}
	if ((rc = msess_up(c->pid, c->uid, sid, &c->nsess)) != 0)
		log_warnx("worker %d (uid %u): session %llx not recorded: %s",
		    (int)c->pid, (unsigned)c->uid, (unsigned long long)sid,
		    rc == -EEXIST ? "another worker's id, session ended" :
		    strerror(-rc));
	/*
	 * Ids are unique in the state env, but an IPC$-only worker has none
	 * (worker/user.c user_worker_ipc_only): this table is what its ids
	 * meet.  The first to announce keeps an id; the other session ends
	 * (id 0: nobody waits for the count), as a collision in the state
	 * env costs the connection that came second.
	 */
	if (rc == -EEXIST)
		(void)spawn_send(c, MSG_KILL_SESSION, 0, m->payload, 8);
	return 0;
}

/* Handles one message; returns -1 when the child was killed. */
static int
spawn_dispatch(struct child *c, const struct msg *m)
{
	const char *bad = NULL;
	struct cur cur;

	/* Only MSG_HANDOFF, MSG_HANDOFF_BIND, MSG_RELAY(_PEER) carry an fd. */
	if (m->fd >= 0 && m->type != MSG_HANDOFF && m->type != MSG_HANDOFF_BIND &&
	    m->type != MSG_RELAY && m->type != MSG_RELAY_PEER) {
		close(m->fd);
		bad = "unexpected fd";
		goto out;
	}
	/* A child may log before it is set up (its privilege drop, say). */
	if (!c->hello && m->type != MSG_HELLO && m->type != MSG_LOG) {
		bad = "message before hello";
		goto out;
	}
	cur_init(&cur, m->payload, m->len);
	switch (m->type) {
	case MSG_HELLO:
		if (spawn_hello(c, m) != 0)
			bad = "bad hello";
		break;
	case MSG_GATE_READY: {
		/* Credits: none = one more connection, else u32 n more. */
		uint32_t n = m->len == 0 ? 1 : cur_le32(&cur);

		if (c->role != CHILD_GATE || cur.err || cur_left(&cur) != 0 ||
		    n > SPAWN_GATE_MAX_CREDITS - c->credits) {
			bad = "bad MSG_GATE_READY";
			break;
		}
		if (c->dying || c->retiring)
			break;
		c->credits += n;
		c->ready = c->credits > 0;
		break;
	}
	case MSG_GATE_CONN_END: {
		/* Empty, or u32 1: it went to a worker for a binding. */
		uint32_t to_bind = m->len == 0 ? 0 : cur_le32(&cur);

		if (c->role != CHILD_GATE || cur.err || cur_left(&cur) != 0 ||
		    to_bind > 1) {
			bad = "bad MSG_GATE_CONN_END";
			break;
		}
		listen_conn_end(c, m->id, (int)to_bind);
		break;
	}
	case MSG_GATE_RETIRE: {
		uint8_t drain[4];

		if (c->role != CHILD_GATE || m->len != 0 || c->retiring) {
			bad = "bad MSG_GATE_RETIRE";
			break;
		}
		/*
		 * Its replacement starts at the next tick; it finishes the
		 * logins it holds.  Messages in the channel are ordered, so
		 * after this MSG_SHUTDOWN no connection reaches it.
		 */
		log_debug(2, "gate %d retiring after %u connections",
		    (int)c->pid, c->nconn);
		c->retiring = 1;
		c->stopping = 1;
		c->credits = 0;
		c->ready = 0;
		le32_put(drain, 1);
		if (spawn_send(c, MSG_SHUTDOWN, 0, drain, sizeof(drain)) != 0)
			return -1;
		break;
	}
	case MSG_AUTH_REQ:
		/* Only gates and workers authenticate anyone. */
		if (c->role != CHILD_GATE && c->role != CHILD_WORKER) {
			bad = "bad MSG_AUTH_REQ";
			break;
		}
		auth_handle_req(c, m);
		break;
	case MSG_HANDOFF:
	case MSG_RELAY:		/* a worker's: another user on its connection */
	case MSG_RELAY_PEER:	/* a worker's, ahead of its MSG_RELAY */
		if (route_socket_msg(c, m) != 0)
			bad = "bad MSG_HANDOFF or MSG_RELAY(_PEER)";
		break;
	case MSG_HANDOFF_BIND:
		if (c->role != CHILD_GATE || m->fd < 0 || m->len < 8) {
			if (m->fd >= 0)
				close(m->fd);
			bad = "bad MSG_HANDOFF_BIND";
			break;
		}
		route_handoff_bind(c, m);
		break;
	case MSG_BIND_CHECK:		/* a gate's */
	case MSG_BIND_CHECK_REP:	/* a worker's */
		if (route_bind_check_msg(c, m) != 0)
			bad = "bad MSG_BIND_CHECK or MSG_BIND_CHECK_REP";
		break;
	case MSG_UNLINK_AS:
		if (c->role != CHILD_WORKER) {
			bad = "bad MSG_UNLINK_AS";
			break;
		}
		/* Over its rate: dropped before the master looks at it. */
		if (!spawn_bucket_take(&c->unlink_rate, SPAWN_UNLINK_RATE,
		    SPAWN_UNLINK_BURST, master_now_ms())) {
			master.fwd_dropped++;
			spawn_bucket_report(c, &c->unlink_rate,
			    "delete-on-close requests (MSG_UNLINK_AS)",
			    SPAWN_UNLINK_RATE, master_now_ms());
			break;
		}
		if (route_unlink_as(c, m) != 0)
			bad = "bad MSG_UNLINK_AS";
		break;
	case MSG_SESSION_UP:
	case MSG_SESSION_DOWN:
		if (spawn_session_msg(c, m) != 0)
			bad = "bad MSG_SESSION_UP/DOWN";
		break;
	case MSG_LOG: {
		int prio = m->len > 0 ? m->payload[0] : -1;

		if (prio < LOG_EMERG || prio > LOG_DEBUG) {
			bad = "bad MSG_LOG";
			break;
		}
		if (!spawn_bucket_take(&c->log_rate, SPAWN_LOG_RATE,
		    SPAWN_LOG_BURST, master_now_ms())) {
			master.log_dropped++;
			spawn_bucket_report(c, &c->log_rate, "log lines",
			    SPAWN_LOG_RATE, master_now_ms());
			break;
		}
		spawn_log_line(c, prio, (const char *)m->payload + 1, m->len - 1);
		break;
	}
	case MSG_CONN_ACK:
		if (c->role != CHILD_WORKER || m->len != 0) {
			bad = "bad MSG_CONN_ACK";
			break;
		}
		route_conn_ack(c, m->id);
		break;
	case MSG_CONN_COUNT: {
		uint32_t n = cur_le32(&cur);

		if (c->role != CHILD_WORKER || cur.err || cur_left(&cur) != 0) {
			bad = "bad MSG_CONN_COUNT";
			break;
		}
		c->nconn = n;
		break;
	}
	case MSG_ADMIN_REQ:	/* a worker's NetrFileClose/NetrSessionDel */
		if (admreq_handle(c, m) != 0)
			bad = "bad MSG_ADMIN_REQ";
		break;
	case MSG_CTL_DONE:
		if (admreq_reply(c, m))
			break;
		/* FALLTHROUGH */
	case MSG_PONG:
	case MSG_INFO_REP:
	case MSG_METRICS_REP:
		/* Answers to usmbctl queries; daemon/ctl.c checks who asked. */
		ctl_child_reply(c, m);
		break;
	case MSG_STATE_COUNTS:
	case MSG_STATE_WRITER:
		if (c->role != CHILD_STATE || (m->type == MSG_STATE_COUNTS ?
		    statectl_counts_msg(m) : statectl_writer_msg(m)) != 0)
			bad = "bad MSG_STATE_COUNTS/WRITER";
		break;
	case MSG_KRB_REP:
		if (c->role != CHILD_KRB || auth_krb_rep(c, m) != 0)
			bad = "bad MSG_KRB_REP";
		break;
	case MSG_STATUS_REP:
		/* The master does not ask yet; an answer is harmless. */
		log_debug(3, "status reply from %d ignored", (int)c->pid);
		break;
	default:
		bad = "unknown message type";
		break;
	}
out:
	if (bad != NULL) {
		char why[96];

		snprintf(why, sizeof(why), "%s (type %u, %u bytes)", bad,
		    m->type, m->len);
		spawn_kill(c, why);
		return -1;
	}
	return 0;
}

void
spawn_child_event(struct child *c)
{
	struct msg m;
	int i, rc;

	/* Bounded per wake-up so one chatty child cannot starve the rest. */
	for (i = 0; i < 32 && c->pid > 0 && c->chan >= 0; i++) {
		rc = msg_recv(c->chan, &m, spawn_buf, sizeof(spawn_buf));
		if (rc == -EAGAIN)
			return;
		if (rc == -EPIPE) {
			/* It exited or is exiting; reap.c logs how. */
			log_debug(2, "child %d closed its channel", (int)c->pid);
			spawn_close_chan(c);
			route_child_gone(c);
			return;
		}
		if (rc != 0) {
			spawn_kill(c, rc == -EBADMSG ? "malformed message" :
			    strerror(-rc));
			return;
		}
		if (spawn_dispatch(c, &m) != 0)
			return;
	}
}
