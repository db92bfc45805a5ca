/*
 * Unit tests for the POSIX backend against a temporary directory: opens,
 * creates, renames and links stay below the root; every escape (absolute
 * path, "..", a symlink to /etc, a symlinked directory pointing out, a
 * symlink climbing with "..") fails; case-insensitive resolution; the DOS
 * xattr and stream names.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "vfs/vfs.h"

static char top[64];
static char dir[128];
static int root = -1;
static const struct vfs_ops *v = &vfs_posix;

static void
setup(void)
{
	char p[256];

	snprintf(top, sizeof(top), "/tmp/check_vfs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(dir, sizeof(dir), "%s/share", top);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	/* a secret next to the share */
	snprintf(p, sizeof(p), "%s/secret", top);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(p, sizeof(p), "%s/sub", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/Hello.TXT", dir);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "%s/etc_link", dir);
	ck_assert_int_eq(symlink("/etc", p), 0);
	snprintf(p, sizeof(p), "%s/passwd_link", dir);
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/up_link", dir);
	ck_assert_int_eq(symlink("../secret", p), 0);
	snprintf(p, sizeof(p), "%s/updir", dir);
	ck_assert_int_eq(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/inside", dir);
	ck_assert_int_eq(symlink("sub/Hello.TXT", p), 0);
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
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

START_TEST(test_open_inside)
{
	struct vfs_stat st;
	int fd;

	fd = v->open(root, "sub/Hello.TXT", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(v->fstat(fd, &st), 0);
	ck_assert(S_ISREG(st.mode));
	close(fd);
	/* a symlink that stays inside is followed */
	fd = v->open(root, "inside", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = v->open(root, "", O_RDONLY | O_DIRECTORY, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(v->open(root, "nope", O_RDONLY, 0), -ENOENT);
	ck_assert_int_eq(v->statat(root, "sub", &st), 0);
	ck_assert(S_ISDIR(st.mode));
}
END_TEST

START_TEST(test_escapes_refused)
{
	struct vfs_stat st;

	ck_assert_int_lt(v->open(root, "/etc/passwd", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "../secret", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "sub/../../secret", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "etc_link/passwd", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "passwd_link", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "up_link", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->open(root, "updir/secret", O_RDONLY, 0), 0);
	ck_assert_int_lt(v->statat(root, "etc_link", &st), 0);
	/* creating through a link that leads out */
	ck_assert_int_lt(v->open(root, "etc_link/new", O_CREAT | O_WRONLY,
	    0644), 0);
	ck_assert_int_lt(v->mkdir(root, "updir/x", 0755), 0);
	ck_assert_int_lt(v->rename(root, "sub/Hello.TXT", "updir/stolen", 0), 0);
	ck_assert_int_lt(v->link(root, "sub/Hello.TXT", "etc_link/x"), 0);
	ck_assert_int_lt(v->unlink(root, "updir/secret", 0), 0);
	ck_assert_int_eq(access("/etc/new", F_OK), -1);
	ck_assert_int_eq(v->open(root, "", O_RDONLY | O_DIRECTORY, 0) >= 0, 1);
}
END_TEST

START_TEST(test_links_not_followed)
{
	struct vfs_stat st;
	struct stat ls;
	char buf[64], p[256];
	size_t end = 0;
	int fd;

	/* no symlink in any component: one before the last is -ELOOP */
	ck_assert_int_eq(v->open_nolinks(root, "updir/secret", O_RDONLY, 0),
	    -ELOOP);
	ck_assert_int_eq(v->open_nolinks(root, "inside", O_RDONLY, 0),
	    -ELOOP);
	fd = v->open_nolinks(root, "sub/Hello.TXT", O_RDONLY, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* a last one with O_PATH | O_NOFOLLOW is the link itself */
	fd = v->open_nolinks(root, "passwd_link", O_PATH | O_NOFOLLOW, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(v->fstat(fd, &st), 0);
	ck_assert(S_ISLNK(st.mode));
	ck_assert_int_eq(v->readlink(fd, buf, sizeof(buf)), 11);
	ck_assert_str_eq(buf, "/etc/passwd");
	close(fd);
	/* which component is the link, and where its name ends */
	fd = v->first_link(root, "etc_link/passwd", &end);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(end, 8);
	ck_assert_int_eq(v->readlink(fd, buf, sizeof(buf)), 4);
	ck_assert_str_eq(buf, "/etc");
	close(fd);
	ck_assert_int_eq(v->first_link(root, "sub/Hello.TXT", &end), -ENOENT);
	/* an empty file becomes a symlink (never followed) and a FIFO */
	fd = v->open(root, "sub/mk", O_RDWR | O_CREAT | O_EXCL, 0640);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(v->fstat(fd, &st), 0);
	close(fd);
	ck_assert_int_eq(v->make_special(root, "sub/mk", st.dev, st.ino + 1,
	    S_IFLNK | 0777, 0, "/etc/shadow"), -ESTALE);
	snprintf(p, sizeof(p), "%s/sub/mk", dir);
	ck_assert_int_eq(lstat(p, &ls), 0);
	ck_assert(S_ISREG(ls.st_mode));		/* left as it was */
	ck_assert_int_eq(v->make_special(root, "sub/mk", st.dev, st.ino,
	    S_IFLNK | 0777, 0, "/etc/shadow"), 0);
	ck_assert_int_eq(readlink(p, buf, sizeof(buf)), 11);
	ck_assert_int_eq(v->open(root, "sub/mk", O_RDONLY, 0), -EXDEV);
	fd = v->open(root, "sub/f", O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(v->fstat(fd, &st), 0);
	close(fd);
	ck_assert_int_eq(v->make_special(root, "sub/f", st.dev, st.ino,
	    S_IFIFO | 0640, 0, NULL), 0);
	ck_assert_int_eq(v->statat(root, "sub/f", &st), 0);
	ck_assert(S_ISFIFO(st.mode));
	ck_assert_uint_eq(st.mode & 07777, 0640);
}
END_TEST

START_TEST(test_names_ops)
{
	struct vfs_stat a, b;
	int fd;

	fd = v->open(root, "new.txt", O_CREAT | O_EXCL | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(v->pwrite(fd, "abc", 3, 10), 3);
	ck_assert_int_eq(v->fstat(fd, &a), 0);
	ck_assert_uint_eq(a.size, 13);
	close(fd);
	ck_assert_int_eq(v->mkdir(root, "d", 0755), 0);
	ck_assert_int_eq(v->rename(root, "new.txt", "d/moved.txt", 0), 0);
	ck_assert_int_eq(v->link(root, "d/moved.txt", "hard.txt"), 0);
	ck_assert_int_eq(v->statat(root, "hard.txt", &a), 0);
	ck_assert_int_eq(v->statat(root, "d/moved.txt", &b), 0);
	ck_assert_uint_eq(a.ino, b.ino);
	ck_assert_uint_eq(a.nlink, 2);
	ck_assert_int_eq(v->rename(root, "hard.txt", "sub/Hello.TXT", 0),
	    -EEXIST);
	ck_assert_int_eq(v->rename(root, "hard.txt", "sub/Hello.TXT", 1), 0);
	ck_assert_int_eq(v->unlink(root, "d", 1), -ENOTEMPTY);
	ck_assert_int_eq(v->unlink(root, "d/moved.txt", 0), 0);
	ck_assert_int_eq(v->unlink(root, "d", 1), 0);
	ck_assert_int_eq(v->access(root, "sub", W_OK), 0);
}
END_TEST

START_TEST(test_case_insensitive)
{
	char p[4096];
	int i, fd;

	snprintf(p, sizeof(p), "SUB/hello.txt");
	ck_assert_int_eq(vfs_name_resolve(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "sub/Hello.TXT");
	/* an exact name is left alone */
	snprintf(p, sizeof(p), "sub/Hello.TXT");
	ck_assert_int_eq(vfs_name_resolve(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "sub/Hello.TXT");
	/* a missing tail keeps the client's spelling */
	snprintf(p, sizeof(p), "Sub/NewFile");
	ck_assert_int_eq(vfs_name_resolve(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "sub/NewFile");
	/* the cache follows changes to the directory */
	for (i = 0; i < 200; i++) {
		snprintf(p, sizeof(p), "sub/f%03d", i);
		fd = v->open(root, p, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	snprintf(p, sizeof(p), "sub/F150");
	ck_assert_int_eq(vfs_name_resolve(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "sub/f150");
	fd = v->open(root, "sub/Late", O_CREAT | O_WRONLY, 0644);
	close(fd);
	snprintf(p, sizeof(p), "sub/LATE");
	ck_assert_int_eq(vfs_name_resolve(v, root, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "sub/Late");
	/* an escape stays an escape after resolution */
	snprintf(p, sizeof(p), "ETC_LINK/passwd");
	vfs_name_resolve(v, root, p, sizeof(p));
	ck_assert_int_lt(v->open(root, p, O_RDONLY, 0), 0);
}
END_TEST

START_TEST(test_dos_and_streams)
{
	struct vfs_dosinfo di = { .attrs = 0x21,
	    .create_time = 0x01D0000000000000ull }, out;
	uint8_t buf[56];
	char x[300];
	int fd;

	ck_assert_uint_eq(vfs_dos_encode(&di, buf, sizeof(buf)), 16);
	ck_assert_int_eq(vfs_dos_decode(buf, 16, &out), 0);
	ck_assert_uint_eq(out.attrs, 0x21);
	ck_assert_uint_eq(out.create_time, di.create_time);
	/* a client-set change time makes the 32-byte version 2 */
	di.change_time = 0x01D0000000001234ull;
	di.change_mtime = 0x01D0000000005678ull;
	ck_assert_uint_eq(vfs_dos_encode(&di, buf, sizeof(buf)), 32);
	ck_assert_uint_eq(vfs_dos_encode(&di, buf, 16), 0);
	ck_assert_int_eq(vfs_dos_decode(buf, 32, &out), 0);
	ck_assert_uint_eq(out.change_time, di.change_time);
	ck_assert_uint_eq(out.change_mtime, di.change_mtime);
	ck_assert_int_eq(vfs_dos_decode(buf, 16, &out), -EINVAL);
	/* a write time held by an open makes the 56-byte version 3 */
	di.wt_old = 0x01D0000000000001ull;
	di.wt_fire = VFS_WT_NEVER;
	di.wt_owner = 42;
	ck_assert_uint_eq(vfs_dos_encode(&di, buf, 32), 0);
	ck_assert_uint_eq(vfs_dos_encode(&di, buf, sizeof(buf)), 56);
	ck_assert_int_eq(vfs_dos_decode(buf, 56, &out), 0);
	ck_assert_uint_eq(out.change_time, di.change_time);
	ck_assert_uint_eq(out.wt_old, di.wt_old);
	ck_assert_uint_eq(out.wt_fire, VFS_WT_NEVER);
	ck_assert_uint_eq(out.wt_owner, 42);
	ck_assert_int_eq(vfs_dos_decode(buf, 32, &out), -EINVAL);
	di.wt_old = di.wt_fire = di.wt_owner = 0;
	di.change_time = di.change_mtime = 0;
	ck_assert_uint_eq(vfs_dos_encode(&di, buf, sizeof(buf)), 16);
	buf[2] = 9;
	ck_assert_int_eq(vfs_dos_decode(buf, 16, &out), -EINVAL);
	ck_assert_int_eq(vfs_dos_decode(buf, 3, &out), -EINVAL);
	fd = v->open(root, "sub/Hello.TXT", O_PATH, 0);
	ck_assert_int_ge(fd, 0);
	/* through an O_PATH fd: the backend goes via /proc/self/fd */
	ck_assert_int_eq(vfs_dos_set(v, fd, &di), 0);
	ck_assert_int_eq(vfs_dos_get(v, fd, &out), 0);
	ck_assert_uint_eq(out.attrs, 0x21);
	close(fd);
	ck_assert_int_eq(vfs_stream_xattr_name("data", x, sizeof(x)), 0);
	ck_assert_str_eq(x, "user.usmbd.stream.data");
	ck_assert_int_eq(vfs_stream_xattr_name("../x", x, sizeof(x)), -EINVAL);
	ck_assert_int_eq(vfs_stream_xattr_name("a/b", x, sizeof(x)), -EINVAL);
	ck_assert_int_eq(vfs_stream_xattr_name("", x, sizeof(x)), -EINVAL);
}
END_TEST

/*
 * lock_test sees a traditional fcntl() lock another open file description
 * holds (an OFD query conflicts with it even in the same process), only on
 * its own bytes, and not once it is gone; ranges past off_t are clipped.
 */
/*
 * entlistxattr: the names of one entry's xattrs by the directory fd, a
 * final symlink not followed (its target's are not listed), no '/'.
 */
START_TEST(test_entlistxattr)
{
	char p[256], names[256];
	int sub;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/sub/Hello.TXT", dir);
	if (setxattr(p, "user.usmbd.ea.One", "v", 1, 0) != 0)
		return;		/* a /tmp without user xattrs: nothing to list */
	sub = v->open(root, "sub", O_RDONLY | O_DIRECTORY, 0);
	ck_assert_int_ge(sub, 0);
	n = v->entlistxattr(sub, "Hello.TXT", names, sizeof(names));
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(memmem(names, (size_t)n, "user.usmbd.ea.One",
	    sizeof("user.usmbd.ea.One")));
	/* the size alone */
	ck_assert_int_eq(v->entlistxattr(sub, "Hello.TXT", NULL, 0), n);
	ck_assert_int_eq(v->entlistxattr(sub, "Hello.TXT", names, 4),
	    -ERANGE);
	ck_assert_int_eq(v->entlistxattr(sub, "../secret", names,
	    sizeof(names)), -EINVAL);
	ck_assert_int_eq(v->entlistxattr(sub, "nosuch", names,
	    sizeof(names)), -ENOENT);
	close(sub);
	/* a symlink to that file: the link's own names, not the target's */
	n = v->entlistxattr(root, "inside", names, sizeof(names));
	ck_assert(n >= 0);
	ck_assert_ptr_null(memmem(names, (size_t)n, "user.usmbd.ea.One",
	    sizeof("user.usmbd.ea.One")));
}
END_TEST

START_TEST(test_lock_test)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
	    .l_start = 100, .l_len = 10 };
	int fd, mine;

	fd = v->open(root, "sub/Hello.TXT", O_RDWR, 0);
	mine = v->open(root, "sub/Hello.TXT", O_RDWR, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(mine, 0);
	ck_assert_int_eq(v->lock_test(mine, 100, 1, 1), 0);
	ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
	ck_assert_int_eq(v->lock_test(mine, 105, 1, 1), -EAGAIN);
	ck_assert_int_eq(v->lock_test(mine, 105, 1, 0), -EAGAIN);
	ck_assert_int_eq(v->lock_test(mine, 0, 100, 1), 0);
	ck_assert_int_eq(v->lock_test(mine, 110, 5, 1), 0);
	ck_assert_int_eq(v->lock_test(mine, 0, UINT64_MAX, 1), -EAGAIN);
	ck_assert_int_eq(v->lock_test(mine, 50, 0, 1), 0);	/* no byte */
	ck_assert_int_eq(v->lock_test(mine, 1ull << 63, 10, 1), 0);
	fl.l_type = F_RDLCK;
	ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
	ck_assert_int_eq(v->lock_test(mine, 105, 1, 0), 0);	/* read + read */
	ck_assert_int_eq(v->lock_test(mine, 105, 1, 1), -EAGAIN);
	fl.l_type = F_UNLCK;
	ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
	ck_assert_int_eq(v->lock_test(mine, 105, 1, 1), 0);
	close(fd);
	close(mine);
}
END_TEST

static Suite *
vfs_suite(void)
{
	Suite *s = suite_create("vfs");
	TCase *tc = tcase_create("posix");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_open_inside);
	tcase_add_test(tc, test_escapes_refused);
	tcase_add_test(tc, test_links_not_followed);
	tcase_add_test(tc, test_names_ops);
	tcase_add_test(tc, test_case_insensitive);
	tcase_add_test(tc, test_dos_and_streams);
	tcase_add_test(tc, test_entlistxattr);
	tcase_add_test(tc, test_lock_test);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(vfs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
