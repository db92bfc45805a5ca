/*
 * proto/netif.c: NETWORK_INTERFACE_INFO (MS-SMB2 2.2.32.5) layout, and the
 * ERROR response body with data that carries its BUFFER_TOO_SMALL size
 * (proto/smb2_hdr.c, MS-SMB2 2.2.2, 2.2.2.1).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/netif.h"
#include "proto/smb2_hdr.h"

static const struct smb2_netif v4 = {
	.ifindex = 2, .capability = SMB2_NETIF_RSS_CAPABLE,
	.link_speed = 10000000000ull, .family = SMB2_NETIF_FAMILY_IPV4,
	.addr = { 192, 168, 1, 20 },
};
static const struct smb2_netif v6 = {
	.ifindex = 2, .capability = 0, .link_speed = 1000000000ull,
	.family = SMB2_NETIF_FAMILY_IPV6,
	.addr = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff,
	    0xfe, 0x33, 0x44, 0x55 },
	.scope_id = 2,
};

START_TEST(test_netif_two)
{
	struct smb2_netif v[2] = { v4, v6 };
	uint8_t buf[400], *e;
	struct wcur w;

	memset(buf, 0xAA, sizeof(buf));
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(smb2_netif_encode(&w, v, 2), 0);
	ck_assert_uint_eq(wcur_off(&w), 2 * 152);
	ck_assert_uint_eq(smb2_netif_size(2), 304);
	/* first entry: Next points at the second, 8-aligned */
	e = buf;
	ck_assert_uint_eq(le32_get(e), 152);
	ck_assert_uint_eq(le32_get(e + 4), 2);
	ck_assert_uint_eq(le32_get(e + 8), SMB2_NETIF_RSS_CAPABLE);
	ck_assert_uint_eq(le32_get(e + 12), 0);		/* Reserved */
	ck_assert(le64_get(e + 16) == 10000000000ull);
	ck_assert_uint_eq(le16_get(e + 24), 0x0002);
	ck_assert_uint_eq(le16_get(e + 26), 0);		/* Port */
	ck_assert(memcmp(e + 28, v4.addr, 4) == 0);
	for (size_t i = 32; i < 152; i++)
		ck_assert_uint_eq(e[i], 0);
	/* second entry: the last, IPv6 with FlowInfo 0 and ScopeId */
	e = buf + 152;
	ck_assert_uint_eq(le32_get(e), 0);
	ck_assert_uint_eq(le16_get(e + 24), 0x0017);
	ck_assert_uint_eq(le32_get(e + 28), 0);		/* FlowInfo */
	ck_assert(memcmp(e + 32, v6.addr, 16) == 0);
	ck_assert_uint_eq(le32_get(e + 48), 2);
	for (size_t i = 52; i < 152; i++)
		ck_assert_uint_eq(e[i], 0);
	/* nothing written past the two entries */
	ck_assert_uint_eq(buf[304], 0xAA);
}
END_TEST

START_TEST(test_netif_short)
{
	struct smb2_netif v[2] = { v4, v6 };
	uint8_t buf[303];
	size_t cap;
	struct wcur w;

	/* every capacity below the whole chain fails and latches err */
	for (cap = 0; cap < sizeof(buf); cap += 7) {
		wcur_init(&w, buf, cap);
		ck_assert_int_eq(smb2_netif_encode(&w, v, 2), -1);
		ck_assert_int_eq(w.err, 1);
	}
	/* none is an empty answer */
	wcur_init(&w, buf, 0);
	ck_assert_int_eq(smb2_netif_encode(&w, v, 0), 0);
	ck_assert_uint_eq(smb2_netif_size(0), 0);
}
END_TEST

START_TEST(test_netif_invalid)
{
	struct smb2_netif v = v4;
	uint8_t buf[152];
	struct wcur w;

	v.ifindex = 0;		/* MS-SMB2 3.3.5.15.11: never IfIndex 0 */
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(smb2_netif_encode(&w, &v, 1), -1);
	ck_assert_uint_eq(wcur_off(&w), 0);
	v = v4;
	v.family = 10;		/* Linux AF_INET6 is not the wire's 0x17 */
	ck_assert_int_eq(smb2_netif_encode(&w, &v, 1), -1);
	ck_assert_uint_eq(wcur_off(&w), 0);
}
END_TEST

START_TEST(test_error_body)
{
	uint8_t buf[64], need[4] = { 0x98, 0x01, 0, 0 };	/* 408 */
	struct wcur w;

	/* no data: StructureSize 9, ByteCount 0 and one zero byte */
	memset(buf, 0xAA, sizeof(buf));
	wcur_init(&w, buf, sizeof(buf));
	smb2_error_encode(&w, 1, NULL, 0);
	ck_assert_uint_eq(wcur_off(&w), 9);
	ck_assert_uint_eq(le16_get(buf), 9);
	ck_assert_uint_eq(buf[2], 0);
	ck_assert_uint_eq(le32_get(buf + 4), 0);
	ck_assert_uint_eq(buf[8], 0);

	/* before 3.1.1: ErrorContextCount 0, the size is the ErrorData */
	wcur_init(&w, buf, sizeof(buf));
	smb2_error_encode(&w, 0, need, 4);
	ck_assert_uint_eq(wcur_off(&w), 12);
	ck_assert_uint_eq(buf[2], 0);
	ck_assert_uint_eq(buf[3], 0);
	ck_assert_uint_eq(le32_get(buf + 4), 4);
	ck_assert_uint_eq(le32_get(buf + 8), 408);

	/* 3.1.1: one SMB2 ERROR Context, ErrorId DEFAULT, at offset 8 */
	wcur_init(&w, buf, sizeof(buf));
	smb2_error_encode(&w, 1, need, 4);
	ck_assert_uint_eq(wcur_off(&w), 20);
	ck_assert_uint_eq(buf[2], 1);
	ck_assert_uint_eq(le32_get(buf + 4), 12);
	ck_assert_uint_eq(le32_get(buf + 8), 4);	/* ErrorDataLength */
	ck_assert_uint_eq(le32_get(buf + 12), SMB2_ERROR_ID_DEFAULT);
	ck_assert_uint_eq(le32_get(buf + 16), 408);

	/* a short buffer latches the error */
	wcur_init(&w, buf, 15);
	smb2_error_encode(&w, 1, need, 4);
	ck_assert_int_eq(w.err, 1);
}
END_TEST

static Suite *
netif_suite(void)
{
	Suite *s = suite_create("netif");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_netif_two);
	tcase_add_test(tc, test_netif_short);
	tcase_add_test(tc, test_netif_invalid);
	tcase_add_test(tc, test_error_body);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(netif_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
