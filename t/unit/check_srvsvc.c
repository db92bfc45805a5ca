/*
 * srvsvc and wkssvc operations: our responses decoded with an independent
 * decoder written from the MS-SRVS IDL, which is first checked against
 * Samba 4.17's own responses (captured from smbd on loopback); requests
 * from smbclient and rpcclient; truncated and malformed stubs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/conf.h"
#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "worker/pipe.h"
#include "testlib.h"

/* Stub of smbclient -L's NetShareEnumAll level 1 request. */
static const char fx_enum1_req[] =
    "00000200" "0a000000000000000a0000003100320037002e0030002e0030002e003100"
    "0000" "01000000" "01000000" "04000200" "00000000" "00000000" "ffffffff"
    "08000200" "00000000";
/* Samba's response stub to it (shares "share" and IPC$). */
static const char fx_enum1_rsp_samba[] =
    "01000000010000000c0002000200000010000200020000001400020000000000"
    "180002001c00020003000080200002000600000000000000060000007300680061"
    "007200650000000a000000000000000a0000007400680065002000730068006100"
    "7200650000000500000000000000050000004900500043002400000000001900"
    "000000000000190000004900500043002000530065007200760069006300650020"
    "0028004300610070002000530065007200760065007200290000000000020000"
    "00240002000000000000000000";
/* Samba's NetShareGetInfo level 502 response stub for "share". */
static const char fx_info502_rsp_samba[] =
    "f60100000400020008000200000000000c00020000000000ffffffff0100000010"
    "0002001400020000000000000000000600000000000000060000007300680061"
    "007200650000000a000000000000000a0000007400680065002000730068006100"
    "72006500000014000000000000001400000043003a005c0074006d0070005c0069"
    "00700063006300610070005c00730068006100720065000000010000000000000001"
    "0000000000000000000000";

static struct conf_share test_shares[] = {
	{ .name = "IPC$", .is_ipc = 1, .browseable = 1 },
	{ .name = "share", .path = "/srv/share", .comment = "the share",
	  .browseable = 1 },
	{ .name = "hidden", .path = "/srv/h", .comment = "not listed",
	  .browseable = 0 },
	{ .name = "admin$", .path = "/srv/a", .browseable = 1 },
	{ .name = "Caf\xc3\xa9", .path = "/srv/c", .comment = "\xe2\x82\xac",
	  .browseable = 1 },
};

static struct conf test_conf = {
	.netbios_name = "USMBTEST", .workgroup = "OFFICE",
	.server_string = "usmbd test", .shares = test_shares, .nshares = 5,
};

/* alice is an administrator here (`server admin group`): levels 2, 502. */
static struct pipe_env test_env = { &test_conf, "alice", 0, 0, 1, NULL, 0 };

/* --- an independent decoder of the responses, from the IDL --- */

struct share {
	char		name[64];
	uint32_t	type;
	char		remark[64];
	char		path[128];
	uint32_t	max_uses;
	int		has_remark, has_path;
};

static const char *
layout(uint32_t level)
{
	switch (level) {
	case 0: return "n";
	case 1: return "ntr";
	case 2: return "ntrumupw";
	case 501: return "ntru";
	case 502: return "ntrumupwus";
	}
	return NULL;
}

/* Scalars of one SHARE_INFO_x; returns the pointer bits in field order. */
static unsigned
share_scalars(struct cur *c, uint32_t level, struct share *s)
{
	const char *l;
	unsigned bits = 0, j = 0;

	memset(s, 0, sizeof(*s));
	for (l = layout(level); *l; l++, j++) {
		switch (*l) {
		case 't': s->type = ndr_u32(c); break;
		case 'm': s->max_uses = ndr_u32(c); break;
		case 'u': (void)ndr_u32(c); break;
		default:
			if (ndr_ptr(c) != 0)
				bits |= 1u << j;
			else
				ck_assert_msg(*l == 's' || *l == 'w',
				    "NULL pointer in field %c", *l);
		}
	}
	return bits;
}

