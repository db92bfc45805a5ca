/*
 * The samr pipe (worker/pipe_samr*.c) and its account list
 * (worker/samr_db.c) called with request stubs built here: connect,
 * domains, enumerations (paged), look-ups, user and group information
 * and display information, each answer decoded field by field;
 * anonymous and guest refused; forged, foreign and wrongly typed handles
 * a context-mismatch fault; rights a handle was not opened with refused;
 * every truncation of each request a fault; alias memberships (none).
 * The account list itself: t/unit/check_samr_db.c.
 * The passdb's list is root (uid 0) and a uid no account has; root's
 * group (gid 0) is the group every test machine has.
 */
#include <check.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/ndr.h"
#include "proto/ntstatus.h"
#include "worker/pipe.h"
#include "worker/samr_db.h"
#include "testlib.h"

#define OP_CONNECT	0
#define OP_CLOSE	1
#define OP_LOOKUP_DOM	5
#define OP_ENUM_DOMS	6
#define OP_OPEN_DOM	7
#define OP_QUERY_DOM	8
#define OP_ENUM_GROUPS	11
#define OP_ENUM_USERS	13
#define OP_ENUM_ALIASES	15
#define OP_ALIAS_MEMBERSHIP	16
#define OP_LOOKUP_NAMES	17
#define OP_LOOKUP_RIDS	18
#define OP_OPEN_GROUP	19
#define OP_QUERY_GROUP	20
#define OP_OPEN_ALIAS	27
#define OP_MEMBERS_IN_ALIAS	33
#define OP_OPEN_USER	34
#define OP_QUERY_USER	36
#define OP_USER_GROUPS	39
#define OP_DISPLAY	40
#define OP_DISPLAY3	51
#define OP_CONNECT2	57
#define OP_CONNECT5	64
#define OP_SET_USER	37	/* one that would write: not served */

#define MAXIMUM_ALLOWED	0x02000000u
#define STATUS_MORE	0x00000105u
#define STATUS_NO_SUCH_DOMAIN	0xC00000DFu
#define CTX_MISMATCH	0x1C00001Au
#define GHOST_UID	4000000u

static struct conf test_conf = {
	.netbios_name = "SAMRTEST", .workgroup = "WG",
};

static const struct pipe_env env_user = { &test_conf, "alice", 0, 0, 0, NULL, 0 };
static const struct pipe_env env_other = { &test_conf, "alice", 0, 0, 0, NULL, 0 };
static const struct pipe_env env_anon = { &test_conf, "", 1, 0, 0, NULL, 0 };
static const struct pipe_env env_guest = { &test_conf, "nobody", 0, 1, 0, NULL, 0 };

static uint8_t out[65536];
static size_t outlen;
static uint8_t hconn[20], hdom[20], hgdom[20], huser[20];

/* The account list: root and a uid without an account (listed, unnamed
 * by NSS), in reverse order and with root twice (one entry kept). */
static void
db_load(void)
{
	uint8_t buf[64];
	struct wcur w;
	int i;

	wcur_init(&w, buf, sizeof(buf));
	wcur_le32(&w, 3);
	wcur_le32(&w, GHOST_UID);
	wcur_le32(&w, 1);			/* disabled */
	wcur_u8(&w, 5);
	wcur_bytes(&w, "ghost", 5);
	for (i = 0; i < 2; i++) {
		wcur_le32(&w, 0);
		wcur_le32(&w, 0);
		wcur_u8(&w, 4);
		wcur_bytes(&w, "root", 4);
	}
	ck_assert_int_eq(samr_db_set(buf, wcur_off(&w)), 0);
}

static uint32_t
call(const struct pipe_env *env, uint16_t op, const uint8_t *stub, size_t len)
{
	struct ndr_w w;
	struct cur c;
	uint8_t *copy = malloc(len ? len : 1);	/* exact size: ASan sees overreads */
	uint32_t f;

	memcpy(copy, stub, len);
	cur_init(&c, copy, len);
	ndr_w_init(&w, out, sizeof(out));
	f = pipe_iface_samr.call(env, op, &c, &w);
	ck_assert_int_eq(w.w.err, 0);
	free(copy);
	outlen = wcur_off(&w.w);
	return f;
}

/* The status at the end of the answer. */
static uint32_t
status(void)
{
	ck_assert_uint_ge(outlen, 4);
	return le32_get(out + outlen - 4);
}

