/*
 * NTLMSSP: MS-NLMP 4.2.4 NTLMv2 known answers (user "User", domain "Domain",
 * password "Password", server challenge 0123456789abcdef, client challenge
 * aa..aa, time 0, random session key 55..55), end-to-end verification of
 * AUTHENTICATE messages built here from those values, with and without a
 * MIC, and the refusals: wrong hash, NTLMv1, anonymous, every truncation,
 * bad offsets and bad strings.  Also the CHALLENGE we build and the
 * MS-NLMP 4.2.4.4 signing/sealing keys and checksum.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/cur.h"
#include "proto/ntlmssp.h"

/* MS-NLMP 4.2.2.1.2 / 4.2.4.1.1 / 4.2.4.2.2 / 4.2.4.1.2-3 */
static const uint8_t nt_hash_password[16] = {
	0xa4, 0xf4, 0x9c, 0x40, 0x65, 0x10, 0xbd, 0xca,
	0xb6, 0x82, 0x4e, 0xe7, 0xc3, 0x0f, 0xd8, 0x52,
};
static const uint8_t ntowfv2_spec[16] = {
	0x0c, 0x86, 0x8a, 0x40, 0x3b, 0xfd, 0x7a, 0x93,
	0xa3, 0x00, 0x1e, 0xf2, 0x2e, 0xf0, 0x2e, 0x3f,
};
static const uint8_t ntproofstr_spec[16] = {
	0x68, 0xcd, 0x0a, 0xb8, 0x51, 0xe5, 0x1c, 0x96,
	0xaa, 0xbc, 0x92, 0x7b, 0xeb, 0xef, 0x6a, 0x1c,
};
static const uint8_t session_base_key_spec[16] = {
	0x8d, 0xe4, 0x0c, 0xca, 0xdb, 0xc1, 0x4a, 0x82,
	0xf1, 0x5c, 0xb0, 0xad, 0x0d, 0xe9, 0x5c, 0xa3,
};
static const uint8_t enc_session_key_spec[16] = {
	0xc5, 0xda, 0xd2, 0x54, 0x4f, 0xc9, 0x79, 0x90,
	0x94, 0xce, 0x1c, 0xe9, 0x0b, 0xc9, 0xd0, 0x3e,
};
static const uint8_t server_challenge[8] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
};
/* 4.2.4 challenge flags */
#define SPEC_FLAGS	0xe28a8233u

static uint8_t random_session_key[16];

static void
setup(void)
{
	memset(random_session_key, 0x55, 16);
}

/* ASCII -> UTF-16LE; returns the byte length. */
static size_t
u16(const char *s, uint8_t *out)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		out[2 * i] = (uint8_t)s[i];
		out[2 * i + 1] = 0;
	}
	return 2 * i;
}

static void
put_av(uint8_t *p, size_t *off, uint16_t id, const uint8_t *v, uint16_t len)
{
	le16_put(p + *off, id);
	le16_put(p + *off + 2, len);
	if (len > 0)
		memcpy(p + *off + 4, v, len);
	*off += 4 + len;
}

/* NTLMv2_CLIENT_CHALLENGE of 4.2.4.1.3, optionally with MsvAvFlags = MIC. */
static size_t
make_blob(uint8_t *b, int with_mic)
{
	uint8_t name[32], flags[4], ts[8];
	size_t off = 0, n;

	memset(b, 0, 28);
	b[0] = 1;
	b[1] = 1;
	memset(b + 16, 0xaa, 8);		/* ChallengeFromClient */
	off = 28;
	n = u16("Domain", name);
	put_av(b, &off, MSV_AV_NB_DOMAIN_NAME, name, (uint16_t)n);
	n = u16("Server", name);
	put_av(b, &off, MSV_AV_NB_COMPUTER_NAME, name, (uint16_t)n);
	if (with_mic) {
		le64_put(ts, 0x01d0000000000000ull);
		put_av(b, &off, MSV_AV_TIMESTAMP, ts, 8);
		le32_put(flags, MSV_AV_FLAG_MIC_PRESENT);
		put_av(b, &off, MSV_AV_FLAGS, flags, 4);
	}
	put_av(b, &off, MSV_AV_EOL, NULL, 0);
	memset(b + off, 0, 4);
	return off + 4;
}

