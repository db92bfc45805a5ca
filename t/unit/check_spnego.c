/*
 * SPNEGO decoding and encoding, and the whole NTLMSSP exchange end to end.
 *
 * The tokens below were captured from Debian's smbclient 4.17 talking to
 * Debian's smbd (user root, password "Secret123", workgroup WORKGROUP) on a
 * loopback port with tshark: the NEGOTIATE response's negHints token, the
 * client's negTokenInit with the NTLMSSP NEGOTIATE, the server's CHALLENGE,
 * the client's AUTHENTICATE with its mechListMIC, and the server's final
 * accept-completed with its own mechListMIC.  So they exercise the real
 * client's encoding, and the end-to-end test checks our NTLMv2 verification
 * and mechListMIC against both a real client and a real server.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/asn1.h"
#include "proto/ntlmssp.h"
#include "proto/spnego.h"

static const uint8_t smbd_neg_hints[74] = {
	0x60, 0x48, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0xa0, 0x3e,
	0x30, 0x3c, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
	0x01, 0x82, 0x37, 0x02, 0x02, 0x0a, 0xa3, 0x2a, 0x30, 0x28, 0xa0, 0x26,
	0x1b, 0x24, 0x6e, 0x6f, 0x74, 0x5f, 0x64, 0x65, 0x66, 0x69, 0x6e, 0x65,
	0x64, 0x5f, 0x69, 0x6e, 0x5f, 0x52, 0x46, 0x43, 0x34, 0x31, 0x37, 0x38,
	0x40, 0x70, 0x6c, 0x65, 0x61, 0x73, 0x65, 0x5f, 0x69, 0x67, 0x6e, 0x6f,
	0x72, 0x65,
};
static const uint8_t smbc_init[74] = {
	0x60, 0x48, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0xa0, 0x3e,
	0x30, 0x3c, 0xa0, 0x0e, 0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
	0x01, 0x82, 0x37, 0x02, 0x02, 0x0a, 0xa2, 0x2a, 0x04, 0x28, 0x4e, 0x54,
	0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00, 0x01, 0x00, 0x00, 0x00, 0x15, 0x82,
	0x08, 0x62, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x0f,
};
static const uint8_t smbd_challenge[132] = {
	0xa1, 0x81, 0x81, 0x30, 0x7f, 0xa0, 0x03, 0x0a, 0x01, 0x01, 0xa1, 0x0c,
	0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a,
	0xa2, 0x6a, 0x04, 0x68, 0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x04, 0x00, 0x38, 0x00, 0x00, 0x00,
	0x15, 0x82, 0x8a, 0x62, 0x27, 0xf4, 0xc0, 0xc4, 0x01, 0x3f, 0xb3, 0xb7,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x2c, 0x00,
	0x3c, 0x00, 0x00, 0x00, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f,
	0x56, 0x00, 0x4d, 0x00, 0x02, 0x00, 0x04, 0x00, 0x56, 0x00, 0x4d, 0x00,
	0x01, 0x00, 0x04, 0x00, 0x56, 0x00, 0x4d, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x03, 0x00, 0x04, 0x00, 0x76, 0x00, 0x6d, 0x00, 0x07, 0x00, 0x08, 0x00,
	0x1a, 0x1d, 0x59, 0x98, 0xe8, 0x82, 0xdd, 0x01, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t smbc_auth[394] = {
	0xa1, 0x82, 0x01, 0x86, 0x30, 0x82, 0x01, 0x82, 0xa2, 0x82, 0x01, 0x6a,
	0x04, 0x82, 0x01, 0x66, 0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00,
	0x03, 0x00, 0x00, 0x00, 0x18, 0x00, 0x18, 0x00, 0x58, 0x00, 0x00, 0x00,
	0xc8, 0x00, 0xc8, 0x00, 0x70, 0x00, 0x00, 0x00, 0x12, 0x00, 0x12, 0x00,
	0x38, 0x01, 0x00, 0x00, 0x08, 0x00, 0x08, 0x00, 0x4a, 0x01, 0x00, 0x00,
	0x04, 0x00, 0x04, 0x00, 0x52, 0x01, 0x00, 0x00, 0x10, 0x00, 0x10, 0x00,
	0x56, 0x01, 0x00, 0x00, 0x15, 0x82, 0x08, 0x62, 0x06, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x0f, 0xf4, 0x1e, 0x21, 0x50, 0x09, 0x24, 0x55, 0xbf,
	0x2e, 0x8f, 0x5f, 0x47, 0x26, 0x71, 0x89, 0x7c, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x31, 0x8b, 0x1b, 0x1a,
	0x2f, 0x5b, 0x13, 0x6e, 0xa9, 0xfc, 0xf5, 0xc5, 0xa1, 0x0f, 0xcc, 0xfd,
	0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1a, 0x1d, 0x59, 0x98,
	0xe8, 0x82, 0xdd, 0x01, 0xcf, 0x29, 0x05, 0xb9, 0x6c, 0x22, 0x8e, 0xd7,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x04, 0x00, 0x56, 0x00, 0x4d, 0x00,
	0x01, 0x00, 0x04, 0x00, 0x56, 0x00, 0x4d, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x03, 0x00, 0x04, 0x00, 0x76, 0x00, 0x6d, 0x00, 0x07, 0x00, 0x08, 0x00,
	0x1a, 0x1d, 0x59, 0x98, 0xe8, 0x82, 0xdd, 0x01, 0x06, 0x00, 0x04, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x08, 0x00, 0x30, 0x00, 0x30, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xe0, 0x39, 0x7e, 0xe5, 0xb5, 0x95, 0x47, 0x35, 0x14, 0xb1, 0xa4, 0xcc,
	0xe6, 0xda, 0xff, 0x57, 0x58, 0x18, 0x65, 0x99, 0x74, 0x20, 0x19, 0x66,
	0xf9, 0xb8, 0xaa, 0xfc, 0x9c, 0x96, 0xee, 0x46, 0x0a, 0x00, 0x10, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x1c, 0x00, 0x63, 0x00, 0x69, 0x00,
	0x66, 0x00, 0x73, 0x00, 0x2f, 0x00, 0x31, 0x00, 0x32, 0x00, 0x37, 0x00,
	0x2e, 0x00, 0x30, 0x00, 0x2e, 0x00, 0x30, 0x00, 0x2e, 0x00, 0x31, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x57, 0x00, 0x4f, 0x00, 0x52, 0x00, 0x4b, 0x00,
	0x47, 0x00, 0x52, 0x00, 0x4f, 0x00, 0x55, 0x00, 0x50, 0x00, 0x72, 0x00,
	0x6f, 0x00, 0x6f, 0x00, 0x74, 0x00, 0x56, 0x00, 0x4d, 0x00, 0x0b, 0x78,
	0xa8, 0x38, 0x32, 0xc4, 0x5e, 0x4c, 0x03, 0x1c, 0xf3, 0xa2, 0xc4, 0xe1,
	0x6f, 0xa5, 0xa3, 0x12, 0x04, 0x10, 0x01, 0x00, 0x00, 0x00, 0x56, 0xd1,
	0xea, 0x07, 0x83, 0x3c, 0x3e, 0xad, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t smbd_accept[29] = {
	0xa1, 0x1b, 0x30, 0x19, 0xa0, 0x03, 0x0a, 0x01, 0x00, 0xa3, 0x12, 0x04,
	0x10, 0x01, 0x00, 0x00, 0x00, 0x1f, 0x31, 0xab, 0x86, 0x04, 0x91, 0x20,
	0x33, 0x00, 0x00, 0x00, 0x00,
};

static const uint8_t mech_list_ntlmssp[] = {
	0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02,
	0x02, 0x0a,
};

/* Decodes a copy in an exact-size heap buffer, so ASan sees any overread. */
static int
decode_exact(const uint8_t *p, size_t len, struct spnego_token *t)
{
	uint8_t *b = malloc(len ? len : 1);
	int rc;

	ck_assert_ptr_nonnull(b);
	memcpy(b, p, len);
	rc = spnego_decode(b, len, t);
	free(b);
	return rc;
}

