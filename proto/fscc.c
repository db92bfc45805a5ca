/*
 * Encoders for the MS-FSCC information classes and directory entries.
 */
#include "proto/fscc.h"

#include "proto/adouble.h"
#include "proto/unicode.h"

uint64_t
fscc_time_from_timespec(const struct timespec *ts)
{
	int64_t t = (int64_t)ts->tv_sec * 10000000 + ts->tv_nsec / 100;

	if (t < -(int64_t)FSCC_TIME_UNIX_EPOCH)
		return 0;
	return (uint64_t)(t + (int64_t)FSCC_TIME_UNIX_EPOCH);
}

struct timespec
fscc_time_to_timespec(uint64_t ft)
{
	struct timespec ts;
	int64_t t;

	if (ft > (uint64_t)INT64_MAX)
		ft = (uint64_t)INT64_MAX;
	t = (int64_t)ft - (int64_t)FSCC_TIME_UNIX_EPOCH;
	ts.tv_sec = t / 10000000;
	ts.tv_nsec = (long)(t % 10000000) * 100;
	if (ts.tv_nsec < 0) {
		ts.tv_sec -= 1;
		ts.tv_nsec += 1000000000;
	}
	return ts;
}

static void
put_times(struct wcur *w, const struct fscc_info *fi)
{
	wcur_le64(w, fi->creation);
	wcur_le64(w, fi->access);
	wcur_le64(w, fi->write);
	wcur_le64(w, fi->change);
}

void
fscc_put_basic(struct wcur *w, const struct fscc_info *fi)
{
	/* MS-FSCC 2.4.7 */
	put_times(w, fi);
	wcur_le32(w, fi->attrs);
	wcur_le32(w, 0);
}

void
fscc_put_standard(struct wcur *w, const struct fscc_info *fi)
{
	/* MS-FSCC 2.4.41 */
	wcur_le64(w, fi->alloc);
	wcur_le64(w, fi->eof);
	wcur_le32(w, fi->nlink);
	wcur_u8(w, fi->delete_pending);
	wcur_u8(w, fi->directory);
	wcur_le16(w, 0);
}

void
fscc_put_network_open(struct wcur *w, const struct fscc_info *fi)
{
	/* MS-FSCC 2.4.29 */
	put_times(w, fi);
	wcur_le64(w, fi->alloc);
	wcur_le64(w, fi->eof);
	wcur_le32(w, fi->attrs);
	wcur_le32(w, 0);
}

void
fscc_put_attribute_tag(struct wcur *w, const struct fscc_info *fi)
{
	/* MS-FSCC 2.4.6 */
	wcur_le32(w, fi->attrs);
	wcur_le32(w, fi->reparse_tag);
}

void
fscc_put_compression(struct wcur *w, const struct fscc_info *fi)
{
	/* MS-FSCC 2.4.9: not compressed, so the size is the file size */
	wcur_le64(w, fi->eof);
	wcur_le16(w, 0);	/* COMPRESSION_FORMAT_NONE */
	wcur_u8(w, 0);
	wcur_u8(w, 0);
	wcur_u8(w, 0);
	wcur_zero(w, 3);
}

size_t
fscc_put_all(struct wcur *w, const struct fscc_info *fi, uint32_t access,
    uint64_t position, uint32_t mode, const uint8_t *name16, size_t name16_len)
{
	size_t room;

	/* MS-FSCC 2.4.2 */
	fscc_put_basic(w, fi);
	fscc_put_standard(w, fi);
	wcur_le64(w, fi->file_id);	/* Internal */
	wcur_le32(w, fi->ea_size);	/* EA */
	wcur_le32(w, access);		/* Access */
	wcur_le64(w, position);		/* Position */
	wcur_le32(w, mode);		/* Mode */
	wcur_le32(w, 0);		/* Alignment: byte */
	wcur_le32(w, (uint32_t)name16_len);
	room = wcur_left(w);
	wcur_bytes(w, name16, name16_len < room ? name16_len : room);
	return 100 + name16_len;
}

