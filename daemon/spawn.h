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
/* Forwarded messages may fill at most this fraction (1/n) of a channel. */
#define SPAWN_FWD_SHARE		2

/*
 * CHILD_STATE: the state process (daemon/statectl.h), one at a time;
 * CHILD_SDW: the descriptor writer (worker/sdw.h), one;
 * CHILD_KRB: the ticket helper (worker/krb.c), one while a keytab is
 * configured.
 */
enum child_role {
	CHILD_GATE = 1, CHILD_WORKER = 2, CHILD_STATE = 3, CHILD_SDW = 4,
	CHILD_KRB = 5
};
#define CHILD_ROLES	6	/* arrays indexed by role */

/*
 * Rates of what a child makes the master do for it.  Log lines: a child
 * logs through the master, so a chatty or hostile one could fill the disk
 * or the master's time; past the rate lines are dropped and counted.
 * MSG_UNLINK_AS: a legitimate worker sends one per last close of a file
 * another user left delete pending and it could not unlink -- a handful,
 * rarely; a flood is dropped before the master looks at it.
 */
#define SPAWN_LOG_RATE		500	/* lines a second, per child */
#define SPAWN_LOG_BURST		2000
#define SPAWN_UNLINK_RATE	20	/* MSG_UNLINK_AS a second, per worker */
#define SPAWN_UNLINK_BURST	200

/* A token bucket: up to burst at once, rate a second on average. */
struct spawn_bucket {
	int64_t		 last_ms;	/* 0: full, not yet used */
	int64_t		 milli;		/* tokens x 1000 */
	uint64_t	 dropped;	/* refused, for the log and metrics */
	uint64_t	 reported;	/* dropped as of the last log line */
	int64_t		 reported_ms;
};

struct child {
	pid_t		 pid;		/* 0: free slot */
	enum child_role	 role;
	uid_t		 uid;
	gid_t		 gid;
	unsigned	 nsess;		/* worker: sessions in daemon/msess.c */
	char		 user[AUTH_NAME_MAX];	/* worker: its Unix account */
	/* worker: the client address of its next MSG_RELAY (MSG_RELAY_PEER) */
	char		 relay_peer[AUTHMSG_PEER_MAX];
	uint32_t	 relay_peer_id;		/* that MSG_RELAY's id */
	int		 relay_peer_set;
	int		 chan;		/* master's end; -1 once closed */
	int		 hello;		/* MSG_HELLO seen */
	int		 ready;		/* gate: has credits (room for a connection) */
	int		 dying;		/* told to stop or killed: route nothing to it */
	int		 stopping;	/* sent MSG_SHUTDOWN: its exit is expected */
	uint32_t	 nconn;		/* gate: connections given; worker: as reported */
	uint32_t	 credits;	/* gate: connections it will still take */
	uint32_t	 active;	/* gate: given and not yet MSG_GATE_CONN_END */
	/* gate: took its last connection, draining; sdw: a successor starts */
	int		 retiring;
	uint32_t	 queued;	/* worker: routed, not yet acknowledged */
	time_t		 started;	/* wall clock, for status */
	int64_t		 started_ms;	/* monotonic, for hello timeout and backoff */
	/*
	 * The last authentication answer given to it, for logs and tests;
	 * routing uses the verdict recorded per request (route_verdict_*).
	 */
	int		 has_verdict;
	struct authmsg_rep verdict;
	struct spawn_bucket log_rate;	/* MSG_LOG */
	struct spawn_bucket unlink_rate;	/* MSG_UNLINK_AS */
	struct spawn_bucket admin_rate;	/* MSG_ADMIN_REQ (daemon/admreq.h) */
	int64_t		 admin_refused_ms;	/* its last admin group lookup
						   that refused it (admreq.c) */
	uint64_t	 fwd_dropped;	/* forwarded to it, not queued */
	int		 users_pending;	/* worker: MSG_USERS waits for room */
};

extern struct child spawn_children[SPAWN_MAX_CHILDREN];

struct child	*spawn_gate(void);
struct child	*spawn_worker(const char *user, uid_t uid, gid_t gid);
struct child	*spawn_state(uid_t uid, gid_t gid);
/* "gate", "worker" or "state". */
const char	*spawn_role_name(const struct child *c);
struct child	*spawn_find(pid_t pid);
/* The gate with the most credits (free capacity), or NULL if all are full. */
struct child	*spawn_ready_gate(void);
/* Closes the channel and sends SIGKILL; the slot is freed when reaped. */
void		 spawn_kill(struct child *c, const char *why);
/*
 * Sends one of the master's own messages (no fd).  A failure kills the
 * child: with forwarded traffic held to a share of the channel
 * (spawn_forward), only the master's own messages -- a few, each the
 * master's own doing -- can fill the rest, and a child that lets them
 * pile up has stopped reading its channel: it can no longer be handed
 * connections, reloaded or stopped.  0 or -errno.
 */
int		 spawn_send(struct child *c, uint32_t type, uint32_t id,
		    const void *payload, size_t len);
/*
 * Passes on to c what another child asked for (MSG_UNLINK_DO, MSG_CONN
 * with its fd, or fd -1).  Never kills: when c's channel already holds
 * SPAWN_FWD_SHARE of its buffer in unread messages, or cannot take this
 * one, the message is dropped and counted (c->fwd_dropped,
 * master.fwd_dropped, a rate-limited log line).  0 or -errno.
 */
int		 spawn_forward(struct child *c, uint32_t type, uint32_t id,
		    const void *payload, size_t len, int fd);
/* Takes a token from b (rate a second, burst at most); 1 if there was one. */
int		 spawn_bucket_take(struct spawn_bucket *b, int rate, int burst,
		    int64_t now_ms);
/*
 * At most one line a second (the first drop at once) about what b
 * dropped of c's messages (what: "log lines"...), sent at rate a second.
 */
void		 spawn_bucket_report(const struct child *c,
		    struct spawn_bucket *b, const char *what, int rate,
		    int64_t now_ms);
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
