/* proto/neg_ctx.c: NEGOTIATE request and 3.1.1 negotiate contexts. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/neg_ctx.h"

/* A 3.1.1 NEGOTIATE like Windows 10 sends, built field by field. */
static size_t
build_req(uint8_t *b, size_t cap, int with_preauth, int dup_cipher,
    uint16_t hash)
{
	struct wcur w;
	uint8_t *ctxoff, *ctxcnt;
	uint16_t n = 0;

	memset(b, 0, cap);
	wcur_init(&w, b, cap);
	wcur_bytes(&w, "\xfeSMB", 4);
	wcur_le16(&w, 64);
	wcur_zero(&w, 58);
	wcur_le16(&w, 36);
	wcur_le16(&w, 5);		/* dialects */
	wcur_le16(&w, 1);		/* signing enabled */
	wcur_le16(&w, 0);
	wcur_le32(&w, 0x7f);
	wcur_bytes(&w, "0123456789abcdef", 16);
	ctxoff = wcur_reserve(&w, 4);
	ctxcnt = wcur_reserve(&w, 2);
	wcur_le16(&w, 0);
	wcur_le16(&w, 0x0202);
	wcur_le16(&w, 0x0210);
	wcur_le16(&w, 0x0300);
	wcur_le16(&w, 0x0302);
	wcur_le16(&w, 0x0311);
	wcur_align(&w, 8);
	le32_put(ctxoff, (uint32_t)wcur_off(&w));
	if (with_preauth) {
		wcur_le16(&w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
		wcur_le16(&w, 38);
		wcur_le32(&w, 0);
		wcur_le16(&w, 1);
		wcur_le16(&w, 32);
		wcur_le16(&w, hash);
		wcur_bytes(&w, "SALTSALTSALTSALTSALTSALTSALTSALT", 32);
		n++;
	}
	wcur_align(&w, 8);
	wcur_le16(&w, SMB2_ENCRYPTION_CAPABILITIES);
	wcur_le16(&w, 6);
	wcur_le32(&w, 0);
	wcur_le16(&w, 2);
	wcur_le16(&w, SMB2_ENCRYPTION_AES256_GCM);
	wcur_le16(&w, SMB2_ENCRYPTION_AES128_CCM);
	n++;
	if (dup_cipher) {
		wcur_align(&w, 8);
		wcur_le16(&w, SMB2_ENCRYPTION_CAPABILITIES);
		wcur_le16(&w, 4);
		wcur_le32(&w, 0);
		wcur_le16(&w, 1);
		wcur_le16(&w, SMB2_ENCRYPTION_AES128_GCM);
		n++;
	}
	wcur_align(&w, 8);
	wcur_le16(&w, SMB2_SIGNING_CAPABILITIES);
	wcur_le16(&w, 6);
	wcur_le32(&w, 0);
	wcur_le16(&w, 2);
	wcur_le16(&w, SMB2_SIGNING_AES_CMAC);
	wcur_le16(&w, SMB2_SIGNING_AES_GMAC);
	n++;
	wcur_align(&w, 8);
	wcur_le16(&w, SMB2_NETNAME_NEGOTIATE_CONTEXT_ID);
	wcur_le16(&w, 6);
	wcur_le32(&w, 0);
	wcur_bytes(&w, "h\0o\0s\0", 6);
	n++;
	le16_put(ctxcnt, n);
	ck_assert(!w.err);
	return wcur_off(&w);
}

START_TEST(test_valid)
{
	uint8_t b[512];
	struct neg_req r;
	struct neg_ctx c;
	size_t len = build_req(b, sizeof(b), 1, 0, SMB2_PREAUTH_INTEGRITY_SHA512);

	ck_assert_uint_eq(neg_req_decode(b, len, &r), STATUS_SUCCESS);
	ck_assert_int_eq(r.dialect_count, 5);
	ck_assert_int_eq(r.dialects[4], 0x0311);
	ck_assert_uint_eq(r.capabilities, 0x7f);
	ck_assert_mem_eq(r.client_guid, "0123456789abcdef", 16);
	ck_assert_int_eq(r.ctx_count, 4);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, r.ctx_count, &c),
	    STATUS_SUCCESS);
	ck_assert_int_eq(c.nhash, 1);
	ck_assert_int_eq(c.salt_len, 32);
	ck_assert_int_eq(c.ncipher, 2);
	ck_assert_int_eq(c.ciphers[0], SMB2_ENCRYPTION_AES256_GCM);
	ck_assert_int_eq(c.nsign, 2);
	ck_assert_int_eq(c.sign_algs[1], SMB2_SIGNING_AES_GMAC);
	ck_assert(c.has_netname);
	ck_assert_int_eq(c.netname_len, 6);
}
END_TEST