struct tauth {
	uint32_t	 flags;
	const uint8_t	*lm, *nt, *dom, *user, *ws, *key;
	size_t		 lm_len, nt_len, dom_len, user_len, ws_len, key_len;
	size_t		 payload_off;	/* 88 (Version + MIC) or 72 */
};

static void
put_field(uint8_t *m, size_t at, size_t len, size_t off)
{
	le16_put(m + at, (uint16_t)len);
	le16_put(m + at + 2, (uint16_t)len);
	le32_put(m + at + 4, (uint32_t)off);
}

/* AUTHENTICATE_MESSAGE with the payload in field order; returns length. */
static size_t
build_auth(const struct tauth *t, uint8_t *m)
{
	size_t off = t->payload_off;
	const uint8_t *p[6] = { t->lm, t->nt, t->dom, t->user, t->ws, t->key };
	size_t l[6] = { t->lm_len, t->nt_len, t->dom_len, t->user_len,
	    t->ws_len, t->key_len };
	int i;

	memset(m, 0, off);
	memcpy(m, "NTLMSSP\0", 8);
	le32_put(m + 8, 3);
	for (i = 0; i < 6; i++) {
		put_field(m, 12 + 8 * (size_t)i, l[i], off);
		if (l[i] > 0)
			memcpy(m + off, p[i], l[i]);
		off += l[i];
	}
	le32_put(m + 60, t->flags);
	m[64] = 6;		/* Version */
	m[71] = 15;
	return off;
}

static void
hmac_md5(const uint8_t *key, const void *d, size_t n, uint8_t out[16])
{
	ck_assert_int_eq(gnutls_hmac_fast(GNUTLS_MAC_MD5, key, 16, d, n, out),
	    0);
}

static void
rc4(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t n)
{
	gnutls_cipher_hd_t h;
	gnutls_datum_t k = { .data = (unsigned char *)key, .size = 16 };

	ck_assert_int_eq(gnutls_cipher_init(&h, GNUTLS_CIPHER_ARCFOUR_128, &k,
	    NULL), 0);
	ck_assert_int_eq(gnutls_cipher_encrypt2(h, in, n, out, n), 0);
	gnutls_cipher_deinit(h);
}

static size_t
make_negotiate(uint8_t *m)
{
	memset(m, 0, 40);
	memcpy(m, "NTLMSSP\0", 8);
	le32_put(m + 8, 1);
	le32_put(m + 12, 0xe2088297u);
	m[32] = 10;
	m[39] = 15;
	return 40;
}

/* Client side of the spec example: returns the NT response length. */
static size_t
client_response(const uint8_t nt_hash[16], const char *user_upper,
    const char *domain, int with_mic, uint8_t *nt, uint8_t proof[16],
    uint8_t sbk[16])
{
	uint8_t ident[128], ntowf[16], buf[512];
	size_t n, blen;

	n = u16(user_upper, ident);
	n += u16(domain, ident + n);
	hmac_md5(nt_hash, ident, n, ntowf);
	blen = make_blob(nt + 16, with_mic);
	memcpy(buf, server_challenge, 8);
	memcpy(buf + 8, nt + 16, blen);
	hmac_md5(ntowf, buf, 8 + blen, proof);
	memcpy(nt, proof, 16);
	hmac_md5(ntowf, proof, 16, sbk);
	return 16 + blen;
}

START_TEST(test_nt_hash)
{
	uint8_t h[16];

	ck_assert_int_eq(ntlmssp_nt_hash("Password", h), 0);
	ck_assert_mem_eq(h, nt_hash_password, 16);
	ck_assert_int_eq(ntlmssp_nt_hash("\xc3\x28", h), -EINVAL);
}
END_TEST

/* The spec's intermediate values, computed the way the client does. */
START_TEST(test_spec_values)
{
	uint8_t ident[64], ntowf[16], nt[256], proof[16], sbk[16], enc[16];
	size_t n;

	n = u16("USER", ident);
	n += u16("Domain", ident + n);
	hmac_md5(nt_hash_password, ident, n, ntowf);
	ck_assert_mem_eq(ntowf, ntowfv2_spec, 16);
	client_response(nt_hash_password, "USER", "Domain", 0, nt, proof, sbk);
	ck_assert_mem_eq(proof, ntproofstr_spec, 16);
	ck_assert_mem_eq(sbk, session_base_key_spec, 16);
	rc4(sbk, random_session_key, enc, 16);
	ck_assert_mem_eq(enc, enc_session_key_spec, 16);
}
END_TEST

