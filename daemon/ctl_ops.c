/*
 * The operations requests of the control socket (list in daemon/ctl.h):
 * what smbcontrol does (ping, debug, close-share, kill-client,
 * kill-session, close-file, reload), `status` (rendered by daemon/ctl_info.c) and
 * `metrics`.  Requests that need the children ask them through
 * ctl_query_send() and are answered by ctl_ops_finish() once every child
 * asked has answered or the deadline passed.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "daemon/ctl_priv.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "daemon/statectl.h"
#include "proto/cur.h"
#include "worker/metrics.h"

static const char *
ctl_ops_role(const struct child *c)
{
	return spawn_role_name(c);
}

/* A live child that can be asked something. */
static int
ctl_ops_askable(const struct child *c)
{
	return c->pid > 0 && c->chan >= 0 && c->hello && !c->dying;
}

static int
ctl_ops_number(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Sends type to every askable child of role (0: gates and workers) as one
 * query; how many were asked.
 */
static int
ctl_ops_ask_role(struct ctl_client *cl, int role, uint32_t want, uint32_t type,
    const void *p, size_t len)
{
	int i, n = 0;

	if (ctl_query_begin(cl, want) != 0)
		return -1;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		/*
		 * 0: gates and workers; the state process is asked apart, the
		 * ticket helper answers only the master's tickets.
		 */
		if ((role == 0 ? c->role != CHILD_STATE && c->role != CHILD_KRB :
		    (int)c->role == role) &&
		    ctl_ops_askable(c) &&
		    ctl_query_send(cl, c, type, p, len) == 0)
			n++;
	}
	return n;
}

/* Sends type to every askable worker as one query; how many were asked. */
static int
ctl_ops_ask_workers(struct ctl_client *cl, uint32_t want, uint32_t type,
    const void *p, size_t len)
{
	return ctl_ops_ask_role(cl, CHILD_WORKER, want, type, p, len);
}

/*
 * Counters that never go down although children come and go.  Each
 * child's last known counters (its last answer to a scrape, or the final
 * ones it sends unasked just before it exits) are kept by pid; when the
 * child is reaped they move into ctl_metrics_gone.  A scrape prints
 * ctl_metrics_gone plus the last known counters of every live child, so
 * it is never below an earlier scrape: a child's counters only grow, and
 * what a crashed child counted after its last scrape is all that is lost.
 * The cost is on the master, per scrape and per child exit; none per
 * request.
 */
static struct ctl_metrics_last {
	pid_t		 pid;		/* 0: free */
	struct metrics	*m;
} ctl_metrics_last[SPAWN_MAX_CHILDREN];
static struct metrics	ctl_metrics_gone;

static struct ctl_metrics_last *
ctl_metrics_slot(pid_t pid, int create)
{
	struct ctl_metrics_last *free_slot = NULL;
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		if (ctl_metrics_last[i].pid == pid)
			return &ctl_metrics_last[i];
		if (free_slot == NULL && ctl_metrics_last[i].pid == 0)
			free_slot = &ctl_metrics_last[i];
	}
	if (!create || free_slot == NULL)
		return NULL;
	free_slot->pid = pid;
	return free_slot;
}

int
ctl_ops_metrics_note(pid_t pid, const uint8_t *p, size_t len)
{
	struct ctl_metrics_last *sl;
	struct metrics *in;

	in = calloc(1, sizeof(*in));
	if (in == NULL)
		return -1;
	if (metrics_decode_add(in, p, len) != 0 ||
	    (sl = ctl_metrics_slot(pid, 1)) == NULL) {
		free(in);
		return -1;
	}
	/* The newer answer holds everything the older one counted. */
	free(sl->m);
	sl->m = in;
	return 0;
}

void
ctl_ops_metrics_gone(pid_t pid)
{
	struct ctl_metrics_last *sl = ctl_metrics_slot(pid, 0);

	if (sl == NULL || pid == 0)
		return;
	if (sl->m != NULL)
		metrics_add(&ctl_metrics_gone, sl->m);
	free(sl->m);
	sl->m = NULL;
	sl->pid = 0;
}

