/*
 * srvsvc's NetrSessionEnum, NetrFileEnum, NetrFileGetInfo,
 * NetrConnectionEnum, NetrFileClose and NetrSessionDel
 * (worker/pipe_srvsvc_enum.c) over a real state env holding two sessions,
 * two opens (one durable, one with two locks) and a counted tree: each
 * answer decoded back field by field from the MS-SRVS IDL; refusals to a
 * plain user, a guest and a null session (the closes without asking the
 * master: a fake pipe_admin_ask counts the calls); unknown levels; every
 * truncation of every request.  The listings run over one env and over
 * 8 data envs (TCase core-8envs).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/endian.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "shm/shm.h"
#include "shm/shm_priv.h"
#include "worker/pipe.h"
#include "worker/pipe_srvsvc.h"
#include "testlib.h"

#define WERR_OK			0
#define WERR_ACCESS_DENIED	5
#define WERR_INVALID_LEVEL	124
#define WERR_FILEIDNOTFOUND	2314

/* a share's path of 3,000 characters: test_file_enum_big's (set up) */
static char long_path[3001];
static struct conf_share test_shares[] = {
	{ .name = "IPC$", .is_ipc = 1, .browseable = 1 },
	{ .name = "share", .path = "/srv/share", .browseable = 1 },
	{ .name = "long", .path = long_path, .browseable = 1 },
	{ .name = "subst", .path = "/srv/%U", .browseable = 1 },
};
static struct conf test_conf = {
	.netbios_name = "USMBTEST", .guest_account = "nobody",
	.shares = test_shares, .nshares = 4,
};

static char tdir[64];
static struct shm *shm;
static unsigned parts_log2;	/* 0: one env; 3: 8 data envs besides */
static size_t map_size = 1024 * 1024;
static struct pipe_env env;		/* alice, an administrator */
static const struct shm_file_id F1 = { 1, 100 }, F2 = { 1, 200 };
#define S_ALICE	0x1111
#define S_BOB	0x2222
#define P_BOB	0x500000007ull	/* bob's open: two locks */
#define P_ALICE	0x600000009ull	/* alice's durable open */

static void
session(uint64_t id, pid_t pid, const char *user, const char *addr,
    uint64_t ago)
{
	struct shm_session_rec r;

	memset(&r, 0, sizeof(r));
	r.session_id = id;
	r.pid = pid;
	strcpy(r.user, user);
	strcpy(r.client_addr, addr);
	r.since = (uint64_t)time(NULL) - ago;
	ck_assert_int_eq(shm_session_put(shm, &r), 0);
}

static void
setup(void)
{
	struct shm_open_rec o;
	struct shm_durable_rec d;
	struct shm_brlock_owner own = { getpid(), P_BOB };

	snprintf(tdir, sizeof(tdir), "/tmp/check_srvsvc_enum.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	ck_assert_int_eq(shm_attach(tdir, map_size, 0,
	    SHM_CREATE | SHM_PARTS_LOG2(parts_log2), &shm), 0);
	session(S_ALICE, getpid(), "alice", "10.0.0.1", 100);
	session(S_BOB, getpid(), "bob", "10.0.0.2", 50);

	memset(&o, 0, sizeof(o));
	o.pid = getpid();
	o.persistent_id = P_BOB;
	o.session_id = S_BOB;
	o.access = SHM_FILE_READ_DATA | SHM_FILE_WRITE_DATA;
	o.share_access = 7;
	o.name_share = "share";
	o.name_path = "dir/file.txt";
	ck_assert_int_eq(shm_open_insert(shm, &F1, &o, NULL), 0);
	ck_assert_int_eq(shm_brlock_lock(shm, &F1, &own, 0, 10,
	    SHM_BRL_EXCLUSIVE), 0);
	ck_assert_int_eq(shm_brlock_lock(shm, &F1, &own, 20, 10, 0), 0);

	o.persistent_id = P_ALICE;
	o.session_id = S_ALICE;
	o.access = SHM_FILE_READ_DATA;
	o.name_path = "dir/a.txt";
	memset(&d, 0, sizeof(d));
	d.persistent_id = P_ALICE;
	d.fid = F2;
	strcpy(d.path, "dir/a.txt");
	strcpy(d.share, "share");
	strcpy(d.user, "alice");
	d.timeout_ms = 60000;
	ck_assert_int_eq(shm_open_insert_ex(shm, &F2, &o, &d, NULL, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(shm, "share", getpid(), 7, 10, NULL), 0);

	memset(&env, 0, sizeof(env));
	env.conf = &test_conf;
	strcpy(env.user, "alice");
	env.admin = 1;
	env.shm = shm;
}

static void
setup8(void)
{
	parts_log2 = 3;
	setup();
	parts_log2 = 0;
}

static void
setup_big(void)
{
	map_size = 32 * 1024 * 1024;
	setup();
	map_size = 1024 * 1024;
}

