/*
 * MS-LSAT and MS-LSAD over the lsarpc pipe: opening the policy and
 * translating between SIDs and names, which Windows' Security tab, the
 * permission editors and smbcacls ask of the server that holds the file.
 * Without it a descriptor shows bare SIDs ("Account Unknown").
 *
 * The SIDs are those usmbd writes into descriptors (HACKING.md "SIDs"):
 * S-1-22-1-UID is "Unix User\NAME", S-1-22-2-GID "Unix Group\NAME", as
 * Samba names them, and the well-known SIDs of the table below.  Names go
 * the other way the same: "alice", "Unix User\alice", "SERVER\alice",
 * "Unix Group\staff", "Everyone", "NT AUTHORITY\SYSTEM"...
 *
 * Who may ask: an authenticated user.  An anonymous or guest session gets
 * ACCESS_DENIED on every call (Windows' default, "Allow anonymous
 * SID/Name translation" off), so nobody without an account can list the
 * accounts by walking SIDs.  The policy handle grants nothing by itself:
 * every call judges its caller again.
 *
 * Wire layouts follow the IDL of MS-LSAD 3.1.4.4 (LsarOpenPolicy2),
 * 3.1.4.4.4 (LsarQueryInformationPolicy), MS-LSAT 3.1.4.5-3.1.4.11
 * (LsarLookupNames/2/3, LsarLookupSids/2) and 2.2 (the structures).
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/ntstatus.h"
#include "proto/secdesc.h"
#include "worker/pipe.h"

#define LSA_OPNUM_CLOSE			0
#define LSA_OPNUM_OPEN_POLICY		6
#define LSA_OPNUM_QUERY_INFO		7
#define LSA_OPNUM_LOOKUP_NAMES		14
#define LSA_OPNUM_LOOKUP_SIDS		15
#define LSA_OPNUM_OPEN_POLICY2		44
#define LSA_OPNUM_GET_USER_NAME		45
#define LSA_OPNUM_LOOKUP_SIDS2		57
#define LSA_OPNUM_LOOKUP_NAMES2		58
#define LSA_OPNUM_LOOKUP_NAMES3		68

/* MS-LSAT 2.2.13 SID_NAME_USE */
#define SID_TYPE_USER		1
#define SID_TYPE_GROUP		2
#define SID_TYPE_DOMAIN		3
#define SID_TYPE_ALIAS		4
#define SID_TYPE_WKN_GROUP	5
#define SID_TYPE_UNKNOWN	8

/* MS-LSAD 2.2.4.1 POLICY_INFORMATION_CLASS */
#define POLICY_PRIMARY_DOMAIN	3
#define POLICY_ACCOUNT_DOMAIN	5
#define POLICY_DNS_DOMAIN	12

/* MS-ERREF 2.3.1: a lookup that maps some names, or none */
#define STATUS_SOME_NOT_MAPPED	0x00000107u
#define STATUS_NONE_MAPPED	0xC0000073u

/*
 * Names or SIDs one call translates.  MS-LSAT caps LsarLookupNames at
 * 1,000 (its IDL range); the same bound serves LsarLookupSids, whose
 * requests fit the 64 KiB stub limit at a few thousand anyway.
 */
#define LSA_MAX_ENTRIES		1000
#define LSA_MAX_DOMAINS		8
#define LSA_NAME_MAX		256

/* A policy handle: 4 bytes of attributes and a GUID.  It names nothing. */
static const uint8_t lsa_handle[20] = {
	0, 0, 0, 0, 'u', 's', 'm', 'b', 'd', '-', 'l', 's', 'a', '-', 'p',
	'o', 'l', 'i', 'c', 'y',
};

struct lsa_domain {
	const char		*name;
	struct secdesc_sid	 sid;
};

/* One translated name or SID. */
struct lsa_entry {
	uint16_t		 type;		/* SID_TYPE_* */
	int32_t			 domain;	/* index into lsa_domains, -1 */
	struct secdesc_sid	 sid;
	char			 name[LSA_NAME_MAX];
};

