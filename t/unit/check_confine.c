/*
 * worker/confine.c: the gate's, the descriptor writer's and the ticket
 * helper's allow-lists kill on anything else, the worker's deny-list refuses what a file
 * server never needs, all refuse x32 calls, and Landlock leaves a gate
 * no file system.  Each filter is installed in a forked child (a filter
 * cannot be taken off), which reports by its exit status or dies by
 * SIGSYS.  Also the log escaping of daemon/log.c and the rate buckets of daemon/spawn.c, which the
 * confinement relies on once children log through the master.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fs.h>

#include "daemon/log.h"
#include "daemon/spawn.h"
#include "t/unit/testlib.h"
#include "worker/confine.h"

/* Runs fn in a child after installing prog; returns the wait status. */
static int
run_confined(const struct sock_fprog *prog, int (*fn)(void))
{
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(prog);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		if (confine_seccomp(prog) != 0)
			_exit(100);
		_exit(fn());
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static int
seccomp_mode(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int mode = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* ---- gate ---- */

static int
gate_socket(void)
{
	(void)socket(AF_INET, SOCK_STREAM, 0);	/* a gate makes no socket */
	return 0;
}

static int
gate_mkdir(void)
{
	(void)mkdir("/tmp/confine-should-not-exist", 0700);
	return 0;
}

static int
gate_mmap_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 40;
	(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	return 41;
}

static int
x32_call(void)
{
	(void)syscall(__X32_SYSCALL_BIT | SYS_getpid);
	return 0;
}

START_TEST(test_gate_allows_its_calls)
{
	int sv[2], st;
	pid_t pid;
	char c;

	/* The channel exists before the filter, as a gate's does. */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		struct timespec ts;
		char b[16];

		if (confine_seccomp(confine_gate_filter()) != 0)
			_exit(100);
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
			_exit(3);
		if (send(sv[1], "g", 1, MSG_NOSIGNAL) != 1)
			_exit(5);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "gate child status %#x", st);
	ck_assert_int_eq(recv(sv[0], &c, 1, MSG_DONTWAIT), 1);
	ck_assert_int_eq(c, 'g');
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_gate_kills_the_rest)
{
	int st;

	st = run_confined(confine_gate_filter(), gate_socket);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "socket(): status %#x", st);
	st = run_confined(confine_gate_filter(), gate_mkdir);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mkdir(): status %#x", st);
	ck_assert_int_eq(access("/tmp/confine-should-not-exist", F_OK), -1);
	st = run_confined(confine_gate_filter(), x32_call);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "x32 call: status %#x", st);
	/* Memory yes, executable memory no. */
	st = run_confined(confine_gate_filter(), gate_mmap_exec);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mmap(PROT_EXEC): status %#x", st);
}
END_TEST

/* ---- worker ---- */

