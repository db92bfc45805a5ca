/*
 * `usmbctl status`: what smbstatus shows, from two sources joined here.
 *
 *  - The state process's answer (daemon/statemsg.h; it walks the state
 *    env, which the master never maps): sessions with
 *    user, uid, client, dialect, signing, encryption and since; opens with
 *    access, share mode, oplock or lease and since; byte-range locks.  It
 *    is what every worker wrote, so it is authoritative for what exists.
 *  - The workers' MSG_INFO_REP (worker/ctlmsg.h): client port, idle time,
 *    tree connects, and the share and path of each open, which the state
 *    env does not keep.
 *
 * Sessions and opens found in only one source are still shown.  The JSON
 * schema is documented in usmbctl(8): fields are added, never renamed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/ctl_priv.h"
#include "daemon/master.h"
#include "daemon/msess.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "proto/cur.h"
#include "daemon/statemsg.h"
#include "shm/shm.h"
#include "worker/ctlmsg.h"

struct ci_sess {
	uint64_t	id;
	pid_t		pid;
	uint32_t	uid;
	char		user[SHM_NAME_MAX];
	char		addr[SHM_ADDR_MAX];
	int		port;		/* -1 unknown */
	long		idle_s;		/* -1 unknown */
	uint16_t	dialect;
	uint8_t		signing, encrypt;
	uint64_t	since;		/* 0 unknown */
};

struct ci_tree {
	pid_t		pid;
	uint32_t	tid;
	uint64_t	sid;
	char		share[SHM_NAME_MAX];
	char		addr[SHM_ADDR_MAX];
};

struct ci_open {
	pid_t		pid;
	uint64_t	pers;
	uint64_t	sid;
	char		share[SHM_NAME_MAX];
	char		path[1024];
	uint32_t	access, share_access, lease_state;
	uint8_t		oplock;
	uint8_t		kind;		/* enum open_kind; 0 unknown */
	uint64_t	since;
	uint64_t	dev, ino;
	int		in_shm;
	int		durable;	/* survives a disconnect */
	int		disconnected;	/* durable, waiting for its client */
	/*
	 * From its durable record: resilient (MS-SMB2 Open.IsResilient,
	 * then not durable) and the timeout; timeout_ms 0 unknown.
	 */
	int		resilient;
	uint32_t	timeout_ms;
};

struct ci_lock {
	uint64_t	dev, ino;
	pid_t		pid;
	uint64_t	pers;
	uint64_t	offset, length;
	int		exclusive;
};

/* A client connection as its socket's holder reported it. */
struct ci_conn {
	char		addr[SHM_ADDR_MAX];
	int		port;
	long		idle_s;
};

struct ci {
	struct ci_sess	*s;	size_t ns, cs;
	struct ci_conn	*c;	size_t nc, cc;
	struct ci_tree	*t;	size_t nt, ct;
	struct ci_open	*o;	size_t no, co;
	struct ci_lock	*l;	size_t nl, cl;
	int		 truncated;
	int		 oom;
};

/* Grows an array by one zeroed element; NULL when out of memory. */
static void *
ci_push(void **arr, size_t *n, size_t *cap, size_t size, int *oom)
{
	uint8_t *p;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *na = reallocarray(*arr, nc, size);

		if (na == NULL) {
			*oom = 1;
			return NULL;
		}
		*arr = na;
		*cap = nc;
	}
	p = (uint8_t *)*arr + (*n)++ * size;
	memset(p, 0, size);
	return p;
}

#define CI_PUSH(ci, a, n, c) \
	ci_push((void **)&(ci)->a, &(ci)->n, &(ci)->c, sizeof(*(ci)->a), &(ci)->oom)

static struct ci_sess *
ci_sess_find(struct ci *ci, uint64_t id)
{
	size_t i;

	for (i = 0; i < ci->ns; i++)
		if (ci->s[i].id == id)
			return &ci->s[i];
	return NULL;
}

