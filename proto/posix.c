/*
 * SMB3 POSIX extensions: the wire forms (proto/posix.h).  The structures
 * are those of Samba's librpc/idl/smb3posix.idl (NDR_NOALIGN, so packed
 * little-endian fields) and of the Linux client's smb2pdu.h.
 */

/*
 * The wire mode of directories.
 *
 * - The wire mode carries the file type (bits 12-15, Samba 4.22's
 *   unix_mode_to_wire) except for directories, which go as type 0 with
 *   their permissions: Debian 12's 6.1 kernel client ORs S_IFDIR from
 *   the DOS attributes into whatever Mode says, so type bits made a
 *   bogus i_mode and the posix mount failed; later clients also take a
 *   directory from the attributes (proto/posix.c posix_put_cc).
 */
#include "proto/posix.h"

#include <string.h>
#include <sys/stat.h>

/* 93AD25509CB411E7B42383DE968BCD7C */
const uint8_t posix_tag[16] = {
	0x93, 0xAD, 0x25, 0x50, 0x9C, 0xB4, 0x11, 0xE7,
	0xB4, 0x23, 0x83, 0xDE, 0x96, 0x8B, 0xCD, 0x7C
};

/* Wire file types in their order: the index is the wire value. */
static const uint32_t posix_types[] = {
	S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK
};

#define POSIX_NTYPES	(sizeof(posix_types) / sizeof(posix_types[0]))

uint32_t
posix_mode_to_wire(uint32_t st_mode)
{
	uint32_t i;

	/* the permission bits are Linux's own values */
	for (i = 0; i < POSIX_NTYPES; i++)
		if ((st_mode & S_IFMT) == posix_types[i])
			break;
	/* an unknown type: 0xFFFFFFFF shifted, as Samba sends it */
	if (i == POSIX_NTYPES)
		i = 0xFFFFFFFFu;
	return (st_mode & POSIX_WIRE_PERM_MASK) | (i << POSIX_WIRE_TYPE_SHIFT);
}

uint32_t
posix_mode_from_wire(uint32_t wire)
{
	uint32_t t = (wire >> POSIX_WIRE_TYPE_SHIFT) & 07;

	return (wire & POSIX_WIRE_PERM_MASK) |
	    (t < POSIX_NTYPES ? posix_types[t] : 0);
}

int
posix_negctx_offered(const uint8_t *data, size_t len)
{
	size_t off;

	if (len % 16 != 0)
		return -1;
	for (off = 0; off < len; off += 16)
		if (memcmp(data + off, posix_tag, 16) == 0)
			return 1;
	return 0;
}

int
posix_create_req_decode(const uint8_t *data, size_t len, uint32_t *perms)
{
	if (len != 4 || data == NULL)
		return -1;
	*perms = le32_get(data) & POSIX_WIRE_PERM_MASK;
	return 0;
}

/* S-1-22-kind-id (MS-DTYP 2.4.2.2; Samba's idmap unix-users/groups). */
static void
posix_put_unix_sid(struct wcur *w, uint32_t kind, uint32_t id)
{
	static const uint8_t auth22[6] = { 0, 0, 0, 0, 0, 22 };

	wcur_u8(w, 1);			/* Revision */
	wcur_u8(w, 2);			/* SubAuthorityCount */
	wcur_bytes(w, auth22, 6);	/* IdentifierAuthority, big-endian */
	wcur_le32(w, kind);
	wcur_le32(w, id);
}

void
posix_put_cc(struct wcur *w, const struct posix_info *pi)
{
	uint32_t wire = posix_mode_to_wire(pi->mode);

	/*
	 * A directory goes with wire type 0, its permissions only: the Linux
	 * client before the type bits (Debian 12's 6.1) adds S_IFDIR from the
	 * DOS attributes and keeps any type bits in i_mode (a bogus mode, the
	 * mount fails); later ones read a directory from the attributes too
	 * (wire_mode_to_posix's is_dir).  Other types keep theirs.
	 */
	if (S_ISDIR(pi->mode))
		wire &= POSIX_WIRE_PERM_MASK;
	wcur_le32(w, pi->nlink);
	wcur_le32(w, pi->reparse_tag);
	wcur_le32(w, wire);
	posix_put_unix_sid(w, 1, pi->uid);
	posix_put_unix_sid(w, 2, pi->gid);
}