START_TEST(test_decode_client_init)
{
	struct spnego_token t;

	ck_assert_int_eq(spnego_decode(smbc_init, sizeof(smbc_init), &t), 0);
	ck_assert_int_eq(t.kind, SPNEGO_NEG_INIT);
	ck_assert_int_eq(t.n_mech_types, 1);
	ck_assert_int_eq(t.ntlmssp_offered, 1);
	ck_assert_int_eq(t.ntlmssp_preferred, 1);
	ck_assert_uint_eq(t.mech_types_len, sizeof(mech_list_ntlmssp));
	ck_assert_mem_eq(t.mech_types, mech_list_ntlmssp,
	    sizeof(mech_list_ntlmssp));
	ck_assert_uint_eq(t.mech_token_len, 40);
	ck_assert_int_eq(ntlmssp_msg_type(t.mech_token, t.mech_token_len),
	    NTLMSSP_NEGOTIATE_MESSAGE);
	ck_assert_ptr_null(t.mech_list_mic);
	ck_assert_int_eq(t.neg_state, -1);
}
END_TEST

START_TEST(test_decode_client_auth)
{
	struct spnego_token t;

	ck_assert_int_eq(spnego_decode(smbc_auth, sizeof(smbc_auth), &t), 0);
	ck_assert_int_eq(t.kind, SPNEGO_NEG_RESP);
	ck_assert_int_eq(t.neg_state, -1);
	ck_assert_int_eq(t.supported_mech_ntlmssp, -1);
	ck_assert_int_eq(ntlmssp_msg_type(t.mech_token, t.mech_token_len),
	    NTLMSSP_AUTHENTICATE_MESSAGE);
	ck_assert_uint_eq(t.mech_list_mic_len, 16);
}
END_TEST