START_TEST(test_truncations)
{
	uint8_t b[512], *t;
	struct neg_req r;
	struct neg_ctx c;
	size_t len = build_req(b, sizeof(b), 1, 0, SMB2_PREAUTH_INTEGRITY_SHA512), n;

	/* Each truncation in its own exact-size heap copy, so ASan sees any overread. */
	for (n = 0; n < len; n++) {
		ntstatus_t st;

		t = malloc(n ? n : 1);
		memcpy(t, b, n);
		st = neg_req_decode(t, n, &r);
		if (st == STATUS_SUCCESS)
			st = neg_ctx_decode(t, n, r.ctx_offset, r.ctx_count, &c);
		ck_assert_msg(st != STATUS_SUCCESS, "truncation %zu accepted", n);
		free(t);
	}
}
END_TEST

START_TEST(test_rules)
{
	uint8_t b[512];
	struct neg_req r;
	struct neg_ctx c;
	size_t len;

	len = build_req(b, sizeof(b), 0, 0, SMB2_PREAUTH_INTEGRITY_SHA512);
	ck_assert_uint_eq(neg_req_decode(b, len, &r), STATUS_SUCCESS);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, r.ctx_count, &c),
	    STATUS_INVALID_PARAMETER);
	len = build_req(b, sizeof(b), 1, 1, SMB2_PREAUTH_INTEGRITY_SHA512);
	ck_assert_uint_eq(neg_req_decode(b, len, &r), STATUS_SUCCESS);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, r.ctx_count, &c),
	    STATUS_INVALID_PARAMETER);
	len = build_req(b, sizeof(b), 1, 0, 0x0002);
	ck_assert_uint_eq(neg_req_decode(b, len, &r), STATUS_SUCCESS);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, r.ctx_count, &c),
	    STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP);
	len = build_req(b, sizeof(b), 1, 0, SMB2_PREAUTH_INTEGRITY_SHA512);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset + 2, r.ctx_count, &c),
	    STATUS_INVALID_PARAMETER);		/* misaligned */
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, 0, &c),
	    STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(neg_ctx_decode(b, len, r.ctx_offset, 40, &c),
	    STATUS_INVALID_PARAMETER);		/* more than there are */
	le16_put(b + 66, 0);			/* DialectCount 0 */
	ck_assert_uint_eq(neg_req_decode(b, len, &r), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(test_response_contexts)
{
	uint8_t b[256];
	struct wcur w;
	struct neg_ctx c;
	size_t off;

	memset(b, 0, sizeof(b));
	wcur_init(&w, b, sizeof(b));
	wcur_zero(&w, 130);
	wcur_align(&w, 8);
	off = wcur_off(&w);
	neg_ctx_put_preauth(&w, (const uint8_t *)"0123456789abcdef0123456789abcdef", 32);
	neg_ctx_put_cipher(&w, SMB2_ENCRYPTION_AES128_GCM);
	neg_ctx_put_signing(&w, SMB2_SIGNING_AES_GMAC);
	ck_assert(!w.err);
	ck_assert_uint_eq(neg_ctx_decode(b, wcur_off(&w), (uint32_t)off, 3, &c),
	    STATUS_SUCCESS);
	ck_assert_int_eq(c.ciphers[0], SMB2_ENCRYPTION_AES128_GCM);
	ck_assert_int_eq(c.ncipher, 1);
	ck_assert_int_eq(c.sign_algs[0], SMB2_SIGNING_AES_GMAC);
	ck_assert_int_eq(c.salt_len, 32);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("neg_ctx");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_response_contexts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
