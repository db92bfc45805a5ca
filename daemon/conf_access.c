/*
 * Who may use the server and a share: the syntax check of `hosts allow` /
 * `hosts deny` (their one matcher, for the master and the workers alike,
 * is daemon/conf_hosts.c) and `valid users` / `invalid users` (names, or
 * @group / +group for Unix group membership; invalid users wins), and
 * read list / write list with the same syntax.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int
conf_hosts_check(char *const *list, char *hint, size_t cap)
{
	struct conf_hostpat hp;
	int i, except = -1;

	for (i = 0; list != NULL && list[i] != NULL; i++) {
		if (strcasecmp(list[i], "EXCEPT") == 0) {
			if (i == 0 || except >= 0 || list[i + 1] == NULL) {
				snprintf(hint, cap, "EXCEPT must stand once between two lists");
				return -1;
			}
			except = i;
			continue;
		}
		if (conf_hostpat_parse(list[i], &hp) < 0) {
			snprintf(hint, cap, "'%s' is not an address, a network or ALL", list[i]);
			return -1;
		}
	}
	return 0;
}

int
conf_users_check(char *const *list, char *hint, size_t cap)
{
	int i;

	for (i = 0; list != NULL && list[i] != NULL; i++) {
		const char *s = list[i];
		size_t pre = strspn(s, "@+&");

		if (memchr(s, '&', pre) != NULL) {
			snprintf(hint, cap, "netgroups ('%s') are not supported", s);
			return -1;
		}
		if (s[pre] == '\0') {
			snprintf(hint, cap, "'%s' names no user or group", s);
			return -1;
		}
	}
	return 0;
}

int
conf_user_gid_in_group(const char *user, gid_t primary, const char *group)
{
	struct group *gr;
	gid_t gid, *groups = NULL;
	int n = 64, i, found = 0, tries;

	if ((gr = getgrnam(group)) == NULL)
		return 0;
	gid = gr->gr_gid;
	if (primary == gid)
		return 1;
	/* getgrouplist says how many it needs; bounded retries */
	for (tries = 0; tries < 4; tries++) {
		gid_t *ng = reallocarray(groups, (size_t)n, sizeof(gid_t));
		int want = n;

		if (ng == NULL)
			break;
		groups = ng;
		if (getgrouplist(user, primary, groups, &want) >= 0) {
			for (i = 0; i < want; i++)
				if (groups[i] == gid)
					found = 1;
			break;
		}
		n = want > n ? want : n * 2;
	}
	free(groups);
	return found;
}

/* Is the Unix account user a member (primary or supplementary) of group? */
static int
conf_user_in_group(const char *user, const char *group)
{
	struct passwd *pw;

	if ((pw = getpwnam(user)) == NULL)
		return 0;
	return conf_user_gid_in_group(user, pw->pw_gid, group);
}

static int
conf_users_match(char *const *list, const char *user,
    const struct conf_subst *v)
{
	char buf[256];

	for (; *list != NULL; list++) {
		const char *s = *list;
		size_t pre;

		/*
		 * Samba's token_contains_name: "%S", "@%G"... substituted
		 * first; an item whose value is refused matches nobody.
		 */
		if (v != NULL && strchr(s, '%') != NULL) {
			if (conf_subst(s, v, 0, buf, sizeof(buf)) != 0)
				continue;
			s = buf;
		}
		pre = strspn(s, "@+");

		if (pre > 0) {
			if (conf_user_in_group(user, s + pre))
				return 1;
		} else if (strcasecmp(s, user) == 0)
			return 1;
	}
	return 0;
}

int
conf_share_user_ok_subst(const struct conf_share *s, const char *user,
    const struct conf_subst *v)
{
	if (s->invalid_users != NULL &&
	    conf_users_match(s->invalid_users, user, v))
		return 0;
	if (s->valid_users != NULL && !conf_users_match(s->valid_users, user, v))
		return 0;
	return 1;
}

int
conf_share_user_ok(const struct conf_share *s, const char *user)
{
	return conf_share_user_ok_subst(s, user, NULL);
}

/*
 * Samba's rule: read only, then read list makes read-only, then write
 * list makes writable (a user in both may write).
 */
int
conf_share_user_read_only_subst(const struct conf_share *s, const char *user,
    const struct conf_subst *v)
{
	int ro = s->read_only;

	if (s->read_list != NULL && conf_users_match(s->read_list, user, v))
		ro = 1;
	if (s->write_list != NULL && conf_users_match(s->write_list, user, v))
		ro = 0;
	return ro;
}

int
conf_share_user_read_only(const struct conf_share *s, const char *user)
{
	return conf_share_user_read_only_subst(s, user, NULL);
}
