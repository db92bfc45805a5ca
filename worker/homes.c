/*
 * [homes] and per-user share paths (worker/homes.h): Samba's home shares
 * (smb.conf(5), THE [homes] SECTION; source3/param/service.c
 * find_service, source3/smbd/smb2_tcon.c) and its substitutions in a
 * share's path (daemon/conf_subst.c).
 *
 * Where the names come from.  The worker is its user's process: it reads
 * its own passwd entry and primary group once, before its seccomp filter
 * (homes_init), so a tree connect to the user's own home, or to a share
 * whose path has %U, %G or %H, costs no lookup.  A tree connect to
 * another user's home (alice asks for \\server\bob) needs bob's entry:
 * one getpwnam_r, in the worker, at that tree connect only (never on a
 * request of the tree), into a buffer on the stack.  The worker's
 * filter is a deny-list that leaves NSS its files and sockets.  Nothing
 * is trusted of that entry but what names the share: the root is opened
 * by the worker, as alice, exactly like a configured share's (the kernel
 * judges whether alice may enter bob's home), and the substituted values
 * are refused when they could name another place (conf_subst).
 *
 * What usmbd decides where Samba lets the admin: a guest or anonymous
 * session gets no home share (Samba would give the guest account's, or
 * any user's named one, to a guest on a `guest ok` [homes]); the share's
 * name is the passwd name (Samba keeps the client's spelling).
 */
#include "worker/homes.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/log.h"

static struct {
	char	user[64];
	char	home[PATH_MAX];
	char	group[256];
	char	host[256];
} homes_me;

void
homes_init(const char *user, gid_t gid)
{
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;

	memset(&homes_me, 0, sizeof(homes_me));
	snprintf(homes_me.user, sizeof(homes_me.user), "%s", user);
	if (getpwnam_r(user, &pw, buf, sizeof(buf), &pwp) == 0 && pwp != NULL &&
	    strlen(pw.pw_dir) < sizeof(homes_me.home))
		strcpy(homes_me.home, pw.pw_dir);
	if (getgrgid_r(gid, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL &&
	    strlen(gr.gr_name) < sizeof(homes_me.group))
		strcpy(homes_me.group, gr.gr_name);
	if (gethostname(homes_me.host, sizeof(homes_me.host) - 1) != 0)
		homes_me.host[0] = '\0';
}

/*
 * A passwd entry's name and home, for a user other than ours: exact,
 * then lower case (Samba's Get_Pwnam tries its case variants).  0 or -1.
 */
static int
homes_lookup(const char *name, char *canon, size_t ccap, char *home,
    size_t hcap, gid_t *gid)
{
	char buf[4096], low[CONF_SHARE_NAME_MAX + 1];
	struct passwd pw, *pwp = NULL;
	size_t i;

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &pwp) != 0 || pwp == NULL) {
		if (strlen(name) >= sizeof(low))
			return -1;
		for (i = 0; name[i] != '\0'; i++)
			low[i] = (char)tolower((unsigned char)name[i]);
		low[i] = '\0';
		if (strcmp(low, name) == 0 || getpwnam_r(low, &pw, buf,
		    sizeof(buf), &pwp) != 0 || pwp == NULL)
			return -1;
	}
	if (strlen(pw.pw_name) >= ccap || strlen(pw.pw_dir) >= hcap)
		return -1;
	strcpy(canon, pw.pw_name);
	strcpy(home, pw.pw_dir);
	if (gid != NULL)
		*gid = pw.pw_gid;
	return 0;
}

