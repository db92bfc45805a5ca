/*
 * Unit tests for proto/unicode.c: UTF-16LE <-> UTF-8 round trips, every
 * surrogate case (paired, lone high, lone low, reversed, high at the end),
 * invalid UTF-8, buffer limits, and case-insensitive comparison.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/unicode.h"

static int
u16(const uint16_t *in, size_t n, char *out, size_t cap)
{
	uint8_t b[64];
	size_t i;

	for (i = 0; i < n; i++) {
		b[2 * i] = (uint8_t)in[i];
		b[2 * i + 1] = (uint8_t)(in[i] >> 8);
	}
	return unicode_utf16_to_utf8(b, 2 * n, out, cap);
}

START_TEST(test_ascii_roundtrip)
{
	uint8_t w[64];
	char out[64];
	int n;

	n = unicode_utf8_to_utf16("dir\\File.txt", 12, w, sizeof(w));
	ck_assert_int_eq(n, 24);
	ck_assert_int_eq(w[0], 'd');
	ck_assert_int_eq(w[1], 0);
	ck_assert_int_eq(unicode_utf16_to_utf8(w, (size_t)n, out, sizeof(out)),
	    12);
	ck_assert_str_eq(out, "dir\\File.txt");
}
END_TEST

START_TEST(test_bmp_and_pair)
{
	/* e-acute, euro sign, U+1F600 as a surrogate pair */
	const uint16_t in[] = { 0x00E9, 0x20AC, 0xD83D, 0xDE00 };
	char out[32];
	uint8_t back[32];

	ck_assert_int_eq(u16(in, 4, out, sizeof(out)), 2 + 3 + 4);
	ck_assert_mem_eq(out, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9);
	ck_assert_int_eq(unicode_utf8_to_utf16(out, 9, back, sizeof(back)), 8);
	ck_assert_int_eq(back[4] | back[5] << 8, 0xD83D);
	ck_assert_int_eq(back[6] | back[7] << 8, 0xDE00);
}
END_TEST

START_TEST(test_surrogates_invalid)
{
	char out[32];
	const uint16_t lone_high[] = { 'a', 0xD800, 'b' };
	const uint16_t lone_low[] = { 'a', 0xDC00 };
	const uint16_t reversed[] = { 0xDC00, 0xD800 };
	const uint16_t high_end[] = { 'a', 0xDBFF };
	const uint16_t high_high[] = { 0xD800, 0xD801 };
	const uint16_t max_pair[] = { 0xDBFF, 0xDFFF };

	ck_assert_int_eq(u16(lone_high, 3, out, sizeof(out)), -EILSEQ);
	ck_assert_int_eq(u16(lone_low, 2, out, sizeof(out)), -EILSEQ);
	ck_assert_int_eq(u16(reversed, 2, out, sizeof(out)), -EILSEQ);
	ck_assert_int_eq(u16(high_end, 2, out, sizeof(out)), -EILSEQ);
	ck_assert_int_eq(u16(high_high, 2, out, sizeof(out)), -EILSEQ);
	/* U+10FFFF is the largest valid pair */
	ck_assert_int_eq(u16(max_pair, 2, out, sizeof(out)), 4);
	ck_assert_mem_eq(out, "\xF4\x8F\xBF\xBF", 4);
}
END_TEST

