/*
 * AppleDouble (RFC 1740's version 2 layout, as netatalk and Samba's
 * vfs_fruit keep it): the blob in the xattr `org.netatalk.Metadata`
 * (`fruit:metadata = netatalk`) that holds a file's Finder info.  A
 * header (magic, version, 16 filler bytes, entry count), then 12-byte
 * entries (id, offset, length), all big-endian, then the entries' data.
 * Samba writes 402 bytes with eight entries (source3/lib/adouble.c
 * AD_DATASZ_XATTR, read to understand; the layout here is written from
 * the format).  Everything read from a blob is bounds-checked: it is a
 * user's xattr, written by any program the user runs.
 */
#ifndef USMBD_PROTO_ADOUBLE_H
#define USMBD_PROTO_ADOUBLE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/aapl.h"

/* the xattr name on Linux: netatalk's, in the user namespace */
#define ADOUBLE_META_XATTR	"user.org.netatalk.Metadata"

#define ADOUBLE_MAGIC		0x00051607u	/* AppleDouble */
#define ADOUBLE_VERSION2	0x00020000u
#define ADOUBLE_HDR_LEN		26	/* magic, version, filler, count */
#define ADOUBLE_ENTRY_LEN	12	/* id, offset, length */

/* entry ids (RFC 1740 and netatalk's private ones) */
#define ADOUBLE_EID_RFORK	2
#define ADOUBLE_EID_COMMENT	4
#define ADOUBLE_EID_FILEDATES	8
#define ADOUBLE_EID_FINDERI	9
#define ADOUBLE_EID_AFPFILEI	14
#define ADOUBLE_EID_PRIVDEV	0x80444556u
#define ADOUBLE_EID_PRIVINO	0x80494E4Fu
#define ADOUBLE_EID_PRIVSYN	0x8053594Eu
#define ADOUBLE_EID_PRIVID	0x8053567Eu

#define ADOUBLE_FINDERI_LEN	32

/* the metadata blob as netatalk and Samba write it: eight entries */
#define ADOUBLE_META_SIZE	402
/*
 * What a reader accepts: a blob of other tools may carry a longer
 * comment or more entries; past this it is not metadata we know.
 */
#define ADOUBLE_META_MAX	1024

/*
 * The offset of the Finder info (32 bytes at least) in an AppleDouble
 * blob, or -1 when the blob is malformed: wrong magic or version, an
 * entry table or an entry past the end, an unknown or repeated id, a
 * fixed-size entry of another size, no Finder info.
 */
long	adouble_finderinfo_off(const uint8_t *buf, size_t len);

/*
 * The AfpInfo record a Mac reads (Samba's fruit_pread_meta_adouble):
 * signature, version, backup time "never", the blob's Finder info, zeros.
 * 0, or -1 when the blob is malformed.
 */
int	adouble_meta_to_afpinfo(const uint8_t *buf, size_t len,
	    uint8_t rec[AFPINFO_SIZE]);

/*
 * A new 402-byte metadata blob (Samba's ad_init for the xattr): the
 * eight entries, the dates set to now (seconds since 1970; AppleDouble
 * counts from 2000), backup "never", the Finder info zero.
 */
void	adouble_meta_new(uint8_t buf[ADOUBLE_META_SIZE], int64_t now);

/*
 * Stores the Finder info of rec (an AfpInfo record) into the blob of len
 * bytes in buf (cap bytes room): in place when the blob is well formed,
 * so its comment, dates and the rest are kept; else into a new blob.
 * Returns the blob's length to write.  cap >= ADOUBLE_META_SIZE.
 */
size_t	adouble_meta_set(uint8_t *buf, size_t len, size_t cap,
	    const uint8_t rec[AFPINFO_SIZE], int64_t now);

/*
 * Does the stream list show AFP_AfpInfo for this blob (Samba's
 * fruit_streaminfo_meta_netatalk): well formed, Finder info not all
 * zeros?  1 or 0.
 */
int	adouble_meta_listed(const uint8_t *buf, size_t len);

/*
 * `fruit:resource = file` (Samba's default): a file's resource fork is
 * the resource-fork entry of the AppleDouble file "._NAME" beside it.
 * Samba writes 82 bytes of header: the filler "Netatalk        ", two
 * entries by id (the resource fork's, then the Finder info's: 32 bytes
 * at 50), the resource fork's bytes at 82, last, so that it grows at the end of the file.  A Mac's own "._"
 * files carry more in an extended Finder info (its xattrs) and their
 * fork further on; those are read where they are.
 */
#define ADOUBLE_RSRC_PREFIX	"._"
#define ADOUBLE_RSRC_HDR	82	/* Samba's AD_DATASZ_DOT_UND */
#define ADOUBLE_RSRC_FI_OFF	50	/* the Finder info, after 2 entries */

struct adouble_rsrc {
	uint64_t	off;		/* where the fork's bytes begin */
	uint64_t	len;		/* its length, cut at the file's end */
	uint32_t	len_at;		/* where its length field is */
};

