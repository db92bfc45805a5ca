/*
 * The state split into data envs (`state partitions`): where each record
 * lives, the lookups without a file id that read every data env, the
 * purge of every env, and which env's writer lock a CREATE and a CLOSE
 * take.  The other shm suites run over one env by default, and over
 * several with SHM_TEST_PARTS_LOG2 (shm_test.h).
 */
#include "shm_test.h"
#include "shm/shm_priv.h"

#define LOG2	3	/* 8 data envs, the default */

/* A file id whose data env is not the one of any id in avoid[0..n). */
static struct shm_file_id
fid_elsewhere(struct shm *s, const struct shm_file_id *avoid, unsigned n)
{
	struct shm_file_id f = { 0x801, 0x5000 };
	unsigned i;

	for (;; f.ino++) {
		for (i = 0; i < n; i++)
			if (shm_env_fid(s, &f) == shm_env_fid(s, &avoid[i]))
				break;
		if (i == n)
			return f;
	}
}

/* The data env holding a file id's opens value, by a read of each. */
static int
env_holding_opens(struct shm *s, const struct shm_file_id *fid)
{
	uint8_t key[SHM_FID_KEY_LEN];
	MDB_val k = { sizeof(key), key }, v;
	MDB_txn *txn;
	int found = -1;

	shm_fid_key(key, fid);
	for (unsigned i = 0; i < s->nenv; i++) {
		ck_assert_int_eq(shm_rbegin(s, &s->e[i], &txn), 0);
		if (mdb_get(txn, s->db_opens, &k, &v) == 0) {
			ck_assert_int_eq(found, -1);	/* in one env only */
			found = (int)i;
		}
		shm_rend(s, txn);
	}
	return found;
}

START_TEST(test_envs_and_files)
{
	struct shm *s = make_env_parts(0, LOG2);
	char p[256];
	uint64_t mark;

	ck_assert_uint_eq(shm_env_count(s), 9);
	for (unsigned i = 0; i < 9; i++) {
		ck_assert_int_eq(shm_writer_holder(s, i, &mark), 0);
		ck_assert_uint_eq(mark, 0);
	}
	ck_assert_int_eq(shm_writer_holder(s, 9, &mark), -ENOENT);
	snprintf(p, sizeof(p), "%s/state-7.mdb", tdir);
	ck_assert_int_eq(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/state-8.mdb", tdir);
	ck_assert_int_ne(access(p, F_OK), 0);
	ck_assert_int_eq(shm_check_names(s), 0);
	/* each env maps the default size */
	ck_assert_uint_eq(shm_map_size(s), 9 * (size_t)SHM_MAP_SIZE_DEFAULT);
	/* a second process takes the number from the hint page */
	{
		struct shm *s2;

		ck_assert_int_eq(shm_attach(tdir, 0, 0, 0, &s2), 0);
		ck_assert_uint_eq(shm_env_count(s2), 9);
		shm_detach(s2);
	}
	ck_assert_int_eq(shm_parts_valid(8), 1);
	ck_assert_int_eq(shm_parts_valid(6), 0);
	ck_assert_int_eq(shm_parts_valid(128), 0);
	drop_env(s);
	/* one partition: the main env alone, as before the split */
	s = make_env_parts(0, 0);
	ck_assert_uint_eq(shm_env_count(s), 1);
	snprintf(p, sizeof(p), "%s/state-0.mdb", tdir);
	ck_assert_int_ne(access(p, F_OK), 0);
	drop_env(s);
}
END_TEST

/*
 * Files spread over the data envs; a named stream (its id keeps the
 * file's ino) lives in its file's env, so the share-mode check of a
 * DELETE open against its streams is still one transaction.
 */
START_TEST(test_file_and_streams_one_env)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_file_id f = { 0x801, 0x1234 }, st = f, g;
	struct shm_open_rec a = mkopen(1, RD | WR, S_ALL), b;
	struct shm_open_rec del = mkopen(3, DEL, S_ALL);
	struct shm_open_conflict cf;
	struct shm_close_result cr;
	unsigned used[9] = { 0 }, i, nused = 0;

	st.dev = (f.dev ^ 0x5a5a00000000ull) | 1ull << 63;
	b = mkopen(2, RD | WR, S_R | S_W);
	b.has_base = 1;
	b.stream_base = f;
	ck_assert_ptr_eq(shm_env_fid(s, &st), shm_env_fid(s, &f));
	ck_assert_int_eq(shm_open_insert(s, &f, &a, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &st, &b, NULL), 0);
	ck_assert_int_eq(env_holding_opens(s, &f), (int)shm_env_fid(s, &f)->idx);
	ck_assert_int_eq(env_holding_opens(s, &st), (int)shm_env_fid(s, &f)->idx);
	ck_assert_int_ne(env_holding_opens(s, &f), 0);	/* never the main env */
	/* the stream without FILE_SHARE_DELETE holds off a DELETE open */
	ck_assert_int_eq(shm_open_insert(s, &f, &del, &cf), -EBUSY);
	ck_assert_uint_eq(cf.persistent_id, 2);
	ck_assert_int_eq(shm_open_remove_stream(s, &st, &f, 2, &cr), 0);
	ck_assert_int_eq(shm_open_remove(s, &f, 1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &f, &del, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &f, 3, NULL), 0);
	/* a stream named with another file's id as its base is refused */
	g = fid_elsewhere(s, &f, 1);
	b.stream_base = g;
	ck_assert_int_eq(shm_open_insert(s, &st, &b, NULL), -EXDEV);
	/* consecutive inode numbers use every data env */
	for (g.ino = 1; g.ino <= 64; g.ino++)
		used[shm_env_fid(s, &g)->idx]++;
	ck_assert_uint_eq(used[0], 0);
	for (i = 1; i < 9; i++)
		nused += used[i] > 0;
	ck_assert_uint_eq(nused, 8);
	drop_env(s);
}
END_TEST

