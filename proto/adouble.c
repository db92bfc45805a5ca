/*
 * AppleDouble metadata blobs (proto/adouble.h): netatalk's
 * `org.netatalk.Metadata` xattr as Samba's vfs_fruit reads and writes it
 * with `fruit:metadata = netatalk`.  Written from the format (RFC 1740,
 * netatalk's private entry ids); Samba's source3/lib/adouble.c was read
 * for the sizes it accepts, so that what one accepts the other does.
 */
#include "proto/adouble.h"

#include <string.h>

#include "proto/cur.h"

/* seconds from 1970 to 2000: AppleDouble dates count from 2000 */
#define ADOUBLE_DATE_DELTA	946684800
#define ADOUBLE_DATE_NEVER	0x80000000u

/* the metadata blob's layout: after the header and eight entries */
#define ADOUBLE_META_NENT	8
#define ADOUBLE_OFF_FINDERI	(ADOUBLE_HDR_LEN + ADOUBLE_META_NENT * \
				    ADOUBLE_ENTRY_LEN)		/* 122 */
#define ADOUBLE_OFF_COMMENT	(ADOUBLE_OFF_FINDERI + ADOUBLE_FINDERI_LEN)
#define ADOUBLE_OFF_DATES	(ADOUBLE_OFF_COMMENT + 200)
#define ADOUBLE_OFF_AFPFILEI	(ADOUBLE_OFF_DATES + 16)
#define ADOUBLE_OFF_PRIVDEV	(ADOUBLE_OFF_AFPFILEI + 4)
#define ADOUBLE_OFF_PRIVINO	(ADOUBLE_OFF_PRIVDEV + 8)
#define ADOUBLE_OFF_PRIVSYN	(ADOUBLE_OFF_PRIVINO + 8)
#define ADOUBLE_OFF_PRIVID	(ADOUBLE_OFF_PRIVSYN + 8)

static void
adouble_put32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24);
	p[1] = (uint8_t)(x >> 16);
	p[2] = (uint8_t)(x >> 8);
	p[3] = (uint8_t)x;
}

static void
adouble_put16(uint8_t *p, uint16_t x)
{
	p[0] = (uint8_t)(x >> 8);
	p[1] = (uint8_t)x;
}

/*
 * Entry ids as a small index (0: unknown): 1..15 as they are, netatalk's
 * four private ids after them.
 */
static unsigned
adouble_eid_index(uint32_t id)
{
	if (id >= 1 && id <= 15)
		return id;
	switch (id) {
	case ADOUBLE_EID_PRIVDEV: return 16;
	case ADOUBLE_EID_PRIVINO: return 17;
	case ADOUBLE_EID_PRIVSYN: return 18;
	case ADOUBLE_EID_PRIVID: return 19;
	default: return 0;
	}
}

/*
 * The sizes an entry may have, by index: a fixed size (>0), a maximum
 * (<0, as minus the bound), the Finder info's minimum (its own case) or
 * no bound (0: the data fork and the resource fork).
 */
static const int32_t adouble_eid_size[20] = {
	[1] = 0, [2] = 0,		/* data fork, resource fork */
	[3] = -255,			/* real name */
	[4] = -200,			/* comment */
	[5] = 128,			/* black and white icon */
	[6] = -1024,			/* colour icon */
	[7] = 16, [8] = 16,		/* file info, file dates */
	[9] = ADOUBLE_FINDERI_LEN,	/* Finder info: at least */
	[10] = 4, [11] = 8, [12] = 2,	/* Macintosh, ProDOS, MS-DOS info */
	[13] = -12,			/* short name */
	[14] = 4, [15] = 4,		/* AFP file info, directory id */
	[16] = 8, [17] = 8, [18] = 8,	/* netatalk's dev, ino, syn */
	[19] = 4,			/* netatalk's id */
};

