/*
 * NT access check, inheritance and set semantics (proto/ntacl.c), and the
 * POSIX ACL written beside a stored descriptor (worker/secdesc_posix.c):
 * never more rwx than the descriptor grants.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "vfs/vfs.h"
#include "worker/secdesc_posix.h"

#define ALICE	1001
#define BOB	1002
#define STAFF	100

static struct secdesc sd, child;

static void
sd_init(uint32_t owner_uid)
{
	memset(&sd, 0, sizeof(sd));
	sd.control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd.has_owner = sd.has_group = sd.has_dacl = 1;
	secdesc_sid_unix_user(&sd.owner, owner_uid);
	secdesc_sid_unix_group(&sd.group, STAFF);
}

static void
ace(uint8_t type, uint8_t flags, uint32_t mask, const struct secdesc_sid *s)
{
	struct secdesc_ace *a = &sd.ace[sd.nace++];

	a->type = type;
	a->flags = flags;
	a->mask = mask;
	a->sid = *s;
}

static void
tok(struct ntacl_token *t, uint32_t uid)
{
	uint32_t g = STAFF;

	ntacl_token_unix(t, uid, uid, &g, 1);
}

START_TEST(test_first_match_per_bit)
{
	struct ntacl_token a, b;
	struct secdesc_sid su, sb, world;
	uint32_t got;

	tok(&a, ALICE);
	tok(&b, BOB);
	sd_init(ALICE);
	secdesc_sid_unix_user(&su, ALICE);
	secdesc_sid_unix_user(&sb, BOB);
	secdesc_sid_world(&world);
	/* deny bob write, then allow everyone read+write */
	ace(ACCESS_DENIED_ACE_TYPE, 0, 0x2, &sb);
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x3, &world);
	ck_assert_int_eq(ntacl_check(&sd, &b, 0x1, &got), 0);
	ck_assert_int_eq(ntacl_check(&sd, &b, 0x2, &got), -1);
	ck_assert_int_eq(ntacl_check(&sd, &a, 0x3, &got), 0);
	/* the same deny after the allow denies nothing (DENY1) */
	sd.nace = 0;
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x3, &world);
	ace(ACCESS_DENIED_ACE_TYPE, 0, 0x2, &sb);
	ck_assert_int_eq(ntacl_check(&sd, &b, 0x2, &got), 0);
	/* MAXIMUM_ALLOWED: what is granted, owner's implicit rights too */
	ck_assert_int_eq(ntacl_check(&sd, &a, NTACL_MAXIMUM_ALLOWED, &got), 0);
	ck_assert_uint_eq(got, 0x3 | NTACL_READ_CONTROL | NTACL_WRITE_DAC);
	ck_assert_int_eq(ntacl_check(&sd, &b, NTACL_MAXIMUM_ALLOWED, &got), 0);
	ck_assert_uint_eq(got, 0x3);
	/* generic bits asked for are mapped */
	ck_assert_int_eq(ntacl_check(&sd, &b, NTACL_GENERIC_READ, &got), -1);
}
END_TEST

START_TEST(test_owner_rights_null_empty)
{
	struct ntacl_token a, b;
	struct secdesc_sid orights, au;

	tok(&a, ALICE);
	tok(&b, BOB);
	sd_init(ALICE);
	/* empty DACL: the owner keeps READ_CONTROL | WRITE_DAC only */
	ck_assert_uint_eq(ntacl_granted(&sd, &a), NTACL_READ_CONTROL |
	    NTACL_WRITE_DAC);
	ck_assert_uint_eq(ntacl_granted(&sd, &b), 0);
	/* OWNER RIGHTS takes the implicit rights' place */
	secdesc_sid_make(&orights, 3, 1, 4, 0);
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x1, &orights);
	ck_assert_uint_eq(ntacl_granted(&sd, &a), 0x1);
	ck_assert_uint_eq(ntacl_granted(&sd, &b), 0);
	/* Authenticated Users is every token of a user */
	secdesc_sid_make(&au, 5, 1, 11, 0);
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x4, &au);
	ck_assert_uint_eq(ntacl_granted(&sd, &b), 0x4);
	/* an inherit-only ACE grants nothing here */
	sd.nace = 0;
	ace(ACCESS_ALLOWED_ACE_TYPE, INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE,
	    0x1, &au);
	ck_assert_uint_eq(ntacl_granted(&sd, &b), 0);
	/* NULL DACL: everything */
	sd.has_dacl = 0;
	ck_assert_uint_eq(ntacl_granted(&sd, &b), NTACL_FILE_ALL_ACCESS);
}
END_TEST

