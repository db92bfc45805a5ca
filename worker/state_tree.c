/*
 * The tree connects to every disk share across the whole server,
 * recorded in the state env (shm/trees.c) so that every worker sees them:
 * `max connections` (Samba's key) counts them, and srvsvc's
 * NetrConnectionEnum lists them (worker/pipe_srvsvc_enum.c).  A tree
 * claims a slot at its TREE_CONNECT and gives it back when it is freed
 * (conn_tree_free: tree disconnect, logoff, connection close,
 * close-share); a dead worker's go in the state process's purge.  A share
 * without the key is recorded with no limit, and a failure to record it
 * (no state env, a full map) only leaves it out of the list: one write
 * transaction of the main env at the connect and one at the disconnect,
 * no system call (`make perfcheck`).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "shm/shm.h"
#include "worker/conn_priv.h"
#include "worker/state.h"

/* Unique in this worker, never 0: with the pid, a record's identity. */
static uint64_t	tree_next_key;
static pid_t	tree_pid;

ntstatus_t
state_tree_claim(struct conn *c, struct tree *t, const struct conf_share *sh)
{
	struct shm *s;
	int limited = sh->max_connections > 0;
	uint32_t n = 0;
	int rc;

	/*
	 * Without the env (an IPC$-only worker, or an env that cannot be
	 * opened) nothing can be counted: refused rather than let past the
	 * limit; a share without one is only left out of the list.
	 */
	if ((s = state_shm()) == NULL) {
		if (!limited)
			return STATUS_SUCCESS;
		conn_warnx(c, "share %s: `max connections` cannot be counted "
		    "without the state", tree_name(t));
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	if (tree_pid == 0)
		tree_pid = getpid();
	t->mc_key = ++tree_next_key;
	rc = shm_tree_claim(s, tree_name(t), tree_pid, t->mc_key,
	    limited ? (uint32_t)sh->max_connections : UINT32_MAX, &n);
	if (rc == 0)
		return STATUS_SUCCESS;
	t->mc_key = 0;
	if (!limited) {
		conn_warnx(c, "share %s: tree not recorded (not listed by "
		    "NetrConnectionEnum): %s", tree_name(t), strerror(-rc));
		return STATUS_SUCCESS;
	}
	if (rc == -EUSERS) {
		/* Samba's words and status (smb2_tcon.c) */
		conn_warnx(c, "Max connections (%d) exceeded for [%s]",
		    sh->max_connections, tree_name(t));
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	conn_warnx(c, "share %s: cannot count its trees: %s", tree_name(t),
	    strerror(-rc));
	return rc == -ENOSPC || rc == -ENOMEM ?
	    STATUS_INSUFF_SERVER_RESOURCES : STATUS_INSUFFICIENT_RESOURCES;
}

void
state_tree_release(struct tree *t)
{
	struct shm *s;
	int rc;

	if (t->mc_key == 0 || t->share == NULL)
		return;
	if ((s = state_shm()) != NULL &&
	    (rc = shm_tree_release(s, tree_name(t), tree_pid, t->mc_key)) != 0)
		log_warnx("share %s: tree %u not uncounted: %s", tree_name(t),
		    t->tree_id, strerror(-rc));
	t->mc_key = 0;
}
