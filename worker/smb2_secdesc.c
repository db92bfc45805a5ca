/*
 * Security descriptors of files and directories, mapped onto what the
 * kernel enforces: owner, group, mode and POSIX ACLs.
 *
 * SIDs follow Samba's idmap for Unix accounts: S-1-22-1-uid is a user,
 * S-1-22-2-gid a group, S-1-1-0 (Everyone) the "other" class; in a
 * directory's inheritable ACEs Creator Owner (S-1-3-0) and Creator Group
 * (S-1-3-1) stand for the default ACL's owner and group entries.
 *
 * A QUERY builds allow ACEs from the access ACL (or the mode) and, for a
 * directory, inheritable ACEs from the default ACL.  A SET maps allow ACEs
 * back to rwx entries: the fine-grained bits of a mask fold into r, w and x
 * (read data, write/append data, execute), as Samba does.  What POSIX
 * cannot say -- deny ACEs, SIDs that are not Unix accounts, Everyone, or
 * the creator SIDs, a SACL -- is refused, never dropped silently; giving a
 * file away is refused by the kernel (EPERM) because the worker is the user.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/log.h"
#include "proto/secdesc.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2_file.h"

/* MS-DTYP 2.4.3 generic mapping for files, and the rwx classes */
#define MASK_GENERIC_READ	0x00120089u
#define MASK_GENERIC_WRITE	0x00120116u
#define MASK_GENERIC_EXECUTE	0x001200A0u
#define MASK_ALL		FILE_ALL_ACCESS

static struct secdesc	secdesc_buf;	/* one request at a time */

static uint32_t
secdesc_perm_to_mask(unsigned perm, int owner, int dir)
{
	uint32_t m = 0;

	if (perm == 7)
		return MASK_ALL;
	if (perm & 4)
		m |= MASK_GENERIC_READ;
	if (perm & 2)
		m |= MASK_GENERIC_WRITE | (dir ? FILE_DELETE_CHILD : 0);
	if (perm & 1)
		m |= MASK_GENERIC_EXECUTE;
	/* the owner may always chmod, chown (to itself) and utime */
	if (owner)
		m |= READ_CONTROL | WRITE_DAC | WRITE_OWNER |
		    FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;
	return m;
}

static unsigned
secdesc_mask_to_perm(uint32_t m)
{
	unsigned perm = 0;

	if (m & GENERIC_ALL)
		return 7;
	if (m & (FILE_READ_DATA | GENERIC_READ))
		perm |= 4;
	if (m & (FILE_WRITE_DATA | FILE_APPEND_DATA | GENERIC_WRITE))
		perm |= 2;
	if (m & (FILE_EXECUTE | GENERIC_EXECUTE))
		perm |= 1;
	return perm;
}

static int
secdesc_add_ace(struct secdesc *sd, const struct secdesc_sid *sid,
    uint32_t mask, uint8_t flags)
{
	struct secdesc_ace *a;

	if (sd->nace >= SECDESC_ACE_MAX)
		return -1;
	a = &sd->ace[sd->nace++];
	a->type = ACCESS_ALLOWED_ACE_TYPE;
	a->flags = flags;
	a->mask = mask;
	a->sid = *sid;
	return 0;
}

/* ACEs for one ACL (access, or default with inherit flags). */
static void
secdesc_from_acl(struct secdesc *sd, const struct vfs_acl *acl,
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
		(void)secdesc_add_ace(sd, &sid, secdesc_perm_to_mask(perm,
		    owner, dir), flags);
	}
}

