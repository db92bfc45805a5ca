/*
 * A gate's question about a SESSION_SETUP that names a session it does not
 * hold (a channel binding, MS-SMB2 3.3.5.5, or a signed setup of another
 * connection's session), and the answer of the worker holding that session.
 *
 * The gate has no session keys, and the client wants a refusal signed with
 * the session's key: so before any socket moves, the gate sends
 * MSG_BIND_CHECK (through the master, which routes it by the session id to
 * the worker that announced it) and the worker judges the request with the
 * session's key and the gate connection's negotiated parameters.  Either
 * the binding may authenticate (STATUS_SUCCESS: only then does the gate
 * hand the socket over, MSG_HANDOFF_BIND), or the worker refuses it and
 * sends the whole response it built (header and error body, signed when
 * the session signs its refusals), which the gate writes as it is.  The
 * worker signs only a response it built itself, to a request the
 * session's key signed: a compromised gate obtains nothing but refusals.
 *
 * Pure codecs, no I/O: fuzzed (t/fuzz/fuzz_bindcheck.c).
 */
#ifndef USMBD_WORKER_BINDCHECK_H
#define USMBD_WORKER_BINDCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/msg.h"

/* A refusal is the 64-byte header and the 9-byte error body. */
#define BINDCHECK_RSP_LEN	MSG_BIND_CHECK_RSP_LEN
/* The request travels whole; a larger one is not asked about. */
#define BINDCHECK_REQ_MAX	(16 * 1024)

/* MSG_BIND_CHECK: gate -> master -> the session's worker. */
struct bindcheck_req {
	uint64_t	 sid;		/* SessionId of the request */
	uint16_t	 dialect;	/* of the gate's connection */
	uint16_t	 signing_algo;
	uint16_t	 cipher;
	uint16_t	 credits;	/* the CreditResponse the gate grants */
	const uint8_t	*msg;		/* the request: header + body */
	uint32_t	 msg_len;
};

/* MSG_BIND_CHECK_REP: worker -> master -> gate. */
struct bindcheck_rep {
	uint32_t	 status;	/* STATUS_SUCCESS: route the binding */
	const uint8_t	*rsp;		/* the refusal to send, or NULL */
	uint32_t	 rsp_len;	/* 0 or BINDCHECK_RSP_LEN */
};

/* Payload length, or -EMSGSIZE / -EINVAL. */
int	bindcheck_req_encode(const struct bindcheck_req *, uint8_t *buf,
	    size_t cap);
/* 0, or -EBADMSG; views into p. */
int	bindcheck_req_decode(struct bindcheck_req *, const uint8_t *p,
	    size_t len);
int	bindcheck_rep_encode(const struct bindcheck_rep *, uint8_t *buf,
	    size_t cap);
int	bindcheck_rep_decode(struct bindcheck_rep *, const uint8_t *p,
	    size_t len);

/*
 * Is rep's response the answer to request q the gate may write: an SMB2
 * response header to that SESSION_SETUP (message id, session, credits as
 * granted, the status rep names, no chain, not async) and the error body?
 * 0, or -EBADMSG.
 */
int	bindcheck_rsp_check(const struct bindcheck_rep *rep,
	    const struct bindcheck_req *q);

/*
 * In the worker (worker/smb2_bind.c): answers MSG_BIND_CHECK payload p with
 * the MSG_BIND_CHECK_REP payload in out.  Its length, or -errno.
 */
int	smb2_bind_check_serve(const uint8_t *p, size_t len, uint8_t *out,
	    size_t cap);

#endif
