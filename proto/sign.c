/*
 * SMB2 signing: HMAC-SHA256 (2.x), AES-128-CMAC (3.x), AES-128-GMAC (3.1.1).
 * The signature field is never zeroed in the caller's buffer: the MAC is fed
 * the bytes around it and 16 zero bytes in its place, so verification needs
 * no copy and leaves the receive buffer intact.
 */
#include <errno.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/cur.h"
#include "proto/kdf.h"
#include "proto/sign.h"

#define HDR_FLAGS_OFF		16
#define HDR_COMMAND_OFF		12
#define HDR_MSGID_OFF		24
#define FLAG_SERVER_TO_REDIR	0x00000001u	/* MS-SMB2 2.2.1.2 */
#define FLAG_SIGNED		0x00000008u
#define CMD_CANCEL		0x000C

int
smb2_sign_algo_default(uint16_t dialect)
{
	return dialect >= SMB2_DIALECT_300 ? SIGN_AES_CMAC : SIGN_HMAC_SHA256;
}

/*
 * GMAC nonce (MS-SMB2 3.1.4.1): MessageId, then a 32-bit little-endian word
 * whose bit 0 says the sender is the server and bit 1 that the message is a
 * CANCEL request.
 */
static void
sign_gmac_nonce(const uint8_t *hdr, uint8_t nonce[12])
{
	uint32_t flags = le32_get(hdr + HDR_FLAGS_OFF);
	uint16_t cmd = le16_get(hdr + HDR_COMMAND_OFF);
	uint32_t w = 0;

	memcpy(nonce, hdr + HDR_MSGID_OFF, 8);
	if (flags & FLAG_SERVER_TO_REDIR)
		w |= 1;
	else if (cmd == CMD_CANCEL)
		w |= 2;
	le32_put(nonce + 8, w);
}

static int
sign_mac_algo(int algo, gnutls_mac_algorithm_t *mac)
{
	switch (algo) {
	case SIGN_HMAC_SHA256:
		*mac = GNUTLS_MAC_SHA256;
		return 0;
	case SIGN_AES_CMAC:
		*mac = GNUTLS_MAC_AES_CMAC_128;
		return 0;
	case SIGN_AES_GMAC:
		*mac = GNUTLS_MAC_AES_GMAC_128;
		return 0;
	}
	return -EINVAL;
}

void
smb2_sign_ctx_free(struct smb2_sign_ctx *cx)
{
	uint8_t out[32];

	if (cx->h != NULL && cx->algo == SIGN_AES_GMAC)
		gnutls_aead_cipher_deinit(cx->h);
	else if (cx->h != NULL && cx->algo == SIGN_AES_CMAC)
		gnutls_cipher_deinit(cx->h);
	else if (cx->h != NULL)
		gnutls_hmac_deinit(cx->h, out);
	explicit_bzero(cx, sizeof(*cx));
}

/* RFC 4493 2.3: one doubling in GF(2^128), x^128 + x^7 + x^2 + x + 1. */
static void
sign_cmac_double(const uint8_t in[16], uint8_t out[16])
{
	uint8_t msb = in[0] >> 7;
	int i;

	for (i = 0; i < 15; i++)
		out[i] = (uint8_t)(in[i] << 1 | in[i + 1] >> 7);
	out[15] = (uint8_t)(in[15] << 1) ^ (uint8_t)(-msb & 0x87);
}

/*
 * The CMAC handle: AES-128-CBC keyed once per key, and the subkeys K1
 * and K2 from L = AES-K(0^128) (RFC 4493 2.3), so a message costs no key
 * schedule and no subkey work.
 */
static int
sign_cmac_init(struct smb2_sign_ctx *cx, const uint8_t key[16])
{
	gnutls_cipher_hd_t c;
	uint8_t zero[16] = { 0 }, l[16];
	gnutls_datum_t k = { (unsigned char *)key, 16 };
	gnutls_datum_t iv = { zero, sizeof(zero) };

	if (gnutls_cipher_init(&c, GNUTLS_CIPHER_AES_128_CBC, &k, &iv) < 0)
		return -EINVAL;
	if (gnutls_cipher_encrypt2(c, zero, sizeof(zero), l, sizeof(l)) < 0) {
		gnutls_cipher_deinit(c);
		return -EINVAL;
	}
	sign_cmac_double(l, cx->k1);
	sign_cmac_double(cx->k1, cx->k2);
	explicit_bzero(l, sizeof(l));
	cx->h = c;
	return 0;
}