long
adouble_finderinfo_off(const uint8_t *buf, size_t len)
{
	struct cur c;
	uint32_t seen = 0, id, off, elen;
	uint16_t n, i;
	unsigned k;
	long fi = -1;
	int32_t want;

	if (buf == NULL || len < ADOUBLE_HDR_LEN)
		return -1;
	cur_init(&c, buf, len);
	if (cur_be32(&c) != ADOUBLE_MAGIC || cur_be32(&c) != ADOUBLE_VERSION2)
		return -1;
	cur_skip(&c, 16);			/* filler */
	n = cur_be16(&c);
	if (c.err || (size_t)n * ADOUBLE_ENTRY_LEN > len - ADOUBLE_HDR_LEN)
		return -1;
	for (i = 0; i < n; i++) {
		id = cur_be32(&c);
		off = cur_be32(&c);
		elen = cur_be32(&c);
		if (c.err || (k = adouble_eid_index(id)) == 0 ||
		    (seen & (1u << k)))
			return -1;
		seen |= 1u << k;
		/* the forks' data lies past a header; the rest is in it */
		if (k != 1 && k != ADOUBLE_EID_RFORK && off > len)
			return -1;
		if (elen == 0)
			continue;		/* present but empty */
		want = adouble_eid_size[k];
		if (k == ADOUBLE_EID_FINDERI ? elen < (uint32_t)want :
		    want > 0 ? elen != (uint32_t)want :
		    want < 0 ? elen > (uint32_t)-want : 0)
			return -1;
		if (k != 1 && k != ADOUBLE_EID_RFORK &&
		    (uint64_t)off + elen > len)
			return -1;
		/*
		 * Nor over the header and the entry table: the Finder info
		 * is written in place, and must not rewrite the table.
		 */
		if (off < ADOUBLE_HDR_LEN + (size_t)n * ADOUBLE_ENTRY_LEN)
			return -1;
		if (k == ADOUBLE_EID_FINDERI)
			fi = (long)off;
	}
	return fi;
}

int
adouble_meta_to_afpinfo(const uint8_t *buf, size_t len,
    uint8_t rec[AFPINFO_SIZE])
{
	long fi = adouble_finderinfo_off(buf, len);

	if (fi < 0)
		return -1;
	memset(rec, 0, AFPINFO_SIZE);
	adouble_put32(rec, AFPINFO_SIGNATURE);
	adouble_put32(rec + 4, AFPINFO_VERSION);
	adouble_put32(rec + 12, ADOUBLE_DATE_NEVER);	/* backup time */
	memcpy(rec + AFPINFO_OFF_FINDERINFO, buf + fi, ADOUBLE_FINDERI_LEN);
	return 0;
}

static void
adouble_entry_put(uint8_t *buf, unsigned i, uint32_t id, uint32_t off,
    uint32_t len)
{
	uint8_t *e = buf + ADOUBLE_HDR_LEN + i * ADOUBLE_ENTRY_LEN;

	adouble_put32(e, id);
	adouble_put32(e + 4, off);
	adouble_put32(e + 8, len);
}

void
adouble_meta_new(uint8_t buf[ADOUBLE_META_SIZE], int64_t now)
{
	uint32_t d = (uint32_t)(now - ADOUBLE_DATE_DELTA);

	memset(buf, 0, ADOUBLE_META_SIZE);
	adouble_put32(buf, ADOUBLE_MAGIC);
	adouble_put32(buf + 4, ADOUBLE_VERSION2);
	/* the filler stays zero, as Samba writes it for metadata */
	adouble_put16(buf + 24, ADOUBLE_META_NENT);
	/* the order Samba's ad_pack writes: by index */
	adouble_entry_put(buf, 0, ADOUBLE_EID_COMMENT, ADOUBLE_OFF_COMMENT, 0);
	adouble_entry_put(buf, 1, ADOUBLE_EID_FILEDATES, ADOUBLE_OFF_DATES, 16);
	adouble_entry_put(buf, 2, ADOUBLE_EID_FINDERI, ADOUBLE_OFF_FINDERI,
	    ADOUBLE_FINDERI_LEN);
	adouble_entry_put(buf, 3, ADOUBLE_EID_AFPFILEI, ADOUBLE_OFF_AFPFILEI,
	    4);
	adouble_entry_put(buf, 4, ADOUBLE_EID_PRIVDEV, ADOUBLE_OFF_PRIVDEV, 0);
	adouble_entry_put(buf, 5, ADOUBLE_EID_PRIVINO, ADOUBLE_OFF_PRIVINO, 0);
	adouble_entry_put(buf, 6, ADOUBLE_EID_PRIVSYN, ADOUBLE_OFF_PRIVSYN, 0);
	adouble_entry_put(buf, 7, ADOUBLE_EID_PRIVID, ADOUBLE_OFF_PRIVID, 0);
	/* dates: created, modified, backed up ("never"), accessed */
	adouble_put32(buf + ADOUBLE_OFF_DATES, d);
	adouble_put32(buf + ADOUBLE_OFF_DATES + 4, d);
	adouble_put32(buf + ADOUBLE_OFF_DATES + 8, ADOUBLE_DATE_NEVER);
	adouble_put32(buf + ADOUBLE_OFF_DATES + 12, d);
}

