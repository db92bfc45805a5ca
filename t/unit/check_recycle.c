/*
 * Recycle bin (worker/recycle.c): the bin's name for a user (%U), whether
 * a path is in it, Samba's exclude patterns, where a file goes (keep tree,
 * "Copy #N of"), and the delete itself on a scratch directory: moved,
 * versioned, replaced, excluded, and a symlink at the bin not followed.
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
#include "vfs/vfs.h"
#include "worker/file_open.h"
#include "worker/recycle.h"

START_TEST(test_recycle_bin_path)
{
	char out[64];
	size_t at = 99;

	ck_assert_int_eq(recycle_bin_path(".recycle/%U", "alice", out,
	    sizeof(out), &at), 14);
	ck_assert_str_eq(out, ".recycle/alice");
	ck_assert_uint_eq(at, 8);
	ck_assert_int_eq(recycle_bin_path("%U/bin", "bob", out, sizeof(out),
	    &at), 7);
	ck_assert_str_eq(out, "bob/bin");
	ck_assert_uint_eq(at, 0);
	ck_assert_int_eq(recycle_bin_path("a/b/bin-%U/x", "bob", out,
	    sizeof(out), &at), 13);
	ck_assert_str_eq(out, "a/b/bin-bob/x");
	ck_assert_uint_eq(at, 3);
	/* no %U: one bin for everyone, all of it shared */
	ck_assert_int_eq(recycle_bin_path(".trash", "bob", out, sizeof(out),
	    &at), 6);
	ck_assert_str_eq(out, ".trash");
	ck_assert_uint_eq(at, 6);
	/* names that are no directory, and no room */
	ck_assert_int_eq(recycle_bin_path(".r/%U", "", out, sizeof(out), NULL),
	    -EINVAL);
	ck_assert_int_eq(recycle_bin_path(".r/%U", "..", out, sizeof(out),
	    NULL), -EINVAL);
	ck_assert_int_eq(recycle_bin_path(".r/%U", "a/b", out, sizeof(out),
	    NULL), -EINVAL);
	ck_assert_int_eq(recycle_bin_path(".r/%U", "alice", out, 8, NULL),
	    -ENAMETOOLONG);
	ck_assert_int_eq(recycle_bin_path(".r/%U", "alice", out, 9, NULL), 8);
}
END_TEST

START_TEST(test_recycle_path_in)
{
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".recycle/alice", 1), 1);
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".recycle/alice/d/f", 1), 1);
	/* a sibling that shares the prefix is not in it (Samba's is) */
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".recycle/alice2/f", 1), 0);
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".recycle/bob/f", 1), 0);
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".RECYCLE/Alice/f", 1), 0);
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14,
	    ".RECYCLE/Alice/f", 0), 1);
	ck_assert_int_eq(recycle_path_in(".recycle/alice", 14, "f", 0), 0);
}
END_TEST

START_TEST(test_recycle_patterns)
{
	const char *l = "*.tmp, ~$*;*.BAK\tfoo?.txt";

	ck_assert_int_eq(recycle_list_match(l, "a.tmp", 5), 1);
	ck_assert_int_eq(recycle_list_match(l, "A.TMP", 5), 1);
	ck_assert_int_eq(recycle_list_match(l, ".tmp", 4), 1);
	ck_assert_int_eq(recycle_list_match(l, "a.tmpx", 6), 0);
	ck_assert_int_eq(recycle_list_match(l, "~$doc.docx", 10), 1);
	ck_assert_int_eq(recycle_list_match(l, "x.bak", 5), 1);
	ck_assert_int_eq(recycle_list_match(l, "foo1.txt", 8), 1);
	ck_assert_int_eq(recycle_list_match(l, "foo.txt", 7), 0);
	ck_assert_int_eq(recycle_list_match(l, "foo12.txt", 9), 0);
	/* len bounds the name: a component of a longer string */
	ck_assert_int_eq(recycle_list_match(l, "a.tmp/rest", 5), 1);
	ck_assert_int_eq(recycle_list_match(NULL, "a.tmp", 5), 0);
	ck_assert_int_eq(recycle_list_match("", "a.tmp", 5), 0);
	ck_assert_int_eq(recycle_list_match(" , ", "a", 1), 0);
	ck_assert_int_eq(recycle_list_match("*", "anything", 8), 1);
	ck_assert_int_eq(recycle_list_match("a*b*c", "axxbyyc", 7), 1);
	ck_assert_int_eq(recycle_list_match("a*b*c", "axxbyy", 6), 0);
	/* directories: any component of the path */
	ck_assert_int_eq(recycle_dir_match("tmp scratch", "a/scratch/b"), 1);
	ck_assert_int_eq(recycle_dir_match("tmp scratch", "scratch"), 1);
	ck_assert_int_eq(recycle_dir_match("tmp scratch", "a/scratchy/b"), 0);
	ck_assert_int_eq(recycle_dir_match("tmp scratch", ""), 0);
	ck_assert_int_eq(recycle_dir_match(NULL, "tmp"), 0);
}
END_TEST

