/*
 * Unit tests for the SMB3 POSIX extensions codecs (proto/posix.c): the
 * mode conversion, the negotiate context's GUID list, the create
 * context's mode, and the POSIX response, information level and
 * directory entry, each decoded back and fed in every truncation.
 * Known answers from Samba's librpc/idl/smb3posix.idl layout.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/posix.h"

static struct posix_info
sample(void)
{
	struct posix_info pi;

	memset(&pi, 0, sizeof(pi));
	pi.creation = 1;
	pi.access = 2;
	pi.write = 3;
	pi.change = 4;
	pi.eof = 5;
	pi.alloc = 4096;
	pi.attrs = 0x20;
	pi.ino = 0x1122334455667788ull;
	pi.dev = 0x801;
	pi.nlink = 2;
	pi.reparse_tag = 0;
	pi.mode = S_IFREG | 04751;
	pi.uid = 1000;
	pi.gid = 100;
	return pi;
}

START_TEST(test_mode_wire)
{
	ck_assert_uint_eq(posix_mode_to_wire(S_IFREG | 0644), 0644);
	ck_assert_uint_eq(posix_mode_to_wire(S_IFDIR | 01777), 01777 | 010000);
	ck_assert_uint_eq(posix_mode_to_wire(S_IFLNK | 0777), 0777 | 020000);
	ck_assert_uint_eq(posix_mode_to_wire(S_IFIFO | 0600), 0600 | 050000);
	ck_assert_uint_eq(posix_mode_to_wire(S_IFSOCK | 0755), 0755 | 060000);
	ck_assert_uint_eq(posix_mode_from_wire(050600), S_IFIFO | 0600);
	ck_assert_uint_eq(posix_mode_from_wire(04755), S_IFREG | 04755);
	/* an unknown wire type: permissions only */
	ck_assert_uint_eq(posix_mode_from_wire(070644), 0644);
}
END_TEST

START_TEST(test_negctx)
{
	uint8_t two[32];

	memset(two, 0xAB, 16);
	memcpy(two + 16, posix_tag, 16);
	ck_assert_int_eq(posix_negctx_offered(posix_tag, 16), 1);
	ck_assert_int_eq(posix_negctx_offered(two, 32), 1);
	ck_assert_int_eq(posix_negctx_offered(two, 16), 0);
	ck_assert_int_eq(posix_negctx_offered(two, 0), 0);
	ck_assert_int_eq(posix_negctx_offered(two, 31), -1);
	ck_assert_int_eq(posix_negctx_offered(two, 17), -1);
}
END_TEST

START_TEST(test_create_req)
{
	uint8_t d[4] = { 0xED, 0x81, 0, 0 };	/* S_IFREG|0755 as a client may send */
	uint32_t perms = 0;
	size_t n;

	ck_assert_int_eq(posix_create_req_decode(d, 4, &perms), 0);
	ck_assert_uint_eq(perms, 0755);
	for (n = 0; n < 4; n++)
		ck_assert_int_eq(posix_create_req_decode(d, n, &perms), -1);
	ck_assert_int_eq(posix_create_req_decode(d, 5, &perms), -1);
}
END_TEST

START_TEST(test_cc_known)
{
	static const uint8_t want[POSIX_CC_LEN] = {
		2, 0, 0, 0,  0, 0, 0, 0,  0xE9, 0x09, 0, 0,
		1, 2, 0, 0, 0, 0, 0, 22,  1, 0, 0, 0,  0xE8, 0x03, 0, 0,
		1, 2, 0, 0, 0, 0, 0, 22,  2, 0, 0, 0,  100, 0, 0, 0,
	};
	struct posix_info pi = sample(), back;
	uint8_t buf[64];
	struct wcur w;
	size_t n;

	wcur_init(&w, buf, sizeof(buf));
	posix_put_cc(&w, &pi);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(wcur_off(&w), POSIX_CC_LEN);
	ck_assert_mem_eq(buf, want, POSIX_CC_LEN);
	ck_assert_int_eq(posix_cc_decode(buf, POSIX_CC_LEN, &back),
	    POSIX_CC_LEN);
	ck_assert_uint_eq(back.mode, pi.mode);
	ck_assert_uint_eq(back.uid, 1000);
	ck_assert_uint_eq(back.gid, 100);
	ck_assert_uint_eq(back.nlink, 2);
	for (n = 0; n < POSIX_CC_LEN; n++)
		ck_assert_int_eq(posix_cc_decode(buf, n, &back), -1);
	/* a SID that is not a Unix one decodes, as (uint32_t)-1 */
	buf[12 + 7] = 5;
	ck_assert_int_eq(posix_cc_decode(buf, POSIX_CC_LEN, &back),
	    POSIX_CC_LEN);
	ck_assert_uint_eq(back.uid, (uint32_t)-1);
	/* a short cursor writes nothing past its end */
	wcur_init(&w, buf, POSIX_CC_LEN - 1);
	posix_put_cc(&w, &pi);
	ck_assert_int_ne(w.err, 0);
}
END_TEST

