/*
 * SPNEGO token decoding and encoding (RFC 4178 4.2, MS-SPNG 2.2).
 *
 * The grammar is fixed and shallow (at most six levels), so the decoder is a
 * straight-line walk with no recursion; each level is a sub-cursor that can
 * only shrink, and every TLV is checked against its parent's remaining size.
 */
#include <errno.h>
#include <string.h>

#include "proto/asn1.h"
#include "proto/spnego.h"

/* 1.3.6.1.5.5.2 */
static const uint8_t spnego_oid[] = { 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };
/* 1.3.6.1.4.1.311.2.2.10 */
static const uint8_t ntlmssp_oid[] = {
	0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a
};
/* 1.2.840.113554.1.2.2, Kerberos 5 (RFC 1964) */
static const uint8_t krb5_oid[] = {
	0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02
};
/* 1.2.840.48018.1.2.2, Microsoft's Kerberos 5 OID (MS-SPNG 3.1.5.2) */
static const uint8_t krb5_ms_oid[] = {
	0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02
};
static const char neg_hint[] = "not_defined_in_RFC4178@please_ignore";

static int
spnego_oid_is(const struct cur *v, const uint8_t *oid, size_t len)
{
	return cur_left(v) == len && memcmp(v->p, oid, len) == 0;
}

/* MechTypeList ::= SEQUENCE OF OBJECT IDENTIFIER */
static int
spnego_decode_mech_types(struct cur *ctx, struct spnego_token *out)
{
	struct cur list, oid;
	uint8_t tag;

	if (asn1_read(ctx, &tag, &list, &out->mech_types,
	    &out->mech_types_len) != 0 || tag != ASN1_SEQUENCE)
		return -EBADMSG;
	while (cur_left(&list) > 0) {
		if (out->n_mech_types >= SPNEGO_MAX_MECH_TYPES ||
		    asn1_expect(&list, ASN1_OID, &oid) != 0 ||
		    cur_left(&oid) == 0)
			return -EBADMSG;
		if (spnego_oid_is(&oid, ntlmssp_oid, sizeof(ntlmssp_oid))) {
			out->ntlmssp_offered = 1;
			if (out->ntlmssp_pos == 0)
				out->ntlmssp_pos = out->n_mech_types + 1;
			if (out->n_mech_types == 0)
				out->ntlmssp_preferred = 1;
		}
		if (spnego_oid_is(&oid, krb5_oid, sizeof(krb5_oid)) ||
		    spnego_oid_is(&oid, krb5_ms_oid, sizeof(krb5_ms_oid))) {
			out->krb5_offered = 1;
			if (out->krb5_pos == 0) {
				out->krb5_pos = out->n_mech_types + 1;
				out->krb5_mech = spnego_oid_is(&oid,
				    krb5_oid, sizeof(krb5_oid)) ?
				    SPNEGO_MECH_KRB5 : SPNEGO_MECH_KRB5_MS;
			}
			if (out->n_mech_types == 0)
				out->krb5_preferred = out->krb5_mech;
		}
		out->n_mech_types++;
	}
	return out->n_mech_types > 0 ? 0 : -EBADMSG;
}

static int
spnego_octets(struct cur *ctx, const uint8_t **p, size_t *len)
{
	struct cur v;

	if (asn1_expect(ctx, ASN1_OCTET_STRING, &v) != 0)
		return -EBADMSG;
	*p = v.p;
	*len = cur_left(&v);
	return 0;
}

/*
 * The next field of a NegTokenInit/NegTokenResp SEQUENCE: a context tag
 * [n], n at most max, the fields in order and each once.  Returns n with
 * ctx its contents, or -EBADMSG.
 */
static int
spnego_next_field(struct cur *seq, struct cur *ctx, int *last, int max)
{
	uint8_t tag;
	int n;

	if (asn1_read(seq, &tag, ctx, NULL, NULL) != 0)
		return -EBADMSG;
	if ((tag & 0xe0) != 0xa0)
		return -EBADMSG;
	n = tag & 0x1f;
	if (n <= *last || n > max)
		return -EBADMSG;
	*last = n;
	return n;
}