START_TEST(test_decode_server_tokens)
{
	struct spnego_token t;

	ck_assert_int_eq(spnego_decode(smbd_neg_hints, sizeof(smbd_neg_hints),
	    &t), 0);
	ck_assert_int_eq(t.kind, SPNEGO_NEG_INIT);
	ck_assert_int_eq(t.ntlmssp_preferred, 1);
	ck_assert_ptr_null(t.mech_token);

	ck_assert_int_eq(spnego_decode(smbd_challenge, sizeof(smbd_challenge),
	    &t), 0);
	ck_assert_int_eq(t.kind, SPNEGO_NEG_RESP);
	ck_assert_int_eq(t.neg_state, SPNEGO_ACCEPT_INCOMPLETE);
	ck_assert_int_eq(t.supported_mech_ntlmssp, 1);
	ck_assert_int_eq(ntlmssp_msg_type(t.mech_token, t.mech_token_len),
	    NTLMSSP_CHALLENGE_MESSAGE);

	ck_assert_int_eq(spnego_decode(smbd_accept, sizeof(smbd_accept), &t),
	    0);
	ck_assert_int_eq(t.neg_state, SPNEGO_ACCEPT_COMPLETED);
	ck_assert_ptr_null(t.mech_token);
	ck_assert_uint_eq(t.mech_list_mic_len, 16);
}
END_TEST

START_TEST(test_decode_raw_ntlmssp)
{
	struct spnego_token t, raw;

	ck_assert_int_eq(spnego_decode(smbc_init, sizeof(smbc_init), &t), 0);
	ck_assert_int_eq(spnego_decode(t.mech_token, t.mech_token_len, &raw),
	    0);
	ck_assert_int_eq(raw.kind, SPNEGO_RAW_NTLMSSP);
	ck_assert_ptr_eq(raw.mech_token, t.mech_token);
	ck_assert_uint_eq(raw.mech_token_len, t.mech_token_len);
}
END_TEST