static size_t
connect5_stub(uint8_t *stub, size_t cap, uint32_t access)
{
	struct ndr_w w;

	ndr_w_init(&w, stub, cap);
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\\\127.0.0.1");
	ndr_put_u32(&w, access);
	ndr_put_u32(&w, 1);			/* InVersion */
	ndr_put_u32(&w, 1);			/* union switch */
	ndr_put_u32(&w, 3);			/* ClientVersion */
	ndr_put_u32(&w, 0);
	return wcur_off(&w.w);
}

static void
do_connect(const struct pipe_env *env, uint32_t access, uint8_t *h)
{
	uint8_t stub[128];
	size_t len = connect5_stub(stub, sizeof(stub), access);

	ck_assert_uint_eq(call(env, OP_CONNECT5, stub, len), 0);
	ck_assert_uint_eq(outlen, 16 + 20 + 4);
	ck_assert_uint_eq(le32_get(out), 1);	/* OutVersion */
	ck_assert_uint_eq(le32_get(out + 4), 1);
	ck_assert_uint_eq(le32_get(out + 8), 3);	/* SAM_REVISION_3 */
	memcpy(h, out + 16, 20);
}

static size_t
open_domain_stub(uint8_t *stub, size_t cap, const uint8_t *h, uint32_t access,
    uint32_t sub0, unsigned nsub)
{
	struct ndr_w w;

	ndr_w_init(&w, stub, cap);
	wcur_bytes(&w.w, h, 20);
	ndr_put_u32(&w, access);
	ndr_put_u32(&w, nsub);
	wcur_u8(&w.w, 1);
	wcur_u8(&w.w, (uint8_t)nsub);
	wcur_zero(&w.w, 5);
	wcur_u8(&w.w, sub0 == 32 ? 5 : 22);
	ndr_put_u32(&w, sub0);
	if (nsub > 1)
		ndr_put_u32(&w, 1);
	return wcur_off(&w.w);
}

static void
open_all(void)
{
	uint8_t stub[128];
	size_t len;

	db_load();
	do_connect(&env_user, MAXIMUM_ALLOWED, hconn);
	len = open_domain_stub(stub, sizeof(stub), hconn, MAXIMUM_ALLOWED, 1, 1);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, len), 0);
	ck_assert_uint_eq(outlen, 24);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(hdom, out, 20);
	len = open_domain_stub(stub, sizeof(stub), hconn, MAXIMUM_ALLOWED, 2, 1);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, len), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(hgdom, out, 20);
	memcpy(stub, hdom, 20);
	le32_put(stub + 20, MAXIMUM_ALLOWED);
	le32_put(stub + 24, 0);			/* RID 0: root */
	ck_assert_uint_eq(call(&env_user, OP_OPEN_USER, stub, 28), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(huser, out, 20);
}

/* An RPC_UNICODE_STRING header at c; its length in bytes, ref in *ref. */
static uint16_t
ustr_head(struct cur *c, uint32_t *ref)
{
	uint16_t len;

	ndr_align(c, 4);
	len = ndr_u16(c);
	(void)ndr_u16(c);
	*ref = ndr_ptr(c);
	return len;
}

static void
ustr_body(struct cur *c, uint16_t len, char *s, size_t cap)
{
	ck_assert_uint_lt(ndr_ustring_body(c, len, len, s, cap), cap);
}

START_TEST(test_connect)
{
	uint8_t stub[128];
	size_t len;

	db_load();
	do_connect(&env_user, MAXIMUM_ALLOWED, hconn);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	ck_assert_uint_eq(le32_get(hconn), 1);	/* handle_type: connect */
	do_connect(&env_anon, MAXIMUM_ALLOWED, hconn);
	ck_assert_uint_eq(status(), STATUS_ACCESS_DENIED);
	do_connect(&env_guest, MAXIMUM_ALLOWED, hconn);
	ck_assert_uint_eq(status(), STATUS_ACCESS_DENIED);
	/* an undefined access bit: refused, as Windows does */
	do_connect(&env_user, 0x40, hconn);
	ck_assert_uint_eq(status(), STATUS_ACCESS_DENIED);
	/* SamrConnect (0): a single wchar_t server name */
	len = 12;
	le32_put(stub, 0x20000);
	le16_put(stub + 4, '\\');
	le16_put(stub + 6, 0);
	le32_put(stub + 8, MAXIMUM_ALLOWED);
	ck_assert_uint_eq(call(&env_user, OP_CONNECT, stub, len), 0);
	ck_assert_uint_eq(outlen, 24);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* SamrConnect2 (57): no server name */
	le32_put(stub, 0);
	le32_put(stub + 4, 0x30);
	ck_assert_uint_eq(call(&env_user, OP_CONNECT2, stub, 8), 0);
	ck_assert_uint_eq(outlen, 24);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* Close: handle zeroed */
	memcpy(stub, out, 20);
	ck_assert_uint_eq(call(&env_user, OP_CLOSE, stub, 20), 0);
	ck_assert_uint_eq(outlen, 24);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	ck_assert_uint_eq(le32_get(out + 4), 0);
}
END_TEST

