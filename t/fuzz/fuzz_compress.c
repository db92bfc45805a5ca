/*
 * libFuzzer target: SMB 3.1.1 compressed messages (proto/compress.c):
 * the transform header, unchained and chained, with every payload kind
 * (smb2_decompress), the MS-XCA Plain LZ77 decoder on raw bytes, and
 * round trips of the input through the LZ77 coder and both message forms,
 * which must always give the input back.
 *
 * The first input byte picks the negotiated algorithms, chaining and the
 * cap (the bomb bound); the rest is the message.
 *
 * Run:
 *   make build/fuzz/fuzz_compress
 *   build/fuzz/fuzz_compress -max_total_time=60 t/fuzz/corpus/compress
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/compress.h"

#define OUT_CAP	(256u * 1024)

static uint8_t out[OUT_CAP], z[OUT_CAP + 1024], back[OUT_CAP];
static struct lz77_table tab;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t algs;
	size_t cap, n;
	ssize_t r;
	int chained;

	if (size < 1)
		return 0;
	algs = (data[0] & 1 ? COMPRESS_ALG_BIT(SMB2_COMPRESSION_LZ77) : 0) |
	    (data[0] & 2 ? COMPRESS_ALG_BIT(SMB2_COMPRESSION_PATTERN_V1) : 0) |
	    (data[0] & 0x40 ? COMPRESS_ALG_BIT(SMB2_COMPRESSION_LZNT1) : 0);
	chained = (data[0] & 4) != 0;
	cap = data[0] & 8 ? OUT_CAP : (size_t)(data[0] >> 4) * 64;
	data++;
	size--;

	r = smb2_decompress(data, size, algs, chained, out, cap);
	if (r >= 0 && (size_t)r > cap)
		abort();
	r = lz77_decompress(data, size, out, cap);
	if (r >= 0 && (size_t)r > cap)
		abort();

	/* round trips */
	if (size > OUT_CAP)
		return 0;
	n = lz77_compress(data, size, z, sizeof(z), &tab);
	if (n == 0 && size < 1000)
		abort();	/* room enough for any input this short */
	if (n > 0) {
		r = lz77_decompress(z, n, back, size);
		if (r != (ssize_t)size || memcmp(back, data, size) != 0)
			abort();
	}
	for (chained = 0; chained <= 1; chained++) {
		size_t keep = size < 80 ? size : 80;

		n = smb2_compress(data, size, keep, COMPRESS_ALGS_SUPPORTED,
		    chained, z, sizeof(z), &tab);
		if (n == 0)
			continue;
		if (n >= size)
			abort();
		r = smb2_decompress(z, n, COMPRESS_ALGS_SUPPORTED, 1, back,
		    sizeof(back));
		if (r != (ssize_t)size || memcmp(back, data, size) != 0)
			abort();
	}
	return 0;
}