START_TEST(test_inherit)
{
	struct ntacl_token a;
	struct secdesc_sid co, world, su;
	int n;

	tok(&a, ALICE);
	sd_init(BOB);
	sd.control |= SE_DACL_AUTO_INHERITED;
	secdesc_sid_creator_owner(&co);
	secdesc_sid_world(&world);
	secdesc_sid_unix_user(&su, ALICE);
	ace(ACCESS_ALLOWED_ACE_TYPE, OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE |
	    INHERIT_ONLY_ACE, NTACL_GENERIC_ALL, &co);
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x1, &world);	/* not inheritable */
	ace(ACCESS_DENIED_ACE_TYPE, OBJECT_INHERIT_ACE, 0x2, &world);
	/* a file: CREATOR OWNER becomes alice, generic mapped */
	n = ntacl_inherit(&sd, 0, &a, &child);
	ck_assert_int_eq(n, 2);
	ck_assert(secdesc_sid_equal(&child.ace[0].sid, &su));
	ck_assert_uint_eq(child.ace[0].mask, NTACL_FILE_ALL_ACCESS);
	ck_assert_uint_eq(child.ace[0].flags, INHERITED_ACE);
	ck_assert_uint_eq(child.ace[1].type, ACCESS_DENIED_ACE_TYPE);
	ck_assert(secdesc_sid_equal(&child.owner, &su));
	ck_assert(child.control & SE_DACL_AUTO_INHERITED);
	/* a directory: the creator-owner ACE splits in two; OI only passes
	 * on inherit-only */
	n = ntacl_inherit(&sd, 1, &a, &child);
	ck_assert_int_eq(n, 3);
	ck_assert(secdesc_sid_equal(&child.ace[0].sid, &su));
	ck_assert_uint_eq(child.ace[0].flags, INHERITED_ACE);
	ck_assert(secdesc_sid_equal(&child.ace[1].sid, &co));
	ck_assert_uint_eq(child.ace[1].mask, NTACL_GENERIC_ALL);
	ck_assert_uint_eq(child.ace[1].flags, OBJECT_INHERIT_ACE |
	    CONTAINER_INHERIT_ACE | INHERIT_ONLY_ACE | INHERITED_ACE);
	ck_assert_uint_eq(child.ace[2].flags, OBJECT_INHERIT_ACE |
	    INHERIT_ONLY_ACE | INHERITED_ACE);
	/* no-propagate stops at the first level; not auto-inherited: no
	 * INHERITED_ACE */
	sd.control &= (uint16_t)~SE_DACL_AUTO_INHERITED;
	sd.nace = 0;
	ace(ACCESS_ALLOWED_ACE_TYPE, OBJECT_INHERIT_ACE |
	    NO_PROPAGATE_INHERIT_ACE, 0x1, &world);
	ck_assert_int_eq(ntacl_inherit(&sd, 0, &a, &child), 1);
	ck_assert_uint_eq(child.ace[0].flags, 0);
	ck_assert_int_eq(ntacl_inherit(&sd, 1, &a, &child), 0);
	ck_assert(!child.has_dacl);
}
END_TEST

/*
 * Nothing to inherit: the creator's default DACL, as smbtorture's
 * acls.INHERITANCE expects of Windows (owner and SYSTEM full control,
 * plain ACEs, not auto-inherited even below an auto-inherited parent).
 */
