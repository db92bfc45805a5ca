/*
 * The shared state layer: share modes, delete pending, durable handles,
 * sessions and workers, a full map, worker messages.  Locks, leases and
 * oplocks are check_shm_locks.c.  Cross-process cases use real processes:
 * each child opens the env itself after fork (an LMDB handle is never used
 * across fork).
 */
#include "shm_test.h"
#include "shm/shm_priv.h"
#include <sys/stat.h>

/* Can an open (a2, s2) join an existing (a1, s1)? */
static int
pair(struct shm *s, uint32_t a1, uint32_t s1, uint32_t a2, uint32_t s2)
{
	static uint64_t id = 100;
	struct shm_open_rec o1 = mkopen(++id, a1, s1), o2 = mkopen(++id, a2, s2);
	int rc;

	ck_assert_int_eq(shm_open_insert(s, &F1, &o1, NULL), 0);
	rc = shm_open_insert(s, &F1, &o2, NULL);
	if (rc == 0)
		ck_assert_int_eq(shm_open_remove(s, &F1, o2.persistent_id, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, o1.persistent_id, NULL), 0);
	return rc;
}

START_TEST(test_share_matrix)
{
	struct shm *s = make_env(0);

	ck_assert_int_eq(pair(s, RD, S_R, RD, S_R), 0);
	ck_assert_int_eq(pair(s, RD, S_R, WR, S_R | S_W), -EBUSY);
	ck_assert_int_eq(pair(s, RD, S_R | S_W, WR, S_R | S_W), 0);
	ck_assert_int_eq(pair(s, WR, S_R, RD, S_R), -EBUSY);	/* new denies write */
	ck_assert_int_eq(pair(s, WR, S_R, RD, S_R | S_W), 0);
	ck_assert_int_eq(pair(s, RD, S_R | S_W, DEL, S_ALL), -EBUSY);
	ck_assert_int_eq(pair(s, RD, S_ALL, DEL, S_ALL), 0);
	ck_assert_int_eq(pair(s, DEL, S_ALL, RD, S_R | S_W), -EBUSY);
	ck_assert_int_eq(pair(s, SHM_FILE_APPEND_DATA, S_R, RD, S_R), -EBUSY);
	ck_assert_int_eq(pair(s, SHM_FILE_EXECUTE, S_W, RD, S_ALL), -EBUSY);
	/* Attribute-only opens never conflict, either way round. */
	ck_assert_int_eq(pair(s, RD | WR | DEL, 0, ATTR, 0), 0);
	ck_assert_int_eq(pair(s, ATTR, 0, RD | WR | DEL, 0), 0);
	ck_assert_int_eq(pair(s, ATTR | 0x100000, 0, ATTR, 0), 0);	/* SYNCHRONIZE */
	drop_env(s);
}
END_TEST

/*
 * An overwrite meets the share modes as a writer but is kept as what it
 * asked (check_access; smb2.acls.OVERWRITE_READ_ONLY_FILE): after a read
 * open sharing read only, a read-only SUPERSEDE is refused; a read-only
 * overwrite granted next to read sharers leaves later readers in.
 */
START_TEST(test_overwrite_share_check)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(21, RD, S_R), b = mkopen(22, RD, S_R);
	struct shm_open_rec c = mkopen(23, RD, S_R);
	struct shm_open_rec got;

	b.check_access = SHM_FILE_WRITE_DATA;
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), -EBUSY);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	/* alone it is granted, and kept as a reader */
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), 0);
	ck_assert_int_eq(shm_open_get(s, &F1, b.persistent_id, &got), 0);
	ck_assert_uint_eq(got.access, RD);
	ck_assert_int_eq(shm_open_insert(s, &F1, &c, NULL), 0);
	drop_env(s);
}
END_TEST

START_TEST(test_conflict_details)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(11, RD | WR, 0), b = mkopen(12, RD, S_ALL);
	struct shm_open_conflict cf;
	int n;

	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	/* Another file is independent. */
	ck_assert_int_eq(shm_open_insert(s, &F2, &b, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, &cf), -EBUSY);
	ck_assert_uint_eq(cf.persistent_id, 11);
	ck_assert_int_eq(cf.pid, getpid());
	ck_assert_uint_eq(cf.access, RD | WR);
	ck_assert_uint_eq(cf.share_access, 0);
	/* The same persistent id twice is refused. */
	ck_assert_int_eq(shm_open_insert(s, &F2, &b, NULL), -EEXIST);
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 99, NULL), -ENOENT);
	drop_env(s);
}
END_TEST

START_TEST(test_delete_pending)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(21, RD | DEL, S_ALL), b = mkopen(22, RD, S_ALL);
	struct shm_open_rec c = mkopen(23, RD, S_ALL);
	struct shm_close_result cr;
	int on;

	a.create_options = SHM_FILE_DELETE_ON_CLOSE;
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 22, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 21, &cr), 0);
	ck_assert_int_eq(cr.last_close, 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 22, &on), 0);
	ck_assert_int_eq(on, 1);
	/* A new open of a delete-pending name fails. */
	ck_assert_int_eq(shm_open_insert(s, &F1, &c, NULL), -EIDRM);
	ck_assert_int_eq(shm_open_remove(s, &F1, 22, &cr), 0);
	ck_assert_int_eq(cr.last_close, 1);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_uint_eq(cr.delete_uid, geteuid());
	/* Set and cleared explicitly (SET_INFO disposition). */
	ck_assert_int_eq(shm_open_insert(s, &F1, &c, NULL), 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 23, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 23, 1), 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 23, &on), 0);
	ck_assert_int_eq(on, 1);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 23, 0), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 99, 1), -ENOENT);
	ck_assert_int_eq(shm_open_remove(s, &F1, 23, &cr), 0);
	ck_assert_int_eq(cr.last_close, 1);
	ck_assert_int_eq(cr.delete_file, 0);
	drop_env(s);
}
END_TEST

