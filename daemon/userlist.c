/* The passdb's account list for a worker's samr pipe (daemon/userlist.h). */
#include "daemon/userlist.h"

#include <errno.h>
#include <string.h>

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

int
userlist_send(struct child *c)
{
	static uint8_t buf[MSG_MAX_PAYLOAD];
	size_t len;
	int rc;

	if (master.passdb == NULL || c->chan < 0)
		return 0;
	if ((rc = userlist_encode(master.passdb, buf, sizeof(buf), &len)) != 0)
		return rc;
	return spawn_send(c, MSG_USERS, 0, buf, len);
}
