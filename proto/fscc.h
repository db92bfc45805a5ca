/*
 * MS-FSCC information classes: constants and encoders.  Pure code: the
 * caller fills a struct fscc_info from whatever it stat'ed and these write
 * the wire layouts through a write cursor.
 */
#ifndef USMBD_PROTO_FSCC_H
#define USMBD_PROTO_FSCC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/cur.h"

/* MS-FSCC 2.4 file information classes */
#define FileDirectoryInformation	1
#define FileFullDirectoryInformation	2
#define FileBothDirectoryInformation	3
#define FileBasicInformation		4
#define FileStandardInformation		5
#define FileInternalInformation		6
#define FileEaInformation		7
#define FileAccessInformation		8
#define FileNameInformation		9
#define FileRenameInformation		10
#define FileLinkInformation		11
#define FileNamesInformation		12
#define FileDispositionInformation	13
#define FilePositionInformation		14
#define FileFullEaInformation		15
#define FileModeInformation		16
#define FileAlignmentInformation	17
#define FileAllInformation		18
#define FileAllocationInformation	19
#define FileEndOfFileInformation	20
#define FileAlternateNameInformation	21
#define FileStreamInformation		22
#define FileCompressionInformation	28
#define FileNetworkOpenInformation	34
#define FileAttributeTagInformation	35
#define FileIdBothDirectoryInformation	37
#define FileIdFullDirectoryInformation	38
#define FileNormalizedNameInformation	48
#define FileIdExtdDirectoryInformation	60
#define FileDispositionInformationEx	64
#define FileRenameInformationEx		65

/* MS-FSCC 2.5 file system information classes */
#define FileFsVolumeInformation		1
#define FileFsSizeInformation		3
#define FileFsDeviceInformation		4
#define FileFsAttributeInformation	5
#define FileFsControlInformation	6
#define FileFsFullSizeInformation	7
#define FileFsObjectIdInformation	8
#define FileFsSectorSizeInformation	11

/* MS-FSCC 2.6 file attributes */
#define FILE_ATTRIBUTE_READONLY		0x00000001u
#define FILE_ATTRIBUTE_HIDDEN		0x00000002u
#define FILE_ATTRIBUTE_SYSTEM		0x00000004u
#define FILE_ATTRIBUTE_DIRECTORY	0x00000010u
#define FILE_ATTRIBUTE_ARCHIVE		0x00000020u
#define FILE_ATTRIBUTE_NORMAL		0x00000080u
#define FILE_ATTRIBUTE_TEMPORARY	0x00000100u
#define FILE_ATTRIBUTE_SPARSE_FILE	0x00000200u
#define FILE_ATTRIBUTE_REPARSE_POINT	0x00000400u
#define FILE_ATTRIBUTE_COMPRESSED	0x00000800u
#define FILE_ATTRIBUTE_OFFLINE		0x00001000u
#define FILE_ATTRIBUTE_NOT_CONTENT_INDEXED 0x00002000u
#define FILE_ATTRIBUTE_ENCRYPTED	0x00004000u
#define FILE_ATTRIBUTE_INTEGRITY_STREAM	0x00008000u
/* the attributes a client may set and we keep */
#define FILE_ATTRIBUTE_SETTABLE		(FILE_ATTRIBUTE_READONLY | \
	FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_ARCHIVE | \
	FILE_ATTRIBUTE_TEMPORARY | FILE_ATTRIBUTE_OFFLINE | \
	FILE_ATTRIBUTE_NOT_CONTENT_INDEXED)

/* MS-FSCC 2.5.1 file system attributes */
#define FILE_CASE_SENSITIVE_SEARCH	0x00000001u
#define FILE_CASE_PRESERVED_NAMES	0x00000002u
#define FILE_UNICODE_ON_DISK		0x00000004u
#define FILE_PERSISTENT_ACLS		0x00000008u
#define FILE_SUPPORTS_SPARSE_FILES	0x00000040u
#define FILE_SUPPORTS_OBJECT_IDS	0x00010000u
#define FILE_NAMED_STREAMS		0x00040000u
#define FILE_SUPPORTS_HARD_LINKS	0x00400000u
#define FILE_SUPPORTS_BLOCK_REFCOUNTING	0x08000000u

/* FILETIME: 100 ns units since 1601-01-01 */
#define FSCC_TIME_UNIX_EPOCH	116444736000000000ull

/* Everything the file classes report, in host order. */
struct fscc_info {
	uint64_t	 creation;	/* FILETIME */
	uint64_t	 access;
	uint64_t	 write;
	uint64_t	 change;
	uint64_t	 eof;
	uint64_t	 alloc;
	uint32_t	 attrs;
	uint32_t	 nlink;
	uint64_t	 file_id;
	uint32_t	 ea_size;
	uint32_t	 reparse_tag;	/* a symlink or special file opened itself */
	uint8_t		 delete_pending;
	uint8_t		 directory;
	/* the 8.3 name of the Both directory classes, UTF-16LE; 0: none */
	uint8_t		 short_len;
	uint8_t		 short16[24];
};

