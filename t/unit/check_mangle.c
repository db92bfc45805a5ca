/*
 * Unit tests of the 8.3 short-name generator and scan (vfs/mangle.c):
 * which names are 8.3 already, known answers (a short name must never
 * change between versions: clients and programs keep them), case,
 * dots, non-ASCII names, characters illegal in 8.3, collisions, and
 * the scan of a real directory.  The known answers were computed by an
 * independent Python model of the scheme described in vfs/mangle.h.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs/mangle.h"
#include "vfs/vfs.h"

static size_t
mk(const char *name, char *out)
{
	return mangle_make(name, strlen(name), out);
}

static int
is83(const char *name)
{
	return mangle_is_83(name, strlen(name));
}

START_TEST(test_is_83)
{
	static const char *yes[] = {
		"ABC.TXT", "abc.txt", "README", "A.B", "a!b.txt", ".", "..",
		"12345678.123", "X~1", "VE9HB6~K.TXT", "auxx.txt", NULL
	};
	static const char *no[] = {
		"verylongfilename.txt", "a b.txt", ".hidden", "x.tar.gz",
		"ABCDEFGHI", "a.txtx", "na\xc3\xafve.txt", "aux", "AUX.txt",
		"com1", "Lpt9.doc", "nul", "a+b", "trail.", "a[1].c", "a;b",
		"a=b", "a,b", "123456789.a", "", "a\"b", "a:b", NULL
	};
	int i;

	for (i = 0; yes[i] != NULL; i++)
		ck_assert_msg(is83(yes[i]), "%s should be 8.3", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		ck_assert_msg(!is83(no[i]), "%s should not be 8.3", no[i]);
}
END_TEST

/* Known answers: the scheme is a contract with clients. */
START_TEST(test_known_answers)
{
	static const char *v[][2] = {
		{ "verylongfilename.txt", "VE9HB6~K.TXT" },
		{ ".hidden", "HITFCY~T" },
		{ "a b.txt", "ABVM6V~8.TXT" },
		{ "na\xc3\xafve.txt", "NAYD6U~Q.TXT" },
		{ "x.tar.gz", "XT5DGW~X.GZ" },
		{ "ABCDEFGHI", "ABOUD7~G" },
		{ "aux", "AUEESD~5" },
		{ "torture_search.txt", "TOQ8T7~Z.TXT" },
		{ "trail.", "TR3NGT~B" },
		{ "...dots", "DOGK9Z~1" },
		{ "abc.txt", "abc.txt" },	/* 8.3: itself, case kept */
		{ NULL, NULL }
	};
	char out[MANGLE_MAX + 1];
	int i;

	for (i = 0; v[i][0] != NULL; i++) {
		ck_assert_uint_eq(mk(v[i][0], out), strlen(v[i][1]));
		ck_assert_str_eq(out, v[i][1]);
	}
}
END_TEST

/* Every short name we make is 8.3 itself, ours by shape, upper case. */
START_TEST(test_shape)
{
	static const char *names[] = {
		"verylongfilename.txt", ".a", "a b", "x.tar.gz",
		"\xe6\x97\xa5\xe6\x9c\xac.txt", "a*b:c<d>.t|t", "....",
		"a.b.c.d.eeee", "name.", " leading space", "~~~~~~~~~~",
		"UPPER CASE NAME.HTML", NULL
	};
	char out[MANGLE_MAX + 1];
	size_t n, i;
	int k;

	for (k = 0; names[k] != NULL; k++) {
		n = mk(names[k], out);
		ck_assert_msg(n >= 8 && n <= MANGLE_MAX, "%s -> %s", names[k],
		    out);
		ck_assert_msg(mangle_shape(out, n), "%s -> %s", names[k], out);
		ck_assert_msg(mangle_is_83(out, n), "%s -> %s", names[k], out);
		for (i = 0; i < n; i++)
			ck_assert_msg(out[i] == '~' || out[i] == '.' ||
			    out[i] == '_' || out[i] == '-' || out[i] == '$' ||
			    (out[i] >= 'A' && out[i] <= 'Z') ||
			    (out[i] >= '0' && out[i] <= '9'), "%s -> %s",
			    names[k], out);
	}
	/* Windows' own shape fits: looked up, found only if a name hashes so */
	ck_assert(mangle_shape("PROGRA~1", 8));
	/* typed names that are not ours by shape */
	ck_assert(!mangle_shape("ABCDEF-1", 8));
	ck_assert(!mangle_shape("AB~DEFGH", 8));
	ck_assert(!mangle_shape("ABCDEF~1.", 9));
	ck_assert(!mangle_shape("ABCDEF~1.TXTX", 13));
	ck_assert(!mangle_shape("AB_DEF~1", 8));	/* '_' only in the lead */
	ck_assert(mangle_shape("ve9hb6~k.txt", 12));	/* any case */
}
END_TEST

