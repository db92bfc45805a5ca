/*
 * libFuzzer target: a lease record of the shared state (shm/leases.c,
 * key = client GUID + lease key, value v1), as every worker and the state
 * process read it; any worker can write one.  Input: one byte, the key's
 * length (mod 64), the key, then the value.  A record that decodes
 * carries the key it was found under.  Under a 33-byte key the value is
 * a lease-key claim (shm/claim.c): exactly v1 and a file id.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm_priv.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_lease_rec l;
	size_t klen;

	if (size < 1)
		return 0;
	klen = data[0] % 64;
	if (1 + klen > size)
		return 0;
	if (klen == 2 * SHM_GUID_LEN + 1) {
		struct shm_file_id fid;

		if (shm_claim_decode(data + 1 + klen, size - 1 - klen, &fid) == 0 &&
		    (size - 1 - klen != 17 || data[1 + klen] != SHM_REC_V1))
			abort();
		return 0;
	}
	if (shm_lease_decode(data + 1, klen, data + 1 + klen, size - 1 - klen,
	    &l) != 0)
		return 0;
	if (klen != 2 * SHM_GUID_LEN ||
	    memcmp(l.client_guid, data + 1, SHM_GUID_LEN) != 0 ||
	    memcmp(l.lease_key, data + 1 + SHM_GUID_LEN, SHM_GUID_LEN) != 0)
		abort();
	return 0;
}
