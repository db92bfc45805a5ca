/*
 * proto/compress.c: MS-XCA Plain LZ77 (known answers of MS-XCA 3.1, round
 * trips through every length and offset encoding, hostile streams), the
 * compression transform header (MS-SMB2 2.2.42: every truncation, every
 * bad length, offset and algorithm, the bomb bound) and the compression
 * negotiate context (proto/neg_ctx.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/compress.h"
#include "proto/cur.h"
#include "proto/neg_ctx.h"

static struct lz77_table tab;
static uint8_t in[300000], out[400000], back[300000];

static size_t
hex(const char *s, uint8_t *b)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2)
		b[n++] = (uint8_t)strtoul((char[3]){ s[0], s[1], 0 }, NULL, 16);
	return n;
}

/* MS-XCA 3.1: the two Plain LZ77 examples, both ways. */
START_TEST(test_lz77_known)
{
	static const char *abc = "abcdefghijklmnopqrstuvwxyz";
	uint8_t want[64];
	size_t n, wn;
	int i;

	wn = hex("3f000000" "6162636465666768696a6b6c6d6e6f70"
	    "7172737475767778797a", want);
	n = lz77_compress((const uint8_t *)abc, 26, out, sizeof(out), &tab);
	ck_assert_uint_eq(n, wn);
	ck_assert(memcmp(out, want, n) == 0);
	ck_assert_int_eq(lz77_decompress(want, wn, back, sizeof(back)), 26);
	ck_assert(memcmp(back, abc, 26) == 0);

	for (i = 0; i < 300; i++)
		in[i] = (uint8_t)"abc"[i % 3];
	wn = hex("ffffff1f" "616263" "1700" "0f" "ff" "2601", want);
	n = lz77_compress(in, 300, out, sizeof(out), &tab);
	ck_assert_uint_eq(n, wn);
	ck_assert(memcmp(out, want, n) == 0);
	ck_assert_int_eq(lz77_decompress(want, wn, back, sizeof(back)), 300);
	ck_assert(memcmp(back, in, 300) == 0);
	/* one byte short of room: refused, not cut */
	ck_assert_int_eq(lz77_decompress(want, wn, back, 299), -1);
}
END_TEST

static void
roundtrip(const uint8_t *p, size_t len)
{
	size_t n = lz77_compress(p, len, out, sizeof(out), &tab);
	ssize_t m;

	ck_assert_uint_gt(n, 0);
	m = lz77_decompress(out, n, back, sizeof(back));
	ck_assert_int_eq(m, (ssize_t)len);
	ck_assert(memcmp(back, p, len) == 0);
	if (len > 0)
		ck_assert_int_eq(lz77_decompress(out, n, back, len - 1), -1);
}

/* Every length encoding (2 bytes, half byte, byte, 16 and 32 bits) and
 * offsets up to 8192, with a table left over from other inputs. */
START_TEST(test_lz77_roundtrip)
{
	static const size_t runs[] = { 3, 4, 9, 10, 11, 24, 25, 26, 279, 280,
	    281, 1000, 65537, 65538, 65539, 65560, 200000 };
	uint32_t x = 12345;
	size_t i, k;

	roundtrip(in, 0);
	in[0] = 'q';
	roundtrip(in, 1);
	for (k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		memset(in, 'a', runs[k] + 1);
		in[0] = 'x';
		roundtrip(in, runs[k] + 1);
	}
	for (i = 0; i < sizeof(in); i++) {
		x = x * 1103515245 + 12345;
		in[i] = (uint8_t)(x >> 16);
	}
	roundtrip(in, 5000);		/* nothing to find */
	for (k = 1; k <= 8200; k += 1023) {
		/* a block repeated k bytes later: offsets around 8192 */
		memmove(in + k + 8, in, 64);
		roundtrip(in, k + 80);
	}
	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)"the quick brown fox "[i % 20] ^
		    (uint8_t)(i % 977 == 0);
	roundtrip(in, sizeof(in));
	/* a compressor that has no room says 0 */
	ck_assert_uint_eq(lz77_compress(in, 5000, out, 20, &tab), 0);
}
END_TEST