/* The SD of an open file, every part filled. */
static ntstatus_t
secdesc_build(struct file_open *f, struct secdesc *sd)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat st;
	struct vfs_acl acl;
	int rc;

	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	memset(sd, 0, sizeof(*sd));
	sd->control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd->has_owner = sd->has_group = sd->has_dacl = 1;
	secdesc_sid_unix_user(&sd->owner, st.uid);
	secdesc_sid_unix_group(&sd->group, st.gid);
	if (vfs_acl_get(vfs, f->fd, 0, &acl) != 0 || acl.n == 0) {
		/* no ACL: the mode is the three-entry ACL */
		acl.n = 3;
		acl.e[0] = (struct vfs_acl_entry){ VFS_ACL_USER_OBJ,
		    (uint16_t)(st.mode >> 6 & 7), 0 };
		acl.e[1] = (struct vfs_acl_entry){ VFS_ACL_GROUP_OBJ,
		    (uint16_t)(st.mode >> 3 & 7), 0 };
		acl.e[2] = (struct vfs_acl_entry){ VFS_ACL_OTHER,
		    (uint16_t)(st.mode & 7), 0 };
	}
	secdesc_from_acl(sd, &acl, &st, 0);
	if (S_ISDIR(st.mode) && vfs_acl_get(vfs, f->fd, 1, &acl) == 0)
		secdesc_from_acl(sd, &acl, &st, 1);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_secdesc_query(struct open *op, uint32_t which, struct wcur *w,
    uint32_t *need)
{
	ntstatus_t status;

	*need = 0;
	/*
	 * READ_CONTROL guards the owner, group, DACL and label only
	 * (MS-FSA 2.1.5.13): asking for none of them is allowed without it
	 * and returns an empty descriptor (smb2.sdread).
	 */
	if ((which & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
	    DACL_SECURITY_INFORMATION | LABEL_SECURITY_INFORMATION)) &&
	    !(op->access & READ_CONTROL))
		return STATUS_ACCESS_DENIED;
	if ((which & SACL_SECURITY_INFORMATION) &&
	    !(op->access & ACCESS_SYSTEM_SECURITY))
		return STATUS_ACCESS_DENIED;
	if ((status = secdesc_build(op->u.file, &secdesc_buf)) !=
	    STATUS_SUCCESS)
		return status;
	*need = (uint32_t)secdesc_encode(w, &secdesc_buf, which);
	return w->err ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

/* Adds perm for (tag, id) to acl, merging with an entry already there. */
static int
secdesc_acl_or(struct vfs_acl *acl, uint16_t tag, uint32_t id, unsigned perm)
{
	unsigned i;

	for (i = 0; i < acl->n; i++)
		if (acl->e[i].tag == tag && ((tag != VFS_ACL_USER &&
		    tag != VFS_ACL_GROUP) || acl->e[i].id == id)) {
			acl->e[i].perm |= (uint16_t)perm;
			return 0;
		}
	if (acl->n >= VFS_ACL_MAX)
		return -1;
	acl->e[acl->n++] = (struct vfs_acl_entry){ tag, (uint16_t)perm, id };
	return 0;
}

static uint16_t	secdesc_acl_perm(const struct vfs_acl *, uint16_t tag);

/* Completes an ACL: the three base entries, and a mask when named ones. */
static int
secdesc_acl_finish(struct vfs_acl *acl)
{
	unsigned i, mask = 0, named = 0;

	unsigned other;

	if (secdesc_acl_or(acl, VFS_ACL_USER_OBJ, 0, 0) != 0 ||
	    secdesc_acl_or(acl, VFS_ACL_GROUP_OBJ, 0, 0) != 0 ||
	    secdesc_acl_or(acl, VFS_ACL_OTHER, 0, 0) != 0)
		return -1;
	/*
	 * In Windows every principal also holds what Everyone is allowed;
	 * POSIX checks the owner and group classes without falling through
	 * to "other", so Everyone's bits are added to each entry.
	 */
	other = secdesc_acl_perm(acl, VFS_ACL_OTHER);
	for (i = 0; i < acl->n; i++)
		acl->e[i].perm |= (uint16_t)other;
	for (i = 0; i < acl->n; i++) {
		if (acl->e[i].tag == VFS_ACL_USER ||
		    acl->e[i].tag == VFS_ACL_GROUP)
			named = 1;
		if (acl->e[i].tag == VFS_ACL_USER ||
		    acl->e[i].tag == VFS_ACL_GROUP ||
		    acl->e[i].tag == VFS_ACL_GROUP_OBJ)
			mask |= acl->e[i].perm;
	}
	if (named && secdesc_acl_or(acl, VFS_ACL_MASK, 0, mask) != 0)
		return -1;
	return named;
}

