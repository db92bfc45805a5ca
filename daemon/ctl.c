/*
 * The control socket (protocol in daemon/ctl.h).  The master side accepts in
 * its loop, reads one request line without blocking, answers, and closes.
 * The client side is daemon/ctl_call.c.
 */
#include "daemon/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/spawn.h"

struct ctl_client {
	int	 fd;		/* 0 = free (fd 0 is stdin, never a client) */
	int64_t	 since_ms;
	size_t	 len;
	char	 line[CTL_LINE_MAX + 1];
};

static int			ctl_fd = -1;
static char			ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct ctl_client	ctl_clients[CTL_MAX_CLIENTS];

int
ctl_open(const char *lock_dir)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	if (ctl_socket_path(lock_dir, ctl_path, sizeof(ctl_path)) != 0) {
		log_warnx("%s: control socket path too long", lock_dir);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, ctl_path, strlen(ctl_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		log_warn("control socket");
		return -1;
	}
	/* We hold the pidfile, so a socket left here is a dead master's. */
	(void)unlink(ctl_path);
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		log_warn("bind %s", ctl_path);
		close(fd);
		return -1;
	}
	umask(old);
	if (chmod(ctl_path, 0600) == -1 || listen(fd, 8) == -1) {
		log_warn("%s", ctl_path);
		close(fd);
		(void)unlink(ctl_path);
		return -1;
	}
	if (master.epfd >= 0 && master_ev_add(fd, MASTER_EV_CTL, 0, EPOLLIN) != 0) {
		log_warn("epoll_ctl control socket");
		close(fd);
		(void)unlink(ctl_path);
		return -1;
	}
	ctl_fd = fd;
	return 0;
}

static void
ctl_drop(struct ctl_client *cl)
{
	master_ev_del(cl->fd);
	close(cl->fd);
	memset(cl, 0, sizeof(*cl));
}

void
ctl_close(void)
{
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (ctl_clients[i].fd > 0)
			ctl_drop(&ctl_clients[i]);
	if (ctl_fd >= 0) {
		master_ev_del(ctl_fd);
		close(ctl_fd);
		(void)unlink(ctl_path);
	}
	ctl_fd = -1;
}

void
ctl_accept(void)
{
	struct ucred cred;
	socklen_t sl = sizeof(cred);
	struct ctl_client *cl = NULL;
	int fd, i;

	fd = accept4(ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("accept on control socket");
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl) == -1 ||
	    cred.uid != 0) {
		log_warnx("control socket: refusing uid %d",
		    sl == sizeof(cred) ? (int)cred.uid : -1);
		close(fd);
		return;
	}
	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (ctl_clients[i].fd == 0) {
			cl = &ctl_clients[i];
			break;
		}
	if (cl == NULL || master_ev_add(fd, MASTER_EV_CTL_CLIENT,
	    (uint32_t)i, EPOLLIN) != 0) {
		log_warnx("control socket: too many clients");
		close(fd);
		return;
	}
	cl->fd = fd;
	cl->since_ms = master_now_ms();
	cl->len = 0;
}

void
ctl_tick(void)
{
	int64_t now = master_now_ms();
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++)
		if (ctl_clients[i].fd > 0 &&
		    now - ctl_clients[i].since_ms > CTL_TIMEOUT_MS)
			ctl_drop(&ctl_clients[i]);
}

static void
ctl_iso8601(time_t t, char *buf, size_t len)
{
	struct tm tm;

	strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&t, &tm));
}

static void
ctl_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* A worker reports its count; a gate serves one connection while not ready. */
static unsigned
ctl_child_conns(const struct child *c)
{
	if (c->role == CHILD_WORKER)
		return c->nconn;
	return c->hello && !c->ready && !c->dying && c->nconn > 0 ? 1 : 0;
}

