/*
 * NTLMSSP server side (MS-NLMP): message codecs, NTLMv2 verification and
 * the extended-session-security message signature.
 *
 * Every offset/length pair in a message is checked against the message
 * before it is used; names are converted to validated UTF-8 (no NUL, no
 * unpaired surrogate, bounded) so that nothing downstream sees raw wire
 * bytes.  Intermediate keys are wiped before returning.
 */
#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <md4.h>

#include "proto/cur.h"
#include "proto/ntlmssp.h"

#define NTLM_SIG		"NTLMSSP\0"
#define NTLM_AUTH_FIXED		64	/* through NegotiateFlags */
#define NTLM_V2_BLOB_HDR	28	/* NTLMv2_CLIENT_CHALLENGE before AvPairs */
#define NTLM_PROOF_LEN		16
#define NTLM_CHALLENGE_OFF	24

/* Version field we announce: Windows 7 SP1 build 7601, NTLMSSP rev. 15 */
static const uint8_t ntlm_version[8] = { 6, 1, 0xb1, 0x1d, 0, 0, 0, 0x0f };

int
ntlmssp_msg_type(const uint8_t *msg, size_t len)
{
	uint32_t t;

	if (msg == NULL || len < 12 || memcmp(msg, NTLM_SIG, 8) != 0)
		return -EBADMSG;
	t = le32_get(msg + 8);
	if (t < NTLMSSP_NEGOTIATE_MESSAGE || t > NTLMSSP_AUTHENTICATE_MESSAGE)
		return -EBADMSG;
	return (int)t;
}

/* UTF-16LE -> NUL-terminated UTF-8; -EBADMSG on anything invalid or long. */
static int
ntlm_utf16_to_utf8(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t i = 0, o = 0, need;
	uint32_t cp;
	uint16_t u, u2;

	if (n & 1)
		return -EBADMSG;
	while (i < n) {
		u = le16_get(in + i);
		i += 2;
		if (u >= 0xd800 && u <= 0xdbff) {
			if (n - i < 2)
				return -EBADMSG;
			u2 = le16_get(in + i);
			if (u2 < 0xdc00 || u2 > 0xdfff)
				return -EBADMSG;
			i += 2;
			cp = 0x10000 + ((uint32_t)(u - 0xd800) << 10) +
			    (uint32_t)(u2 - 0xdc00);
		} else if (u >= 0xdc00 && u <= 0xdfff) {
			return -EBADMSG;
		} else {
			cp = u;
		}
		if (cp == 0)
			return -EBADMSG;
		need = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		if (cap - o <= need)		/* keep room for the NUL */
			return -EBADMSG;
		switch (need) {
		case 1:
			out[o++] = (char)cp;
			break;
		case 2:
			out[o++] = (char)(0xc0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3f));
			break;
		case 3:
			out[o++] = (char)(0xe0 | cp >> 12);
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
			break;
		default:
			out[o++] = (char)(0xf0 | cp >> 18);
			out[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
			break;
		}
	}
	out[o] = '\0';
	return 0;
}

/* OEM strings: only ASCII is accepted (no code page is configured). */
static int
ntlm_oem_to_utf8(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t i;

	if (n >= cap)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (in[i] == 0 || in[i] >= 0x80)
			return -EBADMSG;
		out[i] = (char)in[i];
	}
	out[n] = '\0';
	return 0;
}

/* Next code point of a NUL-terminated UTF-8 string; -1 when invalid. */
static int32_t
ntlm_utf8_next(const char **sp)
{
	const uint8_t *s = (const uint8_t *)*sp;
	uint32_t cp, min;
	int n, i;

	if (s[0] < 0x80) {
		cp = s[0];
		n = 1;
		min = 0;
	} else if ((s[0] & 0xe0) == 0xc0) {
		cp = s[0] & 0x1f;
		n = 2;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		cp = s[0] & 0x0f;
		n = 3;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		cp = s[0] & 0x07;
		n = 4;
		min = 0x10000;
	} else {
		return -1;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*sp += n;
	return (int32_t)cp;
}

/* Appends UTF-16LE of a UTF-8 string; bytes written or -EINVAL. */
static int
ntlm_put_utf16(struct wcur *w, const char *s)
{
	size_t start = wcur_off(w);
	int32_t cp;

	while (s != NULL && *s != '\0') {
		if ((cp = ntlm_utf8_next(&s)) < 0)
			return -EINVAL;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			wcur_le16(w, (uint16_t)(0xd800 + (cp >> 10)));
			wcur_le16(w, (uint16_t)(0xdc00 + (cp & 0x3ff)));
		} else {
			wcur_le16(w, (uint16_t)cp);
		}
	}
	return (int)(wcur_off(w) - start);
}

