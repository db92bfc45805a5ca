/*
 * libFuzzer target: DFS referrals (proto/dfs.c, worker/dfs.c), fed what
 * a client sends with FSCTL_DFS_GET_REFERRALS and _EX.  The first byte
 * picks the request form (bit 0) and the MaxReferralLevel the answer is
 * written for; the rest is the request.  A name that decodes is the
 * answer's DFSPath, the input read as an msdfs link text gives its
 * targets, and the answer is walked back: every offset inside it, every
 * string NUL-terminated.  The DFS prefix of a CREATE name is stripped
 * from the name as well.
 *
 * Build: make build/fuzz/fuzz_dfs
 * Run:   build/fuzz/fuzz_dfs -max_total_time=60 t/fuzz/corpus/dfs
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dfs.h"
#include "proto/unicode.h"
#include "worker/dfs.h"

static char name[8192];
static uint8_t out[65536];

/* A UTF-16 string with its NUL at off, inside [0, len). */
static void
check_str(size_t off, size_t len)
{
	size_t i;

	if (off >= len)
		abort();
	for (i = off; i + 1 < len; i += 2)
		if (out[i] == 0 && out[i + 1] == 0)
			return;
	abort();
}

static void
walk(size_t len, size_t nt, uint16_t ver)
{
	size_t es = ver == 2 ? 22 : 34, i;

	if (len < 8 + nt * es || (out[2] | out[3] << 8) != nt)
		abort();
	for (i = 0; i < nt; i++) {
		const uint8_t *e = out + 8 + i * es;
		size_t o = ver == 2 ? 16 : 12, j;

		if ((e[0] | e[1] << 8) != ver || (e[2] | e[3] << 8) != es)
			abort();
		for (j = 0; j < 3; j++)
			check_str(8 + i * es + (size_t)(e[o + 2 * j] |
			    e[o + 2 * j + 1] << 8), len);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dfs_target t[DFS_MAX_TARGETS];
	struct dfs_req q;
	struct dfs_rsp r;
	struct wcur w;
	int n, nt;
	uint16_t level;

	if (size < 1)
		return 0;
	level = data[0] >> 1;
	if (((data[0] & 1) ? dfs_req_ex_decode : dfs_req_decode)(data + 1,
	    size - 1, &q) != 0)
		return 0;
	if (q.name16_len > size || (q.site16 != NULL && q.site16_len > size))
		abort();
	n = unicode_utf16_to_utf8(q.name16, q.name16_len, name, sizeof(name));
	if (n < 0)
		return 0;
	nt = dfs_link_parse((const char *)data + 1, size - 1, t,
	    DFS_MAX_TARGETS);
	if (nt < 0) {
		t[0].p = "srv\\share";
		t[0].len = 9;
		nt = 1;
	}
	memset(&r, 0, sizeof(r));
	r.max_level = level;
	r.path = name;
	r.path_len = (size_t)n;
	r.t = t;
	r.nt = (size_t)nt;
	r.ttl = DFS_REFERRAL_TTL;
	wcur_init(&w, out, sizeof(out));
	if (dfs_rsp_encode(&w, &r) == 0)
		walk(wcur_off(&w), (size_t)nt, level >= 4 ? 4 :
		    level == 3 ? 3 : 2);
	/* the CREATE side: what is left is a suffix of what was given */
	if (dfs_strip_prefix(name, "share", NULL, NULL, NULL) == 0 &&
	    strlen(name) > (size_t)n)
		abort();
	return 0;
}
