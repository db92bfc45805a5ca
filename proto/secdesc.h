/*
 * Security descriptors (MS-DTYP 2.4.2 SID, 2.4.4 ACE, 2.4.5 ACL, 2.4.6
 * SECURITY_DESCRIPTOR in self-relative form): decode into host structs and
 * encode from them.  Pure code: the mapping to Unix owners, modes and POSIX
 * ACLs is worker/smb2_secdesc.c's business.
 */
#ifndef USMBD_PROTO_SECDESC_H
#define USMBD_PROTO_SECDESC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* MS-DTYP 2.4.7 SECURITY_INFORMATION */
#define OWNER_SECURITY_INFORMATION	0x00000001u
#define GROUP_SECURITY_INFORMATION	0x00000002u
#define DACL_SECURITY_INFORMATION	0x00000004u
#define SACL_SECURITY_INFORMATION	0x00000008u
#define LABEL_SECURITY_INFORMATION	0x00000010u
#define ATTRIBUTE_SECURITY_INFORMATION	0x00000020u
#define SCOPE_SECURITY_INFORMATION	0x00000040u
#define BACKUP_SECURITY_INFORMATION	0x00010000u
/* the parts of a SACL named on their own: the ACE types of each class */
#define SACL_CLASS_BITS	(LABEL_SECURITY_INFORMATION | \
	ATTRIBUTE_SECURITY_INFORMATION | SCOPE_SECURITY_INFORMATION)

/* MS-DTYP 2.4.6 control bits */
#define SE_OWNER_DEFAULTED		0x0001u
#define SE_GROUP_DEFAULTED		0x0002u
#define SE_DACL_PRESENT			0x0004u
#define SE_DACL_DEFAULTED		0x0008u
#define SE_SACL_PRESENT			0x0010u
#define SE_SACL_DEFAULTED		0x0020u
#define SE_DACL_AUTO_INHERIT_REQ	0x0100u
#define SE_SACL_AUTO_INHERIT_REQ	0x0200u
#define SE_DACL_AUTO_INHERITED		0x0400u
#define SE_SACL_AUTO_INHERITED		0x0800u
#define SE_DACL_PROTECTED		0x1000u
#define SE_SACL_PROTECTED		0x2000u
/* the control bits that travel with the SACL */
#define SE_SACL_BITS	(SE_SACL_PRESENT | SE_SACL_DEFAULTED | \
	SE_SACL_AUTO_INHERIT_REQ | SE_SACL_AUTO_INHERITED | SE_SACL_PROTECTED)
#define SE_SELF_RELATIVE		0x8000u

/* MS-DTYP 2.4.4.1 ACE types and flags */
#define ACCESS_ALLOWED_ACE_TYPE		0x00
#define ACCESS_DENIED_ACE_TYPE		0x01
#define OBJECT_INHERIT_ACE		0x01
#define CONTAINER_INHERIT_ACE		0x02
#define NO_PROPAGATE_INHERIT_ACE	0x04
#define INHERIT_ONLY_ACE		0x08
#define INHERITED_ACE			0x10
/* MS-DTYP 2.4.4.1 SACL-only ACE types named by SECURITY_INFORMATION bits */
#define SYSTEM_MANDATORY_LABEL_ACE_TYPE		0x11
#define SYSTEM_RESOURCE_ATTRIBUTE_ACE_TYPE	0x12
#define SYSTEM_SCOPED_POLICY_ID_ACE_TYPE	0x13

#define SECDESC_SUBAUTH_MAX	15
#define SECDESC_ACE_MAX		64
/*
 * A SACL is kept as its bytes (MS-DTYP 2.4.5: header and ACEs), never
 * parsed into ACEs: audit, alarm, mandatory label, resource attribute and
 * scoped policy ACEs are stored and returned verbatim, and nothing here
 * acts on them.
 */
#define SECDESC_SACL_MAX	2048

struct secdesc_sid {
	uint8_t		 revision;
	uint8_t		 nsub;
	uint8_t		 auth[6];	/* big-endian identifier authority */
	uint32_t	 sub[SECDESC_SUBAUTH_MAX];
};

