/*
 * libFuzzer target: a durable handle's record in the shared state
 * (shm/durable.c shm_durable_decode), read by a reconnect in any worker
 * and by the state process's expiry; any worker can write one.  Its
 * strings (path, share, user) end inside their fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

static struct shm_durable_rec d;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (shm_durable_decode(data, size, &d) != 0)
		return 0;
	if (memchr(d.path, 0, sizeof(d.path)) == NULL ||
	    memchr(d.share, 0, sizeof(d.share)) == NULL ||
	    memchr(d.user, 0, sizeof(d.user)) == NULL)
		abort();
	return 0;
}
