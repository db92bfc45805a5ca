/*
 * libFuzzer target: a worker's datagram (shm/wmsg.c: break, break-ack,
 * lock-released, change-notify...), which any process of the state group
 * can send to a worker's mailbox.  One that decodes is of a known type,
 * its name ends inside the field, and it encodes back to its bytes
 * (but for what the decoder normalises).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

static struct shm_wmsg_msg m;
static uint8_t out[1024 + SHM_WMSG_NAME_MAX];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n;

	if (shm_wmsg_decode(data, size, &m) != 0)
		return 0;
	if (memchr(m.name, 0, sizeof(m.name)) == NULL ||
	    m.type < SHM_WMSG_BREAK || m.type > SHM_WMSG_BREAK_WAIT)
		abort();
	/*
	 * The name's length is the u16 at offset 74 (the fixed fields
	 * before it); one with a NUL inside comes back shorter, and the
	 * lease flag (offset 27) comes back as 0 or 1.
	 */
	n = shm_wmsg_encode(out, sizeof(out), &m);
	if (n == 0)
		abort();
	if (strlen(m.name) == le16_get(data + 74) && data[27] <= 1 &&
	    (n != size || memcmp(out, data, size) != 0))
		abort();
	return 0;
}