/*
 * Two hard links of one file (two names, one file id): delete pending is
 * the name's.  The Linux client's case: ul1 open, ul2 deleted, ul1 closed
 * last -- ul2 goes at its own close, ul1 never.
 */
START_TEST(test_delete_pending_links)
{
	struct shm *s = make_env(0);
	struct shm_open_rec l1 = mkopen(31, RD, S_ALL);
	struct shm_open_rec l2 = mkopen(32, RD | DEL, S_ALL);
	struct shm_open_rec l1b = mkopen(33, RD, S_ALL);
	struct shm_open_rec l2b = mkopen(34, RD, S_ALL);
	struct shm_open_rec l1c = mkopen(35, RD | DEL, S_ALL);
	struct shm_open_rec l3 = mkopen(36, RD, S_ALL);
	struct shm_close_result cr;
	int on;

	l1.link = l1b.link = l1c.link = 0x1111;
	l2.link = l2b.link = 0x2222;
	l3.link = 0x3333;
	l2.create_options = SHM_FILE_DELETE_ON_CLOSE;
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l2, NULL), 0);
	/* ul2's close: no other open of ul2, so ul2 goes now */
	ck_assert_int_eq(shm_open_remove(s, &F1, 32, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	/* ul1 is not delete pending and opens as before */
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 31, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1b, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 33, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 31, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(cr.last_close, 1);

	/* ul2 held open by another handle: pending for ul2 only */
	l2.create_options = 0;
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l2, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l2b, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 32, 1), 0);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 34, &on), 0);
	ck_assert_int_eq(on, 1);
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 31, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1b, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 33, &cr), 0);
	/* a new open of ul2 meets the pending delete */
	l2.persistent_id = 37;
	ck_assert_int_eq(shm_open_insert(s, &F1, &l2, NULL), -EIDRM);
	ck_assert_int_eq(shm_open_remove(s, &F1, 32, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);	/* 34 still has ul2 */
	/* ul1's close is not ul2's: nothing to delete */
	ck_assert_int_eq(shm_open_remove(s, &F1, 31, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 34, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 1);

	/* Both names pending at once, each goes at its own last close. */
	l2.persistent_id = 32;
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1c, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l2, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l3, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 35, 1), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 32, 1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 32, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 35, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 36, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);

	/* A rename moves the name's opens and its pending delete along. */
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1b, NULL), 0);
	ck_assert_int_eq(shm_open_relink(s, &F1, 0x1111, 0x4444, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 31, 1), 0);
	l1c.link = 0x4444;
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1c, NULL), -EIDRM);
	l1c.link = 0x1111;	/* a new file's name, the old spelling */
	ck_assert_int_eq(shm_open_insert(s, &F1, &l1c, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 31, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 35, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 33, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 1);
	drop_env(s);
}
END_TEST

/* A named stream of F1, keyed the way worker/state.c keys one. */
static const struct shm_file_id F1S = { 0x801 | 0x5a5a00000000ull | 1ull << 63,
    0x1234 };

static struct shm_open_rec
mkstream(uint64_t id, uint32_t access, uint32_t share)
{
	struct shm_open_rec r = mkopen(id, access, share);

	r.has_base = 1;
	r.stream_base = F1;
	return r;
}

START_TEST(test_stream_share_delete)
{
	struct shm *s = make_env(0);
	struct shm_open_rec st = mkstream(31, RD | WR, S_R | S_W);
	struct shm_open_rec del = mkopen(32, DEL, S_ALL), rd = mkopen(33, RD, S_ALL);
	struct shm_open_conflict cf;
	struct shm_close_result cr;

	/* a stream open without FILE_SHARE_DELETE: no DELETE open of F1 */
	ck_assert_int_eq(shm_open_insert(s, &F1S, &st, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &del, &cf), -EBUSY);
	ck_assert_uint_eq(cf.persistent_id, 31);
	ck_assert_uint_eq(cf.share_access, S_R | S_W);
	/* ... other opens of F1 are not its business */
	ck_assert_int_eq(shm_open_insert(s, &F1, &rd, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 33, NULL), 0);
	ck_assert_int_eq(shm_open_remove_stream(s, &F1S, &F1, 31, &cr), 0);
	ck_assert_int_eq(cr.delete_base, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &del, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 32, NULL), 0);

	/* one that shares delete: F1 goes delete pending behind it */
	st = mkstream(34, RD | WR, S_ALL);
	del = mkopen(35, DEL, S_ALL);
	del.create_options = SHM_FILE_DELETE_ON_CLOSE;
	ck_assert_int_eq(shm_open_insert(s, &F1S, &st, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &del, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 35, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);	/* not yet: a stream is open */
	ck_assert_int_eq(cr.last_close, 0);
	rd = mkopen(36, ATTR, S_ALL);
	ck_assert_int_eq(shm_open_insert(s, &F1, &rd, NULL), -EIDRM);
	st = mkstream(37, RD, S_ALL);
	ck_assert_int_eq(shm_open_insert(s, &F1S, &st, &cf), -EIDRM);
	ck_assert_int_eq(cf.delete_pending, 1);
	ck_assert_int_eq(shm_open_remove_stream(s, &F1S, &F1, 34, &cr), 0);
	ck_assert_int_eq(cr.delete_base, 1);	/* the last one: unlink F1 */
	ck_assert_int_eq(shm_open_insert(s, &F1, &rd, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 36, NULL), 0);

	/*
	 * A stream open gone without its close (a purged worker's): its
	 * copy no longer counts, and F1 left delete pending for it is a
	 * file like any other again.
	 */
	st = mkstream(38, RD | WR, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1S, &st, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1S, 38, NULL), 0);
	del = mkopen(39, DEL, S_ALL);
	ck_assert_int_eq(shm_open_insert(s, &F1, &del, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 39, NULL), 0);
	drop_env(s);
}
END_TEST