static struct shm_open_rec
mklease(uint64_t id, uint8_t client, uint8_t key, uint32_t state)
{
	struct shm_open_rec r = mkopen(id, RD | WR, S_ALL);

	r.oplock_level = SHM_OPLOCK_LEASE;
	r.lease_state = state;
	r.lease_version = 2;
	memset(r.client_guid, client, SHM_GUID_LEN);
	memset(r.lease_key, key, SHM_GUID_LEN);
	return r;
}

/*
 * A lease lives in its file's data env; an ack (by client GUID and key
 * alone, as it arrives in another worker) finds it there, and a key
 * already caching a file of another env is refused for a second file.
 */
START_TEST(test_lease_across_envs)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_file_id f = { 0x801, 0x1234 }, g, fid;
	struct shm_open_rec a = mklease(41, 1, 0xa, SHM_LEASE_R | SHM_LEASE_H),
	    o = mkopen(42, WR, S_ALL), a2 = mklease(43, 1, 0xa, SHM_LEASE_R);
	struct shm_break_req req;
	struct shm_breaks br;
	struct shm_lease_rec l;
	struct shm_pids pids;

	g = fid_elsewhere(s, &f, 1);
	ck_assert_int_eq(shm_open_insert_ex(s, &f, &a, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_uint_eq(l.fid.ino, f.ino);
	ck_assert_uint_eq(l.state, SHM_LEASE_R | SHM_LEASE_H);
	/* knowing the file: one read of its env; another file has none */
	ck_assert_int_eq(shm_lease_get_fid(s, &f, a.client_guid, a.lease_key, &l), 0);
	ck_assert_uint_eq(l.state, SHM_LEASE_R | SHM_LEASE_H);
	ck_assert_int_eq(shm_lease_get_fid(s, &g, a.client_guid, a.lease_key, &l),
	    -ENOENT);
	/* one lease key caches one file, wherever the other file lives */
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &a2, NULL, NULL, NULL), -EINVAL);
	/* a break marked in f's env ... */
	memset(&req, 0, sizeof(req));
	req.access = WR;
	req.share_access = S_ALL;
	req.flags = SHM_BREAK_SHARING;
	ck_assert_int_eq(shm_open_breaks(s, &f, &req, 1, &br), 0);
	ck_assert_uint_eq(br.n, 1);
	ck_assert(br.b[0].is_lease);
	/* ... is found, acknowledged and its holders listed by key alone */
	ck_assert_int_eq(shm_lease_holders(s, a.client_guid, a.lease_key, &fid,
	    &pids), 0);
	ck_assert_uint_eq(fid.ino, f.ino);
	ck_assert_uint_eq(pids.n, 1);
	ck_assert_int_eq(pids.pid[0], getpid());
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), 0);
	ck_assert_uint_eq(l.state, SHM_LEASE_R);
	ck_assert_int_eq(l.breaking, 0);
	ck_assert_int_eq(shm_open_insert(s, &f, &o, NULL), 0);
	/* the last open gone, the lease goes, and the key is free again */
	ck_assert_int_eq(shm_open_remove(s, &f, 41, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a.client_guid, a.lease_key, &l), -ENOENT);
	ck_assert_int_eq(shm_lease_break_ack(s, a.client_guid, a.lease_key,
	    SHM_LEASE_R), -ENOENT);
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &a2, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_lease_get(s, a2.client_guid, a2.lease_key, &l), 0);
	ck_assert_uint_eq(l.fid.ino, g.ino);
	drop_env(s);
}
END_TEST

