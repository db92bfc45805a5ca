/*
 * MS-SAMR over the samr pipe, read-only: what Windows' "Select Users or
 * Groups" (Object Picker, WinNT provider), `net user` and rpcclient ask
 * of a standalone server to list its accounts.  This file: connecting,
 * handles, the domains and their information; worker/pipe_samr_acct.c
 * lists and looks up accounts, worker/pipe_samr_user.c describes one.
 *
 * Domains (HACKING.md "Accounts over SAMR"): the account domain, named
 * by the NetBIOS name, S-1-22-1, whose users are the passdb's accounts
 * with RID = uid; "Builtin", S-1-5-32, with the aliases lsarpc names; and
 * "Unix Group", S-1-22-2, the groups of those users with RID = gid.  So
 * every SID samr hands out is the one usmbd writes into descriptors and
 * lsarpc translates.
 *
 * Who may ask: an authenticated user; anonymous and guest get
 * ACCESS_DENIED on connect and on every call.  A handle names an object
 * and the rights it was opened with (MS-SAMR's per-call access checks),
 * and each call judges its caller again.  Handles carry a check value keyed by a per-process random key and the pipe, so a
 * handle forged, of the wrong type or taken from another pipe is the
 * fault nca_s_fault_context_mismatch, as Windows answers.  No state:
 * the pipe may run a call twice (pipe.h), and CloseHandle has nothing to
 * free.
 */
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "daemon/conf.h"
#include "proto/ntstatus.h"
#include "worker/pipe_samr.h"

#define SAMR_OPNUM_CONNECT		0
#define SAMR_OPNUM_CLOSE		1
#define SAMR_OPNUM_LOOKUP_DOMAIN	5
#define SAMR_OPNUM_ENUM_DOMAINS		6
#define SAMR_OPNUM_OPEN_DOMAIN		7
#define SAMR_OPNUM_QUERY_DOMAIN		8
#define SAMR_OPNUM_ENUM_GROUPS		11
#define SAMR_OPNUM_ENUM_USERS		13
#define SAMR_OPNUM_ENUM_ALIASES		15
#define SAMR_OPNUM_ALIAS_MEMBERSHIP	16
#define SAMR_OPNUM_LOOKUP_NAMES		17
#define SAMR_OPNUM_LOOKUP_RIDS		18
#define SAMR_OPNUM_OPEN_GROUP		19
#define SAMR_OPNUM_QUERY_GROUP		20
#define SAMR_OPNUM_OPEN_ALIAS		27
#define SAMR_OPNUM_QUERY_ALIAS		28
#define SAMR_OPNUM_MEMBERS_IN_ALIAS	33
#define SAMR_OPNUM_OPEN_USER		34
#define SAMR_OPNUM_QUERY_USER		36
#define SAMR_OPNUM_GROUPS_FOR_USER	39
#define SAMR_OPNUM_QUERY_DISPLAY	40
#define SAMR_OPNUM_GET_USER_PW_INFO	44
#define SAMR_OPNUM_QUERY_DOMAIN2	46
#define SAMR_OPNUM_QUERY_USER2		47
#define SAMR_OPNUM_QUERY_DISPLAY2	48
#define SAMR_OPNUM_QUERY_DISPLAY3	51
#define SAMR_OPNUM_GET_DOM_PW_INFO	56
#define SAMR_OPNUM_CONNECT2		57
#define SAMR_OPNUM_CONNECT3		61
#define SAMR_OPNUM_CONNECT4		62
#define SAMR_OPNUM_CONNECT5		64

#define SAMR_NAME_MAX		256
#define SAMR_HANDLE_LEN		20

/* NTTIME "never" (MS-SAMR 2.2.3.2 and Windows' answers) */
#define SAMR_NEVER_LO		0x00000000u
#define SAMR_NEVER_HI		0x80000000u

