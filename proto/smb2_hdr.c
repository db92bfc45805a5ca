#include "proto/smb2_hdr.h"

#include <string.h>

#include "proto/smb2.h"

long
smb2_frame_decode(const uint8_t frame[SMB2_FRAME_LEN])
{
	if (frame[0] != 0)
		return -1;
	return (long)((uint32_t)frame[1] << 16 | (uint32_t)frame[2] << 8 |
	    frame[3]);
}

void
smb2_frame_encode(uint8_t frame[SMB2_FRAME_LEN], uint32_t len)
{
	frame[0] = 0;
	frame[1] = (uint8_t)(len >> 16);
	frame[2] = (uint8_t)(len >> 8);
	frame[3] = (uint8_t)len;
}

enum smb2_magic
smb2_magic(const uint8_t *p, size_t len)
{
	if (len < 4 || p[1] != 'S' || p[2] != 'M' || p[3] != 'B')
		return SMB2_MAGIC_UNKNOWN;
	switch (p[0]) {
	case 0xFE:
		return SMB2_MAGIC_SMB2;
	case 0xFD:
		return SMB2_MAGIC_TRANSFORM;
	case 0xFC:
		return SMB2_MAGIC_COMPRESSED;
	case 0xFF:
		return SMB2_MAGIC_SMB1;
	}
	return SMB2_MAGIC_UNKNOWN;
}

int
smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h)
{
	struct cur c;
	uint16_t size;

	if (smb2_magic(p, len) != SMB2_MAGIC_SMB2)
		return -1;
	cur_init(&c, p, len);
	cur_skip(&c, 4);
	size = cur_le16(&c);
	h->credit_charge = cur_le16(&c);
	h->status = cur_le32(&c);
	h->command = cur_le16(&c);
	h->credits = cur_le16(&c);
	h->flags = cur_le32(&c);
	h->next_command = cur_le32(&c);
	h->message_id = cur_le64(&c);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
		h->async_id = cur_le64(&c);
		h->process_id = 0;
		h->tree_id = 0;
	} else {
		h->async_id = 0;
		h->process_id = cur_le32(&c);
		h->tree_id = cur_le32(&c);
	}
	h->session_id = cur_le64(&c);
	cur_bytes(&c, h->signature, sizeof(h->signature));
	if (c.err || size != SMB2_HDR_LEN)
		return -1;
	return 0;
}

void
smb2_hdr_encode(uint8_t *p, const struct smb2_hdr *h)
{
	/* Fixed offsets of MS-SMB2 2.2.1; p holds SMB2_HDR_LEN bytes. */
	memcpy(p, "\xfeSMB", 4);
	le16_put(p + 4, SMB2_HDR_LEN);
	le16_put(p + 6, h->credit_charge);
	le32_put(p + 8, h->status);
	le16_put(p + 12, h->command);
	le16_put(p + 14, h->credits);
	le32_put(p + 16, h->flags);
	le32_put(p + 20, h->next_command);
	le64_put(p + 24, h->message_id);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND)
		le64_put(p + 32, h->async_id);
	else {
		le32_put(p + 32, h->process_id);
		le32_put(p + 36, h->tree_id);
	}
	le64_put(p + 40, h->session_id);
	memcpy(p + 48, h->signature, sizeof(h->signature));
}

int
smb1_negotiate_offers(const uint8_t *p, size_t len)
{
	struct cur c, d;
	uint16_t bcc;
	int offers = 0;

	/* MS-CIFS 2.2.3.1: 32-byte header, command 0x72 at offset 4. */
	if (smb2_magic(p, len) != SMB2_MAGIC_SMB1 || len < 32 + 3 || p[4] != 0x72)
		return -1;
	cur_init(&c, p, len);
	cur_skip(&c, 32);
	if (cur_u8(&c) != 0)		/* WordCount */
		return -1;
	bcc = cur_le16(&c);
	d = cur_sub(&c, cur_off(&c), bcc);
	if (c.err)
		return -1;
	/* Each dialect: 0x02 then a NUL-terminated OEM string. */
	while (cur_left(&d) > 0) {
		const uint8_t *s, *nul;
		size_t n;

		if (cur_u8(&d) != 0x02)
			return -1;
		s = d.p;
		nul = memchr(s, 0, cur_left(&d));
		if (nul == NULL)
			return -1;
		n = (size_t)(nul - s);
		cur_skip(&d, n + 1);
		if (n == 9 && memcmp(s, "SMB 2.002", 9) == 0)
			offers |= SMB1_OFFERS_SMB2_002;
		else if (n == 9 && memcmp(s, "SMB 2.???", 9) == 0)
			offers |= SMB1_OFFERS_SMB2_ANY;
	}
	return d.err ? -1 : offers;
}

