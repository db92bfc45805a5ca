/*
 * What worker/dispatch.c shares with worker/dispatch_async.c: the command
 * table and the response framing.  Not for command handlers.
 */
#ifndef USMBD_WORKER_DISPATCH_PRIV_H
#define USMBD_WORKER_DISPATCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "worker/conn_priv.h"
#include "worker/smb2.h"

struct conn;
struct session;

struct dispatch_cmd {
	smb2_handler_fn	 fn;
	const char	*name;
	uint8_t		 needs_session;
	uint8_t		 needs_tree;
	uint8_t		 in_gate;	/* served before the hand-off */
};

/* MS-SMB2 2.2.1.2 command codes index this table. */
extern const struct dispatch_cmd dispatch_table[SMB2_NCOMMANDS];

/* One response of the chain being built. */
struct dispatch_out {
	size_t		 off;		/* in sbuf */
	size_t		 len;
	struct session	*sign_sess;	/* sign with this session's key */
};

/*
 * One walk over a compound chain (MS-SMB2 3.3.5.2.7): the responses built
 * so far at sbuf + 4 and the related-operation state.  A frame is walked
 * from its start; the rest of a chain parked behind a CREATE is walked
 * after the CREATE's final response, which is outs[0] then.
 */
struct dispatch_walk {
	struct dispatch_out outs[CONN_MAX_COMPOUND];
	int		 nout;
	size_t		 woff;		/* the next response at sbuf + woff */
	struct smb2_rsp	 rsp;		/* the last response */
	int		 encrypted;	/* the requests came in a transform */
	int		 encrypt_rsp;
	struct session	*enc_sess;
	int		 charged;	/* message ids already charged */
	ntstatus_t	 rest_st;	/* != 0: answer the rest of the chain so */
	int		 split;		/* other users' elements relayed apart */
	/* related-chain state */
	uint64_t	 prev_sid;
	uint32_t	 prev_tid;
	uint64_t	 prev_fp, prev_fv;
	ntstatus_t	 prev_st;
	int		 prev_ids_bad;	/* the previous one had no valid session/tree */
};

void	dispatch_walk_init(struct dispatch_walk *);
/* Serves the requests of msg; -1: disconnect. */
int	dispatch_walk(struct conn *, struct dispatch_walk *, const uint8_t *msg,
	    size_t len);
/* Sends the responses of a walk, then frees a session logged off. */
int	dispatch_walk_end(struct conn *, struct dispatch_walk *);
/*
 * Keeps the requests of a chain after the request of message id mid,
 * parked for a break, with it (charging their message ids now, unless
 * charged: a chain resumed once already).  0: kept; 1: no room; -1: a
 * message id outside the window (disconnect).
 */
int	dispatch_park_rest(struct conn *, uint64_t mid, const uint8_t *rest,
	    size_t len, int charged);
/*
 * The request just parked answers nothing now (no interim response) and
 * once, synchronously, when it completes (struct smb2_rsp no_interim);
 * the responses of the chain before it (the walk's, when it is the last
 * of its chain) wait with it, as on Windows.  0, or -1 when it has no
 * slot (then its interim goes out as usual).
 */
struct dispatch_walk;
int	dispatch_park_silent(struct conn *, const struct smb2_req *,
	    struct dispatch_walk *, const uint8_t *rest, size_t rest_len);

/* MS-SMB2 2.2.2 error body (StructureSize 9). */
void	dispatch_error_body(struct wcur *);
/*
 * Finishes a chain of responses at sbuf + 4: NextCommand, padding,
 * signatures, preauth, encryption, frame; then sends.
 */
int	dispatch_finish(struct conn *, struct dispatch_out *, int nout,
	    struct smb2_rsp *last, int encrypt, struct session *enc_sess);
/* Writes the response header for req at rsp->hdr. */
void	dispatch_rsp_hdr(struct smb2_req *, struct smb2_rsp *, ntstatus_t,
	    uint64_t sid, uint32_t tid);
/* After a CREATE answered with an open: the open's ChannelSequence. */
void	dispatch_create_channel_sequence(const struct smb2_req *,
	    const struct smb2_rsp *);

#endif
