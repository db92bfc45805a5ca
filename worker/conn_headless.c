/*
 * A session outliving its home connection (MS-SMB2 3.3.7.1; HACKING.md
 * "Channel binding"): the home's struct conn is kept without its socket
 * while a channel of one of its sessions is alive, so the session's trees,
 * opens and signing state stay where the channel slots point (bound_conn)
 * and nothing moves.  worker/loop.c decides when (wk_close) and frees it
 * (wk_headless_sweep); conn_flush and conn_notice_queue (worker/conn.c)
 * discard output and pass break notices to a channel.
 */
#include "worker/conn_priv.h"

#include <string.h>

struct conn *
conn_headless_channel(struct conn *c, uint64_t sid)
{
	struct session *s = conn_session_find(c, sid);
	unsigned k;

	if (s == NULL || s->bound != NULL || s->state != SESS_VALID)
		return NULL;
	for (k = 0; k < s->nchan; k++) {
		struct conn *cc = s->chan_conn[k];

		if (cc != c && cc->priv != NULL && !cc->priv->dead &&
		    !cc->priv->headless)
			return cc;
	}
	return NULL;
}

/* Does a valid session of c (its home) still have a live channel? */
static int
conn_session_has_channel(struct conn *c, const struct session *s)
{
	return s->in_use && s->bound == NULL && s->state == SESS_VALID &&
	    conn_headless_channel(c, s->session_id) != NULL;
}

int
conn_keep_headless(struct conn *c)
{
	struct conn_private *pv = c->priv;
	struct conn_notice notices[sizeof(pv->notices) / sizeof(pv->notices[0])];
	int keep[CONN_MAX_SESSIONS], any = 0;
	unsigned i, k, nn;

	if (pv == NULL || pv->role != CONN_ROLE_WORKER || pv->headless ||
	    pv->dead || pv->opens == NULL)
		return 0;
	for (i = 0; i < CONN_MAX_SESSIONS; i++) {
		keep[i] = conn_session_has_channel(c, &c->sessions[i]);
		any |= keep[i];
	}
	if (!any || pv->rx_active)
		return 0;
	conn_rx_release(c);	/* a WRITE payload being buffered: dropped */
	pv->peer_port = conn_peer_port(c);	/* before the socket goes */
	pv->headless = 1;
	/* Nothing more is read; what was to be written is dropped. */
	pv->rlen = 0;
	(void)conn_flush(c);
	/*
	 * The requests parked here end with the channel, but a CREATE
	 * waiting for a break goes on: its open is the one a replay of the
	 * CREATE on another channel gets (MS-SMB2 3.3.5.9.10; until then a
	 * replay gets FILE_NOT_AVAILABLE, worker/durable.c).
	 */
	for (k = 0; k < conn_pending_nslots(pv); k++) {
		struct conn_pending *p = conn_pending_at(pv, k);
		struct session *s;

		if (!p->in_use)
			continue;
		s = conn_session_find(c, p->session_id);
		if (s != NULL && keep[s - c->sessions] &&
		    p->kind == PARK_BREAK && p->command == SMB2_CREATE &&
		    p->final == 0)
			continue;
		if (p->cancel != NULL)
			p->cancel(c, p);
		conn_pending_del(p);
	}
	pv->nready = 0;
	for (k = 0; k < conn_pending_nslots(pv); k++)
		if (conn_pending_at(pv, k)->in_use &&
		    conn_pending_at(pv, k)->ready)
			pv->nready++;
	/* The other sessions (and channel slots) here end as on a disconnect. */
	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use && !keep[i])
			conn_session_free(c, &c->sessions[i]);
	/* Break notices waiting for this socket go to a channel instead. */
	nn = pv->nnotices;
	memcpy(notices, pv->notices, nn * sizeof(notices[0]));
	pv->nnotices = 0;
	for (k = 0; k < nn; k++)
		if (conn_notice_queue(c, notices[k].buf, notices[k].len,
		    notices[k].session_id) != 0)
			conn_warnx(c, "break notification dropped (queue full)");
	return 1;
}

int
conn_headless_done(struct conn *c)
{
	unsigned i;

	if (!c->priv->headless)
		return 0;
	if (c->priv->dead)
		return 1;
	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (conn_session_has_channel(c, &c->sessions[i]))
			return 0;
	return 1;
}
