/* DCE/RPC connection-oriented PDU codecs (see proto/dcerpc.h). */
#include "proto/dcerpc.h"

#include <string.h>

const struct dcerpc_syntax dcerpc_syntax_ndr20 = {
	{ 0x8a885d04, 0x1ceb, 0x11c9,
	  { 0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60 } }, 2, 0
};

const struct dcerpc_syntax dcerpc_syntax_ndr64 = {
	{ 0x71710533, 0xbeba, 0x4937,
	  { 0x83, 0x19, 0xb5, 0xdb, 0xef, 0x9c, 0xcc, 0x36 } }, 1, 0
};

/* MS-RPCE 3.3.1.5.3: 6cb71c2c-9812-4540-XXXX-XXXXXXXXXXXX, bits in rest[]. */
static const struct dcerpc_uuid dcerpc_btfn_prefix = {
	0x6cb71c2c, 0x9812, 0x4540, { 0 }
};

int
dcerpc_uuid_eq(const struct dcerpc_uuid *a, const struct dcerpc_uuid *b)
{
	return a->time_low == b->time_low && a->time_mid == b->time_mid &&
	    a->time_hi == b->time_hi && memcmp(a->rest, b->rest, 8) == 0;
}

int
dcerpc_syntax_match(const struct dcerpc_syntax *offered,
    const struct dcerpc_syntax *ours)
{
	return dcerpc_uuid_eq(&offered->uuid, &ours->uuid) &&
	    offered->ver_major == ours->ver_major &&
	    offered->ver_minor <= ours->ver_minor;
}

int
dcerpc_syntax_is_btfn(const struct dcerpc_syntax *s, uint16_t *features)
{
	if (s->uuid.time_low != dcerpc_btfn_prefix.time_low ||
	    s->uuid.time_mid != dcerpc_btfn_prefix.time_mid ||
	    s->uuid.time_hi != dcerpc_btfn_prefix.time_hi)
		return 0;
	/* The low 64 bits carry the bitmask, little-endian. */
	*features = (uint16_t)(s->uuid.rest[0] | s->uuid.rest[1] << 8);
	return 1;
}

static void
dcerpc_syntax_get(struct cur *c, struct dcerpc_syntax *s)
{
	s->uuid.time_low = cur_le32(c);
	s->uuid.time_mid = cur_le16(c);
	s->uuid.time_hi = cur_le16(c);
	cur_bytes(c, s->uuid.rest, 8);
	s->ver_major = cur_le16(c);
	s->ver_minor = cur_le16(c);
}

static void
dcerpc_syntax_put(struct wcur *w, const struct dcerpc_syntax *s)
{
	wcur_le32(w, s->uuid.time_low);
	wcur_le16(w, s->uuid.time_mid);
	wcur_le16(w, s->uuid.time_hi);
	wcur_bytes(w, s->uuid.rest, 8);
	wcur_le16(w, s->ver_major);
	wcur_le16(w, s->ver_minor);
}

uint16_t
dcerpc_frag_length(const uint8_t *p, size_t len)
{
	if (len < DCERPC_HDR_LEN)
		return 0;
	if ((p[4] & 0xF0) == DCERPC_DREP_LE)
		return le16_get(p + 8);
	return (uint16_t)(p[8] << 8 | p[9]);	/* big-endian sender */
}

