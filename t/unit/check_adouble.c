/*
 * Unit tests for AppleDouble metadata blobs (proto/adouble.c), netatalk's
 * org.netatalk.Metadata xattr as Samba writes it: the layout of a new
 * blob byte for byte against the header Samba's ad_init + ad_pack produce
 * (a known answer written out here, not derived from our writer), the
 * AfpInfo record made from it, every truncation, malformed tables and
 * entries refused, the Finder info set in place keeping the rest.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/adouble.h"

/*
 * The 122 header bytes Samba 4.17 writes for a new metadata xattr:
 * magic, version 2, zero filler, 8 entries in the order of its entry
 * index (comment, dates, Finder info, AFP info, netatalk's dev, ino,
 * syn, id) with their offsets and lengths.
 */
static const uint8_t samba_hdr[122] = {
	0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x08,
	0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x9a, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x62, 0x00, 0x00, 0x00, 0x10,
	0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x7a, 0x00, 0x00, 0x00, 0x20,
	0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x01, 0x72, 0x00, 0x00, 0x00, 0x04,
	0x80, 0x44, 0x45, 0x56, 0x00, 0x00, 0x01, 0x76, 0x00, 0x00, 0x00, 0x00,
	0x80, 0x49, 0x4e, 0x4f, 0x00, 0x00, 0x01, 0x7e, 0x00, 0x00, 0x00, 0x00,
	0x80, 0x53, 0x59, 0x4e, 0x00, 0x00, 0x01, 0x86, 0x00, 0x00, 0x00, 0x00,
	0x80, 0x53, 0x56, 0x7e, 0x00, 0x00, 0x01, 0x8e, 0x00, 0x00, 0x00, 0x00,
};

/* 2020-01-01T00:00:00Z: 631152000 seconds after 2000-01-01 */
#define NOW	1577836800

static void
rec_with(uint8_t rec[AFPINFO_SIZE], uint8_t fill)
{
	memset(rec, 0, AFPINFO_SIZE);
	memcpy(rec, "AFP", 4);
	rec[6] = 1;
	memcpy(rec + 16, "TEXTttxt", 8);
	rec[24] = fill;			/* Finder flags: a colour label */
}

static void
put32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24);
	p[1] = (uint8_t)(x >> 16);
	p[2] = (uint8_t)(x >> 8);
	p[3] = (uint8_t)x;
}

