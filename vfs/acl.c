/*
 * POSIX ACLs in their xattr form (system.posix_acl_access and
 * system.posix_acl_default), read and written without libacl: the value is
 * a little-endian u32 version (2) followed by 8-byte entries
 * {u16 tag, u16 perm, u32 id}, id 0xFFFFFFFF for the entries that are not
 * named users or groups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "vfs/vfs.h"

#define ACL_XATTR_VERSION	2
#define ACL_UNDEFINED_ID	0xFFFFFFFFu
#define ACL_ENTRY_LEN		8

int
vfs_acl_decode(const uint8_t *buf, size_t len, struct vfs_acl *acl)
{
	size_t i, n;

	acl->n = 0;
	if (len < 4 || (len - 4) % ACL_ENTRY_LEN != 0 ||
	    le32_get(buf) != ACL_XATTR_VERSION)
		return -EINVAL;
	n = (len - 4) / ACL_ENTRY_LEN;
	if (n > VFS_ACL_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		const uint8_t *e = buf + 4 + i * ACL_ENTRY_LEN;

		acl->e[i].tag = le16_get(e);
		acl->e[i].perm = le16_get(e + 2) & 7;
		acl->e[i].id = le32_get(e + 4);
		switch (acl->e[i].tag) {
		case VFS_ACL_USER_OBJ: case VFS_ACL_USER: case VFS_ACL_GROUP_OBJ:
		case VFS_ACL_GROUP: case VFS_ACL_MASK: case VFS_ACL_OTHER:
			break;
		default:
			return -EINVAL;
		}
	}
	acl->n = (unsigned)n;
	return 0;
}

/* The kernel wants tags in ascending order and named ids ascending. */
static int
acl_entry_cmp(const void *a, const void *b)
{
	const struct vfs_acl_entry *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	if (x->tag == VFS_ACL_USER || x->tag == VFS_ACL_GROUP)
		return x->id < y->id ? -1 : x->id > y->id;
	return 0;
}

size_t
vfs_acl_encode(struct vfs_acl *acl, uint8_t *buf, size_t len)
{
	size_t need = 4 + (size_t)acl->n * ACL_ENTRY_LEN, i;

	if (len < need)
		return 0;
	qsort(acl->e, acl->n, sizeof(acl->e[0]), acl_entry_cmp);
	le32_put(buf, ACL_XATTR_VERSION);
	for (i = 0; i < acl->n; i++) {
		uint8_t *e = buf + 4 + i * ACL_ENTRY_LEN;
		uint16_t tag = acl->e[i].tag;

		le16_put(e, tag);
		le16_put(e + 2, acl->e[i].perm & 7);
		le32_put(e + 4, tag == VFS_ACL_USER || tag == VFS_ACL_GROUP ?
		    acl->e[i].id : ACL_UNDEFINED_ID);
	}
	return need;
}

int
vfs_acl_get(const struct vfs_ops *ops, int fd, int is_default,
    struct vfs_acl *acl)
{
	uint8_t buf[4 + VFS_ACL_MAX * ACL_ENTRY_LEN];
	ssize_t n;

	acl->n = 0;
	n = ops->getxattr(fd, is_default ? VFS_XATTR_ACL_DEFAULT :
	    VFS_XATTR_ACL_ACCESS, buf, sizeof(buf));
	if (n < 0)
		return n == -EOPNOTSUPP ? -ENODATA : (int)n;
	return vfs_acl_decode(buf, (size_t)n, acl);
}

int
vfs_acl_set(const struct vfs_ops *ops, int fd, int is_default,
    struct vfs_acl *acl)
{
	uint8_t buf[4 + VFS_ACL_MAX * ACL_ENTRY_LEN];
	const char *name = is_default ? VFS_XATTR_ACL_DEFAULT :
	    VFS_XATTR_ACL_ACCESS;
	size_t len;
	int rc;

	if (acl->n == 0) {
		rc = ops->removexattr(fd, name);
		return rc == -ENODATA ? 0 : rc;
	}
	if ((len = vfs_acl_encode(acl, buf, sizeof(buf))) == 0)
		return -E2BIG;
	return ops->setxattr(fd, name, buf, len, 0);
}