START_TEST(test_share_check_client)
{
	struct shm *s = make_env(0);
	struct shm_open_rec d = mkopen(41, RD | DEL, S_ALL);

	memset(d.client_guid, 0xa1, sizeof(d.client_guid));
	ck_assert_int_eq(shm_open_insert(s, &F1, &d, NULL), 0);
	/* a would-be WRITE open sharing read|write meets the DELETE open,
	 * whichever client holds it; nothing is inserted either way */
	ck_assert_int_eq(shm_open_share_check(s, &F1, WR, S_R | S_W, NULL),
	    -EBUSY);
	ck_assert_int_eq(shm_open_share_check(s, &F1, WR, S_ALL, NULL), 0);
	ck_assert_int_eq(shm_open_share_check(s, &F2, WR, 0, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, NULL), 0);
	drop_env(s);
}
END_TEST

START_TEST(test_write_txns_per_pair)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(0, RD | WR, S_R);
	unsigned long before;

	ck_assert_int_eq(shm_id_alloc(s, &a.persistent_id), 0);
	ck_assert_uint_ne(a.persistent_id, 0);
	before = shm_write_count(s);
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_brlock_check(s, &F1,
	    &(struct shm_brlock_owner){ getpid(), a.persistent_id }, 0, 100, 1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	ck_assert_uint_eq(shm_write_count(s) - before, 2);
	drop_env(s);
}
END_TEST

/*
 * The writer lock's hold meter: the insert counts as CREATE, the close as
 * CLOSE, a withdrawal and anything else as OTHER, aborted transactions
 * (a sharing violation) too, each with a hold and a wait.
 */
START_TEST(test_hold_meter)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(0, RD | WR, 0), b = mkopen(0, RD, S_ALL);
	struct shm_hold h0[SHM_TXN_KINDS], h[SHM_TXN_KINDS];

	ck_assert_int_eq(shm_id_alloc(s, &a.persistent_id), 0);
	ck_assert_int_eq(shm_id_alloc(s, &b.persistent_id), 0);
	shm_hold_stats(s, h0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), -EBUSY);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &b, NULL), 0);
	ck_assert_int_eq(shm_open_withdraw(s, &F1, NULL, b.persistent_id), 0);
	shm_hold_stats(s, h);
	ck_assert_uint_eq(h[SHM_TXN_CREATE].txns - h0[SHM_TXN_CREATE].txns, 3);
	ck_assert_uint_eq(h[SHM_TXN_CLOSE].txns - h0[SHM_TXN_CLOSE].txns, 1);
	ck_assert_uint_eq(h[SHM_TXN_OTHER].txns - h0[SHM_TXN_OTHER].txns, 1);
	ck_assert_uint_gt(h[SHM_TXN_CREATE].hold_ns, h0[SHM_TXN_CREATE].hold_ns);
	ck_assert_uint_gt(h[SHM_TXN_CREATE].wait_ns, h0[SHM_TXN_CREATE].wait_ns);
	ck_assert_uint_gt(h[SHM_TXN_CLOSE].hold_ns, h0[SHM_TXN_CLOSE].hold_ns);
	ck_assert_uint_gt(h[SHM_TXN_OTHER].hold_ns, h0[SHM_TXN_OTHER].hold_ns);
	drop_env(s);
}
END_TEST

/*
 * A close searches the durable database only for a durable open; the
 * durable record of one still goes with it.
 */
START_TEST(test_close_durable_record)
{
	struct shm *s = make_env(0);
	struct shm_open_rec a = mkopen(0, RD, S_ALL);
	struct shm_durable_rec d, out;

	ck_assert_int_eq(shm_id_alloc(s, &a.persistent_id), 0);
	memset(&d, 0, sizeof(d));
	strcpy(d.path, "dir/f");
	strcpy(d.share, "share");
	strcpy(d.user, "alice");
	d.timeout_ms = 60000;
	ck_assert_int_eq(shm_open_insert_ex(s, &F1, &a, &d, NULL, NULL), 0);
	ck_assert_int_eq(shm_durable_get(s, a.persistent_id, &out), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	ck_assert_int_eq(shm_durable_get(s, a.persistent_id, &out), -ENOENT);
	/* a record put afterwards (shm_durable_put) goes with its open too */
	ck_assert_int_eq(shm_id_alloc(s, &a.persistent_id), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &a, NULL), 0);
	d.persistent_id = a.persistent_id;
	d.fid = F1;
	ck_assert_int_eq(shm_durable_put(s, &d), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, a.persistent_id, NULL), 0);
	ck_assert_int_eq(shm_durable_get(s, a.persistent_id, &out), -ENOENT);
	drop_env(s);
}
END_TEST

/* Holds a deny-all open of F1 until killed. */
static void
kid_deny_all(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(1000 + getpid(), RD | WR | DEL, 0);

	kid_say(k->from[1], shm_open_insert(s, &F1, &o, NULL));
	for (;;)
		kid_wait(k->to[0]);
}

