/*
 * worker/metrics.c: the request counters, their encoding for the master
 * (MSG_METRICS_REP), the master's merge, and the Prometheus rendering.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/metrics.h"

static uint8_t	buf[8192];

START_TEST(test_request_counts)
{
	uint64_t t0;

	memset(&metrics, 0, sizeof(metrics));
	t0 = metrics_clock();
	metrics_request(8, 0, 113, 64 + 16 + 1000, t0);		/* READ 1000 bytes */
	metrics_request(9, 0, 64 + 48 + 4096, 64 + 16, t0);	/* WRITE 4096 */
	metrics_request(9, 0xC0000022, 64 + 48 + 10, 64 + 9, t0);	/* refused */
	metrics_request(200, 0, 64, 64, t0);
	ck_assert_uint_eq(metrics.cmd[8].count, 1);
	ck_assert_uint_eq(metrics.cmd[9].count, 2);
	ck_assert_uint_eq(metrics.bytes_read, 1000);
	/* A failed WRITE wrote nothing. */
	ck_assert_uint_eq(metrics.bytes_written, 4096);
	ck_assert_uint_eq(metrics.bad_command, 1);
	ck_assert_uint_eq(metrics.cmd[9].status_count[0], 1);
	ck_assert_uint_eq(metrics.cmd[9].status[1], 0xC0000022);
	/* Done at once: the first latency bucket (<= 100 us). */
	ck_assert_uint_eq(metrics.cmd[8].lat_bucket[0], 1);
}
END_TEST

START_TEST(test_status_slots_overflow)
{
	struct metrics_cmd mc;
	uint32_t i;

	memset(&mc, 0, sizeof(mc));
	for (i = 0; i < METRICS_NSTATUS + 3; i++)
		metrics_add_status(&mc, 0xC0000000u + i, 2);
	metrics_add_status(&mc, 0xC0000000u, 1);
	ck_assert_uint_eq(mc.status_count[0], 3);
	ck_assert_uint_eq(mc.status_other, 6);
}
END_TEST

START_TEST(test_encode_decode_merge)
{
	struct metrics a, b, sum;
	int n;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&sum, 0, sizeof(sum));
	a.cmd[5].count = 3;
	a.cmd[5].lat_bucket[2] = 3;
	metrics_add_status(&a.cmd[5], 0, 2);
	metrics_add_status(&a.cmd[5], 0xC0000034, 1);
	a.bytes_read = 10;
	b.cmd[5].count = 1;
	b.cmd[5].lat_bucket[13] = 1;
	metrics_add_status(&b.cmd[5], 0xC0000034, 1);
	b.bytes_written = 7;
	n = metrics_encode(&a, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	n = metrics_encode(&b, buf, sizeof(buf));
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	ck_assert_uint_eq(sum.cmd[5].count, 4);
	ck_assert_uint_eq(sum.cmd[5].lat_bucket[2], 3);
	ck_assert_uint_eq(sum.cmd[5].lat_bucket[13], 1);
	ck_assert_uint_eq(sum.cmd[5].status_count[0], 2);	/* SUCCESS */
	ck_assert_uint_eq(sum.cmd[5].status[1], 0xC0000034);
	ck_assert_uint_eq(sum.cmd[5].status_count[1], 2);	/* merged by code */
	ck_assert_uint_eq(sum.bytes_read, 10);
	ck_assert_uint_eq(sum.bytes_written, 7);
}
END_TEST

/* A gate's login counters travel and add up like the request counters. */
START_TEST(test_gate_counters)
{
	struct metrics g, sum;
	char *text = NULL;
	size_t sz = 0;
	FILE *f;
	int n;

	memset(&g, 0, sizeof(g));
	memset(&sum, 0, sizeof(sum));
	g.gate.conns = 9;
	g.gate.logins = 6;
	g.gate.auth_failures = 2;
	g.gate.timeouts = 1;
	g.cmd[0].count = 9;	/* NEGOTIATE */
	n = metrics_encode(&g, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	ck_assert_uint_eq(sum.gate.conns, 18);
	ck_assert_uint_eq(sum.gate.logins, 12);
	ck_assert_uint_eq(sum.gate.auth_failures, 4);
	ck_assert_uint_eq(sum.gate.timeouts, 2);
	ck_assert_uint_eq(sum.cmd[0].count, 18);
	f = open_memstream(&text, &sz);
	ck_assert_ptr_nonnull(f);
	metrics_print(f, &sum);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "usmbd_gate_connections_total 18\n"));
	ck_assert_ptr_nonnull(strstr(text, "usmbd_gate_logins_total 12\n"));
	ck_assert_ptr_nonnull(strstr(text, "usmbd_gate_auth_failures_total 4\n"));
	ck_assert_ptr_nonnull(strstr(text, "usmbd_gate_login_timeouts_total 2\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "# TYPE usmbd_gate_logins_total counter\n"));
	free(text);
}
END_TEST

/* The state's writer-lock meter travels, adds up and prints per kind. */
START_TEST(test_state_txn_counters)
{
	struct metrics w, sum;
	char *text = NULL;
	size_t sz = 0;
	FILE *f;
	int n;

	memset(&w, 0, sizeof(w));
	memset(&sum, 0, sizeof(sum));
	w.txn[0].txns = 200;
	w.txn[0].hold_ns = 250000;
	w.txn[0].wait_ns = 40000;
	w.txn[1].txns = 199;
	w.txn[1].hold_ns = 300000;
	w.txn[2].wait_ns = 7;
	w.txn[2].main_txns = 3;
	n = metrics_encode(&w, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), 0);
	ck_assert_uint_eq(sum.txn[0].txns, 400);
	ck_assert_uint_eq(sum.txn[0].hold_ns, 500000);
	ck_assert_uint_eq(sum.txn[0].wait_ns, 80000);
	ck_assert_uint_eq(sum.txn[1].txns, 398);
	ck_assert_uint_eq(sum.txn[2].main_txns, 6);
	ck_assert_uint_eq(sum.txn[2].wait_ns, 14);
	f = open_memstream(&text, &sz);
	ck_assert_ptr_nonnull(f);
	metrics_print(f, &sum);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_state_write_transactions_total{kind=\"create\"} 400\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_state_write_transactions_total{kind=\"close\"} 398\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_state_write_hold_seconds_total{kind=\"create\"} 0.000500000\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_state_write_wait_seconds_total{kind=\"other\"} 0.000000014\n"));
	free(text);
}
END_TEST

