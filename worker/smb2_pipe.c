/*
 * SMB2 on IPC$: CREATE, CLOSE, READ, WRITE, FLUSH, IOCTL
 * (FSCTL_PIPE_TRANSCEIVE) and QUERY_INFO on named pipes (MS-SMB2 3.3.5.9,
 * 3.3.5.10, 3.3.5.12, 3.3.5.13, 3.3.5.11, 3.3.5.15.1, 3.3.5.20).  The pipe
 * itself (worker/pipe.c) answers each complete request at once, so every
 * command completes synchronously.
 */
#include "worker/smb2_pipe.h"

#include <errno.h>
#include <string.h>

#include "daemon/log.h"
#include "worker/conn.h"
#include "worker/open.h"
#include "worker/pipe.h"
#include "worker/state.h"

/* MS-SMB2 2.2.14 / MS-FSCC 2.6 */
#define FILE_OPENED			0x00000001u
#define FILE_ATTRIBUTE_NORMAL		0x00000080u
#define SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB 0x0001
#define SMB2_0_INFO_FILE		0x01
#define FILE_STANDARD_INFORMATION	5
#define FSCTL_PIPE_TRANSCEIVE		0x0011C017u
/* What Windows reports as a pipe's allocation size. */
#define PIPE_ALLOCATION_SIZE		4096

#define PIPE_NAME_MAX			256

#define CREATE_RSP_LEN		88
#define READ_RSP_LEN		16
#define IOCTL_RSP_LEN		48

/*
 * The pipe open for a request's FileId (or the previous one of a related
 * compound), which must belong to this session and tree.
 */
static ntstatus_t
smb2_pipe_lookup(struct smb2_req *req, struct cur *c, struct open **out)
{
	uint64_t p, v;
	struct open *o;
	ntstatus_t status;

	if ((status = open_fid_decode(req, c, &p, &v)) != STATUS_SUCCESS)
		return status;
	o = open_find(req->conn, p, v);
	if (o == NULL || o->kind != OPEN_PIPE || o->u.pipe == NULL ||
	    o->tree != req->tree || o->sess != req->sess)
		return STATUS_FILE_CLOSED;
	*out = o;
	return STATUS_SUCCESS;
}

/* A pipe name from UTF-16LE; pipe names are ASCII, anything else misses. */
static int
smb2_pipe_name(struct cur *c, char *name, size_t size)
{
	size_t n = cur_left(c) / 2, i;
	uint16_t u;

	if (cur_left(c) % 2 != 0 || n >= size)
		return -1;
	for (i = 0; i < n; i++) {
		u = cur_le16(c);
		if (u == 0 || u >= 0x80)
			return -1;
		name[i] = (char)u;
	}
	name[n] = '\0';
	return c->err ? -1 : 0;
}