START_TEST(test_new_layout)
{
	uint8_t b[ADOUBLE_META_SIZE];
	size_t i;

	adouble_meta_new(b, NOW);
	ck_assert_int_eq(memcmp(b, samba_hdr, sizeof(samba_hdr)), 0);
	for (i = 122; i < 354; i++)
		ck_assert_uint_eq(b[i], 0);	/* Finder info, comment */
	/* dates from 2000: created, modified, backup never, accessed */
	ck_assert_uint_eq(b[354], 0x25);
	ck_assert_uint_eq(b[355], 0x9e);
	ck_assert_uint_eq(b[356], 0x9d);
	ck_assert_uint_eq(b[357], 0x80);
	ck_assert_int_eq(memcmp(b + 354, b + 358, 4), 0);
	ck_assert_uint_eq(b[362], 0x80);
	ck_assert_uint_eq(b[363] | b[364] | b[365], 0);
	ck_assert_int_eq(memcmp(b + 354, b + 366, 4), 0);
	for (i = 370; i < sizeof(b); i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert_int_eq(adouble_finderinfo_off(b, sizeof(b)), 122);
	ck_assert_int_eq(adouble_meta_listed(b, sizeof(b)), 0);
}
END_TEST

START_TEST(test_afpinfo)
{
	uint8_t b[ADOUBLE_META_SIZE], rec[AFPINFO_SIZE], in[AFPINFO_SIZE];
	static const uint8_t head[16] = {
		'A', 'F', 'P', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x80, 0, 0, 0,
	};
	size_t i;

	adouble_meta_new(b, NOW);
	rec_with(in, 0x0c);
	ck_assert_uint_eq(adouble_meta_set(b, sizeof(b), sizeof(b), in, NOW),
	    ADOUBLE_META_SIZE);
	ck_assert_int_eq(memcmp(b + 122, in + 16, 32), 0);
	ck_assert_int_eq(adouble_meta_listed(b, sizeof(b)), 1);
	memset(rec, 0xee, sizeof(rec));
	ck_assert_int_eq(adouble_meta_to_afpinfo(b, sizeof(b), rec), 0);
	/* Samba's afpinfo_new + afpinfo_pack: backup time "never" */
	ck_assert_int_eq(memcmp(rec, head, 16), 0);
	ck_assert_int_eq(memcmp(rec + 16, in + 16, 32), 0);
	for (i = 48; i < AFPINFO_SIZE; i++)
		ck_assert_uint_eq(rec[i], 0);
}
END_TEST

START_TEST(test_truncations)
{
	uint8_t b[ADOUBLE_META_SIZE], rec[AFPINFO_SIZE];
	size_t n;

	adouble_meta_new(b, NOW);
	/* netatalk's id entry is empty at 398: shorter is a broken table */
	for (n = 0; n < 398; n++) {
		ck_assert_int_eq(adouble_finderinfo_off(b, n), -1);
		ck_assert_int_eq(adouble_meta_to_afpinfo(b, n, rec), -1);
		ck_assert_int_eq(adouble_meta_listed(b, n), 0);
	}
	for (n = 398; n <= sizeof(b); n++)
		ck_assert_int_eq(adouble_finderinfo_off(b, n), 122);
	ck_assert_int_eq(adouble_finderinfo_off(NULL, 402), -1);
}
END_TEST

/* entry i's id, offset and length of a new blob, changed */
static long
with_entry(unsigned i, uint32_t id, uint32_t off, uint32_t len)
{
	uint8_t b[ADOUBLE_META_SIZE];
	uint8_t *e;

	adouble_meta_new(b, NOW);
	e = b + 26 + 12 * i;
	put32(e, id);
	put32(e + 4, off);
	put32(e + 8, len);
	return adouble_finderinfo_off(b, sizeof(b));
}

START_TEST(test_malformed)
{
	uint8_t b[ADOUBLE_META_SIZE];

	adouble_meta_new(b, NOW);
	b[3] = 0x00;				/* AppleSingle's magic */
	ck_assert_int_eq(adouble_finderinfo_off(b, sizeof(b)), -1);
	adouble_meta_new(b, NOW);
	b[5] = 0x01;				/* version 1 */
	ck_assert_int_eq(adouble_finderinfo_off(b, sizeof(b)), -1);
	adouble_meta_new(b, NOW);
	b[24] = 0xff;				/* entries past the end */
	ck_assert_int_eq(adouble_finderinfo_off(b, sizeof(b)), -1);
	adouble_meta_new(b, NOW);
	b[25] = 2;				/* no Finder info among them */
	ck_assert_int_eq(adouble_finderinfo_off(b, sizeof(b)), -1);

	ck_assert_int_eq(with_entry(2, 9, 122, 32), 122);	/* as made */
	ck_assert_int_eq(with_entry(2, 9, 122, 31), -1);	/* short */
	ck_assert_int_eq(with_entry(2, 9, 380, 32), -1);	/* past end */
	ck_assert_int_eq(with_entry(2, 9, 0xfffffff0u, 32), -1); /* wraps */
	ck_assert_int_eq(with_entry(2, 9, 122, 0xffffffffu), -1);
	ck_assert_int_eq(with_entry(2, 9, 122, 0), -1);	/* empty */
	ck_assert_int_eq(with_entry(2, 9, 200, 40), 200);	/* longer */
	ck_assert_int_eq(with_entry(2, 9, 100, 32), -1);	/* on the table */
	ck_assert_int_eq(with_entry(1, 8, 0, 16), -1);
	ck_assert_int_eq(with_entry(2, 0, 122, 32), -1);	/* id 0 */
	ck_assert_int_eq(with_entry(2, 16, 122, 32), -1);	/* unknown */
	ck_assert_int_eq(with_entry(2, 0x80444557u, 122, 32), -1);
	ck_assert_int_eq(with_entry(0, 9, 122, 32), -1);	/* twice */
	ck_assert_int_eq(with_entry(1, 8, 354, 15), -1);	/* dates */
	ck_assert_int_eq(with_entry(0, 4, 154, 201), -1);	/* comment */
	ck_assert_int_eq(with_entry(0, 4, 154, 200), 122);
	ck_assert_int_eq(with_entry(7, 0x8053567eu, 403, 0), -1);
	/* a resource fork's data lies past a header: not bounded here */
	ck_assert_int_eq(with_entry(0, 2, 0x10000, 0x100000), 122);
}
END_TEST

START_TEST(test_set_in_place)
{
	uint8_t b[ADOUBLE_META_MAX], keep[ADOUBLE_META_SIZE];
	uint8_t rec[AFPINFO_SIZE];

	adouble_meta_new(b, NOW);
	put32(b + 26 + 8, 5);		/* a comment of 5 bytes */
	memcpy(b + 154, "hello", 5);
	put32(b + 354, 12345);			/* another creation date */
	memcpy(keep, b, sizeof(keep));
	rec_with(rec, 0x02);
	ck_assert_uint_eq(adouble_meta_set(b, ADOUBLE_META_SIZE, sizeof(b),
	    rec, NOW + 1000), ADOUBLE_META_SIZE);
	ck_assert_int_eq(memcmp(b, keep, 122), 0);
	ck_assert_int_eq(memcmp(b + 122, rec + 16, 32), 0);
	ck_assert_int_eq(memcmp(b + 154, keep + 154, sizeof(keep) - 154), 0);

	/* anything else becomes a new blob */
	memset(b, 0x41, sizeof(b));
	ck_assert_uint_eq(adouble_meta_set(b, 60, sizeof(b), rec, NOW),
	    ADOUBLE_META_SIZE);
	ck_assert_int_eq(memcmp(b, samba_hdr, 122), 0);
	ck_assert_int_eq(adouble_meta_listed(b, ADOUBLE_META_SIZE), 1);
	/* a length past the room given is not read */
	adouble_meta_new(b, NOW);
	ck_assert_uint_eq(adouble_meta_set(b, sizeof(b) + 1, sizeof(b), rec,
	    NOW), ADOUBLE_META_SIZE);
}
END_TEST

/* "._" files: Samba's header byte for byte (as Samba 4.17 writes it) */
START_TEST(test_rsrc_new)
{
	static const uint8_t want[ADOUBLE_RSRC_HDR] = {
		0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00,
		'N', 'e', 't', 'a', 't', 'a', 'l', 'k',
		' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ',
		0x00, 0x02,
		0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x52,
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x32,
		0x00, 0x00, 0x00, 0x20,
	};
	uint8_t b[ADOUBLE_RSRC_HDR];
	struct adouble_rsrc r;

	adouble_rsrc_new(b);
	ck_assert_int_eq(memcmp(b, want, sizeof(b)), 0);
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), sizeof(b), &r), 0);
	ck_assert_uint_eq(r.off, 82);
	ck_assert_uint_eq(r.len, 0);
	ck_assert_uint_eq(r.len_at, 34);
	/* a length written there is read back; past the end it is cut */
	adouble_rsrc_len_put(b + r.len_at, 1000);
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 82 + 1000, &r), 0);
	ck_assert_uint_eq(r.len, 1000);
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 82 + 10, &r), 0);
	ck_assert_uint_eq(r.len, 10);
}
END_TEST