static int
ctl_ops_ping(struct ctl_client *cl, FILE *f)
{
	struct child *c;
	long pid;

	if (cl->argc == 1) {
		fprintf(f, "OK\npid %d uptime %lld\n", (int)getpid(),
		    (long long)(time(NULL) - master.started));
		return 0;
	}
	if (cl->argc != 2 || ctl_ops_number(cl->argv[1], INT_MAX, &pid) != 0) {
		fprintf(f, "ERR usage: ping [PID]\n");
		return 0;
	}
	if ((pid_t)pid == getpid()) {
		fprintf(f, "OK\npid %d master: alive, uptime %lld s\n",
		    (int)getpid(), (long long)(time(NULL) - master.started));
		return 0;
	}
	c = spawn_find((pid_t)pid);
	if (c == NULL || c->pid <= 0) {
		fprintf(f, "ERR pid %ld is not a usmbd process\n", pid);
		return 0;
	}
	if (!ctl_ops_askable(c)) {
		fprintf(f, "ERR pid %ld (%s) is %s\n", pid, ctl_ops_role(c),
		    c->dying ? "stopping" : "not set up yet");
		return 0;
	}
	/* Gates and workers alike answer on their event loop. */
	if (ctl_query_begin(cl, MSG_PONG) != 0 ||
	    ctl_query_send(cl, c, MSG_PING, NULL, 0) != 0) {
		fprintf(f, "ERR cannot reach pid %ld\n", pid);
		return 0;
	}
	return 1;
}

static int
ctl_ops_debug(struct ctl_client *cl, FILE *f)
{
	uint8_t p[4];
	long level, pid = 0;
	int i, n = 0, all;

	if (cl->argc < 2 || cl->argc > 3 ||
	    ctl_ops_number(cl->argv[1], 10, &level) != 0 ||
	    (cl->argc == 3 && strcmp(cl->argv[2], "all") != 0 &&
	    ctl_ops_number(cl->argv[2], INT_MAX, &pid) != 0)) {
		fprintf(f, "ERR usage: debug LEVEL(0-10) [PID|all]\n");
		return 0;
	}
	all = cl->argc == 2 || strcmp(cl->argv[2], "all") == 0;
	le32_put(p, (uint32_t)level);
	if (all || (pid_t)pid == getpid()) {
		/* Children started from now on inherit it (-d). */
		log_level = (int)level;
		n++;
	}
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (!ctl_ops_askable(c) || (!all && c->pid != (pid_t)pid))
			continue;
		if (spawn_send(c, MSG_DEBUG_LEVEL, 0, p, sizeof(p)) == 0)
			n++;
	}
	if (n == 0) {
		fprintf(f, "ERR pid %ld is not a usmbd process\n", pid);
		return 0;
	}
	log_info("debug level %ld set in %d process(es)", level, n);
	fprintf(f, "OK\ndebug level %ld set in %d process(es)\n", level, n);
	return 0;
}

static int
ctl_ops_close_share(struct ctl_client *cl, FILE *f)
{
	const char *name;

	if (cl->argc < 2) {
		fprintf(f, "ERR usage: close-share NAME\n");
		return 0;
	}
	/* A share name may hold blanks: it is the rest of the line. */
	name = cl->line + strlen("close-share");
	name += strspn(name, " \t");
	cl->argv[1] = (char *)name;
	cl->argc = 2;
	log_info("close-share [%s] requested", name);
	if (ctl_ops_ask_workers(cl, MSG_CTL_DONE, MSG_CLOSE_SHARE, name,
	    strlen(name) + 1) < 0) {
		fprintf(f, "ERR out of memory\n");
		return 0;
	}
	return 1;
}

static int
ctl_ops_kill_client(struct ctl_client *cl, FILE *f)
{
	if (cl->argc != 2 || strlen(cl->argv[1]) > 100) {
		fprintf(f, "ERR usage: kill-client ADDRESS[:PORT]\n");
		return 0;
	}
	log_info("kill-client %s requested", cl->argv[1]);
	if (ctl_ops_ask_workers(cl, MSG_CTL_DONE, MSG_KILL_CLIENT, cl->argv[1],
	    strlen(cl->argv[1]) + 1) < 0) {
		fprintf(f, "ERR out of memory\n");
		return 0;
	}
	return 1;
}

