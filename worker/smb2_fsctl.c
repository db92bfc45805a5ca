/*
 * FSCTLs on files (MS-SMB2 2.2.31/2.2.32, MS-FSCC 2.3): sparse files,
 * zeroing (hole punching), allocated ranges, reparse points, server-side
 * copy with copy_file_range, block cloning with FICLONERANGE, and the
 * snapshot list (worker/snapshot.c).  The SMB2 core's IOCTL handler calls
 * smb2_ioctl_file with the body at the start of the IOCTL request.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/fscc.h"
#include "proto/smb2_hdr.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/file_wt.h"
#include "worker/open.h"
#include "worker/resilient.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/smb2_reparse.h"
#include "worker/snapshot.h"
#include "worker/state.h"

/* MS-FSCC 2.3 */
#define FSCTL_SET_REPARSE_POINT		0x000900A4u
#define FSCTL_GET_REPARSE_POINT		0x000900A8u
#define FSCTL_SET_SPARSE		0x000900C4u
#define FSCTL_SET_ZERO_DATA		0x000980C8u
#define FSCTL_QUERY_ALLOCATED_RANGES	0x000940CFu
#define FSCTL_SRV_REQUEST_RESUME_KEY	0x00140078u
#define FSCTL_SRV_COPYCHUNK		0x001440F2u
#define FSCTL_SRV_COPYCHUNK_WRITE	0x001480F2u
#define FSCTL_GET_COMPRESSION		0x0009003Cu
#define FSCTL_SET_COMPRESSION		0x0009C040u
#define FSCTL_CREATE_OR_GET_OBJECT_ID	0x000900C0u
#define FSCTL_DUPLICATE_EXTENTS_TO_FILE	0x00098344u
#define FSCTL_SRV_ENUMERATE_SNAPSHOTS	0x00144064u

/* MS-FSCC 2.3.11 */
#define COMPRESSION_FORMAT_NONE		0

/* MS-SMB2 3.3.3: server-side copy limits */
#define COPY_MAX_CHUNKS		256
#define COPY_MAX_CHUNK		(1024u * 1024)
#define COPY_MAX_TOTAL		(16u * 1024 * 1024)

#define IOCTL_OUT_OFFSET	(SMB2_HDR_LEN + 48)

static const uint8_t resume_magic[8] = { 'u', 's', 'm', 'b', 'd', 'r', 'k', 1 };

/* The FSCTLs served here that change the file they are sent on. */
static int
fsctl_changes_file(uint32_t code)
{
	switch (code) {
	case FSCTL_SET_REPARSE_POINT:
	case FSCTL_SET_SPARSE:
	case FSCTL_SET_ZERO_DATA:
	case FSCTL_SET_COMPRESSION:
	case FSCTL_DUPLICATE_EXTENTS_TO_FILE:
	case FSCTL_SRV_COPYCHUNK:
	case FSCTL_SRV_COPYCHUNK_WRITE:
		return 1;
	}
	return 0;
}

static ntstatus_t
fsctl_sparse(struct open *op, struct cur *in)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	struct fscc_info fi;
	int set = cur_left(in) >= 1 ? cur_u8(in) != 0 : 1;

	if (!(op->access & (FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES |
	    FILE_APPEND_DATA)))
		return STATUS_ACCESS_DENIED;
	if (f->is_dir)
		return STATUS_INVALID_PARAMETER;
	if (vfs_dos_get(vfs, f->fd, &di) != 0) {
		file_info_fill(f, &fi);
		di.attrs = fi.attrs & FILE_ATTRIBUTE_SETTABLE;
		di.create_time = fi.creation;
	}
	if (set)
		di.attrs |= FILE_ATTRIBUTE_SPARSE_FILE;
	else
		di.attrs &= ~FILE_ATTRIBUTE_SPARSE_FILE;
	return ntstatus_from_errno(vfs_dos_set(vfs, f->fd, &di));
}

static int
fsctl_is_sparse(struct file_open *f)
{
	struct vfs_dosinfo di;

	return vfs_dos_get(file_vfs(), f->fd, &di) == 0 &&
	    (di.attrs & FILE_ATTRIBUTE_SPARSE_FILE);
}

