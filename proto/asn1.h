/*
 * A minimal DER reader and writer for SPNEGO (RFC 4178, MS-SPNG): single-byte
 * tags only, definite lengths of up to 4 length octets, every length checked
 * against what is left of the enclosing value.  The reader works on the
 * bounds-checked cursors of proto/cur.h.
 */
#ifndef USMBD_PROTO_ASN1_H
#define USMBD_PROTO_ASN1_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

#define ASN1_OCTET_STRING	0x04
#define ASN1_OID		0x06
#define ASN1_ENUMERATED		0x0a
#define ASN1_GENERAL_STRING	0x1b
#define ASN1_SEQUENCE		0x30
#define ASN1_APPLICATION0	0x60	/* [APPLICATION 0] constructed */
#define ASN1_CONTEXT(n)		(0xa0 | (n))	/* [n] constructed */

/*
 * Reads one TLV at c->p: *tag, and val = a cursor over its contents.  If tlv
 * is not NULL it receives a view of the whole TLV (header included).  Returns
 * 0, or -EBADMSG with c->err latched (truncation, indefinite or oversized
 * length, multi-byte tag).
 */
int	asn1_read(struct cur *c, uint8_t *tag, struct cur *val,
	    const uint8_t **tlv, size_t *tlv_len);

/* asn1_read() that also requires the tag to be `tag`. */
int	asn1_expect(struct cur *c, uint8_t tag, struct cur *val);

/* The tag of the next TLV without consuming it, or -1 at the end. */
int	asn1_peek_tag(const struct cur *c);

/* Size of a TLV header (tag + length octets) for content_len bytes. */
size_t	asn1_hdr_len(size_t content_len);
/* Size of a whole TLV with content_len bytes of content. */
size_t	asn1_tlv_len(size_t content_len);

/* Writes a tag and a DER length; the caller writes the contents. */
void	asn1_put_hdr(struct wcur *w, uint8_t tag, size_t content_len);

#endif
