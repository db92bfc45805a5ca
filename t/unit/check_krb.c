/*
 * Unit tests for the Kerberos pieces that need no KDC: daemon/krbmsg.c
 * (round trip, every truncation refused, trailing bytes, a good answer
 * without a principal or key, oversized fields), daemon/usermap.c
 * (Samba's format: quotes, `*`, `!`, comments, last match wins),
 * daemon/auth_krb.c auth_krb_map (realm strip, other realms, service
 * principals, the map on the whole principal and on the name), and
 * proto/spnego.c's Kerberos additions (the NEGOTIATE blob lists the two
 * krb5 OIDs before NTLMSSP; krb5_preferred; spnego_krb5_token; the
 * supportedMech of a reply), and Kerberos after another mechanism: the
 * helper's request (krbmsg_req: an AP-REQ with mechTypes and MIC, or a
 * kept context's MIC, never both; every truncation refused), the
 * continuing answer (STATUS_MORE_PROCESSING_REQUIRED with a context), the
 * authmsg fields that carry them, and the mechanism positions SPNEGO
 * reports for Windows' [NegoEx, krb5-MS, krb5, NTLMSSP].
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/auth_krb.h"
#include "daemon/conf.h"
#include "daemon/authmsg.h"
#include "daemon/krbmsg.h"
#include "proto/ntstatus.h"
#include "daemon/usermap.h"
#include "proto/kdf.h"
#include "proto/spnego.h"

static uint8_t buf[sizeof(struct krbmsg_rep) + 128];

static void
rep_fill(struct krbmsg_rep *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->principal, sizeof(r->principal), "alice@USMBD.TEST");
	r->key_len = 32;
	memset(r->key, 0x5a, r->key_len);
	r->lifetime = 3600;
	r->pac = 1;
	r->out_len = 5;
	memcpy(r->out, "\x60\x03\x06\x01\x00", 5);
	snprintf(r->pac_domain, sizeof(r->pac_domain), "S-1-5-21-1-2-3");
	r->pac_n_groups = 3;
	r->pac_n_rids = 2;
	r->pac_rids[0] = 513;
	r->pac_rids[1] = 1104;
	r->pac_extra_sids = 1;
}

START_TEST(test_rep_round_trip)
{
	struct krbmsg_rep r, d;
	int n, i;

	rep_fill(&r);
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert_str_eq(d.principal, "alice@USMBD.TEST");
	ck_assert_uint_eq(d.key_len, 32);
	ck_assert_mem_eq(d.key, r.key, 32);
	ck_assert_uint_eq(d.lifetime, 3600);
	ck_assert_uint_eq(d.pac, 1);
	ck_assert_uint_eq(d.out_len, 5);
	ck_assert_mem_eq(d.out, r.out, 5);
	ck_assert_str_eq(d.pac_domain, "S-1-5-21-1-2-3");
	ck_assert_uint_eq(d.pac_n_groups, 3);
	ck_assert_uint_eq(d.pac_n_rids, 2);
	ck_assert_uint_eq(d.pac_rids[1], 1104);
	ck_assert_uint_eq(d.pac_extra_sids, 1);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)i), -EBADMSG);
	buf[n] = 0;
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n + 1), -EBADMSG);
}
END_TEST

START_TEST(test_rep_bad)
{
	struct krbmsg_rep r, d;
	int n;

	/* A good verdict with no principal, or no key, is refused. */
	rep_fill(&r);
	r.principal[0] = '\0';
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	rep_fill(&r);
	r.key_len = 0;
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	/* A failure may name no one. */
	memset(&r, 0, sizeof(r));
	r.status = 0xc000006d;
	snprintf(r.why, sizeof(r.why), "ticket expired");
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert_str_eq(d.why, "ticket expired");
	/* A key longer than the field, a NUL inside a string. */
	rep_fill(&r);
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	buf[4 + 2 + 16] = 0xff;		/* key_len's low byte */
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	rep_fill(&r);
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	buf[4 + 2 + 3] = '\0';		/* inside "alice@..." */
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	r.key_len = KRBMSG_KEY_MAX + 1;
	ck_assert_int_eq(krbmsg_rep_encode(&r, buf, sizeof(buf)), -EMSGSIZE);
	/* More PAC RIDs than groups, or than the field holds. */
	rep_fill(&r);
	r.pac_n_groups = 1;
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	rep_fill(&r);
	r.pac_n_rids = PAC_MAX_RIDS + 1;
	ck_assert_int_eq(krbmsg_rep_encode(&r, buf, sizeof(buf)), -EMSGSIZE);
}
END_TEST

