/*
 * Unit tests for daemon/conf.c's share keys beyond the basic ones: user
 * and host lists, modes, read and write lists, the recycle bin, oplocks,
 * short names and macOS clients' fruit keys.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "t/unit/conf_test.h"

/* valid users / invalid users of a share, groups included */
START_TEST(test_share_user_ok)
{
	struct conf *c;

	/* root is in group root (gid 0) on every Linux system */
	ck_assert_int_eq(load(
	    "[open]\npath = /o\n"
	    "[named]\npath = /n\nvalid users = Alice bob\n"
	    "[grp]\npath = /g\nvalid users = @root\n"
	    "[plus]\npath = /p\nvalid users = +root\n"
	    "[deny]\npath = /d\ninvalid users = root\n"
	    "[both]\npath = /b\nvalid users = +root alice\ninvalid users = alice\n", &c), 0);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "open"), "anyone"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "named"), "alice"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "named"), "BOB"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "named"), "carol"), 0);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "grp"), "root"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "grp"), "nobody"), 0);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "plus"), "root"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "deny"), "root"), 0);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "deny"), "alice"), 1);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "both"), "alice"), 0);
	ck_assert_int_eq(conf_share_user_ok(conf_share_find(c, "both"), "root"), 1);
	conf_free(c);
}
END_TEST

/* A share's own hosts lists, force modes and inherit permissions. */
START_TEST(test_share_mode_and_host_keys)
{
	struct conf *c;
	const struct conf_share *s;

	ck_assert_int_eq(load(
	    "[global]\n"
	    "hosts allow = 127.0.0.1\n"
	    "force create mode = 0020\n"
	    "[a]\n"
	    "path = /a\n"
	    "hosts allow = 10.0.0.0/8 192.168.\n"
	    "hosts deny = 127.0.0.1\n"
	    "force create mode = 0660\n"
	    "force directory mode = 2770\n"
	    "inherit permissions = yes\n"
	    "[b]\n"
	    "path = /b\n"
	    "deny hosts = ALL\n", &c), 0);
	ck_assert_str_eq(errs, "");
	/* [global]'s hosts lists are the server's, not the shares' */
	ck_assert_str_eq(c->hosts_allow[0], "127.0.0.1");
	s = &c->shares[1];
	ck_assert_str_eq(s->hosts_allow[0], "10.0.0.0/8");
	ck_assert_str_eq(s->hosts_allow[1], "192.168.");
	ck_assert_ptr_null(s->hosts_allow[2]);
	ck_assert_str_eq(s->hosts_deny[0], "127.0.0.1");
	ck_assert_uint_eq(s->force_create_mode, 0660);
	ck_assert_uint_eq(s->force_directory_mode, 02770);
	ck_assert_int_eq(s->inherit_permissions, 1);
	s = &c->shares[2];
	ck_assert_ptr_null(s->hosts_allow);
	ck_assert_str_eq(s->hosts_deny[0], "ALL");
	/* a share key in [global] is every share's default */
	ck_assert_uint_eq(s->force_create_mode, 0020);
	ck_assert_uint_eq(s->force_directory_mode, 0);
	ck_assert_int_eq(s->inherit_permissions, 0);
	ck_assert_ptr_null(c->shares[0].hosts_allow);
	conf_free(c);

	assert_fails("[a]\npath = /a\nhosts allow = 10.0.0.0/33\n",
	    "^:3: bad value '10.0.0.0/33' for 'hosts allow' ('10.0.0.0/33' is not "
	    "an address, a network or ALL)\n");
	assert_fails("[a]\npath = /a\nforce create mode = 0888\n",
	    "^:3: bad value '0888' for 'force create mode' (expected an octal mode "
	    "such as 0755)\n");
	assert_fails("[a]\npath = /a\ninherit permissions = maybe\n",
	    "^:3: bad value 'maybe' for 'inherit permissions' (expected yes or no)\n");
}
END_TEST

