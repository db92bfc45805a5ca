/*
 * Reparse data buffers (proto/reparse.h).  A buffer a client sets is
 * checked here, before anything reaches the file system: the header's
 * length agrees with the buffer, names lie inside the path buffer,
 * UTF-16 offsets and lengths are even.
 */
#include <string.h>

#include "proto/reparse.h"

#define SYMLINK_FIXED		12	/* four name fields and Flags */

static int
reparse_name(const uint8_t *pb, size_t pblen, uint16_t off, uint16_t len,
    const uint8_t **name)
{
	if ((off & 1) || (len & 1) || (size_t)off + len > pblen)
		return -1;
	*name = pb + off;
	return 0;
}

static int
reparse_decode_symlink(struct cur *c, struct reparse_data *d)
{
	uint16_t so, sl, po, pl;
	const uint8_t *pb;
	size_t pblen;

	so = cur_le16(c);
	sl = cur_le16(c);
	po = cur_le16(c);
	pl = cur_le16(c);
	d->flags = cur_le32(c);
	if (c->err)
		return -1;
	pblen = cur_left(c);
	pb = cur_view(c, pblen);
	if (pb == NULL || sl == 0 ||
	    reparse_name(pb, pblen, so, sl, &d->subst16) != 0 ||
	    reparse_name(pb, pblen, po, pl, &d->print16) != 0)
		return -1;
	d->subst16_len = sl;
	d->print16_len = pl;
	return 0;
}

static int
reparse_decode_nfs(struct cur *c, struct reparse_data *d)
{
	size_t left;

	d->nfs_type = cur_le64(c);
	if (c->err)
		return -1;
	left = cur_left(c);
	switch (d->nfs_type) {
	case NFS_SPECFILE_LNK:
		if (left == 0 || (left & 1))
			return -1;
		d->target16 = cur_view(c, left);
		d->target16_len = left;
		return 0;
	case NFS_SPECFILE_CHR:
	case NFS_SPECFILE_BLK:
		if (left != 8)
			return -1;
		d->major = cur_le32(c);
		d->minor = cur_le32(c);
		return c->err ? -1 : 0;
	case NFS_SPECFILE_FIFO:
	case NFS_SPECFILE_SOCK:
		return left == 0 ? 0 : -1;
	default:
		return -1;
	}
}

int
reparse_decode(const uint8_t *buf, size_t len, struct reparse_data *d)
{
	struct cur c;
	uint16_t dlen;

	memset(d, 0, sizeof(*d));
	cur_init(&c, buf, len);
	d->tag = cur_le32(&c);
	dlen = cur_le16(&c);
	d->reserved = cur_le16(&c);
	if (c.err || (size_t)dlen != cur_left(&c))
		return -1;
	if (d->tag == IO_REPARSE_TAG_SYMLINK)
		return reparse_decode_symlink(&c, d);
	if (d->tag == IO_REPARSE_TAG_NFS)
		return reparse_decode_nfs(&c, d);
	return 1;
}

void
reparse_put_symlink(struct wcur *w, const uint8_t *target16, size_t len,
    uint32_t flags, uint16_t reserved)
{
	/* two names and the fixed part within ReparseDataLength */
	if (len > (UINT16_MAX - SYMLINK_FIXED) / 2) {
		w->err = 1;
		return;
	}
	wcur_le32(w, IO_REPARSE_TAG_SYMLINK);
	wcur_le16(w, (uint16_t)(SYMLINK_FIXED + 2 * len));
	wcur_le16(w, reserved);
	wcur_le16(w, 0);			/* SubstituteNameOffset */
	wcur_le16(w, (uint16_t)len);
	wcur_le16(w, (uint16_t)len);		/* PrintNameOffset */
	wcur_le16(w, (uint16_t)len);
	wcur_le32(w, flags);
	wcur_bytes(w, target16, len);
	wcur_bytes(w, target16, len);
}

void
reparse_put_nfs(struct wcur *w, uint64_t type, const uint8_t *data16,
    size_t len, uint32_t major, uint32_t minor)
{
	size_t dlen = 8;

	if (type == NFS_SPECFILE_LNK)
		dlen += len;
	else if (type == NFS_SPECFILE_CHR || type == NFS_SPECFILE_BLK)
		dlen += 8;
	if (dlen > UINT16_MAX) {
		w->err = 1;
		return;
	}
	wcur_le32(w, IO_REPARSE_TAG_NFS);
	wcur_le16(w, (uint16_t)dlen);
	wcur_le16(w, 0);
	wcur_le64(w, type);
	if (type == NFS_SPECFILE_LNK)
		wcur_bytes(w, data16, len);
	else if (type == NFS_SPECFILE_CHR || type == NFS_SPECFILE_BLK) {
		wcur_le32(w, major);
		wcur_le32(w, minor);
	}
}

void
reparse_put_symlink_error(struct wcur *w, const uint8_t *target16,
    size_t len, uint32_t flags, uint16_t unparsed)
{
	if (len > (UINT16_MAX - SYMLINK_FIXED) / 2) {
		w->err = 1;
		return;
	}
	/* SymLinkLength counts the tag and the buffer after it */
	wcur_le32(w, (uint32_t)(4 + REPARSE_HDR_LEN + SYMLINK_FIXED +
	    2 * len));
	wcur_le32(w, SYMLINK_ERROR_TAG);
	reparse_put_symlink(w, target16, len, flags, unparsed);
}

int
reparse_symlink_error_decode(const uint8_t *buf, size_t len,
    struct reparse_data *d)
{
	struct cur c;
	uint32_t sl, tag;

	cur_init(&c, buf, len);
	sl = cur_le32(&c);
	tag = cur_le32(&c);
	if (c.err || tag != SYMLINK_ERROR_TAG || (size_t)sl != len - 4)
		return -1;
	if (reparse_decode(buf + 8, len - 8, d) != 0 ||
	    d->tag != IO_REPARSE_TAG_SYMLINK)
		return -1;
	return 0;
}