static int
map(const char *text, const char *name, char *out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	ck_assert_ptr_nonnull(f);
	rc = usermap_lookup(f, name, out, 64);
	fclose(f);
	return rc;
}

START_TEST(test_usermap)
{
	const char *m = "# comment\n; comment\n"
	    "bob = carol@USMBD.TEST \"Carol Smith\"\n"
	    "root = administrator\n"
	    "guest = *\n"
	    "!alice = ALICE@OTHER.REALM\n"
	    "nobody = alice@other.realm\n";
	char out[64];

	ck_assert_int_eq(map(m, "carol@usmbd.test", out), 1);
	/* `*` on a later line wins over the earlier match */
	ck_assert_str_eq(out, "guest");
	ck_assert_int_eq(map(m, "alice@other.realm", out), 1);
	ck_assert_str_eq(out, "alice");	/* `!` stops the search */
	ck_assert_int_eq(map("bob = carol \"Carol Smith\"\n", "carol smith",
	    out), 1);
	ck_assert_str_eq(out, "bob");
	ck_assert_int_eq(map("bob = carol\n", "dave", out), 0);
	ck_assert_int_eq(map("no equals sign here\n", "here", out), 0);
	ck_assert_int_eq(map("", "x", out), 0);
}
END_TEST

START_TEST(test_auth_krb_map)
{
	struct conf c;
	char out[64], path[] = "/tmp/check_krb_map.XXXXXX";
	const char *why = NULL;
	FILE *f;
	int fd;

	memset(&c, 0, sizeof(c));
	c.realm = "USMBD.TEST";
	ck_assert_int_eq(auth_krb_map(&c, "alice@USMBD.TEST", out, sizeof(out),
	    &why), 0);
	ck_assert_str_eq(out, "alice");
	ck_assert_int_eq(auth_krb_map(&c, "alice@usmbd.test", out, sizeof(out),
	    &why), 0);
	ck_assert_int_eq(auth_krb_map(&c, "alice@OTHER.REALM", out, sizeof(out),
	    &why), -1);
	ck_assert_int_eq(auth_krb_map(&c, "cifs/vm@USMBD.TEST", out,
	    sizeof(out), &why), -1);
	ck_assert_int_eq(auth_krb_map(&c, "@USMBD.TEST", out, sizeof(out),
	    &why), -1);
	ck_assert_int_eq(auth_krb_map(&c, "alice", out, sizeof(out), &why), -1);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("bob = alice@OTHER.REALM\nbob = carol\n", f);
	fclose(f);
	c.username_map = path;
	ck_assert_int_eq(auth_krb_map(&c, "alice@OTHER.REALM", out, sizeof(out),
	    &why), 0);
	ck_assert_str_eq(out, "bob");
	ck_assert_int_eq(auth_krb_map(&c, "carol@USMBD.TEST", out, sizeof(out),
	    &why), 0);
	ck_assert_str_eq(out, "bob");
	c.realm = NULL;
	ck_assert_int_eq(auth_krb_map(&c, "carol@USMBD.TEST", out, sizeof(out),
	    &why), -1);
	unlink(path);
}
END_TEST

static const uint8_t krb5_oid[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
    0xf7, 0x12, 0x01, 0x02, 0x02 };
static const uint8_t krb5_ms_oid[] = { 0x06, 0x09, 0x2a, 0x86, 0x48, 0x82,
    0xf7, 0x12, 0x01, 0x02, 0x02 };

static const uint8_t *
find(const uint8_t *p, size_t n, const uint8_t *what, size_t wn)
{
	size_t i;

	for (i = 0; i + wn <= n; i++)
		if (memcmp(p + i, what, wn) == 0)
			return p + i;
	return NULL;
}

