/*
 * Unit tests for `hosts allow` / `hosts deny` (daemon/conf_hosts.c), following
 * Samba's rules: prefixes ("10.1."), networks ("10.0.0.0/8",
 * "192.168.1.0/255.255.255.0"), exact addresses, ALL, localhost, and the
 * order allow > deny > allow-by-default; loopback is allowed unless denied.
 */
#include <check.h>
#include <stdlib.h>
#include <sys/socket.h>

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

/*
 * The one grammar (conf_hostpat_parse): what the load check accepts is
 * what the matcher implements, and an item it refuses matches nothing.
 */
static const struct {
	char		*item;
	int		 family;	/* 0: refused */
	int		 bits;
	const char	*in, *out;	/* an address it takes, one it does not */
} forms[] = {
	{ "10.",		AF_INET,  8,   "10.200.1.1",	"100.0.0.1" },
	{ "10.1.",		AF_INET,  16,  "10.1.2.3",	"10.10.2.3" },
	{ "192.168.1.",		AF_INET,  24,  "192.168.1.77",	"192.168.10.1" },
	{ "10.1.2.3.",		0, 0, NULL, NULL },	/* four octets and a dot */
	{ "010.",		0, 0, NULL, NULL },	/* the text never has it */
	{ "256.",		0, 0, NULL, NULL },
	{ "10..",		0, 0, NULL, NULL },
	{ ".",			0, 0, NULL, NULL },
	{ "fe80:",		AF_INET6, 16,  "fe80::1",	"fe81::1" },
	{ "FE80:",		AF_INET6, 16,  "fe80::abcd",	"fe00::1" },
	{ "2001:db8:0:",	AF_INET6, 48,  "2001:db8::5",	"2001:db8:1::5" },
	{ "2001:db8:",		AF_INET6, 32,  "2001:db8:ffff::1", "2001:db9::1" },
	{ "fe80::",		AF_INET6, 128, "fe80::",	"fe80::1" },
	{ "fe80:::",		0, 0, NULL, NULL },
	{ "12345:",		0, 0, NULL, NULL },
	{ "1:2:3:4:5:6:7:8:",	0, 0, NULL, NULL },	/* eight groups */
	{ "fe8g:",		0, 0, NULL, NULL },
	{ "10.1.2.3",		AF_INET,  32,  "10.1.2.3",	"10.1.2.30" },
	{ "2001:db8::1",	AF_INET6, 128, "2001:db8::1",	"2001:db8::2" },
	{ "10.0.0.0/8",		AF_INET,  8,   "10.9.9.9",	"11.0.0.1" },
	{ "10.0.0.0/255.0.0.0",	AF_INET,  8,   "10.9.9.9",	"11.0.0.1" },
	{ "10.0.0.0/255.0.255.0", 0, 0, NULL, NULL },	/* not contiguous */
	{ "10.0.0.0/33",	0, 0, NULL, NULL },
	{ "10.0.0.0/08",	0, 0, NULL, NULL },
	{ "10.0.0.0/+8",	0, 0, NULL, NULL },
	{ "10.0.0.0/ 8",	0, 0, NULL, NULL },
	{ "10.0.0.0/",		0, 0, NULL, NULL },
	{ "/8",			0, 0, NULL, NULL },
	{ "0.0.0.0/0",		AF_INET,  0,   "8.8.8.8",	"::5" },
	{ "fe80::/10",		AF_INET6, 10,  "febf::1",	"fec0::1" },
	{ "::/0",		AF_INET6, 0,   "2001:db8::1",	"10.0.0.1" },
	{ "fe80::/129",		0, 0, NULL, NULL },
	{ "fe80::/ffc0::",	0, 0, NULL, NULL },	/* no v6 dotted-style mask */
	{ "[fe80::]/10",	AF_INET6, 10,  "fe80::9",	"fec0::1" },
	{ "[::1]",		AF_INET6, 128, "::1",		"::2" },
	{ "[10.0.0.1]",		0, 0, NULL, NULL },
	{ "[fe80::/10",		0, 0, NULL, NULL },
	{ "::ffff:10.1.2.3",	AF_INET,  32,  "10.1.2.3",	"10.1.2.4" },
	{ "::ffff:10.0.0.0/104", AF_INET, 8,   "10.7.7.7",	"11.0.0.1" },
	{ "::ffff:0.0.0.0/95",	0, 0, NULL, NULL },
	{ "lapland",		0, 0, NULL, NULL },	/* host names: no */
	{ ".example.com",	0, 0, NULL, NULL },
	{ "@foonet",		0, 0, NULL, NULL },	/* netgroups: no */
	{ "LOCAL",		0, 0, NULL, NULL },
	{ "10.0.0.*",		0, 0, NULL, NULL },	/* wildcards: no */
	{ "fe80::1%lo",		0, 0, NULL, NULL },
	{ "",			0, 0, NULL, NULL },
};

START_TEST(test_grammar)
{
	struct conf_hostpat hp;
	unsigned i;
	int rc;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		rc = conf_hostpat_parse(forms[i].item, &hp);
		if (forms[i].family == 0) {
			ck_assert_msg(rc == -1, "'%s' loads", forms[i].item);
			/* what does not load matches nothing */
			ck_assert(!conf_peer_allowed(L(forms[i].item), NULL,
			    "10.0.0.1"));
			ck_assert(!conf_peer_allowed(L(forms[i].item), NULL,
			    "fe80::1"));
			continue;
		}
		ck_assert_msg(rc == 0, "'%s' refused", forms[i].item);
		ck_assert_int_eq(hp.kind, CONF_HOSTPAT_NET);
		ck_assert_int_eq(hp.family, forms[i].family);
		ck_assert_int_eq(hp.bits, forms[i].bits);
		ck_assert_msg(conf_peer_allowed(L(forms[i].item), NULL,
		    forms[i].in), "'%s' refuses %s", forms[i].item, forms[i].in);
		ck_assert_msg(!conf_peer_allowed(L(forms[i].item), NULL,
		    forms[i].out), "'%s' takes %s", forms[i].item, forms[i].out);
	}
	ck_assert_int_eq(conf_hostpat_parse("all", &hp), 0);
	ck_assert_int_eq(hp.kind, CONF_HOSTPAT_ALL);
	ck_assert_int_eq(conf_hostpat_parse("LocalHost", &hp), 0);
	ck_assert_int_eq(hp.kind, CONF_HOSTPAT_LOCALHOST);
	/* localhost is 127.0.0.1 and ::1 only, not 127/8 */
	ck_assert(!conf_peer_allowed(L("localhost"), NULL, "127.0.0.2"));
	ck_assert(conf_peer_allowed(L("localhost"), L("ALL"), "::1"));
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
	tcase_add_test(tc, test_grammar);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
