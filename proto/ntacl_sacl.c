/*
 * SACLs as their bytes (proto/secdesc.h keeps a SACL verbatim): what a new
 * object inherits (MS-DTYP 2.5.3.4) and what a SET of its label,
 * attribute or scope ACEs leaves (MS-DTYP 2.4.7).  Nothing here acts on a
 * SACL: usmbd writes no audit records and enforces no label.
 *
 * Every SACL given here went through secdesc_decode's sacl_decode (each
 * ACE header inside its AclSize) or was built here; the walks check
 * again, and stop, rather than trust that.
 */
#include <string.h>

#include "proto/ntacl.h"

#define ACL_HDR_LEN	8
#define CREATOR_SID_LEN	12	/* S-1-3-0 / S-1-3-1: one sub-authority */
/* MS-DTYP 2.4.4.1 SUCCESSFUL_ACCESS_ACE_FLAG, FAILED_ACCESS_ACE_FLAG */
#define AUDIT_FLAGS	0xC0

/* A SACL under construction: header written at the end. */
struct sacl_out {
	uint8_t		 buf[SECDESC_SACL_MAX];
	size_t		 len;
	unsigned	 count;
	uint8_t		 rev;
	int		 err;
};

static void
out_init(struct sacl_out *o)
{
	o->len = ACL_HDR_LEN;
	o->count = 0;
	o->rev = 2;
	o->err = 0;
}

static void
out_rev(struct sacl_out *o, const uint8_t *acl, size_t len)
{
	if (len >= ACL_HDR_LEN && acl[0] > o->rev && acl[0] <= 4)
		o->rev = acl[0];
}

/* Room for n more bytes, else the error latched. */
static uint8_t *
out_room(struct sacl_out *o, size_t n)
{
	uint8_t *p;

	if (o->err || n > sizeof(o->buf) - o->len || o->count >= 0xffff) {
		o->err = 1;
		return NULL;
	}
	p = o->buf + o->len;
	o->len += n;
	o->count++;
	return p;
}

static void
out_finish(const struct sacl_out *o, struct secdesc *sd)
{
	memcpy(sd->sacl, o->buf, o->len);
	sd->sacl[0] = o->rev;
	sd->sacl[1] = 0;
	le16_put(sd->sacl + 2, (uint16_t)o->len);
	le16_put(sd->sacl + 4, (uint16_t)o->count);
	le16_put(sd->sacl + 6, 0);
	sd->sacl_len = (unsigned)o->len;
}

/*
 * The next ACE of a SACL: *pos at its start on entry, *alen its size; 0,
 * or -1 at the end or on a header that does not fit.
 */
static int
sacl_next(const uint8_t *acl, size_t len, unsigned *i, size_t *pos,
    size_t *alen)
{
	if (len < ACL_HDR_LEN || *i >= le16_get(acl + 4) || *pos + 4 > len)
		return -1;
	*alen = le16_get(acl + *pos + 2);
	if (*alen < 4 || *alen > len - *pos)
		return -1;
	return 0;
}

/*
 * Where an ACE's SID starts (MS-DTYP 2.4.4): after the mask, or for the
 * object types after the object flags and the GUIDs they announce; 0 for
 * a type with no SID where we know.
 */
static size_t
ace_sid_off(const uint8_t *a, size_t alen)
{
	uint32_t of;

	switch (a[0]) {
	case 0x02: case 0x03: case 0x0D: case 0x0E:	/* audit, alarm (callback) */
	case SYSTEM_MANDATORY_LABEL_ACE_TYPE:
	case SYSTEM_RESOURCE_ATTRIBUTE_ACE_TYPE:
	case SYSTEM_SCOPED_POLICY_ID_ACE_TYPE:
		return alen >= 8 + CREATOR_SID_LEN ? 8 : 0;
	case 0x07: case 0x08: case 0x0F: case 0x10:	/* the object kinds */
		if (alen < 12)
			return 0;
		of = le32_get(a + 8);
		return 12 + ((of & 1) ? 16 : 0) + ((of & 2) ? 16 : 0);
	}
	return 0;
}

/* 0 or 1 for S-1-3-0 / S-1-3-1 at a + off, else -1. */
static int
ace_creator(const uint8_t *a, size_t alen, size_t off)
{
	static const uint8_t co[8] = { 1, 1, 0, 0, 0, 0, 0, 3 };
	uint32_t rid;

	if (off == 0 || off + CREATOR_SID_LEN > alen ||
	    memcmp(a + off, co, sizeof(co)) != 0)
		return -1;
	rid = le32_get(a + off + 8);
	return rid <= 1 ? (int)rid : -1;
}

static size_t
sid_put(uint8_t *p, const struct secdesc_sid *s)
{
	int i;

	p[0] = s->revision;
	p[1] = s->nsub;
	memcpy(p + 2, s->auth, 6);
	for (i = 0; i < s->nsub; i++)
		le32_put(p + 8 + 4 * i, s->sub[i]);
	return 8 + 4u * s->nsub;
}

/*
 * One copy of a parent's ACE: its flags, and for an effective copy the
 * generic rights mapped and a CREATOR SID replaced by the creator's.
 */
