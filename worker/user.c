/*
 * Privilege drops, done once right after exec and never undone.
 *
 * Gate: to the `usmbd` account (else `nobody`), with no supplementary group
 * but its own.  User worker: to one user's full group list plus the state
 * group (not for an IPC$-only worker: user_worker_ipc_only), gid and uid.  Each call is checked, then we check that root cannot
 * be regained (setresuid(0,0,0) must fail); any failure is fatal because a
 * child that kept root would break the whole security model.
 */

/*
 * IPC$-only workers (issue 20).
 *
 * - IPC$-only workers have no state (issue 20).  The guest account's
 *   worker serves anonymous sessions (restrict anonymous below 2) and
 *   guests (map to guest); when no share is guest ok neither may use a
 *   disk share, so it is started IPC$ only: worker/user.c
 *   user_worker_ipc_only decides at the start (uid of guest account, no
 *   guest ok share), user_drop_worker leaves usmbd-state out of its
 *   groups (and refuses a guest account whose primary group it is),
 *   state_init(conf, 1) makes it never open the env or a mailbox, and a
 *   disk TREE_CONNECT there is ACCESS_DENIED with a log line
 *   (worker/smb2_tree.c).  What it gives up: its sessions are not in the
 *   state env (the state process's session list); usmbctl status still
 *   shows them from the worker's own report, and the master's session
 *   table still has them.  A reload that makes a share guest ok ends
 *   that worker (wk_reload, a log line; its IPC$ connections end), so
 *   the next guest login starts a worker with the state; a connection
 *   routed to it before it went is refused disk shares.  A passdb login
 *   as the guest account is served IPC$ only too.
 */
#include "worker/worker.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"

#define USER_GATE_ACCOUNT	"usmbd"
#define USER_GATE_FALLBACK	"nobody"
#define USER_STATE_GROUP	"usmbd-state"
#define USER_STATE_ACCOUNT	"usmbd-state"
#define USER_KRB_ACCOUNT	"usmbd-krb"
#define USER_MAX_GROUPS		256

/* The uid this process was pinned to, recorded once the drop is verified. */
static uid_t user_pinned_uid = (uid_t)-1;

/* Fatal unless uid and gid are now exactly what we set, for good. */
static void
user_verify(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (setresuid(0, 0, 0) != -1)
		fatalx("setresuid(0,0,0) succeeded after dropping to uid %u",
		    (unsigned)uid);
	if (getresuid(&ru, &eu, &su) == -1 || ru != uid || eu != uid ||
	    su != uid || getuid() != uid || geteuid() != uid)
		fatalx("uid is not %u after the drop", (unsigned)uid);
	if (getresgid(&rg, &eg, &sg) == -1 || rg != gid || eg != gid ||
	    sg != gid)
		fatalx("gid is not %u after the drop", (unsigned)gid);
	user_pinned_uid = uid;
}

uid_t
user_euid(void)
{
	/* Before the drop (never on a request path) ask the kernel. */
	return user_pinned_uid != (uid_t)-1 ? user_pinned_uid : geteuid();
}

int
user_drop_gate(void)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;

	pw = getpwnam(USER_GATE_ACCOUNT);
	if (pw == NULL)
		pw = getpwnam(USER_GATE_FALLBACK);
	if (pw == NULL)
		fatalx("neither %s nor %s exists: cannot drop privileges",
		    USER_GATE_ACCOUNT, USER_GATE_FALLBACK);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	if (uid == 0)
		fatalx("gate account %s is root", pw->pw_name);
	if (setgroups(1, &gid) == -1)
		fatal("gate: setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("gate: setresgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) == -1)
		fatal("gate: setresuid %u", (unsigned)uid);
	user_verify(uid, gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("gate: PR_SET_NO_NEW_PRIVS");
	log_debug(2, "gate running as %s (%u:%u)", pw->pw_name, (unsigned)uid,
	    (unsigned)gid);
	return 0;
}

/*
 * The ticket helper: to `usmbd-krb` (else `usmbd`, else `nobody`), its
 * own group only.  It holds the service keys, so it shares an account
 * with nothing that reads a client's bytes when install-deps made its own.
 */
