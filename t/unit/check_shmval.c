/*
 * The decoders of the shared state's values that any worker can write
 * (shm/shm_priv.h): a byte-range lock record (its length must be what its
 * counts say), a worker datagram (exact, round trip), and lease, session,
 * worker and durable records.  A valid value decodes; every truncation of
 * it is refused (a lease record's optional tail excepted: records written
 * before those fields existed are shorter).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "shm/shm_priv.h"

static uint8_t buf[4096];

static size_t
mkbrl(unsigned nl, unsigned nw)
{
	struct wcur w;
	unsigned i;

	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_le16(&w, (uint16_t)nl);
	wcur_le16(&w, (uint16_t)nw);
	for (i = 0; i < nl; i++) {
		wcur_le64(&w, 100 * i);		/* offset */
		wcur_le64(&w, 10);		/* length */
		wcur_le64(&w, 42 + i);		/* persistent id */
		wcur_le32(&w, 1000 + i);	/* pid */
		wcur_u8(&w, (uint8_t)(i & 1));	/* exclusive */
	}
	for (i = 0; i < nw; i++) {
		wcur_le32(&w, 2000 + i);
		wcur_le64(&w, 77 + i);
	}
	ck_assert(!w.err);
	return wcur_off(&w);
}

START_TEST(test_brlock)
{
	struct shm_brlock_rec l;
	unsigned nl, nw;
	size_t n, i;

	n = mkbrl(3, 2);
	ck_assert_int_eq(shm_brlock_decode(buf, n, &nl, &nw), 0);
	ck_assert_uint_eq(nl, 3);
	ck_assert_uint_eq(nw, 2);
	shm_brlock_rec_get(buf, 1, &l);
	ck_assert(l.offset == 100 && l.length == 10 && l.exclusive == 1);
	ck_assert(l.owner.persistent_id == 43 && l.owner.pid == 1001);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_brlock_decode(buf, i, &nl, &nw), 0);
	ck_assert_int_ne(shm_brlock_decode(buf, n + 1, &nl, &nw), 0);
	/* Counts that promise more than the value holds: refused. */
	le16_put(buf + 1, 0xffff);
	ck_assert_int_ne(shm_brlock_decode(buf, n, &nl, &nw), 0);
	n = mkbrl(0, 0);
	ck_assert_int_eq(shm_brlock_decode(buf, n, &nl, &nw), 0);
	buf[0] = SHM_REC_V1 + 1;
	ck_assert_int_ne(shm_brlock_decode(buf, n, &nl, &nw), 0);
}
END_TEST

START_TEST(test_wmsg)
{
	struct shm_wmsg_msg m, d;
	uint8_t out[2048];
	size_t n, i;

	memset(&m, 0, sizeof(m));
	m.type = SHM_WMSG_NOTIFY;
	m.fid.dev = 2049;
	m.fid.ino = 77;
	m.action = 1;
	m.filter = 3;
	strcpy(m.name, "dir/new file.txt");
	n = shm_wmsg_encode(buf, sizeof(buf), &m);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(shm_wmsg_decode(buf, n, &d), 0);
	ck_assert_str_eq(d.name, m.name);
	ck_assert(d.type == m.type && d.fid.ino == 77 && d.filter == 3);
	ck_assert_uint_eq(shm_wmsg_encode(out, sizeof(out), &d), n);
	ck_assert(memcmp(out, buf, n) == 0);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_wmsg_decode(buf, i, &d), 0);
	ck_assert_int_ne(shm_wmsg_decode(buf, n + 1, &d), 0);
	buf[2] = 0;	/* no such type */
	ck_assert_int_ne(shm_wmsg_decode(buf, n, &d), 0);
	buf[2] = SHM_WMSG_BREAK_WAIT + 1;
	ck_assert_int_ne(shm_wmsg_decode(buf, n, &d), 0);
}
END_TEST

static void
wstr(struct wcur *w, const char *s)
{
	wcur_le16(w, (uint16_t)strlen(s));
	wcur_bytes(w, s, strlen(s));
}

