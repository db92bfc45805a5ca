/*
 * Unit tests for the worker's CREATE context parser
 * (worker/smb2_create_ctx.c smb2_create_parse_contexts): what each context
 * sets, the dialect and negotiation rules, the refusals, and every
 * truncation of a chain of every context refused.  The fuzz target is
 * t/fuzz/fuzz_createctx.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/posix.h"
#include "worker/conn.h"
#include "worker/conn_priv.h"
#include "worker/durable.h"
#include "worker/smb2.h"
#include "worker/smb2_create_ctx.h"

#define LEAD	120	/* header and CREATE body before the chain */

static const uint8_t app_id_tag[16] = {
	0x45, 0xBC, 0xA6, 0x6A, 0xEF, 0xA7, 0xF7, 0x4A,
	0x90, 0x08, 0xFA, 0x46, 0x2E, 0x14, 0x4D, 0x74
};

static uint8_t msg[4096];
static size_t msg_len;		/* LEAD + the chain */
static size_t last_at;		/* the last context's offset, for chaining */
static size_t real_end;		/* where its last byte ends, before padding */
static struct conf_share share;
static struct tree tree;
static struct conn conn;
static struct smb2_req req;
static struct create_ctx cc;

static void
reset(uint16_t dialect, int leasing, int posix)
{
	memset(msg, 0, sizeof(msg));
	msg_len = LEAD;
	last_at = 0;
	memset(&conn, 0, sizeof(conn));
	conn.dialect = dialect;
	conn.capabilities = leasing ? SMB2_GLOBAL_CAP_LEASING : 0;
	conn.posix = posix;
	memset(&share, 0, sizeof(share));
	share.smb3_unix_extensions = 1;
	memset(&tree, 0, sizeof(tree));
	tree.share = &share;
	memset(&req, 0, sizeof(req));
	req.conn = &conn;
	req.tree = &tree;
}

/* Appends a context (name of nlen bytes) to the chain, 8-aligned. */
static void
add(const void *name, size_t nlen, const void *data, uint32_t dlen)
{
	size_t at = msg_len, end, doff = 0;

	if (last_at != 0)
		le32_put(msg + last_at, (uint32_t)(at - last_at));
	le16_put(msg + at + 4, 16);
	le16_put(msg + at + 6, (uint16_t)nlen);
	memcpy(msg + at + 16, name, nlen);
	end = 16 + nlen;
	if (dlen > 0) {
		doff = (end + 7) & ~(size_t)7;
		memcpy(msg + at + doff, data, dlen);
		end = doff + dlen;
	}
	le16_put(msg + at + 10, (uint16_t)doff);
	le32_put(msg + at + 12, dlen);
	real_end = at + end;
	msg_len = at + ((end + 7) & ~(size_t)7);
	last_at = at;
}

static void
add4(const char *name, const void *data, uint32_t dlen)
{
	add(name, 4, data, dlen);
}

static ntstatus_t
parse_len(size_t len)
{
	cur_init(&req.body, msg, LEAD + len);
	return smb2_create_parse_contexts(&req, LEAD, (uint32_t)len, &cc);
}

static ntstatus_t
parse(void)
{
	return parse_len(msg_len - LEAD);
}

/* One of each context a 3.1.1 connection with leasing and POSIX reads. */
static void
every_context(void)
{
	uint8_t d[64];

	add4("MxAc", NULL, 0);
	add4("QFid", NULL, 0);
	le64_put(d, 1 << 20);
	add4("AlSi", d, 8);
	le64_put(d, 133000000000000000ull);
	add4("TWrp", d, 8);
	memset(d, 0x11, 20);
	add4("SecD", d, 20);
	add4("ExtA", d, 12);
	memset(d, 'K', 16);
	le32_put(d + 16, 7);
	le32_put(d + 20, 4);		/* parent key set */
	memset(d + 24, 0, 8);
	memset(d + 32, 'P', 16);
	le16_put(d + 48, 3);
	le16_put(d + 50, 0);
	add4("RqLs", d, 52);
	memset(d, 0, 32);
	le32_put(d, 60000);
	memset(d + 16, 'G', 16);
	add4("DH2Q", d, 32);
	memset(d, 0, 20);
	le16_put(d, 20);
	memset(d + 4, 'I', 16);
	add(app_id_tag, 16, d, 20);
	le32_put(d, 0640);
	add(posix_tag, 16, d, 4);
}