static struct ci_open *
ci_open_find(struct ci *ci, uint64_t pers)
{
	size_t i;

	for (i = 0; i < ci->no; i++)
		if (ci->o[i].pers == pers)
			return &ci->o[i];
	return NULL;
}

/* ---- the state process's answer (daemon/statemsg.h) ---- */

/* Display only: control bytes become '?'. */
static void
ci_copy(char *dst, size_t cap, const char *src)
{
	size_t k;

	for (k = 0; src[k] != '\0' && k + 1 < cap; k++)
		dst[k] = (unsigned char)src[k] < 0x20 ? '?' : src[k];
	dst[k] = '\0';
}

static int
ci_state_session(const struct statemsg_sess *r, void *arg)
{
	struct ci *ci = arg;
	struct ci_sess *s = CI_PUSH(ci, s, ns, cs);

	if (s == NULL)
		return -1;
	s->id = r->id;
	s->pid = (pid_t)r->pid;
	s->uid = r->uid;
	ci_copy(s->user, sizeof(s->user), r->user);
	ci_copy(s->addr, sizeof(s->addr), r->addr);
	s->port = -1;
	s->idle_s = -1;
	s->dialect = r->dialect;
	s->signing = r->signing;
	s->encrypt = r->encryption;
	s->since = r->since;
	return 0;
}

static int
ci_state_open(const struct statemsg_open *r, void *arg)
{
	struct ci *ci = arg;
	struct ci_open *o = CI_PUSH(ci, o, no, co);

	if (o == NULL)
		return -1;
	o->pid = (pid_t)r->pid;
	o->pers = r->pers;
	o->sid = r->sid;
	o->access = r->access;
	o->share_access = r->share_access;
	o->oplock = r->oplock;
	o->lease_state = r->lease_state;
	o->since = r->since;
	o->dev = r->dev;
	o->ino = r->ino;
	o->in_shm = 1;
	o->durable = (r->flags & SHM_OPEN_DURABLE) != 0;
	o->disconnected = (r->flags & SHM_OPEN_DISCONNECTED) != 0;
	/* A disconnected durable open's names, from its durable record. */
	ci_copy(o->share, sizeof(o->share), r->share);
	ci_copy(o->path, sizeof(o->path), r->path);
	return 0;
}

/*
 * A durable record names its open by persistent id (the records come
 * after the opens): a resilient one is shown as such, not as durable.
 */
static int
ci_state_durable(const struct statemsg_durable *r, void *arg)
{
	struct ci *ci = arg;
	struct ci_open *o = ci_open_find(ci, r->pers);

	if (o == NULL)
		return 0;
	o->resilient = (r->flags & SHM_DURABLE_RESILIENT) != 0;
	if (o->resilient)
		o->durable = 0;
	o->timeout_ms = r->timeout_ms;
	return 0;
}

static int
ci_state_lock(const struct statemsg_lock *r, void *arg)
{
	struct ci *ci = arg;
	struct ci_lock *l = CI_PUSH(ci, l, nl, cl);

	if (l == NULL)
		return -1;
	l->dev = r->dev;
	l->ino = r->ino;
	l->pid = (pid_t)r->pid;
	l->pers = r->pers;
	l->offset = r->offset;
	l->length = r->length;
	l->exclusive = r->exclusive;
	return 0;
}

/* The state process's reply in q, or NULL (not asked, or silent). */
static const struct ctl_reply *
ci_state_reply(const struct ctl_query *q)
{
	int i;

	for (i = 0; q != NULL && q->state_pid > 0 && i < q->ngot; i++)
		if (q->replies[i].pid == q->state_pid)
			return &q->replies[i];
	return NULL;
}

/* "ok", "busy" (asked, silent) or "down" (no state process). */
static const char *
ci_state_word(const struct ctl_query *q)
{
	if (q->state_pid == 0)
		return "down";
	return ci_state_reply(q) != NULL ? "ok" : "busy";
}