static size_t
spec_challenge(uint8_t *c, size_t cap)
{
	int n = ntlmssp_build_challenge(c, cap, SPEC_FLAGS, server_challenge,
	    "Domain", "Server", NULL, NULL, 0);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* Builds the spec's AUTHENTICATE for `user` (sent as given). */
static size_t
spec_auth(uint8_t *m, const char *user, const char *domain, uint32_t flags,
    int with_mic, const uint8_t *nt_hash)
{
	static uint8_t nt[256], dom[64], usr[64], ws[64], enc[16];
	static const uint8_t lm[24];
	uint8_t proof[16], sbk[16], up[64];
	struct tauth t;
	size_t i;

	for (i = 0; user[i] != '\0'; i++)
		up[i] = (uint8_t)(user[i] >= 'a' && user[i] <= 'z' ?
		    user[i] - 32 : user[i]);
	up[i] = '\0';
	memset(&t, 0, sizeof(t));
	t.flags = flags;
	t.lm = lm;
	t.lm_len = 24;
	t.nt = nt;
	t.nt_len = client_response(nt_hash, (char *)up, domain, with_mic, nt,
	    proof, sbk);
	t.dom = dom;
	t.dom_len = u16(domain, dom);
	t.user = usr;
	t.user_len = u16(user, usr);
	t.ws = ws;
	t.ws_len = u16("COMPUTER", ws);
	if (flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		rc4(sbk, random_session_key, enc, 16);
		t.key = enc;
		t.key_len = 16;
	}
	t.payload_off = 88;
	return build_auth(&t, m);
}

START_TEST(test_verify_spec)
{
	uint8_t chal[512], m[1024], key[16];
	size_t clen = spec_challenge(chal, sizeof(chal));
	size_t len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 0,
	    nt_hash_password);
	struct ntlmssp_auth a;

	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_str_eq(a.user, "User");
	ck_assert_str_eq(a.domain, "Domain");
	ck_assert_str_eq(a.workstation, "COMPUTER");
	ck_assert_int_eq(a.ntlmv2, 1);
	ck_assert_int_eq(a.has_mic, 0);
	ck_assert_int_eq(a.anonymous, 0);
	ck_assert_uint_eq(a.flags, SPEC_FLAGS);
	ck_assert_uint_eq(a.enc_session_key_len, 16);
	ck_assert_mem_eq(a.enc_session_key, enc_session_key_spec, 16);
	ck_assert_mem_eq(a.nt, ntproofstr_spec, 16);
	ck_assert_mem_eq(a.client_challenge, "\xaa\xaa\xaa\xaa\xaa\xaa\xaa\xaa",
	    8);
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_SUCCESS);
	ck_assert_mem_eq(key, random_session_key, 16);
}
END_TEST

/* Without KEY_EXCH the exported key is the session base key. */
START_TEST(test_verify_no_key_exch)
{
	uint8_t chal[512], m[1024], key[16];
	size_t clen = spec_challenge(chal, sizeof(chal));
	uint32_t f = SPEC_FLAGS & ~NTLMSSP_NEGOTIATE_KEY_EXCH;
	size_t len = spec_auth(m, "User", "Domain", f, 0, nt_hash_password);
	struct ntlmssp_auth a;

	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_SUCCESS);
	ck_assert_mem_eq(key, session_base_key_spec, 16);
}
END_TEST

/* User names are compared case-insensitively; domains as sent. */
START_TEST(test_verify_case)
{
	uint8_t chal[512], m[1024], key[16];
	size_t clen = spec_challenge(chal, sizeof(chal)), len;
	struct ntlmssp_auth a;

	len = spec_auth(m, "uSeR", "Domain", SPEC_FLAGS, 0, nt_hash_password);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_str_eq(a.user, "uSeR");
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_SUCCESS);

	/* The client computed with "Domain" but the message says "DOMAIN". */
	len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 0, nt_hash_password);
	memcpy(m + len - 16 - 16 - 8 - 12, "D\0O\0M\0A\0I\0N\0", 12);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_str_eq(a.domain, "DOMAIN");
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_LOGON_FAILURE);
}
END_TEST