/* The well-known SIDs a descriptor carries, and their names. */
struct lsa_wkn {
	uint8_t		 auth;
	uint8_t		 nsub;
	uint32_t	 a, b;
	const char	*domain;
	const char	*name;
	uint16_t	 type;
};

static const struct lsa_wkn lsa_wkns[] = {
	{ 1, 1, 0, 0, "", "Everyone", SID_TYPE_WKN_GROUP },
	{ 3, 1, 0, 0, "", "CREATOR OWNER", SID_TYPE_WKN_GROUP },
	{ 3, 1, 1, 0, "", "CREATOR GROUP", SID_TYPE_WKN_GROUP },
	{ 5, 1, 2, 0, "NT AUTHORITY", "NETWORK", SID_TYPE_WKN_GROUP },
	{ 5, 1, 4, 0, "NT AUTHORITY", "INTERACTIVE", SID_TYPE_WKN_GROUP },
	{ 5, 1, 7, 0, "NT AUTHORITY", "ANONYMOUS LOGON", SID_TYPE_WKN_GROUP },
	{ 5, 1, 11, 0, "NT AUTHORITY", "Authenticated Users",
	  SID_TYPE_WKN_GROUP },
	{ 5, 1, 18, 0, "NT AUTHORITY", "SYSTEM", SID_TYPE_WKN_GROUP },
	{ 5, 2, 32, 544, "BUILTIN", "Administrators", SID_TYPE_ALIAS },
	{ 5, 2, 32, 545, "BUILTIN", "Users", SID_TYPE_ALIAS },
	{ 5, 2, 32, 546, "BUILTIN", "Guests", SID_TYPE_ALIAS },
};
#define LSA_NWKN	(sizeof(lsa_wkns) / sizeof(lsa_wkns[0]))

#define LSA_UNIX_USER	"Unix User"
#define LSA_UNIX_GROUP	"Unix Group"

/* One call's results; the worker serves one request at a time. */
static struct lsa_entry lsa_entries[LSA_MAX_ENTRIES];
static struct lsa_domain lsa_domains[LSA_MAX_DOMAINS];
static unsigned lsa_ndomains;
/* NSS answers: a group with many members needs room */
static char lsa_nss_buf[64 * 1024];

static int
lsa_denied(const struct pipe_env *env)
{
	return env->anonymous || env->guest;
}

/* The index of domain (name, sid) in this call's list, added if new. */
static int32_t
lsa_domain_index(const char *name, const struct secdesc_sid *sid)
{
	unsigned i;

	for (i = 0; i < lsa_ndomains; i++)
		if (secdesc_sid_equal(&lsa_domains[i].sid, sid))
			return (int32_t)i;
	if (lsa_ndomains == LSA_MAX_DOMAINS)
		return -1;
	lsa_domains[lsa_ndomains].name = name;
	lsa_domains[lsa_ndomains].sid = *sid;
	return (int32_t)lsa_ndomains++;
}

/* The domain part of s (all but its last sub-authority). */
static void
lsa_sid_domain(const struct secdesc_sid *s, struct secdesc_sid *dom)
{
	*dom = *s;
	if (dom->nsub > 0)
		dom->nsub--;
	dom->sub[dom->nsub] = 0;
}

static void
lsa_entry_found(struct lsa_entry *e, const char *domain, const char *name,
    uint16_t type)
{
	struct secdesc_sid dom;

	lsa_sid_domain(&e->sid, &dom);
	e->type = type;
	e->domain = lsa_domain_index(domain, &dom);
	strlcpy(e->name, name, sizeof(e->name));
}

