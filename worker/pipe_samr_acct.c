/*
 * The samr pipe's account lists and look-ups (worker/pipe_samr.h):
 * SamrEnumerate{Groups,Users,Aliases}InDomain, SamrLookupNamesInDomain,
 * SamrLookupIdsInDomain, SamrOpen{Group,Alias,User} and
 * SamrQueryDisplayInformation/2/3.  Users live in the account domain,
 * groups in "Unix Group", aliases in Builtin; each listing of another
 * domain is empty.  Listings are paged: at most SAMR_PAGE entries an
 * answer, resumed by index.  MS-SAMR 3.1.5.2, 3.1.5.3, 3.1.5.11.
 */
#include <string.h>
#include <strings.h>

#include "proto/ntstatus.h"
#include "worker/pipe_samr.h"

#define SAMR_OPNUM_ENUM_GROUPS		11
#define SAMR_OPNUM_ENUM_ALIASES		15
#define SAMR_OPNUM_OPEN_GROUP		19
#define SAMR_OPNUM_OPEN_ALIAS		27

/* MS-SAMR 2.2.7.x: LookupNames and LookupIds take at most 1,000 */
#define SAMR_MAX_LOOKUP		1000
#define SAMR_NAME_MAX		256

/* One listed account, whatever its kind. */
struct samr_item {
	uint32_t	 rid;
	uint32_t	 attrs;		/* ACB_* of a user, SE_GROUP_* of a group */
	const char	*name;
	const char	*desc;
};

/* One call's names and results; the worker serves one request at a time. */
static char samr_names[SAMR_MAX_LOOKUP][SAMR_NAME_MAX];
static uint32_t samr_rids[SAMR_MAX_LOOKUP];
static uint32_t samr_types[SAMR_MAX_LOOKUP];
static struct samr_item samr_page[SAMR_PAGE];
static char samr_fullnames[SAMR_PAGE][SAMR_NAME_MAX];

/* The accounts of kind k that domain d holds: 0 when it holds none. */
static unsigned
samr_list_count(enum samr_dom d, enum samr_kind k)
{
	const struct samr_acct *t;

	if (k == SAMR_H_USER && d == SAMR_DOM_ACCOUNT)
		return samr_db_users(&t);
	if (k == SAMR_H_GROUP && d == SAMR_DOM_UNIXGROUP)
		return samr_db_groups(&t);
	if (k == SAMR_H_ALIAS && d == SAMR_DOM_BUILTIN)
		return samr_naliases;
	return 0;
}

/* The i-th of them (i < samr_list_count). */
static void
samr_list_item(enum samr_kind k, unsigned i, struct samr_item *it)
{
	const struct samr_acct *t;

	memset(it, 0, sizeof(*it));
	it->desc = "";
	if (k == SAMR_H_ALIAS) {
		it->rid = samr_aliases[i].rid;
		it->name = samr_aliases[i].name;
		it->desc = samr_aliases[i].desc;
		it->attrs = SAMR_GROUP_ATTRS;
		return;
	}
	if (k == SAMR_H_USER) {
		(void)samr_db_users(&t);
		it->attrs = SAMR_ACB_NORMAL | SAMR_ACB_PWNOEXP |
		    (t[i].flags & SAMR_DB_DISABLED ? SAMR_ACB_DISABLED : 0);
	} else {
		(void)samr_db_groups(&t);
		it->attrs = SAMR_GROUP_ATTRS;
	}
	it->rid = t[i].id;
	it->name = t[i].name;
}

/*
 * The account of kind k named name in domain d; 0 and *it, or -1.
 */
static int
samr_find_named(enum samr_dom d, enum samr_kind k, const char *name,
    struct samr_item *it)
{
	unsigned i, n = samr_list_count(d, k);

	for (i = 0; i < n; i++) {
		samr_list_item(k, i, it);
		if (strcasecmp(it->name, name) == 0)
			return 0;
	}
	return -1;
}

static int
samr_find_rid(enum samr_dom d, enum samr_kind k, uint32_t rid,
    struct samr_item *it)
{
	const struct samr_acct *a = NULL;
	unsigned i;

	if (samr_list_count(d, k) == 0)
		return -1;
	if (k == SAMR_H_ALIAS) {
		for (i = 0; i < samr_naliases; i++)
			if (samr_aliases[i].rid == rid) {
				samr_list_item(k, i, it);
				return 0;
			}
		return -1;
	}
	a = k == SAMR_H_USER ? samr_db_user(rid) : samr_db_group(rid);
	if (a == NULL)
		return -1;
	it->rid = a->id;
	it->name = a->name;
	it->desc = "";
	it->attrs = k == SAMR_H_GROUP ? SAMR_GROUP_ATTRS : SAMR_ACB_NORMAL |
	    SAMR_ACB_PWNOEXP | (a->flags & SAMR_DB_DISABLED ?
	    SAMR_ACB_DISABLED : 0);
	return 0;
}