/* Tries a shared read open of F1 and reports. */
static void
kid_try_read(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(5000 + getpid(), RD, S_ALL);

	kid_say(k->from[1], shm_open_insert(s, &F1, &o, NULL));
	shm_detach(s);
}

START_TEST(test_two_process_sharing)
{
	struct shm *s = make_env(0);
	struct kid a, b, c;
	struct shm_purge_result pr;
	int st;

	kid_start(&a, kid_deny_all);
	ck_assert_int_eq(kid_read(&a), 0);
	kid_start(&b, kid_try_read);
	ck_assert_int_eq(kid_read(&b), -EBUSY);
	kid_exit(&b);
	/* The holder dies without closing: the master purges it. */
	kill(a.pid, SIGKILL);
	st = kid_exit(&a);
	ck_assert(WIFSIGNALED(st));
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_uint_eq(pr.durable, 0);
	kid_start(&c, kid_try_read);
	ck_assert_int_eq(kid_read(&c), 0);
	kid_exit(&c);
	drop_env(s);
}
END_TEST

/*
 * A reader that dies keeps its LMDB reader slot (a worker keeps its read
 * transaction reset between requests, not ended): the master's purge runs
 * mdb_reader_check, so a dead worker's slot is free for the next one.
 */
static void
kid_reader(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o;

	/* any read takes and keeps a slot; F1 has no open here */
	kid_say(k->from[1], shm_open_get(s, &F1, 1, &o));
	for (;;)
		kid_wait(k->to[0]);
}

START_TEST(test_reader_check_dead_child)
{
	struct shm *s = make_env(0);
	struct shm_purge_result pr;
	struct kid a, b;

	/* reader_check alone finds the slot of a killed reader */
	kid_start(&a, kid_reader);
	ck_assert_int_eq(kid_read(&a), -ENOENT);
	ck_assert_int_eq(shm_reader_check(s), 0);	/* alive: kept */
	kill(a.pid, SIGKILL);
	ck_assert(WIFSIGNALED(kid_exit(&a)));
	ck_assert_int_eq(shm_reader_check(s), 1);
	ck_assert_int_eq(shm_reader_check(s), 0);
	/* and the purge of a dead worker clears its slot itself */
	kid_start(&b, kid_reader);
	ck_assert_int_eq(kid_read(&b), -ENOENT);
	kill(b.pid, SIGKILL);
	ck_assert(WIFSIGNALED(kid_exit(&b)));
	ck_assert_int_eq(shm_purge_worker(s, b.pid, &pr), 0);
	ck_assert_int_eq(shm_reader_check(s), 0);
	drop_env(s);
}
END_TEST

/* ---- durable handles ---- */

static void
kid_durable(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(9001, RD | WR, S_R);
	struct shm_brlock_owner ow = { getpid(), 9001 };
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	int rc;

	snprintf(d->path, sizeof(d->path), "dir/file.txt");
	snprintf(d->share, sizeof(d->share), "data");
	snprintf(d->user, sizeof(d->user), "alice");
	memset(d->client_guid, 0xc1, SHM_GUID_LEN);
	memset(d->create_guid, 0xc2, SHM_GUID_LEN);
	d->flags = SHM_DURABLE_V2;
	d->timeout_ms = 60000;
	d->access = o.access;
	memcpy(o.client_guid, d->client_guid, SHM_GUID_LEN);
	rc = shm_open_insert_ex(s, &F1, &o, d, NULL, NULL);
	if (rc == 0)
		rc = shm_brlock_lock(s, &F1, &ow, 0, 10, SHM_BRL_EXCLUSIVE);
	kid_say(k->from[1], rc);
	for (;;)
		kid_wait(k->to[0]);
}