static void
ci_state(struct ci *ci, unsigned what, const struct ctl_reply *rep)
{
	struct statemsg_info_cb cb = { NULL, NULL, NULL, ci, NULL };
	int truncated = 0;

	if (what & (CTL_STATUS_SESSIONS | CTL_STATUS_SHARES))
		cb.sess = ci_state_session;
	if (what & (CTL_STATUS_OPENS | CTL_STATUS_LOCKS)) {
		cb.open = ci_state_open;
		cb.durable = ci_state_durable;
	}
	if (what & CTL_STATUS_LOCKS)
		cb.lock = ci_state_lock;
	if (statemsg_info_decode(rep->data, rep->len, &cb, &truncated) != 0 ||
	    truncated)
		ci->truncated = 1;
}

/* ---- the workers' reports ---- */

static void
ci_str(struct cur *c, char *dst, size_t cap)
{
	uint16_t n = cur_le16(c);
	const uint8_t *p = cur_view(c, n);
	size_t i, k = 0;

	if (p == NULL) {
		dst[0] = '\0';
		return;
	}
	/* Display only: control bytes become '?'. */
	for (i = 0; i < n && k + 1 < cap; i++)
		dst[k++] = p[i] < 0x20 ? '?' : (char)p[i];
	dst[k] = '\0';
}

static void
ci_worker(struct ci *ci, const struct ctl_reply *rep)
{
	struct cur c;
	uint32_t nconn, i, j, n;

	cur_init(&c, rep->data, rep->len);
	if (cur_le32(&c) != CTLMSG_INFO_VERSION ||
	    cur_le32(&c) != (uint32_t)rep->pid)
		return;
	nconn = cur_le32(&c);
	for (i = 0; i < nconn && !c.err && !ci->oom; i++) {
		char peer[SHM_ADDR_MAX];
		uint16_t port, dialect;
		uint32_t idle;

		ci_str(&c, peer, sizeof(peer));
		port = cur_le16(&c);
		idle = cur_le32(&c);
		dialect = cur_le16(&c);
		if (!c.err && idle != CTLMSG_IDLE_UNKNOWN) {
			struct ci_conn *k = CI_PUSH(ci, c, nc, cc);

			if (k == NULL)
				return;
			snprintf(k->addr, sizeof(k->addr), "%s", peer);
			k->port = port;
			k->idle_s = (long)(idle / 1000);
		}
		n = cur_le32(&c);
		for (j = 0; j < n && !c.err; j++) {
			struct ci_sess ws, *s;

			memset(&ws, 0, sizeof(ws));
			ws.id = cur_le64(&c);
			ws.uid = cur_le32(&c);
			ci_str(&c, ws.user, sizeof(ws.user));
			ws.signing = cur_u8(&c);
			ws.encrypt = cur_u8(&c);
			(void)cur_u8(&c);	/* state */
			if (c.err)
				break;
			s = ci_sess_find(ci, ws.id);
			if (s == NULL) {
				/* Not (yet) in the state env: the worker's view. */
				if ((s = CI_PUSH(ci, s, ns, cs)) == NULL)
					return;
				*s = ws;
				s->pid = rep->pid;
				snprintf(s->addr, sizeof(s->addr), "%s", peer);
				s->dialect = dialect;
			}
			s->port = port;
			s->idle_s = idle == CTLMSG_IDLE_UNKNOWN ? -1 :
			    (long)(idle / 1000);
		}
		n = cur_le32(&c);
		for (j = 0; j < n && !c.err; j++) {
			struct ci_tree *t = CI_PUSH(ci, t, nt, ct);

			if (t == NULL)
				return;
			t->pid = rep->pid;
			t->tid = cur_le32(&c);
			t->sid = cur_le64(&c);
			ci_str(&c, t->share, sizeof(t->share));
			snprintf(t->addr, sizeof(t->addr), "%s", peer);
		}
		n = cur_le32(&c);
		for (j = 0; j < n && !c.err; j++) {
			struct ci_open wo, *o;

			memset(&wo, 0, sizeof(wo));
			wo.pers = cur_le64(&c);
			wo.sid = cur_le64(&c);
			ci_str(&c, wo.share, sizeof(wo.share));
			ci_str(&c, wo.path, sizeof(wo.path));
			wo.access = cur_le32(&c);
			wo.share_access = cur_le32(&c);
			wo.oplock = cur_u8(&c);
			wo.lease_state = cur_le32(&c);
			wo.kind = cur_u8(&c);
			if (c.err)
				break;
			o = ci_open_find(ci, wo.pers);
			if (o == NULL) {
				if ((o = CI_PUSH(ci, o, no, co)) == NULL)
					return;
				*o = wo;
				o->pid = rep->pid;
				continue;
			}
			snprintf(o->share, sizeof(o->share), "%s", wo.share);
			snprintf(o->path, sizeof(o->path), "%s", wo.path);
			o->kind = wo.kind;
		}
	}
	if (cur_u8(&c) != 0 || c.err)
		ci->truncated = 1;
}

