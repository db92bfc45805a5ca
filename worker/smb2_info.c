/*
 * SMB2 QUERY_INFO (MS-SMB2 2.2.37, 2.2.38, server rules 3.3.5.20) for
 * files and directories: the FSCC file and file system classes, and a
 * security descriptor derived from owner, group and mode.  SET_INFO is in
 * worker/smb2_setinfo.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/adouble.h"
#include "proto/fscc.h"
#include "proto/smb2_hdr.h"
#include "proto/unicode.h"
#include "shm/shm.h"
#include "worker/smb2_notify.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/file_wt.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/smb2_posix.h"
#include "worker/smb2_info_priv.h"
#include "worker/shortname.h"
#include "worker/state.h"
#include "worker/worker.h"

#define INFO_OUT_OFFSET		(SMB2_HDR_LEN + 8)


static uint8_t	info_name16[FILE_PATH_MAX * 2 + 4];
char		info_xattrs[65536];
static char	info_path[FILE_PATH_MAX];

/*
 * "\dir\name" as UTF-16LE: the name Windows reports for an open (a
 * previous version's: the client's name, without the snapshot's place).
 */
static int
info_name(struct file_open *f, int with_stream)
{
	static char native[FILE_PATH_MAX * 3];
	const char *path = file_open_client_path(f);
	size_t i, n = strlen(path);
	int len;

	/* fruit:encoding = native: the name as a Mac knows it (fruit.h) */
	if (fruit_name_native(f->share) && adouble_name_private(path, n,
	    native, sizeof(native)) >= 0) {
		path = native;
		n = strlen(path);
	}
	info_path[0] = '\\';
	for (i = 0; i < n && i + 2 < sizeof(info_path); i++)
		info_path[i + 1] = path[i] == '/' ? '\\' : path[i];
	info_path[i + 1] = '\0';
	/* MS-FSCC 2.4.30: the normalized name of a stream open names it */
	if (with_stream && f->stream[0] != '\0' &&
	    i + 2 + strlen(f->stream) < sizeof(info_path)) {
		info_path[i + 1] = ':';
		memcpy(info_path + i + 2, f->stream, strlen(f->stream) + 1);
	}
	len = unicode_utf8_to_utf16(info_path, strlen(info_path), info_name16,
	    sizeof(info_name16));
	return len < 0 ? 0 : len;
}

/*
 * One entry of a stream list after prev: its bytes added to *total; 0
 * when it does not fit, with *need the total it would take.
 */
static int
info_stream_put(struct wcur *w, const char *name, int64_t size,
    uint8_t **prev, size_t *total, size_t *need)
{
	static char sname[300 + 8];
	static uint8_t s16[(300 + 8) * 2];
	uint8_t *start;
	int l16;

	snprintf(sname, sizeof(sname), ":%s:$DATA", name);
	l16 = unicode_utf8_to_utf16(sname, strlen(sname), s16, sizeof(s16));
	if (l16 < 0)
		return 1;
	wcur_align(w, 8);
	start = w->p;
	if (fscc_put_stream(w, s16, (size_t)l16, (uint64_t)size,
	    ((uint64_t)size + 4095) & ~4095ull) == 0) {
		*need = *total + 24 + (size_t)l16 + 8;
		return 0;
	}
	if (*prev != NULL)
		le32_put(*prev, (uint32_t)(start - *prev));
	*prev = start;
	*total = (size_t)(w->p - start) + *total;
	return 1;
}