/*
 * The lease-key claim (shm/claim.c): the file a key's claim names, by a
 * read of its claim env (0 or -ENOENT).
 */
static int
claim_of(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct shm_file_id *x)
{
	uint8_t kb[SHM_LEASE_KEY_LEN + 1];
	MDB_val k = { sizeof(kb), kb }, v;
	MDB_txn *txn;
	int rc;

	memcpy(kb, guid, SHM_GUID_LEN);
	memcpy(kb + SHM_GUID_LEN, key, SHM_GUID_LEN);
	kb[SHM_LEASE_KEY_LEN] = 'C';
	ck_assert_int_eq(shm_rbegin(s, shm_env_claim(s, guid, key), &txn), 0);
	rc = mdb_get(txn, s->db_leases, &k, &v);
	if (rc == 0)
		ck_assert_int_eq(shm_claim_decode(v.mv_data, v.mv_size, x), 0);
	shm_rend(s, txn);
	return rc == 0 ? 0 : -ENOENT;
}

/* Claims anywhere (tagged keys of every data env's leases database). */
static unsigned
claims_count(struct shm *s)
{
	MDB_cursor *cu;
	MDB_cursor_op op;
	MDB_txn *txn;
	MDB_val k, v;
	unsigned n = 0, i;

	for (i = 1; i < s->nenv; i++) {
		ck_assert_int_eq(mdb_txn_begin(s->e[i].env, NULL, MDB_RDONLY, &txn), 0);
		ck_assert_int_eq(mdb_cursor_open(txn, s->db_leases, &cu), 0);
		for (op = MDB_FIRST; mdb_cursor_get(cu, &k, &v, op) == 0; op = MDB_NEXT)
			n += k.mv_size == SHM_LEASE_KEY_LEN + 1;
		mdb_cursor_close(cu);
		mdb_txn_abort(txn);
	}
	return n;
}

/* A lease key whose claim env is none of avoid[0..n) (client GUID 1). */
static uint8_t
key_claimed_elsewhere(struct shm *s, const struct shm_env *const *avoid,
    unsigned n)
{
	uint8_t guid[SHM_GUID_LEN], key[SHM_GUID_LEN], b;
	unsigned i;

	memset(guid, 1, sizeof(guid));
	for (b = 0x10;; b++) {
		memset(key, b, sizeof(key));
		for (i = 0; i < n; i++)
			if (shm_env_claim(s, guid, key) == avoid[i])
				break;
		if (i == n)
			return b;
	}
}

/*
 * The race the claim closes: two files of two envs opened with one new
 * key at the same moment.  The first opener is stopped with both writer
 * locks held (its claim and its lease written, neither committed); the
 * second, started then, must wait for it and be refused (MS-SMB2
 * 3.3.5.9.8: INVALID_PARAMETER), whichever file goes first.  Without the
 * claim (the read of the other envs before the write) both got the key.
 */
static struct kid *hook_kid;

static void
claim_hook(struct shm *s)
{
	kid_say(hook_kid->from[1], 1);		/* holding both locks */
	(void)kid_wait(hook_kid->to[0]);	/* until the test says go */
}

static struct shm_file_id race_fid;
static uint8_t race_key;
static uint64_t race_id;

static void
kid_race_open(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mklease(race_id, 1, race_key, SHM_LEASE_R);

	hook_kid = k;
	s->test_claim_hook = claim_hook;
	kid_say(k->from[1], shm_open_insert_ex(s, &race_fid, &o, NULL, NULL, NULL));
	shm_detach(s);
}

