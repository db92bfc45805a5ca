/*
 * Unit tests for proto/fscc.c: FILETIME conversion, the fixed layouts of
 * the file and file-system classes (sizes and field offsets from MS-FSCC),
 * directory entries that do not fit, and the MS-FSA wildcard rules.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/fscc.h"

static struct fscc_info
sample(void)
{
	struct fscc_info fi;

	memset(&fi, 0, sizeof(fi));
	fi.creation = 0x0102030405060708ull;
	fi.access = 2;
	fi.write = 3;
	fi.change = 4;
	fi.eof = 1000;
	fi.alloc = 4096;
	fi.attrs = FILE_ATTRIBUTE_ARCHIVE;
	fi.nlink = 1;
	fi.file_id = 0xABCDEF;
	return fi;
}

START_TEST(test_time)
{
	struct timespec ts = { 0, 0 }, back;

	ck_assert_uint_eq(fscc_time_from_timespec(&ts), FSCC_TIME_UNIX_EPOCH);
	ts.tv_sec = 1;
	ts.tv_nsec = 500;
	ck_assert_uint_eq(fscc_time_from_timespec(&ts),
	    FSCC_TIME_UNIX_EPOCH + 10000000 + 5);
	back = fscc_time_to_timespec(FSCC_TIME_UNIX_EPOCH + 10000000 + 5);
	ck_assert_int_eq(back.tv_sec, 1);
	ck_assert_int_eq(back.tv_nsec, 500);
	/* before 1970 */
	back = fscc_time_to_timespec(FSCC_TIME_UNIX_EPOCH - 5);
	ck_assert_int_eq(back.tv_sec, -1);
	ck_assert_int_eq(back.tv_nsec, 999999500);
}
END_TEST

START_TEST(test_fixed_sizes)
{
	uint8_t buf[256];
	struct wcur w;
	struct fscc_info fi = sample();

	wcur_init(&w, buf, sizeof(buf));
	fscc_put_basic(&w, &fi);
	ck_assert_uint_eq(wcur_off(&w), 40);
	ck_assert_uint_eq(le64_get(buf), fi.creation);
	ck_assert_uint_eq(le32_get(buf + 32), FILE_ATTRIBUTE_ARCHIVE);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_standard(&w, &fi);
	ck_assert_uint_eq(wcur_off(&w), 24);
	ck_assert_uint_eq(le64_get(buf), 4096);
	ck_assert_uint_eq(le64_get(buf + 8), 1000);
	ck_assert_uint_eq(le32_get(buf + 16), 1);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_network_open(&w, &fi);
	ck_assert_uint_eq(wcur_off(&w), 56);
	ck_assert_uint_eq(le32_get(buf + 48), FILE_ATTRIBUTE_ARCHIVE);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_attribute_tag(&w, &fi);
	ck_assert_uint_eq(wcur_off(&w), 8);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_compression(&w, &fi);
	ck_assert_uint_eq(wcur_off(&w), 16);
}
END_TEST

START_TEST(test_all)
{
	uint8_t buf[256];
	const uint8_t name[] = { '\\', 0, 'a', 0 };
	struct wcur w;
	struct fscc_info fi = sample();

	wcur_init(&w, buf, sizeof(buf));
	ck_assert_uint_eq(fscc_put_all(&w, &fi, 0x1F01FF, 7, 0, name, 4), 104);
	ck_assert_uint_eq(wcur_off(&w), 104);
	ck_assert_uint_eq(le64_get(buf + 64), 0xABCDEF);	/* Internal */
	ck_assert_uint_eq(le32_get(buf + 76), 0x1F01FF);	/* Access */
	ck_assert_uint_eq(le64_get(buf + 80), 7);		/* Position */
	ck_assert_uint_eq(le32_get(buf + 96), 4);		/* NameLength */
	/* a short buffer gets the fixed part and the length needed */
	wcur_init(&w, buf, 101);
	ck_assert_uint_eq(fscc_put_all(&w, &fi, 0, 0, 0, name, 4), 104);
	ck_assert_int_eq(w.err, 0);
}
END_TEST