START_TEST(test_domains)
{
	uint8_t stub[256];
	struct ndr_w w;
	struct cur c;
	char name[64];
	const char *want[] = { "SAMRTEST", "Builtin", "Unix Group" };
	uint32_t ref, i;
	uint16_t l[3];

	open_all();
	/* EnumDomains: all three at once */
	ndr_w_init(&w, stub, sizeof(stub));
	wcur_bytes(&w.w, hconn, 20);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0xffff);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_DOMS, stub, wcur_off(&w.w)), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_eq(ndr_u32(&c), 3);	/* resume */
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_uint_eq(ndr_u32(&c), i);
		l[i] = ustr_head(&c, &ref);
		ck_assert_uint_ne(ref, 0);
	}
	for (i = 0; i < 3; i++) {
		ustr_body(&c, l[i], name, sizeof(name));
		ck_assert_str_eq(name, want[i]);
	}
	ck_assert_uint_eq(ndr_u32(&c), 3);
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	ck_assert_uint_eq(cur_left(&c), 0);

	/* LookupDomain: names (any case, the workgroup too), unknown, NULL */
	for (i = 0; i < 5; i++) {
		const char *n[] = { "samrtest", "BUILTIN", "unix group", "wg",
		    "nosuch" };

		ndr_w_init(&w, stub, sizeof(stub));
		wcur_bytes(&w.w, hconn, 20);
		ndr_put_ustring(&w, n[i]);
		ndr_put_ustring_body(&w, n[i]);
		ck_assert_uint_eq(call(&env_user, OP_LOOKUP_DOM, stub,
		    wcur_off(&w.w)), 0);
		cur_init(&c, out, outlen);
		if (i == 4) {
			ck_assert_uint_eq(ndr_ptr(&c), 0);
			ck_assert_uint_eq(ndr_u32(&c), STATUS_NO_SUCH_DOMAIN);
			continue;
		}
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		ck_assert_uint_eq(ndr_u32(&c), i == 1 ? 1 : 1);	/* count */
		ck_assert_uint_eq(cur_u8(&c), 1);
		ck_assert_uint_eq(cur_u8(&c), 1);
		cur_skip(&c, 5);
		ck_assert_uint_eq(cur_u8(&c), i == 1 ? 5 : 22);
		ck_assert_uint_eq(ndr_u32(&c), i == 1 ? 32 : i == 2 ? 2 : 1);
		ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
		ck_assert_uint_eq(cur_left(&c), 0);
	}
	ndr_w_init(&w, stub, sizeof(stub));
	wcur_bytes(&w.w, hconn, 20);
	ndr_put_ustring(&w, NULL);
	ck_assert_uint_eq(call(&env_user, OP_LOOKUP_DOM, stub, wcur_off(&w.w)), 0);
	ck_assert_uint_eq(status(), STATUS_INVALID_PARAMETER);

	/* OpenDomain of an unknown SID */
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, open_domain_stub(
	    stub, sizeof(stub), hconn, MAXIMUM_ALLOWED, 3, 1)), 0);
	ck_assert_uint_eq(status(), STATUS_NO_SUCH_DOMAIN);
	ck_assert_uint_eq(le32_get(out), 0);

	/* QueryDomainInfo level 2: the counts; an unknown level */
	memcpy(stub, hdom, 20);
	le16_put(stub + 20, 2);
	ck_assert_uint_eq(call(&env_user, OP_QUERY_DOM, stub, 22), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u16(&c), 2);
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* ForceLogoff: never */
	ck_assert_uint_eq(ndr_u32(&c), 0x80000000u);
	(void)ustr_head(&c, &ref);
	l[0] = ustr_head(&c, &ref);
	(void)ustr_head(&c, &ref);
	cur_skip(&c, 12);			/* sequence, state */
	ck_assert_uint_eq(ndr_u32(&c), 3);	/* role */
	(void)ndr_u32(&c);
	ck_assert_uint_eq(ndr_u32(&c), 2);	/* users: root, ghost */
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* groups */
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* aliases */
	cur_skip(&c, 12);			/* the empty OEM string */
	ustr_body(&c, l[0], name, sizeof(name));
	ck_assert_str_eq(name, "SAMRTEST");
	cur_skip(&c, 12);
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	ck_assert_uint_eq(cur_left(&c), 0);
	for (i = 1; i <= 13; i++) {
		le16_put(stub + 20, (uint16_t)i);
		ck_assert_uint_eq(call(&env_user, OP_QUERY_DOM, stub, 22), 0);
		ck_assert_uint_eq(status(), i == 10 ? STATUS_INVALID_INFO_CLASS :
		    STATUS_SUCCESS);
	}
}
END_TEST