/*
 * A relayed session's worker holds a socketpair, not the client's socket:
 * its idle time is that of the client connection with its address and port
 * as the worker holding the socket reported it.  Both are display values
 * from workers (a worker could name another connection and show its idle
 * time, nothing more).
 */
static void
ci_conn_idle(struct ci *ci)
{
	size_t i, j;

	for (i = 0; i < ci->ns; i++) {
		struct ci_sess *s = &ci->s[i];

		for (j = 0; s->idle_s < 0 && s->port > 0 && j < ci->nc; j++)
			if (ci->c[j].port == s->port &&
			    strcmp(ci->c[j].addr, s->addr) == 0)
				s->idle_s = ci->c[j].idle_s;
	}
}

static void
ci_load(struct ci *ci, unsigned what, const struct ctl_query *q)
{
	const struct ctl_reply *st = ci_state_reply(q);
	int i;

	/* The shared state first: the workers' reports complete it. */
	if (st != NULL)
		ci_state(ci, what, st);
	for (i = 0; q != NULL && i < q->ngot; i++)
		if (&q->replies[i] != st)
			ci_worker(ci, &q->replies[i]);
	ci_conn_idle(ci);
}

static void
ci_free(struct ci *ci)
{
	free(ci->s);
	free(ci->c);
	free(ci->t);
	free(ci->o);
	free(ci->l);
}

/* ---- rendering helpers ---- */

static const char *
ci_dialect(uint16_t d)
{
	switch (d) {
	case 0x0202: return "2.0.2";
	case 0x0210: return "2.1";
	case 0x0300: return "3.0";
	case 0x0302: return "3.0.2";
	case 0x0311: return "3.1.1";
	}
	return "unknown";
}

static const char *
ci_signing(uint8_t s)
{
	return s == 2 ? "required" : s == 1 ? "on" : "off";
}

static const char *
ci_oplock(uint8_t o)
{
	switch (o) {
	case SHM_OPLOCK_NONE: return "none";
	case SHM_OPLOCK_II: return "level2";
	case SHM_OPLOCK_EXCLUSIVE: return "exclusive";
	case SHM_OPLOCK_BATCH: return "batch";
	case SHM_OPLOCK_LEASE: return "lease";
	}
	return "unknown";
}

/* "RWD"-style letters of FILE_SHARE_* / lease R H W; "-" for none. */
static void
ci_share_mode(uint32_t sa, char out[4])
{
	int k = 0;

	if (sa & SHM_FILE_SHARE_READ)
		out[k++] = 'R';
	if (sa & SHM_FILE_SHARE_WRITE)
		out[k++] = 'W';
	if (sa & SHM_FILE_SHARE_DELETE)
		out[k++] = 'D';
	if (k == 0)
		out[k++] = '-';
	out[k] = '\0';
}

static void
ci_lease(uint32_t ls, char out[4])
{
	int k = 0;

	if (ls & SHM_LEASE_R)
		out[k++] = 'R';
	if (ls & SHM_LEASE_W)
		out[k++] = 'W';
	if (ls & SHM_LEASE_H)
		out[k++] = 'H';
	if (k == 0)
		out[k++] = '-';
	out[k] = '\0';
}