START_TEST(test_spnego_krb5)
{
	static const uint8_t ntlm_oid[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
	    0x01, 0x82, 0x37, 0x02, 0x02, 0x0a };
	/* A client's NegTokenInit: [krb5, NTLMSSP], an AP-REQ token. */
	struct spnego_token sp;
	uint8_t out[256], tok[32];
	const uint8_t *a, *b, *c;
	uint16_t id;
	int n, i;

	n = spnego_build_neg_init(out, sizeof(out), 1);
	ck_assert_int_gt(n, 0);
	a = find(out, (size_t)n, krb5_ms_oid, sizeof(krb5_ms_oid));
	b = find(out, (size_t)n, krb5_oid, sizeof(krb5_oid));
	c = find(out, (size_t)n, ntlm_oid, sizeof(ntlm_oid));
	ck_assert(a != NULL && b != NULL && c != NULL && a < b && b < c);
	ck_assert_int_eq(spnego_decode(out, (size_t)n, &sp), 0);
	ck_assert_int_eq(sp.krb5_preferred, SPNEGO_MECH_KRB5_MS);
	ck_assert_int_eq(sp.n_mech_types, 3);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(spnego_build_neg_init(out, (size_t)i, 1),
		    -EMSGSIZE);
	n = spnego_build_neg_init(out, sizeof(out), 0);
	ck_assert_ptr_null(find(out, (size_t)n, krb5_oid, sizeof(krb5_oid)));

	/* The token is cut short on purpose: only the framing counts. */
	memcpy(tok, "\x60\x0d", 2);
	memcpy(tok + 2, krb5_oid, sizeof(krb5_oid));
	tok[13] = 0x01;
	tok[14] = 0x00;
	ck_assert_int_eq(spnego_krb5_token(tok, 15, &id), 1);
	ck_assert_uint_eq(id, SPNEGO_KRB5_AP_REQ);
	ck_assert_int_eq(spnego_krb5_token(tok, 14, &id), 0);
	tok[2 + 5] = 0x82;		/* the MS spelling */
	ck_assert_int_eq(spnego_krb5_token(tok, 15, &id), 1);
	tok[2 + 5] = 0x83;
	ck_assert_int_eq(spnego_krb5_token(tok, 15, &id), 0);
	ck_assert_int_eq(spnego_krb5_token((const uint8_t *)"NTLMSSP", 8, &id),
	    0);

	/* supportedMech Kerberos in a reply, with an AP-REP token. */
	n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_COMPLETED,
	    SPNEGO_MECH_KRB5, tok, 15, NULL, 0);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_nonnull(find(out, (size_t)n, krb5_oid, sizeof(krb5_oid)));
	ck_assert_int_eq(spnego_decode(out, (size_t)n, &sp), 0);
	ck_assert_int_eq(sp.neg_state, SPNEGO_ACCEPT_COMPLETED);
	ck_assert_int_eq(sp.supported_mech_ntlmssp, 0);
	ck_assert_uint_eq(sp.mech_token_len, 15);
}
END_TEST

static const uint8_t mt_der[] = { 0x30, 0x04, 0x06, 0x02, 0x2b, 0x06 };
static const uint8_t mic_tok[28] = { 0x04, 0x04, 0x05 };

START_TEST(test_req_round_trip)
{
	static uint8_t rb[768];
	struct krbmsg_req q, d;
	int n, i;

	/* An AP-REQ with the mechTypes and the client's MIC. */
	memset(&q, 0, sizeof(q));
	q.token = (const uint8_t *)"\x60\x03\x06\x01\x00";
	q.token_len = 5;
	q.mech_types = mt_der;
	q.mech_types_len = sizeof(mt_der);
	q.mic = mic_tok;
	q.mic_len = sizeof(mic_tok);
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), 0);
	ck_assert_uint_eq(d.ctx, 0);
	ck_assert_uint_eq(d.token_len, 5);
	ck_assert_mem_eq(d.token, q.token, 5);
	ck_assert_uint_eq(d.mech_types_len, sizeof(mt_der));
	ck_assert_mem_eq(d.mech_types, mt_der, sizeof(mt_der));
	ck_assert_uint_eq(d.mic_len, sizeof(mic_tok));
	for (i = 0; i < n; i++)
		ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)i), -EBADMSG);
	rb[n] = 0;
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n + 1), -EBADMSG);

	/* The MIC for a kept context: no token, no mechTypes. */
	memset(&q, 0, sizeof(q));
	q.ctx = 0x1122334455667788ull;
	q.mic = mic_tok;
	q.mic_len = sizeof(mic_tok);
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), 0);
	ck_assert_uint_eq(d.ctx, q.ctx);
	ck_assert_uint_eq(d.token_len, 0);

	/* Both at once, a context without its MIC, a MIC without a list. */
	q.token = (const uint8_t *)"\x60";
	q.token_len = 1;
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), -EBADMSG);
	memset(&q, 0, sizeof(q));
	q.ctx = 5;
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), -EBADMSG);
	memset(&q, 0, sizeof(q));
	q.token = (const uint8_t *)"\x60";
	q.token_len = 1;
	q.mic = mic_tok;
	q.mic_len = sizeof(mic_tok);
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), -EBADMSG);
	/* Nothing at all, and a list longer than any sent. */
	memset(&q, 0, sizeof(q));
	n = krbmsg_req_encode(&q, rb, sizeof(rb));
	ck_assert_int_eq(krbmsg_req_decode(&d, rb, (size_t)n), -EBADMSG);
	q.token = (const uint8_t *)"\x60";
	q.token_len = 1;
	q.mech_types = rb + 256;
	q.mech_types_len = AUTH_MECH_TYPES_MAX + 1;
	memset(rb + 256, 0, AUTH_MECH_TYPES_MAX + 1);
	{
		static uint8_t big[1024];

		n = krbmsg_req_encode(&q, big, sizeof(big));
		ck_assert_int_eq(krbmsg_req_decode(&d, big, (size_t)n),
		    -EBADMSG);
	}
}
END_TEST

