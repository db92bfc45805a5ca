/* proto/smb2_hdr.c and the credit window of worker/conn.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/smb2.h"

START_TEST(test_frame)
{
	uint8_t f[4];

	smb2_frame_encode(f, 0x123456);
	ck_assert_int_eq(f[0], 0);
	ck_assert_int_eq(smb2_frame_decode(f), 0x123456);
	f[0] = 0x85;	/* NetBIOS keepalive / session request */
	ck_assert_int_eq(smb2_frame_decode(f), -1);
}
END_TEST

START_TEST(test_hdr_roundtrip)
{
	struct smb2_hdr h, d;
	uint8_t buf[SMB2_HDR_LEN];
	size_t n;

	memset(&h, 0, sizeof(h));
	h.credit_charge = 3;
	h.status = 0xC0000022u;
	h.command = SMB2_READ;
	h.credits = 17;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	h.next_command = 0;
	h.message_id = 0x1122334455667788ull;
	h.process_id = 0xFEFF;
	h.tree_id = 7;
	h.session_id = 0xAABBCCDDEEFF0011ull;
	memset(h.signature, 0x5A, 16);
	smb2_hdr_encode(buf, &h);
	ck_assert_int_eq(smb2_hdr_decode(buf, sizeof(buf), &d), 0);
	ck_assert_int_eq(d.credit_charge, 3);
	ck_assert_uint_eq(d.status, 0xC0000022u);
	ck_assert_int_eq(d.command, SMB2_READ);
	ck_assert_int_eq(d.credits, 17);
	ck_assert(d.message_id == h.message_id);
	ck_assert_uint_eq(d.tree_id, 7);
	ck_assert(d.session_id == h.session_id);
	ck_assert_mem_eq(d.signature, h.signature, 16);
	/* async form */
	h.flags |= SMB2_FLAGS_ASYNC_COMMAND;
	h.async_id = 0x0102030405060708ull;
	smb2_hdr_encode(buf, &h);
	ck_assert_int_eq(smb2_hdr_decode(buf, sizeof(buf), &d), 0);
	ck_assert(d.async_id == h.async_id);
	ck_assert_uint_eq(d.tree_id, 0);
	/* every truncation fails */
	for (n = 0; n < sizeof(buf); n++)
		ck_assert_int_eq(smb2_hdr_decode(buf, n, &d), -1);
	/* a wrong StructureSize fails */
	buf[4] = 63;
	ck_assert_int_eq(smb2_hdr_decode(buf, sizeof(buf), &d), -1);
	buf[4] = 64;
	buf[0] = 0xFD;
	ck_assert_int_eq(smb2_hdr_decode(buf, sizeof(buf), &d), -1);
	ck_assert_int_eq(smb2_magic(buf, sizeof(buf)), SMB2_MAGIC_TRANSFORM);
}
END_TEST

/* An SMB1 NEGOTIATE as smbclient sends it. */
static size_t
smb1_neg(uint8_t *b, const char *const *dialects)
{
	size_t n = 0, i;

	memset(b, 0, 35);
	memcpy(b, "\xffSMB", 4);
	b[4] = 0x72;
	n = 32;
	b[n++] = 0;		/* WordCount */
	n += 2;			/* ByteCount */
	for (i = 0; dialects[i] != NULL; i++) {
		b[n++] = 0x02;
		memcpy(b + n, dialects[i], strlen(dialects[i]) + 1);
		n += strlen(dialects[i]) + 1;
	}
	le16_put(b + 33, (uint16_t)(n - 35));
	return n;
}

START_TEST(test_smb1_negotiate)
{
	static const char *const both[] = { "NT LM 0.12", "SMB 2.002", "SMB 2.???", NULL };
	static const char *const old[] = { "LANMAN2.1", "NT LM 0.12", NULL };
	uint8_t b[256];
	size_t n, i;

	n = smb1_neg(b, both);
	ck_assert_int_eq(smb1_negotiate_offers(b, n),
	    SMB1_OFFERS_SMB2_002 | SMB1_OFFERS_SMB2_ANY);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(smb1_negotiate_offers(b, i), -1);
	n = smb1_neg(b, old);
	ck_assert_int_eq(smb1_negotiate_offers(b, n), 0);
	/* a dialect without its NUL */
	b[n - 1] = 'x';
	ck_assert_int_eq(smb1_negotiate_offers(b, n), -1);
}
END_TEST

