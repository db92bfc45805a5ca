/*
 * libFuzzer target: the SMB3 POSIX extensions codecs (proto/posix.c).
 * The first byte picks the decoder: the negotiate context's GUID list,
 * the create context's mode, or the POSIX response / information level /
 * directory entry a client reads; whatever decodes is encoded again and
 * must decode to the same values.
 *
 * Build: make build/fuzz/fuzz_posix
 * Run:   build/fuzz/fuzz_posix -max_total_time=60 t/fuzz/corpus/posix
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/posix.h"

static volatile uint32_t sink;

static void
reencode(const struct posix_info *pi, int kind)
{
	struct posix_info back;
	uint8_t out[256];
	struct wcur w;
	const uint8_t *n16;
	uint32_t nlen, next;

	wcur_init(&w, out, sizeof(out));
	if (kind == 0) {
		posix_put_cc(&w, pi);
		if (posix_cc_decode(out, wcur_off(&w), &back) < 0)
			abort();
	} else if (kind == 1) {
		posix_put_info(&w, pi);
		if (posix_info_decode(out, wcur_off(&w), &back) < 0)
			abort();
	} else {
		if (posix_put_dirent(&w, pi, (const uint8_t *)"a\0", 2) == 0 ||
		    posix_dirent_decode(out, wcur_off(&w), &back, &n16, &nlen,
		    &next) < 0)
			abort();
	}
	/* what the decoder could not express (other SIDs) stays as read */
	if (back.nlink != pi->nlink || back.reparse_tag != pi->reparse_tag ||
	    (back.mode & 07777) != (pi->mode & 07777))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct posix_info pi;
	const uint8_t *n16;
	uint32_t perms, nlen, next;
	int r;

	if (size < 1)
		return 0;
	switch (data[0] % 5) {
	case 0:
		sink += (uint32_t)posix_negctx_offered(data + 1, size - 1);
		break;
	case 1:
		if (posix_create_req_decode(data + 1, size - 1, &perms) == 0)
			sink += posix_mode_from_wire(perms);
		break;
	case 2:
		if ((r = posix_cc_decode(data + 1, size - 1, &pi)) >= 0)
			reencode(&pi, 0);
		break;
	case 3:
		if ((r = posix_info_decode(data + 1, size - 1, &pi)) >= 0)
			reencode(&pi, 1);
		break;
	default:
		if (posix_dirent_decode(data + 1, size - 1, &pi, &n16, &nlen,
		    &next) >= 0) {
			sink += nlen + next;
			reencode(&pi, 2);
		}
		break;
	}
	return 0;
}