START_TEST(test_rep_continue)
{
	struct krbmsg_rep r, d;
	int n;

	/* The AP-REP, our MIC, the context: no principal, no key. */
	memset(&r, 0, sizeof(r));
	r.status = STATUS_MORE_PROCESSING_REQUIRED;
	r.ctx = 42;
	r.out_len = 5;
	memcpy(r.out, "\x60\x03\x06\x01\x00", 5);
	r.mic_len = sizeof(mic_tok);
	memcpy(r.mic, mic_tok, sizeof(mic_tok));
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert_uint_eq(d.ctx, 42);
	ck_assert_uint_eq(d.mic_len, sizeof(mic_tok));
	ck_assert_mem_eq(d.mic, mic_tok, sizeof(mic_tok));
	/* Continuing without a context, or a context with a verdict. */
	r.ctx = 0;
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	rep_fill(&r);
	r.ctx = 42;
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), -EBADMSG);
	/* A verdict with our MIC (the client's came with its AP-REQ). */
	rep_fill(&r);
	r.mic_len = 28;
	n = krbmsg_rep_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(krbmsg_rep_decode(&d, buf, (size_t)n), 0);
	ck_assert_uint_eq(d.mic_len, 28);
	r.mic_len = AUTH_MIC_MAX + 1;
	ck_assert_int_eq(krbmsg_rep_encode(&r, buf, sizeof(buf)), -EMSGSIZE);
}
END_TEST

START_TEST(test_authmsg_mic_fields)
{
	static uint8_t ab[2048];
	struct authmsg_req q, dq;
	struct authmsg_rep r, dr;
	int n;

	memset(&q, 0, sizeof(q));
	snprintf(q.client, sizeof(q.client), "127.0.0.1");
	q.mech = AUTHMSG_MECH_KRB5_MIC;
	q.authenticate = mic_tok;
	q.authenticate_len = sizeof(mic_tok);
	q.krb_ctx = 99;
	q.mech_types = mt_der;
	q.mech_types_len = sizeof(mt_der);
	n = authmsg_req_encode(&q, ab, sizeof(ab));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(authmsg_req_decode(&dq, ab, (size_t)n), 0);
	ck_assert_uint_eq(dq.mech, AUTHMSG_MECH_KRB5_MIC);
	ck_assert_uint_eq(dq.krb_ctx, 99);
	ck_assert_uint_eq(dq.mech_types_len, sizeof(mt_der));
	ck_assert_mem_eq(dq.mech_types, mt_der, sizeof(mt_der));
	q.mech = AUTHMSG_MECH_KRB5_MIC + 1;
	n = authmsg_req_encode(&q, ab, sizeof(ab));
	ck_assert_int_eq(authmsg_req_decode(&dq, ab, (size_t)n), -EBADMSG);

	memset(&r, 0, sizeof(r));
	r.status = STATUS_MORE_PROCESSING_REQUIRED;
	r.krb_ctx = 7;
	r.mic_len = sizeof(mic_tok);
	memcpy(r.mic, mic_tok, sizeof(mic_tok));
	n = authmsg_rep_encode(&r, ab, sizeof(ab));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(authmsg_rep_decode(&dr, ab, (size_t)n), 0);
	ck_assert_uint_eq(dr.krb_ctx, 7);
	ck_assert_uint_eq(dr.mic_len, sizeof(mic_tok));
	ck_assert_mem_eq(dr.mic, mic_tok, sizeof(mic_tok));
	ab[n - (int)sizeof(mic_tok) - 4] = AUTH_MIC_MAX + 1;	/* mic_len */
	ck_assert_int_eq(authmsg_rep_decode(&dr, ab, (size_t)n), -EBADMSG);
}
END_TEST

