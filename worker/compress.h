/*
 * SMB 3.1.1 compression on a connection (MS-SMB2 3.3.5.2.1.2, 3.1.4.4,
 * 3.3.5.12): compressed requests decompressed for dispatch, READ answers
 * compressed.  The codecs are proto/compress.c; HACKING.md "Compression"
 * has the rules and where they sit in the pipeline.
 */
#ifndef USMBD_WORKER_COMPRESS_H
#define USMBD_WORKER_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

struct conn;

/* Answers shorter than this go as they are: too little to save. */
#define COMPRESS_TX_MIN		4096

/*
 * dispatch_frame's step, before the relay routing and again after a
 * transform's decryption (compressed, then sealed: MS-SMB2 3.1.4.4 is
 * applied before 3.1.4.3, so the transform is outside): when *msg is a
 * compressed message, *msg and *len become the message it holds and it
 * returns 1 (a relayed worker's look-ahead noted no ids of it); 0 when
 * it is not one; -1: drop the connection (compress_rx).  Another user's
 * session is routed decompressed, still signed with its own key.
 */
int	compress_frame(struct conn *c, uint8_t **msg, size_t *len);

/*
 * A compressed message msg[0, len) (0xFC 'S' 'M' 'B') received on c:
 * *out and *outlen are the message it holds, in the connection's own
 * buffer (allocated at its first compressed message, kept).  -1 when the
 * connection must be dropped: not negotiated, before a session is set up
 * (a gate never takes one), malformed, larger than the negotiated sizes
 * allow, or not an SMB2 message inside.  A log line says which.
 */
int	compress_rx(struct conn *c, const uint8_t *msg, size_t len,
	    uint8_t **out, size_t *outlen);

/*
 * Compresses the message msg[0, len) for c into out (cap bytes), its
 * first keep bytes left as they are: the compressed message's length, or
 * 0 when it would save nothing (then msg goes as it is).
 */
size_t	compress_tx(const struct conn *c, const uint8_t *msg, size_t len,
	    size_t keep, uint8_t *out, size_t cap);

#endif