START_TEST(test_rsrc_truncations)
{
	uint8_t b[ADOUBLE_RSRC_HDR];
	struct adouble_rsrc r;
	size_t n;

	adouble_rsrc_new(b);
	for (n = 0; n < sizeof(b); n++) {
		ck_assert_int_eq(adouble_rsrc_parse(b, n, n, &r), -1);
		/* a file shorter than its header, whatever was read */
		ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), n, &r), -1);
	}
	ck_assert_int_eq(adouble_rsrc_parse(NULL, 82, 82, &r), -1);
}
END_TEST

/* a new header with entry i changed, parsed as a file of fsize bytes */
static int
rsrc_with(unsigned i, uint32_t id, uint32_t off, uint32_t len,
    uint64_t fsize, struct adouble_rsrc *r)
{
	uint8_t b[ADOUBLE_RSRC_HDR];
	uint8_t *e;

	adouble_rsrc_new(b);
	e = b + 26 + 12 * i;
	put32(e, id);
	put32(e + 4, off);
	put32(e + 8, len);
	return adouble_rsrc_parse(b, sizeof(b), fsize, r);
}

START_TEST(test_rsrc_malformed)
{
	uint8_t b[ADOUBLE_RSRC_HDR];
	struct adouble_rsrc r;

	/* the fork over the Finder info, the table, the header */
	ck_assert_int_eq(rsrc_with(0, 2, 81, 10, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 2, 50, 10, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 2, 0, 10, 200, &r), -1);
	/* past the file's end; at its end it is empty */
	ck_assert_int_eq(rsrc_with(0, 2, 201, 0, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 2, 200, 5, 200, &r), 0);
	ck_assert_uint_eq(r.len, 0);
	/* a length that wraps 32 bits, or runs far past the end: cut */
	ck_assert_int_eq(rsrc_with(0, 2, 82, 0xFFFFFFFFu, 100, &r), 0);
	ck_assert_uint_eq(r.len, 18);
	/* the Finder info elsewhere, too short, or running into the fork */
	ck_assert_int_eq(rsrc_with(1, 9, 51, 32, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(1, 9, 50, 31, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(1, 9, 50, 33, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(1, 9, 50, 0xFFFFFFF0u, 200, &r), -1);
	/* a Mac's extended Finder info, its fork after it: fine */
	adouble_rsrc_new(b);
	put32(b + 26 + 4, 0xEE2);
	put32(b + 26 + 8, 5);
	put32(b + 38 + 8, 0xEB0);
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 0xEE2 + 5, &r), 0);
	ck_assert_uint_eq(r.off, 0xEE2);
	ck_assert_uint_eq(r.len, 5);
	/* ids: two forks, two Finder infos, another entry, no fork */
	ck_assert_int_eq(rsrc_with(1, 2, 100, 0, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 9, 50, 32, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 4, 82, 0, 200, &r), -1);
	ck_assert_int_eq(rsrc_with(0, 0x80444556u, 82, 0, 200, &r), -1);
	/* other counts, magic, version */
	adouble_rsrc_new(b);
	b[25] = 3;
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 200, &r), -1);
	b[25] = 1;
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 200, &r), -1);
	adouble_rsrc_new(b);
	b[3] = 0x00;			/* AppleSingle's magic is 0x00051600 */
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 200, &r), -1);
	adouble_rsrc_new(b);
	b[5] = 0x01;			/* version 1 */
	ck_assert_int_eq(adouble_rsrc_parse(b, sizeof(b), 200, &r), -1);
}
END_TEST

