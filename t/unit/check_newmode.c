/*
 * Unit tests for the mode a create gives a new file or directory
 * (worker/smb2_posix.c smb2_posix_new_mode): create mask / directory mask,
 * force create mode / force directory mode, inherit permissions, and a
 * POSIX create's own mode, as Samba's unix_mode() and apply_default_perms().
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/conf.h"
#include "worker/smb2_posix.h"

static struct conf_share
share(mode_t cmask, mode_t dmask, mode_t cforce, mode_t dforce)
{
	struct conf_share sh;

	memset(&sh, 0, sizeof(sh));
	sh.create_mask = cmask;
	sh.directory_mask = dmask;
	sh.force_create_mode = cforce;
	sh.force_directory_mode = dforce;
	return sh;
}

START_TEST(test_masks_only)
{
	struct smb2_posix_req pr = { 0, 0 };
	struct conf_share sh = share(0744, 0755, 0, 0);

	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, 0), 0644);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 1, 0), 0755);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, NULL, 0, 0), 0644);
	ck_assert_int_eq(smb2_posix_mode_keys(&sh), 0);
}
END_TEST

START_TEST(test_force_bits)
{
	struct smb2_posix_req pr = { 0, 0 };
	struct conf_share sh = share(0700, 0700, 0060, 02070);

	/* after the mask: bits the mask took come back when forced */
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, 0), 0660);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 1, 0), 02770);
	ck_assert_int_eq(smb2_posix_mode_keys(&sh), 1);
	/* a POSIX create's mode is masked and forced too */
	pr.posix = 1;
	pr.perms = 0755;
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, 0), 0760);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 1, 0), 02770);
}
END_TEST

START_TEST(test_inherit)
{
	struct smb2_posix_req pr = { 0, 0 };
	struct conf_share sh = share(0700, 0700, 0001, 0001);

	sh.inherit_permissions = 1;
	ck_assert_int_eq(smb2_posix_mode_keys(&sh), 1);
	/* a 2770 parent: directory 2770, file 0660, masks and force unused */
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 1, S_IFDIR | 02770), 02770);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, S_IFDIR | 02770), 0660);
	/* setuid never passes on; a directory stays its owner's to write */
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 1, S_IFDIR | 04555), 0755);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, S_IFDIR | 01777), 0666);
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, S_IFDIR | 0), 0);
	/* no parent mode (not asked, or its stat failed): the masks */
	ck_assert_uint_eq(smb2_posix_new_mode(&pr, &sh, 0, 0), 0601);
}
END_TEST

static Suite *
newmode_suite(void)
{
	Suite *s = suite_create("newmode");
	TCase *tc = tcase_create("mode");

	tcase_add_test(tc, test_masks_only);
	tcase_add_test(tc, test_force_bits);
	tcase_add_test(tc, test_inherit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(newmode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