static void
teardown(void)
{
	char cmd[128];

	shm_detach(shm);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- requests ---- */

static void
put_opt(struct ndr_w *w, const char *s)
{
	ndr_put_ptr(w, s != NULL);
	if (s != NULL)
		ndr_put_string(w, s);
}

/* The [in] *_ENUM_STRUCT with an empty container, max length, resume. */
static void
put_enum_tail(struct ndr_w *w, uint32_t level, int array)
{
	ndr_put_u32(w, level);
	ndr_put_u32(w, level);
	ndr_put_ptr(w, 1);
	ndr_put_u32(w, 0);
	ndr_put_ptr(w, array);
	if (array)
		ndr_put_u32(w, 0);			/* impacket: empty array */
	ndr_put_u32(w, 0xFFFFFFFFu);
	ndr_put_ptr(w, 1);
	ndr_put_u32(w, 0);
}

static size_t
req_sess(uint8_t *b, size_t cap, uint32_t level, const char *client,
    const char *user, int array)
{
	struct ndr_w w;

	ndr_w_init(&w, b, cap);
	put_opt(&w, "\\\\srv");
	put_opt(&w, client);
	put_opt(&w, user);
	put_enum_tail(&w, level, array);
	return wcur_off(&w.w);
}

static size_t
req_file(uint8_t *b, size_t cap, uint32_t level, const char *user)
{
	struct ndr_w w;

	ndr_w_init(&w, b, cap);
	put_opt(&w, "\\\\srv");
	put_opt(&w, NULL);				/* BasePath */
	put_opt(&w, user);
	put_enum_tail(&w, level, 0);
	return wcur_off(&w.w);
}

static size_t
req_conn(uint8_t *b, size_t cap, uint32_t level, const char *qual)
{
	struct ndr_w w;

	ndr_w_init(&w, b, cap);
	put_opt(&w, "\\\\srv");
	put_opt(&w, qual);
	put_enum_tail(&w, level, 0);
	return wcur_off(&w.w);
}

static size_t
req_getinfo(uint8_t *b, size_t cap, uint32_t id, uint32_t level)
{
	struct ndr_w w;

	ndr_w_init(&w, b, cap);
	put_opt(&w, "\\\\srv");
	ndr_put_u32(&w, id);
	ndr_put_u32(&w, level);
	return wcur_off(&w.w);
}

static uint8_t rsp[64 * 1024];

static size_t
run(const struct pipe_env *e, uint16_t opnum, const uint8_t *in, size_t len,
    uint32_t *fault)
{
	struct cur c;
	struct ndr_w w;

	cur_init(&c, in, len);
	ndr_w_init(&w, rsp, sizeof(rsp));
	*fault = pipe_iface_srvsvc.call(e, opnum, &c, &w);
	ck_assert_int_eq(w.w.err, 0);
	return wcur_off(&w.w);
}

/* ---- an answer's decoder, from the IDL ---- */

struct ent {
	uint32_t	u[8];		/* DWORDs in field order */
	char		s[4][128];	/* strings in field order */
};

/*
 * layout: 'p' a [string] pointer, 'u' a DWORD.  Decodes Level, the
 * discriminant, the container, the array's fixed parts then the strings,
 * TotalEntries, the resume handle and the status.
 */
static uint32_t
decode_enum(size_t len, uint32_t level, const char *layout, struct ent *e,
    uint32_t *n, uint32_t *total)
{
	struct cur c;
	uint32_t i, count, werr, ptrs[64][4];
	const char *l;
	unsigned nu, ns;

	cur_init(&c, rsp, len);
	ck_assert_uint_eq(ndr_u32(&c), level);
	ck_assert_uint_eq(ndr_u32(&c), level);
	*n = 0;
	if (layout != NULL) {
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		count = ndr_u32(&c);
		if (ndr_ptr(&c) != 0) {
			ck_assert_uint_eq(ndr_u32(&c), count);
			ck_assert_uint_le(count, 64);
			for (i = 0; i < count; i++)
				for (l = layout, nu = ns = 0; *l; l++)
					if (*l == 'u')
						e[i].u[nu++] = ndr_u32(&c);
					else
						ptrs[i][ns++] = ndr_ptr(&c);
			for (i = 0; i < count; i++)
				for (l = layout, ns = 0; *l; l++)
					if (*l == 'p') {
						ck_assert_uint_ne(ptrs[i][ns], 0);
						ndr_string(&c, e[i].s[ns++],
						    sizeof(e[i].s[0]));
					}
		} else
			ck_assert_uint_eq(count, 0);
		*n = count;
	}
	*total = ndr_u32(&c);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), 0);		/* resume: nothing left */
	werr = ndr_u32(&c);
	ck_assert_int_eq(c.err, 0);
	ck_assert_ptr_eq(c.p, c.end);
	return werr;
}

static const char *
sess_layout(uint32_t level)
{
	switch (level) {
	case 0: return "p";
	case 1: return "ppuuuu";
	case 2: return "ppuuuup";
	case 10: return "ppuu";
	case 502: return "ppuuuupp";
	}
	return NULL;
}

static int
find_user(struct ent *e, uint32_t n, const char *user)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strcmp(e[i].s[1], user) == 0)
			return (int)i;
	return -1;
}

START_TEST(test_session_enum_levels)
{
	static const uint32_t levels[] = { 0, 1, 2, 10, 502 };
	uint8_t req[512];
	struct ent e[64];
	uint32_t fault, n, total, level;
	size_t len;
	unsigned k;
	int a, b;

	for (k = 0; k < 5; k++) {
		level = levels[k];
		memset(e, 0, sizeof(e));
		len = run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
		    req_sess(req, sizeof(req), level, NULL, NULL, k & 1), &fault);
		ck_assert_uint_eq(fault, 0);
		ck_assert_uint_eq(decode_enum(len, level, sess_layout(level),
		    e, &n, &total), WERR_OK);
		ck_assert_uint_eq(n, 2);
		ck_assert_uint_eq(total, 2);
		if (level == 0) {
			ck_assert(strcmp(e[0].s[0], "10.0.0.1") == 0 ||
			    strcmp(e[1].s[0], "10.0.0.1") == 0);
			continue;
		}
		a = find_user(e, n, "alice");
		b = find_user(e, n, "bob");
		ck_assert_int_ge(a, 0);
		ck_assert_int_ge(b, 0);
		ck_assert_str_eq(e[a].s[0], "10.0.0.1");
		ck_assert_str_eq(e[b].s[0], "10.0.0.2");
		if (level == 10) {
			/* time, idle_time */
			ck_assert_uint_ge(e[a].u[0], 100);
			ck_assert_uint_lt(e[a].u[0], 200);
			ck_assert_uint_ge(e[b].u[0], 50);
			ck_assert_uint_eq(e[a].u[1], 0);
			continue;
		}
		/* num_opens, time, idle_time, user_flags */
		ck_assert_uint_eq(e[a].u[0], 1);
		ck_assert_uint_eq(e[b].u[0], 1);
		ck_assert_uint_ge(e[a].u[1], 100);
		ck_assert_uint_lt(e[a].u[1], 200);
		ck_assert_uint_eq(e[a].u[3], 0);
		if (level >= 2)
			ck_assert_str_eq(e[a].s[2], "");	/* cltype_name */
		if (level == 502)
			ck_assert_str_eq(e[a].s[3], "");	/* transport */
	}
}
END_TEST