static ntstatus_t
fsctl_zero(struct open *op, struct cur *in)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_stat st;
	uint64_t off, end;
	ntstatus_t status;
	int rc;

	if (fscc_zero_data_decode(in, &off, &end) != 0)
		return STATUS_INVALID_PARAMETER;
	if (!(op->access & FILE_WRITE_DATA) || !f->writable)
		return STATUS_ACCESS_DENIED;
	if (off > end || end > (uint64_t)INT64_MAX)
		return STATUS_INVALID_PARAMETER;
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	if (end > st.size)
		end = st.size;		/* zeros past EOF are already zeros */
	if (off >= end)
		return STATUS_SUCCESS;
	/* zeroing is a write: other opens' byte-range locks apply */
	if ((status = state_io_check(op, off, end - off, 1)) !=
	    STATUS_SUCCESS)
		return status;
	/*
	 * MS-FSA 2.1.5.9.38: a sparse file gives the range back (a hole); a
	 * file that is not sparse keeps it allocated, as zeros.
	 */
	if (fsctl_is_sparse(f))
		return ntstatus_from_errno(vfs->punch_hole(f->fd, off,
		    end - off));
	return ntstatus_from_errno(vfs->zero_range(f->fd, off, end - off));
}

static ntstatus_t
fsctl_ranges(struct open *op, struct cur *in, struct wcur *out, uint32_t max)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_stat st;
	uint64_t off = cur_le64(in), len = cur_le64(in), end;
	int64_t data, hole;
	uint32_t used = 0;
	int rc, guard;

	if (in->err || off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX)
		return STATUS_INVALID_PARAMETER;
	if (!(op->access & FILE_READ_DATA))
		return STATUS_ACCESS_DENIED;
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	end = off + len > st.size || off + len < off ? st.size : off + len;
	if (!fsctl_is_sparse(f)) {
		/* MS-FSA 2.1.5.9.22: a file that is not sparse is one range */
		if (off < end) {
			if (max < 16)
				return STATUS_BUFFER_TOO_SMALL;
			wcur_le64(out, off);
			wcur_le64(out, end - off);
		}
		return STATUS_SUCCESS;
	}
	for (guard = 0; off < end && guard < 100000; guard++) {
		data = vfs->seek(f->fd, (int64_t)off, SEEK_DATA);
		if (data < 0 || (uint64_t)data >= end)
			break;
		hole = vfs->seek(f->fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t)hole > end)
			hole = (int64_t)end;
		/* MS-FSA 2.1.5.9.22: none fits / only some fit */
		if (used + 16 > max)
			return used == 0 ? STATUS_BUFFER_TOO_SMALL :
			    STATUS_BUFFER_OVERFLOW;
		wcur_le64(out, (uint64_t)data);
		wcur_le64(out, (uint64_t)(hole - data));
		used += 16;
		off = (uint64_t)hole;
	}
	return STATUS_SUCCESS;
}

/*
 * One piece of a chunk: copy_file_range, or through a buffer where the
 * kernel refuses (source and destination ranges of one file overlapping,
 * file systems without it).  The buffer is read whole before it is
 * written, so an overlapping copy behaves like memmove.
 */
static ssize_t
fsctl_copy(struct file_open *in, uint64_t in_off, struct file_open *out,
    uint64_t out_off, size_t len)
{
	static uint8_t buf[COPY_MAX_CHUNK];
	const struct vfs_ops *vfs = file_vfs();
	int streams = in->stream[0] != '\0' || out->stream[0] != '\0';
	ssize_t n = -EINVAL;

	if (!streams)
		n = vfs->copy_range(in->fd, in_off, out->fd, out_off, len);
	if (n != -EINVAL && n != -EXDEV && n != -EOPNOTSUPP && n != -ENOSYS)
		return n;
	if (len > sizeof(buf))
		len = sizeof(buf);
	n = in->stream[0] != '\0' ? file_stream_pread(in, buf, len, in_off) :
	    vfs->pread(in->fd, buf, len, in_off);
	if (n <= 0)
		return n;
	/* into AFP_AfpInfo: a Mac's rules, as any write (fruit.h) */
	if (fruit_is_afpinfo(out))
		return fruit_afpinfo_write(out, buf, (size_t)n, out_off);
	return out->stream[0] != '\0' ?
	    file_stream_pwrite(out, buf, (size_t)n, out_off) :
	    vfs->pwrite(out->fd, buf, (size_t)n, out_off);
}

