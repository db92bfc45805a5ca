/* The passdb's account list for a worker's samr pipe (daemon/userlist.h). */
#include "daemon/userlist.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/sockios.h>

#include "daemon/log.h"
#include "daemon/master.h"
#include "daemon/msg.h"
#include "daemon/passdb.h"
#include "daemon/spawn.h"
#include "proto/cur.h"

struct userlist_fill {
	struct wcur	 w;
	uint32_t	 n;
	int		 full;
};

static int
userlist_one(const struct passdb_entry *e, void *arg)
{
	struct userlist_fill *f = arg;
	size_t len = strnlen(e->unix_name, sizeof(e->unix_name));

	if (len == 0 || len >= sizeof(e->unix_name))
		return 0;
	/* uid, flags, u8 length, name: stop at a whole entry */
	if (wcur_left(&f->w) < 9 + len) {
		f->full = 1;
		return 1;
	}
	wcur_le32(&f->w, (uint32_t)e->uid);
	wcur_le32(&f->w, e->flags);
	wcur_u8(&f->w, (uint8_t)len);
	wcur_bytes(&f->w, e->unix_name, len);
	f->n++;
	return 0;
}

int
userlist_encode(struct passdb *db, uint8_t *buf, size_t cap, size_t *len)
{
	struct userlist_fill f;

	memset(&f, 0, sizeof(f));
	wcur_init(&f.w, buf, cap);
	wcur_le32(&f.w, 0);			/* count, set below */
	if (f.w.err || passdb_foreach(db, userlist_one, &f) < 0)
		return -EIO;
	if (f.full)
		log_warnx("samr: the passdb has more accounts than one "
		    "message holds; %u listed", (unsigned)f.n);
	le32_put(buf, f.n);
	*len = wcur_off(&f.w);
	return 0;
}

/*
 * The list is the master's own message, yet no reason to lose a worker:
 * spawn_send kills a child whose channel is full, and a worker busy for
 * a few seconds (a slow NSS lookup) with reloads queuing 64 KiB each
 * could fill it.  So the list goes only into a channel with room, as
 * spawn_forward's share rule, and is otherwise sent again by
 * userlist_tick once the worker has read its backlog.
 */
int
userlist_send(struct child *c)
{
	static uint8_t buf[MSG_MAX_PAYLOAD];
	int queued = 0, sndbuf = 0, rc;
	socklen_t sl = sizeof(sndbuf);
	size_t len;

	if (master.passdb == NULL || c->chan < 0 || c->dying)
		return 0;
	/*
	 * The room first: a worker that stopped reading its channel stays
	 * pending, and userlist_tick asks at every turn of the master's
	 * loop; the passdb walk only once the list may go.
	 */
	if (ioctl(c->chan, SIOCOUTQ, &queued) == -1 ||
	    getsockopt(c->chan, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) == -1)
		rc = -errno;
	else if ((size_t)queued + MSG_HDR_LEN + 4 > (size_t)sndbuf / SPAWN_FWD_SHARE)
		rc = -EAGAIN;
	else if ((rc = userlist_encode(master.passdb, buf, sizeof(buf),
	    &len)) != 0)
		return rc;
	else if ((size_t)queued + MSG_HDR_LEN + len > (size_t)sndbuf / SPAWN_FWD_SHARE)
		rc = -EAGAIN;
	else
		rc = msg_send(c->chan, MSG_USERS, 0, buf, len, -1);
	if (rc == -EAGAIN || rc == -ENOBUFS) {
		c->users_pending = 1;
		return 0;
	}
	c->users_pending = 0;
	if (rc != 0)
		spawn_kill(c, "cannot send its account list");
	return rc;
}

void
userlist_tick(void)
{
	int i;

	for (i = 0; i < SPAWN_MAX_CHILDREN; i++) {
		struct child *c = &spawn_children[i];

		if (c->pid > 0 && c->users_pending && c->role == CHILD_WORKER)
			(void)userlist_send(c);
	}
}
