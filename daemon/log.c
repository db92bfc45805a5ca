/*
 * Logging.  Children hold no descriptor of the log: their stdin, stdout
 * and stderr are /dev/null (sanitizer builds keep stderr, for ASan/UBSan
 * reports in tests), and every line goes to the master as MSG_LOG on the
 * channel (log_to_channel; a full channel drops the line and the next one
 * says how many were lost).  The master rate-limits them per child
 * (SPAWN_LOG_RATE 500 lines/s, burst 2000; drops counted in
 * usmbd_log_lines_dropped_total and said once a second) and writes them
 * under the role, user and pid it knows the child by.  Every line the
 * master writes (stderr, `log file`, syslog) is escaped by log_escape:
 * bytes that are not printable ASCII or well-formed printable UTF-8 (C0
 * and C1 controls, DEL, stray bytes) become \xNN, so a user name with a
 * newline forges no line.  `log file` is created 0640.
 */
#include "daemon/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "daemon/msg.h"

int log_level = 1;

static int	 log_stderr = 1;
static FILE	*log_fp;
static char	 log_tag[64] = "usmbd";
static int	 log_chan = -1;		/* a child: lines go to the master */
static unsigned	 log_chan_lost;		/* lines the channel could not take */

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

void
log_to_channel(int fd)
{
	log_chan = fd;
}

int
log_open(const char *path)
{
	FILE *fp;
	int fd;

	if (path == NULL || *path == '\0') {
		if (log_fp != NULL)
			fclose(log_fp);
		log_fp = NULL;
		log_stderr = 0;
		openlog("usmbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		return 0;
	}
	/*
	 * 0640: the log names users and addresses; it is no one else's
	 * business.  An existing file keeps its mode (logrotate's create
	 * line decides it).
	 */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY,
	    0640);
	if (fd == -1)
		return -errno;
	if ((fp = fdopen(fd, "a")) == NULL) {
		int e = errno;

		close(fd);
		return -e;
	}
	setvbuf(fp, NULL, _IOLBF, 0);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = fp;
	log_stderr = 0;
	return 0;
}

size_t
log_escape(char *dst, size_t cap, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)src, *end = p + len;
	size_t o = 0;

	if (cap == 0)
		return 0;
	while (p < end && *p != '\0') {
		size_t n = 1, i;
		int ok;

		/*
		 * Printable ASCII as is; a well-formed UTF-8 sequence of a
		 * printable character as is (user and file names are UTF-8);
		 * anything else -- C0 and C1 controls, DEL, stray bytes --
		 * as \xNN, so no byte a client chose can end a line, move
		 * a terminal's cursor or pass for another record.
		 */
		if (*p >= 0x20 && *p < 0x7f)
			ok = 1;
		else if (*p >= 0xc2 && *p <= 0xf4) {
			n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
			ok = (size_t)(end - p) >= n;
			for (i = 1; ok && i < n; i++)
				ok = (p[i] & 0xc0) == 0x80;
			/* U+0080..U+009F are the C1 controls. */
			if (ok && p[0] == 0xc2 && p[1] < 0xa0)
				ok = 0;
			/* Overlong and out-of-range forms. */
			if (ok && ((p[0] == 0xe0 && p[1] < 0xa0) ||
			    (p[0] == 0xf0 && p[1] < 0x90) ||
			    (p[0] == 0xf4 && p[1] >= 0x90) ||
			    (p[0] == 0xed && p[1] >= 0xa0)))
				ok = 0;
			if (!ok)
				n = 1;
		} else
			ok = 0;
		if (ok) {
			if (o + n >= cap)
				break;
			memcpy(dst + o, p, n);
			o += n;
		} else {
			if (o + 4 >= cap)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[*p >> 4];
			dst[o++] = hex[*p & 0xf];
		}
		p += n;
	}
	dst[o] = '\0';
	return o;
}

void
log_emit(int prio, const char *tag, int pid, const char *text, size_t len)
{
	char msg[LOG_LINE_MAX * 4 + 1], etag[256];

	(void)log_escape(msg, sizeof(msg), text, len);
	(void)log_escape(etag, sizeof(etag), tag, strlen(tag));
	tag = etag;
	if (log_stderr) {
		fprintf(stderr, "usmbd[%d] %s: %s\n", pid, tag, msg);
		fflush(stderr);
	} else if (log_fp != NULL) {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;

		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
		fprintf(log_fp, "%s usmbd[%d] %s: %s\n", ts, pid, tag, msg);
	} else if (pid == (int)getpid())
		syslog(prio, "%s: %s", tag, msg);
	else
		syslog(prio, "%s[%d]: %s", tag, pid, msg);
}

/*
 * A child's line goes to the master as MSG_LOG (u8 priority, then the
 * text): children hold no descriptor of the log and no syslog socket, and
 * the master escapes what it writes.  A full channel drops the line; the
 * next one that gets through says how many were lost.
 */
static void
log_send(int prio, const char *msg, size_t len)
{
	uint8_t buf[1 + LOG_LINE_MAX + 64];
	size_t off = 1;
	int n;

	buf[0] = (uint8_t)prio;
	if (log_chan_lost > 0) {
		n = snprintf((char *)buf + 1, sizeof(buf) - 1,
		    "(%u lines lost) ", log_chan_lost);
		if (n > 0 && (size_t)n < sizeof(buf) - 1)
			off += (size_t)n;
	}
	if (len > sizeof(buf) - off)
		len = sizeof(buf) - off;
	memcpy(buf + off, msg, len);
	if (msg_send(log_chan, MSG_LOG, 0, buf, off + len, -1) != 0)
		log_chan_lost++;
	else
		log_chan_lost = 0;
}

static void
log_vemit(int prio, const char *fmt, va_list ap, int err)
{
	char msg[LOG_LINE_MAX];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	if (err && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(err));
	if (log_chan >= 0)
		log_send(prio, msg, strlen(msg));
	else
		log_emit(prio, log_tag, (int)getpid(), msg, strlen(msg));
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
