/*
 * SMB 3.1.1 compression on a connection.
 *
 * Receive (MS-SMB2 3.3.5.2.1.2): dispatch_frame hands a 0xFC message
 * here after any decryption (a message is compressed, then encrypted:
 * the transform is outside, 3.1.4.3 after 3.1.4.4), before the relay
 * routing and the compound walk.  It is taken only in a user worker, on
 * a connection that negotiated compression and holds a valid session:
 * the gate, which serves NEGOTIATE and SESSION_SETUP, drops a connection
 * that sends one (so no compressed byte is decoded before a logon), as
 * does a worker for a connection with no session set up.  The message is
 * decompressed into zbuf, allocated at the first one and kept
 * (COMPRESS_MAX_SEGMENT of the largest transaction), so a request
 * allocates nothing; OriginalCompressedSegmentSize past the negotiated
 * sizes (and the connection's frame size) is refused before any work.
 *
 * Send (3.1.4.4, 3.3.5.12): a READ that asked (or on a share with
 * `compress data`) is compressed in dispatch_finish after it is signed
 * and before it is sealed, when it is at least COMPRESS_TX_MIN bytes and
 * the result is smaller.  The match finder's table is the worker's one
 * (the worker is one thread).
 */
#include "worker/compress.h"

#include <stdlib.h>

#include "proto/compress.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"

/* The match finder's memory: a hint table, any content is valid. */
static struct lz77_table compress_table;

static int
compress_has_session(const struct conn *c)
{
	int i;

	for (i = 0; i < CONN_MAX_SESSIONS; i++)
		if (c->sessions[i].in_use && c->sessions[i].state == SESS_VALID)
			return 1;
	return 0;
}

int
compress_rx(struct conn *c, const uint8_t *msg, size_t len, uint8_t **out,
    size_t *outlen)
{
	struct conn_private *pv = c->priv;
	uint32_t big = c->max_trans_size;
	size_t cap;
	ssize_t n;

	if (c->compress_algs == 0 || c->dialect != DIALECT_311) {
		conn_warnx(c, "compressed message on a connection that did not "
		    "negotiate compression, disconnecting");
		return -1;
	}
	if (pv->role != CONN_ROLE_WORKER || !compress_has_session(c)) {
		conn_warnx(c, "compressed message before a session is set up, "
		    "disconnecting");
		return -1;
	}
	if (c->max_read_size > big)
		big = c->max_read_size;
	if (c->max_write_size > big)
		big = c->max_write_size;
	cap = COMPRESS_MAX_SEGMENT(big);
	if (cap > pv->max_frame)
		cap = pv->max_frame;
	if (pv->zbuf == NULL) {
		/* once: the largest any connection may send */
		pv->zcap = COMPRESS_MAX_SEGMENT(CONN_MAX_TRANS);
		if ((pv->zbuf = malloc(pv->zcap)) == NULL) {
			conn_warnx(c, "no memory for decompression");
			return -1;
		}
	}
	if (cap > pv->zcap)
		cap = pv->zcap;
	n = smb2_decompress(msg, len, c->compress_algs, c->compress_chained,
	    pv->zbuf, cap);
	if (n < 0) {
		conn_warnx(c, "malformed or oversized compressed message "
		    "(%zu bytes, %u claimed, at most %zu), disconnecting", len,
		    len >= 8 ? le32_get(msg + 4) : 0, cap);
		return -1;
	}
	/* compressed, then sealed: never the other way round */
	if (smb2_magic(pv->zbuf, (size_t)n) != SMB2_MAGIC_SMB2) {
		conn_warnx(c, "compressed message holds no SMB2 message, "
		    "disconnecting");
		return -1;
	}
	*out = pv->zbuf;
	*outlen = (size_t)n;
	return 0;
}

int
compress_frame(struct conn *c, uint8_t **msg, size_t *len)
{
	if (smb2_magic(*msg, *len) != SMB2_MAGIC_COMPRESSED)
		return 0;
	return compress_rx(c, *msg, *len, msg, len) < 0 ? -1 : 1;
}

size_t
compress_tx(const struct conn *c, const uint8_t *msg, size_t len, size_t keep,
    uint8_t *out, size_t cap)
{
	if (c->compress_algs == 0 || len < COMPRESS_TX_MIN)
		return 0;
	return smb2_compress(msg, len, keep, c->compress_algs,
	    c->compress_chained, out, cap, &compress_table);
}
