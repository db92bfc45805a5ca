/*
 * Unit tests for the cheaper lookups of the create path (issue 6):
 * vfs_name_resolve_miss (resolution when the caller already saw the name
 * missing as spelled) and the accessat backend call (several questions
 * about one name over one open parent, "" for the directory itself).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs/vfs.h"

static char top[64];
static int root = -1;
static const struct vfs_ops *v = &vfs_posix;
static char cmd_buf[160];

static void
mk(const char *rel, int is_dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/share/%s", top, rel);
	if (is_dir)
		ck_assert_int_eq(mkdir(p, 0755), 0);
	else
		close(open(p, O_CREAT | O_WRONLY, 0644));
}

static void
setup(void)
{
	char p[128];

	snprintf(top, sizeof(top), "/tmp/check_vfs_name.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/share", top);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	mk("Dir", 1);
	mk("Dir/Sub", 1);
	mk("Dir/Sub/File.TXT", 0);
	mk("Top.dat", 0);
	snprintf(p, sizeof(p), "%s/share/out_link", top);
	ck_assert_int_eq(symlink("/etc", p), 0);
	snprintf(p, sizeof(p), "%s/share", top);
	root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root, 0);
}

static void
teardown(void)
{
	char cmd[128];

	close(root);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_miss_last_component)
{
	char p[4096];

	/* only the last name differs in case: rewritten, 1 */
	snprintf(p, sizeof(p), "Dir/Sub/file.txt");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Sub/File.TXT");
	/* in the root */
	snprintf(p, sizeof(p), "TOP.DAT");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Top.dat");
	/* a new name: left as sent, 0 */
	snprintf(p, sizeof(p), "Dir/Sub/New.txt");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "Dir/Sub/New.txt");
	/* too small a buffer for the stored spelling */
	snprintf(p, sizeof(p), "top.dat");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, 7), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_miss_middle_component)
{
	char p[4096];

	/* a directory on the way differs in case: the general walk */
	snprintf(p, sizeof(p), "DIR/sub/FILE.txt");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Sub/File.TXT");
	snprintf(p, sizeof(p), "dir/SUB/brand_new");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Sub/brand_new");
	/* nothing matches at all */
	snprintf(p, sizeof(p), "nodir/x");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "nodir/x");
}
END_TEST

/* The fold is the BMP's, not ASCII's: fullwidth, Greek, length changes. */
START_TEST(test_miss_unicode_fold)
{
	char p[4096];

	mk("\xEF\xBC\xA1.txt", 0);		/* U+FF21 FULLWIDTH CAPITAL A */
	mk("Dir/\xCE\xA3\xCE\xB1", 0);	/* Greek "Sigma alpha" */
	mk("\xE2\xB1\xA5", 0);		/* U+2C65, its upper is U+023A */
	snprintf(p, sizeof(p), "\xEF\xBD\x81.TXT");	/* U+FF41 SMALL A */
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "\xEF\xBC\xA1.txt");
	snprintf(p, sizeof(p), "dir/\xCF\x83\xCE\x91");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/\xCE\xA3\xCE\xB1");
	/* two UTF-8 bytes as sent, three as stored */
	snprintf(p, sizeof(p), "\xC8\xBA");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "\xE2\xB1\xA5");
	/* dotless i is not I (Windows keeps them apart) */
	snprintf(p, sizeof(p), "D\xC4\xB1r/Sub");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
}
END_TEST

START_TEST(test_miss_cache_follows_changes)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "Dir/Sub/late");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	fd = v->open(root, "Dir/Sub/LATE", O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* the directory changed after it was cached: seen anyway */
	snprintf(p, sizeof(p), "Dir/Sub/late");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Sub/LATE");
	/* an escape stays an escape */
	snprintf(p, sizeof(p), "OUT_LINK/passwd");
	(void)vfs_name_resolve_miss(v, root, p, sizeof(p));
	ck_assert_int_lt(v->open(root, p, O_RDONLY, 0), 0);
}
END_TEST

/*
 * The cached directory follows every change without a rescan (inotify on
 * a local filesystem) or with one (the mtime rule): creates, renames in
 * and out, deletes, and many names so the table grows while cached.
 */
