/*
 * The message ids a relay may answer (worker/relay.h, "Answers only to
 * its own requests").
 *
 * The owner passes a relayed worker's answers to the client whole.  A
 * client finds the request an answer is for by its MessageId alone
 * (MS-SMB2 3.2.5.1.2), and a client that follows 3.2.5.1.3 verifies a
 * signed answer with the key of that request's session, but the Linux
 * client verifies it with the key of the session the answer names.  So a
 * compromised relayed worker that signs an answer with its own key and
 * puts the message id of alice's pending READ in it would have the Linux
 * client take its data as alice's.  The owner reads every request it
 * forwards in the clear, so it keeps their ids here and passes on an
 * answer in the clear only when each of its headers names one of them
 * (a break notice excepted: MessageId 0xFFFFFFFFFFFFFFFF, 3.3.4.6).  A
 * final answer forgets its id; an interim one (STATUS_PENDING, async)
 * keeps it for the final answer.  A sealed answer cannot be read here at
 * all: `relay sealed sessions = no` keeps a relay in the clear
 * (worker/relay_setup.c).
 *
 * An open-addressing table of ids + 1 (0 marks a free slot); ids are
 * consecutive, so the low bits spread them without a hash, and linear
 * probing with backward-shift deletion keeps lookups short without
 * tombstones.  Its room is what a client may have in flight on one
 * connection: one request per credit plus the async ones, whose credits
 * it got back with their interim answers.
 */
#include <string.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"

#define RM_MASK		(RELAY_MIDS_SLOTS - 1)

static unsigned
rm_home(uint64_t key)
{
	return (unsigned)((key - 1) & RM_MASK);
}

/* The slot holding mid, or -1. */
static int
rm_find(const struct relay_mids *t, uint64_t mid)
{
	uint64_t key = mid + 1;
	unsigned i = rm_home(key), n;

	for (n = 0; n < RELAY_MIDS_SLOTS && t->slot[i] != 0; n++) {
		if (t->slot[i] == key)
			return (int)i;
		i = (i + 1) & RM_MASK;
	}
	return -1;
}

int
relay_mids_add(struct relay_mids *t, uint64_t mid)
{
	uint64_t key = mid + 1;
	unsigned i;

	if (key == 0)
		return -1;	/* 0xFFFF...: never a request's (3.3.5.2.3) */
	if (rm_find(t, mid) >= 0)
		return 0;	/* a client's duplicate: its window refuses it */
	if (t->n >= RELAY_MIDS_MAX)
		return -1;
	for (i = rm_home(key); t->slot[i] != 0; i = (i + 1) & RM_MASK)
		;
	t->slot[i] = key;
	t->n++;
	return 0;
}

/*
 * Removes slot i and moves back every entry of its run that would no
 * longer be found past the hole (Knuth's algorithm R for linear probing).
 */
static void
rm_remove(struct relay_mids *t, unsigned i)
{
	unsigned j = i, home;

	t->slot[i] = 0;
	t->n--;
	for (;;) {
		j = (j + 1) & RM_MASK;
		if (t->slot[j] == 0)
			return;
		home = rm_home(t->slot[j]);
		/* Does home lie cyclically in (i, j]?  Then it stays. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->slot[j] = 0;
		i = j;
	}
}

int
relay_mids_has(const struct relay_mids *t, uint64_t mid)
{
	return mid != UINT64_MAX && rm_find(t, mid) >= 0;
}

int
relay_mids_note(struct relay_mids *t, const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;

	if (smb2_magic(msg, len) != SMB2_MAGIC_SMB2)
		return 0;	/* sealed: nothing to read (relay_forward) */
	smb2_chain_init(&ch, msg, len);
	ch.tail_ok = 1;		/* an element split off (relay_split) */
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		/* A CANCEL is never answered (MS-SMB2 3.3.5.16). */
		if (le16_get(m + 12) == SMB2_CANCEL)
			continue;
		if (relay_mids_add(t, le64_get(m + 24)) < 0)
			return -1;
	}
	return 0;
}

int
relay_mids_answered(struct relay_mids *t, const uint8_t *msg, size_t len)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;
	uint64_t mid;
	int r, slot;

	if (smb2_magic(msg, len) != SMB2_MAGIC_SMB2)
		return -1;
	/* Every id first: a refused frame changes nothing. */
	smb2_chain_init(&ch, msg, len);
	while ((r = smb2_chain_next(&ch, &m, &mlen)) == 1) {
		mid = le64_get(m + 24);
		if (mid == UINT64_MAX && le16_get(m + 12) == SMB2_OPLOCK_BREAK)
			continue;	/* a break notice */
		if (rm_find(t, mid) < 0)
			return -1;
	}
	if (r < 0)
		return -1;
	smb2_chain_init(&ch, msg, len);
	while (smb2_chain_next(&ch, &m, &mlen) == 1) {
		mid = le64_get(m + 24);
		if ((le32_get(m + 16) & SMB2_FLAGS_ASYNC_COMMAND) &&
		    le32_get(m + 8) == STATUS_PENDING)
			continue;	/* interim: its final answer follows */
		if ((slot = rm_find(t, mid)) >= 0)
			rm_remove(t, (unsigned)slot);
	}
	return 0;
}