/* Samba's read list / write list: write list wins; groups as valid users. */
START_TEST(test_share_read_write_lists)
{
	struct conf *c;
	const struct conf_share *s;

	ck_assert_int_eq(load(
	    "[rw]\npath = /rw\nread only = no\nread list = alice @root\n"
	    "write list = dave\n"
	    "[ro]\npath = /ro\nwrite list = carol +root\nread list = carol\n"
	    "[plain]\npath = /p\nwritable = yes\n"
	    "access based share enum = yes\nhide unreadable = yes\n", &c), 0);
	s = conf_share_find(c, "rw");
	ck_assert_int_eq(conf_share_user_read_only(s, "ALICE"), 1);
	ck_assert_int_eq(conf_share_user_read_only(s, "root"), 1);
	ck_assert_int_eq(conf_share_user_read_only(s, "bob"), 0);
	ck_assert_int_eq(conf_share_user_read_only(s, "dave"), 0);
	ck_assert_int_eq(s->access_based_share_enum, 0);
	ck_assert_int_eq(s->hide_unreadable, 0);
	s = conf_share_find(c, "ro");
	ck_assert_int_eq(conf_share_user_read_only(s, "carol"), 0);	/* both */
	ck_assert_int_eq(conf_share_user_read_only(s, "root"), 0);
	ck_assert_int_eq(conf_share_user_read_only(s, "bob"), 1);
	s = conf_share_find(c, "plain");
	ck_assert_int_eq(conf_share_user_read_only(s, "bob"), 0);
	ck_assert_int_eq(s->access_based_share_enum, 1);
	ck_assert_int_eq(s->hide_unreadable, 1);
	conf_free(c);
	/* the lists take valid users' syntax, and [global] gives defaults */
	ck_assert_int_eq(load("[s]\npath = /s\nread list = &net\n", &c), 2);
	ck_assert_int_eq(load("[s]\npath = /s\nwrite list = @\n", &c), 2);
	ck_assert_int_eq(load("[global]\nhide unreadable = yes\n"
	    "read list = alice\n[s]\npath = /s\n", &c), 0);
	s = conf_share_find(c, "s");
	ck_assert_int_eq(s->hide_unreadable, 1);
	ck_assert_int_eq(conf_share_user_read_only(s, "bob"), 1);
	conf_free(c);
}
END_TEST

/* Recycle bin keys: a directory inside the share, %U once; sizes. */
START_TEST(test_recycle_keys)
{
	struct conf *c;

	assert_fails("[s]\npath = /s\nrecycle directory = ../bin\n",
	    "^:1: share [s]: recycle directory '../bin' must be a directory "
	    "inside the share, relative to its path, %U at most once\n");
	assert_fails("[s]\npath = /s\nrecycle directory = /srv/bin/%U\n",
	    "^:1: share [s]: recycle directory '/srv/bin/%U' must be a "
	    "directory inside the share, relative to its path, %U at most "
	    "once\n");
	assert_fails("[s]\npath = /s\nrecycle directory = a/./b\n",
	    "^:1: share [s]: recycle directory 'a/./b' must be a directory "
	    "inside the share, relative to its path, %U at most once\n");
	assert_fails("[s]\npath = /s\nrecycle directory = bin/%u\n",
	    "^:1: share [s]: recycle directory 'bin/%u' must be a directory "
	    "inside the share, relative to its path, %U at most once\n");
	assert_fails("[s]\npath = /s\nrecycle directory = %U/%U\n",
	    "^:1: share [s]: recycle directory '%U/%U' must be a directory "
	    "inside the share, relative to its path, %U at most once\n");
	assert_fails("[s]\npath = /s\nrecycle directory = a//b\n",
	    "^:1: share [s]: recycle directory 'a//b' must be a directory "
	    "inside the share, relative to its path, %U at most once\n");
	assert_fails("[s]\npath = /s\nsnapshot directory = .snaps/\n"
	    "recycle directory = .Snaps/bin/%U\n",
	    "^:1: share [s]: recycle directory '.Snaps/bin/%U' is inside the "
	    "snapshot directory '.snaps'\n");
	assert_fails("[s]\npath = /s\nrecycle max size = 10X\n",
	    "^:1: share [s]: recycle max size '10X' is not a size in bytes "
	    "(K, M, G allowed)\n");
	assert_fails("[s]\npath = /s\nrecycle max size = -1\n",
	    "^:1: share [s]: recycle max size '-1' is not a size in bytes "
	    "(K, M, G allowed)\n");
	assert_fails("[s]\npath = /s\nrecycle directory mode = 0999\n",
	    "^:3: bad value '0999' for 'recycle directory mode' (expected an "
	    "octal mode such as 0755)\n");
	/* a name that only begins like the snapshot directory is fine */
	ck_assert_int_eq(load("[s]\npath = /s\nsnapshot directory = .snap\n"
	    "recycle directory = .snapbin/%U\n", &c), 0);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nrecycle directory = .recycle/%U/\n"
	    "recycle exclude = *.tmp ~$*\n"
	    "[s]\npath = /s\nrecycle max size = 2M\nrecycle versions = yes\n"
	    "[t]\npath = /t\nrecycle directory =\nrecycle exclude =\n"
	    "[u]\npath = /u\nrecycle directory = a/bin-%U/x\n"
	    "recycle keep tree = yes\nrecycle directory mode = 0750\n"
	    "recycle max size = 1000\n", &c), 0);
	ck_assert_str_eq(c->shares[1].recycle_dir, ".recycle/%U");
	ck_assert_str_eq(c->shares[1].recycle_exclude, "*.tmp ~$*");
	ck_assert_uint_eq(c->shares[1].recycle_max_size, 2u << 20);
	ck_assert_int_eq(c->shares[1].recycle_versions, 1);
	ck_assert_int_eq(c->shares[1].recycle_keep_tree, 0);
	ck_assert_uint_eq(c->shares[1].recycle_dir_mode, 0700);
	ck_assert_ptr_null(c->shares[2].recycle_dir);
	ck_assert_ptr_null(c->shares[2].recycle_exclude);
	ck_assert_str_eq(c->shares[3].recycle_dir, "a/bin-%U/x");
	ck_assert_int_eq(c->shares[3].recycle_keep_tree, 1);
	ck_assert_uint_eq(c->shares[3].recycle_dir_mode, 0750);
	ck_assert_uint_eq(c->shares[3].recycle_max_size, 1000);
	ck_assert_int_eq(c->shares[3].recycle_versions, 0);
	conf_free(c);
	/* no key: off */
	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_ptr_null(c->shares[1].recycle_dir);
	ck_assert_uint_eq(c->shares[1].recycle_max_size, 0);
	conf_free(c);
}
END_TEST

