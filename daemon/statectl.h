/*
 * The master's side of the state process (worker/statep.c): it starts it,
 * restarts it when it dies (with a fresh environment when it failed twice
 * on the same files), sends it the purges of dead children without ever
 * waiting for it, keeps its last counts for `usmbctl metrics`, and acts on
 * its writer-lock reports after checking the process in /proc.  The master
 * itself never opens the state env (HACKING.md, security model).
 */
#ifndef USMBD_DAEMON_STATECTL_H
#define USMBD_DAEMON_STATECTL_H

#include <stdint.h>
#include <sys/types.h>

struct child;
struct msg;

/* Purges kept while the state process is down; the oldest goes first. */
#define STATECTL_PENDING_MAX	1024
/* Purges sent again to a restarted state process (the last ones). */
#define STATECTL_RESEND		64
/* Two abnormal ends within this time of each other count as "again". */
#define STATECTL_FAIL_WINDOW_MS	(10 * 60 * 1000)
/* A writer lock held by a running process this long: it is wedged. */
#define STATECTL_WEDGED_MS	10000
/*
 * A state process that sent no counts (every STATEMSG_COUNTS_MS) for this
 * long is stuck: killed, and restarted.  Longer than the watchdog needs to
 * free a writer lock it may be waiting for (STATECTL_WEDGED_MS + reports).
 */
#define STATECTL_SILENT_MS	15000
/* Counts older than this are not shown as current. */
#define STATECTL_COUNTS_STALE_MS 10000

/* At start: empty state files (made as root, never opened), then the process. */
int	statectl_start(void);
/* Each loop turn: (re)starts the state process when it is due. */
void	statectl_tick(void);
/* Milliseconds until statectl_tick has work, -1 for none. */
int	statectl_timeout_ms(void);
/* The live state process, or NULL. */
struct child *statectl_child(void);
/* Its hello: the purges that waited go out. */
void	statectl_hello(struct child *c);
/* reap.c: the state process ended with status (waitpid's). */
void	statectl_gone(struct child *c, int status);
/* reap.c: a child died; its shared state is to be purged. */
void	statectl_purge(pid_t pid);
/* spawn.c: MSG_STATE_COUNTS and MSG_STATE_WRITER; -1 when malformed. */
int	statectl_counts_msg(const struct msg *m);
int	statectl_writer_msg(const struct msg *m);
/* The last counts (-1 each when none is recent). */
void	statectl_counts(long *sessions, long *opens, long *locks);
/* Times the env was started afresh after failures (metrics). */
uint64_t statectl_fresh_count(void);

/*
 * /proc/PID/stat's state letter ('R', 'S', 'T', 't', ...), or 0 when the
 * file cannot be read or parsed.  Exposed for the tests.
 */
char	statectl_proc_state(pid_t pid);

#endif
