/*
 * CREATE contexts (worker/smb2_create_ctx.h): the request's chain decoded
 * through proto/create_ctx.c's bounds-checked walker, and response contexts
 * appended.
 */
#include "worker/smb2_create_ctx.h"

#include <string.h>

#include "proto/create_ctx.h"
#include "worker/durable.h"
#include "worker/smb2.h"

/* 45BCA66A-EFA7-F74A-9008-FA462E144D74, as it goes on the wire */
static const uint8_t create_ctx_app_instance_tag[16] = {
	0x45, 0xBC, 0xA6, 0x6A, 0xEF, 0xA7, 0xF7, 0x4A,
	0x90, 0x08, 0xFA, 0x46, 0x2E, 0x14, 0x4D, 0x74
};

ntstatus_t
smb2_create_parse_contexts(struct smb2_req *req, uint32_t off, uint32_t len,
    struct create_ctx *cc)
{
	struct create_ctx_item it;
	struct cur all;
	const uint8_t *chain, *name;
	size_t pos = 0;
	int guard;

	memset(cc, 0, sizeof(*cc));
	if (len == 0)
		return STATUS_SUCCESS;
	all = cur_sub(&req->body, off, len);
	chain = cur_view(&all, len);
	if (all.err || chain == NULL)
		return STATUS_INVALID_PARAMETER;
	/* MS-SMB2 2.2.13.2: a chain of 8-aligned create contexts */
	for (guard = 0; guard < CREATE_CTX_MAX; guard++) {
		if (create_ctx_next(chain, len, &pos, &it) != 0)
			return STATUS_INVALID_PARAMETER;
		if (smb2_posix_parse_ctx(req, &it, &cc->posix) != 0)
			return STATUS_INVALID_PARAMETER;
		/*
		 * SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2 2.2.13.2.13): a
		 * GUID name; StructureSize 20, Reserved, the id.
		 */
		if (it.name_len == 16 &&
		    memcmp(it.name, create_ctx_app_instance_tag, 16) == 0) {
			if (it.data == NULL || it.data_len < 20 ||
			    le16_get(it.data) != 20)
				return STATUS_INVALID_PARAMETER;
			memcpy(cc->app_instance_id, it.data + 4, 16);
			cc->app_instance = 1;
		}
		/* other longer names are not ours: ignored, as unknown */
		name = it.name_len == 4 ? it.name : (const uint8_t *)"    ";
		if (memcmp(name, "MxAc", 4) == 0)
			cc->mxac = 1;
		else if (memcmp(name, "QFid", 4) == 0)
			cc->qfid = 1;
		else if (memcmp(name, "AlSi", 4) == 0 && it.data_len == 8) {
			cc->alloc_size = le64_get(it.data);
			cc->alsi = 1;
		} else if (memcmp(name, "SecD", 4) == 0 && it.data_len > 0) {
			cc->secd = it.data;
			cc->secd_len = it.data_len;
		} else if (memcmp(name, "ExtA", 4) == 0 && it.data_len > 0) {
			cc->exta = it.data;
			cc->exta_len = it.data_len;
		} else if (memcmp(name, "RqLs", 4) == 0) {
			/* ignored whole where leasing is not (even empty) */
			if (state_parse_lease_ctx(req, it.data, it.data_len,
			    &cc->sreq) != STATUS_SUCCESS)
				return STATUS_INVALID_PARAMETER;
			cc->lease = cc->sreq.lease;
		}
		else if (memcmp(name, "DHnQ", 4) == 0 ||
		    memcmp(name, "DH2Q", 4) == 0 ||
		    memcmp(name, "DHnC", 4) == 0 ||
		    memcmp(name, "DH2C", 4) == 0) {
			/* worker/durable.h: the state layer's contexts */
			ntstatus_t ds;

			ds = durable_parse_ctx(req, name, it.data, it.data_len,
			    &cc->sreq);
			if (ds != STATUS_SUCCESS)
				return ds;
			cc->durable = 1;
		}
		/* AAPL: Apple's extensions, judged by the share (worker/fruit.h) */
		else if (memcmp(name, "AAPL", 4) == 0) {
			cc->aapl = it.data;
			cc->aapl_len = it.data_len;
			cc->aapl_seen = 1;
		}
		/* TWrp: the previous version of that time (MS-SMB2 2.2.13.2.7) */
		else if (memcmp(name, "TWrp", 4) == 0) {
			if (it.data_len != 8)
				return STATUS_INVALID_PARAMETER;
			cc->twrp_time = le64_get(it.data);
			cc->twrp = 1;
		}
		/* unknown names: ignored (MS-SMB2 3.3.5.9) */
		if (it.last)
			break;
	}
	return STATUS_SUCCESS;
}

void
smb2_create_put_ctx(struct wcur *w, uint8_t **prev, const char *name,
    const void *data, uint32_t dlen)
{
	uint8_t *start;

	wcur_align(w, 8);
	start = w->p;
	if (*prev != NULL && !w->err)
		le32_put(*prev, (uint32_t)(start - *prev));
	wcur_le32(w, 0);
	wcur_le16(w, 16);
	wcur_le16(w, 4);
	wcur_le16(w, 0);
	wcur_le16(w, 24);
	wcur_le32(w, dlen);
	wcur_bytes(w, name, 4);
	wcur_zero(w, 4);
	wcur_bytes(w, data, dlen);
	*prev = start;
}
