/*
 * MSG_UNLINK_AS / MSG_UNLINK_DO payloads (layout in daemon/unlinkmsg.h).
 */
#include "daemon/unlinkmsg.h"

#include <string.h>

#include "proto/cur.h"

int
unlinkmsg_encode(const struct unlinkmsg *u, int with_root, uint8_t *buf,
    size_t cap)
{
	struct wcur w;

	if (strlen(u->share) >= sizeof(u->share) ||
	    strlen(u->path) >= sizeof(u->path) ||
	    (with_root && strlen(u->root) >= sizeof(u->root)))
		return -1;
	wcur_init(&w, buf, cap);
	wcur_le32(&w, u->uid);
	wcur_le64(&w, u->dev);
	wcur_le64(&w, u->ino);
	wcur_u8(&w, u->is_dir);
	wcur_str16(&w, u->share, sizeof(u->share));
	wcur_str16(&w, u->path, sizeof(u->path));
	if (with_root)
		wcur_str16(&w, u->root, sizeof(u->root));
	return w.err ? -1 : (int)wcur_off(&w);
}

int
unlinkmsg_decode(struct unlinkmsg *u, int with_root, const uint8_t *p,
    size_t len)
{
	struct cur c;

	memset(u, 0, sizeof(*u));
	cur_init(&c, p, len);
	u->uid = cur_le32(&c);
	u->dev = cur_le64(&c);
	u->ino = cur_le64(&c);
	u->is_dir = cur_u8(&c);
	if (cur_str16(&c, u->share, sizeof(u->share)) != 0 ||
	    cur_str16(&c, u->path, sizeof(u->path)) != 0)
		return -1;
	if (with_root && cur_str16(&c, u->root, sizeof(u->root)) != 0)
		return -1;
	if (c.err || cur_left(&c) != 0 || u->is_dir > 1)
		return -1;
	return 0;
}