/* EnumerateUsers from resume with maxlen; the count, names in names[]. */
static uint32_t
enum_users(uint32_t *resume, uint32_t maxlen, char names[][64],
    uint32_t *rids, uint32_t *st)
{
	uint8_t stub[64];
	struct cur c;
	uint32_t n, i, ref;
	uint16_t l[8];

	memcpy(stub, hdom, 20);
	le32_put(stub + 20, *resume);
	le32_put(stub + 24, 0);			/* no filter */
	le32_put(stub + 28, maxlen);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_USERS, stub, 32), 0);
	cur_init(&c, out, outlen);
	*resume = ndr_u32(&c);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	n = ndr_u32(&c);
	ck_assert_uint_le(n, 8);
	ck_assert_uint_eq(ndr_ptr(&c) != 0, n > 0);
	if (n > 0)
		ck_assert_uint_eq(ndr_u32(&c), n);
	for (i = 0; i < n; i++) {
		rids[i] = ndr_u32(&c);
		l[i] = ustr_head(&c, &ref);
	}
	for (i = 0; i < n; i++)
		ustr_body(&c, l[i], names[i], 64);
	ck_assert_uint_eq(ndr_u32(&c), n);
	*st = ndr_u32(&c);
	ck_assert_uint_eq(cur_left(&c), 0);
	return n;
}

START_TEST(test_enum_users)
{
	char names[8][64];
	uint32_t rids[8], resume = 0, st, n;

	open_all();
	n = enum_users(&resume, 0xffff, names, rids, &st);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(st, STATUS_SUCCESS);
	ck_assert_str_eq(names[0], "root");
	ck_assert_uint_eq(rids[0], 0);
	ck_assert_str_eq(names[1], "ghost");
	ck_assert_uint_eq(rids[1], GHOST_UID);
	/* one at a time */
	resume = 0;
	ck_assert_uint_eq(enum_users(&resume, 1, names, rids, &st), 1);
	ck_assert_uint_eq(st, STATUS_MORE);
	ck_assert_str_eq(names[0], "root");
	ck_assert_uint_eq(enum_users(&resume, 1, names, rids, &st), 1);
	ck_assert_uint_eq(st, STATUS_SUCCESS);
	ck_assert_str_eq(names[0], "ghost");
	ck_assert_uint_eq(enum_users(&resume, 1, names, rids, &st), 0);
	ck_assert_uint_eq(st, STATUS_SUCCESS);
}
END_TEST

START_TEST(test_groups_aliases)
{
	uint8_t stub[64];
	struct cur c;
	char name[64];
	struct group *g = getgrgid(0);
	uint32_t n, ref, i;
	uint16_t l;

	ck_assert_ptr_nonnull(g);
	open_all();
	/* the account domain has no groups; "Unix Group" has root's */
	for (i = 0; i < 2; i++) {
		memcpy(stub, i == 0 ? hdom : hgdom, 20);
		le32_put(stub + 20, 0);
		le32_put(stub + 24, 0xffff);
		ck_assert_uint_eq(call(&env_user, OP_ENUM_GROUPS, stub, 28), 0);
		cur_init(&c, out, outlen);
		(void)ndr_u32(&c);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		n = ndr_u32(&c);
		ck_assert_uint_eq(n, i);
		if (n == 0)
			continue;
		(void)ndr_ptr(&c);
		ck_assert_uint_eq(ndr_u32(&c), 1);
		ck_assert_uint_eq(ndr_u32(&c), 0);	/* gid 0 */
		l = ustr_head(&c, &ref);
		ustr_body(&c, l, name, sizeof(name));
		ck_assert_str_eq(name, g->gr_name);
	}
	/* aliases: none in the account domain */
	memcpy(stub, hdom, 20);
	le32_put(stub + 20, 0);
	le32_put(stub + 24, 0xffff);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_ALIASES, stub, 28), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	ck_assert_uint_eq(le32_get(out + 8), 0);
	/* OpenGroup 0 in Unix Group, QueryGroupInfo level 2 (name) */
	memcpy(stub, hgdom, 20);
	le32_put(stub + 20, MAXIMUM_ALLOWED);
	le32_put(stub + 24, 0);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_GROUP, stub, 28), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(stub, out, 20);
	le16_put(stub + 20, 2);
	ck_assert_uint_eq(call(&env_user, OP_QUERY_GROUP, stub, 22), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u16(&c), 2);
	l = ustr_head(&c, &ref);
	ustr_body(&c, l, name, sizeof(name));
	ck_assert_str_eq(name, g->gr_name);
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	/* a group in the account domain: no such */
	memcpy(stub, hdom, 20);
	le32_put(stub + 20, MAXIMUM_ALLOWED);
	le32_put(stub + 24, 0);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_GROUP, stub, 28), 0);
	ck_assert_uint_eq(status(), 0xC0000066u);
}
END_TEST