static size_t
info_streams(struct file_open *f, struct wcur *w, uint64_t eof, uint64_t alloc,
    int aapl)
{
	const struct vfs_ops *vfs = file_vfs();
	const struct conf_share *sh = f->share;
	static const char data[] = "::$DATA";
	static uint8_t s16[(300 + 8) * 2];
	size_t plen = strlen(VFS_XATTR_STREAM), total = 0, wrote, need;
	uint8_t *prev = NULL, *start;
	ssize_t n, size;
	int64_t rsize;
	const char *x, *name;
	int l16, ad = -1, rsrc_file;

	/* MS-FSCC 2.4.44; the unnamed stream first, for files only */
	if (!f->is_dir) {
		l16 = unicode_utf8_to_utf16(data, strlen(data), s16,
		    sizeof(s16));
		start = w->p;
		if ((wrote = fscc_put_stream(w, s16, (size_t)l16, eof,
		    alloc)) == 0)
			return 24 + (size_t)l16;
		prev = start;
		total += wrote;
	}
	n = vfs->listxattr(f->fd, info_xattrs, sizeof(info_xattrs));
	/*
	 * fruit:metadata = netatalk: AFP_AfpInfo is netatalk's blob when
	 * the file has one (a look at the names: no syscall when not), and
	 * an older stream xattr of that name is then not listed twice.
	 */
	if (n > 0 && fruit_meta_netatalk_share(f))
		for (x = info_xattrs; x < info_xattrs + n; x += strlen(x) + 1)
			if (strcmp(x, ADOUBLE_META_XATTR) == 0)
				ad = fruit_afpinfo_listed(f);
	/* fruit:resource = file: AFP_Resource is the "._" file's fork */
	rsrc_file = !f->is_dir && f->path[0] != '\0' && sh != NULL &&
	    sh->fruit && sh->fruit_resource == FRUIT_RSRC_FILE;
	for (x = info_xattrs; n > 0 && x < info_xattrs + n;
	    x += strlen(x) + 1) {
		if (ad >= 0 && strcmp(x, ADOUBLE_META_XATTR) == 0) {
			if (ad == 0)
				continue;
			name = FRUIT_AFPINFO;
			size = AFPINFO_SIZE;
		} else {
			if (strncmp(x, VFS_XATTR_STREAM, plen) != 0)
				continue;
			name = x + plen;
			if (ad >= 0 && strcasecmp(name, FRUIT_AFPINFO) == 0)
				continue;
			if (rsrc_file && strcasecmp(name, FRUIT_RESOURCE) == 0)
				continue;
			size = vfs->getxattr(f->fd, x, NULL, 0);
			if (size < 0 || fruit_stream_hidden(f, name, size, aapl))
				continue;
		}
		if (!info_stream_put(w, name, size, &prev, &total, &need))
			return need;
	}
	/* listed when it holds data, as Samba's fruit_streaminfo_rsrc */
	if (rsrc_file && (rsize = fruit_rsrc_size(f)) > 0 &&
	    !info_stream_put(w, FRUIT_RESOURCE, rsize, &prev, &total, &need))
		return need;
	return total;
}

/*
 * The fixed part of each class (MS-FSCC 2.4 / 2.5, padded as Windows does):
 * a buffer smaller than this gets STATUS_INFO_LENGTH_MISMATCH; a larger
 * one that cannot hold the whole answer gets what fits and
 * STATUS_BUFFER_OVERFLOW (MS-SMB2 3.3.5.20.1, 3.3.5.20.2).
 */
static size_t
info_min_len(int type, int klass)
{
	static const uint8_t file_min[64] = {
		[FileBasicInformation] = 40, [FileStandardInformation] = 24,
		[FileInternalInformation] = 8, [FileEaInformation] = 4,
		[FileAccessInformation] = 4, [FilePositionInformation] = 8,
		[FileModeInformation] = 4, [FileAlignmentInformation] = 4,
		[FileAllInformation] = 104, [FileAlternateNameInformation] = 8,
		[FileStreamInformation] = 32, [FileCompressionInformation] = 16,
		[FileNetworkOpenInformation] = 56,
		[FileAttributeTagInformation] = 8,
		[FileNormalizedNameInformation] = 8,
		[FileFullEaInformation] = 4,
	};
	static const uint8_t fs_min[16] = {
		[FileFsVolumeInformation] = 24, [FileFsSizeInformation] = 24,
		[FileFsDeviceInformation] = 8, [FileFsAttributeInformation] = 16,
		[FileFsControlInformation] = 48,
		[FileFsFullSizeInformation] = 32,
		[FileFsObjectIdInformation] = 64,
		[FileFsSectorSizeInformation] = 28,
	};

	if (type == SMB2_0_INFO_FILE && klass >= 0 && klass < 64)
		return file_min[klass];
	if (type == SMB2_0_INFO_FILESYSTEM && klass >= 0 && klass < 16)
		return fs_min[klass];
	return 0;
}

