/*
 * The control socket (protocol in daemon/ctl.h).  The master side accepts in
 * its loop, reads one request line without blocking, answers, and closes.
 * The client side is daemon/ctl_call.c.
 */
#include "daemon/ctl.h"
#include "daemon/ctl_priv.h"

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
#include "daemon/msg.h"
#include "daemon/spawn.h"

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
ctl_query_free(struct ctl_query *q)
{
	int i;

	for (i = 0; i < q->ngot; i++)
		free(q->replies[i].data);
	free(q->replies);
	free(q->pids);
	memset(q, 0, sizeof(*q));
}

static void
ctl_drop(struct ctl_client *cl)
{
	ctl_query_free(&cl->q);
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

/* Sends the answer once, then closes: the client reads until EOF. */
static void
ctl_send_answer(struct ctl_client *cl, const char *text, size_t sz)
{
	struct timeval tv = { .tv_sec = 1 };
	size_t off = 0;
	int i;

	/* The client waits for the answer, so a blocking write is short. */
	(void)fcntl(cl->fd, F_SETFL, 0);
	(void)setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; off < sz && i < 1024; i++) {
		ssize_t n = send(cl->fd, text + off, sz - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	ctl_drop(cl);
}

/* The query of cl is complete (or timed out): write its answer. */
static void
ctl_query_done(struct ctl_client *cl)
{
	char *text = NULL;
	size_t sz = 0;
	FILE *f;

	f = open_memstream(&text, &sz);
	if (f == NULL) {
		ctl_drop(cl);
		return;
	}
	ctl_ops_finish(cl, f);
	fclose(f);
	ctl_send_answer(cl, text, sz);
	free(text);
}

void
ctl_tick(void)
{
	int64_t now = master_now_ms();
	int i;

	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &ctl_clients[i];

		if (cl->fd <= 0)
			continue;
		if (cl->q.active) {
			if (now >= cl->q.deadline_ms)
				ctl_query_done(cl);
		} else if (now - cl->since_ms > CTL_TIMEOUT_MS)
			ctl_drop(cl);
	}
}

void
ctl_iso8601(time_t t, char *buf, size_t len)
{
	struct tm tm;

	strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&t, &tm));
}

void
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

static uint32_t	ctl_next_query_id = 1;

int
ctl_query_begin(struct ctl_client *cl, uint32_t want)
{
	struct ctl_query *q = &cl->q;

	ctl_query_free(q);
	q->pids = calloc(SPAWN_MAX_CHILDREN, sizeof(*q->pids));
	q->replies = calloc(SPAWN_MAX_CHILDREN, sizeof(*q->replies));
	if (q->pids == NULL || q->replies == NULL) {
		ctl_query_free(q);
		return -ENOMEM;
	}
	/* Ids of queries never collide with the ids children use (0 here). */
	q->id = ctl_next_query_id++ | 0x80000000u;
	q->want = want;
	q->active = 1;
	q->deadline_ms = master_now_ms() + CTL_QUERY_TIMEOUT_MS;
	return 0;
}

int
ctl_query_send(struct ctl_client *cl, struct child *c, uint32_t type,
    const void *payload, size_t len)
{
	struct ctl_query *q = &cl->q;

	if (!q->active || q->nsent >= SPAWN_MAX_CHILDREN || c->pid <= 0 ||
	    c->chan < 0 || !c->hello)
		return -EINVAL;
	if (spawn_send(c, type, q->id, payload, len) != 0)
		return -EPIPE;
	q->pids[q->nsent++] = c->pid;
	return 0;
}

/*
 * A child answered an operations message (spawn.c calls this for the reply
 * types).  An answer nobody waits for (late, or a query already answered)
 * is dropped; one from a child that was not asked is ignored.
 */