/* The kind of account domain d holds (users, groups or aliases). */
static enum samr_kind
samr_dom_kind(enum samr_dom d)
{
	return d == SAMR_DOM_ACCOUNT ? SAMR_H_USER :
	    d == SAMR_DOM_UNIXGROUP ? SAMR_H_GROUP : SAMR_H_ALIAS;
}

/*
 * Fills samr_page from index *resume on with at most max accounts of
 * kind k in d (users whose ACB_* meet filter, when it is non-zero);
 * *resume moves past what was looked at.  The count; *more when some
 * are left.
 */
static unsigned
samr_fill_page(enum samr_dom d, enum samr_kind k, uint32_t *resume,
    unsigned max, uint32_t filter, int *more)
{
	unsigned total = samr_list_count(d, k), n = 0;
	uint32_t i;

	if (max > SAMR_PAGE)
		max = SAMR_PAGE;
	for (i = *resume; i < total && n < max; i++) {
		samr_list_item(k, i, &samr_page[n]);
		if (filter != 0 && (samr_page[n].attrs & filter) == 0)
			continue;
		n++;
	}
	*more = i < total;
	if (i > *resume)
		*resume = i;
	return n;
}

/* SamrEnumerateGroupsInDomain (11), ...Users... (13), ...Aliases... (15) */
uint32_t
samr_enum_accounts(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	enum samr_kind k = opnum == SAMR_OPNUM_ENUM_GROUPS ? SAMR_H_GROUP :
	    opnum == SAMR_OPNUM_ENUM_ALIASES ? SAMR_H_ALIAS : SAMR_H_USER;
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0, more = 0;
	uint32_t resume, filter = 0, maxlen, st;
	unsigned n = 0, i, max;

	resume = ndr_u32(in);
	if (k == SAMR_H_USER)
		filter = ndr_u32(in);		/* UserAccountControl */
	maxlen = ndr_u32(in);			/* PreferedMaximumLength */
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_DOMAIN_LIST_ACCOUNTS, samr_refusal(env));
	if (st == STATUS_SUCCESS) {
		/* Windows sizes an entry at 54 bytes (Samba's multiplier) */
		max = maxlen / 54 ? maxlen / 54 : 1;
		n = samr_fill_page(h.dom, k, &resume, max, filter, &more);
		if (more)
			st = STATUS_MORE_ENTRIES;
	}
	ndr_put_u32(out, resume);
	ndr_put_ptr(out, st == STATUS_SUCCESS || st == STATUS_MORE_ENTRIES);
	if (st == STATUS_SUCCESS || st == STATUS_MORE_ENTRIES) {
		ndr_put_u32(out, n);
		ndr_put_ptr(out, n > 0);
		if (n > 0) {
			ndr_put_u32(out, n);
			for (i = 0; i < n; i++) {
				ndr_put_u32(out, samr_page[i].rid);
				ndr_put_ustring(out, samr_page[i].name);
			}
			for (i = 0; i < n; i++)
				ndr_put_ustring_body(out, samr_page[i].name);
		}
	}
	ndr_put_u32(out, n);
	ndr_put_u32(out, st);
	return 0;
}

/* [in] the conformant varying array header of a [size_is(1000),
 * length_is(n)] parameter; 0 or -1. */
static int
samr_varying_in(struct cur *in, uint32_t n)
{
	uint32_t max, off, actual;

	max = ndr_u32(in);
	off = ndr_u32(in);
	actual = ndr_u32(in);
	if (in->err || n > SAMR_MAX_LOOKUP || off != 0 || actual != n ||
	    max < actual)
		return -1;
	return 0;
}

/* [out] samr_Ids (SAMPR_ULONG_ARRAY) of n values. */
static void
samr_put_ids(struct ndr_w *out, const uint32_t *v, uint32_t n)
{
	uint32_t i;

	ndr_put_u32(out, n);
	ndr_put_ptr(out, n > 0);
	if (n == 0)
		return;
	ndr_put_u32(out, n);
	for (i = 0; i < n; i++)
		ndr_put_u32(out, v[i]);
}

static uint32_t
samr_mapped_status(uint32_t mapped, uint32_t n)
{
	if (mapped == n)
		return STATUS_SUCCESS;
	return mapped == 0 ? STATUS_NONE_MAPPED : STATUS_SOME_NOT_MAPPED;
}