size_t
fscc_dirent_fixed(int info_class)
{
	switch (info_class) {
	case FileDirectoryInformation:		return 64;
	case FileFullDirectoryInformation:	return 68;
	case FileBothDirectoryInformation:	return 94;
	case FileIdBothDirectoryInformation:	return 104;
	case FileIdFullDirectoryInformation:	return 80;
	case FileIdExtdDirectoryInformation:	return 88;
	case FileNamesInformation:		return 12;
	default:				return 0;
	}
}

size_t
fscc_put_dirent(struct wcur *w, int info_class, const struct fscc_info *fi,
    uint32_t file_index, const uint8_t *name16, size_t name16_len)
{
	size_t fixed = fscc_dirent_fixed(info_class), start;
	uint32_t ea;

	if (fixed == 0 || w->err || fixed + name16_len > wcur_left(w))
		return 0;
	start = wcur_off(w);
	wcur_le32(w, 0);		/* NextEntryOffset, patched by the caller */
	wcur_le32(w, file_index);
	if (info_class == FileNamesInformation) {
		/* MS-FSCC 2.4.33 */
		wcur_le32(w, (uint32_t)name16_len);
		goto name;
	}
	put_times(w, fi);
	wcur_le64(w, fi->eof);
	wcur_le64(w, fi->alloc);
	wcur_le32(w, fi->attrs);
	wcur_le32(w, (uint32_t)name16_len);
	/*
	 * MS-FSCC 2.4.8, 2.4.14, 2.4.17, 2.4.18: the EaSize of a reparse
	 * point holds its reparse tag instead (2.4.16 has a field of its own)
	 */
	ea = fi->attrs & FILE_ATTRIBUTE_REPARSE_POINT ? fi->reparse_tag :
	    fi->ea_size;
	switch (info_class) {
	case FileDirectoryInformation:		/* 2.4.10 */
		break;
	case FileFullDirectoryInformation:	/* 2.4.14 */
		wcur_le32(w, ea);
		break;
	case FileBothDirectoryInformation:	/* 2.4.8 */
	case FileIdBothDirectoryInformation:	/* 2.4.17 */
		wcur_le32(w, ea);
		/* ShortNameLength, Reserved, ShortName[24] */
		wcur_u8(w, fi->short_len <= 24 ? fi->short_len : 0);
		wcur_u8(w, 0);
		if (fi->short_len > 0 && fi->short_len <= 24) {
			wcur_bytes(w, fi->short16, fi->short_len);
			wcur_zero(w, 24u - fi->short_len);
		} else
			wcur_zero(w, 24);
		if (info_class == FileIdBothDirectoryInformation) {
			wcur_le16(w, 0);
			wcur_le64(w, fi->file_id);
		}
		break;
	case FileIdFullDirectoryInformation:	/* 2.4.18 */
		wcur_le32(w, ea);
		wcur_le32(w, 0);
		wcur_le64(w, fi->file_id);
		break;
	case FileIdExtdDirectoryInformation:	/* 2.4.16 */
		wcur_le32(w, fi->ea_size);
		wcur_le32(w, fi->attrs & FILE_ATTRIBUTE_REPARSE_POINT ?
		    fi->reparse_tag : 0);	/* ReparsePointTag */
		wcur_le64(w, fi->file_id);	/* 128-bit FileId, low half */
		wcur_le64(w, 0);
		break;
	}
name:
	wcur_bytes(w, name16, name16_len);
	return wcur_off(w) - start;
}

size_t
fscc_put_stream(struct wcur *w, const uint8_t *name16, size_t len,
    uint64_t size, uint64_t alloc)
{
	if (w->err || 24 + len > wcur_left(w))
		return 0;
	wcur_le32(w, 0);		/* NextEntryOffset, patched by the caller */
	wcur_le32(w, (uint32_t)len);
	wcur_le64(w, size);
	wcur_le64(w, alloc);
	wcur_bytes(w, name16, len);
	return 24 + len;
}

void
fscc_fs_apply_quota(struct fscc_fs *fs, uint64_t limit, uint64_t used,
    uint64_t unit)
{
	uint64_t left;

	if (limit == 0 || unit == 0)
		return;
	limit /= unit;
	used = used / unit + (used % unit != 0);
	if (used >= limit) {
		if (used < fs->total_units)
			fs->total_units = used;
		fs->avail_units = fs->actual_avail_units = 0;
		return;
	}
	left = limit - used;
	if (limit < fs->total_units)
		fs->total_units = limit;
	if (left < fs->avail_units)
		fs->avail_units = left;
	if (left < fs->actual_avail_units)
		fs->actual_avail_units = left;
}