START_TEST(test_durable)
{
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_durable_claim cl;
	struct shm_purge_result pr;
	struct shm_open_rec r, w = mkopen(9002, WR, S_ALL);
	struct shm_brlock_owner me = { getpid(), 9002 };
	struct shm_pids wake;
	uint8_t seq[SHM_DURABLE_LOCK_SEQ];
	uint64_t t0;
	unsigned n;
	struct kid a;

	kid_start(&a, kid_durable);
	ck_assert_int_eq(kid_read(&a), 0);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 0);
	ck_assert_uint_eq(pr.durable, 1);
	ck_assert_uint_eq(pr.locks, 0);
	t0 = shm_now_ms();
	/* Kept: share mode, locks and the record, owned by nobody. */
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(r.pid, 0);
	ck_assert(r.flags & SHM_OPEN_DISCONNECTED);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), -EBUSY);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 0), -EAGAIN);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	ck_assert_str_eq(d->path, "dir/file.txt");
	ck_assert_str_eq(d->share, "data");
	ck_assert(d->flags & SHM_DURABLE_DISCONNECTED);
	ck_assert_uint_eq(d->fid.ino, F1.ino);

	/* Reclaim: wrong create GUID, wrong user, v1 for a v2 handle. */
	memset(&cl, 0, sizeof(cl));
	cl.user = "alice";
	cl.v2 = 1;
	cl.pid = getpid();
	cl.session_id = 77;
	memset(cl.client_guid, 0xc1, SHM_GUID_LEN);
	memset(cl.create_guid, 0xee, SHM_GUID_LEN);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -ENOENT);
	ck_assert_int_eq(shm_durable_claim_match(d, &cl), -ENOENT);
	memset(cl.create_guid, 0xc2, SHM_GUID_LEN);
	cl.user = "bob";
	/* the worker's check before it reopens the file says the same */
	ck_assert_int_eq(shm_durable_claim_match(d, &cl), -EACCES);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -EACCES);
	cl.user = NULL;
	ck_assert_int_eq(shm_durable_claim_match(d, &cl), -EACCES);
	cl.user = "alice";
	cl.v2 = 0;
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -ENOENT);
	ck_assert_int_eq(shm_durable_claim_match(d, &cl), -ENOENT);
	cl.v2 = 1;
	ck_assert_int_eq(shm_durable_claim_match(d, &cl), 0);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0 + 60000, d), -ENOENT);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), 0);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, t0, d), -EBUSY);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(r.pid, getpid());
	ck_assert_uint_eq(r.session_id, 77);
	/* The locks moved with it: the new owner may write its range. */
	ck_assert_int_eq(shm_brlock_check(s, &F1,
	    &(struct shm_brlock_owner){ getpid(), 9001 }, 0, 10, 1), 0);

	/*
	 * Disconnect again, with the open's LockSequenceArray and as a
	 * resilient open: both kept in the record, then expire.
	 */
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	d->flags |= SHM_DURABLE_RESILIENT;
	ck_assert_int_eq(shm_durable_put(s, d), 0);
	memset(seq, 0, sizeof(seq));
	seq[0] = 2;
	seq[63] = 16;
	ck_assert_int_eq(shm_durable_disconnect(s, 9001, t0, seq), 0);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	ck_assert_mem_eq(d->lock_seq, seq, sizeof(seq));
	ck_assert_uint_eq(d->flags & (SHM_DURABLE_RESILIENT |
	    SHM_DURABLE_DISCONNECTED), SHM_DURABLE_RESILIENT |
	    SHM_DURABLE_DISCONNECTED);
	ck_assert_int_eq(shm_expire_durable(s, t0 + 59999, &n, &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shm_expire_durable(s, t0 + 60000, &n, &wake), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), -ENOENT);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), -ENOENT);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 1), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), 0);
	free(d);
	drop_env(s);
}
END_TEST

/*
 * A compromised worker may write any durable record: one kept for days
 * (a disconnected resilient open without a lease, which a conflicting
 * open does not close) is expired at the cap, as a worker's own grant.
 */
START_TEST(test_durable_timeout_cap)
{
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_purge_result pr;
	struct shm_open_rec r;
	struct shm_pids wake;
	uint64_t t0;
	unsigned n;
	struct kid a;

	kid_start(&a, kid_durable);
	ck_assert_int_eq(kid_read(&a), 0);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.durable, 1);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	t0 = d->disconnected_at;
	d->flags = SHM_DURABLE_RESILIENT | SHM_DURABLE_DISCONNECTED;
	d->timeout_ms = UINT32_MAX;	/* 49 days */
	ck_assert_int_eq(shm_durable_put(s, d), 0);
	ck_assert_int_eq(shm_expire_durable(s, t0 + SHM_DURABLE_TIMEOUT_CAP_MS
	    - 1, &n, &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(shm_expire_durable(s, t0 + SHM_DURABLE_TIMEOUT_CAP_MS,
	    &n, &wake), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), -ENOENT);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), -ENOENT);
	free(d);
	drop_env(s);
}
END_TEST

/*
 * A durable open's lock sequence entries go into its record in the lock
 * and unlock transactions themselves (struct shm_lock_seq), so a worker
 * killed with -9 leaves them behind with the open: no transaction more,
 * nothing for a refused lock, nothing for an owner without a record.
 */
static void
kid_lock_seq(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mkopen(9101, RD | WR, S_R);
	struct shm_brlock_owner ow = { getpid(), 9101 };
	struct shm_brlock_range r0 = { 0, 10, 1 }, r2 = { 20, 10, 1 },
	    r4 = { 40, 10, 1 };
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	unsigned long before;
	unsigned failed;
	int rc;

	snprintf(d->path, sizeof(d->path), "seq.txt");
	snprintf(d->share, sizeof(d->share), "data");
	snprintf(d->user, sizeof(d->user), "alice");
	d->flags = SHM_DURABLE_RESILIENT;
	d->timeout_ms = 60000;
	rc = shm_open_insert_ex(s, &F1, &o, d, NULL, NULL);
	before = shm_write_count(s);
	if (rc == 0)
		rc = shm_brlock_lock_many_seq(s, &F1, &ow, &r0, 1, 0, &failed,
		    NULL, &(struct shm_lock_seq){ 1, 2 });
	if (rc == 0)
		rc = shm_brlock_lock_many_seq(s, &F1, &ow, &r2, 1, 0, &failed,
		    NULL, &(struct shm_lock_seq){ 2, 4 });
	if (rc == 0)
		rc = shm_brlock_lock_many_seq(s, &F1, &ow, &r4, 1, 0, &failed,
		    NULL, &(struct shm_lock_seq){ 64, 6 });
	if (rc == 0)
		rc = shm_brlock_unlock_seq(s, &F1, &ow, 40, 10, 0, NULL,
		    &(struct shm_lock_seq){ 64, 7 });
	/* one transaction per lock or unlock, as without a sequence */
	if (rc == 0 && shm_write_count(s) - before != 4)
		rc = -1000;
	/* refused (its own exclusive lock): the entry is not written */
	if (rc == 0 && shm_brlock_lock_many_seq(s, &F1, &ow, &r0, 1, 0,
	    &failed, NULL, &(struct shm_lock_seq){ 3, 9 }) != -EAGAIN)
		rc = -1001;
	/* nor by an unlock of nothing */
	if (rc == 0 && shm_brlock_unlock_seq(s, &F1, &ow, 40, 10, 0, NULL,
	    &(struct shm_lock_seq){ 3, 9 }) != -ENOENT)
		rc = -1002;
	/* an open with no durable record: the lock, nothing recorded */
	if (rc == 0)
		rc = shm_brlock_lock_many_seq(s, &F1,
		    &(struct shm_brlock_owner){ getpid(), 9102 }, &r4, 1, 0,
		    &failed, NULL, &(struct shm_lock_seq){ 1, 2 });
	kid_say(k->from[1], rc);
	for (;;)
		kid_wait(k->to[0]);
}

