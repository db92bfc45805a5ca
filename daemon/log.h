/*
 * Logging for every process.  The master writes: in the foreground (or
 * before daemonising) to stderr; afterwards to `log file` (created 0640) or
 * syslog.  Children (gates, workers) send their lines to the master on
 * their channel (MSG_LOG, log_to_channel) and hold no descriptor of the
 * log; the master rate-limits them (daemon/spawn.c) and writes them under
 * the tag and pid it knows the child by.  Every line written is escaped
 * (log_escape): a name with a newline cannot forge a line.  The level is a
 * global so usmbctl debug can change it at run time.
 */
#ifndef USMBD_DAEMON_LOG_H
#define USMBD_DAEMON_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define LOG_LINE_MAX	1024	/* bytes of one line's text, before escaping */

extern int log_level;	/* 0 errors .. 10 everything; -d N sets it */

/* tag is the process role ("master", "gate", "worker alice"). */
void	log_init(const char *tag, int to_stderr);
/* Switch to a file (path != NULL) or syslog (path == NULL); 0 or -errno. */
int	log_open(const char *path);
void	log_set_tag(const char *tag);
/* A child: from now on every line goes to the master over fd (MSG_LOG). */
void	log_to_channel(int fd);
/*
 * Copies src (len bytes, up to a NUL) into dst (cap bytes, NUL-terminated)
 * with every byte that is not printable ASCII or well-formed printable
 * UTF-8 written as \xNN; returns the length written.  cap >= 4 * len + 1
 * keeps it all.
 */
size_t	log_escape(char *dst, size_t cap, const char *src, size_t len);
/* Writes one line as process tag[pid] (the master, for a child's MSG_LOG). */
void	log_emit(int prio, const char *tag, int pid, const char *text, size_t len);

void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* adds errno */
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void	fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));	/* adds errno */
void	fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