static void
claim_race(struct shm *s, struct shm_file_id first, struct shm_file_id second,
    uint8_t key)
{
	struct shm_file_id x;
	struct kid a, b;
	struct pollfd p;
	uint8_t guid[SHM_GUID_LEN], kb[SHM_GUID_LEN];

	memset(guid, 1, sizeof(guid));
	memset(kb, key, sizeof(kb));
	race_key = key;
	race_fid = first;
	race_id = 501;
	kid_start(&a, kid_race_open);
	/* the first opener of one env's file, stopped holding the claim */
	ck_assert_int_eq(kid_read(&a), 1);
	race_fid = second;
	race_id = 502;
	kid_start(&b, kid_race_open);
	/* the second (another env's file) waits on the claim env's lock */
	p.fd = b.from[0];
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, 300), 0);
	kid_say(a.to[1], 1);
	ck_assert_int_eq(kid_read(&a), 0);
	ck_assert_int_eq(kid_read(&b), -EINVAL);
	kid_exit(&a);
	kid_exit(&b);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, first.ino);
	/* the first file's lease ends with its open: so does the claim */
	ck_assert_int_eq(shm_open_remove(s, &first, 501, NULL), 0);
	shm_claim_flush(s);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), -ENOENT);
	ck_assert_uint_eq(claims_count(s), 0);
}

START_TEST(test_lease_claim_race)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_file_id f = { 0x801, 0x1234 }, g = fid_elsewhere(s, &f, 1);
	const struct shm_env *fg[2] = { shm_env_fid(s, &f), shm_env_fid(s, &g) };
	uint8_t key = key_claimed_elsewhere(s, fg, 2), guid[SHM_GUID_LEN], kb[16];
	struct shm_file_id h;
	unsigned i;

	/* the claim in a third env: both openers take two locks */
	claim_race(s, f, g, key);
	claim_race(s, g, f, key);
	/* the claim in the first file's env: one lock for it, two for the other */
	memset(guid, 1, sizeof(guid));
	memset(kb, key, sizeof(kb));
	for (h = f, h.ino = 0x9000; shm_env_fid(s, &h) != shm_env_claim(s, guid, kb) ||
	    shm_env_fid(s, &h) == fg[1]; h.ino++)
		;
	claim_race(s, h, g, key);
	claim_race(s, g, h, key);
	/* and a key whose claim lives with g */
	for (i = 0; i < 256; i++) {
		memset(kb, i, sizeof(kb));
		if (shm_env_claim(s, guid, kb) == fg[1])
			break;
	}
	ck_assert_uint_lt(i, 256);
	claim_race(s, f, g, (uint8_t)i);
	claim_race(s, g, f, (uint8_t)i);
	drop_env(s);
}
END_TEST

/*
 * A claim lives as long as a lease of its key on its file: a second open
 * sharing the lease keeps it, the last close drops it; a claim left stale
 * (its process died between the steps) refuses nobody; a killed worker's
 * purged lease gives the key back.
 */
static void
kid_hold_lease(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_open_rec o = mklease(601, 1, race_key, SHM_LEASE_R | SHM_LEASE_H);

	kid_say(k->from[1], shm_open_insert_ex(s, &race_fid, &o, NULL, NULL, NULL));
	for (;;)
		kid_wait(k->to[0]);
}

