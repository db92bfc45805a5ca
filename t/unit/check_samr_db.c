/*
 * The samr pipe's account list (worker/samr_db.c): malformed lists
 * refused, names no account could have left out alone, and the master's
 * encoder (daemon/userlist.c) against the worker's decoder.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/passdb.h"
#include "daemon/userlist.h"
#include "proto/cur.h"
#include "worker/samr_db.h"

START_TEST(test_db_set)
{
	uint8_t buf[32];
	const struct samr_acct *t;

	/* trailing bytes, an empty name, a count the payload lacks: all
	 * refused, the list left empty; a NUL or a backslash in a name:
	 * that entry alone left out */
	le32_put(buf, 1);
	le32_put(buf + 4, 5);
	le32_put(buf + 8, 0);
	buf[12] = 3;
	memcpy(buf + 13, "abc", 3);
	ck_assert_int_eq(samr_db_set(buf, 16), 0);
	ck_assert_uint_eq(samr_db_users(&t), 1);
	ck_assert_str_eq(t[0].name, "abc");
	ck_assert_int_ne(samr_db_set(buf, 17), 0);
	ck_assert_uint_eq(samr_db_users(&t), 0);
	memcpy(buf + 13, "a\0c", 3);
	ck_assert_int_eq(samr_db_set(buf, 16), 0);
	ck_assert_uint_eq(samr_db_users(&t), 0);
	memcpy(buf + 13, "a\\c", 3);
	ck_assert_int_eq(samr_db_set(buf, 16), 0);
	ck_assert_uint_eq(samr_db_users(&t), 0);
	/* beside a good one: the good one listed */
	{
		uint8_t two[40];

		le32_put(two, 2);
		le32_put(two + 4, 5);
		le32_put(two + 8, 0);
		two[12] = 3;
		memcpy(two + 13, "a\\c", 3);
		le32_put(two + 16, 6);
		le32_put(two + 20, 0);
		two[24] = 3;
		memcpy(two + 25, "bob", 3);
		ck_assert_int_eq(samr_db_set(two, 28), 0);
		ck_assert_uint_eq(samr_db_users(&t), 1);
		ck_assert_str_eq(t[0].name, "bob");
	}
	buf[12] = 0;
	ck_assert_int_ne(samr_db_set(buf, 13), 0);
	le32_put(buf, 2);
	buf[12] = 3;
	memcpy(buf + 13, "abc", 3);
	ck_assert_int_ne(samr_db_set(buf, 16), 0);
	le32_put(buf, SAMR_DB_MAX_USERS + 1);
	ck_assert_int_ne(samr_db_set(buf, 16), 0);
	ck_assert_int_ne(samr_db_set(buf, 3), 0);
	ck_assert_uint_eq(samr_db_users(&t), 0);
}
END_TEST

/* The master's encoder (daemon/userlist.c) and the worker's decoder
 * agree: a passdb of three names for two accounts, one disabled. */
START_TEST(test_userlist_roundtrip)
{
	char dir[64] = "/tmp/check_samr.XXXXXX", priv[128], cmd[160];
	static uint8_t buf[65536];
	const struct samr_acct *t;
	struct passdb_entry e;
	struct passdb *db;
	size_t len;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(priv, sizeof(priv), "%s/private", dir);
	ck_assert_int_eq(passdb_open(priv, 0, &db), 0);
	for (i = 0; i < 3; i++) {
		memset(&e, 0, sizeof(e));
		snprintf(e.name, sizeof(e.name), "%s", i == 2 ? "Alias" : i ?
		    "bob" : "alice");
		snprintf(e.unix_name, sizeof(e.unix_name), "%s", i ? "bob" :
		    "alice");
		e.uid = i ? 1002 : 1001;
		e.flags = i == 1 ? PASSDB_FLAG_DISABLED : 0;
		ck_assert_int_eq(passdb_put(db, &e), 0);
	}
	ck_assert_int_eq(userlist_encode(db, buf, sizeof(buf), &len), 0);
	ck_assert_int_eq(samr_db_set(buf, len), 0);
	ck_assert_uint_eq(samr_db_users(&t), 2);
	ck_assert_uint_eq(t[0].id, 1001);
	ck_assert_str_eq(t[0].name, "alice");
	ck_assert_uint_eq(t[0].flags, 0);
	ck_assert_uint_eq(t[1].id, 1002);
	ck_assert_str_eq(t[1].name, "bob");
	/* enabled under one of its names: enabled */
	ck_assert_uint_eq(t[1].flags, 0);
	/* a buffer for one entry: the first whole entry only */
	ck_assert_int_eq(userlist_encode(db, buf, 4 + 9 + 5 + 3, &len), 0);
	ck_assert_int_eq(samr_db_set(buf, len), 0);
	ck_assert_uint_eq(samr_db_users(&t), 1);
	passdb_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *
samr_db_suite(void)
{
	Suite *s = suite_create("samr_db");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_db_set);
	tcase_add_test(tc, test_userlist_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(samr_db_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