/* MS-FSA 2.1.5.11: what a query of each class needs from the open. */
static uint32_t
info_needs_access(int klass)
{
	switch (klass) {
	case FileBasicInformation:
	case FileAllInformation:
	case FileNetworkOpenInformation:
	case FileAttributeTagInformation:
		return FILE_READ_ATTRIBUTES;
	case FileFullEaInformation:
		return FILE_READ_EA;
	default:
		return 0;
	}
}

static ntstatus_t
info_query_file(struct smb2_req *req, struct open *op, int klass,
    struct wcur *w)
{
	uint32_t need = info_needs_access(klass);
	struct file_open *f = op->u.file;
	struct fscc_info fi;
	ntstatus_t status;
	int n16;

	if ((op->access & need) != need)
		return STATUS_ACCESS_DENIED;
	if ((status = file_info_fill(f, &fi)) != STATUS_SUCCESS)
		return status;
	if (state_delete_pending_get(op))
		fi.delete_pending = 1;
	/* the name goes at the last close: it no longer counts (as Samba) */
	if (fi.delete_pending && fi.nlink > 0)
		fi.nlink--;
	switch (klass) {
	case FileBasicInformation:
		fscc_put_basic(w, &fi);
		break;
	case FileStandardInformation:
		fscc_put_standard(w, &fi);
		break;
	case FileInternalInformation:
		wcur_le64(w, fi.file_id);
		break;
	case FileEaInformation:
		wcur_le32(w, smb2_ea_size(f));
		break;
	case FileAccessInformation:
		/* with what a previous version withholds, as Windows shows */
		wcur_le32(w, op->access | op->access_withheld);
		break;
	case FilePositionInformation:
		wcur_le64(w, f->position);
		break;
	case FileModeInformation:
		wcur_le32(w, f->mode);
		break;
	case FileAlignmentInformation:
		wcur_le32(w, 0);
		break;
	case FileCompressionInformation:
		fscc_put_compression(w, &fi);
		break;
	case FileNetworkOpenInformation:
		fscc_put_network_open(w, &fi);
		break;
	case FileAttributeTagInformation:
		fscc_put_attribute_tag(w, &fi);
		break;
	case FileAllInformation:
		/* its EaInformation is FileEaInformation's (as on NTFS) */
		fi.ea_size = smb2_ea_size(f);
		n16 = info_name(f, 0);
		fscc_put_all(w, &fi, op->access | op->access_withheld,
		    f->position, f->mode,
		    info_name16, (size_t)n16);
		break;
	case FileNormalizedNameInformation:
		/* MS-SMB2 3.3.5.20.1: a class of 3.1.1 only */
		if (req->conn->dialect < 0x0311)
			return STATUS_NOT_SUPPORTED;
		/* the share root: an empty name */
		if (file_open_client_path(f)[0] == '\0' &&
		    f->stream[0] == '\0') {
			wcur_le32(w, 0);
			break;
		}
		/* MS-FSCC 2.4.30: the name without the leading backslash */
		n16 = info_name(f, 1);
		n16 = n16 >= 2 ? n16 - 2 : 0;
		wcur_le32(w, (uint32_t)n16);
		wcur_bytes(w, info_name16 + 2, (size_t)n16);
		break;
	case FileStreamInformation:
		(void)info_streams(f, w, fi.eof, fi.alloc,
		    fruit_conn_aapl(req->conn));
		break;
	case FileAlternateNameInformation: {
		/*
		 * MS-FSCC 2.4.5: the 8.3 name (worker/shortname.h) of the
		 * name the client opened: a previous version's root has none
		 */
		char sn[MANGLE_MAX * 4 + 1];
		uint8_t sn16[(MANGLE_MAX + 1) * 2];
		size_t n = shortname_alt(f->share, file_open_client_path(f),
		    sn);

		n16 = unicode_utf8_to_utf16(sn, n, sn16, sizeof(sn16));
		if (n16 < 0)
			n16 = 0;
		wcur_le32(w, (uint32_t)n16);
		wcur_bytes(w, sn16, (size_t)n16);
		break;
	}
	case FileFullEaInformation:
		return smb2_ea_query(f, w);
	default:
		return STATUS_INVALID_INFO_CLASS;
	}
	return STATUS_SUCCESS;
}

