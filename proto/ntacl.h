/*
 * NT access check (MS-DTYP 2.5.3.2) and inheritance (MS-DTYP 2.5.3.4) over
 * decoded security descriptors (proto/secdesc.h).  Pure functions: the
 * caller says who asks (a token of SIDs) and gets rights or a descriptor.
 * No privilege is modelled here: SeSecurityPrivilege (ACCESS_SYSTEM_SECURITY,
 * the SACL) is the caller's business (worker/smb2_secdesc.c, worker/sdw.c);
 * nobody holds SeTakeOwnershipPrivilege, the kernel being the other lock.
 */
#ifndef USMBD_PROTO_NTACL_H
#define USMBD_PROTO_NTACL_H

#include <stdint.h>

#include "proto/secdesc.h"

/* MS-DTYP 2.4.3 access mask bits used by the check */
#define NTACL_DELETE			0x00010000u
#define NTACL_READ_CONTROL		0x00020000u
#define NTACL_WRITE_DAC			0x00040000u
#define NTACL_WRITE_OWNER		0x00080000u
#define NTACL_SYNCHRONIZE		0x00100000u
#define NTACL_ACCESS_SYSTEM_SECURITY	0x01000000u
#define NTACL_MAXIMUM_ALLOWED		0x02000000u
#define NTACL_GENERIC_ALL		0x10000000u
#define NTACL_GENERIC_EXECUTE		0x20000000u
#define NTACL_GENERIC_WRITE		0x40000000u
#define NTACL_GENERIC_READ		0x80000000u
/* MS-SMB2 2.2.13.1.1: the file generic mapping (MS-FSA / Windows) */
#define NTACL_FILE_GENERIC_READ		0x00120089u
#define NTACL_FILE_GENERIC_WRITE	0x00120116u
#define NTACL_FILE_GENERIC_EXECUTE	0x001200A0u
#define NTACL_FILE_ALL_ACCESS		0x001F01FFu

#define NTACL_TOKEN_GROUPS	64

/*
 * Who asks: a user SID, a primary group SID and the supplementary groups.
 * Everyone (S-1-1-0) and Authenticated Users (S-1-5-11) are implied for a
 * token with authenticated set; Everyone alone otherwise.
 */
struct ntacl_token {
	struct secdesc_sid user;
	struct secdesc_sid group;
	unsigned	 ngroups;
	int		 authenticated;
	struct secdesc_sid groups[NTACL_TOKEN_GROUPS];
};

/* The token of a Unix user: S-1-22-1-uid, S-1-22-2-gid, groups. */
void	 ntacl_token_unix(struct ntacl_token *, uint32_t uid, uint32_t gid,
	    const uint32_t *gids, unsigned ngids);
/* 1 when the token holds sid (Everyone and Authenticated Users included). */
int	 ntacl_token_has(const struct ntacl_token *, const struct secdesc_sid *);
/* GENERIC_* bits replaced by the file rights they stand for. */
uint32_t ntacl_map_generic(uint32_t mask);
/*
 * The rights sd grants the token (what MAXIMUM_ALLOWED would get): per
 * bit, the first matching effective ACE decides; the owner holds
 * READ_CONTROL and WRITE_DAC unless an OWNER RIGHTS (S-1-3-4) ACE says
 * otherwise; a NULL DACL grants everything.  ACCESS_SYSTEM_SECURITY is
 * never granted by a DACL (only SeSecurityPrivilege gives it).
 */
uint32_t ntacl_granted(const struct secdesc *sd, const struct ntacl_token *);
/*
 * MS-DTYP 2.5.3.2: 0 when every right of desired (generic bits mapped,
 * MAXIMUM_ALLOWED meaning "what you can") is granted, -1 otherwise.
 * *granted gets the rights the open would hold.
 */
int	 ntacl_check(const struct secdesc *sd, const struct ntacl_token *,
	    uint32_t desired, uint32_t *granted);
/*
 * MS-DTYP 2.5.3.4: the descriptor a new object gets from its parent's
 * inheritable ACEs.  Owner and group are the creator's; CREATOR OWNER and
 * CREATOR GROUP become them in effective ACEs; generic rights are mapped
 * in effective ACEs; a container keeps inheritable copies as Windows does
 * (split in two when the effective one differs).  Returns the number of
 * ACEs inherited (0: nothing to inherit, child left with no DACL), or -1
 * when they do not fit.
 */
int	 ntacl_inherit(const struct secdesc *parent, int is_dir,
	    const struct ntacl_token *creator, struct secdesc *child);