/* SamrLookupNamesInDomain (17) */
uint32_t
samr_lookup_names(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static uint16_t len[SAMR_MAX_LOOKUP], max[SAMR_MAX_LOOKUP];
	static uint32_t ref[SAMR_MAX_LOOKUP];
	struct samr_handle h;
	struct samr_item it;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0;
	uint32_t n, i, mapped = 0, st;

	n = ndr_u32(in);
	if (in->err || samr_varying_in(in, n) < 0)
		return DCERPC_FAULT_NDR;
	for (i = 0; i < n; i++) {
		len[i] = ndr_u16(in);
		max[i] = ndr_u16(in);
		ref[i] = ndr_ptr(in);
	}
	for (i = 0; i < n && !in->err; i++) {
		samr_names[i][0] = '\0';
		if (ref[i] != 0)
			(void)ndr_ustring_body(in, len[i], max[i],
			    samr_names[i], sizeof(samr_names[i]));
	}
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_DOMAIN_LOOKUP, samr_refusal(env));
	if (st != STATUS_SUCCESS)
		n = 0;
	for (i = 0; i < n; i++) {
		samr_rids[i] = 0;
		samr_types[i] = SAMR_SID_UNKNOWN;
		if (samr_find_named(h.dom, samr_dom_kind(h.dom), samr_names[i],
		    &it) == 0) {
			samr_rids[i] = it.rid;
			samr_types[i] = h.dom == SAMR_DOM_ACCOUNT ?
			    SAMR_SID_USER : h.dom == SAMR_DOM_UNIXGROUP ?
			    SAMR_SID_GROUP : SAMR_SID_ALIAS;
			mapped++;
		}
	}
	samr_put_ids(out, samr_rids, n);
	samr_put_ids(out, samr_types, n);
	ndr_put_u32(out, st != STATUS_SUCCESS ? st :
	    samr_mapped_status(mapped, n));
	return 0;
}

/* SamrLookupIdsInDomain (18) */
uint32_t
samr_lookup_rids(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0;
	uint32_t n, i, mapped = 0, st;
	const char *names[SAMR_MAX_LOOKUP];
	struct samr_item it;

	n = ndr_u32(in);
	if (in->err || samr_varying_in(in, n) < 0)
		return DCERPC_FAULT_NDR;
	for (i = 0; i < n; i++)
		samr_rids[i] = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_DOMAIN_LOOKUP, samr_refusal(env));
	if (st != STATUS_SUCCESS)
		n = 0;
	for (i = 0; i < n; i++) {
		names[i] = NULL;
		samr_types[i] = SAMR_SID_UNKNOWN;
		if (samr_find_rid(h.dom, samr_dom_kind(h.dom), samr_rids[i],
		    &it) == 0) {
			/* the tables outlive the call: keep the pointer */
			names[i] = it.name;
			samr_types[i] = h.dom == SAMR_DOM_ACCOUNT ?
			    SAMR_SID_USER : h.dom == SAMR_DOM_UNIXGROUP ?
			    SAMR_SID_GROUP : SAMR_SID_ALIAS;
			mapped++;
		}
	}
	/* [out] SAMPR_RETURNED_USTRING_ARRAY Names */
	ndr_put_u32(out, n);
	ndr_put_ptr(out, n > 0);
	if (n > 0) {
		ndr_put_u32(out, n);
		for (i = 0; i < n; i++)
			ndr_put_ustring(out, names[i] ? names[i] : "");
		for (i = 0; i < n; i++)
			ndr_put_ustring_body(out, names[i] ? names[i] : "");
	}
	samr_put_ids(out, samr_types, n);
	ndr_put_u32(out, st != STATUS_SUCCESS ? st :
	    samr_mapped_status(mapped, n));
	return 0;
}

