/*
 * A gate's binding check (worker/bindcheck.h): the question the gate sends
 * through the master, the worker's answer, the gate's check of the
 * refusal it is about to write, and the worker's answer to a question
 * about a session it does not hold or to a malformed one
 * (worker/smb2_bind.c smb2_bind_check_serve).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "worker/bindcheck.h"

#define SID	0x1122334455667788ull
#define MID	7

static uint8_t	req[SMB2_HDR_LEN + 24 + 8];
static uint8_t	rsp[BINDCHECK_RSP_LEN];
static uint8_t	buf[BINDCHECK_REQ_MAX + 64];

/* A signed binding SESSION_SETUP (MS-SMB2 2.2.1.2, 2.2.5). */
static void
mkreq(void)
{
	memset(req, 0, sizeof(req));
	memcpy(req, "\xfeSMB", 4);
	le16_put(req + 4, 64);
	le16_put(req + 6, 1);			/* CreditCharge */
	le16_put(req + 12, SMB2_SESSION_SETUP);
	le16_put(req + 14, 3);			/* CreditRequest */
	le32_put(req + 16, SMB2_FLAGS_SIGNED);
	le64_put(req + 24, MID);
	le64_put(req + 40, SID);
	memset(req + 48, 0xaa, 16);		/* a signature */
	le16_put(req + 64, 25);
	req[66] = 0x01;				/* SMB2_SESSION_FLAG_BINDING */
	le16_put(req + 76, 64 + 24);
	le16_put(req + 78, 8);
}

/* The refusal of req as the worker builds it. */
static void
mkrsp(uint32_t st, uint16_t credits)
{
	memset(rsp, 0, sizeof(rsp));
	memcpy(rsp, "\xfeSMB", 4);
	le16_put(rsp + 4, 64);
	le16_put(rsp + 6, 1);
	le32_put(rsp + 8, st);
	le16_put(rsp + 12, SMB2_SESSION_SETUP);
	le16_put(rsp + 14, credits);
	le32_put(rsp + 16, SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_SIGNED);
	le64_put(rsp + 24, MID);
	le64_put(rsp + 40, SID);
	le16_put(rsp + 64, 9);
}

static void
mkq(struct bindcheck_req *q)
{
	mkreq();
	memset(q, 0, sizeof(*q));
	q->sid = SID;
	q->dialect = 0x0210;
	q->signing_algo = 0;
	q->cipher = 0;
	q->credits = 3;
	q->msg = req;
	q->msg_len = sizeof(req);
}

START_TEST(test_req)
{
	struct bindcheck_req q, d;
	int n, i;

	mkq(&q);
	n = bindcheck_req_encode(&q, buf, sizeof(buf));
	ck_assert_int_eq(n, 8 + 8 + 4 + (int)sizeof(req));
	ck_assert_int_eq(bindcheck_req_decode(&d, buf, (size_t)n), 0);
	ck_assert(d.sid == SID && d.dialect == 0x0210 && d.credits == 3);
	ck_assert_uint_eq(d.msg_len, sizeof(req));
	ck_assert(memcmp(d.msg, req, sizeof(req)) == 0);
	ck_assert(d.msg >= buf && d.msg + d.msg_len <= buf + n);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(bindcheck_req_decode(&d, buf, (size_t)i), 0);
	ck_assert_int_ne(bindcheck_req_decode(&d, buf, (size_t)n + 1), 0);
	/* No session, a message shorter than a header, one too large. */
	q.sid = 0;
	n = bindcheck_req_encode(&q, buf, sizeof(buf));
	ck_assert_int_ne(bindcheck_req_decode(&d, buf, (size_t)n), 0);
	q.sid = SID;
	q.msg_len = 63;
	ck_assert_int_lt(bindcheck_req_encode(&q, buf, sizeof(buf)), 0);
	q.msg_len = BINDCHECK_REQ_MAX + 1;
	ck_assert_int_lt(bindcheck_req_encode(&q, buf, sizeof(buf)), 0);
	ck_assert_int_lt(bindcheck_req_encode(&q, buf, 20), 0);
}
END_TEST

