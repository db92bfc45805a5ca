/*
 * The state process: the one child that maps the shared state for the
 * master, so that the root process maps nothing a worker can write
 * (HACKING.md, "The state process").  It runs as its own account in the
 * state group, confined like a worker, and does what the master used to
 * do in the env:
 *
 *  - makes the databases in the files the master created (SHM_INIT) and
 *    walks them once before saying hello: an env that crashes us or that
 *    LMDB refuses never gets as far as serving;
 *  - purges what a dead child left (MSG_STATE_PURGE) and wakes the lock
 *    waiters;
 *  - expires durable opens past their timeout (its own 5 s tick);
 *  - answers `usmbctl status` (MSG_INFO_REQ) and sends its counts for
 *    `usmbctl metrics` every few seconds (MSG_STATE_COUNTS);
 *  - watches the writer lock from a second thread that never touches
 *    LMDB's locks, and tells the master of a process that holds it too
 *    long (MSG_STATE_WRITER): the master checks that process in /proc
 *    and kills it if it is stopped or wedged.
 *
 * Nothing the master does waits for it: a purge is sent and forgotten, a
 * status asks it like any child, with a deadline.
 */

/*
 * What it does, in detail.
 *
 * - Start: attaches with SHM_INIT (makes the databases in the master's
 *   empty files, or keeps those it finds after a restart, and the id
 *   counter), walks sessions, opens and locks once, then says hello.
 *   LMDB trusts its file, so an env rewritten by a compromised worker
 *   crashes or fails here, before anything depends on it.
 * - MSG_STATE_PURGE (u32 dead pid + the live workers' pids, for a wake
 *   set that overflowed): shm_purge_worker, wake the waiters, clear the
 *   writer-lock record if it names the dead pid.  The master queues
 *   purges (daemon/statectl.c, up to 1,024, oldest dropped with a log
 *   line) and sends them with a plain non-blocking send when the state
 *   process is up: a full channel keeps them queued; it kills no one.
 * - Durable expiry on its own 5 s tick (shm_expire_durable).
 * - MSG_ADMIN_DO (an administrator's NetrFileClose or `usmbctl
 *   close-file`, sent here as to every worker): the disconnected durable
 *   opens of that FileId end as at expiry (worker/statep_close.c),
 *   answered MSG_CTL_DONE with their count.
 * - MSG_INFO_REQ (status): one MSG_INFO_REP with its own record format
 *   (daemon/statemsg.h: sessions, opens -- with share and path from the
 *   durable record for disconnected ones -- and locks; cut short at 64
 *   KiB and marked so).  daemon/ctl_info.c joins it with the workers'
 *   reports. It is asked like a worker, with the same 2 s deadline:
 *   silence is "# state busy" (JSON "state": "busy"), never a wait;
 *   "down" while it restarts.  usmbctl ping never involves it.
 * - Every 2 s: MSG_STATE_COUNTS (sessions, opens, locks, map bytes) for
 *   usmbctl metrics; the master shows -1 for counts older than 10 s.
 *   The same walk checks the env: any error of a read-only walk (a
 *   rewritten meta page shows as MDB_MAP_RESIZED forever; MDB_CORRUPTED,
 *   MDB_PAGE_NOTFOUND...) or of a purge or expiry that LMDB calls
 *   corrupt makes it exit with status 3.
 * - The writer-lock watchdog (issue 20): a second thread, which never
 *   touches LMDB's locks, reads the holder record every 250 ms (daemon/statectl.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "daemon/statemsg.h"
#include "proto/cur.h"
#include "shm/shm.h"
#include "worker/confine.h"
#include "worker/statep_close.h"
#include "worker/worker.h"

#define STATEP_TICK_MS		1000
#define STATEP_EXPIRE_MS	5000
/* The writer lock held this long by one transaction is worth a report. */
#define STATEP_WRITER_REPORT_MS	1000
#define STATEP_WATCH_MS		250
/* envs the watchdog watches: the main one and up to 64 data envs */
#define STATEP_ENVS_MAX		65
/* Disconnected opens whose share and path a status looks up. */
#define STATEP_NAMES_MAX	256
/* The state process could not open or walk its env: see reap.c. */
#define STATEP_EXIT_BAD_ENV	3

