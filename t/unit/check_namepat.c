/*
 * Name rules of a share: the pattern compiler and matcher of `veto files`
 * and `hide files` (daemon/conf_namepat.c), the keys as conf_load reads
 * them, and what worker/namerule.c makes of them (statuses, the hidden
 * attribute, delete veto files).  The patterns come from the
 * configuration, never from the network: this suite, not a fuzz target,
 * covers the parser.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/conf_int.h"
#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "worker/namerule.h"

static struct conf_namepat *
compile(const char *list)
{
	struct conf_namepat *np = NULL;
	char hint[160] = "";

	ck_assert_int_eq(conf_namepat_compile(list, &np, hint, sizeof(hint)),
	    0);
	return np;
}

static int
m(const struct conf_namepat *np, const char *name, int cs)
{
	return conf_namepat_match(np, name, strlen(name), cs);
}

START_TEST(test_compile)
{
	struct conf_namepat *np = NULL;
	char hint[160] = "", big[400];

	/* nothing to match: no block at all */
	ck_assert_int_eq(conf_namepat_compile(NULL, &np, hint, sizeof(hint)), 0);
	ck_assert_ptr_null(np);
	ck_assert_int_eq(conf_namepat_compile("", &np, hint, sizeof(hint)), 0);
	ck_assert_ptr_null(np);
	ck_assert_int_eq(conf_namepat_compile("///", &np, hint, sizeof(hint)),
	    0);
	ck_assert_ptr_null(np);
	ck_assert_int_eq(m(NULL, "x", 0), 0);
	/* a backslash: an entry is a name, not a path */
	ck_assert_int_eq(conf_namepat_compile("/a\\b/", &np, hint,
	    sizeof(hint)), -EINVAL);
	ck_assert_ptr_null(np);
	ck_assert_ptr_nonnull(strstr(hint, "a\\b"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(conf_namepat_compile(big, &np, hint, sizeof(hint)),
	    -EINVAL);
	/* 255 bytes is a name's limit and still fine */
	big[255] = '\0';
	np = compile(big);
	ck_assert_int_eq(m(np, big, 1), 1);
	conf_namepat_free(np);
}
END_TEST

START_TEST(test_match_plain)
{
	/* Samba's syntax: leading, trailing and doubled '/' are harmless */
	struct conf_namepat *np = compile("/.DS_Store//Thumbs.db/My Docs");

	ck_assert_int_eq(m(np, ".DS_Store", 0), 1);
	ck_assert_int_eq(m(np, ".ds_store", 0), 1);
	ck_assert_int_eq(m(np, "THUMBS.DB", 0), 1);
	ck_assert_int_eq(m(np, "my docs", 0), 1);	/* spaces are name */
	ck_assert_int_eq(m(np, "THUMBS.DB", 1), 0);
	ck_assert_int_eq(m(np, "Thumbs.db", 1), 1);
	/* whole names only */
	ck_assert_int_eq(m(np, "Thumbs.db.", 0), 0);
	ck_assert_int_eq(m(np, "Thumbs.d", 0), 0);
	ck_assert_int_eq(m(np, "xThumbs.db", 0), 0);
	ck_assert_int_eq(m(np, "", 0), 0);
	conf_namepat_free(np);
}
END_TEST

START_TEST(test_match_wild)
{
	struct conf_namepat *np = compile("/._*/*.tmp/a?c/*x*y*/~$*");

	ck_assert_int_eq(m(np, "._foo", 0), 1);
	ck_assert_int_eq(m(np, "._", 0), 1);		/* '*' matches nothing */
	ck_assert_int_eq(m(np, "_.foo", 0), 0);
	ck_assert_int_eq(m(np, "report.TMP", 0), 1);
	ck_assert_int_eq(m(np, "report.TMP", 1), 0);
	ck_assert_int_eq(m(np, ".tmp", 0), 1);
	ck_assert_int_eq(m(np, "a.tmp.old", 0), 0);
	ck_assert_int_eq(m(np, "abc", 0), 1);
	ck_assert_int_eq(m(np, "ac", 0), 0);		/* '?' is exactly one */
	ck_assert_int_eq(m(np, "abbc", 0), 0);
	ck_assert_int_eq(m(np, "a\xc3\xa9" "c", 0), 1);	/* one code point */
	ck_assert_int_eq(m(np, "1x2x3y4", 0), 1);	/* backtracking */
	ck_assert_int_eq(m(np, "yx", 0), 0);
	ck_assert_int_eq(m(np, "~$doc.docx", 0), 1);
	conf_namepat_free(np);
	/* the literal ends tested first: never more than the matcher says */
	np = compile("a*a/x?*.Tmp/*\xc3\xa9");
	ck_assert_int_eq(m(np, "a", 0), 0);
	ck_assert_int_eq(m(np, "aa", 0), 1);
	ck_assert_int_eq(m(np, "A.b.A", 0), 1);
	ck_assert_int_eq(m(np, "xy.tmp", 0), 1);
	ck_assert_int_eq(m(np, "x.tmp", 0), 0);
	ck_assert_int_eq(m(np, "xy.TMP", 1), 0);
	ck_assert_int_eq(m(np, "xy.Tmp", 1), 1);
	ck_assert_int_eq(m(np, "caf\xc3\x89", 0), 1);	/* CAFÉ */
	ck_assert_int_eq(m(np, "caf\xc3\x89", 1), 0);
	/* "." and ".." are never vetoed, even by "*" or ".*" */
	conf_namepat_free(np);
	np = compile("*/.*");
	ck_assert_int_eq(m(np, ".", 0), 0);
	ck_assert_int_eq(m(np, "..", 0), 0);
	ck_assert_int_eq(m(np, "...", 0), 1);
	ck_assert_int_eq(m(np, "anything", 0), 1);
	conf_namepat_free(np);
}
END_TEST

START_TEST(test_match_unicode)
{
	/* "Ä*" and "ÉTÉ": folded like the case-insensitive name lookup */
	struct conf_namepat *np = compile("\xc3\x84*/\xc3\x89T\xc3\x89");

	ck_assert_int_eq(m(np, "\xc3\xa4rger", 0), 1);		/* ärger */
	ck_assert_int_eq(m(np, "\xc3\xa4rger", 1), 0);
	ck_assert_int_eq(m(np, "\xc3\xa9t\xc3\xa9", 0), 1);	/* été */
	ck_assert_int_eq(m(np, "\xc3\xa9t\xc3\xa9", 1), 0);
	ck_assert_int_eq(m(np, "ete", 0), 0);
	conf_namepat_free(np);
}
END_TEST

START_TEST(test_path)
{
	struct conf_namepat *np = compile("/.snapshot/Thumbs.db/");

	ck_assert_int_eq(conf_namepat_path(np, "a/b/Thumbs.db", 0), 1);
	ck_assert_int_eq(conf_namepat_path(np, "thumbs.db", 0), 1);
	ck_assert_int_eq(conf_namepat_path(np, ".snapshot/x", 0), 2);
	ck_assert_int_eq(conf_namepat_path(np, "a/.SNAPSHOT/b/c", 0), 2);
	ck_assert_int_eq(conf_namepat_path(np, "a/.SNAPSHOT", 0), 1);
	ck_assert_int_eq(conf_namepat_path(np, "a/b/c", 0), 0);
	ck_assert_int_eq(conf_namepat_path(np, "", 0), 0);
	ck_assert_int_eq(conf_namepat_path(NULL, "Thumbs.db", 0), 0);
	conf_namepat_free(np);
}
END_TEST

static void
share_init(struct conf_share *sh, const char *veto, const char *hide)
{
	char hint[160];

	conf_share_defaults(sh);
	sh->veto_files = veto ? strdup(veto) : NULL;
	sh->hide_files = hide ? strdup(hide) : NULL;
	ck_assert_int_eq(conf_share_namepats(sh, hint, sizeof(hint)), 0);
}

static void
share_clear(struct conf_share *sh)
{
	free(sh->veto_files);
	free(sh->hide_files);
	conf_namepat_free(sh->veto_pat);
	conf_namepat_free(sh->hide_pat);
}

START_TEST(test_namerule_status)
{
	struct conf_share sh;

	share_init(&sh, "/.snapshot/Thumbs.db/", NULL);
	ck_assert_uint_eq(namerule_check_path(&sh, "d/THUMBS.DB"),
	    STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(namerule_check_path(&sh, ".snapshot/f"),
	    STATUS_OBJECT_PATH_NOT_FOUND);
	ck_assert_uint_eq(namerule_check_path(&sh, "d/f"), STATUS_SUCCESS);
	ck_assert_uint_eq(namerule_check_path(&sh, ""), STATUS_SUCCESS);
	ck_assert_int_eq(namerule_vetoed(&sh, "Thumbs.db", 9), 1);
	/* case sensitive = yes: the spelling written only */
	sh.case_sensitive = 1;
	ck_assert_uint_eq(namerule_check_path(&sh, "d/THUMBS.DB"),
	    STATUS_SUCCESS);
	ck_assert_uint_eq(namerule_check_path(&sh, "d/Thumbs.db"),
	    STATUS_OBJECT_NAME_NOT_FOUND);
	/* no keys, no share: nothing refused */
	ck_assert_uint_eq(namerule_check_path(NULL, "Thumbs.db"),
	    STATUS_SUCCESS);
	/* delete veto files is off by default */
	ck_assert_int_eq(namerule_deletable(&sh, "Thumbs.db"), 0);
	sh.delete_veto_files = 1;
	ck_assert_int_eq(namerule_deletable(&sh, "Thumbs.db"), 1);
	ck_assert_int_eq(namerule_deletable(&sh, "other"), 0);
	share_clear(&sh);
	share_init(&sh, NULL, NULL);
	ck_assert_uint_eq(namerule_check_path(&sh, "Thumbs.db"),
	    STATUS_SUCCESS);
	share_clear(&sh);
}
END_TEST

START_TEST(test_namerule_hidden)
{
	struct conf_share sh;

	share_init(&sh, NULL, "/*.bak/secret?/");
	ck_assert_int_eq(sh.hide_dot_files, 1);		/* Samba's default */
	ck_assert_uint_eq(namerule_attrs(&sh, ".profile", 8,
	    FILE_ATTRIBUTE_NORMAL), FILE_ATTRIBUTE_HIDDEN);
	ck_assert_uint_eq(namerule_attrs(&sh, ".", 1,
	    FILE_ATTRIBUTE_DIRECTORY), FILE_ATTRIBUTE_DIRECTORY);
	ck_assert_uint_eq(namerule_attrs(&sh, "..", 2,
	    FILE_ATTRIBUTE_DIRECTORY), FILE_ATTRIBUTE_DIRECTORY);
	ck_assert_uint_eq(namerule_attrs(&sh, "a.BAK", 5,
	    FILE_ATTRIBUTE_ARCHIVE), FILE_ATTRIBUTE_ARCHIVE |
	    FILE_ATTRIBUTE_HIDDEN);
	ck_assert_uint_eq(namerule_path_attrs(&sh, "d/secret1",
	    FILE_ATTRIBUTE_DIRECTORY), FILE_ATTRIBUTE_DIRECTORY |
	    FILE_ATTRIBUTE_HIDDEN);
	ck_assert_uint_eq(namerule_path_attrs(&sh, ".d/plain",
	    FILE_ATTRIBUTE_ARCHIVE), FILE_ATTRIBUTE_ARCHIVE);
	ck_assert_uint_eq(namerule_path_attrs(&sh, "", FILE_ATTRIBUTE_DIRECTORY),
	    FILE_ATTRIBUTE_DIRECTORY);
	sh.hide_dot_files = 0;
	ck_assert_uint_eq(namerule_attrs(&sh, ".profile", 8,
	    FILE_ATTRIBUTE_ARCHIVE), FILE_ATTRIBUTE_ARCHIVE);
	share_clear(&sh);
}
END_TEST

static void
touch(const char *dir, const char *name)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

START_TEST(test_namerule_purge)
{
	char dir[] = "/tmp/check_namepat.XXXXXX", p[512];
	struct conf_share sh;
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	share_init(&sh, "/._*/.snapshot/", NULL);
	touch(dir, "._a");
	touch(dir, "keep");
	snprintf(p, sizeof(p), "%s/.snapshot", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/.snapshot/sub", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	touch(p, "deep");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	/* the key off: nothing goes */
	ck_assert_int_eq(namerule_purge(&sh, fd), 0);
	snprintf(p, sizeof(p), "%s/._a", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	sh.delete_veto_files = 1;
	ck_assert_int_eq(namerule_purge(&sh, fd), 0);
	ck_assert_int_ne(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/.snapshot", dir);
	ck_assert_int_ne(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/keep", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	close(fd);
	unlink(p);
	ck_assert_int_eq(rmdir(dir), 0);
	share_clear(&sh);
}
END_TEST

/* veto oplock files: the last component of a path, Samba's is_in_path */
START_TEST(test_namerule_oplock_vetoed)
{
	struct conf_share sh;
	char hint[128];

	memset(&sh, 0, sizeof(sh));
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "db/a.mdb"), 0);
	ck_assert_int_eq(namerule_oplock_vetoed(NULL, "a.mdb"), 0);
	ck_assert_int_eq(conf_namepat_compile("/*.mdb/*.accdb/Lock?.dbf/",
	    &sh.veto_oplock_pat, hint, sizeof(hint)), 0);
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "a.mdb"), 1);
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "x/y/Orders.ACCDB"), 1);
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "x/LOCK1.dbf"), 1);
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "x/Lock12.dbf"), 0);
	/* a directory of that name does not veto what is inside it */
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "a.mdb/notes.txt"), 0);
	sh.case_sensitive = 1;
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "x/y/Orders.ACCDB"), 0);
	ck_assert_int_eq(namerule_oplock_vetoed(&sh, "x/y/Orders.accdb"), 1);
	conf_namepat_free(sh.veto_oplock_pat);
}
END_TEST

