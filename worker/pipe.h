/*
 * A named pipe endpoint on IPC$: the DCE/RPC server side of one open.
 *
 * The SMB layer (worker/smb2_pipe.c) feeds the bytes of WRITE and
 * FSCTL_PIPE_TRANSCEIVE into pipe_write(), which cuts them into PDUs at
 * frag_length, answers bind / alter_context, reassembles fragmented
 * requests, runs the interface's operation and queues the response
 * fragments (each no longer than the negotiated max_xmit_frag).  READ and
 * the output of a transceive take them back out with pipe_read(), one
 * message (PDU) at a time, as a message-mode pipe does.
 *
 * Everything answers synchronously: after pipe_write() returns, the
 * response to every complete request is already queued.  One malloc per
 * open (plus buffers that grow with the largest message and are kept).
 */
#ifndef USMBD_WORKER_PIPE_H
#define USMBD_WORKER_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"
#include "proto/dcerpc.h"
#include "proto/ndr.h"

struct conf;
struct rpc_pipe;
struct shm;

/* Largest fragment we receive or send (Windows and Samba use 4280/5840). */
#define PIPE_MAX_FRAG		5840
/* MS-RPCE 3.3.1.5.4: the smallest max_xmit_frag/max_recv_frag allowed. */
#define PIPE_MIN_FRAG		1432
/* Limits of a reassembled request stub and of one response stub. */
#define PIPE_MAX_REQ_STUB	(64 * 1024)
#define PIPE_MAX_RSP_STUB	(4 * 1024 * 1024)

/* What an operation may know about its caller. */
struct pipe_env {
	const struct conf	*conf;
	char			 user[64];	/* Unix account, "" for anonymous */
	int			 anonymous;	/* a null session */
	int			 guest;		/* a guest session */
	int			 admin;		/* in `server admin group` */
	struct shm		*shm;		/* the worker's state env, or NULL */
	uint64_t		 call;		/* this request's number in the
						   worker, the same when it is
						   run again; 0: none */
};

/*
 * Asks the master to close an open or end sessions for an administrator
 * (daemon/admmsg.h; worker/loop_chan.c sets it when the worker serves a
 * connection): the WERROR to answer.  NULL where there is no master (unit
 * tests): the call is answered ERROR_NOT_SUPPORTED.
 */
struct admmsg_req;
extern uint32_t (*pipe_admin_ask)(const struct admmsg_req *);

/*
 * Runs operation opnum on the request stub in (base = stub start) and
 * encodes the response stub into out.  Returns 0, or the DCE/RPC fault
 * status to send instead (DCERPC_NCA_S_OP_RNG_ERROR for an unknown
 * opnum, DCERPC_FAULT_NDR for a stub that does not decode).  It must not
 * keep state: the pipe calls it again with a larger buffer when out
 * overflows, with the same env->call (a costly answer may be kept for
 * that call alone: worker/pipe_lsarpc.c).
 */
typedef uint32_t (*pipe_call_fn)(const struct pipe_env *, uint16_t opnum,
    struct cur *in, struct ndr_w *out);

struct pipe_iface {
	const char		*name;		/* pipe name, e.g. "srvsvc" */
	const char		*sec_addr;	/* bind_ack secondary address */
	struct dcerpc_syntax	 syntax;	/* abstract syntax (interface) */
	pipe_call_fn		 call;
};

extern const struct pipe_iface pipe_iface_srvsvc;	/* worker/pipe_srvsvc.c */
extern const struct pipe_iface pipe_iface_wkssvc;	/* worker/pipe_wkssvc.c */
extern const struct pipe_iface pipe_iface_lsarpc;	/* worker/pipe_lsarpc.c */
extern const struct pipe_iface pipe_iface_samr;		/* worker/pipe_samr.c */

/* The interface behind a pipe name (case-insensitive, a leading '\' and
 * "PIPE\" ignored), or NULL. */
const struct pipe_iface *pipe_lookup(const char *name);

/* NULL with errno ENOENT (no such pipe) or ENOMEM. */
struct rpc_pipe	*pipe_open(const char *name, const struct conf *, const char *user);
void		 pipe_close(struct rpc_pipe *);
/* The session is a guest's (lsarpc answers guests as anonymous). */
void		 pipe_set_guest(struct rpc_pipe *, int guest);
/* The shared state srvsvc's session and file lists read (NULL: none). */
void		 pipe_set_state(struct rpc_pipe *, struct shm *);
const struct pipe_iface *pipe_iface(const struct rpc_pipe *);

/*
 * Consumes len bytes written to the pipe.  Returns 0, or -EPIPE when the
 * stream is beyond repair (a frag_length shorter than a header): the
 * caller reports the pipe broken and the client closes it.
 */
int		 pipe_write(struct rpc_pipe *, const void *data, size_t len);
/*
 * Copies up to max bytes of the message at the head of the output queue
 * into buf and returns the count; *more is set when that message has
 * bytes left (a message-mode read that overflowed).
 */
size_t		 pipe_read(struct rpc_pipe *, void *buf, size_t max, int *more);
/* Bytes queued in all, and bytes left of the head message. */
size_t		 pipe_avail(const struct rpc_pipe *);
size_t		 pipe_msg_left(const struct rpc_pipe *);

#endif