static void
ci_time(uint64_t t, char *buf, size_t len)
{
	if (t == 0)
		snprintf(buf, len, "-");
	else
		ctl_iso8601((time_t)t, buf, len);
}

static const char *
ci_user_of(const struct ci *ci, uint64_t sid)
{
	size_t i;

	for (i = 0; i < ci->ns; i++)
		if (ci->s[i].id == sid)
			return ci->s[i].user;
	return "";
}

static const struct ci_open *
ci_open_of(const struct ci *ci, uint64_t pers)
{
	size_t i;

	for (i = 0; i < ci->no; i++)
		if (ci->o[i].pers == pers)
			return &ci->o[i];
	return NULL;
}

/*
 * A worker's connections as it reports them (MSG_CONN_COUNT); a gate's
 * logins in progress: connections given and not yet ended or handed off
 * (MSG_GATE_CONN_END), which the master counts live.
 */
static unsigned
ci_child_conns(const struct child *c)
{
	if (c->role == CHILD_WORKER)
		return c->nconn;
	return c->active;
}

/* ---- JSON ---- */

static void
ci_json_time(FILE *f, uint64_t t)
{
	char ts[40];

	if (t == 0) {
		fputs("null", f);
		return;
	}
	ctl_iso8601((time_t)t, ts, sizeof(ts));
	fprintf(f, "\"%s\"", ts);
}

