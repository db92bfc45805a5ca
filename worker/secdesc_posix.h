/*
 * Security descriptors and what the kernel enforces (owner, group, mode,
 * POSIX ACLs): the descriptor derived for a file that has none stored,
 * and the POSIX ACL written beside a stored one (HACKING.md, "Security
 * descriptors", says how each kind of entry maps).
 */
#ifndef USMBD_WORKER_SECDESC_POSIX_H
#define USMBD_WORKER_SECDESC_POSIX_H

#include <stdint.h>

#include "proto/secdesc.h"
#include "vfs/vfs.h"

/* The descriptor a file without a stored one shows: every part filled. */
int	secdesc_posix_derive(const struct vfs_ops *, int fd,
	    const struct vfs_stat *st, struct secdesc *sd);

/*
 * The POSIX ACL that never grants a Unix user more rwx than sd's DACL
 * grants that user: user_sid / group_sid are the SIDs the owner and
 * owning-group entries stand for (S-1-22-1-uid and S-1-22-2-gid for an
 * access ACL; CREATOR OWNER and CREATOR GROUP for a default ACL).  Deny
 * entries for SIDs whose members are unknown (groups, well-known SIDs)
 * narrow every entry.  Returns the number of named entries (0: the mode
 * says it all), or -1 when it does not fit.
 */
int	secdesc_posix_acl(const struct secdesc *sd, int dir,
	    const struct secdesc_sid *user_sid,
	    const struct secdesc_sid *group_sid, struct vfs_acl *acl);
/* The rwx of a Unix class in acl (tag VFS_ACL_USER_OBJ, ...). */
unsigned secdesc_posix_perm(const struct vfs_acl *acl, uint16_t tag);

#endif