START_TEST(test_default_dacl)
{
	struct ntacl_token a, b;
	struct secdesc_sid su, sys;
	uint32_t granted;

	tok(&a, ALICE);
	tok(&b, BOB);
	secdesc_sid_unix_user(&su, ALICE);
	secdesc_sid_make(&sys, 5, 1, 18, 0);
	ntacl_default_dacl(&a, &child);
	ck_assert_uint_eq(child.control, SE_SELF_RELATIVE | SE_DACL_PRESENT);
	ck_assert(child.has_owner && child.has_group && child.has_dacl);
	ck_assert(secdesc_sid_equal(&child.owner, &su));
	ck_assert(secdesc_sid_equal(&child.group, &a.group));
	ck_assert_uint_eq(child.nace, 2);
	ck_assert_uint_eq(child.ace[0].type, ACCESS_ALLOWED_ACE_TYPE);
	ck_assert_uint_eq(child.ace[0].flags, 0);
	ck_assert_uint_eq(child.ace[0].mask, NTACL_FILE_ALL_ACCESS);
	ck_assert(secdesc_sid_equal(&child.ace[0].sid, &su));
	ck_assert_uint_eq(child.ace[1].type, ACCESS_ALLOWED_ACE_TYPE);
	ck_assert_uint_eq(child.ace[1].flags, 0);
	ck_assert_uint_eq(child.ace[1].mask, NTACL_FILE_ALL_ACCESS);
	ck_assert(secdesc_sid_equal(&child.ace[1].sid, &sys));
	/* the creator may do anything, another user nothing */
	ck_assert_int_eq(ntacl_check(&child, &a, NTACL_MAXIMUM_ALLOWED,
	    &granted), 0);
	ck_assert_uint_eq(granted, NTACL_FILE_ALL_ACCESS);
	ck_assert_int_eq(ntacl_check(&child, &b, 0x1, &granted), -1);
}
END_TEST

START_TEST(test_merge_canon)
{
	static struct secdesc old, new;
	struct secdesc_sid world, su;

	sd_init(ALICE);
	old = sd;
	secdesc_sid_world(&world);
	secdesc_sid_unix_user(&su, ALICE);
	memset(&new, 0, sizeof(new));
	new.control = SE_SELF_RELATIVE | SE_DACL_PRESENT |
	    SE_DACL_AUTO_INHERITED;
	new.has_dacl = 1;
	new.nace = 1;
	new.ace[0] = (struct secdesc_ace){ ACCESS_ALLOWED_ACE_TYPE, 0,
	    NTACL_GENERIC_READ, world };
	/* AUTO_INHERITED alone is dropped, with REQ it stays, REQ never */
	ntacl_canon_set(&new);
	ck_assert(!(new.control & SE_DACL_AUTO_INHERITED));
	new.control |= SE_DACL_AUTO_INHERITED | SE_DACL_AUTO_INHERIT_REQ;
	ntacl_canon_set(&new);
	ck_assert_uint_eq(new.control & (SE_DACL_AUTO_INHERITED |
	    SE_DACL_AUTO_INHERIT_REQ), SE_DACL_AUTO_INHERITED);
	ck_assert_int_eq(ntacl_merge(&old, &new, DACL_SECURITY_INFORMATION,
	    &sd), 0);
	ck_assert(secdesc_sid_equal(&sd.owner, &su));	/* kept */
	ck_assert_uint_eq(sd.ace[0].mask, NTACL_FILE_GENERIC_READ);
	ck_assert(sd.control & SE_DACL_AUTO_INHERITED);
	/* an owner asked for and missing */
	ck_assert_int_eq(ntacl_merge(&old, &new, OWNER_SECURITY_INFORMATION,
	    &sd), -1);
	/* no DACL given: a NULL DACL */
	new.has_dacl = 0;
	new.control = SE_SELF_RELATIVE;
	ck_assert_int_eq(ntacl_merge(&old, &new, DACL_SECURITY_INFORMATION,
	    &sd), 0);
	ck_assert(!sd.has_dacl && (sd.control & SE_DACL_PRESENT));
}
END_TEST

/*
 * The Linux client's `idsfromsid` names Unix ids S-1-5-88-1-N (user) and
 * S-1-5-88-2-N (group): a descriptor it sends (owner, group, a DACL with
 * its mode entry S-1-5-88-3-MODE) reads as S-1-22-1-N / S-1-22-2-N, which
 * a token holds; the mode entry and other SIDs stay.
 */