static void
share_buffers(struct cur *c, uint32_t level, unsigned bits, struct share *s)
{
	const char *l;
	char tmp[64];
	unsigned j = 0;

	for (l = layout(level); *l; l++, j++) {
		if (!(bits & 1u << j))
			continue;
		switch (*l) {
		case 'n': ndr_string(c, s->name, sizeof(s->name)); break;
		case 'r': ndr_string(c, s->remark, sizeof(s->remark));
			s->has_remark = 1; break;
		case 'p': ndr_string(c, s->path, sizeof(s->path));
			s->has_path = 1; break;
		case 'w': ndr_string(c, tmp, sizeof(tmp)); break;
		case 's': ck_abort_msg("security descriptor not expected");
		}
	}
}

/* NetrShareEnum response: the entries, TotalEntries and the WERROR. */
static unsigned
decode_enum(const uint8_t *stub, size_t len, uint32_t want_level,
    struct share *sh, unsigned max, uint32_t *werr)
{
	struct cur c;
	uint32_t n = 0, i, total;
	unsigned bits[16];

	cur_init(&c, stub, len);
	ck_assert_uint_eq(ndr_u32(&c), want_level);
	ck_assert_uint_eq(ndr_u32(&c), want_level);
	if (layout(want_level) != NULL) {
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		n = ndr_u32(&c);
		ck_assert_uint_le(n, max);
		if (ndr_ptr(&c) != 0) {
			ck_assert_uint_eq(ndr_u32(&c), n);
			for (i = 0; i < n; i++)
				bits[i] = share_scalars(&c, want_level, &sh[i]);
			for (i = 0; i < n; i++)
				share_buffers(&c, want_level, bits[i], &sh[i]);
		}
	}
	total = ndr_u32(&c);
	ck_assert_uint_eq(total, n);
	if (ndr_ptr(&c) != 0)
		(void)ndr_u32(&c);
	*werr = ndr_u32(&c);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);
	return n;
}

/* NetrShareGetInfo response: 1 if an info came back. */
static int
decode_get_info(const uint8_t *stub, size_t len, uint32_t level,
    struct share *s, uint32_t *werr)
{
	struct cur c;
	unsigned bits;
	int found = 0;

	cur_init(&c, stub, len);
	ck_assert_uint_eq(ndr_u32(&c), level);
	if (level == 1005) {
		if ((found = ndr_ptr(&c) != 0))
			s->max_uses = ndr_u32(&c);	/* shi1005_flags */
	} else if (layout(level) != NULL && (found = ndr_ptr(&c) != 0)) {
		bits = share_scalars(&c, level, s);
		share_buffers(&c, level, bits, s);
	}
	*werr = ndr_u32(&c);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);
	return found;
}

/* --- requests --- */

static size_t
req_enum(uint8_t *buf, size_t size, uint32_t level)
{
	struct ndr_w w;

	ndr_w_init(&w, buf, size);
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "127.0.0.1");
	ndr_put_u32(&w, level);
	ndr_put_u32(&w, level);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 0);
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 0);
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

static size_t
req_get_info(uint8_t *buf, size_t size, const char *name, uint32_t level)
{
	struct ndr_w w;

	ndr_w_init(&w, buf, size);
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "127.0.0.1");
	ndr_put_string(&w, name);
	ndr_put_u32(&w, level);
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

