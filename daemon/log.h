/*
 * Logging for every process.  In the foreground (or before daemonising) lines
 * go to stderr; afterwards to `log file` or syslog.  The level is a global so
 * usmbctl debug can change it at run time.
 */
#ifndef USMBD_DAEMON_LOG_H
#define USMBD_DAEMON_LOG_H

#include <stdarg.h>

extern int log_level;	/* 0 errors .. 10 everything; -d N sets it */

/* tag is the process role ("master", "gate", "worker alice"). */
void	log_init(const char *tag, int to_stderr);
/* Switch to a file (path != NULL) or syslog (path == NULL); 0 or -errno. */
int	log_open(const char *path);
void	log_set_tag(const char *tag);

void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* adds errno */
void	log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void	fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));	/* adds errno */
void	fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
