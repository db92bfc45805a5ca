/*
 * Unit tests for vfs/dirnote.c, the note "this directory has no stored
 * descriptor" for creates that look no name up: a note holds until the
 * directory's own attributes change, any directory above it is renamed,
 * or the path cannot be walked without a symlink.  Not armed here (no
 * ring): each look reads the fanotify queue itself.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "vfs/vfs.h"

static char top[64];
static int root = -1, have;

static void
path_of(char *p, size_t cap, const char *rel)
{
	snprintf(p, cap, "%s/%s", top, rel);
}

static void
setup(void)
{
	char p[128];

	snprintf(top, sizeof(top), "/tmp/check_dirnote.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	path_of(p, sizeof(p), "a");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	path_of(p, sizeof(p), "a/b");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	root = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root, 0);
	have = vfs_dirnote_init() >= 0;
	if (!have)
		fprintf(stderr, "check_vfs_dirnote: no fanotify here: skipped\n");
	vfs_dirnote_armed(0);
}

static void
teardown(void)
{
	char cmd[128];

	vfs_dirnote_event();
	close(root);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

/* Watched, read (none), noted: as smb2_secdesc.c does it. */
static int
note(const char *parent)
{
	if (vfs_dirnote_watch(root, 1, 2, parent) != 0)
		return -1;
	vfs_dirnote_none(1, 2, parent);
	return vfs_dirnote_noted(1, 2, parent);
}

START_TEST(test_note_holds_until_own_change)
{
	char p[128];
	int fd;

	if (!have)
		return;
	ck_assert_int_eq(note("a/b"), 1);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "a/b"), 1);
	/* another share root, another directory */
	ck_assert_int_eq(vfs_dirnote_noted(1, 3, "a/b"), 0);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "a"), 0);
	/* an entry's change is not the directory's own */
	path_of(p, sizeof(p), "a/b/f");
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fsetxattr(fd, "user.DOSATTRIB", "x", 1, 0), 0);
	close(fd);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "a/b"), 1);
	/* the directory's own xattr: forgotten */
	path_of(p, sizeof(p), "a/b");
	ck_assert_int_eq(setxattr(p, "user.x", "1", 1, 0), 0);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "a/b"), 0);
	/* noted again, then the directory above it renamed away */
	ck_assert_int_eq(note("a/b"), 1);
	{
		char q[128];

		path_of(p, sizeof(p), "a");
		path_of(q, sizeof(q), "a.old");
		ck_assert_int_eq(rename(p, q), 0);
		ck_assert_int_eq(mkdir(p, 0755), 0);
	}
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "a/b"), 0);
}
END_TEST

START_TEST(test_no_note_through_a_symlink)
{
	char p[128];

	if (!have)
		return;
	path_of(p, sizeof(p), "l");
	ck_assert_int_eq(symlink("a", p), 0);
	ck_assert_int_eq(vfs_dirnote_watch(root, 1, 2, "l/b"), -1);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "l/b"), 0);
	ck_assert_int_eq(vfs_dirnote_watch(root, 1, 2, "a/../a/b"), -1);
	/* the share root itself ("" : a create at the top) */
	ck_assert_int_eq(note(""), 1);
}
END_TEST

START_TEST(test_many_notes)
{
	char rel[32], p[128];
	int i;

	if (!have)
		return;
	/* more than the table holds: the oldest go, never a wrong answer */
	for (i = 0; i < 40; i++) {
		snprintf(rel, sizeof(rel), "d%02d", i);
		path_of(p, sizeof(p), rel);
		ck_assert_int_eq(mkdir(p, 0755), 0);
		ck_assert_int_eq(note(rel), 1);
	}
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "d39"), 1);
	path_of(p, sizeof(p), "d39");
	ck_assert_int_eq(setxattr(p, "user.x", "1", 1, 0), 0);
	ck_assert_int_eq(vfs_dirnote_noted(1, 2, "d39"), 0);
}
END_TEST

static Suite *
vfs_dirnote_suite(void)
{
	Suite *s = suite_create("vfs_dirnote");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_note_holds_until_own_change);
	tcase_add_test(tc, test_no_note_through_a_symlink);
	tcase_add_test(tc, test_many_notes);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vfs_dirnote_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
