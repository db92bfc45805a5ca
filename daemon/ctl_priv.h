/*
 * Internals of the master's control socket shared by daemon/ctl.c (the
 * socket, parsing, simple answers), daemon/ctl_ops.c (requests that ask the
 * children and wait for their answers) and daemon/ctl_info.c (status
 * rendering).
 */
#ifndef USMBD_DAEMON_CTL_PRIV_H
#define USMBD_DAEMON_CTL_PRIV_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon/ctl.h"

struct child;
struct msg;

#define CTL_MAX_ARGS		8
#define CTL_QUERY_TIMEOUT_MS	2000	/* children get this long to answer */

/* One child's answer to a query: a copy of its payload. */
struct ctl_reply {
	pid_t		 pid;
	uint32_t	 type;
	uint32_t	 len;
	uint8_t		*data;
};

/* A request waiting for the children it asked. */
struct ctl_query {
	int		 active;
	uint32_t	 id;		/* the messages' id */
	uint32_t	 want;		/* the reply type expected */
	int64_t		 deadline_ms;
	int		 nsent;
	int		 ngot;
	pid_t		*pids;		/* nsent entries */
	pid_t		 state_pid;	/* the state process, if it was asked */
	struct ctl_reply *replies;	/* ngot entries */
};

struct ctl_client {
	int		 fd;		/* 0 = free (fd 0 is stdin, never a client) */
	int64_t		 since_ms;
	size_t		 len;
	char		 line[CTL_LINE_MAX + 1];
	/* the request split on blanks (points into args_buf) */
	int		 argc;
	char		*argv[CTL_MAX_ARGS];
	char		 args_buf[CTL_LINE_MAX + 1];
	struct ctl_query q;
};

/* ctl.c: starts asking c (type, payload) as part of cl's query. */
int	ctl_query_begin(struct ctl_client *cl, uint32_t want);
int	ctl_query_send(struct ctl_client *cl, struct child *c, uint32_t type,
	    const void *payload, size_t len);
void	ctl_iso8601(time_t t, char *buf, size_t len);
void	ctl_json_str(FILE *f, const char *s);

/*
 * ctl_ops.c: answers cl's request.  Returns 0 when the answer ("OK\n..."
 * or "ERR ...\n") is written to f, 1 when a query was started (the answer
 * comes from ctl_ops_finish once the children answered or the deadline
 * passed), -1 for a request it does not know.
 */
int	ctl_ops_request(struct ctl_client *cl, FILE *f);
void	ctl_ops_finish(struct ctl_client *cl, FILE *f);
/*
 * A child's counters (a MSG_METRICS_REP payload, worker/metrics.h) become
 * its last known ones; 0, or -1 when malformed.
 */
int	ctl_ops_metrics_note(pid_t pid, const uint8_t *p, size_t len);
/* The child is gone: its last known counters join the retained total. */
void	ctl_ops_metrics_gone(pid_t pid);

/*
 * ctl_info.c: `status` from the state process's and the workers'
 * MSG_INFO_REP.
 */
#define CTL_STATUS_PROCESSES	0x01
#define CTL_STATUS_SESSIONS	0x02
#define CTL_STATUS_SHARES	0x04
#define CTL_STATUS_OPENS	0x08
#define CTL_STATUS_LOCKS	0x10
#define CTL_STATUS_ALL		0x1f
#define CTL_STATUS_BRIEF	0x100
#define CTL_STATUS_JSON		0x200
void	ctl_info_status(FILE *f, unsigned what, const struct ctl_query *q);

#endif