/* Quotas off on a share's file system: asked again after this. */
#define INFO_QUOTA_RECHECK_MS	60000

/*
 * A disk quota is the disk as its user sees it: the size is the limit and
 * the free space what is left of it (none once over), where that is less
 * than the file system's; the user's quota, else the primary group's.
 * What Samba's free-space answer does (source3/smbd/quotas.c), so that
 * Windows shows how much more this user can store.  Where the file system
 * keeps no quotas the tree stops asking for a while: one syscall per
 * size query otherwise.
 */
static void
info_fs_quota(struct smb2_req *req, struct fscc_fs *fs, uint64_t unit)
{
	const struct vfs_ops *vfs = file_vfs();
	struct tree *tree = req->tree;
	struct vfs_quota q;
	int64_t now = (int64_t)shm_now_ms();
	int rc;

	if (vfs->quota == NULL || unit == 0 || now < tree->quota_off_until_ms)
		return;
	rc = vfs->quota(tree->root_fd, 0, (uint32_t)user_euid(), &q);
	if (rc != 0 || q.limit == 0) {
		if (req->sess == NULL || vfs->quota(tree->root_fd, 1,
		    (uint32_t)req->sess->gid, &q) != 0) {
			/* ESRCH: quotas off; ENOSYS, ENOTTY: none kept */
			if (rc != 0)
				tree->quota_off_until_ms = now +
				    INFO_QUOTA_RECHECK_MS;
			return;
		}
	}
	fscc_fs_apply_quota(fs, q.limit, q.used, unit);
}

