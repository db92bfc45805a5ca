/*
 * The owner's requests in flight on a relay, and their answers when the
 * relayed worker dies (worker/relay.h, "Requests in flight").
 *
 * Without this, a request the owner had forwarded when the other worker
 * died got no answer at all: a client waits for it until it gives up on
 * the connection (Windows after 60 s), alice's session with it.  The owner
 * cannot serve it (the session and its keys were the dead worker's), but
 * MS-SMB2 3.3.4.x lets it say the session is gone: USER_SESSION_DELETED,
 * unsigned (no key here) but with the SIGNED flag on 3.x as dispatch
 * answers a session it does not carry (clients that require signing look
 * for the flag), async with its AsyncId when its interim answer went out.
 *
 * Requests sent in the clear are noted as they go by.  An encrypted
 * one's message id is sealed with keys the owner never holds: such a
 * request is noted only once it waits (async), from the control record
 * of its interim answer, which carries the id, AsyncId and command in
 * clear for a sealed frame (relay_inflight_sealed).  Its answer is then
 * unsigned and unsealed: a client takes USER_SESSION_DELETED that way
 * for a session it seals (Samba's smbXcli_base.c skips the signature and
 * the encryption check for that status).  A sealed request that had no
 * interim answer is known from the relayed worker's ring instead
 * (worker/relay_ring.c): relay_inflight_collect takes its ids when the
 * relay ends, each only if the owner's own window still admits it.
 *
 * The answers are written into the relay's buffer, each frame followed by
 * a control record as the relayed worker would have sent them, so
 * relay_next and relay_apply put them out and keep the connection's
 * message-id window exact (an interim answer's id was charged already).
 */
#include <string.h>

#include "daemon/conf.h"
#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"

#define RI_ERROR_BODY	9	/* MS-SMB2 2.2.2: StructureSize 9, ErrorData */

static struct relay_req *
ri_find(struct relay_inflight *t, uint64_t mid)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].mid == mid)
			return &t->r[i];
	return NULL;
}

static void
ri_drop(struct relay_inflight *t, struct relay_req *q)
{
	*q = t->r[--t->n];
}

void
relay_inflight_note(struct relay_inflight *t, const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	struct smb2_hdr h;
	const uint8_t *m;
	size_t mlen;

	if (t == NULL || smb2_magic(msg, len) != SMB2_MAGIC_SMB2)
		return;
	smb2_chain_init(&ch, msg, len);
	ch.tail_ok = 1;		/* an element split off (relay_split) */
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		if (smb2_hdr_decode(m, mlen, &h) != 0)
			return;
		/* A CANCEL is never answered; an id noted twice, once. */
		if (h.command == SMB2_CANCEL || t->n >= RELAY_INFLIGHT ||
		    ri_find(t, h.message_id) != NULL)
			continue;
		memset(&t->r[t->n], 0, sizeof(t->r[t->n]));
		t->r[t->n].mid = h.message_id;
		t->r[t->n].tree_id = h.tree_id;
		t->r[t->n].process_id = h.process_id;
		t->r[t->n].flags = h.flags;
		t->r[t->n].command = h.command;
		t->r[t->n].charge = h.credit_charge;
		t->n++;
	}
}

void
relay_inflight_answered(struct relay_inflight *t, const uint8_t *msg,
    size_t len)
{
	struct smb2_chain ch;
	struct relay_req *q;
	struct smb2_hdr h;
	const uint8_t *m;
	size_t mlen;

	if (t == NULL || t->n == 0 || smb2_magic(msg, len) != SMB2_MAGIC_SMB2)
		return;
	smb2_chain_init(&ch, msg, len);
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		if (smb2_hdr_decode(m, mlen, &h) != 0)
			return;
		if ((q = ri_find(t, h.message_id)) == NULL)
			continue;	/* a break notice, or not noted */
		if ((h.flags & SMB2_FLAGS_ASYNC_COMMAND) &&
		    h.status == STATUS_PENDING) {
			q->async = 1;
			q->async_id = h.async_id;
		} else
			ri_drop(t, q);
	}
}

void
relay_inflight_sealed(struct relay_inflight *t,
    const struct relay_ctl_async *a)
{
	struct relay_req *q;

	if (t == NULL)
		return;
	q = ri_find(t, a->mid);
	if (a->final) {
		if (q != NULL)
			ri_drop(t, q);
		return;
	}
	if (q == NULL) {
		if (t->n >= RELAY_INFLIGHT)
			return;
		q = &t->r[t->n++];
	}
	/* No SIGNED flag: the answer can be neither signed nor sealed here. */
	memset(q, 0, sizeof(*q));
	q->mid = a->mid;
	q->command = a->command;
	q->async = 1;
	q->async_id = a->async_id;
}