START_TEST(test_verify_mic)
{
	uint8_t neg[64], chal[512], m[1024], key[16], mic[16];
	size_t nlen = make_negotiate(neg);
	size_t clen = spec_challenge(chal, sizeof(chal));
	size_t len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 1,
	    nt_hash_password);
	struct ntlmssp_auth a;
	gnutls_hmac_hd_t h;

	/* MIC = HMAC_MD5(ExportedSessionKey, NEG || CHAL || AUTH(MIC=0)) */
	ck_assert_int_eq(gnutls_hmac_init(&h, GNUTLS_MAC_MD5,
	    random_session_key, 16), 0);
	gnutls_hmac(h, neg, nlen);
	gnutls_hmac(h, chal, clen);
	gnutls_hmac(h, m, len);
	gnutls_hmac_deinit(h, mic);
	memcpy(m + NTLMSSP_MIC_OFFSET, mic, 16);

	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(a.has_mic, 1);
	ck_assert_uint_eq(a.mic_offset, NTLMSSP_MIC_OFFSET);
	ck_assert(a.timestamp == 0);		/* the blob's TimeStamp (spec: 0) */
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, neg,
	    nlen, chal, clen, m, len, key), STATUS_SUCCESS);
	ck_assert_mem_eq(key, random_session_key, 16);

	/* A tampered MIC, NEGOTIATE or CHALLENGE (flags) fails. */
	m[NTLMSSP_MIC_OFFSET + 5] ^= 1;
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, neg,
	    nlen, chal, clen, m, len, key), STATUS_LOGON_FAILURE);
	m[NTLMSSP_MIC_OFFSET + 5] ^= 1;
	neg[12] ^= 0x10;
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, neg,
	    nlen, chal, clen, m, len, key), STATUS_LOGON_FAILURE);
	neg[12] ^= 0x10;
	chal[20] ^= 0x10;
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, neg,
	    nlen, chal, clen, m, len, key), STATUS_LOGON_FAILURE);
	chal[20] ^= 0x10;
	/* The MIC-present flag cannot be stripped: it is under NTProofStr. */
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, neg,
	    nlen, chal, clen, m, len, key), STATUS_SUCCESS);
}
END_TEST

/* MsvAvFlags says MIC, but the payload starts where the MIC would be. */
START_TEST(test_mic_without_room)
{
	static uint8_t nt[256];
	uint8_t m[1024], proof[16], sbk[16], usr[16];
	struct tauth t;
	struct ntlmssp_auth a;
	size_t len;

	memset(&t, 0, sizeof(t));
	t.flags = SPEC_FLAGS & ~NTLMSSP_NEGOTIATE_KEY_EXCH;
	t.nt = nt;
	t.nt_len = client_response(nt_hash_password, "USER", "Domain", 1, nt,
	    proof, sbk);
	t.user = usr;
	t.user_len = u16("User", usr);
	t.payload_off = 72;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
	t.payload_off = 88;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
}
END_TEST

START_TEST(test_verify_refusals)
{
	uint8_t chal[512], m[1024], key[16], bad[16];
	size_t clen = spec_challenge(chal, sizeof(chal));
	size_t len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 0,
	    nt_hash_password);
	struct ntlmssp_auth a;
	static const uint8_t zero[16];

	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	memcpy(bad, nt_hash_password, 16);
	bad[15] ^= 1;
	memset(key, 0xee, 16);
	ck_assert_uint_eq(ntlmssp_server_verify(bad, &a, NULL, 0, chal, clen,
	    m, len, key), STATUS_LOGON_FAILURE);
	ck_assert_mem_eq(key, zero, 16);
	/* Not a CHALLENGE message / too short. */
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    m, len, m, len, key), STATUS_LOGON_FAILURE);
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, 31, m, len, key), STATUS_LOGON_FAILURE);
	/* KEY_EXCH without a 16-byte encrypted key. */
	a.enc_session_key_len = 8;
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_LOGON_FAILURE);
}
END_TEST

/* NTLMv1 (24-byte NT response) decodes but never authenticates. */
START_TEST(test_ntlmv1_refused)
{
	uint8_t chal[512], m[512], key[16], nt[64], usr[16], dom[16];
	size_t clen = spec_challenge(chal, sizeof(chal)), len;
	struct tauth t;
	struct ntlmssp_auth a;

	memset(&t, 0, sizeof(t));
	memset(nt, 0x11, sizeof(nt));
	t.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM;
	t.lm = nt;
	t.lm_len = 24;
	t.nt = nt;
	t.nt_len = 24;
	t.user = usr;
	t.user_len = u16("User", usr);
	t.dom = dom;
	t.dom_len = u16("Domain", dom);
	t.payload_off = 72;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(a.ntlmv2, 0);
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_LOGON_FAILURE);
	/* 1..23 and 25..43-byte NT responses are malformed. */
	t.nt_len = 16;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
	t.nt_len = 30;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
}
END_TEST