START_TEST(test_durable_lock_seq)
{
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_purge_result pr;
	uint8_t want[SHM_DURABLE_LOCK_SEQ];
	struct kid a;

	kid_start(&a, kid_lock_seq);
	ck_assert_int_eq(kid_read(&a), 0);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.durable, 1);
	ck_assert_int_eq(shm_durable_get(s, 9101, d), 0);
	ck_assert(d->flags & SHM_DURABLE_DISCONNECTED);
	memset(want, 0, sizeof(want));
	want[0] = 2;
	want[1] = 4;
	want[63] = 7;
	ck_assert_mem_eq(d->lock_seq, want, sizeof(want));
	/* the record is otherwise as it was written */
	ck_assert_str_eq(d->path, "seq.txt");
	ck_assert_uint_eq(d->timeout_ms, 60000);
	ck_assert_int_eq(shm_durable_get(s, 9102, d), -ENOENT);
	free(d);
	drop_env(s);
}
END_TEST

/* ---- sessions, workers, iteration ---- */

static int
count_session(const struct shm_session_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int
count_open(const struct shm_file_id *f, const struct shm_open_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

START_TEST(test_sessions_workers)
{
	struct shm *s = make_env(0);
	struct shm_session_rec r, g;
	struct shm_worker_rec w, wg;
	struct shm_purge_result pr;
	struct shm_open_rec o = mkopen(61, RD, S_ALL);
	int n = 0;

	memset(&r, 0, sizeof(r));
	r.session_id = 0x1000000000000001ull;
	r.pid = 31337;
	r.uid = 1001;
	snprintf(r.user, sizeof(r.user), "alice");
	snprintf(r.client_addr, sizeof(r.client_addr), "127.0.0.1:50000");
	r.dialect = 0x0311;
	r.signing = 1;
	r.encryption = 1;
	r.since = 1700000000;
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	/* Ids are unique: its holder may rewrite it, another process not. */
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	r.pid = 31338;
	ck_assert_int_eq(shm_session_put(s, &r), -EEXIST);
	r.pid = 31337;
	r.session_id = 2;
	r.pid = getpid();
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	ck_assert_int_eq(shm_session_get(s, 0x1000000000000001ull, &g), 0);
	ck_assert_str_eq(g.user, "alice");
	ck_assert_str_eq(g.client_addr, "127.0.0.1:50000");
	ck_assert_uint_eq(g.dialect, 0x0311);
	ck_assert_int_eq(g.pid, 31337);
	ck_assert_int_eq(shm_foreach_session(s, count_session, &n), 0);
	ck_assert_int_eq(n, 2);

	memset(&w, 0, sizeof(w));
	w.pid = 31337;
	w.role = SHM_ROLE_WORKER;
	w.uid = 1001;
	snprintf(w.user, sizeof(w.user), "alice");
	w.nconn = 3;
	ck_assert_int_eq(shm_worker_put(s, &w), 0);
	ck_assert_int_eq(shm_worker_get(s, 31337, &wg), 0);
	ck_assert_uint_eq(wg.nconn, 3);
	o.pid = 31337;
	ck_assert_int_eq(shm_open_insert(s, &F2, &o, NULL), 0);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &n), 0);
	ck_assert_int_eq(n, 1);

	ck_assert_int_eq(shm_purge_worker(s, 31337, &pr), 0);
	ck_assert_uint_eq(pr.sessions, 1);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_int_eq(shm_session_get(s, 0x1000000000000001ull, &g), -ENOENT);
	ck_assert_int_eq(shm_session_get(s, 2, &g), 0);
	ck_assert_int_eq(shm_worker_get(s, 31337, &wg), -ENOENT);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(shm_session_del(s, 2), 0);
	ck_assert_int_eq(shm_session_del(s, 2), -ENOENT);
	drop_env(s);
}
END_TEST

/* ---- a full map ---- */

START_TEST(test_map_full)
{
	struct shm *s = make_env(256 * 1024), *s2;
	struct shm_session_rec r, g;
	struct shm_open_rec o = mkopen(71, RD, S_ALL);
	uint64_t i, last = 0;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	memset(r.user, 'u', sizeof(r.user) - 1);
	for (i = 1; i < 100000 && rc == 0; i++) {
		r.session_id = i;
		rc = shm_session_put(s, &r);
		if (rc == 0)
			last = i;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_gt(last, 10);
	/* Nothing half written; what was there is intact and readable. */
	ck_assert_int_eq(shm_session_get(s, last + 1, &g), -ENOENT);
	ck_assert_int_eq(shm_session_get(s, last, &g), 0);
	ck_assert_str_eq(g.user, r.user);
	/* Freeing room makes the env writable again. */
	for (i = 1; i <= 20; i++)
		ck_assert_int_eq(shm_session_del(s, i), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 71, NULL), 0);
	/* And another process can still open it. */
	ck_assert_int_eq(shm_attach(tdir, 256 * 1024, 0, 0, &s2), 0);
	ck_assert_int_eq(shm_session_get(s2, last, &g), 0);
	shm_detach(s2);
	drop_env(s);
}
END_TEST