/*
 * A Mac's "._" file (adouble_conv_*), laid out here from the format: the
 * filler "Mac OS X", the Finder info at 50 carrying 2 bytes of padding,
 * the ATTR header at 84, two 4-aligned entries from 120 (a plist tag
 * attribute and "foo:bar"), their data, then the fork at MAC_RF_OFF.
 */
#define MAC_RF_OFF	0x400
#define MAC_TOTAL	0x200
#define MAC_FILE	(MAC_RF_OFF + 286)
#define MAC_TAGS	"com.apple.metadata:_kMDItemUserTags"

static size_t
mac_put_entry(uint8_t *b, size_t at, uint32_t off, uint32_t len,
    const char *name)
{
	size_t nl = strlen(name) + 1;

	at = (at + 3) & ~(size_t)3;
	put32(b + at, off);
	put32(b + at + 4, len);
	b[at + 8] = 0;
	b[at + 9] = 0;
	b[at + 10] = (uint8_t)nl;
	memcpy(b + at + 11, name, nl);
	return at + 11 + nl;
}

static size_t
mac_ad(uint8_t *b)
{
	size_t at;

	memset(b, 0, MAC_FILE);
	put32(b, ADOUBLE_MAGIC);
	put32(b + 4, ADOUBLE_VERSION2);
	memcpy(b + 8, ADOUBLE_FILLER_OSX, 16);
	b[25] = 2;
	put32(b + 26, ADOUBLE_EID_FINDERI);
	put32(b + 30, 50);
	put32(b + 34, MAC_TOTAL - 50);
	put32(b + 38, ADOUBLE_EID_RFORK);
	put32(b + 42, MAC_RF_OFF);
	put32(b + 46, 286);
	memcpy(b + 50, "TESTSLOW", 8);
	memcpy(b + 84, "ATTR", 4);
	put32(b + 92, MAC_TOTAL);
	put32(b + 96, 0x100);		/* data start */
	put32(b + 100, 0x20);		/* data length */
	b[119] = 2;			/* attributes */
	at = mac_put_entry(b, 120, 0x100, 8, MAC_TAGS);
	at = mac_put_entry(b, at, 0x108, 3, "foo:bar");
	ck_assert_uint_le(at, 0x100);
	memcpy(b + 0x100, "bplist00", 8);
	memcpy(b + 0x108, "baz", 3);
	memset(b + MAC_RF_OFF, 0xab, 286);
	return MAC_FILE;
}

