/*
 * A relayed worker's look-ahead over the sealed frames it has read
 * (worker/relay.h, HACKING.md "Requests in flight when the relayed worker
 * dies").
 *
 * Why: the relayed worker serves one frame at a time (it takes no frame
 * while its output waits), so the frames read behind the one served wait
 * in the receive buffer.  When the worker dies, the owner answers the ids
 * noted in the ring (worker/relay_ring.c); a sealed frame's ids are known
 * only once it is decrypted, and nobody else alive holds the key.  So the
 * frames read behind are decrypted as soon as they are whole in the
 * buffer, in place (the work their turn would do, done once), and their
 * requests noted; their turn (dispatch_frame) takes the plaintext.
 *
 * Why the effects stay those of their turn: a frame that does not decrypt
 * is only remembered (relay_ahead_take says so at its turn, when dispatch
 * drops the connection as it always did); a frame of another session, a
 * clear frame, or a session that could not decrypt now are left to their
 * turn untouched, and nothing behind them is looked at.  A session's keys
 * never change (MS-SMB2 3.3.5.5.3 derives them once; a re-authentication
 * keeps them, worker/smb2_reauth.c), but a LOGOFF or SESSION_SETUP ends
 * or changes the session: nothing behind a frame holding one is decrypted
 * before that frame was served.  At its turn a frame decrypted ahead is
 * served only if its session lookup finds the very session it was
 * decrypted for, with the same cipher, else it is the undecryptable
 * transform it would be then.
 *
 * Why offsets: frames are served in order from the start of rbuf and the
 * rest is moved to the front (worker/conn.c conn_process), so the frames
 * looked at are always [0, end) of rbuf, shifted by relay_ahead_moved.
 * No system call, no allocation.
 */
#include "worker/conn_priv.h"

#include <stdint.h>
#include <string.h>

#include "proto/crypt.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/relay.h"

static void
ahead_reset(struct relay_ahead *a)
{
	memset(a, 0, sizeof(*a));
}

void
relay_ahead_moved(struct conn *c, size_t n)
{
	struct relay_ahead *a = &c->priv->ahead;

	if (a->end <= n) {
		ahead_reset(a);		/* every frame looked at was served */
		return;
	}
	a->end -= n;
	if (a->bad != 0)
		a->bad = a->bad > n ? a->bad - n : 0;
}

/* Does the chain hold a request that ends or changes its session? */
static int
ahead_holds(const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;
	int k;

	smb2_chain_init(&ch, msg, len);
	ch.tail_ok = 1;
	while ((k = smb2_chain_next(&ch, &m, &mlen)) == 1) {
		uint16_t cmd;

		if (mlen < SMB2_HDR_LEN)
			return 1;
		cmd = le16_get(m + 12);
		if (cmd == SMB2_SESSION_SETUP || cmd == SMB2_LOGOFF)
			return 1;
	}
	return k < 0;	/* malformed: dispatch decides at its turn */
}

void
relay_ahead(struct conn *c)
{
	struct conn_private *pv = c->priv;
	struct relay_ahead *a = &pv->ahead;
	struct session *s;
	uint8_t *msg;
	size_t poff, plen;
	uint64_t sid;
	long len;
	int guard;

	if (pv->relay_ring == NULL || pv->dead)
		return;
	if (a->end > pv->rlen)
		ahead_reset(a);		/* the buffer went (never expected) */
	for (guard = 0; guard < 4096 && !a->stop &&
	    pv->rlen - a->end >= SMB2_FRAME_LEN; guard++) {
		len = smb2_frame_decode(pv->rbuf + a->end);
		if (len < 4 || (size_t)len > pv->max_frame ||
		    pv->rlen - a->end - SMB2_FRAME_LEN < (size_t)len)
			return;		/* not whole yet, or its turn drops it */
		msg = pv->rbuf + a->end + SMB2_FRAME_LEN;
		if (smb2_magic(msg, (size_t)len) != SMB2_MAGIC_TRANSFORM ||
		    (s = conn_transform_session(c, msg, (size_t)len, &sid)) == NULL ||
		    (a->sess != NULL && (a->sess != s || a->sid != sid)))
			return;		/* left to its turn, as all behind it */
		a->sess = s;
		a->sid = sid;
		a->cipher = s->cipher;
		if (smb2_decrypt_ctx(&s->dec_cx, s->cipher, s->dec_key, msg,
		    (size_t)len, &poff, &plen) < 0) {
			/* Its turn drops the connection; nothing before. */
			a->bad = a->end + 1;
			a->end += SMB2_FRAME_LEN + (size_t)len;
			a->stop = 1;
			return;
		}
		a->poff = poff;
		a->end += SMB2_FRAME_LEN + (size_t)len;
		if (smb2_magic(msg + poff, plen) != SMB2_MAGIC_SMB2) {
			a->stop = 1;	/* its turn refuses it */
			return;
		}
		relay_ring_note(pv->relay_ring, msg + poff, plen);
		if (ahead_holds(msg + poff, plen))
			a->stop = 1;
	}
}

int
relay_ahead_take(struct conn *c, uint8_t *msg, size_t len,
    struct session **sess, size_t *poff, size_t *plen)
{
	struct conn_private *pv = c->priv;
	struct relay_ahead *a = &pv->ahead;
	struct session *s;
	uintptr_t p = (uintptr_t)msg, b = (uintptr_t)pv->rbuf;
	size_t off;

	if (a->end == 0 || p < b + SMB2_FRAME_LEN || p >= b + a->end)
		return 0;
	off = (size_t)(p - b) - SMB2_FRAME_LEN;
	if (a->bad != 0 && off == a->bad - 1)
		return -1;
	if (len < SMB2_TRANSFORM_HDR_LEN)
		return -1;	/* never looked at: cannot be */
	/*
	 * The session it was decrypted for, still the one the transform's
	 * id finds (conn_transform_session's rules, without its header,
	 * which CCM's decryption overwrote).
	 */
	s = conn_session_find(c, a->sid);
	if (s != NULL && s->bound != NULL)
		s = s->bound;
	if (s == NULL || s != a->sess || s->cipher != a->cipher ||
	    (s->anonymous && !pv->user_authed))
		return -1;
	*sess = s;
	*poff = a->poff;
	*plen = len - SMB2_TRANSFORM_HDR_LEN;
	return 1;
}