/*
 * Makes (or re-keys) the handle for algo and key: a MAC handle, for
 * AES-GMAC an AES-128-GCM AEAD handle (sign_gmac_iov), for AES-CMAC an
 * AES-128-CBC cipher handle (sign_cmac_init).
 */
static int
sign_ctx_ready(struct smb2_sign_ctx *cx, int algo, const uint8_t key[16])
{
	gnutls_mac_algorithm_t mac;
	gnutls_hmac_hd_t h;
	gnutls_aead_cipher_hd_t a;
	gnutls_datum_t k;

	if (cx->h != NULL && cx->algo == algo &&
	    memcmp(cx->key, key, sizeof(cx->key)) == 0)
		return 0;
	if (sign_mac_algo(algo, &mac) < 0)
		return -EINVAL;
	smb2_sign_ctx_free(cx);
	if (algo == SIGN_AES_CMAC) {
		if (sign_cmac_init(cx, key) < 0)
			return -EINVAL;
	} else if (algo == SIGN_AES_GMAC) {
		k.data = (unsigned char *)key;
		k.size = 16;
		if (gnutls_aead_cipher_init(&a, GNUTLS_CIPHER_AES_128_GCM,
		    &k) < 0)
			return -EINVAL;
		cx->h = a;
	} else {
		if (gnutls_hmac_init(&h, mac, key, 16) < 0)
			return -EINVAL;
		cx->h = h;
	}
	cx->algo = algo;
	memcpy(cx->key, key, sizeof(cx->key));
	return 0;
}

/*
 * AES-GMAC is AES-GCM over additional data alone, nothing to encrypt
 * (NIST SP 800-38D): through gnutls' AEAD call the message is hashed by
 * its accelerated GCM, 2.7 times the speed of its MAC API's GMAC over
 * 1 MiB on this machine (t/bench/cryptlimit.c: gmac, gmac_aead).  The
 * vector is the header to the signature, 16 zero bytes in its place, the
 * rest; no allocation (gnutls copies only for CCM).
 */
#define SIGN_GMAC_IOV_MAX	8

static int
sign_gmac_iov(struct smb2_sign_ctx *cx, const struct iovec *iov, int iovcnt,
    uint8_t sig[16])
{
	static const uint8_t zeros[SMB2_SIG_LEN];
	const uint8_t *hdr = iov[0].iov_base;
	giovec_t a[SIGN_GMAC_IOV_MAX + 2];
	uint8_t nonce[12];
	size_t tlen = SMB2_SIG_LEN;
	int i, n = 0;

	if (iovcnt > SIGN_GMAC_IOV_MAX)
		return -EINVAL;
	sign_gmac_nonce(hdr, nonce);
	a[n].iov_base = (void *)hdr;
	a[n++].iov_len = SMB2_SIG_OFF;
	a[n].iov_base = (void *)zeros;
	a[n++].iov_len = SMB2_SIG_LEN;
	a[n].iov_base = (void *)(hdr + 64);
	a[n++].iov_len = iov[0].iov_len - 64;
	for (i = 1; i < iovcnt; i++) {
		a[n].iov_base = iov[i].iov_base;
		a[n++].iov_len = iov[i].iov_len;
	}
	if (gnutls_aead_cipher_encryptv2(cx->h, nonce, sizeof(nonce), a, n,
	    NULL, 0, sig, &tlen) < 0 || tlen != SMB2_SIG_LEN) {
		smb2_sign_ctx_free(cx);
		return -EINVAL;
	}
	return 0;
}

/*
 * AES-CMAC as the CBC-MAC it is (RFC 4493 2.4): every block but the last
 * goes through gnutls' bulk AES-128-CBC, whose AES-NI chain runs 1.5
 * times the speed of its MAC API's CMAC (nettle's, a call per block) on
 * this machine (t/bench/cryptlimit.c: cmac, cmac_cbc); the last block,
 * XORed with K1 (whole) or padded and XORed with K2, is chained last and
 * its ciphertext is the MAC.  The rest of the ciphertext is not needed:
 * it goes into a chunk of scratch on the stack.  Pieces that do not fall
 * on block boundaries (the header's split around its signature field)
 * are gathered a block at a time.
 */