START_TEST(test_lease_claim_life)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_file_id f = { 0x801, 0x1234 }, g = fid_elsewhere(s, &f, 1), x;
	const struct shm_env *fg[2] = { shm_env_fid(s, &f), shm_env_fid(s, &g) };
	uint8_t key = key_claimed_elsewhere(s, fg, 2), guid[SHM_GUID_LEN], kb[16];
	struct shm_open_rec a1 = mklease(1, 1, key, SHM_LEASE_R),
	    a2 = mklease(2, 1, key, SHM_LEASE_R), b = mklease(3, 1, key, SHM_LEASE_R);
	struct shm_purge_result pr;
	struct shm_lease_rec l;
	struct kid k;

	memset(guid, 1, sizeof(guid));
	memset(kb, key, sizeof(kb));
	ck_assert_int_eq(shm_open_insert_ex(s, &f, &a1, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &f, &a2, NULL, NULL, NULL), 0);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, f.ino);
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(shm_open_remove(s, &f, 1, NULL), 0);
	shm_claim_flush(s);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);	/* a2 still has it */
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(shm_open_remove(s, &f, 2, NULL), 0);
	/* its drop waits for a batch; meanwhile it refuses nobody */
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, f.ino);
	shm_claim_flush(s);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), -ENOENT);
	/* the key moves to g */
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), 0);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, g.ino);
	ck_assert_int_eq(shm_open_remove(s, &g, 3, NULL), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &f, &a1, NULL, NULL, NULL), 0);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, f.ino);
	ck_assert_int_eq(shm_open_remove(s, &f, 1, NULL), 0);
	shm_claim_flush(s);
	ck_assert_uint_eq(claims_count(s), 0);
	/* a stale claim (naming f, which has no lease) is taken over */
	{
		MDB_txn *txn;
		uint8_t kk[SHM_LEASE_KEY_LEN + 1], v[17] = { 1 };
		MDB_val k2 = { sizeof(kk), kk }, v2 = { sizeof(v), v };

		memcpy(kk, guid, 16);
		memcpy(kk + 16, kb, 16);
		kk[32] = 'C';
		for (int i = 0; i < 8; i++) {
			v[1 + i] = (uint8_t)(f.dev >> (8 * i));
			v[9 + i] = (uint8_t)(f.ino >> (8 * i));
		}
		ck_assert_int_eq(mdb_txn_begin(shm_env_claim(s, guid, kb)->env, NULL, 0,
		    &txn), 0);
		ck_assert_int_eq(mdb_put(txn, s->db_leases, &k2, &v2, 0), 0);
		ck_assert_int_eq(mdb_txn_commit(txn), 0);
	}
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, f.ino);
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), 0);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), 0);
	ck_assert_uint_eq(x.ino, g.ino);
	ck_assert_int_eq(shm_open_remove(s, &g, 3, NULL), 0);
	shm_claim_flush(s);
	ck_assert_uint_eq(claims_count(s), 0);
	/* many leases closed: their claims go in batches, with no flush */
	for (int i = 0; i < 3 * 64; i++) {
		struct shm_open_rec m = mklease(1000 + i, 1, key, SHM_LEASE_R);

		m.lease_key[0] = (uint8_t)i;
		m.lease_key[1] = (uint8_t)(i >> 8);
		ck_assert_int_eq(shm_open_insert_ex(s, &f, &m, NULL, NULL, NULL), 0);
		ck_assert_int_eq(shm_open_remove(s, &f, 1000 + i, NULL), 0);
	}
	ck_assert_uint_lt(claims_count(s), 64);
	shm_claim_flush(s);
	ck_assert_uint_eq(claims_count(s), 0);
	/* a killed holder: the purge ends its lease and the claim with it */
	race_fid = f;
	race_key = key;
	kid_start(&k, kid_hold_lease);
	ck_assert_int_eq(kid_read(&k), 0);
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), -EINVAL);
	kill(k.pid, SIGKILL);
	kid_exit(&k);
	ck_assert_int_eq(shm_purge_worker(s, k.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_int_eq(shm_lease_get(s, guid, kb, &l), -ENOENT);
	ck_assert_int_eq(claim_of(s, guid, kb, &x), -ENOENT);
	ck_assert_int_eq(shm_open_insert_ex(s, &g, &b, NULL, NULL, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &g, 3, NULL), 0);
	shm_claim_flush(s);
	ck_assert_uint_eq(claims_count(s), 0);
	drop_env(s);
}
END_TEST

static struct shm_durable_rec *
mkdurable(uint8_t guid)
{
	struct shm_durable_rec *d = calloc(1, sizeof(*d));

	ck_assert_ptr_nonnull(d);
	snprintf(d->path, sizeof(d->path), "f%u.txt", guid);
	snprintf(d->share, sizeof(d->share), "data");
	snprintf(d->user, sizeof(d->user), "alice");
	memset(d->client_guid, 0xc1, SHM_GUID_LEN);
	memset(d->create_guid, guid, SHM_GUID_LEN);
	d->flags = SHM_DURABLE_V2;
	d->timeout_ms = 60000;
	return d;
}

/*
 * A worker with opens in every data env, durable ones among them, locks
 * and a session, is killed: the purge clears every env (durable opens
 * kept, disconnected), and a reconnect by persistent id alone finds its
 * open in whichever env holds it.
 */
static void
kid_spread(struct kid *k)
{
	struct shm *s = kid_attach();
	struct shm_file_id f = { 0x801, 0 };
	struct shm_session_rec sr;
	int rc = 0;

	for (f.ino = 1; f.ino <= 32 && rc == 0; f.ino++) {
		struct shm_open_rec o = mkopen(100 + f.ino, RD | WR, S_R);
		struct shm_brlock_owner ow = { getpid(), 100 + f.ino };
		struct shm_durable_rec *d = NULL;

		if (f.ino <= 4) {
			d = mkdurable((uint8_t)f.ino);
			memcpy(o.client_guid, d->client_guid, SHM_GUID_LEN);
		}
		rc = shm_open_insert_ex(s, &f, &o, d, NULL, NULL);
		if (rc == 0)
			rc = shm_brlock_lock(s, &f, &ow, 0, 10, SHM_BRL_EXCLUSIVE);
		free(d);
	}
	memset(&sr, 0, sizeof(sr));
	sr.session_id = 0x5e55;
	sr.pid = getpid();
	snprintf(sr.user, sizeof(sr.user), "alice");
	if (rc == 0)
		rc = shm_session_put(s, &sr);
	kid_say(k->from[1], rc);
	for (;;)
		kid_wait(k->to[0]);
}

static int
count_open(const struct shm_file_id *f, const struct shm_open_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int
count_lock(const struct shm_file_id *f, const struct shm_brlock_rec *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

START_TEST(test_purge_and_reconnect_all_envs)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_file_id f = { 0x801, 3 };
	struct shm_durable_rec *d = calloc(1, sizeof(*d));
	struct shm_durable_claim cl;
	struct shm_purge_result pr;
	struct shm_session_rec sr;
	struct shm_open_rec r;
	int nopen = 0, nlock = 0;
	struct kid a;

	kid_start(&a, kid_spread);
	ck_assert_int_eq(kid_read(&a), 0);
	ck_assert_int_eq(shm_foreach_open(s, count_open, &nopen), 0);
	ck_assert_int_eq(nopen, 32);
	ck_assert_int_eq(shm_foreach_brlock(s, count_lock, &nlock), 0);
	ck_assert_int_eq(nlock, 32);
	kill(a.pid, SIGKILL);
	kid_exit(&a);
	ck_assert_int_eq(shm_purge_worker(s, a.pid, &pr), 0);
	ck_assert_uint_eq(pr.opens, 28);
	ck_assert_uint_eq(pr.durable, 4);
	ck_assert_uint_eq(pr.locks, 28);
	ck_assert_uint_eq(pr.sessions, 1);
	ck_assert_int_eq(shm_session_get(s, 0x5e55, &sr), -ENOENT);
	nopen = nlock = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &nopen), 0);
	ck_assert_int_eq(nopen, 4);	/* the durable ones, disconnected */
	ck_assert_int_eq(shm_foreach_brlock(s, count_lock, &nlock), 0);
	ck_assert_int_eq(nlock, 4);
	/* a reconnect by persistent id alone */
	ck_assert_int_eq(shm_durable_get(s, 103, d), 0);
	ck_assert_uint_eq(d->fid.ino, 3);
	memset(&cl, 0, sizeof(cl));
	cl.user = "alice";
	cl.v2 = 1;
	cl.pid = getpid();
	cl.session_id = 77;
	memset(cl.client_guid, 0xc1, SHM_GUID_LEN);
	memset(cl.create_guid, 3, SHM_GUID_LEN);
	ck_assert_int_eq(shm_durable_reclaim(s, 103, &cl, shm_now_ms(), d), 0);
	ck_assert_int_eq(shm_open_get(s, &f, 103, &r), 0);
	ck_assert_int_eq(r.pid, getpid());
	ck_assert_int_eq(shm_durable_disconnect(s, 103, shm_now_ms(), NULL), 0);
	ck_assert_int_eq(shm_durable_reclaim(s, 999, &cl, shm_now_ms(), d), -ENOENT);
	/* expiry runs over every env */
	{
		unsigned n;
		struct shm_pids wake;

		ck_assert_int_eq(shm_expire_durable(s, shm_now_ms() + 60001, &n,
		    &wake), 0);
		ck_assert_uint_eq(n, 4);
	}
	nopen = 0;
	ck_assert_int_eq(shm_foreach_open(s, count_open, &nopen), 0);
	ck_assert_int_eq(nopen, 0);
	free(d);
	drop_env(s);
}
END_TEST

