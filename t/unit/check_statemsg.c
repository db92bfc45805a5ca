/*
 * Unit tests for daemon/statemsg.c, the messages between the master and
 * the state process: round trips, every truncation of a valid payload
 * refused, trailing bytes refused, the status answer cut short (and
 * saying so) when records do not fit, strings with NUL or too long
 * refused, an unknown record kind refused; the durable record (whether
 * an open is resilient, its timeout) with them.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/msg.h"
#include "daemon/statemsg.h"
#include "proto/cur.h"

static uint8_t buf[MSG_MAX_PAYLOAD];

static const struct statemsg_sess sess = { .id = 0xabcdef, .pid = 77,
    .uid = 1001, .user = "alice", .addr = "127.0.0.1", .dialect = 0x311,
    .signing = 2, .encryption = 1, .since = 1700000000 };
static const struct statemsg_open opn = { .dev = 2049, .ino = 12,
    .pers = 9, .pid = 77, .sid = 0xabcdef, .access = 0x12019f,
    .share_access = 7, .oplock = 0xff, .lease_state = 5, .flags = 3,
    .since = 1700000001, .share = "share", .path = "dir/file.txt" };
static const struct statemsg_lock lck = { .dev = 2049, .ino = 12,
    .pid = 77, .pers = 9, .offset = 100, .length = 10, .exclusive = 1 };
static const struct statemsg_durable dur = { .pers = 9, .flags = 4 | 2,
    .timeout_ms = 120000 };

struct seen {
	int	nsess, nopen, nlock, ndur;
	struct statemsg_sess s;
	struct statemsg_open o;
	struct statemsg_lock l;
	struct statemsg_durable d;
};

static int
on_sess(const struct statemsg_sess *s, void *arg)
{
	struct seen *x = arg;

	x->s = *s;
	x->nsess++;
	return 0;
}

static int
on_open(const struct statemsg_open *o, void *arg)
{
	struct seen *x = arg;

	x->o = *o;
	x->nopen++;
	return 0;
}

static int
on_lock(const struct statemsg_lock *l, void *arg)
{
	struct seen *x = arg;

	x->l = *l;
	x->nlock++;
	return 0;
}

static int
on_durable(const struct statemsg_durable *d, void *arg)
{
	struct seen *x = arg;

	x->d = *d;
	x->ndur++;
	return 0;
}

static size_t
info_three(uint8_t *b, size_t cap)
{
	struct statemsg_info_enc e;

	statemsg_info_begin(&e, b, cap);
	ck_assert_int_eq(statemsg_info_sess(&e, &sess), 0);
	ck_assert_int_eq(statemsg_info_open(&e, &opn), 0);
	ck_assert_int_eq(statemsg_info_lock(&e, &lck), 0);
	ck_assert_int_eq(statemsg_info_durable(&e, &dur), 0);
	return statemsg_info_end(&e);
}

START_TEST(test_info_round_trip)
{
	struct seen x;
	struct statemsg_info_cb cb = { on_sess, on_open, on_lock, &x,
	    on_durable };
	size_t len = info_three(buf, sizeof(buf));
	int truncated = -1;

	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), 0);
	ck_assert_int_eq(truncated, 0);
	ck_assert_int_eq(x.nsess, 1);
	ck_assert_int_eq(x.nopen, 1);
	ck_assert_int_eq(x.nlock, 1);
	ck_assert_int_eq(x.ndur, 1);
	ck_assert_mem_eq(&x.s, &sess, sizeof(sess));
	ck_assert_mem_eq(&x.o, &opn, sizeof(opn));
	ck_assert_mem_eq(&x.l, &lck, sizeof(lck));
	ck_assert_mem_eq(&x.d, &dur, sizeof(dur));
	/* a reader without a durable callback skips the record */
	cb.durable = NULL;
	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), 0);
	ck_assert_int_eq(x.nlock, 1);
	ck_assert_int_eq(x.ndur, 0);
}
END_TEST

START_TEST(test_info_every_truncation)
{
	struct seen x;
	struct statemsg_info_cb cb = { on_sess, on_open, on_lock, &x,
	    on_durable };
	size_t len = info_three(buf, sizeof(buf)), n;
	uint8_t *copy;
	int truncated;

	for (n = 0; n < len; n++) {
		/* A copy of exactly n bytes: ASan sees any read past it. */
		copy = malloc(n ? n : 1);
		memcpy(copy, buf, n);
		memset(&x, 0, sizeof(x));
		ck_assert_int_eq(statemsg_info_decode(copy, n, &cb, &truncated), -1);
		free(copy);
	}
	/* A trailing byte is refused too. */
	buf[len] = 0;
	ck_assert_int_eq(statemsg_info_decode(buf, len + 1, &cb, &truncated), -1);
}
END_TEST