START_TEST(test_conv_parse)
{
	static uint8_t b[MAC_FILE];
	struct adouble_conv c;
	struct adouble_xattr x;
	char name[64];
	size_t n = mac_ad(b);

	ck_assert_int_eq(adouble_conv_wanted(b, 82), 1);
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), 0);
	ck_assert_int_eq(c.osx, 1);
	ck_assert_uint_eq(c.fi_len, MAC_TOTAL - 50);
	ck_assert_uint_eq(c.rf_off, MAC_RF_OFF);
	ck_assert_uint_eq(c.rf_len, 286);
	ck_assert_uint_eq(c.nattr, 2);
	ck_assert_int_eq(adouble_conv_xattr(b, n, &c, 0, &x), 0);
	ck_assert_uint_eq(x.name_len, strlen(MAC_TAGS));
	ck_assert(memcmp(x.name, MAC_TAGS, x.name_len) == 0);
	ck_assert_uint_eq(x.off, 0x100);
	ck_assert_uint_eq(x.len, 8);
	ck_assert_int_eq(adouble_conv_xattr(b, n, &c, 1, &x), 0);
	ck_assert_uint_eq(x.len, 3);
	ck_assert(memcmp(b + x.off, "baz", 3) == 0);
	ck_assert_int_eq(adouble_xattr_stream_name(x.name, x.name_len, name,
	    sizeof(name)), 9);
	ck_assert_str_eq(name, "foo\xef\x80\xa2" "bar");
	ck_assert_int_eq(adouble_conv_xattr(b, n, &c, 2, &x), -1);
	/* a fork running past the end is cut there */
	ck_assert_int_eq(adouble_conv_parse(b, n - 6, n - 6, &c), 0);
	ck_assert_uint_eq(c.rf_len, 280);
	/* Samba's own layout is not converted */
	adouble_rsrc_new(b);
	ck_assert_int_eq(adouble_conv_wanted(b, 82), 0);
	ck_assert_int_eq(adouble_conv_wanted(b, 81), 0);
}
END_TEST