START_TEST(test_canon_nfs_sids)
{
	static struct secdesc in;
	/* O:S-1-5-88-1-1001 G:S-1-5-88-2-100
	 * D:(A;;0xff;;;S-1-5-88-1-1001)(D;;0x1;;;S-1-5-88-3-416)
	 *   (A;;0x1;;;S-1-5-88-2-100)(A;;0x1;;;S-1-5-88-9-7) */
#define SID88(k, n)	1, 3, 0, 0, 0, 0, 0, 5, 88, 0, 0, 0, k, 0, 0, 0, \
	(n) & 0xff, (n) >> 8, 0, 0
#define ACE88(t, m, k, n)	t, 0, 28, 0, m, 0, 0, 0, SID88(k, n)
	static const uint8_t wire[] = {
		1, 0, 0x04, 0x80, 20, 0, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0,
		60, 0, 0, 0,
		SID88(1, ALICE), SID88(2, STAFF),
		2, 0, 120, 0, 4, 0, 0, 0,
		ACE88(0, 0xff, 1, ALICE), ACE88(1, 1, 3, 416),
		ACE88(0, 1, 2, STAFF), ACE88(0, 1, 9, 7),
	};
#undef ACE88
#undef SID88
	struct secdesc_sid su, sg, s88;
	struct ntacl_token t;
	uint32_t id;

	ck_assert_int_eq(secdesc_decode(wire, sizeof(wire), &in), 0);
	ck_assert_uint_eq(in.nace, 4);
	ntacl_canon_set(&in);
	secdesc_sid_unix_user(&su, ALICE);
	secdesc_sid_unix_group(&sg, STAFF);
	ck_assert(secdesc_sid_equal(&in.owner, &su));
	ck_assert(secdesc_sid_equal(&in.group, &sg));
	ck_assert(secdesc_sid_unix(&in.owner, 1, &id) && id == ALICE);
	ck_assert(secdesc_sid_unix(&in.group, 2, &id) && id == STAFF);
	ck_assert(secdesc_sid_equal(&in.ace[0].sid, &su));
	ck_assert(secdesc_sid_equal(&in.ace[2].sid, &sg));
	/* the mode entry and an unknown S-1-5-88-9 are kept as sent */
	ck_assert_uint_eq(in.ace[1].sid.nsub, 3);
	ck_assert_uint_eq(in.ace[1].sid.sub[1], 3);
	ck_assert_uint_eq(in.ace[1].sid.sub[2], 416);
	ck_assert_uint_eq(in.ace[3].sid.nsub, 3);
	ck_assert_uint_eq(in.ace[3].sid.sub[1], 9);
	tok(&t, ALICE);
	ck_assert(ntacl_token_has(&t, &in.owner));
	/* bob's owner SID is bob's, not alice's */
	secdesc_sid_make(&s88, 5, 2, 88, 1);
	s88.nsub = 3;
	s88.sub[2] = BOB;
	ck_assert_int_eq(secdesc_sid_nfs_to_unix(&s88), 1);
	ck_assert(!ntacl_token_has(&t, &s88));
	ck_assert(secdesc_sid_unix(&s88, 1, &id) && id == BOB);
	/* already S-1-22: unchanged, 0 */
	ck_assert_int_eq(secdesc_sid_nfs_to_unix(&su), 0);
	ck_assert(secdesc_sid_unix(&su, 1, &id) && id == ALICE);
}
END_TEST

/* The SACL merges as bytes; a DACL change leaves it, no SACL clears it. */
START_TEST(test_merge_sacl)
{
	static struct secdesc old, new, out;
	static const uint8_t acl[12] = { 2, 0, 12, 0, 1, 0, 0, 0,
	    0x11, 0, 4, 0 };

	sd_init(ALICE);
	old = sd;
	memset(&new, 0, sizeof(new));
	new.control = SE_SELF_RELATIVE | SE_SACL_PRESENT | SE_SACL_PROTECTED |
	    SE_SACL_AUTO_INHERITED | SE_SACL_DEFAULTED;
	memcpy(new.sacl, acl, sizeof(acl));
	new.sacl_len = sizeof(acl);
	ntacl_canon_set(&new);		/* AUTO_INHERITED without REQ: gone */
	ck_assert(!(new.control & SE_SACL_AUTO_INHERITED));
	ck_assert_int_eq(ntacl_merge(&old, &new, SACL_SECURITY_INFORMATION,
	    &out), 0);
	ck_assert_uint_eq(out.sacl_len, sizeof(acl));
	ck_assert_mem_eq(out.sacl, acl, sizeof(acl));
	ck_assert_uint_eq(out.control & SE_SACL_BITS, SE_SACL_PRESENT |
	    SE_SACL_PROTECTED);
	ck_assert_uint_eq(out.nace, old.nace);		/* DACL kept */
	/* a DACL set keeps the SACL */
	new = old;
	ck_assert_int_eq(ntacl_merge(&out, &new, DACL_SECURITY_INFORMATION,
	    &out), 0);
	ck_assert_uint_eq(out.sacl_len, sizeof(acl));
	ck_assert(out.control & SE_SACL_PRESENT);
	/* a SACL set without SACL_PRESENT: none kept */
	ck_assert_int_eq(ntacl_merge(&out, &new, SACL_SECURITY_INFORMATION,
	    &out), 0);
	ck_assert_uint_eq(out.sacl_len, 0);
	ck_assert(!(out.control & SE_SACL_BITS));
}
END_TEST