/* Names equal but for case, ASCII or not, share their short name. */
START_TEST(test_case)
{
	char a[MANGLE_MAX + 1], b[MANGLE_MAX + 1];

	mk("VeryLongFileName.TXT", a);
	mk("verylongfilename.txt", b);
	ck_assert_str_eq(a, b);
	/* U+00C4 / U+00E4 */
	mk("\xc3\x84" "BCDEFGHIJ.txt", a);
	mk("\xc3\xa4" "bcdefghij.txt", b);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, "_B7Q8Y~5.TXT");
	/* Greek capitals and smalls: U+0391.. / U+03B1.. */
	mk("\xce\x91\xce\x92\xce\x93\xce\x94\xce\x95\xce\x96\xce\x97\xce\x98"
	    "\xce\x99", a);
	mk("\xce\xb1\xce\xb2\xce\xb3\xce\xb4\xce\xb5\xce\xb6\xce\xb7\xce\xb8"
	    "\xce\xb9", b);
	ck_assert_str_eq(a, b);
	/* but not different names */
	mk("verylongfilename.txt", a);
	mk("verylongfilename.txu", b);
	ck_assert_str_ne(a, b);
	ck_assert(mangle_is_short_of("VERYLONGFILENAME.TXT", 20,
	    "ve9hb6~k.txt", 12, 0));
	ck_assert(!mangle_is_short_of("VERYLONGFILENAME.TXT", 20,
	    "ve9hb6~k.txt", 12, 1));
	ck_assert(mangle_is_short_of("VERYLONGFILENAME.TXT", 20,
	    "VE9HB6~K.TXT", 12, 1));
	/* an 8.3 name has no other short name */
	ck_assert(!mangle_is_short_of("abc.txt", 7, "ABC.TXT", 7, 0));
}
END_TEST

START_TEST(test_dots)
{
	char out[MANGLE_MAX + 1];

	/* the extension comes from the last dot */
	mk("a.b.c.d.eeee", out);
	ck_assert_str_eq(out + 8, ".EEE");
	ck_assert_int_eq(strncmp(out, "AB", 2), 0);
	/* a leading dot is no extension; the lead skips dots */
	mk(".profile", out);
	ck_assert_uint_eq(strlen(out), 8);
	ck_assert_int_eq(strncmp(out, "PR", 2), 0);
	/* a trailing dot: no extension */
	mk("name.", out);
	ck_assert_uint_eq(strlen(out), 8);
	/* only dots */
	mk("....", out);
	ck_assert_uint_eq(strlen(out), 8);
	ck_assert_int_eq(strncmp(out, "__", 2), 0);
}
END_TEST