int
fscc_put_fs(struct wcur *w, int info_class, const struct fscc_fs *fs,
    const uint8_t *label16, size_t label16_len)
{
	static const uint8_t ntfs16[] = { 'N', 0, 'T', 0, 'F', 0, 'S', 0 };

	switch (info_class) {
	case FileFsVolumeInformation:		/* 2.5.9 */
		wcur_le64(w, fs->volume_created);
		wcur_le32(w, fs->serial);
		wcur_le32(w, (uint32_t)label16_len);
		wcur_u8(w, 0);
		wcur_u8(w, 0);
		wcur_bytes(w, label16, label16_len);
		return 0;
	case FileFsSizeInformation:		/* 2.5.8 */
		wcur_le64(w, fs->total_units);
		wcur_le64(w, fs->avail_units);
		wcur_le32(w, fs->sectors_per_unit);
		wcur_le32(w, fs->bytes_per_sector);
		return 0;
	case FileFsDeviceInformation:		/* 2.5.10 */
		wcur_le32(w, 0x00000007);	/* FILE_DEVICE_DISK */
		wcur_le32(w, 0x00000020);	/* FILE_DEVICE_IS_MOUNTED */
		return 0;
	case FileFsAttributeInformation:	/* 2.5.1 */
		wcur_le32(w, fs->fs_attrs);
		wcur_le32(w, fs->max_name);
		wcur_le32(w, sizeof(ntfs16));
		wcur_bytes(w, ntfs16, sizeof(ntfs16));
		return 0;
	case FileFsFullSizeInformation:		/* 2.5.4 */
		wcur_le64(w, fs->total_units);
		wcur_le64(w, fs->avail_units);
		wcur_le64(w, fs->actual_avail_units);
		wcur_le32(w, fs->sectors_per_unit);
		wcur_le32(w, fs->bytes_per_sector);
		return 0;
	case FileFsObjectIdInformation:		/* 2.5.6 */
		wcur_bytes(w, fs->object_id, 16);
		wcur_zero(w, 48);
		return 0;
	case FileFsSectorSizeInformation:	/* 2.5.7 */
		wcur_le32(w, fs->bytes_per_sector);
		wcur_le32(w, fs->bytes_per_sector);
		wcur_le32(w, fs->bytes_per_sector);
		wcur_le32(w, fs->bytes_per_sector);
		/* SSINFO_FLAGS_ALIGNED_DEVICE | PARTITION_ALIGNED_ON_DEVICE */
		wcur_le32(w, 0x00000003);
		wcur_le32(w, 0);
		wcur_le32(w, 0);
		return 0;
	default:
		return -1;
	}
}

static size_t
match_decode(const char *s, size_t len, uint32_t *out, int fold)
{
	const char *e = s + len;
	size_t n = 0;
	uint32_t c;

	while (s < e) {
		if (n == FSCC_MATCH_MAX)
			return FSCC_MATCH_MAX + 1;
		c = unicode_utf8_next(&s, e);
		out[n++] = fold ? unicode_upper(c) : c;
	}
	return n;
}

