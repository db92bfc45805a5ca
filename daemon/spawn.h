/*
 * The master's child table: fork+exec of gates and user workers, their
 * channels, and the dispatch of the messages they send.
 */
#ifndef USMBD_DAEMON_SPAWN_H
#define USMBD_DAEMON_SPAWN_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "daemon/authmsg.h"

#define SPAWN_MAX_CHILDREN	512
#define SPAWN_HELLO_TIMEOUT	10	/* seconds a child has to send MSG_HELLO */
/* More credits than this from one gate is a broken gate. */
#define SPAWN_GATE_MAX_CREDITS	1024

enum child_role { CHILD_GATE = 1, CHILD_WORKER = 2 };

struct child {
	pid_t		 pid;		/* 0: free slot */
	enum child_role	 role;
	uid_t		 uid;
	gid_t		 gid;
	unsigned	 nsess;		/* worker: sessions in daemon/msess.c */
	char		 user[AUTH_NAME_MAX];	/* worker: its Unix account */
	int		 chan;		/* master's end; -1 once closed */
	int		 hello;		/* MSG_HELLO seen */
	int		 ready;		/* gate: has credits (room for a connection) */
	int		 dying;		/* told to stop or killed: route nothing to it */
	int		 stopping;	/* sent MSG_SHUTDOWN: its exit is expected */
	uint32_t	 nconn;		/* gate: connections given; worker: as reported */
	uint32_t	 credits;	/* gate: connections it will still take */
	uint32_t	 active;	/* gate: given and not yet MSG_GATE_CONN_END */
	int		 retiring;	/* gate: took its last connection, draining */
	uint32_t	 queued;	/* worker: routed, not yet acknowledged */
	time_t		 started;	/* wall clock, for status */
	int64_t		 started_ms;	/* monotonic, for hello timeout and backoff */
	/*
	 * The last authentication answer given to it, for logs and tests;
	 * routing uses the verdict recorded per request (route_verdict_*).
	 */
	int		 has_verdict;
	struct authmsg_rep verdict;
};

extern struct child spawn_children[SPAWN_MAX_CHILDREN];

struct child	*spawn_gate(void);
struct child	*spawn_worker(const char *user, uid_t uid, gid_t gid);
struct child	*spawn_find(pid_t pid);
/* The gate with the most credits (free capacity), or NULL if all are full. */
struct child	*spawn_ready_gate(void);
/* Closes the channel and sends SIGKILL; the slot is freed when reaped. */
void		 spawn_kill(struct child *c, const char *why);
/* Sends a message without fd; a failure kills the child.  0 or -errno. */
int		 spawn_send(struct child *c, uint32_t type, uint32_t id,
		    const void *payload, size_t len);
/* Sends type (no payload) to every live child. */
void		 spawn_broadcast(uint32_t type);
/* Keeps the gate pool at `gate processes`, with backoff; hello timeouts. */
void		 spawn_tick(void);
/* Milliseconds until spawn_tick has work, -1 for none. */
int		 spawn_timeout_ms(void);
/* Reads and dispatches the child's messages. */
void		 spawn_child_event(struct child *c);
/* Called by reap.c: frees the slot and books a fast gate death. */
void		 spawn_child_gone(struct child *c);
int		 spawn_count_alive(void);

#endif
