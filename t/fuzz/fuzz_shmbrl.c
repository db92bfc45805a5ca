/*
 * libFuzzer target: a file's byte-range lock record in the shared state
 * (shm/brlock.c, v1: counts, locks, waiters), which any worker can write
 * and every worker reads before it grows its buffers for it.  A record
 * that decodes is exactly as long as its counts say, and each of its
 * locks reads from inside it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "shm/shm_priv.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_brlock_rec l;
	unsigned nl, nw, i;

	if (shm_brlock_decode(data, size, &nl, &nw) != 0)
		return 0;
	if (nl > 0xffff || nw > 0xffff ||
	    5 + (size_t)nl * 29 + (size_t)nw * 12 != size)
		abort();
	for (i = 0; i < nl; i++) {
		shm_brlock_rec_get(data, i, &l);
		if (l.exclusive != 0 && l.exclusive != 1)
			abort();
	}
	return 0;
}
