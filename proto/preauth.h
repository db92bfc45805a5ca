/*
 * SMB 3.1.1 preauthentication integrity hash (MS-SMB2 3.2.5.2, 3.3.5.4):
 * H = SHA-512(H || message) over each NEGOTIATE and SESSION_SETUP message.
 */
#ifndef USMBD_PROTO_PREAUTH_H
#define USMBD_PROTO_PREAUTH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define SMB2_PREAUTH_HASH_LEN	64

/* Starts from all zeros (the initial connection and session value). */
void	smb2_preauth_init(uint8_t hash[64]);
void	smb2_preauth_update(uint8_t hash[64], const uint8_t *msg, size_t len);
/* Same, for a message split over several buffers. */
void	smb2_preauth_update_iov(uint8_t hash[64], const struct iovec *iov,
	    int iovcnt);

#endif
