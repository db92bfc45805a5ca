/*
 * Operations messages from the master (layout and list in worker/ctlmsg.h):
 * ping, close-share, kill-client, kill-session, the status report of this
 * worker's connections, and its request counters.
 *
 * Tearing down goes through the core's own functions, so files are closed
 * the way a TREE_DISCONNECT, LOGOFF or a lost connection closes them:
 * conn_tree_free() (opens of the tree, then the root fd),
 * conn_session_free() (its trees, pending requests and opens), and for a
 * whole connection shutdown(2) of the socket, after which the event loop
 * sees end-of-file and frees the connection on its usual path.
 */
#include "worker/ctlmsg.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/durable.h"
#include "worker/file_open.h"
#include "worker/metrics.h"
#include "worker/open.h"
#include "worker/state.h"
#include "worker/unlink_as.h"
#include "worker/worker.h"

static uint8_t	ctlmsg_buf[MSG_MAX_PAYLOAD];

/*
 * Configs replaced by a reload that trees still use: a tree whose share
 * a reload removed keeps serving on the old definition until its client
 * disconnects it, or an administrator closes it (`close-share`,
 * `reload --force`).  Freed once no tree points into them.
 */
#define CTLMSG_MAX_RETIRED	8
static struct conf	*ctlmsg_retired[CTLMSG_MAX_RETIRED];
static int		 ctlmsg_reload_force;	/* MSG_RELOAD said --force */
int			 ctlmsg_admin_waiting;

static void
ctlmsg_reply(uint32_t type, uint32_t id, const void *p, size_t len)
{
	int rc = msg_send(MSG_CHILD_FD, type, id, p, len, -1);

	if (rc != 0)
		log_warnx("reply %u to the master: %s", type, strerror(-rc));
}

static void
ctlmsg_done(uint32_t id, uint32_t count)
{
	uint8_t p[4];

	le32_put(p, count);
	ctlmsg_reply(MSG_CTL_DONE, id, p, sizeof(p));
}

/* A NUL-terminated string payload of at most max bytes, or NULL. */
static const char *
ctlmsg_str(const struct msg *m, size_t max)
{
	if (m->len < 2 || m->len > max || m->payload[m->len - 1] != '\0' ||
	    memchr(m->payload, '\0', m->len) != m->payload + m->len - 1)
		return NULL;
	return (const char *)m->payload;
}

/* ---- close-share ---- */

/*
 * Closes a tree as a TREE_DISCONNECT would, except that its durable opens
 * are kept as on a network loss (disconnected in the state env, with
 * their locks and leases, for the client to reclaim with DHnC / DH2C).
 */
static void
ctlmsg_tree_close(struct conn *c, struct tree *t)
{
	if (c->priv != NULL && c->priv->opens != NULL)
		durable_disconnect_tree(c, t);
	conn_tree_free(c, t);
}

struct ctlmsg_share {
	const char	*name;
	uint32_t	 n;
};

static void
ctlmsg_close_share_conn(struct conn *c, void *arg)
{
	struct ctlmsg_share *cs = arg;
	int i;

	for (i = 0; i < CONN_MAX_TREES; i++) {
		struct tree *t = &c->trees[i];

		if (!t->in_use || t->share == NULL ||
		    strcasecmp(tree_name(t), cs->name) != 0)
			continue;
		/*
		 * The client learns on its next request on the tree, which
		 * gets STATUS_NETWORK_NAME_DELETED (dispatch finds no tree).
		 */
		log_info("%s: tree %u on [%s] closed by the administrator",
		    c->peer, t->tree_id, tree_name(t));
		ctlmsg_tree_close(c, t);
		cs->n++;
	}
}

/* ---- reload ---- */

/* Does a tree of c point into the shares of cf? */
struct ctlmsg_uses {
	const struct conf	*cf;
	int			 used;
};