/*
 * Upper-casing for NTOWFv2's UPPER(User).  Windows uses its own case table;
 * this covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic, which is
 * where user names live in practice.
 */
static uint16_t
ntlm_upcase(uint16_t c)
{
	if (c >= 'a' && c <= 'z')
		return (uint16_t)(c - 0x20);
	if (c < 0x80)
		return c;
	if (c >= 0xe0 && c <= 0xfe && c != 0xf7)
		return (uint16_t)(c - 0x20);
	if (c == 0xff)
		return 0x178;
	if ((c >= 0x100 && c <= 0x12f) || (c >= 0x132 && c <= 0x137) ||
	    (c >= 0x14a && c <= 0x177))
		return (uint16_t)(c & ~1u);
	if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e))
		return (c & 1) ? c : (uint16_t)(c - 1);
	if ((c >= 0x3b1 && c <= 0x3c1) || (c >= 0x3c3 && c <= 0x3c9))
		return (uint16_t)(c - 0x20);
	if (c == 0x3c2)
		return 0x3a3;
	if (c >= 0x430 && c <= 0x44f)
		return (uint16_t)(c - 0x20);
	if (c >= 0x450 && c <= 0x45f)
		return (uint16_t)(c - 0x50);
	return c;
}

/* A wire name as UTF-16LE into out (optionally upper-cased); length. */
static size_t
ntlm_name_utf16(const uint8_t *raw, size_t n, int unicode, int upper,
    uint8_t *out, size_t cap)
{
	size_t i, o = 0;
	uint16_t u;

	if (unicode) {
		for (i = 0; i + 1 < n && o + 2 <= cap; i += 2, o += 2) {
			u = le16_get(raw + i);
			le16_put(out + o, upper ? ntlm_upcase(u) : u);
		}
	} else {
		for (i = 0; i < n && o + 2 <= cap; i++, o += 2) {
			u = raw[i];
			le16_put(out + o, upper ? ntlm_upcase(u) : u);
		}
	}
	return o;
}

int
ntlmssp_decode_negotiate(const uint8_t *msg, size_t len, uint32_t *flags)
{
	/* Signature, MessageType, NegotiateFlags; the optional domain and
	 * workstation fields carry nothing the server uses. */
	if (len < 16 || ntlmssp_msg_type(msg, len) != NTLMSSP_NEGOTIATE_MESSAGE)
		return -EBADMSG;
	*flags = le32_get(msg + 12);
	return 0;
}

/*
 * One (Len, MaxLen, Offset) field at `at`.  An empty field's offset is not
 * looked at; a non-empty one must lie in the payload.
 */
static int
ntlm_field(const uint8_t *msg, size_t len, size_t at, const uint8_t **p,
    uint16_t *flen, size_t *payload_start)
{
	uint16_t l = le16_get(msg + at);
	uint32_t off = le32_get(msg + at + 4);

	*flen = l;
	*p = msg;
	if (l == 0)
		return 0;
	if (off < NTLM_AUTH_FIXED || off > len || l > len - off)
		return -EBADMSG;
	*p = msg + off;
	if (off < *payload_start)
		*payload_start = off;
	return 0;
}

/* NTLMv2_CLIENT_CHALLENGE (MS-NLMP 2.2.2.7) after the 16-byte NTProofStr. */
static int
ntlm_decode_v2_blob(struct ntlmssp_auth *a)
{
	const uint8_t *blob = a->nt + NTLM_PROOF_LEN;
	size_t blen = a->nt_len - NTLM_PROOF_LEN;
	struct cur c, v;
	uint16_t id, l;
	uint32_t avflags = 0;

	if (a->nt_len < NTLM_PROOF_LEN + NTLM_V2_BLOB_HDR)
		return -EBADMSG;
	if (blob[0] != 1 || blob[1] != 1)	/* RespType, HiRespType */
		return -EBADMSG;
	a->timestamp = le64_get(blob + 8);
	a->client_challenge = blob + 16;
	cur_init(&c, blob + NTLM_V2_BLOB_HDR, blen - NTLM_V2_BLOB_HDR);
	for (;;) {		/* each pass consumes >= 4 bytes or fails */
		id = cur_le16(&c);
		l = cur_le16(&c);
		v = cur_sub(&c, cur_off(&c), l);
		cur_skip(&c, l);
		if (c.err)
			return -EBADMSG;	/* no MsvAvEOL */
		if (id == MSV_AV_EOL)
			break;
		if (id == MSV_AV_FLAGS && l == 4)
			avflags = cur_le32(&v);
	}
	a->has_mic = (avflags & MSV_AV_FLAG_MIC_PRESENT) != 0;
	a->ntlmv2 = 1;
	return 0;
}

