/* Unit tests for daemon/passdb.c: LMDB round trip, permissions, NT hash. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/passdb.h"

static char tmpdir[64];
static char privdir[128];

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_passdb.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	/* two levels, so passdb_open has to create the parents too */
	snprintf(privdir, sizeof(privdir), "%s/var/private", tmpdir);
}

static void
teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmpdir);
}

static void
entry_make(struct passdb_entry *e, const char *name, uid_t uid, const char *pw)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->unix_name, sizeof(e->unix_name), "%s", name);
	e->uid = uid;
	ck_assert_int_eq(passdb_nt_hash(pw, e->nt_hash), 0);
	e->changed = 1700000000;
	e->last_logon = 1700000100;
	e->failed_logons = 3;
}

static void
hex(const uint8_t *h, char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

START_TEST(test_nt_hash_known_answer)
{
	uint8_t h[16];
	char s[33];

	/* MS-NLMP 4.2.2.1.2: NTOWFv1("Password") */
	ck_assert_int_eq(passdb_nt_hash("Password", h), 0);
	hex(h, s);
	ck_assert_str_eq(s, "a4f49c406510bdcab6824ee7c30fd852");
	/* the empty password, a well-known value */
	ck_assert_int_eq(passdb_nt_hash("", h), 0);
	hex(h, s);
	ck_assert_str_eq(s, "31d6cfe0d16ae931b73c59d7e0c089c0");
}
END_TEST

START_TEST(test_nt_hash_non_ascii)
{
	uint8_t a[16], b[16];

	/* "é" is not "e"; exact values are in test_nt_hash_known_non_ascii */
	ck_assert_int_eq(passdb_nt_hash("caf\xc3\xa9", a), 0);
	ck_assert_int_eq(passdb_nt_hash("cafe", b), 0);
	ck_assert_mem_ne(a, b, 16);
	/* U+1F600 (4 bytes of UTF-8) is accepted */
	ck_assert_int_eq(passdb_nt_hash("x\xf0\x9f\x98\x80y", a), 0);
	/* invalid UTF-8 is refused and the output zeroed */
	ck_assert_int_eq(passdb_nt_hash("\xc3", a), -EINVAL);		/* truncated */
	ck_assert_int_eq(passdb_nt_hash("\xc0\xaf", a), -EINVAL);	/* overlong */
	ck_assert_int_eq(passdb_nt_hash("\xed\xa0\x80", a), -EINVAL);	/* surrogate */
	ck_assert_int_eq(passdb_nt_hash("\xf4\x90\x80\x80", a), -EINVAL);/* > U+10FFFF */
	ck_assert_int_eq(passdb_nt_hash("\xff", a), -EINVAL);
	memset(b, 0, 16);
	ck_assert_mem_eq(a, b, 16);
}
END_TEST

START_TEST(test_nt_hash_known_non_ascii)
{
	uint8_t h[16];
	char s[33];

	char pw[400];

	/*
	 * Known answers computed independently: a separate MD4 (RFC 1320)
	 * over Python's pw.encode("utf-16-le"), checked first against the
	 * MS-NLMP vector above.  "é", U+1F600 (the surrogate pair path) and a
	 * password longer than the hashing buffer.
	 */
	ck_assert_int_eq(passdb_nt_hash("\xc3\xa9", h), 0);
	hex(h, s);
	ck_assert_str_eq(s, "e77286d072c7858e9110cc3a011d2ac8");
	ck_assert_int_eq(passdb_nt_hash("\xf0\x9f\x98\x80", h), 0);
	hex(h, s);
	ck_assert_str_eq(s, "4b58a10cc20a4e7d808d218e1f80aabc");
	memset(pw, 'x', 300);
	memcpy(pw + 300, "\xc3\xa9", 3);
	ck_assert_int_eq(passdb_nt_hash(pw, h), 0);
	hex(h, s);
	ck_assert_str_eq(s, "8b8315188ec0df03f32d2414cfb13125");
}
END_TEST

START_TEST(test_round_trip)
{
	struct passdb *db;
	struct passdb_entry e, got;

	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	entry_make(&e, "Alice", 1001, "secret-1");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	ck_assert_int_eq(passdb_get(db, "Alice", &got), 0);
	ck_assert_str_eq(got.name, "Alice");
	ck_assert_str_eq(got.unix_name, "Alice");
	ck_assert_uint_eq(got.uid, 1001);
	ck_assert_mem_eq(got.nt_hash, e.nt_hash, 16);
	ck_assert_int_eq(got.changed, 1700000000);
	ck_assert_int_eq(got.last_logon, 1700000100);
	ck_assert_uint_eq(got.failed_logons, 3);
	ck_assert_uint_eq(got.flags, 0);

	/* case-insensitive lookup, and a put under another case replaces */
	ck_assert_int_eq(passdb_get(db, "ALICE", &got), 0);
	ck_assert_int_eq(passdb_get(db, "alice", &got), 0);
	e.flags = PASSDB_FLAG_DISABLED;
	snprintf(e.name, sizeof(e.name), "alice");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	ck_assert_int_eq(passdb_get(db, "Alice", &got), 0);
	ck_assert_uint_eq(got.flags, PASSDB_FLAG_DISABLED);
	ck_assert_str_eq(got.name, "alice");

	ck_assert_int_eq(passdb_get(db, "bob", &got), -ENOENT);
	ck_assert_int_eq(passdb_del(db, "bob"), -ENOENT);
	ck_assert_int_eq(passdb_del(db, "ALICE"), 0);
	ck_assert_int_eq(passdb_get(db, "alice", &got), -ENOENT);
	passdb_close(db);
}
END_TEST

START_TEST(test_persist_and_readonly)
{
	struct passdb *db;
	struct passdb_entry e, got;

	/* read-only on a missing database fails rather than creating one */
	ck_assert_int_lt(passdb_open(privdir, 1, &db), 0);
	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	entry_make(&e, "carol", 1003, "pw");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	passdb_close(db);

	ck_assert_int_eq(passdb_open(privdir, 1, &db), 0);
	ck_assert_int_eq(passdb_get(db, "carol", &got), 0);
	ck_assert_mem_eq(got.nt_hash, e.nt_hash, 16);
	ck_assert_int_eq(passdb_put(db, &e), -EROFS);
	ck_assert_int_eq(passdb_del(db, "carol"), -EROFS);
	passdb_close(db);
}
END_TEST

START_TEST(test_permissions)
{
	struct passdb *db;
	struct passdb_entry e;
	char path[256];
	struct stat st;

	umask(022);	/* a lax umask must not leak into the files */
	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	entry_make(&e, "dave", 1004, "pw");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	ck_assert_int_eq(stat(privdir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/passdb.mdb", privdir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	snprintf(path, sizeof(path), "%s/passdb.mdb-lock", privdir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	passdb_close(db);

	/* an existing directory with loose permissions is tightened */
	ck_assert_int_eq(chmod(privdir, 0755), 0);
	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	ck_assert_int_eq(stat(privdir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	passdb_close(db);
}
END_TEST

struct collect {
	char	names[8][PASSDB_NAME_MAX];
	int	n;
	int	stop_at;
};

static int
collect_fn(const struct passdb_entry *e, void *arg)
{
	struct collect *c = arg;

	if (c->n == c->stop_at)
		return 42;
	snprintf(c->names[c->n++], PASSDB_NAME_MAX, "%s", e->name);
	return 0;
}

START_TEST(test_foreach)
{
	struct passdb *db;
	struct passdb_entry e;
	struct collect c;

	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	memset(&c, 0, sizeof(c));
	c.stop_at = -1;
	ck_assert_int_eq(passdb_foreach(db, collect_fn, &c), 0);
	ck_assert_int_eq(c.n, 0);

	entry_make(&e, "zed", 1010, "a");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	entry_make(&e, "Bob", 1011, "b");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	entry_make(&e, "anna", 1012, "c");
	ck_assert_int_eq(passdb_put(db, &e), 0);

	memset(&c, 0, sizeof(c));
	c.stop_at = -1;
	ck_assert_int_eq(passdb_foreach(db, collect_fn, &c), 0);
	ck_assert_int_eq(c.n, 3);
	/* name order is the order of the lower-cased keys */
	ck_assert_str_eq(c.names[0], "anna");
	ck_assert_str_eq(c.names[1], "Bob");
	ck_assert_str_eq(c.names[2], "zed");

	memset(&c, 0, sizeof(c));
	c.stop_at = 1;
	ck_assert_int_eq(passdb_foreach(db, collect_fn, &c), 42);
	ck_assert_int_eq(c.n, 1);
	passdb_close(db);
}
END_TEST

START_TEST(test_bad_names)
{
	struct passdb *db;
	struct passdb_entry e, got;

	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	entry_make(&e, "", 1, "x");
	ck_assert_int_eq(passdb_put(db, &e), -EINVAL);
	entry_make(&e, "a:b", 1, "x");
	ck_assert_int_eq(passdb_put(db, &e), -EINVAL);
	entry_make(&e, "a\nb", 1, "x");
	ck_assert_int_eq(passdb_put(db, &e), -EINVAL);
	/* a name that fills the buffer without a terminator */
	entry_make(&e, "ok", 1, "x");
	memset(e.name, 'a', sizeof(e.name));
	ck_assert_int_eq(passdb_put(db, &e), -EINVAL);
	ck_assert_int_eq(passdb_get(db, "", &got), -ENOENT);
	passdb_close(db);
}
END_TEST

/* The lockout policy: absent is all zero, set reads back, and foreach skips it. */
START_TEST(test_policy)
{
	struct passdb_policy p = { 5, 30 }, got;
	struct passdb *db;
	struct passdb_entry e;
	struct collect c;

	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	ck_assert_int_eq(passdb_policy_get(db, &got), 0);
	ck_assert_uint_eq(got.bad_lockout_attempts, 0);
	ck_assert_uint_eq(got.lockout_duration, 0);
	ck_assert_int_eq(passdb_policy_put(db, &p), 0);
	entry_make(&e, "anna", 1012, "c");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	passdb_close(db);
	ck_assert_int_eq(passdb_open(privdir, 1, &db), 0);
	ck_assert_int_eq(passdb_policy_get(db, &got), 0);
	ck_assert_uint_eq(got.bad_lockout_attempts, 5);
	ck_assert_uint_eq(got.lockout_duration, 30);
	memset(&c, 0, sizeof(c));
	c.stop_at = -1;
	ck_assert_int_eq(passdb_foreach(db, collect_fn, &c), 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_str_eq(c.names[0], "anna");
	passdb_close(db);
}
END_TEST

/* Batched failures: added in one transaction, reset, lockout, unknown names skipped. */
START_TEST(test_note_failures)
{
	struct passdb_failures f[3];
	struct passdb *db;
	struct passdb_entry e, got;

	ck_assert_int_eq(passdb_open(privdir, 0, &db), 0);
	entry_make(&e, "Anna", 1012, "c");		/* 3 failed logons */
	ck_assert_int_eq(passdb_put(db, &e), 0);
	entry_make(&e, "bob", 1013, "d");
	ck_assert_int_eq(passdb_put(db, &e), 0);
	memset(f, 0, sizeof(f));
	snprintf(f[0].name, sizeof(f[0].name), "anna");
	f[0].count = 2;
	f[0].locked_at = 1700000500;
	snprintf(f[1].name, sizeof(f[1].name), "nobody-here");
	f[1].count = 7;
	snprintf(f[2].name, sizeof(f[2].name), "bob");
	f[2].count = 1;
	f[2].reset = 1;
	ck_assert_int_eq(passdb_note_failures(db, f, 3), 0);
	ck_assert_int_eq(passdb_get(db, "anna", &got), 0);
	ck_assert_uint_eq(got.failed_logons, 5);
	ck_assert_int_eq(got.locked_at, 1700000500);
	ck_assert_int_eq(passdb_get(db, "bob", &got), 0);
	ck_assert_uint_eq(got.failed_logons, 1);
	ck_assert_int_eq(got.locked_at, 0);
	ck_assert_int_eq(passdb_get(db, "nobody-here", &got), -ENOENT);
	passdb_close(db);
}
END_TEST

static Suite *
passdb_suite(void)
{
	Suite *s = suite_create("passdb");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nt_hash_known_answer);
	tcase_add_test(tc, test_nt_hash_non_ascii);
	tcase_add_test(tc, test_nt_hash_known_non_ascii);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_persist_and_readonly);
	tcase_add_test(tc, test_permissions);
	tcase_add_test(tc, test_foreach);
	tcase_add_test(tc, test_bad_names);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_note_failures);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(passdb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
