/*
 * Entry points of the two child roles, called by daemon/main.c after it has
 * dropped privileges (worker/user.c).  chan is the channel to the master
 * (MSG_CHILD_FD).  Both return the process exit code.
 */
#ifndef USMBD_WORKER_WORKER_H
#define USMBD_WORKER_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conf;

int	gate_main(struct conf *conf, const char *conf_path, int chan);
/*
 * worker/sdw.c: the descriptor writer; serves the listening socket it
 * finds at SDW_LISTEN_FD (the master's, daemon/spawn.c), else binds one
 * itself; drops itself.
 */
int	sdw_main(struct conf *conf, int chan);
/*
 * Binds and listens on <lock_dir>/sdw.sock (as root: owner and mode as
 * worker/sdw.c says), atomically over any older one; the fd or -errno.
 * The master keeps it for every writer it starts, so a worker's connect
 * never meets a missing or dead writer: it waits in the backlog.
 */
int	sdw_listen_socket(const char *lock_dir);
#define SDW_LISTEN_FD	4	/* MSG_CHILD_FD + 1 in the writer */
/* worker/krb.c: the Kerberos ticket helper; drops itself, serves the master. */
int	krb_main(struct conf *conf, int chan);
int	worker_main(struct conf *conf, const char *conf_path, int chan,
	    const char *user, uid_t uid, gid_t gid, int ipc_only);
/*
 * worker/statep.c: the state process, which maps the shared state for
 * the master (purges, durable expiry, status, the writer watchdog).
 */
int	statep_main(struct conf *conf, const char *conf_path, int chan);

/*
 * worker/loop.c, for the state layer: calls fn for every live connection of
 * this worker, and schedules a connection to send its queued async work
 * (break notices, woken requests) after the current event.
 */
struct conn;
void	worker_foreach_conn(void (*fn)(struct conn *, void *), void *arg);
void	worker_kick(struct conn *);
/* Starts the 1 s housekeeping tick; it stops when state_tick() says so. */
void	worker_tick_arm(void);
/*
 * The Unix account this worker serves and its current config (the
 * recycle bin's %U; a share looked up by name outside any tree).
 */
const char	*worker_user(void);
const struct conf *worker_conf(void);
/*
 * worker/loop_chan.c, for worker/relay.c: shows the master the client's
 * socket (MSG_RELAY_PEER, client_fd, which stays ours: the master reads
 * the address the relayed worker's share host lists judge), then sends
 * MSG_RELAY (fd, the id of
 * the MSG_AUTH_REQ whose verdict it names, payload) and waits for the
 * master's MSG_HANDOFF_DONE: its status (0: a worker of that user took
 * the session), or (uint32_t)-1 when the channel failed.  worker/loop.c:
 * watches a relay's fd of connection c in the loop for events (EPOLLIN,
 * EPOLLOUT; was: those it had), or forgets it (0): 0, or -1.  With io_uring EPOLLIN
 * is the relay's armed receive (relay.c), so only EPOLLOUT reaches epoll.
 */
uint32_t worker_relay_handoff(int client_fd, int fd, uint32_t id,
	    const uint8_t *p, size_t len);
int	worker_relay_watch(struct conn *c, int fd, uint32_t was,
	    uint32_t events);

/*
 * worker/smb2_bind.c, for the loop: a gate's MSG_BIND_CHECK (forwarded by
 * the master) answered on chan with MSG_BIND_CHECK_REP; 1 if m was one.
 */
struct msg;
int	smb2_bind_check_msg(int chan, const struct msg *m);

/*
 * worker/smb2_session.c: a new session s that named a PreviousSessionId
 * (MS-SMB2 3.3.5.5.3) ends that older session of the same user on any
 * connection of this worker (the client lost or gave up the old one).
 */
struct session;
void	smb2_session_replace_previous(struct conn *c, struct session *s);

/* worker/user.c: privilege drops, each checked; 0 or -errno. */
int	user_drop_gate(void);
int	user_drop_worker(const char *user, uid_t uid, gid_t gid, int ipc_only);
/*
 * 1 when a worker of uid would serve IPC$ only (the guest account, and no
 * share is `guest ok`): it then runs without the state group and the state
 * env, and refuses disk shares.
 */
int	user_worker_ipc_only(const struct conf *conf, uid_t uid);
/*
 * The state process: the `usmbd-state` account with the state group as
 * its only group (else `usmbd` or `nobody` with the state group, said in
 * the log).
 */
int	user_drop_state(void);
/* The ticket helper: to usmbd-krb (else usmbd, else nobody). */
int	user_drop_krb(void);
/* The state process's account and group (as above); 0 or -ENOENT. */
int	user_state_account(uid_t *uid, gid_t *gid, const char **name);
/* The uid the process was pinned to by the drop (no syscall after it). */
uid_t	user_euid(void);

#endif