/* Our encoder produces byte for byte what Samba's smbd sends. */
START_TEST(test_build_matches_samba)
{
	uint8_t buf[512];
	struct spnego_token t;
	int n, i;

	n = spnego_build_neg_hints(buf, sizeof(buf));
	ck_assert_int_eq(n, (int)sizeof(smbd_neg_hints));
	ck_assert_mem_eq(buf, smbd_neg_hints, sizeof(smbd_neg_hints));
	for (i = 0; i < n; i++)
		ck_assert_int_eq(spnego_build_neg_hints(buf, (size_t)i),
		    -EMSGSIZE);

	ck_assert_int_eq(spnego_decode(smbd_challenge, sizeof(smbd_challenge),
	    &t), 0);
	n = spnego_build_resp(buf, sizeof(buf), SPNEGO_ACCEPT_INCOMPLETE, 1,
	    t.mech_token, t.mech_token_len, NULL, 0);
	ck_assert_int_eq(n, (int)sizeof(smbd_challenge));
	ck_assert_mem_eq(buf, smbd_challenge, sizeof(smbd_challenge));
	for (i = 0; i < n; i++)
		ck_assert_int_eq(spnego_build_resp(buf, (size_t)i, 1, 1,
		    t.mech_token, t.mech_token_len, NULL, 0), -EMSGSIZE);

	ck_assert_int_eq(spnego_decode(smbd_accept, sizeof(smbd_accept), &t),
	    0);
	n = spnego_build_resp(buf, sizeof(buf), SPNEGO_ACCEPT_COMPLETED, 0,
	    NULL, 0, t.mech_list_mic, t.mech_list_mic_len);
	ck_assert_int_eq(n, (int)sizeof(smbd_accept));
	ck_assert_mem_eq(buf, smbd_accept, sizeof(smbd_accept));

	ck_assert_int_eq(spnego_build_resp(buf, sizeof(buf), 4, 0, NULL, 0,
	    NULL, 0), -EINVAL);
	n = spnego_build_resp(buf, sizeof(buf), SPNEGO_REJECT, 0, NULL, 0,
	    NULL, 0);
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(spnego_decode(buf, (size_t)n, &t), 0);
	ck_assert_int_eq(t.neg_state, SPNEGO_REJECT);
}
END_TEST

/* Long-form lengths: a 70000-byte response token round-trips. */
START_TEST(test_build_large)
{
	static uint8_t tok[70000], buf[71000];
	struct spnego_token t;
	int n;

	memcpy(tok, "NTLMSSP", 8);
	tok[69999] = 0x77;
	n = spnego_build_resp(buf, sizeof(buf), 1, 1, tok, sizeof(tok), tok,
	    300);
	ck_assert_int_gt(n, 70000);
	ck_assert_int_eq(spnego_decode(buf, (size_t)n, &t), 0);
	ck_assert_uint_eq(t.mech_token_len, sizeof(tok));
	ck_assert_int_eq(t.mech_token[69999], 0x77);
	ck_assert_uint_eq(t.mech_list_mic_len, 300);
}
END_TEST

START_TEST(test_truncations)
{
	static const struct {
		const uint8_t *p;
		size_t len;
	} tok[] = {
		{ smbd_neg_hints, sizeof(smbd_neg_hints) },
		{ smbc_init, sizeof(smbc_init) },
		{ smbd_challenge, sizeof(smbd_challenge) },
		{ smbc_auth, sizeof(smbc_auth) },
		{ smbd_accept, sizeof(smbd_accept) },
	};
	struct spnego_token t;
	size_t i, n;

	for (i = 0; i < sizeof(tok) / sizeof(tok[0]); i++) {
		for (n = 0; n < tok[i].len; n++)
			ck_assert_int_eq(decode_exact(tok[i].p, n, &t),
			    -EBADMSG);
		ck_assert_int_eq(decode_exact(tok[i].p, tok[i].len, &t), 0);
	}
}
END_TEST

/* Every single-byte corruption of every token: decoded or refused, never
 * a crash or an out-of-bounds read (ASan); and views stay in the buffer. */
START_TEST(test_corruptions)
{
	static const struct {
		const uint8_t *p;
		size_t len;
	} tok[] = {
		{ smbc_init, sizeof(smbc_init) },
		{ smbc_auth, sizeof(smbc_auth) },
		{ smbd_challenge, sizeof(smbd_challenge) },
	};
	static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0x81, 0x84,
	    0x85, 0xff };
	struct spnego_token t;
	uint8_t *b;
	size_t i, j, v;

	for (i = 0; i < sizeof(tok) / sizeof(tok[0]); i++) {
		b = malloc(tok[i].len);
		ck_assert_ptr_nonnull(b);
		for (j = 0; j < tok[i].len; j++) {
			for (v = 0; v < sizeof(vals); v++) {
				memcpy(b, tok[i].p, tok[i].len);
				b[j] = vals[v];
				if (spnego_decode(b, tok[i].len, &t) != 0)
					continue;
				if (t.mech_token_len > 0)
					ck_assert(t.mech_token >= b &&
					    t.mech_token + t.mech_token_len <=
					    b + tok[i].len);
				if (t.mech_list_mic_len > 0)
					ck_assert(t.mech_list_mic >= b &&
					    t.mech_list_mic +
					    t.mech_list_mic_len <=
					    b + tok[i].len);
			}
		}
		free(b);
	}
}
END_TEST