/* A CREATE and a CLOSE take one data env's writer lock, never the main one's. */
START_TEST(test_create_close_skip_main)
{
	struct shm *s = make_env_parts(0, LOG2);
	struct shm_hold h[SHM_TXN_KINDS];
	uint64_t m0[SHM_TXN_KINDS], m1[SHM_TXN_KINDS];
	struct shm_file_id f = { 0x801, 0 };
	uint64_t id;

	ck_assert_int_eq(shm_id_alloc(s, &id), 0);	/* the main env's */
	shm_main_txns(s, m0);
	ck_assert_uint_eq(m0[SHM_TXN_OTHER], 1);
	for (f.ino = 1; f.ino <= 100; f.ino++) {
		struct shm_open_rec o = mkopen(id + f.ino, RD, S_ALL);

		ck_assert_int_eq(shm_open_insert(s, &f, &o, NULL), 0);
		ck_assert_int_eq(shm_open_remove(s, &f, o.persistent_id, NULL), 0);
	}
	shm_main_txns(s, m1);
	shm_hold_stats(s, h);
	ck_assert_uint_eq(h[SHM_TXN_CREATE].txns, 100);
	ck_assert_uint_eq(h[SHM_TXN_CLOSE].txns, 100);
	ck_assert_uint_eq(m1[SHM_TXN_CREATE], 0);
	ck_assert_uint_eq(m1[SHM_TXN_CLOSE], 0);
	ck_assert_uint_eq(m1[SHM_TXN_OTHER], m0[SHM_TXN_OTHER]);
	drop_env(s);
	/* with one env, the main env is the data env */
	s = make_env_parts(0, 0);
	{
		struct shm_open_rec o = mkopen(5, RD, S_ALL);

		ck_assert_int_eq(shm_open_insert(s, &f, &o, NULL), 0);
		shm_main_txns(s, m1);
		ck_assert_uint_eq(m1[SHM_TXN_CREATE], 1);
	}
	drop_env(s);
}
END_TEST

