/*
 * libFuzzer target: the session and worker records of the shared state
 * (shm/sessions.c, shm/workers.c), read by `usmbctl status` in the state
 * process and by the purge of a dead worker; any worker can write them.
 * The first byte picks the record (bit 0: session or worker) and the
 * key's length (the rest, mod 16); the key, then the value.  Strings end
 * inside their fields; a record carries the key it was found under.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_session_rec s;
	struct shm_worker_rec w;
	size_t klen;

	if (size < 1)
		return 0;
	klen = (data[0] >> 1) % 16;
	if (1 + klen > size)
		return 0;
	if (data[0] & 1) {
		if (shm_worker_decode(data + 1, klen, data + 1 + klen,
		    size - 1 - klen, &w) != 0)
			return 0;
		if (klen != 4 || memchr(w.user, 0, sizeof(w.user)) == NULL)
			abort();
		return 0;
	}
	if (shm_session_decode(data + 1, klen, data + 1 + klen, size - 1 - klen,
	    &s) != 0)
		return 0;
	if (klen != 8 || memchr(s.user, 0, sizeof(s.user)) == NULL ||
	    memchr(s.client_addr, 0, sizeof(s.client_addr)) == NULL)
		abort();
	return 0;
}
