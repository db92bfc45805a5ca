/*
 * One account over the samr pipe (worker/pipe_samr.h):
 * SamrQueryInformationUser/2 at the levels clients ask for (21 for
 * rpcclient's queryuser, impacket and Object Picker; the small ones for
 * smbtorture), SamrQueryInformationGroup and ...Alias,
 * SamrGetGroupsForUser and SamrGetUserPasswordInformation.  MS-SAMR
 * 2.2.6 (user information), 2.2.4 (groups), 3.1.5.5.
 *
 * What a user is: its Unix account (the GECOS full name), RID = uid,
 * PrimaryGroupId = its gid (a RID in "Unix Group", not in the account
 * domain: HACKING.md "Accounts over SAMR"), flags from the passdb.  No
 * times are known but "never"; no password data is ever given out.
 */
#include <pwd.h>
#include <string.h>

#include "proto/ntstatus.h"
#include "worker/pipe_samr.h"

#define SAMR_OPNUM_QUERY_ALIAS		28
#define SAMR_OPNUM_MEMBERS_IN_ALIAS	33
/* SIDs SamrGetAliasMembership takes (the range of Samba's IDL) */
#define SAMR_MAX_SIDS			1024

/* MS-SAMR 2.2.1.8 USER_ALL_* bits of UserAllInformation.WhichFields:
 * the fields level 21 fills */
#define SAMR_FIELDS_PRESENT		0x00ffffffu

/* NSS answers for one look-up */
static char samr_pw_buf[16 * 1024];

void
samr_full_name(uint32_t uid, char *out, size_t outsize)
{
	struct passwd pw, *pwp = NULL;
	char *comma;

	out[0] = '\0';
	if (getpwuid_r((uid_t)uid, &pw, samr_pw_buf, sizeof(samr_pw_buf),
	    &pwp) != 0 || pwp == NULL || pw.pw_gecos == NULL)
		return;
	strlcpy(out, pw.pw_gecos, outsize);
	/* "Full Name,Room,Phone...": the first field only */
	if ((comma = strchr(out, ',')) != NULL)
		*comma = '\0';
}

static uint32_t
samr_primary_gid(uint32_t uid)
{
	struct passwd pw, *pwp = NULL;

	if (getpwuid_r((uid_t)uid, &pw, samr_pw_buf, sizeof(samr_pw_buf),
	    &pwp) != 0 || pwp == NULL)
		return 0;
	return (uint32_t)pw.pw_gid;
}

/*
 * A structure written twice: pass 0 the fields with string headers,
 * pass 1 the deferred string and array bodies, in the same order.
 */
struct samr_uw {
	struct ndr_w	*out;
	int		 pass;
};

static void
uw_str(struct samr_uw *u, const char *s)
{
	if (u->pass == 0) {
		ndr_put_align(u->out, 4);
		ndr_put_ustring(u->out, s);
	} else
		ndr_put_ustring_body(u->out, s);
}

static void
uw_u32(struct samr_uw *u, uint32_t v)
{
	if (u->pass == 0)
		ndr_put_u32(u->out, v);
}

static void
uw_u16(struct samr_uw *u, uint16_t v)
{
	if (u->pass == 0)
		ndr_put_u16(u->out, v);
}

static void
uw_u8(struct samr_uw *u, uint8_t v)
{
	if (u->pass == 0)
		wcur_u8(&u->out->w, v);
}

/* an NTTIME: 0, or "never" */
static void
uw_time(struct samr_uw *u, int never)
{
	uw_u32(u, 0);
	uw_u32(u, never ? 0x80000000u : 0);
}

/* SAMPR_LOGON_HOURS: every hour of the week allowed */
static void
uw_hours(struct samr_uw *u)
{
	uint8_t *v;

	if (u->pass == 0) {
		ndr_put_align(u->out, 4);
		ndr_put_u16(u->out, 168);	/* UnitsPerWeek */
		ndr_put_ptr(u->out, 1);
		return;
	}
	ndr_put_u32(u->out, 1260);
	ndr_put_u32(u->out, 0);
	ndr_put_u32(u->out, 21);
	v = wcur_reserve(&u->out->w, 21);
	if (v != NULL)
		memset(v, 0xff, 21);
}

struct samr_user_view {
	const struct samr_acct	*a;
	const char		*full;
	uint32_t		 gid;
	uint32_t		 acb;
};