static uint16_t
secdesc_acl_perm(const struct vfs_acl *acl, uint16_t tag)
{
	unsigned i;

	for (i = 0; i < acl->n; i++)
		if (acl->e[i].tag == tag)
			return acl->e[i].perm;
	return 0;
}

/*
 * Maps the DACL of sd onto an access ACL and (directories) a default ACL.
 * STATUS_INVALID_PARAMETER when an ACE cannot be expressed.
 */
static ntstatus_t
secdesc_to_acls(const struct secdesc *sd, uint32_t uid, uint32_t gid,
    int dir, struct vfs_acl *acc, struct vfs_acl *def)
{
	struct secdesc_sid world, cowner, cgroup;
	char sidbuf[96];
	unsigned i, perm;
	uint32_t id;
	int eff, inh, rc;

	secdesc_sid_world(&world);
	secdesc_sid_creator_owner(&cowner);
	secdesc_sid_creator_group(&cgroup);
	acc->n = def->n = 0;
	for (i = 0; i < sd->nace; i++) {
		const struct secdesc_ace *a = &sd->ace[i];

		if (a->type != ACCESS_ALLOWED_ACE_TYPE) {
			log_debug(2, "set security: ACE type %u cannot be "
			    "expressed as a POSIX ACL", a->type);
			return STATUS_INVALID_PARAMETER;
		}
		perm = secdesc_mask_to_perm(a->mask);
		inh = dir && (a->flags & (OBJECT_INHERIT_ACE |
		    CONTAINER_INHERIT_ACE));
		eff = !(a->flags & INHERIT_ONLY_ACE);
		rc = 0;
		if (secdesc_sid_equal(&a->sid, &cowner) ||
		    secdesc_sid_equal(&a->sid, &cgroup)) {
			/* only meaningful for what is created inside */
			if (inh)
				rc = secdesc_acl_or(def, secdesc_sid_equal(
				    &a->sid, &cowner) ? VFS_ACL_USER_OBJ :
				    VFS_ACL_GROUP_OBJ, 0, perm);
			if (rc != 0)
				return STATUS_INVALID_PARAMETER;
			continue;
		}
		if (secdesc_sid_equal(&a->sid, &world)) {
			if (eff)
				rc |= secdesc_acl_or(acc, VFS_ACL_OTHER, 0,
				    perm);
			if (inh)
				rc |= secdesc_acl_or(def, VFS_ACL_OTHER, 0,
				    perm);
		} else if (secdesc_sid_unix(&a->sid, 1, &id)) {
			if (eff)
				rc |= secdesc_acl_or(acc, id == uid ?
				    VFS_ACL_USER_OBJ : VFS_ACL_USER, id, perm);
			if (inh)
				rc |= secdesc_acl_or(def, id == uid ?
				    VFS_ACL_USER_OBJ : VFS_ACL_USER, id, perm);
		} else if (secdesc_sid_unix(&a->sid, 2, &id)) {
			if (eff)
				rc |= secdesc_acl_or(acc, id == gid ?
				    VFS_ACL_GROUP_OBJ : VFS_ACL_GROUP, id,
				    perm);
			if (inh)
				rc |= secdesc_acl_or(def, id == gid ?
				    VFS_ACL_GROUP_OBJ : VFS_ACL_GROUP, id,
				    perm);
		} else {
			log_debug(2, "set security: %s is not a Unix account",
			    secdesc_sid_str(&a->sid, sidbuf, sizeof(sidbuf)));
			return STATUS_INVALID_PARAMETER;
		}
		if (rc != 0)
			return STATUS_INVALID_PARAMETER;
	}
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_secdesc_set(struct open *op, uint32_t which, const uint8_t *buf,
    size_t len)
{
	if ((which & (OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION)) && !(op->access & WRITE_OWNER))
		return STATUS_ACCESS_DENIED;
	if ((which & DACL_SECURITY_INFORMATION) && !(op->access & WRITE_DAC))
		return STATUS_ACCESS_DENIED;
	if (op->tree != NULL && op->tree->read_only)
		return STATUS_ACCESS_DENIED;
	return smb2_secdesc_apply(op->u.file, which, buf, len);
}

ntstatus_t
smb2_secdesc_apply(struct file_open *f, uint32_t which, const uint8_t *buf,
    size_t len)
{
	static struct vfs_acl acc, def;
	const struct vfs_ops *vfs = file_vfs();
	struct secdesc *sd = &secdesc_buf;
	struct vfs_stat st;
	uint32_t uid, gid;
	int rc, named, dir;
	ntstatus_t status;

	if (secdesc_decode(buf, len, sd) != 0)
		return STATUS_INVALID_SECURITY_DESCR;
	if (which == 0) {
		/* SecD at create: the parts the descriptor holds */
		which = (sd->has_owner ? OWNER_SECURITY_INFORMATION : 0) |
		    (sd->has_group ? GROUP_SECURITY_INFORMATION : 0) |
		    ((sd->control & SE_DACL_PRESENT) ?
		    DACL_SECURITY_INFORMATION : 0);
		if (sd->control & SE_SACL_PRESENT)
			which |= SACL_SECURITY_INFORMATION;
	}
	if (which & SACL_SECURITY_INFORMATION)
		return STATUS_PRIVILEGE_NOT_HELD;	/* no audit ACLs */
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	uid = st.uid;
	gid = st.gid;
	dir = S_ISDIR(st.mode);

	/* Owner and group first: the DACL's owner entry follows them. */
	if ((which & OWNER_SECURITY_INFORMATION) && sd->has_owner) {
		if (!secdesc_sid_unix(&sd->owner, 1, &uid))
			return STATUS_INVALID_OWNER;
	}
	if ((which & GROUP_SECURITY_INFORMATION) && sd->has_group) {
		if (!secdesc_sid_unix(&sd->group, 2, &gid))
			return STATUS_INVALID_PRIMARY_GROUP;
	}
	if (which & DACL_SECURITY_INFORMATION) {
		if (!sd->has_dacl) {
			/* a NULL DACL grants everything to everyone */
			acc.n = def.n = 0;
			(void)secdesc_acl_or(&acc, VFS_ACL_USER_OBJ, 0, 7);
			(void)secdesc_acl_or(&acc, VFS_ACL_GROUP_OBJ, 0, 7);
			(void)secdesc_acl_or(&acc, VFS_ACL_OTHER, 0, 7);
		} else if ((status = secdesc_to_acls(sd, uid, gid, dir, &acc,
		    &def)) != STATUS_SUCCESS)
			return status;
	}
	if (uid != st.uid || gid != st.gid) {
		/* the kernel says whether this user may (EPERM otherwise) */
		rc = vfs->fchown(f->fd, uid != st.uid ? uid : (uid_t)-1,
		    gid != st.gid ? gid : (gid_t)-1);
		if (rc != 0)
			return ntstatus_from_errno(rc);
	}
	if (!(which & DACL_SECURITY_INFORMATION))
		return STATUS_SUCCESS;
	if ((named = secdesc_acl_finish(&acc)) < 0)
		return STATUS_INVALID_PARAMETER;
	if (named) {
		rc = vfs_acl_set(vfs, f->fd, 0, &acc);
	} else {
		/* three entries are just the mode */
		rc = vfs->fchmod(f->fd, (st.mode & 07000) |
		    (mode_t)(secdesc_acl_perm(&acc, VFS_ACL_USER_OBJ) << 6 |
		    secdesc_acl_perm(&acc, VFS_ACL_GROUP_OBJ) << 3 |
		    secdesc_acl_perm(&acc, VFS_ACL_OTHER)));
		if (rc == 0) {
			acc.n = 0;
			rc = vfs_acl_set(vfs, f->fd, 0, &acc);
			if (rc == -EOPNOTSUPP)
				rc = 0;
		}
	}
	if (rc != 0)
		return ntstatus_from_errno(rc);
	if (dir) {
		if (def.n > 0 && secdesc_acl_finish(&def) < 0)
			return STATUS_INVALID_PARAMETER;
		rc = vfs_acl_set(vfs, f->fd, 1, &def);
		if (rc == -EOPNOTSUPP && def.n == 0)
			rc = 0;
		if (rc != 0)
			return ntstatus_from_errno(rc);
	}
	return STATUS_SUCCESS;
}