START_TEST(test_miss_cache_many_changes)
{
	char p[4096], q[4096], a[300], b[300];
	int fd, i;

	snprintf(p, sizeof(p), "Dir/x0");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	for (i = 0; i < 600; i++) {
		snprintf(p, sizeof(p), "Dir/Name%03d", i);
		fd = v->open(root, p, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
		/* a lookup between creates, as each CREATE of a new name does */
		snprintf(p, sizeof(p), "Dir/name%03d", i);
		ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)),
		    1);
		snprintf(q, sizeof(q), "Dir/Name%03d", i);
		ck_assert_str_eq(p, q);
	}
	/* delete every third, rename every third to another spelling */
	for (i = 0; i < 600; i += 3) {
		snprintf(a, sizeof(a), "%s/share/Dir/Name%03d", top, i);
		ck_assert_int_eq(unlink(a), 0);
		snprintf(a, sizeof(a), "%s/share/Dir/Name%03d", top, i + 1);
		snprintf(b, sizeof(b), "%s/share/Dir/RENAMED%03d", top, i + 1);
		ck_assert_int_eq(rename(a, b), 0);
	}
	/* renamed into the directory from elsewhere */
	snprintf(a, sizeof(a), "%s/share/Top.dat", top);
	snprintf(b, sizeof(b), "%s/share/Dir/Moved.Dat", top);
	ck_assert_int_eq(rename(a, b), 0);
	for (i = 0; i < 600; i++) {
		snprintf(p, sizeof(p), "Dir/NAME%03d", i);
		if (i % 3 == 2) {
			ck_assert_int_eq(vfs_name_resolve_miss(v, root, p,
			    sizeof(p)), 1);
			snprintf(q, sizeof(q), "Dir/Name%03d", i);
			ck_assert_str_eq(p, q);
			continue;
		}
		/* deleted or renamed away: left as sent */
		ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)),
		    0);
		if (i % 3 == 1) {
			snprintf(p, sizeof(p), "Dir/renamed%03d", i);
			ck_assert_int_eq(vfs_name_resolve_miss(v, root, p,
			    sizeof(p)), 1);
			snprintf(q, sizeof(q), "Dir/RENAMED%03d", i);
			ck_assert_str_eq(p, q);
		}
	}
	snprintf(p, sizeof(p), "Dir/moved.dat");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Moved.Dat");
	snprintf(p, sizeof(p), "top.dat");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	/* a name deleted and created again with another spelling */
	snprintf(a, sizeof(a), "%s/share/Dir/Name005", top);
	ck_assert_int_eq(unlink(a), 0);
	snprintf(a, sizeof(a), "%s/share/Dir/nAME005", top);
	close(open(a, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "Dir/name005");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/nAME005");
	/* the cached directory itself removed and made again */
	snprintf(cmd_buf, sizeof(cmd_buf), "rm -rf %s/share/Dir", top);
	ck_assert_int_eq(system(cmd_buf), 0);
	mk("Dir", 1);
	mk("Dir/Again", 0);
	snprintf(p, sizeof(p), "Dir/name002");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	snprintf(p, sizeof(p), "Dir/AGAIN");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Dir/Again");
}
END_TEST

/*
 * More changes between two lookups than the kernel queues for a watch
 * (fs.inotify.max_queued_events, 16384 by default): the events lost, the
 * slot is rescanned and still finds the last name.
 */
START_TEST(test_miss_cache_queue_overflow)
{
	char p[4096], a[300];
	int fd, i, n = 17000;

	mk("Big", 1);
	snprintf(p, sizeof(p), "Big/nothing");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 0);
	for (i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "%s/share/Big/F%05d", top, i);
		fd = open(a, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	snprintf(p, sizeof(p), "Big/f%05d", n - 1);
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	snprintf(a, sizeof(a), "Big/F%05d", n - 1);
	ck_assert_str_eq(p, a);
	snprintf(p, sizeof(p), "Big/f00000");
	ck_assert_int_eq(vfs_name_resolve_miss(v, root, p, sizeof(p)), 1);
	ck_assert_str_eq(p, "Big/F00000");
}
END_TEST

START_TEST(test_accessat)
{
	int dfd;

	dfd = v->open(root, "Dir/Sub", O_PATH | O_DIRECTORY, 0);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(v->accessat(dfd, "File.TXT", R_OK), 0);
	ck_assert_int_eq(v->accessat(dfd, "File.TXT", W_OK), 0);
	ck_assert_int_eq(v->accessat(dfd, "", W_OK | X_OK), 0);
	ck_assert_int_eq(v->accessat(dfd, "missing", R_OK), -ENOENT);
	/* one name only: a path is refused */
	ck_assert_int_eq(v->accessat(dfd, "../Sub/File.TXT", R_OK), -EINVAL);
	close(dfd);
	/* a symlink is asked about itself, not followed out of the share */
	ck_assert_int_eq(v->accessat(root, "out_link", R_OK), 0);
}
END_TEST

static Suite *
vfs_name_suite(void)
{
	Suite *s = suite_create("vfs_name");
	TCase *tc = tcase_create("core");

	/* 17,000 creates under ASan: seconds alone, more on a loaded machine */
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_miss_last_component);
	tcase_add_test(tc, test_miss_middle_component);
	tcase_add_test(tc, test_miss_unicode_fold);
	tcase_add_test(tc, test_miss_cache_follows_changes);
	tcase_add_test(tc, test_miss_cache_many_changes);
	tcase_add_test(tc, test_miss_cache_queue_overflow);
	tcase_add_test(tc, test_accessat);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vfs_name_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