int
ntlmssp_decode_authenticate(const uint8_t *msg, size_t len,
    struct ntlmssp_auth *a)
{
	const uint8_t *dom, *user, *ws;
	uint16_t dom_len, user_len, ws_len;
	size_t payload = len;
	int rc = -EBADMSG;

	memset(a, 0, sizeof(*a));
	if (len < NTLM_AUTH_FIXED ||
	    ntlmssp_msg_type(msg, len) != NTLMSSP_AUTHENTICATE_MESSAGE)
		goto out;
	if (ntlm_field(msg, len, 12, &a->lm, &a->lm_len, &payload) ||
	    ntlm_field(msg, len, 20, &a->nt, &a->nt_len, &payload) ||
	    ntlm_field(msg, len, 28, &dom, &dom_len, &payload) ||
	    ntlm_field(msg, len, 36, &user, &user_len, &payload) ||
	    ntlm_field(msg, len, 44, &ws, &ws_len, &payload) ||
	    ntlm_field(msg, len, 52, &a->enc_session_key,
	    &a->enc_session_key_len, &payload))
		goto out;
	a->flags = le32_get(msg + 60);
	a->unicode = (a->flags & NTLMSSP_NEGOTIATE_UNICODE) != 0;
	if (a->unicode) {
		if (ntlm_utf16_to_utf8(dom, dom_len, a->domain,
		    sizeof(a->domain)) ||
		    ntlm_utf16_to_utf8(user, user_len, a->user,
		    sizeof(a->user)) ||
		    ntlm_utf16_to_utf8(ws, ws_len, a->workstation,
		    sizeof(a->workstation)))
			goto out;
	} else {
		if (ntlm_oem_to_utf8(dom, dom_len, a->domain,
		    sizeof(a->domain)) ||
		    ntlm_oem_to_utf8(user, user_len, a->user,
		    sizeof(a->user)) ||
		    ntlm_oem_to_utf8(ws, ws_len, a->workstation,
		    sizeof(a->workstation)))
			goto out;
	}
	a->user_raw = user;
	a->user_raw_len = user_len;
	a->domain_raw = dom;
	a->domain_raw_len = dom_len;

	if (a->nt_len > 24) {
		if (ntlm_decode_v2_blob(a) != 0)
			goto out;
	} else if (a->nt_len != 24 && a->nt_len != 0) {
		goto out;
	}
	a->anonymous = user_len == 0 && a->nt_len == 0 &&
	    (a->lm_len == 0 || (a->lm_len == 1 && a->lm[0] == 0));
	if (a->has_mic) {
		/* The MIC follows the Version field, before the payload. */
		if (payload < NTLMSSP_MIC_OFFSET + 16)
			goto out;
		a->mic_offset = NTLMSSP_MIC_OFFSET;
	}
	rc = 0;
out:
	if (rc != 0)
		memset(a, 0, sizeof(*a));
	return rc;
}

static int
ntlm_rc4(const uint8_t key[16], const uint8_t *in, uint8_t *out, size_t len)
{
	gnutls_cipher_hd_t h;
	gnutls_datum_t k = { .data = (unsigned char *)key, .size = 16 };
	int rc;

	if (gnutls_cipher_init(&h, GNUTLS_CIPHER_ARCFOUR_128, &k, NULL) < 0)
		return -EIO;
	rc = gnutls_cipher_encrypt2(h, in, len, out, len) < 0 ? -EIO : 0;
	gnutls_cipher_deinit(h);
	return rc;
}

/*
 * MS-NLMP 3.3.1 / 3.4.5.1: an anonymous exchange's SessionBaseKey (and so
 * its KeyExchangeKey) is 16 zero bytes; with NEGOTIATE_KEY_EXCH the
 * exported key is the client's EncryptedRandomSessionKey RC4-decrypted
 * under it (Samba's client and server do the same).  A KEY_EXCH without a
 * 16-byte key leaves the zero key: such a client can neither sign nor
 * seal with another, and an anonymous logon was never refused for it.
 */
