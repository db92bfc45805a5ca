/*
 * The ids a relay may answer (worker/relay_mids.c): noted from the
 * requests the owner forwards in the clear, an answer in the clear passed
 * only when each of its headers names one (a break notice excepted), a
 * final answer forgetting its id and an interim one keeping it; the
 * table's probing and deletion kept exact under collisions and
 * wrap-around, and its room bounded.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"
#include "worker/relay.h"
#include "t/unit/testconn.h"
#include "t/unit/testlib.h"

static struct relay_mids *
mids_new(void)
{
	struct relay_mids *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	return t;
}

/* A frame of n headers (72 bytes each, chained) with mids[i], cmds[i]. */
static size_t
chain(uint8_t *buf, const uint64_t *mid, const uint16_t *cmd,
    const uint32_t *flags, const uint32_t *status, int n)
{
	int i;

	memset(buf, 0, (size_t)n * 72);
	for (i = 0; i < n; i++) {
		uint8_t *h = buf + (size_t)i * 72;

		test_smb2_hdr(h, cmd[i], mid[i], flags[i], status[i], 0);
		if (i + 1 < n)
			le32_put(h + 20, 72);
	}
	return (size_t)n * 72 - 6;	/* the last one's 66 bytes */
}

static size_t
one(uint8_t *buf, uint64_t mid, uint16_t cmd, uint32_t flags,
    uint32_t status)
{
	return chain(buf, &mid, &cmd, &flags, &status, 1);
}

START_TEST(test_mids_request_answer)
{
	struct relay_mids *t = mids_new();
	uint8_t f[512];
	uint64_t mid[3] = { 10, 11, 12 };
	uint16_t cmd[3] = { SMB2_CREATE, SMB2_CANCEL, SMB2_READ };
	uint32_t fl[3] = { 0, 0, 0 }, st[3] = { 0, 0, 0 };
	size_t n;

	/* a chain of three: the CANCEL's id is not noted */
	n = chain(f, mid, cmd, fl, st, 3);
	ck_assert_int_eq(relay_mids_note(t, f, n), 0);
	ck_assert_uint_eq(t->n, 2);
	ck_assert(relay_mids_has(t, 10) && relay_mids_has(t, 12));
	ck_assert(!relay_mids_has(t, 11));
	/* an answer for an id never sent: refused, nothing changes */
	n = one(f, 11, SMB2_READ, SMB2_FLAGS_SERVER_TO_REDIR, 0);
	ck_assert_int_eq(relay_mids_answered(t, f, n), -1);
	ck_assert_uint_eq(t->n, 2);
	/* a chain with one good id and one bad: refused whole */
	mid[0] = 10, mid[1] = 99, cmd[1] = SMB2_READ;
	fl[0] = fl[1] = SMB2_FLAGS_SERVER_TO_REDIR;
	n = chain(f, mid, cmd, fl, st, 2);
	ck_assert_int_eq(relay_mids_answered(t, f, n), -1);
	ck_assert(relay_mids_has(t, 10));
	/* an interim answer keeps the id, the final one forgets it */
	n = one(f, 12, SMB2_READ, SMB2_FLAGS_SERVER_TO_REDIR |
	    SMB2_FLAGS_ASYNC_COMMAND, STATUS_PENDING);
	ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
	ck_assert(relay_mids_has(t, 12));
	n = one(f, 12, SMB2_READ, SMB2_FLAGS_SERVER_TO_REDIR |
	    SMB2_FLAGS_ASYNC_COMMAND, 0);
	ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
	ck_assert(!relay_mids_has(t, 12));
	/* and a second final answer for it is refused */
	ck_assert_int_eq(relay_mids_answered(t, f, n), -1);
	/* a break notice names no request */
	n = one(f, UINT64_MAX, SMB2_OPLOCK_BREAK, SMB2_FLAGS_SERVER_TO_REDIR, 0);
	ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
	/* but 0xFFFF... on anything else is refused, and never noted */
	n = one(f, UINT64_MAX, SMB2_READ, SMB2_FLAGS_SERVER_TO_REDIR, 0);
	ck_assert_int_eq(relay_mids_answered(t, f, n), -1);
	ck_assert_int_eq(relay_mids_add(t, UINT64_MAX), -1);
	/* a sealed frame is read by neither: not noted, never passed here */
	memset(f, 0, 64);
	le32_put(f, 0x424d53fd);	/* 0xFD 'S' 'M' 'B' */
	ck_assert_int_eq(relay_mids_note(t, f, 64), 0);
	ck_assert_uint_eq(t->n, 1);
	ck_assert_int_eq(relay_mids_answered(t, f, 64), -1);
	/* a duplicate id from the client is noted once */
	ck_assert_int_eq(relay_mids_add(t, 10), 0);
	ck_assert_uint_eq(t->n, 1);
	n = one(f, 10, SMB2_CREATE, SMB2_FLAGS_SERVER_TO_REDIR, 0);
	ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
	ck_assert_uint_eq(t->n, 0);
	free(t);
}
END_TEST

