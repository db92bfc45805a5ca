/*
 * MSG_ADMIN_REQ / MSG_ADMIN_DO payloads (layout in daemon/admmsg.h).
 */
#include "daemon/admmsg.h"

#include <string.h>

#include "proto/cur.h"

int
admmsg_encode(const struct admmsg_req *r, uint8_t *buf, size_t cap)
{
	struct wcur w;

	wcur_init(&w, buf, cap);
	wcur_u8(&w, r->op);
	if (r->op == ADMMSG_FILE_CLOSE)
		wcur_le32(&w, r->file_id);
	else if (r->op == ADMMSG_SESS_DEL) {
		if (strnlen(r->client, sizeof(r->client)) >= sizeof(r->client) ||
		    strnlen(r->user, sizeof(r->user)) >= sizeof(r->user))
			return -1;
		wcur_str16(&w, r->client, sizeof(r->client));
		wcur_str16(&w, r->user, sizeof(r->user));
	} else
		return -1;
	return w.err ? -1 : (int)wcur_off(&w);
}

int
admmsg_decode(struct admmsg_req *r, const uint8_t *p, size_t len)
{
	struct cur c;

	memset(r, 0, sizeof(*r));
	cur_init(&c, p, len);
	r->op = cur_u8(&c);
	if (r->op == ADMMSG_FILE_CLOSE)
		r->file_id = cur_le32(&c);
	else if (r->op != ADMMSG_SESS_DEL ||
	    cur_str16(&c, r->client, sizeof(r->client)) != 0 ||
	    cur_str16(&c, r->user, sizeof(r->user)) != 0)
		goto bad;
	if (c.err || cur_left(&c) != 0)
		goto bad;
	return 0;
bad:
	memset(r, 0, sizeof(*r));
	return -1;
}