/*
 * The map's size only grows, in every process (issue 20): a process that
 * attaches later with a smaller `state map size` maps the file's size and
 * never truncates it under the others; a growth made by one process is
 * adopted by the others when they need it, and writing past the old end
 * is no SIGBUS anywhere.  Measured env by env (sessions fill the main
 * env; with SHM_TEST_PARTS_LOG2 the data envs' files are checked too):
 * each env's file holds at least what that env maps, and no file ever
 * gets smaller.
 */
static off_t
env_file_size(unsigned idx)
{
	char path[PATH_MAX];
	struct stat st;

	ck_assert_int_eq(shm_env_path(tdir, idx, path, sizeof(path)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

static size_t
env_map_size(struct shm *s, unsigned idx)
{
	MDB_envinfo info;

	ck_assert_int_eq(mdb_env_info(s->e[idx].env, &info), 0);
	return info.me_mapsize;
}

/* Every env's file holds its map and is no smaller than sizes[] said. */
static void
files_hold_maps(struct shm *s, off_t *sizes)
{
	for (unsigned i = 0; i < s->nenv; i++) {
		off_t now = env_file_size(i);

		ck_assert_int_ge(now, (off_t)env_map_size(s, i));
		ck_assert_int_ge(now, sizes[i]);
		sizes[i] = now;
	}
}

START_TEST(test_map_never_shrinks)
{
	struct shm *s = make_env(256 * 1024), *s2;
	struct shm_session_rec r, g;
	off_t sizes[SHM_ENVS_MAX] = { 0 };
	uint64_t i, last = 0;
	size_t grown;
	pid_t pid;
	int rc = 0, st;

	files_hold_maps(s, sizes);
	memset(&r, 0, sizeof(r));
	memset(r.user, 'u', sizeof(r.user) - 1);
	for (i = 1; i < 100000 && rc == 0; i++) {
		r.session_id = i;
		if ((rc = shm_session_put(s, &r)) == 0)
			last = i;
	}
	ck_assert_int_eq(rc, -ENOSPC);
	/* The one place the map grows: the main env's, which was full. */
	ck_assert_int_eq(shm_grow(s), 0);
	grown = env_map_size(s, 0);
	ck_assert_uint_gt(grown, 256 * 1024);
	for (unsigned e = 1; e < s->nenv; e++)
		ck_assert_uint_eq(env_map_size(s, e), 256 * 1024);
	files_hold_maps(s, sizes);
	ck_assert_int_ge(env_file_size(0), (off_t)grown);
	r.session_id = last + 1;
	ck_assert_int_eq(shm_session_put(s, &r), 0);

	/* A later process with the config's smaller size: maps the file's. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_attach(tdir, 256 * 1024, 0, 0, &s2) != 0 ||
		    env_map_size(s2, 0) < grown || shm_session_get(s2, last + 1, &g) != 0)
			_exit(1);
		/* It grows the map in turn and writes past the old end. */
		if (shm_grow(s2) != 0)
			_exit(2);
		rc = 0;
		for (i = last + 2; i < 200000 && rc == 0; i++) {
			r.session_id = i;
			rc = shm_session_put(s2, &r);
		}
		if (rc != -ENOSPC || shm_grow(s2) != 0)
			_exit(3);
		r.session_id = 999999;
		_exit(shm_session_put(s2, &r) == 0 ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* No file went below what this process maps or what it was... */
	files_hold_maps(s, sizes);
	ck_assert_int_ge(env_file_size(0), (off_t)grown);
	/* ...and this process adopts the child's growth when it needs it. */
	ck_assert_int_eq(shm_session_get(s, 999999, &g), 0);
	r.session_id = 1000000;
	ck_assert_int_eq(shm_session_put(s, &r), 0);
	ck_assert_uint_gt(env_map_size(s, 0), grown);
	ck_assert_int_eq((off_t)env_map_size(s, 0), env_file_size(0));
	files_hold_maps(s, sizes);
	/* A second attach in a new process again maps the whole files. */
	ck_assert_int_eq(shm_attach(tdir, 256 * 1024, 0, 0, &s2), 0);
	ck_assert_uint_eq(shm_map_size(s2), shm_map_size(s));
	for (unsigned e = 0; e < s->nenv; e++)
		ck_assert_uint_eq(env_map_size(s2, e), env_map_size(s, e));
	shm_detach(s2);
	drop_env(s);
}
END_TEST

/* ---- worker messages ---- */

/* ---- the cheap paths: one value per file, shared hint counters ---- */

static int
count_f1(const struct shm_file_id *fid, const struct shm_open_rec *r, void *arg)
{
	if (fid->dev == F1.dev && fid->ino == F1.ino)
		(*(int *)arg)++;
	return 0;
}

/* More opens of one file than the handle's preallocated scratch holds. */
START_TEST(test_many_opens_one_file)
{
	struct shm *s = make_env(0);
	struct shm_close_result cr;
	struct shm_open_rec o, g;
	const int N = 150;
	int i, n = 0;

	for (i = 0; i < N; i++) {
		o = mkopen(1000 + i, RD | WR, S_ALL);
		ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	}
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, N);
	n = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_f1, &n), 0);
	ck_assert_int_eq(n, N);
	ck_assert_int_eq(shm_open_get(s, &F1, 1000 + N / 2, &g), 0);
	ck_assert_uint_eq(g.access, RD | WR);
	ck_assert_int_eq(g.pid, getpid());
	/* A deny-write open now conflicts with all of them. */
	o = mkopen(5000, RD, S_R);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), -EBUSY);
	/* Middle, first, last...: each close keeps the others. */
	for (i = 0; i < N; i++) {
		uint64_t id = 1000 + (uint64_t)((i * 37) % N);

		ck_assert_int_eq(shm_open_remove(s, &F1, id, &cr), 0);
		ck_assert_int_eq(cr.last_close, i == N - 1);
		ck_assert_int_eq(shm_open_get(s, &F1, id, &g), -ENOENT);
	}
	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &o, NULL), 0);
	drop_env(s);
}
END_TEST

