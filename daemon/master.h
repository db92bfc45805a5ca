/*
 * The master process (daemon/main.c): its global state and the epoll loop
 * that every master module registers its fds with.  Only the master links
 * against this; children never see it.
 */
#ifndef USMBD_DAEMON_MASTER_H
#define USMBD_DAEMON_MASTER_H

#include <stdint.h>
#include <time.h>

struct conf;
struct passdb;

#define MASTER_SHUTDOWN_GRACE	5	/* seconds the children get to exit */

/* What an epoll event belongs to; the low 32 bits of the key are an index. */
enum master_ev {
	MASTER_EV_SIGNAL = 1,
	MASTER_EV_LISTEN,
	MASTER_EV_CTL,
	MASTER_EV_CTL_CLIENT,
	MASTER_EV_CHILD,
};

struct master {
	struct conf	*conf;
	char		*conf_path;	/* absolute: children and reloads re-read it */
	int		 debug_level;	/* -d N; -1 = the config's `log level` */
	int		 foreground;
	uint8_t		 guid[16];	/* server GUID, stable across restarts */
	time_t		 started;
	uint64_t	 started_filetime;
	struct passdb	*passdb;	/* NULL when it could not be opened */
	int		 epfd;
	int		 shutting_down;
	time_t		 shutdown_deadline;
	char		 pidfile[4096];
	/* Counters for `usmbctl metrics` (master side). */
	uint64_t	 auth_failures;	/* logons refused */
	uint64_t	 auth_successes;
	uint64_t	 child_deaths[6];	/* unexpected exits, by enum child_role */
	uint64_t	 child_starts[6];	/* children started, by enum child_role */
	/*
	 * Messages the master would have forwarded from one child to another
	 * (MSG_UNLINK_DO, MSG_CONN) but dropped: over the sender's rate or
	 * the receiver's share of its channel (daemon/spawn.c spawn_forward).
	 */
	uint64_t	 fwd_dropped;
	uint64_t	 log_dropped;	/* children's log lines over their rate */
};

extern struct master master;

int	master_ev_add(int fd, enum master_ev kind, uint32_t idx, uint32_t events);
int	master_ev_mod(int fd, enum master_ev kind, uint32_t idx, uint32_t events);
void	master_ev_del(int fd);
/*
 * Re-reads the config; on success swaps it in and applies it, on failure
 * keeps the old one.  Returns 0, or 2 with the first error line in err.
 * The workers of users deleted or disabled in the passdb are told to stop,
 * which drops their sessions; a removed share's existing trees are left to
 * the workers (`usmbctl reload --force` closes them).
 */
int	master_reload(char *err, size_t errlen);
/* log_level from -d, else the config's `log level`. */
void	master_apply_log_level(const struct conf *conf);
/* Stop accepting, tell the children, and exit once they are gone (<= 5 s). */
void	master_shutdown_begin(const char *why);
/* Current time in milliseconds on the monotonic clock. */
int64_t	master_now_ms(void);

#endif