START_TEST(test_cc_dir_untyped)
{
	struct posix_info pi = sample();
	uint8_t buf[64];
	struct wcur w;

	pi.mode = S_IFDIR | 0750;
	wcur_init(&w, buf, sizeof(buf));
	posix_put_cc(&w, &pi);
	/* a directory's wire mode: permissions only (Linux 6.1 reads it so) */
	ck_assert_uint_eq(le32_get(buf + 8), 0750);
	pi.mode = S_IFLNK | 0777;
	wcur_init(&w, buf, sizeof(buf));
	posix_put_cc(&w, &pi);
	ck_assert_uint_eq(le32_get(buf + 8), 020777);
}
END_TEST

START_TEST(test_info_roundtrip)
{
	struct posix_info pi = sample(), back;
	uint8_t buf[256];
	struct wcur w;
	size_t n;

	wcur_init(&w, buf, sizeof(buf));
	posix_put_info(&w, &pi);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(wcur_off(&w), POSIX_INFO_LEN);
	/* the fixed part: Reserved after DeviceId, then the cc part at 68 */
	ck_assert_uint_eq(le64_get(buf + 52), pi.ino);
	ck_assert_uint_eq(le32_get(buf + 60), 0x801);
	ck_assert_uint_eq(le32_get(buf + 68), 2);
	ck_assert_int_eq(posix_info_decode(buf, POSIX_INFO_LEN, &back),
	    POSIX_INFO_LEN);
	ck_assert_mem_eq(&back, &pi, sizeof(pi));
	for (n = 0; n < POSIX_INFO_LEN; n++)
		ck_assert_int_eq(posix_info_decode(buf, n, &back), -1);
}
END_TEST

START_TEST(test_dirent)
{
	static const uint8_t name[] = { 'a', 0, ':', 0, 'B', 0 };
	struct posix_info pi = sample(), back;
	const uint8_t *n16;
	uint32_t nlen, next;
	uint8_t buf[256];
	struct wcur w;
	size_t len, n;

	wcur_init(&w, buf, sizeof(buf));
	len = posix_put_dirent(&w, &pi, name, sizeof(name));
	ck_assert_uint_eq(len, 8 + POSIX_INFO_LEN + 4 + sizeof(name));
	ck_assert_uint_eq(wcur_off(&w), len);
	ck_assert_int_eq(posix_dirent_decode(buf, len, &back, &n16, &nlen,
	    &next), (int)len);
	ck_assert_uint_eq(next, 0);
	ck_assert_uint_eq(nlen, sizeof(name));
	ck_assert_mem_eq(n16, name, sizeof(name));
	ck_assert_mem_eq(&back, &pi, sizeof(pi));
	for (n = 0; n < len; n++)
		ck_assert_int_eq(posix_dirent_decode(buf, n, &back, &n16,
		    &nlen, &next), -1);
	/* a NextEntryOffset inside the entry, or unaligned, is refused */
	le32_put(buf, 8);
	ck_assert_int_eq(posix_dirent_decode(buf, len, &back, &n16, &nlen,
	    &next), -1);
	le32_put(buf, (uint32_t)len + 1);
	ck_assert_int_eq(posix_dirent_decode(buf, len, &back, &n16, &nlen,
	    &next), -1);
	/* no room: 0, and the cursor is untouched */
	for (n = 0; n < len; n++) {
		wcur_init(&w, buf, n);
		ck_assert_uint_eq(posix_put_dirent(&w, &pi, name, sizeof(name)),
		    0);
		ck_assert_uint_eq(wcur_off(&w), 0);
		ck_assert_int_eq(w.err, 0);
	}
}
END_TEST

static Suite *
posix_suite(void)
{
	Suite *s = suite_create("posix");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_mode_wire);
	tcase_add_test(tc, test_negctx);
	tcase_add_test(tc, test_create_req);
	tcase_add_test(tc, test_cc_known);
	tcase_add_test(tc, test_cc_dir_untyped);
	tcase_add_test(tc, test_info_roundtrip);
	tcase_add_test(tc, test_dirent);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(posix_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
