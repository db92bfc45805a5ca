/*
 * The shared state's rules for POSIX opens (SMB3 POSIX extensions): a
 * delete-pending name goes at the close that leaves only POSIX opens of
 * it (SHM_OPEN_POSIX), and POSIX byte-range locks (an owner's locks
 * merged and split as fcntl's, advisory for POSIX I/O, binding for
 * Windows handles).  The rest of the layer is check_shm.c and
 * check_shm_locks.c.
 */
#include "shm_test.h"

START_TEST(test_posix_delete)
{
	struct shm *s = make_env(0);
	struct shm_open_rec p1 = mkopen(41, RD, S_ALL);
	struct shm_open_rec p2 = mkopen(42, RD | DEL, S_ALL);
	struct shm_open_rec w1 = mkopen(43, RD, S_ALL);
	struct shm_open_rec again = mkopen(44, RD, S_ALL);
	struct shm_close_result cr;
	int on;

	p1.link = p2.link = w1.link = again.link = 0x4444;
	p1.flags = p2.flags = again.flags = SHM_OPEN_POSIX;
	p2.create_options = SHM_FILE_DELETE_ON_CLOSE;
	/* rm of a file another POSIX open holds: the name goes now */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &p2, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	/* ... and is no longer delete pending: the last close deletes none */
	ck_assert_int_eq(shm_open_get_delete_pending(s, &F1, 41, &on), 0);
	ck_assert_int_eq(on, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(cr.last_close, 1);

	/* a Windows open of the name holds it back: Windows semantics */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &w1, NULL), 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &p2, NULL), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 42, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(shm_open_insert(s, &F1, &again, NULL), -EIDRM);
	/* ... until its close, which leaves only the POSIX one */
	ck_assert_int_eq(shm_open_remove(s, &F1, 43, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(cr.last_close, 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);

	/* disposition set by a Windows open, only POSIX opens left */
	ck_assert_int_eq(shm_open_insert(s, &F1, &p1, NULL), 0);
	w1.access |= DEL;
	ck_assert_int_eq(shm_open_insert(s, &F1, &w1, NULL), 0);
	ck_assert_int_eq(shm_open_set_delete_pending(s, &F1, 43, 1), 0);
	ck_assert_int_eq(shm_open_remove(s, &F1, 43, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 1);
	ck_assert_int_eq(shm_open_remove(s, &F1, 41, &cr), 0);
	ck_assert_int_eq(cr.delete_file, 0);
	ck_assert_int_eq(cr.last_close, 1);
	drop_env(s);
}
END_TEST

static Suite *
shm_posix_suite(void)
{
	Suite *su = suite_create("shm_posix");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_posix_delete);
	suite_add_tcase(su, tc);
	return su;
}

int
main(void)
{
	SRunner *sr = srunner_create(shm_posix_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
