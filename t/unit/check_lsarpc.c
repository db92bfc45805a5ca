/*
 * The lsarpc pipe's operations (worker/pipe_lsarpc.c) called with request
 * stubs built here: SIDs to names and names to SIDs at every level, the
 * answers decoded field by field (an unknown SID named by its string);
 * LsarGetUserName; anonymous and guest callers refused;
 * every truncation of each request; and the RPC_UNICODE_STRING codec
 * (proto/ndr.c ndr_ustring_body, ndr_put_ustring).  root (uid 0) and its
 * group root (gid 0) are the account and group every test machine has.
 */
#include <check.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/ndr.h"
#include "proto/ntstatus.h"
#include "worker/pipe.h"
#include "testlib.h"

#define OP_CLOSE	0
#define OP_OPEN2	44
#define OP_GETUSER	45
#define OP_QUERY	7
#define OP_NAMES	14
#define OP_SIDS		15
#define OP_SIDS2	57
#define OP_NAMES2	58
#define OP_NAMES3	68

static struct conf test_conf = {
	.netbios_name = "LSATEST", .workgroup = "WG",
};

static const struct pipe_env env_user = { &test_conf, "alice", 0, 0, 0, NULL, 0 };
static const struct pipe_env env_anon = { &test_conf, "", 1, 0, 0, NULL, 0 };
static const struct pipe_env env_guest = { &test_conf, "nobody", 0, 1, 0, NULL, 0 };

static uint8_t handle[20];
static uint8_t out[65536];
static char root_group[256];

/* Runs opnum on stub[0, len) into out; the fault (0) and the out length. */
static uint32_t
call(const struct pipe_env *env, uint16_t op, const uint8_t *stub,
    size_t len, size_t *outlen)
{
	struct ndr_w w;
	struct cur c;
	uint8_t *copy = malloc(len ? len : 1);	/* exact size: ASan sees overreads */
	uint32_t f;

	memcpy(copy, stub, len);
	cur_init(&c, copy, len);
	ndr_w_init(&w, out, sizeof(out));
	f = pipe_iface_lsarpc.call(env, op, &c, &w);
	ck_assert_int_eq(w.w.err, 0);
	free(copy);
	*outlen = wcur_off(&w.w);
	return f;
}

static void
open_policy(void)
{
	uint8_t stub[128];
	struct ndr_w w;
	size_t n;

	ndr_w_init(&w, stub, sizeof(stub));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\\\127.0.0.1");
	ndr_put_u32(&w, 24);			/* ObjectAttributes */
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0);
	ndr_put_ptr(&w, 1);			/* QoS */
	ndr_put_u32(&w, 12);
	ndr_put_u16(&w, 2);
	wcur_u8(&w.w, 1);
	wcur_u8(&w.w, 0);
	ndr_put_u32(&w, 0x02000000);		/* MAXIMUM_ALLOWED */
	ck_assert_int_eq(w.w.err, 0);
	ck_assert_uint_eq(call(&env_user, OP_OPEN2, stub, wcur_off(&w.w), &n), 0);
	ck_assert_uint_eq(n, 24);
	ck_assert_uint_eq(le32_get(out + 20), STATUS_SUCCESS);
	memcpy(handle, out, 20);
}

static void
put_sid(struct ndr_w *w, uint8_t auth, unsigned nsub, const uint32_t *sub)
{
	unsigned i;

	ndr_put_u32(w, nsub);
	wcur_u8(&w->w, 1);
	wcur_u8(&w->w, (uint8_t)nsub);
	wcur_zero(&w->w, 5);
	wcur_u8(&w->w, auth);
	for (i = 0; i < nsub; i++)
		ndr_put_u32(w, sub[i]);
}

