/*
 * What worker/dispatch.c shares with worker/dispatch_async.c: the command
 * table and the response framing.  Not for command handlers.
 */
#ifndef USMBD_WORKER_DISPATCH_PRIV_H
#define USMBD_WORKER_DISPATCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

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
