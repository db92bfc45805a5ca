/*
 * Delete-on-close across users: the MSG_UNLINK_AS / MSG_UNLINK_DO codec
 * (daemon/unlinkmsg.c), the master's routing of it (daemon/route.c) over
 * real SOCK_SEQPACKET channels to a fake worker slot, and the receiving
 * worker's checks (worker/unlink_as.c) on a real directory: only a delete
 * the worker vouched for itself is done (anything else, whatever the asker
 * says, is refused), the same inode is unlinked, another inode under the
 * name is not, nothing outside the root is reached.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "daemon/conf.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/route.h"
#include "daemon/spawn.h"
#include "daemon/unlinkmsg.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/unlink_as.h"

static struct unlinkmsg	u, v;
static uint8_t		pbuf[MSG_MAX_PAYLOAD];

static void
fill(struct unlinkmsg *x, uint32_t uid, const char *path)
{
	memset(x, 0, sizeof(*x));
	x->uid = uid;
	x->dev = 0x0000000800000001ULL;
	x->ino = 4242;
	x->is_dir = 0;
	strcpy(x->share, "share");
	snprintf(x->path, sizeof(x->path), "%s", path);
}

START_TEST(test_codec_roundtrip)
{
	int n;

	fill(&u, 1002, "sticky/bob-file");
	n = unlinkmsg_encode(&u, 0, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), 0);
	ck_assert_uint_eq(v.uid, 1002);
	ck_assert_uint_eq(v.dev, u.dev);
	ck_assert_uint_eq(v.ino, 4242);
	ck_assert_str_eq(v.share, "share");
	ck_assert_str_eq(v.path, "sticky/bob-file");
	/* Without the root it is not an MSG_UNLINK_DO, and the reverse. */
	ck_assert_int_eq(unlinkmsg_decode(&v, 1, pbuf, (size_t)n), -1);
	strcpy(u.root, "/srv/share");
	n = unlinkmsg_encode(&u, 1, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), -1);
	ck_assert_int_eq(unlinkmsg_decode(&v, 1, pbuf, (size_t)n), 0);
	ck_assert_str_eq(v.root, "/srv/share");
}
END_TEST

START_TEST(test_codec_malformed)
{
	int n, i;

	fill(&u, 1002, "a/b");
	n = unlinkmsg_encode(&u, 0, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	/* Every truncation and a trailing byte are refused. */
	for (i = 0; i < n; i++)
		ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)i), -1);
	pbuf[n] = 0;
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n + 1), -1);
	/* A NUL inside the path: the last byte of "a/b" */
	pbuf[n - 1] = '\0';
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), -1);
	pbuf[n - 1] = 'b';
	/* is_dir must be 0 or 1 (offset 20). */
	pbuf[20] = 2;
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), -1);
	pbuf[20] = 1;
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), 0);
	/* A string length past the share's room (u16 at offset 21). */
	pbuf[21] = 0xff;
	pbuf[22] = 0x01;
	ck_assert_int_eq(unlinkmsg_decode(&v, 0, pbuf, (size_t)n), -1);
}
END_TEST

/* ---- routing in the master ---- */

static struct conf		test_conf;
static struct conf_share	test_shares[2];
static int			from_peer, to_peer;
static struct child		*from_c, *to_c;
static uid_t			to_uid;

static void
setup_master(void)
{
	struct passwd *pw = getpwnam("daemon");
	int fv[2], tv[2];

	ck_assert_ptr_nonnull(pw);
	to_uid = pw->pw_uid;
	memset(&test_conf, 0, sizeof(test_conf));
	test_shares[0].name = "IPC$";
	test_shares[0].is_ipc = 1;
	test_shares[1].name = "share";
	test_shares[1].path = "/srv/share";
	test_conf.shares = test_shares;
	test_conf.nshares = 2;
	/* No passdb here: the guest account is the one user let through. */
	test_conf.guest_account = "daemon";
	test_conf.max_workers_per_user = 1;
	master.conf = &test_conf;
	master.passdb = NULL;
	master.epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fv), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, tv), 0);
	/* Slots need no process: the master only reads and writes channels. */
	from_c = &spawn_children[0];
	memset(from_c, 0, sizeof(*from_c));
	from_c->pid = 999990;
	from_c->role = CHILD_WORKER;
	from_c->uid = 1000;
	from_c->chan = fv[0];
	from_c->hello = 1;
	ck_assert_int_eq(fcntl(fv[0], F_SETFL, O_NONBLOCK), 0);
	from_peer = fv[1];
	to_c = &spawn_children[1];
	memset(to_c, 0, sizeof(*to_c));
	to_c->pid = 999991;
	to_c->role = CHILD_WORKER;
	to_c->uid = to_uid;
	to_c->chan = tv[0];
	to_c->hello = 1;
	to_peer = tv[1];
	ck_assert_int_eq(fcntl(tv[1], F_SETFL, O_NONBLOCK), 0);
}