int
user_drop_krb(void)
{
	static const char *const names[] = { USER_KRB_ACCOUNT, USER_GATE_ACCOUNT,
	    USER_GATE_FALLBACK };
	struct passwd *pw = NULL;
	size_t i;
	gid_t gid;

	for (i = 0; pw == NULL && i < sizeof(names) / sizeof(names[0]); i++)
		pw = getpwnam(names[i]);
	if (pw == NULL || pw->pw_uid == 0)
		fatalx("no account for the ticket helper (%s)", USER_KRB_ACCOUNT);
	if (strcmp(pw->pw_name, USER_KRB_ACCOUNT) != 0)
		log_warnx("ticket helper: no %s account, running as %s",
		    USER_KRB_ACCOUNT, pw->pw_name);
	gid = pw->pw_gid;
	if (setgroups(1, &gid) == -1)
		fatal("krb: setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("krb: setresgid %u", (unsigned)gid);
	if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1)
		fatal("krb: setresuid %u", (unsigned)pw->pw_uid);
	user_verify(pw->pw_uid, gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("krb: PR_SET_NO_NEW_PRIVS");
	return 0;
}

int
user_state_account(uid_t *uid, gid_t *gid, const char **name)
{
	struct passwd *pw;
	struct group *gr;

	if ((gr = getgrnam(USER_STATE_GROUP)) == NULL)
		return -ENOENT;
	pw = getpwnam(USER_STATE_ACCOUNT);
	if (pw == NULL)
		pw = getpwnam(USER_GATE_ACCOUNT);
	if (pw == NULL)
		pw = getpwnam(USER_GATE_FALLBACK);
	if (pw == NULL || pw->pw_uid == 0)
		return -ENOENT;
	*uid = pw->pw_uid;
	*gid = gr->gr_gid;
	if (name != NULL)
		*name = strcmp(pw->pw_name, USER_STATE_ACCOUNT) == 0 ?
		    USER_STATE_ACCOUNT : strcmp(pw->pw_name,
		    USER_GATE_ACCOUNT) == 0 ? USER_GATE_ACCOUNT :
		    USER_GATE_FALLBACK;
	return 0;
}

int
user_drop_state(void)
{
	const char *name;
	uid_t uid;
	gid_t gid;

	if (user_state_account(&uid, &gid, &name) != 0)
		fatalx("state: no group %s, or no account %s, %s or %s",
		    USER_STATE_GROUP, USER_STATE_ACCOUNT, USER_GATE_ACCOUNT,
		    USER_GATE_FALLBACK);
	if (strcmp(name, USER_STATE_ACCOUNT) != 0)
		log_warnx("state: no account %s, running as %s in group %s",
		    USER_STATE_ACCOUNT, name, USER_STATE_GROUP);
	/* Only the state group: no user's files, no gate's. */
	if (setgroups(1, &gid) == -1)
		fatal("state: setgroups");
	if (setresgid(gid, gid, gid) == -1)
		fatal("state: setresgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) == -1)
		fatal("state: setresuid %u", (unsigned)uid);
	user_verify(uid, gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("state: PR_SET_NO_NEW_PRIVS");
	log_debug(2, "state process running as %s (%u:%u)", name,
	    (unsigned)uid, (unsigned)gid);
	return 0;
}

int
user_worker_ipc_only(const struct conf *conf, uid_t uid)
{
	struct passwd *pw;
	int i;

	/*
	 * The guest account's worker serves anonymous sessions and, with
	 * `map to guest`, guests.  Neither may use a disk share unless one
	 * says `guest ok`; without one, IPC$ is all it will ever serve, and
	 * IPC$ needs nothing of the shared state.
	 */
	pw = getpwnam(conf->guest_account);
	if (pw == NULL || pw->pw_uid != uid)
		return 0;
	for (i = 0; i < conf->nshares; i++)
		if (!conf->shares[i].is_ipc && conf->shares[i].guest_ok)
			return 0;
	return 1;
}

int
user_drop_worker(const char *user, uid_t uid, gid_t gid, int ipc_only)
{
	gid_t groups[USER_MAX_GROUPS + 1];
	int ngroups = USER_MAX_GROUPS;
	struct group *gr;

	if (uid == 0)
		fatalx("refusing to run a worker as root (%s)", user);
	if (getgrouplist(user, gid, groups, &ngroups) == -1)
		fatalx("worker %s: more than %d groups", user, USER_MAX_GROUPS);
	/*
	 * The state environment is writable by this group only (DESIGN.md);
	 * an IPC$-only worker (anonymous, guests) is not given it, even when
	 * the guest account is a member of it.
	 */
	gr = getgrnam(USER_STATE_GROUP);
	if (gr != NULL && ipc_only) {
		int i, j;

		for (i = j = 0; i < ngroups; i++)
			if (groups[i] != gr->gr_gid)
				groups[j++] = groups[i];
		ngroups = j;
		if (gid == gr->gr_gid)
			fatalx("worker %s: IPC$ only, but its group is %s",
			    user, USER_STATE_GROUP);
	} else if (gr != NULL)
		groups[ngroups++] = gr->gr_gid;
	if (setgroups((size_t)ngroups, groups) == -1)
		fatal("worker %s: setgroups", user);
	if (setresgid(gid, gid, gid) == -1)
		fatal("worker %s: setresgid %u", user, (unsigned)gid);
	if (setresuid(uid, uid, uid) == -1)
		fatal("worker %s: setresuid %u", user, (unsigned)uid);
	user_verify(uid, gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("worker %s: PR_SET_NO_NEW_PRIVS", user);
	log_debug(2, "worker running as %s (%u:%u, %d groups%s)", user,
	    (unsigned)uid, (unsigned)gid, ngroups,
	    ipc_only ? ", IPC$ only, no state group" : "");
	return 0;
}
