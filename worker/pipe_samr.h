/*
 * The samr pipe's parts (worker/pipe_samr.c: connect, handles, domains;
 * worker/pipe_samr_acct.c: users, groups, aliases and their listings).
 * Not an interface of the worker: pipe.h has pipe_iface_samr.
 */
#ifndef USMBD_WORKER_PIPE_SAMR_H
#define USMBD_WORKER_PIPE_SAMR_H

#include <stddef.h>
#include <stdint.h>

#include "proto/secdesc.h"
#include "worker/pipe.h"
#include "worker/samr_db.h"

/* MS-ERREF 2.3.1, those proto/ntstatus.h lacks */
#define STATUS_MORE_ENTRIES		0x00000105u
#define STATUS_SOME_NOT_MAPPED		0x00000107u
#define STATUS_NO_SUCH_GROUP		0xC0000066u
#define STATUS_NO_SUCH_DOMAIN		0xC00000DFu
#define STATUS_NO_SUCH_ALIAS		0xC0000151u

/* MS-SAMR 2.2.2.x and 2.2.1.x */
#define SAMR_ACB_DISABLED	0x00000001u
#define SAMR_ACB_NORMAL		0x00000010u
#define SAMR_ACB_PWNOEXP	0x00000200u
/* MS-SAMR 2.2.1.3-2.2.1.7: the rights calls need */
#define SAMR_SERVER_ENUMERATE_DOMAINS		0x00000010u
#define SAMR_SERVER_LOOKUP_DOMAIN		0x00000020u
#define SAMR_DOMAIN_READ_PASSWORD_PARAMETERS	0x00000001u
#define SAMR_DOMAIN_READ_OTHER_PARAMETERS	0x00000004u
#define SAMR_DOMAIN_LIST_ACCOUNTS		0x00000100u
#define SAMR_DOMAIN_LOOKUP			0x00000200u
#define SAMR_USER_READ				0x0000001bu	/* GENERAL..ACCOUNT */
#define SAMR_USER_LIST_GROUPS			0x00000100u
#define SAMR_GROUP_READ_INFORMATION		0x00000001u
#define SAMR_ALIAS_READ_INFORMATION		0x00000008u
#define SAMR_ALIAS_LIST_MEMBERS			0x00000004u
/* MS-SAMR 2.2.1.10 SE_GROUP_* for a group's attributes */
#define SAMR_GROUP_ATTRS	0x00000007u
/* MS-LSAT 2.2.13 SID_NAME_USE */
#define SAMR_SID_USER		1
#define SAMR_SID_GROUP		2
#define SAMR_SID_ALIAS		4
#define SAMR_SID_UNKNOWN	8

/* The three domains (HACKING.md "Accounts over SAMR"). */
enum samr_dom {
	SAMR_DOM_ACCOUNT = 0,	/* NetBIOS name, S-1-22-1: users, RID = uid */
	SAMR_DOM_BUILTIN,	/* Builtin, S-1-5-32: the aliases below */
	SAMR_DOM_UNIXGROUP,	/* "Unix Group", S-1-22-2: groups, RID = gid */
	SAMR_NDOM
};

/* What a handle names. */
enum samr_kind {
	SAMR_H_CONNECT = 1,
	SAMR_H_DOMAIN,
	SAMR_H_USER,
	SAMR_H_GROUP,
	SAMR_H_ALIAS,
};

struct samr_handle {
	enum samr_kind	 kind;
	enum samr_dom	 dom;
	uint32_t	 rid;
	uint32_t	 granted;	/* the object's rights it was opened with */
};

/* Entries one enumeration or display answer carries at most. */
#define SAMR_PAGE		256

struct samr_alias {
	uint32_t	 rid;
	const char	*name;
	const char	*desc;
};
extern const struct samr_alias samr_aliases[];
extern const unsigned samr_naliases;

/* An anonymous or guest caller: every call refused, as Windows does. */
int	samr_denied(const struct pipe_env *);
const char *samr_dom_name(const struct pipe_env *, enum samr_dom);
void	samr_dom_sid(enum samr_dom, struct secdesc_sid *);
/*
 * Decodes the handle at in (a policy_handle); 0 when it is one of ours,
 * of kind want (0: any) in its handle_type and body, minted for this
 * pipe, and naming an object that still exists; else -1 (in->err set
 * when truncated).  The caller answers -1 with the fault
 * DCERPC_NCA_S_CONTEXT_MISMATCH.
 */
int	samr_get_handle(const struct pipe_env *, struct cur *in,
	    enum samr_kind want, struct samr_handle *h);
void	samr_put_handle(const struct pipe_env *, struct ndr_w *,
	    const struct samr_handle *);
/* Does DesiredAccess mask ask only rights an object of kind k has? */
int	samr_access_ok(enum samr_kind, uint32_t mask);
/* The object-specific rights DesiredAccess mask grants (generic rights
 * and MAXIMUM_ALLOWED mapped: a reader gets every read right). */
uint32_t samr_grant(enum samr_kind, uint32_t mask);
/* STATUS_ACCESS_DENIED when h lacks every right of need, else st. */
uint32_t samr_need(const struct samr_handle *, uint32_t need, uint32_t st);
/* STATUS_ACCESS_DENIED for a denied caller, else STATUS_SUCCESS.  (A
 * handle that fails samr_get_handle is a fault instead.) */
uint32_t samr_refusal(const struct pipe_env *);

/* worker/pipe_samr_acct.c: 0 or a fault, as pipe_call_fn */
uint32_t samr_enum_accounts(const struct pipe_env *, uint16_t opnum,
	    struct cur *, struct ndr_w *);
uint32_t samr_lookup_names(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t samr_lookup_rids(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t samr_open_account(const struct pipe_env *, uint16_t opnum,
	    struct cur *, struct ndr_w *);
uint32_t samr_query_display(const struct pipe_env *, struct cur *,
	    struct ndr_w *);

/* worker/pipe_samr_user.c */
/* The first GECOS field of uid's account, or "". */
void	samr_full_name(uint32_t uid, char *out, size_t outsize);
uint32_t samr_query_user(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t samr_query_group(const struct pipe_env *, uint16_t opnum,
	    struct cur *, struct ndr_w *);
uint32_t samr_user_groups(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t samr_user_pw_info(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t samr_alias_members(const struct pipe_env *, uint16_t opnum,
	    struct cur *, struct ndr_w *);

#endif
