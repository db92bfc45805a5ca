/*
 * libFuzzer target: the body decoders of the file commands, fed the same
 * bytes each:
 *   - the CREATE context chain (proto/create_ctx.c), and what a context
 *     carries: SecD (proto/secdesc.c), ExtA (an EA list, proto/fscc.c);
 *   - CREATE and SET_INFO rename names: UTF-16 path + stream parsing with
 *     the escape checks (worker/file_open.c file_name_parse);
 *   - SET_INFO FileRenameInformation / FileLinkInformation and
 *     FileFullEaInformation (proto/fscc.c);
 *   - QUERY_DIRECTORY patterns: UTF-16 -> UTF-8 and the wildcard matcher
 *     (proto/unicode.c, proto/fscc.c) against a name from the input;
 *   - IOCTL FSCTL_SET_ZERO_DATA input;
 *   - IOCTL FSCTL_SRV_COPYCHUNK(_WRITE) input: the chunk table;
 *   - IOCTL FSCTL_DUPLICATE_EXTENTS_TO_FILE input;
 *   - Apple's AAPL context (proto/aapl.c): decoded exactly when it is a
 *     24-byte server query, its reply written in any room, the AfpInfo
 *     checks and the compressed Finder info of the input as a record.
 * Besides not crashing, each checks what its contract promises: views lie
 * inside the input, walks advance, parsed paths hold no "." / ".."
 * component and no backslash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"
#include "proto/aapl.h"
#include "proto/create_ctx.h"
#include "proto/fscc.h"
#include "proto/secdesc.h"
#include "proto/unicode.h"
#include "worker/file_open.h"
#include "worker/smb2.h"

static struct secdesc	 sd;
static struct smb2_req	 req;		/* no connection: logs say "?" */
static char		 path[FILE_PATH_MAX], stream[FILE_STREAM_MAX];
static char		 pat8[FSCC_MATCH_MAX * 4 + 4], name8[FSCC_MATCH_MAX * 4 + 4];

static void
inside(const uint8_t *v, size_t n, const uint8_t *data, size_t size)
{
	if (v == NULL ? n != 0 : (v < data || n > size ||
	    (size_t)(v - data) > size - n))
		abort();
}

/* FILE_GET_EA_INFORMATION lists: the names of a QUERY_INFO for EAs */
static void
fuzz_get_ea_list(const uint8_t *data, size_t size)
{
	struct fscc_get_ea g;
	size_t pos = 0, prev;
	int i;

	for (i = 0; i < 4096; i++) {
		prev = pos;
		if (fscc_get_ea_next(data, size, &pos, &g) != 0)
			return;
		inside(g.name, g.name_len, data, size);
		if (g.last)
			return;
		if (pos <= prev || pos > size || pos % 4 != 0)
			abort();
	}
}

static void
fuzz_ea_list(const uint8_t *data, size_t size)
{
	struct fscc_ea ea;
	size_t pos = 0, prev;
	int i;

	for (i = 0; i < 4096; i++) {
		prev = pos;
		if (fscc_ea_next(data, size, &pos, &ea) != 0)
			return;
		inside(ea.name, ea.name_len, data, size);
		inside(ea.value, ea.value_len, data, size);
		if (ea.last)
			return;
		if (pos <= prev || pos > size || pos % 4 != 0)
			abort();
	}
}

static void
fuzz_path(const uint8_t *data, size_t size)
{
	const char *c, *e;

	if (file_name_parse(&req, data, size, path, sizeof(path), stream,
	    sizeof(stream)) != STATUS_SUCCESS)
		return;
	if (path[0] == '/' || strchr(path, '\\') != NULL ||
	    strchr(stream, '/') != NULL || strchr(stream, '\\') != NULL ||
	    strstr(stream, "..") != NULL)
		abort();
	for (c = path; *c != '\0'; c = *e ? e + 1 : e) {
		e = strchrnul(c, '/');
		if (e == c || (e - c == 1 && c[0] == '.') ||
		    (e - c == 2 && c[0] == '.' && c[1] == '.'))
			abort();
	}
}

static void
fuzz_contexts(const uint8_t *data, size_t size)
{
	struct create_ctx_item it;
	size_t pos = 0, prev;
	int i;

	for (i = 0; i < CREATE_CTX_MAX; i++) {
		prev = pos;
		if (create_ctx_next(data, size, &pos, &it) != 0)
			return;
		inside(it.name, it.name_len, data, size);
		inside(it.data, it.data_len, data, size);
		if (it.name_len < 4 || (it.data_len > 0) != (it.data != NULL))
			abort();
		if (it.name_len == 4 && memcmp(it.name, "SecD", 4) == 0)
			(void)secdesc_decode(it.data, it.data_len, &sd);
		if (it.name_len == 4 && memcmp(it.name, "ExtA", 4) == 0)
			fuzz_ea_list(it.data, it.data_len);
		if (it.last)
			return;
		if (pos <= prev || pos % 8 != 0)
			abort();
	}
}

