/*
 * SMB2 READ, WRITE and FLUSH (MS-SMB2 2.2.19-2.2.22, 2.2.17/2.2.18; server
 * rules 3.3.5.11-3.3.5.13).  Data is read into the response buffer, or left
 * for the connection to sendfile when the reply needs neither signing nor
 * encryption; writes go to the offset given, exactly as sent (a large
 * unsigned payload spliced from the socket: conn_req_payload_write).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "worker/smb2_notify.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/file_wt.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/state.h"

#define SMB2_READFLAG_READ_UNBUFFERED	0x01
#define SMB2_READFLAG_REQUEST_COMPRESSED	0x02	/* 2.2.19, 3.1.1 */
#define SMB2_WRITEFLAG_WRITE_THROUGH	0x00000001u
#define FILE_WRITE_THROUGH		0x00000002u
#define RW_MAX				(8u * 1024 * 1024)
#define RW_STREAM_MAX			65536	/* XATTR_SIZE_MAX */
#define RW_MAX_FILE_SIZE		0xFFFFFFF0000ull	/* MS-FSA: 16 TiB - 64 KiB */

/*
 * The zero-copy path (rsp->data_fd, sent by the core with sendfile).  It
 * was off while the core closed the open's fd after sending (fixed in
 * worker/conn.c: only the core's own dup is closed).
 */
static const int rw_use_sendfile = 1;
/*
 * Below this a read is copied: pread + one send is 2 syscalls where
 * sendfile needs an fstat (the length goes in the header first), the
 * header's send and the sendfile, and a small copy costs less than those.
 */
#define RW_SENDFILE_MIN			(16u * 1024)

/* One buffer for stream (xattr) I/O: the worker is single-threaded. */
static uint8_t rw_stream_buf[RW_STREAM_MAX];

static int
rw_can_sendfile(const struct smb2_req *req)
{
	if (req->encrypted || (req->flags & SMB2_FLAGS_SIGNED) ||
	    (req->flags & SMB2_FLAGS_RELATED_OPERATIONS) ||
	    req->next_command != 0)
		return 0;
	if (req->sess != NULL && (req->sess->signing_required ||
	    req->sess->encrypt))
		return 0;
	if (req->tree != NULL && req->tree->encrypt)
		return 0;
	return 1;
}

static ssize_t
rw_stream_load(struct file_open *f, char *xname, size_t xlen)
{
	int rc;
	ssize_t n;

	if ((rc = vfs_stream_xattr_name(f->stream, xname, xlen)) != 0)
		return rc;
	/* netatalk's blob converted to the record (fruit.h) */
	if (fruit_meta_netatalk(f)) {
		n = fruit_afpinfo_read(f, rw_stream_buf);
		return n == -ENODATA ? 0 : n;
	}
	n = file_vfs()->getxattr(f->fd, xname, rw_stream_buf,
	    sizeof(rw_stream_buf));
	/* an AfpInfo not yet written is nothing on disk (fruit.h) */
	if (n == -ENODATA && fruit_is_afpinfo(f))
		n = 0;
	return n;
}

