/*
 * Unit tests for the file commands' body decoders: the CREATE context
 * chain (proto/create_ctx.c), FILE_FULL_EA_INFORMATION lists, rename/link
 * information, FILE_ZERO_DATA_INFORMATION, the copychunk table and
 * SMB2_DUPLICATE_EXTENTS_DATA (proto/fscc.c).  Each valid
 * message is also fed in every truncation, which must be refused.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/create_ctx.h"
#include "proto/fscc.h"

/* Appends one context at *len of buf (8-aligned); returns its offset. */
static size_t
put_ctx(uint8_t *buf, size_t *len, const char *name, const void *data,
    uint32_t dlen)
{
	size_t at = *len, nlen = strlen(name), doff = 0, end;

	memset(buf + at, 0, 16);
	le16_put(buf + at + 4, 16);
	le16_put(buf + at + 6, (uint16_t)nlen);
	memcpy(buf + at + 16, name, nlen);
	end = 16 + nlen;
	if (dlen > 0) {
		doff = (end + 7) & ~(size_t)7;
		memset(buf + at + end, 0, doff - end);
		memcpy(buf + at + doff, data, dlen);
		end = doff + dlen;
	}
	le16_put(buf + at + 10, (uint16_t)doff);
	le32_put(buf + at + 12, dlen);
	end = (end + 7) & ~(size_t)7;
	*len = at + end;
	return at;
}

static void
link_ctx(uint8_t *buf, size_t at, size_t next_at)
{
	le32_put(buf + at, (uint32_t)(next_at - at));
}

/* Walks a chain; the number of contexts, or -1 when refused. */
static int
walk(const uint8_t *buf, size_t len)
{
	struct create_ctx_item it;
	size_t pos = 0;
	int n = 0;

	while (n < CREATE_CTX_MAX) {
		if (create_ctx_next(buf, len, &pos, &it) != 0)
			return -1;
		n++;
		if (it.last)
			break;
	}
	return n;
}

START_TEST(test_ctx_chain)
{
	uint8_t buf[256], alsi[8] = { 0, 0x10 };
	struct create_ctx_item it;
	size_t len = 0, a, b, c, pos = 0, cut;

	a = put_ctx(buf, &len, "MxAc", NULL, 0);
	b = put_ctx(buf, &len, "AlSi", alsi, 8);
	c = put_ctx(buf, &len, "LongerName", "xy", 2);
	link_ctx(buf, a, b);
	link_ctx(buf, b, c);
	ck_assert_int_eq(walk(buf, len), 3);

	ck_assert_int_eq(create_ctx_next(buf, len, &pos, &it), 0);
	ck_assert_int_eq(it.name_len, 4);
	ck_assert_int_eq(memcmp(it.name, "MxAc", 4), 0);
	ck_assert_ptr_null(it.data);
	ck_assert_int_eq(it.last, 0);
	ck_assert_uint_eq(pos, b);
	ck_assert_int_eq(create_ctx_next(buf, len, &pos, &it), 0);
	ck_assert_uint_eq(it.data_len, 8);
	ck_assert_uint_eq(le64_get(it.data), 4096);
	ck_assert_int_eq(create_ctx_next(buf, len, &pos, &it), 0);
	ck_assert_int_eq(it.name_len, 10);
	ck_assert_int_eq(it.last, 1);
	ck_assert_int_eq(memcmp(it.data, "xy", 2), 0);

	/*
	 * Every truncation of the chain is refused, down to the last
	 * context's data (at 32, 2 bytes); only its padding may go.
	 */
	for (cut = 0; cut < c + 34; cut++)
		ck_assert_msg(walk(buf, cut) == -1, "cut at %zu accepted", cut);
	ck_assert_int_eq(walk(buf, c + 34), 3);
}
END_TEST