/* A raw SACL ACE: type, flags, mask, a SID of one or two sub-authorities. */
static size_t
raw_ace(uint8_t *p, uint8_t type, uint8_t flags, uint32_t mask,
    uint8_t auth, unsigned n, uint32_t a, uint32_t b)
{
	size_t len = 8 + 8 + 4 * n;

	memset(p, 0, len);
	p[0] = type;
	p[1] = flags;
	le16_put(p + 2, (uint16_t)len);
	le32_put(p + 4, mask);
	p[8] = 1;
	p[9] = (uint8_t)n;
	p[15] = auth;
	le32_put(p + 16, a);
	if (n > 1)
		le32_put(p + 20, b);
	return len;
}

static void
raw_acl(struct secdesc *d, const uint8_t *aces, size_t len, unsigned n)
{
	d->sacl[0] = 2;
	d->sacl[1] = 0;
	le16_put(d->sacl + 2, (uint16_t)(8 + len));
	le16_put(d->sacl + 4, (uint16_t)n);
	le16_put(d->sacl + 6, 0);
	memcpy(d->sacl + 8, aces, len);
	d->sacl_len = (unsigned)(8 + len);
}

/*
 * MS-DTYP 2.5.3.4 for the SACL: known answers for a file and a
 * directory below an auto-inherited parent, worked by hand.
 */
START_TEST(test_sacl_inherit)
{
	static struct secdesc p, c, given;
	struct ntacl_token t;
	uint8_t in[256], want[256];
	size_t n = 0, w = 0;

	tok(&t, ALICE);
	memset(&p, 0, sizeof(p));
	p.control = SE_SELF_RELATIVE | SE_SACL_PRESENT | SE_SACL_AUTO_INHERITED;
	/* audit Everyone OI|CI success; CREATOR OWNER OI|CI|IO failure,
	 * GENERIC_ALL; a label OI|CI; audit Everyone not inheritable;
	 * audit Everyone CI|NP (directories only, one level) */
	n += raw_ace(in + n, 0x02, 0x43, 0x1f01ff, 1, 1, 0, 0);
	n += raw_ace(in + n, 0x02, 0x8b, 0x10000000, 3, 1, 0, 0);
	n += raw_ace(in + n, 0x11, 0x03, 0x1, 16, 1, 0x2000, 0);
	n += raw_ace(in + n, 0x02, 0x40, 0x1, 1, 1, 0, 0);
	n += raw_ace(in + n, 0x02, 0x46, 0x2, 1, 1, 0, 0);
	raw_acl(&p, in, n, 5);

	/* a file: effective copies, INHERITED_ACE, CREATOR OWNER -> alice */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 0, &t, NULL, &c), 3);
	w += raw_ace(want + w, 0x02, 0x50, 0x1f01ff, 1, 1, 0, 0);
	w += raw_ace(want + w, 0x02, 0x90, 0x1f01ff, 22, 2, 1, ALICE);
	w += raw_ace(want + w, 0x11, 0x10, 0x1, 16, 1, 0x2000, 0);
	ck_assert_uint_eq(c.sacl_len, 8 + w);
	ck_assert_mem_eq(c.sacl + 8, want, w);
	ck_assert_uint_eq(c.control & SE_SACL_BITS, SE_SACL_PRESENT |
	    SE_SACL_AUTO_INHERITED);

	/* a directory: CREATOR OWNER split in two, CI|NP effective only */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 1, &t, NULL, &c), 5);
	w = 0;
	w += raw_ace(want + w, 0x02, 0x53, 0x1f01ff, 1, 1, 0, 0);
	w += raw_ace(want + w, 0x02, 0x90, 0x1f01ff, 22, 2, 1, ALICE);
	w += raw_ace(want + w, 0x02, 0x9b, 0x10000000, 3, 1, 0, 0);
	w += raw_ace(want + w, 0x11, 0x13, 0x1, 16, 1, 0x2000, 0);
	w += raw_ace(want + w, 0x02, 0x50, 0x2, 1, 1, 0, 0);
	ck_assert_uint_eq(c.sacl_len, 8 + w);
	ck_assert_mem_eq(c.sacl + 8, want, w);

	/* not auto-inherited: no INHERITED_ACE, no SE_SACL_AUTO_INHERITED */
	p.control &= (uint16_t)~SE_SACL_AUTO_INHERITED;
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 0, &t, NULL, &c), 3);
	ck_assert_uint_eq(c.sacl[8 + 1], 0x40);
	ck_assert_uint_eq(c.control & SE_SACL_BITS, SE_SACL_PRESENT);

	/* a creator's SACL alone there; protected: alone, and flagged */
	memset(&given, 0, sizeof(given));
	given.control = SE_SELF_RELATIVE | SE_SACL_PRESENT;
	n = raw_ace(in, 0x02, 0x40, 0x120089, 1, 1, 0, 0);
	raw_acl(&given, in, n, 1);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 0, &t, &given, &c), 1);
	ck_assert_mem_eq(c.sacl, given.sacl, given.sacl_len);
	/* auto-inherited parent: the creator's first, then the parent's */
	p.control |= SE_SACL_AUTO_INHERITED;
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 0, &t, &given, &c), 4);
	ck_assert_mem_eq(c.sacl + 8, in, n);
	given.control |= SE_SACL_PROTECTED;
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 0, &t, &given, &c), 1);
	ck_assert(c.control & SE_SACL_PROTECTED);

	/* nothing inheritable and nothing given: child untouched */
	n = raw_ace(in, 0x02, 0x40, 0x1, 1, 1, 0, 0);
	raw_acl(&p, in, n, 1);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ntacl_sacl_inherit(&p, 1, &t, NULL, &c), 0);
	ck_assert_uint_eq(c.sacl_len, 0);
	ck_assert_uint_eq(c.control, 0);
}
END_TEST