/* Translates e->sid into e's name, type and domain; 1 when mapped. */
static int
lsa_sid_to_name(struct lsa_entry *e)
{
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	struct secdesc_sid w;
	uint32_t id;
	size_t i;

	e->type = SID_TYPE_UNKNOWN;
	e->domain = -1;
	e->name[0] = '\0';
	if (secdesc_sid_unix(&e->sid, 1, &id)) {
		if (getpwuid_r((uid_t)id, &pw, lsa_nss_buf,
		    sizeof(lsa_nss_buf), &pwp) != 0 || pwp == NULL)
			return 0;
		lsa_entry_found(e, LSA_UNIX_USER, pw.pw_name, SID_TYPE_USER);
		return 1;
	}
	if (secdesc_sid_unix(&e->sid, 2, &id)) {
		if (getgrgid_r((gid_t)id, &gr, lsa_nss_buf,
		    sizeof(lsa_nss_buf), &grp) != 0 || grp == NULL)
			return 0;
		lsa_entry_found(e, LSA_UNIX_GROUP, gr.gr_name, SID_TYPE_GROUP);
		return 1;
	}
	for (i = 0; i < LSA_NWKN; i++) {
		secdesc_sid_make(&w, lsa_wkns[i].auth, lsa_wkns[i].nsub,
		    lsa_wkns[i].a, lsa_wkns[i].b);
		if (secdesc_sid_equal(&w, &e->sid)) {
			lsa_entry_found(e, lsa_wkns[i].domain, lsa_wkns[i].name,
			    lsa_wkns[i].type);
			return 1;
		}
	}
	return 0;
}

/*
 * A Unix account or group by name: as given, then in lower case (Windows
 * names are case-insensitive, Unix ones are not, and accounts are
 * usually lower case).  kind 1 user, 2 group.
 */
static int
lsa_unix_name(const char *name, int kind, struct lsa_entry *e)
{
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	char low[LSA_NAME_MAX];
	size_t i;
	int pass;

	for (i = 0; name[i] != '\0' && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = '\0';
	for (pass = 0; pass < 2; pass++) {
		const char *n = pass == 0 ? name : low;

		if (pass == 1 && strcmp(low, name) == 0)
			break;
		if (kind == 1 && getpwnam_r(n, &pw, lsa_nss_buf,
		    sizeof(lsa_nss_buf), &pwp) == 0 && pwp != NULL) {
			secdesc_sid_unix_user(&e->sid, (uint32_t)pw.pw_uid);
			lsa_entry_found(e, LSA_UNIX_USER, pw.pw_name,
			    SID_TYPE_USER);
			return 1;
		}
		if (kind == 2 && getgrnam_r(n, &gr, lsa_nss_buf,
		    sizeof(lsa_nss_buf), &grp) == 0 && grp != NULL) {
			secdesc_sid_unix_group(&e->sid, (uint32_t)gr.gr_gid);
			lsa_entry_found(e, LSA_UNIX_GROUP, gr.gr_name,
			    SID_TYPE_GROUP);
			return 1;
		}
	}
	return 0;
}

/*
 * Translates the name in e->name ("NAME" or "DOMAIN\NAME") into e's SID,
 * type and domain; 1 when mapped.  Without a domain: a well-known name,
 * then a Unix account, then a Unix group (Samba's order for an isolated
 * name).  The server's NetBIOS name or workgroup as the domain means the
 * same as none but for the well-known names.
 */
static int
lsa_name_to_sid(const struct conf *conf, struct lsa_entry *e)
{
	char full[LSA_NAME_MAX];
	const char *bs, *name, *dom = NULL;
	size_t dlen = 0, i;
	int wkn = 1, user = 1, group = 1;

	strlcpy(full, e->name, sizeof(full));
	name = full;
	if ((bs = strchr(full, '\\')) != NULL) {
		dom = full;
		dlen = (size_t)(bs - full);
		name = bs + 1;
	}
	e->type = SID_TYPE_UNKNOWN;
	e->domain = -1;
	memset(&e->sid, 0, sizeof(e->sid));
	if (name[0] == '\0' || strchr(name, '\\') != NULL)
		return 0;
#define LSA_DOM_IS(s)	(dom != NULL && strlen(s) == dlen && \
			 strncasecmp(dom, (s), dlen) == 0)
	if (dom != NULL) {
		if (LSA_DOM_IS(LSA_UNIX_USER))
			wkn = group = 0;
		else if (LSA_DOM_IS(LSA_UNIX_GROUP))
			wkn = user = 0;
		else if ((conf->netbios_name != NULL &&
		    LSA_DOM_IS(conf->netbios_name)) ||
		    (conf->workgroup != NULL && LSA_DOM_IS(conf->workgroup)))
			wkn = 0;
		else
			user = group = 0;	/* a well-known domain, or none */
	}
	if (wkn)
		for (i = 0; i < LSA_NWKN; i++) {
			if (strcasecmp(name, lsa_wkns[i].name) != 0 ||
			    (dom != NULL && !LSA_DOM_IS(lsa_wkns[i].domain)))
				continue;
			secdesc_sid_make(&e->sid, lsa_wkns[i].auth,
			    lsa_wkns[i].nsub, lsa_wkns[i].a, lsa_wkns[i].b);
			lsa_entry_found(e, lsa_wkns[i].domain,
			    lsa_wkns[i].name, lsa_wkns[i].type);
			return 1;
		}
#undef LSA_DOM_IS
	return (user && lsa_unix_name(name, 1, e)) ||
	    (group && lsa_unix_name(name, 2, e));
}