int
fscc_name_match(const char *pattern, size_t plen, const char *name,
    size_t nlen, int case_sensitive)
{
	/* the worker is single-threaded; these stay off the stack */
	static uint32_t pat[FSCC_MATCH_MAX], nm[FSCC_MATCH_MAX];
	static uint8_t row[2][FSCC_MATCH_MAX + 1];
	size_t P, N, i, j, k;
	long last_dot = -1;
	uint8_t *cur, *nxt;
	uint32_t pc;

	if (plen == 1 && pattern[0] == '*')
		return 1;
	P = match_decode(pattern, plen, pat, !case_sensitive);
	N = match_decode(name, nlen, nm, !case_sensitive);
	if (P > FSCC_MATCH_MAX || N > FSCC_MATCH_MAX)
		return 0;
	for (j = 0; j < N; j++)
		if (nm[j] == '.')
			last_dot = (long)j;
	/*
	 * m[i][j]: pattern[i..] matches name[j..].  Rows from the end of the
	 * pattern; nxt is row i + 1, cur is row i.
	 */
	nxt = row[P % 2];
	for (j = 0; j <= N; j++)
		nxt[j] = j == N;
	for (k = P; k > 0; k--) {
		i = k - 1;
		cur = row[i % 2];
		pc = pat[i];
		for (j = N + 1; j > 0; j--) {
			size_t jj = j - 1;
			int m;

			switch (pc) {
			case '*':
				m = nxt[jj] || (jj < N && cur[jj + 1]);
				break;
			case '<':	/* DOS_STAR: up to the last dot */
				m = nxt[jj] || (jj < N && (long)jj != last_dot &&
				    cur[jj + 1]);
				break;
			case '>':	/* DOS_QM */
				if (jj == N || nm[jj] == '.')
					m = nxt[jj];
				else
					m = nxt[jj + 1];
				break;
			case '"':	/* DOS_DOT */
				m = (jj < N && nm[jj] == '.' && nxt[jj + 1]) ||
				    (jj == N && nxt[jj]);
				break;
			case '?':
				m = jj < N && nxt[jj + 1];
				break;
			default:
				m = jj < N && nm[jj] == pc && nxt[jj + 1];
				break;
			}
			cur[jj] = (uint8_t)m;
		}
		nxt = cur;
	}
	return nxt[0];
}

/*
 * The step to the next entry of an EA list (MS-FSCC 2.4.15, 2.4.15.1):
 * NextEntryOffset 0 ends it; otherwise 4-aligned and inside the buffer.
 */
static int
fscc_list_advance(uint32_t next, size_t len, size_t *pos)
{
	if (next == 0)
		return 0;
	if (next % 4 != 0 || next > len - *pos)
		return -1;
	*pos += next;
	return 0;
}

int
fscc_ea_next(const uint8_t *buf, size_t len, size_t *pos, struct fscc_ea *ea)
{
	struct cur c, e;
	uint32_t next;

	if (*pos >= len)
		return -1;
	cur_init(&c, buf, len);
	e = cur_sub(&c, *pos, len - *pos);
	next = cur_le32(&e);
	ea->flags = cur_u8(&e);
	ea->name_len = cur_u8(&e);
	ea->value_len = cur_le16(&e);
	ea->name = cur_view(&e, ea->name_len);
	cur_skip(&e, 1);			/* the name's NUL */
	ea->value = cur_view(&e, ea->value_len);
	if (e.err)
		return -1;
	ea->last = next == 0;
	return fscc_list_advance(next, len, pos);
}

int
fscc_get_ea_next(const uint8_t *buf, size_t len, size_t *pos,
    struct fscc_get_ea *g)
{
	struct cur c, e;
	uint32_t next;

	if (*pos >= len)
		return -1;
	cur_init(&c, buf, len);
	e = cur_sub(&c, *pos, len - *pos);
	next = cur_le32(&e);
	g->name_len = cur_u8(&e);
	g->name = cur_view(&e, g->name_len);
	cur_skip(&e, 1);			/* the name's NUL */
	if (e.err)
		return -1;
	g->last = next == 0;
	return fscc_list_advance(next, len, pos);
}

int
fscc_rename_decode(struct cur *b, int *replace, const uint8_t **name16,
    uint32_t *name16_len)
{
	*replace = cur_u8(b) != 0;
	cur_skip(b, 7 + 8);		/* Reserved, RootDirectory (0 in SMB2) */
	*name16_len = cur_le32(b);
	*name16 = cur_view(b, *name16_len);
	return b->err || *name16_len == 0 ? -1 : 0;
}

int
fscc_zero_data_decode(struct cur *in, uint64_t *off, uint64_t *end)
{
	*off = cur_le64(in);
	*end = cur_le64(in);
	return in->err ? -1 : 0;
}

int
fscc_resiliency_decode(struct cur *in, uint32_t *timeout_ms)
{
	*timeout_ms = cur_le32(in);
	cur_skip(in, 4);			/* Reserved: ignored */
	return in->err ? -1 : 0;
}

