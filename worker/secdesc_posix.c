/*
 * Descriptors to and from what the kernel enforces (worker/secdesc_posix.h).
 *
 * Derived (no stored descriptor): allow ACEs from the access ACL (or the
 * mode) and, for a directory, inheritable ACEs from the default ACL;
 * S-1-22-1-uid for users, S-1-22-2-gid for groups, Everyone for "other",
 * CREATOR OWNER / CREATOR GROUP for the default ACL's owner and group.
 *
 * Mapped (beside a stored descriptor): each Unix user and group an ACE
 * names gets an entry; its rwx are the rights the DACL grants that SID
 * together with Everyone and Authenticated Users, in ACE order (the NT
 * first-match rule, per bit), less every right denied to a SID whose
 * members cannot be told (a group, a well-known SID): never more than
 * the descriptor grants.
 */

/*
 * The POSIX ACL beside a stored descriptor.
 *
 * The POSIX ACL beside it (worker/secdesc_posix.c) never grants a Unix
 * user more rwx than the descriptor does:
 * | descriptor | POSIX |
 * | --- | --- |
 * | ACE for S-1-22-1-UID (allow or deny) | a named user entry (the owner's: USER_OBJ) with the rights that SID gets together with Everyone and Authenticated Users, in ACE order |
 * | ACE for S-1-22-2-GID | a named group entry (the owning group's: GROUP_OBJ), likewise |
 * | Everyone, Authenticated Users | every entry, and "other" |
 * | deny for a group or any other SID (members unknown) | taken from every entry |
 * | allow for any other SID (SYSTEM, Administrators, domain SIDs), CREATOR OWNER/GROUP, inherit-only ACEs | nothing |
 * | NULL DACL / empty DACL | rwx for all / nothing |
 * r = FILE_READ_DATA (list a directory); w = FILE_WRITE_DATA on a file,
 * FILE_ADD_FILE or FILE_ADD_SUBDIRECTORY on a directory; x =
 * FILE_EXECUTE on a file and always on a directory (Windows bypasses
 * traverse checking).  With named entries the mask is the union of the
 * group class.  Where POSIX is coarser, the NT check only narrows (the
 * kernel alone would allow more through a local login or a file without
 * the descriptor): the fine rights (DELETE, WRITE_DAC, attributes, EAs,
 * APPEND without WRITE), a directory's w (which also lets a local user
 * delete and create both kinds), x on directories, and the owner's
 * rights that come only through its groups (USER_OBJ does not fall
 * through to group entries, so POSIX is stricter there).  No default ACL
 * is written beside a stored descriptor: the kernel would apply it, as
 * the access ACL, before the worker could open what it made; an SMB
 * create writes the inherited mapping itself.  A file made locally gets
 * the kernel's defaults and no descriptor.  SET_INFO changes the
 * kernel's side first, as the user (chown/chgrp to a Unix SID, fchmod,
 * the access ACL: the kernel says whether this user may), then asks the
 * writer; when the writer refuses, mode and ACLs are put back.  A stored
 * owner other than a Unix user (e.g. Everyone) leaves the file's Unix
 * owner as it is.
 */

/*
 * SIDs.
 *
 * SIDs. One rule: a Unix user is S-1-22-1-UID and a group S-1-22-2-GID
 * (Samba's "Unix User\NAME" / "Unix Group\NAME"); usmbctl user show
 * prints the user's.  Any other SID (SYSTEM, Administrators, CREATOR
 * OWNER, domain SIDs) is kept in the descriptor and matches nobody's
 * token.  A worker's token: its uid, gid and groups (read once; the
 * first 64, NTACL_TOKEN_GROUPS, as in the writer's), Everyone,
 * Authenticated Users.
 */
#include "worker/secdesc_posix.h"

#include <string.h>
#include <sys/stat.h>

#include "proto/ntacl.h"
#include "worker/file_open.h"

/* The rwx classes, as Samba folds them */
#define MASK_READ	NTACL_FILE_GENERIC_READ
#define MASK_WRITE	NTACL_FILE_GENERIC_WRITE
#define MASK_EXEC	NTACL_FILE_GENERIC_EXECUTE

static uint32_t
perm_to_mask(unsigned perm, int owner, int dir)
{
	uint32_t m = 0;

	if (perm == 7)
		return FILE_ALL_ACCESS;
	if (perm & 4)
		m |= MASK_READ;
	if (perm & 2)
		m |= MASK_WRITE | (dir ? FILE_DELETE_CHILD : 0);
	if (perm & 1)
		m |= MASK_EXEC;
	/* the owner may always chmod, chown (to itself) and utime */
	if (owner)
		m |= READ_CONTROL | WRITE_DAC | WRITE_OWNER |
		    FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;
	return m;
}

