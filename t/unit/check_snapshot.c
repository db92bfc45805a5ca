/*
 * Previous versions (worker/snapshot.c): which names are snapshots and at
 * what time, the @GMT token of a time, the SRV_SNAPSHOT_ARRAY a client
 * gets for every output size (MS-SMB2 2.2.32.2, 3.3.5.15.1), and which
 * share paths are inside the snapshot directory.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "worker/snapshot.h"

/* 2026-01-02 03:04:05 UTC */
#define T1	1767323045
/* 2026-02-03 04:05:06 UTC */
#define T2	1770091506

START_TEST(test_snapshot_names)
{
	int64_t t = 0;

	ck_assert_int_eq(snapshot_name_time("@GMT-2026.01.02-03.04.05",
	    SNAPSHOT_FORMAT_DEFAULT, &t), 0);
	ck_assert_int_eq(t, T1);
	/* another format (a nightly job's names), still UTC */
	ck_assert_int_eq(snapshot_name_time("daily-2026-02-03_04:05:06",
	    "daily-%Y-%m-%d_%H:%M:%S", &t), 0);
	ck_assert_int_eq(t, T2);
	/* the whole name, or none of it */
	ck_assert_int_eq(snapshot_name_time("@GMT-2026.01.02-03.04.05x",
	    SNAPSHOT_FORMAT_DEFAULT, &t), -1);
	ck_assert_int_eq(snapshot_name_time("@GMT-2026.01.02",
	    SNAPSHOT_FORMAT_DEFAULT, &t), -1);
	ck_assert_int_eq(snapshot_name_time("notasnap",
	    SNAPSHOT_FORMAT_DEFAULT, &t), -1);
	ck_assert_int_eq(snapshot_name_time("", SNAPSHOT_FORMAT_DEFAULT, &t),
	    -1);
	ck_assert_int_eq(snapshot_name_time(".", SNAPSHOT_FORMAT_DEFAULT, &t),
	    -1);
}
END_TEST

START_TEST(test_snapshot_token)
{
	char buf[SNAPSHOT_TOKEN_LEN + 1];
	int64_t t;

	snapshot_token(T1, buf);
	ck_assert_str_eq(buf, "@GMT-2026.01.02-03.04.05");
	ck_assert_int_eq(snapshot_name_time(buf, SNAPSHOT_FORMAT_DEFAULT, &t),
	    0);
	ck_assert_int_eq(t, T1);
	snapshot_token(0, buf);
	ck_assert_str_eq(buf, "@GMT-1970.01.01-00.00.00");
}
END_TEST

static size_t
put(uint8_t *buf, size_t cap, const int64_t *times, unsigned n,
    uint32_t maxout, ntstatus_t want)
{
	struct wcur w;

	memset(buf, 0xEE, cap);
	wcur_init(&w, buf, cap);
	ck_assert_uint_eq(snapshot_array_put(&w, times, n, maxout), want);
	return (size_t)(w.p - buf);
}

START_TEST(test_snapshot_array)
{
	static const int64_t times[2] = { T2, T1 };
	const char *tok[2] = { "@GMT-2026.02.03-04.05.06",
	    "@GMT-2026.01.02-03.04.05" };
	uint8_t buf[512];
	size_t len, i, k;

	/* the size alone (what Windows asks first) */
	len = put(buf, sizeof(buf), times, 2, 16, STATUS_SUCCESS);
	ck_assert_uint_eq(len, 16);
	ck_assert_uint_eq(le32_get(buf), 2);
	ck_assert_uint_eq(le32_get(buf + 4), 0);
	ck_assert_uint_eq(le32_get(buf + 8), 2 * 50 + 2);
	ck_assert_uint_eq(le32_get(buf + 12), 0);
	/* one byte short of the whole array: still the size alone */
	len = put(buf, sizeof(buf), times, 2, 12 + 101, STATUS_SUCCESS);
	ck_assert_uint_eq(len, 16);
	ck_assert_uint_eq(le32_get(buf + 4), 0);
	/* the whole array: UTF-16 tokens, each terminated, then a NUL */
	len = put(buf, sizeof(buf), times, 2, 12 + 102, STATUS_SUCCESS);
	ck_assert_uint_eq(len, 12 + 102);
	ck_assert_uint_eq(le32_get(buf), 2);
	ck_assert_uint_eq(le32_get(buf + 4), 2);
	ck_assert_uint_eq(le32_get(buf + 8), 102);
	for (i = 0; i < 2; i++) {
		const uint8_t *p = buf + 12 + i * 50;

		for (k = 0; k < SNAPSHOT_TOKEN_LEN; k++)
			ck_assert_uint_eq(le16_get(p + 2 * k),
			    (uint8_t)tok[i][k]);
		ck_assert_uint_eq(le16_get(p + 2 * SNAPSHOT_TOKEN_LEN), 0);
	}
	ck_assert_uint_eq(le16_get(buf + 12 + 100), 0);
	/* none: the counts, zero */
	len = put(buf, sizeof(buf), times, 0, 4096, STATUS_SUCCESS);
	ck_assert_uint_eq(len, 16);
	for (i = 0; i < 16; i++)
		ck_assert_uint_eq(buf[i], 0);
	/* less than the fixed part: refused (MS-SMB2 3.3.5.15.1) */
	put(buf, sizeof(buf), times, 2, 15, STATUS_INVALID_PARAMETER);
	/* a response buffer smaller than the client allows: never past it */
	len = put(buf, 40, times, 2, 4096, STATUS_BUFFER_TOO_SMALL);
	ck_assert_uint_le(len, 40);
	ck_assert_uint_eq(buf[39] == 0xEE || len == 40, 1);
}
END_TEST