/* LABEL / ATTRIBUTE / SCOPE: queried and set apart from the rest. */
START_TEST(test_sacl_classes)
{
	static struct secdesc old, new, back;
	uint8_t in[256], buf[512], lab[64];
	size_t n = 0, l, len;
	struct wcur w;

	memset(&old, 0, sizeof(old));
	old.control = SE_SELF_RELATIVE | SE_SACL_PRESENT;
	n += raw_ace(in + n, 0x02, 0xc0, 0x1f01ff, 1, 1, 0, 0);	/* audit */
	l = raw_ace(in + n, 0x11, 0x00, 0x1, 16, 1, 0x2000, 0);	/* label */
	memcpy(lab, in + n, l);
	n += l;
	n += raw_ace(in + n, 0x13, 0x00, 0, 17, 1, 1, 0);	/* scope */
	raw_acl(&old, in, n, 3);

	/* the label alone */
	wcur_init(&w, buf, sizeof(buf));
	len = secdesc_encode(&w, &old, LABEL_SECURITY_INFORMATION);
	ck_assert(!w.err);
	ck_assert_int_eq(secdesc_decode(buf, len, &back), 0);
	ck_assert_uint_eq(back.sacl_len, 8 + l);
	ck_assert_uint_eq(le16_get(back.sacl + 4), 1);
	ck_assert_mem_eq(back.sacl + 8, lab, l);
	/* no resource attribute: no SACL at all */
	wcur_init(&w, buf, sizeof(buf));
	len = secdesc_encode(&w, &old, ATTRIBUTE_SECURITY_INFORMATION);
	ck_assert_int_eq(secdesc_decode(buf, len, &back), 0);
	ck_assert(!(back.control & SE_SACL_PRESENT));
	ck_assert_uint_eq(len, 20);

	/* a label set: a Low label replaces Medium at the end */
	memset(&new, 0, sizeof(new));
	new.control = SE_SELF_RELATIVE | SE_SACL_PRESENT;
	l = raw_ace(lab, 0x11, 0x00, 0x1, 16, 1, 0x1000, 0);
	raw_acl(&new, lab, l, 1);
	ck_assert_int_eq(ntacl_merge(&old, &new, LABEL_SECURITY_INFORMATION,
	    &back), 0);
	ck_assert_uint_eq(le16_get(back.sacl + 4), 3);
	ck_assert_mem_eq(back.sacl + 8, in, 20);		/* audit */
	ck_assert_mem_eq(back.sacl + 8 + 20, in + 40, 20);	/* scope */
	ck_assert_mem_eq(back.sacl + 8 + 40, lab, l);		/* Low last */
	/* a label set with none: the label goes, and a SACL without one
	 * stays byte-identical at the next */
	raw_acl(&new, lab, 0, 0);
	ck_assert_int_eq(ntacl_merge(&back, &new, LABEL_SECURITY_INFORMATION,
	    &back), 0);
	ck_assert_uint_eq(le16_get(back.sacl + 4), 2);
	ck_assert_int_eq(ntacl_merge(&back, &new, LABEL_SECURITY_INFORMATION,
	    &old), 0);
	ck_assert_uint_eq(old.sacl_len, back.sacl_len);
	ck_assert_mem_eq(old.sacl, back.sacl, back.sacl_len);
	/* nothing stored, no label given: still no SACL */
	memset(&old, 0, sizeof(old));
	old.control = SE_SELF_RELATIVE;
	ck_assert_int_eq(ntacl_merge(&old, &new, LABEL_SECURITY_INFORMATION,
	    &back), 0);
	ck_assert(!(back.control & SE_SACL_PRESENT));
}
END_TEST

