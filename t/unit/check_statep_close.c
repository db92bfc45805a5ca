/*
 * The state process's part of an administrator's NetrFileClose and
 * `usmbctl close-file` (worker/statep_close.c, shm_end_durable): which
 * durable records it ends (disconnected ones of that FileId only, never
 * a connected open, a malformed record skipped), what goes with them
 * (open, share mode, locks: as at expiry), and its bound per request.
 */
#include "t/unit/shm_test.h"

#include "shm/shm_priv.h"
#include "worker/pipe_srvsvc.h"
#include "worker/statep_close.h"

static const struct shm_file_id F3 = { 0x801, 0x1236 };

/* A durable open of fid by this process; disconnected if asked. */
static void
put_durable(struct shm *s, const struct shm_file_id *fid, uint64_t id,
    int disconnected)
{
	static struct shm_durable_rec d;
	struct shm_open_rec o = mkopen(id, RD | WR, S_R);

	memset(&d, 0, sizeof(d));
	d.persistent_id = id;
	d.fid = *fid;
	snprintf(d.path, sizeof(d.path), "sheet-%llu.xlsx",
	    (unsigned long long)id);
	snprintf(d.share, sizeof(d.share), "data");
	snprintf(d.user, sizeof(d.user), "bob");
	memset(d.client_guid, 0xc1, SHM_GUID_LEN);
	memset(d.create_guid, 0xc2, SHM_GUID_LEN);
	d.flags = SHM_DURABLE_V2;
	d.timeout_ms = 60000;
	d.access = o.access;
	memcpy(o.client_guid, d.client_guid, SHM_GUID_LEN);
	ck_assert_int_eq(shm_open_insert_ex(s, fid, &o, &d, NULL, NULL), 0);
	if (disconnected)
		ck_assert_int_eq(shm_durable_disconnect(s, id, shm_now_ms(),
		    NULL), 0);
}

/*
 * A persistent id whose FileId is want, for the worker pid pid (the
 * high word): srvsvc_file_id adds the low word to a mix of the pid.
 */
static uint64_t
id_for(uint32_t pid, uint32_t want)
{
	uint64_t hi = (uint64_t)pid << 32;

	return hi | (uint32_t)(want - srvsvc_file_id(hi));
}

START_TEST(test_close_match)
{
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_durable_claim cl;
	struct shm_open_rec w = mkopen(9100, RD | WR, S_ALL), r;
	struct shm_brlock_owner me = { getpid(), 9100 };
	struct shm_brlock_owner ow = { getpid(), 9001 };
	struct shm_pids wake;
	unsigned n = 99;

	put_durable(s, &F1, 9001, 0);
	ck_assert_int_eq(shm_brlock_lock(s, &F1, &ow, 0, 10,
	    SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	d->flags |= SHM_DURABLE_RESILIENT;	/* locks kept at disconnect */
	ck_assert_int_eq(shm_durable_put(s, d), 0);
	ck_assert_int_eq(shm_durable_disconnect(s, 9001, shm_now_ms(), NULL),
	    0);
	put_durable(s, &F2, 9002, 1);
	put_durable(s, &F3, 9003, 0);		/* connected: its worker's */
	/* held: share mode and lock */
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), -EBUSY);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 0), -EAGAIN);

	/* an id nobody has, then the connected open's: nothing ended */
	ck_assert_int_eq(statep_close_file_id(s, srvsvc_file_id(9001) + 7,
	    &n, &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(statep_close_file_id(s, srvsvc_file_id(9003), &n,
	    &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shm_open_get(s, &F3, 9003, &r), 0);
	ck_assert_int_eq(shm_durable_get(s, 9003, d), 0);

	/* 9001's: record, open and lock gone; 9002 untouched */
	ck_assert_int_eq(statep_close_file_id(s, srvsvc_file_id(9001), &n,
	    &wake), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), -ENOENT);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), -ENOENT);
	ck_assert_int_eq(shm_brlock_check(s, &F1, &me, 5, 1, 1), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w, NULL), 0);
	ck_assert_int_eq(shm_durable_get(s, 9002, d), 0);
	ck_assert(d->flags & SHM_DURABLE_DISCONNECTED);

	/* a reconnect of the ended handle finds nothing, as after expiry */
	memset(&cl, 0, sizeof(cl));
	cl.user = "bob";
	cl.v2 = 1;
	cl.pid = getpid();
	memset(cl.client_guid, 0xc1, SHM_GUID_LEN);
	memset(cl.create_guid, 0xc2, SHM_GUID_LEN);
	ck_assert_int_eq(shm_durable_reclaim(s, 9001, &cl, shm_now_ms(), d),
	    -ENOENT);
	/* ...while 9002's still reconnects */
	ck_assert_int_eq(shm_durable_reclaim(s, 9002, &cl, shm_now_ms(), d),
	    0);
	free(d);
	drop_env(s);
}
END_TEST

/*
 * Records any worker could have written: one flagged disconnected whose
 * open is connected (its worker would keep a handle with no record), and
 * malformed values beside a good one.
 */
START_TEST(test_close_hostile)
{
	static const uint8_t junk[][8] = {
		{ 0 }, { 0xff, 1, 2, 3 }, { SHM_REC_V1 },
	};
	struct shm *s = make_env(0);
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_open_rec r;
	struct shm_pids wake;
	unsigned n, i;
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *txn;

	put_durable(s, &F1, 9001, 0);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);
	d->flags |= SHM_DURABLE_DISCONNECTED;
	ck_assert_int_eq(shm_durable_put(s, d), 0);
	ck_assert_int_eq(statep_close_file_id(s, srvsvc_file_id(9001), &n,
	    &wake), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shm_open_get(s, &F1, 9001, &r), 0);
	ck_assert_int_eq(shm_durable_get(s, 9001, d), 0);

	/* malformed values under ids of the same FileId: skipped */
	put_durable(s, &F2, 9002, 1);
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		shm_be64_put(kb, id_for(777 + i, srvsvc_file_id(9002)));
		v.mv_data = (void *)junk[i];
		v.mv_size = i + 1;
		ck_assert_int_eq(shm_wbegin(s, shm_env_fid(s, &F2), &txn), 0);
		ck_assert_int_eq(mdb_put(txn, s->db_durable, &k, &v, 0), 0);
		ck_assert_int_eq(shm_wcommit(s, txn), 0);
	}
	ck_assert_int_eq(statep_close_file_id(s, srvsvc_file_id(9002), &n,
	    &wake), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_durable_get(s, 9002, d), -ENOENT);
	free(d);
	drop_env(s);
}
END_TEST

/* At most SHM_DURABLE_END_MAX a request; the next request ends the rest. */
START_TEST(test_close_bound)
{
	struct shm *s = make_env(0);
	struct shm_pids wake;
	uint32_t want = 0x5eed1234;
	unsigned n, i;

	for (i = 0; i < SHM_DURABLE_END_MAX + 4; i++) {
		struct shm_file_id fid = { 0x801, 0x2000 + i };

		put_durable(s, &fid, id_for(1000 + i, want), 1);
	}
	ck_assert_int_eq(statep_close_file_id(s, want, &n, &wake), 0);
	ck_assert_uint_eq(n, SHM_DURABLE_END_MAX);
	ck_assert_int_eq(statep_close_file_id(s, want, &n, &wake), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(statep_close_file_id(s, want, &n, &wake), 0);
	ck_assert_uint_eq(n, 0);
	drop_env(s);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, test_close_match);
	tcase_add_test(tc, test_close_hostile);
	tcase_add_test(tc, test_close_bound);
}

int
main(void)
{
	return shm_test_run("statep_close", add_tests);
}