int
fscc_copychunk_decode(struct cur *in, struct fscc_copychunk *cc)
{
	cc->key = cur_view(in, FSCC_COPYCHUNK_KEY_LEN);
	cc->count = cur_le32(in);
	cur_skip(in, 4);			/* Reserved */
	cc->table = NULL;
	if (in->err)
		return -1;
	/* 64-bit size_t: count * 24 cannot wrap */
	if (cur_left(in) / FSCC_COPYCHUNK_LEN < cc->count)
		return -2;
	cc->table = cur_view(in, (size_t)cc->count * FSCC_COPYCHUNK_LEN);
	return in->err ? -2 : 0;
}

int
fscc_copychunk_get(const struct fscc_copychunk *cc, uint32_t i,
    struct fscc_chunk *ch)
{
	struct cur c;

	if (i >= cc->count || cc->table == NULL)
		return -1;
	cur_init(&c, cc->table + (size_t)i * FSCC_COPYCHUNK_LEN,
	    FSCC_COPYCHUNK_LEN);
	ch->src_off = cur_le64(&c);
	ch->dst_off = cur_le64(&c);
	ch->len = cur_le32(&c);
	cur_skip(&c, 4);			/* Reserved */
	return c.err ? -1 : 0;
}

int
fscc_dup_extents_decode(struct cur *in, struct fscc_dup_extents *d)
{
	d->fid_persistent = cur_le64(in);
	d->fid_volatile = cur_le64(in);
	d->src_off = cur_le64(in);
	d->dst_off = cur_le64(in);
	d->len = cur_le64(in);
	return in->err ? -1 : 0;
}

size_t
fscc_notify_file_len(uint32_t action, const char *name, size_t n)
{
	const char *colon;

	/*
	 * MS-FSCC 2.7.1: only the *_STREAM actions name a stream, and a
	 * stream name holds no ':' (MS-FSCC 2.1.5.3): the last one
	 * separates.  Any other name is a file's, ':' or not.
	 */
	if (action < FSCC_ACTION_ADDED_STREAM ||
	    action > FSCC_ACTION_MODIFIED_STREAM ||
	    (colon = memrchr(name, ':', n)) == NULL)
		return n;
	return (size_t)(colon - name);
}

int
fscc_notify_encode(const uint8_t *q, size_t qlen, struct wcur *out,
    uint32_t max, int native)
{
	uint8_t name16[1024];
	uint8_t *prev = NULL, *start;
	size_t pos = 0, total = 0;
	uint32_t action;
	size_t n, fl;
	int u;
	char name[512], *p, *c;
	/* mapped: at most 3 bytes a character, then the stream part */
	char mapped[3 * sizeof(name)];

	while (pos + 6 <= qlen) {
		action = le32_get(q + pos);
		n = (size_t)q[pos + 4] | (size_t)q[pos + 5] << 8;
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, q + pos + 6, n);
		name[n] = '\0';
		pos += 6 + ((size_t)q[pos + 4] | (size_t)q[pos + 5] << 8);
		n = strlen(name);
		p = name;
		/*
		 * fruit:encoding = native: the file's part as the Mac knows
		 * it (U+F0xx: never a '/', and one UTF-16 unit for one, so
		 * name16 holds it); a stream's part is kept, as the stream
		 * list shows it.
		 */
		if (native) {
			fl = fscc_notify_file_len(action, name, n);
			u = adouble_name_private(name, fl, mapped,
			    sizeof(mapped));
			if (u < 0 || (size_t)u + n - fl >= sizeof(mapped))
				continue;
			memcpy(mapped + u, name + fl, n - fl + 1);
			p = mapped;
		}
		/* '\' separates the components of a tree change */
		for (c = p; *c; c++)
			if (*c == '/')
				*c = '\\';
		u = unicode_utf8_to_utf16(p, strlen(p), name16,
		    sizeof(name16));
		if (u < 0)
			continue;
		if (prev != NULL)
			while (total % 4 != 0) {
				wcur_u8(out, 0);
				total++;
			}
		if (total + 12 + (size_t)u > max)
			return -1;
		start = out->p;
		if (prev != NULL && !out->err)
			le32_put(prev, (uint32_t)(start - prev));
		wcur_le32(out, 0);
		wcur_le32(out, action);
		wcur_le32(out, (uint32_t)u);
		wcur_bytes(out, name16, (size_t)u);
		total += 12 + (size_t)u;
		prev = start;
	}
	return out->err ? -1 : 0;
}
