#include "daemon/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

int log_level = 1;

static int	 log_stderr = 1;
static FILE	*log_fp;
static char	 log_tag[64] = "usmbd";

void
log_init(const char *tag, int to_stderr)
{
	log_set_tag(tag);
	log_stderr = to_stderr;
	if (!to_stderr)
		openlog("usmbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_set_tag(const char *tag)
{
	snprintf(log_tag, sizeof(log_tag), "%s", tag);
}

int
log_open(const char *path)
{
	FILE *fp;

	if (path == NULL || *path == '\0') {
		if (log_fp != NULL)
			fclose(log_fp);
		log_fp = NULL;
		log_stderr = 0;
		openlog("usmbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		return 0;
	}
	fp = fopen(path, "ae");
	if (fp == NULL)
		return -errno;
	setvbuf(fp, NULL, _IOLBF, 0);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = fp;
	log_stderr = 0;
	return 0;
}

static void
log_vemit(int prio, const char *fmt, va_list ap, int err)
{
	char msg[1024];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(err));
	if (log_stderr) {
		fprintf(stderr, "usmbd[%d] %s: %s\n", (int)getpid(), log_tag, msg);
		fflush(stderr);
	} else if (log_fp != NULL) {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;

		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
		fprintf(log_fp, "%s usmbd[%d] %s: %s\n", ts, (int)getpid(), log_tag, msg);
	} else
		syslog(prio, "%s: %s", log_tag, msg);
}

#define LOG_BODY(prio, err) do {		\
	va_list ap;				\
	int saved = errno;			\
	va_start(ap, fmt);			\
	log_vemit(prio, fmt, ap, err);		\
	va_end(ap);				\
	errno = saved;				\
} while (0)

void
log_warn(const char *fmt, ...)
{
	int e = errno;

	LOG_BODY(LOG_WARNING, e);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_WARNING, 0);
}

void
log_info(const char *fmt, ...)
{
	if (log_level < 1)
		return;
	LOG_BODY(LOG_INFO, 0);
}

void
log_debug(int level, const char *fmt, ...)
{
	if (log_level < level)
		return;
	LOG_BODY(LOG_DEBUG, 0);
}

void
fatal(const char *fmt, ...)
{
	int e = errno;

	LOG_BODY(LOG_CRIT, e);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, 0);
	exit(1);
}