size_t
adouble_meta_set(uint8_t *buf, size_t len, size_t cap,
    const uint8_t rec[AFPINFO_SIZE], int64_t now)
{
	long fi = len <= cap ? adouble_finderinfo_off(buf, len) : -1;

	if (fi < 0) {
		adouble_meta_new(buf, now);
		len = ADOUBLE_META_SIZE;
		fi = ADOUBLE_OFF_FINDERI;
	}
	memcpy(buf + fi, rec + AFPINFO_OFF_FINDERINFO, ADOUBLE_FINDERI_LEN);
	return len;
}

int
adouble_meta_listed(const uint8_t *buf, size_t len)
{
	long fi = adouble_finderinfo_off(buf, len);
	int i;

	if (fi < 0)
		return 0;
	for (i = 0; i < ADOUBLE_FINDERI_LEN; i++)
		if (buf[fi + i] != 0)
			return 1;
	return 0;
}

/*
 * "._" files (proto/adouble.h).  The entry table is read as Samba's
 * ad_unpack with two entries; a fork that is not last (or overlaps the
 * header, or another entry) is refused: a write there would overwrite
 * the Finder info or the table.
 */
int
adouble_rsrc_parse(const uint8_t *buf, size_t len, uint64_t fsize,
    struct adouble_rsrc *r)
{
	struct cur c;
	uint32_t id, off, elen, fi_off = 0, fi_len = 0, rf_off = 0, rf_len = 0;
	uint32_t len_at = 0;
	int i, have_fi = 0, have_rf = 0;

	if (buf == NULL || len < ADOUBLE_RSRC_HDR || fsize < ADOUBLE_RSRC_HDR)
		return -1;
	cur_init(&c, buf, len);
	if (cur_be32(&c) != ADOUBLE_MAGIC || cur_be32(&c) != ADOUBLE_VERSION2)
		return -1;
	cur_skip(&c, 16);			/* filler */
	if (cur_be16(&c) != 2)
		return -1;
	for (i = 0; i < 2; i++) {
		id = cur_be32(&c);
		off = cur_be32(&c);
		elen = cur_be32(&c);
		if (c.err)
			return -1;
		if (id == ADOUBLE_EID_FINDERI && !have_fi) {
			have_fi = 1;
			fi_off = off;
			fi_len = elen;
		} else if (id == ADOUBLE_EID_RFORK && !have_rf) {
			have_rf = 1;
			rf_off = off;
			rf_len = elen;
			len_at = (uint32_t)(ADOUBLE_HDR_LEN +
			    i * ADOUBLE_ENTRY_LEN + 8);
		} else
			return -1;
	}
	if (!have_fi || !have_rf || fi_off != ADOUBLE_RSRC_FI_OFF ||
	    fi_len < ADOUBLE_FINDERI_LEN)
		return -1;
	/* the fork is last: after the whole Finder info (no wrap) */
	if (rf_off < ADOUBLE_RSRC_HDR ||
	    (uint64_t)fi_off + fi_len > rf_off || rf_off > fsize)
		return -1;
	r->off = rf_off;
	r->len = (uint64_t)rf_off + rf_len > fsize ? fsize - rf_off : rf_len;
	r->len_at = len_at;
	return 0;
}

