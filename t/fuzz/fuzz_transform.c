/*
 * libFuzzer target: SMB2 TRANSFORM_HEADER parsing and decryption, plus the
 * signature verifier, on arbitrary bytes; and an encrypt/decrypt round trip
 * of the input, which must always give the input back.
 *
 * The first input byte picks the cipher (1..4) and signing algorithm.
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     $(pkg-config --cflags gnutls) t/fuzz/fuzz_transform.c proto/crypt.c \
 *     proto/sign.c $(pkg-config --libs gnutls) -o build/fuzz/fuzz_transform
 * Run:
 *   build/fuzz/fuzz_transform -max_total_time=60 t/fuzz/corpus/transform
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/crypt.h"
#include "proto/sign.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t key[32] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
		0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
		0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00,
	};
	uint16_t cipher;
	uint8_t *buf, th[SMB2_TRANSFORM_HDR_LEN];
	size_t off, plen;
	uint64_t sid;
	struct iovec iov;

	if (size < 1)
		return 0;
	cipher = (uint16_t)(1 + (data[0] & 3));
	data++;
	size--;

	buf = malloc(size + SMB2_TRANSFORM_HDR_LEN + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	(void)smb2_transform_session_id(buf, size, &sid);
	/*
	 * A successful decryption yields the whole payload, either in place
	 * after the header (GCM) or moved to the front of the buffer (CCM).
	 */
	if (smb2_decrypt(cipher, key, buf, size, &off, &plen) == 0 &&
	    ((off != SMB2_TRANSFORM_HDR_LEN && off != 0) ||
	    plen != size - SMB2_TRANSFORM_HDR_LEN))
		abort();
	(void)smb2_verify(cipher % 3, key, data, size);

	/* Round trip. */
	if (size > 0) {
		iov.iov_base = (void *)data;
		iov.iov_len = size;
		if (smb2_encrypt(cipher, key, 7, &iov, 1, th,
		    buf + SMB2_TRANSFORM_HDR_LEN) != (int)size)
			abort();
		memcpy(buf, th, sizeof(th));
		if (smb2_decrypt(cipher, key, buf, size + sizeof(th), &off,
		    &plen) != 0 || plen != size ||
		    memcmp(buf + off, data, size) != 0)
			abort();
	}
	free(buf);
	return 0;
}
