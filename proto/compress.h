/*
 * SMB 3.1.1 compression (MS-SMB2 2.2.3.1.3, 2.2.42, 3.1.4.4, 3.1.5.3,
 * 3.3.5.2.1.2) and the MS-XCA "Plain LZ77" coder (MS-XCA 2.3, 2.4).
 * Pure code over caller buffers: nothing here allocates.
 *
 * A compressed message starts with 0xFC 'S' 'M' 'B' and
 * OriginalCompressedSegmentSize.  Unchained (Flags 0): the algorithm,
 * Flags, Offset, then Offset bytes sent as they are and the compressed
 * rest, which decompresses to exactly OriginalCompressedSegmentSize bytes.
 * Chained (the first payload header's Flags is CHAINED): payload headers
 * {algorithm, flags, length[, OriginalPayloadSize]} each followed by its
 * payload, NONE (bytes as they are), Pattern_V1 (one byte repeated) or a
 * compressed run; the parts add up to OriginalCompressedSegmentSize.
 */
#ifndef USMBD_PROTO_COMPRESS_H
#define USMBD_PROTO_COMPRESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* MS-SMB2 2.2.3.1.3 CompressionAlgorithms */
#define SMB2_COMPRESSION_NONE		0x0000
#define SMB2_COMPRESSION_LZNT1		0x0001
#define SMB2_COMPRESSION_LZ77		0x0002
#define SMB2_COMPRESSION_LZ77_HUFFMAN	0x0003
#define SMB2_COMPRESSION_PATTERN_V1	0x0004
#define SMB2_COMPRESSION_LZ4		0x0005
/* 2.2.3.1.3 Flags */
#define SMB2_COMPRESSION_CAPABILITIES_FLAG_CHAINED	0x00000001u
/* 2.2.42 Flags */
#define SMB2_COMPRESSION_FLAG_NONE	0x0000
#define SMB2_COMPRESSION_FLAG_CHAINED	0x0001

#define SMB2_COMPRESSION_HDR_LEN	16	/* 2.2.42.1 */
#define SMB2_COMPRESSION_CHAIN_HDR_LEN	8	/* 2.2.42.2, before the payloads */
#define SMB2_COMPRESSION_PAYLOAD_HDR_LEN 8	/* 2.2.42.2.1 without OriginalPayloadSize */
#define SMB2_COMPRESSION_PATTERN_LEN	8	/* 2.2.42.2.2 */

/* What usmbd implements, as a mask of (1 << algorithm id). */
#define COMPRESS_ALG_BIT(id)		(1u << (id))
#define COMPRESS_ALGS_SUPPORTED		(COMPRESS_ALG_BIT(SMB2_COMPRESSION_LZ77) | \
					 COMPRESS_ALG_BIT(SMB2_COMPRESSION_PATTERN_V1))

/*
 * The spec's bound on OriginalCompressedSegmentSize (MS-SMB2
 * 3.3.5.2.1.2): 256 + the transform header + the largest of the
 * negotiated MaxReadSize, MaxWriteSize and MaxTransactSize.
 */
#define COMPRESS_MAX_SEGMENT(maxsz)	((size_t)(maxsz) + 256 + SMB2_COMPRESSION_HDR_LEN)

/*
 * MS-XCA 2.4: decompresses in[0, inlen) into out (at most cap bytes).
 * Returns the bytes written, or -1: a truncated token, a match reaching
 * before the start of the output, or more output than cap.
 */
ssize_t	lz77_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap);

/*
 * MS-XCA 2.3: compresses in[0, len) into out.  The table is the match
 * finder's memory: the caller keeps one (zeroed once, any content after
 * that is only a hint, every candidate is checked).  Returns the
 * compressed length, or 0 when it would not fit in cap (the caller
 * passes the size it must beat).
 */
#define LZ77_HASH_BITS	13
struct lz77_table {
	uint32_t	pos[1u << LZ77_HASH_BITS];
};
size_t	lz77_compress(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
	    struct lz77_table *);

/*
 * A compressed message (MS-SMB2 2.2.42) msg[0, len), decompressed into
 * out.  algs: the connection's algorithms (COMPRESS_ALG_BIT mask);
 * chained: chained compression was negotiated; cap: the largest message
 * accepted (OriginalCompressedSegmentSize past it is refused before any
 * work: a decompression bomb).  Returns the message's length, or -1 for
 * anything malformed or not negotiated (the caller drops the connection,
 * 3.3.5.2.1.2).
 */
ssize_t	smb2_decompress(const uint8_t *msg, size_t len, uint32_t algs,
	    int chained, uint8_t *out, size_t cap);

/*
 * Compresses the message msg[0, len) into out (3.1.4.4), its first keep
 * bytes (headers) left as they are.  Chained: a NONE payload for them,
 * Pattern_V1 for a leading and a trailing run of one byte (when algs has
 * it), LZ77 (or NONE) for the middle; else unchained LZ77 with Offset
 * keep.  Returns the compressed message's length, or 0 when it would not
 * be smaller than len (then the message goes uncompressed).
 */
#define COMPRESS_PATTERN_MIN	64	/* a shorter run is left to LZ77 */
size_t	smb2_compress(const uint8_t *msg, size_t len, size_t keep, uint32_t algs,
	    int chained, uint8_t *out, size_t cap, struct lz77_table *);

#endif