static size_t
call(const struct pipe_iface *pi, uint16_t opnum, const uint8_t *in,
    size_t inlen, uint8_t *out, size_t outsize, uint32_t *fault)
{
	struct ndr_w w;
	struct cur c;

	cur_init(&c, in, inlen);
	ndr_w_init(&w, out, outsize);
	*fault = pi->call(&test_env, opnum, &c, &w);
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

START_TEST(test_decoder_on_samba)
{
	struct share sh[4];
	uint8_t *b;
	size_t len;
	uint32_t werr;

	b = test_hex(fx_enum1_rsp_samba, &len);
	ck_assert_uint_eq(decode_enum(b, len, 1, sh, 4, &werr), 2);
	ck_assert_uint_eq(werr, 0);
	ck_assert_str_eq(sh[0].name, "share");
	ck_assert_str_eq(sh[0].remark, "the share");
	ck_assert_uint_eq(sh[0].type, 0);
	ck_assert_str_eq(sh[1].name, "IPC$");
	ck_assert_uint_eq(sh[1].type, 0x80000003u);
	ck_assert_str_eq(sh[1].remark, "IPC Service (Cap Server)");
	free(b);
	b = test_hex(fx_info502_rsp_samba, &len);
	ck_assert_int_eq(decode_get_info(b, len, 502, sh, &werr), 1);
	ck_assert_str_eq(sh[0].path, "C:\\tmp\\ipccap\\share");
	ck_assert_uint_eq(sh[0].max_uses, 0xFFFFFFFFu);
	free(b);
}
END_TEST

START_TEST(test_enum_smbclient_request)
{
	uint8_t *req, out[4096];
	struct share sh[8];
	size_t len, n;
	uint32_t fault, werr;

	req = test_hex(fx_enum1_req, &len);
	n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(decode_enum(out, n, 1, sh, 8, &werr), 4);
	ck_assert_uint_eq(werr, 0);
	ck_assert_str_eq(sh[0].name, "IPC$");
	ck_assert_uint_eq(sh[0].type, 0x80000003u);
	ck_assert_str_eq(sh[0].remark, "IPC Service (usmbd test)");
	ck_assert_str_eq(sh[1].name, "share");
	ck_assert_uint_eq(sh[1].type, 0);
	ck_assert_str_eq(sh[1].remark, "the share");
	/* "hidden" is not browseable; admin$ is listed but special */
	ck_assert_str_eq(sh[2].name, "admin$");
	ck_assert_uint_eq(sh[2].type, 0x80000000u);
	ck_assert_str_eq(sh[2].remark, "");
	ck_assert_str_eq(sh[3].name, "Caf\xc3\xa9");
	ck_assert_str_eq(sh[3].remark, "\xe2\x82\xac");
	/* NetrShareEnumSticky leaves the $ shares out. */
	n = call(&pipe_iface_srvsvc, 36, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(decode_enum(out, n, 1, sh, 8, &werr), 2);
	ck_assert_str_eq(sh[0].name, "share");
	free(req);
}
END_TEST

START_TEST(test_enum_levels)
{
	static const uint32_t levels[] = { 0, 2, 501, 502 };
	uint8_t req[256], out[4096];
	struct share sh[8];
	size_t len, n, i;
	uint32_t fault, werr;

	for (i = 0; i < 4; i++) {
		len = req_enum(req, sizeof(req), levels[i]);
		n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out),
		    &fault);
		ck_assert_uint_eq(fault, 0);
		ck_assert_uint_eq(decode_enum(out, n, levels[i], sh, 8, &werr), 4);
		ck_assert_uint_eq(werr, 0);
		ck_assert_str_eq(sh[1].name, "share");
		if (levels[i] == 2 || levels[i] == 502) {
			ck_assert_str_eq(sh[1].path, "C:\\srv\\share");
			ck_assert_str_eq(sh[0].path, "");
			ck_assert_uint_eq(sh[1].max_uses, 0xFFFFFFFFu);
		}
	}
	/* An unknown level: the empty default arm and ERROR_INVALID_LEVEL. */
	len = req_enum(req, sizeof(req), 3);
	/* level 3 has no container on the wire: cut the ptr/count/ptr. */
	memmove(req + len - 24, req + len - 12, 12);
	len -= 12;
	n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(decode_enum(out, n, 3, sh, 8, &werr), 0);
	ck_assert_uint_eq(werr, 124);
}
END_TEST