/*
 * MS-FSCC 2.3.7 / 2.1.3.1 FILE_OBJECTID_BUFFER.  The object id is derived,
 * not stored (a read-only open may ask, and nothing is written): inode
 * number, inode generation and file-system id folded to 32 bits.  The
 * generation is what makes a new file on a reused inode number get a new
 * id (ext4 hands a freed inode out again at once).  Where the file system
 * keeps no generation (tmpfs, some FUSE: FS_IOC_GETVERSION answers
 * ENOTTY) it counts as 0, and there an id can come back for a later file
 * on the same inode number, the best a derived id can do.
 * BirthVolumeId is the volume's object id as FileFsObjectIdInformation
 * gives it (smb2_info.c: fsid, share root inode), BirthObjectId the
 * object id itself, DomainId zero (no domain tracking service).
 */
static ntstatus_t
fsctl_object_id(struct smb2_req *req, struct open *op, struct wcur *out)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat st, rst;
	struct vfs_statfs sf;
	uint8_t id[16], vol[16];
	uint32_t gen = 0;
	int rc;

	if ((rc = vfs->fstat(op->u.file->fd, &st)) != 0 ||
	    (rc = vfs->statfs(op->u.file->fd, &sf)) != 0 ||
	    (rc = vfs->fstat(req->tree->root_fd, &rst)) != 0)
		return ntstatus_from_errno(rc);
	if (vfs->generation == NULL ||
	    vfs->generation(op->u.file->fd, &gen) != 0)
		gen = 0;
	le64_put(id, st.ino);
	le32_put(id + 8, gen);
	le32_put(id + 12, (uint32_t)(sf.fsid ^ (sf.fsid >> 32)));
	le64_put(vol, sf.fsid);
	le64_put(vol + 8, rst.ino);
	wcur_bytes(out, id, 16);
	wcur_bytes(out, vol, 16);
	wcur_bytes(out, id, 16);
	wcur_zero(out, 16);
	return out->err ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

/*
 * Apple's copyfile (worker/fruit.h): no chunks asked means the whole
 * file with its streams; the answer counts the data copied.  Byte-range
 * locks of other opens on either file refuse it, as a chunk's would.
 */