static int
worker_denied(void)
{
	char dir[] = "/tmp/confine-mnt.XXXXXX";
	int bad = 0;

	if (seccomp_mode() != 2)
		return 10;
	/* A file server's own calls go on. */
	if (getpid() <= 0 || access("/", R_OK) != 0)
		return 11;
	if (mkdtemp(dir) == NULL)
		return 12;
	errno = 0;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != -1 || errno != EPERM)
		bad |= 1 << 0;
	errno = 0;
	if (mount("tmpfs", dir, "tmpfs", 0, NULL) != -1 || errno != EPERM)
		bad |= 1 << 1;
	errno = 0;
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		bad |= 1 << 2;
	errno = 0;
	if (syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) != -1 ||
	    errno != EPERM)
		bad |= 1 << 3;
	errno = 0;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		bad |= 1 << 4;
	errno = 0;
	if (syscall(SYS_bpf, 0, NULL, 0) != -1 || errno != EPERM)
		bad |= 1 << 5;
	errno = 0;
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM)
		bad |= 1 << 6;
	errno = 0;
	if (syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0) != -1 ||
	    errno != EPERM)
		bad |= 1 << 7;
	/* a quota may be read (the kernel answers), never set */
	errno = 0;
	if (syscall(SYS_quotactl_fd, 0u, 0x80000700u, (unsigned)getuid(), NULL) == -1 &&
	    errno == EPERM)
		bad |= 1 << 12;
	errno = 0;
	if (syscall(SYS_quotactl_fd, 0u, 0x80000701u, (unsigned)getgid(), NULL) == -1 &&
	    errno == EPERM)
		bad |= 1 << 13;
	errno = 0;
	if (syscall(SYS_quotactl_fd, 0u, 0x80000800u, 0u, NULL) != -1 ||
	    errno != EPERM)
		bad |= 1 << 14;
	errno = 0;
	if (syscall(SYS_quotactl, 0x80000700u, "/", 0, NULL) != -1 ||
	    errno != EPERM)
		bad |= 1 << 15;
	/*
	 * Nor read any other way: the next id's quota (a walk of every
	 * user's), a project's, the XFS commands, the state of the quota
	 * files: QCMD(Q_GETNEXTQUOTA, USRQUOTA), QCMD(Q_GETQUOTA, PRJQUOTA),
	 * Q_XGETQUOTA, Q_XGETQSTAT, QCMD(Q_GETINFO, USRQUOTA), Q_SYNC.
	 */
	{
		static const unsigned qcmd[] = { 0x80000900u, 0x80000702u,
		    0x00580300u, 0x00580500u, 0x80000500u, 0x80000100u };
		unsigned i;

		for (i = 0; i < sizeof(qcmd) / sizeof(qcmd[0]); i++) {
			errno = 0;
			if (syscall(SYS_quotactl_fd, 0u, qcmd[i], 0u,
			    NULL) != -1 || errno != EPERM)
				bad |= 1 << 16;
		}
	}
	errno = 0;
	if (execl("/bin/true", "true", (char *)NULL) != -1 || errno != EPERM)
		bad |= 1 << 8;
	errno = 0;
	if (syscall(SYS_kexec_load, 0, 0, NULL, 0) != -1 || errno != EPERM)
		bad |= 1 << 9;
	errno = 0;
	if (syscall(SYS_init_module, NULL, 0, "") != -1 || errno != EPERM)
		bad |= 1 << 10;
	errno = 0;
	if (syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0) != -1 ||
	    errno != EPERM)
		bad |= 1 << 11;
	(void)rmdir(dir);
	return bad == 0 ? 0 : 20;
}

/*
 * Block cloning (worker/smb2_fsctl.c, vfs/posix.c): FICLONERANGE and the
 * XFS geometry call at a tree connect reach the kernel, which answers
 * EBADF for fd -1; the filter would have said EPERM.
 */
static int
worker_clone_ioctls(void)
{
	struct file_clone_range r;
	uint8_t geom[256];

	memset(&r, 0, sizeof(r));
	r.src_fd = -1;
	errno = 0;
	if (ioctl(-1, FICLONERANGE, &r) != -1 || errno != EBADF)
		return 50;
	errno = 0;
	if (ioctl(-1, _IOR('X', 126, uint8_t[256]), geom) != -1 ||
	    errno != EBADF)
		return 51;
	return 0;
}

/* A plain fork (clone without namespace flags) still works. */
static int
worker_fork(void)
{
	pid_t p = fork();
	int st;

	if (p == -1)
		return 30;
	if (p == 0)
		_exit(7);
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 31;
	return 0;
}

START_TEST(test_worker_denies)
{
	int st;

	st = run_confined(confine_worker_filter(), worker_denied);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "worker child status %#x", st);
	st = run_confined(confine_worker_filter(), worker_fork);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "worker fork status %#x", st);
	st = run_confined(confine_worker_filter(), x32_call);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "x32 call: status %#x", st);
	st = run_confined(confine_worker_filter(), worker_clone_ioctls);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "worker clone ioctls: status %#x", st);
}
END_TEST

/* ---- descriptor writer ---- */

/*
 * What the writer does on a file it is handed (opened before the filter,
 * as SCM_RIGHTS brings it): fstat, the xattr calls by fd and by the
 * /proc/self/fd name (ENOTSUP or EPERM from the kernel are fine: the
 * filter let the call through), an answer on a socket.
 */
static int sdw_fd = -1, sdw_sock = -1;

