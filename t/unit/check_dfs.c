/*
 * Unit tests for the DFS referral codecs (proto/dfs.c): the request of
 * FSCTL_DFS_GET_REFERRALS and _EX (MS-DFSC 2.2.2, 2.2.3) with every
 * truncation and the malformed forms, the msdfs link text Samba writes,
 * and RESP_GET_DFS_REFERRAL (2.2.4) in V2, V3 and V4 byte for byte.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dfs.h"
#include "proto/ntstatus.h"
#include "worker/dfs.h"

/* "\srv\sh" in UTF-16LE, then its NUL */
static const uint8_t name16[] = {
	'\\', 0, 's', 0, 'r', 0, 'v', 0, '\\', 0, 's', 0, 'h', 0, 0, 0,
};

START_TEST(test_req_plain)
{
	uint8_t in[2 + sizeof(name16)];
	struct dfs_req q;
	size_t i;

	in[0] = 4;
	in[1] = 0;
	memcpy(in + 2, name16, sizeof(name16));
	ck_assert_int_eq(dfs_req_decode(in, sizeof(in), &q), 0);
	ck_assert_uint_eq(q.max_level, 4);
	ck_assert_uint_eq(q.name16_len, sizeof(name16) - 2);
	ck_assert(memcmp(q.name16, name16, q.name16_len) == 0);
	/* every truncation: the level missing is refused, a name cut at
	 * a unit is taken whole (no NUL: Samba's reading), at a byte odd */
	for (i = 0; i < sizeof(in); i++) {
		int rc = dfs_req_decode(in, i, &q);

		if (i < 2 || (i & 1))
			ck_assert_int_eq(rc, -EINVAL);
		else {
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_le(q.name16_len, i - 2);
		}
	}
	/* an embedded NUL ends the name */
	in[2 + 4] = 0;
	in[2 + 5] = 0;
	ck_assert_int_eq(dfs_req_decode(in, sizeof(in), &q), 0);
	ck_assert_uint_eq(q.name16_len, 4);
}
END_TEST

/* _EX with the name (its NUL counted, as Windows sends it) and a site */
static size_t
build_ex(uint8_t *b, uint16_t flags)
{
	size_t o = 0, d;

	b[o++] = 4; b[o++] = 0;
	b[o++] = (uint8_t)flags; b[o++] = 0;
	d = o;
	o += 4;
	b[o++] = sizeof(name16); b[o++] = 0;
	memcpy(b + o, name16, sizeof(name16));
	o += sizeof(name16);
	if (flags & DFS_REQ_FLAG_SITENAME) {
		b[o++] = 4; b[o++] = 0;
		b[o++] = 'x'; b[o++] = 0; b[o++] = 'y'; b[o++] = 0;
	}
	b[d] = (uint8_t)(o - d - 4);
	b[d + 1] = b[d + 2] = b[d + 3] = 0;
	return o;
}

START_TEST(test_req_ex)
{
	uint8_t in[64];
	struct dfs_req q;
	size_t n, i;

	n = build_ex(in, 0);
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), 0);
	ck_assert_uint_eq(q.name16_len, sizeof(name16) - 2);
	ck_assert_ptr_null(q.site16);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(dfs_req_ex_decode(in, i, &q), -EINVAL);
	n = build_ex(in, DFS_REQ_FLAG_SITENAME);
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), 0);
	ck_assert_uint_eq(q.site16_len, 4);
	ck_assert(memcmp(q.site16, "x\0y\0", 4) == 0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(dfs_req_ex_decode(in, i, &q), -EINVAL);
	/* RequestDataLength past the buffer */
	in[4] = 0xff;
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), -EINVAL);
	in[4] = 0; in[7] = 0x80;
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), -EINVAL);
	/* an odd RequestFileNameLength */
	n = build_ex(in, 0);
	in[8] = 3;
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), -EINVAL);
	/* a name length past RequestData */
	n = build_ex(in, 0);
	in[8] = 40;
	ck_assert_int_eq(dfs_req_ex_decode(in, n, &q), -EINVAL);
}
END_TEST

