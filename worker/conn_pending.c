/*
 * A connection's pending async requests (parked CREATE, LOCK, NOTIFY:
 * their slots, wakes, ends and deadlines, across the channels of a
 * session) and the notices queued for it (worker/conn.h).
 */
#include "worker/conn_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/smb2_hdr.h"
#include "worker/dispatch.h"
#include "worker/state.h"
#include "worker/durable.h"
#include "worker/smb2_notify.h"
#include "worker/worker.h"

/* Pages of parked slots held by this worker's connections. */
static unsigned park_pages_worker;

static void
pending_take(struct conn_private *pv, struct conn_pending *p, uint64_t mid,
    uint64_t sid)
{
	uint8_t *buf = p->buf;
	size_t cap = p->cap;

	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->cap = cap;
	p->in_use = 1;
	p->async_id = pv->next_async_id++;
	p->message_id = mid;
	p->session_id = sid;
}

/*
 * One more page of small slots: when the connection's are all taken, it
 * has pages left and so has the worker.  Once per CONN_PARK_PAGE parks at
 * most, kept until the connection ends.
 */
static struct conn_pending *
pending_grow(struct conn_private *pv)
{
	struct conn_park_page *pg;
	unsigned k;

	if (pv->npark_pages >= CONN_PARK_PAGES ||
	    park_pages_worker >= CONN_PARK_WORKER_PAGES)
		return NULL;
	pg = calloc(1, sizeof(*pg));
	if (pg == NULL)
		return NULL;
	for (k = 0; k < CONN_PARK_PAGE; k++) {
		pg->slot[k].buf = pg->buf[k];
		pg->slot[k].cap = CONN_PARK_SMALL;
	}
	pv->park_pages[pv->npark_pages++] = pg;
	park_pages_worker++;
	log_debug(2, "parked requests: page %u of the connection (%zu "
	    "bytes), %u of the worker's %u", pv->npark_pages, sizeof(*pg),
	    park_pages_worker, CONN_PARK_WORKER_PAGES);
	return &pg->slot[0];
}

struct conn_pending *
conn_pending_add(struct conn *c, uint64_t mid, uint64_t sid, size_t need)
{
	struct conn_private *pv = c->priv;
	struct conn_pending *p, *free_slot = NULL;
	unsigned i, n = conn_pending_nslots(pv), used = 0;

	for (i = 0; i < n; i++) {
		p = conn_pending_at(pv, i);
		if (p->in_use)
			used++;
		/* a base slot's buffer, made on its first use, is big */
		else if (free_slot == NULL && (i < CONN_PARK_BASE ||
		    need <= p->cap))
			free_slot = p;
	}
	if (used >= CONN_MAX_PENDING)
		return NULL;
	if (free_slot == NULL && need <= CONN_PARK_SMALL)
		free_slot = pending_grow(pv);
	if (free_slot == NULL)
		return NULL;
	pending_take(pv, free_slot, mid, sid);
	return free_slot;
}

void
conn_pending_free_all(struct conn *c)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; i < CONN_PARK_BASE; i++)
		free(pv->pending[i].buf);
	for (i = 0; i < pv->npark_pages; i++)
		free(pv->park_pages[i]);
	park_pages_worker -= pv->npark_pages;
	pv->npark_pages = 0;
}

struct conn_pending *
conn_pending_find(struct conn *c, uint64_t async_id, uint64_t mid)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use)
			continue;
		if (async_id != 0 ? p->async_id == async_id : p->message_id == mid)
			return p;
	}
	return NULL;
}

void
conn_pending_del(struct conn_pending *p)
{
	uint8_t *buf = p->buf;	/* kept for the slot's next use */
	size_t cap = p->cap;

	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->cap = cap;
}

void
conn_pending_wake(struct conn *c, struct conn_pending *p)
{
	if (!p->in_use || p->ready || p->final != 0)
		return;
	p->ready = 1;
	c->priv->nready++;
}

void
conn_pending_finish(struct conn *c, struct conn_pending *p, ntstatus_t st)
{
	if (!p->in_use || p->final != 0)
		return;
	/* The owner's records (lock waiters, watches) go now. */
	if (p->cancel != NULL) {
		p->cancel(c, p);
		p->cancel = NULL;
	}
	if (!p->ready)
		c->priv->nready++;
	p->ready = 1;
	p->final = st;
}

void
conn_pending_drop(struct conn *c, uint64_t sid)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || (sid != 0 && p->session_id != sid))
			continue;
		if (p->cancel != NULL)
			p->cancel(c, p);
		conn_pending_del(p);
	}
}

/*
 * Runs fn on every other connection bound as a channel to a session of c
 * (a request on a channel is parked there, while its open lives on c).
 */
static void
conn_foreach_channel(struct conn *c, void (*fn)(struct conn *, void *),
    void *arg)
{
	unsigned i, k;

	for (i = 0; i < CONN_MAX_SESSIONS; i++) {
		struct session *s = &c->sessions[i];

		if (!s->in_use || s->bound != NULL)
			continue;
		for (k = 0; k < s->nchan; k++)
			if (s->chan_conn[k] != c && s->chan_conn[k]->priv != NULL)
				fn(s->chan_conn[k], arg);
	}
}

struct pending_match {
	int		 kind;
	uint64_t	 dev, ino;
	uint64_t	 fp, fv;
	ntstatus_t	 st;
	unsigned	 n;
};

static unsigned pending_wake_file(struct conn *, int, uint64_t, uint64_t);
static void pending_end_open(struct conn *, uint64_t, uint64_t, ntstatus_t);

static void
pending_wake_chan(struct conn *cc, void *arg)
{
	struct pending_match *m = arg;
	unsigned n = pending_wake_file(cc, m->kind, m->dev, m->ino);

	if (n > 0)
		worker_kick(cc);	/* its loop runs the woken slots */
	m->n += n;
}

