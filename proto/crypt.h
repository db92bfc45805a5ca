/*
 * SMB 3.x encryption: the TRANSFORM_HEADER (MS-SMB2 2.2.41) with AES-CCM or
 * AES-GCM (MS-SMB2 3.1.4.3 encrypt, 3.3.5.2.1.1 decrypt).
 *
 * Layout: ProtocolId 0xFD 'S' 'M' 'B' (4), Signature = AEAD tag (16), Nonce
 * (16: 11 used by CCM, 12 by GCM, rest zero), OriginalMessageSize (4),
 * Reserved (2), Flags/EncryptionAlgorithm = 1 (2), SessionId (8).  The AAD is
 * header bytes 20..51 (Nonce through SessionId).
 */
#ifndef USMBD_PROTO_CRYPT_H
#define USMBD_PROTO_CRYPT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* MS-SMB2 2.2.3.1.2 cipher ids */
#define SMB2_ENCRYPTION_AES128_CCM	0x0001
#define SMB2_ENCRYPTION_AES128_GCM	0x0002
#define SMB2_ENCRYPTION_AES256_CCM	0x0003
#define SMB2_ENCRYPTION_AES256_GCM	0x0004

#define SMB2_TRANSFORM_HDR_LEN		52
#define SMB2_TRANSFORM_PROTO		0x424D53FDu	/* as a LE32 */
#define SMB2_TRANSFORM_FLAG_ENCRYPTED	0x0001

/* 16 or 32 for a known cipher, 0 otherwise. */
size_t	smb2_cipher_key_len(uint16_t cipher);
/* 11 (CCM) or 12 (GCM), 0 for an unknown cipher. */
size_t	smb2_cipher_nonce_len(uint16_t cipher);

/*
 * Encrypts the concatenation of plain[0..iovcnt) (the whole SMB2 message,
 * compound included) into out_cipher (room for the total plain length) and
 * fills the 52-byte transform header, tag included.  The nonce is drawn
 * at random (no context to count in).  Returns the ciphertext length, or
 * -EINVAL (bad cipher, empty or over 4 GiB message) / -EIO (crypto
 * library failure).
 */
int	smb2_encrypt(uint16_t cipher, const uint8_t *key, uint64_t session_id,
	    const struct iovec *plain, int iovcnt, uint8_t transform_hdr[52],
	    uint8_t *out_cipher);

/* Same with a caller-chosen nonce (nonce_len bytes of it are used): tests. */
int	smb2_encrypt_nonce(uint16_t cipher, const uint8_t *key,
	    uint64_t session_id, const uint8_t nonce[16],
	    const struct iovec *plain, int iovcnt, uint8_t transform_hdr[52],
	    uint8_t *out_cipher);

/*
 * Checks the transform header of msg (len bytes), decrypts in place, and
 * returns 0 with the plaintext at msg + *plain_off, *plain_len bytes; or
 * -EBADMSG for a malformed header, a size mismatch or a bad tag (then the
 * buffer content after the header is unspecified).
 */
int	smb2_decrypt(uint16_t cipher, const uint8_t *key, uint8_t *msg,
	    size_t len, size_t *plain_off, size_t *plain_len);

/*
 * A reusable cipher context, one per session and direction: the AEAD handle
 * is made on first use and reused, re-keyed when the caller passes another
 * cipher or key.  Zero-initialise; smb2_crypt_ctx_free releases it.
 *
 * gnutls' scatter/gather AEAD calls allocate per message for CCM (they copy
 * into a temporary buffer), so the context calls use the contiguous forms:
 * smb2_encrypt_ctx needs SMB2_CRYPT_SLACK bytes of room after the
 * ciphertext (the tag lands there before it is moved into the header), and
 * smb2_decrypt_ctx with CCM moves the ciphertext to the start of msg to put
 * the tag behind it (the plaintext is then at msg + 0; with GCM it stays at
 * msg + 52).  Neither allocates once the handle exists.
 */
#define SMB2_CRYPT_SLACK	16

struct smb2_crypt_ctx {
	void		*h;		/* gnutls_aead_cipher_hd_t; NULL until first use */
	uint16_t	 cipher;
	uint8_t		 key[32];
	/* the sealing nonces (proto/crypt.c crypt_next_nonce): the next
	 * counter value and the prefix, drawn at random once per key;
	 * nonce_len 0 = not drawn */
	uint64_t	 nonce_ctr;
	uint8_t		 nonce_prefix[4];
	uint8_t		 nonce_len;
};

/*
 * As smb2_encrypt; out_cipher has room for the plain length + SLACK.  The
 * nonce is the context's counter and random prefix (proto/crypt.c says
 * why it is unique), drawn again with a new key.  One
 * vector is encrypted straight from where it is into out_cipher (one pass,
 * no copy: a response in the send buffer goes to the frame buffer behind
 * its transform header); out_cipher may be plain[0].iov_base itself but
 * must not overlap it otherwise.  Several vectors are gathered into
 * out_cipher first.
 */
int	smb2_encrypt_ctx(struct smb2_crypt_ctx *, uint16_t cipher,
	    const uint8_t *key, uint64_t session_id, const struct iovec *plain,
	    int iovcnt, uint8_t transform_hdr[52], uint8_t *out_cipher);
int	smb2_encrypt_ctx_nonce(struct smb2_crypt_ctx *, uint16_t cipher,
	    const uint8_t *key, uint64_t session_id, const uint8_t nonce[16],
	    const struct iovec *plain, int iovcnt, uint8_t transform_hdr[52],
	    uint8_t *out_cipher);
/* As smb2_decrypt (the header bytes of msg are overwritten with CCM). */
int	smb2_decrypt_ctx(struct smb2_crypt_ctx *, uint16_t cipher,
	    const uint8_t *key, uint8_t *msg, size_t len, size_t *plain_off,
	    size_t *plain_len);
void	smb2_crypt_ctx_free(struct smb2_crypt_ctx *);

/* Reads the SessionId of a transform header (to look the key up first). */
int	smb2_transform_session_id(const uint8_t *msg, size_t len, uint64_t *sid);

#endif