int
dcerpc_hdr_decode(const uint8_t *pdu, size_t len, struct dcerpc_hdr *h)
{
	struct cur c;

	memset(h, 0, sizeof(*h));
	cur_init(&c, pdu, len);
	h->rpc_vers = cur_u8(&c);
	h->rpc_vers_minor = cur_u8(&c);
	h->ptype = cur_u8(&c);
	h->pfc_flags = cur_u8(&c);
	cur_bytes(&c, h->drep, 4);
	if (c.err)
		return DCERPC_E_SHORT;
	h->frag_length = dcerpc_frag_length(pdu, len);
	if (h->drep[0] != DCERPC_DREP_LE) {
		/*
		 * The call id as a big-endian sender wrote it, so that the
		 * bind_nak or fault refusing it answers that call: with 0
		 * the client (smbtorture's rpc.lsa.secrets "bigendian")
		 * waited for an answer that never came.
		 */
		if ((h->drep[0] & 0xF0) != DCERPC_DREP_LE) {
			cur_skip(&c, 2);
			h->auth_length = cur_be16(&c);
			h->call_id = cur_be32(&c);
		}
		return DCERPC_E_DREP;
	}
	cur_skip(&c, 2);
	h->auth_length = cur_le16(&c);
	h->call_id = cur_le32(&c);
	if (c.err || h->frag_length < DCERPC_HDR_LEN || h->frag_length > len)
		return DCERPC_E_SHORT;
	if (h->rpc_vers != 5 || h->rpc_vers_minor > 1)
		return DCERPC_E_VERSION;
	if (h->auth_length > 0 && (size_t)h->auth_length +
	    DCERPC_AUTH_TRAILER_LEN > (size_t)h->frag_length - DCERPC_HDR_LEN)
		return DCERPC_E_SHORT;
	return DCERPC_OK;
}

/* Bytes of the PDU body before the auth trailer. */
static size_t
dcerpc_body_end(const struct dcerpc_hdr *h)
{
	size_t end = h->frag_length;

	if (h->auth_length > 0)
		end -= (size_t)h->auth_length + DCERPC_AUTH_TRAILER_LEN;
	return end;
}

int
dcerpc_bind_decode(const uint8_t *pdu, size_t len, const struct dcerpc_hdr *h,
    struct dcerpc_bind *b)
{
	struct cur c;
	unsigned i;

	memset(b, 0, sizeof(*b));
	if (h->frag_length > len)
		return DCERPC_E_SHORT;
	cur_init(&c, pdu, dcerpc_body_end(h));
	cur_skip(&c, DCERPC_HDR_LEN);
	b->max_xmit_frag = cur_le16(&c);
	b->max_recv_frag = cur_le16(&c);
	b->assoc_group_id = cur_le32(&c);
	b->n_ctx = cur_u8(&c);
	cur_skip(&c, 3);
	if (c.err)
		return DCERPC_E_SHORT;
	if (b->n_ctx > DCERPC_MAX_CTX)
		return DCERPC_E_LIMIT;
	for (i = 0; i < b->n_ctx; i++) {
		struct dcerpc_ctx *x = &b->ctx[i];

		x->id = cur_le16(&c);
		x->n_ts = cur_u8(&c);
		cur_skip(&c, 1);
		dcerpc_syntax_get(&c, &x->abstract);
		x->ts = cur_view(&c, (size_t)x->n_ts * 20);
		if (c.err)
			return DCERPC_E_SHORT;
	}
	return DCERPC_OK;
}

void
dcerpc_ctx_ts(const struct dcerpc_ctx *x, unsigned i, struct dcerpc_syntax *s)
{
	struct cur c;

	memset(s, 0, sizeof(*s));
	if (i >= x->n_ts)
		return;
	cur_init(&c, x->ts + (size_t)i * 20, 20);
	dcerpc_syntax_get(&c, s);
}

int
dcerpc_request_decode(const uint8_t *pdu, size_t len,
    const struct dcerpc_hdr *h, struct dcerpc_request *r)
{
	struct cur c;

	memset(r, 0, sizeof(*r));
	if (h->frag_length > len)
		return DCERPC_E_SHORT;
	cur_init(&c, pdu, dcerpc_body_end(h));
	cur_skip(&c, DCERPC_HDR_LEN);
	r->alloc_hint = cur_le32(&c);
	r->ctx_id = cur_le16(&c);
	r->opnum = cur_le16(&c);
	if (h->pfc_flags & DCERPC_PFC_OBJECT_UUID) {
		r->has_object = 1;
		r->object.time_low = cur_le32(&c);
		r->object.time_mid = cur_le16(&c);
		r->object.time_hi = cur_le16(&c);
		cur_bytes(&c, r->object.rest, 8);
	}
	if (c.err)
		return DCERPC_E_SHORT;
	r->stub = c.p;
	r->stub_len = cur_left(&c);
	return DCERPC_OK;
}