START_TEST(test_odd_nul_and_limits)
{
	const uint8_t odd[] = { 'a', 0, 'b' };
	const uint16_t nul[] = { 'a', 0, 'b' };
	const uint16_t abc[] = { 'a', 'b', 'c' };
	char out[4];
	uint8_t w[3];

	ck_assert_int_eq(unicode_utf16_to_utf8(odd, 3, out, sizeof(out)),
	    -EILSEQ);
	ck_assert_int_eq(u16(nul, 3, out, sizeof(out)), -EILSEQ);
	/* 3 chars need 4 bytes with the NUL */
	ck_assert_int_eq(u16(abc, 3, out, 3), -ENAMETOOLONG);
	ck_assert_int_eq(u16(abc, 3, out, 4), 3);
	ck_assert_int_eq(unicode_utf8_to_utf16("ab", 2, w, sizeof(w)),
	    -ENAMETOOLONG);
	ck_assert_int_eq(unicode_utf16_to_utf8(odd, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_utf8_invalid)
{
	uint8_t w[32];

	ck_assert_int_eq(unicode_utf8_to_utf16("\xC0\xAF", 2, w, 32), -EILSEQ);
	ck_assert_int_eq(unicode_utf8_to_utf16("\xE0\x80\xAF", 3, w, 32),
	    -EILSEQ);
	/* an encoded surrogate (CESU) */
	ck_assert_int_eq(unicode_utf8_to_utf16("\xED\xA0\x80", 3, w, 32),
	    -EILSEQ);
	ck_assert_int_eq(unicode_utf8_to_utf16("\xF4\x90\x80\x80", 4, w, 32),
	    -EILSEQ);
	ck_assert_int_eq(unicode_utf8_to_utf16("\xE2\x82", 2, w, 32), -EILSEQ);
	ck_assert_int_eq(unicode_utf8_to_utf16("\x80", 1, w, 32), -EILSEQ);
}
END_TEST

START_TEST(test_case)
{
	ck_assert_uint_eq(unicode_upper('a'), 'A');
	ck_assert_uint_eq(unicode_upper('Z'), 'Z');
	ck_assert_uint_eq(unicode_upper(0xE9), 0xC9);
	ck_assert_uint_eq(unicode_upper(0xF7), 0xF7);
	ck_assert_uint_eq(unicode_upper(0xFF), 0x178);
	ck_assert_uint_eq(unicode_upper(0x101), 0x100);
	ck_assert_uint_eq(unicode_upper(0x3B1), 0x391);
	ck_assert_uint_eq(unicode_upper(0x430), 0x410);
	ck_assert_int_eq(unicode_casecmp("Readme.TXT", 10, "README.txt", 10), 0);
	ck_assert_int_eq(unicode_casecmp("\xC3\xA9t\xC3\xA9", 6,
	    "\xC3\x89T\xC3\x89", 6), 0);
	ck_assert_int_ne(unicode_casecmp("abc", 3, "abd", 3), 0);
	ck_assert_int_ne(unicode_casecmp("abc", 3, "abcd", 4), 0);
	ck_assert_uint_eq(unicode_casehash("Foo.TXT", 7),
	    unicode_casehash("fOO.txt", 7));
}
END_TEST

/* The fold beyond the basic blocks: the BMP's simple uppercase mapping. */
START_TEST(test_case_bmp)
{
	/* fullwidth Latin (smb2.charset wide-a) */
	ck_assert_uint_eq(unicode_upper(0xFF41), 0xFF21);
	ck_assert_uint_eq(unicode_upper(0xFF5A), 0xFF3A);
	ck_assert_uint_eq(unicode_upper(0xFF21), 0xFF21);
	ck_assert_uint_eq(unicode_upper(0xFF5B), 0xFF5B);
	/* stride-2 runs: the lower of each pair moves, the upper stays */
	ck_assert_uint_eq(unicode_upper(0x1E01), 0x1E00);
	ck_assert_uint_eq(unicode_upper(0x1E00), 0x1E00);
	ck_assert_uint_eq(unicode_upper(0x4E1), 0x4E0);
	/* Greek and Cyrillic extended, Armenian, Glagolitic, Coptic */
	ck_assert_uint_eq(unicode_upper(0x3AC), 0x386);
	ck_assert_uint_eq(unicode_upper(0x1F00), 0x1F08);
	ck_assert_uint_eq(unicode_upper(0x1F80), 0x1F88);	/* iota subscript */
	ck_assert_uint_eq(unicode_upper(0x45F), 0x40F);
	ck_assert_uint_eq(unicode_upper(0x561), 0x531);
	ck_assert_uint_eq(unicode_upper(0x2C30), 0x2C00);
	ck_assert_uint_eq(unicode_upper(0x2C81), 0x2C80);
	/* circled letters, Roman numerals, and a negative delta */
	ck_assert_uint_eq(unicode_upper(0x24D0), 0x24B6);
	ck_assert_uint_eq(unicode_upper(0x2170), 0x2160);
	ck_assert_uint_eq(unicode_upper(0x250), 0x2C6F);
	ck_assert_uint_eq(unicode_upper(0x1D79), 0xA77D);
	/* no single-letter mapping, or one to ASCII Windows does not make */
	ck_assert_uint_eq(unicode_upper(0xDF), 0xDF);
	ck_assert_uint_eq(unicode_upper(0x131), 0x131);
	ck_assert_uint_eq(unicode_upper(0x17F), 0x17F);
	ck_assert_uint_eq(unicode_upper(0x4E00), 0x4E00);
	ck_assert_uint_eq(unicode_upper(0xFFFF), 0xFFFF);
	ck_assert_uint_eq(unicode_upper(0x10428), 0x10428);	/* beyond BMP */
	/* names: casecmp and casehash agree with the fold */
	ck_assert_int_eq(unicode_casecmp("\xEF\xBD\x81", 3, "\xEF\xBC\xA1",
	    3), 0);
	ck_assert_uint_eq(unicode_casehash("x\xEF\xBD\x81.txt", 8),
	    unicode_casehash("X\xEF\xBC\xA1.TXT", 8));
	ck_assert_int_ne(unicode_casecmp("\xC4\xB1", 2, "I", 1), 0);
}
END_TEST

static Suite *
unicode_suite(void)
{
	Suite *s = suite_create("unicode");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ascii_roundtrip);
	tcase_add_test(tc, test_bmp_and_pair);
	tcase_add_test(tc, test_surrogates_invalid);
	tcase_add_test(tc, test_odd_nul_and_limits);
	tcase_add_test(tc, test_utf8_invalid);
	tcase_add_test(tc, test_case);
	tcase_add_test(tc, test_case_bmp);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(unicode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