static void
ci_json(FILE *f, unsigned what, const struct ci *ci, const struct ctl_query *q)
{
	char ts[40], m[4], l[4];
	size_t i;
	int k, first = 1;

	ctl_iso8601(master.started, ts, sizeof(ts));
	fprintf(f, "{\"master\": {\"pid\": %d, \"started\": \"%s\"}", (int)getpid(),
	    ts);
	if (what & CTL_STATUS_PROCESSES) {
		fputs(", \"processes\": [", f);
		for (k = 0; k < SPAWN_MAX_CHILDREN; k++) {
			const struct child *c = &spawn_children[k];

			if (c->pid <= 0)
				continue;
			ctl_iso8601(c->started, ts, sizeof(ts));
			fprintf(f, "%s{\"pid\": %d, \"role\": \"%s\", \"user\": ",
			    first ? "" : ", ", (int)c->pid, spawn_role_name(c));
			if (c->role == CHILD_WORKER)
				ctl_json_str(f, c->user);
			else
				fputs("null", f);
			fprintf(f, ", \"connections\": %u, \"uid\": ",
			    ci_child_conns(c));
			if (c->role == CHILD_WORKER)
				fprintf(f, "%u", (unsigned)c->uid);
			else
				fputs("null", f);
			fprintf(f, ", \"started\": \"%s\", \"stopping\": %s}", ts,
			    c->dying ? "true" : "false");
			first = 0;
		}
		fputc(']', f);
	}
	if (what & CTL_STATUS_SESSIONS) {
		fputs(", \"sessions\": [", f);
		for (i = 0; i < ci->ns; i++) {
			const struct ci_sess *s = &ci->s[i];

			fprintf(f, "%s{\"session_id\": \"%llx\", \"user\": ",
			    i ? ", " : "", (unsigned long long)s->id);
			ctl_json_str(f, s->user);
			fprintf(f, ", \"uid\": %u, \"client_address\": ", s->uid);
			ctl_json_str(f, s->addr);
			fputs(", \"client_port\": ", f);
			if (s->port >= 0)
				fprintf(f, "%d", s->port);
			else
				fputs("null", f);
			fprintf(f, ", \"dialect\": \"%s\", \"signing\": \"%s\", "
			    "\"encryption\": \"%s\", \"connected_since\": ",
			    ci_dialect(s->dialect), ci_signing(s->signing),
			    s->encrypt ? "on" : "off");
			ci_json_time(f, s->since);
			fputs(", \"idle_seconds\": ", f);
			if (s->idle_s >= 0)
				fprintf(f, "%ld", s->idle_s);
			else
				fputs("null", f);
			/* The socket's holder, from the master's own table. */
			fprintf(f, ", \"worker_pid\": %d, \"socket_pid\": %d}",
			    (int)s->pid, msess_owner(s->id) != 0 ?
			    (int)msess_owner(s->id) : (int)s->pid);
		}
		fputc(']', f);
	}
	if (what & CTL_STATUS_SHARES) {
		fputs(", \"shares\": [", f);
		for (i = 0; i < ci->nt; i++) {
			const struct ci_tree *t = &ci->t[i];

			fprintf(f, "%s{\"share\": ", i ? ", " : "");
			ctl_json_str(f, t->share);
			fprintf(f, ", \"tree_id\": %u, \"session_id\": \"%llx\", "
			    "\"user\": ", t->tid, (unsigned long long)t->sid);
			ctl_json_str(f, ci_user_of(ci, t->sid));
			fputs(", \"client_address\": ", f);
			ctl_json_str(f, t->addr);
			fprintf(f, ", \"worker_pid\": %d}", (int)t->pid);
		}
		fputc(']', f);
	}
	if (what & CTL_STATUS_OPENS) {
		fputs(", \"opens\": [", f);
		for (i = 0; i < ci->no; i++) {
			const struct ci_open *o = &ci->o[i];

			ci_share_mode(o->share_access, m);
			ci_lease(o->lease_state, l);
			fprintf(f, "%s{\"share\": ", i ? ", " : "");
			ctl_json_str(f, o->share);
			fputs(", \"path\": ", f);
			ctl_json_str(f, o->path);
			fprintf(f, ", \"access\": \"0x%08x\", \"share_mode\": \"%s\", "
			    "\"oplock\": \"%s\", \"lease\": ", o->access, m,
			    ci_oplock(o->oplock));
			if (o->oplock == SHM_OPLOCK_LEASE)
				fprintf(f, "\"%s\"", l);
			else
				fputs("null", f);
			fputs(", \"since\": ", f);
			ci_json_time(f, o->since);
			fprintf(f, ", \"session_id\": \"%llx\", \"persistent_id\": "
			    "\"%llx\", \"worker_pid\": %d, \"durable\": %s, "
			    "\"state\": \"%s\", \"resilient\": %s, "
			    "\"timeout_ms\": ", (unsigned long long)o->sid,
			    (unsigned long long)o->pers, (int)o->pid,
			    o->durable ? "true" : "false",
			    o->disconnected ? "disconnected" : "open",
			    o->resilient ? "true" : "false");
			if ((o->durable || o->resilient) && o->timeout_ms != 0)
				fprintf(f, "%u}", o->timeout_ms);
			else
				fputs("null}", f);
		}
		fputc(']', f);
	}
	if (what & CTL_STATUS_LOCKS) {
		fputs(", \"locks\": [", f);
		for (i = 0; i < ci->nl; i++) {
			const struct ci_lock *lk = &ci->l[i];
			const struct ci_open *o = ci_open_of(ci, lk->pers);

			fprintf(f, "%s{\"share\": ", i ? ", " : "");
			ctl_json_str(f, o != NULL ? o->share : "");
			fputs(", \"path\": ", f);
			ctl_json_str(f, o != NULL ? o->path : "");
			fprintf(f, ", \"offset\": %llu, \"length\": %llu, "
			    "\"type\": \"%s\", \"persistent_id\": \"%llx\", "
			    "\"worker_pid\": %d}", (unsigned long long)lk->offset,
			    (unsigned long long)lk->length,
			    lk->exclusive ? "exclusive" : "shared",
			    (unsigned long long)lk->pers, (int)lk->pid);
		}
		fputc(']', f);
	}
	if (q != NULL)
		fprintf(f, ", \"state\": \"%s\"", ci_state_word(q));
	fprintf(f, ", \"complete\": %s}\n", !ci->truncated && !ci->oom &&
	    (q == NULL || q->ngot == q->nsent) ? "true" : "false");
}