/* change notify: global, default yes; a warning in a share, as Samba's */
START_TEST(test_change_notify_key)
{
	struct conf *c;

	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_int_eq(c->change_notify, 1);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nchange notify = no\n[s]\npath = /s\n",
	    &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->change_notify, 0);
	conf_free(c);
	ck_assert_int_eq(load("[s]\npath = /s\nchange notify = no\n", &c), 0);
	ck_assert_ptr_nonnull(strstr(errs, "change notify"));
	ck_assert_int_eq(c->change_notify, 1);
	conf_free(c);
	assert_fails("[global]\nchange notify = sometimes\n",
	    "^:2: bad value 'sometimes' for 'change notify' (expected yes or no)\n");
}
END_TEST

/* oplocks, level2 oplocks, veto oplock files, smb2 leases */
START_TEST(test_oplock_keys)
{
	struct conf *c;

	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_int_eq(c->shares[1].oplocks, 1);
	ck_assert_int_eq(c->shares[1].level2_oplocks, 1);
	ck_assert_ptr_null(c->shares[1].veto_oplock_pat);
	ck_assert_int_eq(c->smb2_leases, 1);
	ck_assert_int_eq(c->leasing, 1);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nlevel2 oplocks = no\n"
	    "veto oplock files = /*.mdb/*.accdb/\n"
	    "[db]\npath = /db\noplocks = no\n"
	    "[s]\npath = /s\nlevel2 oplocks = yes\nveto oplock files =\n"
	    "[t]\npath = /t\nveto oplock files = /*.dbf/Lock?.x/\n", &c), 0);
	ck_assert_str_eq(errs, "");
	/* [global] gives every share its value, the share's own wins */
	ck_assert_int_eq(c->shares[1].oplocks, 0);
	ck_assert_int_eq(c->shares[1].level2_oplocks, 0);
	ck_assert_int_eq(conf_namepat_match(c->shares[1].veto_oplock_pat,
	    "Orders.MDB", 10, 0), 1);
	ck_assert_int_eq(conf_namepat_match(c->shares[1].veto_oplock_pat,
	    "orders.txt", 10, 0), 0);
	ck_assert_int_eq(c->shares[2].oplocks, 1);
	ck_assert_int_eq(c->shares[2].level2_oplocks, 1);
	ck_assert_ptr_null(c->shares[2].veto_oplock_pat);
	ck_assert_int_eq(conf_namepat_match(c->shares[3].veto_oplock_pat,
	    "lock1.x", 7, 0), 1);
	ck_assert_int_eq(conf_namepat_match(c->shares[3].veto_oplock_pat,
	    "a.mdb", 5, 0), 0);
	/* a share's oplocks = no leaves leasing offered */
	ck_assert_int_eq(c->leasing, 1);
	conf_free(c);
	/* smb2 leases = no, or oplocks = no in [global]: no leasing */
	ck_assert_int_eq(load("[global]\nsmb2 leases = no\n[s]\npath = /s\n",
	    &c), 0);
	ck_assert_int_eq(c->smb2_leases, 0);
	ck_assert_int_eq(c->leasing, 0);
	ck_assert_int_eq(c->shares[1].oplocks, 1);
	conf_free(c);
	ck_assert_int_eq(load("[global]\noplocks = no\n[s]\npath = /s\n"
	    "oplocks = yes\n", &c), 0);
	ck_assert_int_eq(c->smb2_leases, 1);
	ck_assert_int_eq(c->leasing, 0);
	ck_assert_int_eq(c->shares[1].oplocks, 1);
	conf_free(c);
	/* smb2 leases is global only: a warning in a share, as Samba's */
	ck_assert_int_eq(load("[s]\npath = /s\nsmb2 leases = no\n", &c), 0);
	ck_assert_ptr_nonnull(strstr(errs, "smb2 leases"));
	conf_free(c);
	assert_fails("[s]\npath = /s\noplocks = maybe\n",
	    "^:3: bad value 'maybe' for 'oplocks' (expected yes or no)\n");
	ck_assert_int_eq(load("[s]\npath = /s\nveto oplock files = /a\\b/\n",
	    &c), 2);
	ck_assert_ptr_nonnull(strstr(errs, "share [s]"));
	ck_assert_ptr_nonnull(strstr(errs, "in veto oplock files"));
}
END_TEST