/*
 * A call's NSS lookups are bounded in time.  A name costs up to four
 * (as given and in lower case, as a user and as a group): 1,000 unknown
 * names took 2.3 s with `files systemd` on a 2-vCPU machine, and over a
 * slow LDAP or winbind directory minutes, while the worker serves none
 * of its user's other connections, lease breaks or relayed sessions.
 * Past LSA_BUDGET_MS the call's other entries stay unmapped
 * (STATUS_SOME_NOT_MAPPED: a client shows them as SIDs).
 */
#define LSA_BUDGET_MS	1000

/* The call (pipe_env.call) whose lsa_entries are translated, and its count. */
static uint64_t lsa_done_call;
static unsigned lsa_done_mapped;

static uint64_t
lsa_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);	/* the vDSO */
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Translates lsa_entries[0, n): names into SIDs (names) or SIDs into
 * names; the number mapped.  The pipe runs a call again with a larger
 * buffer when its answer does not fit (a 1,000-name answer: four
 * times): its entries are translated once, at its first run.
 */
static unsigned
lsa_translate(const struct pipe_env *env, unsigned n, int names)
{
	struct lsa_entry *e;
	uint64_t end;
	unsigned i, mapped = 0;

	if (env->call != 0 && env->call == lsa_done_call)
		return lsa_done_mapped;
	lsa_ndomains = 0;
	end = lsa_now_ms() + LSA_BUDGET_MS;
	for (i = 0; i < n && lsa_now_ms() < end; i++)
		mapped += (unsigned)(names ?
		    lsa_name_to_sid(env->conf, &lsa_entries[i]) :
		    lsa_sid_to_name(&lsa_entries[i]));
	if (i < n)
		log_warnx("lsarpc: %s: %u of %u %s left unmapped after %d ms "
		    "of lookups", env->user, n - i, n, names ? "names" : "SIDs",
		    LSA_BUDGET_MS);
	for (; i < n; i++) {
		e = &lsa_entries[i];
		e->type = SID_TYPE_UNKNOWN;
		e->domain = -1;
		if (names)
			memset(&e->sid, 0, sizeof(e->sid));
		else
			e->name[0] = '\0';
	}
	lsa_done_call = env->call;
	lsa_done_mapped = mapped;
	return mapped;
}

static int
lsa_handle_ok(struct cur *in)
{
	const uint8_t *h;

	ndr_align(in, 4);
	h = cur_view(in, sizeof(lsa_handle));
	return h != NULL && memcmp(h, lsa_handle, sizeof(lsa_handle)) == 0;
}

/* [out] PLSAPR_REFERENCED_DOMAIN_LIST *ReferencedDomains */
static void
lsa_put_domains(struct ndr_w *out)
{
	unsigned i;

	ndr_put_ptr(out, 1);
	ndr_put_u32(out, lsa_ndomains);
	ndr_put_ptr(out, lsa_ndomains > 0);
	ndr_put_u32(out, LSA_MAX_DOMAINS);	/* MaxEntries */
	if (lsa_ndomains == 0)
		return;
	ndr_put_u32(out, lsa_ndomains);
	for (i = 0; i < lsa_ndomains; i++) {
		ndr_put_ustring(out, lsa_domains[i].name);
		ndr_put_ptr(out, 1);
	}
	for (i = 0; i < lsa_ndomains; i++) {
		ndr_put_ustring_body(out, lsa_domains[i].name);
		ndr_put_sid(out, &lsa_domains[i].sid);
	}
}

