/*
 * libFuzzer target: a watched directory's record in the shared state
 * (shm/notify.c shm_notify_decode): the workers a change that inotify
 * cannot express is told to, read by any worker and by the purge of a
 * dead one; any worker can write one.  What decodes is at most
 * SHM_PIDS_MAX pids, each positive and named once.
 */
#include <stdint.h>
#include <stdlib.h>

#include "shm/shm_priv.h"

static struct shm_pids p;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned i, j;

	if (shm_notify_decode(data, size, &p) != 0)
		return 0;
	if (p.n > SHM_PIDS_MAX)
		abort();
	for (i = 0; i < p.n; i++) {
		if (p.pid[i] <= 0)
			abort();
		for (j = 0; j < i; j++)
			if (p.pid[j] == p.pid[i])
				abort();
	}
	return 0;
}
