/*
 * SMB 3.x key derivation (MS-SMB2 3.1.4.2, 3.2.5.3.1, 3.3.5.5.3): NIST SP
 * 800-108 KDF in counter mode with HMAC-SHA256 as the PRF, r = 32, and the
 * per-dialect labels and contexts.
 */
#ifndef USMBD_PROTO_KDF_H
#define USMBD_PROTO_KDF_H

#include <stddef.h>
#include <stdint.h>

/* Dialect revisions (MS-SMB2 2.2.3) used to choose labels. */
#define SMB2_DIALECT_202	0x0202
#define SMB2_DIALECT_210	0x0210
#define SMB2_DIALECT_300	0x0300
#define SMB2_DIALECT_302	0x0302
#define SMB2_DIALECT_311	0x0311

/*
 * KDF(Ki, Label, Context) producing out_len bytes (L = 8 * out_len bits).
 * The label and context are passed with their lengths; MS-SMB2 labels include
 * their trailing NUL (e.g. "SMB2AESCMAC", 12).  The 0x00 separator of SP
 * 800-108 is added here.
 */
void	smb2_kdf(const uint8_t *ki, size_t ki_len, const char *label,
	    size_t label_len, const uint8_t *context, size_t context_len,
	    uint8_t *out, size_t out_len);

struct smb2_keys {
	uint8_t	signing[16];
	uint8_t	enc[32];	/* ServerOut: encrypts what the server sends */
	uint8_t	dec[32];	/* ServerIn: decrypts what the client sends */
	uint8_t	app[16];
};

/*
 * Derives a session's keys from the 16-byte session key (the NTLMSSP exported
 * session key).  2.x: signing = app = session key, no cipher keys.  3.0 and
 * 3.0.2: fixed labels and contexts, AES-128 keys.  3.1.1: labels with the
 * session's preauth integrity hash (64 bytes) as context; cipher 3 or 4
 * (AES-256-CCM/GCM) gets 32-byte cipher keys, otherwise 16 (the rest of enc
 * and dec is zero).  preauth_hash may be NULL below 3.1.1.
 */
void	smb2_derive_keys(uint16_t dialect, uint16_t cipher,
	    const uint8_t session_key[16], const uint8_t preauth_hash[64],
	    struct smb2_keys *out);
/*
 * The same with the whole session key (MS-SMB2 Session.FullSessionKey,
 * full_len 16 to 32 bytes: a Kerberos AES-256 session key is 32): the
 * 3.1.1 AES-256 cipher keys derive from all of it, everything else from
 * its first 16 bytes, as Windows and Samba do.
 */
void	smb2_derive_keys_full(uint16_t dialect, uint16_t cipher,
	    const uint8_t *full_key, size_t full_len,
	    const uint8_t preauth_hash[64], struct smb2_keys *out);

#endif
