/*
 * The response frame: the SMB2 header of each response, the error body,
 * and the finished chain (NextCommand, padding, signatures, preauth,
 * encryption, frame) sent on the connection, bulk data by sendfile.
 */
#include "worker/worker.h"
#include "worker/dispatch.h"
#include "worker/dispatch_priv.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "proto/crypt.h"
#include "proto/preauth.h"
#include "proto/sign.h"
#include "proto/smb2_hdr.h"
#include "worker/compress.h"
#include "worker/conn_priv.h"
#include "worker/dirlease.h"
#include "worker/relay.h"

void
dispatch_error_body(struct wcur *w)
{
	/* MS-SMB2 2.2.2: StructureSize 9, no error contexts, one byte. */
	wcur_le16(w, 9);
	wcur_u8(w, 0);
	wcur_u8(w, 0);
	wcur_le32(w, 0);
	wcur_u8(w, 0);
}

/* Queues sbuf[0..len) (frame included) plus bulk data; sends what it can. */
static int
dispatch_send(struct conn *c, const uint8_t *buf, size_t len,
    const struct smb2_rsp *bulk)
{
	struct conn_private *pv = c->priv;
	int rc;

	pv->out_p = buf;
	pv->out_len = len;
	pv->out_flen = 0;
	if (bulk != NULL && bulk->data_fd >= 0 && bulk->data_len > 0) {
		pv->out_fd = bulk->data_fd;
		pv->out_fd_owned = 0;
		pv->out_foff = bulk->data_off;
		pv->out_flen = bulk->data_len;
	}
	rc = conn_flush(c);
	if (rc == -EAGAIN) {
		/* The handler's fd may close before we resume: keep a copy. */
		if (pv->out_flen > 0 && !pv->out_fd_owned) {
			pv->out_fd = dup(pv->out_fd);
			if (pv->out_fd < 0)
				return -1;
			pv->out_fd_owned = 1;
		}
		if (pv->role == CONN_ROLE_GATE)
			return -1;	/* the blocking socket timed out */
		return 0;
	}
	if (pv->out_flen == 0 && !pv->out_fd_owned)
		pv->out_fd = -1;
	return rc < 0 ? -1 : 0;
}

int
dispatch_send_built(struct conn *c, const uint8_t *rsp, size_t len)
{
	struct conn_private *pv = c->priv;

	if (SMB2_FRAME_LEN + len > pv->scap)
		return -1;
	memcpy(pv->sbuf + SMB2_FRAME_LEN, rsp, len);
	smb2_frame_encode(pv->sbuf, (uint32_t)len);
	return dispatch_send(c, pv->sbuf, SMB2_FRAME_LEN + len, NULL);
}

/*
 * A lone READ answer that may go compressed (struct smb2_rsp compress),
 * whole at base, signed: compressed into ebuf (behind a transform header
 * when sealed, then sealed there in place) and sent.  0 when sent, 1 when
 * compressing saves nothing (it goes as it is), -1 on an error.
 */
static int
dispatch_compress(struct conn *c, const uint8_t *base, size_t total,
    int encrypt, struct session *enc_sess)
{
	struct conn_private *pv = c->priv;
	size_t th = encrypt ? SMB2_TRANSFORM_HDR_LEN : 0, n;
	uint8_t *e = conn_ebuf(c, pv->scap + SMB2_TRANSFORM_HDR_LEN +
	    SMB2_CRYPT_SLACK);

	if (e == NULL)
		return -1;
	/* the header and the READ body (DataOffset 0x50) stay as they are */
	n = compress_tx(c, base, total, SMB2_HDR_LEN + 16,
	    e + SMB2_FRAME_LEN + th, total);
	if (n == 0)
		return 1;
	if (encrypt) {
		struct iovec iov = { e + SMB2_FRAME_LEN + th, n };

		if (smb2_encrypt_ctx(&enc_sess->enc_cx, enc_sess->cipher,
		    enc_sess->enc_key, enc_sess->session_id, &iov, 1,
		    e + SMB2_FRAME_LEN, e + SMB2_FRAME_LEN + th) < 0)
			return -1;
	}
	smb2_frame_encode(e, (uint32_t)(th + n));
	return dispatch_send(c, e, SMB2_FRAME_LEN + th + n, NULL) < 0 ? -1 : 0;
}

