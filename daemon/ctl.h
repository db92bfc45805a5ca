/*
 * The control socket between usmbctl and the master.
 *
 * A unix stream socket CTL_SOCKET_NAME in `lock directory`, mode 0600; the
 * master serves only peers whose SO_PEERCRED uid is 0.  The client sends one
 * request line (at most CTL_LINE_MAX bytes, ending in '\n'), words
 * separated by blanks, and the master answers with a first line "OK" or
 * "ERR message", then the body, and closes the connection.  Requests (usmbctl(8) documents them and
 * the JSON schema of `status --json`):
 *
 *	ping [PID]		"pid N uptime S"; with PID, that process answers
 *	status [--processes] [--sessions] [--shares] [--locks] [--brief] [--json]
 *	metrics			Prometheus text format
 *	debug N [PID|all]	log level of one process or of all
 *	close-share NAME	disconnects every tree on the share
 *	kill-client ADDRESS	drops the client's connections (ADDR or ADDR:PORT)
 *	kill-session ID		ends one session (hex id, as status shows it)
 *	close-file FILEID	closes an open file (srvsvc's FileId, as
 *				NetrFileEnum shows it; decimal or 0x hex)
 *	reload [--force]	re-reads the config ("ERR FILE:LINE: ..." keeps
 *				the old one); --force closes the trees of removed
 *				shares
 *	shutdown		the master stops after answering
 *
 * Requests that ask the children wait for their answers (MSG_PONG,
 * MSG_CTL_DONE, MSG_INFO_REP, MSG_METRICS_REP) at most
 * CTL_QUERY_TIMEOUT_MS, then answer with what arrived and name the
 * processes that did not answer.
 */
#ifndef USMBD_DAEMON_CTL_H
#define USMBD_DAEMON_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CTL_SOCKET_NAME	"usmbd.ctl"
#define CTL_LINE_MAX	256
#define CTL_MAX_CLIENTS	8
#define CTL_TIMEOUT_MS	5000

/* Master side. */
int	ctl_open(const char *lock_dir);
void	ctl_close(void);
void	ctl_accept(void);
void	ctl_client_event(uint32_t idx);
/* A child's answer to a query (spawn.c, for the reply message types). */
struct child;
struct msg;
void	ctl_child_reply(struct child *c, const struct msg *m);
/*
 * reap.c, for a child just reaped (before spawn_child_gone): reads what it
 * sent before it died for its final counters, and keeps its counters in
 * the totals of `metrics`.
 */
void	ctl_child_gone(struct child *c);
/* Drops clients that did not send their line within CTL_TIMEOUT_MS. */
void	ctl_tick(void);

/* Writes "DIR/usmbd.ctl" into buf; 0 or -ENAMETOOLONG. */
int	ctl_socket_path(const char *lock_dir, char *buf, size_t len);

/*
 * Client side (usmbctl): sends request, copies the body to out.  Returns 0
 * for OK, 1 for ERR (message, without "ERR ", in err), -errno when the
 * socket could not be reached or the answer was cut short.
 */
int	ctl_call(const char *sock_path, const char *request, FILE *out,
	    char *err, size_t errlen);

#endif
