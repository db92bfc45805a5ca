#include "proto/compress.h"

#include <string.h>

#include "proto/cur.h"

#define LZ77_MAX_OFFSET	8192		/* 13 bits of offset - 1 */
#define LZ77_MIN_MATCH	3

ssize_t
lz77_decompress(const uint8_t *in, size_t inlen, uint8_t *out, size_t cap)
{
	size_t ip = 0, op = 0, nib = 0, len, off, i;
	uint32_t flags = 0;
	unsigned nflags = 0;

	/*
	 * The input ends where a token would start: at a flag word, or at
	 * a token after the last one (a compressor pads the last flag word
	 * with ones, MS-XCA 2.3; Samba's stops at the end of input too).
	 * Offset 0 is always a flag word, so nib 0 means "no half byte".
	 */
	for (;;) {
		if (nflags == 0) {
			if (ip == inlen)
				return (ssize_t)op;
			if (inlen - ip < 4)
				return -1;
			flags = le32_get(in + ip);
			ip += 4;
			nflags = 32;
		}
		nflags--;
		if (ip == inlen)
			return (ssize_t)op;
		if (!(flags >> nflags & 1)) {
			if (op == cap)
				return -1;
			out[op++] = in[ip++];
			continue;
		}
		if (inlen - ip < 2)
			return -1;
		len = le16_get(in + ip);
		ip += 2;
		off = (len >> 3) + 1;
		len &= 7;
		if (len == 7) {
			if (nib == 0) {
				if (ip == inlen)
					return -1;
				len = in[ip] & 15;
				nib = ip++;
			} else {
				len = in[nib] >> 4;
				nib = 0;
			}
			if (len == 15) {
				if (ip == inlen)
					return -1;
				len = in[ip++];
				if (len == 255) {
					if (inlen - ip < 2)
						return -1;
					len = le16_get(in + ip);
					ip += 2;
					if (len == 0) {
						if (inlen - ip < 4)
							return -1;
						len = le32_get(in + ip);
						ip += 4;
					}
					if (len < 15 + 7)
						return -1;
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += LZ77_MIN_MATCH;
		if (off > op || len > cap - op)
			return -1;
		if (off == 1)
			memset(out + op, out[op - 1], len);
		else
			/* an overlapping match in pieces of off bytes */
			for (i = 0; i < len; i += off)
				memcpy(out + op + i, out + op + i - off,
				    len - i < off ? len - i : off);
		op += len;
	}
}

/* The compressor's output: flag word, half-byte slot, cursor. */
struct lz77_out {
	uint8_t		*p;
	size_t		 op, cap, flag_pos, nib;
	uint32_t	 flags;
	unsigned	 nflags;
};

static void
lz77_flag(struct lz77_out *o, uint32_t bit)
{
	o->flags = o->flags << 1 | bit;
	if (++o->nflags == 32) {
		le32_put(o->p + o->flag_pos, o->flags);
		o->flag_pos = o->op;
		o->op += 4;
		o->nflags = 0;
		o->flags = 0;
	}
}

/* MS-XCA 2.3: one match; room for the worst case checked by the caller. */
static void
lz77_match(struct lz77_out *o, size_t off, size_t len)
{
	uint8_t *p = o->p;

	len -= LZ77_MIN_MATCH;
	if (len < 7) {
		le16_put(p + o->op, (uint16_t)((off - 1) << 3 | len));
		o->op += 2;
	} else {
		le16_put(p + o->op, (uint16_t)((off - 1) << 3 | 7));
		o->op += 2;
		len -= 7;
		if (o->nib == 0) {
			o->nib = o->op;
			p[o->op++] = (uint8_t)(len < 15 ? len : 15);
		} else {
			p[o->nib] |= (uint8_t)((len < 15 ? len : 15) << 4);
			o->nib = 0;
		}
		if (len >= 15) {
			len -= 15;
			if (len < 255) {
				p[o->op++] = (uint8_t)len;
			} else {
				p[o->op++] = 255;
				len += 15 + 7;
				if (len < 65536) {
					le16_put(p + o->op, (uint16_t)len);
					o->op += 2;
				} else {
					le16_put(p + o->op, 0);
					le32_put(p + o->op + 2, (uint32_t)len);
					o->op += 6;
				}
			}
		}
	}
	lz77_flag(o, 1);
}

#define LZ77_TOKEN_MAX	16	/* a match's bytes, a half byte, a flag word */

size_t
lz77_compress(const uint8_t *in, size_t len, uint8_t *out, size_t cap,
    struct lz77_table *t)
{
	struct lz77_out o = { .p = out, .op = 4, .cap = cap };
	size_t ip = 0, cand, m, next = 65536;
	uint32_t v, h;

	if (cap < 4 + LZ77_TOKEN_MAX || len > UINT32_MAX)
		return 0;
	while (ip + 4 <= len) {
		if (o.op + LZ77_TOKEN_MAX > cap)
			return 0;
		/*
		 * A caller that needs a saving (cap no larger than the input)
		 * gets 0 early when 64 KiB in saved under 1/32: data that does
		 * not compress costs a fraction of a full pass.
		 */
		if (ip >= next) {
			next = ip + 65536;
			if (cap <= len && ip >= 65536 && o.op > ip - ip / 32)
				return 0;
		}
		v = le32_get(in + ip);
		h = (v * 2654435761u) >> (32 - LZ77_HASH_BITS);
		cand = t->pos[h];
		t->pos[h] = (uint32_t)ip;
		/* a stale entry (another buffer) is only a candidate */
		if (cand < ip && ip - cand <= LZ77_MAX_OFFSET &&
		    le32_get(in + cand) == v) {
			m = 4;
			while (ip + m < len && in[cand + m] == in[ip + m])
				m++;
			lz77_match(&o, ip - cand, m);
			ip += m;
			continue;
		}
		out[o.op++] = in[ip++];
		lz77_flag(&o, 0);
	}
	while (ip < len) {
		if (o.op + LZ77_TOKEN_MAX > cap)
			return 0;
		out[o.op++] = in[ip++];
		lz77_flag(&o, 0);
	}
	/* the unused flags are ones: the decompressor stops there */
	if (o.nflags == 0)
		o.flags = UINT32_MAX;
	else
		o.flags = (uint32_t)((uint64_t)o.flags << (32 - o.nflags) |
		    ((1ull << (32 - o.nflags)) - 1));
	le32_put(out + o.flag_pos, o.flags);
	return o.op;
}

static int
alg_ok(uint32_t algs, uint16_t alg)
{
	return alg < 32 && (algs & COMPRESS_ALG_BIT(alg)) != 0;
}

/* One compressed run of the given algorithm; 0, or -1. */
static int
decompress_run(uint16_t alg, const uint8_t *in, size_t inlen, uint8_t *out,
    size_t want)
{
	ssize_t n;

	if (alg != SMB2_COMPRESSION_LZ77)
		return -1;	/* LZNT1, LZ77+Huffman, LZ4: never negotiated */
	n = lz77_decompress(in, inlen, out, want);
	return n == (ssize_t)want ? 0 : -1;
}

/* 3.1.5.3: the payloads from msg + 8 on. */
static ssize_t
decompress_chained(const uint8_t *msg, size_t len, uint32_t algs,
    uint8_t *out, size_t total)
{
	size_t pos = SMB2_COMPRESSION_CHAIN_HDR_LEN, op = 0;
	int first = 1;

	while (pos < len) {
		uint16_t alg, flags;
		uint32_t plen, orig, reps;

		if (len - pos < SMB2_COMPRESSION_PAYLOAD_HDR_LEN)
			return -1;
		alg = le16_get(msg + pos);
		flags = le16_get(msg + pos + 2);
		plen = le32_get(msg + pos + 4);
		pos += SMB2_COMPRESSION_PAYLOAD_HDR_LEN;
		if ((first && flags != SMB2_COMPRESSION_FLAG_CHAINED) ||
		    plen > len - pos)
			return -1;
		first = 0;
		if (alg != SMB2_COMPRESSION_NONE && !alg_ok(algs, alg))
			return -1;
		switch (alg) {
		case SMB2_COMPRESSION_NONE:
			if (plen > total - op)
				return -1;
			memcpy(out + op, msg + pos, plen);
			op += plen;
			break;
		case SMB2_COMPRESSION_PATTERN_V1:
			if (plen != SMB2_COMPRESSION_PATTERN_LEN)
				return -1;
			reps = le32_get(msg + pos + 4);
			if (reps > total - op)
				return -1;
			memset(out + op, msg[pos], reps);
			op += reps;
			break;
		default:
			/* Length counts OriginalPayloadSize (2.2.42.2.1) */
			if (plen < 4)
				return -1;
			orig = le32_get(msg + pos);
			if (orig > total - op ||
			    decompress_run(alg, msg + pos + 4, plen - 4, out + op,
			    orig) < 0)
				return -1;
			op += orig;
			break;
		}
		pos += plen;
	}
	return op == total ? (ssize_t)op : -1;
}

ssize_t
smb2_decompress(const uint8_t *msg, size_t len, uint32_t algs, int chained,
    uint8_t *out, size_t cap)
{
	uint32_t osize, off;
	uint16_t alg, flags;

	/* 3.3.5.2.1.2: shorter than the header, or nothing negotiated */
	if (len < SMB2_COMPRESSION_HDR_LEN || algs == 0 ||
	    le32_get(msg) != 0x424D53FCu)
		return -1;
	osize = le32_get(msg + 4);
	alg = le16_get(msg + 8);
	flags = le16_get(msg + 10);
	/* the bomb check, before any work */
	if (osize > cap)
		return -1;
	if (flags == SMB2_COMPRESSION_FLAG_CHAINED) {
		if (!chained)
			return -1;
		return decompress_chained(msg, len, algs, out, osize);
	}
	if (flags != SMB2_COMPRESSION_FLAG_NONE || !alg_ok(algs, alg) ||
	    alg == SMB2_COMPRESSION_PATTERN_V1)
		return -1;	/* 2.2.42.1: LZNT1, LZ77, LZ77+Huffman or LZ4 */
	off = le32_get(msg + 12);
	if (off > len - SMB2_COMPRESSION_HDR_LEN || off > cap - osize)
		return -1;
	memcpy(out, msg + SMB2_COMPRESSION_HDR_LEN, off);
	if (decompress_run(alg, msg + SMB2_COMPRESSION_HDR_LEN + off,
	    len - SMB2_COMPRESSION_HDR_LEN - off, out + off, osize) < 0)
		return -1;
	return (ssize_t)off + osize;
}

/* The length of the run of msg[from]'s byte from `from` on, up to end. */
static size_t
run_fwd(const uint8_t *p, size_t from, size_t end)
{
	size_t i = from;

	while (i < end && p[i] == p[from])
		i++;
	return i - from;
}

static size_t
run_back(const uint8_t *p, size_t from, size_t end)
{
	size_t i = end;

	while (i > from && p[i - 1] == p[end - 1])
		i--;
	return end - i;
}

static uint8_t *
payload_hdr(uint8_t *p, uint16_t alg, uint16_t flags, uint32_t len)
{
	le16_put(p, alg);
	le16_put(p + 2, flags);
	le32_put(p + 4, len);
	return p + SMB2_COMPRESSION_PAYLOAD_HDR_LEN;
}

/* A Pattern_V1 payload; returns the bytes written (16). */
static size_t
put_pattern(uint8_t *p, uint8_t byte, size_t reps)
{
	p = payload_hdr(p, SMB2_COMPRESSION_PATTERN_V1, SMB2_COMPRESSION_FLAG_NONE,
	    SMB2_COMPRESSION_PATTERN_LEN);
	p[0] = byte;
	p[1] = 0;
	le16_put(p + 2, 0);
	le32_put(p + 4, (uint32_t)reps);
	return SMB2_COMPRESSION_PAYLOAD_HDR_LEN + SMB2_COMPRESSION_PATTERN_LEN;
}

static size_t
compress_chained(const uint8_t *msg, size_t len, size_t keep, uint32_t algs,
    uint8_t *out, size_t cap, struct lz77_table *t)
{
	size_t op, lead = 0, tail = 0, mid, n;
	int pat = (algs & COMPRESS_ALG_BIT(SMB2_COMPRESSION_PATTERN_V1)) != 0;

	/* header, the kept bytes' NONE payload, two patterns, LZ77's header */
	if (cap < SMB2_COMPRESSION_CHAIN_HDR_LEN + 8 + keep + 32 + 12 + 24)
		return 0;
	le32_put(out, 0x424D53FCu);
	le32_put(out + 4, (uint32_t)len);
	op = SMB2_COMPRESSION_CHAIN_HDR_LEN;
	payload_hdr(out + op, SMB2_COMPRESSION_NONE, SMB2_COMPRESSION_FLAG_CHAINED,
	    (uint32_t)keep);
	op += SMB2_COMPRESSION_PAYLOAD_HDR_LEN;
	memcpy(out + op, msg, keep);
	op += keep;
	if (pat && len > keep) {
		lead = run_fwd(msg, keep, len);
		if (lead < COMPRESS_PATTERN_MIN)
			lead = 0;
		else
			op += put_pattern(out + op, msg[keep], lead);
		if (keep + lead < len) {
			tail = run_back(msg, keep + lead, len);
			if (tail < COMPRESS_PATTERN_MIN)
				tail = 0;
		}
	}
	mid = len - keep - lead - tail;
	if (mid > 0) {
		/* LZ77 when it saves something, else the bytes as they are */
		n = cap - op > 12 + 16 ? lz77_compress(msg + keep + lead, mid,
		    out + op + 12, cap - op - 12 - 16, t) : 0;
		if (n > 0 && n < mid) {
			payload_hdr(out + op, SMB2_COMPRESSION_LZ77,
			    SMB2_COMPRESSION_FLAG_NONE, (uint32_t)n + 4);
			le32_put(out + op + 8, (uint32_t)mid);
			op += 12 + n;
		} else {
			if (mid > cap - op - 8 - 16)
				return 0;
			payload_hdr(out + op, SMB2_COMPRESSION_NONE,
			    SMB2_COMPRESSION_FLAG_NONE, (uint32_t)mid);
			memcpy(out + op + 8, msg + keep + lead, mid);
			op += 8 + mid;
		}
	}
	if (tail > 0)
		op += put_pattern(out + op, msg[len - 1], tail);
	return op < len ? op : 0;
}

size_t
smb2_compress(const uint8_t *msg, size_t len, size_t keep, uint32_t algs,
    int chained, uint8_t *out, size_t cap, struct lz77_table *t)
{
	size_t n;

	if (keep > len || len > UINT32_MAX ||
	    !(algs & COMPRESS_ALG_BIT(SMB2_COMPRESSION_LZ77)))
		return 0;
	if (cap > len)
		cap = len;	/* not smaller: not worth it */
	if (chained)
		return compress_chained(msg, len, keep, algs, out, cap, t);
	if (cap < SMB2_COMPRESSION_HDR_LEN + keep)
		return 0;
	le32_put(out, 0x424D53FCu);
	le32_put(out + 4, (uint32_t)(len - keep));
	le16_put(out + 8, SMB2_COMPRESSION_LZ77);
	le16_put(out + 10, SMB2_COMPRESSION_FLAG_NONE);
	le32_put(out + 12, (uint32_t)keep);
	memcpy(out + SMB2_COMPRESSION_HDR_LEN, msg, keep);
	n = lz77_compress(msg + keep, len - keep,
	    out + SMB2_COMPRESSION_HDR_LEN + keep,
	    cap - SMB2_COMPRESSION_HDR_LEN - keep, t);
	if (n == 0)
		return 0;
	n += SMB2_COMPRESSION_HDR_LEN + keep;
	return n < len ? n : 0;
}
