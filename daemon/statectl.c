/*
 * The master's side of the state process (interface in daemon/statectl.h).
 *
 * The master makes the state files (empty, group usmbd-state, 0660) and
 * never opens them: whatever needs the env is asked of the state process,
 * whose answers are decoded with bounds checks (daemon/statemsg.c) and
 * used for display, or -- the writer-lock reports -- only after the master
 * checked the named process itself in /proc.
 */

/*
 * Nobody freezes the writer (issue 20).
 *
 * Nobody freezes the writer (issue 20, item 2).  The master does not map
 * the env, so it never waits on LMDB's writer lock: ping, logins,
 * routing and reaping go on whatever any process holds.  Workers and the
 * state process do wait on it; a holder that does not let go is found
 * and killed:
 * - shm_wbegin writes, once the lock is taken, pid << 32 | n (n: that
 *   process's count of its write transactions) into the hint page, in
 *   the record of the env whose lock it took (struct shm_hint.writer[]:
 *   the main env and each data env has its own writer lock), and
 *   shm_wcommit/shm_wabort clear it by compare-and-swap if it is still
 *   theirs.  Two stores per write transaction, no syscall.
 * - The state process's watchdog thread sees the same value in one
 *   env's record for 1 s (one transaction held that long) and sends
 *   MSG_STATE_WRITER (pid, ms), once a second while it lasts.
 * - The master (statectl_writer_msg) acts only on a live child that maps
 *   the env (a worker or the state process; never a gate), alive when
 *   the hold began, and judged by /proc/PID/stat: stopped (T, or t
 *   traced) -> SIGKILL at once; running and holding for 10 s
 *   (STATECTL_WEDGED_MS) -> SIGKILL.  The log names the process, the
 *   user and why.  LMDB's robust mutex hands the lock to the next writer
 *   (EOWNERDEAD), the reaper has the state process purge the dead
 *   worker's records.  A user's own shell may still SIGSTOP that user's
 *   worker (same uid); the watchdog makes it harmless: the other users
 *   wait about a second (measured by t/integ/statep.sh: bob's login and
 *   put/get in ~1 s while alice's worker is stopped in a write).
 * - The record is any writer's to forge, so it is a hint: a compromised
 *   worker could name another user's running worker and get it killed
 *   after 10 s of consistent forged reports -- a denial of service of
 *   the kind a compromised worker can already cause on lock state, never
 *   a read or write of anyone's files.  A stale record of a dead pid is
 *   cleared by its purge and ignored meanwhile (not a live child, or one
 *   younger than the hold).
 * - The test hook: USMBD_TEST_STOP_IN_WRITE=UID in the master's
 *   environment (inherited by its children) makes each worker of that
 *   uid raise SIGSTOP once, inside its first write transaction before
 *   the commit (shm/env.c).  Only whoever starts the master can set it.
 */

/*
 * Restarts.
 *
 * Restarts (daemon/statectl.c).  A state process that ends in any way
 * the master did not ask for is restarted (backoff from 100 ms, doubling
 * while each lives under 1 s, at most 10 s).  A second abnormal end
 * within 10 minutes of the first, on the same files, is taken to be the
 * files' doing: the master renames state.mdb and state.mdb-lock, and the
 * data envs' state-I.mdb and state-I.mdb-lock, to *.bad (kept for a look), makes fresh files, kills every worker (they map the
 * old env: their sessions end, clients log in again; durable handles of
 * the old env are lost) and starts a state process on the fresh env,
 * with a log line "started a fresh state env".  A state process that
 * sent no counts for 15 s (looping in a rewritten tree; longer than the
 * watchdog needs to free a writer lock it may be waiting for) is killed
 * and counts as an abnormal end.  usmbd_state_fresh_total in usmbctl
 * metrics counts fresh envs.
 */
#include "daemon/statectl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "daemon/statemsg.h"
#include "shm/shm.h"
#include "worker/worker.h"

