/* SMB2 TRANSFORM_HEADER encryption and decryption (MS-SMB2 3.1.4.3). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/crypt.h"
#include "proto/cur.h"

#define TH_SIG_OFF	4
#define TH_NONCE_OFF	20
#define TH_SIZE_OFF	36
#define TH_FLAGS_OFF	42
#define TH_SID_OFF	44
#define TH_AAD_OFF	20
#define TH_AAD_LEN	32
#define TAG_LEN		16

size_t
smb2_cipher_key_len(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_ENCRYPTION_AES128_CCM:
	case SMB2_ENCRYPTION_AES128_GCM:
		return 16;
	case SMB2_ENCRYPTION_AES256_CCM:
	case SMB2_ENCRYPTION_AES256_GCM:
		return 32;
	}
	return 0;
}

size_t
smb2_cipher_nonce_len(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_ENCRYPTION_AES128_CCM:
	case SMB2_ENCRYPTION_AES256_CCM:
		return 11;
	case SMB2_ENCRYPTION_AES128_GCM:
	case SMB2_ENCRYPTION_AES256_GCM:
		return 12;
	}
	return 0;
}

static gnutls_cipher_algorithm_t
crypt_algo(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_ENCRYPTION_AES128_CCM:
		return GNUTLS_CIPHER_AES_128_CCM;
	case SMB2_ENCRYPTION_AES128_GCM:
		return GNUTLS_CIPHER_AES_128_GCM;
	case SMB2_ENCRYPTION_AES256_CCM:
		return GNUTLS_CIPHER_AES_256_CCM;
	case SMB2_ENCRYPTION_AES256_GCM:
		return GNUTLS_CIPHER_AES_256_GCM;
	}
	return GNUTLS_CIPHER_UNKNOWN;
}

void
smb2_crypt_ctx_free(struct smb2_crypt_ctx *cx)
{
	if (cx->h != NULL)
		gnutls_aead_cipher_deinit(cx->h);
	explicit_bzero(cx, sizeof(*cx));
}

/* Makes (or re-keys) the AEAD handle for cipher and key. */
static int
crypt_ctx_ready(struct smb2_crypt_ctx *cx, uint16_t cipher, const uint8_t *key)
{
	gnutls_aead_cipher_hd_t h;
	gnutls_datum_t k;
	gnutls_cipher_algorithm_t a = crypt_algo(cipher);
	size_t klen = smb2_cipher_key_len(cipher);

	if (a == GNUTLS_CIPHER_UNKNOWN)
		return -EINVAL;
	if (cx->h != NULL && cx->cipher == cipher &&
	    memcmp(cx->key, key, klen) == 0)
		return 0;
	smb2_crypt_ctx_free(cx);
	k.data = (unsigned char *)key;
	k.size = (unsigned)klen;
	if (gnutls_aead_cipher_init(&h, a, &k) < 0)
		return -EIO;
	cx->h = h;
	cx->cipher = cipher;
	memcpy(cx->key, key, klen);
	return 0;
}

/*
 * The nonce of a sealed message (MS-SMB2 3.1.4.3: unique per key).  A
 * context draws, when it is keyed, a random prefix (GCM: 4 bytes, CCM: 3)
 * and a random 64-bit counter start; each message takes
 * counter || prefix (the counter little-endian in nonce bytes 0..7) and
 * counts on.  Within one draw the counter never repeats: it is drawn again
 * (prefix and start) before it could wrap.  A session's key seals in one
 * context of one process (HACKING.md "Sealing and its nonces": a
 * session's channels meet in its worker and seal with its context, a
 * relayed session seals in its own worker, a session dies with its
 * worker).  One key in several contexts does happen: anonymous sessions
 * on SMB 3.0.x all derive theirs from a zero session key.  Two draws
 * repeat a nonce only with the same 24 or 32 random prefix bits and
 * overlapping counter ranges: about n * m / 2^64 for runs of n and m
 * messages, beyond the 2^-32 of the prefixes alone.  One draw per key,
 * not per message: gnutls_rnd cost 0.23 us a message.
 */
static int
crypt_nonce_draw(struct smb2_crypt_ctx *cx, size_t nlen)
{
	uint8_t r[12];

	if (nlen < 8 || nlen - 8 > sizeof(cx->nonce_prefix) ||
	    gnutls_rnd(GNUTLS_RND_NONCE, r, nlen) < 0)
		return -EIO;
	cx->nonce_ctr = le64_get(r);
	memcpy(cx->nonce_prefix, r + 8, nlen - 8);
	cx->nonce_len = (uint8_t)nlen;
	explicit_bzero(r, sizeof(r));
	return 0;
}