static struct {
	struct shm	*shm;
	struct shm_wmsg	*wmsg;
	int		 chan;
	int		 shutdown;
	uint64_t	 last_expire;
	uint64_t	 last_counts;
} sp;

static uint8_t	statep_in[MSG_BUF_SIZE];
static uint8_t	statep_out[MSG_MAX_PAYLOAD];

/*
 * LMDB found its file inconsistent (shm_err maps MDB_CORRUPTED,
 * MDB_PAGE_NOTFOUND, MDB_INVALID and the like to -EIO): the env is not
 * ours to repair.  Exiting says so to the master, which restarts us and,
 * the second time, starts a fresh env (daemon/statectl.c).
 */
static void
statep_check(int rc, const char *what)
{
	if (rc != -EIO)
		return;
	log_warnx("state: the state env is corrupt (%s): exiting", what);
	exit(STATEP_EXIT_BAD_ENV);
}

static void
statep_send(uint32_t type, uint32_t id, const void *p, size_t len)
{
	int rc = msg_send(sp.chan, type, id, p, len, -1);

	if (rc != 0 && rc != -EAGAIN) {
		/* The master is gone: nothing left to do for it. */
		sp.shutdown = 1;
	}
}

/* Lock waiters retry; an overflowing wake set wakes every live worker. */
static void
statep_wake(const struct shm_pids *wake, const struct statemsg_purge *live)
{
	struct shm_pids all;
	unsigned i;

	if (sp.wmsg == NULL || (wake->n == 0 && !wake->overflow))
		return;
	if (!wake->overflow || live == NULL) {
		if (shm_wmsg_wake(sp.wmsg, wake, NULL) != 0)
			log_warnx("state: could not wake every lock waiter");
		return;
	}
	memset(&all, 0, sizeof(all));
	for (i = 0; i < live->nlive; i++) {
		all.pid[all.n++] = (pid_t)live->live[i];
		if (all.n == SHM_PIDS_MAX || i + 1 == live->nlive) {
			if (shm_wmsg_wake(sp.wmsg, &all, NULL) != 0)
				log_warnx("state: could not wake every lock waiter");
			all.n = 0;
		}
	}
}

static void
statep_purge(const struct msg *m)
{
	static struct statemsg_purge p;
	struct shm_purge_result r;
	int rc;

	if (statemsg_purge_decode(&p, m->payload, m->len) != 0 || p.pid == 0) {
		log_warnx("state: malformed purge request ignored");
		return;
	}
	memset(&r, 0, sizeof(r));
	rc = shm_purge_worker(sp.shm, (pid_t)p.pid, &r);
	statep_check(rc, "purge");
	if (rc != 0) {
		errno = -rc;
		log_warn("state: purge of %u failed", p.pid);
		return;
	}
	/* A holder that died in its transaction leaves its record behind. */
	shm_writer_forget(sp.shm, (pid_t)p.pid);
	statep_wake(&r.wake, &p);
}

static void
statep_expire(uint64_t now)
{
	struct shm_pids wake;
	unsigned n = 0;
	int rc;

	if (now - sp.last_expire < STATEP_EXPIRE_MS)
		return;
	sp.last_expire = now;
	memset(&wake, 0, sizeof(wake));
	rc = shm_expire_durable(sp.shm, now, &n, &wake);
	statep_check(rc, "durable expiry");
	if (rc != 0 || n == 0)
		return;
	log_info("state: %u durable open(s) expired", n);
	statep_wake(&wake, NULL);
}

/*
 * MSG_ADMIN_DO from the master (an administrator's NetrFileClose or
 * `usmbctl close-file`): the disconnected durable opens of that FileId
 * end as at their expiry.  Answered MSG_CTL_DONE with how many, always
 * (0 for another op or a malformed payload), so the master's wait ends.
 */
static void
statep_admin_do(const struct msg *m)
{
	struct admmsg_req r;
	struct shm_pids wake;
	unsigned n = 0;
	uint8_t p[4];
	int rc;

	if (admmsg_decode(&r, m->payload, m->len) == 0 &&
	    r.op == ADMMSG_FILE_CLOSE) {
		rc = statep_close_file_id(sp.shm, r.file_id, &n, &wake);
		statep_check(rc, "close of a durable open");
		if (rc != 0) {
			errno = -rc;
			log_warn("state: close of FileId %u", r.file_id);
		}
		if (n > 0) {
			log_info("state: %u disconnected durable open(s) of "
			    "FileId %u closed by an administrator", n,
			    r.file_id);
			statep_wake(&wake, NULL);
		}
	}
	le32_put(p, n);
	statep_send(MSG_CTL_DONE, m->id, p, sizeof(p));
}