int
ntlmssp_anonymous_key(const struct ntlmssp_auth *a, uint8_t exported[16])
{
	static const uint8_t zeros[16];

	memset(exported, 0, 16);
	if (!a->anonymous)
		return -EINVAL;
	if ((a->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) &&
	    a->enc_session_key_len == 16 &&
	    ntlm_rc4(zeros, a->enc_session_key, exported, 16) != 0) {
		memset(exported, 0, 16);
		return -EIO;
	}
	return 0;
}

ntstatus_t
ntlmssp_server_verify(const uint8_t nt_hash[16], const struct ntlmssp_auth *a,
    const uint8_t *negotiate, size_t negotiate_len, const uint8_t *challenge,
    size_t challenge_len, const uint8_t *authenticate, size_t authenticate_len,
    uint8_t exported_session_key[16])
{
	static const uint8_t zeros[16];
	uint8_t ident[4 * NTLMSSP_NAME_MAX];
	uint8_t ntowf[16], proof[16], sbk[16], exported[16], mic[16];
	gnutls_hmac_hd_t h;
	size_t ulen, dlen, off;
	ntstatus_t st = STATUS_LOGON_FAILURE;

	memset(exported_session_key, 0, 16);
	/* NTLMv2 only: NTLMv1 (24 bytes), LM and anonymous are refused. */
	if (!a->ntlmv2 || a->anonymous || a->nt_len <= 24)
		goto out;
	if (challenge_len < NTLM_CHALLENGE_OFF + 8 ||
	    ntlmssp_msg_type(challenge, challenge_len) !=
	    NTLMSSP_CHALLENGE_MESSAGE)
		goto out;

	/* NTOWFv2 = HMAC_MD5(NT hash, UNICODE(Uppercase(User) + UserDom)),
	 * with the domain exactly as the client sent it. */
	ulen = ntlm_name_utf16(a->user_raw, a->user_raw_len, a->unicode, 1,
	    ident, sizeof(ident) / 2);
	dlen = ntlm_name_utf16(a->domain_raw, a->domain_raw_len, a->unicode, 0,
	    ident + ulen, sizeof(ident) - ulen);
	if (gnutls_hmac_fast(GNUTLS_MAC_MD5, nt_hash, 16, ident, ulen + dlen,
	    ntowf) < 0)
		goto out;

	/* NTProofStr = HMAC_MD5(NTOWFv2, ServerChallenge || blob) */
	if (gnutls_hmac_init(&h, GNUTLS_MAC_MD5, ntowf, 16) < 0)
		goto out;
	gnutls_hmac(h, challenge + NTLM_CHALLENGE_OFF, 8);
	gnutls_hmac(h, a->nt + NTLM_PROOF_LEN, a->nt_len - NTLM_PROOF_LEN);
	gnutls_hmac_deinit(h, proof);
	if (gnutls_memcmp(proof, a->nt, NTLM_PROOF_LEN) != 0)
		goto out;

	/* SessionBaseKey = KeyExchangeKey for NTLMv2 (MS-NLMP 3.4.5.1) */
	if (gnutls_hmac_fast(GNUTLS_MAC_MD5, ntowf, 16, proof, 16, sbk) < 0)
		goto out;
	if (a->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		if (a->enc_session_key_len != 16 ||
		    ntlm_rc4(sbk, a->enc_session_key, exported, 16) != 0)
			goto out;
	} else {
		memcpy(exported, sbk, 16);
	}

	if (a->has_mic) {
		off = a->mic_offset;
		if (off < NTLM_AUTH_FIXED || authenticate_len < off + 16)
			goto out;
		if (gnutls_hmac_init(&h, GNUTLS_MAC_MD5, exported, 16) < 0)
			goto out;
		gnutls_hmac(h, negotiate, negotiate_len);
		gnutls_hmac(h, challenge, challenge_len);
		gnutls_hmac(h, authenticate, off);
		gnutls_hmac(h, zeros, 16);
		gnutls_hmac(h, authenticate + off + 16,
		    authenticate_len - off - 16);
		gnutls_hmac_deinit(h, mic);
		if (gnutls_memcmp(mic, authenticate + off, 16) != 0)
			goto out;
	}
	memcpy(exported_session_key, exported, 16);
	st = STATUS_SUCCESS;
out:
	gnutls_memset(ntowf, 0, sizeof(ntowf));
	gnutls_memset(proof, 0, sizeof(proof));
	gnutls_memset(sbk, 0, sizeof(sbk));
	gnutls_memset(exported, 0, sizeof(exported));
	return st;
}

