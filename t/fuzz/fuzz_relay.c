/*
 * libFuzzer target: what a worker decodes of a relay (worker/relay.h).
 * The relay state comes through the master from the connection's owner
 * (another user's worker, which may be compromised); the control records
 * come from the relayed worker to the owner.  A state that decodes must
 * name only bytes inside the input and encode back to the same bytes; a
 * control record that decodes is exactly 4 + n * 10 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/relay.h"

static uint8_t out[4096];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relay_state st;
	struct relay_ctl k;
	int n, m;

	n = relay_state_decode(&st, data, size);
	if (n >= 0) {
		if ((size_t)n > size)
			abort();
		m = relay_state_encode(&st, out, sizeof(out));
		if (m != n || memcmp(out, data, (size_t)n) != 0)
			abort();
	}
	if (relay_ctl_decode(&k, data, size) == 0 &&
	    (k.n > RELAY_CTL_IDS || size != 4 + (size_t)k.n * 10))
		abort();
	return 0;
}