START_TEST(test_ctx_malformed)
{
	uint8_t buf[128], save[128];
	size_t len = 0, a, b;

	a = put_ctx(buf, &len, "MxAc", NULL, 0);
	b = put_ctx(buf, &len, "QFid", NULL, 0);
	link_ctx(buf, a, b);
	memcpy(save, buf, len);
	ck_assert_int_eq(walk(buf, len), 2);
	/* Next not 8-aligned, smaller than a header, past the end */
	le32_put(buf, 12);
	ck_assert_int_eq(walk(buf, len), -1);
	le32_put(buf, 8);
	ck_assert_int_eq(walk(buf, len), -1);
	le32_put(buf, (uint32_t)len + 8);
	ck_assert_int_eq(walk(buf, len), -1);
	/* a name shorter than a tag; a name or data outside the chain */
	memcpy(buf, save, len);
	le16_put(buf + 6, 3);
	ck_assert_int_eq(walk(buf, len), -1);
	memcpy(buf, save, len);
	le16_put(buf + 4, (uint16_t)(len - 2));
	ck_assert_int_eq(walk(buf, len), -1);
	memcpy(buf, save, len);
	le16_put(buf + b + 10, 16);
	le32_put(buf + b + 12, (uint32_t)len);
	ck_assert_int_eq(walk(buf, len), -1);
	/* an empty chain is not a context */
	ck_assert_int_eq(walk(buf, 0), -1);
}
END_TEST

START_TEST(test_ea_list)
{
	uint8_t buf[64];
	struct fscc_ea ea;
	size_t pos = 0, len, cut;
	int done;

	/* "user.a" = "val", then "B" = "" (removes) */
	memset(buf, 0, sizeof(buf));
	le32_put(buf, 20);
	buf[5] = 6;
	le16_put(buf + 6, 3);
	memcpy(buf + 8, "user.a\0val", 10);
	buf[20 + 5] = 1;
	memcpy(buf + 28, "B", 2);
	len = 30;
	ck_assert_int_eq(fscc_ea_next(buf, len, &pos, &ea), 0);
	ck_assert_int_eq(ea.name_len, 6);
	ck_assert_int_eq(memcmp(ea.name, "user.a", 6), 0);
	ck_assert_int_eq(ea.value_len, 3);
	ck_assert_int_eq(memcmp(ea.value, "val", 3), 0);
	ck_assert_int_eq(ea.last, 0);
	ck_assert_uint_eq(pos, 20);
	ck_assert_int_eq(fscc_ea_next(buf, len, &pos, &ea), 0);
	ck_assert_int_eq(ea.name_len, 1);
	ck_assert_int_eq(ea.value_len, 0);
	ck_assert_int_eq(ea.last, 1);

	/* no truncation is a whole list (a walk never reaches its end) */
	for (cut = 0; cut < len; cut++) {
		pos = 0;
		done = 0;
		while (fscc_ea_next(buf, cut, &pos, &ea) == 0)
			if (ea.last) {
				done = 1;
				break;
			}
		ck_assert_msg(!done, "truncation at %zu accepted", cut);
	}
	/* NextEntryOffset not 4-aligned */
	le32_put(buf, 18);
	pos = 0;
	ck_assert_int_eq(fscc_ea_next(buf, len, &pos, &ea), -1);
}
END_TEST

START_TEST(test_get_ea_list)
{
	uint8_t buf[32], save[32];
	struct fscc_get_ea g;
	size_t pos = 0, len, cut;
	int done;

	/* "kcOne", then "B" */
	memset(buf, 0, sizeof(buf));
	le32_put(buf, 12);
	buf[4] = 5;
	memcpy(buf + 5, "kcOne", 6);
	buf[12 + 4] = 1;
	memcpy(buf + 12 + 5, "B", 2);
	len = 19;
	ck_assert_int_eq(fscc_get_ea_next(buf, len, &pos, &g), 0);
	ck_assert_int_eq(g.name_len, 5);
	ck_assert_int_eq(memcmp(g.name, "kcOne", 5), 0);
	ck_assert_int_eq(g.last, 0);
	ck_assert_uint_eq(pos, 12);
	ck_assert_int_eq(fscc_get_ea_next(buf, len, &pos, &g), 0);
	ck_assert_int_eq(g.name_len, 1);
	ck_assert_int_eq(g.name[0], 'B');
	ck_assert_int_eq(g.last, 1);

	/* no truncation is a whole list (the last name's NUL included) */
	for (cut = 0; cut < len; cut++) {
		pos = 0;
		done = 0;
		while (fscc_get_ea_next(buf, cut, &pos, &g) == 0)
			if (g.last) {
				done = 1;
				break;
			}
		ck_assert_msg(!done, "truncation at %zu accepted", cut);
	}
	memcpy(save, buf, sizeof(buf));
	/* NextEntryOffset not 4-aligned, or past the end */
	le32_put(buf, 13);
	pos = 0;
	ck_assert_int_eq(fscc_get_ea_next(buf, len, &pos, &g), -1);
	le32_put(buf, 20);
	pos = 0;
	ck_assert_int_eq(fscc_get_ea_next(buf, len, &pos, &g), -1);
	/* a name longer than the entry */
	memcpy(buf, save, sizeof(buf));
	buf[12 + 4] = 3;
	pos = 12;
	ck_assert_int_eq(fscc_get_ea_next(buf, len, &pos, &g), -1);
}
END_TEST