/*
 * What one parent ACE (its AceFlags) gives a child, by ntacl_inherit's
 * rules: up to two copies, each with its AceFlags and whether it is an
 * effective one (generic rights mapped, CREATOR OWNER / CREATOR GROUP
 * replaced).  split: the ACE names a CREATOR SID or generic rights, so a
 * container's effective copy differs from the one it passes on.  inh:
 * INHERITED_ACE or 0.  Returns how many (0-2).
 */
struct ntacl_copy {
	uint8_t		 flags;
	int		 effective;
};
int	 ntacl_inherit_copies(uint8_t flags, int is_dir, int split,
	    uint8_t inh, struct ntacl_copy out[2]);

/*
 * MS-DTYP 2.5.3.4 for the SACL (proto/ntacl_sacl.c): the SACL a new
 * object gets from its parent's inheritable SACL ACEs (every type: audit,
 * alarm, mandatory label, resource attribute, scoped policy), by the
 * DACL's rules (ntacl_inherit_copies); INHERITED_ACE and
 * SE_SACL_AUTO_INHERITED only below a parent whose SACL is
 * auto-inherited.  given: the creator's descriptor when it carries a SACL
 * (SE_SACL_PRESENT), else NULL: its ACEs come first, and the parent's
 * follow only below an auto-inherited parent; a given SACL with
 * SE_SACL_PROTECTED keeps out the parent's but for resource attribute and
 * scoped policy ACEs, which protection does not stop.  Sets child's SACL
 * and SACL control bits and returns the number of ACEs; 0 with no given
 * SACL and nothing to inherit (child untouched); -1 when they do not fit.
 */
int	 ntacl_sacl_inherit(const struct secdesc *parent, int is_dir,
	    const struct ntacl_token *creator, const struct secdesc *given,
	    struct secdesc *child);
/*
 * A SET of SACL classes (LABEL, ATTRIBUTE, SCOPE_SECURITY_INFORMATION in
 * classes, without SACL_SECURITY_INFORMATION): out's SACL keeps old's ACEs
 * of other classes, in order, followed by new's ACEs of those classes.
 * 0, or -1 when they do not fit.  out may be old.
 */
int	 ntacl_sacl_merge_class(const struct secdesc *old,
	    const struct secdesc *new, uint32_t classes, struct secdesc *out);

/*
 * MS-DTYP 2.5.3.4.1: the DACL a new object gets when its parent gives it
 * nothing to inherit and its creator none: the token's DefaultDACL, which
 * for a Windows user is Full Control for the user and for SYSTEM
 * (S-1-5-18), plain ACEs, neither inherited nor inheritable.  Owner and
 * group are the creator's; child is overwritten.
 */
void	 ntacl_default_dacl(const struct ntacl_token *creator,
	    struct secdesc *child);
/*
 * Canonicalises what a client sets, as Windows does and no more: generic
 * bits in effective ACEs stay (Windows keeps them), the self-relative bit
 * is set, SACL bits dropped.  0, or -1 for an ACE type that is neither
 * allow nor deny.
 */
int	 ntacl_validate(const struct secdesc *sd);

/*
 * What a SET_INFO of the parts in which makes of old (MS-DTYP 2.5.3.4's
 * SetSecurityDescriptor for a file): those parts from new, the rest kept;
 * the DACL comes with its control bits (present, protected,
 * auto-inherited) and its effective ACEs' generic bits mapped, the SACL
 * with its bits and bytes as given (not present: none); LABEL,
 * ATTRIBUTE, SCOPE without SACL replace only the SACL's ACEs of their
 * classes (ntacl_sacl_merge_class).  A part asked for but missing from
 * new: owner -> -1 (INVALID_OWNER), group -> -2 (INVALID_PRIMARY_GROUP);
 * a SACL too big -> -3; else 0.
 */
int	 ntacl_merge(const struct secdesc *old, const struct secdesc *new,
	    uint32_t which, struct secdesc *out);

/*
 * What a client sets, canonicalised as Windows does (smbtorture's
 * acls.INHERITFLAGS): SE_DACL_AUTO_INHERITED stays only when
 * SE_DACL_AUTO_INHERIT_REQ came with it; AUTO_INHERIT_REQ is never kept.
 * The SACL's pair follows the same rule.  Owner, group and DACL entries
 * given as S-1-5-88-1-N / S-1-5-88-2-N (the Linux client's `idsfromsid`)
 * are read as the S-1-22-1-N / S-1-22-2-N they name (secdesc_sid_nfs_to_unix).
 */
void	 ntacl_canon_set(struct secdesc *sd);

#endif