/*
 * NegTokenInit ::= SEQUENCE { mechTypes [0], reqFlags [1], mechToken [2],
 * mechListMIC [3] }.  The server-side NegTokenInit2 of MS-SPNG puts negHints
 * at [3] and the MIC at [4]; accept both shapes.
 */
static int
spnego_decode_init(struct cur *c, struct spnego_token *out)
{
	struct cur seq, ctx;
	int last = -1, n;

	if (asn1_expect(c, ASN1_SEQUENCE, &seq) != 0)
		return -EBADMSG;
	while (cur_left(&seq) > 0) {
		if ((n = spnego_next_field(&seq, &ctx, &last, 4)) < 0)
			return -EBADMSG;
		switch (n) {
		case 0:
			if (spnego_decode_mech_types(&ctx, out) != 0)
				return -EBADMSG;
			break;
		case 1:		/* reqFlags: a BIT STRING nobody acts on */
			break;
		case 2:
			if (spnego_octets(&ctx, &out->mech_token,
			    &out->mech_token_len) != 0)
				return -EBADMSG;
			break;
		case 3:
			if (asn1_peek_tag(&ctx) == ASN1_SEQUENCE)
				break;		/* negHints */
			/* FALLTHROUGH */
		case 4:
			if (spnego_octets(&ctx, &out->mech_list_mic,
			    &out->mech_list_mic_len) != 0)
				return -EBADMSG;
			break;
		}
	}
	/* mechTypes is the one mandatory field */
	return out->n_mech_types > 0 ? 0 : -EBADMSG;
}

/*
 * NegTokenResp ::= SEQUENCE { negState [0] ENUMERATED, supportedMech [1],
 * responseToken [2], mechListMIC [3] }, all optional.
 */
static int
spnego_decode_resp(struct cur *c, struct spnego_token *out)
{
	struct cur seq, ctx, v;
	int last = -1, n;

	if (asn1_expect(c, ASN1_SEQUENCE, &seq) != 0)
		return -EBADMSG;
	while (cur_left(&seq) > 0) {
		if ((n = spnego_next_field(&seq, &ctx, &last, 3)) < 0)
			return -EBADMSG;
		switch (n) {
		case 0:
			if (asn1_expect(&ctx, ASN1_ENUMERATED, &v) != 0 ||
			    cur_left(&v) != 1 || v.p[0] > SPNEGO_REQUEST_MIC)
				return -EBADMSG;
			out->neg_state = v.p[0];
			break;
		case 1:
			if (asn1_expect(&ctx, ASN1_OID, &v) != 0)
				return -EBADMSG;
			out->supported_mech_ntlmssp = spnego_oid_is(&v,
			    ntlmssp_oid, sizeof(ntlmssp_oid));
			break;
		case 2:
			if (spnego_octets(&ctx, &out->mech_token,
			    &out->mech_token_len) != 0)
				return -EBADMSG;
			break;
		case 3:
			if (spnego_octets(&ctx, &out->mech_list_mic,
			    &out->mech_list_mic_len) != 0)
				return -EBADMSG;
			break;
		}
	}
	return 0;
}

int
spnego_decode(const uint8_t *buf, size_t len, struct spnego_token *out)
{
	struct cur c, app, oid, inner;
	uint8_t tag;
	int rc = -EBADMSG;

	memset(out, 0, sizeof(*out));
	out->neg_state = -1;
	out->supported_mech_ntlmssp = -1;
	if (buf == NULL || len == 0)
		return -EBADMSG;
	if (len >= 8 && memcmp(buf, "NTLMSSP\0", 8) == 0) {
		out->kind = SPNEGO_RAW_NTLMSSP;
		out->mech_token = buf;
		out->mech_token_len = len;
		return 0;
	}
	cur_init(&c, buf, len);
	switch (asn1_peek_tag(&c)) {
	case ASN1_APPLICATION0:
		if (asn1_expect(&c, ASN1_APPLICATION0, &app) != 0 ||
		    asn1_expect(&app, ASN1_OID, &oid) != 0 ||
		    !spnego_oid_is(&oid, spnego_oid, sizeof(spnego_oid)) ||
		    asn1_expect(&app, ASN1_CONTEXT(0), &inner) != 0)
			goto out;
		out->kind = SPNEGO_NEG_INIT;
		rc = spnego_decode_init(&inner, out);
		break;
	case ASN1_CONTEXT(0):
		if (asn1_expect(&c, ASN1_CONTEXT(0), &inner) != 0)
			goto out;
		out->kind = SPNEGO_NEG_INIT;
		rc = spnego_decode_init(&inner, out);
		break;
	case ASN1_CONTEXT(1):
		if (asn1_read(&c, &tag, &inner, NULL, NULL) != 0)
			goto out;
		out->kind = SPNEGO_NEG_RESP;
		rc = spnego_decode_resp(&inner, out);
		break;
	}
out:
	if (rc != 0) {
		memset(out, 0, sizeof(*out));
		out->neg_state = -1;
		out->supported_mech_ntlmssp = -1;
	}
	return rc;
}

