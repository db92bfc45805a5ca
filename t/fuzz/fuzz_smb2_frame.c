/*
 * libFuzzer target: direct-TCP framing, the SMB2 header, the compound chain
 * walker and the per-command StructureSize check, as dispatch runs them.
 *
 * Build:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *     t/fuzz/fuzz_smb2_frame.c proto/smb2_hdr.c -o build/fuzz/fuzz_smb2_frame
 * Run:
 *   build/fuzz/fuzz_smb2_frame -max_total_time=60 t/fuzz/corpus/smb2_frame
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/smb2_hdr.h"
#include "worker/smb2.h"

static volatile uint32_t sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smb2_chain ch;
	struct smb2_hdr h;
	const uint8_t *m;
	size_t mlen;
	long flen;
	int guard;

	if (size < SMB2_FRAME_LEN)
		return 0;
	flen = smb2_frame_decode(data);
	if (flen < 0 || (size_t)flen > size - SMB2_FRAME_LEN)
		return 0;
	data += SMB2_FRAME_LEN;
	size = (size_t)flen;
	if (smb2_magic(data, size) == SMB2_MAGIC_SMB1) {
		sink += (uint32_t)smb1_negotiate_offers(data, size);
		return 0;
	}
	smb2_chain_init(&ch, data, size);
	for (guard = 0; guard < 1024 && smb2_chain_next(&ch, &m, &mlen) == 1;
	    guard++) {
		if (smb2_hdr_decode(m, mlen, &h) < 0)
			break;
		sink += h.command + h.credits;
		if (smb2_req_size_ok(h.command, m + SMB2_HDR_LEN,
		    mlen - SMB2_HDR_LEN) == 0)
			sink += smb2_req_struct_size(h.command);
	}
	return 0;
}
