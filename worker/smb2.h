/*
 * The contract between the connection/dispatch core (worker/conn.c,
 * worker/dispatch.c) and the command handlers (worker/smb2_*.c).
 *
 * A handler reads its request body with req->body (a cursor whose base is
 * the start of this request's SMB2 header, so offsets from the request such
 * as NameOffset or BufferOffset are cur_seek()/cur_sub() offsets) and writes
 * its response body with rsp->body (a write cursor whose base is the start
 * of the response's SMB2 header, positioned just after it).  It returns an
 * NTSTATUS.  If the status is an error and the handler wrote no body,
 * dispatch writes the standard 9-byte error body.  Handlers never allocate
 * on the request path and never block on the network.
 */
#ifndef USMBD_WORKER_SMB2_H
#define USMBD_WORKER_SMB2_H

#include <stdint.h>
#include <sys/types.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"

struct conn;
struct session;
struct tree;
struct open;

/* One decoded request of a (possibly compound) message. */
struct smb2_req {
	struct conn	*conn;		/* holds the session's trees and opens */
	/*
	 * The connection the request arrived on, where its response (and a
	 * parked request's final one) goes: conn, unless the session is
	 * bound to several channels and this is not its home (worker/conn.h).
	 */
	struct conn	*chan;
	struct session	*sess;		/* set by dispatch when the command needs one */
	struct tree	*tree;		/* set by dispatch when the command needs one */
	uint16_t	 command;
	uint16_t	 credit_charge;
	uint16_t	 credits_requested;
	uint32_t	 flags;
	uint32_t	 next_command;
	uint64_t	 message_id;
	uint64_t	 async_id;
	uint32_t	 tree_id;
	uint64_t	 session_id;
	uint32_t	 channel_sequence;	/* 3.x: ChannelSequence of the header */
	const uint8_t	*hdr;		/* this request's 64-byte header */
	size_t		 len;		/* header + body of this request */
	struct cur	 body;		/* base = hdr, positioned at SMB2_HDR_LEN */
	int		 encrypted;	/* arrived in a transform header */
	/* Related compound: the file id the previous command produced. */
	int		 related;
	uint64_t	 related_fid_persistent;
	uint64_t	 related_fid_volatile;
};

struct smb2_rsp {
	uint8_t		*hdr;		/* the response header, filled by dispatch */
	struct wcur	 body;		/* base = hdr, positioned at SMB2_HDR_LEN */
	/*
	 * Bulk data that follows the body on the wire without a copy: a READ
	 * that needs neither signing nor encryption sets data_fd and the
	 * connection sends it with sendfile.  data_len is counted in the
	 * frame length; the handler has already written the body that
	 * describes it.
	 */
	int		 data_fd;	/* -1 = none */
	off_t		 data_off;
	size_t		 data_len;
	/* A handler that produced a file id sets it for related compounds. */
	int		 set_fid;
	uint64_t	 fid_persistent;
	uint64_t	 fid_volatile;
	/* STATUS_PENDING: the handler parked the request (async_id set). */
	int		 async;
	uint64_t	 async_id;
	/*
	 * ... and answers nothing until it completes: no interim response
	 * (a SET_INFO waiting for lease breaks, as on Windows).
	 */
	int		 no_interim;
	/*
	 * A READ whose answer may go compressed (SMB2_READFLAG_REQUEST_
	 * COMPRESSED or a share's compress data, on a connection that
	 * negotiated compression): worker/dispatch_out.c compresses it
	 * when that saves bytes (worker/compress.h).
	 */
	int		 compress;
	uint16_t	 credits_granted;	/* filled by dispatch */
};

typedef ntstatus_t (*smb2_handler_fn)(struct smb2_req *, struct smb2_rsp *);

#endif