static void
ctlmsg_uses_conn(struct conn *c, void *arg)
{
	struct ctlmsg_uses *u = arg;
	int i;

	for (i = 0; i < CONN_MAX_TREES; i++) {
		const struct tree *t = &c->trees[i];

		if (t->in_use && t->share != NULL &&
		    t->share >= u->cf->shares &&
		    t->share < u->cf->shares + u->cf->nshares)
			u->used = 1;
	}
}

static int
ctlmsg_conf_used(const struct conf *cf)
{
	struct ctlmsg_uses u = { cf, 0 };

	worker_foreach_conn(ctlmsg_uses_conn, &u);
	return u.used;
}

/* Frees the retired configs no tree uses any more. */
static void
ctlmsg_conf_collect(void)
{
	int i;

	for (i = 0; i < CTLMSG_MAX_RETIRED; i++)
		if (ctlmsg_retired[i] != NULL &&
		    !ctlmsg_conf_used(ctlmsg_retired[i])) {
			conf_free(ctlmsg_retired[i]);
			ctlmsg_retired[i] = NULL;
		}
}

struct ctlmsg_reload {
	const struct conf	*nc;
	const struct conf	*closing;	/* close its trees (no room) */
	int			 force;
	unsigned		 kept, closed;
};

static void
ctlmsg_reload_conn(struct conn *c, void *arg)
{
	struct ctlmsg_reload *rl = arg;
	struct conn_private *pv = c->priv;
	const struct conf_share *sh;
	unsigned i;
	int k;

	c->conf = rl->nc;	/* new tree connects see the new shares */
	for (k = 0; k < CONN_MAX_TREES; k++) {
		struct tree *t = &c->trees[k];
		const struct conf_share *old;

		if (!t->in_use || t->share == NULL)
			continue;
		old = t->share;
		sh = conf_share_find(rl->nc, old->name);
		if (sh != NULL) {
			t->share = sh;
			/* a configured share's name lives in its conf */
			if (t->name == old->name)
				t->name = sh->name;
			/* Files name their share for file_open_busy_below(). */
			for (i = 0; pv->opens != NULL && i < pv->nopens; i++) {
				struct open *o = &pv->opens[i];

				if (o->tree == t && (o->kind == OPEN_FILE ||
				    o->kind == OPEN_DIR) && o->u.file != NULL &&
				    o->u.file->share == old)
					o->u.file->share = sh;
			}
			continue;
		}
		if (rl->force || (rl->closing != NULL &&
		    old >= rl->closing->shares &&
		    old < rl->closing->shares + rl->closing->nshares)) {
			log_info("%s: tree %u on removed share [%s] closed",
			    c->peer, t->tree_id, old->name);
			ctlmsg_tree_close(c, t);
			rl->closed++;
			continue;
		}
		rl->kept++;
	}
}

void
ctlmsg_reload_conf(struct conf *old, struct conf *nc)
{
	struct ctlmsg_reload rl;
	int i;

	memset(&rl, 0, sizeof(rl));
	rl.nc = nc;
	rl.force = ctlmsg_reload_force;
	ctlmsg_reload_force = 0;
	ctlmsg_conf_collect();
	for (i = 0; i < CTLMSG_MAX_RETIRED; i++)
		if (ctlmsg_retired[i] == NULL)
			break;
	if (i == CTLMSG_MAX_RETIRED) {
		/* No room to keep one more: the oldest one's trees close. */
		rl.closing = ctlmsg_retired[0];
		i = 0;
	}
	worker_foreach_conn(ctlmsg_reload_conn, &rl);
	if (rl.closing != NULL) {
		conf_free(ctlmsg_retired[0]);
		ctlmsg_retired[0] = NULL;
		ctlmsg_conf_collect();
	}
	if (rl.kept > 0)
		log_info("%u tree(s) of removed shares kept until closed",
		    rl.kept);
	if (ctlmsg_conf_used(old))
		ctlmsg_retired[i] = old;
	else
		conf_free(old);
}

void
ctlmsg_metrics_final(int chan)
{
	int n;

	state_metrics_fill(&metrics);
	n = metrics_encode(&metrics, ctlmsg_buf, sizeof(ctlmsg_buf));
	/* Best effort: a master that is gone has no totals to keep. */
	if (n > 0)
		(void)msg_send(chan, MSG_METRICS_REP, 0, ctlmsg_buf, (size_t)n,
		    -1);
}

