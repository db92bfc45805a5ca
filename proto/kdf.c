/* SP 800-108 counter-mode KDF and the SMB 3.x key schedule (MS-SMB2 3.1.4.2). */
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/cur.h"
#include "proto/crypt.h"
#include "proto/kdf.h"

void
smb2_kdf(const uint8_t *ki, size_t ki_len, const char *label,
    size_t label_len, const uint8_t *context, size_t context_len,
    uint8_t *out, size_t out_len)
{
	gnutls_hmac_hd_t h;
	uint8_t be[4], lbits[4], block[32];
	static const uint8_t zero = 0;
	uint32_t i;
	size_t done = 0, n;
	uint32_t L = (uint32_t)out_len * 8;

	lbits[0] = (uint8_t)(L >> 24);
	lbits[1] = (uint8_t)(L >> 16);
	lbits[2] = (uint8_t)(L >> 8);
	lbits[3] = (uint8_t)L;
	for (i = 1; done < out_len; i++) {
		be[0] = (uint8_t)(i >> 24);
		be[1] = (uint8_t)(i >> 16);
		be[2] = (uint8_t)(i >> 8);
		be[3] = (uint8_t)i;
		/* Only fails on allocation failure or a disabled algorithm:
		 * a broken invariant for a server that must sign. */
		if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, ki, ki_len) < 0) {
			memset(out, 0, out_len);
			return;
		}
		gnutls_hmac(h, be, 4);
		gnutls_hmac(h, label, label_len);
		gnutls_hmac(h, &zero, 1);
		gnutls_hmac(h, context, context_len);
		gnutls_hmac(h, lbits, 4);
		gnutls_hmac_deinit(h, block);
		n = out_len - done < sizeof(block) ? out_len - done : sizeof(block);
		memcpy(out + done, block, n);
		done += n;
	}
	gnutls_memset(block, 0, sizeof(block));
}

#define LBL(s)	(s), sizeof(s)		/* label with its NUL */

void
smb2_derive_keys(uint16_t dialect, uint16_t cipher,
    const uint8_t session_key[16], const uint8_t preauth_hash[64],
    struct smb2_keys *out)
{
	smb2_derive_keys_full(dialect, cipher, session_key, 16, preauth_hash,
	    out);
}

void
smb2_derive_keys_full(uint16_t dialect, uint16_t cipher,
    const uint8_t *full_key, size_t full_len, const uint8_t preauth_hash[64],
    struct smb2_keys *out)
{
	const uint8_t *session_key = full_key;	/* its first 16 bytes */
	static const uint8_t ctx_sign[] = "SmbSign";
	static const uint8_t ctx_out[] = "ServerOut";
	static const uint8_t ctx_in[] = "ServerIn ";	/* sic: trailing space */
	static const uint8_t ctx_app[] = "SmbRpc";
	size_t klen, fl;

	memset(out, 0, sizeof(*out));
	if (dialect < SMB2_DIALECT_300) {
		memcpy(out->signing, session_key, 16);
		memcpy(out->app, session_key, 16);
		return;
	}
	if (dialect < SMB2_DIALECT_311 || preauth_hash == NULL) {
		smb2_kdf(session_key, 16, LBL("SMB2AESCMAC"), ctx_sign,
		    sizeof(ctx_sign), out->signing, 16);
		smb2_kdf(session_key, 16, LBL("SMB2AESCCM"), ctx_out,
		    sizeof(ctx_out), out->enc, 16);
		smb2_kdf(session_key, 16, LBL("SMB2AESCCM"), ctx_in,
		    sizeof(ctx_in), out->dec, 16);
		smb2_kdf(session_key, 16, LBL("SMB2APP"), ctx_app,
		    sizeof(ctx_app), out->app, 16);
		return;
	}
	/*
	 * 3.1.1.  For the 256-bit ciphers MS-SMB2 takes Session.FullSessionKey
	 * as Ki: NTLMSSP's is 16 bytes, a Kerberos AES-256 one 32.
	 */
	klen = smb2_cipher_key_len(cipher) == 32 ? 32 : 16;
	fl = klen == 32 && full_len > 16 ? (full_len > 32 ? 32 : full_len) : 16;
	smb2_kdf(session_key, 16, LBL("SMBSigningKey"), preauth_hash, 64,
	    out->signing, 16);
	smb2_kdf(full_key, fl, LBL("SMBS2CCipherKey"), preauth_hash, 64,
	    out->enc, klen);
	smb2_kdf(full_key, fl, LBL("SMBC2SCipherKey"), preauth_hash, 64,
	    out->dec, klen);
	smb2_kdf(session_key, 16, LBL("SMBAppKey"), preauth_hash, 64,
	    out->app, 16);
}
