/*
 * libFuzzer target: what a worker decodes of a relay (worker/relay.h).
 * The relay state comes through the master from the connection's owner
 * (another user's worker, which may be compromised); the control records
 * come from the relayed worker to the owner.  A state that decodes must
 * name only bytes inside the input and encode back to the same bytes; a
 * control record that decodes is exactly 4 + n * 10 bytes.  The owner's
 * table of requests in flight takes any frame either way and never
 * holds more than RELAY_INFLIGHT; the answers it makes when the relayed
 * worker dies are well-formed frames, each with its control record.
 * The relayed worker's ring of sealed ids (worker/relay_ring.c) is
 * another user's memory: what the owner takes of it lies inside its
 * window, never twice, never more than RELAY_INFLIGHT; what its counters
 * make the owner log never exceeds what the owner forwarded.  The relayed
 * worker's stream as the owner reads it (relay_answer_next): an answer
 * taken lies inside the input, its record within RELAY_CTL_MAX, and its
 * frame names the relay's session only.  The message ids either side
 * picks, as 10-byte records (u64 id, u16 charge): the relayed worker's
 * replay window (conn_credits_replay) refuses an id it took, at once;
 * the owner's window, charged and granted by control records
 * (relay.c relay_apply), never outgrows its bitmap or its maximum.  The
 * ids a relay may answer (worker/relay_mids.c): the input as a client's
 * frame, then as an answer; an answer is taken only when each header's
 * id was noted (a break notice excepted), a refused one changes nothing,
 * and the table never holds more than RELAY_MIDS_MAX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"

static uint8_t out[4096];
static uint8_t answers[RELAY_INFLIGHT * 100];
static struct relay_inflight inf;
static struct relay_inflight ringt;
static struct conn_credits win, scratch;
static struct relay_mids mids;

/* The ids a relay may answer: noted, then answered, by the input. */
static void
fuzz_mids(const uint8_t *data, size_t size)
{
	struct smb2_chain ch;
	const uint8_t *m;
	size_t mlen;
	unsigned before;
	int ok = 1, r;

	if (mids.n > RELAY_MIDS_MAX - 64)
		memset(&mids, 0, sizeof(mids));
	(void)relay_mids_note(&mids, data, size);
	if (mids.n > RELAY_MIDS_MAX)
		abort();
	if (smb2_magic(data, size) == SMB2_MAGIC_SMB2) {
		smb2_chain_init(&ch, data, size);
		while ((r = smb2_chain_next(&ch, &m, &mlen)) == 1)
			if (!relay_mids_has(&mids, le64_get(m + 24)) &&
			    (le64_get(m + 24) != UINT64_MAX ||
			    le16_get(m + 12) != SMB2_OPLOCK_BREAK))
				ok = 0;
		if (r < 0)
			ok = 0;
	} else
		ok = 0;
	before = mids.n;
	r = relay_mids_answered(&mids, data, size);
	if ((r == 0) != ok || (r < 0 && mids.n != before) || mids.n > before)
		abort();
}

/* The input as the relayed worker's stream, answer after answer. */
static void
fuzz_answers(const uint8_t *data, size_t size)
{
	struct smb2_chain ch;
	struct relay_ctl k;
	const uint8_t *f, *m;
	size_t off = 0, flen, klen, mlen;
	int rc;

	while ((rc = relay_answer_next(data + off, size - off, 7, &flen,
	    &klen)) == 1) {
		if (flen > CONN_BUF_BIG || klen > RELAY_CTL_MAX ||
		    2 * SMB2_FRAME_LEN + flen + klen > size - off)
			abort();
		f = data + off + SMB2_FRAME_LEN;
		if (smb2_magic(f, flen) == SMB2_MAGIC_TRANSFORM) {
			if (flen < SMB2_TRANSFORM_HDR_LEN || le64_get(f + 44) != 7)
				abort();
		} else {
			if (smb2_magic(f, flen) != SMB2_MAGIC_SMB2)
				abort();
			smb2_chain_init(&ch, f, flen);
			while (smb2_chain_next(&ch, &m, &mlen) == 1)
				if (le64_get(m + 40) != 7 && (le64_get(m + 40) != 0 ||
				    le64_get(m + 24) != UINT64_MAX))
					abort();
		}
		(void)relay_ctl_decode(&k, f + flen + SMB2_FRAME_LEN, klen);
		off += 2 * SMB2_FRAME_LEN + flen + klen;
	}
	if (rc < -2 || rc > 1)
		abort();
}