static void
add_ace(struct secdesc *sd, const struct secdesc_sid *sid, uint32_t mask,
    uint8_t flags)
{
	struct secdesc_ace *a;

	if (sd->nace >= SECDESC_ACE_MAX)
		return;
	a = &sd->ace[sd->nace++];
	a->type = ACCESS_ALLOWED_ACE_TYPE;
	a->flags = flags;
	a->mask = mask;
	a->sid = *sid;
}

static void
from_acl(struct secdesc *sd, const struct vfs_acl *acl,
    const struct vfs_stat *st, int is_default)
{
	struct secdesc_sid sid;
	unsigned i, maskperm = 7, perm;
	int dir = S_ISDIR(st->mode), owner;
	uint8_t flags = is_default ? (OBJECT_INHERIT_ACE |
	    CONTAINER_INHERIT_ACE | INHERIT_ONLY_ACE) : 0;

	for (i = 0; i < acl->n; i++)
		if (acl->e[i].tag == VFS_ACL_MASK)
			maskperm = acl->e[i].perm;
	for (i = 0; i < acl->n; i++) {
		const struct vfs_acl_entry *e = &acl->e[i];

		perm = e->perm;
		owner = 0;
		switch (e->tag) {
		case VFS_ACL_USER_OBJ:
			if (is_default)
				secdesc_sid_creator_owner(&sid);
			else
				secdesc_sid_unix_user(&sid, st->uid);
			owner = !is_default;
			break;
		case VFS_ACL_USER:
			secdesc_sid_unix_user(&sid, e->id);
			perm &= maskperm;
			break;
		case VFS_ACL_GROUP_OBJ:
			if (is_default)
				secdesc_sid_creator_group(&sid);
			else
				secdesc_sid_unix_group(&sid, st->gid);
			perm &= maskperm;
			break;
		case VFS_ACL_GROUP:
			secdesc_sid_unix_group(&sid, e->id);
			perm &= maskperm;
			break;
		case VFS_ACL_OTHER:
			secdesc_sid_world(&sid);
			break;
		default:
			continue;	/* the mask is folded in above */
		}
		add_ace(sd, &sid, perm_to_mask(perm, owner, dir), flags);
	}
}

int
secdesc_posix_derive(const struct vfs_ops *vfs, int fd,
    const struct vfs_stat *st, struct secdesc *sd)
{
	static struct vfs_acl acl;

	memset(sd, 0, sizeof(*sd));
	sd->control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd->has_owner = sd->has_group = sd->has_dacl = 1;
	secdesc_sid_unix_user(&sd->owner, st->uid);
	secdesc_sid_unix_group(&sd->group, st->gid);
	if (vfs_acl_get(vfs, fd, 0, &acl) != 0 || acl.n == 0) {
		/* no ACL: the mode is the three-entry ACL */
		acl.n = 3;
		acl.e[0] = (struct vfs_acl_entry){ VFS_ACL_USER_OBJ,
		    (uint16_t)(st->mode >> 6 & 7), 0 };
		acl.e[1] = (struct vfs_acl_entry){ VFS_ACL_GROUP_OBJ,
		    (uint16_t)(st->mode >> 3 & 7), 0 };
		acl.e[2] = (struct vfs_acl_entry){ VFS_ACL_OTHER,
		    (uint16_t)(st->mode & 7), 0 };
	}
	from_acl(sd, &acl, st, 0);
	if (S_ISDIR(st->mode) && vfs_acl_get(vfs, fd, 1, &acl) == 0)
		from_acl(sd, &acl, st, 1);
	return 0;
}

static int
sid_is(const struct secdesc_sid *s, uint8_t auth, uint32_t rid)
{
	static const uint8_t zero[5];

	return s->revision == 1 && s->nsub == 1 && s->auth[5] == auth &&
	    memcmp(s->auth, zero, 5) == 0 && s->sub[0] == rid;
}

/* Everyone, Authenticated Users: every Unix user is one of them. */
static int
sid_everybody(const struct secdesc_sid *s)
{
	return sid_is(s, 1, 0) || sid_is(s, 5, 11);
}

/*
 * The rights sd gives principal p (NULL: nobody but Everyone), with
 * owner_rights when p is the descriptor's owner, less the unknowable
 * denies.
 */
static uint32_t
grant_of(const struct secdesc *sd, const struct secdesc_sid *p,
    int owner_rights)
{
	uint32_t g = 0, d = 0, extra = 0, m;
	unsigned i;
	uint32_t id;

	for (i = 0; i < sd->nace; i++) {
		const struct secdesc_ace *a = &sd->ace[i];
		int match;

		if (a->flags & INHERIT_ONLY_ACE)
			continue;
		m = ntacl_map_generic(a->mask);
		match = sid_everybody(&a->sid) || (p != NULL &&
		    secdesc_sid_equal(&a->sid, p)) || (owner_rights &&
		    sid_is(&a->sid, 3, 4));
		if (match) {
			if (a->type == ACCESS_ALLOWED_ACE_TYPE)
				g |= m & ~d;
			else if (a->type == ACCESS_DENIED_ACE_TYPE)
				d |= m & ~g;
		} else if (a->type == ACCESS_DENIED_ACE_TYPE &&
		    !secdesc_sid_unix(&a->sid, 1, &id) &&
		    !sid_is(&a->sid, 3, 0) && !sid_is(&a->sid, 3, 1) &&
		    !sid_is(&a->sid, 3, 4))
			extra |= m;	/* a group p may be in */
	}
	return g & ~extra;
}