#define STATECTL_BACKOFF_MIN_MS	100
#define STATECTL_BACKOFF_MAX_MS	10000
#define STATECTL_FAST_END_MS	1000

static struct {
	pid_t		 pid;		/* the live state process, 0 none */
	int		 fails;		/* abnormal ends on the present files */
	int64_t		 last_fail_ms;
	int		 backoff_ms;
	int64_t		 next_start_ms;
	uint64_t	 fresh;		/* envs started afresh */
	/* purges not yet sent (a ring) */
	pid_t		 pending[STATECTL_PENDING_MAX];
	unsigned	 head, n;
	uint64_t	 lost;		/* purges dropped: the ring was full */
	/*
	 * The last purges sent: a state process that dies may not have
	 * done them, and a purge done twice is harmless, so its successor
	 * gets them again.
	 */
	pid_t		 sent[STATECTL_RESEND];
	unsigned	 nsent;		/* total sent; the ring is nsent % N */
	/* the last MSG_STATE_COUNTS */
	struct statemsg_counts counts;
	int64_t		 counts_ms;
	int64_t		 alive_ms;	/* its hello or last counts */
} sc;

struct child *
statectl_child(void)
{
	struct child *c;

	if (sc.pid <= 0 || (c = spawn_find(sc.pid)) == NULL ||
	    c->role != CHILD_STATE)
		return NULL;
	return c;
}

int
statectl_start(void)
{
	int rc = shm_create_files(master.conf->lock_dir,
	    (unsigned)master.conf->state_partitions);

	if (rc != 0) {
		errno = -rc;
		log_warn("state files in %s unavailable",
		    master.conf->lock_dir);
	}
	statectl_tick();
	return rc;
}

void
statectl_tick(void)
{
	uid_t uid;
	gid_t gid;
	struct child *c;

	if ((c = statectl_child()) != NULL && c->hello && !c->dying &&
	    master_now_ms() - sc.alive_ms > STATECTL_SILENT_MS) {
		/* Looping in a rewritten B-tree, say: it counts as a failure. */
		spawn_kill(c, "no counts from the state process");
		return;
	}
	if (master.shutting_down || sc.pid > 0 ||
	    master_now_ms() < sc.next_start_ms)
		return;
	if (user_state_account(&uid, &gid, NULL) != 0) {
		/* Said once a minute at most: nothing works without it. */
		log_warnx("state: no group usmbd-state or no account for the "
		    "state process; shared state is unavailable");
		sc.next_start_ms = master_now_ms() + 60000;
		return;
	}
	c = spawn_state(uid, gid);
	if (c == NULL) {
		sc.next_start_ms = master_now_ms() + STATECTL_BACKOFF_MAX_MS;
		return;
	}
	sc.pid = c->pid;
}

int
statectl_timeout_ms(void)
{
	int64_t now = master_now_ms();

	if (sc.pid > 0 || master.shutting_down)
		return -1;
	return sc.next_start_ms > now ? (int)(sc.next_start_ms - now) : 0;
}

/* The purges that waited go out, as far as the channel takes them. */
static void
statectl_flush(void)
{
	static struct statemsg_purge p;
	uint8_t buf[8 + 4 * STATEMSG_LIVE_MAX];
	struct child *c = statectl_child();
	int i, len, rc;

	if (c == NULL || !c->hello || c->chan < 0 || c->dying)
		return;
	while (sc.n > 0) {
		memset(&p, 0, sizeof(p));
		p.pid = (uint32_t)sc.pending[sc.head];
		/* Who to wake when the dead child's waiters are too many. */
		for (i = 0; i < SPAWN_MAX_CHILDREN &&
		    p.nlive < STATEMSG_LIVE_MAX; i++) {
			const struct child *w = &spawn_children[i];

			if (w->pid > 0 && w->role == CHILD_WORKER && !w->dying)
				p.live[p.nlive++] = (uint32_t)w->pid;
		}
		len = statemsg_purge_encode(&p, buf, sizeof(buf));
		if (len < 0)
			break;
		/* Never spawn_send: a full channel waits, it kills no one. */
		rc = msg_send(c->chan, MSG_STATE_PURGE, 0, buf, (size_t)len, -1);
		if (rc == -EAGAIN || rc == -ENOBUFS)
			return;
		if (rc != 0)
			return;	/* its end is seen by the reaper */
		sc.sent[sc.nsent++ % STATECTL_RESEND] = sc.pending[sc.head];
		sc.head = (sc.head + 1) % STATECTL_PENDING_MAX;
		sc.n--;
	}
}