/* Every prefix of the file, as the file: refused or wholly inside. */
START_TEST(test_conv_truncations)
{
	static uint8_t b[MAC_FILE];
	struct adouble_conv c;
	struct adouble_xattr x;
	size_t n = mac_ad(b), len;
	unsigned i;

	for (len = 0; len < n; len++) {
		if (adouble_conv_parse(b, len, len, &c) != 0)
			continue;
		ck_assert_uint_le(c.rf_off + c.rf_len, len);
		for (i = 0; i < c.nattr; i++) {
			ck_assert_int_eq(adouble_conv_xattr(b, len, &c, i, &x),
			    0);
			ck_assert_uint_le((uint64_t)x.off + x.len, len);
		}
	}
	/* the header bytes read may be fewer than the file */
	ck_assert_int_eq(adouble_conv_parse(b, 0x1ff, n, &c), -1);
	ck_assert_int_eq(adouble_conv_parse(b, 0x200, n, &c), 0);
}
END_TEST

/* Each field of a valid file made wrong: refused. */
START_TEST(test_conv_malformed)
{
	static uint8_t b[MAC_FILE];
	struct adouble_conv c;
	static const struct { size_t at; uint32_t v; } bad[] = {
		{ 30, 52 },			/* Finder info not at 50 */
		{ 34, 16 },			/* Finder info under 32 bytes */
		{ 34, 0x7fffffff },		/* Finder info past the end */
		{ 42, 0x100 },			/* fork inside the Finder info */
		{ 42, 60 },			/* fork over the header */
		{ 42, MAC_FILE + 1 },		/* fork past the end */
		{ 84, 0x41545453 },		/* not "ATTR" */
		{ 92, MAC_RF_OFF + 1 },		/* block past the fork */
		{ 96, 0x60 },			/* data start in the header */
		{ 100, 0x101 },			/* data past the block */
		{ 100, 0xffffff00 },		/* data length wrapping */
		{ 116, 0x401 },			/* 1025 attributes */
		{ 116, 0x30 },			/* entries running into the data */
		{ 120, MAC_TOTAL },		/* attribute at the block's end */
		{ 124, MAC_TOTAL },		/* attribute past the block */
		{ 120, 0xfffffff0 },		/* offset + length wrapping */
	};
	unsigned i;
	size_t n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = mac_ad(b);
		put32(b + bad[i].at, bad[i].v);
		ck_assert_msg(adouble_conv_parse(b, n, n, &c) == -1,
		    "field at %zu = 0x%x accepted", bad[i].at, bad[i].v);
	}
	/* a name length of 0, a name running into the data, an empty name */
	n = mac_ad(b);
	b[130] = 0;
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), -1);
	n = mac_ad(b);
	b[130] = 0xff;
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), -1);
	n = mac_ad(b);
	b[131] = 0;
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), -1);
	/* three entries, a repeated Finder info */
	n = mac_ad(b);
	b[25] = 3;
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), -1);
	n = mac_ad(b);
	put32(b + 38, ADOUBLE_EID_FINDERI);
	ck_assert_int_eq(adouble_conv_parse(b, n, n, &c), -1);
}
END_TEST

START_TEST(test_conv_header)
{
	static uint8_t b[MAC_FILE];
	uint8_t h[ADOUBLE_RSRC_HDR], want[ADOUBLE_RSRC_HDR];
	struct adouble_rsrc r;

	mac_ad(b);
	adouble_conv_header(h, b, ADOUBLE_RSRC_HDR, 286);
	/* Samba's 82 bytes with the fork's length and the Finder info */
	adouble_rsrc_new(want);
	put32(want + 34, 286);
	memcpy(want + 50, "TESTSLOW", 8);
	ck_assert(memcmp(h, want, sizeof(h)) == 0);
	ck_assert_int_eq(adouble_conv_wanted(h, sizeof(h)), 0);
	ck_assert_int_eq(adouble_rsrc_parse(h, sizeof(h), 82 + 286, &r), 0);
	ck_assert_uint_eq(r.off, 82);
	ck_assert_uint_eq(r.len, 286);
}
END_TEST

