/*
 * libFuzzer target: the decoder of a file's opens value in the shared
 * state (shm/opens.c shm_ofile_parse, v4: delete-pending names and open
 * records).  Every process that maps the state reads these values, and
 * any worker can write them: a value that decodes must describe only
 * bytes inside it, with at most SHM_ODEL_MAX names, and its records must
 * decode and encode back to the same bytes.
 *
 * The same bytes are also decoded as an open's name record (shm/oname.c
 * shm_open_name_decode, read by the administrator's srvsvc listing): one
 * that decodes has NUL-terminated strings inside their buffers and
 * encodes back to the same bytes (but the flags byte, which the encoder
 * sets from the path's length).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

static uint8_t rec[SHM_OREC_LEN];
static uint8_t nbuf[SHM_ONAME_VAL_MAX];
static struct shm_open_name nm;

static void
name_check(const uint8_t *data, size_t size)
{
	size_t n;

	if (shm_open_name_decode(data, size, &nm) != 0)
		return;
	if (strnlen(nm.share, sizeof(nm.share)) >= sizeof(nm.share) ||
	    strnlen(nm.path, sizeof(nm.path)) >= sizeof(nm.path))
		abort();
	n = shm_open_name_encode(nbuf, nm.share, nm.path, NULL);
	if (n != size || nbuf[0] != data[0] ||
	    memcmp(nbuf + 2, data + 2, n - 2) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_ofile of;
	struct shm_open_rec r;
	size_t off;

	name_check(data, size);
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