const struct samr_alias samr_aliases[] = {
	{ 544, "Administrators", "Administrators have complete and "
	  "unrestricted access to the computer" },
	{ 545, "Users", "Users are prevented from making accidental or "
	  "intentional system-wide changes" },
	{ 546, "Guests", "Guests have the same access as members of the "
	  "Users group by default" },
};
const unsigned samr_naliases = sizeof(samr_aliases) / sizeof(samr_aliases[0]);

static const uint8_t samr_magic[2] = { 'u', 's' };
static uint64_t samr_key;

int
samr_denied(const struct pipe_env *env)
{
	return env->anonymous || env->guest;
}

uint32_t
samr_refusal(const struct pipe_env *env)
{
	return samr_denied(env) ? STATUS_ACCESS_DENIED : STATUS_SUCCESS;
}

int
samr_access_ok(enum samr_kind k, uint32_t mask)
{
	/* MS-SAMR 2.2.1: the object's own rights, then MS-DTYP 2.4.3's
	 * standard rights, ACCESS_SYSTEM_SECURITY, MAXIMUM_ALLOWED and the
	 * generic ones; anything else is an undefined bit, refused as a
	 * Windows access check refuses it */
	uint32_t valid = k == SAMR_H_CONNECT ? 0x3fu :
	    k == SAMR_H_DOMAIN || k == SAMR_H_USER ? 0x7ffu : 0x1fu;

	valid |= 0x000f0000u | 0x01000000u | 0x02000000u | 0xf0000000u;
	return (mask & ~valid) == 0;
}

uint32_t
samr_grant(enum samr_kind k, uint32_t mask)
{
	/* MS-SAMR 2.2.1.2-2.2.1.7: generic read, write, execute, all */
	static const uint32_t map[][4] = {
		[SAMR_H_CONNECT] = { 0x010, 0x00e, 0x021, 0x03f },
		[SAMR_H_DOMAIN] = { 0x084, 0x47a, 0x301, 0x7ff },
		[SAMR_H_USER] = { 0x31a, 0x4e4, 0x041, 0x7ff },
		[SAMR_H_GROUP] = { 0x010, 0x00e, 0x001, 0x01f },
		[SAMR_H_ALIAS] = { 0x004, 0x013, 0x008, 0x01f },
	};
	const uint32_t *m = map[k];
	uint32_t g = mask & m[3];

	/* MAXIMUM_ALLOWED: everything (nothing can be changed anyway: no
	 * call writes) */
	if (mask & (0x02000000u | 0x10000000u))
		return m[3];
	if (mask & 0x80000000u)
		g |= m[0];
	if (mask & 0x40000000u)
		g |= m[1];
	if (mask & 0x20000000u)
		g |= m[2];
	return g;
}

uint32_t
samr_need(const struct samr_handle *h, uint32_t need, uint32_t st)
{
	if (st == STATUS_SUCCESS && (h->granted & need) == 0)
		return STATUS_ACCESS_DENIED;
	return st;
}

const char *
samr_dom_name(const struct pipe_env *env, enum samr_dom d)
{
	if (d == SAMR_DOM_BUILTIN)
		return "Builtin";
	if (d == SAMR_DOM_UNIXGROUP)
		return "Unix Group";
	return env->conf->netbios_name ? env->conf->netbios_name : "";
}

void
samr_dom_sid(enum samr_dom d, struct secdesc_sid *s)
{
	if (d == SAMR_DOM_BUILTIN)
		secdesc_sid_make(s, 5, 1, 32, 0);
	else
		secdesc_sid_make(s, 22, 1, d == SAMR_DOM_UNIXGROUP ? 2 : 1, 0);
}

/* splitmix64's finaliser: enough to make a check value unguessable
 * without the key, which never leaves the process. */
static uint64_t
samr_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t
samr_check(const struct pipe_env *env, const struct samr_handle *h)
{
	while (samr_key == 0)
		if (getrandom(&samr_key, sizeof(samr_key), 0) !=
		    sizeof(samr_key))
			samr_key = 0;
	return (uint32_t)samr_mix(samr_key ^ samr_mix(samr_mix(
	    (uint64_t)(uintptr_t)env ^ ((uint64_t)h->kind << 56) ^
	    ((uint64_t)h->dom << 48) ^ h->rid) ^ h->granted));
}