START_TEST(test_lookups)
{
	const char *n[] = { "ROOT", "ghost", "nosuch" };
	uint8_t stub[256];
	struct ndr_w w;
	struct cur c;
	char name[64];
	uint32_t i, ref;
	uint16_t l[3];

	open_all();
	ndr_w_init(&w, stub, sizeof(stub));
	wcur_bytes(&w.w, hdom, 20);
	ndr_put_u32(&w, 3);
	ndr_put_u32(&w, 1000);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 3);
	for (i = 0; i < 3; i++)
		ndr_put_ustring(&w, n[i]);
	for (i = 0; i < 3; i++)
		ndr_put_ustring_body(&w, n[i]);
	ck_assert_uint_eq(call(&env_user, OP_LOOKUP_NAMES, stub,
	    wcur_off(&w.w)), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	ck_assert_uint_eq(ndr_u32(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), GHOST_UID);
	ck_assert_uint_eq(ndr_u32(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	ck_assert_uint_eq(ndr_u32(&c), 1);	/* user */
	ck_assert_uint_eq(ndr_u32(&c), 1);
	ck_assert_uint_eq(ndr_u32(&c), 8);	/* unknown */
	ck_assert_uint_eq(ndr_u32(&c), 0x00000107u);	/* some not mapped */
	ck_assert_uint_eq(cur_left(&c), 0);
	/* a count past 1000: a fault */
	le32_put(stub + 20, 1001);
	ck_assert_uint_eq(call(&env_user, OP_LOOKUP_NAMES, stub,
	    wcur_off(&w.w)), 0x6f7);

	/* LookupIds: 0 (root), 12345 (none) */
	ndr_w_init(&w, stub, sizeof(stub));
	wcur_bytes(&w.w, hdom, 20);
	ndr_put_u32(&w, 2);
	ndr_put_u32(&w, 1000);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 2);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 12345);
	ck_assert_uint_eq(call(&env_user, OP_LOOKUP_RIDS, stub,
	    wcur_off(&w.w)), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_eq(ndr_u32(&c), 2);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u32(&c), 2);
	l[0] = ustr_head(&c, &ref);
	l[1] = ustr_head(&c, &ref);
	ustr_body(&c, l[0], name, sizeof(name));
	ck_assert_str_eq(name, "root");
	ustr_body(&c, l[1], name, sizeof(name));
	ck_assert_str_eq(name, "");
	ck_assert_uint_eq(ndr_u32(&c), 2);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u32(&c), 2);
	ck_assert_uint_eq(ndr_u32(&c), 1);
	ck_assert_uint_eq(ndr_u32(&c), 8);
	ck_assert_uint_eq(ndr_u32(&c), 0x00000107u);
	ck_assert_uint_eq(cur_left(&c), 0);
}
END_TEST

