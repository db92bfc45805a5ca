/*
 * NT access check and inheritance (MS-DTYP 2.5.3.2, 2.5.3.4).
 */

/*
 * Inheritance.
 *
 * Inheritance (proto/ntacl.c ntacl_inherit, MS-DTYP 2.5.3.4): a new file
 * or directory on a marked share gets its parent's inheritable entries:
 * object-inherit for files; container-inherit for directories (kept
 * inheritable unless no-propagate), object-inherit-only passed on as
 * inherit-only; CREATOR OWNER / CREATOR GROUP become the creator's SIDs
 * and generic rights are mapped in effective copies (a container keeps
 * an inherit-only original beside, as Windows splits them);
 * INHERITED_ACE and SE_DACL_AUTO_INHERITED only below an auto-inherited
 * parent.  Owner and group are the creator's.  A SecD create context's
 * parts win over the inherited ones.  A parent with a stored descriptor
 * that passes nothing on (no inheritable ACE, or a NULL DACL) gives the
 * creator's default DACL (ntacl_default_dacl, MS-DTYP 2.5.3.4.1's token
 * DefaultDACL as a Windows user has it): the creator and SYSTEM with
 * FILE_ALL_ACCESS, plain ACEs, control SELF_RELATIVE | DACL_PRESENT
 * (smbtorture's acls.INHERITANCE "default sd"); its POSIX side is the
 * owner's rwx and nothing for anyone else.  A parent without a stored
 * descriptor and no DACL in the context: nothing is stored and the
 * kernel's defaults hold.
 */
#include <string.h>

#include "proto/ntacl.h"

#define OWNER_RIGHTS_AUTH	3
#define OWNER_RIGHTS_RID	4

void
ntacl_token_unix(struct ntacl_token *t, uint32_t uid, uint32_t gid,
    const uint32_t *gids, unsigned ngids)
{
	unsigned i;

	memset(t, 0, sizeof(*t));
	secdesc_sid_unix_user(&t->user, uid);
	secdesc_sid_unix_group(&t->group, gid);
	t->authenticated = 1;
	for (i = 0; i < ngids && t->ngroups < NTACL_TOKEN_GROUPS; i++)
		secdesc_sid_unix_group(&t->groups[t->ngroups++], gids[i]);
}

int
ntacl_token_has(const struct ntacl_token *t, const struct secdesc_sid *s)
{
	struct secdesc_sid w;
	unsigned i;

	if (secdesc_sid_equal(s, &t->user) || secdesc_sid_equal(s, &t->group))
		return 1;
	for (i = 0; i < t->ngroups; i++)
		if (secdesc_sid_equal(s, &t->groups[i]))
			return 1;
	secdesc_sid_world(&w);
	if (secdesc_sid_equal(s, &w))
		return 1;
	secdesc_sid_make(&w, 5, 1, 11, 0);	/* S-1-5-11 Authenticated Users */
	return t->authenticated && secdesc_sid_equal(s, &w);
}

uint32_t
ntacl_map_generic(uint32_t m)
{
	if (m & NTACL_GENERIC_READ)
		m |= NTACL_FILE_GENERIC_READ;
	if (m & NTACL_GENERIC_WRITE)
		m |= NTACL_FILE_GENERIC_WRITE;
	if (m & NTACL_GENERIC_EXECUTE)
		m |= NTACL_FILE_GENERIC_EXECUTE;
	if (m & NTACL_GENERIC_ALL)
		m |= NTACL_FILE_ALL_ACCESS;
	return m & ~(NTACL_GENERIC_READ | NTACL_GENERIC_WRITE |
	    NTACL_GENERIC_EXECUTE | NTACL_GENERIC_ALL);
}

static int
sid_is_owner_rights(const struct secdesc_sid *s)
{
	return s->revision == 1 && s->nsub == 1 && s->auth[5] ==
	    OWNER_RIGHTS_AUTH && !s->auth[0] && !s->auth[1] && !s->auth[2] &&
	    !s->auth[3] && !s->auth[4] && s->sub[0] == OWNER_RIGHTS_RID;
}

uint32_t
ntacl_granted(const struct secdesc *sd, const struct ntacl_token *t)
{
	uint32_t granted = 0, denied = 0, m;
	int owner, owner_rights = 0, match;
	unsigned i;

	if (!(sd->control & SE_DACL_PRESENT) && !sd->has_dacl)
		return NTACL_FILE_ALL_ACCESS;	/* NULL DACL */
	if (!sd->has_dacl)
		return NTACL_FILE_ALL_ACCESS;
	owner = sd->has_owner && ntacl_token_has(t, &sd->owner);
	for (i = 0; i < sd->nace; i++)
		if (!(sd->ace[i].flags & INHERIT_ONLY_ACE) &&
		    sid_is_owner_rights(&sd->ace[i].sid))
			owner_rights = 1;
	/* 2.5.3.2: the owner's implicit rights, unless OWNER RIGHTS speaks */
	if (owner && !owner_rights)
		granted |= NTACL_READ_CONTROL | NTACL_WRITE_DAC;
	for (i = 0; i < sd->nace; i++) {
		const struct secdesc_ace *a = &sd->ace[i];

		if (a->flags & INHERIT_ONLY_ACE)
			continue;
		if (sid_is_owner_rights(&a->sid))
			match = owner;
		else
			match = ntacl_token_has(t, &a->sid);
		if (!match)
			continue;
		m = ntacl_map_generic(a->mask);
		if (a->type == ACCESS_ALLOWED_ACE_TYPE)
			granted |= m & ~denied;
		else if (a->type == ACCESS_DENIED_ACE_TYPE)
			denied |= m & ~granted;
	}
	return granted & ~NTACL_ACCESS_SYSTEM_SECURITY;
}

