/*
 * Unit tests for the reparse data codecs (proto/reparse.c): symlink and
 * NFS buffers (MS-FSCC 2.1.2.4, 2.1.2.6) encoded and decoded back, a
 * known answer of the symlink layout, the Symbolic Link Error Response
 * (MS-SMB2 2.2.2.2.1), every truncation and the malformed forms a client
 * could set.
 */
#include <check.h>
#include <stdlib.h>
#include <endian.h>
#include <string.h>

#include "proto/reparse.h"

/* "a/b" in UTF-16LE */
static const uint8_t ab16[] = { 'a', 0, '/', 0, 'b', 0 };

START_TEST(test_symlink_known)
{
	static const uint8_t want[] = {
		0x0C, 0x00, 0x00, 0xA0,		/* IO_REPARSE_TAG_SYMLINK */
		0x18, 0x00, 0x00, 0x00,		/* ReparseDataLength 24 */
		0x00, 0x00, 0x06, 0x00,		/* SubstituteName 0, 6 */
		0x06, 0x00, 0x06, 0x00,		/* PrintName 6, 6 */
		0x01, 0x00, 0x00, 0x00,		/* SYMLINK_FLAG_RELATIVE */
		'a', 0, '/', 0, 'b', 0, 'a', 0, '/', 0, 'b', 0,
	};
	uint8_t buf[128];
	struct reparse_data d;
	struct wcur w;

	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink(&w, ab16, sizeof(ab16), SYMLINK_FLAG_RELATIVE, 0);
	ck_assert(!w.err);
	ck_assert_uint_eq(wcur_off(&w), sizeof(want));
	ck_assert(memcmp(buf, want, sizeof(want)) == 0);
	ck_assert_int_eq(reparse_decode(buf, wcur_off(&w), &d), 0);
	ck_assert_uint_eq(d.tag, IO_REPARSE_TAG_SYMLINK);
	ck_assert_uint_eq(d.flags, SYMLINK_FLAG_RELATIVE);
	ck_assert_uint_eq(d.subst16_len, 6);
	ck_assert(memcmp(d.subst16, ab16, 6) == 0);
	ck_assert_uint_eq(d.print16_len, 6);
	ck_assert(memcmp(d.print16, ab16, 6) == 0);
}
END_TEST

START_TEST(test_nfs_roundtrip)
{
	static const uint64_t types[] = { NFS_SPECFILE_LNK, NFS_SPECFILE_CHR,
	    NFS_SPECFILE_BLK, NFS_SPECFILE_FIFO, NFS_SPECFILE_SOCK };
	uint8_t buf[128];
	struct reparse_data d;
	struct wcur w;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		wcur_init(&w, buf, sizeof(buf));
		reparse_put_nfs(&w, types[i], ab16, sizeof(ab16), 8, 1);
		ck_assert(!w.err);
		ck_assert_int_eq(reparse_decode(buf, wcur_off(&w), &d), 0);
		ck_assert_uint_eq(d.tag, IO_REPARSE_TAG_NFS);
		ck_assert_uint_eq(d.nfs_type, types[i]);
		if (types[i] == NFS_SPECFILE_LNK) {
			ck_assert_uint_eq(d.target16_len, 6);
			ck_assert(memcmp(d.target16, ab16, 6) == 0);
		}
		if (types[i] == NFS_SPECFILE_CHR ||
		    types[i] == NFS_SPECFILE_BLK) {
			ck_assert_uint_eq(d.major, 8);
			ck_assert_uint_eq(d.minor, 1);
		}
		/* MS-FSCC 2.1.2.6: "FIFO" in ASCII at offset 8 */
		if (types[i] == NFS_SPECFILE_FIFO)
			ck_assert(memcmp(buf + 8, "FIFO\0\0\0\0", 8) == 0);
	}
}
END_TEST