static uint32_t
lsa_status(unsigned mapped, unsigned n)
{
	if (mapped == n)
		return STATUS_SUCCESS;
	return mapped == 0 ? STATUS_NONE_MAPPED : STATUS_SOME_NOT_MAPPED;
}

/*
 * [in] PLSAPR_OBJECT_ATTRIBUTES (MS-LSAD 2.2.9): Length, pointers to
 * RootDirectory and ObjectName, Attributes, pointers to a descriptor and
 * a QoS, all of which the server ignores (MS-LSAD 3.1.4.4.9).  Clients
 * send NULL for all but the QoS; anything else is refused rather than
 * walked to be skipped.
 */
static int
lsa_object_attributes(struct cur *in)
{
	uint32_t root, name, sd, qos;

	(void)ndr_u32(in);			/* Length */
	root = ndr_ptr(in);
	name = ndr_ptr(in);
	(void)ndr_u32(in);			/* Attributes */
	sd = ndr_ptr(in);
	qos = ndr_ptr(in);
	if (in->err || root != 0 || name != 0 || sd != 0)
		return -1;
	if (qos != 0) {
		(void)ndr_u32(in);		/* Length */
		(void)ndr_u16(in);		/* ImpersonationLevel */
		(void)cur_u8(in);		/* ContextTrackingMode */
		(void)cur_u8(in);		/* EffectiveOnly */
	}
	return in->err ? -1 : 0;
}