static int
crypt_next_nonce(struct smb2_crypt_ctx *cx, uint16_t cipher,
    uint8_t nonce[16])
{
	size_t nlen = smb2_cipher_nonce_len(cipher);
	int rc;

	if (cx->nonce_len != nlen && (rc = crypt_nonce_draw(cx, nlen)) != 0)
		return rc;
	memset(nonce, 0, 16);
	le64_put(nonce, cx->nonce_ctr);
	memcpy(nonce + 8, cx->nonce_prefix, nlen - 8);
	/* the last value of this draw: the next message draws again */
	if (++cx->nonce_ctr == 0)
		cx->nonce_len = 0;
	return 0;
}

int
smb2_encrypt_ctx_nonce(struct smb2_crypt_ctx *cx, uint16_t cipher,
    const uint8_t *key, uint64_t session_id, const uint8_t nonce[16],
    const struct iovec *plain, int iovcnt, uint8_t th[52],
    uint8_t *out_cipher)
{
	size_t total = 0, off = 0, nlen = smb2_cipher_nonce_len(cipher);
	size_t clen;
	const void *src;
	int i, rc;

	if (nlen == 0 || iovcnt < 1)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (plain[i].iov_len > UINT32_MAX - total)
			return -EINVAL;
		total += plain[i].iov_len;
	}
	if (total == 0 || total > INT32_MAX - TAG_LEN)
		return -EINVAL;
	rc = crypt_ctx_ready(cx, cipher, key);
	if (rc != 0)
		return rc;

	memset(th, 0, SMB2_TRANSFORM_HDR_LEN);
	le32_put(th, SMB2_TRANSFORM_PROTO);
	memcpy(th + TH_NONCE_OFF, nonce, nlen);
	le32_put(th + TH_SIZE_OFF, (uint32_t)total);
	le16_put(th + TH_FLAGS_OFF, SMB2_TRANSFORM_FLAG_ENCRYPTED);
	le64_put(th + TH_SID_OFF, session_id);

	/*
	 * One vector (a whole response in the send buffer) is read once and
	 * written once, into out_cipher; several are gathered first and
	 * encrypted in place.  Ciphertext then tag; the tag moves into the
	 * header.
	 */
	src = plain[0].iov_base;
	if (iovcnt > 1) {
		for (i = 0; i < iovcnt; i++) {
			if (plain[i].iov_len > 0)
				memcpy(out_cipher + off, plain[i].iov_base,
				    plain[i].iov_len);
			off += plain[i].iov_len;
		}
		src = out_cipher;
	}
	clen = total + TAG_LEN;
	if (gnutls_aead_cipher_encrypt(cx->h, th + TH_NONCE_OFF, nlen,
	    th + TH_AAD_OFF, TH_AAD_LEN, TAG_LEN, src, total,
	    out_cipher, &clen) < 0 || clen != total + TAG_LEN) {
		smb2_crypt_ctx_free(cx);
		return -EIO;
	}
	memcpy(th + TH_SIG_OFF, out_cipher + total, TAG_LEN);
	return (int)total;
}

int
smb2_encrypt_ctx(struct smb2_crypt_ctx *cx, uint16_t cipher,
    const uint8_t *key, uint64_t session_id, const struct iovec *plain,
    int iovcnt, uint8_t th[52], uint8_t *out_cipher)
{
	uint8_t nonce[16];
	int rc;

	if (smb2_cipher_nonce_len(cipher) == 0)
		return -EINVAL;
	/* keyed first: a new key or cipher clears the draw */
	if ((rc = crypt_ctx_ready(cx, cipher, key)) != 0 ||
	    (rc = crypt_next_nonce(cx, cipher, nonce)) != 0)
		return rc;
	return smb2_encrypt_ctx_nonce(cx, cipher, key, session_id, nonce, plain,
	    iovcnt, th, out_cipher);
}

/*
 * The one-shot forms keep their contract (out_cipher holds exactly the
 * plain length): the in-place call needs room for the tag, so they go
 * through a scratch buffer.  Tests and rare paths only.
 */
int
smb2_encrypt_nonce(uint16_t cipher, const uint8_t *key, uint64_t session_id,
    const uint8_t nonce[16], const struct iovec *plain, int iovcnt,
    uint8_t th[52], uint8_t *out_cipher)
{
	struct smb2_crypt_ctx cx = { 0 };
	size_t total = 0;
	uint8_t *tmp;
	int i, rc;

	for (i = 0; i < iovcnt; i++) {
		if (plain[i].iov_len > UINT32_MAX - total)
			return -EINVAL;
		total += plain[i].iov_len;
	}
	if (total > INT32_MAX - TAG_LEN)
		return -EINVAL;
	tmp = malloc(total + SMB2_CRYPT_SLACK);
	if (tmp == NULL)
		return -EIO;
	rc = smb2_encrypt_ctx_nonce(&cx, cipher, key, session_id, nonce, plain,
	    iovcnt, th, tmp);
	if (rc > 0)
		memcpy(out_cipher, tmp, (size_t)rc);
	explicit_bzero(tmp, total + SMB2_CRYPT_SLACK);
	free(tmp);
	smb2_crypt_ctx_free(&cx);
	return rc;
}

