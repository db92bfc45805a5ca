#include "worker/bindcheck.h"

#include <errno.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"

int
bindcheck_req_encode(const struct bindcheck_req *q, uint8_t *buf, size_t cap)
{
	struct wcur w;

	if (q->msg_len < SMB2_HDR_LEN || q->msg_len > BINDCHECK_REQ_MAX)
		return -EINVAL;
	wcur_init(&w, buf, cap);
	wcur_le64(&w, q->sid);
	wcur_le16(&w, q->dialect);
	wcur_le16(&w, q->signing_algo);
	wcur_le16(&w, q->cipher);
	wcur_le16(&w, q->credits);
	wcur_blob32(&w, q->msg, q->msg_len);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
bindcheck_req_decode(struct bindcheck_req *q, const uint8_t *p, size_t len)
{
	struct cur r;

	cur_init(&r, p, len);
	q->sid = cur_le64(&r);
	q->dialect = cur_le16(&r);
	q->signing_algo = cur_le16(&r);
	q->cipher = cur_le16(&r);
	q->credits = cur_le16(&r);
	q->msg = cur_blob32(&r, &q->msg_len);
	if (r.err || cur_left(&r) != 0 || q->msg_len < SMB2_HDR_LEN ||
	    q->msg_len > BINDCHECK_REQ_MAX || q->sid == 0)
		return -EBADMSG;
	return 0;
}

int
bindcheck_rep_encode(const struct bindcheck_rep *rep, uint8_t *buf, size_t cap)
{
	struct wcur w;

	if (rep->rsp_len != 0 && rep->rsp_len != BINDCHECK_RSP_LEN)
		return -EINVAL;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, rep->status);
	wcur_blob32(&w, rep->rsp, rep->rsp_len);
	return w.err ? -EMSGSIZE : (int)wcur_off(&w);
}

int
bindcheck_rep_decode(struct bindcheck_rep *rep, const uint8_t *p, size_t len)
{
	struct cur r;

	cur_init(&r, p, len);
	rep->status = cur_le32(&r);
	rep->rsp = cur_blob32(&r, &rep->rsp_len);
	if (r.err || cur_left(&r) != 0 ||
	    (rep->rsp_len != 0 && rep->rsp_len != BINDCHECK_RSP_LEN))
		return -EBADMSG;
	if (rep->rsp_len == 0)
		rep->rsp = NULL;
	return 0;
}

int
bindcheck_rsp_check(const struct bindcheck_rep *rep,
    const struct bindcheck_req *q)
{
	struct smb2_hdr h, rq;

	if (rep->rsp == NULL || rep->rsp_len != BINDCHECK_RSP_LEN ||
	    smb2_hdr_decode(rep->rsp, rep->rsp_len, &h) != 0 ||
	    smb2_hdr_decode(q->msg, q->msg_len, &rq) != 0)
		return -EBADMSG;
	if (h.command != SMB2_SESSION_SETUP || h.status != rep->status ||
	    rep->status == 0 || h.message_id != rq.message_id ||
	    h.session_id != q->sid || h.credits != q->credits ||
	    h.next_command != 0 ||
	    (h.flags & (SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND)) !=
	    SMB2_FLAGS_SERVER_TO_REDIR)
		return -EBADMSG;
	/* MS-SMB2 2.2.2: StructureSize 9, no error contexts, ByteCount 0. */
	if (le16_get(rep->rsp + SMB2_HDR_LEN) != 9 ||
	    rep->rsp[SMB2_HDR_LEN + 2] != 0 ||
	    le32_get(rep->rsp + SMB2_HDR_LEN + 4) != 0)
		return -EBADMSG;
	return 0;
}