/*
 * A full data env: that env's map grows (on the release path) and the
 * others stay as they were: each env has its own size.
 */
START_TEST(test_map_grows_per_env)
{
	struct shm *s = make_env_parts(256 * 1024, LOG2);
	struct shm_file_id f = { 0x801, 0x77 };
	struct shm_env *e = shm_env_fid(s, &f);
	size_t before = shm_map_size(s);
	MDB_envinfo info;
	uint64_t id = 1;
	int rc = 0;

	/* fill f's env with opens of f's file ids (same env: same ino) */
	while (rc == 0 && id < 20000) {
		struct shm_open_rec o = mkopen(id++, ATTR, S_ALL);
		struct shm_file_id g = { 0x801 + id, f.ino };

		rc = shm_open_insert(s, &g, &o, NULL);
	}
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_int_eq(shm_grow(s), 0);	/* grows the env that was full */
	ck_assert_int_eq(mdb_env_info(e->env, &info), 0);
	ck_assert_uint_gt(info.me_mapsize, 256 * 1024);
	ck_assert_uint_eq(shm_map_size(s), before - 256 * 1024 + info.me_mapsize);
	for (unsigned i = 0; i < s->nenv; i++) {
		if (&s->e[i] == e)
			continue;
		ck_assert_int_eq(mdb_env_info(s->e[i].env, &info), 0);
		ck_assert_uint_eq(info.me_mapsize, 256 * 1024);
	}
	drop_env(s);
}
END_TEST

int
main(void)
{
	Suite *su = suite_create("shm-parts");
	TCase *tc = tcase_create("parts");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_envs_and_files);
	tcase_add_test(tc, test_file_and_streams_one_env);
	tcase_add_test(tc, test_lease_across_envs);
	tcase_add_test(tc, test_lease_claim_race);
	tcase_add_test(tc, test_lease_claim_life);
	tcase_add_test(tc, test_purge_and_reconnect_all_envs);
	tcase_add_test(tc, test_create_close_skip_main);
	tcase_add_test(tc, test_map_grows_per_env);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