/* ---- kill-client / kill-session ---- */

/* Ends the connection: the loop reads EOF next and frees it as usual. */
static void
ctlmsg_drop_conn(struct conn *c, const char *why)
{
	log_info("%s: connection dropped (%s)", c->peer, why);
	c->priv->dead = 1;
	(void)shutdown(c->fd, SHUT_RDWR);
}

struct ctlmsg_kill {
	const char	*addr;		/* kill-client: "ADDR" or "ADDR:PORT" */
	uint64_t	 sid;		/* kill-session */
	uint32_t	 n;
	const char	*why;		/* kill-session: who ends it */
	const struct admmsg_req *req;	/* NetrSessionDel */
};

static void
ctlmsg_kill_client_conn(struct conn *c, void *arg)
{
	struct ctlmsg_kill *k = arg;
	char withport[96];

	if (c->priv->dead)
		return;
	snprintf(withport, sizeof(withport), strchr(c->peer, ':') != NULL ?
	    "[%s]:%u" : "%s:%u", c->peer, conn_peer_port(c));
	if (strcmp(k->addr, c->peer) != 0 && strcmp(k->addr, withport) != 0)
		return;
	ctlmsg_drop_conn(c, "kill-client");
	k->n++;
}

static void
ctlmsg_kill_session_conn(struct conn *c, void *arg)
{
	struct ctlmsg_kill *k = arg;
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS; i++) {
		struct session *s = &c->sessions[i];

		if (!s->in_use || s->session_id != k->sid)
			continue;
		log_info("%s: session %llx of %s ended by %s", c->peer,
		    (unsigned long long)s->session_id, s->user, k->why);
		/* Next request on it: STATUS_USER_SESSION_DELETED. */
		state_session_del(s);
		conn_session_free(c, s);
		k->n++;
		/* A connection left without a session serves nobody. */
		if (conn_session_count(c) == 0)
			ctlmsg_drop_conn(c, "its last session was killed");
	}
}

/*
 * NetrSessionDel (daemon/admmsg.h): the sessions of client (its address,
 * "\\" allowed before it) and user, "" matching any.  The master
 * refused the call with both empty.
 */
static void
ctlmsg_sess_del_conn(struct conn *c, void *arg)
{
	struct ctlmsg_kill *k = arg;
	const struct admmsg_req *r = k->req;
	const char *client = r->client;
	int i;

	while (*client == '\\')
		client++;
	if (c->priv->dead || (client[0] != '\0' &&
	    strcasecmp(client, c->peer) != 0))
		return;
	for (i = 0; i < CONN_MAX_SESSIONS; i++) {
		struct session *s = &c->sessions[i];

		if (!s->in_use || (r->user[0] != '\0' &&
		    strcasecmp(r->user, s->user) != 0))
			continue;
		if (ctlmsg_admin_waiting) {
			/* maybe the session whose NetrSessionDel waits */
			k->n += (uint32_t)conn_session_count(c);
			ctlmsg_drop_conn(c, "NetrSessionDel of an administrator");
			return;
		}
		k->sid = s->session_id;
		ctlmsg_kill_session_conn(c, k);
	}
}

static void
ctlmsg_admin_do(struct msg *m)
{
	struct ctlmsg_kill k = { NULL, 0, 0, "an administrator (srvsvc)",
	    NULL };
	struct admmsg_req r;

	if (admmsg_decode(&r, m->payload, m->len) == 0) {
		k.req = &r;
		if (r.op == ADMMSG_FILE_CLOSE)
			k.n = open_close_file_id(r.file_id,
			    "an administrator (srvsvc NetrFileClose)");
		else if (r.client[0] != '\0' || r.user[0] != '\0')
			worker_foreach_conn(ctlmsg_sess_del_conn, &k);
	}
	ctlmsg_done(m->id, k.n);
}

/* ---- status report ---- */

