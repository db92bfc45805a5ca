/*
 * The SMB2 dispatcher: one received frame (a message, a compound chain or
 * a transform) in, its response frame queued on the connection.
 */
#ifndef USMBD_WORKER_DISPATCH_H
#define USMBD_WORKER_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct conn;
struct conn_pending;

/*
 * msg is the frame's payload inside the receive buffer (it may be
 * decrypted in place).  Returns 0, or -1 when the connection must be
 * dropped (malformed framing, bad message id, a failed send).
 */
int	dispatch_frame(struct conn *, uint8_t *msg, size_t len);

/*
 * Frames and sends a response built elsewhere, as it is (a gate writing the
 * refusal a session's worker built and signed: worker/bindcheck.h).  0, or
 * -1 when the connection must be dropped.
 */
int	dispatch_send_built(struct conn *, const uint8_t *rsp, size_t len);

/* Ends a pending async request with an error status (sent when idle). */
int	dispatch_async_complete(struct conn *, struct conn_pending *, ntstatus_t);
/* Sends queued notices and the final responses of woken slots. */
int	dispatch_async_run(struct conn *);

/*
 * For a handler: parks the current request (a copy of it is kept in a
 * per-connection slot) and returns STATUS_PENDING, which the handler
 * returns; dispatch sends the interim response.  kind and (dev, ino) say
 * what wakes it (conn_pending_wake_file), deadline_ms (shm_now_ms clock,
 * 0 = none) when it runs again regardless.  When woken, the request runs
 * through its handler again: dispatch_resuming() then returns the slot,
 * and parking again keeps the same async id without a new interim.  out
 * (may be NULL) gets the slot, to set fid_*, cancel and arg.  Returns
 * STATUS_INSUFF_SERVER_RESOURCES when no slot is free.
 */
struct smb2_req;
struct smb2_rsp;
ntstatus_t dispatch_park(struct smb2_req *, struct smb2_rsp *, int kind,
	    uint64_t dev, uint64_t ino, uint64_t deadline_ms,
	    struct conn_pending **out);
struct conn_pending *dispatch_resuming(const struct smb2_req *);

/* Handlers of the core (one file per family). */
struct smb2_req;
struct smb2_rsp;
ntstatus_t	smb2_negotiate(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_session_setup(struct smb2_req *, struct smb2_rsp *);
/*
 * STATUS_ACCESS_DENIED when the request needs new authority and its
 * session was re-authenticated as another identity (worker/smb2_reauth.c).
 */
ntstatus_t	smb2_session_may_act(const struct smb2_req *, uint16_t command);
ntstatus_t	smb2_logoff(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_tree_connect(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_tree_disconnect(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_echo(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_cancel(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_ioctl(struct smb2_req *, struct smb2_rsp *);
/*
 * An SMB1 NEGOTIATE as the first message: writes the SMB2 NEGOTIATE
 * response body into rsp (0x02FF or 0x0202) and returns STATUS_SUCCESS, or
 * returns STATUS_NOT_SUPPORTED when the client offers no SMB2 dialect we
 * serve (the connection is then closed).
 */
ntstatus_t	smb2_negotiate_smb1(struct conn *, const uint8_t *msg, size_t len,
		    struct smb2_rsp *);

#endif