START_TEST(test_records)
{
	uint8_t key[32], skey[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	    0x88 }, wkey[4] = { 0, 0, 0x10, 0xe1 };
	struct shm_lease_rec l;
	struct shm_session_rec s;
	struct shm_worker_rec wr;
	static struct shm_durable_rec d;
	uint8_t seq[SHM_DURABLE_LOCK_SEQ];
	struct wcur w;
	size_t n, i;

	/* Lease v1: the fields every record has, then the optional tail. */
	memset(key, 0xab, sizeof(key));
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_bytes(&w, key, 16);
	wcur_le64(&w, 2049);
	wcur_le64(&w, 1234);
	wcur_le32(&w, 7);
	wcur_le32(&w, 1);
	wcur_le16(&w, 3);
	wcur_u8(&w, 2);
	wcur_u8(&w, 1);
	n = wcur_off(&w);
	wcur_le32(&w, 1);
	wcur_le64(&w, 99);
	ck_assert_int_eq(shm_lease_decode(key, 32, buf, wcur_off(&w), &l), 0);
	ck_assert(l.fid.ino == 1234 && l.state == 7 && l.break_started == 99);
	ck_assert_int_ne(shm_lease_decode(key, 31, buf, wcur_off(&w), &l), 0);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_lease_decode(key, 32, buf, i, &l), 0);
	/* Session. */
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_le32(&w, 1234);
	wcur_le32(&w, 1000);
	wstr(&w, "alice");
	wstr(&w, "127.0.0.1");
	wcur_le16(&w, 0x311);
	wcur_u8(&w, 1);
	wcur_u8(&w, 0);
	wcur_le64(&w, 1700000000);
	n = wcur_off(&w);
	ck_assert_int_eq(shm_session_decode(skey, 8, buf, n, &s), 0);
	ck_assert_str_eq(s.user, "alice");
	ck_assert(s.session_id == 0x1122334455667788ull && s.dialect == 0x311);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_session_decode(skey, 8, buf, i, &s), 0);
	ck_assert_int_ne(shm_session_decode(skey, 7, buf, n, &s), 0);
	/* Worker. */
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_u8(&w, SHM_ROLE_WORKER);
	wcur_le32(&w, 1000);
	wstr(&w, "alice");
	wcur_le32(&w, 3);
	wcur_le64(&w, 1700000000);
	n = wcur_off(&w);
	ck_assert_int_eq(shm_worker_decode(wkey, 4, buf, n, &wr), 0);
	ck_assert(wr.pid == 4321 && wr.nconn == 3);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_worker_decode(wkey, 4, buf, i, &wr), 0);
	/* Durable. */
	wcur_init(&w, buf, sizeof(buf));
	wcur_u8(&w, SHM_REC_V1);
	wcur_le64(&w, 2049);
	wcur_le64(&w, 555);
	wstr(&w, "dir/file.txt");
	wstr(&w, "share");
	wstr(&w, "alice");
	wcur_le32(&w, 0x12019f);
	wcur_le32(&w, 7);
	wcur_u8(&w, 9);
	wcur_bytes(&w, key, 16);
	wcur_le32(&w, 7);
	wcur_bytes(&w, key, 16);
	wcur_bytes(&w, key, 16);
	wcur_le32(&w, 60000);
	wcur_le64(&w, 0);
	wcur_le32(&w, 1234);
	wcur_le32(&w, SHM_DURABLE_V2 | SHM_DURABLE_RESILIENT);
	/* the LockSequenceArray: bucket 1 holds 2, bucket 64 holds 16 */
	memset(seq, 0, sizeof(seq));
	seq[0] = 2;
	seq[63] = 16;
	wcur_bytes(&w, seq, sizeof(seq));
	n = wcur_off(&w);
	ck_assert_int_eq(shm_durable_decode(buf, n, &d), 0);
	ck_assert_str_eq(d.path, "dir/file.txt");
	ck_assert_uint_eq(d.flags, SHM_DURABLE_V2 | SHM_DURABLE_RESILIENT);
	ck_assert_mem_eq(d.lock_seq, seq, sizeof(seq));
	for (i = 0; i < n; i++)
		ck_assert_int_ne(shm_durable_decode(buf, i, &d), 0);
}
END_TEST

static Suite *
shmval_suite(void)
{
	Suite *s = suite_create("shmval");
	TCase *tc = tcase_create("decoders");

	tcase_add_test(tc, test_brlock);
	tcase_add_test(tc, test_wmsg);
	tcase_add_test(tc, test_records);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(shmval_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