/* Everyone the POSIX ACL lets in is let in by the descriptor too. */
START_TEST(test_posix_never_more)
{
	static struct vfs_acl acl;
	struct secdesc_sid us, gs, sb, world, staff, au;
	unsigned i;

	sd_init(ALICE);
	secdesc_sid_unix_user(&us, ALICE);
	secdesc_sid_unix_group(&gs, STAFF);
	secdesc_sid_unix_user(&sb, BOB);
	secdesc_sid_world(&world);
	secdesc_sid_unix_group(&staff, 200);
	secdesc_sid_make(&au, 5, 1, 11, 0);
	ace(ACCESS_DENIED_ACE_TYPE, 0, 0x2, &sb);		/* bob: no write */
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x1 | 0x2 | 0x20, &us);
	ace(ACCESS_ALLOWED_ACE_TYPE, 0, 0x1 | 0x2, &au);	/* Modify-ish */
	ace(ACCESS_DENIED_ACE_TYPE, 0, 0x20, &staff);		/* unknown members */
	ck_assert_int_ge(secdesc_posix_acl(&sd, 0, &us, &gs, &acl), 1);
	for (i = 0; i < acl.n; i++) {
		if (acl.e[i].tag == VFS_ACL_USER && acl.e[i].id == BOB)
			ck_assert_uint_eq(acl.e[i].perm, 4);	/* r only */
		/* the group deny narrows every entry: no x anywhere */
		ck_assert_uint_eq(acl.e[i].perm & 1, 0);
	}
	ck_assert_uint_eq(secdesc_posix_perm(&acl, VFS_ACL_USER_OBJ), 6);
	ck_assert_uint_eq(secdesc_posix_perm(&acl, VFS_ACL_OTHER), 6);
	/* an empty DACL: nothing for anyone */
	sd.nace = 0;
	ck_assert_int_eq(secdesc_posix_acl(&sd, 0, &us, &gs, &acl), 0);
	ck_assert_uint_eq(secdesc_posix_perm(&acl, VFS_ACL_USER_OBJ), 0);
	ck_assert_uint_eq(secdesc_posix_perm(&acl, VFS_ACL_OTHER), 0);
	/* a NULL DACL: everything */
	sd.has_dacl = 0;
	ck_assert_int_eq(secdesc_posix_acl(&sd, 0, &us, &gs, &acl), 0);
	ck_assert_uint_eq(secdesc_posix_perm(&acl, VFS_ACL_OTHER), 7);
}
END_TEST

static Suite *
ntacl_suite(void)
{
	Suite *s = suite_create("ntacl");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_first_match_per_bit);
	tcase_add_test(tc, test_owner_rights_null_empty);
	tcase_add_test(tc, test_inherit);
	tcase_add_test(tc, test_default_dacl);
	tcase_add_test(tc, test_merge_canon);
	tcase_add_test(tc, test_canon_nfs_sids);
	tcase_add_test(tc, test_merge_sacl);
	tcase_add_test(tc, test_sacl_inherit);
	tcase_add_test(tc, test_sacl_classes);
	tcase_add_test(tc, test_posix_never_more);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ntacl_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
