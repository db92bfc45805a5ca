/*
 * libFuzzer target: the NEGOTIATE request and its 3.1.1 contexts.
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     t/fuzz/fuzz_negotiate.c proto/neg_ctx.c -o build/fuzz/fuzz_negotiate
 * Run:
 *   build/fuzz/fuzz_negotiate -max_total_time=60 t/fuzz/corpus/negotiate
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/neg_ctx.h"

static volatile uint32_t sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct neg_req r;
	struct neg_ctx c;
	uint8_t out[256];
	struct wcur w;

	if (neg_req_decode(data, size, &r) != STATUS_SUCCESS)
		return 0;
	sink += r.dialect_count;
	if (neg_ctx_decode(data, size, r.ctx_offset, r.ctx_count, &c) !=
	    STATUS_SUCCESS)
		return 0;
	/* What the server answers must encode within bounds too. */
	wcur_init(&w, out, sizeof(out));
	neg_ctx_put_preauth(&w, c.salt, c.salt_len > 64 ? 64 : c.salt_len);
	if (c.has_cipher)
		neg_ctx_put_cipher(&w, c.ciphers[0]);
	if (c.has_signing)
		neg_ctx_put_signing(&w, c.sign_algs[0]);
	sink += (uint32_t)wcur_off(&w) + c.netname_len;
	return 0;
}