struct ctlmsg_info {
	struct wcur	 w;
	uint32_t	 nconn;
	int		 truncated;
};

/* Room for n more bytes, keeping one for the trailing truncated flag. */
static int
ctlmsg_fits(struct ctlmsg_info *in, size_t n)
{
	if (in->truncated || wcur_left(&in->w) < n + 1) {
		in->truncated = 1;
		return 0;
	}
	return 1;
}

static void
ctlmsg_put_str(struct wcur *w, const char *s)
{
	size_t n = strnlen(s, 4096);

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, s, n);
}

static uint32_t
ctlmsg_idle_ms(const struct conn *c)
{
	struct tcp_info ti;
	socklen_t sl = sizeof(ti);

	/*
	 * The kernel's time since data last arrived: no bookkeeping here.  A
	 * relayed connection's socket is a socketpair with the owner, which
	 * reports the client's socket; the master takes the idle time from it
	 * (daemon/ctl_info.c ci_conn_idle).
	 */
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &sl) == -1)
		return CTLMSG_IDLE_UNKNOWN;
	return ti.tcpi_last_data_recv;
}

static const char *
ctlmsg_open_path(const struct open *o)
{
	if ((o->kind == OPEN_FILE || o->kind == OPEN_DIR) && o->u.file != NULL)
		return o->u.file->path;
	return "";
}

static void
ctlmsg_info_conn(struct conn *c, void *arg)
{
	struct ctlmsg_info *in = arg;
	struct conn_private *pv = c->priv;
	uint8_t *cnt;
	uint32_t n;
	unsigned i;

	if (pv->dead || !ctlmsg_fits(in, 2 + strlen(c->peer) + 2 + 4 + 2 + 12))
		return;
	ctlmsg_put_str(&in->w, c->peer);
	wcur_le16(&in->w, conn_peer_port(c));
	wcur_le32(&in->w, ctlmsg_idle_ms(c));
	wcur_le16(&in->w, c->dialect);
	in->nconn++;

	cnt = wcur_reserve(&in->w, 4);
	for (i = 0, n = 0; i < CONN_MAX_SESSIONS; i++) {
		const struct session *s = &c->sessions[i];

		if (!s->in_use || !ctlmsg_fits(in, 8 + 4 + 2 + strlen(s->user) + 3))
			continue;
		wcur_le64(&in->w, s->session_id);
		wcur_le32(&in->w, (uint32_t)s->uid);
		ctlmsg_put_str(&in->w, s->user);
		wcur_u8(&in->w, (uint8_t)(s->signing ?
		    (s->signing_required ? 2 : 1) : 0));
		wcur_u8(&in->w, (uint8_t)(s->encrypt ? 1 : 0));
		wcur_u8(&in->w, (uint8_t)s->state);
		n++;
	}
	if (cnt != NULL)
		le32_put(cnt, n);

	cnt = wcur_reserve(&in->w, 4);
	for (i = 0, n = 0; i < CONN_MAX_TREES; i++) {
		const struct tree *t = &c->trees[i];
		const char *name = t->share != NULL ? tree_name(t) : "";

		if (!t->in_use || !ctlmsg_fits(in, 4 + 8 + 2 + strlen(name)))
			continue;
		wcur_le32(&in->w, t->tree_id);
		wcur_le64(&in->w, t->sess != NULL ? t->sess->session_id : 0);
		ctlmsg_put_str(&in->w, name);
		n++;
	}
	if (cnt != NULL)
		le32_put(cnt, n);

	cnt = wcur_reserve(&in->w, 4);
	for (i = 0, n = 0; pv->opens != NULL && i < pv->nopens; i++) {
		const struct open *o = &pv->opens[i];
		const char *share, *path;

		if (o->kind == OPEN_FREE)
			continue;
		share = o->tree != NULL && o->tree->share != NULL ?
		    tree_name(o->tree) : "";
		path = ctlmsg_open_path(o);
		if (!ctlmsg_fits(in, 16 + 4 + strlen(share) + strlen(path) +
		    4 + 4 + 1 + 4 + 1))
			break;
		wcur_le64(&in->w, o->fid_persistent);
		wcur_le64(&in->w, o->sess != NULL ? o->sess->session_id : 0);
		ctlmsg_put_str(&in->w, share);
		ctlmsg_put_str(&in->w, path);
		wcur_le32(&in->w, o->access);
		wcur_le32(&in->w, (o->kind == OPEN_FILE || o->kind == OPEN_DIR) &&
		    o->u.file != NULL ? o->u.file->share_access : 0);
		wcur_u8(&in->w, o->oplock_level);
		wcur_le32(&in->w, o->lease_state);
		wcur_u8(&in->w, (uint8_t)o->kind);
		n++;
	}
	if (cnt != NULL)
		le32_put(cnt, n);
}