START_TEST(test_anonymous)
{
	uint8_t chal[512], m[512], key[16];
	static const uint8_t z1[1];
	size_t clen = spec_challenge(chal, sizeof(chal)), len;
	struct tauth t;
	struct ntlmssp_auth a;

	memset(&t, 0, sizeof(t));
	t.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_ANONYMOUS;
	t.lm = z1;
	t.lm_len = 1;
	t.payload_off = 72;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(a.anonymous, 1);
	ck_assert_str_eq(a.user, "");
	ck_assert_uint_eq(ntlmssp_server_verify(nt_hash_password, &a, NULL, 0,
	    chal, clen, m, len, key), STATUS_LOGON_FAILURE);
}
END_TEST

/*
 * MS-NLMP 3.3.1: an anonymous exchange's key.  Without KEY_EXCH it is the
 * zero SessionBaseKey; with it the client's key RC4-decrypted under that
 * zero key (RC4 of zeros under a zero key: de188941a3375d3a8a061e67576e926d,
 * the cipher's well-known first keystream bytes).
 */
START_TEST(test_anonymous_key)
{
	static const uint8_t z1[1], zeros[16];
	static const uint8_t ks[16] = {
		0xde, 0x18, 0x89, 0x41, 0xa3, 0x37, 0x5d, 0x3a,
		0x8a, 0x06, 0x1e, 0x67, 0x57, 0x6e, 0x92, 0x6d };
	uint8_t m[512], key[16], enc[16], want[16];
	struct tauth t;
	struct ntlmssp_auth a;
	size_t len;
	int i;

	memset(&t, 0, sizeof(t));
	t.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_ANONYMOUS;
	t.lm = z1;
	t.lm_len = 1;
	t.payload_off = 72;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	memset(key, 0xaa, sizeof(key));
	ck_assert_int_eq(ntlmssp_anonymous_key(&a, key), 0);
	ck_assert_mem_eq(key, zeros, 16);

	/* KEY_EXCH: a zero "encrypted" key gives the keystream itself. */
	t.flags |= NTLMSSP_NEGOTIATE_KEY_EXCH;
	t.key = zeros;
	t.key_len = 16;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(ntlmssp_anonymous_key(&a, key), 0);
	ck_assert_mem_eq(key, ks, 16);

	/* A client's random key comes back as it chose it. */
	for (i = 0; i < 16; i++)
		want[i] = (uint8_t)(i * 37 + 5);
	rc4(zeros, want, enc, 16);
	t.key = enc;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(ntlmssp_anonymous_key(&a, key), 0);
	ck_assert_mem_eq(key, want, 16);

	/* KEY_EXCH without a 16-byte key: the zero key, as before. */
	t.key_len = 8;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_int_eq(ntlmssp_anonymous_key(&a, key), 0);
	ck_assert_mem_eq(key, zeros, 16);

	/* Not anonymous: refused, the key zeroed. */
	t.user = (const uint8_t *)"u\0";
	t.user_len = 2;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	memset(key, 0xaa, sizeof(key));
	ck_assert_int_eq(ntlmssp_anonymous_key(&a, key), -EINVAL);
	ck_assert_mem_eq(key, zeros, 16);
}
END_TEST

START_TEST(test_auth_truncations)
{
	uint8_t m[1024], *b;
	size_t len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 1,
	    nt_hash_password), n;
	struct ntlmssp_auth a;

	for (n = 0; n < len; n++) {
		b = malloc(n ? n : 1);
		ck_assert_ptr_nonnull(b);
		memcpy(b, m, n);
		ck_assert_int_eq(ntlmssp_decode_authenticate(b, n, &a),
		    -EBADMSG);
		free(b);
	}
	b = malloc(len);
	memcpy(b, m, len);
	ck_assert_int_eq(ntlmssp_decode_authenticate(b, len, &a), 0);
	free(b);
}
END_TEST