/* Samba's `mangled names`: yes, no, illegal (the default), per share. */
START_TEST(test_mangled_names)
{
	struct conf *c;

	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_int_eq(c->shares[1].mangled_names, MANGLED_NAMES_ILLEGAL);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nmangled names = yes\n"
	    "[a]\npath = /a\n[b]\npath = /b\nmangled names = no\n"
	    "[c]\npath = /c\nmangled names = illegal\n"
	    "[d]\npath = /d\nmangled names = false\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->shares[1].mangled_names, MANGLED_NAMES_YES);
	ck_assert_int_eq(c->shares[2].mangled_names, MANGLED_NAMES_NO);
	ck_assert_int_eq(c->shares[3].mangled_names, MANGLED_NAMES_ILLEGAL);
	ck_assert_int_eq(c->shares[4].mangled_names, MANGLED_NAMES_NO);
	conf_free(c);
	/* a bad value is an error naming the key */
	ck_assert_int_ne(load("[s]\npath = /s\nmangled names = hash2\n", &c),
	    0);
	ck_assert_ptr_nonnull(strstr(errs, "mangled names"));
}
END_TEST

/* Samba's `ea support` (worker/smb2_ea.c): yes by default, per share. */
START_TEST(test_ea_support)
{
	struct conf *c;

	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_int_eq(c->shares[1].ea_support, 1);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nea support = no\n"
	    "[a]\npath = /a\n[b]\npath = /b\nea support = yes\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->shares[1].ea_support, 0);
	ck_assert_int_eq(c->shares[2].ea_support, 1);
	conf_free(c);
	ck_assert_int_ne(load("[s]\npath = /s\nea support = some\n", &c),
	    0);
	ck_assert_ptr_nonnull(strstr(errs, "ea support"));
}
END_TEST