START_TEST(test_dirents)
{
	static const int classes[] = { FileDirectoryInformation,
	    FileFullDirectoryInformation, FileBothDirectoryInformation,
	    FileIdBothDirectoryInformation, FileIdFullDirectoryInformation,
	    FileIdExtdDirectoryInformation, FileNamesInformation };
	static const size_t fixed[] = { 64, 68, 94, 104, 80, 88, 12 };
	const uint8_t name[] = { 'x', 0, 'y', 0 };
	uint8_t buf[256];
	struct wcur w;
	struct fscc_info fi = sample();
	size_t i, n;

	for (i = 0; i < 7; i++) {
		ck_assert_uint_eq(fscc_dirent_fixed(classes[i]), fixed[i]);
		wcur_init(&w, buf, sizeof(buf));
		n = fscc_put_dirent(&w, classes[i], &fi, 0, name, 4);
		ck_assert_uint_eq(n, fixed[i] + 4);
		ck_assert_mem_eq(buf + fixed[i], name, 4);
		/* FileNameLength */
		ck_assert_uint_eq(le32_get(buf + (classes[i] ==
		    FileNamesInformation ? 8 : 60)), 4);
		/* one byte short: nothing written, no error latched */
		wcur_init(&w, buf, fixed[i] + 3);
		ck_assert_uint_eq(fscc_put_dirent(&w, classes[i], &fi, 0, name,
		    4), 0);
		ck_assert_uint_eq(wcur_off(&w), 0);
		ck_assert_int_eq(w.err, 0);
	}
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_dirent(&w, FileIdBothDirectoryInformation, &fi, 0, name, 4);
	ck_assert_uint_eq(le64_get(buf + 96), 0xABCDEF);
	ck_assert_uint_eq(fscc_dirent_fixed(FileBasicInformation), 0);
}
END_TEST

/*
 * EaSize at offset 64 of the levels that have it (MS-FSCC 2.4.8, 2.4.14,
 * 2.4.16-2.4.18); a reparse point carries its tag there instead, but for
 * FileIdExtdDirectoryInformation, which has a ReparsePointTag (68).
 */
START_TEST(test_dirent_ea_size)
{
	static const int classes[] = { FileFullDirectoryInformation,
	    FileBothDirectoryInformation, FileIdBothDirectoryInformation,
	    FileIdFullDirectoryInformation, FileIdExtdDirectoryInformation };
	const uint8_t name[] = { 'x', 0 };
	uint8_t buf[256];
	struct wcur w;
	struct fscc_info fi = sample();
	size_t i;
	int extd;

	for (i = 0; i < 5; i++) {
		extd = classes[i] == FileIdExtdDirectoryInformation;
		fi = sample();
		fi.ea_size = 0x2C;
		fi.reparse_tag = 0xA000000Cu;	/* not a reparse point */
		wcur_init(&w, buf, sizeof(buf));
		ck_assert_uint_ne(fscc_put_dirent(&w, classes[i], &fi, 0,
		    name, 2), 0);
		ck_assert_uint_eq(le32_get(buf + 64), 0x2C);
		if (extd)
			ck_assert_uint_eq(le32_get(buf + 68), 0);
		fi.attrs |= FILE_ATTRIBUTE_REPARSE_POINT;
		wcur_init(&w, buf, sizeof(buf));
		ck_assert_uint_ne(fscc_put_dirent(&w, classes[i], &fi, 0,
		    name, 2), 0);
		ck_assert_uint_eq(le32_get(buf + 64), extd ? 0x2C :
		    0xA000000Cu);
		if (extd)
			ck_assert_uint_eq(le32_get(buf + 68), 0xA000000Cu);
	}
}
END_TEST

START_TEST(test_fs)
{
	uint8_t buf[256];
	struct wcur w;
	struct fscc_fs fs;

	memset(&fs, 0, sizeof(fs));
	fs.total_units = 100;
	fs.avail_units = 50;
	fs.sectors_per_unit = 8;
	fs.bytes_per_sector = 512;
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_put_fs(&w, FileFsSizeInformation, &fs, NULL, 0),
	    0);
	ck_assert_uint_eq(wcur_off(&w), 24);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_fs(&w, FileFsFullSizeInformation, &fs, NULL, 0);
	ck_assert_uint_eq(wcur_off(&w), 32);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_fs(&w, FileFsSectorSizeInformation, &fs, NULL, 0);
	ck_assert_uint_eq(wcur_off(&w), 28);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_fs(&w, FileFsAttributeInformation, &fs, NULL, 0);
	ck_assert_uint_eq(wcur_off(&w), 12 + 8);
	wcur_init(&w, buf, sizeof(buf));
	fscc_put_fs(&w, FileFsVolumeInformation, &fs, (const uint8_t *)"s\0", 2);
	ck_assert_uint_eq(wcur_off(&w), 18 + 2);
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_put_fs(&w, 99, &fs, NULL, 0), -1);
}
END_TEST