START_TEST(test_snapshot_path_in)
{
	struct conf_share sh;

	memset(&sh, 0, sizeof(sh));
	ck_assert_int_eq(snapshot_path_in(&sh, ".snapshots/x"), 0);
	ck_assert_int_eq(snapshot_path_in(NULL, ".snapshots/x"), 0);
	sh.snapshot_dir = (char *)".snapshots";
	ck_assert_int_eq(snapshot_path_in(&sh, ".snapshots"), 1);
	ck_assert_int_eq(snapshot_path_in(&sh, ".snapshots/@GMT-x/a.txt"), 1);
	ck_assert_int_eq(snapshot_path_in(&sh, ".SNAPSHOTS/a"), 1);
	ck_assert_int_eq(snapshot_path_in(&sh, ".snapshotsX/a"), 0);
	ck_assert_int_eq(snapshot_path_in(&sh, ".snapshot"), 0);
	ck_assert_int_eq(snapshot_path_in(&sh, "a/.snapshots/b"), 0);
	ck_assert_int_eq(snapshot_path_in(&sh, ""), 0);
	sh.case_sensitive = 1;
	ck_assert_int_eq(snapshot_path_in(&sh, ".SNAPSHOTS/a"), 0);
	sh.snapshot_dir = (char *)"backup/snaps";
	ck_assert_int_eq(snapshot_path_in(&sh, "backup/snaps/s1/f"), 1);
	ck_assert_int_eq(snapshot_path_in(&sh, "backup/f"), 0);
}
END_TEST

/* Where the client's name starts in a name snapshot_path made. */
START_TEST(test_snapshot_name_skip)
{
	static const char g[] = ".snapshots/@GMT-2026.01.02-03.04.05";
	struct conf_share sh;

	memset(&sh, 0, sizeof(sh));
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/a", "a"),
	    0);
	sh.snapshot_dir = (char *)".snapshots";
	ck_assert_uint_eq(snapshot_name_skip(&sh,
	    ".snapshots/@GMT-2026.01.02-03.04.05/d/b.txt", "d/b.txt"),
	    sizeof(g));
	ck_assert_uint_eq(snapshot_name_skip(&sh, g, ""), sizeof(g) - 1);
	/* the client named the snapshot directory itself */
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/a",
	    ".snapshots/@GMT-x/a"), 0);
	/* not where a snapshot_path would put it */
	ck_assert_uint_eq(snapshot_name_skip(&sh, "a.txt", "a.txt"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/a.txt",
	    "a.txt"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots//a.txt",
	    "a.txt"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/", ""), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots", ""), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/d/a",
	    "a"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/a",
	    "b"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/ab",
	    "b"), 0);
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x", "x"),
	    0);
	/* compared as the share compares names */
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/A.txt",
	    "a.TXT"), 18);
	sh.case_sensitive = 1;
	ck_assert_uint_eq(snapshot_name_skip(&sh, ".snapshots/@GMT-x/A.txt",
	    "a.TXT"), 0);
}
END_TEST

static Suite *
snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_snapshot_names);
	tcase_add_test(tc, test_snapshot_token);
	tcase_add_test(tc, test_snapshot_array);
	tcase_add_test(tc, test_snapshot_path_in);
	tcase_add_test(tc, test_snapshot_name_skip);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(snapshot_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