/* ---- counts and status ---- */

static int
statep_count_session(const struct shm_session_rec *r, void *arg)
{
	(void)r;
	((struct statemsg_counts *)arg)->sessions++;
	return 0;
}

static int
statep_count_open(const struct shm_file_id *fid, const struct shm_open_rec *r,
    void *arg)
{
	(void)fid;
	(void)r;
	((struct statemsg_counts *)arg)->opens++;
	return 0;
}

static int
statep_count_lock(const struct shm_file_id *fid,
    const struct shm_brlock_rec *r, void *arg)
{
	(void)fid;
	(void)r;
	((struct statemsg_counts *)arg)->locks++;
	return 0;
}

/*
 * Walks every record of the databases a status shows.  At start it is
 * the check that the env can be read at all: LMDB trusts its file, so a
 * rewritten page may crash us here, before hello, where a crash is cheap.
 */
static int
statep_walk_counts(struct statemsg_counts *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = shm_check_names(sp.shm)) < 0 ||
	    (rc = shm_foreach_session(sp.shm, statep_count_session, c)) < 0 ||
	    (rc = shm_foreach_open(sp.shm, statep_count_open, c)) < 0 ||
	    (rc = shm_foreach_brlock(sp.shm, statep_count_lock, c)) < 0)
		return rc;
	c->map_bytes = shm_map_size(sp.shm);
	return 0;
}

static void
statep_counts(uint64_t now)
{
	struct statemsg_counts c;
	uint8_t buf[64];
	int n, rc;

	if (now - sp.last_counts < STATEMSG_COUNTS_MS)
		return;
	sp.last_counts = now;
	/*
	 * A read-only walk of a sound env does not fail (a rewritten meta
	 * page shows as MDB_MAP_RESIZED forever, say): any error but memory
	 * is the env's.
	 */
	if ((rc = statep_walk_counts(&c)) != 0) {
		statep_check(rc == -ENOMEM ? rc : -EIO, "walk");
		return;
	}
	if ((n = statemsg_counts_encode(&c, buf, sizeof(buf))) > 0)
		statep_send(MSG_STATE_COUNTS, 0, buf, (size_t)n);
}

struct statep_info {
	struct statemsg_info_enc enc;
	uint64_t	names[STATEP_NAMES_MAX];	/* disconnected opens */
	struct statemsg_open name_open[STATEP_NAMES_MAX];
	unsigned	nnames;
};

static int
statep_info_session(const struct shm_session_rec *r, void *arg)
{
	struct statep_info *in = arg;
	struct statemsg_sess s;

	memset(&s, 0, sizeof(s));
	s.id = r->session_id;
	s.pid = (uint32_t)r->pid;
	s.uid = (uint32_t)r->uid;
	snprintf(s.user, sizeof(s.user), "%s", r->user);
	snprintf(s.addr, sizeof(s.addr), "%s", r->client_addr);
	s.dialect = r->dialect;
	s.signing = r->signing;
	s.encryption = r->encryption;
	s.since = r->since;
	(void)statemsg_info_sess(&in->enc, &s);
	return 0;
}

static int
statep_info_open(const struct shm_file_id *fid, const struct shm_open_rec *r,
    void *arg)
{
	struct statep_info *in = arg;
	struct statemsg_open o;

	memset(&o, 0, sizeof(o));
	o.dev = fid->dev;
	o.ino = fid->ino;
	o.pers = r->persistent_id;
	o.pid = (uint32_t)r->pid;
	o.sid = r->session_id;
	o.access = r->access;
	o.share_access = r->share_access;
	o.oplock = r->oplock_level;
	o.lease_state = r->lease_state;
	o.flags = r->flags;
	o.since = r->opened;
	/*
	 * No worker reports a disconnected durable open: its share and path
	 * come from its durable record, read after the walk (a callback
	 * may not call shm/).
	 */
	if ((r->flags & SHM_OPEN_DISCONNECTED) && in->nnames < STATEP_NAMES_MAX) {
		in->name_open[in->nnames] = o;
		in->names[in->nnames++] = r->persistent_id;
		return 0;
	}
	(void)statemsg_info_open(&in->enc, &o);
	return 0;
}