/* Hostile streams: never past the output, never before its start. */
START_TEST(test_lz77_hostile)
{
	uint8_t b[64];
	size_t n, i;
	ssize_t m;

	/* 4 literals, then a match 100 back */
	n = hex("ffffff0f" "fe534d42" "1803", b);
	ck_assert_int_eq(lz77_decompress(b, n, back, sizeof(back)), -1);
	/* a match at output 0 */
	n = hex("ffffffff" "0000", b);
	ck_assert_int_eq(lz77_decompress(b, n, back, sizeof(back)), -1);
	/* a 16-bit length under 22 */
	n = hex("ffffff7f" "41" "0700" "0f" "ff" "1500", b);
	ck_assert_int_eq(lz77_decompress(b, n, back, sizeof(back)), -1);
	/* a 32-bit length far past the output */
	n = hex("ffffff7f" "41" "0700" "0f" "ff" "0000" "ffffff7f", b);
	ck_assert_int_eq(lz77_decompress(b, n, back, sizeof(back)), -1);
	/* every truncation of a valid stream: a prefix or a refusal */
	for (i = 0; i < 300; i++)
		in[i] = (uint8_t)"abcd"[i % 4] + (uint8_t)(i / 50);
	n = lz77_compress(in, 300, out, sizeof(out), &tab);
	for (i = 0; i < n; i++) {
		m = lz77_decompress(out, i, back, 300);
		ck_assert(m == -1 || (m >= 0 && m < 300 &&
		    memcmp(back, in, (size_t)m) == 0));
	}
}
END_TEST

static uint8_t msg[200000], z[250000];

static size_t
make_msg(size_t len)
{
	size_t i;

	memset(msg, 0, len);
	memcpy(msg, "\xfeSMB", 4);
	for (i = 80; i < len; i++)
		msg[i] = (uint8_t)("office document line "[i % 21]);
	/* runs at both ends of the data */
	memset(msg + 80, 0, len > 2000 ? 1000 : 0);
	if (len > 2000)
		memset(msg + len - 700, 0xEE, 700);
	return len;
}

#define ALGS	COMPRESS_ALGS_SUPPORTED

/* Round trips in both forms; every truncation refused. */
START_TEST(test_transform_roundtrip)
{
	size_t len = make_msg(70000), n, i;
	uint32_t x = 777;
	int chained;

	for (chained = 0; chained <= 1; chained++) {
		n = smb2_compress(msg, len, 80, ALGS, chained, z, sizeof(z), &tab);
		ck_assert_uint_gt(n, 0);
		ck_assert_uint_lt(n, len / 10);
		ck_assert_int_eq(smb2_decompress(z, n, ALGS, 1, out, len + 1000),
		    (ssize_t)len);
		ck_assert(memcmp(out, msg, len) == 0);
		/* chained: NONE, Pattern_V1, LZ77, Pattern_V1 */
		if (chained) {
			ck_assert_int_eq(le16_get(z + 8), SMB2_COMPRESSION_NONE);
			ck_assert_int_eq(le16_get(z + 10), SMB2_COMPRESSION_FLAG_CHAINED);
			ck_assert_int_eq(le16_get(z + 16 + 80),
			    SMB2_COMPRESSION_PATTERN_V1);
		} else {
			ck_assert_int_eq(le32_get(z + 4), len - 80);
			ck_assert_int_eq(le32_get(z + 12), 80);
		}
		/*
		 * Every truncation is refused, but for the LZ77 stream's
		 * last flag word when no token follows it (the same message).
		 */
		for (i = 0; i < n; i++) {
			ssize_t r = smb2_decompress(z, i, ALGS, 1, out, len + 1000);

			ck_assert(r == -1 || (r == (ssize_t)len && i + 4 >= n &&
			    memcmp(out, msg, len) == 0));
		}
		/* the bomb bound: a cap one byte short refuses it */
		ck_assert_int_eq(smb2_decompress(z, n, ALGS, 1, out,
		    chained ? len - 1 : len - 81), -1);
	}
	/* not smaller: 0, the message goes plain */
	for (i = 80; i < 9000; i++) {
		x = x * 1103515245 + 12345;
		msg[i] = (uint8_t)(x >> 16);
	}
	ck_assert_uint_eq(smb2_compress(msg, 9000, 80, ALGS, 1, z, sizeof(z),
	    &tab), 0);
	ck_assert_uint_eq(smb2_compress(msg, 9000, 80, ALGS, 0, z, sizeof(z),
	    &tab), 0);
	/* without LZ77 nothing is sent compressed */
	ck_assert_uint_eq(smb2_compress(msg, 9000, 80,
	    COMPRESS_ALG_BIT(SMB2_COMPRESSION_PATTERN_V1), 1, z, sizeof(z),
	    &tab), 0);
}
END_TEST

static size_t
put_chain(uint8_t *b, uint32_t osize)
{
	le32_put(b, 0x424D53FCu);
	le32_put(b + 4, osize);
	return 8;
}