START_TEST(test_chain)
{
	uint8_t buf[72 + 80];
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen, n;
	int count, r;

	memset(buf, 0, sizeof(buf));
	le32_put(buf + 20, 72);
	smb2_chain_init(&ch, buf, sizeof(buf));
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), 1);
	ck_assert_ptr_eq(m, buf);
	ck_assert_uint_eq(mlen, 72);
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), 1);
	ck_assert_ptr_eq(m, buf + 72);
	ck_assert_uint_eq(mlen, 80);
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), 0);
	/* misaligned, too small, outside */
	le32_put(buf + 20, 70);
	smb2_chain_init(&ch, buf, sizeof(buf));
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), -1);
	le32_put(buf + 20, 56);
	smb2_chain_init(&ch, buf, sizeof(buf));
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), -1);
	le32_put(buf + 20, 160);
	smb2_chain_init(&ch, buf, sizeof(buf));
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), -1);
	/*
	 * One element cut out of a chain (worker/relay.c relay_split): its
	 * NextCommand points at the end; refused unless tail_ok, and then
	 * the one and last element.
	 */
	le32_put(buf + 20, 72);
	smb2_chain_init(&ch, buf, 72);
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), -1);
	smb2_chain_init(&ch, buf, 72);
	ch.tail_ok = 1;
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), 1);
	ck_assert_uint_eq(mlen, 72);
	ck_assert_int_eq(ch.done, 1);
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), 0);
	smb2_chain_init(&ch, buf, 71);
	ch.tail_ok = 1;
	ck_assert_int_eq(smb2_chain_next(&ch, &m, &mlen), -1);
	/* every truncation of the valid chain ends in an error, never a read past */
	le32_put(buf + 20, 72);
	for (n = 0; n < sizeof(buf); n++) {
		smb2_chain_init(&ch, buf, n);
		count = 0;
		while ((r = smb2_chain_next(&ch, &m, &mlen)) == 1) {
			ck_assert(m + mlen <= buf + n);
			ck_assert_uint_ge(mlen, SMB2_HDR_LEN);
			count++;
		}
		/* cut inside the first header or the first message: an error */
		if (n > 0 && n < 72 + SMB2_HDR_LEN)
			ck_assert_int_eq(r, -1);
		else
			ck_assert_int_eq(r, 0);
	}
}
END_TEST

START_TEST(test_struct_sizes)
{
	uint8_t body[64];

	memset(body, 0, sizeof(body));
	le16_put(body, 36);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_NEGOTIATE, body, 36), 0);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_NEGOTIATE, body, 35), -1);
	le16_put(body, 49);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_READ, body, 48), 0);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_READ, body, 47), -1);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_WRITE, body, 49), 0);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_CREATE, body, 64), -1);
	le16_put(body, 36);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_OPLOCK_BREAK, body, 36), 0);
	ck_assert_int_eq(smb2_req_size_ok(0x13, body, 36), -1);
	ck_assert_int_eq(smb2_req_size_ok(SMB2_ECHO, body, 1), -1);
}
END_TEST

START_TEST(test_credits)
{
	static struct conn_credits cr;
	uint16_t g;

	conn_credits_init(&cr, 100);
	ck_assert_int_eq(conn_credits_charge(&cr, 0, 0), 0);	/* NEGOTIATE */
	ck_assert_int_eq(conn_credits_charge(&cr, 0, 1), -1);	/* reused */
	ck_assert_int_eq(conn_credits_charge(&cr, 1, 1), -1);	/* no credit */
	g = conn_credits_grant(&cr, 10, 1);
	ck_assert_int_eq(g, 10);
	/* out of order inside the window, then the hole is filled */
	ck_assert_int_eq(conn_credits_charge(&cr, 5, 1), 0);
	ck_assert_int_eq(conn_credits_charge(&cr, 5, 1), -1);
	ck_assert_int_eq(conn_credits_charge(&cr, 1, 4), 0);	/* 1..4 */
	ck_assert(cr.low == 6);
	ck_assert_int_eq(conn_credits_charge(&cr, 11, 1), -1);	/* past the window */
	ck_assert_int_eq(conn_credits_charge(&cr, 6, 6), -1);	/* more than held */
	ck_assert_int_eq(conn_credits_charge(&cr, 6, 5), 0);
	ck_assert_int_eq(cr.granted, 0);
	/* the grant never passes the maximum */
	g = conn_credits_grant(&cr, 1000, 1);
	ck_assert_int_eq(g, 100);
	ck_assert_int_eq(conn_credits_grant(&cr, 1, 1), 0);
}
END_TEST

static Suite *
smb2_hdr_suite(void)
{
	Suite *s = suite_create("smb2_hdr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_frame);
	tcase_add_test(tc, test_hdr_roundtrip);
	tcase_add_test(tc, test_smb1_negotiate);
	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_struct_sizes);
	tcase_add_test(tc, test_credits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(smb2_hdr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
