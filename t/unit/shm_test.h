/*
 * The fixture shared by check_shm.c and check_shm_locks.c: a fresh env in a
 * temp dir, open records, the file ids F1 and F2, and child processes that
 * talk to the test over two pipes (struct kid).  Each child opens the env
 * itself after fork (an LMDB handle is never used across fork).
 */
#ifndef USMBD_T_SHM_TEST_H
#define USMBD_T_SHM_TEST_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/shm.h"

static char tdir[64];

static inline void
rm_tree(const char *dir)
{
	char p[1024], m[256];
	DIR *d;
	struct dirent *e;

	snprintf(m, sizeof(m), "%s/msg", dir);
	if ((d = opendir(m)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", m, e->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(m);
	snprintf(p, sizeof(p), "%s/state.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/state.mdb-lock", dir);
	unlink(p);
	for (int i = 0; i < 64; i++) {
		snprintf(p, sizeof(p), "%s/state-%d.mdb", dir, i);
		unlink(p);
		snprintf(p, sizeof(p), "%s/state-%d.mdb-lock", dir, i);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/state.hint", dir);
	unlink(p);
	rmdir(dir);
}

/* 2^log2 data envs (0: everything in one env, as `state partitions = 1`). */
static inline struct shm *
make_env_parts(size_t map, unsigned log2)
{
	struct shm *s;
	int rc;

	snprintf(tdir, sizeof(tdir), "/tmp/check_shm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	rc = shm_attach(tdir, map, shm_readers_for(8),
	    SHM_CREATE | SHM_PARTS_LOG2(log2), &s);
	ck_assert_int_eq(rc, 0);
	return s;
}

/*
 * SHM_TEST_PARTS_LOG2 in the environment runs a suite over 2^n data envs
 * (`SHM_TEST_PARTS_LOG2=3 build/asan/t/unit/check_shm`).
 */
static inline struct shm *
make_env(size_t map)
{
	const char *e = getenv("SHM_TEST_PARTS_LOG2");

	return make_env_parts(map, e != NULL ? (unsigned)atoi(e) : 0);
}

/*
 * The checked fixture of a suite's second TCase (shm_test_run):
 * every test again over 8 data envs, the default `state partitions`, in
 * `make check`.  Each test is a forked child: the setting stays in it.
 */
static inline void
parts8_setup(void)
{
	setenv("SHM_TEST_PARTS_LOG2", "3", 1);
}

/*
 * The main of check_shm, check_shm_locks and check_shm_trees: the suite
 * NAME of the tests ADD puts in a TCase, once over one env ("core") and
 * once over 8 ("core-8envs", parts8_setup).  The exit status says whether
 * all passed.
 */
static inline int
shm_test_run(const char *name, void (*add)(TCase *))
{
	Suite *su = suite_create(name);
	TCase *tc = tcase_create("core");
	TCase *tc8 = tcase_create("core-8envs");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 30);
	add(tc);
	suite_add_tcase(su, tc);
	tcase_set_timeout(tc8, 30);
	tcase_add_checked_fixture(tc8, parts8_setup, NULL);
	add(tc8);
	suite_add_tcase(su, tc8);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static inline void
drop_env(struct shm *s)
{
	shm_detach(s);
	rm_tree(tdir);
}

static inline struct shm_open_rec
mkopen(uint64_t id, uint32_t access, uint32_t share)
{
	struct shm_open_rec r;

	memset(&r, 0, sizeof(r));
	r.persistent_id = id;
	r.pid = getpid();
	r.session_id = 7;
	r.access = access;
	r.share_access = share;
	return r;
}

#define RD	SHM_FILE_READ_DATA
#define WR	SHM_FILE_WRITE_DATA
#define DEL	SHM_DELETE
#define ATTR	0x00000080u	/* FILE_READ_ATTRIBUTES */
#define S_R	SHM_FILE_SHARE_READ
#define S_W	SHM_FILE_SHARE_WRITE
#define S_D	SHM_FILE_SHARE_DELETE
#define S_ALL	(S_R | S_W | S_D)

static const struct shm_file_id F1 = { 0x801, 0x1234 };
static const struct shm_file_id F2 = { 0x801, 0x1235 };


/* ---- processes ---- */

struct kid {
	pid_t	pid;
	int	to[2];		/* parent -> child */
	int	from[2];	/* child -> parent */
};

static inline void
kid_start(struct kid *k, void (*fn)(struct kid *))
{
	ck_assert_int_eq(pipe(k->to), 0);
	ck_assert_int_eq(pipe(k->from), 0);
	k->pid = fork();
	ck_assert_int_ne(k->pid, -1);
	if (k->pid == 0) {
		close(k->to[1]);
		close(k->from[0]);
		fn(k);
		_exit(0);
	}
	close(k->to[0]);
	close(k->from[1]);
}

/* A child's report: one int, within 10 s. */
static inline int
kid_read(struct kid *k)
{
	struct pollfd p = { k->from[0], POLLIN, 0 };
	int v = -9999;

	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	ck_assert_int_eq(read(k->from[0], &v, sizeof(v)), sizeof(v));
	return v;
}

static inline void
kid_say(int fd, int v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

static inline int
kid_wait(int fd)
{
	int v = -1;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		_exit(0);	/* parent gone */
	return v;
}

static inline int
kid_exit(struct kid *k)
{
	int st;

	ck_assert_int_eq(waitpid(k->pid, &st, 0), k->pid);
	close(k->to[1]);
	close(k->from[0]);
	return st;
}

static inline struct shm *
kid_attach(void)
{
	struct shm *s;

	if (shm_attach(tdir, 0, 0, 0, &s) != 0)
		_exit(2);
	return s;
}

#endif