/*
 * metrics_add(), which the master uses to fold the last counters of an
 * exited child into its retained total, gives what decoding both gives.
 */
START_TEST(test_add_matches_decode_add)
{
	struct metrics a, b, via_add, via_decode;
	int n;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&via_add, 0, sizeof(via_add));
	memset(&via_decode, 0, sizeof(via_decode));
	a.cmd[8].count = 4;
	a.cmd[8].lat_sum_us = 77;
	a.cmd[8].lat_bucket[3] = 4;
	metrics_add_status(&a.cmd[8], 0, 3);
	metrics_add_status(&a.cmd[8], 0xC0000022, 1);
	a.bytes_read = 4096;
	a.gate.logins = 1;
	b.cmd[8].count = 2;
	b.cmd[8].lat_bucket[3] = 2;
	metrics_add_status(&b.cmd[8], 0xC0000022, 2);
	b.bad_command = 5;
	metrics_add(&via_add, &a);
	metrics_add(&via_add, &b);
	n = metrics_encode(&a, buf, sizeof(buf));
	ck_assert_int_eq(metrics_decode_add(&via_decode, buf, (size_t)n), 0);
	n = metrics_encode(&b, buf, sizeof(buf));
	ck_assert_int_eq(metrics_decode_add(&via_decode, buf, (size_t)n), 0);
	ck_assert_int_eq(memcmp(&via_add, &via_decode, sizeof(via_add)), 0);
	ck_assert_uint_eq(via_add.cmd[8].count, 6);
	ck_assert_uint_eq(via_add.cmd[8].status_count[1], 3);
	ck_assert_uint_eq(via_add.bad_command, 5);
	ck_assert_uint_eq(via_add.gate.logins, 1);
}
END_TEST

START_TEST(test_decode_rejects_truncations)
{
	struct metrics a, sum, zero;
	size_t len;
	int n;

	memset(&a, 0, sizeof(a));
	a.cmd[1].count = 5;
	n = metrics_encode(&a, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(metrics_encode(&a, buf, (size_t)n - 1), -1);
	n = metrics_encode(&a, buf, sizeof(buf));
	memset(&zero, 0, sizeof(zero));
	for (len = 0; len < (size_t)n; len++) {
		memset(&sum, 0, sizeof(sum));
		ck_assert_int_eq(metrics_decode_add(&sum, buf, len), -1);
		/* A rejected message adds nothing. */
		ck_assert_int_eq(memcmp(&sum, &zero, sizeof(sum)), 0);
	}
	/* Trailing bytes and a wrong version are refused too. */
	buf[n] = 0;
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n + 1), -1);
	buf[0] ^= 0xff;
	ck_assert_int_eq(metrics_decode_add(&sum, buf, (size_t)n), -1);
}
END_TEST

START_TEST(test_print_prometheus)
{
	struct metrics m;
	char *text = NULL;
	size_t sz = 0;
	FILE *f;

	memset(&m, 0, sizeof(m));
	m.cmd[8].count = 2;
	m.cmd[8].lat_sum_us = 1500;
	m.cmd[8].lat_bucket[0] = 1;
	m.cmd[8].lat_bucket[4] = 1;
	metrics_add_status(&m.cmd[8], 0, 2);
	f = open_memstream(&text, &sz);
	ck_assert_ptr_nonnull(f);
	metrics_print(f, &m);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_requests_total{command=\"READ\",status=\"0x00000000\"} 2\n"));
	/* Buckets are cumulative and end with +Inf = count. */
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_request_duration_seconds_bucket{command=\"READ\",le=\"0.001\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_request_duration_seconds_bucket{command=\"READ\",le=\"0.0025\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_request_duration_seconds_bucket{command=\"READ\",le=\"+Inf\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text,
	    "usmbd_request_duration_seconds_sum{command=\"READ\"} 0.001500\n"));
	ck_assert_ptr_nonnull(strstr(text, "# TYPE usmbd_request_duration_seconds histogram\n"));
	/* Commands never seen get no histogram. */
	ck_assert_ptr_null(strstr(text, "command=\"WRITE\",le="));
	ck_assert_str_eq(metrics_cmd_name(5), "CREATE");
	ck_assert_str_eq(metrics_cmd_name(99), "UNKNOWN");
	free(text);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_request_counts);
	tcase_add_test(tc, test_status_slots_overflow);
	tcase_add_test(tc, test_encode_decode_merge);
	tcase_add_test(tc, test_gate_counters);
	tcase_add_test(tc, test_state_txn_counters);
	tcase_add_test(tc, test_add_matches_decode_add);
	tcase_add_test(tc, test_decode_rejects_truncations);
	tcase_add_test(tc, test_print_prometheus);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(metrics_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
