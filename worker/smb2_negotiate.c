/*
 * NEGOTIATE (MS-SMB2 2.2.3, 2.2.4, 3.3.5.3, 3.3.5.4): dialect choice within
 * the configured range, 3.1.1 negotiate contexts, the SPNEGO hints, and the
 * answer to an SMB1 NEGOTIATE that offers SMB2.
 */
#include <string.h>
#include <sys/random.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/compress.h"
#include "proto/neg_ctx.h"
#include "proto/preauth.h"
#include "proto/smb2_hdr.h"
#include "proto/spnego.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"

#define SMB2_DIALECT_WILDCARD	0x02FF

static const uint16_t neg_dialects[] = {
	DIALECT_311, DIALECT_302, DIALECT_300, DIALECT_210, DIALECT_202,
};

/* Server preference orders (Samba's defaults). */
static const uint16_t neg_cipher_pref[] = {
	SMB2_ENCRYPTION_AES128_GCM, SMB2_ENCRYPTION_AES128_CCM,
	SMB2_ENCRYPTION_AES256_GCM, SMB2_ENCRYPTION_AES256_CCM,
};
static const uint16_t neg_sign_pref[] = {
	SMB2_SIGNING_AES_GMAC, SMB2_SIGNING_AES_CMAC, SMB2_SIGNING_HMAC_SHA256,
};

/* The first of pref that the client offers, or dflt. */
static uint16_t
neg_pick(const uint16_t *pref, size_t npref, const uint16_t *offer, uint16_t n,
    uint16_t dflt)
{
	size_t i;
	uint16_t j;

	for (i = 0; i < npref; i++)
		for (j = 0; j < n; j++)
			if (offer[j] == pref[i])
				return pref[i];
	return dflt;
}

/*
 * MS-SMB2 3.3.5.4: Connection.CompressionIds are the client's algorithms
 * usmbd implements, in the client's order, into common[] (what the
 * answer lists); Pattern_V1 only travels chained (2.2.42.1 names the
 * unchained algorithms), so without chaining it is left out.  Returns
 * how many; none: no compression and no context in the answer.
 */
static uint16_t
neg_compress(struct conn *c, const struct neg_ctx *nc, uint16_t *common)
{
	int chained = (nc->comp_flags & SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED)
	    != 0;
	uint16_t i, n = 0;
	uint32_t mask = 0;

	c->compress_algs = 0;
	c->compress_chained = 0;
	if (!nc->has_compress || !c->conf->smb_compression)
		return 0;
	for (i = 0; i < nc->ncomp; i++) {
		uint16_t a = nc->comp_algs[i];

		if (a >= 32 || !(COMPRESS_ALGS_SUPPORTED & COMPRESS_ALG_BIT(a)) ||
		    (mask & COMPRESS_ALG_BIT(a)) ||
		    (a == SMB2_COMPRESSION_PATTERN_V1 && !chained))
			continue;
		mask |= COMPRESS_ALG_BIT(a);
		common[n++] = a;
	}
	c->compress_algs = mask;
	c->compress_chained = n > 0 && chained;
	return n;
}

static int
neg_in_range(const struct conf *cf, uint16_t d)
{
	return d >= cf->min_protocol && d <= cf->max_protocol;
}