static size_t
put_payload(uint8_t *b, uint16_t alg, uint16_t fl, uint32_t len)
{
	le16_put(b, alg);
	le16_put(b + 2, fl);
	le32_put(b + 4, len);
	return 8;
}

/* Each rule of 3.1.5.3 and 3.3.5.2.1.2, one message each. */
START_TEST(test_transform_rules)
{
	uint8_t b[256];
	size_t n;

	/* a valid chained message: NONE 4 bytes + Pattern_V1 of 60 */
	n = put_chain(b, 64);
	n += put_payload(b + n, 0, 1, 4);
	memcpy(b + n, "\xfeSMB", 4);
	n += 4;
	n += put_payload(b + n, 4, 0, 8);
	memset(b + n, 0, 8);
	b[n] = 'P';
	le32_put(b + n + 4, 60);
	n += 8;
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 64), 64);
	ck_assert_int_eq(out[63], 'P');
	/* sizes that do not add up */
	le32_put(b + 4, 65);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le32_put(b + 4, 63);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le32_put(b + 4, 64);
	/* chained not negotiated, Pattern_V1 not negotiated */
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 0, out, 1000), -1);
	ck_assert_int_eq(smb2_decompress(b, n,
	    COMPRESS_ALG_BIT(SMB2_COMPRESSION_LZ77), 1, out, 1000), -1);
	/* nothing negotiated */
	ck_assert_int_eq(smb2_decompress(b, n, 0, 1, out, 1000), -1);
	/* the first payload without CHAINED is an unchained header */
	le16_put(b + 10, 0);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le16_put(b + 10, 1);
	/* a Pattern_V1 payload of 7 or 9 bytes */
	le32_put(b + 16 + 4 + 4, 7);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le32_put(b + 16 + 4 + 4, 9);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le32_put(b + 16 + 4 + 4, 8);
	/* an unknown algorithm in the chain */
	le16_put(b + 20, 9);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le16_put(b + 20, 4);
	/* a NONE payload longer than the message */
	le32_put(b + 12, 200);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	le32_put(b + 12, 4);
	/* the bomb: 4 GiB claimed, refused whatever follows */
	le32_put(b + 4, 0xFFFFFFF0u);
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);

	/* LZ77 in a chain: Length must hold OriginalPayloadSize */
	n = put_chain(b, 10);
	n += put_payload(b + n, 2, 1, 3);
	memset(b + n, 0, 3);
	n += 3;
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);
	/* OriginalPayloadSize past the segment */
	n = put_chain(b, 10);
	n += put_payload(b + n, 2, 1, 4 + 4);
	le32_put(b + n, 11);
	le32_put(b + n + 4, 0);
	n += 8;
	ck_assert_int_eq(smb2_decompress(b, n, ALGS, 1, out, 1000), -1);

	/* unchained: Pattern_V1, NONE, and a flag that is neither */
	memset(b, 0, 64);
	le32_put(b, 0x424D53FCu);
	le32_put(b + 4, 8);
	le16_put(b + 8, SMB2_COMPRESSION_PATTERN_V1);
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 1000), -1);
	le16_put(b + 8, SMB2_COMPRESSION_NONE);
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 1000), -1);
	le16_put(b + 8, SMB2_COMPRESSION_LZ77);
	le16_put(b + 10, 2);
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 1000), -1);
	le16_put(b + 10, 0);
	/* Offset past the message, and past the cap with the segment */
	le32_put(b + 12, 25);
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 1000), -1);
	le32_put(b + 12, 20);
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 27), -1);
	/* shorter than the header; not 0xFC */
	ck_assert_int_eq(smb2_decompress(b, 15, ALGS, 1, out, 1000), -1);
	b[0] = 0xFD;
	ck_assert_int_eq(smb2_decompress(b, 40, ALGS, 1, out, 1000), -1);
}
END_TEST