static ntstatus_t
fsctl_copyfile(struct open *src, struct open *dst, struct wcur *out)
{
	struct file_open *sf = src->u.file, *df = dst->u.file;
	struct vfs_stat st;
	uint64_t copied = 0;
	ntstatus_t status;
	int rc;

	if (sf->stream[0] != '\0' || df->stream[0] != '\0')
		return STATUS_INVALID_PARAMETER;
	if ((rc = file_vfs()->fstat(sf->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	if (st.size > 0 &&
	    ((status = state_io_check(src, 0, st.size, 0)) != STATUS_SUCCESS ||
	    (status = state_io_check(dst, 0, st.size, 1)) != STATUS_SUCCESS))
		return status;
	rc = fruit_copyfile(sf, df, &copied);
	wcur_le32(out, 0);		/* chunks */
	wcur_le32(out, 0);
	wcur_le32(out, copied > UINT32_MAX ? UINT32_MAX : (uint32_t)copied);
	return ntstatus_from_errno(rc);
}

static ntstatus_t
fsctl_copychunk(struct smb2_req *req, struct open *dst, struct cur *in,
    struct wcur *out, int write_only)
{
	const struct vfs_ops *vfs = file_vfs();
	struct fscc_copychunk cc;
	struct fscc_chunk ch;
	struct open *src;
	uint32_t i, chunks = 0, total = 0;
	struct vfs_stat st;
	ssize_t n;
	size_t done;
	int rc;
	ntstatus_t status;

	rc = fscc_copychunk_decode(in, &cc);
	if (rc == -1)
		return STATUS_INVALID_PARAMETER;
	if (rc != 0 || cc.count > COPY_MAX_CHUNKS)
		goto limits;
	if (memcmp(cc.key + 16, resume_magic, 8) != 0)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	src = open_find(req->conn, le64_get(cc.key), le64_get(cc.key + 8));
	if (src == NULL || src->kind != OPEN_FILE || src->u.file == NULL)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	/* MS-SMB2 3.3.5.15.6: read or execute access on the source */
	if (!(src->access & (FILE_READ_DATA | FILE_EXECUTE)) ||
	    !src->u.file->readable)
		return STATUS_ACCESS_DENIED;
	if (!(dst->access & FILE_WRITE_DATA) || !dst->u.file->writable ||
	    (!write_only && !(dst->access & FILE_READ_DATA)))
		return STATUS_ACCESS_DENIED;
	if (cc.count == 0 && req->conn->aapl_copyfile &&
	    fruit_tree_on(req->tree))
		return fsctl_copyfile(src, dst, out);
	/* every limit is checked before the first byte moves */
	for (i = 0; i < cc.count; i++) {
		if (fscc_copychunk_get(&cc, i, &ch) != 0 || ch.len == 0 ||
		    ch.len > COPY_MAX_CHUNK ||
		    (total += ch.len) > COPY_MAX_TOTAL)
			goto limits;
	}
	for (i = 0, total = 0; i < cc.count; i++) {
		(void)fscc_copychunk_get(&cc, i, &ch);
		if ((rc = vfs->fstat(src->u.file->fd, &st)) != 0) {
			status = ntstatus_from_errno(rc);
			goto answer;
		}
		if (src->u.file->stream[0] != '\0') {
			int64_t ssz = file_stream_size(src->u.file);

			st.size = ssz > 0 ? (uint64_t)ssz : 0;
		}
		/* a chunk past the source's end: MS-SMB2 3.3.5.15.6 */
		if (ch.src_off > st.size || ch.len > st.size - ch.src_off) {
			status = STATUS_INVALID_VIEW_SIZE;
			goto answer;
		}
		/* MS-SMB2 3.3.5.15.6: byte-range locks on either side */
		if ((status = state_io_check(src, ch.src_off, ch.len, 0)) !=
		    STATUS_SUCCESS ||
		    (status = state_io_check(dst, ch.dst_off, ch.len, 1)) !=
		    STATUS_SUCCESS)
			goto answer;
		for (done = 0; done < ch.len; done += (size_t)n) {
			n = fsctl_copy(src->u.file, ch.src_off + done,
			    dst->u.file, ch.dst_off + done, ch.len - done);
			if (n == 0)
				break;		/* source ended */
			if (n < 0) {
				status = ntstatus_from_errno((int)n);
				goto answer;
			}
		}
		total += (uint32_t)done;
		if (done < ch.len) {
			status = STATUS_INVALID_VIEW_SIZE;
			goto answer;
		}
		chunks++;
	}
	status = STATUS_SUCCESS;
answer:
	/* MS-SMB2 2.2.32.1 SRV_COPYCHUNK_RESPONSE: what was done so far */
	wcur_le32(out, chunks);
	wcur_le32(out, 0);
	wcur_le32(out, total);
	return status;
limits:
	/* the server's limits, MS-SMB2 3.3.5.15.6 */
	wcur_le32(out, COPY_MAX_CHUNKS);
	wcur_le32(out, COPY_MAX_CHUNK);
	wcur_le32(out, COPY_MAX_TOTAL);
	return STATUS_INVALID_PARAMETER;
}

/*
 * The end of a clone that Linux cannot share (a partial last cluster that
 * does not end both files): copy bytes of the source from in_off to
 * out_off, then zero bytes after them, where the range lies past the
 * source's end of file (its last cluster reads as zeros there).  0 or
 * -errno.
 */
static int
fsctl_dup_tail(struct file_open *in, uint64_t in_off, struct file_open *out,
    uint64_t out_off, uint64_t copy, uint64_t zero)
{
	uint64_t done = 0;
	ssize_t n;

	while (done < copy) {
		n = fsctl_copy(in, in_off + done, out, out_off + done,
		    (size_t)(copy - done));
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;		/* the source shrank: zeros from here */
		done += (uint64_t)n;
	}
	zero += copy - done;
	return zero == 0 ? 0 : file_vfs()->zero_range(out->fd, out_off + done,
	    zero);
}

/*
 * FSCTL_DUPLICATE_EXTENTS_TO_FILE (MS-SMB2 3.3.5.15.17, MS-FSA 2.1.5.10.4,
 * MS-FSCC 2.3.7/2.3.8) on a share whose file system shares blocks
 * (tree->clone_unit, read at the tree connect): the target range (dst,
 * the open the IOCTL names) comes to share the source's blocks, by
 * FICLONERANGE.  Where Windows (ReFS, Windows Server 2016) and the spec
 * part ways, usmbd does what smbtorture's smb2.ioctl.dup_extents_* saw
 * Windows do, as Samba does:
 *   - a range past the source's end of file but within its last cluster
 *     is accepted (MS-FSCC 2.3.8: only one beyond the allocation size is
 *     NOT_SUPPORTED); a range past the target's end of file is cut at it,
 *     the target never grows (WS2016 answers SUCCESS and keeps the size;
 *     the Block Cloning documentation asks a caller to set the end of
 *     file first);
 *   - a sparse source wants a sparse target, not the other way round;
 *   - byte-range locks are not checked on either side (ReFS does not;
 *     smbtorture's src_lck and dest_lck); the target's other opens lose
 *     their read caching, as after a write.
 * Alignment: MS-FSCC 2.3.7.1 asks both offsets and ByteCount to be
 * multiples of the cluster (the share reports tree->clone_unit as its
 * cluster size); usmbd also takes a ByteCount that ends exactly at the
 * source's end of file, which Linux can share.  Linux shares a partial
 * last cluster only where the range ends at the end of both files; a
 * range that, once cut at the target's end, ends inside a cluster
 * anywhere else has its whole clusters shared and the rest copied, and
 * zeroed past the source's end of file (ReFS would share the cluster).
 */
static ntstatus_t
fsctl_dup_extents(struct smb2_req *req, struct open *dst, struct cur *in)
{
	const struct vfs_ops *vfs = file_vfs();
	uint64_t unit = req->tree->clone_unit, len, end, data, whole;
	struct file_open *sf, *df = dst->u.file;
	struct fscc_dup_extents dx;
	struct vfs_stat sst, tst;
	struct open *src;
	int rc;

	if (unit == 0)
		return STATUS_INVALID_DEVICE_REQUEST;	/* MS-FSA: optional */
	if (fscc_dup_extents_decode(in, &dx) != 0)
		return STATUS_INVALID_PARAMETER;
	/* MS-SMB2 3.3.5.15.17: an open of this session */
	src = open_find(req->conn, dx.fid_persistent, dx.fid_volatile);
	if (src == NULL || src->sess != dst->sess ||
	    (src->kind != OPEN_FILE && src->kind != OPEN_DIR) ||
	    src->u.file == NULL)
		return STATUS_INVALID_HANDLE;
	sf = src->u.file;
	if (sf->is_dir || df->is_dir)
		return STATUS_INVALID_PARAMETER;	/* data streams only */
	/* what a read of the source and a write of the target need */
	if (!(src->access & FILE_READ_DATA) || !sf->readable ||
	    !(dst->access & FILE_WRITE_DATA) || !df->writable)
		return STATUS_ACCESS_DENIED;
	/* a named stream lives in an xattr: no blocks to share */
	if (sf->stream[0] != '\0' || df->stream[0] != '\0')
		return STATUS_NOT_SUPPORTED;
	/* MS-FSCC 2.3.7.2: signed, not negative; aligned offsets */
	if (dx.src_off > (uint64_t)INT64_MAX ||
	    dx.dst_off > (uint64_t)INT64_MAX ||
	    dx.len > (uint64_t)INT64_MAX - dx.src_off ||
	    dx.len > (uint64_t)INT64_MAX - dx.dst_off ||
	    dx.src_off % unit != 0 || dx.dst_off % unit != 0)
		return STATUS_INVALID_PARAMETER;
	if ((rc = vfs->fstat(sf->fd, &sst)) != 0 ||
	    (rc = vfs->fstat(df->fd, &tst)) != 0)
		return ntstatus_from_errno(rc);
	end = dx.src_off + dx.len;
	if (dx.len % unit != 0 && end != sst.size)
		return STATUS_INVALID_PARAMETER;
	/* beyond the source's allocation: its last cluster, rounded up */
	if (end > sst.size + (unit - sst.size % unit) % unit)
		return STATUS_NOT_SUPPORTED;
	if (dx.len == 0)
		return STATUS_SUCCESS;
	/* MS-FSCC 2.3.8: ranges of one file may not overlap */
	if (sst.dev == tst.dev && sst.ino == tst.ino &&
	    dx.src_off < dx.dst_off + dx.len && dx.dst_off < end)
		return STATUS_NOT_SUPPORTED;
	if (fsctl_is_sparse(sf) && !fsctl_is_sparse(df))
		return STATUS_NOT_SUPPORTED;
	if (dx.dst_off > tst.size)
		return STATUS_INVALID_PARAMETER;
	len = dx.len < tst.size - dx.dst_off ? dx.len : tst.size - dx.dst_off;
	if (len == 0)
		return STATUS_SUCCESS;
	/*
	 * FICLONERANGE shares whole blocks, and a partial last one only
	 * where the range ends at the end of both files; what is left is
	 * copied (fsctl_dup_tail).  data: the source's bytes in the range.
	 */
	end = dx.src_off + len;
	data = end <= sst.size ? len : sst.size - dx.src_off;
	whole = data == len && (len % unit == 0 || (end == sst.size &&
	    dx.dst_off + len == tst.size)) ? len : data - data % unit;
	state_break_read_caching(dst);
	file_wt_write(dst);
	df->modified = 1;
	rc = whole == 0 ? 0 :
	    vfs->clone_range(sf->fd, dx.src_off, df->fd, dx.dst_off, whole);
	if (rc == 0 && whole < len)
		rc = fsctl_dup_tail(sf, dx.src_off + whole, df,
		    dx.dst_off + whole, data - whole, len - data);
	switch (rc) {
	case 0:
		break;
	case -EXDEV:
		return STATUS_INVALID_PARAMETER;  /* MS-FSCC 2.3.8: not one volume */
	case -EOPNOTSUPP:
		/* a file system mounted below the share root that cannot */
		return STATUS_INVALID_DEVICE_REQUEST;
	default:
		return ntstatus_from_errno(rc);
	}
	file_wt_written(dst);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_ioctl_file(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body, in;
	struct wcur *w = &rsp->body, out;
	struct open *op;
	uint32_t code, ioff, ilen, maxout;
	uint8_t *hdr;
	ntstatus_t status;

	if (cur_le16(c) != 57)
		return STATUS_INVALID_PARAMETER;
	cur_skip(c, 2);
	code = cur_le32(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	ioff = cur_le32(c);
	ilen = cur_le32(c);
	cur_skip(c, 4 + 4 + 4);		/* MaxInputResponse, OutputOffset/Count */
	maxout = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	in = cur_sub(c, ioff, ilen);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	if ((hdr = wcur_reserve(w, 48)) == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	out = *w;
	if ((size_t)(out.end - out.p) > maxout)
		out.end = out.p + maxout;
	/* a previous version's handle: the rights are shown, not usable */
	if (op->access_withheld != 0 && fsctl_changes_file(code))
		return STATUS_MEDIA_WRITE_PROTECTED;
	switch (code) {
	case FSCTL_GET_REPARSE_POINT:
		status = smb2_reparse_get(op, &out);
		break;
	case FSCTL_SET_REPARSE_POINT:
		status = smb2_reparse_set(op, &in);
		break;
	case FSCTL_SET_SPARSE:
		status = fsctl_sparse(op, &in);
		break;
	case FSCTL_SET_ZERO_DATA:
		status = fsctl_zero(op, &in);
		break;
	case FSCTL_QUERY_ALLOCATED_RANGES:
		status = fsctl_ranges(op, &in, &out, maxout);
		break;
	case FSCTL_SRV_REQUEST_RESUME_KEY:
		/* MS-SMB2 2.2.32.3: a key only this server can redeem */
		if (maxout < 32) {
			status = STATUS_INVALID_PARAMETER;
			break;
		}
		wcur_le64(&out, op->fid_persistent);
		wcur_le64(&out, op->fid_volatile);
		wcur_bytes(&out, resume_magic, 8);
		wcur_le32(&out, 0);
		wcur_le32(&out, 0);
		status = STATUS_SUCCESS;
		break;
	case FSCTL_SRV_ENUMERATE_SNAPSHOTS:
		status = snapshot_enumerate(op->tree, &out, maxout);
		break;
	case FSCTL_GET_COMPRESSION:
		/* MS-FSCC 2.3.12: nothing here is compressed */
		if (maxout < 2) {
			status = STATUS_INVALID_PARAMETER;
			break;
		}
		wcur_le16(&out, COMPRESSION_FORMAT_NONE);
		status = STATUS_SUCCESS;
		break;
	case FSCTL_SET_COMPRESSION:
		/* MS-FSCC 2.3.67: only "none" can be honoured */
		if (cur_left(&in) < 2)
			status = STATUS_INVALID_PARAMETER;
		else if (cur_le16(&in) == COMPRESSION_FORMAT_NONE)
			status = STATUS_SUCCESS;
		else
			status = STATUS_NOT_SUPPORTED;
		break;
	case FSCTL_CREATE_OR_GET_OBJECT_ID:
		status = fsctl_object_id(req, op, &out);
		break;
	case FSCTL_DUPLICATE_EXTENTS_TO_FILE:
		status = fsctl_dup_extents(req, op, &in);
		break;
	case FSCTL_SRV_COPYCHUNK:
	case FSCTL_SRV_COPYCHUNK_WRITE:
		if (maxout < 12) {
			status = STATUS_INVALID_PARAMETER;
			break;
		}
		status = fsctl_copychunk(req, op, &in, &out,
		    code == FSCTL_SRV_COPYCHUNK_WRITE);
		break;
	case FSCTL_LMR_REQUEST_RESILIENCY:
		status = resilient_request(req, op, &in);
		break;
	default:
		status = STATUS_INVALID_DEVICE_REQUEST;
		break;
	}
	if (status == STATUS_BUFFER_TOO_SMALL || (out.err &&
	    status == STATUS_SUCCESS)) {
		/*
		 * MS-SMB2 2.2.2.2: BUFFER_TOO_SMALL carries the minimum
		 * output size (MS-FSA 2.1.5.9.22: one range; 2.1.5.9.4: a
		 * whole FILE_OBJECTID_BUFFER).
		 */
		uint32_t need = code == FSCTL_QUERY_ALLOCATED_RANGES ? 16 :
		    code == FSCTL_CREATE_OR_GET_OBJECT_ID ? 64 : 0;
		uint8_t nb[4];

		w->p = hdr;
		if (need == 0)
			return STATUS_BUFFER_TOO_SMALL;
		le32_put(nb, need);
		smb2_error_encode(w, req->conn->dialect == DIALECT_311, nb,
		    sizeof(nb));
		return STATUS_BUFFER_TOO_SMALL;
	}
	if (out.err || (status != STATUS_SUCCESS &&
	    status != STATUS_BUFFER_OVERFLOW &&
	    !((status == STATUS_INVALID_PARAMETER ||
	    status == STATUS_INVALID_VIEW_SIZE ||
	    status == STATUS_FILE_LOCK_CONFLICT) && out.p > w->p))) {
		w->p = hdr;
		return out.err ? STATUS_BUFFER_TOO_SMALL : status;
	}
	/* MS-SMB2 2.2.32 */
	le16_put(hdr, 49);
	le16_put(hdr + 2, 0);
	le32_put(hdr + 4, code);
	le64_put(hdr + 8, op->fid_persistent);
	le64_put(hdr + 16, op->fid_volatile);
	le32_put(hdr + 24, IOCTL_OUT_OFFSET);	/* InputOffset */
	le32_put(hdr + 28, 0);
	le32_put(hdr + 32, IOCTL_OUT_OFFSET);
	le32_put(hdr + 36, (uint32_t)(out.p - w->p));
	le32_put(hdr + 40, 0);
	le32_put(hdr + 44, 0);
	w->p = out.p;
	return status;
}
