/*
 * The per-connection open table (worker/open.h).  The slots are allocated
 * with the connection; the volatile id is the slot index in the low 16 bits
 * and a generation above it, so a stale id never finds a reused slot.
 */
#include "worker/open.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/cur.h"
#include "worker/conn_priv.h"
#include "worker/file_open.h"
#include "worker/pipe_srvsvc.h"
#include "worker/smb2.h"
#include "worker/state.h"
#include "worker/worker.h"

static uint64_t open_next_persistent;
/* This worker's opens and byte-range locks (README "Limits"). */
static unsigned open_live_total;
static unsigned open_locks_total;

enum { OPEN_LIM_CONN, OPEN_LIM_FILES, OPEN_LIM_LOCKS_OPEN,
    OPEN_LIM_LOCKS_USER, OPEN_LIM_N };

/* At most one line a second per limit, saying that more were not written. */
static void
open_limit_log(const struct session *s, int which, const char *what,
    unsigned limit)
{
	static time_t lasts[OPEN_LIM_N];
	static unsigned quiets[OPEN_LIM_N];
	time_t now = time(NULL), *last = &lasts[which];
	unsigned *q = &quiets[which], quiet;

	if (now == *last) {
		(*q)++;
		return;
	}
	*last = now;
	quiet = *q;
	*q = 0;
	log_warnx("user %s: refused, %s (%u) reached%s", s != NULL &&
	    s->user[0] != '\0' ? s->user : "(anonymous)", what, limit,
	    quiet > 0 ? " (and more refusals not logged)" : "");
}

struct open *
open_alloc(struct conn *c, struct session *s, struct tree *t, enum open_kind kind)
{
	struct conn_private *pv = c->priv;
	struct open *o = pv->free_opens;
	uint64_t idx;

	if (kind == OPEN_FREE || pv->opens == NULL)
		return NULL;
	if (c->conf != NULL && pv->nlive >= (unsigned)c->conf->max_opens_per_conn) {
		open_limit_log(s, OPEN_LIM_CONN, "`max opens per connection`",
		    (unsigned)c->conf->max_opens_per_conn);
		return NULL;
	}
	if (c->conf != NULL && open_live_total >= (unsigned)c->conf->max_open_files) {
		open_limit_log(s, OPEN_LIM_FILES, "`max open files`",
		    (unsigned)c->conf->max_open_files);
		return NULL;
	}
	if (o != NULL)
		pv->free_opens = o->next_free;
	else if (pv->nopens < CONN_MAX_OPENS)
		o = &pv->opens[pv->nopens++];	/* a slot never used before */
	else
		return NULL;
	idx = (uint64_t)(o - pv->opens);
	if (++pv->open_gen == 0)
		pv->open_gen = 1;
	if (open_next_persistent == 0)
		open_next_persistent = (uint64_t)getpid() << 32;
	memset(o, 0, sizeof(*o));
	pv->nlive++;
	open_live_total++;
	o->kind = kind;
	o->conn = c;
	o->sess = s;
	o->tree = t;
	o->fid_volatile = (uint64_t)pv->open_gen << 16 | idx;
	/* pid in the high half: unique among the server's processes */
	o->fid_persistent = ++open_next_persistent;
	return o;
}

struct open *
open_find(struct conn *c, uint64_t fid_persistent, uint64_t fid_volatile)
{
	struct conn_private *pv = c->priv;
	uint64_t idx = fid_volatile & 0xFFFF;
	struct open *o;

	if (pv->opens == NULL || idx >= pv->nopens)
		return NULL;
	o = &pv->opens[idx];
	if (o->kind == OPEN_FREE || o->fid_volatile != fid_volatile ||
	    o->fid_persistent != fid_persistent)
		return NULL;
	return o;
}

void
open_release(struct open *o)
{
	struct conn_private *pv = o->conn->priv;

	/*
	 * Safety net: an open still recorded in the shared state leaves it
	 * now (its locks with it), and requests parked on it end.
	 */
	if (o->state_in)
		state_open_leave(o, NULL);
	if (o->kind == OPEN_FILE || o->kind == OPEN_DIR)
		conn_pending_end_open(o->conn, o->fid_persistent,
		    o->fid_volatile, 0);

	/* Its locks left the state with it (or stay with a durable open). */
	open_locks_uncharge(o, o->nlocks);
	if (pv->nlive > 0)
		pv->nlive--;
	if (open_live_total > 0)
		open_live_total--;
	memset(o, 0, sizeof(*o));
	o->kind = OPEN_FREE;
	o->next_free = pv->free_opens;
	pv->free_opens = o;
}

int
open_locks_charge(struct open *o, unsigned n)
{
	const struct conf *cf = o->conn->conf;

	if (cf != NULL && o->nlocks + n > (unsigned)cf->max_locks_per_open) {
		open_limit_log(o->sess, OPEN_LIM_LOCKS_OPEN, "`max locks per open`",
		    (unsigned)cf->max_locks_per_open);
		return -EDQUOT;
	}
	if (cf != NULL && open_locks_total + n > (unsigned)cf->max_locks_per_user) {
		open_limit_log(o->sess, OPEN_LIM_LOCKS_USER, "`max locks per user`",
		    (unsigned)cf->max_locks_per_user);
		return -EDQUOT;
	}
	o->nlocks += n;
	open_locks_total += n;
	return 0;
}

