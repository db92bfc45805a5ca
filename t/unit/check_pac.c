/*
 * Unit tests for proto/pac.c: PAC_LOGON_INFO (MS-PAC 2.5) as an NDR type
 * serialization, built here field by field with proto/ndr.c's encoder:
 * the group RIDs and the domain SID come out; more groups than kept are
 * counted; every truncation, a GroupCount that disagrees with its array,
 * a string whose counts disagree with its header, a bad serialization
 * header and a SID of another revision are refused.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ndr.h"
#include "proto/pac.h"

static uint8_t buf[8192];

struct spec {
	uint32_t	 ngroups;	/* GroupCount */
	uint32_t	 array;		/* the array's conformance */
	int		 sid_rev;
	int		 bad_len;	/* EffectiveName's Length off by 2 */
};

static void
put_chars(struct ndr_w *n, const char *s)
{
	uint32_t k = (uint32_t)strlen(s), i;

	ndr_put_u32(n, k);
	ndr_put_u32(n, 0);
	ndr_put_u32(n, k);
	for (i = 0; i < k; i++)
		ndr_put_u16(n, (uint16_t)s[i]);
}

static void
put_ustr_hdr(struct ndr_w *n, const char *s)
{
	uint16_t b = (uint16_t)(s != NULL ? strlen(s) * 2 : 0);

	ndr_put_u16(n, b);
	ndr_put_u16(n, b);
	ndr_put_ptr(n, s != NULL);
}

/* A PAC_LOGON_INFO buffer for alice of S-1-5-21-1-2-3; its length. */
static size_t
build(const struct spec *sp)
{
	static const char *names[6] = { "alice", NULL, NULL, NULL, NULL, NULL };
	struct ndr_w n;
	uint32_t i;
	size_t obj;

	ndr_w_init(&n, buf + 16, sizeof(buf) - 16);
	ndr_put_ptr(&n, 1);
	for (i = 0; i < 12; i++)		/* six FILETIMEs */
		ndr_put_u32(&n, 0);
	for (i = 0; i < 6; i++)
		put_ustr_hdr(&n, names[i]);
	if (sp->bad_len)
		le16_put(buf + 16 + 4 + 48, 12);
	ndr_put_u16(&n, 3);			/* LogonCount */
	ndr_put_u16(&n, 0);
	ndr_put_u32(&n, 1104);			/* UserId */
	ndr_put_u32(&n, 513);			/* PrimaryGroupId */
	ndr_put_u32(&n, sp->ngroups);
	ndr_put_ptr(&n, sp->array > 0);
	ndr_put_u32(&n, 0x20);			/* UserFlags */
	for (i = 0; i < 4; i++)			/* UserSessionKey */
		ndr_put_u32(&n, 0);
	put_ustr_hdr(&n, "DC");
	put_ustr_hdr(&n, "TEST");
	ndr_put_ptr(&n, 1);			/* LogonDomainId */
	for (i = 0; i < 10; i++)
		ndr_put_u32(&n, 0);
	ndr_put_u32(&n, 2);			/* SidCount */
	ndr_put_ptr(&n, 0);
	ndr_put_ptr(&n, 0);
	ndr_put_u32(&n, 0);
	ndr_put_ptr(&n, 0);
	put_chars(&n, "alice");
	if (sp->array > 0) {
		ndr_put_u32(&n, sp->array);
		for (i = 0; i < sp->array; i++) {
			ndr_put_u32(&n, 512 + i);
			ndr_put_u32(&n, 7);
		}
	}
	put_chars(&n, "DC");
	put_chars(&n, "TEST");
	ndr_put_u32(&n, 4);			/* the SID's conformance */
	wcur_u8(&n.w, (uint8_t)sp->sid_rev);
	wcur_u8(&n.w, 4);
	wcur_bytes(&n.w, "\0\0\0\0\0\5", 6);
	ndr_put_u32(&n, 21);
	ndr_put_u32(&n, 1);
	ndr_put_u32(&n, 2);
	ndr_put_u32(&n, 3);
	ck_assert(!n.w.err);
	obj = wcur_off(&n.w);
	memcpy(buf, "\x01\x10\x08\x00\xcc\xcc\xcc\xcc", 8);
	le32_put(buf + 8, (uint32_t)obj);
	memset(buf + 12, 0, 4);
	return 16 + obj;
}

START_TEST(test_groups)
{
	struct spec sp = { 3, 3, 1, 0 };
	struct pac_groups g;
	size_t n = build(&sp), i;

	ck_assert_int_eq(pac_logon_groups(buf, n, &g), 0);
	ck_assert_uint_eq(g.user_rid, 1104);
	ck_assert_uint_eq(g.primary_rid, 513);
	ck_assert_uint_eq(g.n_groups, 3);
	ck_assert_uint_eq(g.n_rids, 3);
	ck_assert_uint_eq(g.rids[0], 512);
	ck_assert_uint_eq(g.rids[2], 514);
	ck_assert_uint_eq(g.n_extra_sids, 2);
	ck_assert_str_eq(g.domain, "S-1-5-21-1-2-3");
	for (i = 0; i < n; i++)
		ck_assert_int_eq(pac_logon_groups(buf, i, &g), -EBADMSG);
}
END_TEST

START_TEST(test_many_groups)
{
	struct spec sp = { 40, 40, 1, 0 };
	struct pac_groups g;
	size_t n = build(&sp);

	ck_assert_int_eq(pac_logon_groups(buf, n, &g), 0);
	ck_assert_uint_eq(g.n_groups, 40);
	ck_assert_uint_eq(g.n_rids, PAC_MAX_RIDS);
	ck_assert_uint_eq(g.rids[PAC_MAX_RIDS - 1], 512 + PAC_MAX_RIDS - 1);
	sp.ngroups = 0;
	sp.array = 0;
	n = build(&sp);
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), 0);
	ck_assert_uint_eq(g.n_rids, 0);
	ck_assert_str_eq(g.domain, "S-1-5-21-1-2-3");
}
END_TEST

START_TEST(test_malformed)
{
	struct spec sp = { 3, 4, 1, 0 };
	struct pac_groups g;
	size_t n;

	n = build(&sp);			/* GroupCount 3, array of 4 */
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	sp.ngroups = 2;
	sp.array = 0;			/* GroupCount 2, no array */
	n = build(&sp);
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	sp.ngroups = sp.array = 3;
	sp.sid_rev = 2;
	n = build(&sp);
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	sp.sid_rev = 1;
	sp.bad_len = 1;			/* Length 12 for five characters */
	n = build(&sp);
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	sp.bad_len = 0;
	n = build(&sp);
	buf[1] = 0x00;			/* big-endian: not ours */
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	n = build(&sp);
	le32_put(buf + 8, (uint32_t)n);	/* the object past the buffer */
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
	n = build(&sp);
	memset(buf + 16, 0, 4);		/* a NULL top-level pointer */
	ck_assert_int_eq(pac_logon_groups(buf, n, &g), -EBADMSG);
}
END_TEST

static Suite *
pac_suite(void)
{
	Suite *s = suite_create("pac");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_groups);
	tcase_add_test(tc, test_many_groups);
	tcase_add_test(tc, test_malformed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pac_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