static ntstatus_t
info_query_fs(struct smb2_req *req, int klass, struct wcur *w)
{
	const struct vfs_ops *vfs = file_vfs();
	struct tree *tree = req->tree;
	struct vfs_statfs sf;
	struct vfs_stat st;
	struct fscc_fs fs;
	uint8_t label16[256];
	int rc, l16 = 0;
	uint32_t spu;
	uint64_t tm_total, tm_free;

	if ((rc = vfs->statfs(tree->root_fd, &sf)) != 0 ||
	    (rc = vfs->fstat(tree->root_fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	memset(&fs, 0, sizeof(fs));
	spu = sf.bsize >= 512 ? sf.bsize / 512 : 1;
	fs.sectors_per_unit = spu;
	fs.bytes_per_sector = 512;
	fs.total_units = sf.blocks;
	fs.avail_units = sf.bavail;
	fs.actual_avail_units = sf.bfree;
	if (klass == FileFsSizeInformation || klass == FileFsFullSizeInformation)
		info_fs_quota(req, &fs, (uint64_t)spu * 512);
	/*
	 * Time Machine (worker/fruit.h): the size the share is given, less
	 * its sparse bundles, in units of two sectors as Samba's
	 * fruit_disk_free (smbtorture vfs.fruit_timemachine).
	 */
	if ((klass == FileFsSizeInformation ||
	    klass == FileFsFullSizeInformation) &&
	    fruit_tm_size(tree, &tm_total, &tm_free) == 0) {
		fs.sectors_per_unit = 2;
		fs.bytes_per_sector = 512;
		fs.total_units = tm_total / 2;
		fs.avail_units = fs.actual_avail_units = tm_free / 2;
	}
	fs.serial = (uint32_t)(sf.fsid ^ (sf.fsid >> 32));
	fs.volume_created = fscc_time_from_timespec(st.has_btime ? &st.btime :
	    &st.mtime);
	/*
	 * FILE_CASE_SENSITIVE_SEARCH says the file system can look names
	 * up case-sensitively (MS-FSCC 2.5.1), not that this share does:
	 * NTFS sets it on a case-insensitive volume, and so does Samba on
	 * any Linux share whatever its `case sensitive` (source3/smbd/
	 * statvfs.c); usmbd does look up exactly (POSIX handles, `case
	 * sensitive` shares).  smbtorture 4.22 smb2.streams.names3 skips
	 * a server without it.
	 */
	fs.fs_attrs = FILE_CASE_SENSITIVE_SEARCH | FILE_CASE_PRESERVED_NAMES |
	    FILE_UNICODE_ON_DISK | FILE_PERSISTENT_ACLS |
	    FILE_SUPPORTS_SPARSE_FILES | FILE_NAMED_STREAMS |
	    FILE_SUPPORTS_HARD_LINKS | FILE_SUPPORTS_OBJECT_IDS;
	/* FSCTL_DUPLICATE_EXTENTS_TO_FILE is served (worker/smb2_fsctl.c) */
	if (tree->clone_unit != 0)
		fs.fs_attrs |= FILE_SUPPORTS_BLOCK_REFCOUNTING;
	fs.max_name = 255;
	memcpy(fs.object_id, &sf.fsid, 8);
	memcpy(fs.object_id + 8, &st.ino, 8);
	if (tree->share != NULL) {
		l16 = unicode_utf8_to_utf16(tree_name(tree),
		    strlen(tree_name(tree)), label16, sizeof(label16));
		if (l16 < 0)
			l16 = 0;
	}
	if (klass == FileFsControlInformation) {
		/*
		 * MS-FSCC 2.5.2: quotas are not enforced through SMB; the
		 * thresholds and limits say "none" (-1), flags 0.
		 */
		wcur_zero(w, 24);
		wcur_le64(w, UINT64_MAX);
		wcur_le64(w, UINT64_MAX);
		wcur_le32(w, 0);
		wcur_le32(w, 0);
		return STATUS_SUCCESS;
	}
	if (fscc_put_fs(w, klass, &fs, label16, (size_t)l16) != 0)
		return STATUS_INVALID_INFO_CLASS;
	return STATUS_SUCCESS;
}

/*
 * FileFullEaInformation (MS-FSA 2.1.5.12.12): complete entries only, as
 * many as OutputBufferLength holds, so the answer is built in a cursor of
 * that size instead of being cut afterwards like the fixed classes.
 */
static ntstatus_t
info_query_ea(struct smb2_req *req, struct open *op, uint32_t outlen,
    const uint8_t *list, size_t list_len, struct wcur *w, uint8_t *outhdr)
{
	struct wcur lim = *w;
	uint32_t need;
	uint8_t nb[4];
	ntstatus_t status;

	if (!(op->access & FILE_READ_EA)) {
		w->p = outhdr;
		return STATUS_ACCESS_DENIED;
	}
	if ((size_t)(lim.end - lim.p) > outlen)
		lim.end = lim.p + outlen;
	status = smb2_ea_query_need(op->u.file, list, list_len, &lim, &need);
	if (status == STATUS_BUFFER_TOO_SMALL) {
		/* MS-SMB2 2.2.2.2: the error data is the size needed */
		le32_put(nb, need);
		w->p = outhdr;
		smb2_error_encode(w, req->conn->dialect == DIALECT_311, nb,
		    sizeof(nb));
		return status;
	}
	if (status != STATUS_SUCCESS && status != STATUS_BUFFER_OVERFLOW) {
		w->p = outhdr;
		return status;
	}
	/* BUFFER_OVERFLOW is a warning: the entries that fit go out */
	le16_put(outhdr, 9);
	le16_put(outhdr + 2, INFO_OUT_OFFSET);
	le32_put(outhdr + 4, (uint32_t)(lim.p - w->p));
	w->p = lim.p;
	return status;
}

ntstatus_t
smb2_query_info_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body, in;
	struct wcur *w = &rsp->body;
	struct open *op;
	const uint8_t *list = NULL;
	uint8_t type, klass, *outhdr;
	uint32_t outlen, addl, len, inlen;
	uint16_t inoff;
	ntstatus_t status;

	if (cur_le16(c) != 41)
		return STATUS_INVALID_PARAMETER;
	type = cur_u8(c);
	klass = cur_u8(c);
	outlen = cur_le32(c);
	inoff = cur_le16(c);
	cur_skip(c, 2);			/* Reserved */
	inlen = cur_le32(c);
	addl = cur_le32(c);
	cur_skip(c, 4);			/* Flags */
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	/*
	 * MS-SMB2 2.2.37: the input buffer of FileFullEaInformation is a
	 * FILE_GET_EA_INFORMATION list (MS-FSCC 2.4.15.1), the EAs wanted;
	 * no other class of ours reads one.
	 */
	if (type == SMB2_0_INFO_FILE && klass == FileFullEaInformation &&
	    inlen > 0) {
		in = cur_sub(c, inoff, inlen);
		list = cur_view(&in, inlen);
		if (c->err || list == NULL)
			return STATUS_INVALID_PARAMETER;
	}
	outhdr = wcur_reserve(w, 8);
	if (outhdr == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	switch (type) {
	case SMB2_0_INFO_FILE:
		if (klass == FILE_POSIX_INFORMATION) {
			status = smb2_posix_query_info(op, w);
			break;
		}
		if (klass == FileFullEaInformation && outlen >=
		    info_min_len(type, klass))
			return info_query_ea(req, op, outlen, list, inlen, w,
			    outhdr);
		status = info_query_file(req, op, klass, w);
		break;
	case SMB2_0_INFO_FILESYSTEM:
		status = info_query_fs(req, klass, w);
		break;
	case SMB2_0_INFO_SECURITY: {
		struct wcur lim = *w;
		uint32_t need;

		if ((size_t)(lim.end - lim.p) > outlen)
			lim.end = lim.p + outlen;
		status = smb2_secdesc_query(op, addl, &lim, &need);
		if (status == STATUS_SUCCESS)
			w->p = lim.p;
		else if (status == STATUS_BUFFER_TOO_SMALL) {
			/*
			 * MS-SMB2 3.3.5.20.3, 2.2.2.2: an ERROR response
			 * whose data is the size needed (a context in 3.1.1)
			 */
			uint8_t nb[4];

			le32_put(nb, need);
			w->p = outhdr;
			smb2_error_encode(w, req->conn->dialect == DIALECT_311,
			    nb, sizeof(nb));
			return STATUS_BUFFER_TOO_SMALL;
		}
		break;
	}
	default:
		status = STATUS_INVALID_PARAMETER;
		break;
	}
	if (status != STATUS_SUCCESS) {
		w->p = outhdr;
		return status;
	}
	if (w->err) {
		w->err = 0;
		w->p = outhdr;
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	len = (uint32_t)(wcur_off(w) - INFO_OUT_OFFSET);
	if (outlen < info_min_len(type, klass)) {
		w->p = outhdr;
		return STATUS_INFO_LENGTH_MISMATCH;
	}
	if (len > outlen) {
		/* variable classes: what fits, with a warning */
		w->p = outhdr + 8 + outlen;
		len = outlen;
		status = STATUS_BUFFER_OVERFLOW;
	}
	le16_put(outhdr, 9);
	le16_put(outhdr + 2, INFO_OUT_OFFSET);
	le32_put(outhdr + 4, len);
	return status;
}
