/*
 * The user worker's side of the operations messages of daemon/msg.h
 * (MSG_PING, MSG_CLOSE_SHARE, MSG_KILL_CLIENT, MSG_KILL_SESSION,
 * MSG_INFO_REQ, MSG_METRICS_REQ, MSG_ADMIN_DO), sent by the master for usmbctl.  Each is
 * answered on the channel with the request's id.
 *
 * MSG_INFO_REP payload (little-endian, strings are u16 length + bytes):
 *
 *	u32 version (CTLMSG_INFO_VERSION), u32 pid, u32 nconn
 *	nconn x { str peer, u16 port, u32 idle_ms (CTLMSG_IDLE_UNKNOWN: the
 *	          socket is a relay's, not the client's), u16 dialect,
 *	          u32 nsess x { u64 id, u32 uid, str user, u8 signing
 *	                        (0 off, 1 on, 2 required), u8 encrypt, u8 state }
 *	          u32 ntree x { u32 tree id, u64 session id, str share }
 *	          u32 nopen x { u64 persistent id, u64 session id, str share,
 *	                        str path, u32 access, u32 share access,
 *	                        u8 oplock level, u32 lease state, u8 kind } }
 *	u8 truncated (1: the payload limit cut the lists short)
 *
 * The master decodes it with the same layout (daemon/ctl_info.c) and trusts
 * nothing in it beyond display.
 */
#ifndef USMBD_WORKER_CTLMSG_H
#define USMBD_WORKER_CTLMSG_H

struct msg;

#define CTLMSG_INFO_VERSION	1
#define CTLMSG_IDLE_UNKNOWN	0xffffffffu

/*
 * Handles m when it is one of the types above: 1; else 0 (not ours).
 * MSG_RELOAD is seen first (its --force flag noted) and left to the loop.
 */
int	ctlmsg_handle(struct msg *m);

/*
 * The loop reloaded: old is replaced by nc.  Every connection takes nc (a
 * removed share refuses new tree connects) and every tree follows its
 * share by name; a tree of a removed share keeps working on old's
 * definition, unless the reload was forced (MSG_RELOAD_FORCE), when it is
 * closed as by close-share (durable opens kept).  Takes old: kept while a
 * tree uses it, else freed.
 */
struct conf;
void	ctlmsg_reload_conf(struct conf *old, struct conf *nc);
/*
 * Set while the worker waits for the master's answer to its own
 * MSG_ADMIN_REQ (worker/loop_chan.c): a session that MSG_ADMIN_DO ends
 * then may be the one whose request waits, so its connection is
 * dropped (the loop frees it later) rather than freed under that
 * request.
 */
extern int	ctlmsg_admin_waiting;
/* Sends this process's final counters unasked (MSG_METRICS_REP, id 0). */
void	ctlmsg_metrics_final(int chan);

#endif
