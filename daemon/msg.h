/*
 * Typed messages between the master and its children over SOCK_SEQPACKET
 * socketpairs.  One datagram is one message: a 12-byte little-endian header
 * {type, len, id} then len bytes of payload, with at most one fd attached.
 * Payloads are encoded with proto/cur.h cursors; a receiver checks that the
 * payload was consumed exactly.
 *
 * The child's end of its channel is always fd MSG_CHILD_FD after exec.
 */
#ifndef USMBD_DAEMON_MSG_H
#define USMBD_DAEMON_MSG_H

#include <stddef.h>
#include <stdint.h>

#define MSG_CHILD_FD	3
#define MSG_HDR_LEN	12
#define MSG_MAX_PAYLOAD	(64 * 1024)

enum msg_type {
	/* child -> master */
	MSG_HELLO = 1,		/* payload: role u32; the child is set up */
	/*
	 * Gate credits: payload empty = one more connection, or u32 n = n
	 * more.  Each MSG_NEW_CONN uses one; the master gives a gate no more
	 * than it was granted (daemon/listen.c).
	 */
	MSG_GATE_READY,
	MSG_AUTH_REQ,		/* struct msg_auth_req, answered by MSG_AUTH_REP with the same id */
	/*
	 * gate -> master, fd = the client socket, payload = connection state;
	 * id = the id of the MSG_AUTH_REQ whose verdict authenticated this
	 * connection (the master routes by that verdict, once); echoed in
	 * MSG_HANDOFF_DONE.
	 */
	MSG_HANDOFF,
	MSG_CONN_ACK,		/* worker -> master: took the connection (id of MSG_CONN) */
	MSG_CONN_COUNT,		/* worker -> master: payload u32 number of connections now */
	MSG_STATUS_REP,		/* child -> master: reply to MSG_STATUS_REQ (JSON fragment) */
	/*
	 * Answers to the operations requests below (worker/ctlmsg.c), each
	 * with the id of the request it answers.
	 */
	MSG_PONG,		/* reply to MSG_PING: payload u32 pid */
	MSG_CTL_DONE,		/* reply to CLOSE_SHARE / KILL_*: payload u32 count */
	MSG_INFO_REP,		/* reply to MSG_INFO_REQ: worker/ctlmsg.h encoding */
	/*
	 * Reply to MSG_METRICS_REQ: worker/metrics.h encoding.  With id 0,
	 * unasked: a child's final counters, sent just before it exits.
	 */
	MSG_METRICS_REP,
	/*
	 * gate -> master: the connection of MSG_NEW_CONN id is closed or
	 * handed off (and acknowledged); no payload, or u32 1 when it went
	 * to a worker unauthenticated for a channel binding (it stays in the
	 * per-address count a while: daemon/listen.c).  Releases its place in
	 * the per-address count; the gate's credits are separate.
	 */
	MSG_GATE_CONN_END,
	/*
	 * gate -> master: it took its last connection and grants no more
	 * credits; the master answers MSG_SHUTDOWN (u32 1: drain) and starts
	 * its replacement.  No payload.
	 */
	MSG_GATE_RETIRE,
	/*
	 * gate -> master, fd = the client socket: an unauthenticated
	 * connection whose next request binds a channel to session S
	 * (MS-SMB2 3.3.5.5).  Payload: u64 S, then the connection state
	 * (worker/handoff.h, no session; the request among the extra bytes)
	 * that goes verbatim to the worker that announced S
	 * (MSG_SESSION_UP).
	 * Answered by MSG_HANDOFF_DONE with the same id: 0 taken,
	 * STATUS_USER_SESSION_DELETED no such session (the gate answers it).
	 */
	MSG_HANDOFF_BIND,
	/*
	 * worker -> master: the last close of a delete-pending file could not
	 * unlink it (EACCES/EPERM) and another user holds the delete token
	 * (shm/shm.h shm_close_result.delete_uid).  Payload (msg_unlink_*
	 * below): u32 uid, u64 dev, u64 ino, u8 is_dir, str share, str path
	 * (strings u16 length + bytes, no NUL).  No answer: the master
	 * forwards it as MSG_UNLINK_DO to the live workers of uid (none is
	 * started); one that vouched for the delete unlinks with that
	 * user's rights.
	 */
	MSG_UNLINK_AS,
	/*
	 * worker -> master: payload u64 session id.  The worker serves that
	 * session now (a login, a hand-off, a re-authentication), or no
	 * longer (its end).  The master routes channel bindings by what
	 * workers announced, under their own pid and uid (daemon/msess.h).
	 * No answer, but an id another worker announced first is refused:
	 * the master ends that session with MSG_KILL_SESSION (id 0).
	 */
	MSG_SESSION_UP,
	MSG_SESSION_DOWN,
	/*
	 * child -> master: one log line.  Payload: u8 syslog priority, then
	 * the text (no NUL, at most LOG_LINE_MAX + 64 bytes).  No answer.
	 * Children hold no descriptor of the log (daemon/log.h); the master
	 * rate-limits these per child and escapes what it writes.
	 */
	MSG_LOG,
	/*
	 * state process -> master (daemon/statemsg.h): its counts of the
	 * shared state, unasked every few seconds; and a process seen
	 * holding the state's writer lock too long (the master checks the
	 * process in /proc before it acts).  No answer.
	 */
	MSG_STATE_COUNTS,
	MSG_STATE_WRITER,
	/*
	 * worker -> master, fd = one end of a socketpair the worker made: a
	 * session of another user on its connection (the MSG_AUTH_REQ of
	 * id answered with AUTH_FLAG_RELAY).  Payload: u64 session id (for
	 * `usmbctl status`), the relay state
	 * (worker/relay.h) then the connection state (worker/handoff.h, no
	 * session, the SESSION_SETUP among the extra bytes).  The master
	 * takes the verdict it kept for (this worker, id), once, and sends
	 * the fd to a worker of the verdict's uid as MSG_CONN with
	 * AUTHMSG_IDENT_RELAY and the whole verdict; answered with
	 * MSG_HANDOFF_DONE (same id, u32 status).
	 */
	MSG_RELAY,
	/*
	 * ticket helper -> master: the answer to MSG_KRB_REQ of the same id
	 * (daemon/krbmsg.h struct krbmsg_rep).
	 */
	MSG_KRB_REP,

