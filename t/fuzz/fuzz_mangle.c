/*
 * libFuzzer target: the 8.3 short-name generator (vfs/mangle.c) over any
 * bytes a client may send as a name (not UTF-8 included).  Invariants: a
 * name that is not 8.3 gets a short name of our shape, 8 to 12
 * characters, valid 8.3 itself, the same on a second call and for the
 * name upper-cased in ASCII, and recognised as that name's short name in
 * any case; an 8.3 name is its own.  The input split at its first NUL
 * also feeds mangle_shape and, as a pattern, the short name's match.
 *
 * Build: make build/fuzz/fuzz_mangle
 * Run:   build/fuzz/fuzz_mangle -max_total_time=60 t/fuzz/corpus/mangle
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/fscc.h"
#include "vfs/mangle.h"

static volatile int sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[300], up[300], a[MANGLE_MAX + 1], b[MANGLE_MAX + 1];
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = nul != NULL ? (size_t)(nul - data) : size, n, m, i;

	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, data, len);
	name[len] = '\0';
	n = mangle_make(name, len, a);
	if (n > (mangle_is_83(name, len) ? 12u : (size_t)MANGLE_MAX) ||
	    a[n] != '\0')
		abort();
	if (mangle_is_83(name, len)) {
		if (n != len || memcmp(a, name, len) != 0)
			abort();
	} else {
		if (n < 8 || !mangle_shape(a, n) || !mangle_is_83(a, n) ||
		    !mangle_is_short_of(name, len, a, n, 1))
			abort();
		for (i = 0; i < n; i++)
			b[i] = a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i];
		if (!mangle_is_short_of(name, len, b, n, 0))
			abort();
		/* ASCII case does not change it */
		for (i = 0; i < len; i++)
			up[i] = name[i] >= 'a' && name[i] <= 'z' ?
			    name[i] - 32 : name[i];
		m = mangle_make(up, len, b);
		if (!mangle_is_83(up, len) && (m != n || memcmp(a, b, n) != 0))
			abort();
	}
	m = mangle_make(name, len, b);
	if (m != n || memcmp(a, b, n) != 0)
		abort();
	if (nul != NULL) {
		const char *pat = (const char *)nul + 1;
		size_t plen = size - (size_t)(nul - data) - 1;

		if (plen > 64)
			plen = 64;
		sink = mangle_shape(pat, plen);
		if (memchr(pat, 0, plen) == NULL)
			sink += fscc_name_match(pat, plen, a, n, 0);
	}
	return 0;
}