START_TEST(test_auth_bad_fields)
{
	uint8_t m[1024], w[1024];
	size_t len = spec_auth(m, "User", "Domain", SPEC_FLAGS, 0,
	    nt_hash_password);
	struct ntlmssp_auth a;
	size_t f;

	/* Each field's offset pointing past the end, or into the header. */
	for (f = 12; f <= 52; f += 8) {
		memcpy(w, m, len);
		le32_put(w + f + 4, (uint32_t)len);
		ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a),
		    -EBADMSG);
		memcpy(w, m, len);
		le32_put(w + f + 4, 0xffffffffu);
		ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a),
		    -EBADMSG);
		memcpy(w, m, len);
		le32_put(w + f + 4, 8);
		ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a),
		    -EBADMSG);
	}
	/* Wrong signature and message type. */
	memcpy(w, m, len);
	w[0] = 'X';
	ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a), -EBADMSG);
	memcpy(w, m, len);
	w[8] = 2;
	ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a), -EBADMSG);
	/* An odd-length Unicode user name. */
	memcpy(w, m, len);
	le16_put(w + 36, 7);
	ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a), -EBADMSG);
	/* A v2 blob with the wrong RespType, and one without MsvAvEOL. */
	memcpy(w, m, len);
	w[le32_get(w + 24) + 16] = 2;
	ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a), -EBADMSG);
	memcpy(w, m, len);
	le16_put(w + 20, 16 + 28 + 4);		/* cut the AV list short */
	ck_assert_int_eq(ntlmssp_decode_authenticate(w, len, &a), -EBADMSG);
}
END_TEST

START_TEST(test_auth_strings)
{
	uint8_t m[2048], usr[1200];
	struct tauth t;
	struct ntlmssp_auth a;
	size_t len, i;
	/* "Jürgen" with a non-BMP character (U+1F600) after it. */
	static const uint8_t juergen[] = { 'J', 0, 0xfc, 0, 'r', 0, 'g', 0,
	    'e', 0, 'n', 0, 0x3d, 0xd8, 0x00, 0xde };
	static const uint8_t lone_hi[] = { 'a', 0, 0x3d, 0xd8 };
	static const uint8_t lone_lo[] = { 0x00, 0xde, 'a', 0 };
	static const uint8_t nul[] = { 'a', 0, 0, 0 };

	memset(&t, 0, sizeof(t));
	t.flags = NTLMSSP_NEGOTIATE_UNICODE;
	t.payload_off = 72;
	t.user = juergen;
	t.user_len = sizeof(juergen);
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_str_eq(a.user, "J\xc3\xbcrgen\xf0\x9f\x98\x80");
	t.user = lone_hi;
	t.user_len = sizeof(lone_hi);
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
	t.user = lone_lo;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
	t.user = nul;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);

	/* 255 UTF-8 bytes fit, 256 do not. */
	for (i = 0; i < 256; i++) {
		usr[2 * i] = 'x';
		usr[2 * i + 1] = 0;
	}
	t.user = usr;
	t.user_len = 2 * 255;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_uint_eq(strlen(a.user), 255);
	t.user_len = 2 * 256;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);

	/* OEM: ASCII accepted, anything else refused. */
	t.flags = NTLMSSP_NEGOTIATE_OEM;
	t.user = (const uint8_t *)"guest";
	t.user_len = 5;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), 0);
	ck_assert_str_eq(a.user, "guest");
	t.user = (const uint8_t *)"g\xfc";
	t.user_len = 2;
	len = build_auth(&t, m);
	ck_assert_int_eq(ntlmssp_decode_authenticate(m, len, &a), -EBADMSG);
}
END_TEST