static void
statectl_queue(pid_t pid)
{
	if (sc.n == STATECTL_PENDING_MAX) {
		/* The oldest goes: its records stay until a fresh env. */
		sc.head = (sc.head + 1) % STATECTL_PENDING_MAX;
		sc.n--;
		if (sc.lost++ % 64 == 0)
			log_warnx("state: %llu purge(s) of dead children "
			    "dropped: the state process is not keeping up",
			    (unsigned long long)sc.lost);
	}
	sc.pending[(sc.head + sc.n) % STATECTL_PENDING_MAX] = pid;
	sc.n++;
}

void
statectl_purge(pid_t pid)
{
	if (pid <= 0 || pid == sc.pid)
		return;
	statectl_queue(pid);
	statectl_flush();
}

void
statectl_hello(struct child *c)
{
	log_debug(1, "state process %d ready", (int)c->pid);
	sc.alive_ms = master_now_ms();
	statectl_flush();
}

/*
 * The env is taken to be what killed the state process twice: the files
 * are set aside, fresh ones made, and the workers, which map the old
 * ones, are stopped (their sessions end; clients log in again).
 */
static void
statectl_fresh(void)
{
	const char *dir = master.conf->lock_dir;
	int i, n = 0, rc;

	if ((rc = shm_set_aside(dir)) != 0) {
		errno = -rc;
		log_warn("state: cannot set %s/state.mdb aside", dir);
	}
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->role == CHILD_WORKER && !c->dying) {
			spawn_kill(c, "the state env it maps was replaced");
			n++;
		}
	}
	rc = shm_create_files(dir, (unsigned)master.conf->state_partitions);
	sc.fresh++;
	sc.fails = 0;
	sc.n = 0;
	sc.head = 0;
	sc.nsent = 0;
	log_warnx("state: the state process failed twice on the same "
	    "files: started a fresh state env in %s%s (the old one is kept "
	    "as state.mdb.bad); %d worker(s) stopped, their clients log in "
	    "again", dir, rc != 0 ? " -- which failed" : "", n);
}

void
statectl_gone(struct child *c, int status)
{
	int64_t now = master_now_ms(), lived = now - c->started_ms;
	int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;

	unsigned i, k;

	if (c->pid == sc.pid)
		sc.pid = 0;
	if (master.shutting_down)
		return;
	/* What it may not have done goes to its successor (idempotent). */
	k = sc.nsent < STATECTL_RESEND ? sc.nsent : STATECTL_RESEND;
	for (i = 0; i < k; i++)
		statectl_queue(sc.sent[(sc.nsent - k + i) % STATECTL_RESEND]);
	sc.nsent = 0;
	if (clean && c->stopping)
		return;
	if (sc.fails > 0 && now - sc.last_fail_ms > STATECTL_FAIL_WINDOW_MS)
		sc.fails = 0;
	sc.fails++;
	sc.last_fail_ms = now;
	if (lived < STATECTL_FAST_END_MS) {
		sc.backoff_ms = sc.backoff_ms == 0 ? STATECTL_BACKOFF_MIN_MS :
		    sc.backoff_ms * 2;
		if (sc.backoff_ms > STATECTL_BACKOFF_MAX_MS)
			sc.backoff_ms = STATECTL_BACKOFF_MAX_MS;
	} else
		sc.backoff_ms = 0;
	sc.next_start_ms = now + sc.backoff_ms;
	if (sc.fails >= 2) {
		statectl_fresh();
		/* New files: no reason to wait (workers wait up to 2 s). */
		sc.backoff_ms = 0;
		sc.next_start_ms = now;
		return;
	}
	log_warnx("state: the state process %d ended (%s %d); restarting it "
	    "on the same files", (int)c->pid, WIFSIGNALED(status) ?
	    "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) :
	    WEXITSTATUS(status));
}