START_TEST(test_link_parse)
{
	struct dfs_target t[DFS_MAX_TARGETS];
	const char *s;
	char many[1024];
	int n, i;

	s = "msdfs:srv\\share";
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS), 1);
	ck_assert_uint_eq(t[0].len, 9);
	ck_assert(memcmp(t[0].p, "srv\\share", 9) == 0);
	/* Samba's forms: any case, slashes, leading separators, two */
	s = "MSDFS:\\\\a\\b,/c/d/e";
	ck_assert_int_eq(dfs_link_is(s, strlen(s)), 1);
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS), 2);
	ck_assert(t[0].len == 3 && memcmp(t[0].p, "a\\b", 3) == 0);
	ck_assert(t[1].len == 5 && memcmp(t[1].p, "c/d/e", 5) == 0);
	/* empty targets are skipped; none left is refused */
	s = "msdfs:,,a\\b,";
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS), 1);
	s = "msdfs:,\\,";
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS),
	    -EINVAL);
	s = "msdfs:";
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS),
	    -EINVAL);
	/* an ordinary symlink, a short one, a control character */
	s = "../etc/passwd";
	ck_assert_int_eq(dfs_link_is(s, strlen(s)), 0);
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS),
	    -EINVAL);
	ck_assert_int_eq(dfs_link_is("msdfs", 5), 0);
	s = "msdfs:a\\b\n";
	ck_assert_int_eq(dfs_link_parse(s, strlen(s), t, DFS_MAX_TARGETS),
	    -EINVAL);
	/* the length given, not the NUL, bounds it */
	ck_assert_int_eq(dfs_link_parse("msdfs:a\\b,c\\d", 9, t,
	    DFS_MAX_TARGETS), 1);
	ck_assert_uint_eq(t[0].len, 3);
	/* more targets than max: the first max */
	strcpy(many, "msdfs:");
	for (i = 0; i < 40; i++)
		strcat(many, "s\\x,");
	n = dfs_link_parse(many, strlen(many), t, DFS_MAX_TARGETS);
	ck_assert_int_eq(n, DFS_MAX_TARGETS);
}
END_TEST

static const uint8_t path16z[] = { '\\', 0, 'a', 0, 0, 0 };		/* "\a" */
static const uint8_t addr16z[] = { '\\', 0, 'b', 0, '\\', 0, 'c', 0, 0, 0 };

START_TEST(test_rsp_v3_known)
{
	struct dfs_target t[1] = { { "b/c", 3 } };
	struct dfs_rsp r = {
		.max_level = 3, .path_consumed = 4,
		.header_flags = DFS_HEADER_STORAGE_SERVERS,
		.server_type = DFS_SERVER_NON_ROOT, .ttl = 600,
		.path = "\\a", .path_len = 2, .t = t, .nt = 1,
	};
	uint8_t buf[256], want[8 + 34];
	struct wcur w;

	memset(want, 0, sizeof(want));
	want[0] = 4;			/* PathConsumed */
	want[2] = 1;			/* NumberOfReferrals */
	want[4] = 2;			/* StorageServers */
	want[8] = 3;			/* VersionNumber */
	want[10] = 34;			/* Size */
	want[16] = 0x58; want[17] = 2;	/* TimeToLive 600 */
	want[20] = 34;			/* DFSPathOffset: right after */
	want[22] = 34;			/* DFSAlternatePathOffset */
	want[24] = 34 + 6;		/* NetworkAddressOffset */
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(dfs_rsp_encode(&w, &r), 0);
	ck_assert_uint_eq(wcur_off(&w), sizeof(want) + 6 + 10);
	ck_assert(memcmp(buf, want, sizeof(want)) == 0);
	ck_assert(memcmp(buf + 42, path16z, 6) == 0);
	ck_assert(memcmp(buf + 48, addr16z, 10) == 0);	/* '/' as '\' */
}
END_TEST