/* Walks our CHALLENGE's target info; returns the AV ids in order. */
START_TEST(test_build_challenge)
{
	uint8_t c[512], *b;
	int n, i;
	uint32_t f;
	size_t ti_off, ti_len, off;
	uint16_t ids[8], id, l;
	int nid = 0;

	n = ntlmssp_build_challenge(c, sizeof(c), 0xe2088297u,
	    server_challenge, "WORKGROUP", "USMBD", "example.org",
	    "usmbd.example.org", 0x01d9000011112222ull);
	ck_assert_int_gt(n, 56);
	ck_assert_int_eq(ntlmssp_msg_type(c, (size_t)n),
	    NTLMSSP_CHALLENGE_MESSAGE);
	f = le32_get(c + 20);
	ck_assert(f & NTLMSSP_NEGOTIATE_UNICODE);
	ck_assert(f & NTLMSSP_NEGOTIATE_NTLM);
	ck_assert(f & NTLMSSP_NEGOTIATE_TARGET_INFO);
	ck_assert(f & NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY);
	ck_assert(f & NTLMSSP_NEGOTIATE_KEY_EXCH);
	ck_assert(f & NTLMSSP_NEGOTIATE_128);
	ck_assert(f & NTLMSSP_NEGOTIATE_SIGN);
	ck_assert(f & NTLMSSP_NEGOTIATE_VERSION);
	ck_assert(f & NTLMSSP_TARGET_TYPE_SERVER);
	ck_assert(!(f & NTLMSSP_NEGOTIATE_LM_KEY));
	ck_assert(!(f & NTLMSSP_NEGOTIATE_OEM));
	ck_assert_mem_eq(c + 24, server_challenge, 8);
	ck_assert_int_eq(c[48], 6);			/* Version */
	/* TargetName = "USMBD" in UTF-16 */
	ck_assert_int_eq(le16_get(c + 12), 10);
	ck_assert_mem_eq(c + le32_get(c + 16), "U\0S\0M\0B\0D\0", 10);
	ti_len = le16_get(c + 40);
	ti_off = le32_get(c + 44);
	ck_assert_uint_eq(ti_off + ti_len, (size_t)n);
	for (off = ti_off; off + 4 <= ti_off + ti_len && nid < 8;) {
		id = le16_get(c + off);
		l = le16_get(c + off + 2);
		ids[nid++] = id;
		if (id == MSV_AV_TIMESTAMP) {
			ck_assert_int_eq(l, 8);
			ck_assert(le64_get(c + off + 4) ==
			    0x01d9000011112222ull);
		}
		if (id == MSV_AV_NB_DOMAIN_NAME)
			ck_assert_mem_eq(c + off + 4,
			    "W\0O\0R\0K\0G\0R\0O\0U\0P\0", 18);
		off += 4u + l;
		if (id == MSV_AV_EOL)
			break;
	}
	ck_assert_uint_eq(off, ti_off + ti_len);
	ck_assert_int_eq(nid, 6);
	ck_assert_int_eq(ids[0], MSV_AV_NB_DOMAIN_NAME);
	ck_assert_int_eq(ids[1], MSV_AV_NB_COMPUTER_NAME);
	ck_assert_int_eq(ids[2], MSV_AV_DNS_DOMAIN_NAME);
	ck_assert_int_eq(ids[3], MSV_AV_DNS_COMPUTER_NAME);
	ck_assert_int_eq(ids[4], MSV_AV_TIMESTAMP);
	ck_assert_int_eq(ids[5], MSV_AV_EOL);

	/* Every short buffer is refused, with ASan watching the writes. */
	for (i = 0; i < n; i++) {
		b = malloc(i ? (size_t)i : 1);
		ck_assert_int_eq(ntlmssp_build_challenge(b, (size_t)i,
		    0xe2088297u, server_challenge, "WORKGROUP", "USMBD",
		    "example.org", "usmbd.example.org", 1), -EMSGSIZE);
		free(b);
	}
	ck_assert_int_eq(ntlmssp_build_challenge(c, sizeof(c), 0xe2088297u,
	    server_challenge, "WORK\xffGROUP", "USMBD", NULL, NULL, 1),
	    -EINVAL);

	/* An OEM-only client without VERSION: OEM target name, no version. */
	n = ntlmssp_build_challenge(c, sizeof(c), NTLMSSP_NEGOTIATE_OEM |
	    NTLMSSP_NEGOTIATE_NTLM, server_challenge, "WORKGROUP", "USMBD",
	    NULL, NULL, 1);
	ck_assert_int_gt(n, 0);
	f = le32_get(c + 20);
	ck_assert(f & NTLMSSP_NEGOTIATE_OEM);
	ck_assert(!(f & NTLMSSP_NEGOTIATE_UNICODE));
	ck_assert(!(f & NTLMSSP_NEGOTIATE_VERSION));
	ck_assert(!(f & NTLMSSP_NEGOTIATE_KEY_EXCH));
	ck_assert_int_eq(c[48], 0);
	ck_assert_int_eq(le16_get(c + 12), 5);
	ck_assert_mem_eq(c + le32_get(c + 16), "USMBD", 5);
}
END_TEST