START_TEST(test_user_info)
{
	uint8_t stub[64];
	struct cur c;
	char name[64];
	uint32_t ref, i;
	uint16_t l;

	open_all();
	memcpy(stub, huser, 20);
	/* level 21: six times, then UserName */
	le16_put(stub + 20, 21);
	ck_assert_uint_eq(call(&env_user, OP_QUERY_USER, stub, 22), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u16(&c), 21);
	ndr_align(&c, 4);
	cur_skip(&c, 48);
	l = ustr_head(&c, &ref);
	ck_assert_uint_eq(l, 8);		/* "root" */
	for (i = 0; i < 12; i++)		/* FullName .. PrivateData */
		(void)ustr_head(&c, &ref);
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* buf_count */
	ck_assert_uint_eq(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* UserId: uid 0 */
	ck_assert_uint_eq(ndr_u32(&c), 0);	/* PrimaryGroupId: gid 0 */
	ck_assert_uint_eq(ndr_u32(&c), 0x210);	/* NORMAL | PWNOEXP */
	ck_assert_uint_ne(ndr_u32(&c), 0);	/* WhichFields */
	ck_assert_uint_eq(ndr_u16(&c), 168);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	cur_skip(&c, 12);			/* counts, password flags */
	ustr_body(&c, l, name, sizeof(name));
	ck_assert_str_eq(name, "root");
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* level 7: the name alone */
	le16_put(stub + 20, 7);
	ck_assert_uint_eq(call(&env_user, OP_QUERY_USER, stub, 22), 0);
	cur_init(&c, out, outlen);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u16(&c), 7);
	l = ustr_head(&c, &ref);
	ustr_body(&c, l, name, sizeof(name));
	ck_assert_str_eq(name, "root");
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	ck_assert_uint_eq(cur_left(&c), 0);
	/* every level answers or says INVALID_INFO_CLASS */
	for (i = 0; i < 40; i++) {
		le16_put(stub + 20, (uint16_t)i);
		ck_assert_uint_eq(call(&env_user, OP_QUERY_USER, stub, 22), 0);
		ck_assert(status() == STATUS_SUCCESS ||
		    status() == STATUS_INVALID_INFO_CLASS);
	}
	/* GetGroupsForUser: none in its domain */
	ck_assert_uint_eq(call(&env_user, OP_USER_GROUPS, stub, 20), 0);
	ck_assert_uint_eq(outlen, 16);
	ck_assert_uint_eq(le32_get(out + 4), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* a uid not listed: no such user */
	memcpy(stub, hdom, 20);
	le32_put(stub + 20, MAXIMUM_ALLOWED);
	le32_put(stub + 24, 12345);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_USER, stub, 28), 0);
	ck_assert_uint_eq(status(), STATUS_NO_SUCH_USER);
}
END_TEST

START_TEST(test_display)
{
	uint8_t stub[64];
	struct cur c;
	char name[64];
	uint32_t ref, i;
	uint16_t l[6];

	open_all();
	memcpy(stub, hdom, 20);
	le16_put(stub + 20, 1);
	le32_put(stub + 24, 0);			/* start */
	le32_put(stub + 28, 100);		/* entries */
	le32_put(stub + 32, 0xffff);
	ck_assert_uint_eq(call(&env_user, OP_DISPLAY, stub, 36), 0);
	cur_init(&c, out, outlen);
	ck_assert_uint_ne(ndr_u32(&c), 0);	/* TotalAvailable */
	(void)ndr_u32(&c);
	ck_assert_uint_eq(ndr_u16(&c), 1);
	ck_assert_uint_eq(ndr_u32(&c), 2);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u32(&c), 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(ndr_u32(&c), i + 1);	/* Index */
		ck_assert_uint_eq(ndr_u32(&c), i ? GHOST_UID : 0);
		ck_assert_uint_eq(ndr_u32(&c), i ? 0x211 : 0x210);
		l[3 * i] = ustr_head(&c, &ref);
		l[3 * i + 1] = ustr_head(&c, &ref);
		l[3 * i + 2] = ustr_head(&c, &ref);
	}
	ustr_body(&c, l[0], name, sizeof(name));
	ck_assert_str_eq(name, "root");
	ustr_body(&c, l[1], name, sizeof(name));
	ustr_body(&c, l[2], name, sizeof(name));
	ustr_body(&c, l[3], name, sizeof(name));
	ck_assert_str_eq(name, "ghost");
	ustr_body(&c, l[4], name, sizeof(name));
	ustr_body(&c, l[5], name, sizeof(name));
	ck_assert_str_eq(name, "");		/* no passwd entry: no full name */
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	ck_assert_uint_eq(cur_left(&c), 0);
	/* one entry from index 1: ghost, none left */
	le32_put(stub + 24, 1);
	le32_put(stub + 28, 1);
	ck_assert_uint_eq(call(&env_user, OP_DISPLAY, stub, 36), 0);
	ck_assert_uint_eq(le32_get(out + 12), 1);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* level 3 in Unix Group: root's group; level 6: no such */
	memcpy(stub, hgdom, 20);
	le16_put(stub + 20, 3);
	le32_put(stub + 24, 0);
	le32_put(stub + 28, 100);
	ck_assert_uint_eq(call(&env_user, OP_DISPLAY3, stub, 36), 0);
	ck_assert_uint_eq(le32_get(out + 12), 1);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	le16_put(stub + 20, 6);
	ck_assert_uint_eq(call(&env_user, OP_DISPLAY3, stub, 36), 0);
	ck_assert_uint_eq(status(), STATUS_INVALID_INFO_CLASS);
}
END_TEST