/* Sets the connection's security mode and signing requirement. */
static void
neg_security(struct conn *c)
{
	c->security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	if (c->conf->server_signing == SIGNING_MANDATORY)
		c->security_mode |= SMB2_NEGOTIATE_SIGNING_REQUIRED;
	c->signing_required = c->conf->server_signing == SIGNING_MANDATORY ||
	    (c->client_security_mode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
}

/*
 * The fixed part of the response (2.2.4) and the security buffer; returns
 * the offset field positions to patch for contexts.
 */
static void
neg_write(struct conn *c, struct wcur *w, uint16_t dialect, uint16_t nctx,
    uint8_t **ctx_off_field)
{
	uint8_t *secbuf_fields;
	int n;

	wcur_le16(w, 65);
	wcur_le16(w, c->security_mode);
	wcur_le16(w, dialect);
	wcur_le16(w, nctx);
	wcur_bytes(w, c->server_guid, 16);
	wcur_le32(w, c->capabilities);
	wcur_le32(w, c->max_trans_size);
	wcur_le32(w, c->max_read_size);
	wcur_le32(w, c->max_write_size);
	wcur_le64(w, conn_filetime());
	/* MS-SMB2 says ServerStartTime SHOULD be 0 for 2.x too; Windows sends 0. */
	wcur_le64(w, 0);
	secbuf_fields = wcur_reserve(w, 4);
	*ctx_off_field = wcur_reserve(w, 4);
	if (w->err)
		return;
	le32_put(*ctx_off_field, 0);
	n = spnego_build_neg_init(w->p, wcur_left(w),
	    conf_keytab_path(c->conf) != NULL);
	if (n < 0) {
		w->err = 1;
		return;
	}
	le16_put(secbuf_fields, SMB2_HDR_LEN + 64);
	le16_put(secbuf_fields + 2, (uint16_t)n);
	wcur_reserve(w, (size_t)n);
}

static void
neg_limits(struct conn *c, uint16_t dialect)
{
	c->dialect = dialect;
	c->max_trans_size = c->max_read_size = c->max_write_size =
	    dialect == DIALECT_202 ? 65536 : CONN_MAX_TRANS;
	c->capabilities = 0;
	/* Leases live in the shared state (worker/state.c, smb2_oplock.c). */
	if (dialect >= DIALECT_210)
		c->capabilities |= SMB2_GLOBAL_CAP_LARGE_MTU;
	/* DFS (worker/dfs.h): Samba offers it whenever host msdfs is on */
	if (c->conf->host_msdfs)
		c->capabilities |= SMB2_GLOBAL_CAP_DFS;
	/* smb2 leases = no (or oplocks = no in [global]): RqLs is ignored */
	if (dialect >= DIALECT_210 && c->conf->leasing)
		c->capabilities |= SMB2_GLOBAL_CAP_LEASING;
	/*
	 * Channels of a session meet in the worker that holds it; with
	 * several workers per user a second connection may land elsewhere
	 * (HACKING.md, Channel binding).
	 */
	/*
	 * Directory leases (worker/dirlease.h), to a client that says it
	 * knows them, as Samba 4.22 does: impacket 0.10, which does not,
	 * fails on every top-level CREATE once told.
	 */
	if (dialect >= DIALECT_300 && c->conf->smb3_directory_leases &&
	    c->conf->leasing &&
	    (c->client_capabilities & SMB2_GLOBAL_CAP_DIRECTORY_LEASING))
		c->capabilities |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
	if (dialect >= DIALECT_300 && c->conf->max_workers_per_user <= 1)
		c->capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	if ((dialect == DIALECT_300 || dialect == DIALECT_302) &&
	    (c->client_capabilities & SMB2_GLOBAL_CAP_ENCRYPTION) &&
	    c->conf->smb_encrypt != ENCRYPT_OFF) {
		c->capabilities |= SMB2_GLOBAL_CAP_ENCRYPTION;
		c->cipher = SMB2_ENCRYPTION_AES128_CCM;
	}
	c->signing_algo = dialect >= DIALECT_300 ? SMB2_SIGNING_AES_CMAC :
	    SMB2_SIGNING_HMAC_SHA256;
}

ntstatus_t
smb2_negotiate(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct neg_req nr;
	struct neg_ctx nc;
	uint16_t dialect = 0, i, nctx = 0, ncomp = 0, comp[NEG_MAX_ALGS];
	uint8_t *ctx_off_field, salt[32];
	ntstatus_t st;

	st = neg_req_decode(req->hdr, req->len, &nr);
	if (st != STATUS_SUCCESS)
		return st;
	c->client_capabilities = nr.capabilities;
	c->client_security_mode = nr.security_mode;
	memcpy(c->client_guid, nr.client_guid, 16);
	c->client_ndialects = nr.dialect_count;
	memcpy(c->client_dialects, nr.dialects, nr.dialect_count * sizeof(uint16_t));
	for (i = 0; i < sizeof(neg_dialects) / sizeof(neg_dialects[0]) &&
	    dialect == 0; i++) {
		uint16_t j;

		if (!neg_in_range(c->conf, neg_dialects[i]))
			continue;
		for (j = 0; j < nr.dialect_count; j++)
			if (nr.dialects[j] == neg_dialects[i])
				dialect = neg_dialects[i];
	}
	if (dialect == 0) {
		conn_warnx(c, "no common dialect (server %04x..%04x), refused",
		    c->conf->min_protocol, c->conf->max_protocol);
		pv->dead = 1;
		return STATUS_NOT_SUPPORTED;
	}
	if (dialect == DIALECT_311) {
		st = neg_ctx_decode(req->hdr, req->len, nr.ctx_offset,
		    nr.ctx_count, &nc);
		if (st != STATUS_SUCCESS) {
			pv->dead = 1;
			return st;
		}
	}
	neg_limits(c, dialect);
	neg_security(c);
	if (dialect == DIALECT_311) {
		smb2_preauth_init(pv->preauth);
		smb2_preauth_update(pv->preauth, req->hdr, req->len);
		pv->preauth_rsp_conn = 1;
		if (nc.has_cipher && c->conf->smb_encrypt != ENCRYPT_OFF)
			c->cipher = neg_pick(neg_cipher_pref, 4, nc.ciphers,
			    nc.ncipher, 0);
		/* No common signing algorithm: AES-CMAC, the 3.x default. */
		if (nc.has_signing)
			c->signing_algo = neg_pick(neg_sign_pref, 3, nc.sign_algs,
			    nc.nsign, SMB2_SIGNING_AES_CMAC);
		/* smb3posix.org: answered only when asked and allowed */
		c->posix = nc.has_posix && c->conf->smb3_unix_extensions;
		ncomp = neg_compress(c, &nc, comp);
		nctx = 1 + (nc.has_cipher ? 1 : 0) + (nc.has_signing ? 1 : 0) +
		    (c->posix ? 1 : 0) + (ncomp > 0 ? 1 : 0);
	}
	neg_write(c, &rsp->body, dialect, nctx, &ctx_off_field);
	if (rsp->body.err)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (dialect == DIALECT_311) {
		if (getrandom(salt, sizeof(salt), 0) != sizeof(salt))
			return STATUS_INSUFF_SERVER_RESOURCES;
		wcur_align(&rsp->body, 8);
		le32_put(ctx_off_field, (uint32_t)wcur_off(&rsp->body));
		neg_ctx_put_preauth(&rsp->body, salt, sizeof(salt));
		if (nc.has_cipher)
			neg_ctx_put_cipher(&rsp->body, c->cipher);
		if (nc.has_signing)
			neg_ctx_put_signing(&rsp->body, c->signing_algo);
		if (c->posix)
			neg_ctx_put_posix(&rsp->body);
		if (ncomp > 0)
			neg_ctx_put_compress(&rsp->body, c->compress_chained ?
			    SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED : 0, comp,
			    ncomp);
	}
	log_debug(3, "%s: negotiated dialect %04x cipher %u signing %u "
	    "compression %#x%s", c->peer, dialect, c->cipher, c->signing_algo,
	    c->compress_algs, c->compress_chained ? " chained" : "");
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_negotiate_smb1(struct conn *c, const uint8_t *msg, size_t len,
    struct smb2_rsp *rsp)
{
	int offers = smb1_negotiate_offers(msg, len);
	uint16_t dialect;
	uint8_t *ctx_off_field;

	if (offers <= 0) {
		log_warnx("%s: SMB1-only client refused (usmbd serves SMB2 and "
		    "SMB3 only)", c->peer);
		return STATUS_NOT_SUPPORTED;
	}
	/* MS-SMB2 3.3.5.3.1 */
	if ((offers & SMB1_OFFERS_SMB2_ANY) &&
	    c->conf->max_protocol > DIALECT_202) {
		dialect = SMB2_DIALECT_WILDCARD;
	} else if (neg_in_range(c->conf, DIALECT_202)) {
		dialect = DIALECT_202;
	} else {
		log_warnx("%s: client offers only SMB 2.002 below server min "
		    "protocol, refused", c->peer);
		return STATUS_NOT_SUPPORTED;
	}
	c->client_capabilities = 0;
	c->client_security_mode = 0;
	neg_limits(c, DIALECT_202);
	neg_security(c);
	c->dialect = dialect;
	if (dialect == SMB2_DIALECT_WILDCARD) {
		/* Nothing is negotiated yet: the client sends SMB2 NEGOTIATE. */
		c->capabilities = 0;
		c->priv->smb1_neg = 1;
	}
	neg_write(c, &rsp->body, dialect, 0, &ctx_off_field);
	return rsp->body.err ? STATUS_INSUFF_SERVER_RESOURCES : STATUS_SUCCESS;
}
