/*
 * libFuzzer target: the tree records of `max connections` (shm/trees.c),
 * read by the purge of a dead worker and by every count; any worker can
 * write them.  The first byte is the key's length; the key, then the
 * value.  Length 0: the value is a share's count (name | 0 -> count).  A record that decodes has a name that ends where the key says,
 * a pid and a tree key, and the value agrees with its key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_tree_rec r;
	size_t klen, n;
	uint32_t count;

	if (size < 1)
		return 0;
	klen = data[0];
	if (1 + klen > size)
		return 0;
	if (klen == 0) {
		if (shm_tree_counter_decode(data + 1, size - 1, &count) == 0 &&
		    size - 1 != 5)
			abort();
		return 0;
	}
	if (shm_tree_decode(data + 1, klen, data + 1 + klen, size - 1 - klen,
	    &r) != 0)
		return 0;
	if (memchr(r.share, 0, sizeof(r.share)) == NULL)
		abort();
	n = strlen(r.share);
	if (n == 0 || n + 13 != klen || memcmp(r.share, data + 1, n) != 0 ||
	    r.pid <= 0 || r.tree_key == 0)
		abort();
	return 0;
}