START_TEST(test_rename_and_zero)
{
	uint8_t buf[32];
	const uint8_t *n16;
	uint32_t nlen;
	uint64_t off, end;
	int replace;
	size_t cut;
	struct cur c;

	memset(buf, 0, sizeof(buf));
	buf[0] = 1;
	le32_put(buf + 16, 4);
	memcpy(buf + 20, "a\0b\0", 4);
	cur_init(&c, buf, 24);
	ck_assert_int_eq(fscc_rename_decode(&c, &replace, &n16, &nlen), 0);
	ck_assert_int_eq(replace, 1);
	ck_assert_uint_eq(nlen, 4);
	ck_assert_ptr_eq(n16, buf + 20);
	for (cut = 0; cut < 24; cut++) {
		cur_init(&c, buf, cut);
		ck_assert_int_eq(fscc_rename_decode(&c, &replace, &n16,
		    &nlen), -1);
	}
	le32_put(buf + 16, 0);		/* an empty name */
	cur_init(&c, buf, 24);
	ck_assert_int_eq(fscc_rename_decode(&c, &replace, &n16, &nlen), -1);

	le64_put(buf, 4096);
	le64_put(buf + 8, 8192);
	cur_init(&c, buf, 16);
	ck_assert_int_eq(fscc_zero_data_decode(&c, &off, &end), 0);
	ck_assert_uint_eq(off, 4096);
	ck_assert_uint_eq(end, 8192);
	for (cut = 0; cut < 16; cut++) {
		cur_init(&c, buf, cut);
		ck_assert_int_eq(fscc_zero_data_decode(&c, &off, &end), -1);
	}
}
END_TEST

/* SRV_COPYCHUNK_COPY: key, count, then the chunk table; every truncation */
START_TEST(test_copychunk)
{
	uint8_t buf[24 + 8 + 2 * 24];
	struct fscc_copychunk cc;
	struct fscc_chunk ch;
	size_t cut;
	struct cur c;

	memset(buf, 0, sizeof(buf));
	memset(buf, 0xAB, 24);
	le32_put(buf + 24, 2);
	le64_put(buf + 32, 4096);
	le64_put(buf + 40, 8192);
	le32_put(buf + 48, 512);
	le64_put(buf + 56, 1);
	le64_put(buf + 64, 2);
	le32_put(buf + 72, 3);
	cur_init(&c, buf, sizeof(buf));
	ck_assert_int_eq(fscc_copychunk_decode(&c, &cc), 0);
	ck_assert_ptr_eq(cc.key, buf);
	ck_assert_uint_eq(cc.count, 2);
	ck_assert_int_eq(fscc_copychunk_get(&cc, 0, &ch), 0);
	ck_assert_uint_eq(ch.src_off, 4096);
	ck_assert_uint_eq(ch.dst_off, 8192);
	ck_assert_uint_eq(ch.len, 512);
	ck_assert_int_eq(fscc_copychunk_get(&cc, 1, &ch), 0);
	ck_assert_uint_eq(ch.src_off, 1);
	ck_assert_uint_eq(ch.dst_off, 2);
	ck_assert_uint_eq(ch.len, 3);
	ck_assert_int_eq(fscc_copychunk_get(&cc, 2, &ch), -1);
	for (cut = 0; cut < sizeof(buf); cut++) {
		cur_init(&c, buf, cut);
		/* short fixed part -1, short table -2 */
		ck_assert_int_eq(fscc_copychunk_decode(&c, &cc),
		    cut < 32 ? -1 : -2);
	}
	/* a count no input can hold (24 * 2^32 - 24 bytes) */
	le32_put(buf + 24, 0xFFFFFFFFu);
	cur_init(&c, buf, sizeof(buf));
	ck_assert_int_eq(fscc_copychunk_decode(&c, &cc), -2);
	ck_assert_uint_eq(cc.count, 0xFFFFFFFFu);
	/* no chunks at all is well formed */
	le32_put(buf + 24, 0);
	cur_init(&c, buf, 32);
	ck_assert_int_eq(fscc_copychunk_decode(&c, &cc), 0);
	ck_assert_int_eq(fscc_copychunk_get(&cc, 0, &ch), -1);
}
END_TEST