/* A quota as the disk its user sees (4 KiB units here). */
START_TEST(test_fs_quota)
{
	struct fscc_fs fs;

	memset(&fs, 0, sizeof(fs));
	fs.total_units = 1000;
	fs.avail_units = 600;
	fs.actual_avail_units = 700;
	fscc_fs_apply_quota(&fs, 0, 12345, 4096);	/* no quota */
	ck_assert_uint_eq(fs.total_units, 1000);
	ck_assert_uint_eq(fs.avail_units, 600);
	/* 100 units, 30 and a byte used: 31 units used, 69 left */
	fscc_fs_apply_quota(&fs, 100 * 4096, 30 * 4096 + 1, 4096);
	ck_assert_uint_eq(fs.total_units, 100);
	ck_assert_uint_eq(fs.avail_units, 69);
	ck_assert_uint_eq(fs.actual_avail_units, 69);
	/* the disk is fuller than the quota: its free space stays */
	fs.total_units = 1000;
	fs.avail_units = fs.actual_avail_units = 10;
	fscc_fs_apply_quota(&fs, 100 * 4096, 30 * 4096, 4096);
	ck_assert_uint_eq(fs.total_units, 100);
	ck_assert_uint_eq(fs.avail_units, 10);
	/* a limit beyond the disk: the disk's size stays */
	fs.total_units = 1000;
	fs.avail_units = fs.actual_avail_units = 600;
	fscc_fs_apply_quota(&fs, 5000 * 4096, 10 * 4096, 4096);
	ck_assert_uint_eq(fs.total_units, 1000);
	ck_assert_uint_eq(fs.avail_units, 600);
	/* over it: nothing free, the size is what is used */
	fscc_fs_apply_quota(&fs, 100 * 4096, 120 * 4096, 4096);
	ck_assert_uint_eq(fs.total_units, 120);
	ck_assert_uint_eq(fs.avail_units, 0);
	ck_assert_uint_eq(fs.actual_avail_units, 0);
	/* a limit under one unit is used up by any use */
	fs.total_units = 1000;
	fscc_fs_apply_quota(&fs, 100, 1, 4096);
	ck_assert_uint_eq(fs.avail_units, 0);
	ck_assert_uint_eq(fs.total_units, 1);
	fscc_fs_apply_quota(&fs, 100, 1, 0);		/* no unit: untouched */
	ck_assert_uint_eq(fs.total_units, 1);
}
END_TEST

static int
m(const char *p, const char *n)
{
	return fscc_name_match(p, strlen(p), n, strlen(n), 0);
}

START_TEST(test_wildcards)
{
	ck_assert(m("*", "anything"));
	ck_assert(m("*.txt", "a.TXT"));
	ck_assert(!m("*.txt", "a.txt.bak"));
	ck_assert(m("a?c", "abc"));
	ck_assert(!m("a?c", "ac"));
	ck_assert(m("readme.txt", "README.TXT"));
	ck_assert(!fscc_name_match("readme", 6, "README", 6, 1));
	/* DOS_STAR < : up to the last dot */
	ck_assert(m("<.txt", "a.b.txt"));
	ck_assert(m("<", "abc"));
	ck_assert(!m("<.txt", "abc"));
	/* DOS_QM > : one char, or none at a dot or the end */
	ck_assert(m("a>>", "a"));
	ck_assert(m("a>>.txt", "ab.txt"));
	ck_assert(!m("a>", "abc"));
	/* DOS_DOT " : a dot, or nothing at the end */
	ck_assert(m("abc\"", "abc"));
	ck_assert(m("abc\"txt", "abc.txt"));
	ck_assert(m("*\"*", "abc.txt"));
	ck_assert(m("**a**b**", "xxaxxbxx"));
	ck_assert(!m("**a**b**", "xxbxxaxx"));
}
END_TEST

/* Queued changes as FILE_NOTIFY_INFORMATION: chained, 4-aligned, '\\'. */
START_TEST(test_notify_encode)
{
	uint8_t q[64], buf[256];
	struct wcur w;
	size_t n = 0;

	/* [u32 action][u16 len][name] */
	le32_put(q + n, 1);
	q[n + 4] = 5;
	q[n + 5] = 0;
	memcpy(q + n + 6, "a/b.t", 5);
	n += 11;
	le32_put(q + n, 2);
	q[n + 4] = 1;
	q[n + 5] = 0;
	q[n + 6] = 'c';
	n += 7;
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_notify_encode(q, n, &w, 256, 0), 0);
	/* first: next 24 (12 + 10 bytes of name, aligned to 4), action 1 */
	ck_assert_uint_eq(le32_get(buf), 24);
	ck_assert_uint_eq(le32_get(buf + 4), 1);
	ck_assert_uint_eq(le32_get(buf + 8), 10);
	ck_assert_uint_eq(le16_get(buf + 12 + 2), '\\');
	ck_assert_uint_eq(le16_get(buf + 12 + 4), 'b');
	/* second: the last, action 2, "c" */
	ck_assert_uint_eq(le32_get(buf + 24), 0);
	ck_assert_uint_eq(le32_get(buf + 28), 2);
	ck_assert_uint_eq(le32_get(buf + 32), 2);
	ck_assert_uint_eq(le16_get(buf + 36), 'c');
	ck_assert_uint_eq((size_t)(w.p - buf), 38);
	/* what does not fit the client's buffer: -1 */
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_notify_encode(q, n, &w, 30, 0), -1);
	/* nothing queued: nothing written */
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_notify_encode(q, 0, &w, 256, 0), 0);
	ck_assert_ptr_eq(w.p, buf);
}
END_TEST