static int
statep_info_lock(const struct shm_file_id *fid, const struct shm_brlock_rec *r,
    void *arg)
{
	struct statep_info *in = arg;
	struct statemsg_lock l;

	memset(&l, 0, sizeof(l));
	l.dev = fid->dev;
	l.ino = fid->ino;
	l.pid = (uint32_t)r->owner.pid;
	l.pers = r->owner.persistent_id;
	l.offset = r->offset;
	l.length = r->length;
	l.exclusive = r->exclusive ? 1 : 0;
	(void)statemsg_info_lock(&in->enc, &l);
	return 0;
}

/* Whether each durable record's open is durable or resilient, its timeout. */
static int
statep_info_durable(const struct shm_durable_rec *r, void *arg)
{
	struct statep_info *in = arg;
	struct statemsg_durable d;

	memset(&d, 0, sizeof(d));
	d.pers = r->persistent_id;
	d.flags = r->flags;
	d.timeout_ms = r->timeout_ms;
	(void)statemsg_info_durable(&in->enc, &d);
	return 0;
}

static void
statep_info(uint32_t id)
{
	static struct statep_info in;
	static struct shm_durable_rec rec;	/* ~5 KiB */
	unsigned i;
	size_t len;

	memset(&in, 0, sizeof(in));
	statemsg_info_begin(&in.enc, statep_out, sizeof(statep_out));
	(void)shm_foreach_session(sp.shm, statep_info_session, &in);
	(void)shm_foreach_open(sp.shm, statep_info_open, &in);
	for (i = 0; i < in.nnames; i++) {
		struct statemsg_open *o = &in.name_open[i];

		if (shm_durable_get(sp.shm, in.names[i], &rec) == 0) {
			snprintf(o->share, sizeof(o->share), "%s", rec.share);
			/* Display only: a longer path is cut. */
			snprintf(o->path, sizeof(o->path), "%.*s",
			    (int)sizeof(o->path) - 1, rec.path);
		}
		(void)statemsg_info_open(&in.enc, o);
	}
	(void)shm_foreach_brlock(sp.shm, statep_info_lock, &in);
	(void)shm_foreach_durable(sp.shm, statep_info_durable, &in);
	len = statemsg_info_end(&in.enc);
	statep_send(MSG_INFO_REP, id, statep_out, len);
}

/* ---- the writer-lock watchdog (its own thread) ---- */

/*
 * Reads only the holder records (atomic loads of the hint page, one per
 * env): it never takes an LMDB lock, so a stopped writer cannot stop it.
 * The same record for STATEP_WRITER_REPORT_MS means one transaction held
 * that env's lock that long; the master is told once a second while it
 * lasts.
 */
static void *
statep_watch(void *arg)
{
	/* one holder record per env: each env has its own writer lock */
	static uint64_t last[STATEP_ENVS_MAX];
	static int64_t since[STATEP_ENVS_MAX], reported[STATEP_ENVS_MAX];
	unsigned i, n = shm_env_count(sp.shm);
	struct statemsg_writer w;
	int64_t now;
	uint64_t v;
	uint8_t buf[16];
	int len;

	(void)arg;
	if (n > STATEP_ENVS_MAX)
		n = STATEP_ENVS_MAX;
	for (;;) {
		(void)usleep(STATEP_WATCH_MS * 1000);
		now = (int64_t)shm_now_ms();
		for (i = 0; i < n; i++) {
			if (shm_writer_holder(sp.shm, i, &v) != 0)
				return NULL;
			if (v == 0 || v != last[i]) {
				last[i] = v;
				since[i] = now;
				reported[i] = 0;
				continue;
			}
			if (now - since[i] < STATEP_WRITER_REPORT_MS ||
			    (reported[i] != 0 && now - reported[i] < 1000))
				continue;
			w.pid = (uint32_t)(v >> 32);
			w.held_ms = (uint32_t)(now - since[i]);
			reported[i] = now;
			/* msg_send is one sendmsg: safe beside the main thread's. */
			if ((len = statemsg_writer_encode(&w, buf, sizeof(buf))) > 0)
				(void)msg_send(sp.chan, MSG_STATE_WRITER, 0, buf,
				    (size_t)len, -1);
		}
	}
}