START_TEST(test_refusals)
{
	uint8_t stub[64], bad[20];
	size_t len;
	unsigned i;

	open_all();
	/* anonymous and guest: nothing, even with a good handle */
	memcpy(stub, hdom, 20);
	le32_put(stub + 20, 0);
	le32_put(stub + 24, 0);
	le32_put(stub + 28, 0xffff);
	ck_assert_uint_eq(call(&env_anon, OP_ENUM_USERS, stub, 32), CTX_MISMATCH);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_USERS, stub, 32), 0);
	/* a handle of another pipe: a context-mismatch fault */
	ck_assert_uint_eq(call(&env_other, OP_ENUM_USERS, stub, 32), CTX_MISMATCH);
	/* each byte of the handle changed: refused */
	for (i = 0; i < 20; i++) {
		memcpy(bad, hdom, 20);
		bad[i] ^= 0x40;
		memcpy(stub, bad, 20);
		ck_assert_uint_eq(call(&env_user, OP_ENUM_USERS, stub, 32),
		    CTX_MISMATCH);
	}
	/* a user handle where a domain handle belongs */
	memcpy(stub, huser, 20);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_USERS, stub, 32), CTX_MISMATCH);
	/* a connect handle without LOOKUP_DOMAIN: OpenDomain refused */
	do_connect(&env_user, 0x1, hconn);
	len = open_domain_stub(stub, sizeof(stub), hconn, MAXIMUM_ALLOWED, 1, 1);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, len), 0);
	ck_assert_uint_eq(status(), STATUS_ACCESS_DENIED);
	/* a domain handle opened for lookups only: no listing */
	do_connect(&env_user, MAXIMUM_ALLOWED, hconn);
	len = open_domain_stub(stub, sizeof(stub), hconn, 0x200, 1, 1);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, len), 0);
	memcpy(stub, out, 20);
	le32_put(stub + 20, 0);
	le32_put(stub + 24, 0);
	le32_put(stub + 28, 0xffff);
	ck_assert_uint_eq(call(&env_user, OP_ENUM_USERS, stub, 32), 0);
	ck_assert_uint_eq(status(), STATUS_ACCESS_DENIED);
	/* a call that would write: not served */
	ck_assert_uint_eq(call(&env_user, OP_SET_USER, stub, 32), 0x1C010002u);
}
END_TEST

START_TEST(test_truncations)
{
	static const uint16_t ops[] = { OP_CONNECT5, OP_OPEN_DOM,
	    OP_ENUM_USERS, OP_LOOKUP_NAMES, OP_LOOKUP_RIDS, OP_QUERY_USER,
	    OP_DISPLAY, OP_LOOKUP_DOM, OP_OPEN_USER, OP_ENUM_DOMS };
	uint8_t stub[256];
	struct ndr_w w;
	size_t len = 0, k;
	unsigned i;

	open_all();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		ndr_w_init(&w, stub, sizeof(stub));
		switch (ops[i]) {
		case OP_CONNECT5:
			len = connect5_stub(stub, sizeof(stub), MAXIMUM_ALLOWED);
			break;
		case OP_OPEN_DOM:
			len = open_domain_stub(stub, sizeof(stub), hconn,
			    MAXIMUM_ALLOWED, 1, 1);
			break;
		case OP_LOOKUP_NAMES:
			wcur_bytes(&w.w, hdom, 20);
			ndr_put_u32(&w, 1);
			ndr_put_u32(&w, 1000);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 1);
			ndr_put_ustring(&w, "root");
			ndr_put_ustring_body(&w, "root");
			len = wcur_off(&w.w);
			break;
		case OP_LOOKUP_RIDS:
			wcur_bytes(&w.w, hdom, 20);
			ndr_put_u32(&w, 1);
			ndr_put_u32(&w, 1000);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 1);
			ndr_put_u32(&w, 0);
			len = wcur_off(&w.w);
			break;
		case OP_LOOKUP_DOM:
			wcur_bytes(&w.w, hconn, 20);
			ndr_put_ustring(&w, "Builtin");
			ndr_put_ustring_body(&w, "Builtin");
			len = wcur_off(&w.w);
			break;
		case OP_ENUM_DOMS:
			wcur_bytes(&w.w, hconn, 20);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 0xffff);
			len = wcur_off(&w.w);
			break;
		case OP_QUERY_USER:
			wcur_bytes(&w.w, huser, 20);
			ndr_put_u16(&w, 21);
			len = wcur_off(&w.w);
			break;
		case OP_OPEN_USER:
			wcur_bytes(&w.w, hdom, 20);
			ndr_put_u32(&w, MAXIMUM_ALLOWED);
			ndr_put_u32(&w, 0);
			len = wcur_off(&w.w);
			break;
		case OP_DISPLAY:
			wcur_bytes(&w.w, hdom, 20);
			ndr_put_u16(&w, 1);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 10);
			ndr_put_u32(&w, 0xffff);
			len = wcur_off(&w.w);
			break;
		default:	/* OP_ENUM_USERS */
			wcur_bytes(&w.w, hdom, 20);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 0);
			ndr_put_u32(&w, 0xffff);
			len = wcur_off(&w.w);
			break;
		}
		ck_assert_uint_eq(call(&env_user, ops[i], stub, len), 0);
		ck_assert_uint_eq(status(), STATUS_SUCCESS);
		for (k = 0; k < len; k++)
			ck_assert_uint_ne(call(&env_user, ops[i], stub, k), 0);
	}
}
END_TEST