/* from sends MSG_UNLINK_AS as uid for share/path; the master reads it. */
static void
ask(uint32_t uid, const char *share, const char *path)
{
	int n;

	fill(&u, uid, path);
	strcpy(u.share, share);
	n = unlinkmsg_encode(&u, 0, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(msg_send(from_peer, MSG_UNLINK_AS, 0, pbuf, (size_t)n, -1), 0);
	spawn_child_event(from_c);
	/* The sender is never punished for a request that is refused. */
	ck_assert_int_ge(from_c->chan, 0);
}

START_TEST(test_route_forward)
{
	static uint8_t rbuf[MSG_BUF_SIZE];
	struct msg m;
	int n;

	setup_master();
	ask((uint32_t)to_uid, "SHARE", "sticky/bob-file");
	ck_assert_int_eq(msg_recv(to_peer, &m, rbuf, sizeof(rbuf)), 0);
	ck_assert_uint_eq(m.type, MSG_UNLINK_DO);
	ck_assert_int_eq(unlinkmsg_decode(&v, 1, m.payload, m.len), 0);
	ck_assert_uint_eq(v.uid, to_uid);
	ck_assert_str_eq(v.path, "sticky/bob-file");
	ck_assert_str_eq(v.root, "/srv/share");	/* from the master's config */
	ck_assert_uint_eq(v.ino, 4242);
	/* Refused, nothing forwarded: root, the sender's own uid, IPC$, an unknown share, a uid that is no user. */
	ask(0, "share", "x");
	ask(1000, "share", "x");
	ask((uint32_t)to_uid, "IPC$", "x");
	ask((uint32_t)to_uid, "nosuch", "x");
	ask(65533, "share", "x");
	ck_assert_int_eq(msg_recv(to_peer, &m, rbuf, sizeof(rbuf)), -EAGAIN);
	/*
	 * The user's worker gone: dropped, and no worker is started for it
	 * (a fresh one would vouch for nothing).
	 */
	to_c->pid = 0;
	ask((uint32_t)to_uid, "share", "sticky/bob-file");
	for (n = 0; n < SPAWN_MAX_CHILDREN; n++)
		ck_assert(!(spawn_children[n].pid > 0 &&
		    spawn_children[n].uid == to_uid));
	to_c->pid = 999991;
	ck_assert_int_eq(msg_recv(to_peer, &m, rbuf, sizeof(rbuf)), -EAGAIN);
	/* A malformed payload is the sender's fault. */
	m.type = MSG_UNLINK_AS;
	m.id = 0;
	m.payload = pbuf;
	m.len = 5;
	m.fd = -1;
	ck_assert_int_eq(route_unlink_as(from_c, &m), -1);
}
END_TEST

/*
 * Issue 19: a forwarded flood kills nobody.  A worker floods MSG_UNLINK_AS
 * for bob's uid: past its rate the requests are dropped before the master
 * looks at them; bob's worker, not reading, gets only a share of its
 * channel and is never killed; neither is the sender.  The drops are
 * counted.
 */
START_TEST(test_forward_flood)
{
	static uint8_t rbuf[MSG_BUF_SIZE];
	struct msg m;
	int i, n, got = 0, queued = 0, sndbuf = 0;
	socklen_t sl = sizeof(sndbuf);
	uint64_t before, refill;
	struct timespec t0, t1;

	setup_master();
	master.fwd_dropped = 0;
	fill(&u, (uint32_t)to_uid, "sticky/x");
	strcpy(u.share, "share");
	n = unlinkmsg_encode(&u, 0, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(msg_send(from_peer, MSG_UNLINK_AS, 0, pbuf,
		    (size_t)n, -1), 0);
		spawn_child_event(from_c);
		/* bob's worker reads: only the rate limits here */
		while (msg_recv(to_peer, &m, rbuf, sizeof(rbuf)) == 0)
			got++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_ge(from_c->chan, 0);
	ck_assert(!from_c->dying);
	ck_assert_int_ge(to_c->chan, 0);
	ck_assert(!to_c->dying);
	/*
	 * The bucket refills at SPAWN_UNLINK_RATE a second while the loop runs
	 * (slow under ASan on a loaded machine): the burst plus what the
	 * elapsed time refilled passes, never more.
	 */
	refill = (uint64_t)((t1.tv_sec - t0.tv_sec) * SPAWN_UNLINK_RATE +
	    (t1.tv_nsec - t0.tv_nsec) * SPAWN_UNLINK_RATE / 1000000000L) + 1;
	ck_assert_int_ge(got, SPAWN_UNLINK_BURST);
	ck_assert_uint_le((uint64_t)got, SPAWN_UNLINK_BURST + refill);
	ck_assert_uint_eq(from_c->unlink_rate.dropped, 1000 - (uint64_t)got);
	ck_assert_uint_eq(master.fwd_dropped, 1000 - (uint64_t)got);

	/*
	 * Within the rate, large requests to a worker that reads nothing: the
	 * channel fills to its forwarding share, the rest is dropped.
	 */
	memset(&from_c->unlink_rate, 0, sizeof(from_c->unlink_rate));
	memset(u.path, 'p', 4000);
	u.path[4000] = '\0';
	n = unlinkmsg_encode(&u, 0, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 4000);
	before = master.fwd_dropped;
	for (i = 0; i < SPAWN_UNLINK_BURST; i++) {
		ck_assert_int_eq(msg_send(from_peer, MSG_UNLINK_AS, 0, pbuf,
		    (size_t)n, -1), 0);
		spawn_child_event(from_c);
	}
	ck_assert_int_ge(to_c->chan, 0);
	ck_assert(!to_c->dying);
	ck_assert_uint_gt(master.fwd_dropped, before);
	ck_assert_uint_eq(to_c->fwd_dropped, master.fwd_dropped - before);
	ck_assert_int_eq(ioctl(to_c->chan, SIOCOUTQ, &queued), 0);
	ck_assert_int_eq(getsockopt(to_c->chan, SOL_SOCKET, SO_SNDBUF, &sndbuf,
	    &sl), 0);
	/* At most its share plus the one message that crossed it. */
	ck_assert_int_le(queued, sndbuf / SPAWN_FWD_SHARE + 2 * n);
	/* The master's own message still gets through. */
	ck_assert_int_eq(spawn_send(to_c, MSG_PING, 7, NULL, 0), 0);
	ck_assert_int_ge(to_c->chan, 0);
}
END_TEST

/* ---- the worker's side ---- */

static char			dir[64];
static struct conf_share	w_share = { .name = "share" };
static struct tree		w_tree = { .in_use = 1, .share = &w_share };
static struct file_open		w_file;

/* This worker left path (dev, ino) delete pending behind other opens. */
static void
vouch(const char *path, uint64_t dev, uint64_t ino)
{
	memset(&w_file, 0, sizeof(w_file));
	w_file.dev = dev;
	w_file.ino = ino;
	w_file.delete_on_close = 1;
	snprintf(w_file.path, sizeof(w_file.path), "%s", path);
	/* a tree is named as it was connected (worker/conn.h) */
	w_tree.name = w_share.name;
	unlink_as_vouch(&w_tree, &w_file);
}

static void
do_unlink(const char *path, uint64_t dev, uint64_t ino)
{
	struct msg m;
	int n;

	fill(&u, (uint32_t)geteuid(), path);
	u.dev = dev;
	u.ino = ino;
	snprintf(u.root, sizeof(u.root), "%s/root", dir);
	n = unlinkmsg_encode(&u, 1, pbuf, sizeof(pbuf));
	ck_assert_int_gt(n, 0);
	memset(&m, 0, sizeof(m));
	m.type = MSG_UNLINK_DO;
	m.payload = pbuf;
	m.len = (uint32_t)n;
	m.fd = -1;
	unlink_as_handle(&m);
}

static uint64_t
vdev(const struct stat *st)
{
	/* vfs/posix.c's encoding of st_dev */
	return (uint64_t)major(st->st_dev) << 32 | minor(st->st_dev);
}

START_TEST(test_worker_unlink)
{
	char p[128], q[128];
	struct stat st, so;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/check_unlink_as.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/root", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/sub", dir);
	ck_assert_int_eq(mkdir(p, 01777), 0);
	snprintf(p, sizeof(p), "%s/root/sub/f", dir);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0644), 0);
	close(fd);
	ck_assert_int_eq(stat(p, &st), 0);
	/* Outside the root, with the same inode numbers: never reached. */
	snprintf(q, sizeof(q), "%s/outside", dir);
	ck_assert_int_ge(fd = open(q, O_CREAT | O_WRONLY, 0644), 0);
	close(fd);
	ck_assert_int_eq(stat(q, &so), 0);
	unlink_as_vouch_reset();
	/* Vouched for, even: the path is resolved beneath the root. */
	vouch("../outside", vdev(&so), so.st_ino);
	vouch("sub/../../outside", vdev(&so), so.st_ino);
	do_unlink("../outside", vdev(&so), so.st_ino);
	do_unlink("sub/../../outside", vdev(&so), so.st_ino);
	ck_assert_int_eq(access(q, F_OK), 0);
	ck_assert_uint_eq(unlink_as_held(), 0);		/* both consumed */
	/* Another inode under the name: kept. */
	vouch("sub/f", vdev(&st), st.st_ino + 1);
	do_unlink("sub/f", vdev(&st), st.st_ino + 1);
	ck_assert_int_eq(access(p, F_OK), 0);
	/* The same file: gone. */
	vouch("sub/f", vdev(&st), st.st_ino);
	ck_assert_uint_eq(unlink_as_held(), 1);
	do_unlink("sub/f", vdev(&st), st.st_ino);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_uint_eq(unlink_as_held(), 0);
	unlink(q);
	snprintf(p, sizeof(p), "%s/root/sub", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/root", dir);
	rmdir(p);
	rmdir(dir);
}
END_TEST

