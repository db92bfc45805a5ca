/*
 * CREATE contexts (MS-SMB2 2.2.13.2, 2.2.14.2): what a request's chain asks
 * for, decoded with bounds checks, and a response context appended.  The
 * durable and lease contexts are the state layer's (worker/durable.h,
 * worker/state.h); the POSIX one worker/smb2_posix.h's.
 */
#ifndef USMBD_WORKER_SMB2_CREATE_CTX_H
#define USMBD_WORKER_SMB2_CREATE_CTX_H

#include <stdint.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "worker/smb2_posix.h"
#include "worker/state.h"

struct smb2_req;

struct create_ctx {
	int		 mxac;
	int		 qfid;
	int		 alsi;
	uint64_t	 alloc_size;
	int		 durable;	/* DHnQ/DH2Q/DHnC/DH2C seen */
	int		 lease;		/* RqLs seen */
	const uint8_t	*exta;		/* ExtA: FILE_FULL_EA_INFORMATION */
	uint32_t	 exta_len;
	const uint8_t	*secd;		/* SecD: a security descriptor */
	uint32_t	 secd_len;
	/* SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2 2.2.13.2.13) */
	int		 app_instance;
	uint8_t		 app_instance_id[16];
	int		 twrp;		/* TWrp: a previous version asked for */
	uint64_t	 twrp_time;	/* its FILETIME */
	const uint8_t	*aapl;		/* AAPL: Apple's query (worker/fruit.h) */
	uint32_t	 aapl_len;
	int		 aapl_seen;
	struct smb2_posix_req posix;	/* the POSIX context (worker/smb2_posix.h) */
	struct state_open_req sreq;	/* what the state layer is asked */
};

/*
 * Decodes the chain at (off, len) of the request body into cc (zeroed
 * first): STATUS_INVALID_PARAMETER when malformed, or a durable context's
 * own status.  Unknown names are ignored.
 */
ntstatus_t	smb2_create_parse_contexts(struct smb2_req *, uint32_t off,
		    uint32_t len, struct create_ctx *cc);
/* Appends one 8-aligned context after *prev (chained), and makes it *prev. */
void		smb2_create_put_ctx(struct wcur *, uint8_t **prev,
		    const char *name, const void *data, uint32_t dlen);

#endif