START_TEST(test_every_context)
{
	reset(0x0311, 1, 1);
	every_context();
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.mxac, 1);
	ck_assert_int_eq(cc.qfid, 1);
	ck_assert_int_eq(cc.alsi, 1);
	ck_assert_uint_eq(cc.alloc_size, 1 << 20);
	ck_assert_int_eq(cc.twrp, 1);
	ck_assert_uint_eq(cc.twrp_time, 133000000000000000ull);
	ck_assert_uint_eq(cc.secd_len, 20);
	ck_assert_uint_eq(cc.exta_len, 12);
	ck_assert(cc.secd > msg + LEAD && cc.secd + 20 <= msg + msg_len);
	ck_assert(cc.exta > msg + LEAD && cc.exta + 12 <= msg + msg_len);
	ck_assert_int_eq(cc.lease, 1);
	ck_assert_uint_eq(cc.sreq.lease_version, 2);
	ck_assert_uint_eq(cc.sreq.lease_epoch, 3);
	ck_assert_uint_eq(cc.sreq.lease_state, 7);
	ck_assert_uint_eq(cc.sreq.parent_lease_key[0], 'P');
	ck_assert_int_eq(cc.sreq.durable, 2);
	ck_assert_uint_eq(cc.sreq.durable_timeout_ms, 60000);
	ck_assert_uint_eq(cc.sreq.create_guid[15], 'G');
	ck_assert_int_eq(cc.app_instance, 1);
	ck_assert_uint_eq(cc.app_instance_id[0], 'I');
	ck_assert_int_eq(cc.posix.posix, 1);
	ck_assert_uint_eq(cc.posix.perms, 0640);
}
END_TEST

/*
 * Every truncation of the chain (CreateContextsLength short) is refused;
 * the last context's padding is not needed.
 */
START_TEST(test_every_truncation)
{
	size_t full, n;

	reset(0x0311, 1, 1);
	every_context();
	full = msg_len - LEAD;
	for (n = 1; n < real_end - LEAD; n++)
		ck_assert_msg(parse_len(n) == STATUS_INVALID_PARAMETER,
		    "a chain cut to %zu of %zu bytes parsed", n, full);
	for (; n <= full; n++)
		ck_assert_uint_eq(parse_len(n), STATUS_SUCCESS);
}
END_TEST

/* The chain's place must lie inside the request. */
START_TEST(test_outside)
{
	reset(0x0311, 1, 1);
	add4("MxAc", NULL, 0);
	cur_init(&req.body, msg, msg_len);
	ck_assert_uint_eq(smb2_create_parse_contexts(&req, LEAD,
	    (uint32_t)(msg_len - LEAD + 8), &cc), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smb2_create_parse_contexts(&req, (uint32_t)msg_len,
	    8, &cc), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smb2_create_parse_contexts(&req, 0xFFFFFFF0u, 0x20,
	    &cc), STATUS_INVALID_PARAMETER);
	/* no chain at all, wherever the offset points */
	ck_assert_uint_eq(smb2_create_parse_contexts(&req, 0xFFFFFFF0u, 0,
	    &cc), STATUS_SUCCESS);
	ck_assert_int_eq(cc.mxac, 0);
}
END_TEST

/* What the dialect and the negotiation leave out (MS-SMB2 3.3.5.9). */
START_TEST(test_dialects)
{
	uint8_t d[52];

	memset(d, 'K', sizeof(d));
	/* RqLs on 2.0.2, or without leasing: ignored */
	reset(0x0202, 1, 0);
	add4("RqLs", d, 32);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.lease, 0);
	reset(0x0300, 0, 0);
	add4("RqLs", d, 32);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.lease, 0);
	/* ... even an empty one, as Samba ignores it below 2.1 */
	reset(0x0202, 1, 0);
	add4("RqLs", NULL, 0);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.lease, 0);
	/* a v2 lease on 2.1 is a v1 one */
	reset(0x0210, 1, 0);
	add4("RqLs", d, 52);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.lease, 1);
	ck_assert_uint_eq(cc.sreq.lease_version, 1);
	/*
	 * the v2 durable contexts count at 2.1 and 2.0.2 too (MS-SMB2
	 * 3.3.5.9.10 and .12 apply to a server that implements 3.x)
	 */
	memset(d, 0, 36);
	reset(0x0210, 1, 0);
	le32_put(d, 60000);
	add4("DH2Q", d, 32);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.sreq.durable, 2);
	ck_assert_uint_eq(cc.sreq.durable_timeout_ms, 60000);
	memset(d, 0, 36);
	reset(0x0202, 0, 0);
	le64_put(d, 0x77);
	d[16] = 0xAB;
	add4("DH2C", d, 36);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.sreq.reconnect, 2);
	ck_assert_uint_eq(cc.sreq.reconnect_persistent, 0x77);
	ck_assert_uint_eq(cc.sreq.create_guid[0], 0xAB);
	/* and refuse their mixes there as at 3.x */
	reset(0x0210, 1, 0);
	memset(d, 0, 36);
	add4("DHnQ", d, 16);
	add4("DH2Q", d, 32);
	ck_assert_uint_eq(parse(), STATUS_INVALID_PARAMETER);
	/* POSIX: only negotiated, and only where the share allows it */
	le32_put(d, 0600);
	reset(0x0311, 1, 0);
	add(posix_tag, 16, d, 4);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.posix.posix, 0);
	reset(0x0311, 1, 1);
	share.smb3_unix_extensions = 0;
	add(posix_tag, 16, d, 4);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.posix.posix, 0);
}
END_TEST

