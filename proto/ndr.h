/*
 * NDR 2.0 (C706 chapter 14, MS-RPCE 2.2.5) for the little-endian data
 * representation only: the subset the IPC$ pipes need.
 *
 * Both directions work on the proto/cur.h cursors whose base is the start of
 * the stub data, so alignment is measured from there (a request's stub
 * starts at an 8-aligned offset of its PDU, which keeps the two views in
 * step).  Errors latch in the cursor's err like every other decoder; NDR
 * violations (a bad alignment pad is not one: pads are skipped, not
 * checked) set err too, so a caller checks once at the end.
 *
 * Strings are [string] wchar_t*: conformant varying arrays of UTF-16LE
 * code units that include the terminating NUL.  The encoder takes UTF-8,
 * the decoder gives UTF-8.
 */
#ifndef USMBD_PROTO_NDR_H
#define USMBD_PROTO_NDR_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* Longest string the decoder accepts, in UTF-16 code units (with NUL). */
#define NDR_MAX_STRING		4096

/* Referent ids handed out by an encoder start here (Windows and Samba do). */
#define NDR_REFID_FIRST		0x00020000u

struct ndr_w {
	struct wcur	 w;		/* base = start of the stub */
	uint32_t	 next_refid;
};

/* Decode */
void		ndr_align(struct cur *, size_t a);
uint16_t	ndr_u16(struct cur *);
uint32_t	ndr_u32(struct cur *);
/* A unique or full pointer: its referent id, 0 for NULL. */
uint32_t	ndr_ptr(struct cur *);
/*
 * A conformant varying UTF-16 string (the pointee of a [string] pointer)
 * into out as NUL-terminated UTF-8.  Rejects offset != 0, actual > max,
 * counts past the buffer or NDR_MAX_STRING, and a missing terminating NUL.
 * A string that does not fit outsize sets err as well: callers size out
 * for the longest name they accept.  Returns the UTF-8 length.
 */
size_t		ndr_string(struct cur *, char *out, size_t outsize);
/* A top-level [in, string, unique] pointer: NULL or the string. */
int		ndr_unique_string(struct cur *, char *out, size_t outsize);
/*
 * The deferred buffer of an RPC_UNICODE_STRING (MS-DTYP 2.3.10) whose
 * Length and MaximumLength (bytes) were len and maxlen: a conformant
 * varying array of UTF-16 code units without a NUL (one trailing NUL
 * counted in Length is dropped), into out as NUL-terminated UTF-8.  The
 * counts must agree with len and maxlen; an embedded NUL is refused.
 */
size_t		ndr_ustring_body(struct cur *, uint16_t len, uint16_t maxlen,
		    char *out, size_t outsize);

/* Encode */
void		ndr_w_init(struct ndr_w *, void *buf, size_t len);
void		ndr_put_align(struct ndr_w *, size_t a);
void		ndr_put_u16(struct ndr_w *, uint16_t);
void		ndr_put_u32(struct ndr_w *, uint32_t);
/* A unique pointer: a fresh referent id when present, else 0. */
void		ndr_put_ptr(struct ndr_w *, int present);
/* The pointee of a [string] pointer, from UTF-8 (bad bytes -> U+FFFD). */
void		ndr_put_string(struct ndr_w *, const char *utf8);

/*
 * An RPC_UNICODE_STRING: Length, MaximumLength and its Buffer pointer
 * (NULL for a NULL utf8); ndr_put_ustring_body writes the buffer where
 * NDR defers it (nothing for NULL).
 */
void		ndr_put_ustring(struct ndr_w *, const char *utf8);
void		ndr_put_ustring_body(struct ndr_w *, const char *utf8);

/* UTF-16 code units of utf8 without a NUL (used for sizes). */
size_t		ndr_utf16_len(const char *utf8);

/*
 * An RPC_SID (MS-DTYP 2.4.2.3), the pointee of a PRPC_SID (samr's
 * dom_sid2): its conformant count, then the SID.  The decoder sets
 * in->err for a count that disagrees, too many sub-authorities or a
 * revision other than 1.
 */
struct secdesc_sid;
void		ndr_put_sid(struct ndr_w *, const struct secdesc_sid *);
void		ndr_sid_decode(struct cur *in, struct secdesc_sid *);

#endif