void
smb2_chain_init(struct smb2_chain *ch, const uint8_t *buf, size_t len)
{
	ch->buf = buf;
	ch->len = len;
	ch->off = 0;
	ch->done = 0;
	ch->tail_ok = 0;
}

int
smb2_chain_next(struct smb2_chain *ch, const uint8_t **msg, size_t *mlen)
{
	size_t left;
	uint32_t next;

	if (ch->done || ch->off >= ch->len)
		return 0;
	left = ch->len - ch->off;
	if (left < SMB2_HDR_LEN)
		return -1;
	next = le32_get(ch->buf + ch->off + 20);
	*msg = ch->buf + ch->off;
	if (next == 0) {
		*mlen = left;
		ch->done = 1;
		return 1;
	}
	/* MS-SMB2 3.3.5.2.7: 8-byte aligned, past this header, inside. */
	if ((next & 7) != 0 || next < SMB2_HDR_LEN || next > left ||
	    (next == left && !ch->tail_ok))
		return -1;
	*mlen = next;
	ch->off += next;
	ch->done = next == left;
	return 1;
}

/* MS-SMB2 2.2.3 .. 2.2.24: request StructureSize by command. */
static const uint16_t smb2_req_sizes[SMB2_NCOMMANDS] = {
	[SMB2_NEGOTIATE] = 36,
	[SMB2_SESSION_SETUP] = 25,
	[SMB2_LOGOFF] = 4,
	[SMB2_TREE_CONNECT] = 9,
	[SMB2_TREE_DISCONNECT] = 4,
	[SMB2_CREATE] = 57,
	[SMB2_CLOSE] = 24,
	[SMB2_FLUSH] = 24,
	[SMB2_READ] = 49,
	[SMB2_WRITE] = 49,
	[SMB2_LOCK] = 48,
	[SMB2_IOCTL] = 57,
	[SMB2_CANCEL] = 4,
	[SMB2_ECHO] = 4,
	[SMB2_QUERY_DIRECTORY] = 33,
	[SMB2_CHANGE_NOTIFY] = 32,
	[SMB2_QUERY_INFO] = 41,
	[SMB2_SET_INFO] = 33,
	[SMB2_OPLOCK_BREAK] = 24,
};

uint16_t
smb2_req_struct_size(uint16_t command)
{
	return command < SMB2_NCOMMANDS ? smb2_req_sizes[command] : 0;
}

int
smb2_req_size_ok(uint16_t command, const uint8_t *body, size_t len)
{
	uint16_t want, got;

	if (command >= SMB2_NCOMMANDS || len < 2)
		return -1;
	want = smb2_req_sizes[command];
	got = le16_get(body);
	/* An oplock break acknowledgment (24) or a lease break one (36). */
	if (command == SMB2_OPLOCK_BREAK && got == 36)
		want = 36;
	if (got != want)
		return -1;
	/*
	 * An odd size announces a variable part; the fixed part is the size
	 * rounded down to even and the variable part may be empty.
	 */
	return len >= (size_t)(want & ~1u) ? 0 : -1;
}

void
smb2_error_encode(struct wcur *w, int contexts, const uint8_t *data,
    uint32_t len)
{
	wcur_le16(w, 9);			/* StructureSize */
	if (len == 0) {
		/* no data: ByteCount 0 and the one zero byte (2.2.2) */
		wcur_u8(w, 0);
		wcur_u8(w, 0);
		wcur_le32(w, 0);
		wcur_u8(w, 0);
		return;
	}
	if (contexts) {
		/* 2.2.2.1: one context, at offset 8 (8-byte aligned) */
		wcur_u8(w, 1);			/* ErrorContextCount */
		wcur_u8(w, 0);
		wcur_le32(w, 8 + len);		/* ByteCount */
		wcur_le32(w, len);		/* ErrorDataLength */
		wcur_le32(w, SMB2_ERROR_ID_DEFAULT);
	} else {
		wcur_u8(w, 0);
		wcur_u8(w, 0);
		wcur_le32(w, len);
	}
	wcur_bytes(w, data, len);
}