/* ---- tables ---- */

/*
 * After the path: " (resilient, 120 s)" for a resilient open (its timeout;
 * ", disconnected" while its client is away), " (durable, disconnected)"
 * for a durable one whose client is away, else nothing.
 */
static void
ci_open_note(const struct ci_open *o, char *buf, size_t cap)
{
	char t[24] = "";

	/* whole seconds as such (a timeout of 1500 ms as 1500 ms) */
	if (o->timeout_ms != 0 && o->timeout_ms % 1000 == 0)
		snprintf(t, sizeof(t), ", %u s", o->timeout_ms / 1000);
	else if (o->timeout_ms != 0)
		snprintf(t, sizeof(t), ", %u ms", o->timeout_ms);
	if (o->resilient)
		snprintf(buf, cap, " (resilient%s%s)", t,
		    o->disconnected ? ", disconnected" : "");
	else if (o->disconnected)
		snprintf(buf, cap, " (durable, disconnected)");
	else
		buf[0] = '\0';
}

static void
ci_table(FILE *f, unsigned what, const struct ci *ci, const struct ctl_query *q)
{
	char ts[40], m[4], l[4];
	size_t i;
	int k;

	if (what & CTL_STATUS_PROCESSES) {
		ctl_iso8601(master.started, ts, sizeof(ts));
		fprintf(f, "%-8s %-7s %-16s %11s  %s\n", "PID", "ROLE", "USER",
		    "CONNECTIONS", "STARTED");
		fprintf(f, "%-8d %-7s %-16s %11s  %s\n", (int)getpid(), "master",
		    "-", "-", ts);
		for (k = 0; k < SPAWN_MAX_CHILDREN; k++) {
			const struct child *c = &spawn_children[k];

			if (c->pid <= 0)
				continue;
			ctl_iso8601(c->started, ts, sizeof(ts));
			fprintf(f, "%-8d %-7s %-16s %11u  %s%s\n", (int)c->pid,
			    spawn_role_name(c),
			    c->role == CHILD_WORKER ? c->user : "-",
			    ci_child_conns(c), ts, c->dying ? " (stopping)" : "");
		}
	}
	if (what & CTL_STATUS_SESSIONS) {
		if (what & CTL_STATUS_PROCESSES)
			fputc('\n', f);
		if (what & CTL_STATUS_BRIEF) {
			fprintf(f, "%-16s %-8s %-16s %-22s %s\n", "SESSION", "PID",
			    "USER", "CLIENT", "DIALECT");
			for (i = 0; i < ci->ns; i++) {
				const struct ci_sess *s = &ci->s[i];
				char cl[80];

				snprintf(cl, sizeof(cl), s->port >= 0 ? "%s:%d" : "%s",
				    s->addr, s->port);
				fprintf(f, "%-16llx %-8d %-16s %-22s %s\n",
				    (unsigned long long)s->id, (int)s->pid, s->user,
				    cl, ci_dialect(s->dialect));
			}
		} else {
			fprintf(f, "%-16s %-8s %-12s %-6s %-22s %-7s %-8s %-4s "
			    "%-6s %s\n", "SESSION", "PID", "USER", "UID", "CLIENT",
			    "DIALECT", "SIGNING", "ENC", "IDLE", "SINCE");
			for (i = 0; i < ci->ns; i++) {
				const struct ci_sess *s = &ci->s[i];
				char cl[80], idle[24];

				snprintf(cl, sizeof(cl), s->port >= 0 ? "%s:%d" : "%s",
				    s->addr, s->port);
				if (s->idle_s >= 0)
					snprintf(idle, sizeof(idle), "%lds", s->idle_s);
				else
					snprintf(idle, sizeof(idle), "-");
				ci_time(s->since, ts, sizeof(ts));
				fprintf(f, "%-16llx %-8d %-12s %-6u %-22s %-7s %-8s "
				    "%-4s %-6s %s", (unsigned long long)s->id,
				    (int)s->pid, s->user, s->uid, cl,
				    ci_dialect(s->dialect), ci_signing(s->signing),
				    s->encrypt ? "on" : "off", idle, ts);
				if (msess_owner(s->id) != 0)
					fprintf(f, " (relayed by %d)",
					    (int)msess_owner(s->id));
				fputc('\n', f);
			}
		}
	}
	if (what & CTL_STATUS_SHARES) {
		fprintf(f, "\n%-16s %-8s %-10s %-16s %-12s %s\n", "SHARE", "PID",
		    "TREE", "SESSION", "USER", "CLIENT");
		for (i = 0; i < ci->nt; i++) {
			const struct ci_tree *t = &ci->t[i];

			fprintf(f, "%-16s %-8d %-10u %-16llx %-12s %s\n", t->share,
			    (int)t->pid, t->tid, (unsigned long long)t->sid,
			    ci_user_of(ci, t->sid), t->addr);
		}
	}
	if (what & CTL_STATUS_OPENS) {
		fprintf(f, "\n%-8s %-10s %-5s %-9s %-5s %-25s %-12s %s\n", "PID",
		    "ACCESS", "SHARE", "OPLOCK", "LEASE", "SINCE", "SHARE NAME",
		    "PATH");
		for (i = 0; i < ci->no; i++) {
			const struct ci_open *o = &ci->o[i];
			char note[64];

			ci_share_mode(o->share_access, m);
			ci_lease(o->lease_state, l);
			ci_time(o->since, ts, sizeof(ts));
			ci_open_note(o, note, sizeof(note));
			fprintf(f, "%-8d 0x%08x %-5s %-9s %-5s %-25s %-12s %s%s\n",
			    (int)o->pid, o->access, m, ci_oplock(o->oplock),
			    o->oplock == SHM_OPLOCK_LEASE ? l : "-", ts,
			    o->share[0] ? o->share : "?",
			    o->path[0] ? o->path : (o->share[0] ? "." : "?"),
			    note);
		}
	}
	if (what & CTL_STATUS_LOCKS) {
		fprintf(f, "\n%-8s %-9s %-20s %-20s %-12s %s\n", "PID", "TYPE",
		    "OFFSET", "LENGTH", "SHARE NAME", "PATH");
		for (i = 0; i < ci->nl; i++) {
			const struct ci_lock *lk = &ci->l[i];
			const struct ci_open *o = ci_open_of(ci, lk->pers);

			fprintf(f, "%-8d %-9s %-20llu %-20llu %-12s %s\n",
			    (int)lk->pid, lk->exclusive ? "exclusive" : "shared",
			    (unsigned long long)lk->offset,
			    (unsigned long long)lk->length,
			    o != NULL && o->share[0] ? o->share : "?",
			    o != NULL && o->path[0] ? o->path : "?");
		}
	}
	if (ci->truncated)
		fputs("# some lists were cut short\n", f);
	for (k = 0; q != NULL && k < q->nsent; k++) {
		int j;

		if (q->pids[k] == q->state_pid)
			continue;
		for (j = 0; j < q->ngot; j++)
			if (q->replies[j].pid == q->pids[k])
				break;
		if (j == q->ngot)
			fprintf(f, "# worker %d did not answer\n", (int)q->pids[k]);
	}
	if (q != NULL && q->state_pid == 0)
		fputs("# the state process is not running (restarting): "
		    "sessions and opens as the workers see them\n", f);
	else if (q != NULL && ci_state_reply(q) == NULL)
		fprintf(f, "# state busy: the state process (pid %d) did not "
		    "answer within %d ms\n", (int)q->state_pid,
		    CTL_QUERY_TIMEOUT_MS);
}


void
ctl_info_status(FILE *f, unsigned what, const struct ctl_query *q)
{
	struct ci ci;

	memset(&ci, 0, sizeof(ci));
	ci_load(&ci, what, q);
	if (what & CTL_STATUS_JSON)
		ci_json(f, what, &ci, q);
	else
		ci_table(f, what, &ci, q);
	ci_free(&ci);
}