/* The OID of a SPNEGO_MECH_*, and its length. */
static const uint8_t *
spnego_mech_oid(int mech, size_t *len)
{
	switch (mech) {
	case SPNEGO_MECH_KRB5:
		*len = sizeof(krb5_oid);
		return krb5_oid;
	case SPNEGO_MECH_KRB5_MS:
		*len = sizeof(krb5_ms_oid);
		return krb5_ms_oid;
	default:
		*len = sizeof(ntlmssp_oid);
		return ntlmssp_oid;
	}
}

int
spnego_build_neg_init(uint8_t *buf, size_t cap, int with_krb5)
{
	/* Windows and Samba list the MS OID first, then the standard one. */
	static const int krb5_first[] = { SPNEGO_MECH_KRB5_MS, SPNEGO_MECH_KRB5,
	    SPNEGO_MECH_NTLMSSP };
	static const int ntlm_only[] = { SPNEGO_MECH_NTLMSSP };
	const int *mechs = with_krb5 ? krb5_first : ntlm_only;
	int nmech = with_krb5 ? 3 : 1, i;
	struct wcur w;
	size_t hint = sizeof(neg_hint) - 1, oid_len, oid_tlvs = 0;
	size_t mech_list, mech_ctx, hint_str, hint_ctx, hints_seq, hints;
	size_t init_seq_body, init_seq, init_ctx, app_body;
	const uint8_t *oid;

	for (i = 0; i < nmech; i++) {
		(void)spnego_mech_oid(mechs[i], &oid_len);
		oid_tlvs += asn1_tlv_len(oid_len);
	}
	mech_list = asn1_tlv_len(oid_tlvs);			/* SEQUENCE OF */
	mech_ctx = asn1_tlv_len(mech_list);			/* [0] */
	hint_str = asn1_tlv_len(hint);				/* GeneralString */
	hint_ctx = asn1_tlv_len(hint_str);			/* hintName [0] */
	hints_seq = asn1_tlv_len(hint_ctx);			/* NegHints */
	hints = asn1_tlv_len(hints_seq);			/* [3] */
	init_seq_body = mech_ctx + hints;
	init_seq = asn1_tlv_len(init_seq_body);
	init_ctx = asn1_tlv_len(init_seq);			/* [0] */
	app_body = asn1_tlv_len(sizeof(spnego_oid)) + init_ctx;

	wcur_init(&w, buf, cap);
	asn1_put_hdr(&w, ASN1_APPLICATION0, app_body);
	asn1_put_hdr(&w, ASN1_OID, sizeof(spnego_oid));
	wcur_bytes(&w, spnego_oid, sizeof(spnego_oid));
	asn1_put_hdr(&w, ASN1_CONTEXT(0), init_seq);
	asn1_put_hdr(&w, ASN1_SEQUENCE, init_seq_body);
	asn1_put_hdr(&w, ASN1_CONTEXT(0), mech_list);
	asn1_put_hdr(&w, ASN1_SEQUENCE, oid_tlvs);
	for (i = 0; i < nmech; i++) {
		oid = spnego_mech_oid(mechs[i], &oid_len);
		asn1_put_hdr(&w, ASN1_OID, oid_len);
		wcur_bytes(&w, oid, oid_len);
	}
	asn1_put_hdr(&w, ASN1_CONTEXT(3), hints_seq);
	asn1_put_hdr(&w, ASN1_SEQUENCE, hint_ctx);
	asn1_put_hdr(&w, ASN1_CONTEXT(0), hint_str);
	asn1_put_hdr(&w, ASN1_GENERAL_STRING, hint);
	wcur_bytes(&w, neg_hint, hint);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
spnego_build_neg_hints(uint8_t *buf, size_t cap)
{
	return spnego_build_neg_init(buf, cap, 0);
}

/*
 * A Kerberos GSS-API token (RFC 2743 3.1, RFC 1964 1.1): [APPLICATION 0]
 * { OID krb5 (either spelling), TOK_ID, the Kerberos message }.  Only the
 * wrapper is looked at, to choose the mechanism; the ticket inside is the
 * GSSAPI library's business, in the ticket helper.
 */
int
spnego_krb5_token(const uint8_t *buf, size_t len, uint16_t *tok_id)
{
	struct cur c, app, oid;

	cur_init(&c, buf, len);
	if (buf == NULL || asn1_expect(&c, ASN1_APPLICATION0, &app) != 0 ||
	    asn1_expect(&app, ASN1_OID, &oid) != 0 ||
	    (!spnego_oid_is(&oid, krb5_oid, sizeof(krb5_oid)) &&
	    !spnego_oid_is(&oid, krb5_ms_oid, sizeof(krb5_ms_oid))))
		return 0;
	if (tok_id != NULL) {
		*tok_id = (uint16_t)(cur_u8(&app) << 8);
		*tok_id |= cur_u8(&app);
		if (app.err)
			return 0;
	}
	return 1;
}

int
spnego_build_resp(uint8_t *buf, size_t cap, int neg_state,
    int with_supported_mech, const uint8_t *resp_token, size_t resp_len,
    const uint8_t *mic, size_t mic_len)
{
	struct wcur w;
	size_t state = asn1_tlv_len(asn1_tlv_len(1));
	size_t oid_len;
	const uint8_t *oid = spnego_mech_oid(with_supported_mech, &oid_len);
	size_t mech = asn1_tlv_len(asn1_tlv_len(oid_len));
	size_t tok = asn1_tlv_len(asn1_tlv_len(resp_len));
	size_t mac = asn1_tlv_len(asn1_tlv_len(mic_len));
	size_t body;

	if (neg_state < 0 || neg_state > SPNEGO_REQUEST_MIC ||
	    resp_len > 0x7fffffff || mic_len > 0x7fffffff)
		return -EINVAL;
	body = state + (with_supported_mech ? mech : 0) +
	    (resp_len ? tok : 0) + (mic_len ? mac : 0);

	wcur_init(&w, buf, cap);
	asn1_put_hdr(&w, ASN1_CONTEXT(1), asn1_tlv_len(body));
	asn1_put_hdr(&w, ASN1_SEQUENCE, body);
	asn1_put_hdr(&w, ASN1_CONTEXT(0), asn1_tlv_len(1));
	asn1_put_hdr(&w, ASN1_ENUMERATED, 1);
	wcur_u8(&w, (uint8_t)neg_state);
	if (with_supported_mech) {
		asn1_put_hdr(&w, ASN1_CONTEXT(1), asn1_tlv_len(oid_len));
		asn1_put_hdr(&w, ASN1_OID, oid_len);
		wcur_bytes(&w, oid, oid_len);
	}
	if (resp_len) {
		asn1_put_hdr(&w, ASN1_CONTEXT(2), asn1_tlv_len(resp_len));
		asn1_put_hdr(&w, ASN1_OCTET_STRING, resp_len);
		wcur_bytes(&w, resp_token, resp_len);
	}
	if (mic_len) {
		asn1_put_hdr(&w, ASN1_CONTEXT(3), asn1_tlv_len(mic_len));
		asn1_put_hdr(&w, ASN1_OCTET_STRING, mic_len);
		wcur_bytes(&w, mic, mic_len);
	}
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}