/* A 3.1.1 NEGOTIATE with the preauth context and comp (a context body). */
static size_t
neg_msg(uint8_t *b, size_t cap, const uint8_t *comp, size_t clen, int twice)
{
	struct wcur w;
	uint8_t *ctxoff;
	int i;

	memset(b, 0, cap);
	wcur_init(&w, b, cap);
	wcur_bytes(&w, "\xfeSMB", 4);
	wcur_le16(&w, 64);
	wcur_zero(&w, 58);
	wcur_le16(&w, 36);
	wcur_le16(&w, 1);
	wcur_le16(&w, 1);
	wcur_le16(&w, 0);
	wcur_le32(&w, 0);
	wcur_zero(&w, 16);
	ctxoff = wcur_reserve(&w, 4);
	wcur_le16(&w, (uint16_t)(2 + twice));
	wcur_le16(&w, 0);
	wcur_le16(&w, 0x0311);
	wcur_align(&w, 8);
	le32_put(ctxoff, (uint32_t)wcur_off(&w));
	wcur_le16(&w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
	wcur_le16(&w, 6);
	wcur_le32(&w, 0);
	wcur_le16(&w, 1);
	wcur_le16(&w, 0);
	wcur_le16(&w, 1);
	for (i = 0; i <= twice; i++) {
		wcur_align(&w, 8);
		wcur_le16(&w, SMB2_COMPRESSION_CAPABILITIES);
		wcur_le16(&w, (uint16_t)clen);
		wcur_le32(&w, 0);
		wcur_bytes(&w, comp, clen);
	}
	ck_assert(!w.err);
	return wcur_off(&w);
}

START_TEST(test_negotiate_context)
{
	uint8_t b[512], comp[32], rsp[64];
	struct neg_req r;
	struct neg_ctx nc;
	struct wcur w;
	size_t n, i;
	uint16_t algs[2] = { SMB2_COMPRESSION_LZ77, SMB2_COMPRESSION_PATTERN_V1 };

	le16_put(comp, 2);
	le16_put(comp + 2, 0);
	le32_put(comp + 4, SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED);
	le16_put(comp + 8, SMB2_COMPRESSION_PATTERN_V1);
	le16_put(comp + 10, SMB2_COMPRESSION_LZ77);
	n = neg_msg(b, sizeof(b), comp, 12, 0);
	ck_assert_uint_eq(neg_req_decode(b, n, &r), STATUS_SUCCESS);
	ck_assert_uint_eq(neg_ctx_decode(b, n, r.ctx_offset, r.ctx_count, &nc),
	    STATUS_SUCCESS);
	ck_assert(nc.has_compress);
	ck_assert_uint_eq(nc.ncomp, 2);
	ck_assert_uint_eq(nc.comp_algs[0], SMB2_COMPRESSION_PATTERN_V1);
	ck_assert_uint_eq(nc.comp_flags, 1);
	/* every truncation of the context's data */
	for (i = 0; i < 12; i++) {
		n = neg_msg(b, sizeof(b), comp, i, 0);
		neg_req_decode(b, n, &r);
		ck_assert_uint_eq(neg_ctx_decode(b, n, r.ctx_offset,
		    r.ctx_count, &nc), STATUS_INVALID_PARAMETER);
	}
	/* no algorithm; two contexts */
	le16_put(comp, 0);
	n = neg_msg(b, sizeof(b), comp, 8, 0);
	neg_req_decode(b, n, &r);
	ck_assert_uint_eq(neg_ctx_decode(b, n, r.ctx_offset, r.ctx_count, &nc),
	    STATUS_INVALID_PARAMETER);
	le16_put(comp, 2);
	n = neg_msg(b, sizeof(b), comp, 12, 1);
	neg_req_decode(b, n, &r);
	ck_assert_uint_eq(neg_ctx_decode(b, n, r.ctx_offset, r.ctx_count, &nc),
	    STATUS_INVALID_PARAMETER);
	/* the answer's context (2.2.4.1.3) */
	wcur_init(&w, rsp, sizeof(rsp));
	neg_ctx_put_compress(&w, 1, algs, 2);
	ck_assert(!w.err);
	ck_assert_uint_eq(wcur_off(&w), 8 + 12);
	ck_assert_uint_eq(le16_get(rsp), SMB2_COMPRESSION_CAPABILITIES);
	ck_assert_uint_eq(le16_get(rsp + 2), 12);
	ck_assert_uint_eq(le16_get(rsp + 8), 2);
	ck_assert_uint_eq(le32_get(rsp + 12), 1);
	ck_assert_uint_eq(le16_get(rsp + 16), SMB2_COMPRESSION_LZ77);
	ck_assert_uint_eq(le16_get(rsp + 18), SMB2_COMPRESSION_PATTERN_V1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("compress");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lz77_known);
	tcase_add_test(tc, test_lz77_roundtrip);
	tcase_add_test(tc, test_lz77_hostile);
	tcase_add_test(tc, test_transform_roundtrip);
	tcase_add_test(tc, test_transform_rules);
	tcase_add_test(tc, test_negotiate_context);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
