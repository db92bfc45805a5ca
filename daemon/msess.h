/*
 * The master's own table of sessions: session id -> the worker serving it
 * and that worker's uid.  It routes channel bindings (MS-SMB2 3.3.5.5),
 * never the shared state, which every worker can write.  A worker
 * announces each session it serves (MSG_SESSION_UP) and its end
 * (MSG_SESSION_DOWN); the master records it under that worker's pid and
 * uid, which are the master's own facts.  The first worker to claim an id
 * keeps it: another worker cannot take over a session id in use, and a
 * worker can only ever draw bindings of its own sessions.  A dead
 * worker's sessions go with it.
 */
#ifndef USMBD_DAEMON_MSESS_H
#define USMBD_DAEMON_MSESS_H

#include <stdint.h>
#include <sys/types.h>

#define MSESS_SLOTS		(1u << 17)	/* hash slots, a power of two */
#define MSESS_MAX		(1u << 16)	/* sessions the server tracks */
#define MSESS_PER_WORKER	8192		/* sessions one worker may hold */

/*
 * Records sid for worker pid of uid; *held counts that worker's sessions
 * (the caller keeps it with the worker).  0 (also when it already is that
 * worker's), -EEXIST (another worker's), -ENOSPC (the table or the
 * worker's share of it is full), -EINVAL (sid 0).
 */
int	msess_up(pid_t pid, uid_t uid, uint64_t sid, unsigned *held);
/* Forgets sid if worker pid holds it. */
void	msess_down(pid_t pid, uint64_t sid, unsigned *held);
/* Forgets every session of worker pid. */
void	msess_child_gone(pid_t pid);
/* The worker and uid of sid: 0, or -ENOENT. */
int	msess_find(uint64_t sid, pid_t *pid, uid_t *uid);
/*
 * Relayed sessions (several users on one connection): the master routed
 * session sid of worker owner's connection to worker (MSG_RELAY); when
 * that worker announces sid, its entry records owner, the worker holding
 * the socket (for `usmbctl status`; routing never uses it).  The owner's
 * word names only the session id, and only a session its relay's worker
 * announces itself gets it.
 */
#define MSESS_RELAYS_PENDING	256
void	msess_relay_expect(uint64_t sid, pid_t owner, pid_t worker,
	    int64_t now_ms);
/* The worker holding sid's socket when another serves it, else 0. */
pid_t	msess_owner(uint64_t sid);
/* Sessions held by worker pid (a walk of the table: for tests). */
unsigned msess_count(pid_t pid);

#endif