/* The copychunk table: key and table inside the input, every entry read. */
static void
fuzz_copychunk(const uint8_t *data, size_t size)
{
	struct fscc_copychunk cc;
	struct fscc_chunk ch;
	struct cur c;
	uint32_t i;
	int rc;

	cur_init(&c, data, size);
	rc = fscc_copychunk_decode(&c, &cc);
	if (rc == -1) {
		if (size >= FSCC_COPYCHUNK_KEY_LEN + 8)
			abort();
		return;
	}
	inside(cc.key, FSCC_COPYCHUNK_KEY_LEN, data, size);
	if (rc != 0) {
		/* -2: the table really is shorter than ChunkCount says */
		if (rc != -2 || (size - FSCC_COPYCHUNK_KEY_LEN - 8) /
		    FSCC_COPYCHUNK_LEN >= cc.count)
			abort();
		return;
	}
	inside(cc.table, (size_t)cc.count * FSCC_COPYCHUNK_LEN, data, size);
	for (i = 0; i < cc.count; i++)
		if (fscc_copychunk_get(&cc, i, &ch) != 0)
			abort();
	if (fscc_copychunk_get(&cc, cc.count, &ch) == 0)
		abort();
}

static void
fuzz_aapl(const uint8_t *data, size_t size)
{
	static uint8_t out[128];
	struct aapl_query q;
	struct aapl_reply r;
	struct wcur w;
	uint8_t fi[16];
	int ok;

	ok = aapl_query_decode(data, size, &q) == 0;
	if (ok != (size == AAPL_QUERY_LEN && le32_get(data) == 1))
		abort();
	memset(&r, 0, sizeof(r));
	r.bitmap = ok ? q.bitmap : (size > 0 ? data[0] : 0);
	r.model16 = data;
	r.model16_len = size > 64 ? 64 : size;
	/* any room: a short one latches the error, never writes past it */
	wcur_init(&w, out, size % (sizeof(out) + 1));
	aapl_reply_put(&w, &r);
	if (w.p > out + size % (sizeof(out) + 1))
		abort();
	if (aapl_afpinfo_valid(data, size) && size < AFPINFO_SIZE)
		abort();
	(void)aapl_afpinfo_empty(data, size);
	aapl_finder_compress(size >= AFPINFO_SIZE ? data : NULL,
	    (int)(size & 1), (int64_t)size, fi);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *n16;
	struct fscc_dup_extents dx;
	uint64_t off, end;
	uint32_t nlen;
	size_t split;
	int replace, pl, nl;
	struct cur c;
	static int ready;

	if (!ready) {
		/* refusals are logged: to nowhere, at fuzzing speed */
		(void)log_open("/dev/null");
		ready = 1;
	}
	fuzz_contexts(data, size);
	fuzz_ea_list(data, size);
	fuzz_get_ea_list(data, size);
	fuzz_path(data, size);

	cur_init(&c, data, size);
	if (fscc_rename_decode(&c, &replace, &n16, &nlen) == 0) {
		inside(n16, nlen, data, size);
		fuzz_path(n16, nlen);
	}
	fuzz_copychunk(data, size);
	fuzz_aapl(data, size);
	cur_init(&c, data, size);
	if (fscc_zero_data_decode(&c, &off, &end) == 0 && size < 16)
		abort();
	/* decoded exactly when the whole structure is there, and read whole */
	cur_init(&c, data, size);
	if ((fscc_dup_extents_decode(&c, &dx) == 0) !=
	    (size >= FSCC_DUP_EXTENTS_LEN) ||
	    (size >= FSCC_DUP_EXTENTS_LEN &&
	    cur_left(&c) != size - FSCC_DUP_EXTENTS_LEN))
		abort();

	/* FSCTL_LMR_REQUEST_RESILIENCY: exactly when 8 bytes are there */
	cur_init(&c, data, size);
	if ((fscc_resiliency_decode(&c, &nlen) == 0) !=
	    (size >= FSCC_RESILIENCY_LEN))
		abort();

	/* a QUERY_DIRECTORY pattern (first byte: its UTF-16 length) */
	if (size > 0) {
		split = 1 + (size_t)data[0];
		if (split > size)
			split = size;
		pl = unicode_utf16_to_utf8(data + 1, split - 1, pat8,
		    sizeof(pat8));
		nl = unicode_utf16_to_utf8(data + split, size - split, name8,
		    sizeof(name8));
		if (pl >= 0 && nl >= 0) {
			(void)fscc_name_match(pat8, (size_t)pl, name8,
			    (size_t)nl, 0);
			(void)fscc_name_match(pat8, (size_t)pl, name8,
			    (size_t)nl, 1);
			/* "*" matches every name; a name matches itself */
			if (nl > 0 && !fscc_name_match("*", 1, name8,
			    (size_t)nl, 0))
				abort();
		}
	}
	return 0;
}