void
adouble_rsrc_new(uint8_t buf[ADOUBLE_RSRC_HDR])
{
	memset(buf, 0, ADOUBLE_RSRC_HDR);
	adouble_put32(buf, ADOUBLE_MAGIC);
	adouble_put32(buf + 4, ADOUBLE_VERSION2);
	memcpy(buf + 8, "Netatalk        ", 16);	/* Samba's AD_FILLER_TAG */
	adouble_put16(buf + 24, 2);
	/* by id, as Samba's ad_pack: the fork's entry first */
	adouble_entry_put(buf, 0, ADOUBLE_EID_RFORK, ADOUBLE_RSRC_HDR, 0);
	adouble_entry_put(buf, 1, ADOUBLE_EID_FINDERI, ADOUBLE_RSRC_FI_OFF,
	    ADOUBLE_FINDERI_LEN);
}

void
adouble_rsrc_len_put(uint8_t out[4], uint32_t len)
{
	adouble_put32(out, len);
}

/*
 * A Mac's "._" files (proto/adouble.h): the ATTR block of its extended
 * Finder info, read as Samba's ad_unpack and ad_unpack_xattrs accept it
 * (written from the layout, which xnu's vfs_xattr.c describes), with
 * every offset checked against the bytes actually read as well.
 */
#define ADOUBLE_ATTR_MAGIC	0x41545452u	/* "ATTR" */
#define ADOUBLE_ATTR_ENT_FIXED	11	/* offset, length, flags, name length */

static uint32_t
adouble_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

int
adouble_conv_wanted(const uint8_t *buf, size_t len)
{
	unsigned i;

	if (buf == NULL || len < ADOUBLE_RSRC_HDR)
		return 0;
	if (memcmp(buf + 8, ADOUBLE_FILLER_OSX, 16) == 0)
		return 1;
	for (i = 0; i < 2; i++) {
		const uint8_t *e = buf + ADOUBLE_HDR_LEN + i * ADOUBLE_ENTRY_LEN;

		if (adouble_get32(e) == ADOUBLE_EID_FINDERI &&
		    adouble_get32(e + 8) > ADOUBLE_FINDERI_LEN)
			return 1;
	}
	return 0;
}

/* The ATTR header after the Finder info's 32 bytes and 2 of padding. */
#define ADOUBLE_ATTR_OFF	(ADOUBLE_RSRC_FI_OFF + ADOUBLE_FINDERI_LEN + 2)

static int
adouble_conv_attrs(const uint8_t *buf, size_t len, struct adouble_conv *c)
{
	uint32_t total, start, dlen, hoff, off, elen;
	uint8_t nlen;
	unsigned i;

	c->nattr = 0;
	if (c->fi_len <= ADOUBLE_FINDERI_LEN)
		return 0;
	/* the header lies inside the Finder info entry and the bytes read */
	if ((uint64_t)ADOUBLE_ATTR_OFF + ADOUBLE_ATTR_HDR >
	    (uint64_t)ADOUBLE_RSRC_FI_OFF + c->fi_len ||
	    ADOUBLE_ATTR_OFF + ADOUBLE_ATTR_HDR > len)
		return -1;
	if (adouble_get32(buf + ADOUBLE_ATTR_OFF) != ADOUBLE_ATTR_MAGIC)
		return -1;
	total = adouble_get32(buf + ADOUBLE_ATTR_OFF + 8);
	start = adouble_get32(buf + ADOUBLE_ATTR_OFF + 12);
	dlen = adouble_get32(buf + ADOUBLE_ATTR_OFF + 16);
	c->nattr = (uint16_t)(buf[ADOUBLE_ATTR_OFF + 34] << 8 |
	    buf[ADOUBLE_ATTR_OFF + 35]);
	/* the block ends before the fork, inside what was read */
	if (total > c->rf_off || total > ADOUBLE_CONV_MAX || total > len)
		return -1;
	if (start < ADOUBLE_ATTR_OFF + ADOUBLE_ATTR_HDR ||
	    (uint64_t)start + dlen > total)
		return -1;
	if (c->nattr > ADOUBLE_ATTR_MAX)
		return -1;
	c->first = ADOUBLE_ATTR_OFF + ADOUBLE_ATTR_HDR;
	c->data_start = start;
	/* every entry: before the data area, its data inside the block */
	hoff = c->first;
	for (i = 0; i < c->nattr; i++) {
		hoff = (hoff + 3) & ~3u;
		if ((uint64_t)hoff + ADOUBLE_ATTR_ENT_FIXED > start)
			return -1;
		off = adouble_get32(buf + hoff);
		elen = adouble_get32(buf + hoff + 4);
		nlen = buf[hoff + 10];
		if (off >= total || (uint64_t)off + elen > total)
			return -1;
		if (nlen == 0 ||
		    (uint64_t)hoff + ADOUBLE_ATTR_ENT_FIXED + nlen > start)
			return -1;
		/* a name that is empty up to its NUL names nothing */
		if (buf[hoff + ADOUBLE_ATTR_ENT_FIXED] == '\0')
			return -1;
		hoff += ADOUBLE_ATTR_ENT_FIXED + nlen;
	}
	return 0;
}