START_TEST(test_alias_members)
{
	uint8_t stub[128], hb[20], ha[20];
	struct ndr_w w;
	size_t len, k;
	unsigned i;

	open_all();
	/* GetAliasMembership of two SIDs in Builtin: none */
	ck_assert_uint_eq(call(&env_user, OP_OPEN_DOM, stub, open_domain_stub(
	    stub, sizeof(stub), hconn, MAXIMUM_ALLOWED, 32, 1)), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(hb, out, 20);
	ndr_w_init(&w, stub, sizeof(stub));
	wcur_bytes(&w.w, hb, 20);
	ndr_put_u32(&w, 2);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 2);
	ndr_put_ptr(&w, 1);
	ndr_put_ptr(&w, 1);
	for (i = 0; i < 2; i++) {
		ndr_put_u32(&w, 2);
		wcur_u8(&w.w, 1);
		wcur_u8(&w.w, 2);
		wcur_zero(&w.w, 5);
		wcur_u8(&w.w, 22);
		ndr_put_u32(&w, 1);
		ndr_put_u32(&w, i);
	}
	len = wcur_off(&w.w);
	ck_assert_uint_eq(call(&env_user, OP_ALIAS_MEMBERSHIP, stub, len), 0);
	ck_assert_uint_eq(outlen, 12);
	ck_assert_uint_eq(le32_get(out), 0);
	ck_assert_uint_eq(le32_get(out + 4), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	for (k = 0; k < len; k++)
		ck_assert_uint_ne(call(&env_user, OP_ALIAS_MEMBERSHIP, stub, k), 0);
	/* a count that disagrees with the array: a fault */
	le32_put(stub + 20, 3);
	ck_assert_uint_eq(call(&env_user, OP_ALIAS_MEMBERSHIP, stub, len), 0x6f7);
	/* GetMembersInAlias of Administrators: none */
	memcpy(stub, hb, 20);
	le32_put(stub + 20, MAXIMUM_ALLOWED);
	le32_put(stub + 24, 544);
	ck_assert_uint_eq(call(&env_user, OP_OPEN_ALIAS, stub, 28), 0);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	memcpy(ha, out, 20);
	ck_assert_uint_eq(call(&env_user, OP_MEMBERS_IN_ALIAS, ha, 20), 0);
	ck_assert_uint_eq(outlen, 12);
	ck_assert_uint_eq(status(), STATUS_SUCCESS);
	/* ... and a domain handle there: refused */
	ck_assert_uint_eq(call(&env_user, OP_MEMBERS_IN_ALIAS, hb, 20),
	    CTX_MISMATCH);
}
END_TEST

static Suite *
samr_suite(void)
{
	Suite *s = suite_create("samr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_connect);
	tcase_add_test(tc, test_domains);
	tcase_add_test(tc, test_enum_users);
	tcase_add_test(tc, test_groups_aliases);
	tcase_add_test(tc, test_lookups);
	tcase_add_test(tc, test_user_info);
	tcase_add_test(tc, test_display);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_alias_members);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(samr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