/*
 * Parses the header of a "._" file of fsize bytes (buf holds its first
 * len bytes, len >= ADOUBLE_RSRC_HDR or the whole file) as Samba's
 * ad_read_rsrc_adouble accepts it: magic and version, exactly two
 * entries, the Finder info at 50 of at least 32 bytes, the resource fork
 * after it and after every other byte of the header (it is last), at or
 * past 82 and not past the file's end; a length running past the end is
 * cut there (as Samba does).  0, or -1 when malformed.
 */
int	adouble_rsrc_parse(const uint8_t *buf, size_t len, uint64_t fsize,
	    struct adouble_rsrc *r);

/* A new header (82 bytes), as Samba's ad_init for a "._" file. */
void	adouble_rsrc_new(uint8_t buf[ADOUBLE_RSRC_HDR]);

/* The 4 big-endian bytes of a new fork length, for the length field. */
void	adouble_rsrc_len_put(uint8_t out[4], uint32_t len);

/*
 * A Mac's own "._" file (Samba's ad_convert): the filler "Mac OS X",
 * and a Finder info entry longer than 32 bytes that carries, after 2
 * bytes of padding, an "ATTR" header of 36 bytes and the file's
 * extended attributes (entries of offset, length, flags, name length
 * and a NUL-terminated UTF-8 name, each 4-aligned; their data inside
 * the block).  Every offset and length is checked against the block,
 * the bytes read and the file's size, as Samba's ad_unpack_xattrs
 * checks them and more: a "._" file is any user's input.
 */
#define ADOUBLE_CONV_MAX	65536	/* the header read: Samba's limit */
#define ADOUBLE_ATTR_HDR	36
#define ADOUBLE_ATTR_MAX	1024	/* entries: Samba's limit */
#define ADOUBLE_FILLER_OSX	"Mac OS X        "
#define ADOUBLE_FILLER_NETATALK	"Netatalk        "

struct adouble_conv {
	int		osx;		/* filler "Mac OS X": Finder info to AfpInfo */
	uint32_t	fi_len;		/* Finder info entry (at 50) */
	uint64_t	rf_off;		/* the fork: where it is now */
	uint64_t	rf_len;		/* its length, cut at the file's end */
	uint16_t	nattr;		/* extended attributes (fi_len > 32) */
	uint32_t	first;		/* where the first entry is */
	uint32_t	data_start;
};

struct adouble_xattr {
	const char	*name;		/* NUL-terminated, inside the buffer */
	size_t		 name_len;
	uint32_t	 off;		/* its data in the buffer */
	uint32_t	 len;
};

/*
 * Parses the header of a "._" file of fsize bytes, the first len bytes
 * of which are in buf (the whole file up to ADOUBLE_CONV_MAX): exactly
 * the Finder info at 50 (32 bytes or more) and the fork at or past 82,
 * after it, not past the file's end; with an ATTR block when the Finder
 * info is longer, every entry checked.  0, or -1 when malformed.
 */
int	adouble_conv_parse(const uint8_t *buf, size_t len, uint64_t fsize,
	    struct adouble_conv *c);
/* The i-th attribute of a parsed block (i < c->nattr): 0, or -1. */
int	adouble_conv_xattr(const uint8_t *buf, size_t len,
	    const struct adouble_conv *c, unsigned i, struct adouble_xattr *x);
/*
 * Does a "._" file need converting (its first 82 bytes in buf): a Mac's
 * filler or a Finder info longer than 32 bytes?  1 or 0.
 */
int	adouble_conv_wanted(const uint8_t *buf, size_t len);
/*
 * The 82-byte header of the converted file: Samba's filler and order,
 * the fork at rf_off (82 once moved) with rf_len bytes, the first 32
 * bytes of old's Finder info kept.
 */
void	adouble_conv_header(uint8_t buf[ADOUBLE_RSRC_HDR],
	    const uint8_t *old, uint32_t rf_off, uint32_t rf_len);
/*
 * Is the fork (len bytes at p) the empty resource map a Mac writes ("This
 * resource fork intentionally left blank")?  1 or 0.
 */
int	adouble_rfork_blank(const uint8_t *p, size_t len);
#define ADOUBLE_RFORK_BLANK_LEN	286
/*
 * A stream name for attribute name as Samba's macos_string_replace_map
 * gives it: 0x01-0x1f and " * : < > ? \ | become U+F001-U+F027 (UTF-8),
 * the rest is kept.  The length (NUL written), or -1 when out is too
 * small.
 */
int	adouble_xattr_stream_name(const char *name, size_t len, char *out,
	    size_t cap);
/*
 * fruit:encoding = native (Samba's catia with macos_string_replace_map):
 * the same mapping both ways for names.  adouble_name_private is the
 * one above (on disk to the wire); adouble_name_native maps a name the
 * client sent, in place (it only shrinks), U+F001-U+F027 back to the
 * ASCII they stand for, and returns its length.  Neither ever produces
 * '/' nor NUL.
 */
int	adouble_name_private(const char *name, size_t len, char *out,
	    size_t cap);
size_t	adouble_name_native(char *s);

#endif