START_TEST(test_malformed)
{
	struct spnego_token t;
	/* indefinite length */
	static const uint8_t indef[] = { 0xa1, 0x80, 0x30, 0x00, 0x00, 0x00 };
	/* five length octets */
	static const uint8_t len5[] = { 0xa1, 0x85, 0, 0, 0, 0, 2, 0x30, 0 };
	/* high tag number form */
	static const uint8_t hightag[] = { 0xbf, 0x01, 0x00 };
	/* negTokenInit with an empty mechTypes */
	static const uint8_t nomech[] = { 0xa0, 0x06, 0x30, 0x04, 0xa0, 0x02,
	    0x30, 0x00 };
	/* wrong GSS OID (Kerberos) */
	static const uint8_t badoid[] = { 0x60, 0x0d, 0x06, 0x09, 0x2a, 0x86,
	    0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0xa0, 0x00 };
	/* negTokenResp fields out of order */
	static const uint8_t order[] = { 0xa1, 0x0c, 0x30, 0x0a, 0xa2, 0x03,
	    0x04, 0x01, 0x00, 0xa0, 0x03, 0x0a, 0x01, 0x01 };
	/* negState out of range */
	static const uint8_t state[] = { 0xa1, 0x07, 0x30, 0x05, 0xa0, 0x03,
	    0x0a, 0x01, 0x09 };
	/* inner length larger than the outer one */
	static const uint8_t inner[] = { 0xa1, 0x04, 0x30, 0x05, 0xa0, 0x03,
	    0x0a, 0x01, 0x01 };
	/* responseToken that is not an OCTET STRING */
	static const uint8_t notoct[] = { 0xa1, 0x07, 0x30, 0x05, 0xa2, 0x03,
	    0x02, 0x01, 0x00 };
	/* unknown outer tag */
	static const uint8_t outer[] = { 0x30, 0x00 };
	/* a mechType that is not an OID */
	static const uint8_t mechnotoid[] = { 0xa0, 0x08, 0x30, 0x06, 0xa0,
	    0x04, 0x30, 0x02, 0x04, 0x00 };

	ck_assert_int_eq(spnego_decode(indef, sizeof(indef), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(len5, sizeof(len5), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(hightag, sizeof(hightag), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(nomech, sizeof(nomech), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(badoid, sizeof(badoid), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(order, sizeof(order), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(state, sizeof(state), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(inner, sizeof(inner), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(notoct, sizeof(notoct), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(outer, sizeof(outer), &t), -EBADMSG);
	ck_assert_int_eq(spnego_decode(mechnotoid, sizeof(mechnotoid), &t),
	    -EBADMSG);
	ck_assert_int_eq(spnego_decode(NULL, 0, &t), -EBADMSG);
	ck_assert_int_eq(t.kind, 0);
}
END_TEST

/* Kerberos offered first, NTLMSSP second: offered but not preferred. */
START_TEST(test_ntlmssp_not_first)
{
	static const uint8_t tok[] = {
		0xa0, 0x1d, 0x30, 0x1b, 0xa0, 0x19, 0x30, 0x17,
		0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02,
		0x02,
		0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02,
		0x02, 0x0a,
	};
	struct spnego_token t;

	ck_assert_int_eq(spnego_decode(tok, sizeof(tok), &t), 0);
	ck_assert_int_eq(t.n_mech_types, 2);
	ck_assert_int_eq(t.ntlmssp_offered, 1);
	ck_assert_int_eq(t.ntlmssp_preferred, 0);
}
END_TEST

/*
 * The captured exchange end to end: NTLMv2 + MIC verification with the
 * password's NT hash, then the client's mechListMIC verified and the
 * server's reproduced byte for byte.
 */
START_TEST(test_end_to_end_captured)
{
	struct spnego_token init, chal, auth, fin;
	struct ntlmssp_auth a;
	struct ntlmssp_keys k;
	uint8_t hash[16], key[16], mic[16];

	ck_assert_int_eq(spnego_decode(smbc_init, sizeof(smbc_init), &init), 0);
	ck_assert_int_eq(spnego_decode(smbd_challenge, sizeof(smbd_challenge),
	    &chal), 0);
	ck_assert_int_eq(spnego_decode(smbc_auth, sizeof(smbc_auth), &auth), 0);
	ck_assert_int_eq(spnego_decode(smbd_accept, sizeof(smbd_accept), &fin),
	    0);

	ck_assert_int_eq(ntlmssp_decode_authenticate(auth.mech_token,
	    auth.mech_token_len, &a), 0);
	ck_assert_str_eq(a.user, "root");
	ck_assert_str_eq(a.domain, "WORKGROUP");
	ck_assert_str_eq(a.workstation, "VM");
	ck_assert_int_eq(a.has_mic, 1);
	ck_assert_int_eq(a.ntlmv2, 1);
	ck_assert(a.flags & NTLMSSP_NEGOTIATE_KEY_EXCH);

	ck_assert_int_eq(ntlmssp_nt_hash("Secret123", hash), 0);
	ck_assert_uint_eq(ntlmssp_server_verify(hash, &a, init.mech_token,
	    init.mech_token_len, chal.mech_token, chal.mech_token_len,
	    auth.mech_token, auth.mech_token_len, key), STATUS_SUCCESS);

	ntlmssp_sign_keys(key, a.flags, &k);
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 0, 0, init.mech_types,
	    init.mech_types_len, auth.mech_list_mic, auth.mech_list_mic_len),
	    0);
	ntlmssp_mac(&k, 1, 0, init.mech_types, init.mech_types_len, mic);
	ck_assert_mem_eq(mic, fin.mech_list_mic, 16);
	/* The client's MIC is not valid in the other direction. */
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 1, 0, init.mech_types,
	    init.mech_types_len, auth.mech_list_mic, auth.mech_list_mic_len),
	    -EBADMSG);

	/* Wrong password; MIC over a different NEGOTIATE. */
	ck_assert_int_eq(ntlmssp_nt_hash("secret123", hash), 0);
	ck_assert_uint_eq(ntlmssp_server_verify(hash, &a, init.mech_token,
	    init.mech_token_len, chal.mech_token, chal.mech_token_len,
	    auth.mech_token, auth.mech_token_len, key), STATUS_LOGON_FAILURE);
	ck_assert_int_eq(ntlmssp_nt_hash("Secret123", hash), 0);
	ck_assert_uint_eq(ntlmssp_server_verify(hash, &a, init.mech_token,
	    init.mech_token_len - 1, chal.mech_token, chal.mech_token_len,
	    auth.mech_token, auth.mech_token_len, key), STATUS_LOGON_FAILURE);
	/* A different server challenge (the second capture's) fails. */
	{
		uint8_t c2[512];

		memcpy(c2, chal.mech_token, chal.mech_token_len);
		c2[24] ^= 1;
		ck_assert_uint_eq(ntlmssp_server_verify(hash, &a,
		    init.mech_token, init.mech_token_len, c2,
		    chal.mech_token_len, auth.mech_token, auth.mech_token_len,
		    key), STATUS_LOGON_FAILURE);
	}
}
END_TEST

static Suite *
spnego_suite(void)
{
	Suite *s = suite_create("spnego");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_decode_client_init);
	tcase_add_test(tc, test_decode_client_auth);
	tcase_add_test(tc, test_decode_server_tokens);
	tcase_add_test(tc, test_decode_raw_ntlmssp);
	tcase_add_test(tc, test_build_matches_samba);
	tcase_add_test(tc, test_build_large);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_corruptions);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_ntlmssp_not_first);
	tcase_add_test(tc, test_end_to_end_captured);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(spnego_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
