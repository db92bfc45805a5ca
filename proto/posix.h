/*
 * SMB3 POSIX extensions (smb3posix.org; Samba's libcli/smb and smbd, the
 * Linux client's fs/smb/client): the negotiate context, the POSIX create
 * context and the POSIX information level of QUERY_INFO and
 * QUERY_DIRECTORY.  Pure codecs: host values in, wire bytes out, and the
 * decoders a client needs (unit tests, fuzzing).
 */
#ifndef USMBD_PROTO_POSIX_H
#define USMBD_PROTO_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* Negotiate context type carrying the POSIX GUID (a list of 16-byte GUIDs). */
#define SMB2_POSIX_EXTENSIONS_AVAILABLE	0x0100
/* QUERY_INFO and QUERY_DIRECTORY info level */
#define FILE_POSIX_INFORMATION		100

/* The create context name, which is also the negotiate context's GUID. */
extern const uint8_t posix_tag[16];

/* The POSIX mode on the wire: permission bits as Linux, type in 0170000. */
#define POSIX_WIRE_TYPE_SHIFT	12
#define POSIX_WIRE_TYPE_FILE	0
#define POSIX_WIRE_TYPE_DIR	1
#define POSIX_WIRE_TYPE_SYMLINK	2
#define POSIX_WIRE_TYPE_CHARDEV	3
#define POSIX_WIRE_TYPE_BLKDEV	4
#define POSIX_WIRE_TYPE_FIFO	5
#define POSIX_WIRE_TYPE_SOCKET	6
#define POSIX_WIRE_PERM_MASK	07777u

/* What a POSIX create response and the POSIX information level report. */
struct posix_info {
	uint64_t	 creation;	/* FILETIME */
	uint64_t	 access;
	uint64_t	 write;
	uint64_t	 change;
	uint64_t	 eof;
	uint64_t	 alloc;
	uint32_t	 attrs;		/* DOS attributes */
	uint64_t	 ino;
	uint32_t	 dev;
	uint32_t	 nlink;
	uint32_t	 reparse_tag;
	uint32_t	 mode;		/* st_mode: type and permissions */
	uint32_t	 uid;		/* S-1-22-1-uid on the wire */
	uint32_t	 gid;		/* S-1-22-2-gid */
};

/* st_mode -> wire mode, and back (an unknown wire type gives type 0). */
uint32_t	posix_mode_to_wire(uint32_t st_mode);
uint32_t	posix_mode_from_wire(uint32_t wire);

/*
 * The data of a client's SMB2_POSIX_EXTENSIONS_AVAILABLE context: 1 when
 * our GUID is among those offered, 0 when not, -1 when the length is not a
 * multiple of 16 (as Samba: INVALID_PARAMETER).
 */
int	posix_negctx_offered(const uint8_t *data, size_t len);

/*
 * The request's POSIX create context data: the mode for a new file (4
 * bytes, wire form).  *perms gets its permission bits.  0, or -1 when the
 * length is not 4.
 */
int	posix_create_req_decode(const uint8_t *data, size_t len,
	    uint32_t *perms);

/* Bytes posix_put_cc writes: nlink, reparse tag, mode, two Unix SIDs. */
#define POSIX_CC_LEN		(12 + 16 + 16)
/* Bytes of the POSIX information level (68 fixed + the cc part). */
#define POSIX_INFO_LEN		(68 + POSIX_CC_LEN)

/*
 * The create response context's data (the POSIX response).  A directory's
 * wire mode carries no type (0, as a file): the DOS attributes say
 * directory (see posix.c for the clients this keeps working).
 */
void	posix_put_cc(struct wcur *, const struct posix_info *);
/* QUERY_INFO FILE_POSIX_INFORMATION. */
void	posix_put_info(struct wcur *, const struct posix_info *);
/*
 * One QUERY_DIRECTORY entry of the POSIX level at an 8-aligned position of
 * w (as fscc_put_dirent: the caller aligns and links the entries).
 * Returns the length written, or 0 when it does not fit (nothing kept).
 */
size_t	posix_put_dirent(struct wcur *, const struct posix_info *,
	    const uint8_t *name16, size_t name16_len);

/*
 * The decoders of what the three writers make.  A SID that is not
 * S-1-22-1-N (owner) or S-1-22-2-N (group) gives (uint32_t)-1 there.
 * posix_cc_decode / posix_info_decode return the bytes used, or -1 when
 * malformed; posix_dirent_decode sets the name view and *next (the
 * NextEntryOffset) too.
 */
int	posix_cc_decode(const uint8_t *buf, size_t len, struct posix_info *);
int	posix_info_decode(const uint8_t *buf, size_t len, struct posix_info *);
int	posix_dirent_decode(const uint8_t *buf, size_t len,
	    struct posix_info *, const uint8_t **name16, uint32_t *name16_len,
	    uint32_t *next);

#endif
