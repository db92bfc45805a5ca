/*
 * Apple's SMB2 extensions: the AAPL create context and the AfpInfo record
 * (proto/aapl.h).  Field layouts follow Samba's vfs_fruit.c check_aapl
 * and adouble.c, read to understand, written here with the cursors.
 */
#include "proto/aapl.h"

#include <string.h>

int
aapl_query_decode(const uint8_t *data, size_t len, struct aapl_query *q)
{
	struct cur c;

	memset(q, 0, sizeof(*q));
	if (data == NULL || len != AAPL_QUERY_LEN)
		return -1;
	cur_init(&c, data, len);
	q->cmd = cur_le32(&c);
	cur_skip(&c, 4);		/* Reserved */
	q->bitmap = cur_le64(&c);
	q->client_caps = cur_le64(&c);
	if (c.err || q->cmd != AAPL_SERVER_QUERY)
		return -1;
	return 0;
}

void
aapl_reply_put(struct wcur *w, const struct aapl_reply *r)
{
	wcur_le32(w, AAPL_SERVER_QUERY);
	wcur_le32(w, 0);
	wcur_le64(w, r->bitmap);
	if (r->bitmap & AAPL_SERVER_CAPS)
		wcur_le64(w, r->server_caps);
	if (r->bitmap & AAPL_VOLUME_CAPS)
		wcur_le64(w, r->volume_caps);
	if (r->bitmap & AAPL_MODEL_INFO) {
		wcur_le32(w, 0);		/* Pad */
		wcur_le32(w, (uint32_t)r->model16_len);
		if (r->model16_len > 0)
			wcur_bytes(w, r->model16, r->model16_len);
	}
}

static uint32_t
aapl_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

int
aapl_afpinfo_valid(const uint8_t *data, size_t len)
{
	if (data == NULL || len < AFPINFO_SIZE)
		return 0;
	return aapl_be32(data) == AFPINFO_SIGNATURE &&
	    aapl_be32(data + 4) == AFPINFO_VERSION;
}

int
aapl_afpinfo_empty(const uint8_t *data, size_t len)
{
	static const uint8_t zero[AFPINFO_FINDERINFO_SIZE];

	if (data == NULL || len < AFPINFO_SIZE)
		return 1;
	return memcmp(data + AFPINFO_OFF_FINDERINFO, zero, sizeof(zero)) == 0;
}

/* AppleDouble dates count seconds from 2000-01-01, big-endian */
#define AAPL_DATE_DELTA		946684800
#define AAPL_DATE_START		0x80000000u

void
aapl_finder_compress(const uint8_t *ai, int regular, int64_t btime,
    uint8_t out[16])
{
	const uint8_t *fi;
	uint32_t d = AAPL_DATE_START;

	memset(out, 0, 16);
	if (ai != NULL) {
		fi = ai + AFPINFO_OFF_FINDERINFO;
		if (regular)
			memcpy(out, fi, 8);	/* type, creator */
		memcpy(out + 8, fi + 8, 2);	/* Finder flags */
		memcpy(out + 10, fi + 24, 2);	/* extended flags */
		d = (uint32_t)(btime - AAPL_DATE_DELTA);
	}
	out[12] = (uint8_t)(d >> 24);
	out[13] = (uint8_t)(d >> 16);
	out[14] = (uint8_t)(d >> 8);
	out[15] = (uint8_t)d;
}
