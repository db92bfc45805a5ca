/*
 * SMB2 NEGOTIATE request decoding and the SMB 3.1.1 negotiate contexts
 * (MS-SMB2 2.2.3, 2.2.3.1.x, 2.2.4.1.x).  Strict: every length checked,
 * contexts 8-byte aligned inside the message, duplicates refused.
 */
#ifndef USMBD_PROTO_NEG_CTX_H
#define USMBD_PROTO_NEG_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"

/* MS-SMB2 2.2.3.1 ContextType */
#define SMB2_PREAUTH_INTEGRITY_CAPABILITIES	0x0001
#define SMB2_ENCRYPTION_CAPABILITIES		0x0002
#define SMB2_COMPRESSION_CAPABILITIES		0x0003
#define SMB2_NETNAME_NEGOTIATE_CONTEXT_ID	0x0005
#define SMB2_TRANSPORT_CAPABILITIES		0x0006
#define SMB2_RDMA_TRANSFORM_CAPABILITIES	0x0007
#define SMB2_SIGNING_CAPABILITIES		0x0008

/* 2.2.3.1.1 */
#define SMB2_PREAUTH_INTEGRITY_SHA512		0x0001
/* 2.2.3.1.2 */
#define SMB2_ENCRYPTION_AES128_CCM		0x0001
#define SMB2_ENCRYPTION_AES128_GCM		0x0002
#define SMB2_ENCRYPTION_AES256_CCM		0x0003
#define SMB2_ENCRYPTION_AES256_GCM		0x0004
/* 2.2.3.1.7 */
#define SMB2_SIGNING_HMAC_SHA256		0x0000
#define SMB2_SIGNING_AES_CMAC			0x0001
#define SMB2_SIGNING_AES_GMAC			0x0002

#define STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP	0xC05D0000u

#define NEG_MAX_DIALECTS	64
#define NEG_MAX_ALGS		16

/* A decoded NEGOTIATE request (2.2.3), views into the message. */
struct neg_req {
	uint16_t	 dialect_count;
	uint16_t	 security_mode;
	uint32_t	 capabilities;
	uint8_t		 client_guid[16];
	uint32_t	 ctx_offset;	/* from the start of the SMB2 header */
	uint16_t	 ctx_count;
	uint16_t	 dialects[NEG_MAX_DIALECTS];
};

/* The negotiate contexts a 3.1.1 client offered. */
struct neg_ctx {
	int		 has_preauth;
	uint16_t	 hash_algs[NEG_MAX_ALGS];
	uint16_t	 nhash;
	const uint8_t	*salt;
	uint16_t	 salt_len;
	int		 has_cipher;
	uint16_t	 ciphers[NEG_MAX_ALGS];
	uint16_t	 ncipher;
	int		 has_signing;
	uint16_t	 sign_algs[NEG_MAX_ALGS];
	uint16_t	 nsign;
	int		 has_netname;
	const uint8_t	*netname;	/* UTF-16LE, not terminated */
	uint16_t	 netname_len;
	int		 has_posix;	/* our POSIX GUID offered (proto/posix.h) */
	/* SMB2_COMPRESSION_CAPABILITIES (2.2.3.1.3), in the client's order */
	int		 has_compress;
	uint32_t	 comp_flags;
	uint16_t	 comp_algs[NEG_MAX_ALGS];
	uint16_t	 ncomp;
};

/*
 * msg/len is the whole request (header + body).  Returns STATUS_SUCCESS or
 * STATUS_INVALID_PARAMETER.  Dialects beyond NEG_MAX_DIALECTS are an error.
 */
ntstatus_t	neg_req_decode(const uint8_t *msg, size_t len, struct neg_req *);

/*
 * Decodes the context list of a 3.1.1 request.  Returns STATUS_SUCCESS,
 * STATUS_INVALID_PARAMETER or STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP
 * (MS-SMB2 3.3.5.4).
 */
ntstatus_t	neg_ctx_decode(const uint8_t *msg, size_t len, uint32_t offset,
		    uint16_t count, struct neg_ctx *);

/* Response contexts (2.2.4.1.x), each written 8-byte aligned from w->base. */
void	neg_ctx_put_preauth(struct wcur *, const uint8_t *salt, uint16_t salt_len);
void	neg_ctx_put_cipher(struct wcur *, uint16_t cipher);
void	neg_ctx_put_signing(struct wcur *, uint16_t algo);
/* SMB2_COMPRESSION_CAPABILITIES (2.2.4.1.3): algs[0, n) and flags. */
void	neg_ctx_put_compress(struct wcur *, uint32_t flags, const uint16_t *algs,
	    uint16_t n);
/* SMB2_POSIX_EXTENSIONS_AVAILABLE with the one GUID we speak. */
void	neg_ctx_put_posix(struct wcur *);

#endif