static void
ctlmsg_info(uint32_t id)
{
	struct ctlmsg_info in;
	uint8_t *nconn;

	memset(&in, 0, sizeof(in));
	wcur_init(&in.w, ctlmsg_buf, sizeof(ctlmsg_buf));
	wcur_le32(&in.w, CTLMSG_INFO_VERSION);
	wcur_le32(&in.w, (uint32_t)getpid());
	nconn = wcur_reserve(&in.w, 4);
	worker_foreach_conn(ctlmsg_info_conn, &in);
	if (nconn != NULL)
		le32_put(nconn, in.nconn);
	wcur_u8(&in.w, (uint8_t)in.truncated);
	if (in.w.err) {
		log_warnx("status report does not fit");
		return;
	}
	ctlmsg_reply(MSG_INFO_REP, id, ctlmsg_buf, wcur_off(&in.w));
}

int
ctlmsg_handle(struct msg *m)
{
	switch (m->type) {
	case MSG_PING: {
		uint8_t p[4];

		le32_put(p, (uint32_t)getpid());
		ctlmsg_reply(MSG_PONG, m->id, p, sizeof(p));
		return 1;
	}
	case MSG_CLOSE_SHARE: {
		struct ctlmsg_share cs = { ctlmsg_str(m, 1024), 0 };

		if (cs.name != NULL)
			worker_foreach_conn(ctlmsg_close_share_conn, &cs);
		ctlmsg_conf_collect();
		ctlmsg_done(m->id, cs.n);
		return 1;
	}
	case MSG_RELOAD:
		/* The event loop reloads; this only notes --force for it. */
		if (m->len == 4 && (le32_get(m->payload) & MSG_RELOAD_FORCE))
			ctlmsg_reload_force = 1;
		return 0;
	case MSG_KILL_CLIENT: {
		struct ctlmsg_kill k = { ctlmsg_str(m, 128), 0, 0, NULL, NULL };

		if (k.addr != NULL)
			worker_foreach_conn(ctlmsg_kill_client_conn, &k);
		ctlmsg_done(m->id, k.n);
		return 1;
	}
	case MSG_KILL_SESSION: {
		struct ctlmsg_kill k = { NULL, 0, 0, "the administrator", NULL };

		/* id 0: the master's own, for an id another worker holds */
		if (m->id == 0)
			k.why = "the master (its id is another worker's)";
		if (m->len == 8) {
			k.sid = le64_get(m->payload);
			worker_foreach_conn(ctlmsg_kill_session_conn, &k);
		}
		ctlmsg_done(m->id, k.n);
		return 1;
	}
	case MSG_INFO_REQ:
		ctlmsg_info(m->id);
		return 1;
	case MSG_ADMIN_DO:
		ctlmsg_admin_do(m);
		return 1;
	case MSG_UNLINK_DO:
		/* Delete-on-close for another user's last close: no answer. */
		unlink_as_handle(m);
		return 1;
	case MSG_METRICS_REQ: {
		int n;

		state_metrics_fill(&metrics);
		n = metrics_encode(&metrics, ctlmsg_buf, sizeof(ctlmsg_buf));

		if (n > 0)
			ctlmsg_reply(MSG_METRICS_REP, m->id, ctlmsg_buf, (size_t)n);
		return 1;
	}
	}
	return 0;
}
