/*
 * An administrator's NetrFileClose (MS-SRVS 3.1.4.4) and NetrSessionDel
 * (3.1.4.6).  The open or session lives in the worker of its own user,
 * which no other worker can touch; the administrator's worker asks the
 * master (MSG_ADMIN_REQ), and the master decides on its own facts:
 *
 * - who asks is the child the message came on: a user worker the master
 *   forked for one user, uid and gid (struct child), never a name in the
 *   payload; that user must be in `server admin group` by the system's
 *   group database (getgrouplist of that user and gid: the groups the
 *   worker was started with, worker/user.c) and not be the guest
 *   account.  Anyone else is answered ERROR_ACCESS_DENIED and nothing is
 *   sent on (a plain user's worker does not even ask: worker/pipe_srvsvc_enum.c).
 * - what to end goes to every live worker as MSG_ADMIN_DO, re-encoded
 *   from what the master decoded; each worker matches its own opens
 *   (srvsvc_file_id of their persistent ids) or sessions (client address
 *   and user) and answers how many it ended.  A NetrFileClose goes to the
 *   state process as well, which ends the disconnected durable opens of
 *   that FileId (held by no worker) as their expiry would.  No record of the shared
 *   state is read: those are any worker's to write, and the FileId alone
 *   cannot say which worker holds the open (a durable open reclaimed by
 *   another worker keeps its first worker's pid in its persistent id).
 * - the answer: NERR_Success when some worker ended something, else
 *   NERR_FileIdNotFound / NERR_ClientNameNotFound; after ADMMSG_TIMEOUT_MS
 *   with the answers that came.
 *
 * A worker has one request out at a time (it waits for the answer) and
 * ADMREQ_RATE a second; the fan-out goes through spawn_forward, which
 * never kills a worker for a full channel.
 */
#include "daemon/admreq.h"

#include <string.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/spawn.h"
#include "daemon/statectl.h"
#include "proto/cur.h"

struct admreq_pending {
	pid_t		 asker;		/* 0: free */
	uint32_t	 asker_id;	/* its MSG_ADMIN_REQ's id */
	uint32_t	 id;		/* the MSG_ADMIN_DO's */
	uint8_t		 op;
	int64_t		 deadline_ms;
	uint32_t	 ended;		/* opens or sessions ended so far */
	int		 nsent, ngot;
	pid_t		 pids[SPAWN_MAX_CHILDREN];
	uint8_t		 got[SPAWN_MAX_CHILDREN];
};

static struct admreq_pending	admreq_q[ADMREQ_MAX_PENDING];
static uint32_t			admreq_next_id;

int
admreq_is_admin(const struct child *c)
{
	const struct conf *cf = master.conf;

	if (c->role != CHILD_WORKER || c->pid <= 0 || !c->hello ||
	    c->dying || c->uid == 0 || c->user[0] == '\0' || cf == NULL ||
	    cf->admin_group == NULL || cf->admin_group[0] == '\0')
		return 0;
	/* the guest account serves guests and null sessions: never admin */
	if (cf->guest_account != NULL &&
	    strcmp(cf->guest_account, c->user) == 0)
		return 0;
	return conf_user_gid_in_group(c->user, c->gid, cf->admin_group);
}

static void
admreq_answer(pid_t pid, uint32_t id, uint32_t werr)
{
	struct child *c = spawn_find(pid);
	uint8_t p[4];

	if (c == NULL || c->dying || c->chan < 0)
		return;
	le32_put(p, werr);
	(void)spawn_send(c, MSG_ADMIN_REP, id, p, sizeof(p));
}

static void
admreq_finish(struct admreq_pending *q)
{
	uint32_t werr = ADMMSG_WERR_OK;

	if (q->ended == 0)
		werr = q->op == ADMMSG_FILE_CLOSE ?
		    ADMMSG_WERR_FILEID_NOT_FOUND : ADMMSG_WERR_CLIENT_NOT_FOUND;
	log_info("srvsvc %s for worker %d: %u ended (%d of %d workers "
	    "answered)", q->op == ADMMSG_FILE_CLOSE ? "NetrFileClose" :
	    "NetrSessionDel", (int)q->asker, q->ended, q->ngot, q->nsent);
	admreq_answer(q->asker, q->asker_id, werr);
	q->asker = 0;
}

static int
admreq_busy(pid_t pid)
{
	int i;

	for (i = 0; i < ADMREQ_MAX_PENDING; i++)
		if (admreq_q[i].asker == pid)
			return 1;
	return 0;
}

static struct admreq_pending *
admreq_slot(void)
{
	int i;

	for (i = 0; i < ADMREQ_MAX_PENDING; i++)
		if (admreq_q[i].asker == 0)
			return &admreq_q[i];
	return NULL;
}

/*
 * Sends r to every live worker as q's MSG_ADMIN_DO, and a NetrFileClose
 * to the state process too: a disconnected durable open is held by no
 * worker, only by its record in the shared state, which the master does
 * not map (worker/statep_close.c ends it as its expiry would).
 */
static void
admreq_fan_out(struct admreq_pending *q, const struct admmsg_req *r)
{
	uint8_t buf[ADMMSG_MAX_LEN];
	struct child *sc;
	int i, n;

	if ((n = admmsg_encode(r, buf, sizeof(buf))) < 0)
		return;
	if (r->op == ADMMSG_FILE_CLOSE && (sc = statectl_child()) != NULL &&
	    sc->hello && !sc->dying && sc->chan >= 0 &&
	    spawn_forward(sc, MSG_ADMIN_DO, q->id, buf, (size_t)n, -1) == 0)
		q->pids[q->nsent++] = sc->pid;
	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->role != CHILD_WORKER || c->pid <= 0 || c->chan < 0 ||
		    !c->hello || c->dying)
			continue;
		if (spawn_forward(c, MSG_ADMIN_DO, q->id, buf, (size_t)n,
		    -1) == 0)
			q->pids[q->nsent++] = c->pid;
	}
}

