/*
 * libFuzzer target: SPNEGO token decoding (and the NTLMSSP message inside).
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     $(pkg-config --cflags gnutls libbsd-overlay) t/fuzz/fuzz_spnego.c \
 *     proto/spnego.c proto/asn1.c proto/ntlmssp.c \
 *     $(pkg-config --libs gnutls) -lmd -o build/fuzz/fuzz_spnego
 * Run:
 *   build/fuzz/fuzz_spnego -max_total_time=60 t/fuzz/corpus/spnego
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntlmssp.h"
#include "proto/spnego.h"

static volatile uint8_t sink;

static void
touch(const uint8_t *p, size_t len)
{
	size_t i;
	uint8_t x = 0;

	for (i = 0; i < len; i++)
		x ^= p[i];
	sink = x;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spnego_token t;
	struct ntlmssp_auth a;
	uint8_t out[4096];
	uint32_t flags;
	int n;

	if (spnego_decode(data, size, &t) != 0)
		return 0;
	/* Every view must lie inside the input: reading it all lets ASan
	 * check that. */
	if (t.mech_types_len)
		touch(t.mech_types, t.mech_types_len);
	if (t.mech_token_len)
		touch(t.mech_token, t.mech_token_len);
	if (t.mech_list_mic_len)
		touch(t.mech_list_mic, t.mech_list_mic_len);
	switch (ntlmssp_msg_type(t.mech_token, t.mech_token_len)) {
	case NTLMSSP_NEGOTIATE_MESSAGE:
		(void)ntlmssp_decode_negotiate(t.mech_token, t.mech_token_len,
		    &flags);
		break;
	case NTLMSSP_AUTHENTICATE_MESSAGE:
		if (ntlmssp_decode_authenticate(t.mech_token, t.mech_token_len,
		    &a) == 0)
			sink = (uint8_t)strlen(a.user);
		break;
	}
	/* Re-encoding what was decoded must always fit or say it does not. */
	n = spnego_build_resp(out, sizeof(out), SPNEGO_ACCEPT_INCOMPLETE, 1,
	    t.mech_token, t.mech_token_len, t.mech_list_mic,
	    t.mech_list_mic_len);
	if (n > 0) {
		struct spnego_token u;

		if (spnego_decode(out, (size_t)n, &u) != 0 ||
		    u.mech_token_len != t.mech_token_len ||
		    u.mech_list_mic_len != t.mech_list_mic_len)
			abort();
	}
	return 0;
}