void
samr_put_handle(const struct pipe_env *env, struct ndr_w *out,
    const struct samr_handle *h)
{
	ndr_put_u32(out, (uint32_t)h->kind);	/* handle_type, as Samba */
	wcur_bytes(&out->w, samr_magic, sizeof(samr_magic));
	wcur_u8(&out->w, (uint8_t)h->kind);
	wcur_u8(&out->w, (uint8_t)h->dom);
	wcur_le32(&out->w, h->rid);
	wcur_le32(&out->w, h->granted);
	wcur_le32(&out->w, samr_check(env, h));
}

/* Does the object h names exist (still)? */
static int
samr_object_exists(const struct samr_handle *h)
{
	unsigned i;

	switch (h->kind) {
	case SAMR_H_CONNECT:
	case SAMR_H_DOMAIN:
		return 1;
	case SAMR_H_USER:
		return h->dom == SAMR_DOM_ACCOUNT && samr_db_user(h->rid);
	case SAMR_H_GROUP:
		return h->dom == SAMR_DOM_UNIXGROUP && samr_db_group(h->rid);
	case SAMR_H_ALIAS:
		for (i = 0; h->dom == SAMR_DOM_BUILTIN && i < samr_naliases;
		    i++)
			if (samr_aliases[i].rid == h->rid)
				return 1;
		return 0;
	}
	return 0;
}

int
samr_get_handle(const struct pipe_env *env, struct cur *in,
    enum samr_kind want, struct samr_handle *h)
{
	const uint8_t *v;
	struct cur c;
	uint32_t type;

	ndr_align(in, 4);
	if ((v = cur_view(in, SAMR_HANDLE_LEN)) == NULL)
		return -1;
	cur_init(&c, v, SAMR_HANDLE_LEN);
	type = cur_le32(&c);
	if (memcmp(cur_view(&c, 2), samr_magic, 2) != 0)
		return -1;
	h->kind = (enum samr_kind)cur_u8(&c);
	if (type != (uint32_t)h->kind)
		return -1;
	h->dom = (enum samr_dom)cur_u8(&c);
	h->rid = cur_le32(&c);
	h->granted = cur_le32(&c);
	if (cur_le32(&c) != samr_check(env, h) ||
	    (want != 0 && h->kind != want) || (unsigned)h->dom >= SAMR_NDOM ||
	    !samr_object_exists(h))
		return -1;
	return 0;
}

/*
 * SamrConnect (0: system name a single wchar_t), SamrConnect2 (57),
 * SamrConnect3 (61), SamrConnect4 (62) and SamrConnect5 (64).
 */