int
ntacl_check(const struct secdesc *sd, const struct ntacl_token *t,
    uint32_t desired, uint32_t *granted)
{
	uint32_t have = ntacl_granted(sd, t), want;

	want = ntacl_map_generic(desired & ~NTACL_MAXIMUM_ALLOWED);
	*granted = (desired & NTACL_MAXIMUM_ALLOWED) ? have | want : want;
	if (want & ~have)
		return -1;
	*granted &= have;
	return 0;
}

static int
sid_is_creator(const struct secdesc_sid *s, uint32_t rid)
{
	return s->revision == 1 && s->nsub == 1 && s->auth[5] == 3 &&
	    !s->auth[0] && !s->auth[1] && !s->auth[2] && !s->auth[3] &&
	    !s->auth[4] && s->sub[0] == rid;
}

static int
inherit_add(struct secdesc *c, const struct secdesc_ace *a, uint8_t flags,
    int effective, const struct ntacl_token *creator)
{
	struct secdesc_ace *n;

	if (c->nace >= SECDESC_ACE_MAX)
		return -1;
	n = &c->ace[c->nace++];
	*n = *a;
	n->flags = flags;
	if (effective) {
		n->mask = ntacl_map_generic(a->mask);
		if (sid_is_creator(&a->sid, 0))
			n->sid = creator->user;
		else if (sid_is_creator(&a->sid, 1))
			n->sid = creator->group;
	}
	return 0;
}

int
ntacl_inherit_copies(uint8_t flags, int is_dir, int split, uint8_t inh,
    struct ntacl_copy out[2])
{
	uint8_t f = flags & (uint8_t)~INHERITED_ACE;

	if (!is_dir) {
		if (!(f & OBJECT_INHERIT_ACE))
			return 0;
		out[0].flags = inh;
		out[0].effective = 1;
		return 1;
	}
	if (f & CONTAINER_INHERIT_ACE) {
		if (f & NO_PROPAGATE_INHERIT_ACE) {
			out[0].flags = inh;
			out[0].effective = 1;
			return 1;
		}
		if (split) {
			/* effective copy, then the one to pass on */
			out[0].flags = inh;
			out[0].effective = 1;
			out[1].flags = (uint8_t)(f | INHERIT_ONLY_ACE | inh);
			out[1].effective = 0;
			return 2;
		}
		out[0].flags = (uint8_t)((f & ~INHERIT_ONLY_ACE) | inh);
		out[0].effective = 0;
		return 1;
	}
	if ((f & OBJECT_INHERIT_ACE) && !(f & NO_PROPAGATE_INHERIT_ACE)) {
		out[0].flags = (uint8_t)(f | INHERIT_ONLY_ACE | inh);
		out[0].effective = 0;
		return 1;
	}
	return 0;
}

int
ntacl_inherit(const struct secdesc *p, int is_dir,
    const struct ntacl_token *creator, struct secdesc *c)
{
	struct ntacl_copy cp[2];
	unsigned i;
	int rc = 0, n, k;
	uint8_t inh;

	memset(c, 0, sizeof(*c));
	c->control = SE_SELF_RELATIVE;
	c->has_owner = c->has_group = 1;
	c->owner = creator->user;
	c->group = creator->group;
	if (!p->has_dacl)
		return 0;
	/*
	 * INHERITED_ACE marks the copies only below an auto-inherited
	 * parent (Windows, as smbtorture's acls.INHERITFLAGS checks).
	 */
	inh = (p->control & SE_DACL_AUTO_INHERITED) ? INHERITED_ACE : 0;
	for (i = 0; i < p->nace && rc == 0; i++) {
		const struct secdesc_ace *a = &p->ace[i];
		int split;

		if (a->type != ACCESS_ALLOWED_ACE_TYPE &&
		    a->type != ACCESS_DENIED_ACE_TYPE)
			continue;
		split = sid_is_creator(&a->sid, 0) ||
		    sid_is_creator(&a->sid, 1) ||
		    ntacl_map_generic(a->mask) != a->mask;
		n = ntacl_inherit_copies(a->flags, is_dir, split, inh, cp);
		for (k = 0; k < n && rc == 0; k++)
			rc = inherit_add(c, a, cp[k].flags, cp[k].effective,
			    creator);
	}
	if (rc != 0)
		return -1;
	if (c->nace == 0)
		return 0;
	c->has_dacl = 1;
	c->control |= SE_DACL_PRESENT;
	if (p->control & SE_DACL_AUTO_INHERITED)
		c->control |= SE_DACL_AUTO_INHERITED;
	return (int)c->nace;
}