static int
ctl_ops_kill_session(struct ctl_client *cl, FILE *f)
{
	unsigned long long id;
	uint8_t p[8];
	char *end;

	if (cl->argc != 2) {
		fprintf(f, "ERR usage: kill-session ID\n");
		return 0;
	}
	errno = 0;
	id = strtoull(cl->argv[1], &end, 16);
	if (errno != 0 || end == cl->argv[1] || *end != '\0' || id == 0) {
		fprintf(f, "ERR kill-session: bad session id %.32s (hex, as "
		    "`usmbctl status --sessions` shows it)\n", cl->argv[1]);
		return 0;
	}
	log_info("kill-session %llx requested", id);
	le64_put(p, id);
	if (ctl_ops_ask_workers(cl, MSG_CTL_DONE, MSG_KILL_SESSION, p,
	    sizeof(p)) < 0) {
		fprintf(f, "ERR out of memory\n");
		return 0;
	}
	return 1;
}

/* The status options: CTL_STATUS_* in *what_out, or -1 (f says why). */
static int
ctl_ops_status_parse(const struct ctl_client *cl, FILE *f, unsigned *what_out)
{
	unsigned what = 0, flags = 0;
	int i;

	for (i = 1; i < cl->argc; i++) {
		const char *a = cl->argv[i];

		if (strcmp(a, "--json") == 0)
			flags |= CTL_STATUS_JSON;
		else if (strcmp(a, "--brief") == 0)
			flags |= CTL_STATUS_BRIEF;
		else if (strcmp(a, "--processes") == 0)
			what |= CTL_STATUS_PROCESSES;
		else if (strcmp(a, "--sessions") == 0)
			what |= CTL_STATUS_SESSIONS;
		else if (strcmp(a, "--shares") == 0)
			what |= CTL_STATUS_SHARES;
		else if (strcmp(a, "--locks") == 0)
			what |= CTL_STATUS_LOCKS | CTL_STATUS_OPENS;
		else {
			if (f != NULL)
				fprintf(f, "ERR status: unknown option %.32s\n", a);
			return -1;
		}
	}
	if (what == 0)
		what = (flags & CTL_STATUS_BRIEF) ? CTL_STATUS_SESSIONS :
		    CTL_STATUS_ALL;
	*what_out = what | flags;
	return 0;
}

static int
ctl_ops_status(struct ctl_client *cl, FILE *f, unsigned *what_out)
{
	if (ctl_ops_status_parse(cl, f, what_out) != 0)
		return 0;
	if ((*what_out & CTL_STATUS_ALL) == CTL_STATUS_PROCESSES)
		return 2;	/* the child table is enough */
	struct child *sc;

	if (ctl_ops_ask_workers(cl, MSG_INFO_REP, MSG_INFO_REQ, NULL, 0) < 0) {
		fprintf(f, "ERR out of memory\n");
		return 0;
	}
	/*
	 * The shared state comes from the state process, asked like a
	 * worker: one that does not answer in time makes "state busy", never
	 * a wait.
	 */
	if ((sc = statectl_child()) != NULL && ctl_ops_askable(sc) &&
	    ctl_query_send(cl, sc, MSG_INFO_REQ, NULL, 0) == 0)
		cl->q.state_pid = sc->pid;
	return 1;
}