/* A handle inherited across fork is refused (no getpid() per transaction). */
START_TEST(test_handle_after_fork)
{
	struct shm *s = make_env(0);
	pid_t p;
	int st, n;

	ck_assert_int_eq(shm_open_count(s, &F1, &n), 0);
	p = fork();
	ck_assert_int_ne(p, -1);
	if (p == 0)
		_exit(shm_open_count(s, &F1, &n) == -EINVAL ? 0 : 1);
	ck_assert_int_eq(waitpid(p, &st, 0), p);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(shm_self(s), getpid());
	drop_env(s);
}
END_TEST

START_TEST(test_wmsg)
{
	struct shm *s = make_env(0);
	struct shm_wmsg *a, *b;
	struct shm_wmsg_msg m, got;
	struct sockaddr_un sa;
	int fd;

	ck_assert_int_eq(shm_wmsg_prepare(tdir, 111111, geteuid()), 0);
	ck_assert_int_eq(shm_wmsg_prepare(tdir, 222222, geteuid()), 0);
	ck_assert_int_eq(shm_wmsg_open(tdir, 111111, &a), 0);
	ck_assert_int_eq(shm_wmsg_open(tdir, 222222, &b), 0);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), -EAGAIN);
	memset(&m, 0, sizeof(m));
	m.type = SHM_WMSG_NOTIFY;
	m.fid = F2;
	m.action = 1;
	m.filter = 0x3;
	snprintf(m.name, sizeof(m.name), "caf\xc3\xa9.txt");
	ck_assert_int_eq(shm_wmsg_send(a, 222222, &m), 0);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), 0);
	ck_assert_int_eq(got.type, SHM_WMSG_NOTIFY);
	ck_assert_int_eq(got.from, getpid());
	ck_assert_uint_eq(got.fid.ino, F2.ino);
	ck_assert_str_eq(got.name, m.name);
	ck_assert_uint_eq(got.filter, 3);
	m.type = SHM_WMSG_BREAK;
	m.is_lease = 1;
	memset(m.lease_key, 0x5a, SHM_GUID_LEN);
	m.level = SHM_LEASE_R;
	m.epoch = 3;
	ck_assert_int_eq(shm_wmsg_send(b, 111111, &m), 0);
	ck_assert_int_eq(shm_wmsg_recv(a, &got), 0);
	ck_assert_int_eq(got.is_lease, 1);
	ck_assert_uint_eq(got.lease_key[15], 0x5a);
	ck_assert_uint_eq(got.epoch, 3);
	/* A peer that does not exist. */
	ck_assert_int_eq(shm_wmsg_send(a, 333333, &m), -ENOENT);
	/* Garbage is refused, not half decoded. */
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/msg/222222/s", tdir);
	ck_assert_int_eq(sendto(fd, "Wxyz", 4, 0, (struct sockaddr *)&sa, sizeof(sa)), 4);
	ck_assert_int_eq(shm_wmsg_recv(b, &got), -EBADMSG);
	close(fd);
	shm_wmsg_close(a);
	shm_wmsg_close(b);
	drop_env(s);
}
END_TEST

START_TEST(test_attach_without_create)
{
	struct shm *s;

	snprintf(tdir, sizeof(tdir), "/tmp/check_shm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	ck_assert_int_ne(shm_attach(tdir, 0, 0, 0, &s), 0);
	ck_assert_ptr_null(s);
	rm_tree(tdir);
}
END_TEST

/* Each test runs twice: over one env, then over 8 data envs. */
static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, test_share_matrix);
	tcase_add_test(tc, test_conflict_details);
	tcase_add_test(tc, test_overwrite_share_check);
	tcase_add_test(tc, test_delete_pending);
	tcase_add_test(tc, test_delete_pending_links);
	tcase_add_test(tc, test_stream_share_delete);
	tcase_add_test(tc, test_share_check_client);
	tcase_add_test(tc, test_write_txns_per_pair);
	tcase_add_test(tc, test_hold_meter);
	tcase_add_test(tc, test_close_durable_record);
	tcase_add_test(tc, test_two_process_sharing);
	tcase_add_test(tc, test_reader_check_dead_child);
	tcase_add_test(tc, test_durable);
	tcase_add_test(tc, test_durable_timeout_cap);
	tcase_add_test(tc, test_durable_lock_seq);
	tcase_add_test(tc, test_sessions_workers);
	tcase_add_test(tc, test_map_full);
	tcase_add_test(tc, test_map_never_shrinks);
	tcase_add_test(tc, test_wmsg);
	tcase_add_test(tc, test_attach_without_create);
	tcase_add_test(tc, test_many_opens_one_file);
	tcase_add_test(tc, test_handle_after_fork);
}

int
main(void)
{
	return shm_test_run("shm", add_tests);
}