/* MS-NLMP 3.2.5.1.1: the server's answer to the client's flags. */
static uint32_t
ntlm_challenge_flags(uint32_t cf)
{
	uint32_t f = NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_TARGET_INFO |
	    NTLMSSP_TARGET_TYPE_SERVER;

	if (cf & NTLMSSP_NEGOTIATE_UNICODE)
		f |= NTLMSSP_NEGOTIATE_UNICODE;
	else if (cf & NTLMSSP_NEGOTIATE_OEM)
		f |= NTLMSSP_NEGOTIATE_OEM;
	else
		f |= NTLMSSP_NEGOTIATE_UNICODE;
	f |= cf & (NTLMSSP_REQUEST_TARGET |
	    NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
	    NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_56 |
	    NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_SIGN |
	    NTLMSSP_NEGOTIATE_SEAL | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |
	    NTLMSSP_NEGOTIATE_VERSION);
	return f;
}

/* An AV_PAIR holding a UTF-16LE string. */
static void
ntlm_put_av_name(struct wcur *w, uint16_t id, const char *s, int *bad)
{
	uint8_t *hdr;
	int n;

	hdr = wcur_reserve(w, 4);
	n = ntlm_put_utf16(w, s);
	if (n < 0 || n > 0xffff) {
		*bad = 1;
		return;
	}
	if (hdr != NULL) {
		le16_put(hdr, id);
		le16_put(hdr + 2, (uint16_t)n);
	}
}

static void
ntlm_put_field(uint8_t *f, size_t len, size_t off)
{
	le16_put(f, (uint16_t)len);
	le16_put(f + 2, (uint16_t)len);
	le32_put(f + 4, (uint32_t)off);
}

int
ntlmssp_build_challenge(uint8_t *buf, size_t cap, uint32_t client_flags,
    const uint8_t server_challenge[8], const char *netbios_domain,
    const char *netbios_computer, const char *dns_domain,
    const char *dns_computer, uint64_t filetime_now)
{
	struct wcur w;
	uint8_t *tn_field, *ti_field, *hdr;
	uint32_t flags = ntlm_challenge_flags(client_flags);
	size_t tn_off, tn_len, ti_off, i;
	int n, bad = 0;

	if (netbios_domain == NULL)
		netbios_domain = "";
	if (netbios_computer == NULL)
		netbios_computer = "";
	wcur_init(&w, buf, cap);
	wcur_bytes(&w, NTLM_SIG, 8);
	wcur_le32(&w, NTLMSSP_CHALLENGE_MESSAGE);
	tn_field = wcur_reserve(&w, 8);
	wcur_le32(&w, flags);
	wcur_bytes(&w, server_challenge, 8);
	wcur_zero(&w, 8);			/* Reserved */
	ti_field = wcur_reserve(&w, 8);
	if (flags & NTLMSSP_NEGOTIATE_VERSION)
		wcur_bytes(&w, ntlm_version, 8);
	else
		wcur_zero(&w, 8);

	tn_off = wcur_off(&w);
	if (flags & NTLMSSP_NEGOTIATE_UNICODE) {
		if ((n = ntlm_put_utf16(&w, netbios_computer)) < 0)
			return -EINVAL;
	} else {
		for (i = 0; netbios_computer[i] != '\0'; i++)
			if ((uint8_t)netbios_computer[i] >= 0x80)
				return -EINVAL;
		wcur_bytes(&w, netbios_computer, i);
	}
	tn_len = wcur_off(&w) - tn_off;

	ti_off = wcur_off(&w);
	ntlm_put_av_name(&w, MSV_AV_NB_DOMAIN_NAME, netbios_domain, &bad);
	ntlm_put_av_name(&w, MSV_AV_NB_COMPUTER_NAME, netbios_computer, &bad);
	if (dns_domain != NULL && dns_domain[0] != '\0')
		ntlm_put_av_name(&w, MSV_AV_DNS_DOMAIN_NAME, dns_domain, &bad);
	if (dns_computer != NULL && dns_computer[0] != '\0')
		ntlm_put_av_name(&w, MSV_AV_DNS_COMPUTER_NAME, dns_computer,
		    &bad);
	hdr = wcur_reserve(&w, 4);
	if (hdr != NULL) {
		le16_put(hdr, MSV_AV_TIMESTAMP);
		le16_put(hdr + 2, 8);
	}
	wcur_le64(&w, filetime_now);
	wcur_zero(&w, 4);			/* MsvAvEOL */
	if (bad)
		return -EINVAL;
	if (w.err || tn_len > 0xffff || wcur_off(&w) - ti_off > 0xffff)
		return -EMSGSIZE;
	ntlm_put_field(tn_field, tn_len, tn_off);
	ntlm_put_field(ti_field, wcur_off(&w) - ti_off, ti_off);
	return (int)wcur_off(&w);
}