int
adouble_conv_parse(const uint8_t *buf, size_t len, uint64_t fsize,
    struct adouble_conv *c)
{
	uint32_t id, off, elen;
	int i, have_fi = 0, have_rf = 0;

	memset(c, 0, sizeof(*c));
	if (buf == NULL || len < ADOUBLE_RSRC_HDR || fsize < len ||
	    len > ADOUBLE_CONV_MAX)
		return -1;
	if (adouble_get32(buf) != ADOUBLE_MAGIC ||
	    adouble_get32(buf + 4) != ADOUBLE_VERSION2 ||
	    (buf[24] << 8 | buf[25]) != 2)
		return -1;
	c->osx = memcmp(buf + 8, ADOUBLE_FILLER_OSX, 16) == 0;
	for (i = 0; i < 2; i++) {
		const uint8_t *e = buf + ADOUBLE_HDR_LEN + i * ADOUBLE_ENTRY_LEN;

		id = adouble_get32(e);
		off = adouble_get32(e + 4);
		elen = adouble_get32(e + 8);
		if (id == ADOUBLE_EID_FINDERI && !have_fi) {
			have_fi = 1;
			/* at 50, 32 bytes at least, wholly in the file */
			if (off != ADOUBLE_RSRC_FI_OFF ||
			    elen < ADOUBLE_FINDERI_LEN ||
			    (uint64_t)off + elen > fsize ||
			    (uint64_t)off + elen > ADOUBLE_CONV_MAX)
				return -1;
			c->fi_len = elen;
		} else if (id == ADOUBLE_EID_RFORK && !have_rf) {
			have_rf = 1;
			if (off < ADOUBLE_RSRC_HDR || off > fsize)
				return -1;
			c->rf_off = off;
			c->rf_len = (uint64_t)off + elen > fsize ?
			    fsize - off : elen;
		} else
			return -1;
	}
	if (!have_fi || !have_rf ||
	    (uint64_t)ADOUBLE_RSRC_FI_OFF + c->fi_len > c->rf_off)
		return -1;
	return adouble_conv_attrs(buf, len, c);
}

int
adouble_conv_xattr(const uint8_t *buf, size_t len,
    const struct adouble_conv *c, unsigned i, struct adouble_xattr *x)
{
	uint32_t hoff = c->first;
	uint8_t nlen;
	unsigned k;

	if (i >= c->nattr || c->data_start > len)
		return -1;
	/* parse checked every entry: walk to the i-th */
	for (k = 0;; k++) {
		hoff = (hoff + 3) & ~3u;
		if ((uint64_t)hoff + ADOUBLE_ATTR_ENT_FIXED > c->data_start)
			return -1;
		nlen = buf[hoff + 10];
		if ((uint64_t)hoff + ADOUBLE_ATTR_ENT_FIXED + nlen >
		    c->data_start)
			return -1;
		if (k == i)
			break;
		hoff += ADOUBLE_ATTR_ENT_FIXED + nlen;
	}
	x->off = adouble_get32(buf + hoff);
	x->len = adouble_get32(buf + hoff + 4);
	if ((uint64_t)x->off + x->len > len)
		return -1;
	x->name = (const char *)buf + hoff + ADOUBLE_ATTR_ENT_FIXED;
	x->name_len = strnlen(x->name, nlen);
	return x->name_len > 0 ? 0 : -1;
}