/* The body of SAMPR_USER_INFO_BUFFER for level, one pass; -1: no such. */
static int
samr_put_user_level(struct samr_uw *u, const struct samr_user_view *v,
    uint16_t level)
{
	int i;

	switch (level) {
	case 1:		/* USER_GENERAL_INFORMATION */
		uw_str(u, v->a->name);
		uw_str(u, v->full);
		uw_u32(u, v->gid);
		uw_str(u, "");			/* AdminComment */
		uw_str(u, "");			/* UserComment */
		return 0;
	case 2:		/* USER_PREFERENCES_INFORMATION */
		uw_str(u, "");
		uw_str(u, "");
		uw_u16(u, 0);			/* CountryCode */
		uw_u16(u, 0);			/* CodePage */
		return 0;
	case 3:		/* USER_LOGON_INFORMATION */
	case 5:		/* USER_ACCOUNT_INFORMATION */
		uw_str(u, v->a->name);
		uw_str(u, v->full);
		uw_u32(u, v->a->id);
		uw_u32(u, v->gid);
		for (i = 0; i < 4; i++)		/* home, drive, script, profile */
			uw_str(u, "");
		if (level == 5)
			uw_str(u, "");		/* AdminComment */
		uw_str(u, "");			/* WorkStations */
		uw_time(u, 0);			/* LastLogon */
		uw_time(u, 0);			/* LastLogoff */
		if (level == 3) {
			uw_time(u, 0);		/* PasswordLastSet */
			uw_time(u, 0);		/* PasswordCanChange */
			uw_time(u, 1);		/* PasswordMustChange */
		}
		uw_hours(u);
		uw_u16(u, 0);			/* BadPasswordCount */
		uw_u16(u, 0);			/* LogonCount */
		if (level == 5) {
			uw_time(u, 0);		/* PasswordLastSet */
			uw_time(u, 1);		/* AccountExpires */
		}
		uw_u32(u, v->acb);
		return 0;
	case 4:
		uw_hours(u);
		return 0;
	case 6:
		uw_str(u, v->a->name);
		uw_str(u, v->full);
		return 0;
	case 7:
		uw_str(u, v->a->name);
		return 0;
	case 8:
		uw_str(u, v->full);
		return 0;
	case 9:
		uw_u32(u, v->gid);
		return 0;
	case 10:	/* HomeDirectory, HomeDirectoryDrive */
		uw_str(u, "");
		uw_str(u, "");
		return 0;
	case 11:	/* ScriptPath */
	case 12:	/* ProfilePath */
	case 13:	/* AdminComment */
	case 14:	/* WorkStations */
	case 20:	/* Parameters */
		uw_str(u, "");
		return 0;
	case 16:
		uw_u32(u, v->acb);
		return 0;
	case 17:	/* AccountExpires */
		uw_time(u, 1);
		return 0;
	case 21:	/* USER_ALL_INFORMATION */
		for (i = 0; i < 6; i++)		/* the six times */
			uw_time(u, i == 3 || i == 5);
		uw_str(u, v->a->name);
		uw_str(u, v->full);
		/* home, drive, script, profile, AdminComment, WorkStations,
		 * UserComment, then Parameters (an empty binary string is
		 * the same on the wire) */
		for (i = 0; i < 8; i++)
			uw_str(u, "");
		/* no password data: two NULL binary strings */
		uw_u32(u, 0);
		uw_u32(u, 0);
		uw_u32(u, 0);
		uw_u32(u, 0);
		uw_str(u, "");			/* PrivateData */
		uw_u32(u, 0);			/* SecurityDescriptor: none */
		uw_u32(u, 0);
		uw_u32(u, v->a->id);
		uw_u32(u, v->gid);
		uw_u32(u, v->acb);
		uw_u32(u, SAMR_FIELDS_PRESENT);
		uw_hours(u);
		for (i = 0; i < 4; i++)		/* counts, country, code page */
			uw_u16(u, 0);
		for (i = 0; i < 4; i++)		/* password flags */
			uw_u8(u, 0);
		return 0;
	}
	return -1;
}

/* SamrQueryInformationUser (36) and SamrQueryInformationUser2 (47) */
uint32_t
samr_query_user(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static char full[256];
	static uint8_t scratch[1];
	struct samr_handle h;
	struct samr_user_view v;
	struct samr_uw u;
	struct ndr_w probe;
	int ok = samr_get_handle(env, in, SAMR_H_USER, &h) == 0;
	uint16_t level;
	uint32_t st;

	level = ndr_u16(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_USER_READ, samr_refusal(env));
	memset(&v, 0, sizeof(v));
	if (st == STATUS_SUCCESS) {
		v.a = samr_db_user(h.rid);
		samr_full_name(h.rid, full, sizeof(full));
		v.full = full;
		v.gid = samr_primary_gid(h.rid);
		v.acb = SAMR_ACB_NORMAL | SAMR_ACB_PWNOEXP |
		    (v.a->flags & SAMR_DB_DISABLED ? SAMR_ACB_DISABLED : 0);
		/* a level we do not know answers -1 before writing: try it
		 * on an empty buffer, so nothing is written yet */
		ndr_w_init(&probe, scratch, 0);
		u.out = &probe;
		u.pass = 0;
		if (samr_put_user_level(&u, &v, level) < 0)
			st = STATUS_INVALID_INFO_CLASS;
	}
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st == STATUS_SUCCESS) {
		ndr_put_u16(out, level);
		ndr_put_align(out, 4);
		u.out = out;
		for (u.pass = 0; u.pass < 2; u.pass++)
			(void)samr_put_user_level(&u, &v, level);
	}
	ndr_put_u32(out, st);
	return 0;
}