/* SMB2_DUPLICATE_EXTENTS_DATA: each field in place, every truncation refused. */
START_TEST(test_dup_extents)
{
	uint8_t buf[FSCC_DUP_EXTENTS_LEN + 8];
	struct fscc_dup_extents d;
	size_t cut;
	struct cur c;

	memset(buf, 0xEE, sizeof(buf));
	le64_put(buf, 0x1122334455667788ull);
	le64_put(buf + 8, 0x99AABBCCDDEEFF00ull);
	le64_put(buf + 16, 4096);
	le64_put(buf + 24, 8192);
	le64_put(buf + 32, 0x8000000000000000ull);	/* negative: as given */
	cur_init(&c, buf, FSCC_DUP_EXTENTS_LEN);
	ck_assert_int_eq(fscc_dup_extents_decode(&c, &d), 0);
	ck_assert_uint_eq(d.fid_persistent, 0x1122334455667788ull);
	ck_assert_uint_eq(d.fid_volatile, 0x99AABBCCDDEEFF00ull);
	ck_assert_uint_eq(d.src_off, 4096);
	ck_assert_uint_eq(d.dst_off, 8192);
	ck_assert_uint_eq(d.len, 0x8000000000000000ull);
	ck_assert_uint_eq(cur_left(&c), 0);
	/* bytes past the structure are the caller's business */
	cur_init(&c, buf, sizeof(buf));
	ck_assert_int_eq(fscc_dup_extents_decode(&c, &d), 0);
	ck_assert_uint_eq(cur_left(&c), 8);
	for (cut = 0; cut < FSCC_DUP_EXTENTS_LEN; cut++) {
		cur_init(&c, buf, cut);
		ck_assert_int_eq(fscc_dup_extents_decode(&c, &d), -1);
	}
}
END_TEST

/* MS-SMB2 2.2.31.3: Timeout, Reserved; every truncation refused. */
START_TEST(test_resiliency)
{
	uint8_t buf[FSCC_RESILIENCY_LEN + 4];
	uint32_t t;
	struct cur c;
	size_t cut;

	memset(buf, 0xEE, sizeof(buf));
	le32_put(buf, 1000);
	cur_init(&c, buf, FSCC_RESILIENCY_LEN);
	ck_assert_int_eq(fscc_resiliency_decode(&c, &t), 0);
	ck_assert_uint_eq(t, 1000);
	ck_assert_uint_eq(cur_left(&c), 0);
	/* the reserved bytes are ignored; a larger input is accepted */
	cur_init(&c, buf, sizeof(buf));
	ck_assert_int_eq(fscc_resiliency_decode(&c, &t), 0);
	ck_assert_uint_eq(cur_left(&c), 4);
	le32_put(buf, 0xFFFFFFFFu);
	cur_init(&c, buf, FSCC_RESILIENCY_LEN);
	ck_assert_int_eq(fscc_resiliency_decode(&c, &t), 0);
	ck_assert_uint_eq(t, 0xFFFFFFFFu);	/* the caller caps it */
	for (cut = 0; cut < FSCC_RESILIENCY_LEN; cut++) {
		cur_init(&c, buf, cut);
		ck_assert_int_eq(fscc_resiliency_decode(&c, &t), -1);
	}
}
END_TEST

static Suite *
create_ctx_suite(void)
{
	Suite *s = suite_create("create_ctx");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ctx_chain);
	tcase_add_test(tc, test_ctx_malformed);
	tcase_add_test(tc, test_ea_list);
	tcase_add_test(tc, test_get_ea_list);
	tcase_add_test(tc, test_rename_and_zero);
	tcase_add_test(tc, test_copychunk);
	tcase_add_test(tc, test_dup_extents);
	tcase_add_test(tc, test_resiliency);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(create_ctx_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
