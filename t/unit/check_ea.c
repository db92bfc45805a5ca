/*
 * Unit tests for worker/smb2_ea.c smb2_ea_size_names: the EaSize that
 * FileEaInformation, FileAllInformation and the listings share (the
 * length of the FILE_FULL_EA_INFORMATION list of every EA, MS-FSCC
 * 2.4.15: entries 4-aligned, no padding after the last), from a listxattr
 * answer and a value-size callback.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "worker/smb2_file.h"

/* value sizes by xattr name; -1 for a name gone meanwhile */
static ssize_t
vsize(void *arg, const char *xname)
{
	int *calls = arg;

	(*calls)++;
	if (strcmp(xname, "user.usmbd.ea.EAONE") == 0)
		return 7;
	if (strcmp(xname, "user.usmbd.ea.SECONDEA") == 0)
		return 11;
	if (strcmp(xname, "user.usmbd.ea.gone") == 0)
		return -2;
	if (strcmp(xname, "user.usmbd.ea.huge") == 0)
		return 65536;
	return 0;
}

#define L(s)	s, sizeof(s) - 1	/* a list with its NULs, no extra one */

START_TEST(test_sizes)
{
	int calls = 0;

	/* nothing, or only other xattrs: 0, and no value asked for */
	ck_assert_uint_eq(smb2_ea_size_names(L(""), vsize, &calls), 0);
	ck_assert_uint_eq(smb2_ea_size_names(L("user.DOSATTRIB\0"
	    "security.selinux\0user.usmbd.sd\0"), vsize, &calls), 0);
	ck_assert_int_eq(calls, 0);
	/* one EA: 8 + name + NUL + value, no padding */
	ck_assert_uint_eq(smb2_ea_size_names(L("user.usmbd.ea.EAONE\0"),
	    vsize, &calls), 8 + 5 + 1 + 7);
	ck_assert_int_eq(calls, 1);
	/* two: the first padded to 4 (21 -> 24), the last not (8+8+1+11) */
	calls = 0;
	ck_assert_uint_eq(smb2_ea_size_names(L("user.DOSATTRIB\0"
	    "user.usmbd.ea.EAONE\0user.usmbd.ea.SECONDEA\0"), vsize, &calls),
	    24 + 28);
	ck_assert_int_eq(calls, 2);
	/* an empty value still counts its header and name */
	ck_assert_uint_eq(smb2_ea_size_names(L("user.usmbd.ea.z\0"), vsize,
	    &calls), 8 + 1 + 1);
}
END_TEST

/* What a query leaves out is not counted; malformed lists are safe. */
START_TEST(test_skipped)
{
	char name[14 + 300 + 1];
	int calls = 0;

	ck_assert_uint_eq(smb2_ea_size_names(L("user.usmbd.ea.gone\0"
	    "user.usmbd.ea.huge\0user.usmbd.ea.\0"), vsize, &calls), 0);
	ck_assert_int_eq(calls, 2);	/* the empty name is not asked for */
	/* a name longer than 255 bytes cannot go on the wire */
	memcpy(name, "user.usmbd.ea.", 14);
	memset(name + 14, 'n', 300);
	name[314] = '\0';
	calls = 0;
	ck_assert_uint_eq(smb2_ea_size_names(name, sizeof(name), vsize,
	    &calls), 0);
	ck_assert_int_eq(calls, 0);
	/* a last name without its NUL (a list cut short) is not read past */
	ck_assert_uint_eq(smb2_ea_size_names("user.usmbd.ea.EAONE", 19,
	    vsize, &calls), 0);
	ck_assert_uint_eq(smb2_ea_size_names("user.usmbd.ea.EAONE\0user.us",
	    27, vsize, &calls), 8 + 5 + 1 + 7);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ea");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_skipped);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