/* one queued change: [u32 action][u16 len][name] */
static size_t
notify_q_put(uint8_t *q, uint32_t action, const char *name)
{
	size_t n = strlen(name);

	le32_put(q, action);
	q[4] = (uint8_t)n;
	q[5] = 0;
	memcpy(q + 6, name, n);
	return 6 + n;
}

/* the UTF-16 name of the entry at buf as 16-bit units, its count */
static size_t
notify_u16(const uint8_t *e, uint16_t *u, size_t cap)
{
	size_t i, n = le32_get(e + 8) / 2;

	for (i = 0; i < n && i < cap; i++)
		u[i] = le16_get(e + 12 + 2 * i);
	return n;
}

START_TEST(test_notify_file_len)
{
	/* only a *_STREAM action's name holds a stream, after its last ':' */
	ck_assert_uint_eq(fscc_notify_file_len(6, "a:s", 3), 1);
	ck_assert_uint_eq(fscc_notify_file_len(7, "x:y:s", 5), 3);
	ck_assert_uint_eq(fscc_notify_file_len(8, "d/x:y:s", 7), 5);
	ck_assert_uint_eq(fscc_notify_file_len(6, "plain", 5), 5);
	/* any other action names a file, ':' and all */
	ck_assert_uint_eq(fscc_notify_file_len(1, "x:y", 3), 3);
	ck_assert_uint_eq(fscc_notify_file_len(3, "x:y", 3), 3);
	ck_assert_uint_eq(fscc_notify_file_len(5, "d/x:y", 5), 5);
	ck_assert_uint_eq(fscc_notify_file_len(9, "x:y", 3), 3);
	ck_assert_uint_eq(fscc_notify_file_len(6, "", 0), 0);
}
END_TEST

START_TEST(test_notify_encode_native)
{
	uint8_t q[128], buf[512];
	uint16_t u[32];
	struct wcur w;
	size_t n = 0, k;

	n += notify_q_put(q + n, 1, "a:b");
	n += notify_q_put(q + n, 1, "d\\x/e*\x01");
	n += notify_q_put(q + n, 6, "x:y:AFP_Resource");
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_notify_encode(q, n, &w, sizeof(buf), 1), 0);
	/* "a:b": the ':' as the Mac sent it, U+F022 */
	ck_assert_uint_eq(notify_u16(buf, u, 32), 3);
	ck_assert_uint_eq(u[0], 'a');
	ck_assert_uint_eq(u[1], 0xf022);
	ck_assert_uint_eq(u[2], 'b');
	/* a tree change: '/' separates, a '\\' on disk is U+F026 */
	k = le32_get(buf);
	ck_assert_uint_eq(notify_u16(buf + k, u, 32), 7);
	ck_assert_uint_eq(u[0], 'd');
	ck_assert_uint_eq(u[1], 0xf026);
	ck_assert_uint_eq(u[2], 'x');
	ck_assert_uint_eq(u[3], '\\');
	ck_assert_uint_eq(u[4], 'e');
	ck_assert_uint_eq(u[5], 0xf021);
	ck_assert_uint_eq(u[6], 0xf001);
	/* a stream's change: the file's ':' mapped, the separator kept */
	k += le32_get(buf + k);
	ck_assert_uint_eq(le32_get(buf + k), 0);
	ck_assert_uint_eq(le32_get(buf + k + 4), 6);
	ck_assert_uint_eq(notify_u16(buf + k, u, 32), 16);
	ck_assert_uint_eq(u[1], 0xf022);
	ck_assert_uint_eq(u[3], ':');
	ck_assert_uint_eq(u[4], 'A');
	/* without native the names go as stored */
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(fscc_notify_encode(q, n, &w, sizeof(buf), 0), 0);
	ck_assert_uint_eq(notify_u16(buf, u, 32), 3);
	ck_assert_uint_eq(u[1], ':');
}
END_TEST

static Suite *
fscc_suite(void)
{
	Suite *s = suite_create("fscc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_time);
	tcase_add_test(tc, test_fixed_sizes);
	tcase_add_test(tc, test_all);
	tcase_add_test(tc, test_notify_encode);
	tcase_add_test(tc, test_notify_file_len);
	tcase_add_test(tc, test_notify_encode_native);
	tcase_add_test(tc, test_dirents);
	tcase_add_test(tc, test_dirent_ea_size);
	tcase_add_test(tc, test_fs);
	tcase_add_test(tc, test_fs_quota);
	tcase_add_test(tc, test_wildcards);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(fscc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