unsigned
conn_pending_wake_file(struct conn *c, int kind, uint64_t dev, uint64_t ino)
{
	struct pending_match m = { kind, dev, ino, 0, 0, 0, 0 };

	m.n = pending_wake_file(c, kind, dev, ino);
	conn_foreach_channel(c, pending_wake_chan, &m);
	return m.n;
}

static unsigned
pending_wake_file(struct conn *c, int kind, uint64_t dev, uint64_t ino)
{
	struct conn_private *pv = c->priv;
	unsigned i, n = 0;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || p->kind != kind)
			continue;
		if ((dev != 0 || ino != 0) && (p->dev != dev || p->ino != ino))
			continue;
		conn_pending_wake(c, p);
		n++;
	}
	return n;
}

static void
pending_end_open_chan(struct conn *cc, void *arg)
{
	struct pending_match *m = arg;

	pending_end_open(cc, m->fp, m->fv, m->st);
	if (cc->priv->nready > 0)
		worker_kick(cc);
}

void
conn_pending_end_open(struct conn *c, uint64_t fp, uint64_t fv, ntstatus_t st)
{
	struct pending_match m = { 0, 0, 0, fp, fv, st, 0 };

	/* A closed directory handle's CHANGE_NOTIFY watch ends with it. */
	if (c->priv->role == CONN_ROLE_WORKER)
		smb2_notify_open_gone(c, fp, fv);
	pending_end_open(c, fp, fv, st);
	conn_foreach_channel(c, pending_end_open_chan, &m);
}

static void
pending_end_open(struct conn *c, uint64_t fp, uint64_t fv, ntstatus_t st)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || p->fid_persistent != fp ||
		    p->fid_volatile != fv)
			continue;
		/* What Windows answers a request whose handle closed. */
		conn_pending_finish(c, p, st != 0 ? st :
		    p->kind == PARK_LOCK ? STATUS_RANGE_NOT_LOCKED :
		    p->kind == PARK_NOTIFY ? STATUS_NOTIFY_CLEANUP :
		    STATUS_CANCELLED);
	}
}

unsigned
conn_pending_end_session(struct conn *c, uint64_t sid)
{
	struct conn_private *pv = c->priv;
	unsigned i, n = 0;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || p->session_id != sid || p->final != 0)
			continue;
		conn_pending_finish(c, p, p->kind == PARK_LOCK ?
		    STATUS_RANGE_NOT_LOCKED : p->kind == PARK_NOTIFY ?
		    STATUS_NOTIFY_CLEANUP : STATUS_CANCELLED);
		n++;
	}
	return n;
}

struct pending_tree {
	uint64_t	 sid;
	uint32_t	 tree_id;
};

static void
pending_end_tree_chan(struct conn *cc, void *arg)
{
	struct pending_tree *m = arg;

	if (cc->priv->role == CONN_ROLE_WORKER && !cc->priv->dead &&
	    cc->fd >= 0 && conn_pending_end_tree(cc, m->sid, m->tree_id) > 0)
		worker_kick(cc);
}

unsigned
conn_pending_end_tree(struct conn *c, uint64_t sid, uint32_t tree_id)
{
	struct conn_private *pv = c->priv;
	struct pending_tree m = { sid, tree_id };
	unsigned i, n = 0;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || p->session_id != sid ||
		    p->tree_id != tree_id || p->final != 0)
			continue;
		/* as a LOGOFF answers them; a CREATE is cancelled */
		conn_pending_finish(c, p, p->kind == PARK_LOCK ?
		    STATUS_RANGE_NOT_LOCKED : p->kind == PARK_NOTIFY ?
		    STATUS_NOTIFY_CLEANUP : STATUS_CANCELLED);
		n++;
	}
	conn_foreach_channel(c, pending_end_tree_chan, &m);
	return n;
}

uint64_t
conn_pending_tick(struct conn *c, uint64_t now_ms)
{
	struct conn_private *pv = c->priv;
	uint64_t next = 0;
	unsigned i;

	for (i = 0; i < conn_pending_nslots(pv); i++) {
		struct conn_pending *p = conn_pending_at(pv, i);

		if (!p->in_use || p->deadline_ms == 0)
			continue;
		if (p->deadline_ms <= now_ms)
			conn_pending_wake(c, p);	/* the handler sees the time */
		else if (next == 0 || p->deadline_ms < next)
			next = p->deadline_ms;
	}
	return next;
}

int
conn_async_ready(const struct conn *c)
{
	return c->priv->nready > 0 || c->priv->nnotices > 0;
}

int
conn_notice_queue(struct conn *c, const uint8_t *msg, size_t len,
    uint64_t sid)
{
	struct conn_private *pv = c->priv;
	struct conn_notice *n;

	if (pv->headless) {
		/*
		 * MS-SMB2 3.3.4.6/3.3.4.7: any channel of the session will
		 * do.  With none left (its last one closed this loop turn)
		 * it goes nowhere, like a break to a client that went away.
		 */
		struct conn *cc = conn_headless_channel(c, sid);
		int rc;

		if (cc == NULL)
			return 0;
		rc = conn_notice_queue(cc, msg, len, sid);
		if (rc == 0)
			worker_kick(cc);
		return rc;
	}
	if (pv->nnotices >= sizeof(pv->notices) / sizeof(pv->notices[0]) ||
	    len > sizeof(n->buf))
		return -ENOBUFS;
	n = &pv->notices[pv->nnotices++];
	memcpy(n->buf, msg, len);
	n->len = (uint16_t)len;
	n->session_id = sid;
	return 0;
}
