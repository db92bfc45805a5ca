/*
 * Unit tests for `hosts allow` / `hosts deny` (daemon/conf_hosts.c), following
 * Samba's rules: prefixes ("10.1."), networks ("10.0.0.0/8",
 * "192.168.1.0/255.255.255.0"), exact addresses, ALL, localhost, and the
 * order allow > deny > allow-by-default; loopback is allowed unless denied.
 */
#include <check.h>
#include <stdlib.h>

#include "daemon/conf.h"

#define L(...)	((char *const[]){ __VA_ARGS__, NULL })

START_TEST(test_no_lists)
{
	ck_assert(conf_peer_allowed(NULL, NULL, "192.0.2.7"));
	ck_assert(conf_peer_allowed(NULL, NULL, "2001:db8::1"));
}
END_TEST

START_TEST(test_allow_only)
{
	char *const *allow = L("10.1.", "192.168.0.0/16", "203.0.113.9");

	ck_assert(conf_peer_allowed(allow, NULL, "10.1.2.3"));
	ck_assert(!conf_peer_allowed(allow, NULL, "10.10.2.3"));
	ck_assert(conf_peer_allowed(allow, NULL, "192.168.200.1"));
	ck_assert(!conf_peer_allowed(allow, NULL, "192.169.0.1"));
	ck_assert(conf_peer_allowed(allow, NULL, "203.0.113.9"));
	ck_assert(!conf_peer_allowed(allow, NULL, "203.0.113.90"));
	/* Loopback is allowed even when not listed, as in Samba. */
	ck_assert(conf_peer_allowed(allow, NULL, "127.0.0.1"));
}
END_TEST

START_TEST(test_deny_only)
{
	char *const *deny = L("172.16.0.0/255.240.0.0", "2001:db8::/32");

	ck_assert(!conf_peer_allowed(NULL, deny, "172.31.255.255"));
	ck_assert(conf_peer_allowed(NULL, deny, "172.32.0.1"));
	ck_assert(!conf_peer_allowed(NULL, deny, "2001:db8:1::5"));
	ck_assert(conf_peer_allowed(NULL, deny, "2001:db9::5"));
}
END_TEST

START_TEST(test_both)
{
	char *const *allow = L("10.0.0.0/8");
	char *const *deny = L("ALL");

	ck_assert(conf_peer_allowed(allow, deny, "10.9.9.9"));
	ck_assert(!conf_peer_allowed(allow, deny, "11.0.0.1"));
	/* Unlisted in both: allowed. */
	ck_assert(conf_peer_allowed(L("10.0.0.0/8"), L("12.0.0.0/8"), "13.0.0.1"));
}
END_TEST

START_TEST(test_loopback)
{
	ck_assert(!conf_peer_allowed(NULL, L("127.0.0.1"), "127.0.0.1"));
	ck_assert(!conf_peer_allowed(NULL, L("localhost"), "::1"));
	ck_assert(!conf_peer_allowed(NULL, L("ALL"), "127.0.0.1"));
	ck_assert(conf_peer_allowed(L("localhost"), L("ALL"), "127.0.0.1"));
	ck_assert(conf_peer_allowed(NULL, L("10."), "127.0.0.1"));
}
END_TEST

START_TEST(test_malformed_items)
{
	/* Bad items match nothing rather than everything. */
	char *const *allow = L("10.0.0.0/33", "10.0.0.0/255.0.255.0", "nonsense",
	    "10.0.0.0/", "/8");

	ck_assert(!conf_peer_allowed(allow, NULL, "10.0.0.1"));
	ck_assert(!conf_peer_allowed(L("0.0.0.0/0"), NULL, "::5"));
	ck_assert(conf_peer_allowed(L("0.0.0.0/0"), NULL, "8.8.8.8"));
	ck_assert(conf_peer_allowed(L("::/0"), NULL, "2001:db8::1"));
}
END_TEST

START_TEST(test_except)
{
	char *const *allow = L("10.0.0.0/8", "EXCEPT", "10.1.1.1", "10.2.");

	ck_assert(conf_peer_allowed(allow, NULL, "10.9.9.9"));
	ck_assert(!conf_peer_allowed(allow, NULL, "10.1.1.1"));
	ck_assert(!conf_peer_allowed(allow, NULL, "10.2.3.4"));
	ck_assert(!conf_peer_allowed(allow, NULL, "11.1.1.1"));
	ck_assert(!conf_peer_allowed(NULL, L("ALL", "EXCEPT", "10.1.1.1"), "10.1.1.2"));
	ck_assert(conf_peer_allowed(NULL, L("ALL", "EXCEPT", "10.1.1.1"), "10.1.1.1"));
	/* an address that cannot be read is refused by any list */
	ck_assert(!conf_peer_allowed(NULL, L("10.0.0.0/8"), "?"));
	ck_assert(conf_peer_allowed(NULL, NULL, "?"));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("listen");
	TCase *tc = tcase_create("hosts allow/deny");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_no_lists);
	tcase_add_test(tc, test_allow_only);
	tcase_add_test(tc, test_deny_only);
	tcase_add_test(tc, test_both);
	tcase_add_test(tc, test_loopback);
	tcase_add_test(tc, test_malformed_items);
	tcase_add_test(tc, test_except);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