START_TEST(test_get_info)
{
	static const uint32_t levels[] = { 0, 1, 2, 501, 502, 1005 };
	uint8_t req[256], out[1024];
	struct share s;
	size_t len, n, i;
	uint32_t fault, werr;

	for (i = 0; i < 6; i++) {
		len = req_get_info(req, sizeof(req), "SHARE", levels[i]);
		n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out),
		    &fault);
		ck_assert_uint_eq(fault, 0);
		ck_assert_int_eq(decode_get_info(out, n, levels[i], &s, &werr), 1);
		ck_assert_uint_eq(werr, 0);
		if (levels[i] != 1005)
			ck_assert_str_eq(s.name, "share");
		if (levels[i] == 1 || levels[i] == 2 || levels[i] >= 501)
			if (levels[i] != 1005)
				ck_assert_str_eq(s.remark, "the share");
	}
	/* Non-browseable shares are still found by name. */
	len = req_get_info(req, sizeof(req), "hidden", 1);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1, &s, &werr), 1);
	ck_assert_str_eq(s.remark, "not listed");
	len = req_get_info(req, sizeof(req), "nosuch", 1);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1, &s, &werr), 0);
	ck_assert_uint_eq(werr, 2310);		/* NERR_NetNameNotFound */
	/*
	 * Issue 20: a non-administrator gets no paths (levels 2, 502
	 * ACCESS_DENIED), finds no non-browseable share, and an anonymous
	 * caller gets nothing with `restrict anonymous` 1.
	 */
	test_env.admin = 0;
	len = req_get_info(req, sizeof(req), "share", 2);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 2, &s, &werr), 0);
	ck_assert_uint_eq(werr, 5);
	len = req_get_info(req, sizeof(req), "hidden", 1);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1, &s, &werr), 0);
	ck_assert_uint_eq(werr, 2310);
	test_env.anonymous = 1;
	test_conf.restrict_anonymous = 1;
	len = req_get_info(req, sizeof(req), "share", 1);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1, &s, &werr), 0);
	ck_assert_uint_eq(werr, 5);
	test_conf.restrict_anonymous = 0;
	test_env.anonymous = 0;
	test_env.admin = 1;
	len = req_get_info(req, sizeof(req), "share", 7);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 7, &s, &werr), 0);
	ck_assert_uint_eq(werr, 124);
}
END_TEST

/*
 * access based share enum: a share the caller could not connect to
 * (valid users, invalid users) is left out of every level of the list
 * and not found by NetShareGetInfo, administrators included; hide
 * unreadable shows in shi1005_flags.
 */
START_TEST(test_access_based_enum)
{
	static const uint32_t levels[] = { 0, 1, 2, 501, 502 };
	static char *only_bob[] = { "bob", NULL }, *alice[] = { "alice", NULL };
	struct conf_share *sh1 = &test_shares[1];
	uint8_t req[256], out[4096];
	struct share sh[8], s;
	size_t len, n, i, k;
	uint32_t fault, werr;

	sh1->access_based_share_enum = 1;
	sh1->valid_users = only_bob;
	for (i = 0; i < 5; i++) {
		len = req_enum(req, sizeof(req), levels[i]);
		n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out),
		    &fault);
		ck_assert_uint_eq(fault, 0);
		ck_assert_uint_eq(decode_enum(out, n, levels[i], sh, 8, &werr), 3);
		ck_assert_uint_eq(werr, 0);
		for (k = 0; k < 3; k++)
			ck_assert_str_ne(sh[k].name, "share");
	}
	len = req_get_info(req, sizeof(req), "share", 1);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1, &s, &werr), 0);
	ck_assert_uint_eq(werr, 2310);
	/* invalid users too */
	sh1->valid_users = NULL;
	sh1->invalid_users = alice;
	len = req_enum(req, sizeof(req), 1);
	n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(decode_enum(out, n, 1, sh, 8, &werr), 3);
	/* a user who may connect sees it */
	sh1->invalid_users = NULL;
	sh1->valid_users = alice;
	n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(decode_enum(out, n, 1, sh, 8, &werr), 4);
	ck_assert_str_eq(sh[1].name, "share");
	/* without the key, the list is the same for everyone */
	sh1->access_based_share_enum = 0;
	sh1->valid_users = only_bob;
	n = call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(decode_enum(out, n, 1, sh, 8, &werr), 4);
	sh1->valid_users = NULL;
	/* hide unreadable: SHI1005_FLAGS_ACCESS_BASED_DIRECTORY_ENUM */
	len = req_get_info(req, sizeof(req), "share", 1005);
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1005, &s, &werr), 1);
	ck_assert_uint_eq(s.max_uses, 0);
	sh1->hide_unreadable = 1;
	n = call(&pipe_iface_srvsvc, 16, req, len, out, sizeof(out), &fault);
	ck_assert_int_eq(decode_get_info(out, n, 1005, &s, &werr), 1);
	ck_assert_uint_eq(s.max_uses, 0x800);
	sh1->hide_unreadable = 0;
}
END_TEST

