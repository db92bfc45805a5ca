/*
 * Unit tests for daemon/admmsg.c, the payload of MSG_ADMIN_REQ and
 * MSG_ADMIN_DO (an administrator's NetrFileClose and NetrSessionDel):
 * round trips of both operations, every truncation of each refused,
 * trailing bytes refused, an unknown operation, a string with a NUL or
 * one too long refused, and the encoder's refusals.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/admmsg.h"
#include "proto/cur.h"

static uint8_t buf[ADMMSG_MAX_LEN + 16];

static int
enc_close(uint32_t id)
{
	struct admmsg_req r;

	memset(&r, 0, sizeof(r));
	r.op = ADMMSG_FILE_CLOSE;
	r.file_id = id;
	return admmsg_encode(&r, buf, sizeof(buf));
}

static int
enc_del(const char *client, const char *user)
{
	struct admmsg_req r;

	memset(&r, 0, sizeof(r));
	r.op = ADMMSG_SESS_DEL;
	strlcpy(r.client, client, sizeof(r.client));
	strlcpy(r.user, user, sizeof(r.user));
	return admmsg_encode(&r, buf, sizeof(buf));
}

START_TEST(test_round_trips)
{
	struct admmsg_req r;
	int n;

	n = enc_close(0xdeadbeef);
	ck_assert_int_eq(n, 5);
	ck_assert_uint_eq(buf[0], ADMMSG_FILE_CLOSE);
	ck_assert_uint_eq(le32_get(buf + 1), 0xdeadbeef);
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), 0);
	ck_assert_uint_eq(r.op, ADMMSG_FILE_CLOSE);
	ck_assert_uint_eq(r.file_id, 0xdeadbeef);

	n = enc_del("\\\\10.0.0.7", "bob");
	ck_assert_int_eq(n, 1 + 2 + 10 + 2 + 3);
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), 0);
	ck_assert_uint_eq(r.op, ADMMSG_SESS_DEL);
	ck_assert_str_eq(r.client, "\\\\10.0.0.7");
	ck_assert_str_eq(r.user, "bob");
	ck_assert_uint_eq(r.file_id, 0);

	/* empty names ("any") travel as such; the master judges them */
	n = enc_del("", "");
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), 0);
	ck_assert_str_eq(r.client, "");
	ck_assert_str_eq(r.user, "");
}
END_TEST

/* Every prefix of a valid payload is refused, and leaves r zeroed. */
static void
every_truncation(int n)
{
	struct admmsg_req r;
	uint8_t *cut;
	int i;

	for (i = 0; i < n; i++) {
		cut = malloc(i ? (size_t)i : 1);	/* ASan sees an overread */
		memcpy(cut, buf, (size_t)i);
		memset(&r, 0xa5, sizeof(r));
		ck_assert_int_eq(admmsg_decode(&r, cut, (size_t)i), -1);
		ck_assert_uint_eq(r.op, 0);
		ck_assert_uint_eq(r.file_id, 0);
		ck_assert_str_eq(r.user, "");
		free(cut);
	}
	/* and one byte more */
	buf[n] = 0;
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n + 1), -1);
}

START_TEST(test_every_truncation)
{
	every_truncation(enc_close(7));
	every_truncation(enc_del("\\\\host", "alice"));
	every_truncation(enc_del("", "alice"));
}
END_TEST

START_TEST(test_malformed)
{
	struct admmsg_req r;
	int n;

	/* unknown operations */
	n = enc_close(7);
	buf[0] = 0;
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), -1);
	buf[0] = 3;
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), -1);
	/* a NUL inside a name */
	n = enc_del("host", "bob");
	buf[4] = '\0';
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), -1);
	/* a name as long as its field (no room for the NUL) */
	memset(buf, 'a', sizeof(buf));
	buf[0] = ADMMSG_SESS_DEL;
	le16_put(buf + 1, ADMMSG_NAME_MAX);
	ck_assert_int_eq(admmsg_decode(&r, buf, 1 + 2 + ADMMSG_NAME_MAX + 2),
	    -1);
	/* a length past the end */
	n = enc_del("h", "u");
	le16_put(buf + 1 + 2 + 1, 200);
	ck_assert_int_eq(admmsg_decode(&r, buf, (size_t)n), -1);
}
END_TEST

START_TEST(test_encoder_refuses)
{
	struct admmsg_req r;

	memset(&r, 0, sizeof(r));
	r.op = 9;
	ck_assert_int_eq(admmsg_encode(&r, buf, sizeof(buf)), -1);
	/* a name without its NUL in the field */
	r.op = ADMMSG_SESS_DEL;
	memset(r.client, 'c', sizeof(r.client));
	ck_assert_int_eq(admmsg_encode(&r, buf, sizeof(buf)), -1);
	/* no room */
	ck_assert_int_eq(enc_close(1), 5);
	memset(&r, 0, sizeof(r));
	r.op = ADMMSG_FILE_CLOSE;
	ck_assert_int_eq(admmsg_encode(&r, buf, 4), -1);
	r.op = ADMMSG_SESS_DEL;
	strlcpy(r.user, "bob", sizeof(r.user));
	ck_assert_int_eq(admmsg_encode(&r, buf, 7), -1);
	ck_assert_int_eq(admmsg_encode(&r, buf, 8), 8);
}
END_TEST

static Suite *
admmsg_suite(void)
{
	Suite *s = suite_create("admmsg");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_encoder_refuses);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(admmsg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
