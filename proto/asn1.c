/* Minimal DER TLV reader and writer (ITU-T X.690), for SPNEGO. */
#include <errno.h>

#include "proto/asn1.h"

int
asn1_read(struct cur *c, uint8_t *tag, struct cur *val, const uint8_t **tlv,
    size_t *tlv_len)
{
	const uint8_t *start = c->p;
	uint8_t t, l;
	size_t len = 0;
	int i;

	t = cur_u8(c);
	l = cur_u8(c);
	if (c->err)
		goto bad;
	/* High tag numbers (low five bits all set) never occur in SPNEGO. */
	if ((t & 0x1f) == 0x1f)
		goto bad;
	if (l < 0x80) {
		len = l;
	} else {
		/* 0x80 is the BER indefinite form, not DER; more than four
		 * length octets cannot describe anything that fits here. */
		l &= 0x7f;
		if (l == 0 || l > 4)
			goto bad;
		for (i = 0; i < l; i++)
			len = len << 8 | cur_u8(c);
		if (c->err)
			goto bad;
	}
	if (len > cur_left(c))
		goto bad;
	cur_init(val, c->p, len);
	cur_skip(c, len);
	*tag = t;
	if (tlv != NULL) {
		*tlv = start;
		*tlv_len = (size_t)(c->p - start);
	}
	return 0;
bad:
	c->err = 1;
	cur_init(val, c->base, 0);
	val->err = 1;
	return -EBADMSG;
}

int
asn1_expect(struct cur *c, uint8_t tag, struct cur *val)
{
	uint8_t t;

	if (asn1_read(c, &t, val, NULL, NULL) != 0)
		return -EBADMSG;
	if (t != tag) {
		c->err = 1;
		val->err = 1;
		return -EBADMSG;
	}
	return 0;
}

int
asn1_peek_tag(const struct cur *c)
{
	if (c->err || cur_left(c) == 0)
		return -1;
	return c->p[0];
}

size_t
asn1_hdr_len(size_t n)
{
	if (n < 0x80)
		return 2;
	if (n <= 0xff)
		return 3;
	if (n <= 0xffff)
		return 4;
	if (n <= 0xffffff)
		return 5;
	return 6;
}

size_t
asn1_tlv_len(size_t n)
{
	return asn1_hdr_len(n) + n;
}

void
asn1_put_hdr(struct wcur *w, uint8_t tag, size_t n)
{
	size_t hl = asn1_hdr_len(n), i;

	wcur_u8(w, tag);
	if (hl == 2) {
		wcur_u8(w, (uint8_t)n);
		return;
	}
	wcur_u8(w, (uint8_t)(0x80 | (hl - 2)));
	for (i = hl - 2; i > 0; i--)
		wcur_u8(w, (uint8_t)(n >> (8 * (i - 1))));
}