/* LsarOpenPolicy (6: SystemName a single wchar_t) and LsarOpenPolicy2 */
static uint32_t
lsa_open_policy(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out, int two)
{
	char sys[LSA_NAME_MAX];

	if (two)
		(void)ndr_unique_string(in, sys, sizeof(sys));
	else if (ndr_ptr(in) != 0)
		(void)ndr_u16(in);
	if (lsa_object_attributes(in) < 0)
		return DCERPC_FAULT_NDR;
	(void)ndr_u32(in);			/* DesiredAccess */
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (lsa_denied(env)) {
		wcur_zero(&out->w, sizeof(lsa_handle));
		ndr_put_u32(out, STATUS_ACCESS_DENIED);
		return 0;
	}
	wcur_bytes(&out->w, lsa_handle, sizeof(lsa_handle));
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

static uint32_t
lsa_close(struct cur *in, struct ndr_w *out)
{
	int ok = lsa_handle_ok(in);

	if (in->err)
		return DCERPC_FAULT_NDR;
	wcur_zero(&out->w, sizeof(lsa_handle));
	ndr_put_u32(out, ok ? STATUS_SUCCESS : STATUS_INVALID_HANDLE);
	return 0;
}

/*
 * LsarQueryInformationPolicy (7).  LsarQueryInformationPolicy2 (46) is
 * left out, as Samba leaves it: smbcacls 4.17 asks it for the primary
 * domain's SID and dereferences the NULL a workgroup server truthfully
 * answers; on an unknown opnum it goes on without.
 */
static uint32_t
lsa_query_info(const struct pipe_env *env, struct cur *in, struct ndr_w *out)
{
	const struct conf *conf = env->conf;
	const char *wg = conf->workgroup ? conf->workgroup : "WORKGROUP";
	const char *nb = conf->netbios_name ? conf->netbios_name : "";
	struct secdesc_sid unix_users;
	uint16_t level;
	int ok = lsa_handle_ok(in);

	level = ndr_u16(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok || lsa_denied(env) || (level != POLICY_PRIMARY_DOMAIN &&
	    level != POLICY_ACCOUNT_DOMAIN && level != POLICY_DNS_DOMAIN)) {
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, !ok ? STATUS_INVALID_HANDLE :
		    lsa_denied(env) ? STATUS_ACCESS_DENIED :
		    STATUS_INVALID_PARAMETER);
		return 0;
	}
	ndr_put_ptr(out, 1);
	ndr_put_u16(out, level);		/* the union's discriminant */
	ndr_put_align(out, 4);
	switch (level) {
	case POLICY_PRIMARY_DOMAIN:
		/* a workgroup member: its name, no domain SID */
		ndr_put_ustring(out, wg);
		ndr_put_ptr(out, 0);
		ndr_put_ustring_body(out, wg);
		break;
	case POLICY_ACCOUNT_DOMAIN:
		/* the accounts of this server are its Unix users */
		secdesc_sid_make(&unix_users, 22, 1, 1, 0);
		ndr_put_ustring(out, nb);
		ndr_put_ptr(out, 1);
		ndr_put_ustring_body(out, nb);
		ndr_put_sid(out, &unix_users);
		break;
	default:				/* DNS domain: none */
		ndr_put_ustring(out, wg);
		ndr_put_ustring(out, "");
		ndr_put_ustring(out, "");
		wcur_zero(&out->w, 16);		/* DomainGuid */
		ndr_put_ptr(out, 0);
		ndr_put_ustring_body(out, wg);
		ndr_put_ustring_body(out, "");
		ndr_put_ustring_body(out, "");
		break;
	}
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

/* [in] PLSAPR_SID_ENUM_BUFFER into lsa_entries; the count, or -1. */
static int
lsa_sid_enum(struct cur *in)
{
	uint32_t n, ptr, max, i;
	static uint32_t refs[LSA_MAX_ENTRIES];

	n = ndr_u32(in);
	ptr = ndr_ptr(in);
	if (in->err || n > LSA_MAX_ENTRIES || (n > 0) != (ptr != 0))
		return -1;
	if (n == 0)
		return 0;
	max = ndr_u32(in);
	if (max != n)
		return -1;
	for (i = 0; i < n; i++)
		refs[i] = ndr_ptr(in);
	for (i = 0; i < n && !in->err; i++) {
		if (refs[i] == 0) {
			memset(&lsa_entries[i].sid, 0, sizeof(lsa_entries[i].sid));
			continue;
		}
		ndr_sid_decode(in, &lsa_entries[i].sid);
	}
	return in->err ? -1 : (int)n;
}

/*
 * LsarLookupSids (15) and LsarLookupSids2 (57): ex adds the Flags of
 * LSAPR_TRANSLATED_NAME_EX and the request's LookupOptions and
 * ClientRevision.
 */
static uint32_t
lsa_lookup_sids(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out, int ex)
{
	int ok = lsa_handle_ok(in), n;
	unsigned i, mapped = 0;

	n = lsa_sid_enum(in);
	if (n < 0)
		return DCERPC_FAULT_NDR;
	/* [in, out] TranslatedNames: the client sends it empty */
	if (ndr_u32(in) != 0 || ndr_ptr(in) != 0)
		return DCERPC_FAULT_NDR;
	(void)ndr_u16(in);			/* LookupLevel */
	(void)ndr_u32(in);			/* MappedCount */
	if (ex) {
		(void)ndr_u32(in);		/* LookupOptions */
		(void)ndr_u32(in);		/* ClientRevision */
	}
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok || lsa_denied(env)) {
		ndr_put_ptr(out, 0);		/* ReferencedDomains */
		ndr_put_u32(out, 0);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, 0);		/* MappedCount */
		ndr_put_u32(out, !ok ? STATUS_INVALID_HANDLE :
		    STATUS_ACCESS_DENIED);
		return 0;
	}
	mapped = lsa_translate(env, (unsigned)n, 0);
	/*
	 * An unknown SID is named by its string form, as Windows and Samba
	 * answer (Win32 LsaLookupSids: "the SID in character form";
	 * smbtorture's LookupSidsReply): a client shows that rather than
	 * an empty name.
	 */
	for (i = 0; i < (unsigned)n; i++)
		if (lsa_entries[i].type == SID_TYPE_UNKNOWN)
			(void)secdesc_sid_str(&lsa_entries[i].sid,
			    lsa_entries[i].name, sizeof(lsa_entries[i].name));
	lsa_put_domains(out);
	ndr_put_u32(out, (uint32_t)n);
	ndr_put_ptr(out, n > 0);
	if (n > 0) {
		ndr_put_u32(out, (uint32_t)n);
		for (i = 0; i < (unsigned)n; i++) {
			ndr_put_u16(out, lsa_entries[i].type);
			ndr_put_align(out, 4);
			ndr_put_ustring(out, lsa_entries[i].name);
			ndr_put_u32(out, (uint32_t)lsa_entries[i].domain);
			if (ex)
				ndr_put_u32(out, 0);	/* Flags */
		}
		for (i = 0; i < (unsigned)n; i++)
			ndr_put_ustring_body(out, lsa_entries[i].name);
	}
	ndr_put_u32(out, mapped);
	ndr_put_u32(out, lsa_status(mapped, (unsigned)n));
	return 0;
}