/* A LookupSids(2) stub for S-1-22-1-0, S-1-22-2-0, S-1-1-0, S-1-5-21-9 */
static size_t
sids_stub(uint8_t *stub, size_t size, int ex)
{
	static const uint32_t u[] = { 1, 0 }, g[] = { 2, 0 }, e[] = { 0 },
	    x[] = { 21, 9 };
	struct ndr_w w;

	ndr_w_init(&w, stub, size);
	wcur_bytes(&w.w, handle, 20);
	ndr_put_u32(&w, 4);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 4);
	ndr_put_ptr(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_ptr(&w, 1);
	put_sid(&w, 22, 2, u);
	put_sid(&w, 22, 2, g);
	put_sid(&w, 1, 1, e);
	put_sid(&w, 5, 2, x);
	ndr_put_u32(&w, 0);			/* TranslatedNames */
	ndr_put_ptr(&w, 0);
	ndr_put_u16(&w, 1);			/* LookupLevel */
	ndr_put_u32(&w, 0);			/* MappedCount */
	if (ex) {
		ndr_put_u32(&w, 0);
		ndr_put_u32(&w, 2);
	}
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

/* The RPC_UNICODE_STRING header at c and, later, its body. */
struct ustr {
	uint16_t	len, max;
	uint32_t	ptr;
	char		s[256];
};

static void
ustr_hdr(struct cur *c, struct ustr *u)
{
	ndr_align(c, 4);
	u->len = ndr_u16(c);
	u->max = ndr_u16(c);
	u->ptr = ndr_ptr(c);
	u->s[0] = '\0';
}

static void
ustr_body(struct cur *c, struct ustr *u)
{
	if (u->ptr != 0)
		ndr_ustring_body(c, u->len, u->max, u->s, sizeof(u->s));
}

static void
sid_read(struct cur *c, char *buf, size_t size)
{
	uint32_t n = ndr_u32(c), i;
	uint8_t rev = cur_u8(c), nsub = cur_u8(c), auth[6];
	int off;

	cur_bytes(c, auth, 6);
	ck_assert_uint_eq(n, nsub);
	off = snprintf(buf, size, "S-%u-%u", rev, auth[5]);
	for (i = 0; i < nsub; i++)
		off += snprintf(buf + off, size - (size_t)off, "-%u",
		    ndr_u32(c));
}

/* ReferencedDomains into names[] and sids[]; the count. */
static unsigned
domains_read(struct cur *c, struct ustr *names, char sids[][64])
{
	uint32_t n, i, sp[8];

	ck_assert_uint_ne(ndr_ptr(c), 0);
	n = ndr_u32(c);
	(void)ndr_ptr(c);
	ck_assert_uint_eq(ndr_u32(c), 8);	/* MaxEntries */
	ck_assert_uint_le(n, 8);
	if (n == 0)
		return 0;
	ck_assert_uint_eq(ndr_u32(c), n);
	for (i = 0; i < n; i++) {
		ustr_hdr(c, &names[i]);
		sp[i] = ndr_ptr(c);
	}
	for (i = 0; i < n; i++) {
		ustr_body(c, &names[i]);
		if (sp[i])
			sid_read(c, sids[i], 64);
	}
	return n;
}

START_TEST(test_lookup_sids)
{
	uint8_t stub[512];
	struct ustr dn[8], nm[4];
	char ds[8][64];
	uint16_t type[4];
	int32_t dom[4];
	size_t len, n;
	unsigned nd, i;
	struct cur c;
	int ex;

	open_policy();
	for (ex = 0; ex < 2; ex++) {
		len = sids_stub(stub, sizeof(stub), ex);
		ck_assert_uint_eq(call(&env_user, ex ? OP_SIDS2 : OP_SIDS, stub,
		    len, &n), 0);
		cur_init(&c, out, n);
		nd = domains_read(&c, dn, ds);
		ck_assert_uint_eq(nd, 3);
		ck_assert_uint_eq(ndr_u32(&c), 4);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		ck_assert_uint_eq(ndr_u32(&c), 4);
		for (i = 0; i < 4; i++) {
			type[i] = ndr_u16(&c);
			ustr_hdr(&c, &nm[i]);
			dom[i] = (int32_t)ndr_u32(&c);
			if (ex)
				ck_assert_uint_eq(ndr_u32(&c), 0);
		}
		for (i = 0; i < 4; i++)
			ustr_body(&c, &nm[i]);
		ck_assert_uint_eq(ndr_u32(&c), 3);		/* MappedCount */
		ck_assert_uint_eq(ndr_u32(&c), 0x00000107);	/* some mapped */
		ck_assert_int_eq(c.err, 0);
		ck_assert_uint_eq(cur_left(&c), 0);
		ck_assert_uint_eq(type[0], 1);
		ck_assert_str_eq(nm[0].s, "root");
		ck_assert_str_eq(dn[dom[0]].s, "Unix User");
		ck_assert_str_eq(ds[dom[0]], "S-1-22-1");
		ck_assert_uint_eq(type[1], 2);
		ck_assert_str_eq(nm[1].s, root_group);
		ck_assert_str_eq(dn[dom[1]].s, "Unix Group");
		ck_assert_str_eq(ds[dom[1]], "S-1-22-2");
		ck_assert_uint_eq(type[2], 5);
		ck_assert_str_eq(nm[2].s, "Everyone");
		ck_assert_str_eq(dn[dom[2]].s, "");
		ck_assert_str_eq(ds[dom[2]], "S-1-1");
		ck_assert_uint_eq(type[3], 8);
		ck_assert_int_eq(dom[3], -1);
		/* unknown: named by its string form, as Windows does */
		ck_assert_str_eq(nm[3].s, "S-1-5-21-9");
	}
}
END_TEST

/*
 * The pipe runs a call again with a larger buffer when its answer did not
 * fit (worker/pipe.c); that run (the same pipe_env.call) answers from
 * the first run's translations, domains included, byte for byte.
 */
START_TEST(test_rerun)
{
	struct pipe_env e = env_user;
	static uint8_t first[4096];
	uint8_t stub[512];
	size_t len, n, n1;
	int run;

	open_policy();
	len = sids_stub(stub, sizeof(stub), 1);
	for (run = 0; run < 3; run++) {
		e.call = run < 2 ? 77 : 78;	/* 77 twice, then a new call */
		ck_assert_uint_eq(call(&e, OP_SIDS2, stub, len, &n), 0);
		if (run == 0) {
			ck_assert_uint_le(n, sizeof(first));
			memcpy(first, out, n);
			n1 = n;
			continue;
		}
		ck_assert_uint_eq(n, n1);
		ck_assert_int_eq(memcmp(out, first, n), 0);
	}
}
END_TEST

/* A LookupNames stub of n names at level (1, 2, 3). */
static size_t
names_stub(uint8_t *stub, size_t size, const char *const *names,
    unsigned n, int level)
{
	struct ndr_w w;
	unsigned i;

	ndr_w_init(&w, stub, size);
	wcur_bytes(&w.w, handle, 20);
	ndr_put_u32(&w, n);
	ndr_put_u32(&w, n);
	for (i = 0; i < n; i++) {
		ndr_put_align(&w, 4);
		ndr_put_ustring(&w, names[i]);
	}
	for (i = 0; i < n; i++)
		ndr_put_ustring_body(&w, names[i]);
	ndr_put_u32(&w, 0);
	ndr_put_ptr(&w, 0);
	ndr_put_u16(&w, 1);
	ndr_put_u32(&w, 0);
	if (level > 1) {
		ndr_put_u32(&w, 0);
		ndr_put_u32(&w, 2);
	}
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

START_TEST(test_lookup_names)
{
	static const int ops[] = { 0, OP_NAMES, OP_NAMES2, OP_NAMES3 };
	static const char *const names[] = { "root", "Unix Group\\root",
		"EVERYONE",
		"BUILTIN\\Administrators", "LSATEST\\ROOT", "nosuchname",
		"NT AUTHORITY\\root", "a\\b\\c" };
	static const char *const want[] = { "S-1-22-1-0", "S-1-22-2-0",
		"S-1-1-0", "S-1-5-32-544", "S-1-22-1-0" };
	static const uint16_t wtype[] = { 1, 2, 5, 4, 1, 8, 8, 8 };
	uint8_t stub[1024];
	struct ustr dn[8];
	char ds[8][64], sid[8][64];
	uint32_t rid[8], sp[8];
	int32_t dom[8];
	uint16_t type;
	size_t len, n;
	unsigned i, level;
	struct cur c;

	open_policy();
	for (level = 1; level <= 3; level++) {
		len = names_stub(stub, sizeof(stub), names, 8, (int)level);
		ck_assert_uint_eq(call(&env_user, (uint16_t)ops[level], stub,
		    len, &n), 0);
		cur_init(&c, out, n);
		(void)domains_read(&c, dn, ds);
		ck_assert_uint_eq(ndr_u32(&c), 8);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		ck_assert_uint_eq(ndr_u32(&c), 8);
		for (i = 0; i < 8; i++) {
			type = ndr_u16(&c);
			ck_assert_uint_eq(type, wtype[i]);
			if (level == 3)
				sp[i] = ndr_ptr(&c);
			else
				rid[i] = ndr_u32(&c);
			dom[i] = (int32_t)ndr_u32(&c);
			if (level > 1)
				ck_assert_uint_eq(ndr_u32(&c), 0);
		}
		for (i = 0; level == 3 && i < 8; i++)
			if (sp[i])
				sid_read(&c, sid[i], sizeof(sid[i]));
		ck_assert_uint_eq(ndr_u32(&c), 5);
		ck_assert_uint_eq(ndr_u32(&c), 0x00000107);
		ck_assert_int_eq(c.err, 0);
		ck_assert_uint_eq(cur_left(&c), 0);
		for (i = 0; i < 8; i++) {
			if (i >= 5) {
				ck_assert_int_eq(dom[i], -1);
				if (level == 3)
					ck_assert_uint_eq(sp[i], 0);
				continue;
			}
			if (level < 3)
				snprintf(sid[i], sizeof(sid[i]), "%s-%u",
				    ds[dom[i]], rid[i]);
			ck_assert_str_eq(sid[i], want[i]);
		}
	}
}
END_TEST

START_TEST(test_refused)
{
	static const struct pipe_env *const envs[] = { &env_anon, &env_guest };
	uint8_t stub[512], open[] = { 0, 0, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	const char *names[] = { "root" };
	size_t len, n;
	int i;

	open_policy();		/* the user's handle, which the others copy */
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(call(envs[i], OP_OPEN2, open, sizeof(open),
		    &n), 0);
		ck_assert_uint_eq(le32_get(out + 20), STATUS_ACCESS_DENIED);
		len = sids_stub(stub, sizeof(stub), 1);
		ck_assert_uint_eq(call(envs[i], OP_SIDS2, stub, len, &n), 0);
		ck_assert_uint_eq(le32_get(out + n - 4), STATUS_ACCESS_DENIED);
		ck_assert_uint_eq(le32_get(out + n - 8), 0);	/* none mapped */
		len = names_stub(stub, sizeof(stub), names, 1, 3);
		ck_assert_uint_eq(call(envs[i], OP_NAMES3, stub, len, &n), 0);
		ck_assert_uint_eq(le32_get(out + n - 4), STATUS_ACCESS_DENIED);
		ck_assert_uint_eq(call(envs[i], OP_QUERY, stub, 22, &n), 0);
		ck_assert_uint_eq(le32_get(out + n - 4), STATUS_ACCESS_DENIED);
	}
	/* a handle never given */
	len = sids_stub(stub, sizeof(stub), 0);
	stub[5] ^= 1;
	ck_assert_uint_eq(call(&env_user, OP_SIDS, stub, len, &n), 0);
	ck_assert_uint_eq(le32_get(out + n - 4), STATUS_INVALID_HANDLE);
	ck_assert_uint_eq(call(&env_user, OP_CLOSE, stub, 20, &n), 0);
	ck_assert_uint_eq(le32_get(out + 20), STATUS_INVALID_HANDLE);
	/* an unknown opnum, and QueryInformationPolicy2 as Samba: none */
	ck_assert_uint_eq(call(&env_user, 46, stub, len, &n),
	    DCERPC_NCA_S_OP_RNG_ERROR);
	ck_assert_uint_eq(call(&env_user, 76, stub, len, &n),
	    DCERPC_NCA_S_OP_RNG_ERROR);
}
END_TEST

/* Every prefix of each request is a fault, never a read past it. */
START_TEST(test_truncations)
{
	const char *names[] = { "root", "Everyone" };
	uint8_t stub[512];
	size_t len, n, k;
	int level;

	open_policy();
	for (level = 0; level < 5; level++) {
		len = level < 2 ? sids_stub(stub, sizeof(stub), level) :
		    names_stub(stub, sizeof(stub), names, 2, level - 1);
		for (k = 0; k < len; k++)
			ck_assert_uint_ne(call(&env_user, (uint16_t)(level == 0 ?
			    OP_SIDS : level == 1 ? OP_SIDS2 : level == 2 ?
			    OP_NAMES : level == 3 ? OP_NAMES2 : OP_NAMES3),
			    stub, k, &n), 0);
	}
}
END_TEST

/* An LsarGetUserName stub as smbtorture sends it: DomainName asked or not. */
static size_t
getuser_stub(uint8_t *stub, size_t size, int domain)
{
	struct ndr_w w;

	ndr_w_init(&w, stub, size);
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\");		/* SystemName */
	ndr_put_ptr(&w, 0);			/* *UserName */
	ndr_put_ptr(&w, domain);		/* DomainName */
	if (domain)
		ndr_put_ptr(&w, 0);		/* *DomainName */
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

START_TEST(test_get_user_name)
{
	uint8_t stub[128];
	struct ustr u, d;
	size_t len, n, k;
	struct cur c;
	int domain;

	for (domain = 0; domain < 2; domain++) {
		len = getuser_stub(stub, sizeof(stub), domain);
		ck_assert_uint_eq(call(&env_user, OP_GETUSER, stub, len, &n), 0);
		cur_init(&c, out, n);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		ustr_hdr(&c, &u);
		ustr_body(&c, &u);
		ck_assert_str_eq(u.s, "alice");
		if (domain) {
			ck_assert_uint_ne(ndr_ptr(&c), 0);
			ck_assert_uint_ne(ndr_ptr(&c), 0);
			ustr_hdr(&c, &d);
			ustr_body(&c, &d);
			ck_assert_str_eq(d.s, "LSATEST");
		} else
			ck_assert_uint_eq(ndr_ptr(&c), 0);
		ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
		ck_assert_int_eq(c.err, 0);
		ck_assert_uint_eq(cur_left(&c), 0);
		/* anonymous and guest: refused as on every lsarpc call */
		ck_assert_uint_eq(call(&env_anon, OP_GETUSER, stub, len, &n), 0);
		ck_assert_uint_eq(n, 12);
		ck_assert_uint_eq(le32_get(out + 8), STATUS_ACCESS_DENIED);
		ck_assert_uint_eq(call(&env_guest, OP_GETUSER, stub, len, &n), 0);
		ck_assert_uint_eq(le32_get(out + 8), STATUS_ACCESS_DENIED);
		for (k = 0; k < len; k++)
			ck_assert_uint_eq(call(&env_user, OP_GETUSER, stub, k,
			    &n), DCERPC_FAULT_NDR);
	}
	/* a UserName sent filled in is read past and ignored */
	{
		struct ndr_w w;

		ndr_w_init(&w, stub, sizeof(stub));
		ndr_put_ptr(&w, 0);
		ndr_put_ptr(&w, 1);
		ndr_put_ustring(&w, "bob");
		ndr_put_ustring_body(&w, "bob");
		ndr_put_ptr(&w, 0);
		len = wcur_off(&w.w);
		ck_assert_uint_eq(call(&env_user, OP_GETUSER, stub, len, &n), 0);
		cur_init(&c, out, n);
		(void)ndr_ptr(&c);
		ustr_hdr(&c, &u);
		ustr_body(&c, &u);
		ck_assert_str_eq(u.s, "alice");
		for (k = 0; k < len; k++)
			ck_assert_uint_eq(call(&env_user, OP_GETUSER, stub, k,
			    &n), DCERPC_FAULT_NDR);
	}
}
END_TEST

START_TEST(test_query_info)
{
	uint8_t stub[24];
	struct ustr u;
	char sid[64];
	size_t n;
	struct cur c;

	open_policy();
	memcpy(stub, handle, 20);
	le16_put(stub + 20, 3);			/* primary domain */
	ck_assert_uint_eq(call(&env_user, OP_QUERY, stub, 22, &n), 0);
	cur_init(&c, out, n);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u16(&c), 3);
	ustr_hdr(&c, &u);
	ck_assert_uint_eq(ndr_ptr(&c), 0);	/* a workgroup: no SID */
	ustr_body(&c, &u);
	ck_assert_str_eq(u.s, "WG");
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	ck_assert_int_eq(c.err, 0);
	le16_put(stub + 20, 5);			/* account domain */
	ck_assert_uint_eq(call(&env_user, OP_QUERY, stub, 22, &n), 0);
	cur_init(&c, out, n);
	(void)ndr_ptr(&c);
	ck_assert_uint_eq(ndr_u16(&c), 5);
	ustr_hdr(&c, &u);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ustr_body(&c, &u);
	sid_read(&c, sid, sizeof(sid));
	ck_assert_str_eq(u.s, "LSATEST");
	ck_assert_str_eq(sid, "S-1-22-1");
	ck_assert_uint_eq(ndr_u32(&c), STATUS_SUCCESS);
	le16_put(stub + 20, 1);			/* audit log: not served */
	ck_assert_uint_eq(call(&env_user, OP_QUERY, stub, 22, &n), 0);
	ck_assert_uint_eq(le32_get(out + n - 4), STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(test_ustring)
{
	uint8_t buf[128];
	struct ndr_w w;
	struct cur c;
	char s[64];
	size_t len, k;

	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_ustring(&w, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	ndr_put_ustring_body(&w, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	ck_assert_int_eq(w.w.err, 0);
	len = wcur_off(&w.w);
	ck_assert_uint_eq(le16_get(buf), 14);		/* 7 units, no NUL */
	ck_assert_uint_eq(le16_get(buf + 2), 14);
	ck_assert_uint_eq(len, 8 + 12 + 14);
	cur_init(&c, buf + 8, len - 8);
	ck_assert_uint_eq(ndr_ustring_body(&c, 14, 14, s, sizeof(s)), 10);
	ck_assert_str_eq(s, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	ck_assert_int_eq(c.err, 0);
	for (k = 0; k < len - 8; k++) {
		cur_init(&c, buf + 8, k);
		ndr_ustring_body(&c, 14, 14, s, sizeof(s));
		ck_assert_int_ne(c.err, 0);
		ck_assert_str_eq(s, "");
	}
	/* Length and the counts must agree; odd, over the maximum */
	cur_init(&c, buf + 8, len - 8);
	ndr_ustring_body(&c, 12, 14, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	cur_init(&c, buf + 8, len - 8);
	ndr_ustring_body(&c, 14, 16, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	cur_init(&c, buf + 8, len - 8);
	ndr_ustring_body(&c, 15, 16, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	/* too small an output: an error, not a cut name */
	cur_init(&c, buf + 8, len - 8);
	ndr_ustring_body(&c, 14, 14, s, 5);
	ck_assert_int_ne(c.err, 0);
	/* an embedded NUL is refused, one trailing NUL is dropped */
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_u32(&w, 3);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 3);
	ndr_put_u16(&w, 'a');
	ndr_put_u16(&w, 0);
	ndr_put_u16(&w, 'b');
	cur_init(&c, buf, wcur_off(&w.w));
	ndr_ustring_body(&c, 6, 6, s, sizeof(s));
	ck_assert_int_ne(c.err, 0);
	le16_put(buf + 14, 'b');
	le16_put(buf + 16, 0);
	cur_init(&c, buf, wcur_off(&w.w));
	ck_assert_uint_eq(ndr_ustring_body(&c, 6, 6, s, sizeof(s)), 2);
	ck_assert_str_eq(s, "ab");
	/* a NULL string: no pointer, no body */
	ndr_w_init(&w, buf, sizeof(buf));
	ndr_put_ustring(&w, NULL);
	ndr_put_ustring_body(&w, NULL);
	ck_assert_uint_eq(wcur_off(&w.w), 8);
	ck_assert_uint_eq(le32_get(buf + 4), 0);
}
END_TEST

static Suite *
lsarpc_suite(void)
{
	Suite *s = suite_create("lsarpc");
	TCase *tc = tcase_create("core");
	struct group *g = getgrgid(0);

	strlcpy(root_group, g != NULL ? g->gr_name : "", sizeof(root_group));
	tcase_add_test(tc, test_lookup_sids);
	tcase_add_test(tc, test_rerun);
	tcase_add_test(tc, test_lookup_names);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_query_info);
	tcase_add_test(tc, test_get_user_name);
	tcase_add_test(tc, test_ustring);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(lsarpc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