/*
 * Ids that share a home slot (RELAY_MIDS_SLOTS apart) and runs that wrap
 * past the table's end: every one stays findable as others leave, in any
 * order, and the table is empty at the end.
 */
START_TEST(test_mids_probe)
{
	struct relay_mids *t = mids_new();
	uint64_t ids[64];
	unsigned i, j, k, seed = 12345;

	for (k = 0; k < 200; k++) {
		for (i = 0; i < 64; i++) {
			seed = seed * 1103515245u + 12345u;
			/* few home slots, near the end of the table */
			ids[i] = (uint64_t)(RELAY_MIDS_SLOTS - 4 + (seed >> 8) % 8) +
			    (uint64_t)((seed >> 16) % 5) * RELAY_MIDS_SLOTS +
			    (uint64_t)i * 7 * RELAY_MIDS_SLOTS;
			ck_assert_int_eq(relay_mids_add(t, ids[i]), 0);
		}
		ck_assert_uint_le(t->n, 64);
		for (i = 0; i < 64; i++) {
			uint8_t f[80];
			size_t n;

			seed = seed * 1103515245u + 12345u;
			j = (seed >> 8) % 64;
			if (ids[j] == 0)
				continue;
			n = one(f, ids[j], SMB2_WRITE, SMB2_FLAGS_SERVER_TO_REDIR, 0);
			ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
			ck_assert(!relay_mids_has(t, ids[j]));
			ids[j] = 0;
			for (j = 0; j < 64; j++)
				if (ids[j] != 0)
					ck_assert(relay_mids_has(t, ids[j]));
		}
		for (i = 0; i < 64; i++)
			if (ids[i] != 0) {
				uint8_t f[80];
				size_t n = one(f, ids[i], SMB2_WRITE,
				    SMB2_FLAGS_SERVER_TO_REDIR, 0);

				ck_assert_int_eq(relay_mids_answered(t, f, n), 0);
				ids[i] = 0;
			}
		ck_assert_uint_eq(t->n, 0);
	}
	for (i = 0; i < RELAY_MIDS_SLOTS; i++)
		ck_assert(t->slot[i] == 0);
	free(t);
}
END_TEST

/* As many as a client may have in flight, then no more. */
START_TEST(test_mids_full)
{
	struct relay_mids *t = mids_new();
	uint8_t f[80];
	uint64_t i;

	for (i = 0; i < RELAY_MIDS_MAX; i++)
		ck_assert_int_eq(relay_mids_add(t, 1000 + i), 0);
	ck_assert_int_eq(relay_mids_add(t, 1000 + i), -1);
	ck_assert_int_eq(relay_mids_note(t, f, one(f, 5, SMB2_READ, 0, 0)), -1);
	/* an old id still in flight is found among them */
	ck_assert(relay_mids_has(t, 1000));
	ck_assert(relay_mids_has(t, 1000 + RELAY_MIDS_MAX - 1));
	free(t);
}
END_TEST

static Suite *
relay_mids_suite(void)
{
	Suite *s = suite_create("relay_mids");
	TCase *tc = tcase_create("core");

	/* the probe test's 800,000 lookups take 2.5 s under ASan alone, more
	 * than Check's default 4 s on a loaded machine */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_mids_request_answer);
	tcase_add_test(tc, test_mids_probe);
	tcase_add_test(tc, test_mids_full);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(relay_mids_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
