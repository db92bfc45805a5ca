/*
 * `max connections` (Samba's key): the tree connects to a share across
 * the whole server, counted in the state env (shm/trees.c) so that every
 * worker sees them.  A tree of a share with the key claims a slot at its
 * TREE_CONNECT and gives it back when it is freed (conn_tree_free: tree
 * disconnect, logoff, connection close, close-share); a dead worker's go
 * in the state process's purge.  A share without the key costs nothing.
 */
#include <errno.h>
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
	uint32_t n = 0;
	int rc;

	if (sh->max_connections <= 0)
		return STATUS_SUCCESS;
	/*
	 * Without the env (an IPC$-only worker, or an env that cannot be
	 * opened) nothing can be counted: refused rather than let past the
	 * limit.
	 */
	if ((s = state_shm()) == NULL) {
		conn_warnx(c, "share %s: `max connections` cannot be counted "
		    "without the state", tree_name(t));
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	if (tree_pid == 0)
		tree_pid = getpid();
	t->mc_key = ++tree_next_key;
	rc = shm_tree_claim(s, tree_name(t), tree_pid, t->mc_key,
	    (uint32_t)sh->max_connections, &n);
	if (rc == 0)
		return STATUS_SUCCESS;
	t->mc_key = 0;
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