ntstatus_t
smb2_pipe_create(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body, nc;
	char name[PIPE_NAME_MAX];
	struct rpc_pipe *p;
	struct open *o;
	uint32_t access;
	uint16_t name_off, name_len;

	cur_skip(&b, 2 + 1 + 1 + 4 + 8 + 8);
	access = cur_le32(&b);
	cur_skip(&b, 4 + 4 + 4 + 4);	/* attributes, share, disposition, options */
	name_off = cur_le16(&b);
	name_len = cur_le16(&b);
	cur_skip(&b, 4 + 4);		/* create contexts: none apply to pipes */
	if (b.err)
		return STATUS_INVALID_PARAMETER;
	nc = cur_sub(&b, name_len ? name_off : SMB2_HDR_LEN, name_len);
	if (b.err || name_len % 2 != 0)
		return STATUS_INVALID_PARAMETER;
	if (name_len == 0 || smb2_pipe_name(&nc, name, sizeof(name)) < 0)
		return STATUS_OBJECT_NAME_NOT_FOUND;

	p = pipe_open(name, req->conn->conf, req->sess ? req->sess->user : "");
	if (p == NULL) {
		if (errno == ENOENT) {
			log_debug(3, "IPC$: no pipe \"%s\"", name);
			return STATUS_OBJECT_NAME_NOT_FOUND;
		}
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	pipe_set_guest(p, req->sess != NULL && req->sess->guest);
	pipe_set_state(p, state_shm());
	o = open_alloc(req->conn, req->sess, req->tree, OPEN_PIPE);
	if (o == NULL) {
		pipe_close(p);
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	o->u.pipe = p;
	o->access = access;

	wcur_le16(&rsp->body, 89);		/* StructureSize */
	wcur_u8(&rsp->body, 0);			/* OplockLevel */
	wcur_u8(&rsp->body, 0);			/* Flags */
	wcur_le32(&rsp->body, FILE_OPENED);
	wcur_zero(&rsp->body, 4 * 8);		/* times: none for a pipe */
	wcur_le64(&rsp->body, PIPE_ALLOCATION_SIZE);
	wcur_le64(&rsp->body, 0);		/* EndofFile */
	wcur_le32(&rsp->body, FILE_ATTRIBUTE_NORMAL);
	wcur_le32(&rsp->body, 0);		/* Reserved2 */
	wcur_le64(&rsp->body, o->fid_persistent);
	wcur_le64(&rsp->body, o->fid_volatile);
	wcur_le32(&rsp->body, 0);		/* CreateContextsOffset */
	wcur_le32(&rsp->body, 0);		/* CreateContextsLength */
	rsp->set_fid = 1;
	rsp->fid_persistent = o->fid_persistent;
	rsp->fid_volatile = o->fid_volatile;
	log_debug(5, "IPC$: opened pipe %s", pipe_iface(p)->name);
	return STATUS_SUCCESS;
}

void
smb2_pipe_close_open(struct open *o)
{
	pipe_close(o->u.pipe);
	o->u.pipe = NULL;
}

ntstatus_t
smb2_pipe_close(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body;
	struct open *o;
	uint16_t flags;
	ntstatus_t st;

	cur_skip(&b, 2);
	flags = cur_le16(&b);
	cur_skip(&b, 4);
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	smb2_pipe_close_open(o);
	open_release(o);

	flags &= SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB;
	wcur_le16(&rsp->body, 60);
	wcur_le16(&rsp->body, flags);
	wcur_le32(&rsp->body, 0);
	wcur_zero(&rsp->body, 4 * 8);
	wcur_le64(&rsp->body, flags ? PIPE_ALLOCATION_SIZE : 0);
	wcur_le64(&rsp->body, 0);
	wcur_le32(&rsp->body, flags ? FILE_ATTRIBUTE_NORMAL : 0);
	return STATUS_SUCCESS;
}

/*
 * Writes the READ response header and up to max bytes of the head message.
 * A message larger than the read is STATUS_BUFFER_OVERFLOW with the rest
 * left for the next read, as a message-mode pipe does.
 */
static ntstatus_t
smb2_pipe_read_out(struct rpc_pipe *p, struct wcur *w, uint32_t max)
{
	uint8_t *h = wcur_reserve(w, READ_RSP_LEN);
	size_t n;
	int more;

	if (h == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (max > wcur_left(w))
		max = (uint32_t)wcur_left(w);
	n = pipe_read(p, w->p, max, &more);
	(void)wcur_reserve(w, n);
	le16_put(h, 17);
	h[2] = SMB2_HDR_LEN + READ_RSP_LEN;	/* DataOffset */
	h[3] = 0;
	le32_put(h + 4, (uint32_t)n);
	le32_put(h + 8, 0);			/* DataRemaining */
	le32_put(h + 12, 0);
	return more ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS;
}

ntstatus_t
smb2_pipe_read(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body;
	struct open *o;
	uint32_t len;
	ntstatus_t st;

	cur_skip(&b, 2 + 1 + 1);
	len = cur_le32(&b);
	cur_skip(&b, 8);		/* Offset: meaningless on a pipe */
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	if (req->conn->max_read_size != 0 && len > req->conn->max_read_size)
		return STATUS_INVALID_PARAMETER;
	/*
	 * Every request is answered while it is written, so an empty pipe
	 * stays empty until the client writes again: a blocking read would
	 * wait forever.  Say so at once rather than park the read.
	 */
	if (pipe_avail(o->u.pipe) == 0)
		return STATUS_PIPE_EMPTY;
	return smb2_pipe_read_out(o->u.pipe, &rsp->body, len);
}

ntstatus_t
smb2_pipe_write(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body, data;
	struct open *o;
	uint16_t off;
	uint32_t len;
	ntstatus_t st;

	cur_skip(&b, 2);
	off = cur_le16(&b);
	len = cur_le32(&b);
	cur_skip(&b, 8);
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	data = cur_sub(&b, off, len);
	if (b.err)
		return STATUS_INVALID_PARAMETER;
	if (pipe_write(o->u.pipe, data.p, len) < 0)
		return STATUS_PIPE_DISCONNECTED;
	wcur_le16(&rsp->body, 17);
	wcur_le16(&rsp->body, 0);
	wcur_le32(&rsp->body, len);		/* Count */
	wcur_le32(&rsp->body, 0);		/* Remaining */
	wcur_le16(&rsp->body, 0);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_pipe_flush(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body;
	struct open *o;
	ntstatus_t st;

	cur_skip(&b, 2 + 2 + 4);
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	/* Nothing is buffered on the way in: whole PDUs run as they land. */
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_pipe_ioctl(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body, in;
	struct open *o;
	uint32_t ctl, in_off, in_len, max_out;
	uint8_t *h;
	size_t n;
	int more;
	ntstatus_t st;

	cur_skip(&b, 2 + 2);
	ctl = cur_le32(&b);
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	in_off = cur_le32(&b);
	in_len = cur_le32(&b);
	cur_skip(&b, 4 + 4 + 4);	/* MaxInputResponse, OutputOffset/Count */
	max_out = cur_le32(&b);
	in = cur_sub(&b, in_len ? in_off : SMB2_HDR_LEN, in_len);
	if (b.err)
		return STATUS_INVALID_PARAMETER;
	if (ctl != FSCTL_PIPE_TRANSCEIVE)
		return STATUS_NOT_SUPPORTED;
	/* MS-FSCC 2.3.49: a transceive needs an empty read side. */
	if (pipe_avail(o->u.pipe) > 0)
		return STATUS_PIPE_BUSY;
	if (pipe_write(o->u.pipe, in.p, in_len) < 0)
		return STATUS_PIPE_DISCONNECTED;

	h = wcur_reserve(&rsp->body, IOCTL_RSP_LEN);
	if (h == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (max_out > wcur_left(&rsp->body))
		max_out = (uint32_t)wcur_left(&rsp->body);
	n = pipe_read(o->u.pipe, rsp->body.p, max_out, &more);
	(void)wcur_reserve(&rsp->body, n);
	le16_put(h, 49);
	le16_put(h + 2, 0);
	le32_put(h + 4, ctl);
	le64_put(h + 8, o->fid_persistent);
	le64_put(h + 16, o->fid_volatile);
	le32_put(h + 24, SMB2_HDR_LEN + IOCTL_RSP_LEN);	/* InputOffset */
	le32_put(h + 28, 0);				/* InputCount */
	le32_put(h + 32, SMB2_HDR_LEN + IOCTL_RSP_LEN);	/* OutputOffset */
	le32_put(h + 36, (uint32_t)n);
	le32_put(h + 40, 0);				/* Flags */
	le32_put(h + 44, 0);
	/* The rest of a long message waits for READ (MS-SMB2 3.3.5.15.1). */
	return more ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS;
}

ntstatus_t
smb2_pipe_query_info(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body;
	struct open *o;
	uint8_t type, cls;
	uint32_t out_len;
	ntstatus_t st;

	cur_skip(&b, 2);
	type = cur_u8(&b);
	cls = cur_u8(&b);
	out_len = cur_le32(&b);
	cur_skip(&b, 2 + 2 + 4 + 4 + 4);
	if ((st = smb2_pipe_lookup(req, &b, &o)) != STATUS_SUCCESS)
		return st;
	if (type != SMB2_0_INFO_FILE || cls != FILE_STANDARD_INFORMATION)
		return STATUS_NOT_SUPPORTED;
	if (out_len < 24)
		return STATUS_INFO_LENGTH_MISMATCH;
	wcur_le16(&rsp->body, 9);
	wcur_le16(&rsp->body, SMB2_HDR_LEN + 8);
	wcur_le32(&rsp->body, 24);
	/* MS-FSCC 2.4.41, with the values a Windows pipe reports. */
	wcur_le64(&rsp->body, PIPE_ALLOCATION_SIZE);
	wcur_le64(&rsp->body, pipe_avail(o->u.pipe));	/* EndOfFile */
	wcur_le32(&rsp->body, 1);			/* NumberOfLinks */
	wcur_u8(&rsp->body, 1);				/* DeletePending */
	wcur_u8(&rsp->body, 0);				/* Directory */
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}