void
ctl_child_reply(struct child *c, const struct msg *m)
{
	int i, j;

	/*
	 * Counters are kept whoever asked, late answers too; id 0 is the
	 * final count a child sends unasked before it exits.
	 */
	if (m->type == MSG_METRICS_REP &&
	    ctl_ops_metrics_note(c->pid, m->payload, m->len) != 0)
		log_debug(1, "malformed counters from %d ignored", (int)c->pid);
	if (m->id == 0)
		return;
	for (i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *cl = &ctl_clients[i];
		struct ctl_query *q = &cl->q;
		struct ctl_reply *r;

		if (cl->fd <= 0 || !q->active || q->id != m->id)
			continue;
		if (m->type != q->want)
			return;
		for (j = 0; j < q->nsent; j++)
			if (q->pids[j] == c->pid)
				break;
		if (j == q->nsent)
			return;
		for (j = 0; j < q->ngot; j++)
			if (q->replies[j].pid == c->pid)
				return;
		r = &q->replies[q->ngot];
		r->data = malloc(m->len > 0 ? m->len : 1);
		if (r->data == NULL)
			return;
		memcpy(r->data, m->payload, m->len);
		r->len = m->len;
		r->pid = c->pid;
		r->type = m->type;
		q->ngot++;
		if (q->ngot == q->nsent)
			ctl_query_done(cl);
		return;
	}
	log_debug(3, "late answer %u from %d dropped", m->type, (int)c->pid);
}

void
ctl_child_gone(struct child *c)
{
	static uint8_t buf[MSG_BUF_SIZE];
	struct msg m;
	int i;

	/*
	 * The final counters may still sit in the channel, behind the exit
	 * that was reaped first.  Only they are taken: the channel is about
	 * to be closed with whatever else it holds, as at any reap.
	 */
	for (i = 0; i < 64 && c->chan >= 0; i++) {
		if (msg_recv(c->chan, &m, buf, sizeof(buf)) != 0)
			break;
		if (m.fd >= 0)
			close(m.fd);
		if (m.type == MSG_METRICS_REP && m.id == 0)
			(void)ctl_ops_metrics_note(c->pid, m.payload, m.len);
	}
	ctl_ops_metrics_gone(c->pid);
}

/* Splits the line on blanks into cl->argv. */
static int
ctl_split(struct ctl_client *cl)
{
	char *p, *save = NULL;

	memcpy(cl->args_buf, cl->line, sizeof(cl->args_buf));
	cl->argc = 0;
	for (p = strtok_r(cl->args_buf, " \t", &save); p != NULL;
	    p = strtok_r(NULL, " \t", &save)) {
		if (cl->argc == CTL_MAX_ARGS)
			return -1;
		cl->argv[cl->argc++] = p;
	}
	return cl->argc > 0 ? 0 : -1;
}

/* Builds the whole answer in memory: the socket is written once, then closed. */
static void
ctl_answer(struct ctl_client *cl)
{
	char *text = NULL;
	size_t sz = 0;
	int shutdown_after = 0, rc = 0;
	FILE *f;

	f = open_memstream(&text, &sz);
	if (f == NULL) {
		ctl_drop(cl);
		return;
	}
	log_debug(2, "control: %s", cl->line);
	if (ctl_split(cl) != 0)
		fprintf(f, "ERR bad request: %.64s\n", cl->line);
	else if (strcmp(cl->line, "shutdown") == 0) {
		fputs("OK\nshutting down\n", f);
		shutdown_after = 1;
	} else if ((rc = ctl_ops_request(cl, f)) < 0)
		fprintf(f, "ERR unknown request: %.64s\n", cl->line);
	fclose(f);
	if (rc == 1) {
		/* Waiting for the children; ctl_query_done answers. */
		free(text);
		return;
	}
	ctl_send_answer(cl, text, sz);
	free(text);
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
	if (cl->q.active) {
		/* The request is in; anything more (or EOF) is ignored. */
		char junk[64];

		n = recv(cl->fd, junk, sizeof(junk), 0);
		if (n == 0)
			master_ev_del(cl->fd);
		return;
	}
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