static int
sdw_calls(void)
{
	struct stat st;
	char b[8], p[32];

	if (fstat(sdw_fd, &st) != 0)
		return 1;
	(void)fgetxattr(sdw_fd, "user.confine", b, sizeof(b));
	(void)fsetxattr(sdw_fd, "user.confine", "1", 1, 0);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", sdw_fd);
	(void)getxattr(p, "user.confine", b, sizeof(b));
	(void)setxattr(p, "user.confine", "1", 1, 0);
	if (send(sdw_sock, "s", 1, MSG_NOSIGNAL) != 1)
		return 2;
	close(sdw_fd);
	return 0;
}

/* it makes no path (open itself is let through in sanitizer builds) */
static int
sdw_mkdir(void)
{
	(void)mkdir("/tmp/confine-should-not-exist", 0700);
	return 0;
}

static int
sdw_mount(void)
{
	(void)mount("tmpfs", "/mnt", "tmpfs", 0, NULL);
	return 0;
}

START_TEST(test_sdw_allow_list)
{
	char path[] = "/tmp/confine-sdw.XXXXXX", c;
	int sv[2], st;

	sdw_fd = mkstemp(path);
	ck_assert_int_ge(sdw_fd, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	sdw_sock = sv[1];
	st = run_confined(confine_sdw_filter(), sdw_calls);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "sdw calls: status %#x", st);
	ck_assert_int_eq(recv(sv[0], &c, 1, MSG_DONTWAIT), 1);
	st = run_confined(confine_sdw_filter(), sdw_mkdir);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mkdir(): status %#x", st);
	ck_assert_int_eq(access("/tmp/confine-should-not-exist", F_OK), -1);
	st = run_confined(confine_sdw_filter(), sdw_mount);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mount(): status %#x", st);
	st = run_confined(confine_sdw_filter(), gate_socket);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "socket(): status %#x", st);
	st = run_confined(confine_sdw_filter(), gate_mmap_exec);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mmap(PROT_EXEC): status %#x", st);
	st = run_confined(confine_sdw_filter(), x32_call);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "x32 call: status %#x", st);
	close(sdw_fd);
	unlink(path);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* ---- ticket helper ---- */

static char krb_path[] = "/tmp/confine-krb.XXXXXX";
static int krb_sock = -1;

/* What MIT krb5 and worker/krb.c do: replay cache, memfd, dumpable. */
static int
krb_calls(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	uint8_t b[16];
	int fd, mfd;

	fd = openat(AT_FDCWD, krb_path, O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &st) != 0 || fcntl(fd, F_OFD_SETLKW, &fl) != 0)
		return 1;
	if (lseek(fd, 0, SEEK_END) < 0 || write(fd, "rcache", 6) != 6 ||
	    pread(fd, b, 6, 0) != 6)
		return 2;
	fl.l_type = F_UNLCK;
	(void)fcntl(fd, F_OFD_SETLKW, &fl);
	close(fd);
	if (access(krb_path, R_OK) != 0 || getrandom(b, sizeof(b), 0) != 16)
		return 3;
	mfd = memfd_create("confine-keytab", MFD_CLOEXEC);
	if (mfd < 0 || write(mfd, "kt", 2) != 2)
		return 4;
	close(mfd);
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return 5;
	(void)geteuid();
	if (send(krb_sock, "k", 1, MSG_NOSIGNAL) != 1)
		return 6;
	return 0;
}

/* a ticket that exploits the library finds no network */
static int
krb_connect(void)
{
	(void)socket(AF_INET, SOCK_STREAM, 0);
	return 0;
}

static int
krb_unlink(void)
{
	(void)unlink(krb_path);
	return 0;
}

#ifndef __SANITIZE_ADDRESS__
/* prctl is allowed for PR_SET_DUMPABLE only */
static int
krb_prctl_other(void)
{
	(void)prctl(PR_SET_NAME, "other", 0, 0, 0);
	return 0;
}
#endif