/* Refusals: wrong lengths, durable contexts that may not go together. */
START_TEST(test_refused)
{
	static const struct {
		const char *a, *b;
		uint32_t alen, blen;
	} bad[] = {
		{ "TWrp", NULL, 4, 0 },
		{ "TWrp", NULL, 16, 0 },
		{ "RqLs", NULL, 40, 0 },
		{ "RqLs", NULL, 0, 0 },
		{ "DHnQ", NULL, 8, 0 },
		{ "DHnQ", NULL, 0, 0 },
		{ "DH2Q", NULL, 36, 0 },
		{ "DHnC", NULL, 32, 0 },
		{ "DH2C", NULL, 32, 0 },
		{ "DHnQ", "DHnQ", 16, 16 },
		{ "DHnQ", "DH2Q", 16, 32 },
		{ "DHnC", "DH2C", 16, 36 },
		{ "DH2Q", "DH2C", 32, 36 },
	};
	uint8_t d[64];
	size_t i;

	memset(d, 0, sizeof(d));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reset(0x0311, 1, 0);
		add4(bad[i].a, d, bad[i].alen);
		if (bad[i].b != NULL)
			add4(bad[i].b, d, bad[i].blen);
		ck_assert_msg(parse() == STATUS_INVALID_PARAMETER,
		    "%s (%u) %s (%u) parsed", bad[i].a, bad[i].alen,
		    bad[i].b ? bad[i].b : "-", bad[i].blen);
	}
	/* the app instance id: StructureSize 20 and the whole id */
	reset(0x0311, 1, 0);
	le16_put(d, 20);
	add(app_id_tag, 16, d, 16);
	ck_assert_uint_eq(parse(), STATUS_INVALID_PARAMETER);
	reset(0x0311, 1, 0);
	le16_put(d, 24);
	add(app_id_tag, 16, d, 20);
	ck_assert_uint_eq(parse(), STATUS_INVALID_PARAMETER);
	/* the POSIX context: exactly its mode */
	reset(0x0311, 1, 1);
	add(posix_tag, 16, d, 8);
	ck_assert_uint_eq(parse(), STATUS_INVALID_PARAMETER);
	/* DHnQ with DHnC: the reconnect (MS-SMB2 3.3.5.9.7) */
	reset(0x0311, 1, 0);
	memset(d, 0, 16);
	add4("DHnQ", d, 16);
	le64_put(d, 0x1234);
	add4("DHnC", d, 16);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.sreq.reconnect, 1);
	ck_assert_uint_eq(cc.sreq.reconnect_persistent, 0x1234);
}
END_TEST

/* Unknown names and AlSi of another length are ignored (3.3.5.9). */
START_TEST(test_ignored)
{
	uint8_t d[16];

	memset(d, 0, sizeof(d));
	reset(0x0311, 1, 0);
	add4("ZZZZ", d, 5);
	add("LongerName", 10, d, 3);
	add4("AlSi", d, 4);
	add4("MxAc", NULL, 0);
	ck_assert_uint_eq(parse(), STATUS_SUCCESS);
	ck_assert_int_eq(cc.alsi, 0);
	ck_assert_int_eq(cc.mxac, 1);
}
END_TEST

static Suite *
smb2_create_ctx_suite(void)
{
	Suite *s = suite_create("smb2_create_ctx");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_context);
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_outside);
	tcase_add_test(tc, test_dialects);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_ignored);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(smb2_create_ctx_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