/* [in, size_is(Count)] PRPC_UNICODE_STRING Names into lsa_entries. */
static int
lsa_names_in(struct cur *in, uint32_t n)
{
	static uint16_t len[LSA_MAX_ENTRIES], max[LSA_MAX_ENTRIES];
	static uint32_t ref[LSA_MAX_ENTRIES];
	uint32_t i;

	if (n > LSA_MAX_ENTRIES || ndr_u32(in) != n)
		return -1;
	for (i = 0; i < n; i++) {
		ndr_align(in, 4);
		len[i] = ndr_u16(in);
		max[i] = ndr_u16(in);
		ref[i] = ndr_ptr(in);
	}
	for (i = 0; i < n && !in->err; i++) {
		lsa_entries[i].name[0] = '\0';
		if (ref[i] != 0)
			(void)ndr_ustring_body(in, len[i], max[i],
			    lsa_entries[i].name, sizeof(lsa_entries[i].name));
	}
	return in->err ? -1 : 0;
}

/*
 * LsarLookupNames (14), LsarLookupNames2 (58) and LsarLookupNames3 (68):
 * level 1 answers a domain index and RID, 2 adds Flags, 3 gives the
 * whole SID and Flags.
 */
static uint32_t
lsa_lookup_names(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out, int level)
{
	int ok = lsa_handle_ok(in);
	uint32_t n, i;
	unsigned mapped = 0;
	struct lsa_entry *e;

	n = ndr_u32(in);			/* Count */
	if (in->err || lsa_names_in(in, n) < 0)
		return DCERPC_FAULT_NDR;
	/* [in, out] TranslatedSids: the client sends it empty */
	if (ndr_u32(in) != 0 || ndr_ptr(in) != 0)
		return DCERPC_FAULT_NDR;
	(void)ndr_u16(in);			/* LookupLevel */
	(void)ndr_u32(in);			/* MappedCount */
	if (level > 1) {
		(void)ndr_u32(in);		/* LookupOptions */
		(void)ndr_u32(in);		/* ClientRevision */
	}
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (!ok || lsa_denied(env)) {
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, 0);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, 0);
		ndr_put_u32(out, !ok ? STATUS_INVALID_HANDLE :
		    STATUS_ACCESS_DENIED);
		return 0;
	}
	mapped = lsa_translate(env, n, 1);
	lsa_put_domains(out);
	ndr_put_u32(out, n);
	ndr_put_ptr(out, n > 0);
	if (n > 0) {
		ndr_put_u32(out, n);
		for (i = 0; i < n; i++) {
			e = &lsa_entries[i];
			ndr_put_u16(out, e->type);
			if (level == 3)
				ndr_put_ptr(out, e->type != SID_TYPE_UNKNOWN);
			else	/* RelativeId: the SID's last sub-authority */
				ndr_put_u32(out, e->type != SID_TYPE_UNKNOWN &&
				    e->sid.nsub > 0 ?
				    e->sid.sub[e->sid.nsub - 1] : 0);
			ndr_put_u32(out, (uint32_t)e->domain);
			if (level > 1)
				ndr_put_u32(out, 0);	/* Flags */
		}
		for (i = 0; level == 3 && i < n; i++)
			if (lsa_entries[i].type != SID_TYPE_UNKNOWN)
				ndr_put_sid(out, &lsa_entries[i].sid);
	}
	ndr_put_u32(out, mapped);
	ndr_put_u32(out, lsa_status(mapped, n));
	return 0;
}