void
adouble_conv_header(uint8_t buf[ADOUBLE_RSRC_HDR], const uint8_t *old,
    uint32_t rf_off, uint32_t rf_len)
{
	adouble_rsrc_new(buf);
	adouble_put32(buf + ADOUBLE_HDR_LEN + 4, rf_off);
	adouble_put32(buf + ADOUBLE_HDR_LEN + 8, rf_len);
	/* the Finder info's first 32 bytes stay what they were */
	memcpy(buf + ADOUBLE_RSRC_FI_OFF, old + ADOUBLE_RSRC_FI_OFF,
	    ADOUBLE_FINDERI_LEN);
}

/*
 * The resource map of a fork with no resources, as a Mac writes it: a
 * header (data and map at 256, no data, a map of 30 bytes) with the
 * note below, zeros to 256, the map (the header again, 8 reserved
 * bytes, type list at 28, name list at 30, no types).
 */
int
adouble_rfork_blank(const uint8_t *p, size_t len)
{
	static const uint8_t hdr[16] = {
		0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x1e
	};
	static const char note[] =
	    "This resource fork intentionally left blank   ";
	static const uint8_t tail[6] = { 0, 0x1c, 0, 0x1e, 0xff, 0xff };
	size_t i, nl = sizeof(note) - 1;

	if (len != ADOUBLE_RFORK_BLANK_LEN)
		return 0;
	if (memcmp(p, hdr, 16) != 0 || memcmp(p + 16, note, nl) != 0 ||
	    memcmp(p + 256, hdr, 16) != 0 || memcmp(p + 280, tail, 6) != 0)
		return 0;
	for (i = 16 + nl; i < 256; i++)
		if (p[i] != 0)
			return 0;
	for (i = 272; i < 280; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/* Samba's macos_string_replace_map, the Unix side: U+F001 + index */
static const char adouble_map_ascii[] = "\"*:<>?\\|";

int
adouble_xattr_stream_name(const char *name, size_t len, char *out,
    size_t cap)
{
	return adouble_name_private(name, len, out, cap);
}

size_t
adouble_name_native(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	unsigned lo;

	while (*r != '\0') {
		/* U+F001..U+F027 is EF 80 81..EF 80 A7 */
		if (r[0] == 0xef && r[1] == 0x80 && r[2] >= 0x81 &&
		    r[2] <= 0xa7) {
			lo = r[2] - 0x80;
			*w++ = lo < 0x20 ? (unsigned char)lo :
			    (unsigned char)adouble_map_ascii[lo - 0x20];
			r += 3;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	return (size_t)(w - (unsigned char *)s);
}

int
adouble_name_private(const char *name, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;
	unsigned cp;
	const char *m;

	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];

		cp = 0;
		if (ch >= 0x01 && ch <= 0x1f)
			cp = 0xf000 + ch;
		else if (ch != 0 && (m = strchr(adouble_map_ascii, ch)) != NULL)
			cp = 0xf020 + (unsigned)(m - adouble_map_ascii);
		if (cp == 0) {
			if (o + 1 >= cap)
				return -1;
			out[o++] = (char)ch;
			continue;
		}
		/* U+F0xx in UTF-8: three bytes */
		if (o + 3 >= cap)
			return -1;
		out[o++] = (char)(0xe0 | cp >> 12);
		out[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[o++] = (char)(0x80 | (cp & 0x3f));
	}
	if (o >= cap)
		return -1;
	out[o] = '\0';
	return (int)o;
}