START_TEST(test_non_ascii_and_illegal)
{
	char out[MANGLE_MAX + 1];

	/* Japanese: no ASCII lead, the extension kept */
	mk("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.txt", out);
	ck_assert_int_eq(strncmp(out, "__", 2), 0);
	ck_assert_str_eq(out + 8, ".TXT");
	/* outside the BMP (an emoji, 4 bytes of UTF-8) */
	mk("\xf0\x9f\x98\x80smile.doc", out);
	ck_assert_str_eq(out, "_SBKPL~E.DOC");
	/* a non-ASCII extension */
	mk("a.\xe6\x97\xa5\xe6\x9c\xac", out);
	ck_assert_str_eq(out, "A_RTNR~Z.__");
	/* characters illegal in 8.3 become '_' */
	mk("a*b:c<d>.t|t", out);
	ck_assert_str_eq(out, "A_IAFC~H.T_T");
	mk("a+b=c[d];e,f.txt", out);
	ck_assert_int_eq(strncmp(out, "A_", 2), 0);
	/* not UTF-8 at all: still a name, deterministic */
	mk("\xff\xfe\xfd long", out);
	ck_assert(mangle_shape(out, strlen(out)));
}
END_TEST

/* 10,000 names of one lead: few collisions (36^5 hash values). */
START_TEST(test_collisions)
{
	enum { N = 10000 };
	static char names[N][MANGLE_MAX + 1];
	char name[64];
	int i, j, coll = 0;

	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "Report %05d final.docx", i);
		mk(name, names[i]);
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			if (strcmp(names[i], names[j]) == 0)
				coll++;
	/* expected about N^2 / 2 / 36^5 = 0.8 */
	ck_assert_int_le(coll, 5);
}
END_TEST

static int
skip_named(void *arg, const char *name, size_t len)
{
	return strlen(arg) == len && memcmp(arg, name, len) == 0;
}

START_TEST(test_find)
{
	char top[] = "/tmp/check_mangle.XXXXXX", p[128], out[256];
	int dfd, i;

	ck_assert_ptr_nonnull(mkdtemp(top));
	for (i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "%s/some long name %d.txt", top, i);
		close(open(p, O_CREAT | O_WRONLY, 0644));
	}
	snprintf(p, sizeof(p), "%s/verylongfilename.txt", top);
	close(open(p, O_CREAT | O_WRONLY, 0644));

	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mangle_find(&vfs_posix, dfd, "VE9HB6~K.TXT", 12, 1,
	    NULL, NULL, out, sizeof(out)), 1);
	ck_assert_str_eq(out, "verylongfilename.txt");
	close(dfd);
	/* any case unless exact */
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mangle_find(&vfs_posix, dfd, "ve9hb6~k.txt", 12, 0,
	    NULL, NULL, out, sizeof(out)), 1);
	close(dfd);
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mangle_find(&vfs_posix, dfd, "ve9hb6~k.txt", 12, 1,
	    NULL, NULL, out, sizeof(out)), 0);
	close(dfd);
	/* a name the caller refuses is not found */
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mangle_find(&vfs_posix, dfd, "VE9HB6~K.TXT", 12, 0,
	    skip_named, "verylongfilename.txt", out, sizeof(out)), 0);
	close(dfd);
	/* a short name nobody has */
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(mangle_find(&vfs_posix, dfd, "ZZ0000~0.TXT", 12, 0,
	    NULL, NULL, out, sizeof(out)), 0);
	close(dfd);
	/* too small an output buffer */
	dfd = open(top, O_RDONLY | O_DIRECTORY);
	ck_assert_int_lt(mangle_find(&vfs_posix, dfd, "VE9HB6~K.TXT", 12, 0,
	    NULL, NULL, out, 4), 0);
	close(dfd);
	snprintf(p, sizeof(p), "rm -rf %s", top);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

static Suite *
mangle_suite(void)
{
	Suite *s = suite_create("mangle");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_is_83);
	tcase_add_test(tc, test_known_answers);
	tcase_add_test(tc, test_shape);
	tcase_add_test(tc, test_case);
	tcase_add_test(tc, test_dots);
	tcase_add_test(tc, test_non_ascii_and_illegal);
	tcase_add_test(tc, test_collisions);
	tcase_add_test(tc, test_find);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(mangle_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
