/* ECHO, LOGOFF and CANCEL (MS-SMB2 3.3.5.6, 3.3.5.16, 3.3.5.17). */
#include <string.h>

#include "daemon/log.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"

ntstatus_t
smb2_echo(struct smb2_req *req, struct smb2_rsp *rsp)
{
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_logoff(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *c = req->conn;

	/* Opens and trees go with the session once the reply is signed. */
	c->priv->free_after = req->sess;
	req->sess->logged_off = 1;
	if (req->sess->bound != NULL)
		req->sess->bound->logged_off = 1;	/* a channel's LOGOFF */
	log_debug(2, "%s: logoff of session %llx", c->peer,
	    (unsigned long long)req->sess->session_id);
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_cancel(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *c = req->conn;
	struct conn_private *pv = c->priv;
	struct conn_pending *p;

	pv->no_response = 1;	/* CANCEL itself is never answered */
	p = conn_pending_find(c, (req->flags & SMB2_FLAGS_ASYNC_COMMAND) ?
	    req->async_id : 0, req->message_id);
	if (p == NULL || p->session_id != req->session_id)
		return STATUS_SUCCESS;
	/*
	 * The slot's owner undoes its records (conn_pending_finish calls
	 * p->cancel); the STATUS_CANCELLED response goes out once this
	 * message's processing is done and the socket is idle.
	 */
	conn_pending_finish(c, p, STATUS_CANCELLED);
	return STATUS_SUCCESS;
}
