/* SMB 3.1.1 preauth integrity hash chain (MS-SMB2 3.3.5.4). */
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "proto/preauth.h"

void
smb2_preauth_init(uint8_t hash[64])
{
	memset(hash, 0, 64);
}

void
smb2_preauth_update_iov(uint8_t hash[64], const struct iovec *iov, int iovcnt)
{
	gnutls_hash_hd_t h;
	int i;

	/* Fails only without memory or SHA-512; leave the hash poisoned so
	 * that the keys derived from it can never match the client's. */
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA512) < 0) {
		memset(hash, 0xff, 64);
		return;
	}
	gnutls_hash(h, hash, 64);
	for (i = 0; i < iovcnt; i++)
		if (iov[i].iov_len > 0)
			gnutls_hash(h, iov[i].iov_base, iov[i].iov_len);
	gnutls_hash_deinit(h, hash);
}

void
smb2_preauth_update(uint8_t hash[64], const uint8_t *msg, size_t len)
{
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };

	smb2_preauth_update_iov(hash, &iov, 1);
}