/*
 * An [in] PRPC_UNICODE_STRING* a client sends (LsarGetUserName's
 * UserName and *DomainName, which it sends NULL): read and ignored.
 */
static void
lsa_skip_ustring_ptr(struct cur *in)
{
	char scratch[LSA_NAME_MAX];
	uint16_t len, max;

	if (ndr_ptr(in) == 0)
		return;
	ndr_align(in, 4);
	len = ndr_u16(in);
	max = ndr_u16(in);
	if (ndr_ptr(in) != 0)
		(void)ndr_ustring_body(in, len, max, scratch, sizeof(scratch));
}

/*
 * LsarGetUserName (MS-LSAT 3.1.4.4): the caller's own account and the
 * domain that holds it (this server, for its local accounts), as `whoami`
 * against a server asks.  DomainName is answered only when asked for (a
 * non-NULL [in, out, unique] pointer).  Anonymous and guest callers are
 * refused as on every lsarpc call.
 */
static uint32_t
lsa_get_user_name(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char sys[LSA_NAME_MAX];
	const char *nb = env->conf->netbios_name ?
	    env->conf->netbios_name : "";
	uint32_t dom;

	(void)ndr_unique_string(in, sys, sizeof(sys));
	lsa_skip_ustring_ptr(in);		/* *UserName */
	dom = ndr_ptr(in);			/* DomainName */
	if (dom != 0)
		lsa_skip_ustring_ptr(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (lsa_denied(env)) {
		ndr_put_ptr(out, 0);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, STATUS_ACCESS_DENIED);
		return 0;
	}
	ndr_put_ptr(out, 1);
	ndr_put_ustring(out, env->user);
	ndr_put_ustring_body(out, env->user);
	ndr_put_ptr(out, dom != 0);
	if (dom != 0) {
		ndr_put_ptr(out, 1);
		ndr_put_ustring(out, nb);
		ndr_put_ustring_body(out, nb);
	}
	ndr_put_u32(out, STATUS_SUCCESS);
	return 0;
}

static uint32_t
lsa_call(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	switch (opnum) {
	case LSA_OPNUM_CLOSE:
		return lsa_close(in, out);
	case LSA_OPNUM_OPEN_POLICY:
		return lsa_open_policy(env, in, out, 0);
	case LSA_OPNUM_OPEN_POLICY2:
		return lsa_open_policy(env, in, out, 1);
	case LSA_OPNUM_QUERY_INFO:
		return lsa_query_info(env, in, out);
	case LSA_OPNUM_LOOKUP_SIDS:
		return lsa_lookup_sids(env, in, out, 0);
	case LSA_OPNUM_LOOKUP_SIDS2:
		return lsa_lookup_sids(env, in, out, 1);
	case LSA_OPNUM_LOOKUP_NAMES:
		return lsa_lookup_names(env, in, out, 1);
	case LSA_OPNUM_LOOKUP_NAMES2:
		return lsa_lookup_names(env, in, out, 2);
	case LSA_OPNUM_LOOKUP_NAMES3:
		return lsa_lookup_names(env, in, out, 3);
	case LSA_OPNUM_GET_USER_NAME:
		return lsa_get_user_name(env, in, out);
	}
	return DCERPC_NCA_S_OP_RNG_ERROR;
}

/* MS-LSAT 1.9: 12345778-1234-abcd-ef00-0123456789ab v0.0 */
const struct pipe_iface pipe_iface_lsarpc = {
	"lsarpc", "\\PIPE\\lsass",
	{ { 0x12345778, 0x1234, 0xabcd,
	    { 0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab } }, 0, 0 },
	lsa_call,
};
