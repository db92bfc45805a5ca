/*
 * What a TREE_CONNECT name stands for (worker/homes.c): a configured
 * share, or a user's home share made from [homes]; the share's name and
 * its root path with Samba's substitutions made, once per tree connect.
 */
#ifndef USMBD_WORKER_HOMES_H
#define USMBD_WORKER_HOMES_H

#include <limits.h>
#include <sys/types.h>

#include "daemon/conf.h"
#include "proto/ntstatus.h"

struct homes_target {
	const struct conf_share	*share;	/* configured, or [homes] */
	int			 home;	/* a home share */
	char			 name[CONF_SHARE_NAME_MAX + 1];	/* as connected */
	char			 path[PATH_MAX];	/* the root; "" for IPC$ */
	struct conf_subst	 v;	/* for the user lists (valid users...) */
	/* storage of the values v points to */
	char			 user_home[PATH_MAX];
	char			 user_group[256];
	char			 client[64];
	char			 owner_home[PATH_MAX];
};

/*
 * The worker's own user, read once before confinement (worker_main):
 * home directory, primary group's name, the host name.  A lookup that
 * fails leaves that value empty: a template using it is refused.
 */
void	homes_init(const char *user, gid_t gid);

/*
 * Resolves name for a session of user (a Unix account; guest and
 * anonymous sessions pass NULL: no home share for them).  client(arg)
 * gives the client's address text into buf, asked only of a template
 * with %I; NULL when unknown.  STATUS_SUCCESS and *t; BAD_NETWORK_NAME
 * (no such share, not a user, no home); ACCESS_DENIED (a substituted
 * value refused: a name that would reach another place).
 */
ntstatus_t homes_resolve(const struct conf *cf, const char *name,
	    const char *user, const char *(*client)(void *arg, char *buf,
	    size_t cap), void *arg, struct homes_target *t);

/*
 * The name a tree connected by t keeps (struct tree's name): the
 * configured share's, the worker user's own, or another user's kept for
 * the worker's life; NULL when no more can be kept.
 */
const char *homes_tree_name(const struct homes_target *t);

/*
 * The caller's own home share for the share lists (srvsvc): a copy of
 * [homes] named after user, with its path and comment, in *out (strings
 * in buf); 0, or -1 when there is none.
 */
int	homes_own_share(const struct conf *cf, const char *user,
	    struct conf_share *out, char *buf, size_t cap);

#endif