START_TEST(test_recycle_target)
{
	char dir[64], name[32];

	ck_assert_int_eq(recycle_target(".r/alice", "d/sub/f.txt", 1, 0, dir,
	    sizeof(dir), name, sizeof(name)), 0);
	ck_assert_str_eq(dir, ".r/alice/d/sub");
	ck_assert_str_eq(name, "f.txt");
	ck_assert_int_eq(recycle_target(".r/alice", "d/sub/f.txt", 0, 0, dir,
	    sizeof(dir), name, sizeof(name)), 0);
	ck_assert_str_eq(dir, ".r/alice");
	ck_assert_int_eq(recycle_target(".r/alice", "f.txt", 1, 3, dir,
	    sizeof(dir), name, sizeof(name)), 0);
	ck_assert_str_eq(dir, ".r/alice");
	ck_assert_str_eq(name, "Copy #3 of f.txt");
	ck_assert_int_eq(recycle_target(".r/alice", "f.txt", 0, 12345, dir,
	    sizeof(dir), name, 18), -ENAMETOOLONG);
	ck_assert_int_eq(recycle_target(".r/alice", "d/f.txt", 1, 0, dir,
	    10, name, sizeof(name)), -ENAMETOOLONG);
}
END_TEST

/* A scratch share root with a few files; its fd. */
static char	scratch[64];