uint64_t	fscc_time_from_timespec(const struct timespec *);
/* 0 and -1 are not times; the caller handles them before calling. */
struct timespec	fscc_time_to_timespec(uint64_t ft);

/* Fixed-layout file classes (MS-FSCC 2.4.x); each returns the bytes written. */
void	fscc_put_basic(struct wcur *, const struct fscc_info *);		/* 40 */
void	fscc_put_standard(struct wcur *, const struct fscc_info *);	/* 24 */
void	fscc_put_network_open(struct wcur *, const struct fscc_info *);	/* 56 */
void	fscc_put_attribute_tag(struct wcur *, const struct fscc_info *);	/* 8 */
void	fscc_put_compression(struct wcur *, const struct fscc_info *);	/* 16 */
/*
 * FileAllInformation: fixed part (100 bytes) then the name (UTF-16LE, the
 * bytes that fit), returns the full length needed.
 */
size_t	fscc_put_all(struct wcur *, const struct fscc_info *, uint32_t access,
	    uint64_t position, uint32_t mode, const uint8_t *name16,
	    size_t name16_len);

/* Fixed size of a directory entry of a class without its name, or 0 for an
 * unsupported class. */
size_t	fscc_dirent_fixed(int info_class);
/*
 * Appends one directory entry at an 8-aligned position of w (the caller
 * aligns and patches the previous entry's NextEntryOffset).  Returns the
 * length written, or 0 when it does not fit (nothing written).
 */
size_t	fscc_put_dirent(struct wcur *w, int info_class,
	    const struct fscc_info *, uint32_t file_index, const uint8_t *name16,
	    size_t name16_len);

/*
 * One FILE_STREAM_INFORMATION entry (MS-FSCC 2.4.44); returns the length
 * written or 0 if it does not fit.
 */
size_t	fscc_put_stream(struct wcur *, const uint8_t *name16, size_t len,
	    uint64_t size, uint64_t alloc);

/* File system classes (MS-FSCC 2.5.x) */
struct fscc_fs {
	uint64_t	 total_units;
	uint64_t	 avail_units;		/* for the caller */
	uint64_t	 actual_avail_units;
	uint32_t	 sectors_per_unit;
	uint32_t	 bytes_per_sector;
	uint32_t	 serial;
	uint64_t	 volume_created;	/* FILETIME */
	uint32_t	 fs_attrs;
	uint32_t	 max_name;
	uint8_t		 object_id[16];
};

/*
 * A disk quota of limit bytes, used of them, as the size and free space a
 * user sees (units of unit bytes): the limit where it is less than the
 * file system's size, what is left of it where that is less than what is
 * free, nothing free and the size what is used once over it (Samba's
 * free-space answer).  limit 0: no quota, nothing changes.
 */
void	fscc_fs_apply_quota(struct fscc_fs *, uint64_t limit, uint64_t used,
	    uint64_t unit);

/* Each returns 0, or -1 when the class is unknown. */
int	fscc_put_fs(struct wcur *, int info_class, const struct fscc_fs *,
	    const uint8_t *label16, size_t label16_len);

/*
 * MS-FSA 2.1.4.4 name matching with the wildcards * ? and the DOS < > ".
 * Both strings are UTF-8; returns 1 on a match.  Names and patterns longer
 * than FSCC_MATCH_MAX code points never match.
 */
#define FSCC_MATCH_MAX	512
int	fscc_name_match(const char *pattern, size_t plen, const char *name,
	    size_t nlen, int case_sensitive);

/*
 * Decoders of what clients send.  Each reads through a bounds-checked
 * cursor and hands back host values and views into the buffer.
 */

/* MS-FSCC 2.4.15 FILE_FULL_EA_INFORMATION: one entry of a list */
struct fscc_ea {
	uint8_t		 flags;
	const uint8_t	*name;		/* name_len bytes, NUL not counted */
	uint8_t		 name_len;
	const uint8_t	*value;
	uint16_t	 value_len;
	int		 last;		/* NextEntryOffset was 0 */
};
/*
 * Decodes the entry at *pos of buf[0, len) and moves *pos to the next
 * (NextEntryOffset: 4-aligned, inside the list).  0, or -1 when malformed.
 */
int	fscc_ea_next(const uint8_t *buf, size_t len, size_t *pos,
	    struct fscc_ea *);

/* MS-FSCC 2.4.15.1 FILE_GET_EA_INFORMATION: one name of a query list */
struct fscc_get_ea {
	const uint8_t	*name;		/* name_len bytes, NUL not counted */
	uint8_t		 name_len;
	int		 last;		/* NextEntryOffset was 0 */
};
/* The same walk over a list of names (the NUL after each is required). */
int	fscc_get_ea_next(const uint8_t *buf, size_t len, size_t *pos,
	    struct fscc_get_ea *);