int
statectl_counts_msg(const struct msg *m)
{
	struct statemsg_counts c;

	if (statemsg_counts_decode(&c, m->payload, m->len) != 0)
		return -1;
	sc.counts = c;
	sc.counts_ms = master_now_ms();
	sc.alive_ms = sc.counts_ms;
	return 0;
}

void
statectl_counts(long *sessions, long *opens, long *locks)
{
	if (sc.counts_ms == 0 ||
	    master_now_ms() - sc.counts_ms > STATECTL_COUNTS_STALE_MS) {
		*sessions = *opens = *locks = -1;
		return;
	}
	/* Display: a count past LONG_MAX is no count. */
	*sessions = sc.counts.sessions > (uint64_t)LONG_MAX ? -1 :
	    (long)sc.counts.sessions;
	*opens = sc.counts.opens > (uint64_t)LONG_MAX ? -1 :
	    (long)sc.counts.opens;
	*locks = sc.counts.locks > (uint64_t)LONG_MAX ? -1 :
	    (long)sc.counts.locks;
}

uint64_t
statectl_fresh_count(void)
{
	return sc.fresh;
}

char
statectl_proc_state(pid_t pid)
{
	char path[64], buf[1024];
	const char *rp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm is the process's to choose, ')' too. */
	rp = memrchr(buf, ')', (size_t)n);
	if (rp == NULL || rp + 2 >= buf + n || rp[1] != ' ')
		return 0;
	return rp[2];
}

int
statectl_writer_msg(const struct msg *m)
{
	struct statemsg_writer w;
	struct child *c;
	const char *role;
	char st, why[96];

	if (statemsg_writer_decode(&w, m->payload, m->len) != 0)
		return -1;
	/*
	 * The record is any writer's to forge: it names a process, the
	 * master judges it.  Only a child that maps the env, that was alive
	 * when the hold began, and that is stopped (or has held it for
	 * STATECTL_WEDGED_MS) is killed.
	 */
	c = w.pid > 0 ? spawn_find((pid_t)w.pid) : NULL;
	if (c == NULL || c->role == CHILD_GATE || c->dying ||
	    (int64_t)w.held_ms > master_now_ms() - c->started_ms) {
		log_debug(1, "state: writer lock reported held by %u for %u ms: "
		    "not a live child of ours that maps the env", w.pid,
		    w.held_ms);
		return 0;
	}
	st = statectl_proc_state(c->pid);
	role = c->role == CHILD_STATE ? "state process" : "worker";
	if (st == 'T' || st == 't') {
		log_warnx("%s %d%s%s is stopped (%c) holding the state's writer "
		    "lock (%u ms): killed, its shared state purged", role,
		    (int)c->pid, c->user[0] ? " " : "", c->user, st, w.held_ms);
		snprintf(why, sizeof(why), "stopped holding the writer lock");
	} else if (w.held_ms >= STATECTL_WEDGED_MS) {
		log_warnx("%s %d%s%s has held the state's writer lock for %u "
		    "ms (%c): killed, its shared state purged", role,
		    (int)c->pid, c->user[0] ? " " : "", c->user, w.held_ms,
		    st ? st : '?');
		snprintf(why, sizeof(why), "wedged holding the writer lock");
	} else {
		log_debug(1, "state: %s %d holds the writer lock (%u ms, %c)",
		    role, (int)c->pid, w.held_ms, st ? st : '?');
		return 0;
	}
	spawn_kill(c, why);
	return 0;
}