static void
ace_copy(struct sacl_out *o, const uint8_t *a, size_t alen, uint8_t flags,
    int effective, const struct ntacl_token *creator)
{
	size_t off = ace_sid_off(a, alen), n = alen;
	const struct secdesc_sid *to = NULL;
	int who = effective ? ace_creator(a, alen, off) : -1;
	uint8_t *p;

	if (who >= 0) {
		to = who == 0 ? &creator->user : &creator->group;
		n = alen - CREATOR_SID_LEN + 8 + 4u * to->nsub;
	}
	if ((p = out_room(o, n)) == NULL)
		return;
	if (to != NULL) {
		memcpy(p, a, off);
		sid_put(p + off, to);
		memcpy(p + n - (alen - off - CREATOR_SID_LEN),
		    a + off + CREATOR_SID_LEN, alen - off - CREATOR_SID_LEN);
	} else
		memcpy(p, a, alen);
	p[1] = flags;
	le16_put(p + 2, (uint16_t)n);
	if (effective && alen >= 8)
		le32_put(p + 4, ntacl_map_generic(le32_get(a + 4)));
}

/* The parent's inheritable ACEs (of the classes in only: all when 0). */
static void
inherit_from(struct sacl_out *o, const struct secdesc *p, int is_dir,
    const struct ntacl_token *creator, uint8_t inh, uint32_t only)
{
	struct ntacl_copy cp[2];
	size_t pos = ACL_HDR_LEN, alen;
	unsigned i = 0;
	int n, k, split;

	for (; sacl_next(p->sacl, p->sacl_len, &i, &pos, &alen) == 0;
	    i++, pos += alen) {
		const uint8_t *a = p->sacl + pos;

		if (only != 0 && !(secdesc_sacl_class(a[0]) & only))
			continue;
		split = ace_creator(a, alen, ace_sid_off(a, alen)) >= 0 ||
		    (alen >= 8 && ntacl_map_generic(le32_get(a + 4)) !=
		    le32_get(a + 4));
		n = ntacl_inherit_copies(a[1], is_dir, split, inh, cp);
		/* an audit ACE's success and failure flags go along */
		for (k = 0; k < n; k++)
			ace_copy(o, a, alen, (uint8_t)(cp[k].flags |
			    (a[1] & AUDIT_FLAGS)), cp[k].effective, creator);
	}
	out_rev(o, p->sacl, p->sacl_len);
}

/* Every ACE of sd's SACL (of the classes in which), verbatim. */
static void
copy_aces(struct sacl_out *o, const struct secdesc *sd, uint32_t which,
    int keep)
{
	size_t pos = ACL_HDR_LEN, alen;
	unsigned i = 0;
	uint8_t *p;

	for (; sacl_next(sd->sacl, sd->sacl_len, &i, &pos, &alen) == 0;
	    i++, pos += alen) {
		int in = (secdesc_sacl_class(sd->sacl[pos]) & which) != 0;

		if (in != keep)
			continue;
		if ((p = out_room(o, alen)) != NULL)
			memcpy(p, sd->sacl + pos, alen);
	}
	out_rev(o, sd->sacl, sd->sacl_len);
}

int
ntacl_sacl_inherit(const struct secdesc *p, int is_dir,
    const struct ntacl_token *creator, const struct secdesc *given,
    struct secdesc *c)
{
	struct sacl_out o;
	int auto_inh, prot;
	uint8_t inh;

	if (given != NULL && !(given->control & SE_SACL_PRESENT))
		given = NULL;
	auto_inh = (p->control & SE_SACL_PRESENT) &&
	    (p->control & SE_SACL_AUTO_INHERITED);
	prot = given != NULL && (given->control & SE_SACL_PROTECTED);
	inh = auto_inh ? INHERITED_ACE : 0;
	out_init(&o);
	if (given != NULL)
		copy_aces(&o, given, ~0u, 1);
	/*
	 * The creator's SACL alone below a parent that is not
	 * auto-inherited (as the DACL's: ntacl_inherit); protected, only
	 * the classes protection cannot stop (Windows' ACE inheritance
	 * rules: resource attributes and scoped policy ids).
	 */
	if (p->control & SE_SACL_PRESENT) {
		if (prot)
			inherit_from(&o, p, is_dir, creator, inh,
			    ATTRIBUTE_SECURITY_INFORMATION |
			    SCOPE_SECURITY_INFORMATION);
		else if (given == NULL || auto_inh)
			inherit_from(&o, p, is_dir, creator, inh, 0);
	}
	if (o.err)
		return -1;
	if (given == NULL && o.count == 0)
		return 0;
	c->control = (uint16_t)((c->control & ~SE_SACL_BITS) |
	    SE_SACL_PRESENT | (auto_inh ? SE_SACL_AUTO_INHERITED : 0) |
	    (prot ? SE_SACL_PROTECTED : 0));
	/* a NULL SACL given and nothing inherited stays a NULL SACL */
	if (given != NULL && given->sacl_len == 0 && o.count == 0)
		c->sacl_len = 0;
	else
		out_finish(&o, c);
	return (int)o.count;
}

int
ntacl_sacl_merge_class(const struct secdesc *old, const struct secdesc *new,
    uint32_t classes, struct secdesc *out)
{
	struct sacl_out o;
	int had = (old->control & SE_SACL_PRESENT) != 0;

	out_init(&o);
	if (had)
		copy_aces(&o, old, classes, 0);
	if (new->control & SE_SACL_PRESENT)
		copy_aces(&o, new, classes, 1);
	if (o.err)
		return -1;
	if (out != old)
		*out = *old;
	/* nothing stored, nothing given: still none */
	if (!had && o.count == 0)
		return 0;
	out->control |= SE_SACL_PRESENT;
	out_finish(&o, out);
	return 0;
}