static void
ctl_status_json(FILE *f)
{
	char ts[40];
	int i, first = 1;

	ctl_iso8601(master.started, ts, sizeof(ts));
	fprintf(f, "{\"master\": {\"pid\": %d, \"started\": \"%s\"}, "
	    "\"processes\": [", (int)getpid(), ts);
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		const struct child *c = &spawn_children[i];

		if (c->pid <= 0)
			continue;
		fprintf(f, "%s{\"pid\": %d, \"role\": \"%s\", \"user\": ",
		    first ? "" : ", ", (int)c->pid,
		    c->role == CHILD_GATE ? "gate" : "worker");
		if (c->role == CHILD_WORKER)
			ctl_json_str(f, c->user);
		else
			fputs("null", f);
		fprintf(f, ", \"connections\": %u}", ctl_child_conns(c));
		first = 0;
	}
	fputs("], \"sessions\": [], \"opens\": []}\n", f);
}

static void
ctl_status_table(FILE *f)
{
	char ts[40];
	int i;

	ctl_iso8601(master.started, ts, sizeof(ts));
	fprintf(f, "%-8s %-7s %-16s %11s  %s\n", "PID", "ROLE", "USER",
	    "CONNECTIONS", "STARTED");
	fprintf(f, "%-8d %-7s %-16s %11s  %s\n", (int)getpid(), "master", "-",
	    "-", ts);
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		const struct child *c = &spawn_children[i];

		if (c->pid <= 0)
			continue;
		ctl_iso8601(c->started, ts, sizeof(ts));
		fprintf(f, "%-8d %-7s %-16s %11u  %s%s\n", (int)c->pid,
		    c->role == CHILD_GATE ? "gate" : "worker",
		    c->role == CHILD_WORKER ? c->user : "-",
		    ctl_child_conns(c),
		    ts, c->dying ? " (stopping)" : "");
	}
}

/* Builds the whole answer in memory: the socket is written once, then closed. */
static void
ctl_answer(struct ctl_client *cl)
{
	char *text = NULL, err[512];
	size_t sz = 0, off = 0;
	int shutdown_after = 0, i;
	FILE *f;

	f = open_memstream(&text, &sz);
	if (f == NULL) {
		ctl_drop(cl);
		return;
	}
	log_debug(2, "control: %s", cl->line);
	if (strcmp(cl->line, "ping") == 0)
		fprintf(f, "OK\npid %d uptime %lld\n", (int)getpid(),
		    (long long)(time(NULL) - master.started));
	else if (strcmp(cl->line, "status") == 0) {
		fputs("OK\n", f);
		ctl_status_table(f);
	} else if (strcmp(cl->line, "status --json") == 0) {
		fputs("OK\n", f);
		ctl_status_json(f);
	} else if (strcmp(cl->line, "reload") == 0) {
		if (master_reload(err, sizeof(err)) == 0)
			fputs("OK\nreloaded\n", f);
		else
			fprintf(f, "ERR %s\n", err);
	} else if (strcmp(cl->line, "shutdown") == 0) {
		fputs("OK\nshutting down\n", f);
		shutdown_after = 1;
	} else
		fprintf(f, "ERR unknown request: %.64s\n", cl->line);
	fclose(f);
	/* The client waits for the answer, so a blocking write is short. */
	(void)fcntl(cl->fd, F_SETFL, 0);
	{
		struct timeval tv = { .tv_sec = 1 };

		(void)setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	for (i = 0; off < sz && i < 1024; i++) {
		ssize_t n = send(cl->fd, text + off, sz - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(text);
	ctl_drop(cl);
	if (shutdown_after)
		master_shutdown_begin("usmbctl shutdown");
}

void
ctl_client_event(uint32_t idx)
{
	struct ctl_client *cl;
	char *nl;
	ssize_t n;

	if (idx >= CTL_MAX_CLIENTS || ctl_clients[idx].fd <= 0)
		return;
	cl = &ctl_clients[idx];
	n = recv(cl->fd, cl->line + cl->len, CTL_LINE_MAX - cl->len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctl_drop(cl);
		return;
	}
	cl->len += (size_t)n;
	cl->line[cl->len] = '\0';
	nl = memchr(cl->line, '\n', cl->len);
	if (nl == NULL) {
		if (cl->len >= CTL_LINE_MAX)
			ctl_drop(cl);
		return;
	}
	*nl = '\0';
	if (nl > cl->line && nl[-1] == '\r')
		nl[-1] = '\0';
	ctl_answer(cl);
}