size_t
relay_inflight_answer(struct relay_inflight *t, uint64_t sid,
    uint16_t dialect, uint8_t *dst, size_t cap)
{
	const size_t flen = SMB2_HDR_LEN + RI_ERROR_BODY;
	struct smb2_hdr h;
	struct wcur w;
	size_t done = 0;
	unsigned i;

	if (t == NULL)
		return 0;
	for (i = 0; i < t->n; i++) {
		const struct relay_req *q = &t->r[i];
		uint16_t charge = dialect == DIALECT_202 ? 1 :
		    (q->charge > 0 ? q->charge : 1);
		uint8_t *f;

		wcur_init(&w, dst + done, cap - done);
		if ((f = wcur_reserve(&w, SMB2_FRAME_LEN + flen)) == NULL)
			break;
		smb2_frame_encode(f, (uint32_t)flen);
		memset(&h, 0, sizeof(h));
		h.credit_charge = q->charge;
		h.status = STATUS_USER_SESSION_DELETED;
		h.command = q->command;
		/* The charge back: the client's balance stays as it was. */
		h.credits = q->async ? 0 : charge;
		h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
		if (q->async) {
			h.flags |= SMB2_FLAGS_ASYNC_COMMAND;
			h.async_id = q->async_id;
		}
		if ((q->flags & SMB2_FLAGS_SIGNED) && dialect >= DIALECT_300)
			h.flags |= SMB2_FLAGS_SIGNED;
		h.message_id = q->mid;
		h.process_id = q->process_id;
		h.tree_id = q->tree_id;
		h.session_id = sid;
		smb2_hdr_encode(f + SMB2_FRAME_LEN, &h);
		memset(f + SMB2_FRAME_LEN + SMB2_HDR_LEN, 0, RI_ERROR_BODY);
		le16_put(f + SMB2_FRAME_LEN + SMB2_HDR_LEN, RI_ERROR_BODY);
		/* Its control record (worker/relay.h): grant, and the id. */
		wcur_u8(&w, RELAY_CTL_TYPE);
		wcur_u8(&w, 0);
		wcur_u8(&w, 0);
		wcur_u8(&w, q->async ? 4 : 14);
		wcur_le16(&w, h.credits);
		wcur_le16(&w, q->async ? 0 : 1);
		if (!q->async) {
			/* An interim answer's id was charged when it went by. */
			wcur_le64(&w, q->mid);
			wcur_le16(&w, charge);
		}
		if (w.err)
			break;
		done += wcur_off(&w);
	}
	t->n = 0;
	return done;
}

/*
 * The ring is another user's worker's: a slot is taken only if it names
 * a request the connection's window still admits (inside the granted
 * window, not used: not answered, not the owner's own request, not one
 * noted elsewhere in flight, which the caller charged in scratch) with a
 * charge it can pay, and it is charged in scratch at once, so a slot
 * repeated, overlapping another or torn into some other id is refused
 * like any id already used.  Worst case, a lying worker makes the owner
 * answer an id the client sent and nobody else answers: as much as a
 * control record of its own could do to the window.
 */
unsigned
relay_inflight_collect(struct relay_inflight *t, const uint8_t *p,
    size_t len, struct conn_credits *scratch)
{
	unsigned i, added = 0;
	uint64_t v, mid;
	uint16_t command, charge;

	if (t == NULL || p == NULL || scratch == NULL)
		return 0;
	for (i = 0; i < RELAY_RING_SLOTS &&
	    (size_t)(i + 1) * RELAY_RING_SLOT <= len; i++) {
		const uint8_t *s = p + (size_t)i * RELAY_RING_SLOT;

		memcpy(&v, s, sizeof(v));	/* host order: one machine */
		command = le16_get(s + 8);
		charge = le16_get(s + 10);
		if (v == 0)
			continue;
		mid = v - 1;
		if (t->n >= RELAY_INFLIGHT)
			break;
		if (command == SMB2_CANCEL || command > SMB2_OPLOCK_BREAK ||
		    mid == UINT64_MAX || ri_find(t, mid) != NULL ||
		    conn_credits_charge(scratch, mid, charge) < 0)
			continue;
		memset(&t->r[t->n], 0, sizeof(t->r[t->n]));
		t->r[t->n].mid = mid;
		t->r[t->n].command = command;
		t->r[t->n].charge = charge > 0 ? charge : 1;
		t->n++;
		added++;
	}
	return added;
}