void
open_locks_uncharge(struct open *o, unsigned n)
{
	if (n > o->nlocks)
		n = o->nlocks;
	o->nlocks -= n;
	open_locks_total = open_locks_total > n ? open_locks_total - n : 0;
}

static void
open_close_one(struct open *o)
{
	if (o->kind == OPEN_PIPE)
		smb2_pipe_close_open(o);
	else if (o->kind == OPEN_FILE || o->kind == OPEN_DIR)
		file_open_close(o);
	/* The owner may have released it already. */
	if (o->kind != OPEN_FREE)
		open_release(o);
}

struct open_app_instance {
	const uint8_t		*id, *client_guid;
	const struct conf_share	*share;
	const char		*path, *stream, *by;
	unsigned		 n;
};

static void
open_app_instance_conn(struct conn *c, void *arg)
{
	struct open_app_instance *ai = arg;
	struct conn_private *pv = c->priv;
	struct file_open *f;
	struct open *o;
	unsigned i;

	if (pv == NULL || pv->opens == NULL ||
	    memcmp(c->client_guid, ai->client_guid, 16) == 0)
		return;
	for (i = 0; i < pv->nopens; i++) {
		o = &pv->opens[i];
		if ((o->kind != OPEN_FILE && o->kind != OPEN_DIR) ||
		    !o->app_instance || (f = o->u.file) == NULL ||
		    o->tree == NULL || o->tree->share != ai->share ||
		    memcmp(o->app_instance_id, ai->id, 16) != 0 ||
		    strcmp(f->path, ai->path) != 0 ||
		    strcmp(f->stream, ai->stream) != 0)
			continue;
		log_info("%s: %s closed: its application instance opened it "
		    "again from %s", c->peer, f->path, ai->by);
		open_close_one(o);
		ai->n++;
	}
}

unsigned
open_close_app_instance(const uint8_t id[16], const uint8_t client_guid[16],
    const struct conf_share *share, const char *path, const char *stream,
    const char *by)
{
	struct open_app_instance ai = {
		id, client_guid, share, path, stream, by, 0
	};

	worker_foreach_conn(open_app_instance_conn, &ai);
	return ai.n;
}

struct open_file_id {
	uint32_t	 id;
	const char	*by;
	unsigned	 n;
};

static void
open_file_id_conn(struct conn *c, void *arg)
{
	struct open_file_id *fi = arg;
	struct conn_private *pv = c->priv;
	struct open *o;
	unsigned i;

	for (i = 0; pv != NULL && pv->opens != NULL && i < pv->nopens; i++) {
		o = &pv->opens[i];
		if ((o->kind != OPEN_FILE && o->kind != OPEN_DIR) ||
		    srvsvc_file_id(o->fid_persistent) != fi->id)
			continue;
		log_info("%s: %s closed by %s", c->peer, o->u.file != NULL ?
		    o->u.file->path : "", fi->by);
		open_close_one(o);
		fi->n++;
	}
}

unsigned
open_close_file_id(uint32_t id, const char *by)
{
	struct open_file_id fi = { id, by, 0 };

	worker_foreach_conn(open_file_id_conn, &fi);
	return fi.n;
}

void
open_close_tree(struct conn *c, struct tree *t)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; pv->opens != NULL && i < pv->nopens; i++)
		if (pv->opens[i].kind != OPEN_FREE && pv->opens[i].tree == t)
			open_close_one(&pv->opens[i]);
}

void
open_close_session(struct conn *c, struct session *s)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; pv->opens != NULL && i < pv->nopens; i++)
		if (pv->opens[i].kind != OPEN_FREE && pv->opens[i].sess == s)
			open_close_one(&pv->opens[i]);
}

void
open_close_all(struct conn *c)
{
	struct conn_private *pv = c->priv;
	unsigned i;

	for (i = 0; pv->opens != NULL && i < pv->nopens; i++)
		if (pv->opens[i].kind != OPEN_FREE)
			open_close_one(&pv->opens[i]);
}

uint32_t
open_fid_decode(const struct smb2_req *req, struct cur *c, uint64_t *p,
    uint64_t *v)
{
	*p = cur_le64(c);
	*v = cur_le64(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	/*
	 * MS-SMB2 3.3.5.2.7.2: a related request uses the FileId of the one
	 * before it when that one had one, whatever its own says (Windows
	 * and Samba do; smb2.compound_async.getinfo_middle sends
	 * {UINT64_MAX, 0}).
	 */
	if (req->related && !(req->related_fid_persistent == UINT64_MAX &&
	    req->related_fid_volatile == UINT64_MAX)) {
		*p = req->related_fid_persistent;
		*v = req->related_fid_volatile;
	} else if (*p == UINT64_MAX && *v == UINT64_MAX)
		return STATUS_FILE_CLOSED;
	return STATUS_SUCCESS;
}