int
ntlmssp_nt_hash(const char *password, uint8_t nt_hash[16])
{
	uint8_t u16[1024];
	struct wcur w;
	MD4_CTX ctx;
	int n;

	wcur_init(&w, u16, sizeof(u16));
	n = ntlm_put_utf16(&w, password);
	if (n < 0 || w.err) {
		gnutls_memset(u16, 0, sizeof(u16));
		return -EINVAL;
	}
	MD4Init(&ctx);
	MD4Update(&ctx, u16, (size_t)n);
	MD4Final(nt_hash, &ctx);
	gnutls_memset(u16, 0, sizeof(u16));
	gnutls_memset(&ctx, 0, sizeof(ctx));
	return 0;
}

/* MD5(key || magic constant with its NUL) */
static void
ntlm_derive(const uint8_t *key, size_t klen, const char *magic, size_t mlen,
    uint8_t out[16])
{
	gnutls_hash_hd_t h;

	if (gnutls_hash_init(&h, GNUTLS_DIG_MD5) < 0) {
		memset(out, 0, 16);
		return;
	}
	gnutls_hash(h, key, klen);
	gnutls_hash(h, magic, mlen);
	gnutls_hash_deinit(h, out);
}

#define MAGIC(s)	(s), sizeof(s)

void
ntlmssp_sign_keys(const uint8_t key[16], uint32_t flags,
    struct ntlmssp_keys *out)
{
	/* SEALKEY with extended session security: 128, 56 or 40 bits of
	 * the exported key go into the hash (MS-NLMP 3.4.5.3). */
	size_t seal_len = (flags & NTLMSSP_NEGOTIATE_128) ? 16 :
	    (flags & NTLMSSP_NEGOTIATE_56) ? 7 : 5;

	out->flags = flags;
	ntlm_derive(key, 16, MAGIC("session key to client-to-server signing "
	    "key magic constant"), out->sign_c2s);
	ntlm_derive(key, 16, MAGIC("session key to server-to-client signing "
	    "key magic constant"), out->sign_s2c);
	ntlm_derive(key, seal_len, MAGIC("session key to client-to-server "
	    "sealing key magic constant"), out->seal_c2s);
	ntlm_derive(key, seal_len, MAGIC("session key to server-to-client "
	    "sealing key magic constant"), out->seal_s2c);
}

void
ntlmssp_mac(const struct ntlmssp_keys *k, int server_to_client,
    uint32_t seqnum, const uint8_t *data, size_t len, uint8_t sig[16])
{
	const uint8_t *sign = server_to_client ? k->sign_s2c : k->sign_c2s;
	const uint8_t *seal = server_to_client ? k->seal_s2c : k->seal_c2s;
	gnutls_hmac_hd_t h;
	uint8_t seq[4], mac[16], sum[8];

	le32_put(seq, seqnum);
	memset(mac, 0, sizeof(mac));
	if (gnutls_hmac_init(&h, GNUTLS_MAC_MD5, sign, 16) == 0) {
		gnutls_hmac(h, seq, 4);
		gnutls_hmac(h, data, len);
		gnutls_hmac_deinit(h, mac);
	}
	memcpy(sum, mac, 8);
	if (k->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		if (ntlm_rc4(seal, mac, sum, 8) != 0)
			memset(sum, 0, 8);	/* never verifies */
	}
	le32_put(sig, 1);			/* Version */
	memcpy(sig + 4, sum, 8);
	le32_put(sig + 12, seqnum);
}

int
ntlmssp_mac_verify(const struct ntlmssp_keys *k, int server_to_client,
    uint32_t seqnum, const uint8_t *data, size_t len, const uint8_t *sig,
    size_t sig_len)
{
	uint8_t want[16];

	if (sig == NULL || sig_len != 16)
		return -EBADMSG;
	ntlmssp_mac(k, server_to_client, seqnum, data, len, want);
	return gnutls_memcmp(want, sig, 16) == 0 ? 0 : -EBADMSG;
}
