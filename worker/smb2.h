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

#define SMB2_HDR_LEN		64

/* MS-SMB2 2.2.1 commands */
#define SMB2_NEGOTIATE		0x0000
#define SMB2_SESSION_SETUP	0x0001
#define SMB2_LOGOFF		0x0002
#define SMB2_TREE_CONNECT	0x0003
#define SMB2_TREE_DISCONNECT	0x0004
#define SMB2_CREATE		0x0005
#define SMB2_CLOSE		0x0006
#define SMB2_FLUSH		0x0007
#define SMB2_READ		0x0008
#define SMB2_WRITE		0x0009
#define SMB2_LOCK		0x000A
#define SMB2_IOCTL		0x000B
#define SMB2_CANCEL		0x000C
#define SMB2_ECHO		0x000D
#define SMB2_QUERY_DIRECTORY	0x000E
#define SMB2_CHANGE_NOTIFY	0x000F
#define SMB2_QUERY_INFO		0x0010
#define SMB2_SET_INFO		0x0011
#define SMB2_OPLOCK_BREAK	0x0012
#define SMB2_NCOMMANDS		0x0013

/* MS-SMB2 2.2.1.2 header flags */
#define SMB2_FLAGS_SERVER_TO_REDIR	0x00000001u
#define SMB2_FLAGS_ASYNC_COMMAND	0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS	0x00000004u
#define SMB2_FLAGS_SIGNED		0x00000008u
#define SMB2_FLAGS_PRIORITY_MASK	0x00000070u
#define SMB2_FLAGS_DFS_OPERATIONS	0x10000000u
#define SMB2_FLAGS_REPLAY_OPERATION	0x20000000u

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
	uint16_t	 credits_granted;	/* filled by dispatch */
};

typedef ntstatus_t (*smb2_handler_fn)(struct smb2_req *, struct smb2_rsp *);

#endif