/* macOS clients: Samba's vfs objects and fruit: keys (worker/fruit.h) */
START_TEST(test_fruit_keys)
{
	struct conf *c;

	ck_assert_int_eq(load("[s]\npath = /s\n", &c), 0);
	ck_assert_int_eq(c->shares[1].fruit, 0);
	ck_assert_int_eq(c->shares[1].fruit_zero_file_id, 1);
	ck_assert_int_eq(c->shares[1].fruit_validate_afpinfo, 1);
	ck_assert_int_eq(c->shares[1].fruit_posix_rename, 1);
	ck_assert_int_eq(c->shares[1].fruit_convert_adouble, 1);
	ck_assert_int_eq(c->shares[1].fruit_wipe_blank_rfork, 0);
	ck_assert_int_eq(c->shares[1].fruit_delete_empty_adfiles, 0);
	/* Samba's defaults: netatalk's xattr, ._ files */
	ck_assert_int_eq(c->shares[1].fruit_metadata, FRUIT_META_NETATALK);
	ck_assert_int_eq(c->shares[1].fruit_resource, FRUIT_RSRC_FILE);
	ck_assert_int_eq(c->fruit_aapl, 1);
	ck_assert_int_eq(c->fruit_nfs_aces, 1);
	ck_assert_int_eq(c->fruit_copyfile, 0);
	ck_assert_ptr_null(c->fruit_model);
	conf_free(c);
	/* an admin's smb.conf as written for Samba */
	ck_assert_int_eq(load("[global]\nfruit:model = MacPro\n"
	    "fruit:copyfile = yes\nfruit:aapl = yes\n"
	    "fruit:metadata = stream\n"
	    "[mac]\npath = /m\nvfs objects = catia fruit streams_xattr\n"
	    "fruit:resource = file\nfruit:veto_appledouble = no\n"
	    "fruit:encoding = native\nfruit:locking = netatalk\n"
	    "[tm]\npath = /t\nvfs objects = fruit,streams_xattr\n"
	    "fruit:time machine = yes\nfruit:time machine max size = 32K\n"
	    "fruit:zero_file_id = no\nfruit:convert_adouble = no\n"
	    "fruit:wipe_intentionally_left_blank_rfork = yes\n"
	    "fruit:delete_empty_adfiles = yes\n"
	    "[plain]\npath = /p\nvfs objects = acl_xattr fruitcake\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_str_eq(c->fruit_model, "MacPro");
	ck_assert_int_eq(c->fruit_copyfile, 1);
	ck_assert_int_eq(c->shares[1].fruit, 1);
	ck_assert_int_eq(c->shares[1].fruit_metadata, FRUIT_META_STREAM);
	ck_assert_int_eq(c->shares[1].fruit_resource, FRUIT_RSRC_FILE);
	ck_assert_int_eq(c->shares[1].fruit_time_machine, 0);
	ck_assert_int_eq(c->shares[2].fruit, 1);
	ck_assert_int_eq(c->shares[2].fruit_time_machine, 1);
	ck_assert_uint_eq(c->shares[2].fruit_tm_max_size, 32768);
	ck_assert_int_eq(c->shares[2].fruit_zero_file_id, 0);
	ck_assert_int_eq(c->shares[2].fruit_convert_adouble, 0);
	ck_assert_int_eq(c->shares[2].fruit_wipe_blank_rfork, 1);
	ck_assert_int_eq(c->shares[2].fruit_delete_empty_adfiles, 1);
	ck_assert_int_eq(c->shares[1].fruit_convert_adouble, 1);
	/* a module whose name only begins with fruit is not fruit */
	ck_assert_int_eq(c->shares[3].fruit, 0);
	/* fruit:veto_appledouble (default yes): ._* joins veto files */
	ck_assert_ptr_null(c->shares[1].veto_files);
	ck_assert_str_eq(c->shares[2].veto_files, "/._*/");
	ck_assert_ptr_nonnull(c->shares[2].veto_pat);
	ck_assert_ptr_null(c->shares[3].veto_files);
	conf_free(c);
	ck_assert_int_eq(load("[a]\npath = /a\nvfs objects = fruit\n"
	    "veto files = /*.tmp/\n"
	    "[b]\npath = /b\nvfs objects = fruit\nveto files = /x\n"
	    "[c]\npath = /c\nvfs objects = fruit\nveto files = /._*/y/\n",
	    &c), 0);
	ck_assert_str_eq(c->shares[1].veto_files, "/*.tmp/._*/");
	ck_assert_str_eq(c->shares[2].veto_files, "/x/._*/");
	ck_assert_str_eq(c->shares[3].veto_files, "/._*/y/");
	conf_free(c);
	ck_assert_int_eq(load("[s]\npath = /s\nfruit:time machine max size = 2T\n",
	    &c), 0);
	ck_assert_uint_eq(c->shares[1].fruit_tm_max_size, 2ull << 40);
	conf_free(c);
	/* unknown fruit keys warn like any unknown key; bad values fail */
	ck_assert_int_eq(load("[s]\npath = /s\nfruit:no_such_key = yes\n",
	    &c), 0);
	assert_msgs("^:3: unknown key 'fruit:no_such_key' ignored\n");
	conf_free(c);
	assert_fails("[s]\npath = /s\nfruit:time machine max size = lots\n",
	    "^:1: share [s]: fruit:time machine max size 'lots' is not a "
	    "size in bytes (K, M, G, T allowed)\n");
	ck_assert_int_eq(load("[s]\npath = /s\nfruit:metadata = hfs\n", &c), 2);
}
END_TEST

static Suite *
conf_share_suite(void)
{
	Suite *s = suite_create("conf_share");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, conf_test_setup, conf_test_teardown);
	tcase_add_test(tc, test_share_user_ok);
	tcase_add_test(tc, test_share_mode_and_host_keys);
	tcase_add_test(tc, test_share_read_write_lists);
	tcase_add_test(tc, test_recycle_keys);
	tcase_add_test(tc, test_oplock_keys);
	tcase_add_test(tc, test_change_notify_key);
	tcase_add_test(tc, test_mangled_names);
	tcase_add_test(tc, test_ea_support);
	tcase_add_test(tc, test_fruit_keys);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conf_share_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
