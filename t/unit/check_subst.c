/*
 * Unit tests for Samba's variable substitutions (daemon/conf_subst.c),
 * the user lists that use them (daemon/conf_access.c), the [homes]
 * section at load, and what a TREE_CONNECT name resolves to
 * (worker/homes.c): as an attacker would try them, with values no
 * useradd makes (".", "..", "a/b", "") but NSS could give.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_test.h"
#include "daemon/conf.h"
#include "worker/homes.h"

static struct conf_subst
vals(void)
{
	struct conf_subst v;

	memset(&v, 0, sizeof(v));
	v.user = "alice";
	v.unix_user = "alice";
	v.group = "staff";
	v.home = "/home/alice";
	v.share = "alice";
	v.server = "FILER";
	v.host = "filer";
	v.client = "192.0.2.7";
	return v;
}

static int
sub(const char *tmpl, const struct conf_subst *v, int flags, char *out)
{
	return conf_subst(tmpl, v, flags, out, 256);
}

START_TEST(test_letters)
{
	struct conf_subst v = vals();
	char out[256];

	ck_assert_int_eq(sub("/srv/%U/%u/%G/%g/%S", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/srv/alice/alice/staff/staff/alice");
	ck_assert_int_eq(sub("%H/profile", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/home/alice/profile");
	ck_assert_int_eq(sub("/x/%L-%N-%h-%I", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/x/FILER-FILER-filer-192.0.2.7");
	/* %% is one '%', and does not start a letter */
	ck_assert_int_eq(sub("/x/100%%U", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/x/100%U");
	/* unknown letters and a lone '%' are kept as written, as Samba */
	ck_assert_int_eq(sub("/x/%m/%z/%", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/x/%m/%z/%");
	/* a list item: no path rule */
	ck_assert_int_eq(sub("@%G", &v, 0, out), 0);
	ck_assert_str_eq(out, "@staff");
	ck_assert_int_eq(sub("%S", &v, 0, out), 0);
	ck_assert_str_eq(out, "alice");
}
END_TEST

/* Every value that could name another place is refused, in every letter. */
START_TEST(test_hostile_values)
{
	static const char *const bad[] = { "", ".", "..", "a/b", "/", "../x",
	    "x/..", "/etc" };
	static const char letters[] = "UuGgSLNhI";
	struct conf_subst v;
	char tmpl[16], out[256];
	size_t i, k;

	for (k = 0; letters[k] != '\0'; k++) {
		snprintf(tmpl, sizeof(tmpl), "/srv/%%%c", letters[k]);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			v = vals();
			switch (letters[k]) {
			case 'U': v.user = bad[i]; break;
			case 'u': v.unix_user = bad[i]; break;
			case 'G': case 'g': v.group = bad[i]; break;
			case 'S': v.share = bad[i]; break;
			case 'L': case 'N': v.server = bad[i]; break;
			case 'h': v.host = bad[i]; break;
			case 'I': v.client = bad[i]; break;
			}
			ck_assert_msg(sub(tmpl, &v, CONF_SUBST_PATH, out) == -EINVAL,
			    "%s with \"%s\" accepted: %s", tmpl, bad[i], out);
			/* in a user list too: the item matches nobody */
			ck_assert_int_eq(sub(tmpl + 5, &v, 0, out), -EINVAL);
		}
		/* an unknown value (NULL) is refused, never left empty */
		v = vals();
		v.user = v.unix_user = v.group = v.share = v.server = NULL;
		v.host = v.client = NULL;
		ck_assert_int_eq(sub(tmpl, &v, CONF_SUBST_PATH, out), -EINVAL);
	}
}
END_TEST

/* %H is a path: it must be absolute and have no "." or ".." component. */
START_TEST(test_home_values)
{
	struct conf_subst v = vals();
	char out[256];

	v.home = "relative/home";
	ck_assert_int_eq(sub("%H", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.home = "";
	ck_assert_int_eq(sub("%H/x", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.home = "/home/../etc";
	ck_assert_int_eq(sub("%H", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.home = "/home/./alice";
	ck_assert_int_eq(sub("%H", &v, CONF_SUBST_PATH, out), -EINVAL);
	/* "/" alone is the whole system, not a home (Samba's rule) */
	v.home = "/";
	ck_assert_int_eq(sub("%H/x", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.home = "//";
	ck_assert_int_eq(sub("%H", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.home = "/home/alice/";
	ck_assert_int_eq(sub("%H", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/home/alice/");
}
END_TEST

/*
 * A value that is not "." or ".." alone but makes such a component with
 * the template's own text: the result is refused all the same.
 */
START_TEST(test_path_components)
{
	struct conf_subst v = vals();
	char out[256];

	v.user = ".x";	/* fine alone */
	ck_assert_int_eq(sub("/srv/%U", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/srv/.x");
	v.user = "x";
	ck_assert_int_eq(sub("/srv/%U", &v, CONF_SUBST_PATH, out), 0);
	/* "." + "." and "" + ".." would leave the directory */
	v.group = ".";
	ck_assert_int_eq(sub("/srv/.%G", &v, CONF_SUBST_PATH, out), -EINVAL);
	v.group = "staff";
	/* a template of the admin's with ".." is refused whole (not a
	 * substitution's fault, but never opened either) */
	ck_assert_int_eq(sub("/srv/../%U", &v, CONF_SUBST_PATH, out), -EINVAL);
	ck_assert_int_eq(sub("/srv/%U/..", &v, CONF_SUBST_PATH, out), -EINVAL);
	ck_assert_int_eq(sub("srv/%U", &v, CONF_SUBST_PATH, out), -EINVAL);
	/* "..a" is a name, not ".." */
	v.user = "a";
	ck_assert_int_eq(sub("/srv/..%U", &v, CONF_SUBST_PATH, out), 0);
	ck_assert_str_eq(out, "/srv/..a");
}
END_TEST

START_TEST(test_lengths)
{
	struct conf_subst v = vals();
	char out[16], big[300];

	ck_assert_int_eq(conf_subst("/srv/%U", &v, CONF_SUBST_PATH, out, 11), 0);
	ck_assert_str_eq(out, "/srv/alice");
	ck_assert_int_eq(conf_subst("/srv/%U", &v, CONF_SUBST_PATH, out, 10),
	    -ENAMETOOLONG);
	ck_assert_int_eq(conf_subst("/srv/%U", &v, CONF_SUBST_PATH, out, 0),
	    -ENAMETOOLONG);
	memset(big, 'u', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	v.user = big;
	ck_assert_int_eq(conf_subst("/%U", &v, CONF_SUBST_PATH, out, sizeof(out)),
	    -ENAMETOOLONG);
}
END_TEST

START_TEST(test_uses)
{
	ck_assert_int_eq(conf_subst_uses("/srv/%I", 'I'), 1);
	ck_assert_int_eq(conf_subst_uses("/srv/%%I", 'I'), 0);
	ck_assert_int_eq(conf_subst_uses("/srv/%%%I", 'I'), 1);
	ck_assert_int_eq(conf_subst_uses("/srv/x%", 'I'), 0);
	ck_assert_int_eq(conf_subst_uses(NULL, 'I'), 0);
	ck_assert_int_eq(conf_subst_varies("/srv/%m/100%%"), 0);
	ck_assert_int_eq(conf_subst_varies("/srv/%G"), 1);
	ck_assert_int_eq(conf_subst_varies("%H"), 1);
}
END_TEST

/* valid users = %S and friends, through the lists' one matcher. */
START_TEST(test_lists)
{
	struct conf *c;
	const struct conf_share *sh;
	struct conf_subst v = vals();

	ck_assert_int_eq(load("[homes]\n valid users = %S\n read list = %U\n"
	    " write list = @%G\n[p]\npath = /srv\ninvalid users = %U\n", &c), 0);
	sh = conf_homes(c);
	ck_assert_ptr_nonnull(sh);
	v.share = "alice";
	ck_assert_int_eq(conf_share_user_ok_subst(sh, "alice", &v), 1);
	/* alice at bob's home: %S is bob */
	v.share = "bob";
	ck_assert_int_eq(conf_share_user_ok_subst(sh, "alice", &v), 0);
	/* as written (no substitution), "%S" is nobody's name */
	ck_assert_int_eq(conf_share_user_ok(sh, "alice"), 0);
	/* a refused value matches nobody: valid users refuses everyone */
	v.share = "..";
	ck_assert_int_eq(conf_share_user_ok_subst(sh, "..", &v), 0);
	/* read list %U: read-only; write list @%G of a group she is not in */
	v = vals();
	v.group = "nosuchgroup-usmbd";
	ck_assert_int_eq(conf_share_user_read_only_subst(sh, "alice", &v), 1);
	/* invalid users = %U refuses the user himself */
	sh = conf_share_find(c, "p");
	ck_assert_int_eq(conf_share_user_ok_subst(sh, "alice", &v), 0);
	ck_assert_int_eq(conf_share_user_ok(sh, "alice"), 1);
	conf_free(c);
}
END_TEST

START_TEST(test_load_homes)
{
	struct conf *c;
	const struct conf_share *sh;

	/* [homes] without a path: the home directory; no error */
	ck_assert_int_eq(load("[global]\npath = /srv\n[homes]\nread only = no\n",
	    &c), 0);
	ck_assert_str_eq(errs, "");
	sh = conf_homes(c);
	ck_assert_ptr_nonnull(sh);
	ck_assert_int_eq(sh->is_homes, 1);
	ck_assert_ptr_null(sh->path);	/* not [global]'s (Samba's lp_add_home) */
	ck_assert_int_eq(sh->read_only, 0);
	ck_assert_int_eq(c->homes_browseable, 1);
	ck_assert_ptr_eq(conf_share_find(c, "HOMES"), sh);
	conf_free(c);
	/* an empty path is the home directory too */
	ck_assert_int_eq(load("[homes]\npath =\n", &c), 0);
	ck_assert_ptr_null(conf_homes(c)->path);
	conf_free(c);
	/* %H paths and %-paths of other shares */
	ck_assert_int_eq(load("[global]\nbrowseable = no\n[homes]\npath = %H/smb\n"
	    "[prof]\npath = /srv/profiles/%U\n[fixed]\npath = /srv/100%%\n", &c), 0);
	ck_assert_int_eq(conf_homes(c)->path_varies, 1);
	ck_assert_int_eq(conf_share_find(c, "prof")->path_varies, 1);
	ck_assert_int_eq(conf_share_find(c, "fixed")->path_varies, 0);
	ck_assert_int_eq(c->homes_browseable, 0);
	conf_free(c);
	/* without [homes] */
	ck_assert_int_eq(load("[a]\npath = /srv\n", &c), 0);
	ck_assert_ptr_null(conf_homes(c));
	conf_free(c);
}
END_TEST

START_TEST(test_load_refused)
{
	struct conf *c;

	/* a share still needs a path; a relative one is refused */
	assert_fails("[a]\npath =\n", "^:1: share [a] has no path\n");
	assert_fails("[a]\npath = srv/%U\n",
	    "^:2: bad value 'srv/%U' for 'path' (expected an absolute path)\n"
	    "^:1: share [a] has no path\n");
	assert_fails("[homes]\npath = %H/../y\n[a]\npath = %U\n",
	    "^:4: bad value '%U' for 'path' (expected an absolute path)\n"
	    "^:1: share [homes]: path '%H/../y' has a \".\" or \"..\" "
	    "component\n"
	    "^:3: share [a] has no path\n");
	assert_fails("[p]\npath = /srv/./%U\n",
	    "^:1: share [p]: path '/srv/./%U' has a \".\" or \"..\" "
	    "component\n");
	/* a letter Samba substitutes and usmbd does not: a warning */
	ck_assert_int_eq(load("[a]\npath = /srv/%m\n", &c), 0);
	ck_assert_ptr_nonnull(strstr(errs, "%m is not substituted"));
	conf_free(c);
}
END_TEST

static char self_user[64], self_home[PATH_MAX];

static void
self_setup(void)
{
	struct passwd *pw = getpwuid(getuid());

	ck_assert_ptr_nonnull(pw);
	snprintf(self_user, sizeof(self_user), "%s", pw->pw_name);
	snprintf(self_home, sizeof(self_home), "%s", pw->pw_dir);
	homes_init(self_user, pw->pw_gid);
	conf_test_setup();
}

static const char *
client_addr(void *arg, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", (const char *)arg);
	return buf;
}

/* What a TREE_CONNECT name resolves to, as the process's own user. */
START_TEST(test_resolve)
{
	struct homes_target *t = malloc(sizeof(*t));
	struct conf *c;
	char want[PATH_MAX + 32];

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(load("[homes]\n[data]\npath = /srv/%U/%I\n", &c), 0);
	/* the user's own name, and "homes", are his home */
	ck_assert_uint_eq(homes_resolve(c, self_user, self_user, NULL, NULL, t),
	    STATUS_SUCCESS);
	ck_assert_int_eq(t->home, 1);
	ck_assert_str_eq(t->name, self_user);
	ck_assert_str_eq(t->path, self_home);
	ck_assert_ptr_eq(t->share, conf_homes(c));
	ck_assert_uint_eq(homes_resolve(c, "homes", self_user, NULL, NULL, t),
	    STATUS_SUCCESS);
	ck_assert_str_eq(t->name, self_user);
	/* a configured share comes first; its path substituted */
	ck_assert_uint_eq(homes_resolve(c, "DATA", self_user, client_addr,
	    "192.0.2.9", t), STATUS_SUCCESS);
	ck_assert_int_eq(t->home, 0);
	ck_assert_str_eq(t->name, "data");
	snprintf(want, sizeof(want), "/srv/%s/192.0.2.9", self_user);
	ck_assert_str_eq(t->path, want);
	/* %I unknown (a relay without a vouched address): refused */
	ck_assert_uint_eq(homes_resolve(c, "data", self_user, NULL, NULL, t),
	    STATUS_ACCESS_DENIED);
	/* an address text with a '/' cannot name a directory below */
	ck_assert_uint_eq(homes_resolve(c, "data", self_user, client_addr,
	    "../../etc", t), STATUS_ACCESS_DENIED);
	/* no such user, no such share */
	ck_assert_uint_eq(homes_resolve(c, "no-such-user-usmbd", self_user,
	    NULL, NULL, t), STATUS_BAD_NETWORK_NAME);
	/* guests and anonymous sessions get no home share */
	ck_assert_uint_eq(homes_resolve(c, self_user, NULL, NULL, NULL, t),
	    STATUS_BAD_NETWORK_NAME);
	ck_assert_uint_eq(homes_resolve(c, "homes", "", NULL, NULL, t),
	    STATUS_BAD_NETWORK_NAME);
	conf_free(c);
	/* without [homes] a user's name is no share */
	ck_assert_int_eq(load("[data]\npath = /srv\n", &c), 0);
	ck_assert_uint_eq(homes_resolve(c, self_user, self_user, NULL, NULL, t),
	    STATUS_BAD_NETWORK_NAME);
	ck_assert_uint_eq(homes_resolve(c, "IPC$", NULL, NULL, NULL, t),
	    STATUS_SUCCESS);
	ck_assert_int_eq(t->share->is_ipc, 1);
	conf_free(c);
	/* [homes] with a path: %S is the share's name */
	ck_assert_int_eq(load("[homes]\npath = /srv/homes/%S\n", &c), 0);
	ck_assert_uint_eq(homes_resolve(c, "homes", self_user, NULL, NULL, t),
	    STATUS_SUCCESS);
	snprintf(want, sizeof(want), "/srv/homes/%s", self_user);
	ck_assert_str_eq(t->path, want);
	conf_free(c);
	free(t);
}
END_TEST

/* A user whose home is "/" has no home share (Samba's rule). */
START_TEST(test_resolve_root_home)
{
	struct homes_target *t = malloc(sizeof(*t));
	struct passwd *pw;
	struct conf *c;
	const char *who = NULL;

	ck_assert_ptr_nonnull(t);
	setpwent();
	while ((pw = getpwent()) != NULL)
		if (strcmp(pw->pw_dir, "/") == 0 && strlen(pw->pw_name) < 60) {
			who = strdupa(pw->pw_name);
			break;
		}
	endpwent();
	ck_assert_int_eq(load("[homes]\n", &c), 0);
	if (who != NULL)
		ck_assert_uint_eq(homes_resolve(c, who, self_user, NULL, NULL, t),
		    STATUS_BAD_NETWORK_NAME);
	conf_free(c);
	free(t);
}
END_TEST

static Suite *
subst_suite(void)
{
	Suite *s = suite_create("subst");
	TCase *tc = tcase_create("subst");
	TCase *tl = tcase_create("load");

	tcase_add_test(tc, test_letters);
	tcase_add_test(tc, test_hostile_values);
	tcase_add_test(tc, test_home_values);
	tcase_add_test(tc, test_path_components);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_uses);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tl, self_setup, conf_test_teardown);
	tcase_add_test(tl, test_lists);
	tcase_add_test(tl, test_load_homes);
	tcase_add_test(tl, test_load_refused);
	tcase_add_test(tl, test_resolve);
	tcase_add_test(tl, test_resolve_root_home);
	suite_add_tcase(s, tl);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(subst_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