START_TEST(test_rsp_versions)
{
	struct dfs_target t[2] = { { "b\\c", 3 }, { "d\\e", 3 } };
	struct dfs_rsp r = {
		.path_consumed = 4, .header_flags = 3,
		.server_type = DFS_SERVER_ROOT, .ttl = 600,
		.path = "\\a", .path_len = 2, .t = t, .nt = 2,
	};
	static const uint16_t lv[] = { 0, 1, 2, 3, 4, 5, 0xffff };
	uint8_t buf[256];
	struct wcur w;
	size_t i, es, e;

	for (i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		uint16_t ver = lv[i] >= 4 ? 4 : lv[i] == 3 ? 3 : 2;

		r.max_level = lv[i];
		es = ver == 2 ? 22 : 34;
		wcur_init(&w, buf, sizeof(buf));
		ck_assert_int_eq(dfs_rsp_encode(&w, &r), 0);
		ck_assert_uint_eq(buf[2], 2);
		for (e = 0; e < 2; e++) {
			const uint8_t *p = buf + 8 + e * es;
			size_t poff = ver == 2 ? 16 : 12;
			size_t a = p[poff + 4] | (size_t)p[poff + 5] << 8;
			size_t d = p[poff] | (size_t)p[poff + 1] << 8;

			ck_assert_uint_eq(p[0], ver);
			ck_assert_uint_eq(p[2], es);
			ck_assert_uint_eq(p[4], DFS_SERVER_ROOT);
			/* V4: the first entry starts the target set */
			ck_assert_uint_eq(p[6], ver == 4 && e == 0 ?
			    DFS_ENTRY_TARGET_SET_BOUNDARY : 0);
			ck_assert(memcmp(p + d, path16z, 6) == 0);
			ck_assert_uint_eq(p[a + 2], e == 0 ? 'b' : 'd');
			ck_assert(8 + e * es + a + 10 <= wcur_off(&w));
		}
	}
	/* every output size short of the whole: refused, nothing past it */
	r.max_level = 4;
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(dfs_rsp_encode(&w, &r), 0);
	e = wcur_off(&w);
	for (i = 0; i < e; i++) {
		wcur_init(&w, buf, i);
		ck_assert_int_ne(dfs_rsp_encode(&w, &r), 0);
	}
	/* no target, too many, bad UTF-8 */
	r.nt = 0;
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(dfs_rsp_encode(&w, &r), -EINVAL);
	r.nt = DFS_MAX_TARGETS + 1;
	ck_assert_int_eq(dfs_rsp_encode(&w, &r), -EINVAL);
	r.nt = 1;
	t[0].p = "\xff\xfe";
	t[0].len = 2;
	wcur_init(&w, buf, sizeof(buf));
	ck_assert_int_eq(dfs_rsp_encode(&w, &r), -EINVAL);
}
END_TEST

/* "srv" and "127.0.0.1" are this server for the tests */
static int
ours(void *arg, const char *host, size_t len)
{
	(void)arg;
	return (len == 3 && strncmp(host, "srv", 3) == 0) ||
	    (len == 9 && strncmp(host, "127.0.0.1", 9) == 0);
}

/* the CREATE side of DFS_OPERATIONS: what is a prefix, what is a name */
START_TEST(test_strip_prefix)
{
	static const struct {
		const char *in, *out;
		ntstatus_t st;
	} v[] = {
		{ "srv\\share\\dir\\f", "dir\\f", STATUS_SUCCESS },
		{ "\\\\srv\\share\\f", "f", STATUS_SUCCESS },
		{ "alias\\SHARE\\f", "f", STATUS_SUCCESS },	/* its share */
		{ "alias\\SHAR\\f", "alias\\SHAR\\f", STATUS_SUCCESS },
		{ "alias\\Homes\\f", "f", STATUS_SUCCESS },	/* its section */
		{ "alias\\sharex\\f", "alias\\sharex\\f", STATUS_SUCCESS },
		{ "127.0.0.1\\other\\f", "f", STATUS_SUCCESS },	/* ours */
		{ "srv\\share", "", STATUS_SUCCESS },
		{ "srv", "", STATUS_SUCCESS },
		{ "srvx", "srvx", STATUS_SUCCESS },
		{ "dir\\sub\\file", "dir\\sub\\file", STATUS_SUCCESS },
		{ "dir\\file", "dir\\file", STATUS_SUCCESS },
		{ "file", "file", STATUS_SUCCESS },
		{ "dir\\f:s", "dir\\f:s", STATUS_SUCCESS },
		{ "srv\\sh:are\\f", NULL, STATUS_OBJECT_NAME_INVALID },
		{ "", NULL, STATUS_INVALID_PARAMETER },
		{ "\\", "\\", STATUS_SUCCESS },	/* refused later: absolute */
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		strcpy(buf, v[i].in);
		ck_assert_msg(dfs_strip_prefix(buf, "share", "homes", ours,
		    NULL) ==
		    v[i].st, "%s", v[i].in);
		if (v[i].out != NULL)
			ck_assert_str_eq(buf, v[i].out);
	}
	/* no tree name, no server names: nothing is a prefix */
	strcpy(buf, "srv\\share\\f");
	ck_assert_uint_eq(dfs_strip_prefix(buf, NULL, NULL, NULL, NULL),
	    STATUS_SUCCESS);
	ck_assert_str_eq(buf, "srv\\share\\f");
}
END_TEST

static Suite *
dfs_suite(void)
{
	Suite *s = suite_create("dfs");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_req_plain);
	tcase_add_test(tc, test_req_ex);
	tcase_add_test(tc, test_link_parse);
	tcase_add_test(tc, test_rsp_v3_known);
	tcase_add_test(tc, test_rsp_versions);
	tcase_add_test(tc, test_strip_prefix);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dfs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