ntstatus_t
smb2_read_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	const struct vfs_ops *vfs = file_vfs();
	struct cur *c = &req->body;
	struct file_open *f;
	struct open *op;
	struct vfs_stat st;
	char xname[300];
	uint32_t len, minimum, avail;
	uint64_t off;
	uint8_t *hdr, *data, rflags;
	ssize_t n;
	int rc;
	ntstatus_t status;

	if (cur_le16(c) != 49)
		return STATUS_INVALID_PARAMETER;
	cur_skip(c, 1);			/* Padding */
	rflags = cur_u8(c);
	len = cur_le32(c);
	off = cur_le64(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	minimum = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	f = op->u.file;
	if (f->is_dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (!(op->access & (FILE_READ_DATA | FILE_EXECUTE)) || !f->readable)
		return STATUS_ACCESS_DENIED;
	if (len > RW_MAX || (req->conn->max_read_size != 0 &&
	    len > req->conn->max_read_size))
		return STATUS_INVALID_PARAMETER;
	/* MS-FSA 2.1.5.2: offsets are signed 64-bit; the end must fit too */
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return STATUS_INVALID_PARAMETER;
	/* Other opens' byte-range locks, in every worker (worker/state.h). */
	if (len > 0 && (status = state_io_check(op, off, len, 0)) !=
	    STATUS_SUCCESS)
		return status;

	/* MS-SMB2 2.2.20: the data follows a 16-byte body at offset 0x50 */
	hdr = wcur_reserve(&rsp->body, 16);
	if (hdr == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	if (f->stream[0] != '\0' && fruit_rsrc_file(f)) {
		/* a resource fork in a "._" file: read in place (fruit.h) */
		if (len > wcur_left(&rsp->body))
			return STATUS_INVALID_PARAMETER;
		n = fruit_rsrc_pread(f, rsp->body.p, len, off);
		if (n == -ENODATA)
			n = 0;
		if (n < 0)
			return ntstatus_from_errno((int)n);
		if (n == 0 && len > 0)
			goto eof;
		rsp->body.p += n;
	} else if (f->stream[0] != '\0') {
		if ((n = rw_stream_load(f, xname, sizeof(xname))) < 0)
			return ntstatus_from_errno((int)n);
		/*
		 * AFP_AfpInfo opened but never written reads as a new
		 * record; a Mac reads it from 0 whatever the offset
		 * (Samba's fruit_pread_meta, bug for bug).
		 */
		if (fruit_is_afpinfo(f)) {
			if (off > AFPINFO_SIZE)
				goto eof;
			if (n < AFPINFO_SIZE) {
				fruit_afpinfo_default(rw_stream_buf);
				n = AFPINFO_SIZE;
			}
			off = 0;
		}
		if (off >= (uint64_t)n)
			goto eof;
		avail = (uint32_t)((uint64_t)n - off);
		n = avail < len ? avail : len;
		wcur_bytes(&rsp->body, rw_stream_buf + off, (size_t)n);
	} else if (len >= RW_SENDFILE_MIN && rw_use_sendfile &&
	    rw_can_sendfile(req)) {
		if ((rc = vfs->fstat(f->fd, &st)) != 0)
			return ntstatus_from_errno(rc);
		if (off >= st.size)
			goto eof;
		n = st.size - off < len ? (ssize_t)(st.size - off) : len;
		rsp->data_fd = f->fd;
		rsp->data_off = (off_t)off;
		rsp->data_len = (size_t)n;
	} else {
		if (len > wcur_left(&rsp->body))
			return STATUS_INVALID_PARAMETER;
		data = rsp->body.p;
		n = vfs->pread(f->fd, data, len, off);
		if (n < 0)
			return ntstatus_from_errno((int)n);
		if (n == 0 && len > 0)
			goto eof;
		rsp->body.p += n;
	}
	if ((uint32_t)n < minimum) {
		rsp->data_fd = -1;
		rsp->data_len = 0;
		goto eof;
	}
	f->position = off + (uint64_t)n;
	/*
	 * MS-SMB2 3.3.5.12: compressed when the client asks or the share
	 * says so, on a connection that negotiated it (worker/compress.h:
	 * dispatch_out.c compresses when that saves bytes).
	 */
	if ((req->chan != NULL ? req->chan : req->conn)->compress_algs != 0 &&
	    ((rflags & SMB2_READFLAG_REQUEST_COMPRESSED) ||
	    (req->tree != NULL && req->tree->share != NULL &&
	    req->tree->share->compress_data)))
		rsp->compress = 1;
	le16_put(hdr, 17);
	hdr[2] = 0x50;			/* DataOffset */
	hdr[3] = 0;
	le32_put(hdr + 4, (uint32_t)n);
	le32_put(hdr + 8, 0);		/* DataRemaining */
	le32_put(hdr + 12, 0);
	return STATUS_SUCCESS;
eof:
	rsp->body.p = hdr;		/* dispatch writes the error body */
	return STATUS_END_OF_FILE;
}

static ntstatus_t
rw_stream_write(struct file_open *f, const uint8_t *data, uint32_t len,
    uint64_t off)
{
	char xname[300];
	ssize_t n;
	size_t end;
	int rc;

	/* AFP_AfpInfo is a 60-byte record with a Mac's rules (fruit.h) */
	if (fruit_is_afpinfo(f)) {
		n = fruit_afpinfo_write(f, data, len, off);
		if (n == -EINVAL)
			return STATUS_INVALID_PARAMETER;
		return n < 0 ? ntstatus_from_errno((int)n) : STATUS_SUCCESS;
	}
	if (fruit_rsrc_file(f)) {
		/* a "._" file grows with its fork: no xattr limit (fruit.h) */
		n = fruit_rsrc_pwrite(f, data, len, off);
		if (n == -EFBIG)
			return STATUS_DISK_FULL;
		return n < 0 ? ntstatus_from_errno((int)n) : STATUS_SUCCESS;
	}
	if ((n = rw_stream_load(f, xname, sizeof(xname))) < 0)
		return ntstatus_from_errno((int)n);
	if (off > RW_STREAM_MAX || len > RW_STREAM_MAX - off)
		return STATUS_DISK_FULL;	/* past what an xattr holds */
	if (off > (uint64_t)n)
		memset(rw_stream_buf + n, 0, (size_t)(off - (uint64_t)n));
	memcpy(rw_stream_buf + off, data, len);
	end = (size_t)(off + len) > (size_t)n ? (size_t)(off + len) : (size_t)n;
	rc = file_vfs()->setxattr(f->fd, xname, rw_stream_buf, end, 0);
	if (rc == -E2BIG || rc == -ENOSPC || rc == -ERANGE)
		return STATUS_DISK_FULL;
	return ntstatus_from_errno(rc);
}

ntstatus_t
smb2_write_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	const struct vfs_ops *vfs = file_vfs();
	struct cur *c = &req->body, dc;
	struct file_open *f;
	struct open *op;
	struct vfs_stat st;
	const uint8_t *data;
	uint16_t data_off;
	uint32_t len, flags;
	uint64_t off;
	ssize_t n;
	int rc;
	ntstatus_t status;

	if (cur_le16(c) != 49)
		return STATUS_INVALID_PARAMETER;
	data_off = cur_le16(c);
	len = cur_le32(c);
	off = cur_le64(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	cur_skip(c, 4 + 4 + 2 + 2);	/* Channel, Remaining, WriteChannelInfo */
	flags = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	if (len > RW_MAX)
		return STATUS_INVALID_PARAMETER;
	/* The data follows the 48-byte fixed part; it may not overlap it. */
	if (len > 0 && data_off < SMB2_HDR_LEN + 48)
		return STATUS_INVALID_PARAMETER;
	dc = cur_sub(c, data_off, len);
	data = cur_view(&dc, len);
	if (data == NULL && len > 0)
		return STATUS_INVALID_PARAMETER;
	f = op->u.file;
	if (f->is_dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	/* a previous version (worker/snapshot.h) */
	if (op->access_withheld & (FILE_WRITE_DATA | FILE_APPEND_DATA))
		return STATUS_MEDIA_WRITE_PROTECTED;
	if (!(op->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)) ||
	    !f->writable)
		return STATUS_ACCESS_DENIED;
	if (off == UINT64_MAX && !(op->access & FILE_WRITE_DATA)) {
		/*
		 * MS-FSA 2.1.5.3: 0xFFFFFFFFFFFFFFFF means end of file for an
		 * open with append access only; with write access it is just
		 * an offset past the limit.
		 */
		if (f->stream[0] != '\0') {
			char xname[300];

			n = fruit_rsrc_file(f) ? fruit_rsrc_size(f) :
			    rw_stream_load(f, xname, sizeof(xname));
			if (n == -ENODATA)
				n = 0;
			if (n < 0)
				return ntstatus_from_errno((int)n);
			off = (uint64_t)n;
		} else {
			if ((rc = vfs->fstat(f->fd, &st)) != 0)
				return ntstatus_from_errno(rc);
			off = st.size;
		}
	} else if (off > (uint64_t)INT64_MAX ||
	    len > (uint64_t)INT64_MAX - off)
		return STATUS_INVALID_PARAMETER;
	/* MS-FSA 2.1.5.3: nothing is written past the largest file size */
	if (len > 0 && off + len > RW_MAX_FILE_SIZE)
		return STATUS_INVALID_PARAMETER;
	/* Byte-range locks; also breaks others' read caching (state.h). */
	if ((status = state_io_check(op, off, len, 1)) != STATUS_SUCCESS)
		return status;
	/* the first write defers the write time; later ones: no I/O */
	if (len > 0) {
		file_wt_write(op);
		f->modified = 1;
	}

	if (f->stream[0] != '\0') {
		/* An xattr is written whole, from memory. */
		if (conn_req_payload_unread(req) > 0 &&
		    (rc = conn_req_payload_load(req)) != 0)
			return ntstatus_from_errno(rc);
		if (len > 0 && (status = rw_stream_write(f, data, len, off)) !=
		    STATUS_SUCCESS)
			return status;
		/* MS-FSA 2.1.5.3: a named stream's write; inotify: IN_ATTRIB */
		if (len > 0)
			smb2_notify_file_change(op->tree->root_fd, f,
			    FILE_ACTION_MODIFIED_STREAM,
			    FILE_NOTIFY_CHANGE_STREAM_WRITE |
			    FILE_NOTIFY_CHANGE_STREAM_SIZE, 1);
		n = len;
	} else if (conn_req_payload_unread(req) > 0) {
		/* Still on the socket: spliced into the file (conn.h). */
		n = conn_req_payload_write(req, data, f->fd, off, len);
		if (n < 0)
			return ntstatus_from_errno((int)n);
		if (((flags & SMB2_WRITEFLAG_WRITE_THROUGH) ||
		    (f->mode & FILE_WRITE_THROUGH)) &&
		    (rc = vfs->fsync(f->fd, 1)) != 0)
			return ntstatus_from_errno(rc);
	} else {
		n = len > 0 ? vfs->pwrite(f->fd, data, len, off) : 0;
		if (n < 0)
			return ntstatus_from_errno((int)n);
		if (((flags & SMB2_WRITEFLAG_WRITE_THROUGH) ||
		    (f->mode & FILE_WRITE_THROUGH)) &&
		    (rc = vfs->fsync(f->fd, 1)) != 0)
			return ntstatus_from_errno(rc);
	}
	if (n > 0)
		file_wt_written(op);	/* a write time set on this handle */
	f->position = off + (uint64_t)n;
	/* MS-SMB2 2.2.22 */
	wcur_le16(&rsp->body, 17);
	wcur_le16(&rsp->body, 0);
	wcur_le32(&rsp->body, (uint32_t)n);
	wcur_le32(&rsp->body, 0);
	wcur_le16(&rsp->body, 0);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_flush_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body;
	struct open *op;
	int rc;
	ntstatus_t status;

	if (cur_le16(c) != 24)
		return STATUS_INVALID_PARAMETER;
	cur_skip(c, 6);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	/* a previous version's handle has nothing to flush */
	if (!((op->access | op->access_withheld) &
	    (FILE_WRITE_DATA | FILE_APPEND_DATA)))
		return STATUS_ACCESS_DENIED;
	if (!op->u.file->is_dir && op->u.file->writable &&
	    (rc = file_vfs()->fsync(op->u.file->fd, 0)) != 0)
		return ntstatus_from_errno(rc);
	file_wt_flush(op);	/* a pending write time lands now */
	/* MS-SMB2 2.2.18 */
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}
