/*
 * The master's session table (daemon/msess.h): open addressing with
 * linear probing over MSESS_SLOTS, at most half full, deletion by
 * backward shift (no tombstones).  Allocated once, at the first insert.
 */

/*
 * Session ids.
 *
 * - Session ids: random, 32 bits wide (smbtorture's smb2.session-id, in
 *   torture.list, keeps the id in a 32-bit variable, as Samba's ids
 *   are), unique across the server: a worker making a session skips ids
 *   in the state env, and the insert (shm_session_put) refuses an id
 *   another process holds (-EEXIST), so a gate's id that collides costs
 *   that connection (the worker closes it, the client logs in again),
 *   never another user's routing.  An IPC$-only worker has no env: its
 *   ids meet the others only in the master's table (daemon/msess.c,
 *   filled by MSG_SESSION_UP), where the first announcer keeps an id and
 *   the second session is ended by the master (MSG_KILL_SESSION with id
 *   0, daemon/spawn.c spawn_session_msg): the same cost, the connection
 *   that came second.
 */
#include "daemon/msess.h"

#include <errno.h>
#include <stdlib.h>

struct msess_slot {
	uint64_t	sid;		/* 0: free */
	pid_t		pid;
	uid_t		uid;
	pid_t		owner;		/* relayed: the worker holding the socket */
};

/* A relay routed, until its worker announces the session. */
struct msess_relay {
	uint64_t	sid;		/* 0: free */
	pid_t		owner;
	pid_t		worker;
	int64_t		since_ms;
};

static struct msess_slot	*msess_tab;
static unsigned			 msess_n;
static struct msess_relay	 msess_relays[MSESS_RELAYS_PENDING];

static unsigned
msess_hash(uint64_t sid)
{
	/* ids are random, but a worker's word is not: mix them anyway */
	sid ^= sid >> 33;
	sid *= 0xff51afd7ed558ccdull;
	sid ^= sid >> 33;
	return (unsigned)sid & (MSESS_SLOTS - 1);
}

static struct msess_slot *
msess_lookup(uint64_t sid)
{
	unsigned i;

	if (msess_tab == NULL || sid == 0)
		return NULL;
	for (i = msess_hash(sid); msess_tab[i].sid != 0;
	    i = (i + 1) & (MSESS_SLOTS - 1))
		if (msess_tab[i].sid == sid)
			return &msess_tab[i];
	return NULL;
}

unsigned
msess_count(pid_t pid)
{
	unsigned i, n = 0;

	for (i = 0; msess_tab != NULL && i < MSESS_SLOTS; i++)
		n += msess_tab[i].sid != 0 && msess_tab[i].pid == pid;
	return n;
}

int
msess_up(pid_t pid, uid_t uid, uint64_t sid, unsigned *held)
{
	struct msess_slot *e;
	unsigned i;

	if (sid == 0)
		return -EINVAL;
	if ((e = msess_lookup(sid)) != NULL)
		return e->pid == pid && e->uid == uid ? 0 : -EEXIST;
	if (msess_tab == NULL &&
	    (msess_tab = calloc(MSESS_SLOTS, sizeof(*msess_tab))) == NULL)
		return -ENOMEM;
	if (msess_n >= MSESS_MAX || *held >= MSESS_PER_WORKER)
		return -ENOSPC;
	for (i = msess_hash(sid); msess_tab[i].sid != 0;
	    i = (i + 1) & (MSESS_SLOTS - 1))
		;
	msess_tab[i].sid = sid;
	msess_tab[i].pid = pid;
	msess_tab[i].uid = uid;
	msess_tab[i].owner = 0;
	for (e = &msess_tab[i], i = 0; i < MSESS_RELAYS_PENDING; i++)
		if (msess_relays[i].sid == sid && msess_relays[i].worker == pid) {
			e->owner = msess_relays[i].owner;
			msess_relays[i].sid = 0;
		}
	msess_n++;
	(*held)++;
	return 0;
}

void
msess_relay_expect(uint64_t sid, pid_t owner, pid_t worker, int64_t now_ms)
{
	struct msess_relay *r = &msess_relays[0];
	unsigned i;

	/* the free or oldest entry: only `usmbctl status` reads these */
	for (i = 0; i < MSESS_RELAYS_PENDING; i++) {
		if (msess_relays[i].sid == 0) {
			r = &msess_relays[i];
			break;
		}
		if (msess_relays[i].since_ms < r->since_ms)
			r = &msess_relays[i];
	}
	r->sid = sid;
	r->owner = owner;
	r->worker = worker;
	r->since_ms = now_ms;
}

pid_t
msess_owner(uint64_t sid)
{
	struct msess_slot *e = msess_lookup(sid);

	return e != NULL ? e->owner : 0;
}

/* Empties slot i and moves up the entries of its probe run after it. */
static void
msess_remove_at(unsigned i)
{
	unsigned j = i, home;

	msess_tab[i].sid = 0;
	msess_n--;
	for (;;) {
		j = (j + 1) & (MSESS_SLOTS - 1);
		if (msess_tab[j].sid == 0)
			return;
		home = msess_hash(msess_tab[j].sid);
		/* j stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		msess_tab[i] = msess_tab[j];
		msess_tab[j].sid = 0;
		i = j;
	}
}

void
msess_down(pid_t pid, uint64_t sid, unsigned *held)
{
	struct msess_slot *e = msess_lookup(sid);

	if (e != NULL && e->pid == pid) {
		msess_remove_at((unsigned)(e - msess_tab));
		if (*held > 0)
			(*held)--;
	}
}

void
msess_child_gone(pid_t pid)
{
	unsigned i;

	if (msess_tab == NULL)
		return;
	/* a removal may shift a later entry into i: look at i again */
	for (i = 0; i < MSESS_SLOTS; i++)
		while (msess_tab[i].sid != 0 && msess_tab[i].pid == pid)
			msess_remove_at(i);
}

int
msess_find(uint64_t sid, pid_t *pid, uid_t *uid)
{
	struct msess_slot *e = msess_lookup(sid);

	if (e == NULL)
		return -ENOENT;
	*pid = e->pid;
	*uid = e->uid;
	return 0;
}