START_TEST(test_truncations)
{
	uint8_t buf[128];
	struct reparse_data d;
	struct wcur w;
	size_t n, len;

	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink(&w, ab16, sizeof(ab16), 0, 0);
	len = wcur_off(&w);
	for (n = 0; n < len; n++)
		ck_assert_int_eq(reparse_decode(buf, n, &d), -1);
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_nfs(&w, NFS_SPECFILE_CHR, NULL, 0, 1, 3);
	len = wcur_off(&w);
	for (n = 0; n < len; n++)
		ck_assert_int_eq(reparse_decode(buf, n, &d), -1);
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink_error(&w, ab16, sizeof(ab16), 0, 4);
	len = wcur_off(&w);
	for (n = 0; n < len; n++)
		ck_assert_int_eq(reparse_symlink_error_decode(buf, n, &d), -1);
	ck_assert_int_eq(reparse_symlink_error_decode(buf, len, &d), 0);
}
END_TEST

START_TEST(test_malformed)
{
	uint8_t buf[128];
	struct reparse_data d;
	struct wcur w;
	size_t len;

	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink(&w, ab16, sizeof(ab16), 0, 0);
	len = wcur_off(&w);
	/* a substitute name past the buffer */
	buf[10] = 0x40;
	ck_assert_int_eq(reparse_decode(buf, len, &d), -1);
	buf[10] = 0;
	/* an odd print name offset */
	buf[12] = 7;
	ck_assert_int_eq(reparse_decode(buf, len, &d), -1);
	buf[12] = 6;
	/* no substitute name */
	buf[10] = buf[11] = 0;
	buf[14] = 0;
	ck_assert_int_eq(reparse_decode(buf, len, &d), -1);
	/* ReparseDataLength not the rest */
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink(&w, ab16, sizeof(ab16), 0, 0);
	ck_assert_int_eq(reparse_decode(buf, wcur_off(&w) + 2, &d), -1);
	/* NFS: a FIFO with data, an unknown type, an odd LNK target */
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_nfs(&w, NFS_SPECFILE_FIFO, NULL, 0, 0, 0);
	buf[4] = 10;
	buf[16] = buf[17] = 0;
	ck_assert_int_eq(reparse_decode(buf, 18, &d), -1);
	buf[4] = 8;
	buf[8] = 'X';
	ck_assert_int_eq(reparse_decode(buf, 16, &d), -1);
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_nfs(&w, NFS_SPECFILE_LNK, ab16, 5, 0, 0);
	ck_assert_int_eq(reparse_decode(buf, wcur_off(&w), &d), -1);
	/* another tag, well formed: 1 */
	memset(buf, 0, 8);
	buf[0] = 0x03;
	buf[3] = 0xA0;			/* IO_REPARSE_TAG_MOUNT_POINT */
	ck_assert_int_eq(reparse_decode(buf, 8, &d), 1);
	ck_assert_uint_eq(d.tag, 0xA0000003u);
}
END_TEST

START_TEST(test_symlink_error)
{
	uint8_t buf[128];
	struct reparse_data d;
	struct wcur w;
	uint32_t sl;

	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink_error(&w, ab16, sizeof(ab16),
	    SYMLINK_FLAG_RELATIVE, 20);
	ck_assert(!w.err);
	/* SymLinkLength excludes itself; the tag "SYML" follows */
	memcpy(&sl, buf, 4);
	ck_assert_uint_eq(le32toh(sl), wcur_off(&w) - 4);
	ck_assert(memcmp(buf + 4, "SYML", 4) == 0);
	ck_assert_int_eq(reparse_symlink_error_decode(buf, wcur_off(&w), &d),
	    0);
	ck_assert_uint_eq(d.reserved, 20);
	ck_assert_uint_eq(d.flags, SYMLINK_FLAG_RELATIVE);
	ck_assert(memcmp(d.subst16, ab16, 6) == 0);
	/* a name too long for ReparseDataLength latches the error */
	wcur_init(&w, buf, sizeof(buf));
	reparse_put_symlink(&w, ab16, 40000, 0, 0);
	ck_assert(w.err);
}
END_TEST

static Suite *
reparse_suite(void)
{
	Suite *s = suite_create("reparse");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_symlink_known);
	tcase_add_test(tc, test_nfs_roundtrip);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_symlink_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(reparse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
