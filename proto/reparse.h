/*
 * Reparse data buffers (MS-FSCC 2.1.2): the symbolic link form (2.1.2.4)
 * and the NFS form (2.1.2.6) the Linux client uses for special files
 * under SMB3 POSIX, and the Symbolic Link Error Response of a CREATE
 * that stopped on a link (MS-SMB2 2.2.2.2.1).  Pure codecs: names stay
 * UTF-16LE views into the caller's buffer.
 */
#ifndef USMBD_PROTO_REPARSE_H
#define USMBD_PROTO_REPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* MS-FSCC 2.1.2.1 */
#define IO_REPARSE_TAG_SYMLINK	0xA000000Cu
#define IO_REPARSE_TAG_NFS	0x80000014u
/* MS-FSCC 2.1.2.4 */
#define SYMLINK_FLAG_RELATIVE	0x00000001u
/* MS-FSCC 2.1.2.6: the NFS Type field ("LNK", "CHR", ... in ASCII) */
#define NFS_SPECFILE_LNK	0x00000000014B4E4Cull
#define NFS_SPECFILE_CHR	0x0000000000524843ull
#define NFS_SPECFILE_BLK	0x00000000004B4C42ull
#define NFS_SPECFILE_FIFO	0x000000004F464946ull
#define NFS_SPECFILE_SOCK	0x000000004B434F53ull
/* MS-SMB2 2.2.2.2.1: SymLinkErrorTag ("SYML") */
#define SYMLINK_ERROR_TAG	0x4C4D5953u

/* The reparse header: ReparseTag, ReparseDataLength, Reserved. */
#define REPARSE_HDR_LEN		8

struct reparse_data {
	uint32_t	 tag;
	uint16_t	 reserved;	/* UnparsedPathLength in an error */
	/* IO_REPARSE_TAG_SYMLINK */
	uint32_t	 flags;
	const uint8_t	*subst16;	/* SubstituteName */
	size_t		 subst16_len;
	const uint8_t	*print16;	/* PrintName */
	size_t		 print16_len;
	/* IO_REPARSE_TAG_NFS */
	uint64_t	 nfs_type;
	const uint8_t	*target16;	/* NFS_SPECFILE_LNK's target */
	size_t		 target16_len;
	uint32_t	 major;		/* NFS_SPECFILE_CHR / _BLK */
	uint32_t	 minor;
};

/*
 * A REPARSE_DATA_BUFFER (FSCTL_SET_REPARSE_POINT's input, GET's output):
 * 0 when it is a well-formed symlink or NFS buffer (every name inside
 * the buffer, UTF-16 lengths and offsets even, a substitute name,
 * ReparseDataLength exactly the rest, the NFS data the size its type
 * needs), 1 when well-formed but of another tag (d->tag set), -1 when
 * malformed.
 */
int	reparse_decode(const uint8_t *buf, size_t len, struct reparse_data *d);

/*
 * A symlink buffer: the substitute name then the print name, both the
 * target (Samba's order); reserved is 0 except in an error response.
 */
void	reparse_put_symlink(struct wcur *, const uint8_t *target16,
	    size_t len, uint32_t flags, uint16_t reserved);
/* An NFS buffer: data16 for LNK, major/minor for CHR and BLK. */
void	reparse_put_nfs(struct wcur *, uint64_t type, const uint8_t *data16,
	    size_t len, uint32_t major, uint32_t minor);
/*
 * The Symbolic Link Error Response: SymLinkLength, SymLinkErrorTag and
 * the symlink buffer with UnparsedPathLength (bytes of the request's
 * name after the link) in its Reserved field.
 */
void	reparse_put_symlink_error(struct wcur *, const uint8_t *target16,
	    size_t len, uint32_t flags, uint16_t unparsed);
/*
 * Its decoder (tests and fuzzing): 0 and d (reserved = the unparsed
 * length), or -1.
 */
int	reparse_symlink_error_decode(const uint8_t *buf, size_t len,
	    struct reparse_data *d);

#endif
