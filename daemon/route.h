/*
 * Routing authenticated connections from gates to the user workers, by the
 * verdict the master gave the gate (never by what the gate's payload says).
 */
#ifndef USMBD_DAEMON_ROUTE_H
#define USMBD_DAEMON_ROUTE_H

#include <stdint.h>

struct authmsg_rep;
struct child;
struct msg;

/*
 * Verdicts by token.  A gate serves many logins at once, so the master
 * keeps each successful verdict it gives a gate under the id of the
 * MSG_AUTH_REQ it answers; a MSG_HANDOFF names that id, and the verdict is
 * used at most once, only by the gate it was given to, and only within
 * ROUTE_VERDICT_TTL_MS.
 */
#define ROUTE_MAX_VERDICTS	1024
#define ROUTE_GATE_VERDICTS	128	/* held for one gate; its oldest goes */
#define ROUTE_VERDICT_TTL_MS	10000

/* Called for every MSG_AUTH_REP sent; keeps gates' successes only. */
void	route_verdict_record(const struct child *c, uint32_t id,
	    const struct authmsg_rep *rep, int64_t now_ms);
/*
 * Keeps another user's verdict (key included) given to worker c for its
 * request id, for one MSG_RELAY of c naming id, soon after.
 */
void	route_relay_record(const struct child *c, uint32_t id,
	    const struct authmsg_rep *rep, int64_t now_ms);
/*
 * MSG_RELAY from worker owner: the session of the verdict it was given
 * for request m->id goes to a worker of that verdict's uid (started if
 * needed) with the session key; the owner keeps the client socket and
 * relays that session's frames over the socketpair (m->fd).  Answered
 * with MSG_HANDOFF_DONE.
 */
void	route_relay(struct child *owner, const struct msg *m);
/*
 * MSG_RELAY_PEER from worker owner: the client address of the socket it
 * shows (m->fd, closed here), kept for its MSG_RELAY of id m->id, whose
 * identity carries it (authmsg_ident peer; "" when there is none, or the
 * socket is not one the master accepted).
 */
void	route_relay_peer(struct child *owner, const struct msg *m);
/*
 * MSG_HANDOFF (a gate's), MSG_RELAY and MSG_RELAY_PEER (a worker's), each
 * with its socket: to the three above; -1 (the fd closed) when malformed.
 */
int	route_socket_msg(struct child *c, const struct msg *m);
/* Takes (and forgets) the verdict of (gate, id): 0, or -ENOENT. */
int	route_verdict_take(const struct child *gate, uint32_t id,
	    int64_t now_ms, struct authmsg_rep *out);

void	route_handoff(struct child *gate, const struct msg *m);
/*
 * MSG_HANDOFF_BIND: an unauthenticated connection binding a channel to
 * session S goes to the worker that announced S (daemon/msess.h; alive, of
 * the uid it announced it with); that worker checks the binding itself.  Unknown S: the
 * gate is told STATUS_USER_SESSION_DELETED and keeps the connection.
 */
void	route_handoff_bind(struct child *gate, const struct msg *m);
/*
 * MSG_BIND_CHECK of a gate: forwarded to the worker of the session it
 * names, or answered here (msg.h).  MSG_BIND_CHECK_REP of that worker:
 * to the gate that asked; -1 when malformed.
 */
int	route_bind_check_msg(struct child *c, const struct msg *m);
void	route_worker_hello(struct child *worker);
void	route_conn_ack(struct child *worker, uint32_t id);
/*
 * MSG_UNLINK_AS from worker w: forwarded as MSG_UNLINK_DO to the live
 * workers of the delete token's uid (only one that vouched for the delete
 * acts on it, worker/unlink_as.h); none is started for it.  Requests that
 * cannot be served are logged and dropped.  -1 for a malformed message
 * (the sender is killed).
 */
int	route_unlink_as(struct child *w, const struct msg *m);
/* Fails hand-offs a worker did not acknowledge in time. */
void	route_tick(void);
/* A child died or was killed: fail or forget its queued connections. */
void	route_child_gone(struct child *c);

#endif