	/*
	 * A SESSION_SETUP naming a session the gate does not hold (a
	 * channel binding, or a signed setup of another connection's
	 * session), judged before any socket moves (worker/bindcheck.h).
	 * gate -> master: payload u64 session id, then what the worker
	 * reads; the master forwards it (same type, its own id) to the live
	 * worker that announced that session (daemon/msess.h), or answers
	 * itself.  worker -> master: MSG_BIND_CHECK_REP with the id of the
	 * question, payload u32 status, u32 length, then 0 or
	 * MSG_BIND_CHECK_RSP_LEN bytes (the refusal the gate writes); the
	 * master forwards it to the gate under the gate's id.  Answered by
	 * the master alone: STATUS_USER_SESSION_DELETED (no such session:
	 * the gate answers the client) or STATUS_INSUFF_SERVER_RESOURCES
	 * (no answer came: the gate drops the client), length 0.
	 */
	MSG_BIND_CHECK,
	MSG_BIND_CHECK_REP,
#define MSG_BIND_CHECK_RSP_LEN	(64 + 9)	/* SMB2 header + error body */
	/*
	 * worker -> master, just before a MSG_RELAY of the same id: fd = the
	 * connection's own client socket, no payload, no answer.  The master
	 * reads the client's address from it (daemon/listen.h listen_peer_of:
	 * only a socket one of its listeners accepted), closes it and gives
	 * the address to the relayed worker in the identity (authmsg_ident
	 * peer), the one its share host lists judge.
	 */
	MSG_RELAY_PEER,
	/*
	 * worker -> master: NetrFileClose or NetrSessionDel of an
	 * administrator (daemon/admmsg.h), answered by MSG_ADMIN_REP with
	 * the same id.  The master judges the sender by its own child table
	 * (daemon/admreq.c), never by the payload.
	 */
	MSG_ADMIN_REQ,