/* The input as message ids and charges: the windows of both sides. */
static void
fuzz_windows(const uint8_t *data, size_t size)
{
	static struct conn_credits rw, ow, again;
	size_t off;
	uint64_t mid;
	uint16_t charge;

	memset(&rw, 0, sizeof(rw));	/* as relay_accept leaves it */
	conn_credits_init(&ow, 512);
	for (off = 0; off + 10 <= size; off += 10) {
		mid = le64_get(data + off);
		charge = le16_get(data + off + 8);
		if (conn_credits_replay(&rw, mid, charge) == 0) {
			again = rw;
			if (conn_credits_replay(&again, mid, charge) == 0)
				abort();
		}
		(void)conn_credits_charge(&ow, mid, charge);
		conn_credits_add(&ow, charge);
		if (ow.range > sizeof(ow.bitmap) * 8 || ow.granted > ow.max ||
		    ow.granted > ow.range)
			abort();
	}
}

/* The ring's snapshot (data) as the owner takes it at the relay's end. */
static void
fuzz_ring(const uint8_t *data, size_t size)
{
	unsigned i, j, added;

	memset(&ringt, 0, sizeof(ringt));
	conn_credits_init(&win, 512);
	(void)conn_credits_charge(&win, 0, 1);
	(void)conn_credits_grant(&win, 100, 1);
	(void)conn_credits_charge(&win, 3, 1);	/* the owner's own */
	scratch = win;
	added = relay_inflight_collect(&ringt, data, size, &scratch);
	if (added != ringt.n || ringt.n > RELAY_INFLIGHT)
		abort();
	for (i = 0; i < ringt.n; i++) {
		if (ringt.r[i].mid < 1 || ringt.r[i].mid >= 101 ||
		    ringt.r[i].mid == 3 || ringt.r[i].command == SMB2_CANCEL ||
		    ringt.r[i].async)
			abort();
		for (j = 0; j < i; j++)
			if (ringt.r[j].mid == ringt.r[i].mid)
				abort();
	}
	if (relay_inflight_collect(&ringt, data, size, &scratch) != 0)
		abort();	/* each id is charged once taken */
}

/* The ring's counters (data) against what the owner forwarded. */
static void
fuzz_ring_lost(const uint8_t *data, size_t size)
{
	struct relay_fwd f = { 1u << 20, 64, 1u << 16 };
	struct relay_lost lost;
	int rc;

	relay_fwd_note(&f, data, size);	/* the input as a forwarded frame */
	rc = relay_ring_lost(&f, data, size, &lost);
	if (rc < -1 || rc > 1 || lost.sealed > f.sealed ||
	    lost.sealed_bytes > f.sealed_bytes || lost.unread > f.bytes ||
	    (rc == 1 && lost.sealed == 0) || (rc == 0 && lost.sealed != 0) ||
	    (rc == -1 && (lost.sealed != f.sealed ||
	    lost.sealed_bytes != f.sealed_bytes || lost.unread != f.bytes)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relay_state st;
	struct relay_ctl k;
	int n, m;

	fuzz_mids(data, size);
	fuzz_ring(data, size);
	fuzz_ring_lost(data, size);
	fuzz_answers(data, size);
	fuzz_windows(data, size);
	n = relay_state_decode(&st, data, size);
	if (n >= 0) {
		if ((size_t)n > size)
			abort();
		m = relay_state_encode(&st, out, sizeof(out));
		if (m != n || memcmp(out, data, (size_t)n) != 0)
			abort();
	}
	if (relay_ctl_decode(&k, data, size) == 0) {
		unsigned i;

		if (k.n > RELAY_CTL_IDS || k.na > RELAY_CTL_IDS ||
		    (size != 4 + (size_t)k.n * 10 &&
		    size != 4 + (size_t)k.n * 10 + 2 + (size_t)k.na * 19))
			abort();
		/* a sealed frame's async states, as the owner takes them */
		for (i = 0; i < k.na; i++)
			relay_inflight_sealed(&inf, &k.async[i]);
		if (inf.n > RELAY_INFLIGHT)
			abort();
	}
	/*
	 * The owner's requests in flight (worker/relay_inflight.c): the
	 * input as a client's frame, then as the relayed worker's answers;
	 * the answers it makes are whole frames and control records.
	 */
	relay_inflight_note(&inf, data, size);
	if (inf.n > RELAY_INFLIGHT)
		abort();
	relay_inflight_answered(&inf, data, size);
	if (inf.n > RELAY_INFLIGHT)
		abort();
	if (inf.n > RELAY_INFLIGHT / 2 || (size > 0 && data[0] == 0xA5)) {
		size_t off = 0, len = relay_inflight_answer(&inf, 7, 0x0210,
		    answers, sizeof(answers));

		while (off < len) {
			long flen = smb2_frame_decode(answers + off);

			if (flen != 64 + 9 || answers[off + 4 + flen] != RELAY_CTL_TYPE ||
			    relay_ctl_decode(&k, answers + off + 8 + flen,
			    answers[off + 4 + flen + 3]) != 0)
				abort();
			off += 8 + (size_t)flen + answers[off + 4 + flen + 3];
		}
		if (off != len || inf.n != 0)
			abort();
	}
	return 0;
}
