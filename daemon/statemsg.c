/*
 * Payloads of the state process's messages (layout in daemon/statemsg.h).
 */
#include "daemon/statemsg.h"

#include <string.h>

#include "proto/cur.h"

#define STATEMSG_END		0
#define STATEMSG_SESS		1
#define STATEMSG_OPEN		2
#define STATEMSG_LOCK		3
#define STATEMSG_DURABLE	4
#define STATEMSG_TAIL		2	/* u8 0, u8 truncated */

int
statemsg_purge_encode(const struct statemsg_purge *m, uint8_t *buf, size_t cap)
{
	struct wcur w;
	unsigned i;

	if (m->nlive > STATEMSG_LIVE_MAX)
		return -1;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, m->pid);
	wcur_le16(&w, m->nlive);
	for (i = 0; i < m->nlive; i++)
		wcur_le32(&w, m->live[i]);
	return w.err ? -1 : (int)(w.p - w.base);
}

int
statemsg_purge_decode(struct statemsg_purge *m, const uint8_t *p, size_t len)
{
	struct cur c;
	unsigned i;

	cur_init(&c, p, len);
	m->pid = cur_le32(&c);
	m->nlive = cur_le16(&c);
	if (c.err || m->nlive > STATEMSG_LIVE_MAX)
		return -1;
	for (i = 0; i < m->nlive; i++)
		m->live[i] = cur_le32(&c);
	return c.err || cur_left(&c) != 0 ? -1 : 0;
}

int
statemsg_counts_encode(const struct statemsg_counts *m, uint8_t *buf,
    size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le64(&w, m->sessions);
	wcur_le64(&w, m->opens);
	wcur_le64(&w, m->locks);
	wcur_le64(&w, m->map_bytes);
	return w.err ? -1 : (int)(w.p - w.base);
}

int
statemsg_counts_decode(struct statemsg_counts *m, const uint8_t *p, size_t len)
{
	struct cur c;

	cur_init(&c, p, len);
	m->sessions = cur_le64(&c);
	m->opens = cur_le64(&c);
	m->locks = cur_le64(&c);
	m->map_bytes = cur_le64(&c);
	return c.err || cur_left(&c) != 0 ? -1 : 0;
}

int
statemsg_writer_encode(const struct statemsg_writer *m, uint8_t *buf,
    size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_le32(&w, m->pid);
	wcur_le32(&w, m->held_ms);
	return w.err ? -1 : (int)(w.p - w.base);
}

int
statemsg_writer_decode(struct statemsg_writer *m, const uint8_t *p, size_t len)
{
	struct cur c;

	cur_init(&c, p, len);
	m->pid = cur_le32(&c);
	m->held_ms = cur_le32(&c);
	return c.err || cur_left(&c) != 0 ? -1 : 0;
}

void
statemsg_info_begin(struct statemsg_info_enc *e, uint8_t *buf, size_t cap)
{
	struct wcur w;

	memset(e, 0, sizeof(*e));
	e->buf = buf;
	e->cap = cap;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, STATEMSG_INFO_MAGIC);
	e->len = w.err ? 0 : 4;
	e->truncated = w.err;
}

/* A record written at e->len; taken only if it leaves room for the tail. */
static int
statemsg_info_take(struct statemsg_info_enc *e, struct wcur *w)
{
	size_t n = (size_t)(w->p - w->base);

	if (w->err || e->len + n + STATEMSG_TAIL > e->cap) {
		e->truncated = 1;
		return -1;
	}
	e->len += n;
	return 0;
}

static int
statemsg_info_room(struct statemsg_info_enc *e, struct wcur *w)
{
	if (e->truncated || e->len + STATEMSG_TAIL > e->cap) {
		e->truncated = 1;
		return -1;
	}
	wcur_init(w, e->buf + e->len, e->cap - e->len - STATEMSG_TAIL);
	return 0;
}

int
statemsg_info_sess(struct statemsg_info_enc *e, const struct statemsg_sess *s)
{
	struct wcur w;

	if (statemsg_info_room(e, &w) != 0)
		return -1;
	wcur_u8(&w, STATEMSG_SESS);
	wcur_le64(&w, s->id);
	wcur_le32(&w, s->pid);
	wcur_le32(&w, s->uid);
	wcur_str16(&w, s->user, sizeof(s->user));
	wcur_str16(&w, s->addr, sizeof(s->addr));
	wcur_le16(&w, s->dialect);
	wcur_u8(&w, s->signing);
	wcur_u8(&w, s->encryption);
	wcur_le64(&w, s->since);
	return statemsg_info_take(e, &w);
}

int
statemsg_info_open(struct statemsg_info_enc *e, const struct statemsg_open *o)
{
	struct wcur w;

	if (statemsg_info_room(e, &w) != 0)
		return -1;
	wcur_u8(&w, STATEMSG_OPEN);
	wcur_le64(&w, o->dev);
	wcur_le64(&w, o->ino);
	wcur_le64(&w, o->pers);
	wcur_le32(&w, o->pid);
	wcur_le64(&w, o->sid);
	wcur_le32(&w, o->access);
	wcur_le32(&w, o->share_access);
	wcur_u8(&w, o->oplock);
	wcur_le32(&w, o->lease_state);
	wcur_le32(&w, o->flags);
	wcur_le64(&w, o->since);
	wcur_str16(&w, o->share, sizeof(o->share));
	wcur_str16(&w, o->path, sizeof(o->path));
	return statemsg_info_take(e, &w);
}