/*
 * SamrQueryInformationGroup (20) and SamrQueryInformationAlias (28):
 * group levels 1 (all), 2 (name), 3 (attributes), 4 (description), 5
 * (all, as 1); alias levels 1 (all), 2 (name), 3 (description).
 */
uint32_t
samr_query_group(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	int alias = opnum == SAMR_OPNUM_QUERY_ALIAS;
	struct samr_handle h;
	const struct samr_acct *g = NULL;
	const char *name = "", *desc = "";
	int ok = samr_get_handle(env, in, alias ? SAMR_H_ALIAS : SAMR_H_GROUP,
	    &h) == 0;
	uint16_t level;
	uint32_t st;
	unsigned i;
	struct samr_uw u;

	level = ndr_u16(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, alias ? SAMR_ALIAS_READ_INFORMATION :
	    SAMR_GROUP_READ_INFORMATION, samr_refusal(env));
	if (st == STATUS_SUCCESS && (level < 1 || level > (alias ? 3 : 5)))
		st = STATUS_INVALID_INFO_CLASS;
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st != STATUS_SUCCESS) {
		ndr_put_u32(out, st);
		return 0;
	}
	if (alias) {
		for (i = 0; i < samr_naliases; i++)
			if (samr_aliases[i].rid == h.rid) {
				name = samr_aliases[i].name;
				desc = samr_aliases[i].desc;
			}
	} else if ((g = samr_db_group(h.rid)) != NULL)
		name = g->name;
	ndr_put_u16(out, level);
	ndr_put_align(out, 4);
	u.out = out;
	for (u.pass = 0; u.pass < 2; u.pass++) {
		if (level == 1 || level == 5) {
			uw_str(&u, name);
			if (!alias)
				uw_u32(&u, SAMR_GROUP_ATTRS);
			uw_u32(&u, 0);		/* MemberCount: not listed */
			uw_str(&u, desc);
		} else if (level == 2)
			uw_str(&u, name);
		else if (level == 3 && !alias)
			uw_u32(&u, SAMR_GROUP_ATTRS);
		else
			uw_str(&u, desc);
	}
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

/*
 * SamrGetGroupsForUser (39): the user's memberships in groups of its own
 * domain.  The account domain has no groups (a Unix group's SID is
 * S-1-22-2-GID, in "Unix Group"), so the list is empty, truthfully.
 */
uint32_t
samr_user_groups(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_USER, &h) == 0;
	uint32_t st;

	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_USER_LIST_GROUPS, samr_refusal(env));
	ndr_put_ptr(out, st == STATUS_SUCCESS);
	if (st == STATUS_SUCCESS) {
		ndr_put_u32(out, 0);
		ndr_put_ptr(out, 0);
	}
	ndr_put_u32(out, st);
	return 0;
}

/* SamrGetUserPasswordInformation (44): no minimum, no properties. */
uint32_t
samr_user_pw_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_USER, &h) == 0;

	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	ndr_put_u16(out, 0);
	ndr_put_align(out, 4);
	ndr_put_u32(out, 0);
	ndr_put_u32(out, samr_refusal(env));
	return 0;
}

/*
 * SamrGetAliasMembership (16) and SamrGetMembersInAlias (33): the Builtin
 * aliases are names lsarpc gives, with no members usmbd keeps, so both
 * lists are empty.  The SIDs asked about are decoded (bounded) and
 * otherwise ignored.  Windows' `net user NAME` asks the first.
 */
uint32_t
samr_alias_members(const struct pipe_env *env, uint16_t opnum,
    struct cur *in, struct ndr_w *out)
{
	struct samr_handle h;
	struct secdesc_sid sid;
	int ok = samr_get_handle(env, in, opnum == SAMR_OPNUM_MEMBERS_IN_ALIAS ?
	    SAMR_H_ALIAS : SAMR_H_DOMAIN, &h) == 0;
	uint32_t n, i, max, refs = 0, st;

	if (opnum != SAMR_OPNUM_MEMBERS_IN_ALIAS) {
		/* [in] PSAMPR_PSID_ARRAY: Count, then the SIDs */
		n = ndr_u32(in);
		if (ndr_ptr(in) != 0) {
			max = ndr_u32(in);
			if (in->err || max != n || n > SAMR_MAX_SIDS)
				return DCERPC_FAULT_NDR;
			for (i = 0; i < n; i++)
				refs += ndr_ptr(in) != 0;
			for (i = 0; i < refs && !in->err; i++)
				ndr_sid_decode(in, &sid);
		} else if (n != 0)
			return DCERPC_FAULT_NDR;
	}
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, opnum == SAMR_OPNUM_MEMBERS_IN_ALIAS ?
	    SAMR_ALIAS_LIST_MEMBERS : SAMR_DOMAIN_LOOKUP,
	    samr_refusal(env));
	ndr_put_u32(out, 0);			/* Count */
	ndr_put_ptr(out, 0);
	ndr_put_u32(out, st);
	return 0;
}