START_TEST(test_decode_negotiate)
{
	uint8_t m[64], *b;
	size_t len = make_negotiate(m), n;
	uint32_t f = 0;

	ck_assert_int_eq(ntlmssp_decode_negotiate(m, len, &f), 0);
	ck_assert_uint_eq(f, 0xe2088297u);
	for (n = 0; n < 16; n++) {
		b = malloc(n ? n : 1);
		memcpy(b, m, n);
		ck_assert_int_eq(ntlmssp_decode_negotiate(b, n, &f), -EBADMSG);
		free(b);
	}
	m[8] = 3;
	ck_assert_int_eq(ntlmssp_decode_negotiate(m, len, &f), -EBADMSG);
}
END_TEST

/* MS-NLMP 4.2.4.4: keys and the HMAC-MD5 checksum over "Plaintext". */
START_TEST(test_sign_keys_spec)
{
	static const uint8_t sign_c2s[16] = {
		0x47, 0x88, 0xdc, 0x86, 0x1b, 0x47, 0x82, 0xf3,
		0x5d, 0x43, 0xfd, 0x98, 0xfe, 0x1a, 0x2d, 0x39,
	};
	static const uint8_t seal_c2s[16] = {
		0x59, 0xf6, 0x00, 0x97, 0x3c, 0xc4, 0x96, 0x0a,
		0x25, 0x48, 0x0a, 0x7c, 0x19, 0x6e, 0x4c, 0x58,
	};
	static const uint8_t sig_plain[16] = {
		0x01, 0x00, 0x00, 0x00, 0x70, 0x35, 0x28, 0x51,
		0xf2, 0x56, 0x43, 0x09, 0x00, 0x00, 0x00, 0x00,
	};
	/* RC4(seal_c2s) on a fresh state applied to 70352851f2564309
	 * (computed with Python's cryptography ARC4). */
	static const uint8_t sig_kx[16] = {
		0x01, 0x00, 0x00, 0x00, 0x74, 0xd0, 0x45, 0x34,
		0x2c, 0x4f, 0x1c, 0xd5, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t pt[18], sig[16];
	struct ntlmssp_keys k;

	u16("Plaintext", pt);
	ntlmssp_sign_keys(random_session_key, SPEC_FLAGS, &k);
	ck_assert_mem_eq(k.sign_c2s, sign_c2s, 16);
	ck_assert_mem_eq(k.seal_c2s, seal_c2s, 16);
	ck_assert_int_ne(memcmp(k.sign_s2c, k.sign_c2s, 16), 0);

	ntlmssp_sign_keys(random_session_key,
	    SPEC_FLAGS & ~NTLMSSP_NEGOTIATE_KEY_EXCH, &k);
	ntlmssp_mac(&k, 0, 0, pt, sizeof(pt), sig);
	ck_assert_mem_eq(sig, sig_plain, 16);

	ntlmssp_sign_keys(random_session_key, SPEC_FLAGS, &k);
	ntlmssp_mac(&k, 0, 0, pt, sizeof(pt), sig);
	ck_assert_mem_eq(sig, sig_kx, 16);
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 0, 0, pt, sizeof(pt), sig, 16),
	    0);
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 0, 1, pt, sizeof(pt), sig, 16),
	    -EBADMSG);
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 0, 0, pt, sizeof(pt), sig, 15),
	    -EBADMSG);
	ck_assert_int_eq(ntlmssp_mac_verify(&k, 0, 0, pt, sizeof(pt) - 1, sig,
	    16), -EBADMSG);
}
END_TEST

static Suite *
ntlmssp_suite(void)
{
	Suite *s = suite_create("ntlmssp");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_nt_hash);
	tcase_add_test(tc, test_spec_values);
	tcase_add_test(tc, test_verify_spec);
	tcase_add_test(tc, test_verify_no_key_exch);
	tcase_add_test(tc, test_verify_case);
	tcase_add_test(tc, test_verify_mic);
	tcase_add_test(tc, test_mic_without_room);
	tcase_add_test(tc, test_verify_refusals);
	tcase_add_test(tc, test_ntlmv1_refused);
	tcase_add_test(tc, test_anonymous);
	tcase_add_test(tc, test_anonymous_key);
	tcase_add_test(tc, test_auth_truncations);
	tcase_add_test(tc, test_auth_bad_fields);
	tcase_add_test(tc, test_auth_strings);
	tcase_add_test(tc, test_build_challenge);
	tcase_add_test(tc, test_decode_negotiate);
	tcase_add_test(tc, test_sign_keys_spec);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ntlmssp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