START_TEST(test_server_and_wksta_info)
{
	uint8_t req[128], out[512];
	struct ndr_w w;
	struct cur c;
	size_t n;
	uint32_t fault;
	char s[64];

	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\\\127.0.0.1");
	ndr_put_u32(&w, 101);
	n = call(&pipe_iface_srvsvc, 21, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, 0);
	cur_init(&c, out, n);
	ck_assert_uint_eq(ndr_u32(&c), 101);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 500);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	(void)ndr_u32(&c);
	(void)ndr_u32(&c);
	ck_assert_uint_eq(ndr_u32(&c) & 0x3, 0x3);	/* workstation, server */
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ndr_string(&c, s, sizeof(s));
	ck_assert_str_eq(s, "USMBTEST");
	ndr_string(&c, s, sizeof(s));
	ck_assert_str_eq(s, "usmbd test");
	ck_assert_uint_eq(ndr_u32(&c), 0);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);

	/* wkssvc NetrWkstaGetInfo 100, as rpcclient sends it (no "\\") */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "127.0.0.1");
	ndr_put_u32(&w, 100);
	n = call(&pipe_iface_wkssvc, 0, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, 0);
	cur_init(&c, out, n);
	ck_assert_uint_eq(ndr_u32(&c), 100);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 500);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	(void)ndr_u32(&c);
	(void)ndr_u32(&c);
	ndr_string(&c, s, sizeof(s));
	ck_assert_str_eq(s, "USMBTEST");
	ndr_string(&c, s, sizeof(s));
	ck_assert_str_eq(s, "OFFICE");
	ck_assert_uint_eq(ndr_u32(&c), 0);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);

	/* level 101, an arm not served: its NULL pointer, then the error */
	le32_put(req + wcur_off(&w.w) - 4, 101);
	n = call(&pipe_iface_wkssvc, 0, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(le32_get(out), 101);
	ck_assert_uint_eq(le32_get(out + 4), 0);
	ck_assert_uint_eq(le32_get(out + 8), 124);
	/* level 7, outside the arms: nothing */
	le32_put(req + wcur_off(&w.w) - 4, 7);
	n = call(&pipe_iface_wkssvc, 0, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(n, 8);

	(void)call(&pipe_iface_wkssvc, 5, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, DCERPC_NCA_S_OP_RNG_ERROR);
	(void)call(&pipe_iface_srvsvc, 14, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, DCERPC_NCA_S_OP_RNG_ERROR);
}
END_TEST

/*
 * NetrServerGetInfo at a level that is an arm of the union but not
 * served (502) carries a NULL pointer before ERROR_INVALID_LEVEL; a level
 * outside the arms (7) nothing.  NetrRemoteTOD: the clock now, in UTC;
 * every truncation of its stub faults.
 */
START_TEST(test_server_info_arm_and_tod)
{
	uint8_t req[128], out[512];
	struct ndr_w w;
	struct cur c;
	size_t n, len, k;
	uint32_t fault, v[12], i;
	time_t now;

	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\\\127.0.0.1");
	len = wcur_off(&w.w);
	ndr_put_u32(&w, 502);
	n = call(&pipe_iface_srvsvc, 21, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(le32_get(out), 502);
	ck_assert_uint_eq(le32_get(out + 4), 0);
	ck_assert_uint_eq(le32_get(out + 8), 124);
	le32_put(req + len, 7);
	n = call(&pipe_iface_srvsvc, 21, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(le32_get(out + 4), 124);

	now = time(NULL);
	n = call(&pipe_iface_srvsvc, 28, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(fault, 0);
	cur_init(&c, out, n);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	for (i = 0; i < 12; i++)
		v[i] = ndr_u32(&c);
	ck_assert_uint_eq(ndr_u32(&c), 0);		/* WERR_OK */
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(cur_left(&c), 0);
	ck_assert_uint_ge(v[0], (uint32_t)now);		/* tod_elapsedt */
	ck_assert_uint_le(v[0], (uint32_t)now + 5);
	ck_assert_uint_lt(v[2], 24);			/* hours */
	ck_assert_uint_lt(v[3], 60);			/* mins */
	ck_assert_uint_lt(v[4], 61);			/* secs */
	ck_assert_uint_lt(v[5], 100);			/* hunds */
	ck_assert_uint_eq(v[7], 310);			/* tinterval */
	ck_assert_uint_ge(v[8], 1);			/* day */
	ck_assert_uint_le(v[8], 31);
	ck_assert_uint_ge(v[9], 1);			/* month */
	ck_assert_uint_le(v[9], 12);
	ck_assert_uint_ge(v[10], 2020);			/* year */
	ck_assert_uint_lt(v[11], 7);			/* weekday */
	ck_assert_uint_eq((v[0] / 3600) % 24, v[2]);	/* UTC hours */
	for (k = 1; k < len; k++) {
		(void)call(&pipe_iface_srvsvc, 28, req, k, out, sizeof(out),
		    &fault);
		ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);
	}
}
END_TEST

/*
 * NetrServerDiskEnum level 0 as smbtorture asks it: "C:" and the empty
 * entry that ends the list, byte for byte; refused to a non-administrator;
 * every truncation of its stub faults.
 */
START_TEST(test_disk_enum)
{
	static const uint8_t want[] = {
		2, 0, 0, 0, 0, 0, 2, 0,			/* EntriesRead, Buffer */
		2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,	/* max, offset, actual */
		0, 0, 0, 0, 3, 0, 0, 0, 'C', 0, ':', 0, 0, 0, 0, 0,
		0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0,				/* TotalEntries */
		4, 0, 2, 0, 0, 0, 0, 0,			/* ResumeHandle */
		0, 0, 0, 0,
	};
	uint8_t req[128], out[512];
	struct ndr_w w;
	size_t n, len, k;
	uint32_t fault;

	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "\\\\127.0.0.1");
	ndr_put_u32(&w, 0);				/* Level */
	ndr_put_u32(&w, 0);				/* EntriesRead */
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 0);
	len = wcur_off(&w.w);
	n = call(&pipe_iface_srvsvc, 23, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(n, sizeof(want));
	/* referent ids are the writer's own: compare around them */
	ck_assert_uint_ne(le32_get(out + 4), 0);
	ck_assert_uint_ne(le32_get(out + 52), 0);
	memcpy(out + 4, want + 4, 4);
	memcpy(out + 52, want + 52, 4);
	ck_assert_mem_eq(out, want, sizeof(want));
	for (k = 0; k < len; k++) {
		(void)call(&pipe_iface_srvsvc, 23, req, k, out, sizeof(out),
		    &fault);
		ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);
	}
	test_env.admin = 0;
	n = call(&pipe_iface_srvsvc, 23, req, len, out, sizeof(out), &fault);
	test_env.admin = 1;
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(n, 24);
	ck_assert_uint_eq(le32_get(out + 20), 5);	/* ACCESS_DENIED */
	le32_put(req + len - 24, 1);			/* level 1 */
	n = call(&pipe_iface_srvsvc, 23, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(le32_get(out + n - 4), 124);

	/* a client-sent container: entries skipped; a Disk longer than 3
	 * WCHARs (here 4 billion) faults at once (fuzz_dcerpc found the
	 * skip running on over the count) */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 2);
	ndr_put_u16(&w, 'D');
	ndr_put_u16(&w, 0);
	ndr_put_u32(&w, 0);
	ndr_put_ptr(&w, 0);
	n = call(&pipe_iface_srvsvc, 23, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(le32_get(out + n - 4), 0);
	le32_put(req + 32, 0xFFFFFFFFu);
	(void)call(&pipe_iface_srvsvc, 23, req, wcur_off(&w.w), out, sizeof(out),
	    &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);
}
END_TEST

/* Every truncation of every request stub is a fault, read in bounds. */
START_TEST(test_stub_truncations)
{
	uint8_t full[4][256], out[4096], *t;
	size_t lens[4], k, i;
	uint16_t ops[4] = { 15, 16, 21, 16 };
	uint32_t fault;
	struct ndr_w w;

	lens[0] = req_enum(full[0], sizeof(full[0]), 502);
	lens[1] = req_get_info(full[1], sizeof(full[1]), "share", 2);
	ndr_w_init(&w, full[2], sizeof(full[2]));
	ndr_put_ptr(&w, 1);
	ndr_put_string(&w, "srv");
	ndr_put_u32(&w, 101);
	lens[2] = wcur_off(&w.w);
	lens[3] = req_get_info(full[3], sizeof(full[3]), "x", 1005);
	for (i = 0; i < 4; i++)
		for (k = 0; k < lens[i]; k++) {
			t = malloc(k ? k : 1);
			memcpy(t, full[i], k);
			(void)call(&pipe_iface_srvsvc, ops[i], t, k, out,
			    sizeof(out), &fault);
			ck_assert_msg(fault == DCERPC_FAULT_NDR,
			    "stub %zu cut at %zu: fault 0x%x", i, k, fault);
			free(t);
		}
}
END_TEST

START_TEST(test_malformed_stubs)
{
	uint8_t req[512], out[4096];
	struct ndr_w w;
	size_t len;
	uint32_t fault;

	/* Union discriminant differs from the level */
	len = req_enum(req, sizeof(req), 1);
	le32_put(req + 40, 2);
	(void)call(&pipe_iface_srvsvc, 15, req, len, out, sizeof(out), &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);

	/* A container claiming 1e9 entries */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1000000000);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1000000000);
	(void)call(&pipe_iface_srvsvc, 15, req, wcur_off(&w.w), out,
	    sizeof(out), &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);

	/* A container with one real entry is decoded and ignored. */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1);		/* conformance */
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 0);
	ndr_put_ptr(&w, 0);
	ndr_put_string(&w, "x");
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_ptr(&w, 0);
	(void)call(&pipe_iface_srvsvc, 15, req, wcur_off(&w.w), out,
	    sizeof(out), &fault);
	ck_assert_uint_eq(fault, 0);

	/* NetName with max_count 0xffffffff and a huge actual_count */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_u32(&w, 0);
	ndr_put_u32(&w, 0x80000000u);
	ndr_put_u32(&w, 1);
	(void)call(&pipe_iface_srvsvc, 16, req, wcur_off(&w.w), out,
	    sizeof(out), &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);

	/* A non-zero offset */
	ndr_w_init(&w, req, sizeof(req));
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 2);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_u16(&w, 0);
	ndr_put_u32(&w, 1);
	(void)call(&pipe_iface_srvsvc, 16, req, wcur_off(&w.w), out,
	    sizeof(out), &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);
}
END_TEST

static Suite *
srvsvc_suite(void)
{
	Suite *s = suite_create("srvsvc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_decoder_on_samba);
	tcase_add_test(tc, test_enum_smbclient_request);
	tcase_add_test(tc, test_enum_levels);
	tcase_add_test(tc, test_get_info);
	tcase_add_test(tc, test_access_based_enum);
	tcase_add_test(tc, test_server_and_wksta_info);
	tcase_add_test(tc, test_server_info_arm_and_tod);
	tcase_add_test(tc, test_disk_enum);
	tcase_add_test(tc, test_stub_truncations);
	tcase_add_test(tc, test_malformed_stubs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(srvsvc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
