/*
 * The payload of MSG_UNLINK_AS (worker -> master) and MSG_UNLINK_DO
 * (master -> the worker of the delete token's uid), daemon/msg.h:
 *
 *	u32 uid, u64 dev, u64 ino, u8 is_dir, str share, str path
 *	[MSG_UNLINK_DO only: str root]
 *
 * strings are u16 length + bytes, no NUL inside, at most
 * MSG_UNLINK_STR_MAX - 1 bytes.  A decoder takes the payload only when it
 * is consumed exactly.
 */
#ifndef USMBD_DAEMON_UNLINKMSG_H
#define USMBD_DAEMON_UNLINKMSG_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/msg.h"

struct unlinkmsg {
	uint32_t	 uid;		/* the delete token: unlink as this user */
	uint64_t	 dev;		/* the file that was delete pending */
	uint64_t	 ino;
	uint8_t		 is_dir;
	char		 share[256];
	char		 path[MSG_UNLINK_STR_MAX];	/* share-relative */
	char		 root[MSG_UNLINK_STR_MAX];	/* MSG_UNLINK_DO only */
};

/* Returns the payload length, or -1 when it does not fit in cap. */
int	unlinkmsg_encode(const struct unlinkmsg *, int with_root, uint8_t *buf,
	    size_t cap);
/* 0, or -1 for a malformed payload. */
int	unlinkmsg_decode(struct unlinkmsg *, int with_root, const uint8_t *p,
	    size_t len);

#endif
