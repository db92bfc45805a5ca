/*
 * SMB2 direct-TCP framing, the SMB2 sync/async header, the transform header
 * magic, SMB1 NEGOTIATE detection and the compound chain walker.  Pure code
 * over caller buffers (MS-SMB2 2.1, 2.2.1, 2.2.41).
 */
#ifndef USMBD_PROTO_SMB2_HDR_H
#define USMBD_PROTO_SMB2_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

#define SMB2_FRAME_LEN		4	/* MS-SMB2 2.1: 0x00 + 24-bit big-endian length */
#define SMB2_TRANSFORM_HDR_LEN	52	/* MS-SMB2 2.2.41 */
#define SMB2_TRANSFORM_FLAG_ENCRYPTED	0x0001

/* What the first four bytes of a message say it is. */
enum smb2_magic {
	SMB2_MAGIC_UNKNOWN = 0,
	SMB2_MAGIC_SMB2,	/* 0xFE 'S' 'M' 'B' */
	SMB2_MAGIC_TRANSFORM,	/* 0xFD 'S' 'M' 'B' */
	SMB2_MAGIC_COMPRESSED,	/* 0xFC 'S' 'M' 'B' */
	SMB2_MAGIC_SMB1,	/* 0xFF 'S' 'M' 'B' */
};

/* A decoded SMB2 header (MS-SMB2 2.2.1.1 and 2.2.1.2), host order. */
struct smb2_hdr {
	uint16_t	credit_charge;
	uint32_t	status;		/* response status; ChannelSequence for 3.x requests */
	uint16_t	command;
	uint16_t	credits;	/* CreditRequest / CreditResponse */
	uint32_t	flags;
	uint32_t	next_command;
	uint64_t	message_id;
	uint64_t	async_id;	/* when SMB2_FLAGS_ASYNC_COMMAND */
	uint32_t	process_id;	/* sync header's Reserved field */
	uint32_t	tree_id;	/* sync header only */
	uint64_t	session_id;
	uint8_t		signature[16];
};

/*
 * Decodes the 4-byte frame header.  Returns the message length, or -1 when
 * the first byte is not zero (NetBIOS session messages are not SMB frames).
 */
long	smb2_frame_decode(const uint8_t frame[SMB2_FRAME_LEN]);
void	smb2_frame_encode(uint8_t frame[SMB2_FRAME_LEN], uint32_t len);

enum smb2_magic smb2_magic(const uint8_t *p, size_t len);

/* 0 or -1 (short, bad magic, bad StructureSize). */
int	smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h);
/* Writes 64 bytes; a sync or async header according to h->flags. */
void	smb2_hdr_encode(uint8_t *p, const struct smb2_hdr *h);

/*
 * SMB1 NEGOTIATE (MS-CIFS 2.2.4.52.1) detection: returns -1 if p is not a
 * well-formed SMB1 NEGOTIATE request, else a mask of the SMB2 dialect
 * strings it offers (0 = SMB1 dialects only).
 */
#define SMB1_OFFERS_SMB2_002	0x1	/* "SMB 2.002" */
#define SMB1_OFFERS_SMB2_ANY	0x2	/* "SMB 2.???" */
int	smb1_negotiate_offers(const uint8_t *p, size_t len);

/*
 * Compound chain walker (MS-SMB2 3.3.5.2.7).  smb2_chain_next() returns 1
 * and the next message (header + body up to NextCommand or the end), 0 at
 * the end of the chain, -1 when NextCommand is misaligned, too small or
 * points outside the buffer.  With tail_ok (set after init) a NextCommand
 * that points exactly at the end ends the chain: one element cut out of
 * an unrelated compound, its signed bytes untouched (worker/relay.c
 * relay_split).
 */
struct smb2_chain {
	const uint8_t	*buf;
	size_t		 len;
	size_t		 off;
	int		 done;
	int		 tail_ok;
};

void	smb2_chain_init(struct smb2_chain *, const uint8_t *buf, size_t len);
int	smb2_chain_next(struct smb2_chain *, const uint8_t **msg, size_t *mlen);

/*
 * The fixed StructureSize of each command's request (MS-SMB2 2.2.x), checked
 * before a handler runs.  Returns 0 when the body of a request of this
 * command is at least the fixed part and carries the right StructureSize,
 * -1 otherwise.  A command outside the table returns -1.
 */
int	smb2_req_size_ok(uint16_t command, const uint8_t *body, size_t len);
uint16_t smb2_req_struct_size(uint16_t command);

/*
 * The body of an SMB2 ERROR response (MS-SMB2 2.2.2) carrying len bytes of
 * ErrorData formatted per 2.2.2.2 (STATUS_BUFFER_TOO_SMALL: the 4-byte
 * size needed).  With contexts (the connection speaks 3.1.1) the data goes
 * in one SMB2 ERROR Context with ErrorId SMB2_ERROR_ID_DEFAULT (2.2.2.1);
 * before 3.1.1 ErrorContextCount is 0 and the data is the ErrorData
 * itself.  len 0 gives the standard 9-byte body.  A short w latches w->err.
 */
#define SMB2_ERROR_ID_DEFAULT		0x00000000u
#define SMB2_ERROR_ID_SHARE_REDIRECT	0x72645253u
void	smb2_error_encode(struct wcur *w, int contexts, const uint8_t *data,
	    uint32_t len);

/* The FileId 0xFFFFFFFFFFFFFFFF/0xFFFFFFFFFFFFFFFF of a related compound. */
#define SMB2_FID_RELATED	UINT64_MAX

#endif