	/* master -> child */
	/*
	 * master -> gate, fd = accepted socket, id = the master's connection
	 * id, payload = 16-byte server GUID, u64 start FILETIME, peer address
	 * string (NUL-terminated), then optionally u8 flags: MSG_NEW_CONN_NO_BIND
	 * (the address has its share of bindings waiting in workers: the gate
	 * answers a binding itself, as for an unknown session).
	 */
	MSG_NEW_CONN = 64,
#define MSG_NEW_CONN_NO_BIND	0x01
	MSG_AUTH_REP,		/* struct msg_auth_rep */
	MSG_CONN,		/* master -> worker, fd = client socket, payload = connection state */
	MSG_HANDOFF_DONE,	/* master -> gate: payload u32 status (0 = worker took it) */
	/*
	 * Re-read the config (workers; a gate, which cannot read files, is
	 * retired and replaced instead).  Payload empty, or u32 flags:
	 * MSG_RELOAD_FORCE (usmbctl reload --force) closes the trees of
	 * shares the new config no longer has; without it they keep working
	 * until disconnected.
	 */
	MSG_RELOAD,
	/*
	 * Finish and exit.  To a gate: stop taking connections and end the
	 * logins in flight within a few seconds; with payload u32 1 (the
	 * answer to MSG_GATE_RETIRE) let them run to their own deadlines.
	 */
	MSG_SHUTDOWN,
	MSG_STATUS_REQ,		/* report sessions / opens */
	MSG_DEBUG_LEVEL,	/* payload u32 level */
	/* Operations (usmbctl, daemon/ctl.c); handled by worker/ctlmsg.c. */
	MSG_PING,		/* answered by MSG_PONG */
	MSG_CLOSE_SHARE,	/* payload: share name, NUL-terminated; MSG_CTL_DONE */
	MSG_KILL_CLIENT,	/* payload: address text, NUL-terminated; MSG_CTL_DONE */
	/* payload: u64 session id; MSG_CTL_DONE.  Also sent with id 0 by the
	 * master for an announced id another worker holds (MSG_SESSION_UP). */
	MSG_KILL_SESSION,
	MSG_INFO_REQ,		/* connections, sessions, trees, opens: MSG_INFO_REP */
	MSG_METRICS_REQ,	/* request counters: MSG_METRICS_REP */
	/*
	 * master -> gate: close the unauthenticated connection of MSG_NEW_CONN
	 * id (its address is over its share of pre-auth connections); one in
	 * hand-off is left alone.  No payload.
	 */
	MSG_GATE_DROP,
	/*
	 * master -> worker of the delete token's uid: the MSG_UNLINK_AS
	 * payload, then str root (the share's path in the master's config).
	 * The worker acts only on a delete it vouched for, resolves path
	 * beneath root with its own rights, checks dev and ino, and unlinks
	 * (worker/unlink_as.c).  No answer.
	 */
	MSG_UNLINK_DO,
	/*
	 * master -> state process: purge what a dead child left in the
	 * shared state (daemon/statemsg.h).  No answer.
	 */
	MSG_STATE_PURGE,
	/*
	 * master -> ticket helper (daemon/krbmsg.h): the keytab's fd, no
	 * payload; and a client's krb5 token to verify, answered by
	 * MSG_KRB_REP.
	 */
	MSG_KRB_KEYTAB,
	MSG_KRB_REQ,
	/*
	 * master -> user worker, at its hello and on every reload: the SMB
	 * accounts of the passdb for the samr pipe to list (worker/samr_db.h
	 * samr_db_set; daemon/userlist.c).  Payload: u32 count, then count
	 * times u32 uid, u32 flags (PASSDB_FLAG_*), u8 length and the Unix
	 * account name without a NUL.  No answer.
	 */
	MSG_USERS,
	/*
	 * master -> worker: the answer to its MSG_ADMIN_REQ (u32 WERROR);
	 * and, to every worker, close the opens of a FileId or end the
	 * sessions of a client and user (daemon/admmsg.h), answered by
	 * MSG_CTL_DONE with u32 how many.
	 */
	MSG_ADMIN_REP,
	MSG_ADMIN_DO,
};

#define MSG_UNLINK_STR_MAX	4096	/* share, path and root, each */

#define MSG_RELOAD_FORCE	0x1	/* MSG_RELOAD flag */

/* MSG_HELLO payload: the role the child was started as (u32). */
enum msg_role {
	MSG_ROLE_GATE = 1,
	MSG_ROLE_WORKER = 2,
	MSG_ROLE_STATE = 3,
	MSG_ROLE_SDW = 4,	/* the descriptor writer (worker/sdw.h) */
	MSG_ROLE_KRB = 5,	/* the ticket helper (worker/krb.c) */
};

struct msg {
	uint32_t	 type;
	uint32_t	 id;
	uint32_t	 len;
	const uint8_t	*payload;	/* points into the caller's buffer */
	int		 fd;		/* -1 when none was attached */
};

/*
 * Sends one message; fd < 0 sends none.  The caller keeps ownership of fd and
 * closes its copy after a successful send.  Returns 0 or -errno (-EMSGSIZE
 * if len is over MSG_MAX_PAYLOAD).  Blocks until the message is queued.
 */
int	msg_send(int sock, uint32_t type, uint32_t id, const void *payload,
	    size_t len, int fd);

/*
 * Receives one message into buf (at least MSG_HDR_LEN + MSG_MAX_PAYLOAD
 * bytes).  Returns 0, -EAGAIN when nothing is ready on a non-blocking socket,
 * -EPIPE on orderly close (0 bytes), -EBADMSG for a truncated, oversized or
 * malformed message (header length that does not match the datagram, extra
 * or foreign ancillary data).  Any fd that arrives with a bad message, and
 * any fd beyond the first, is closed here.
 */
int	msg_recv(int sock, struct msg *m, uint8_t *buf, size_t bufsz);

#define MSG_BUF_SIZE	(MSG_HDR_LEN + MSG_MAX_PAYLOAD)

#endif