#define SIGN_CMAC_CHUNK	2048

struct sign_cmac_run {
	gnutls_cipher_hd_t h;
	size_t		 pos;		/* message bytes taken */
	size_t		 limit;		/* bytes chained before the last block */
	int		 bad;
	uint8_t		 blk[16];	/* a block being gathered */
	uint8_t		 last[16];
	uint8_t		 out[SIGN_CMAC_CHUNK];
};

static void
sign_cmac_feed(struct sign_cmac_run *r, const uint8_t *p, size_t n)
{
	size_t k, c;

	while (n > 0) {
		if (r->pos >= r->limit) {
			/* limit is set so that at most 16 bytes come here */
			memcpy(r->last + (r->pos - r->limit), p, n);
			r->pos += n;
			return;
		}
		c = r->pos % 16;
		if (c != 0 || n < 16) {
			/* pos < limit, both block-aligned: no overrun */
			k = 16 - c < n ? 16 - c : n;
			memcpy(r->blk + c, p, k);
			r->pos += k;
			p += k;
			n -= k;
			if (r->pos % 16 == 0 && gnutls_cipher_encrypt2(r->h,
			    r->blk, 16, r->out, 16) < 0)
				r->bad = 1;
			continue;
		}
		k = r->limit - r->pos < n ? r->limit - r->pos : n;
		if (k > SIGN_CMAC_CHUNK)
			k = SIGN_CMAC_CHUNK;
		k &= ~(size_t)15;
		if (gnutls_cipher_encrypt2(r->h, p, k, r->out, k) < 0)
			r->bad = 1;
		r->pos += k;
		p += k;
		n -= k;
	}
}

/* Chains the last block; len is the message's whole length. */
static int
sign_cmac_final(struct smb2_sign_ctx *cx, struct sign_cmac_run *r,
    size_t len, uint8_t mac[16])
{
	size_t rem = len - r->limit, i;
	const uint8_t *sub = cx->k1;

	if (rem < 16) {
		r->last[rem] = 0x80;
		memset(r->last + rem + 1, 0, 15 - rem);
		sub = cx->k2;
	}
	for (i = 0; i < 16; i++)
		r->last[i] ^= sub[i];
	if (gnutls_cipher_encrypt2(r->h, r->last, 16, mac, 16) < 0)
		r->bad = 1;
	explicit_bzero(r->last, sizeof(r->last));
	if (r->bad) {
		smb2_sign_ctx_free(cx);
		return -EINVAL;
	}
	return 0;
}

static void
sign_cmac_start(struct smb2_sign_ctx *cx, struct sign_cmac_run *r,
    size_t len)
{
	uint8_t iv[16] = { 0 };

	r->h = cx->h;
	r->pos = 0;
	/* Every block but the last, which may be whole (RFC 4493 2.4). */
	r->limit = len == 0 ? 0 : (len - 1) / 16 * 16;
	r->bad = 0;
	gnutls_cipher_set_iv(r->h, iv, sizeof(iv));
}

int
smb2_aes_cmac(struct smb2_sign_ctx *cx, const uint8_t key[16],
    const struct iovec *iov, int iovcnt, uint8_t mac[16])
{
	struct sign_cmac_run r;
	size_t len = 0;
	int i;

	if (iovcnt < 0 || sign_ctx_ready(cx, SIGN_AES_CMAC, key) < 0)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	sign_cmac_start(cx, &r, len);
	for (i = 0; i < iovcnt; i++)
		sign_cmac_feed(&r, iov[i].iov_base, iov[i].iov_len);
	return sign_cmac_final(cx, &r, len, mac);
}

/* The signature field is fed as 16 zero bytes (header comment). */
static int
sign_cmac_iov(struct smb2_sign_ctx *cx, const struct iovec *iov, int iovcnt,
    uint8_t sig[16])
{
	static const uint8_t zeros[SMB2_SIG_LEN];
	const uint8_t *hdr = iov[0].iov_base;
	struct sign_cmac_run r;
	size_t len = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	sign_cmac_start(cx, &r, len);
	sign_cmac_feed(&r, hdr, SMB2_SIG_OFF);
	sign_cmac_feed(&r, zeros, SMB2_SIG_LEN);
	sign_cmac_feed(&r, hdr + 64, iov[0].iov_len - 64);
	for (i = 1; i < iovcnt; i++)
		sign_cmac_feed(&r, iov[i].iov_base, iov[i].iov_len);
	return sign_cmac_final(cx, &r, len, sig);
}

