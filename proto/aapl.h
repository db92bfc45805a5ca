/*
 * Apple's SMB2 extensions (Samba's vfs_fruit, libcli/smb/smb2_create_ctx.h):
 * the "AAPL" create context a macOS client sends with its first CREATE,
 * the server's answer, and the AFP_AfpInfo stream's 60-byte record.
 * Pure code over caller buffers.
 */
#ifndef USMBD_PROTO_AAPL_H
#define USMBD_PROTO_AAPL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* AAPL command codes */
#define AAPL_SERVER_QUERY		1
#define AAPL_RESOLVE_ID			2

/* server query request / reply bitmap */
#define AAPL_SERVER_CAPS		0x1
#define AAPL_VOLUME_CAPS		0x2
#define AAPL_MODEL_INFO			0x4

/* client and server capabilities */
#define AAPL_SUPPORTS_READ_DIR_ATTR	0x1
#define AAPL_SUPPORTS_OSX_COPYFILE	0x2
#define AAPL_UNIX_BASED			0x4
#define AAPL_SUPPORTS_NFS_ACE		0x8

/* volume capabilities */
#define AAPL_SUPPORT_RESOLVE_ID		0x1
#define AAPL_CASE_SENSITIVE		0x2
#define AAPL_FULL_SYNC			0x4

/* the request: exactly 24 bytes (Samba refuses any other length) */
#define AAPL_QUERY_LEN			24

struct aapl_query {
	uint32_t	 cmd;
	uint64_t	 bitmap;	/* what the client asks for */
	uint64_t	 client_caps;
};

/*
 * Decodes a server query.  0, or -1 when the length is not 24 or the
 * command is not AAPL_SERVER_QUERY (the only one Samba answers).
 */
int	aapl_query_decode(const uint8_t *data, size_t len, struct aapl_query *);

struct aapl_reply {
	uint64_t	 bitmap;	/* the request's, echoed */
	uint64_t	 server_caps;
	uint64_t	 volume_caps;
	const uint8_t	*model16;	/* UTF-16LE model string */
	size_t		 model16_len;
};

/*
 * Writes the reply (command, reserved, bitmap, then the server caps, the
 * volume caps and the model as the bitmap asks) to w; w->err on overflow.
 */
void	aapl_reply_put(struct wcur *w, const struct aapl_reply *);

/*
 * AFP_AfpInfo (Samba's source3/lib/adouble.c): 60 bytes, big-endian,
 * signature "AFP\0", version 0x00000100, the 32-byte Finder info at 16.
 */
#define AFPINFO_SIZE			60
#define AFPINFO_SIGNATURE		0x41465000u
#define AFPINFO_VERSION			0x00000100u
#define AFPINFO_OFF_FINDERINFO		16
#define AFPINFO_FINDERINFO_SIZE		32

/* Does a 60-byte record carry the signature and version?  1 or 0. */
int	aapl_afpinfo_valid(const uint8_t *data, size_t len);
/* Is the Finder info of a valid record all zeros?  1 or 0. */
int	aapl_afpinfo_empty(const uint8_t *data, size_t len);

/*
 * READ_DIR_ATTR (Samba's readdir_attr_macmeta): the 16 bytes that go in a
 * directory entry's short name field, from an AfpInfo record (NULL: none)
 * and the entry's creation time in seconds since 1970; regular tells
 * whether type and creator are copied (files only).
 */
void	aapl_finder_compress(const uint8_t *afpinfo, int regular,
	    int64_t btime, uint8_t out[16]);

#endif
