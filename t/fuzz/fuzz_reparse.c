/*
 * libFuzzer target: the reparse data codecs (proto/reparse.c), fed what
 * a client sets with FSCTL_SET_REPARSE_POINT.  The first byte picks the
 * decoder: a REPARSE_DATA_BUFFER or a Symbolic Link Error Response;
 * whatever decodes is encoded again and must decode to the same values.
 *
 * Build: make build/fuzz/fuzz_reparse
 * Run:   build/fuzz/fuzz_reparse -max_total_time=60 t/fuzz/corpus/reparse
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/reparse.h"

static uint8_t out[2 * 65536 + 64];

static void
reencode(const struct reparse_data *d)
{
	struct reparse_data back;
	struct wcur w;

	wcur_init(&w, out, sizeof(out));
	if (d->tag == IO_REPARSE_TAG_SYMLINK)
		reparse_put_symlink(&w, d->subst16, d->subst16_len, d->flags,
		    d->reserved);
	else
		reparse_put_nfs(&w, d->nfs_type, d->target16, d->target16_len,
		    d->major, d->minor);
	if (w.err)
		return;		/* a name too long to be written back */
	if (reparse_decode(out, wcur_off(&w), &back) != 0 ||
	    back.tag != d->tag || back.nfs_type != d->nfs_type ||
	    back.major != d->major || back.minor != d->minor ||
	    back.subst16_len != d->subst16_len ||
	    back.target16_len != d->target16_len ||
	    (d->subst16_len && memcmp(back.subst16, d->subst16,
	    d->subst16_len) != 0) ||
	    (d->target16_len && memcmp(back.target16, d->target16,
	    d->target16_len) != 0))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reparse_data d;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (reparse_decode(data + 1, size - 1, &d) == 0)
			reencode(&d);
	} else if (reparse_symlink_error_decode(data + 1, size - 1, &d) == 0)
		reencode(&d);
	return 0;
}
