/*
 * Reaping: collect dead children with waitpid, log how each one ended, purge
 * what it left in the shared state, and free its slot so spawn_tick() can
 * refill the gate pool.  Other children and their connections are untouched.
 */
#include "daemon/reap.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/spawn.h"
#include "shm/shm.h"

/*
 * Workers waiting on locks the dead child held retry every blocked lock
 * (file id {0, 0}: the purge spans many files).  When the wake set
 * overflowed, every live worker is told.
 */
static void
reap_wake_waiters(const struct shm_pids *wake)
{
	struct shm_pids all;
	int i, rc;

	if (master.wmsg == NULL || (wake->n == 0 && !wake->overflow))
		return;
	if (!wake->overflow) {
		rc = shm_wmsg_wake(master.wmsg, wake, NULL);
		goto out;
	}
	memset(&all, 0, sizeof(all));
	rc = 0;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		const struct child *c = &spawn_children[i];

		if (c->pid <= 0 || c->role != CHILD_WORKER || c->dying)
			continue;
		all.pid[all.n++] = c->pid;
		if (all.n == SHM_PIDS_MAX) {
			if (shm_wmsg_wake(master.wmsg, &all, NULL) != 0)
				rc = -EIO;
			all.n = 0;
		}
	}
	if (all.n > 0 && shm_wmsg_wake(master.wmsg, &all, NULL) != 0)
		rc = -EIO;
out:
	if (rc != 0)
		log_warnx("state: could not wake every lock waiter");
	else
		log_debug(2, "state: woke %u lock waiter(s)%s", wake->n,
		    wake->overflow ? " and every worker" : "");
}

/*
 * After a child died: remove its opens, byte-range locks, sessions and
 * worker record from the state env in one transaction and mark its durable
 * opens disconnected (shm_purge_worker), so a reconnect can reclaim them.
 */
void
state_purge_child(pid_t pid)
{
	struct shm_purge_result r;
	int rc;

	if (master.shm == NULL)
		return;
	memset(&r, 0, sizeof(r));
	rc = shm_purge_worker(master.shm, pid, &r);
	if (rc != 0) {
		errno = -rc;
		log_warn("state: purge of %d failed", (int)pid);
		return;
	}
	/* shm_purge_worker() logs what it removed. */
	reap_wake_waiters(&r.wake);
}

static void
reap_log(const struct child *c, pid_t pid, int status)
{
	const char *role = c == NULL ? "unknown child" :
	    c->role == CHILD_GATE ? "gate" : "worker";
	const char *user = c != NULL ? c->user : "";

	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 0 || (c != NULL && c->stopping))
			log_debug(1, "%s %d%s%s exited with status %d", role,
			    (int)pid, *user ? " " : "", user, WEXITSTATUS(status));
		else
			log_warnx("%s %d%s%s exited with status %d", role,
			    (int)pid, *user ? " " : "", user, WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		log_warnx("%s %d%s%s killed by signal %d (%s)%s", role, (int)pid,
		    *user ? " " : "", user, WTERMSIG(status),
		    strsignal(WTERMSIG(status)),
		    WCOREDUMP(status) ? ", core dumped" : "");
	}
}

int
reap_children(void)
{
	int n, status;
	pid_t pid;

	/* Bounded by the table: each pass collects one dead child. */
	for (n = 0; n < SPAWN_MAX_CHILDREN + 16; n++) {
		struct child *c;

		pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0)
			break;
		if (pid == -1) {
			if (errno != ECHILD)
				log_warn("waitpid");
			break;
		}
		if (!WIFEXITED(status) && !WIFSIGNALED(status))
			continue;
		c = spawn_find(pid);
		reap_log(c, pid, status);
		if (c != NULL && !c->stopping && (c->role == CHILD_GATE ||
		    c->role == CHILD_WORKER) && !(WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0))
			master.child_deaths[c->role]++;
		state_purge_child(pid);
		/* Its mailbox goes with it; the pid may come back as anyone. */
		if (c != NULL && c->role == CHILD_WORKER)
			(void)shm_wmsg_remove(master.conf->lock_dir, pid);
		if (c != NULL) {
			/* Its counters stay in `usmbctl metrics`. */
			ctl_child_gone(c);
			spawn_child_gone(c);
		}
	}
	return n;
}

/*
 * Durable opens whose client did not come back within their timeout are
 * removed with their locks; their waiters retry.  The master does it so
 * that no worker needs a timer for records it may not even hold.
 */
void
reap_expire_durable(void)
{
	static uint64_t last;
	struct shm_pids wake;
	uint64_t now;
	unsigned n = 0;

	if (master.shm == NULL)
		return;
	now = shm_now_ms();
	if (now - last < 5000)
		return;
	last = now;
	memset(&wake, 0, sizeof(wake));
	if (shm_expire_durable(master.shm, now, &n, &wake) != 0 || n == 0)
		return;
	log_info("state: %u durable open(s) expired", n);
	reap_wake_waiters(&wake);
}