static uint32_t
samr_connect(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	char sys[SAMR_NAME_MAX];
	struct samr_handle h = { SAMR_H_CONNECT, SAMR_DOM_ACCOUNT, 0, 0 };
	uint32_t level = 0, sw, access;

	if (opnum == SAMR_OPNUM_CONNECT) {
		if (ndr_ptr(in) != 0)
			(void)ndr_u16(in);
	} else
		(void)ndr_unique_string(in, sys, sizeof(sys));
	if (opnum == SAMR_OPNUM_CONNECT3 || opnum == SAMR_OPNUM_CONNECT4)
		(void)ndr_u32(in);		/* unknown / ClientRevision */
	access = ndr_u32(in);			/* DesiredAccess */
	if (opnum == SAMR_OPNUM_CONNECT5) {
		level = ndr_u32(in);		/* InVersion */
		sw = ndr_u32(in);		/* the union's discriminant */
		(void)ndr_u32(in);		/* ClientVersion */
		(void)ndr_u32(in);		/* SupportedFeatures */
		if (!in->err && (level != 1 || sw != 1))
			return DCERPC_FAULT_NDR;
	}
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (opnum == SAMR_OPNUM_CONNECT5) {
		/* OutVersion 1: SAM_REVISION_3 (MS-SAMR 2.2.7.15), no features */
		ndr_put_u32(out, 1);
		ndr_put_u32(out, 1);
		ndr_put_u32(out, 3);
		ndr_put_u32(out, 0);
	}
	if (samr_denied(env) || !samr_access_ok(SAMR_H_CONNECT, access)) {
		wcur_zero(&out->w, SAMR_HANDLE_LEN);
		ndr_put_u32(out, STATUS_ACCESS_DENIED);
		return 0;
	}
	h.granted = samr_grant(SAMR_H_CONNECT, access);
	samr_put_handle(env, out, &h);
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

static uint32_t
samr_close(const struct pipe_env *env, struct cur *in, struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, 0, &h) == 0;

	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	wcur_zero(&out->w, SAMR_HANDLE_LEN);
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

/* A domain by name (case-insensitive), or SAMR_NDOM. */
static enum samr_dom
samr_dom_named(const struct pipe_env *env, const char *name)
{
	unsigned d;

	for (d = 0; d < SAMR_NDOM; d++)
		if (strcasecmp(name, samr_dom_name(env, (enum samr_dom)d)) == 0)
			return (enum samr_dom)d;
	/* the workgroup names the account domain too, as in lsarpc */
	if (env->conf->workgroup != NULL &&
	    strcasecmp(name, env->conf->workgroup) == 0)
		return SAMR_DOM_ACCOUNT;
	return SAMR_NDOM;
}

/* [in] an RPC_UNICODE_STRING (top level, its body deferred just after):
 * 0, 1 for a NULL buffer (out ""), -1. */
static int
samr_ustring_in(struct cur *in, char *out, size_t outsize)
{
	uint16_t len, max;
	uint32_t ref;

	ndr_align(in, 4);
	len = ndr_u16(in);
	max = ndr_u16(in);
	ref = ndr_ptr(in);
	out[0] = '\0';
	if (ref != 0)
		(void)ndr_ustring_body(in, len, max, out, outsize);
	return in->err ? -1 : ref == 0;
}

/* SamrLookupDomainInSamServer (5) */
static uint32_t
samr_lookup_domain(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char name[SAMR_NAME_MAX];
	struct samr_handle h;
	struct secdesc_sid sid;
	enum samr_dom d;
	int ok = samr_get_handle(env, in, SAMR_H_CONNECT, &h) == 0, null;
	uint32_t st;

	if ((null = samr_ustring_in(in, name, sizeof(name))) < 0)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_SERVER_LOOKUP_DOMAIN, samr_refusal(env));
	d = samr_dom_named(env, name);
	if (st == STATUS_SUCCESS && null)
		st = STATUS_INVALID_PARAMETER;
	else if (st == STATUS_SUCCESS && d == SAMR_NDOM)
		st = STATUS_NO_SUCH_DOMAIN;
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st == STATUS_SUCCESS) {
		samr_dom_sid(d, &sid);
		ndr_put_sid(out, &sid);
	}
	ndr_put_u32(out, st);
	return 0;
}

/* SamrEnumerateDomainsInSamServer (6): all three in one answer. */
static uint32_t
samr_enum_domains(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_CONNECT, &h) == 0;
	uint32_t resume, st, n, d;

	resume = ndr_u32(in);
	(void)ndr_u32(in);			/* PreferedMaximumLength */
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_SERVER_ENUMERATE_DOMAINS,
	    samr_refusal(env));
	n = st != STATUS_SUCCESS || resume >= SAMR_NDOM ? 0 :
	    SAMR_NDOM - resume;
	ndr_put_u32(out, resume + n);
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st == STATUS_SUCCESS) {
		ndr_put_u32(out, n);
		ndr_put_ptr(out, n > 0);
		if (n > 0) {
			ndr_put_u32(out, n);
			for (d = resume; d < SAMR_NDOM; d++) {
				ndr_put_u32(out, d);
				ndr_put_ustring(out,
				    samr_dom_name(env, (enum samr_dom)d));
			}
			for (d = resume; d < SAMR_NDOM; d++)
				ndr_put_ustring_body(out,
				    samr_dom_name(env, (enum samr_dom)d));
		}
	}
	ndr_put_u32(out, n);
	ndr_put_u32(out, st);
	return 0;
}