void
ntacl_default_dacl(const struct ntacl_token *creator, struct secdesc *c)
{
	memset(c, 0, sizeof(*c));
	/* no SE_DACL_DEFAULTED: Windows does not keep it on a stored SD */
	c->control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	c->has_owner = c->has_group = c->has_dacl = 1;
	c->owner = creator->user;
	c->group = creator->group;
	c->nace = 2;
	c->ace[0].type = c->ace[1].type = ACCESS_ALLOWED_ACE_TYPE;
	c->ace[0].mask = c->ace[1].mask = NTACL_FILE_ALL_ACCESS;
	c->ace[0].sid = creator->user;
	secdesc_sid_system(&c->ace[1].sid);
}

int
ntacl_validate(const struct secdesc *sd)
{
	unsigned i;

	for (i = 0; i < sd->nace; i++)
		if (sd->ace[i].type != ACCESS_ALLOWED_ACE_TYPE &&
		    sd->ace[i].type != ACCESS_DENIED_ACE_TYPE)
			return -1;
	return 0;
}

int
ntacl_merge(const struct secdesc *old, const struct secdesc *new,
    uint32_t which, struct secdesc *out)
{
	unsigned i;
	uint16_t dbits = SE_DACL_PRESENT | SE_DACL_DEFAULTED |
	    SE_DACL_AUTO_INHERIT_REQ | SE_DACL_AUTO_INHERITED |
	    SE_DACL_PROTECTED;

	if (out != old)
		*out = *old;
	out->control |= SE_SELF_RELATIVE;
	if (which & OWNER_SECURITY_INFORMATION) {
		if (!new->has_owner)
			return -1;
		out->has_owner = 1;
		out->owner = new->owner;
	}
	if (which & GROUP_SECURITY_INFORMATION) {
		if (!new->has_group)
			return -2;
		out->has_group = 1;
		out->group = new->group;
	}
	if (which & DACL_SECURITY_INFORMATION) {
		out->control = (uint16_t)((out->control & ~dbits) |
		    (new->control & (SE_DACL_PRESENT | SE_DACL_PROTECTED |
		    SE_DACL_AUTO_INHERITED)));
		out->has_dacl = new->has_dacl;
		out->nace = new->nace;
		memcpy(out->ace, new->ace, new->nace * sizeof(new->ace[0]));
		/*
		 * Windows stores effective ACEs with the generic bits
		 * mapped (smbtorture's acls.GENERIC); an inherit-only one
		 * keeps them for the objects it will reach.
		 */
		for (i = 0; i < out->nace; i++)
			if (!(out->ace[i].flags & INHERIT_ONLY_ACE))
				out->ace[i].mask =
				    ntacl_map_generic(out->ace[i].mask);
		/* no DACL given is a NULL DACL (smbtorture create.nulldacl) */
		out->control |= SE_DACL_PRESENT;
	}
	/* only the classes named (a label, say): the rest of the SACL stays */
	if (!(which & SACL_SECURITY_INFORMATION) && (which & SACL_CLASS_BITS) &&
	    ntacl_sacl_merge_class(out, new, which & SACL_CLASS_BITS, out) != 0)
		return -3;
	/* the SACL as given, bytes and all; none present: none kept */
	if (which & SACL_SECURITY_INFORMATION) {
		out->control = (uint16_t)((out->control & ~SE_SACL_BITS) |
		    (new->control & (SE_SACL_PRESENT | SE_SACL_PROTECTED |
		    SE_SACL_AUTO_INHERITED)));
		out->sacl_len = (new->control & SE_SACL_PRESENT) ?
		    new->sacl_len : 0;
		memcpy(out->sacl, new->sacl, out->sacl_len);
	}
	return 0;
}

void
ntacl_canon_set(struct secdesc *sd)
{
	unsigned i;
	uint16_t both = SE_DACL_AUTO_INHERIT_REQ | SE_DACL_AUTO_INHERITED;
	uint16_t sboth = SE_SACL_AUTO_INHERIT_REQ | SE_SACL_AUTO_INHERITED;

	if ((sd->control & both) != both)
		sd->control &= (uint16_t)~SE_DACL_AUTO_INHERITED;
	sd->control &= (uint16_t)~SE_DACL_AUTO_INHERIT_REQ;
	/* the same rule for the SACL's pair */
	if ((sd->control & sboth) != sboth)
		sd->control &= (uint16_t)~SE_SACL_AUTO_INHERITED;
	sd->control &= (uint16_t)~SE_SACL_AUTO_INHERIT_REQ;
	/* one spelling of a Unix user or group for tokens, fchown and storage */
	if (sd->has_owner)
		(void)secdesc_sid_nfs_to_unix(&sd->owner);
	if (sd->has_group)
		(void)secdesc_sid_nfs_to_unix(&sd->group);
	for (i = 0; i < sd->nace; i++)
		(void)secdesc_sid_nfs_to_unix(&sd->ace[i].sid);
}