START_TEST(test_session_enum_filters)
{
	uint8_t req[512];
	struct ent e[64];
	uint32_t fault, n, total;
	size_t len;

	len = run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
	    req_sess(req, sizeof(req), 10, NULL, "BOB", 0), &fault);
	ck_assert_uint_eq(decode_enum(len, 10, "ppuu", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(e[0].s[1], "bob");
	len = run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
	    req_sess(req, sizeof(req), 10, "\\\\10.0.0.1", NULL, 0), &fault);
	ck_assert_uint_eq(decode_enum(len, 10, "ppuu", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(e[0].s[1], "alice");
	len = run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
	    req_sess(req, sizeof(req), 10, "\\\\10.0.0.1", "bob", 0), &fault);
	ck_assert_uint_eq(decode_enum(len, 10, "ppuu", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(total, 0);
}
END_TEST

/* A plain user, a guest, a null session: refused, nothing listed. */
START_TEST(test_refused)
{
	struct pipe_env who[3];
	uint8_t req[512];
	struct ent e[64];
	uint32_t fault, n, total;
	size_t len;
	int k;

	for (k = 0; k < 3; k++) {
		who[k] = env;
		who[k].admin = 0;
	}
	strcpy(who[0].user, "bob");
	who[1].guest = 1;
	who[1].admin = 1;		/* even in the group, a guest is not */
	who[2].user[0] = '\0';
	who[2].anonymous = 1;
	who[2].admin = 1;
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(srvsvc_enum_allowed(&who[k]), 0);
		len = run(&who[k], SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
		    req_sess(req, sizeof(req), 502, NULL, NULL, 0), &fault);
		ck_assert_uint_eq(decode_enum(len, 502, "ppuuuupp", e, &n,
		    &total), WERR_ACCESS_DENIED);
		ck_assert_uint_eq(n + total, 0);
		len = run(&who[k], SRVSVC_OPNUM_NETR_FILE_ENUM, req,
		    req_file(req, sizeof(req), 3, NULL), &fault);
		ck_assert_uint_eq(decode_enum(len, 3, "uuupp", e, &n, &total),
		    WERR_ACCESS_DENIED);
		ck_assert_uint_eq(n + total, 0);
		len = run(&who[k], SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req,
		    req_conn(req, sizeof(req), 1, "share"), &fault);
		ck_assert_uint_eq(decode_enum(len, 1, "uuuuupp", e, &n,
		    &total), WERR_ACCESS_DENIED);
		ck_assert_uint_eq(n + total, 0);
		len = run(&who[k], SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
		    req_getinfo(req, sizeof(req), srvsvc_file_id(P_BOB), 3), &fault);
		ck_assert_uint_eq(len, 12);	/* level, NULL, status */
		ck_assert_uint_eq(le32dec(rsp + 4), 0);
		ck_assert_uint_eq(le32dec(rsp + 8), WERR_ACCESS_DENIED);
	}
}
END_TEST

START_TEST(test_invalid_levels)
{
	uint8_t req[512];
	struct ent e[4];
	uint32_t fault, n, total;
	size_t len;

	len = run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
	    req_sess(req, sizeof(req), 3, NULL, NULL, 0), &fault);
	ck_assert_uint_eq(decode_enum(len, 3, NULL, e, &n, &total),
	    WERR_INVALID_LEVEL);
	len = run(&env, SRVSVC_OPNUM_NETR_FILE_ENUM, req,
	    req_file(req, sizeof(req), 1, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 1, NULL, e, &n, &total),
	    WERR_INVALID_LEVEL);
	len = run(&env, SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req,
	    req_conn(req, sizeof(req), 2, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 2, NULL, e, &n, &total),
	    WERR_INVALID_LEVEL);
	len = run(&env, SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
	    req_getinfo(req, sizeof(req), 1, 50), &fault);
	ck_assert_uint_eq(len, 8);
	ck_assert_uint_eq(le32dec(rsp + 4), WERR_INVALID_LEVEL);
}
END_TEST

START_TEST(test_file_enum)
{
	uint8_t req[512];
	struct ent e[64];
	uint32_t fault, n, total, i;
	size_t len;
	int a = -1, b = -1;

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_ENUM, req,
	    req_file(req, sizeof(req), 3, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 3, "uuupp", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(total, 2);
	for (i = 0; i < n; i++) {
		if (e[i].u[0] == srvsvc_file_id(P_BOB))
			b = (int)i;
		if (e[i].u[0] == srvsvc_file_id(P_ALICE))
			a = (int)i;
	}
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	/* id, permissions, num_locks; path, username */
	ck_assert_uint_eq(e[b].u[1], 3);		/* PERM_FILE_READ|WRITE */
	ck_assert_uint_eq(e[b].u[2], 2);
	/* a plain open: its name, as a durable one's */
	ck_assert_str_eq(e[b].s[0], "C:\\srv\\share\\dir\\file.txt");
	ck_assert_str_eq(e[b].s[1], "bob");
	ck_assert_uint_eq(e[a].u[1], 1);
	ck_assert_uint_eq(e[a].u[2], 0);
	ck_assert_str_eq(e[a].s[0], "C:\\srv\\share\\dir\\a.txt");
	ck_assert_str_eq(e[a].s[1], "alice");

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_ENUM, req,
	    req_file(req, sizeof(req), 2, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 2, "u", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert(e[0].u[0] != e[1].u[0]);

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_ENUM, req,
	    req_file(req, sizeof(req), 3, "bob"), &fault);
	ck_assert_uint_eq(decode_enum(len, 3, "uuupp", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(e[0].s[1], "bob");
}
END_TEST

/*
 * 600 durable opens of 4,000-character names (what any user can hold):
 * 4.8 MB of paths in UTF-16, more than the pipe's whole answer
 * (PIPE_MAX_RSP_STUB), which made the administrator's NetrFileEnum
 * level 3 fail whole.  It answers what fits, ERROR_MORE_DATA and a
 * ResumeHandle, and the call again from there the rest.
 */
#define BIG_OPENS	600
#define WERR_MORE_DATA	234

START_TEST(test_file_enum_big)
{
	static uint8_t big[PIPE_MAX_RSP_STUB];
	static struct shm_durable_rec d;
	static char name[4096];
	struct shm_open_rec o;
	struct shm_file_id fid;
	uint8_t req[512];
	struct ndr_w w;
	struct cur c, in;
	uint32_t fault, i, count, total, resume = 0, got = 0, werr, calls;

	memset(&o, 0, sizeof(o));
	memset(&d, 0, sizeof(d));
	memset(long_path, 'p', 3000);
	long_path[0] = '/';
	memset(name, 'x', 3990);
	name[3990] = '\0';
	o.pid = getpid();
	o.name_share = "long";
	o.session_id = S_BOB;
	o.access = SHM_FILE_READ_DATA;
	strcpy(d.share, "share");
	strcpy(d.user, "bob");
	d.timeout_ms = 60000;
	for (i = 0; i < BIG_OPENS; i++) {
		fid.dev = 2;
		fid.ino = 1000 + i;
		o.persistent_id = d.persistent_id = 0x700000000ull + i;
		d.fid = fid;
		snprintf(d.path, sizeof(d.path), "d/%04u%.3990s", i, name);
		o.name_path = d.path;
		ck_assert_int_eq(shm_open_insert_ex(shm, &fid, &o, &d, NULL,
		    NULL), 0);
	}
	for (calls = 0; calls < 4; calls++) {
		ndr_w_init(&w, req, sizeof(req));
		put_opt(&w, "\\\\srv");
		put_opt(&w, NULL);
		put_opt(&w, NULL);
		ndr_put_u32(&w, 3);
		ndr_put_u32(&w, 3);
		ndr_put_ptr(&w, 1);
		ndr_put_u32(&w, 0);
		ndr_put_ptr(&w, 0);
		ndr_put_u32(&w, 0xFFFFFFFF);		/* PreferedMaximumLength */
		ndr_put_ptr(&w, 1);
		ndr_put_u32(&w, resume);
		cur_init(&in, req, wcur_off(&w.w));
		ndr_w_init(&w, big, sizeof(big));
		fault = pipe_iface_srvsvc.call(&env, SRVSVC_OPNUM_NETR_FILE_ENUM,
		    &in, &w);
		ck_assert_uint_eq(fault, 0);
		ck_assert_int_eq(w.w.err, 0);		/* it fits the pipe */
		cur_init(&c, big, wcur_off(&w.w));
		ck_assert_uint_eq(ndr_u32(&c), 3);
		ck_assert_uint_eq(ndr_u32(&c), 3);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		count = ndr_u32(&c);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		ck_assert_uint_eq(ndr_u32(&c), count);
		for (i = 0; i < count * 5; i++)
			(void)ndr_u32(&c);
		for (i = 0; i < count; i++) {
			ndr_string(&c, name, sizeof(name));
			/* the long share's, its name's tail kept; the setup's */
			ck_assert(strncmp(name, "C:\\srv\\share\\", 13) == 0 ||
			    (strncmp(name, "C:\\ppp", 6) == 0 &&
			    strlen(name) == 2 + 3000 + 4 + SHM_ONAME_PATH_MAX &&
			    memcmp(name + 3002, "\\...", 4) == 0));
			ndr_string(&c, name, sizeof(name));
		}
		total = ndr_u32(&c);
		ck_assert_uint_eq(total, BIG_OPENS + 2 - got);
		ck_assert_uint_ne(ndr_ptr(&c), 0);
		resume = ndr_u32(&c);
		werr = ndr_u32(&c);
		ck_assert_int_eq(c.err, 0);
		ck_assert_ptr_eq(c.p, c.end);
		got += count;
		if (werr == WERR_OK) {
			ck_assert_uint_eq(resume, 0);
			break;
		}
		ck_assert_uint_eq(werr, WERR_MORE_DATA);
		ck_assert_uint_gt(count, 100);
		ck_assert_uint_eq(resume, got);
	}
	ck_assert_uint_eq(got, BIG_OPENS + 2);
	ck_assert_uint_ge(calls, 1);		/* not all in one answer */
}
END_TEST

START_TEST(test_file_get_info)
{
	uint8_t req[512];
	char path[128], user[64];
	uint32_t fault;
	struct cur c;
	size_t len;

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
	    req_getinfo(req, sizeof(req), srvsvc_file_id(P_ALICE), 3), &fault);
	cur_init(&c, rsp, len);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_eq(ndr_u32(&c), srvsvc_file_id(P_ALICE));
	ck_assert_uint_eq(ndr_u32(&c), 1);
	ck_assert_uint_eq(ndr_u32(&c), 0);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ndr_string(&c, path, sizeof(path));
	ndr_string(&c, user, sizeof(user));
	ck_assert_str_eq(path, "C:\\srv\\share\\dir\\a.txt");
	ck_assert_str_eq(user, "alice");
	ck_assert_uint_eq(ndr_u32(&c), WERR_OK);
	ck_assert_int_eq(c.err, 0);
	ck_assert_ptr_eq(c.p, c.end);

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
	    req_getinfo(req, sizeof(req), srvsvc_file_id(P_BOB), 2), &fault);
	ck_assert_uint_eq(len, 16);
	ck_assert_uint_eq(le32dec(rsp + 8), srvsvc_file_id(P_BOB));
	ck_assert_uint_eq(le32dec(rsp + 12), WERR_OK);

	len = run(&env, SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
	    req_getinfo(req, sizeof(req), 12345, 3), &fault);
	ck_assert_uint_eq(len, 12);
	ck_assert_uint_eq(le32dec(rsp + 4), 0);
	ck_assert_uint_eq(le32dec(rsp + 8), WERR_FILEIDNOTFOUND);
}
END_TEST

/* NetrFileGetInfo level 3's path of open pers ("" and 2314 when none). */
static uint32_t
getinfo_path(uint64_t pers, char *path, size_t cap)
{
	uint8_t req[512];
	char user[64];
	uint32_t fault, werr;
	struct cur c;
	size_t len;

	path[0] = '\0';
	len = run(&env, SRVSVC_OPNUM_NETR_FILE_GET_INFO, req,
	    req_getinfo(req, sizeof(req), srvsvc_file_id(pers), 3), &fault);
	ck_assert_uint_eq(fault, 0);
	cur_init(&c, rsp, len);
	ck_assert_uint_eq(ndr_u32(&c), 3);
	if (ndr_ptr(&c) == 0)
		return ndr_u32(&c);
	for (int i = 0; i < 3; i++)
		(void)ndr_u32(&c);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ck_assert_uint_ne(ndr_ptr(&c), 0);
	ndr_string(&c, path, cap);
	ndr_string(&c, user, sizeof(user));
	werr = ndr_u32(&c);
	ck_assert_int_eq(c.err, 0);
	ck_assert_ptr_eq(c.p, c.end);
	return werr;
}

/*
 * Every open's name (shm/oname.c): a stream's; a share this worker
 * cannot name the root of; a rename (the open's own share only, a
 * stream's suffix kept); a name cut to its tail at a character; gone
 * at the close and at the purge of a dead worker.
 */
#define P_S1	0x500000011ull
#define P_S2	0x500000012ull
#define P_S3	0x500000013ull
START_TEST(test_file_names)
{
	static const struct shm_file_id F3 = { 1, 300 };
	static const struct shm_file_id F3S = { (1ull << 63) | 1, 300 };
	static char longname[3100], path[8192];
	struct shm_open_name nm;
	struct shm_open_rec o;
	struct shm_purge_result pr;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.pid = getpid();
	o.session_id = S_BOB;
	o.access = SHM_FILE_READ_DATA;
	o.share_access = 7;
	o.link = 0x77;
	o.name_share = "SHARE";		/* the config's, any case */
	o.name_path = "d/f.txt";
	o.name_stream = "s1";
	o.persistent_id = P_S1;
	o.has_base = 1;
	o.stream_base = F3;
	ck_assert_int_eq(shm_open_insert(shm, &F3S, &o, NULL), 0);
	ck_assert_uint_eq(getinfo_path(P_S1, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "C:\\srv\\share\\d\\f.txt:s1");

	o.has_base = 0;
	o.name_stream = NULL;
	o.persistent_id = P_S2;
	ck_assert_int_eq(shm_open_insert(shm, &F3, &o, NULL), 0);
	o.persistent_id = P_S3;
	o.name_share = "bob";		/* a home share: no root named */
	ck_assert_int_eq(shm_open_insert(shm, &F3, &o, NULL), 0);
	ck_assert_uint_eq(getinfo_path(P_S3, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "\\bob\\d\\f.txt");

	/* renamed through "share": its opens follow, bob's view does not */
	ck_assert_int_eq(shm_open_relink(shm, &F3, 0x77, 0x78, "share",
	    "e/g.txt"), 0);
	ck_assert_uint_eq(getinfo_path(P_S2, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "C:\\srv\\share\\e\\g.txt");
	ck_assert_uint_eq(getinfo_path(P_S1, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "C:\\srv\\share\\e\\g.txt:s1");
	ck_assert_uint_eq(getinfo_path(P_S3, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "\\bob\\d\\f.txt");

	/* closed: the name goes with the open */
	ck_assert_int_eq(shm_open_remove(shm, &F3, P_S2, NULL), 0);
	ck_assert_int_eq(shm_open_name_get(shm, &F3, P_S2, &nm), -ENOENT);
	ck_assert_uint_eq(getinfo_path(P_S2, path, sizeof(path)),
	    WERR_FILEIDNOTFOUND);
	ck_assert_int_eq(shm_open_remove_stream(shm, &F3S, &F3, P_S1, NULL), 0);
	ck_assert_int_eq(shm_open_name_get(shm, &F3S, P_S1, &nm), -ENOENT);

	/* 3,000 bytes of two-byte characters: the tail, from a character */
	for (i = 0; i + 2 <= 3000; i += 2)
		memcpy(longname + i, "\xc3\xa9", 2);
	longname[i] = '\0';
	o.name_share = "share";
	o.name_path = longname;
	o.name_stream = "xy";		/* 3 bytes: a cut inside a character */
	o.persistent_id = P_S2;
	ck_assert_int_eq(shm_open_insert(shm, &F3, &o, NULL), 0);
	ck_assert_int_eq(shm_open_name_get(shm, &F3, P_S2, &nm), 0);
	ck_assert_uint_eq(nm.flags, SHM_ONAME_TRUNC);
	ck_assert_uint_eq(strlen(nm.path), SHM_ONAME_PATH_MAX - 1);
	ck_assert_uint_eq((uint8_t)nm.path[0], 0xc3);
	ck_assert_str_eq(nm.path + strlen(nm.path) - 3, ":xy");
	ck_assert_uint_eq(getinfo_path(P_S2, path, sizeof(path)), WERR_OK);
	ck_assert(strncmp(path, "C:\\srv\\share\\...\xc3\xa9", 18) == 0);
	/* a substitution in the share's path: not worked out for another */
	o.name_share = "subst";
	o.name_path = "f";
	o.name_stream = NULL;
	o.persistent_id = P_S1;
	ck_assert_int_eq(shm_open_insert(shm, &F3, &o, NULL), 0);
	ck_assert_uint_eq(getinfo_path(P_S1, path, sizeof(path)), WERR_OK);
	ck_assert_str_eq(path, "\\subst\\f");

	/* a dead worker's opens: purged with their names */
	o.pid = 999999;
	o.persistent_id = P_S3 + 1;
	ck_assert_int_eq(shm_open_insert(shm, &F3, &o, NULL), 0);
	ck_assert_int_eq(shm_open_name_get(shm, &F3, P_S3 + 1, &nm), 0);
	ck_assert_int_eq(shm_purge_worker(shm, 999999, &pr), 0);
	ck_assert_uint_eq(pr.opens, 1);
	ck_assert_int_eq(shm_open_name_get(shm, &F3, P_S3 + 1, &nm), -ENOENT);
}
END_TEST

/*
 * Name records any worker could have planted: every malformed value
 * shows an empty path, and the listing goes on.
 */
START_TEST(test_file_names_malformed)
{
	static const uint8_t bad[][12] = {
		{ 2, 0, 1, 0, 's', 1, 0, 'f' },		/* version */
		{ 1, 2, 1, 0, 's', 1, 0, 'f' },		/* unknown flag */
		{ 1, 0, 9, 0, 's', 1, 0, 'f' },		/* share past the end */
		{ 1, 0, 1, 0, 's', 9, 0, 'f' },		/* path past the end */
		{ 1, 0, 1, 0, 's', 1, 0, 'f', 0 },	/* a byte left over */
		{ 1, 0, 1, 0, 0, 1, 0, 'f' },		/* a NUL in the share */
		{ 1, 0, 0xff, 0xff },			/* a share of 65535 */
		{ 1 },					/* cut short */
	};
	static const size_t blen[] = { 8, 8, 8, 8, 9, 8, 4, 1 };
	static char path[8192];
	uint8_t k[SHM_ONAME_KEY_LEN], val[SHM_ONAME_VAL_MAX];
	struct shm_open_name nm;
	MDB_val kv = { sizeof(k), k }, v;
	MDB_txn *txn;
	size_t i, n;

	shm_fid_key(k, &F1);
	k[SHM_FID_KEY_LEN] = 'N';
	shm_be64_put(k + SHM_FID_KEY_LEN + 1, P_BOB);
	for (i = 0; i < sizeof(blen) / sizeof(blen[0]); i++) {
		ck_assert_int_eq(shm_open_name_decode(bad[i], blen[i], &nm),
		    -EPROTO);
		ck_assert_int_eq(shm_wbegin(shm, shm_env_fid(shm, &F1), &txn), 0);
		v.mv_size = blen[i];
		v.mv_data = (void *)bad[i];
		ck_assert_int_eq(mdb_put(txn, shm->db_opens, &kv, &v, 0), 0);
		ck_assert_int_eq(shm_wcommit(shm, txn), 0);
		ck_assert_int_eq(shm_open_name_get(shm, &F1, P_BOB, &nm), -EPROTO);
		ck_assert_uint_eq(getinfo_path(P_BOB, path, sizeof(path)),
		    WERR_OK);
		ck_assert_str_eq(path, "");
		ck_assert_uint_eq(getinfo_path(P_ALICE, path, sizeof(path)),
		    WERR_OK);
		ck_assert_str_eq(path, "C:\\srv\\share\\dir\\a.txt");
	}
	/* every truncation of a valid value is refused */
	n = shm_open_name_encode(val, "share", "dir/file.txt", "s");
	ck_assert_int_eq(shm_open_name_decode(val, n, &nm), 0);
	ck_assert_str_eq(nm.path, "dir/file.txt:s");
	for (i = 0; i < n; i++)
		ck_assert_int_eq(shm_open_name_decode(val, i, &nm), -EPROTO);
}
END_TEST

START_TEST(test_conn_enum)
{
	uint8_t req[512];
	struct ent e[64];
	uint32_t fault, n, total, id;
	size_t len;

	len = run(&env, SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req,
	    req_conn(req, sizeof(req), 1, "SHARE"), &fault);
	ck_assert_uint_eq(decode_enum(len, 1, "uuuuupp", e, &n, &total),
	    WERR_OK);
	ck_assert_uint_eq(n, 1);
	/* id, type, num_opens, num_users, time; username, netname */
	id = e[0].u[0];
	ck_assert_uint_eq(e[0].u[1], 0);
	ck_assert_uint_eq(e[0].u[3], 1);
	ck_assert_str_eq(e[0].s[1], "share");
	/* both sessions are this pid's: the first one found names it */
	ck_assert(strcmp(e[0].s[0], "alice") == 0 ||
	    strcmp(e[0].s[0], "bob") == 0);
	len = run(&env, SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req,
	    req_conn(req, sizeof(req), 0, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 0, "u", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(e[0].u[0], id);
	len = run(&env, SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req,
	    req_conn(req, sizeof(req), 0, "other"), &fault);
	ck_assert_uint_eq(decode_enum(len, 0, "u", e, &n, &total), WERR_OK);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/*
 * NetrFileClose and NetrSessionDel go to the master (pipe_admin_ask, a
 * message in the worker) only for an administrator; a plain user, a
 * guest and a null session are refused here without it; both names
 * absent are refused as a bad parameter; the master's answer is the
 * call's.
 */
static struct admmsg_req fake_req;
static int fake_calls;
static uint32_t fake_werr;

static uint32_t
fake_admin_ask(const struct admmsg_req *r)
{
	fake_req = *r;
	fake_calls++;
	return fake_werr;
}

static uint32_t
close_del(const struct pipe_env *e, int del, const char *client,
    const char *user)
{
	uint8_t req[512];
	struct ndr_w w;
	uint32_t fault;
	size_t len;

	ndr_w_init(&w, req, sizeof(req));
	put_opt(&w, "\\\\srv");
	if (del) {
		put_opt(&w, client);
		put_opt(&w, user);
	} else
		ndr_put_u32(&w, srvsvc_file_id(P_BOB));
	len = run(e, del ? SRVSVC_OPNUM_NETR_SESSION_DEL :
	    SRVSVC_OPNUM_NETR_FILE_CLOSE, req, wcur_off(&w.w), &fault);
	ck_assert_uint_eq(fault, 0);
	ck_assert_uint_eq(len, 4);
	return le32dec(rsp);
}

START_TEST(test_close_del)
{
	struct pipe_env who[3];
	int k;

	/* no master (pipe_admin_ask NULL): not supported, even to an admin */
	pipe_admin_ask = NULL;
	ck_assert_uint_eq(close_del(&env, 0, NULL, NULL), 50);
	pipe_admin_ask = fake_admin_ask;
	fake_calls = 0;
	fake_werr = WERR_OK;
	ck_assert_uint_eq(close_del(&env, 0, NULL, NULL), WERR_OK);
	ck_assert_int_eq(fake_calls, 1);
	ck_assert_uint_eq(fake_req.op, ADMMSG_FILE_CLOSE);
	ck_assert_uint_eq(fake_req.file_id, srvsvc_file_id(P_BOB));
	fake_werr = WERR_FILEIDNOTFOUND;
	ck_assert_uint_eq(close_del(&env, 0, NULL, NULL), WERR_FILEIDNOTFOUND);
	fake_werr = WERR_OK;
	ck_assert_uint_eq(close_del(&env, 1, "\\\\10.0.0.1", "bob"), WERR_OK);
	ck_assert_int_eq(fake_calls, 3);
	ck_assert_uint_eq(fake_req.op, ADMMSG_SESS_DEL);
	ck_assert_str_eq(fake_req.client, "\\\\10.0.0.1");
	ck_assert_str_eq(fake_req.user, "bob");
	ck_assert_uint_eq(close_del(&env, 1, NULL, "bob"), WERR_OK);
	ck_assert_str_eq(fake_req.client, "");
	/* both absent: every session of the server, refused here */
	ck_assert_uint_eq(close_del(&env, 1, NULL, NULL), 87);
	ck_assert_uint_eq(close_del(&env, 1, "", ""), 87);
	ck_assert_int_eq(fake_calls, 4);

	for (k = 0; k < 3; k++) {
		who[k] = env;
		who[k].admin = 0;
	}
	strcpy(who[0].user, "bob");
	who[1].guest = 1;
	who[1].admin = 1;		/* even in the group, a guest is not */
	who[2].user[0] = '\0';
	who[2].anonymous = 1;
	who[2].admin = 1;
	for (k = 0; k < 3; k++) {
		ck_assert_uint_eq(close_del(&who[k], 0, NULL, NULL),
		    WERR_ACCESS_DENIED);
		ck_assert_uint_eq(close_del(&who[k], 1, NULL, "alice"),
		    WERR_ACCESS_DENIED);
		ck_assert_uint_eq(close_del(&who[k], 1, NULL, NULL),
		    WERR_ACCESS_DENIED);
	}
	ck_assert_int_eq(fake_calls, 4);	/* none of them asked */
	pipe_admin_ask = NULL;
}
END_TEST

/* Every truncation of every request is a clean fault (and no overread). */
START_TEST(test_truncations)
{
	uint8_t req[512], *cut;
	size_t full[7], i;
	uint16_t ops[7];
	uint32_t fault;
	unsigned k;
	struct ndr_w w;
	uint8_t reqs[7][512];

	full[0] = req_sess(reqs[0], 512, 502, "\\\\10.0.0.1", "bob", 1);
	ops[0] = SRVSVC_OPNUM_NETR_SESSION_ENUM;
	full[1] = req_file(reqs[1], 512, 3, "bob");
	ops[1] = SRVSVC_OPNUM_NETR_FILE_ENUM;
	full[2] = req_conn(reqs[2], 512, 1, "share");
	ops[2] = SRVSVC_OPNUM_NETR_CONNECTION_ENUM;
	full[3] = req_getinfo(reqs[3], 512, 7, 3);
	ops[3] = SRVSVC_OPNUM_NETR_FILE_GET_INFO;
	ndr_w_init(&w, reqs[4], 512);
	put_opt(&w, "\\\\srv");
	ndr_put_u32(&w, 7);
	full[4] = wcur_off(&w.w);
	ops[4] = SRVSVC_OPNUM_NETR_FILE_CLOSE;
	ndr_w_init(&w, reqs[5], 512);
	put_opt(&w, "\\\\srv");
	put_opt(&w, "\\\\c");
	put_opt(&w, "bob");
	full[5] = wcur_off(&w.w);
	ops[5] = SRVSVC_OPNUM_NETR_SESSION_DEL;
	full[6] = req_sess(reqs[6], 512, 10, NULL, NULL, 0);
	ops[6] = SRVSVC_OPNUM_NETR_SESSION_ENUM;
	for (k = 0; k < 7; k++) {
		(void)run(&env, ops[k], reqs[k], full[k], &fault);
		ck_assert_uint_eq(fault, 0);
		for (i = 0; i < full[k]; i++) {
			cut = malloc(i ? i : 1);	/* ASan sees an overread */
			memcpy(cut, reqs[k], i);
			(void)run(&env, ops[k], cut, i, &fault);
			ck_assert_msg(fault == DCERPC_FAULT_NDR,
			    "request %u cut at %zu: fault %u", k, i, fault);
			free(cut);
		}
	}
	(void)req;
}
END_TEST

/* An [in] container with entries, or a discriminant not the level. */
START_TEST(test_malformed)
{
	uint8_t req[512];
	struct ndr_w w;
	uint32_t fault;

	ndr_w_init(&w, req, sizeof(req));
	put_opt(&w, NULL);
	put_opt(&w, NULL);
	put_opt(&w, NULL);
	ndr_put_u32(&w, 10);
	ndr_put_u32(&w, 10);
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1);		/* one entry sent */
	ndr_put_ptr(&w, 1);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_ptr(&w, 0);
	(void)run(&env, SRVSVC_OPNUM_NETR_SESSION_ENUM, req, wcur_off(&w.w),
	    &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);

	ndr_w_init(&w, req, sizeof(req));
	put_opt(&w, NULL);
	put_opt(&w, NULL);
	ndr_put_u32(&w, 1);
	ndr_put_u32(&w, 0);		/* switch_is differs from Level */
	ndr_put_ptr(&w, 0);
	ndr_put_u32(&w, 0xFFFFFFFFu);
	ndr_put_ptr(&w, 0);
	(void)run(&env, SRVSVC_OPNUM_NETR_CONNECTION_ENUM, req, wcur_off(&w.w),
	    &fault);
	ck_assert_uint_eq(fault, DCERPC_FAULT_NDR);
}
END_TEST

/* A worker without the state env (IPC$ only) lists nothing, cleanly. */
START_TEST(test_no_state)
{
	struct pipe_env e = env;
	uint8_t req[512];
	struct ent ent[4];
	uint32_t fault, n, total;
	size_t len;

	e.shm = NULL;
	len = run(&e, SRVSVC_OPNUM_NETR_SESSION_ENUM, req,
	    req_sess(req, sizeof(req), 1, NULL, NULL, 0), &fault);
	ck_assert_uint_eq(decode_enum(len, 1, "ppuuuu", ent, &n, &total),
	    WERR_OK);
	ck_assert_uint_eq(n + total, 0);
	len = run(&e, SRVSVC_OPNUM_NETR_FILE_ENUM, req,
	    req_file(req, sizeof(req), 3, NULL), &fault);
	ck_assert_uint_eq(decode_enum(len, 3, "uuupp", ent, &n, &total),
	    WERR_OK);
	ck_assert_uint_eq(n + total, 0);
}
END_TEST

/*
 * Every worker counts its opens from 1 above its pid: the first opens of
 * 2,000 workers with neighbouring pids, and 2,000 opens of each of two
 * workers, all get distinct FileIds.
 */
static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_file_ids_distinct)
{
	static uint32_t ids[4000];
	unsigned i, j, n = 0;

	for (i = 0; i < 2000; i++)
		ids[n++] = srvsvc_file_id((uint64_t)(30000 + i) << 32 | 1);
	for (j = 0; j < 2; j++)
		for (i = 2; i < 1002; i++)
			ids[n++] = srvsvc_file_id((uint64_t)(40000 + j) << 32 | i);
	qsort(ids, n, sizeof(ids[0]), cmp_u32);
	for (i = 1; i < n; i++)
		ck_assert_uint_ne(ids[i - 1], ids[i]);
}
END_TEST

static Suite *
srvsvc_enum_suite(void)
{
	Suite *s = suite_create("srvsvc_enum");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_session_enum_levels);
	tcase_add_test(tc, test_session_enum_filters);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_invalid_levels);
	tcase_add_test(tc, test_file_enum);
	tcase_add_test(tc, test_file_get_info);
	tcase_add_test(tc, test_file_names);
	tcase_add_test(tc, test_file_names_malformed);
	tcase_add_test(tc, test_conn_enum);
	tcase_add_test(tc, test_file_ids_distinct);
	tcase_add_test(tc, test_close_del);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_no_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("big");
	tcase_add_checked_fixture(tc, setup_big, teardown);
	tcase_add_test(tc, test_file_enum_big);
	suite_add_tcase(s, tc);
	/* the same over 8 data envs: sessions and opens in different envs */
	tc = tcase_create("core-8envs");
	tcase_add_checked_fixture(tc, setup8, teardown);
	tcase_add_test(tc, test_session_enum_levels);
	tcase_add_test(tc, test_session_enum_filters);
	tcase_add_test(tc, test_file_enum);
	tcase_add_test(tc, test_file_get_info);
	tcase_add_test(tc, test_file_names);
	tcase_add_test(tc, test_file_names_malformed);
	tcase_add_test(tc, test_conn_enum);
	tcase_add_test(tc, test_file_ids_distinct);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(srvsvc_enum_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
