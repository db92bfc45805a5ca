/*
 * Unit tests for Apple's SMB2 extensions (proto/aapl.c): the AAPL server
 * query decoder (every truncation and extension of a valid one refused,
 * other commands refused), the reply as smbtorture's vfs.fruit expects
 * its size, the AfpInfo record checks and the compressed Finder info.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/aapl.h"

static void
query(uint8_t b[32], uint32_t cmd, uint64_t bitmap, uint64_t caps)
{
	memset(b, 0, 32);
	le32_put(b, cmd);
	le64_put(b + 8, bitmap);
	le64_put(b + 16, caps);
}

START_TEST(test_query_valid)
{
	uint8_t b[32];
	struct aapl_query q;

	query(b, AAPL_SERVER_QUERY, 7, AAPL_SUPPORTS_READ_DIR_ATTR |
	    AAPL_UNIX_BASED);
	ck_assert_int_eq(aapl_query_decode(b, 24, &q), 0);
	ck_assert_uint_eq(q.cmd, AAPL_SERVER_QUERY);
	ck_assert_uint_eq(q.bitmap, 7);
	ck_assert_uint_eq(q.client_caps, AAPL_SUPPORTS_READ_DIR_ATTR |
	    AAPL_UNIX_BASED);
}
END_TEST

START_TEST(test_query_refused)
{
	uint8_t b[32];
	struct aapl_query q;
	size_t n;

	query(b, AAPL_SERVER_QUERY, 7, 0);
	for (n = 0; n < 24; n++)
		ck_assert_int_eq(aapl_query_decode(b, n, &q), -1);
	ck_assert_int_eq(aapl_query_decode(b, 25, &q), -1);
	ck_assert_int_eq(aapl_query_decode(b, 32, &q), -1);
	ck_assert_int_eq(aapl_query_decode(NULL, 24, &q), -1);
	query(b, AAPL_RESOLVE_ID, 7, 0);
	ck_assert_int_eq(aapl_query_decode(b, 24, &q), -1);
	query(b, 0, 7, 0);
	ck_assert_int_eq(aapl_query_decode(b, 24, &q), -1);
}
END_TEST

START_TEST(test_reply_layout)
{
	uint8_t out[128], model16[16];
	struct aapl_reply r;
	struct wcur w;
	int i;

	for (i = 0; i < 8; i++) {
		model16[2 * i] = (uint8_t)"MacSamba"[i];
		model16[2 * i + 1] = 0;
	}
	memset(&r, 0, sizeof(r));
	r.bitmap = AAPL_SERVER_CAPS | AAPL_VOLUME_CAPS | AAPL_MODEL_INFO;
	r.server_caps = 0xF;
	r.volume_caps = AAPL_FULL_SYNC;
	r.model16 = model16;
	r.model16_len = 16;
	wcur_init(&w, out, sizeof(out));
	aapl_reply_put(&w, &r);
	ck_assert_int_eq(w.err, 0);
	/* smbtorture: strlen("MacSamba") * 2 + 40 */
	ck_assert_uint_eq(wcur_off(&w), 56);
	ck_assert_uint_eq(le32_get(out), AAPL_SERVER_QUERY);
	ck_assert_uint_eq(le64_get(out + 8), 7);
	ck_assert_uint_eq(le64_get(out + 16), 0xF);
	ck_assert_uint_eq(le64_get(out + 24), AAPL_FULL_SYNC);
	ck_assert_uint_eq(le32_get(out + 36), 16);
	ck_assert_int_eq(memcmp(out + 40, model16, 16), 0);
	/* only what the bitmap asks for */
	r.bitmap = AAPL_VOLUME_CAPS;
	wcur_init(&w, out, sizeof(out));
	aapl_reply_put(&w, &r);
	ck_assert_uint_eq(wcur_off(&w), 24);
	ck_assert_uint_eq(le64_get(out + 16), AAPL_FULL_SYNC);
	/* a buffer too small latches the error */
	r.bitmap = 7;
	wcur_init(&w, out, 50);
	aapl_reply_put(&w, &r);
	ck_assert_int_ne(w.err, 0);
}
END_TEST

START_TEST(test_afpinfo)
{
	uint8_t rec[AFPINFO_SIZE];

	memset(rec, 0, sizeof(rec));
	ck_assert_int_eq(aapl_afpinfo_valid(rec, sizeof(rec)), 0);
	memcpy(rec, "AFP\0\0\0\1\0", 8);
	ck_assert_int_eq(aapl_afpinfo_valid(rec, sizeof(rec)), 1);
	ck_assert_int_eq(aapl_afpinfo_valid(rec, 59), 0);
	ck_assert_int_eq(aapl_afpinfo_empty(rec, sizeof(rec)), 1);
	rec[AFPINFO_OFF_FINDERINFO + 31] = 1;
	ck_assert_int_eq(aapl_afpinfo_empty(rec, sizeof(rec)), 0);
	rec[6] = 2;		/* another version */
	ck_assert_int_eq(aapl_afpinfo_valid(rec, sizeof(rec)), 0);
}
END_TEST

START_TEST(test_finder_compress)
{
	uint8_t rec[AFPINFO_SIZE], out[16];

	memset(rec, 0, sizeof(rec));
	memcpy(rec, "AFP\0\0\0\1\0", 8);
	memcpy(rec + 16, "TYPECRTR", 8);
	rec[16 + 8] = 0x12;
	rec[16 + 9] = 0x34;
	rec[16 + 24] = 0x56;
	rec[16 + 25] = 0x78;
	aapl_finder_compress(rec, 1, 946684800 + 0x01020304, out);
	ck_assert_int_eq(memcmp(out, "TYPECRTR", 8), 0);
	ck_assert_uint_eq(out[8], 0x12);
	ck_assert_uint_eq(out[11], 0x78);
	ck_assert_uint_eq(out[12], 1);
	ck_assert_uint_eq(out[15], 4);
	/* a directory: no type and creator */
	aapl_finder_compress(rec, 0, 946684800, out);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[8], 0x12);
	/* no record: zeros and Samba's default date */
	aapl_finder_compress(NULL, 1, 0, out);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[12], 0x80);
	ck_assert_uint_eq(out[15], 0);
}
END_TEST

static Suite *
aapl_suite(void)
{
	Suite *s = suite_create("aapl");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_query_valid);
	tcase_add_test(tc, test_query_refused);
	tcase_add_test(tc, test_reply_layout);
	tcase_add_test(tc, test_afpinfo);
	tcase_add_test(tc, test_finder_compress);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(aapl_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