static int
ctl_ops_reload(struct ctl_client *cl, FILE *f)
{
	char err[512];
	int force = 0;

	if (cl->argc == 2 && strcmp(cl->argv[1], "--force") == 0)
		force = 1;
	else if (cl->argc != 1) {
		fprintf(f, "ERR usage: reload [--force]\n");
		return 0;
	}
	/*
	 * The master only knows the shares of its previous config; the
	 * workers know the shares of their trees (a share removed by an
	 * earlier reload may still have some), so they decide what --force
	 * closes: a second MSG_RELOAD with MSG_RELOAD_FORCE after the plain
	 * one every child gets (a worker that sees both in one read reloads
	 * once).
	 */
	if (master_reload(err, sizeof(err)) != 0) {
		fprintf(f, "ERR %s\n", err);
		return 0;
	}
	if (force) {
		uint8_t p[4];
		int i, n = 0;

		le32_put(p, MSG_RELOAD_FORCE);
		for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
			struct child *c = &spawn_children[i];

			if (c->role == CHILD_WORKER && ctl_ops_askable(c) &&
			    spawn_send(c, MSG_RELOAD, 0, p, sizeof(p)) == 0)
				n++;
		}
		log_info("reload --force: %d worker(s) close the trees of "
		    "removed shares", n);
		fprintf(f, "OK\nreloaded; %d worker(s) told to close the trees "
		    "of removed shares\n", n);
	} else
		fputs("OK\nreloaded\n", f);
	return 0;
}

/*
 * close-file FILEID: the FileId srvsvc's NetrFileEnum shows (decimal, or
 * hex with 0x), closed by whichever worker holds it, or by the state
 * process if it is a disconnected durable open, as NetrFileClose of an
 * administrator does (daemon/admreq.c, MSG_ADMIN_DO).
 */
