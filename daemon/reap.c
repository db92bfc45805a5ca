/*
 * Reaping: collect dead children with waitpid, log how each one ended, have
 * the state process purge what it left in the shared state (or restart the
 * state process, daemon/statectl.c), and free its slot so spawn_tick() can
 * refill the gate pool.  Other children and their connections are untouched.
 */
#include "daemon/reap.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "daemon/auth_krb.h"
#include "daemon/conf.h"
#include "daemon/ctl.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/spawn.h"
#include "daemon/statectl.h"
#include "shm/shm.h"

static void
reap_log(const struct child *c, pid_t pid, int status)
{
	const char *role = c == NULL ? "unknown child" : spawn_role_name(c);
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
		if (c != NULL && !c->stopping && c->role > 0 &&
		    c->role < CHILD_ROLES && !(WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0))
			master.child_deaths[c->role]++;
		/* The state process purges it; the master maps nothing. */
		if (c != NULL && c->role == CHILD_KRB)
			auth_krb_gone(c);
		if (c != NULL && c->role == CHILD_STATE)
			statectl_gone(c, status);
		else if (c == NULL || c->role == CHILD_WORKER)
			statectl_purge(pid);	/* gates and sdw never map it */
		/* Its mailbox goes with it; the pid may come back as anyone. */
		if (c != NULL && (c->role == CHILD_WORKER ||
		    c->role == CHILD_STATE))
			(void)shm_wmsg_remove(master.conf->lock_dir, pid);
		if (c != NULL) {
			/* Its counters stay in `usmbctl metrics`. */
			ctl_child_gone(c);
			spawn_child_gone(c);
		}
	}
	return n;
}