int
smb2_sign_ctx_iov(struct smb2_sign_ctx *cx, int algo, const uint8_t key[16],
    const struct iovec *iov, int iovcnt, uint8_t sig[16])
{
	static const uint8_t zeros[SMB2_SIG_LEN];
	const uint8_t *hdr;
	uint8_t out[32];
	int i, bad = 0;

	if (iovcnt < 1 || iov[0].iov_len < 64 ||
	    sign_ctx_ready(cx, algo, key) < 0)
		return -EINVAL;
	if (algo == SIGN_AES_GMAC)
		return sign_gmac_iov(cx, iov, iovcnt, sig);
	if (algo == SIGN_AES_CMAC)
		return sign_cmac_iov(cx, iov, iovcnt, sig);
	hdr = iov[0].iov_base;
	bad |= gnutls_hmac(cx->h, hdr, SMB2_SIG_OFF);
	bad |= gnutls_hmac(cx->h, zeros, SMB2_SIG_LEN);
	bad |= gnutls_hmac(cx->h, hdr + 64, iov[0].iov_len - 64);
	for (i = 1; i < iovcnt; i++)
		if (iov[i].iov_len > 0)
			bad |= gnutls_hmac(cx->h, iov[i].iov_base, iov[i].iov_len);
	/* The output also resets the handle for the next message. */
	gnutls_hmac_output(cx->h, out);
	if (bad < 0) {
		smb2_sign_ctx_free(cx);
		return -EINVAL;
	}
	memcpy(sig, out, SMB2_SIG_LEN);	/* HMAC-SHA256 is truncated to 16 */
	return 0;
}

int
smb2_sign_ctx(struct smb2_sign_ctx *cx, int algo, const uint8_t key[16],
    uint8_t *msg, size_t len)
{
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	uint8_t sig[SMB2_SIG_LEN];
	int rc;

	if (len < 64)
		return -EINVAL;
	le32_put(msg + HDR_FLAGS_OFF, le32_get(msg + HDR_FLAGS_OFF) | FLAG_SIGNED);
	rc = smb2_sign_ctx_iov(cx, algo, key, &iov, 1, sig);
	if (rc == 0)
		memcpy(msg + SMB2_SIG_OFF, sig, SMB2_SIG_LEN);
	return rc;
}

int
smb2_verify_ctx(struct smb2_sign_ctx *cx, int algo, const uint8_t key[16],
    const uint8_t *msg, size_t len)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	uint8_t sig[SMB2_SIG_LEN];

	if (len < 64 || smb2_sign_ctx_iov(cx, algo, key, &iov, 1, sig) != 0)
		return -EBADMSG;
	return gnutls_memcmp(sig, msg + SMB2_SIG_OFF, SMB2_SIG_LEN) == 0 ?
	    0 : -EBADMSG;
}

/* The one-shot forms: a context for one message (tests, rare paths). */
int
smb2_sign_iov(int algo, const uint8_t key[16], const struct iovec *iov,
    int iovcnt, uint8_t sig[16])
{
	struct smb2_sign_ctx cx = { 0 };
	int rc = smb2_sign_ctx_iov(&cx, algo, key, iov, iovcnt, sig);

	smb2_sign_ctx_free(&cx);
	return rc;
}

int
smb2_sign(int algo, const uint8_t key[16], uint8_t *msg, size_t len)
{
	struct smb2_sign_ctx cx = { 0 };
	int rc = smb2_sign_ctx(&cx, algo, key, msg, len);

	smb2_sign_ctx_free(&cx);
	return rc;
}

int
smb2_verify(int algo, const uint8_t key[16], const uint8_t *msg, size_t len)
{
	struct smb2_sign_ctx cx = { 0 };
	int rc = smb2_verify_ctx(&cx, algo, key, msg, len);

	smb2_sign_ctx_free(&cx);
	return rc;
}
