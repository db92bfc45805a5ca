/*
 * The connection state a gate hands to the master (MSG_HANDOFF), which
 * forwards it verbatim to the user's worker (MSG_CONN): dialect and
 * capabilities, GUIDs, security modes, signing and cipher algorithms, the
 * 3.1.1 preauth hash, the message-id window and credits, the one session
 * (id, keys, flags, identity), the peer address and TCP port and any
 * bytes already read past the last request.  Versioned; decoded with an
 * exact length check.
 *
 * The owner of a connection also sends it (no session, the SESSION_SETUP
 * as the extra bytes) for a session relayed to another user's worker
 * (worker/relay.h), whose socket is then a socketpair: the address and
 * port it reports for that session (usmbctl status, kill-client) are the
 * ones the hand-off names.
 */
#ifndef USMBD_WORKER_HANDOFF_H
#define USMBD_WORKER_HANDOFF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conn;
struct session;

/* 3: binding hand-offs (no session); 4: expire; 5: the client's port */
#define HANDOFF_VERSION		5
/* What may travel of the bytes read past the last request. */
#define HANDOFF_MAX_EXTRA	(32 * 1024)

/*
 * Returns the payload length, or -EMSGSIZE.  s == NULL: an unauthenticated
 * connection handed over for a channel binding (the binding request is
 * among the extra bytes); it arrives with no session.
 */
int	handoff_encode(const struct conn *, const struct session *,
	    const uint8_t *extra, size_t extra_len, uint8_t *buf, size_t cap);
/*
 * Fills a fresh connection (its buffers allocated) and its first session
 * slot (left free for a binding hand-off); the extra bytes go to the start
 * of its receive buffer.  0, or -EBADMSG.
 */
int	handoff_decode(struct conn *, const uint8_t *p, size_t len);
/*
 * A worker's MSG_CONN: the identity the master vouches for
 * (daemon/authmsg.h), then the gate's state for handoff_decode.  The
 * session is served as the master's identity, whatever the gate's state
 * says (a difference is logged); it must be the worker's own uid `self`.
 * A binding hand-off carries no identity and no session.  0, or -EBADMSG.
 */
int	handoff_accept(struct conn *, const uint8_t *p, size_t len, uid_t self);

#endif