/*
 * A compromised worker of another user names a file this worker can
 * delete but never left delete pending: refused, the file stays.
 */
START_TEST(test_worker_unvouched)
{
	char p[128], r[128];
	struct stat st;
	int fd, i;

	snprintf(dir, sizeof(dir), "/tmp/check_unlink_as.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(r, sizeof(r), "%s/root", dir);
	ck_assert_int_eq(mkdir(r, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/g", dir);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0644), 0);
	close(fd);
	ck_assert_int_eq(stat(p, &st), 0);
	unlink_as_vouch_reset();
	/* Nothing vouched for at all. */
	do_unlink("g", vdev(&st), st.st_ino);
	ck_assert_int_eq(access(p, F_OK), 0);
	/* Vouched for another share, path, inode or kind: still refused. */
	vouch("g", vdev(&st), st.st_ino);
	w_share.name = "other";
	vouch("g", vdev(&st), st.st_ino);
	w_share.name = "share";
	ck_assert_uint_eq(unlink_as_held(), 2);
	do_unlink("G", vdev(&st), st.st_ino);
	do_unlink("./g", vdev(&st), st.st_ino);
	do_unlink("g", vdev(&st) + 1, st.st_ino);
	do_unlink("g", vdev(&st), st.st_ino + 1);
	ck_assert_int_eq(access(p, F_OK), 0);
	ck_assert_uint_eq(unlink_as_held(), 2);
	/* The one vouched for is used once: a replay is refused. */
	do_unlink("g", vdev(&st), st.st_ino);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_uint_eq(unlink_as_held(), 1);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0644), 0);
	close(fd);
	ck_assert_int_eq(stat(p, &st), 0);
	do_unlink("g", vdev(&st), st.st_ino);
	ck_assert_int_eq(access(p, F_OK), 0);
	/*
	 * The tick keeps running while entries are held (without a state
	 * env, here, only the 24 h bound ends them) and stops after.
	 */
	ck_assert_int_ne(unlink_as_tick(), 0);
	ck_assert_int_ne(unlink_as_tick(), 0);
	ck_assert_uint_eq(unlink_as_held(), 1);
	unlink_as_vouch_reset();
	ck_assert_int_eq(unlink_as_tick(), 0);
	/* Bounded: the table never holds more than its size, oldest out. */
	unlink_as_vouch_reset();
	for (i = 0; i < UNLINK_AS_VOUCH_MAX + 8; i++)
		vouch("g", vdev(&st), 1000000 + (uint64_t)i);
	ck_assert_uint_eq(unlink_as_held(), UNLINK_AS_VOUCH_MAX);
	do_unlink("g", vdev(&st), 1000000 + 7);		/* dropped: refused */
	ck_assert_uint_eq(unlink_as_held(), UNLINK_AS_VOUCH_MAX);
	do_unlink("g", vdev(&st), 1000000 + 8);		/* kept: taken */
	ck_assert_uint_eq(unlink_as_held(), UNLINK_AS_VOUCH_MAX - 1);
	ck_assert_int_eq(access(p, F_OK), 0);		/* not that inode */
	unlink_as_vouch_reset();
	ck_assert_uint_eq(unlink_as_held(), 0);
	unlink(p);
	rmdir(r);
	rmdir(dir);
}
END_TEST

static Suite *
unlink_as_suite(void)
{
	Suite *s = suite_create("unlink_as");
	TCase *tc = tcase_create("unlink_as");

	tcase_add_test(tc, test_codec_roundtrip);
	tcase_add_test(tc, test_codec_malformed);
	tcase_add_test(tc, test_route_forward);
	tcase_add_test(tc, test_forward_flood);
	tcase_add_test(tc, test_worker_unlink);
	tcase_add_test(tc, test_worker_unvouched);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(unlink_as_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