static int
scratch_root(void)
{
	int fd;

	strcpy(scratch, "/tmp/check_recycle.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
	fd = open(scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static void
put(int root, const char *path, const char *data, struct stat *st)
{
	int fd = openat(root, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0640);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	ck_assert_int_eq(fstat(fd, st), 0);
	close(fd);
}

static int
has(int root, const char *path, const char *data)
{
	char buf[64];
	ssize_t n;
	int fd = openat(root, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, data) == 0;
}

/* The delete of path while it is the file put() made (the vfs's dev). */
static int
del(const struct conf_share *sh, int root, const char *path,
    const struct stat *st)
{
	struct vfs_stat vst;

	ck_assert_int_eq(file_vfs()->statat(root, path, &vst), 0);
	ck_assert_uint_eq(vst.ino, (uint64_t)st->st_ino);
	return recycle_unlink(sh, "alice", root, path, 0, vst.dev,
	    st->st_ino == vst.ino ? vst.ino : 0);
}
#define DEL(sh, root, path, st)	del(sh, root, path, &(st))

START_TEST(test_recycle_unlink)
{
	struct conf_share sh;
	struct stat st, bst;
	char cmd[160];
	int root = scratch_root();

	memset(&sh, 0, sizeof(sh));
	sh.name = (char *)"s";
	sh.case_sensitive = 1;
	sh.recycle_dir = (char *)".recycle/%U";
	sh.recycle_dir_mode = 0700;
	sh.recycle_keep_tree = 1;
	sh.recycle_versions = 1;
	sh.recycle_exclude = (char *)"*.tmp";
	sh.recycle_max_size = 8;
	ck_assert_int_eq(mkdirat(root, "d", 0755), 0);
	put(root, "d/f", "one", &st);
	ck_assert_int_eq(DEL(&sh, root, "d/f", st), 0);
	ck_assert_int_eq(faccessat(root, "d/f", F_OK, 0), -1);
	ck_assert(has(root, ".recycle/alice/d/f", "one"));
	ck_assert_int_eq(fstatat(root, ".recycle/alice", &bst, 0), 0);
	ck_assert_uint_eq(bst.st_mode & 07777, 0700);
	ck_assert_int_eq(fstatat(root, ".recycle", &bst, 0), 0);
	ck_assert_uint_eq(bst.st_mode & 07777, 01777);
	/* versions */
	put(root, "d/f", "two", &st);
	ck_assert_int_eq(DEL(&sh, root, "d/f", st), 0);
	ck_assert(has(root, ".recycle/alice/d/Copy #1 of f", "two"));
	ck_assert(has(root, ".recycle/alice/d/f", "one"));
	/* without: replaced */
	sh.recycle_versions = 0;
	put(root, "d/f", "three", &st);
	ck_assert_int_eq(DEL(&sh, root, "d/f", st), 0);
	ck_assert(has(root, ".recycle/alice/d/f", "three"));
	/* touch: the access time becomes the delete's, the write time stays */
	sh.recycle_touch = 1;
	put(root, "t", "tee", &st);
	{
		const struct timespec old[2] = { { 1000, 0 }, { 2000, 0 } };
		struct stat tst;

		ck_assert_int_eq(utimensat(root, "t", old, 0), 0);
		ck_assert_int_eq(DEL(&sh, root, "t", st), 0);
		ck_assert_int_eq(fstatat(root, ".recycle/alice/t", &tst, 0), 0);
		ck_assert_int_gt(tst.st_atim.tv_sec, 1000000);
		ck_assert_int_eq(tst.st_mtim.tv_sec, 2000);
	}
	sh.recycle_touch = 0;
	/* the name another file's now: not touched */
	put(root, "g", "gee", &st);
	{
		struct vfs_stat vst;

		ck_assert_int_eq(file_vfs()->statat(root, "g", &vst), 0);
		ck_assert_int_eq(recycle_unlink(&sh, "alice", root, "g", 0,
		    vst.dev, vst.ino + 1), -ESTALE);
	}
	ck_assert(has(root, "g", "gee"));
	/* excluded, too big, in the bin: deleted */
	put(root, "x.tmp", "x", &st);
	ck_assert_int_eq(DEL(&sh, root, "x.tmp", st), 0);
	put(root, "big", "123456789", &st);
	ck_assert_int_eq(DEL(&sh, root, "big", st), 0);
	ck_assert_int_eq(faccessat(root, ".recycle/alice/x.tmp", F_OK, 0), -1);
	ck_assert_int_eq(faccessat(root, ".recycle/alice/big", F_OK, 0), -1);
	ck_assert_int_eq(fstatat(root, ".recycle/alice/d/f", &st, 0), 0);
	ck_assert_int_eq(DEL(&sh, root, ".recycle/alice/d/f", st), 0);
	ck_assert_int_eq(faccessat(root, ".recycle/alice/d/f", F_OK, 0), -1);
	/* a symlink at the user's bin, out of the share: deleted, not moved */
	ck_assert_int_eq(renameat(root, ".recycle/alice", root, "old"), 0);
	ck_assert_int_eq(symlinkat("/tmp", root, ".recycle/alice"), 0);
	put(root, "h", "aitch", &st);
	ck_assert_int_eq(DEL(&sh, root, "h", st), 0);
	ck_assert_int_eq(faccessat(root, "h", F_OK, 0), -1);
	ck_assert_int_eq(faccessat(AT_FDCWD, "/tmp/h", F_OK, 0), -1);
	/* no key: deleted */
	sh.recycle_dir = NULL;
	put(root, "k", "kay", &st);
	ck_assert_int_eq(DEL(&sh, root, "k", st), 0);
	ck_assert_int_eq(faccessat(root, "k", F_OK, 0), -1);
	close(root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *
recycle_suite(void)
{
	Suite *s = suite_create("recycle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_recycle_bin_path);
	tcase_add_test(tc, test_recycle_path_in);
	tcase_add_test(tc, test_recycle_patterns);
	tcase_add_test(tc, test_recycle_target);
	tcase_add_test(tc, test_recycle_unlink);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(recycle_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