int
statemsg_info_lock(struct statemsg_info_enc *e, const struct statemsg_lock *l)
{
	struct wcur w;

	if (statemsg_info_room(e, &w) != 0)
		return -1;
	wcur_u8(&w, STATEMSG_LOCK);
	wcur_le64(&w, l->dev);
	wcur_le64(&w, l->ino);
	wcur_le32(&w, l->pid);
	wcur_le64(&w, l->pers);
	wcur_le64(&w, l->offset);
	wcur_le64(&w, l->length);
	wcur_u8(&w, l->exclusive);
	return statemsg_info_take(e, &w);
}

int
statemsg_info_durable(struct statemsg_info_enc *e,
    const struct statemsg_durable *d)
{
	struct wcur w;

	if (statemsg_info_room(e, &w) != 0)
		return -1;
	wcur_u8(&w, STATEMSG_DURABLE);
	wcur_le64(&w, d->pers);
	wcur_le32(&w, d->flags);
	wcur_le32(&w, d->timeout_ms);
	return statemsg_info_take(e, &w);
}

size_t
statemsg_info_end(struct statemsg_info_enc *e)
{
	if (e->len + STATEMSG_TAIL > e->cap)
		return 0;
	e->buf[e->len++] = STATEMSG_END;
	e->buf[e->len++] = e->truncated ? 1 : 0;
	return e->len;
}

static int
statemsg_dec_sess(struct cur *c, const struct statemsg_info_cb *cb)
{
	struct statemsg_sess s;

	memset(&s, 0, sizeof(s));
	s.id = cur_le64(c);
	s.pid = cur_le32(c);
	s.uid = cur_le32(c);
	if (cur_str16(c, s.user, sizeof(s.user)) != 0 ||
	    cur_str16(c, s.addr, sizeof(s.addr)) != 0)
		return -1;
	s.dialect = cur_le16(c);
	s.signing = cur_u8(c);
	s.encryption = cur_u8(c);
	s.since = cur_le64(c);
	if (c->err)
		return -1;
	return cb->sess != NULL ? cb->sess(&s, cb->arg) : 0;
}

static int
statemsg_dec_open(struct cur *c, const struct statemsg_info_cb *cb)
{
	struct statemsg_open o;

	memset(&o, 0, sizeof(o));
	o.dev = cur_le64(c);
	o.ino = cur_le64(c);
	o.pers = cur_le64(c);
	o.pid = cur_le32(c);
	o.sid = cur_le64(c);
	o.access = cur_le32(c);
	o.share_access = cur_le32(c);
	o.oplock = cur_u8(c);
	o.lease_state = cur_le32(c);
	o.flags = cur_le32(c);
	o.since = cur_le64(c);
	if (cur_str16(c, o.share, sizeof(o.share)) != 0 ||
	    cur_str16(c, o.path, sizeof(o.path)) != 0 || c->err)
		return -1;
	return cb->open != NULL ? cb->open(&o, cb->arg) : 0;
}

static int
statemsg_dec_lock(struct cur *c, const struct statemsg_info_cb *cb)
{
	struct statemsg_lock l;

	memset(&l, 0, sizeof(l));
	l.dev = cur_le64(c);
	l.ino = cur_le64(c);
	l.pid = cur_le32(c);
	l.pers = cur_le64(c);
	l.offset = cur_le64(c);
	l.length = cur_le64(c);
	l.exclusive = cur_u8(c);
	if (c->err)
		return -1;
	return cb->lock != NULL ? cb->lock(&l, cb->arg) : 0;
}

static int
statemsg_dec_durable(struct cur *c, const struct statemsg_info_cb *cb)
{
	struct statemsg_durable d;

	memset(&d, 0, sizeof(d));
	d.pers = cur_le64(c);
	d.flags = cur_le32(c);
	d.timeout_ms = cur_le32(c);
	if (c->err)
		return -1;
	return cb->durable != NULL ? cb->durable(&d, cb->arg) : 0;
}

int
statemsg_info_decode(const uint8_t *p, size_t len,
    const struct statemsg_info_cb *cb, int *truncated)
{
	struct cur c;
	uint8_t kind, t;
	int rc = 0;

	*truncated = 0;
	cur_init(&c, p, len);
	if (cur_le32(&c) != STATEMSG_INFO_MAGIC || c.err)
		return -1;
	/* Every record takes at least one byte: bounded by len. */
	while ((kind = cur_u8(&c)) != STATEMSG_END && !c.err) {
		switch (kind) {
		case STATEMSG_SESS:
			rc = statemsg_dec_sess(&c, cb);
			break;
		case STATEMSG_OPEN:
			rc = statemsg_dec_open(&c, cb);
			break;
		case STATEMSG_LOCK:
			rc = statemsg_dec_lock(&c, cb);
			break;
		case STATEMSG_DURABLE:
			rc = statemsg_dec_durable(&c, cb);
			break;
		default:
			return -1;
		}
		if (rc != 0)
			return -1;
	}
	t = cur_u8(&c);
	if (c.err || cur_left(&c) != 0 || t > 1)
		return -1;
	*truncated = t;
	return 0;
}