/* ---- the channel ---- */

static void
statep_message(const struct msg *m)
{
	struct cur c;
	uint8_t pong[4];

	if (m->fd >= 0)
		close(m->fd);
	cur_init(&c, m->payload, m->len);
	switch (m->type) {
	case MSG_STATE_PURGE:
		statep_purge(m);
		break;
	case MSG_INFO_REQ:
		statep_info(m->id);
		break;
	case MSG_ADMIN_DO:
		statep_admin_do(m);
		break;
	case MSG_PING:
		le32_put(pong, (uint32_t)getpid());
		statep_send(MSG_PONG, m->id, pong, sizeof(pong));
		break;
	case MSG_DEBUG_LEVEL: {
		uint32_t level = cur_le32(&c);

		if (!c.err && cur_left(&c) == 0 && level <= 10)
			log_level = (int)level;
		break;
	}
	case MSG_SHUTDOWN:
		sp.shutdown = 1;
		break;
	case MSG_RELOAD:
		/* Nothing of the config changes what the state process does. */
		break;
	default:
		log_debug(1, "state: message %u ignored", m->type);
		break;
	}
}

static void
statep_loop(void)
{
	struct pollfd pfd = { .fd = sp.chan, .events = POLLIN };
	struct msg m;
	uint64_t now;
	int i, rc;

	while (!sp.shutdown) {
		rc = poll(&pfd, 1, STATEP_TICK_MS);
		if (rc < 0 && errno != EINTR) {
			log_warn("state: poll");
			return;
		}
		for (i = 0; rc > 0 && i < 64 && !sp.shutdown; i++) {
			rc = msg_recv(sp.chan, &m, statep_in, sizeof(statep_in));
			if (rc == -EAGAIN)
				break;
			if (rc == -EPIPE)
				return;
			if (rc != 0) {
				log_warnx("state: malformed message from the "
				    "master");
				continue;
			}
			statep_message(&m);
			rc = 1;
		}
		now = shm_now_ms();
		statep_expire(now);
		statep_counts(now);
	}
}

int
statep_main(struct conf *conf, const char *conf_path, int chan)
{
	struct statemsg_counts c;
	pthread_t watch;
	uint8_t role[4];
	int rc;

	(void)conf_path;
	sp.chan = chan;
	if (fcntl(chan, F_SETFL, O_NONBLOCK) == -1)
		return 1;
	rc = shm_attach(conf->lock_dir, conf->state_map_size,
	    shm_readers_for(STATEMSG_LIVE_MAX), SHM_INIT, &sp.shm);
	if (rc != 0) {
		errno = -rc;
		log_warn("state: cannot open the state env in %s",
		    conf->lock_dir);
		return STATEP_EXIT_BAD_ENV;
	}
	if ((rc = statep_walk_counts(&c)) != 0) {
		errno = -rc;
		log_warn("state: cannot read the state env in %s",
		    conf->lock_dir);
		return STATEP_EXIT_BAD_ENV;
	}
	rc = shm_wmsg_open(conf->lock_dir, getpid(), &sp.wmsg);
	if (rc != 0) {
		errno = -rc;
		log_warn("state: no message socket: waiters of a dead child's "
		    "locks wait for their timeouts");
		sp.wmsg = NULL;
	}
	if ((rc = confine_worker()) != 0) {
		errno = -rc;
		log_warn("state: cannot install its seccomp filter");
		return 1;
	}
	if ((rc = pthread_create(&watch, NULL, statep_watch, NULL)) != 0) {
		errno = rc;
		log_warn("state: cannot start the writer-lock watchdog");
		return 1;
	}
	le32_put(role, MSG_ROLE_STATE);
	if (msg_send(chan, MSG_HELLO, 0, role, sizeof(role), -1) < 0)
		return 1;
	log_debug(1, "state process ready: %llu session(s), %llu open(s), "
	    "%llu lock(s), map %llu KiB", (unsigned long long)c.sessions,
	    (unsigned long long)c.opens, (unsigned long long)c.locks,
	    (unsigned long long)(c.map_bytes >> 10));
	statep_loop();
	/* The watchdog thread ends with the process. */
	return 0;
}