/*
 * Finishes a chain of responses at sbuf + 4: NextCommand, padding,
 * signatures, preauth, encryption, frame; then sends.
 */
int
dispatch_finish(struct conn *c, struct dispatch_out *outs, int nout,
    struct smb2_rsp *last, int encrypt, struct session *enc_sess)
{
	struct conn_private *pv = c->priv;
	/* The chain: in sbuf, or (sealed READ data) already in ebuf. */
	uint8_t *base = pv->sbuf + SMB2_FRAME_LEN, *e = NULL;
	size_t total = 0;
	int i, bulk = 0, zip;

	if (nout == 0)
		return 0;
	/* compressed: a lone READ's answer, its data read into sbuf */
	zip = last->compress && nout == 1 && !pv->relayed &&
	    c->compress_algs != 0;
	/*
	 * The inotify events of this worker's own changes are read before
	 * the response says they are done (worker/dirlease.h): a local
	 * change the client makes once it has the response is never taken
	 * for the worker's own.
	 */
	for (i = 0; i < nout; i++)
		if (dirlease_settles(le16_get(pv->sbuf + outs[i].off + 12))) {
			dirlease_settle();
			break;
		}
	/*
	 * Bulk data goes by sendfile only from a lone, plain response: the
	 * last response of a chain is padded too (below).
	 */
	if (last->data_fd >= 0 && last->data_len > 0) {
		struct dispatch_out *o = &outs[nout - 1];
		int plain = !encrypt && o->sign_sess == NULL && nout == 1;

		if (plain && !pv->relayed && !zip)
			bulk = 1;
		else {
			ssize_t n;

			if (o->off + o->len + last->data_len > pv->scap)
				return -1;
			if (encrypt && !pv->relayed && !zip) {
				/*
				 * Sealed: the headers go behind the transform
				 * header in ebuf and the data is read right
				 * after them, to be encrypted there in place:
				 * the kernel writes the data once and AES
				 * reads and writes it once, in one buffer.
				 */
				e = conn_ebuf(c, pv->scap + SMB2_TRANSFORM_HDR_LEN +
				    SMB2_CRYPT_SLACK);
				if (e == NULL)
					return -1;
				base = e + SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN;
				memcpy(base, pv->sbuf + SMB2_FRAME_LEN,
				    o->off + o->len - SMB2_FRAME_LEN);
			}
			n = pread(last->data_fd, base + o->off - SMB2_FRAME_LEN +
			    o->len, last->data_len, last->data_off);
			if (n < 0 || (size_t)n != last->data_len) {
				conn_warnx(c, "short read of bulk data");
				return -1;
			}
			o->len += last->data_len;
		}
	}
	for (i = 0; i < nout; i++) {
		uint8_t *h = base + outs[i].off - SMB2_FRAME_LEN;

		/*
		 * Every response of a chain is padded to 8 bytes, the last
		 * one too, as Windows and Samba do (smbtorture's
		 * compound-padding checks it); only a lone response is not.
		 */
		if (nout > 1) {
			size_t pad = ((outs[i].len + 7) & ~(size_t)7) - outs[i].len;

			if (outs[i].off + outs[i].len + pad > pv->scap)
				return -1;
			memset(h + outs[i].len, 0, pad);
			outs[i].len += pad;
			if (i + 1 < nout)
				le32_put(h + 20, (uint32_t)outs[i].len);
		}
		if (outs[i].sign_sess != NULL && !encrypt)
			smb2_sign_ctx(&outs[i].sign_sess->sign_cx,
			    conn_session_sign_algo(outs[i].sign_sess, c),
			    outs[i].sign_sess->signing_key,
			    h, outs[i].len);
		total += outs[i].len;
	}
	/* 3.1.1 preauth: the NEGOTIATE response and in-progress SESSION_SETUPs. */
	if (pv->preauth_rsp_conn) {
		smb2_preauth_update(pv->preauth, base, total);
		pv->preauth_rsp_conn = 0;
	}
	if (pv->preauth_rsp_sess != NULL) {
		smb2_preauth_update(pv->preauth_rsp_sess->preauth, base, total);
		pv->preauth_rsp_sess = NULL;
	}
	if (zip && (i = dispatch_compress(c, base, total, encrypt,
	    enc_sess)) <= 0)
		return i;
	if (encrypt) {
		struct iovec iov = { base, total };
		size_t k = 0;
		int n;

		/* One pass: from sbuf into ebuf behind the transform header,
		 * or in place where the data was read into ebuf (above). */
		if (e == NULL)
			e = conn_ebuf(c, total + SMB2_FRAME_LEN +
			    SMB2_TRANSFORM_HDR_LEN + SMB2_CRYPT_SLACK + RELAY_CTL_MAX);
		if (e == NULL)
			return -1;
		if (pv->relayed) {
			/* Before encryption: the ids and credits in clear. */
			k = relay_trailer(c, outs, nout, 1, pv->sbuf + SMB2_FRAME_LEN +
			    total, pv->scap - SMB2_FRAME_LEN - total);
			if (k == 0)
				return -1;
		}
		n = smb2_encrypt_ctx(&enc_sess->enc_cx, enc_sess->cipher,
		    enc_sess->enc_key,
		    enc_sess->session_id, &iov, 1, e + SMB2_FRAME_LEN,
		    e + SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN);
		if (n < 0)
			return -1;
		smb2_frame_encode(e, (uint32_t)(SMB2_TRANSFORM_HDR_LEN + total));
		if (k > 0)
			memcpy(e + SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN + total,
			    pv->sbuf + SMB2_FRAME_LEN + total, k);
		return dispatch_send(c, e, SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN +
		    total + k, NULL);
	}
	smb2_frame_encode(pv->sbuf, (uint32_t)(total + (bulk ? last->data_len : 0)));
	if (pv->relayed) {
		/* The owner's accounting, right after the frame (worker/relay.h). */
		size_t k = relay_trailer(c, outs, nout, 0, pv->sbuf + SMB2_FRAME_LEN +
		    total, pv->scap - SMB2_FRAME_LEN - total);

		if (k == 0)
			return -1;
		return dispatch_send(c, pv->sbuf, SMB2_FRAME_LEN + total + k, NULL);
	}
	return dispatch_send(c, pv->sbuf, SMB2_FRAME_LEN + total,
	    bulk ? last : NULL);
}

/* Writes the response header for req at rsp->hdr. */
void
dispatch_rsp_hdr(struct smb2_req *req, struct smb2_rsp *rsp, ntstatus_t st,
    uint64_t sid, uint32_t tid)
{
	struct smb2_hdr h;

	memset(&h, 0, sizeof(h));
	h.credit_charge = req->credit_charge;
	h.status = st;
	h.command = req->command;
	h.credits = rsp->credits_granted;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR |
	    (req->flags & (SMB2_FLAGS_RELATED_OPERATIONS | SMB2_FLAGS_PRIORITY_MASK));
	h.message_id = req->message_id;
	h.session_id = sid;
	h.tree_id = tid;
	h.process_id = le32_get(req->hdr + 32);
	if (rsp->async) {
		h.flags |= SMB2_FLAGS_ASYNC_COMMAND;
		h.async_id = rsp->async_id;
	}
	smb2_hdr_encode(rsp->hdr, &h);
}