static int
ctl_ops_close_file(struct ctl_client *cl, FILE *f)
{
	struct admmsg_req r;
	uint8_t p[ADMMSG_MAX_LEN];
	struct child *sc;
	unsigned long v;
	char *end;
	int n;

	if (cl->argc != 2) {
		fprintf(f, "ERR usage: close-file FILEID\n");
		return 0;
	}
	errno = 0;
	v = strtoul(cl->argv[1], &end, 0);
	if (errno != 0 || end == cl->argv[1] || *end != '\0' ||
	    cl->argv[1][0] == '-' || v > UINT32_MAX) {
		fprintf(f, "ERR close-file: bad file id %.32s (as srvsvc's "
		    "NetrFileEnum shows it)\n", cl->argv[1]);
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.op = ADMMSG_FILE_CLOSE;
	r.file_id = (uint32_t)v;
	n = admmsg_encode(&r, p, sizeof(p));
	log_info("close-file %lu requested", v);
	if (n < 0 || ctl_ops_ask_workers(cl, MSG_CTL_DONE, MSG_ADMIN_DO, p,
	    (size_t)n) < 0) {
		fprintf(f, "ERR out of memory\n");
		return 0;
	}
	/* A disconnected durable open is the state process's (statep_close.c). */
	if ((sc = statectl_child()) != NULL && ctl_ops_askable(sc))
		(void)ctl_query_send(cl, sc, MSG_ADMIN_DO, p, (size_t)n);
	return 1;
}

int
ctl_ops_request(struct ctl_client *cl, FILE *f)
{
	const char *cmd = cl->argv[0];
	unsigned what = 0;
	int rc;

	if (strcmp(cmd, "ping") == 0)
		return ctl_ops_ping(cl, f);
	if (strcmp(cmd, "debug") == 0)
		return ctl_ops_debug(cl, f);
	if (strcmp(cmd, "close-share") == 0)
		return ctl_ops_close_share(cl, f);
	if (strcmp(cmd, "kill-client") == 0)
		return ctl_ops_kill_client(cl, f);
	if (strcmp(cmd, "kill-session") == 0)
		return ctl_ops_kill_session(cl, f);
	if (strcmp(cmd, "close-file") == 0)
		return ctl_ops_close_file(cl, f);
	if (strcmp(cmd, "reload") == 0)
		return ctl_ops_reload(cl, f);
	if (strcmp(cmd, "status") == 0) {
		rc = ctl_ops_status(cl, f, &what);
		if (rc == 2) {
			fputs("OK\n", f);
			ctl_info_status(f, what, NULL);
			return 0;
		}
		return rc;
	}
	if (strcmp(cmd, "metrics") == 0) {
		if (cl->argc != 1) {
			fprintf(f, "ERR usage: metrics\n");
			return 0;
		}
		/* Gates count their logins: they are asked too. */
		if (ctl_ops_ask_role(cl, 0, MSG_METRICS_REP, MSG_METRICS_REQ,
		    NULL, 0) < 0) {
			fprintf(f, "ERR out of memory\n");
			return 0;
		}
		return 1;
	}
	return -1;
}

/* "# not answered: 123 456" for the children asked that stayed silent. */
static void
ctl_ops_missing(FILE *f, const struct ctl_query *q, const char *prefix)
{
	int i, j, first = 1;

	for (i = 0; i < q->nsent; i++) {
		for (j = 0; j < q->ngot; j++)
			if (q->replies[j].pid == q->pids[i])
				break;
		if (j < q->ngot)
			continue;
		fprintf(f, "%s%d", first ? prefix : " ", (int)q->pids[i]);
		first = 0;
	}
	if (!first)
		fputc('\n', f);
}

static void
ctl_ops_metrics(FILE *f, const struct ctl_query *q)
{
	static const char *const role[CHILD_ROLES] = { "", "gate", "worker",
	    "state", "sdw", "krb" };
	struct metrics *sum;
	long sessions, opens, locks;
	unsigned conns[3] = { 0, 0, 0 };
	int i, bad = 0, r;

	sum = calloc(1, sizeof(*sum));
	if (sum == NULL) {
		fputs("ERR out of memory\n", f);
		return;
	}
	/*
	 * ctl_child_reply() noted every answer as its child's last known;
	 * here they are only checked, for the count of those answering.
	 */
	for (i = 0; i < q->ngot; i++)
		if (metrics_decode_add(sum, q->replies[i].data,
		    q->replies[i].len) != 0)
			bad++;
	*sum = ctl_metrics_gone;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++)
		if (ctl_metrics_last[i].pid != 0 && ctl_metrics_last[i].m != NULL)
			metrics_add(sum, ctl_metrics_last[i].m);
	fputs("OK\n", f);
	metrics_print(f, sum);
	free(sum);
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		const struct child *c = &spawn_children[i];

		if (c->pid <= 0 || (c->role != CHILD_GATE &&
		    c->role != CHILD_WORKER))
			continue;
		/* A gate's live logins; a worker's connections as it reports. */
		conns[c->role] += c->role == CHILD_GATE ? c->active : c->nconn;
	}
	fputs("# HELP usmbd_connections Client connections now: logging in "
	    "(gate) or served (worker).\n# TYPE usmbd_connections gauge\n", f);
	for (r = 1; r <= 2; r++)
		fprintf(f, "usmbd_connections{role=\"%s\"} %u\n", role[r],
		    conns[r]);
	statectl_counts(&sessions, &opens, &locks);
	fprintf(f, "# HELP usmbd_sessions Sessions in the state env.\n"
	    "# TYPE usmbd_sessions gauge\nusmbd_sessions %ld\n"
	    "# HELP usmbd_opens Open files in the state env.\n"
	    "# TYPE usmbd_opens gauge\nusmbd_opens %ld\n"
	    "# HELP usmbd_locks Byte-range locks in the state env.\n"
	    "# TYPE usmbd_locks gauge\nusmbd_locks %ld\n",
	    sessions, opens, locks);
	fprintf(f, "# HELP usmbd_auth_failures_total Logons refused by the "
	    "master.\n# TYPE usmbd_auth_failures_total counter\n"
	    "usmbd_auth_failures_total %llu\n"
	    "# HELP usmbd_auth_successes_total Logons accepted (passdb users)."
	    "\n# TYPE usmbd_auth_successes_total counter\n"
	    "usmbd_auth_successes_total %llu\n",
	    (unsigned long long)master.auth_failures,
	    (unsigned long long)master.auth_successes);
	fputs("# HELP usmbd_children_started_total Children started, by role.\n"
	    "# TYPE usmbd_children_started_total counter\n", f);
	for (r = 1; r < CHILD_ROLES; r++)
		fprintf(f, "usmbd_children_started_total{role=\"%s\"} %llu\n",
		    role[r], (unsigned long long)master.child_starts[r]);
	fputs("# HELP usmbd_worker_restarts_total Children that died "
	    "unexpectedly (crash, kill) and were replaced on demand.\n"
	    "# TYPE usmbd_worker_restarts_total counter\n", f);
	for (r = 1; r < CHILD_ROLES; r++)
		fprintf(f, "usmbd_worker_restarts_total{role=\"%s\"} %llu\n",
		    role[r], (unsigned long long)master.child_deaths[r]);
	fprintf(f, "# HELP usmbd_state_fresh_total Times the state env was "
	    "set aside and made afresh after the state process failed twice "
	    "on it.\n# TYPE usmbd_state_fresh_total counter\n"
	    "usmbd_state_fresh_total %llu\n",
	    (unsigned long long)statectl_fresh_count());
	fprintf(f, "# HELP usmbd_forward_dropped_total Messages one child "
	    "asked the master to pass to another (delete on close, a "
	    "connection) that were dropped: over the sender's rate or the "
	    "receiver's share of its channel.\n"
	    "# TYPE usmbd_forward_dropped_total counter\n"
	    "usmbd_forward_dropped_total %llu\n"
	    "# HELP usmbd_log_lines_dropped_total Children's log lines over "
	    "their rate, not written.\n"
	    "# TYPE usmbd_log_lines_dropped_total counter\n"
	    "usmbd_log_lines_dropped_total %llu\n",
	    (unsigned long long)master.fwd_dropped,
	    (unsigned long long)master.log_dropped);
	fprintf(f, "# HELP usmbd_metrics_workers Children (gates and workers) "
	    "asked and answering for this scrape.\n"
	    "# TYPE usmbd_metrics_workers gauge\n"
	    "usmbd_metrics_workers{state=\"asked\"} %d\n"
	    "usmbd_metrics_workers{state=\"answered\"} %d\n",
	    q->nsent, q->ngot - bad);
	ctl_ops_missing(f, q, "# not answered: ");
}

