/*
 * libFuzzer target: the decoder of a file's opens value in the shared
 * state (shm/opens.c shm_ofile_parse, v4: delete-pending names and open
 * records).  Every process that maps the state reads these values, and
 * any worker can write them: a value that decodes must describe only
 * bytes inside it, with at most SHM_ODEL_MAX names, and its records must
 * decode and encode back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

static uint8_t rec[SHM_OREC_LEN];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_ofile of;
	struct shm_open_rec r;
	size_t off;

	if (shm_ofile_parse(data, size, &of) != 0)
		return 0;
	if (of.ndel > SHM_ODEL_MAX)
		abort();
	off = SHM_OFILE_HDR + (size_t)of.ndel * SHM_ODEL_LEN;
	if (of.rec != data + off ||
	    off + (size_t)of.n * SHM_OREC_LEN != size)
		abort();
	for (uint32_t i = 0; i < of.n; i++) {
		const uint8_t *p = of.rec + (size_t)i * SHM_OREC_LEN;

		shm_orec_get(p, &r);
		shm_orec_put(rec, &r);
		if (memcmp(rec, p, SHM_OREC_LEN) != 0)
			abort();
	}
	return 0;
}
