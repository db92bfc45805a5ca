/*
 * SMB2 CREATE contexts (MS-SMB2 2.2.13.2): walking the chain of a request.
 * Pure code over a buffer: each context comes out as views of its name and
 * data; what a name means is the caller's (worker/smb2_create.c).
 */
#ifndef USMBD_PROTO_CREATE_CTX_H
#define USMBD_PROTO_CREATE_CTX_H

#include <stddef.h>
#include <stdint.h>

/* more contexts than this in one request are not looked at */
#define CREATE_CTX_MAX	64

struct create_ctx_item {
	const uint8_t	*name;		/* name_len bytes */
	uint16_t	 name_len;	/* at least 4 */
	const uint8_t	*data;		/* NULL when data_len == 0 */
	uint32_t	 data_len;
	int		 last;		/* Next was 0: the chain ends here */
};

/*
 * Decodes the context at offset *pos of the chain buf[0, len) and moves
 * *pos to the next one.  Name and data must lie inside the chain, a name is
 * at least a 4-byte tag, and Next is a multiple of 8, at least a header
 * (16) and inside the chain.  Returns 0, or -1 when malformed.
 */
int	create_ctx_next(const uint8_t *buf, size_t len, size_t *pos,
	    struct create_ctx_item *);

#endif