/* SamrOpenDomain (7) */
static uint32_t
samr_open_domain(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h, dh = { SAMR_H_DOMAIN, SAMR_DOM_ACCOUNT, 0, 0 };
	struct secdesc_sid sid, want;
	int ok = samr_get_handle(env, in, SAMR_H_CONNECT, &h) == 0;
	uint32_t st, access;
	unsigned d;

	access = ndr_u32(in);			/* DesiredAccess */
	ndr_sid_decode(in, &want);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_refusal(env);
	for (d = 0; d < SAMR_NDOM; d++) {
		samr_dom_sid((enum samr_dom)d, &sid);
		if (secdesc_sid_equal(&sid, &want))
			break;
	}
	if (st == STATUS_SUCCESS && d == SAMR_NDOM)
		st = STATUS_NO_SUCH_DOMAIN;
	if (st == STATUS_SUCCESS && !samr_access_ok(SAMR_H_DOMAIN, access))
		st = STATUS_ACCESS_DENIED;
	st = samr_need(&h, SAMR_SERVER_LOOKUP_DOMAIN, st);
	if (st != STATUS_SUCCESS) {
		wcur_zero(&out->w, SAMR_HANDLE_LEN);
		ndr_put_u32(out, st);
		return 0;
	}
	dh.dom = (enum samr_dom)d;
	dh.granted = samr_grant(SAMR_H_DOMAIN, access);
	samr_put_handle(env, out, &dh);
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

static void
samr_put_never(struct ndr_w *out)
{
	ndr_put_u32(out, SAMR_NEVER_LO);
	ndr_put_u32(out, SAMR_NEVER_HI);
}

/* The server's comment (`server string`), as Samba gives it. */
static const char *
samr_oem(const struct pipe_env *env)
{
	return env->conf->server_string ? env->conf->server_string : "";
}

/* The counts DomainGeneralInformation gives for domain d. */
static void
samr_dom_counts(enum samr_dom d, uint32_t *users, uint32_t *groups,
    uint32_t *aliases)
{
	const struct samr_acct *t;

	*users = d == SAMR_DOM_ACCOUNT ? samr_db_users(&t) : 0;
	*groups = d == SAMR_DOM_UNIXGROUP ? samr_db_groups(&t) : 0;
	*aliases = d == SAMR_DOM_BUILTIN ? samr_naliases : 0;
}

/* SAMPR_DOMAIN_GENERAL_INFORMATION (MS-SAMR 2.2.3.5), its strings deferred */
static void
samr_put_dom_general(const struct pipe_env *env, struct ndr_w *out,
    enum samr_dom d)
{
	const char *name = samr_dom_name(env, d);
	uint32_t users, groups, aliases;

	samr_dom_counts(d, &users, &groups, &aliases);
	samr_put_never(out);			/* ForceLogoff */
	ndr_put_ustring(out, samr_oem(env));	/* OemInformation */
	ndr_put_ustring(out, name);		/* DomainName */
	ndr_put_ustring(out, "");		/* ReplicaSourceNodeName */
	ndr_put_u32(out, 1);			/* DomainModifiedCount */
	ndr_put_u32(out, 0);
	ndr_put_u32(out, 1);			/* DomainServerEnabled */
	ndr_put_u32(out, 3);		/* DomainServerRolePrimary, as Samba */
	ndr_put_u32(out, 1);			/* UasCompatibilityRequired */
	ndr_put_u32(out, users);
	ndr_put_u32(out, groups);
	ndr_put_u32(out, aliases);
}

static void
samr_put_dom_general_body(const struct pipe_env *env, struct ndr_w *out,
    enum samr_dom d)
{
	ndr_put_ustring_body(out, samr_oem(env));
	ndr_put_ustring_body(out, samr_dom_name(env, d));
	ndr_put_ustring_body(out, "");
}

/* DOMAIN_LOCKOUT_INFORMATION: none (30 minutes, never locks) */
static void
samr_put_lockout(struct ndr_w *out)
{
	ndr_put_align(out, 8);
	ndr_put_u32(out, 0xcf1dcc00u);		/* -30 min in 100 ns */
	ndr_put_u32(out, 0xfffffffbu);
	ndr_put_u32(out, 0xcf1dcc00u);
	ndr_put_u32(out, 0xfffffffbu);
	ndr_put_u16(out, 0);			/* LockoutThreshold */
}

/* The body of SAMPR_DOMAIN_INFO_BUFFER for level; 0 or -1 (no such). */
static int
samr_put_dom_info(const struct pipe_env *env, struct ndr_w *out,
    enum samr_dom d, uint16_t level)
{
	switch (level) {
	case 1:		/* DOMAIN_PASSWORD_INFORMATION */
		ndr_put_u16(out, 0);		/* MinPasswordLength */
		ndr_put_u16(out, 0);		/* PasswordHistoryLength */
		ndr_put_u32(out, 0);		/* PasswordProperties */
		samr_put_never(out);		/* MaxPasswordAge */
		ndr_put_u32(out, 0);		/* MinPasswordAge */
		ndr_put_u32(out, 0);
		return 0;
	case 2:
		samr_put_dom_general(env, out, d);
		samr_put_dom_general_body(env, out, d);
		return 0;
	case 3:		/* ForceLogoff */
		samr_put_never(out);
		return 0;
	case 4:		/* OemInformation */
		ndr_put_ustring(out, samr_oem(env));
		ndr_put_ustring_body(out, samr_oem(env));
		return 0;
	case 6:		/* ReplicaSourceNodeName */
		ndr_put_ustring(out, "");
		ndr_put_ustring_body(out, "");
		return 0;
	case 5:
		ndr_put_ustring(out, samr_dom_name(env, d));
		ndr_put_ustring_body(out, samr_dom_name(env, d));
		return 0;
	case 7:		/* DomainServerRolePrimary */
		ndr_put_u32(out, 3);
		return 0;
	case 8:		/* ModifiedCount, CreationTime */
	case 13:	/* and ModifiedCountAtLastPromotion */
		ndr_put_align(out, 8);
		ndr_put_u32(out, 1);
		ndr_put_u32(out, 0);
		ndr_put_u32(out, 0);
		ndr_put_u32(out, 0);
		if (level == 13) {
			ndr_put_u32(out, 0);
			ndr_put_u32(out, 0);
		}
		return 0;
	case 9:		/* DomainServerEnabled */
		ndr_put_u32(out, 1);
		return 0;
	case 11:
		ndr_put_align(out, 8);
		samr_put_dom_general(env, out, d);
		samr_put_lockout(out);
		samr_put_dom_general_body(env, out, d);
		return 0;
	case 12:
		samr_put_lockout(out);
		return 0;
	}
	return -1;
}

/* SamrQueryInformationDomain (8) and SamrQueryInformationDomain2 (46) */
static uint32_t
samr_query_domain(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static uint8_t scratch[1024];
	struct samr_handle h;
	struct ndr_w probe;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0;
	uint16_t level;
	uint32_t st;

	level = ndr_u16(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, level == 1 || level == 12 ?
	    SAMR_DOMAIN_READ_PASSWORD_PARAMETERS :
	    SAMR_DOMAIN_READ_OTHER_PARAMETERS, samr_refusal(env));
	if (st == STATUS_SUCCESS) {
		/* a level we do not know: nothing written yet */
		ndr_w_init(&probe, scratch, sizeof(scratch));
		if (samr_put_dom_info(env, &probe, h.dom, level) < 0)
			st = STATUS_INVALID_INFO_CLASS;
	}
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st == STATUS_SUCCESS) {
		ndr_put_u16(out, level);	/* the union's discriminant */
		ndr_put_align(out, 4);
		(void)samr_put_dom_info(env, out, h.dom, level);
	}
	ndr_put_u32(out, st);
	return 0;
}