START_TEST(test_conf_keys)
{
	char path[] = "/tmp/check_namepat_conf.XXXXXX";
	struct conf *c = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp, *ef;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	fputs("[global]\n"
	    "veto files = /Thumbs.db/\n"
	    "[a]\npath = /tmp\n"
	    "[b]\npath = /tmp\nveto files = /._*/.DS_Store/\n"
	    "delete veto files = yes\nhide files = /*.bak/\n"
	    "hide dot files = no\n"
	    "[c]\npath = /tmp\nveto files =\n", fp);
	fclose(fp);
	ck_assert_int_eq(conf_load(path, &c, NULL), 0);
	/* [global] gives every share its value; [b] and [c] their own */
	ck_assert_int_eq(conf_namepat_match(c->shares[1].veto_pat,
	    "thumbs.db", 9, 0), 1);
	ck_assert_int_eq(c->shares[1].delete_veto_files, 0);
	ck_assert_int_eq(c->shares[1].hide_dot_files, 1);
	ck_assert_ptr_null(c->shares[1].hide_pat);
	ck_assert_int_eq(conf_namepat_match(c->shares[2].veto_pat,
	    "._x", 3, 0), 1);
	ck_assert_int_eq(conf_namepat_match(c->shares[2].veto_pat,
	    "thumbs.db", 9, 0), 0);
	ck_assert_int_eq(c->shares[2].delete_veto_files, 1);
	ck_assert_int_eq(c->shares[2].hide_dot_files, 0);
	ck_assert_ptr_nonnull(c->shares[2].hide_pat);
	ck_assert_ptr_null(c->shares[3].veto_pat);
	conf_free(c);
	/* a bad entry is an error with the share and the key named */
	fp = fopen(path, "w");
	fputs("[s]\npath = /tmp\nveto files = /a\\b/\n", fp);
	fclose(fp);
	ef = open_memstream(&buf, &len);
	ck_assert_int_eq(conf_load(path, &c, ef), 2);
	fclose(ef);
	ck_assert_ptr_nonnull(strstr(buf, "share [s]"));
	ck_assert_ptr_nonnull(strstr(buf, "veto files"));
	free(buf);
	unlink(path);
}
END_TEST

static Suite *
namepat_suite(void)
{
	Suite *s = suite_create("namepat");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_compile);
	tcase_add_test(tc, test_match_plain);
	tcase_add_test(tc, test_match_wild);
	tcase_add_test(tc, test_match_unicode);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_namerule_status);
	tcase_add_test(tc, test_namerule_hidden);
	tcase_add_test(tc, test_namerule_purge);
	tcase_add_test(tc, test_namerule_oplock_vetoed);
	tcase_add_test(tc, test_conf_keys);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(namepat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