/* A client's NegTokenInit listing mechs (DER OIDs, tag included). */
static int
init_of(uint8_t *out, const uint8_t *const *oids, int n)
{
	uint8_t list[128];
	size_t l = 0, k;
	int i;

	for (i = 0; i < n; i++) {
		k = (size_t)oids[i][1] + 2;
		memcpy(list + l, oids[i], k);
		l += k;
	}
	/* [0] { SEQUENCE { [0] { SEQUENCE OF OID } } } */
	out[0] = 0xa0;
	out[1] = (uint8_t)(l + 6);
	out[2] = 0x30;
	out[3] = (uint8_t)(l + 4);
	out[4] = 0xa0;
	out[5] = (uint8_t)(l + 2);
	out[6] = 0x30;
	out[7] = (uint8_t)l;
	memcpy(out + 8, list, l);
	return (int)l + 8;
}

START_TEST(test_spnego_negoex_order)
{
	static const uint8_t negoex[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
	    0x01, 0x82, 0x37, 0x02, 0x02, 0x1e };
	static const uint8_t ntlm[] = { 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
	    0x01, 0x82, 0x37, 0x02, 0x02, 0x0a };
	const uint8_t *win[] = { negoex, krb5_ms_oid, krb5_oid, ntlm };
	const uint8_t *nfirst[] = { negoex, ntlm, krb5_oid };
	struct spnego_token sp;
	uint8_t out[160];
	int n;

	n = init_of(out, win, 4);
	ck_assert_int_eq(spnego_decode(out, (size_t)n, &sp), 0);
	ck_assert_int_eq(sp.n_mech_types, 4);
	ck_assert_int_eq(sp.krb5_preferred, 0);
	ck_assert_int_eq(sp.krb5_pos, 2);
	ck_assert_int_eq(sp.krb5_mech, SPNEGO_MECH_KRB5_MS);
	ck_assert_int_eq(sp.ntlmssp_pos, 4);
	ck_assert_uint_eq(sp.mech_types_len, (size_t)n - 6);
	n = init_of(out, nfirst, 3);
	ck_assert_int_eq(spnego_decode(out, (size_t)n, &sp), 0);
	ck_assert_int_eq(sp.ntlmssp_pos, 2);
	ck_assert_int_eq(sp.krb5_pos, 3);
	ck_assert_int_eq(sp.krb5_mech, SPNEGO_MECH_KRB5);
	ck_assert_int_eq(sp.ntlmssp_preferred, 0);
	/* request-mic, supportedMech the MS spelling, no token. */
	n = spnego_build_resp(out, sizeof(out), SPNEGO_REQUEST_MIC,
	    SPNEGO_MECH_KRB5_MS, NULL, 0, NULL, 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(spnego_decode(out, (size_t)n, &sp), 0);
	ck_assert_int_eq(sp.neg_state, SPNEGO_REQUEST_MIC);
	ck_assert_ptr_nonnull(find(out, (size_t)n, krb5_ms_oid,
	    sizeof(krb5_ms_oid)));
	ck_assert_ptr_null(sp.mech_token);
}
END_TEST

/* Kerberos' 32-byte session key: only the AES-256 cipher keys see it all. */
START_TEST(test_full_key)
{
	struct smb2_keys a, b, c;
	uint8_t key[32], hash[64];
	int i;

	for (i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	memset(hash, 0x42, sizeof(hash));
	smb2_derive_keys(0x311, 2, key, hash, &a);
	smb2_derive_keys_full(0x311, 2, key, 32, hash, &b);
	ck_assert_mem_eq(&a, &b, sizeof(a));	/* AES-128: the first 16 */
	smb2_derive_keys(0x311, 4, key, hash, &a);
	smb2_derive_keys_full(0x311, 4, key, 16, hash, &b);
	ck_assert_mem_eq(&a, &b, sizeof(a));	/* NTLM's 16 bytes */
	smb2_derive_keys_full(0x311, 4, key, 32, hash, &c);
	ck_assert_mem_eq(a.signing, c.signing, sizeof(a.signing));
	ck_assert_mem_eq(a.app, c.app, sizeof(a.app));
	ck_assert(memcmp(a.enc, c.enc, sizeof(a.enc)) != 0);
	ck_assert(memcmp(a.dec, c.dec, sizeof(a.dec)) != 0);
}
END_TEST

static Suite *
krb_suite(void)
{
	Suite *s = suite_create("krb");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rep_round_trip);
	tcase_add_test(tc, test_rep_bad);
	tcase_add_test(tc, test_usermap);
	tcase_add_test(tc, test_auth_krb_map);
	tcase_add_test(tc, test_spnego_krb5);
	tcase_add_test(tc, test_full_key);
	tcase_add_test(tc, test_req_round_trip);
	tcase_add_test(tc, test_rep_continue);
	tcase_add_test(tc, test_authmsg_mic_fields);
	tcase_add_test(tc, test_spnego_negoex_order);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(krb_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
