/*
 * libFuzzer target: a gate's binding check (worker/bindcheck.h).  The
 * question comes through the master from a gate (which a client's bytes
 * may have subverted) to the worker of the session it names; the answer
 * from that worker (possibly compromised) to the gate, which checks the
 * refusal before writing it to its client.  A question or answer that
 * decodes must name only bytes inside the input and encode back to the
 * same bytes; the worker's answer to any question decodes, and holds a
 * refusal only of the one length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/bindcheck.h"

static uint8_t out[BINDCHECK_REQ_MAX + 64];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bindcheck_req q;
	struct bindcheck_rep r, a;
	int n, m;

	if (bindcheck_req_decode(&q, data, size) == 0) {
		if (q.msg < data || q.msg + q.msg_len > data + size)
			abort();
		m = bindcheck_req_encode(&q, out, sizeof(out));
		if (m != (int)size || memcmp(out, data, size) != 0)
			abort();
	}
	/* No session lives in this process: never a refusal built. */
	n = smb2_bind_check_serve(data, size, out, sizeof(out));
	if (n <= 0 || bindcheck_rep_decode(&a, out, (size_t)n) != 0 ||
	    a.rsp != NULL || a.status == 0)
		abort();
	if (bindcheck_rep_decode(&r, data, size) == 0) {
		if (r.rsp_len != 0 && (r.rsp_len != BINDCHECK_RSP_LEN ||
		    r.rsp < data || r.rsp + r.rsp_len > data + size))
			abort();
		m = bindcheck_rep_encode(&r, out, sizeof(out));
		if (m != (int)size || memcmp(out, data, size) != 0)
			abort();
		/* The gate's check of it against a question of the input. */
		if (bindcheck_req_decode(&q, data, size) == 0)
			(void)bindcheck_rsp_check(&r, &q);
	}
	return 0;
}