/* SamrGetDomainPasswordInformation (56): no minimum, no properties. */
static uint32_t
samr_dom_pw_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char name[SAMR_NAME_MAX];

	if (ndr_ptr(in) != 0 && samr_ustring_in(in, name, sizeof(name)) < 0)
		return DCERPC_FAULT_NDR;
	if (in->err)
		return DCERPC_FAULT_NDR;
	ndr_put_u16(out, 0);
	ndr_put_align(out, 4);
	ndr_put_u32(out, 0);
	ndr_put_u32(out, samr_refusal(env));
	return 0;
}

static uint32_t
samr_call(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	switch (opnum) {
	case SAMR_OPNUM_CONNECT:
	case SAMR_OPNUM_CONNECT2:
	case SAMR_OPNUM_CONNECT3:
	case SAMR_OPNUM_CONNECT4:
	case SAMR_OPNUM_CONNECT5:
		return samr_connect(env, opnum, in, out);
	case SAMR_OPNUM_CLOSE:
		return samr_close(env, in, out);
	case SAMR_OPNUM_LOOKUP_DOMAIN:
		return samr_lookup_domain(env, in, out);
	case SAMR_OPNUM_ENUM_DOMAINS:
		return samr_enum_domains(env, in, out);
	case SAMR_OPNUM_OPEN_DOMAIN:
		return samr_open_domain(env, in, out);
	case SAMR_OPNUM_QUERY_DOMAIN:
	case SAMR_OPNUM_QUERY_DOMAIN2:
		return samr_query_domain(env, in, out);
	case SAMR_OPNUM_ENUM_GROUPS:
	case SAMR_OPNUM_ENUM_USERS:
	case SAMR_OPNUM_ENUM_ALIASES:
		return samr_enum_accounts(env, opnum, in, out);
	case SAMR_OPNUM_LOOKUP_NAMES:
		return samr_lookup_names(env, in, out);
	case SAMR_OPNUM_LOOKUP_RIDS:
		return samr_lookup_rids(env, in, out);
	case SAMR_OPNUM_OPEN_GROUP:
	case SAMR_OPNUM_OPEN_ALIAS:
	case SAMR_OPNUM_OPEN_USER:
		return samr_open_account(env, opnum, in, out);
	case SAMR_OPNUM_QUERY_GROUP:
	case SAMR_OPNUM_QUERY_ALIAS:
		return samr_query_group(env, opnum, in, out);
	case SAMR_OPNUM_QUERY_USER:
	case SAMR_OPNUM_QUERY_USER2:
		return samr_query_user(env, in, out);
	case SAMR_OPNUM_ALIAS_MEMBERSHIP:
	case SAMR_OPNUM_MEMBERS_IN_ALIAS:
		return samr_alias_members(env, opnum, in, out);
	case SAMR_OPNUM_GROUPS_FOR_USER:
		return samr_user_groups(env, in, out);
	case SAMR_OPNUM_QUERY_DISPLAY:
	case SAMR_OPNUM_QUERY_DISPLAY2:
	case SAMR_OPNUM_QUERY_DISPLAY3:
		return samr_query_display(env, in, out);
	case SAMR_OPNUM_GET_USER_PW_INFO:
		return samr_user_pw_info(env, in, out);
	case SAMR_OPNUM_GET_DOM_PW_INFO:
		return samr_dom_pw_info(env, in, out);
	}
	/* everything that would change the SAM, and the rest */
	return DCERPC_NCA_S_OP_RNG_ERROR;
}

/* MS-SAMR 1.9: 12345778-1234-abcd-ef00-0123456789ac v1.0 */
const struct pipe_iface pipe_iface_samr = {
	"samr", "\\PIPE\\lsass",
	{ { 0x12345778, 0x1234, 0xabcd,
	    { 0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xac } }, 1, 0 },
	samr_call,
};