static unsigned
mask_to_perm(uint32_t m, int dir)
{
	unsigned perm = 0;

	/* list, traverse: the bits of read data and execute */
	if (m & FILE_READ_DATA)
		perm |= 4;
	/*
	 * w: writing anywhere (appending included) is WRITE_DATA.  In a
	 * directory w is ADD_FILE, ADD_SUBDIRECTORY and DELETE_CHILD at
	 * once: either of the first two gives it, and the worker's NT check
	 * of the parent (smb2_secdesc_parent) narrows to the one granted.
	 */
	if (m & (dir ? FILE_WRITE_DATA | FILE_APPEND_DATA : FILE_WRITE_DATA))
		perm |= 2;
	/*
	 * x on a directory is traversal, which Windows does not check
	 * (every token holds "bypass traverse checking"): always given;
	 * what lies below keeps its own descriptor.
	 */
	if ((m & FILE_EXECUTE) || dir)
		perm |= 1;
	return perm;
}

static int
acl_put(struct vfs_acl *acl, uint16_t tag, uint32_t id, unsigned perm)
{
	unsigned i;

	for (i = 0; i < acl->n; i++)
		if (acl->e[i].tag == tag && acl->e[i].id == id)
			return 0;
	if (acl->n >= VFS_ACL_MAX)
		return -1;
	acl->e[acl->n++] = (struct vfs_acl_entry){ tag, (uint16_t)perm, id };
	return 0;
}

int
secdesc_posix_acl(const struct secdesc *sd, int dir,
    const struct secdesc_sid *user_sid, const struct secdesc_sid *group_sid,
    struct vfs_acl *acl)
{
	unsigned i, named = 0, mask = 0, perm;
	int orights;
	uint32_t id;

	acl->n = 0;
	if (!sd->has_dacl) {
		/* no DACL or a NULL one: everything to everyone */
		(void)acl_put(acl, VFS_ACL_USER_OBJ, 0, 7);
		(void)acl_put(acl, VFS_ACL_GROUP_OBJ, 0, 7);
		(void)acl_put(acl, VFS_ACL_OTHER, 0, 7);
		return 0;
	}
	orights = sd->has_owner && secdesc_sid_equal(&sd->owner, user_sid);
	(void)acl_put(acl, VFS_ACL_USER_OBJ, 0, mask_to_perm(grant_of(sd,
	    user_sid, orights), dir));
	(void)acl_put(acl, VFS_ACL_GROUP_OBJ, 0, mask_to_perm(grant_of(sd,
	    group_sid, 0), dir));
	(void)acl_put(acl, VFS_ACL_OTHER, 0, mask_to_perm(grant_of(sd, NULL,
	    0), dir));
	for (i = 0; i < sd->nace; i++) {
		const struct secdesc_ace *a = &sd->ace[i];

		if (a->flags & INHERIT_ONLY_ACE)
			continue;
		if (secdesc_sid_equal(&a->sid, user_sid) ||
		    secdesc_sid_equal(&a->sid, group_sid))
			continue;
		if (secdesc_sid_unix(&a->sid, 1, &id)) {
			perm = mask_to_perm(grant_of(sd, &a->sid,
			    sd->has_owner && secdesc_sid_equal(&sd->owner,
			    &a->sid)), dir);
			if (acl_put(acl, VFS_ACL_USER, id, perm) != 0)
				return -1;
		} else if (secdesc_sid_unix(&a->sid, 2, &id)) {
			perm = mask_to_perm(grant_of(sd, &a->sid, 0), dir);
			if (acl_put(acl, VFS_ACL_GROUP, id, perm) != 0)
				return -1;
		}
	}
	for (i = 0; i < acl->n; i++) {
		if (acl->e[i].tag == VFS_ACL_USER ||
		    acl->e[i].tag == VFS_ACL_GROUP)
			named++;
		if (acl->e[i].tag == VFS_ACL_USER ||
		    acl->e[i].tag == VFS_ACL_GROUP ||
		    acl->e[i].tag == VFS_ACL_GROUP_OBJ)
			mask |= acl->e[i].perm;
	}
	if (named && acl_put(acl, VFS_ACL_MASK, 0, mask) != 0)
		return -1;
	return (int)named;
}

unsigned
secdesc_posix_perm(const struct vfs_acl *acl, uint16_t tag)
{
	unsigned i;

	for (i = 0; i < acl->n; i++)
		if (acl->e[i].tag == tag)
			return acl->e[i].perm;
	return 0;
}