/* The session user's %H and %G: ours from homes_init, another's looked up. */
static void
homes_user_values(const char *user, struct homes_target *t)
{
	char canon[64], buf[4096];
	struct group gr, *grp = NULL;
	gid_t gid;

	t->user_home[0] = t->user_group[0] = '\0';
	if (strcmp(user, homes_me.user) == 0) {
		strcpy(t->user_home, homes_me.home);
		strcpy(t->user_group, homes_me.group);
		return;
	}
	if (homes_lookup(user, canon, sizeof(canon), t->user_home,
	    sizeof(t->user_home), &gid) != 0)
		return;
	if (getgrgid_r(gid, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL &&
	    strlen(gr.gr_name) < sizeof(t->user_group))
		strcpy(t->user_group, gr.gr_name);
}

/*
 * A home directory Samba would not serve: none, or "/" (the whole
 * system as a share: register_homes_share refuses it).
 */
static int
homes_dir_ok(const char *home)
{
	return home[0] == '/' && strspn(home, "/") != strlen(home);
}

ntstatus_t
homes_resolve(const struct conf *cf, const char *name, const char *user,
    const char *(*client)(void *arg, char *buf, size_t cap), void *arg,
    struct homes_target *t)
{
	const struct conf_share *sh = conf_share_find(cf, name);
	const char *tmpl;
	int rc;

	memset(&t->v, 0, sizeof(t->v));
	t->home = 0;
	t->path[0] = t->client[0] = t->owner_home[0] = '\0';
	if (sh == NULL || sh->is_homes) {
		/* \\server\homes is the user's own home, as Samba's tcon */
		const struct conf_share *homes = conf_homes(cf);

		if (homes == NULL || user == NULL || user[0] == '\0')
			return STATUS_BAD_NETWORK_NAME;
		if (sh != NULL || strcasecmp(name, user) == 0) {
			if (strlen(user) >= sizeof(t->name))
				return STATUS_BAD_NETWORK_NAME;
			strcpy(t->name, user);
			strcpy(t->owner_home, strcmp(user, homes_me.user) == 0 ?
			    homes_me.home : "");
			if (t->owner_home[0] == '\0' && homes_lookup(user,
			    t->name, sizeof(t->name), t->owner_home,
			    sizeof(t->owner_home), NULL) != 0)
				return STATUS_BAD_NETWORK_NAME;
		} else if (homes_lookup(name, t->name, sizeof(t->name),
		    t->owner_home, sizeof(t->owner_home), NULL) != 0) {
			log_debug(2, "no share \"%s\" and no such user", name);
			return STATUS_BAD_NETWORK_NAME;
		}
		/* a configured share of that name would have been found */
		if (!homes_dir_ok(t->owner_home)) {
			log_debug(2, "home share %s: no home directory (\"%s\")",
			    t->name, t->owner_home);
			return STATUS_BAD_NETWORK_NAME;
		}
		sh = homes;
		t->home = 1;
	} else {
		snprintf(t->name, sizeof(t->name), "%s", sh->name);
	}
	t->share = sh;
	if (sh->is_ipc)
		return STATUS_SUCCESS;
	t->v.share = t->name;
	t->v.server = cf->netbios_name;
	t->v.host = homes_me.host;
	if (user != NULL && user[0] != '\0') {
		homes_user_values(user, t);
		t->v.user = t->v.unix_user = user;
		t->v.group = t->user_group;
		t->v.home = t->user_home;
	}
	tmpl = sh->path;
	if (tmpl != NULL && client != NULL && conf_subst_uses(tmpl, 'I'))
		t->v.client = client(arg, t->client, sizeof(t->client));
	/* client addresses in the user lists are not Samba's: not offered */
	if (tmpl == NULL) {
		/*
		 * [homes] without a path: the owner's home directory, under
		 * the rules of a substituted %H (no "." or ".." component).
		 */
		struct conf_subst ov;

		memset(&ov, 0, sizeof(ov));
		ov.home = t->owner_home;
		if (conf_subst("%H", &ov, CONF_SUBST_PATH, t->path,
		    sizeof(t->path)) != 0) {
			log_warnx("home share %s: home directory \"%s\" refused",
			    t->name, t->owner_home);
			return STATUS_BAD_NETWORK_NAME;
		}
		return STATUS_SUCCESS;
	}
	if (!sh->path_varies) {
		if (strlen(tmpl) >= sizeof(t->path))
			return STATUS_BAD_NETWORK_NAME;
		strcpy(t->path, tmpl);
		return STATUS_SUCCESS;
	}
	rc = conf_subst(tmpl, &t->v, CONF_SUBST_PATH, t->path, sizeof(t->path));
	if (rc != 0) {
		log_warnx("share %s: path %s refused for user %s: %s", t->name,
		    tmpl, user != NULL && user[0] != '\0' ? user : "(none)",
		    rc == -ENAMETOOLONG ? "too long" :
		    "a substituted value is empty, \".\", \"..\" or holds '/'");
		return rc == -ENAMETOOLONG ? STATUS_BAD_NETWORK_NAME :
		    STATUS_ACCESS_DENIED;
	}
	return STATUS_SUCCESS;
}

/*
 * The names of other users' home shares this worker connected, kept for
 * its life (a tree points at its name; 64 distinct ones at most: alice
 * seldom visits 64 colleagues' homes).
 */
#define HOMES_NAMES_MAX	64
static char homes_names[HOMES_NAMES_MAX][CONF_SHARE_NAME_MAX + 1];
static unsigned homes_nnames;

const char *
homes_tree_name(const struct homes_target *t)
{
	unsigned i;

	if (!t->home)
		return t->share->name;
	if (strcmp(t->name, homes_me.user) == 0)
		return homes_me.user;
	for (i = 0; i < homes_nnames; i++)
		if (strcmp(homes_names[i], t->name) == 0)
			return homes_names[i];
	if (homes_nnames == HOMES_NAMES_MAX) {
		log_warnx("home share %s: this worker holds %u other users' "
		    "home names already", t->name, HOMES_NAMES_MAX);
		return NULL;
	}
	strcpy(homes_names[homes_nnames], t->name);
	return homes_names[homes_nnames++];
}

int
homes_own_share(const struct conf *cf, const char *user,
    struct conf_share *out, char *buf, size_t cap)
{
	const struct conf_share *homes = conf_homes(cf);
	struct conf_subst v;
	size_t n;

	if (homes == NULL || user == NULL || user[0] == '\0' ||
	    strcmp(user, homes_me.user) != 0 || !homes_dir_ok(homes_me.home) ||
	    strlen(user) > CONF_SHARE_NAME_MAX ||
	    conf_share_find(cf, user) != NULL)
		return -1;
	*out = *homes;
	out->name = homes_me.user;
	out->is_homes = 0;
	/* the path as the tree connect makes it; %I unknown here */
	memset(&v, 0, sizeof(v));
	v.user = v.unix_user = v.share = homes_me.user;
	v.group = homes_me.group;
	v.home = homes_me.home;
	v.server = cf->netbios_name;
	v.host = homes_me.host;
	if (homes->path == NULL) {
		if (strlen(homes_me.home) >= cap / 2)
			return -1;
		strcpy(buf, homes_me.home);
	} else if (conf_subst(homes->path, &v, CONF_SUBST_PATH, buf,
	    cap / 2) != 0) {
		snprintf(buf, cap / 2, "%s", homes->path);
	}
	out->path = buf;
	n = strlen(buf) + 1;
	/* Samba's lp_add_home: "Home directory of USER" unless commented */
	if (homes->comment == NULL || homes->comment[0] == '\0') {
		snprintf(buf + n, cap - n, "Home directory of %s", homes_me.user);
		out->comment = buf + n;
	}
	out->browseable = cf->homes_browseable;
	return 0;
}
