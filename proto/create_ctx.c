/*
 * SMB2 CREATE contexts (MS-SMB2 2.2.13.2): one step of the chain walk.
 * Offsets in a context are relative to its own start; the window it may
 * use runs to the end of the chain (a context's data may sit past its
 * Next, as long as it stays inside what the client sent).
 */
#include "proto/create_ctx.h"
#include "proto/cur.h"

int
create_ctx_next(const uint8_t *buf, size_t len, size_t *pos,
    struct create_ctx_item *it)
{
	struct cur all, cx;
	uint32_t next, dlen;
	uint16_t noff, nlen, doff;

	if (*pos >= len)
		return -1;
	cur_init(&all, buf, len);
	cx = cur_sub(&all, *pos, len - *pos);
	next = cur_le32(&cx);
	noff = cur_le16(&cx);
	nlen = cur_le16(&cx);
	cur_skip(&cx, 2);			/* Reserved */
	doff = cur_le16(&cx);
	dlen = cur_le32(&cx);
	/* names shorter than a tag are refused, as Windows does */
	if (cx.err || nlen < 4)
		return -1;
	cur_seek(&cx, noff);
	it->name = cur_view(&cx, nlen);
	it->name_len = nlen;
	it->data = NULL;
	it->data_len = dlen;
	if (dlen > 0) {
		cur_seek(&cx, doff);
		it->data = cur_view(&cx, dlen);
	}
	if (cx.err || it->name == NULL)
		return -1;
	it->last = next == 0;
	if (next == 0)
		return 0;
	/* A context is at least its 16-byte header: no overlaps. */
	if (next % 8 != 0 || next < 16 || next > len - *pos)
		return -1;
	*pos += next;
	return 0;
}
