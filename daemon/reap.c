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

#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/spawn.h"
#include "shm/shm.h"

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
	/*
	 * r.wake lists workers waiting on locks the dead child held; telling
	 * them needs a per-file LOCK_RELEASED (shm_wmsg_wake takes a file id),
	 * which the purge result does not carry yet.  They retry on their own
	 * lock timeouts until it does.
	 */
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
		state_purge_child(pid);
		if (c != NULL)
			spawn_child_gone(c);
	}
	return n;
}