int
smb2_encrypt(uint16_t cipher, const uint8_t *key, uint64_t session_id,
    const struct iovec *plain, int iovcnt, uint8_t th[52],
    uint8_t *out_cipher)
{
	struct smb2_crypt_ctx cx = { 0 };
	uint8_t nonce[16];
	int rc;

	/* no context to count in: a fresh random nonce, 88 or 96 bits */
	if (smb2_cipher_nonce_len(cipher) == 0)
		return -EINVAL;
	rc = crypt_next_nonce(&cx, cipher, nonce);
	explicit_bzero(&cx, sizeof(cx));
	if (rc != 0)
		return rc;
	return smb2_encrypt_nonce(cipher, key, session_id, nonce, plain, iovcnt,
	    th, out_cipher);
}

int
smb2_transform_session_id(const uint8_t *msg, size_t len, uint64_t *sid)
{
	if (len < SMB2_TRANSFORM_HDR_LEN || le32_get(msg) != SMB2_TRANSFORM_PROTO)
		return -EBADMSG;
	*sid = le64_get(msg + TH_SID_OFF);
	return 0;
}

int
smb2_decrypt_ctx(struct smb2_crypt_ctx *cx, uint16_t cipher,
    const uint8_t *key, uint8_t *msg, size_t len, size_t *plain_off,
    size_t *plain_len)
{
	uint8_t hdr[SMB2_TRANSFORM_HDR_LEN];
	size_t nlen = smb2_cipher_nonce_len(cipher), clen, plen;
	int rc;

	if (nlen == 0 || len <= SMB2_TRANSFORM_HDR_LEN ||
	    le32_get(msg) != SMB2_TRANSFORM_PROTO)
		return -EBADMSG;
	clen = len - SMB2_TRANSFORM_HDR_LEN;
	/* MS-SMB2 3.3.5.2.1.1: the flags must say "encrypted" and the size
	 * must be that of what follows the header. */
	if (le16_get(msg + TH_FLAGS_OFF) != SMB2_TRANSFORM_FLAG_ENCRYPTED ||
	    le32_get(msg + TH_SIZE_OFF) != clen)
		return -EBADMSG;
	if (crypt_ctx_ready(cx, cipher, key) != 0)
		return -EBADMSG;
	if (cipher == SMB2_ENCRYPTION_AES128_GCM ||
	    cipher == SMB2_ENCRYPTION_AES256_GCM) {
		/* GCM streams over the vector in place: no copy, no alloc. */
		giovec_t aad, data;

		aad.iov_base = msg + TH_AAD_OFF;
		aad.iov_len = TH_AAD_LEN;
		data.iov_base = msg + SMB2_TRANSFORM_HDR_LEN;
		data.iov_len = clen;
		rc = gnutls_aead_cipher_decryptv2(cx->h, msg + TH_NONCE_OFF,
		    nlen, &aad, 1, &data, 1, msg + TH_SIG_OFF, TAG_LEN);
		*plain_off = SMB2_TRANSFORM_HDR_LEN;
	} else {
		/*
		 * CCM wants ciphertext || tag in one buffer: keep the header,
		 * move the ciphertext to the start of msg (the header's room)
		 * and put the tag right behind it, still inside msg.
		 */
		memcpy(hdr, msg, sizeof(hdr));
		memmove(msg, msg + SMB2_TRANSFORM_HDR_LEN, clen);
		memcpy(msg + clen, hdr + TH_SIG_OFF, TAG_LEN);
		plen = clen;
		rc = gnutls_aead_cipher_decrypt(cx->h, hdr + TH_NONCE_OFF, nlen,
		    hdr + TH_AAD_OFF, TH_AAD_LEN, TAG_LEN, msg, clen + TAG_LEN,
		    msg, &plen);
		if (rc >= 0 && plen != clen)
			rc = -1;
		*plain_off = 0;
	}
	if (rc < 0)
		return -EBADMSG;
	*plain_len = clen;
	return 0;
}

int
smb2_decrypt(uint16_t cipher, const uint8_t *key, uint8_t *msg, size_t len,
    size_t *plain_off, size_t *plain_len)
{
	struct smb2_crypt_ctx cx = { 0 };
	int rc = smb2_decrypt_ctx(&cx, cipher, key, msg, len, plain_off,
	    plain_len);

	smb2_crypt_ctx_free(&cx);
	return rc;
}