void
posix_put_info(struct wcur *w, const struct posix_info *pi)
{
	wcur_le64(w, pi->creation);
	wcur_le64(w, pi->access);
	wcur_le64(w, pi->write);
	wcur_le64(w, pi->change);
	wcur_le64(w, pi->eof);
	wcur_le64(w, pi->alloc);
	wcur_le32(w, pi->attrs);
	wcur_le64(w, pi->ino);
	wcur_le32(w, pi->dev);
	wcur_le32(w, 0);		/* Reserved */
	posix_put_cc(w, pi);
}

size_t
posix_put_dirent(struct wcur *w, const struct posix_info *pi,
    const uint8_t *name16, size_t name16_len)
{
	struct wcur t = *w;
	size_t need = 8 + POSIX_INFO_LEN + 4 + name16_len;

	if (name16_len > UINT32_MAX || wcur_left(w) < need)
		return 0;
	wcur_le32(&t, 0);		/* NextEntryOffset, linked by the caller */
	wcur_le32(&t, 0);		/* FileIndex */
	posix_put_info(&t, pi);
	wcur_le32(&t, (uint32_t)name16_len);
	wcur_bytes(&t, name16, name16_len);
	if (t.err)
		return 0;
	*w = t;
	return need;
}

/* A SID as S-1-22-kind-N: N, or (uint32_t)-1 for any other SID. */
static uint32_t
posix_get_sid(struct cur *c, uint32_t kind)
{
	static const uint8_t auth22[6] = { 0, 0, 0, 0, 0, 22 };
	const uint8_t *auth;
	uint8_t rev, n, i;
	uint32_t sub[2] = { 0, 0 };

	rev = cur_u8(c);
	n = cur_u8(c);
	auth = cur_view(c, 6);
	if (rev != 1 || n > 15)
		c->err = 1;
	for (i = 0; i < n && !c->err; i++) {
		uint32_t s = cur_le32(c);

		if (i < 2)
			sub[i] = s;
	}
	if (c->err || n != 2 || memcmp(auth, auth22, 6) != 0 ||
	    sub[0] != kind)
		return (uint32_t)-1;
	return sub[1];
}

static void
posix_get_cc(struct cur *c, struct posix_info *pi)
{
	pi->nlink = cur_le32(c);
	pi->reparse_tag = cur_le32(c);
	pi->mode = posix_mode_from_wire(cur_le32(c));
	pi->uid = posix_get_sid(c, 1);
	pi->gid = posix_get_sid(c, 2);
}

static void
posix_get_info(struct cur *c, struct posix_info *pi)
{
	pi->creation = cur_le64(c);
	pi->access = cur_le64(c);
	pi->write = cur_le64(c);
	pi->change = cur_le64(c);
	pi->eof = cur_le64(c);
	pi->alloc = cur_le64(c);
	pi->attrs = cur_le32(c);
	pi->ino = cur_le64(c);
	pi->dev = cur_le32(c);
	cur_skip(c, 4);
	posix_get_cc(c, pi);
}

int
posix_cc_decode(const uint8_t *buf, size_t len, struct posix_info *pi)
{
	struct cur c;

	memset(pi, 0, sizeof(*pi));
	cur_init(&c, buf, len);
	posix_get_cc(&c, pi);
	return c.err ? -1 : (int)cur_off(&c);
}

int
posix_info_decode(const uint8_t *buf, size_t len, struct posix_info *pi)
{
	struct cur c;

	memset(pi, 0, sizeof(*pi));
	cur_init(&c, buf, len);
	posix_get_info(&c, pi);
	return c.err ? -1 : (int)cur_off(&c);
}

int
posix_dirent_decode(const uint8_t *buf, size_t len, struct posix_info *pi,
    const uint8_t **name16, uint32_t *name16_len, uint32_t *next)
{
	struct cur c;

	memset(pi, 0, sizeof(*pi));
	cur_init(&c, buf, len);
	*next = cur_le32(&c);
	cur_skip(&c, 4);		/* FileIndex */
	posix_get_info(&c, pi);
	*name16_len = cur_le32(&c);
	*name16 = cur_view(&c, *name16_len);
	if (c.err || (*next != 0 && (*next % 8 != 0 || *next < cur_off(&c))))
		return -1;
	return (int)cur_off(&c);
}
