#include "proto/neg_ctx.h"
#include "proto/posix.h"

#include <string.h>

#define SMB2_HDR_BYTES	64

ntstatus_t
neg_req_decode(const uint8_t *msg, size_t len, struct neg_req *r)
{
	struct cur c;
	uint16_t i;

	memset(r, 0, sizeof(*r));
	cur_init(&c, msg, len);
	cur_seek(&c, SMB2_HDR_BYTES);
	if (cur_le16(&c) != 36)
		return STATUS_INVALID_PARAMETER;
	r->dialect_count = cur_le16(&c);
	r->security_mode = cur_le16(&c);
	cur_skip(&c, 2);
	r->capabilities = cur_le32(&c);
	cur_bytes(&c, r->client_guid, 16);
	r->ctx_offset = cur_le32(&c);
	r->ctx_count = cur_le16(&c);
	cur_skip(&c, 2);
	if (c.err || r->dialect_count == 0 || r->dialect_count > NEG_MAX_DIALECTS)
		return STATUS_INVALID_PARAMETER;
	for (i = 0; i < r->dialect_count; i++)
		r->dialects[i] = cur_le16(&c);
	return c.err ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

static int
neg_algs(struct cur *d, uint16_t *out, uint16_t n)
{
	uint16_t i;

	if (n == 0 || n > NEG_MAX_ALGS)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = cur_le16(d);
	return d->err ? -1 : 0;
}

ntstatus_t
neg_ctx_decode(const uint8_t *msg, size_t len, uint32_t offset, uint16_t count,
    struct neg_ctx *nc)
{
	struct cur c;
	size_t off = offset;
	uint16_t i, j;

	memset(nc, 0, sizeof(*nc));
	cur_init(&c, msg, len);
	if ((offset & 7) != 0 || offset < SMB2_HDR_BYTES + 36 || count == 0)
		return STATUS_INVALID_PARAMETER;
	for (i = 0; i < count; i++) {
		uint16_t type, dlen;
		struct cur d;

		off = (off + 7) & ~(size_t)7;
		cur_seek(&c, off);
		type = cur_le16(&c);
		dlen = cur_le16(&c);
		cur_skip(&c, 4);
		d = cur_sub(&c, cur_off(&c), dlen);
		if (c.err)
			return STATUS_INVALID_PARAMETER;
		off = cur_off(&c) + dlen;
		switch (type) {
		case SMB2_PREAUTH_INTEGRITY_CAPABILITIES:
			if (nc->has_preauth)
				return STATUS_INVALID_PARAMETER;
			nc->has_preauth = 1;
			nc->nhash = cur_le16(&d);
			nc->salt_len = cur_le16(&d);
			if (neg_algs(&d, nc->hash_algs, nc->nhash) < 0)
				return STATUS_INVALID_PARAMETER;
			nc->salt = cur_view(&d, nc->salt_len);
			if (d.err)
				return STATUS_INVALID_PARAMETER;
			break;
		case SMB2_ENCRYPTION_CAPABILITIES:
			if (nc->has_cipher)
				return STATUS_INVALID_PARAMETER;
			nc->has_cipher = 1;
			nc->ncipher = cur_le16(&d);
			if (neg_algs(&d, nc->ciphers, nc->ncipher) < 0)
				return STATUS_INVALID_PARAMETER;
			break;
		case SMB2_SIGNING_CAPABILITIES:
			if (nc->has_signing)
				return STATUS_INVALID_PARAMETER;
			nc->has_signing = 1;
			nc->nsign = cur_le16(&d);
			if (neg_algs(&d, nc->sign_algs, nc->nsign) < 0)
				return STATUS_INVALID_PARAMETER;
			break;
		case SMB2_NETNAME_NEGOTIATE_CONTEXT_ID:
			nc->has_netname = 1;
			nc->netname = d.p;
			nc->netname_len = dlen;
			break;
		case SMB2_POSIX_EXTENSIONS_AVAILABLE: {
			int r = posix_negctx_offered(d.p, dlen);

			/* a list of GUIDs, as Samba checks it */
			if (r < 0)
				return STATUS_INVALID_PARAMETER;
			nc->has_posix = nc->has_posix || r;
			break;
		}
		case SMB2_COMPRESSION_CAPABILITIES:
			/*
			 * MS-SMB2 3.3.5.4: a second one, no algorithm, or a
			 * list longer than its data is INVALID_PARAMETER.
			 */
			if (nc->has_compress)
				return STATUS_INVALID_PARAMETER;
			nc->has_compress = 1;
			nc->ncomp = cur_le16(&d);
			cur_skip(&d, 2);
			nc->comp_flags = cur_le32(&d);
			if (neg_algs(&d, nc->comp_algs, nc->ncomp) < 0)
				return STATUS_INVALID_PARAMETER;
			break;
		default:
			/* Transport, RDMA: not offered back. */
			break;
		}
	}
	if (!nc->has_preauth)
		return STATUS_INVALID_PARAMETER;
	for (j = 0; j < nc->nhash; j++)
		if (nc->hash_algs[j] == SMB2_PREAUTH_INTEGRITY_SHA512)
			return STATUS_SUCCESS;
	return STATUS_SMB_NO_PREAUTH_INTEGRITY_HASH_OVERLAP;
}

static void
neg_ctx_head(struct wcur *w, uint16_t type, uint16_t dlen)
{
	wcur_align(w, 8);
	wcur_le16(w, type);
	wcur_le16(w, dlen);
	wcur_le32(w, 0);
}

void
neg_ctx_put_preauth(struct wcur *w, const uint8_t *salt, uint16_t salt_len)
{
	neg_ctx_head(w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES, (uint16_t)(6 + salt_len));
	wcur_le16(w, 1);
	wcur_le16(w, salt_len);
	wcur_le16(w, SMB2_PREAUTH_INTEGRITY_SHA512);
	wcur_bytes(w, salt, salt_len);
}

void
neg_ctx_put_cipher(struct wcur *w, uint16_t cipher)
{
	neg_ctx_head(w, SMB2_ENCRYPTION_CAPABILITIES, 4);
	wcur_le16(w, 1);
	wcur_le16(w, cipher);
}

void
neg_ctx_put_signing(struct wcur *w, uint16_t algo)
{
	neg_ctx_head(w, SMB2_SIGNING_CAPABILITIES, 4);
	wcur_le16(w, 1);
	wcur_le16(w, algo);
}

void
neg_ctx_put_compress(struct wcur *w, uint32_t flags, const uint16_t *algs,
    uint16_t n)
{
	uint16_t i;

	neg_ctx_head(w, SMB2_COMPRESSION_CAPABILITIES, (uint16_t)(8 + 2 * n));
	wcur_le16(w, n);
	wcur_le16(w, 0);
	wcur_le32(w, flags);
	for (i = 0; i < n; i++)
		wcur_le16(w, algs[i]);
}

void
neg_ctx_put_posix(struct wcur *w)
{
	neg_ctx_head(w, SMB2_POSIX_EXTENSIONS_AVAILABLE, 16);
	wcur_bytes(w, posix_tag, 16);
}