START_TEST(test_krb_allow_list)
{
	char c;
	int sv[2], st, fd;

	fd = mkstemp(krb_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	krb_sock = sv[1];
	st = run_confined(confine_krb_filter(), krb_calls);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the helper's calls: status %#x", st);
	ck_assert_int_eq(recv(sv[0], &c, 1, MSG_DONTWAIT), 1);
	st = run_confined(confine_krb_filter(), krb_connect);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "socket(): status %#x", st);
	st = run_confined(confine_krb_filter(), krb_unlink);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "unlink(): status %#x", st);
	ck_assert_int_eq(access(krb_path, F_OK), 0);
	st = run_confined(confine_krb_filter(), sdw_mkdir);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mkdir(): status %#x", st);
	st = run_confined(confine_krb_filter(), sdw_mount);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mount(): status %#x", st);
	st = run_confined(confine_krb_filter(), gate_mmap_exec);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "mmap(PROT_EXEC): status %#x", st);
	st = run_confined(confine_krb_filter(), x32_call);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "x32 call: status %#x", st);
#ifndef __SANITIZE_ADDRESS__
	/* Sanitizer builds let every prctl through (their runtime's). */
	st = run_confined(confine_krb_filter(), krb_prctl_other);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "prctl(PR_SET_NAME): status %#x", st);
#endif
	unlink(krb_path);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* ---- Landlock ---- */

START_TEST(test_landlock_nothing)
{
	pid_t pid;
	int st;

	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		int abi = confine_landlock_nothing();

		if (abi < 0)
			_exit(1);
		if (abi == 0)
			_exit(0);	/* no Landlock in this kernel */
		if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
			_exit(2);
		if (mkdir("/tmp/confine-ll-should-not-exist", 0700) != -1)
			_exit(3);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "landlock child status %#x", st);
}
END_TEST

/* ---- logging and rates ---- */

START_TEST(test_log_escape)
{
	char out[256];
	size_t n;

	n = log_escape(out, sizeof(out), "x\nFAKE line", 11);
	ck_assert_str_eq(out, "x\\x0aFAKE line");
	ck_assert_uint_eq(n, strlen(out));
	log_escape(out, sizeof(out), "a\r\x1b[2Jb\x7f", 8);
	ck_assert_str_eq(out, "a\\x0d\\x1b[2Jb\\x7f");
	/* UTF-8 names stay readable; C1 controls and stray bytes do not pass. */
	log_escape(out, sizeof(out), "caf\xc3\xa9 \xe2\x82\xac", 9);
	ck_assert_str_eq(out, "caf\xc3\xa9 \xe2\x82\xac");
	log_escape(out, sizeof(out), "\xc2\x9b" "1m\xff\xc3", 6);
	ck_assert_str_eq(out, "\\xc2\\x9b1m\\xff\\xc3");
	/* Overlong '/' */
	log_escape(out, sizeof(out), "\xc0\xaf", 2);
	ck_assert_str_eq(out, "\\xc0\\xaf");
	/* A short buffer cuts whole escapes, never half of one. */
	log_escape(out, 6, "\n\n\n", 3);
	ck_assert_str_eq(out, "\\x0a");
}
END_TEST

START_TEST(test_bucket)
{
	struct spawn_bucket b;
	int i, got = 0;

	memset(&b, 0, sizeof(b));
	for (i = 0; i < 100; i++)
		got += spawn_bucket_take(&b, 20, 50, 1000);
	ck_assert_int_eq(got, 50);
	ck_assert_uint_eq(b.dropped, 50);
	/* 100 ms later: 2 more at 20 a second. */
	got = 0;
	for (i = 0; i < 10; i++)
		got += spawn_bucket_take(&b, 20, 50, 1100);
	ck_assert_int_eq(got, 2);
	/* Never more than the burst, however long it was quiet. */
	got = 0;
	for (i = 0; i < 100; i++)
		got += spawn_bucket_take(&b, 20, 50, 1000000);
	ck_assert_int_eq(got, 50);
}
END_TEST

static Suite *
confine_suite(void)
{
	Suite *s = suite_create("confine");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_gate_allows_its_calls);
	tcase_add_test(tc, test_gate_kills_the_rest);
	tcase_add_test(tc, test_worker_denies);
	tcase_add_test(tc, test_sdw_allow_list);
	tcase_add_test(tc, test_krb_allow_list);
	tcase_add_test(tc, test_landlock_nothing);
	tcase_add_test(tc, test_log_escape);
	tcase_add_test(tc, test_bucket);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(confine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