START_TEST(test_rfork_blank)
{
	static const char note[] =
	    "This resource fork intentionally left blank   ";
	uint8_t f[286];

	memset(f, 0, sizeof(f));
	f[2] = 1; f[6] = 1; f[15] = 0x1e;
	memcpy(f + 16, note, sizeof(note) - 1);
	f[258] = 1; f[262] = 1; f[271] = 0x1e;
	f[281] = 0x1c; f[283] = 0x1e; f[284] = 0xff; f[285] = 0xff;
	ck_assert_int_eq(adouble_rfork_blank(f, sizeof(f)), 1);
	ck_assert_int_eq(adouble_rfork_blank(f, sizeof(f) - 1), 0);
	f[100] = 1;
	ck_assert_int_eq(adouble_rfork_blank(f, sizeof(f)), 0);
}
END_TEST

START_TEST(test_stream_name)
{
	char out[64];

	/* Samba's macos_string_replace_map, to the Windows side */
	ck_assert_int_eq(adouble_xattr_stream_name("a\"*:<>?\\|\x01\x1f", 11,
	    out, sizeof(out)), 1 + 10 * 3);
	ck_assert_str_eq(out, "a\xef\x80\xa0\xef\x80\xa1\xef\x80\xa2"
	    "\xef\x80\xa3\xef\x80\xa4\xef\x80\xa5\xef\x80\xa6\xef\x80\xa7"
	    "\xef\x80\x81\xef\x80\x9f");
	/* '/' and the rest are kept (the stream name check refuses '/') */
	ck_assert_int_eq(adouble_xattr_stream_name("a/b.c", 5, out,
	    sizeof(out)), 5);
	ck_assert_str_eq(out, "a/b.c");
	ck_assert_int_eq(adouble_xattr_stream_name("abc", 3, out, 3), -1);
	ck_assert_int_eq(adouble_xattr_stream_name(":", 1, out, 3), -1);
	ck_assert_int_eq(adouble_xattr_stream_name(":", 1, out, 4), 3);
}
END_TEST

/* fruit:encoding = native: U+F001-U+F027 back to ASCII, in place */
START_TEST(test_name_native)
{
	char s[64];
	size_t i, n;

	strcpy(s, "a\xef\x80\xa2" "b\xef\x80\xa6\xef\x80\x81" "x"
	    "\xef\x80\xa8\xef\x80\x80\xef\x80");
	n = adouble_name_native(s);
	/* U+F028 and U+F000 are not Samba's; a cut sequence is kept */
	ck_assert_str_eq(s, "a:b\\\x01x\xef\x80\xa8\xef\x80\x80\xef\x80");
	ck_assert_uint_eq(n, strlen(s));
	/* every mapped character comes back, none is '/' */
	for (i = 0xf001; i <= 0xf027; i++) {
		char one[4] = { (char)(0xe0 | i >> 12),
		    (char)(0x80 | (i >> 6 & 0x3f)), (char)(0x80 | (i & 0x3f)),
		    0 };
		char back[8];

		ck_assert_uint_eq(adouble_name_native(one), 1);
		ck_assert(one[0] != '/' && one[0] != '\0');
		ck_assert_int_eq(adouble_name_private(one, 1, back,
		    sizeof(back)), 3);
		ck_assert_uint_eq((unsigned char)back[2], 0x80 | (i & 0x3f));
	}
}
END_TEST

static Suite *
adouble_suite(void)
{
	Suite *s = suite_create("adouble");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_new_layout);
	tcase_add_test(tc, test_afpinfo);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_set_in_place);
	tcase_add_test(tc, test_rsrc_new);
	tcase_add_test(tc, test_rsrc_truncations);
	tcase_add_test(tc, test_rsrc_malformed);
	tcase_add_test(tc, test_conv_parse);
	tcase_add_test(tc, test_conv_truncations);
	tcase_add_test(tc, test_conv_malformed);
	tcase_add_test(tc, test_conv_header);
	tcase_add_test(tc, test_rfork_blank);
	tcase_add_test(tc, test_stream_name);
	tcase_add_test(tc, test_name_native);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(adouble_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