START_TEST(test_info_cut_short)
{
	struct statemsg_info_enc e;
	struct seen x;
	struct statemsg_info_cb cb = { on_sess, on_open, on_lock, &x,
	    on_durable };
	uint8_t small[200];
	size_t len;
	int i, truncated = 0, took = 0;

	statemsg_info_begin(&e, small, sizeof(small));
	for (i = 0; i < 10; i++)
		if (statemsg_info_sess(&e, &sess) == 0)
			took++;
	ck_assert_int_gt(took, 0);
	ck_assert_int_lt(took, 10);
	len = statemsg_info_end(&e);
	ck_assert_uint_le(len, sizeof(small));
	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(statemsg_info_decode(small, len, &cb, &truncated), 0);
	ck_assert_int_eq(truncated, 1);
	ck_assert_int_eq(x.nsess, took);
}
END_TEST

START_TEST(test_info_bad_records)
{
	struct seen x;
	struct statemsg_info_cb cb = { on_sess, on_open, on_lock, &x,
	    on_durable };
	size_t len = info_three(buf, sizeof(buf));
	int truncated;
	size_t user_at = 4 + 1 + 8 + 4 + 4 + 2;	/* magic, kind, id, pid, uid, len */

	/* A NUL inside a string. */
	buf[user_at + 1] = '\0';
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), -1);
	/* A string length past its field. */
	len = info_three(buf, sizeof(buf));
	le16_put(buf + user_at - 2, STATEMSG_NAME_MAX);
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), -1);
	/* An unknown record kind. */
	len = info_three(buf, sizeof(buf));
	buf[4] = 9;
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), -1);
	/* Another magic. */
	len = info_three(buf, sizeof(buf));
	buf[0] ^= 1;
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), -1);
	/* A truncated flag that is not 0 or 1. */
	len = info_three(buf, sizeof(buf));
	buf[len - 1] = 2;
	ck_assert_int_eq(statemsg_info_decode(buf, len, &cb, &truncated), -1);
}
END_TEST

START_TEST(test_fixed_round_trips)
{
	static struct statemsg_purge p, q;
	struct statemsg_counts c = { 1, 2, 3, 4 }, c2;
	struct statemsg_writer w = { 77, 1500 }, w2;
	int n, k;

	n = statemsg_counts_encode(&c, buf, sizeof(buf));
	ck_assert_int_eq(n, 32);
	ck_assert_int_eq(statemsg_counts_decode(&c2, buf, (size_t)n), 0);
	ck_assert_mem_eq(&c, &c2, sizeof(c));
	for (k = 0; k < n; k++)
		ck_assert_int_eq(statemsg_counts_decode(&c2, buf, (size_t)k), -1);
	ck_assert_int_eq(statemsg_counts_decode(&c2, buf, (size_t)n + 1), -1);

	n = statemsg_writer_encode(&w, buf, sizeof(buf));
	ck_assert_int_eq(n, 8);
	ck_assert_int_eq(statemsg_writer_decode(&w2, buf, (size_t)n), 0);
	ck_assert_uint_eq(w2.pid, 77);
	ck_assert_uint_eq(w2.held_ms, 1500);
	for (k = 0; k < n; k++)
		ck_assert_int_eq(statemsg_writer_decode(&w2, buf, (size_t)k), -1);

	p.pid = 42;
	p.nlive = STATEMSG_LIVE_MAX;
	for (k = 0; k < STATEMSG_LIVE_MAX; k++)
		p.live[k] = (uint32_t)(1000 + k);
	n = statemsg_purge_encode(&p, buf, sizeof(buf));
	ck_assert_int_eq(n, 6 + 4 * STATEMSG_LIVE_MAX);
	ck_assert_int_eq(statemsg_purge_decode(&q, buf, (size_t)n), 0);
	ck_assert_uint_eq(q.pid, 42);
	ck_assert_uint_eq(q.nlive, STATEMSG_LIVE_MAX);
	ck_assert_uint_eq(q.live[STATEMSG_LIVE_MAX - 1], 1000 + STATEMSG_LIVE_MAX - 1);
	for (k = 0; k < n; k++)
		ck_assert_int_eq(statemsg_purge_decode(&q, buf, (size_t)k), -1);
	/* More live pids than the table holds: refused before any is read. */
	le16_put(buf + 4, STATEMSG_LIVE_MAX + 1);
	ck_assert_int_eq(statemsg_purge_decode(&q, buf, (size_t)n + 4), -1);
	/* The encoder refuses what it cannot send. */
	p.nlive = STATEMSG_LIVE_MAX + 1;
	ck_assert_int_eq(statemsg_purge_encode(&p, buf, sizeof(buf)), -1);
	p.nlive = 1;
	ck_assert_int_eq(statemsg_purge_encode(&p, buf, 9), -1);
}
END_TEST

static Suite *
statemsg_suite(void)
{
	Suite *s = suite_create("statemsg");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_info_round_trip);
	tcase_add_test(tc, test_info_every_truncation);
	tcase_add_test(tc, test_info_cut_short);
	tcase_add_test(tc, test_info_bad_records);
	tcase_add_test(tc, test_fixed_round_trips);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(statemsg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