/* Sum of the u32 counts of MSG_CTL_DONE replies. */
static uint32_t
ctl_ops_done_total(const struct ctl_query *q)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < q->ngot; i++)
		if (q->replies[i].len == 4)
			n += le32_get(q->replies[i].data);
	return n;
}

void
ctl_ops_finish(struct ctl_client *cl, FILE *f)
{
	const struct ctl_query *q = &cl->q;
	const char *cmd = cl->argv[0];
	uint32_t n;

	if (strcmp(cmd, "ping") == 0) {
		const struct child *c = spawn_find(q->pids[0]);

		if (q->ngot == 1)
			fprintf(f, "OK\npid %d %s: pong\n", (int)q->pids[0],
			    c != NULL ? ctl_ops_role(c) : "child");
		else
			fprintf(f, "ERR pid %d did not answer within %d ms\n",
			    (int)q->pids[0], CTL_QUERY_TIMEOUT_MS);
	} else if (strcmp(cmd, "status") == 0) {
		unsigned what = CTL_STATUS_ALL;

		/* Parsed again: it was valid when the query started. */
		(void)ctl_ops_status_parse(cl, NULL, &what);
		fputs("OK\n", f);
		ctl_info_status(f, what, q);
	} else if (strcmp(cmd, "metrics") == 0)
		ctl_ops_metrics(f, q);
	else {
		n = ctl_ops_done_total(q);
		if (n == 0 && q->ngot == q->nsent) {
			if (strcmp(cmd, "close-share") == 0)
				fprintf(f, "ERR no tree is connected to [%s]\n",
				    cl->argv[1]);
			else if (strcmp(cmd, "kill-client") == 0)
				fprintf(f, "ERR no connection from %s\n",
				    cl->argv[1]);
			else if (strcmp(cmd, "close-file") == 0)
				fprintf(f, "ERR no open file %s\n",
				    cl->argv[1]);
			else
				fprintf(f, "ERR no session %s\n", cl->argv[1]);
			return;
		}
		fprintf(f, "OK\n%s %s: %u %s in %d of %d worker(s)\n", cmd,
		    cl->argv[1], n, strcmp(cmd, "close-share") == 0 ?
		    "tree(s) closed" : strcmp(cmd, "kill-client") == 0 ?
		    "connection(s) dropped" : strcmp(cmd, "close-file") == 0 ?
		    "file(s) closed" : "session(s) ended",
		    q->ngot, q->nsent);
		ctl_ops_missing(f, q, "not answered: ");
	}
}
