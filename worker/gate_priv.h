/*
 * Between worker/gate.c (the slots, the loop, the master's channel) and
 * worker/gate_setup.c (what the gate reads of a SESSION_SETUP before it
 * is dispatched: a verdict to fetch, a binding to ask about or route).
 */
#ifndef USMBD_WORKER_GATE_PRIV_H
#define USMBD_WORKER_GATE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"
#include "worker/bindcheck.h"
#include "worker/conn_priv.h"

struct authmsg_req;

/*
 * The SESSION_SETUP prefix the gate looks at before dispatch (MS-SMB2 2.2.2
 * header, 2.2.5 request): the session it names, its Flags and its security
 * buffer.  Both the binding and the AUTHENTICATE checks read it from here.
 */
struct gate_setup {
	uint64_t	sid;		/* SessionId of the header */
	uint8_t		flags;		/* SMB2_SESSION_FLAG_* */
	struct cur	blob;		/* the security buffer; err if out of m */
};

/*
 * Decodes frame m (header first) as a SESSION_SETUP request.  Returns 1
 * and fills gs when m is one with its fixed part whole, else 0.  The
 * security buffer is checked apart (gs->blob.err): the binding check
 * does not need it.
 */
int	gate_setup_decode(const uint8_t *m, size_t len, struct gate_setup *gs);

/*
 * Does the SESSION_SETUP gs carry an NTLMSSP AUTHENTICATE (or a Kerberos
 * leg) for a session in its exchange?  Then fills req as the handler will,
 * with views into the frame.
 */
int	gate_auth_needed(struct conn *c, const struct gate_setup *gs,
	    struct authmsg_req *req);

/* A binding check asked, until the worker's answer (worker/bindcheck.h). */
struct gate_check {
	uint64_t	 sid;
	uint16_t	 credits;	/* the CreditResponse promised */
	struct conn_credits after;	/* the window once it is answered */
};

/*
 * Must the gate ask the session's worker about frame m (len bytes, the
 * SESSION_SETUP gs) before answering it?  1: q (a view of m) and k are
 * filled; 0: no (not a setup naming a session this connection lacks, or
 * an unsigned one without the binding flag: the handler answers it);
 * -1: it cannot be asked (a chain, too large, a bad message id): the
 * handler answers it as for an unknown session.
 */
int	gate_check_needed(struct conn *c, const struct gate_setup *gs,
	    const uint8_t *m, size_t len, struct bindcheck_req *q,
	    struct gate_check *k);

/*
 * Writes the worker's refusal rep (checked against request q) to the
 * client and takes the request out of the receive buffer.  0, or -1:
 * the connection ends.
 */
int	gate_check_answer(struct conn *c, const struct gate_check *k,
	    const struct bindcheck_req *q, const struct bindcheck_rep *rep);

#endif