struct secdesc_ace {
	uint8_t		 type;
	uint8_t		 flags;
	uint32_t	 mask;
	struct secdesc_sid sid;
};

struct secdesc {
	uint16_t	 control;
	int		 has_owner;
	int		 has_group;
	struct secdesc_sid owner;
	struct secdesc_sid group;
	int		 has_dacl;	/* an ACL (a NULL DACL: 0 with SE_DACL_PRESENT in control) */
	unsigned	 nace;
	struct secdesc_ace ace[SECDESC_ACE_MAX];
	/*
	 * The SACL, verbatim (sacl_len bytes, its AclSize); a NULL SACL is
	 * SE_SACL_PRESENT in control with sacl_len 0.
	 */
	unsigned	 sacl_len;
	uint8_t		 sacl[SECDESC_SACL_MAX];
};

/* S-1-22-1-uid (idmap unix-users), S-1-22-2-gid (unix-groups). */
/* S-1-auth-a (n = 1) or S-1-auth-a-b (n = 2): well-known and Unix SIDs. */
void	secdesc_sid_make(struct secdesc_sid *, uint8_t auth, unsigned n,
	    uint32_t a, uint32_t b);
void	secdesc_sid_unix_user(struct secdesc_sid *, uint32_t uid);
void	secdesc_sid_unix_group(struct secdesc_sid *, uint32_t gid);
/* S-1-1-0 Everyone, S-1-3-0 Creator Owner, S-1-3-1 Creator Group. */
void	secdesc_sid_world(struct secdesc_sid *);
void	secdesc_sid_creator_owner(struct secdesc_sid *);
void	secdesc_sid_creator_group(struct secdesc_sid *);
/* S-1-5-18 Local System (NT AUTHORITY\SYSTEM). */
void	secdesc_sid_system(struct secdesc_sid *);
int	secdesc_sid_equal(const struct secdesc_sid *, const struct secdesc_sid *);
/* 1 and *id set for S-1-22-1-N (kind 1) or S-1-22-2-N (kind 2), else 0. */
int	secdesc_sid_unix(const struct secdesc_sid *, int kind, uint32_t *id);
/*
 * S-1-5-88-1-N (user) and S-1-5-88-2-N (group), the Unix SIDs the Linux
 * client sends with `idsfromsid` (its sid_unix_NFS_users/groups), become
 * S-1-22-1-N and S-1-22-2-N; returns 1 when s was one of them.  S-1-5-88-3
 * (a mode) and anything else stay as they are (0).
 */
int	secdesc_sid_nfs_to_unix(struct secdesc_sid *);
/* "S-1-22-1-1000" for logs; returns buf. */
char	*secdesc_sid_str(const struct secdesc_sid *, char *buf, size_t len);

/*
 * Which SECURITY_INFORMATION bit names a SACL ACE of this type (MS-DTYP
 * 2.4.7): LABEL (mandatory label), ATTRIBUTE (resource attribute), SCOPE
 * (scoped policy id), SACL for every other (audit, alarm...).
 */
uint32_t secdesc_sacl_class(uint8_t type);

/*
 * Decodes a self-relative SD of len bytes.  0, or -1 when malformed (bad
 * revision, an offset or a length outside the buffer, an ACL with more
 * than SECDESC_ACE_MAX entries, a SACL past SECDESC_SACL_MAX bytes or
 * whose ACE headers overrun it).  DACL ACEs of types other than
 * allowed/denied keep their type and are left to the caller to refuse.
 */
int	secdesc_decode(const uint8_t *buf, size_t len, struct secdesc *);
/*
 * Encodes sd (only the parts in which, SECURITY_INFORMATION bits) as a
 * self-relative SD.  SACL_SECURITY_INFORMATION gives the whole SACL;
 * without it, LABEL, ATTRIBUTE and SCOPE give a SACL of the ACEs of those
 * classes only (none there: no SACL).  Returns the length needed; when that exceeds what w
 * has left, w->err is set and nothing useful was written.
 */
size_t	secdesc_encode(struct wcur *w, const struct secdesc *sd, uint32_t which);

#endif