/*
 * MS-FSCC 2.4.42.2 FILE_RENAME_INFORMATION (SMB2 form) and 2.4.27.2
 * FILE_LINK_INFORMATION, which share a layout.  0, or -1 when short or
 * the name is empty.
 */
int	fscc_rename_decode(struct cur *, int *replace, const uint8_t **name16,
	    uint32_t *name16_len);

/* MS-FSCC 2.3.67 FILE_ZERO_DATA_INFORMATION: 0, or -1 when short */
int	fscc_zero_data_decode(struct cur *, uint64_t *off, uint64_t *end);

/*
 * MS-SMB2 2.2.31.1 SRV_COPYCHUNK_COPY: the 24-byte SourceKey, then
 * ChunkCount entries of 2.2.31.1.1 SRV_COPYCHUNK (24 bytes each).  The
 * decoder checks the framing only; the server's limits (count, chunk and
 * total lengths, MS-SMB2 3.3.3) are the caller's policy.
 */
#define FSCC_COPYCHUNK_KEY_LEN	24
#define FSCC_COPYCHUNK_LEN	24
struct fscc_copychunk {
	const uint8_t	*key;		/* FSCC_COPYCHUNK_KEY_LEN bytes */
	uint32_t	 count;		/* ChunkCount */
	const uint8_t	*table;		/* count * FSCC_COPYCHUNK_LEN bytes */
};
struct fscc_chunk {
	uint64_t	 src_off;	/* SourceOffset */
	uint64_t	 dst_off;	/* TargetOffset */
	uint32_t	 len;		/* Length */
};
/*
 * 0; -1 when the fixed part (key, count, reserved) is short; -2 when the
 * input holds fewer than count chunks (cc->count is set either way, so the
 * caller can tell a count past its limit from a truncated table).
 */
int	fscc_copychunk_decode(struct cur *, struct fscc_copychunk *cc);
/* Chunk i of a decoded table: 0, or -1 when i >= cc->count. */
int	fscc_copychunk_get(const struct fscc_copychunk *cc, uint32_t i,
	    struct fscc_chunk *ch);

/*
 * MS-FSCC 2.3.7.2 SMB2_DUPLICATE_EXTENTS_DATA: the source open's FileId
 * (persistent, volatile), SourceFileOffset, TargetFileOffset, ByteCount
 * (40 bytes).  The offsets and the count are signed on the wire; they
 * come back as given, the caller refuses what is negative.  0, or -1
 * when the input is short.
 */
#define FSCC_DUP_EXTENTS_LEN	40
struct fscc_dup_extents {
	uint64_t	 fid_persistent;
	uint64_t	 fid_volatile;
	uint64_t	 src_off;
	uint64_t	 dst_off;
	uint64_t	 len;
};
int	fscc_dup_extents_decode(struct cur *, struct fscc_dup_extents *);

/*
 * MS-SMB2 2.2.31.3 NETWORK_RESILIENCY_REQUEST (FSCTL_LMR_REQUEST_RESILIENCY):
 * Timeout in milliseconds, then 4 reserved bytes (8 bytes).  *timeout_ms
 * is as given (0: the server's default); the server's maximum is the
 * caller's policy.  0, or -1 when the input is short.
 */
#define FSCC_RESILIENCY_LEN	8
int	fscc_resiliency_decode(struct cur *, uint32_t *timeout_ms);
/* FILE_NOTIFY_INFORMATION Action values that name a stream (MS-FSCC 2.7.1) */
#define FSCC_ACTION_ADDED_STREAM	6
#define FSCC_ACTION_MODIFIED_STREAM	8
/*
 * The length of the file's part of a change's name (n bytes): up to the
 * last ':' for a *_STREAM action ("file:stream"), the whole name for any
 * other, which names a file even when it holds a ':' (one made locally,
 * or stored by fruit:encoding = native).
 */
size_t	fscc_notify_file_len(uint32_t action, const char *name, size_t n);
/*
 * FILE_NOTIFY_INFORMATION entries (MS-FSCC 2.7.1) from a queue of changes
 * ([u32 action][u16 len][UTF-8 name, '/'-separated] ..., qlen bytes), each
 * name with '\\' separators; -1 when they do not fit max bytes.  A name
 * that is not valid UTF-8 is left out.  native (fruit:encoding = native):
 * the file's part of each name is sent as a Mac knows it, the characters
 * NTFS forbids as U+F001-U+F027 (proto/adouble.h adouble_name_private).
 */
int	fscc_notify_encode(const uint8_t *q, size_t qlen, struct wcur *out,
	    uint32_t max, int native);

#endif
