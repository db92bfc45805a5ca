/*
 * SMB2 message signing (MS-SMB2 3.1.4.1 sign, 3.1.5.1 verify).
 *
 * The signature covers the whole message (header + body + compound padding)
 * with the 16-byte Signature field (header bytes 48..63) taken as zero.
 */
#ifndef USMBD_PROTO_SIGN_H
#define USMBD_PROTO_SIGN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* MS-SMB2 2.2.3.1.7 SigningAlgorithm ids */
enum smb2_sign_algo {
	SIGN_HMAC_SHA256 = 0,	/* 2.0.2, 2.1 */
	SIGN_AES_CMAC = 1,	/* 3.0, 3.0.2, 3.1.1 default */
	SIGN_AES_GMAC = 2,	/* 3.1.1 when negotiated */
};

#define SMB2_SIG_OFF	48
#define SMB2_SIG_LEN	16

/* The algorithm a dialect uses when 3.1.1 negotiated none. */
int	smb2_sign_algo_default(uint16_t dialect);

/*
 * Sets SMB2_FLAGS_SIGNED in the header, computes the signature of msg
 * (len >= 64) and writes it into bytes 48..63.  0, or -EINVAL for a bad
 * algorithm or a short message.
 */
int	smb2_sign(int algo, const uint8_t key[16], uint8_t *msg, size_t len);

/*
 * 0 when the signature in bytes 48..63 matches (constant-time compare),
 * -EBADMSG otherwise.  msg is not modified.
 */
int	smb2_verify(int algo, const uint8_t key[16], const uint8_t *msg,
	    size_t len);

/*
 * Signature of a message spread over iov (iov[0] starts with the 64-byte
 * header, whose signature field is taken as zero; later entries hold bulk
 * data).  The caller sets SMB2_FLAGS_SIGNED in the header first and copies
 * sig into bytes 48..63 afterwards.  0 or -EINVAL.
 */
int	smb2_sign_iov(int algo, const uint8_t key[16], const struct iovec *iov,
	    int iovcnt, uint8_t sig[16]);

/*
 * A reusable signing context, one per session: the MAC handle is made on
 * first use (gnutls_hmac_init allocates) and then reused for every message
 * (gnutls_hmac_output resets it; AES-GMAC is an AES-GCM AEAD handle given
 * each message's nonce), so a
 * steady-state request allocates nothing.  The context remembers the
 * algorithm and key it was made with and re-keys itself when a caller passes
 * others (re-authentication, a session handed from a gate).  Zero-initialise
 * it; smb2_sign_ctx_free releases it (and may be called on a zeroed one).
 */
struct smb2_sign_ctx {
	/* gnutls_hmac_hd_t for HMAC-SHA256; for AES-GMAC a
	 * gnutls_aead_cipher_hd_t (AES-GCM over the message as additional
	 * data); for AES-CMAC a gnutls_cipher_hd_t (AES-128-CBC, the
	 * CBC-MAC under CMAC); NULL until first use */
	void		*h;
	int		 algo;
	uint8_t		 key[16];	/* the key h was keyed with */
	uint8_t		 k1[16], k2[16];	/* CMAC subkeys (RFC 4493 2.3) */
};

int	smb2_sign_ctx_iov(struct smb2_sign_ctx *, int algo,
	    const uint8_t key[16], const struct iovec *iov, int iovcnt,
	    uint8_t sig[16]);
/* As smb2_sign / smb2_verify, through the context. */
int	smb2_sign_ctx(struct smb2_sign_ctx *, int algo, const uint8_t key[16],
	    uint8_t *msg, size_t len);
int	smb2_verify_ctx(struct smb2_sign_ctx *, int algo, const uint8_t key[16],
	    const uint8_t *msg, size_t len);
void	smb2_sign_ctx_free(struct smb2_sign_ctx *);

/*
 * AES-128-CMAC (RFC 4493) of the concatenation of iov[0..iovcnt), any
 * length (0 included), through the context (keyed for SIGN_AES_CMAC with
 * key; re-keyed if it held something else).  What smb2_sign_ctx_iov uses
 * for SIGN_AES_CMAC; exposed for the RFC's known answers.  0 or -EINVAL.
 */
int	smb2_aes_cmac(struct smb2_sign_ctx *, const uint8_t key[16],
	    const struct iovec *iov, int iovcnt, uint8_t mac[16]);

#endif