int
admreq_handle(struct child *c, const struct msg *m)
{
	struct admreq_pending *q;
	struct admmsg_req r;

	if (c->role != CHILD_WORKER || admmsg_decode(&r, m->payload, m->len) != 0)
		return -1;
	/* Over its rate: dropped, as a flood of anything else. */
	if (!spawn_bucket_take(&c->admin_rate, ADMREQ_RATE, ADMREQ_BURST,
	    master_now_ms())) {
		master.fwd_dropped++;
		spawn_bucket_report(c, &c->admin_rate, "srvsvc close requests",
		    ADMREQ_RATE, master_now_ms());
		return 0;
	}
	/*
	 * A refusal stands for a second: the group lookup is NSS (a
	 * directory server's round trip, perhaps), and a refused worker
	 * may keep asking at its rate; so one lookup and one log line a
	 * second at most.
	 */
	if ((c->admin_refused_ms != 0 &&
	    master_now_ms() - c->admin_refused_ms < 1000) ||
	    !admreq_is_admin(c)) {
		if (c->admin_refused_ms == 0 ||
		    master_now_ms() - c->admin_refused_ms >= 1000) {
			c->admin_refused_ms = master_now_ms();
			log_warnx("worker %d (%s, uid %u) asked for an "
			    "administrator's srvsvc %s: refused, not in "
			    "`server admin group`",
			    (int)c->pid, c->user, (unsigned)c->uid,
			    r.op == ADMMSG_FILE_CLOSE ? "NetrFileClose" :
			    "NetrSessionDel");
		}
		admreq_answer(c->pid, m->id, ADMMSG_WERR_ACCESS_DENIED);
		return 0;
	}
	/* ending every session of the server is no one call's business */
	if (r.op == ADMMSG_SESS_DEL && r.client[0] == '\0' &&
	    r.user[0] == '\0') {
		admreq_answer(c->pid, m->id, ADMMSG_WERR_INVALID_PARAMETER);
		return 0;
	}
	if (admreq_busy(c->pid) || (q = admreq_slot()) == NULL) {
		admreq_answer(c->pid, m->id, ADMMSG_WERR_NOT_ENOUGH_MEMORY);
		return 0;
	}
	memset(q, 0, sizeof(*q));
	admreq_next_id = (admreq_next_id + 1) & (ADMREQ_ID_BIT - 1);
	q->id = ADMREQ_ID_BIT | admreq_next_id;
	q->asker = c->pid;
	q->asker_id = m->id;
	q->op = r.op;
	q->deadline_ms = master_now_ms() + ADMMSG_TIMEOUT_MS;
	if (r.op == ADMMSG_FILE_CLOSE)
		log_info("srvsvc NetrFileClose %u by %s (worker %d)",
		    r.file_id, c->user, (int)c->pid);
	else
		log_info("srvsvc NetrSessionDel client '%s' user '%s' by %s "
		    "(worker %d)", r.client, r.user, c->user, (int)c->pid);
	admreq_fan_out(q, &r);
	if (q->nsent == 0)
		admreq_finish(q);
	return 0;
}

int
admreq_reply(struct child *c, const struct msg *m)
{
	struct cur cur;
	uint32_t n;
	int i, j;

	if ((m->id & 0xc0000000u) != ADMREQ_ID_BIT)
		return 0;
	for (i = 0; i < ADMREQ_MAX_PENDING; i++) {
		struct admreq_pending *q = &admreq_q[i];

		if (q->asker == 0 || q->id != m->id)
			continue;
		for (j = 0; j < q->nsent; j++)
			if (q->pids[j] == c->pid)
				break;
		cur_init(&cur, m->payload, m->len);
		n = cur_le32(&cur);
		if (j == q->nsent || q->got[j] || cur.err ||
		    cur_left(&cur) != 0)
			return 1;
		q->got[j] = 1;
		q->ngot++;
		/* a count is the worker's word: it only sways the answer */
		q->ended += n > 0xffff ? 0xffff : n;
		if (q->ngot == q->nsent)
			admreq_finish(q);
		return 1;
	}
	return 1;	/* late: its request was answered already */
}

void
admreq_child_gone(pid_t pid)
{
	int i, j;

	for (i = 0; i < ADMREQ_MAX_PENDING; i++) {
		struct admreq_pending *q = &admreq_q[i];

		if (q->asker == 0)
			continue;
		/* no one to answer, and its pid may come back as anyone */
		if (q->asker == pid) {
			q->asker = 0;
			continue;
		}
		/* a dead worker's opens and sessions are gone: no answer due */
		for (j = 0; j < q->nsent; j++)
			if (q->pids[j] == pid && !q->got[j]) {
				q->got[j] = 1;
				q->ngot++;
			}
		if (q->ngot == q->nsent)
			admreq_finish(q);
	}
}

void
admreq_tick(void)
{
	int64_t now = master_now_ms();
	int i;

	for (i = 0; i < ADMREQ_MAX_PENDING; i++)
		if (admreq_q[i].asker != 0 && now >= admreq_q[i].deadline_ms)
			admreq_finish(&admreq_q[i]);
}

int
admreq_timeout_ms(void)
{
	int64_t now = master_now_ms(), t = -1;
	int i;

	for (i = 0; i < ADMREQ_MAX_PENDING; i++) {
		int64_t d;

		if (admreq_q[i].asker == 0)
			continue;
		d = admreq_q[i].deadline_ms > now ?
		    admreq_q[i].deadline_ms - now : 0;
		if (t < 0 || d < t)
			t = d;
	}
	return (int)t;
}
