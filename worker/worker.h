/*
 * Entry points of the two child roles, called by daemon/main.c after it has
 * dropped privileges (worker/user.c).  chan is the channel to the master
 * (MSG_CHILD_FD).  Both return the process exit code.
 */
#ifndef USMBD_WORKER_WORKER_H
#define USMBD_WORKER_WORKER_H

#include <sys/types.h>

struct conf;

int	gate_main(struct conf *conf, const char *conf_path, int chan);
/* worker/sdw.c: the descriptor writer; binds its socket, drops itself. */
int	sdw_main(struct conf *conf, int chan);
int	worker_main(struct conf *conf, const char *conf_path, int chan,
	    const char *user, uid_t uid, gid_t gid);

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
 * worker/smb2_session.c: a new session s that named a PreviousSessionId
 * (MS-SMB2 3.3.5.5.3) ends that older session of the same user on any
 * connection of this worker (the client lost or gave up the old one).
 */
struct session;
void	smb2_session_replace_previous(struct conn *c, struct session *s);

/* worker/user.c: privilege drops, each checked; 0 or -errno. */
int	user_drop_gate(void);
int	user_drop_worker(const char *user, uid_t uid, gid_t gid);
/* The uid the process was pinned to by the drop (no syscall after it). */
uid_t	user_euid(void);

#endif