START_TEST(test_rep)
{
	struct bindcheck_rep r, d;
	int n, i;

	memset(&r, 0, sizeof(r));
	r.status = STATUS_SUCCESS;
	n = bindcheck_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(n, 8);
	ck_assert_int_eq(bindcheck_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert(d.status == 0 && d.rsp == NULL && d.rsp_len == 0);
	mkrsp(STATUS_REQUEST_NOT_ACCEPTED, 3);
	r.status = STATUS_REQUEST_NOT_ACCEPTED;
	r.rsp = rsp;
	r.rsp_len = sizeof(rsp);
	n = bindcheck_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(n, 8 + BINDCHECK_RSP_LEN);
	ck_assert_int_eq(bindcheck_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert(d.rsp != NULL && memcmp(d.rsp, rsp, sizeof(rsp)) == 0);
	for (i = 0; i < n; i++)
		ck_assert_int_ne(bindcheck_rep_decode(&d, buf, (size_t)i), 0);
	ck_assert_int_ne(bindcheck_rep_decode(&d, buf, (size_t)n + 1), 0);
	/* Only no response or a whole one. */
	r.rsp_len = 10;
	ck_assert_int_lt(bindcheck_rep_encode(&r, buf, sizeof(buf)), 0);
	le32_put(buf + 4, 10);
	ck_assert_int_ne(bindcheck_rep_decode(&d, buf, 18), 0);
}
END_TEST

/* Each field the gate checks, spoiled in turn. */
START_TEST(test_rsp_check)
{
	static const struct { size_t off; uint8_t v; } bad[] = {
		{ 0, 0xfd }, { 4, 65 }, { 8, 0x01 }, { 12, 0x02 }, { 14, 4 },
		{ 16, 0x02 }, { 20, 1 }, { 24, 8 }, { 40, 0x89 }, { 64, 8 },
		{ 66, 1 }, { 68, 1 },
	};
	struct bindcheck_req q;
	struct bindcheck_rep r;
	size_t i;

	mkq(&q);
	memset(&r, 0, sizeof(r));
	r.status = STATUS_REQUEST_NOT_ACCEPTED;
	r.rsp = rsp;
	r.rsp_len = sizeof(rsp);
	mkrsp(r.status, 3);
	ck_assert_int_eq(bindcheck_rsp_check(&r, &q), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mkrsp(r.status, 3);
		rsp[bad[i].off] ^= bad[i].v;
		ck_assert_msg(bindcheck_rsp_check(&r, &q) != 0, "offset %zu",
		    bad[i].off);
	}
	/* The status it names, not success; a response must come. */
	mkrsp(r.status, 3);
	r.status = STATUS_ACCESS_DENIED;
	ck_assert_int_ne(bindcheck_rsp_check(&r, &q), 0);
	mkrsp(0, 3);
	r.status = 0;
	ck_assert_int_ne(bindcheck_rsp_check(&r, &q), 0);
	r.rsp = NULL;
	ck_assert_int_ne(bindcheck_rsp_check(&r, &q), 0);
}
END_TEST

/* No session here: no refusal built (the gate answers); garbage: refused. */
START_TEST(test_serve)
{
	struct bindcheck_req q;
	struct bindcheck_rep d;
	uint8_t out[64 + BINDCHECK_RSP_LEN];
	int n;

	mkq(&q);
	n = bindcheck_req_encode(&q, buf, sizeof(buf));
	n = smb2_bind_check_serve(buf, (size_t)n, out, sizeof(out));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(bindcheck_rep_decode(&d, out, (size_t)n), 0);
	ck_assert(d.status == STATUS_USER_SESSION_DELETED && d.rsp == NULL);
	/* A header naming another session than the question's. */
	le64_put(req + 40, SID + 1);
	n = bindcheck_req_encode(&q, buf, sizeof(buf));
	n = smb2_bind_check_serve(buf, (size_t)n, out, sizeof(out));
	ck_assert_int_eq(bindcheck_rep_decode(&d, out, (size_t)n), 0);
	ck_assert(d.status == STATUS_INVALID_PARAMETER && d.rsp == NULL);
	n = smb2_bind_check_serve(buf, 5, out, sizeof(out));
	ck_assert_int_eq(bindcheck_rep_decode(&d, out, (size_t)n), 0);
	ck_assert(d.status == STATUS_INVALID_PARAMETER && d.rsp == NULL);
}
END_TEST

static Suite *
bindcheck_suite(void)
{
	Suite *s = suite_create("bindcheck");
	TCase *tc = tcase_create("codecs");

	tcase_add_test(tc, test_req);
	tcase_add_test(tc, test_rep);
	tcase_add_test(tc, test_rsp_check);
	tcase_add_test(tc, test_serve);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(bindcheck_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
