/*
 * libFuzzer target: NTLMSSP NEGOTIATE / AUTHENTICATE decoding and the NTLMv2
 * verification path (which must refuse, never crash, on any input).
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     $(pkg-config --cflags gnutls libbsd-overlay) t/fuzz/fuzz_ntlmssp.c \
 *     proto/ntlmssp.c $(pkg-config --libs gnutls) -lmd \
 *     -o build/fuzz/fuzz_ntlmssp
 * Run:
 *   build/fuzz/fuzz_ntlmssp -max_total_time=60 t/fuzz/corpus/ntlmssp
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntlmssp.h"

static volatile uint8_t sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t chal_bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t hash[16] = { 0x42 };
	struct ntlmssp_auth a;
	uint8_t chal[512], key[16];
	uint32_t flags;
	size_t i;
	int clen;

	if (ntlmssp_decode_negotiate(data, size, &flags) == 0) {
		clen = ntlmssp_build_challenge(chal, sizeof(chal), flags,
		    chal_bytes, "WORKGROUP", "USMBD", "example.org",
		    "usmbd.example.org", 0);
		if (clen < 0)
			abort();	/* fixed names always fit */
		return 0;
	}
	if (ntlmssp_decode_authenticate(data, size, &a) != 0)
		return 0;
	sink = (uint8_t)(strlen(a.user) + strlen(a.domain) +
	    strlen(a.workstation));
	for (i = 0; i < a.nt_len; i++)
		sink ^= a.nt[i];
	for (i = 0; i < a.lm_len; i++)
		sink ^= a.lm[i];
	for (i = 0; i < a.enc_session_key_len; i++)
		sink ^= a.enc_session_key[i];
	clen = ntlmssp_build_challenge(chal, sizeof(chal), a.flags, chal_bytes,
	    "WORKGROUP", "USMBD", NULL, NULL, 0);
	if (clen < 0)
		abort();
	/* A fuzzer cannot find HMAC-MD5 preimages: success means a bug. */
	if (ntlmssp_server_verify(hash, &a, data, size, chal, (size_t)clen,
	    data, size, key) == STATUS_SUCCESS)
		abort();
	return 0;
}