/* Writes a common header with frag_length 0; returns where it starts. */
static uint8_t *
dcerpc_hdr_put(struct wcur *w, uint8_t ptype, uint8_t flags, uint32_t call_id)
{
	uint8_t *start = w->p;

	wcur_u8(w, 5);
	wcur_u8(w, 0);
	wcur_u8(w, ptype);
	wcur_u8(w, flags);
	wcur_u8(w, DCERPC_DREP_LE);
	wcur_zero(w, 3);
	wcur_le16(w, 0);	/* frag_length, patched by dcerpc_hdr_finish */
	wcur_le16(w, 0);	/* auth_length */
	wcur_le32(w, call_id);
	return start;
}

static void
dcerpc_hdr_finish(struct wcur *w, uint8_t *start)
{
	if (w->err)
		return;
	le16_put(start + 8, (uint16_t)(w->p - start));
}

/* Pads to a multiple of 4 counted from the start of the PDU. */
static void
dcerpc_pad4(struct wcur *w, const uint8_t *start)
{
	size_t off = (size_t)(w->p - start);

	wcur_zero(w, ((off + 3) & ~(size_t)3) - off);
}

void
dcerpc_bind_ack_encode(struct wcur *w, uint8_t ptype, uint32_t call_id,
    uint16_t max_xmit_frag, uint16_t max_recv_frag, uint32_t assoc_group_id,
    const char *sec_addr, const struct dcerpc_result *res, unsigned n)
{
	uint8_t *start;
	size_t alen = sec_addr && *sec_addr ? strlen(sec_addr) + 1 : 0;
	unsigned i;

	start = dcerpc_hdr_put(w, ptype,
	    DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG, call_id);
	wcur_le16(w, max_xmit_frag);
	wcur_le16(w, max_recv_frag);
	wcur_le32(w, assoc_group_id);
	/* port_any_t: the length counts the NUL; an empty one is just 0. */
	wcur_le16(w, (uint16_t)alen);
	wcur_bytes(w, sec_addr, alen);
	dcerpc_pad4(w, start);
	wcur_u8(w, (uint8_t)n);
	wcur_zero(w, 3);
	for (i = 0; i < n; i++) {
		wcur_le16(w, res[i].result);
		wcur_le16(w, res[i].reason);
		dcerpc_syntax_put(w, &res[i].ts);
	}
	dcerpc_hdr_finish(w, start);
}

void
dcerpc_bind_nak_encode(struct wcur *w, uint32_t call_id, uint16_t reason)
{
	uint8_t *start;

	start = dcerpc_hdr_put(w, DCERPC_PKT_BIND_NAK,
	    DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG, call_id);
	wcur_le16(w, reason);
	/* p_rt_versions_supported: we speak 5.0 */
	wcur_u8(w, 1);
	wcur_u8(w, 5);
	wcur_u8(w, 0);
	dcerpc_pad4(w, start);
	dcerpc_hdr_finish(w, start);
}

void
dcerpc_response_hdr_encode(struct wcur *w, uint32_t call_id, uint8_t pfc_flags,
    uint16_t frag_length, uint32_t alloc_hint, uint16_t ctx_id)
{
	uint8_t *start;

	start = dcerpc_hdr_put(w, DCERPC_PKT_RESPONSE, pfc_flags, call_id);
	if (start != NULL && !w->err)
		le16_put(start + 8, frag_length);
	wcur_le32(w, alloc_hint);
	wcur_le16(w, ctx_id);
	wcur_u8(w, 0);		/* cancel_count */
	wcur_u8(w, 0);
}

void
dcerpc_fault_encode(struct wcur *w, uint32_t call_id, uint16_t ctx_id,
    uint8_t extra_flags, uint32_t status)
{
	uint8_t *start;

	start = dcerpc_hdr_put(w, DCERPC_PKT_FAULT,
	    DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG | extra_flags, call_id);
	wcur_le32(w, 0);	/* alloc_hint */
	wcur_le16(w, ctx_id);
	wcur_u8(w, 0);		/* cancel_count */
	wcur_u8(w, 0);
	wcur_le32(w, status);
	wcur_le32(w, 0);	/* reserved */
	dcerpc_hdr_finish(w, start);
}