/* SamrOpenGroup (19), SamrOpenAlias (27), SamrOpenUser (34) */
uint32_t
samr_open_account(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	enum samr_kind k = opnum == SAMR_OPNUM_OPEN_GROUP ? SAMR_H_GROUP :
	    opnum == SAMR_OPNUM_OPEN_ALIAS ? SAMR_H_ALIAS : SAMR_H_USER;
	struct samr_handle h, ah;
	struct samr_item it;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0;
	uint32_t rid, st, access;

	access = ndr_u32(in);			/* DesiredAccess */
	rid = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_refusal(env);
	if (st == STATUS_SUCCESS && samr_find_rid(h.dom, k, rid, &it) < 0)
		st = k == SAMR_H_GROUP ? STATUS_NO_SUCH_GROUP :
		    k == SAMR_H_ALIAS ? STATUS_NO_SUCH_ALIAS :
		    STATUS_NO_SUCH_USER;
	if (st == STATUS_SUCCESS && !samr_access_ok(k, access))
		st = STATUS_ACCESS_DENIED;
	st = samr_need(&h, SAMR_DOMAIN_LOOKUP, st);
	if (st != STATUS_SUCCESS) {
		wcur_zero(&out->w, 20);
		ndr_put_u32(out, st);
		return 0;
	}
	ah.kind = k;
	ah.dom = h.dom;
	ah.rid = rid;
	ah.granted = samr_grant(k, access);
	samr_put_handle(env, out, &ah);
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

/* An lsa_AsciiStringLarge's pointee: a conformant varying char array. */
static void
samr_put_ascii_body(struct ndr_w *out, const char *s)
{
	size_t n = strlen(s);

	ndr_put_u32(out, (uint32_t)n + 1);
	ndr_put_u32(out, 0);
	ndr_put_u32(out, (uint32_t)n);
	wcur_bytes(&out->w, s, n);
}

/* One display entry of level (its strings deferred); fullname for 1. */
static void
samr_put_disp_entry(struct ndr_w *out, uint16_t level, uint32_t idx,
    const struct samr_item *it, const char *fullname)
{
	ndr_put_u32(out, idx);
	if (level == 4 || level == 5) {
		ndr_put_u16(out, (uint16_t)strlen(it->name));
		ndr_put_u16(out, (uint16_t)strlen(it->name) + 1);
		ndr_put_ptr(out, 1);
		return;
	}
	ndr_put_u32(out, it->rid);
	ndr_put_u32(out, it->attrs);
	ndr_put_ustring(out, it->name);
	ndr_put_ustring(out, it->desc);
	if (level == 1)
		ndr_put_ustring(out, fullname);
}

static void
samr_put_disp_body(struct ndr_w *out, uint16_t level,
    const struct samr_item *it, const char *fullname)
{
	if (level == 4 || level == 5) {
		samr_put_ascii_body(out, it->name);
		return;
	}
	ndr_put_ustring_body(out, it->name);
	ndr_put_ustring_body(out, it->desc);
	if (level == 1)
		ndr_put_ustring_body(out, fullname);
}

/*
 * SamrQueryDisplayInformation (40), 2 (48) and 3 (51), which differ only
 * in how Windows counts: levels 1 and 4 list users, 3 and 5 groups, 2
 * machine accounts (none).
 */
uint32_t
samr_query_display(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	struct samr_handle h;
	int ok = samr_get_handle(env, in, SAMR_H_DOMAIN, &h) == 0, more = 0;
	uint32_t start, maxent, st;
	uint16_t level;
	unsigned n = 0, i;
	enum samr_kind k;
	uint8_t *sizes;
	size_t at;

	level = ndr_u16(in);
	start = ndr_u32(in);
	maxent = ndr_u32(in);
	(void)ndr_u32(in);			/* PreferredMaximumLength */
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok)
		return DCERPC_NCA_S_CONTEXT_MISMATCH;
	st = samr_need(&h, SAMR_DOMAIN_LIST_ACCOUNTS, samr_refusal(env));
	if (st == STATUS_SUCCESS && (level < 1 || level > 5))
		st = STATUS_INVALID_INFO_CLASS;
	if (st != STATUS_SUCCESS) {
		ndr_put_u32(out, 0);
		ndr_put_u32(out, 0);
		ndr_put_u16(out, level < 1 || level > 5 ? 1 : level);
		ndr_put_align(out, 4);
		ndr_put_u32(out, 0);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, st);
		return 0;
	}
	k = level == 1 || level == 4 ? SAMR_H_USER :
	    level == 3 || level == 5 ? SAMR_H_GROUP : SAMR_H_CONNECT;
	if (k != SAMR_H_CONNECT && maxent > 0)
		n = samr_fill_page(h.dom, k, &start, maxent, 0, &more);
	for (i = 0; level == 1 && i < n; i++)
		samr_full_name(samr_page[i].rid, samr_fullnames[i],
		    sizeof(samr_fullnames[i]));
	sizes = wcur_reserve(&out->w, 8);	/* TotalAvailable, TotalReturned */
	at = wcur_off(&out->w);
	ndr_put_u16(out, level);
	ndr_put_align(out, 4);
	ndr_put_u32(out, n);
	ndr_put_ptr(out, n > 0);
	if (n > 0) {
		ndr_put_u32(out, n);
		for (i = 0; i < n; i++)
			samr_put_disp_entry(out, level, start - n + i + 1,
			    &samr_page[i], samr_fullnames[i]);
		for (i = 0; i < n; i++)
			samr_put_disp_body(out, level, &samr_page[i],
			    samr_fullnames[i]);
	}
	if (sizes != NULL) {
		le32_put(sizes, (uint32_t)(wcur_off(&out->w) - at));
		le32_put(sizes + 4, (uint32_t)(wcur_off(&out->w) - at));
	}
	ndr_put_u32(out, more ? STATUS_MORE_ENTRIES : STATUS_SUCCESS);
	return 0;
}
