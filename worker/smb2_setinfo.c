/*
 * SMB2 SET_INFO (MS-SMB2 2.2.39, 2.2.40, server rules 3.3.5.21) for files
 * and directories: times and attributes, sizes, delete on close, rename
 * and hard links, security descriptors.  QUERY_INFO is in
 * worker/smb2_info.c.
 */

/*
 * The rename destination check.
 *
 * - Rename destination check (worker/smb2_setinfo.c
 *   info_rename_parent_check): only the renaming client's (ClientGuid's)
 *   own opens of the destination directory can refuse the rename with
 *   SHARING_VIOLATION, as in Samba, whose check sees the opens of the
 *   smbd serving that client.  A rename onto an existing file breaks
 *   that file's handle caching, waits, and is refused with ACCESS_DENIED
 *   while the file is still open (worker/state.c state_rename_target;
 *   MS-FSA 2.1.5.14.11).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/fscc.h"
#include "proto/smb2_hdr.h"
#include "proto/unicode.h"
#include "worker/smb2_notify.h"
#include "worker/snapshot.h"
#include "worker/conn.h"
#include "worker/dirlease.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/file_wt.h"
#include "worker/namerule.h"
#include "worker/shortname.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/smb2_posix.h"
#include "worker/smb2_info_priv.h"
#include "worker/state.h"

/* Is the directory open by f empty?  1 yes, 0 no, -errno. */
static int
info_dir_empty(struct file_open *f)
{
	static uint8_t buf[4096];
	const struct vfs_ops *vfs = file_vfs();
	int fd, rc = 1;
	ssize_t n, off;
	uint16_t reclen;
	const char *nm;

	/* a fresh fd: the open's own listing position stays where it is */
	fd = vfs->open(f->fd, "", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	while (rc == 1 && (n = vfs->getdents(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += reclen) {
			memcpy(&reclen, buf + off + 16, 2);
			nm = (const char *)buf + off + 19;
			if (reclen == 0)
				break;
			if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0 &&
			    !namerule_deletable(f->share, nm)) {
				rc = 0;
				break;
			}
		}
	}
	close(fd);
	return rc;
}

static ntstatus_t
info_set_basic(struct open *op, struct cur *b)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	struct vfs_stat st;
	struct timespec ts[2];
	uint64_t ctime, atime, mtime, chtime;
	uint32_t attrs;
	int rc, has_dos;

	ctime = cur_le64(b);
	atime = cur_le64(b);
	mtime = cur_le64(b);
	chtime = cur_le64(b);
	attrs = cur_le32(b);
	if (b->err)
		return STATUS_INFO_LENGTH_MISMATCH;
	if (!(op->access & FILE_WRITE_ATTRIBUTES))
		return STATUS_ACCESS_DENIED;
	if ((attrs & FILE_ATTRIBUTE_DIRECTORY) && !f->is_dir)
		return STATUS_INVALID_PARAMETER;
	if ((attrs & FILE_ATTRIBUTE_TEMPORARY) && f->is_dir)
		return STATUS_INVALID_PARAMETER;
	/*
	 * MS-FSCC 2.4.7: 0 leaves a time alone; -1 and -2 switch automatic
	 * updates off and on, which the kernel does not offer: they leave
	 * the time alone too.
	 */
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	ts[0].tv_sec = ts[1].tv_sec = 0;
	if (atime != 0 && atime < UINT64_MAX - 1)
		ts[0] = fscc_time_to_timespec(atime);
	if (mtime != 0 && mtime < UINT64_MAX - 1)
		ts[1] = fscc_time_to_timespec(mtime);
	if ((ts[0].tv_nsec != UTIME_OMIT || ts[1].tv_nsec != UTIME_OMIT) &&
	    (rc = vfs->utimens(f->fd, ts)) != 0)
		return ntstatus_from_errno(rc);
	/* a set write time sticks on this handle; none takes a pending one */
	file_wt_set(op, mtime);
	if ((ctime == 0 || ctime >= UINT64_MAX - 1) && attrs == 0 &&
	    (chtime == 0 || chtime >= UINT64_MAX - 1))
		return STATUS_SUCCESS;
	rc = vfs_dos_get(vfs, f->fd, &di);
	if (rc == -EOPNOTSUPP)
		goto unstorable;
	has_dos = rc == 0;
	if (!has_dos) {
		struct fscc_info fi;

		if ((rc = vfs->fstat(f->fd, &st)) != 0)
			return ntstatus_from_errno(rc);
		file_info_from_stat(&st, &di, 0, &fi);
		di.attrs = fi.attrs & FILE_ATTRIBUTE_SETTABLE;
		di.create_time = fi.creation;
	}
	if (ctime != 0 && ctime < UINT64_MAX - 1)
		di.create_time = ctime;
	if (chtime != 0 && chtime < UINT64_MAX - 1) {
		/* kept until the data changes (see file_info_from_stat) */
		if ((rc = vfs->fstat(f->fd, &st)) != 0)
			return ntstatus_from_errno(rc);
		di.change_time = chtime;
		di.change_mtime = fscc_time_from_timespec(&st.mtime);
	}
	if (attrs != 0)
		di.attrs = (attrs & FILE_ATTRIBUTE_SETTABLE) |
		    (di.attrs & FILE_ATTRIBUTE_SPARSE_FILE);
	rc = vfs_dos_set(vfs, f->fd, &di);
	if (rc == -EOPNOTSUPP)
		goto unstorable;
	return ntstatus_from_errno(rc);
unstorable:
	/*
	 * The share's file system keeps no user xattrs (tmpfs before Linux
	 * 6.6, ramfs, some FUSE file systems): the times the kernel keeps
	 * were set above, the creation time, change time and attributes
	 * have nowhere to go.  As Samba does there, they are dropped and
	 * the set succeeds, so that touch -d, cp -a and tar x work; queries
	 * go on deriving them from stat.  (ENOTSUP is EOPNOTSUPP on Linux.)
	 */
	file_dos_unstorable(f);
	return STATUS_SUCCESS;
}

/*
 * A named stream's EndOfFile / AllocationSize: its xattr value is cut or
 * zero-extended (MS-FSA 2.1.5.14.4 on a stream).  The value lives in one
 * xattr, so a size past what an xattr holds is STATUS_DISK_FULL, as a
 * write there is.  An allocation above the size reserves nothing.
 */
static ntstatus_t
info_set_stream_size(struct file_open *f, uint64_t size, int alloc)
{
	const struct vfs_ops *vfs = file_vfs();
	/* scratch: info_xattrs is only used by listings, never meanwhile */
	uint8_t *buf = (uint8_t *)info_xattrs;
	char xname[300];
	ssize_t n;
	int rc;

	if ((rc = vfs_stream_xattr_name(f->stream, xname, sizeof(xname))) != 0)
		return ntstatus_from_errno(rc);
	/* a resource fork in a "._" file (fruit.h): no xattr's limit */
	if (fruit_rsrc_file(f)) {
		n = fruit_rsrc_size(f);
		if (n < 0 && n != -ENODATA)
			return ntstatus_from_errno((int)n);
		if (n >= 0 && (size == (uint64_t)n ||
		    (alloc && size > (uint64_t)n)))
			return STATUS_SUCCESS;
		rc = fruit_rsrc_truncate(f, size);
		return rc == -EFBIG ? STATUS_DISK_FULL : ntstatus_from_errno(rc);
	}
	n = vfs->getxattr(f->fd, xname, buf, sizeof(info_xattrs));
	if (n < 0)
		return ntstatus_from_errno((int)n);
	if (size == (uint64_t)n || (alloc && size > (uint64_t)n))
		return STATUS_SUCCESS;
	if (size > sizeof(info_xattrs))
		return STATUS_DISK_FULL;
	if (size > (uint64_t)n)
		memset(buf + n, 0, (size_t)size - (size_t)n);
	rc = vfs->setxattr(f->fd, xname, buf, (size_t)size, 0);
	if (rc == -E2BIG || rc == -ENOSPC || rc == -ERANGE)
		return STATUS_DISK_FULL;
	return ntstatus_from_errno(rc);
}

static ntstatus_t
info_set_size(struct open *op, struct cur *b, int alloc)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_stat st;
	uint64_t size = cur_le64(b);
	int rc;

	if (b->err)
		return STATUS_INFO_LENGTH_MISMATCH;
	if (!(op->access & FILE_WRITE_DATA))
		return STATUS_ACCESS_DENIED;
	if (f->is_dir)
		return STATUS_INVALID_PARAMETER;
	if (!f->writable)
		return STATUS_ACCESS_DENIED;
	if (size > (uint64_t)INT64_MAX)
		return STATUS_INVALID_PARAMETER;
	if (fruit_is_afpinfo(f))
		return fruit_afpinfo_eof(f, size);
	if (f->stream[0] != '\0')
		return info_set_stream_size(f, size, alloc);
	/*
	 * A pending write time lands now, one set on this handle stays, one
	 * set on another does not (MS-FSA 2.1.5.14.4 / .2).
	 */
	file_wt_resize(op);
	if (!alloc) {
		rc = vfs->ftruncate(f->fd, size);
		goto out;
	}
	/* Allocation: below the size truncates, above it reserves */
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		goto out;
	if (size < st.size) {
		rc = vfs->ftruncate(f->fd, size);
		goto out;
	}
	rc = vfs->fallocate(f->fd, 0, size);
	if (rc == -EOPNOTSUPP)
		rc = 0;
out:
	file_wt_resized(op, rc == 0);
	return ntstatus_from_errno(rc);
}

static ntstatus_t
info_set_disposition(struct open *op, int del)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	int rc;

	if (!(op->access & DELETE_ACCESS))
		return STATUS_ACCESS_DENIED;
	if (!del) {
		f->delete_on_close = 0;
		return state_delete_pending_set(op, 0);
	}
	if (f->path[0] == '\0' && f->stream[0] == '\0')
		return STATUS_CANNOT_DELETE;	/* the share root */
	if (f->stream[0] == '\0' && vfs_dos_get(vfs, f->fd, &di) == 0 &&
	    (di.attrs & FILE_ATTRIBUTE_READONLY))
		return STATUS_CANNOT_DELETE;
	if (f->is_dir) {
		rc = info_dir_empty(f);
		if (rc < 0)
			return ntstatus_from_errno(rc);
		if (rc == 0)
			return STATUS_DIRECTORY_NOT_EMPTY;
	}
	f->delete_on_close = 1;
	/* every open of the file sees it, new opens get DELETE_PENDING */
	return state_delete_pending_set(op, 1);
}

/*
 * Renames the open's named stream to another stream of the same file.
 * The unnamed stream neither moves into a named one nor is replaced by
 * one here (NTFS allows only narrow cases of that): refused.
 */
static ntstatus_t
info_rename_stream(struct open *op, const char *to, int replace)
{
	static uint8_t val[65536];
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	char from_x[300], to_x[300];
	ssize_t n;
	int rc;

	if (f->stream[0] == '\0' || to[0] == '\0')
		return STATUS_INVALID_PARAMETER;
	if (vfs_stream_xattr_name(f->stream, from_x, sizeof(from_x)) != 0 ||
	    vfs_stream_xattr_name(to, to_x, sizeof(to_x)) != 0)
		return STATUS_OBJECT_NAME_INVALID;
	if (strcasecmp(f->stream, to) == 0 && strcmp(f->stream, to) != 0) {
		/* a change of case only: same stream, new spelling */
		replace = 1;
	} else if (vfs->getxattr(f->fd, to_x, NULL, 0) >= 0 && !replace)
		return STATUS_OBJECT_NAME_COLLISION;
	if ((n = vfs->getxattr(f->fd, from_x, val, sizeof(val))) < 0)
		return ntstatus_from_errno((int)n);
	if ((rc = vfs->setxattr(f->fd, to_x, val, (size_t)n, 0)) != 0)
		return ntstatus_from_errno(rc);
	if (strcmp(from_x, to_x) != 0 &&
	    (rc = vfs->removexattr(f->fd, from_x)) != 0)
		return ntstatus_from_errno(rc);
	snprintf(f->stream, sizeof(f->stream), "%s", to);
	return STATUS_SUCCESS;
}

/*
 * A named stream renamed to the unnamed one (":" or "::$DATA", MS-FSA
 * 2.1.5.14.11.1): a file always has its unnamed stream, so without
 * ReplaceIfExists the name collides; with it, NTFS lets a named stream
 * take the place of an empty unnamed stream that no handle has open
 * (smb2.streams.rename2, whose comment in the SMB1 version says it passes
 * on Windows; Samba answers NOT_SUPPORTED).  A directory has no unnamed
 * data stream.  The stream's bytes become the file's data, then the
 * stream goes; the handle now stands for the unnamed stream, its shared
 * record staying where it was made (state_open_leave reads the record's
 * own id).  A rare request, off every hot path.
 */
static ntstatus_t
info_rename_to_default(struct open *op, int replace)
{
	static uint8_t val[65536];
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct shm *s = state_shm();
	struct shm_file_id base;
	struct vfs_stat st, wst;
	char from_x[300];
	ssize_t n, w;
	int fd = f->fd, rc, nopen = 0;
	ntstatus_t status = STATUS_SUCCESS;

	if (f->stream[0] == '\0')
		return STATUS_INVALID_PARAMETER;
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	if (!S_ISREG(st.mode))
		return STATUS_INVALID_PARAMETER;
	if (!replace)
		return STATUS_OBJECT_NAME_COLLISION;
	if (st.size != 0)
		return STATUS_INVALID_PARAMETER;
	/* MS-FSCC 2.4.42: the target open and ReplaceIfExists: refused */
	if (s != NULL) {
		state_file_id(&base, f->dev, f->ino, NULL);
		if (shm_open_count(s, &base, &nopen) == 0 && nopen > 0)
			return STATUS_ACCESS_DENIED;
	}
	if (vfs_stream_xattr_name(f->stream, from_x, sizeof(from_x)) != 0)
		return STATUS_OBJECT_NAME_INVALID;
	if ((n = vfs->getxattr(f->fd, from_x, val, sizeof(val))) < 0)
		return ntstatus_from_errno((int)n);
	if (!f->writable) {
		/* the kernel judges the write, as it judged the xattr's */
		fd = vfs->open(op->tree->root_fd, f->path, O_WRONLY |
		    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
		if (fd < 0)
			return ntstatus_from_errno(fd);
		if ((rc = vfs->fstat(fd, &wst)) != 0 ||
		    wst.dev != st.dev || wst.ino != st.ino) {
			status = rc != 0 ? ntstatus_from_errno(rc) :
			    STATUS_OBJECT_NAME_NOT_FOUND;
			goto out;
		}
	}
	if (n > 0 && (w = vfs->pwrite(fd, val, (size_t)n, 0)) != n) {
		(void)vfs->ftruncate(fd, 0);
		status = w < 0 ? ntstatus_from_errno((int)w) :
		    STATUS_DISK_FULL;
		goto out;
	}
	if ((rc = vfs->removexattr(f->fd, from_x)) != 0) {
		(void)vfs->ftruncate(fd, 0);
		status = ntstatus_from_errno(rc);
		goto out;
	}
	f->stream[0] = '\0';
	/* the file's size changed: watchers and cached listings hear it */
	smb2_notify_file_change(op->tree->root_fd, f, FILE_ACTION_MODIFIED,
	    FILE_NOTIFY_CHANGE_SIZE | FILE_NOTIFY_CHANGE_STREAM_NAME, 0);
	dirlease_break_op(op, f->path);
out:
	if (fd != f->fd)
		close(fd);
	return status;
}

/*
 * MS-FSA 2.1.5.14.11: a rename opens its DestinationDirectory for
 * FILE_ADD_FILE (FILE_ADD_SUBDIRECTORY too for a directory), sharing read
 * and write, next to the directory's current opens -- an open there with
 * DELETE access, or one that does not share write, refuses it with
 * STATUS_SHARING_VIOLATION (smb2.rename.share_delete_and_delete_access
 * and its siblings).  Every open of that directory counts, whichever
 * client and worker holds it, as on Windows (smb2.oplock.batch20).
 * Samba 4.17 looks only at the opens of the smbd serving the renaming
 * client, so there another client's handle with DELETE access (a
 * CHANGE_NOTIFY watcher opened with SEC_RIGHTS_DIR_ALL) does not refuse
 * the rename: smb2.notify-inotify.inotify-rename expects that and fails
 * here, batch20 fails there.  A read of the shared state, nothing
 * inserted.
 */
static ntstatus_t
info_rename_parent_check(struct smb2_req *req, struct smb2_rsp *rsp,
    struct tree *tree, const char *path, int is_dir)
{
	const struct vfs_ops *vfs = file_vfs();
	struct shm *s = state_shm();
	struct shm_file_id fid;
	struct vfs_stat st;
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	uint32_t access;
	ntstatus_t status;

	if (s == NULL)
		return STATUS_SUCCESS;	/* no shared state: local rules only */
	memcpy(parent, path, n);
	parent[n] = '\0';
	if (vfs->statat(tree->root_fd, parent, &st) != 0)
		return STATUS_SUCCESS;	/* the rename itself will say why */
	state_file_id(&fid, st.dev, st.ino, NULL);
	/* FILE_ADD_FILE is FILE_WRITE_DATA, FILE_ADD_SUBDIRECTORY APPEND */
	access = SHM_FILE_WRITE_DATA | (is_dir ? SHM_FILE_APPEND_DATA : 0);
	if (shm_open_share_check(s, &fid, access,
	    SHM_FILE_SHARE_READ | SHM_FILE_SHARE_WRITE, NULL) != -EBUSY)
		return STATUS_SUCCESS;
	/* a directory lease holder may give its handle up when told */
	status = state_rename_parent_breaks(req, rsp, st.dev, st.ino);
	if (status != STATUS_SUCCESS)
		return status;
	if (shm_open_share_check(s, &fid, access,
	    SHM_FILE_SHARE_READ | SHM_FILE_SHARE_WRITE, NULL) == -EBUSY)
		return STATUS_SHARING_VIOLATION;
	return STATUS_SUCCESS;
}

/* Do a and b name entries of the same directory? */
static int
info_same_parent(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	size_t na = sa != NULL ? (size_t)(sa - a) : 0;
	size_t nb = sb != NULL ? (size_t)(sb - b) : 0;

	return na == nb && memcmp(a, b, na) == 0;
}

/*
 * A rename or link to ":name[:$DATA]", a stream of this same file:
 * parsed as the stream of a placeholder base name, with the same rules.
 */
static ntstatus_t
info_set_name_stream(struct smb2_req *req, struct open *op,
    const uint8_t *name16, uint32_t nlen, int link, int replace)
{
	static uint8_t tmp16[2 + 2 * FILE_STREAM_MAX + 16];
	static char target[FILE_PATH_MAX], tstream[FILE_STREAM_MAX];
	ntstatus_t status;

	if (nlen > sizeof(tmp16) - 2)
		return STATUS_OBJECT_NAME_INVALID;
	tmp16[0] = 'x';
	tmp16[1] = 0;
	memcpy(tmp16 + 2, name16, nlen);
	status = file_name_parse_target(req, tmp16, nlen + 2, target,
	    sizeof(target), tstream, sizeof(tstream));
	if (status != STATUS_SUCCESS)
		return status;
	if (link)
		return STATUS_INVALID_PARAMETER;
	if (tstream[0] == '\0')
		return info_rename_to_default(op, replace);
	return info_rename_stream(op, tstream, replace);
}

/* FileRenameInformation / FileLinkInformation (MS-FSCC 2.4.34.2, 2.4.21.2) */
static ntstatus_t
info_set_name(struct smb2_req *req, struct smb2_rsp *rsp, struct open *op,
    struct cur *b, int link)
{
	static char target[FILE_PATH_MAX], tstream[FILE_STREAM_MAX];
	static char from[FILE_PATH_MAX];
	static char client_last[256 * 4];
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	struct tree *tree = op->tree;
	struct vfs_stat st, tst;
	const uint8_t *name16;
	const char *last;
	uint32_t nlen;
	int replace, rc, exists;
	ntstatus_t status;

	if (fscc_rename_decode(b, &replace, &name16, &nlen) != 0)
		return STATUS_INVALID_PARAMETER;
	if (!link && !(op->access & DELETE_ACCESS))
		return STATUS_ACCESS_DENIED;
	if (tree->read_only)
		return STATUS_ACCESS_DENIED;
	if (f->path[0] == '\0')
		return STATUS_ACCESS_DENIED;
	/* some clients send a leading backslash here; it means the root */
	if (nlen >= 2 && name16[0] == '\\' && name16[1] == 0) {
		name16 += 2;
		nlen -= 2;
	}
	if (nlen >= 2 && name16[0] == ':' && name16[1] == 0)
		return info_set_name_stream(req, op, name16, nlen, link,
		    replace);
	status = file_name_parse_target(req, name16, nlen, target,
	    sizeof(target), tstream, sizeof(tstream));
	if (status != STATUS_SUCCESS)
		return status;
	if (tstream[0] != '\0' || f->stream[0] != '\0') {
		/*
		 * file <-> stream by a path: refused, but only after the
		 * destination directory's open, which Windows makes first
		 * (the I/O manager opens it before the file system sees
		 * the rename): a handle there with DELETE access answers
		 * SHARING_VIOLATION (smb2.streams.rename2).
		 */
		if (!link && tree->share != NULL &&
		    !tree->share->case_sensitive)
			(void)vfs_name_resolve(vfs, tree->root_fd, target,
			    sizeof(target));
		if (!link && (status = info_rename_parent_check(req, rsp,
		    tree, target, 0)) != STATUS_SUCCESS)
			return status;
		return STATUS_INVALID_PARAMETER;
	}
	if (target[0] == '\0')
		return STATUS_OBJECT_NAME_INVALID;
	/* a vetoed name is neither a rename's nor a link's target */
	if ((status = namerule_check_path(tree->share, target)) !=
	    STATUS_SUCCESS)
		return status;
	last = strrchr(target, '/');
	if (strlen(last ? last + 1 : target) >= sizeof(client_last))
		return STATUS_OBJECT_NAME_INVALID;
	memcpy(client_last, last ? last + 1 : target,
	    strlen(last ? last + 1 : target) + 1);
	if (tree->share != NULL && !tree->share->case_sensitive &&
	    (rc = vfs_name_resolve(vfs, tree->root_fd, target,
	    sizeof(target))) != 0)
		return ntstatus_from_errno(rc);
	/* an 8.3 short name names its long name, judged as a typed one */
	if (shortname_on(tree->share) &&
	    vfs->statat(tree->root_fd, target, &tst) == -ENOENT &&
	    (rc = shortname_resolve(tree, target, sizeof(target))) != 0) {
		if (rc < 0)
			return ntstatus_from_errno(rc);
		if ((status = namerule_check_path(tree->share, target)) !=
		    STATUS_SUCCESS)
			return status;
		last = strrchr(target, '/');
		last = last ? last + 1 : target;
		if (strlen(last) >= sizeof(client_last))
			return STATUS_OBJECT_NAME_INVALID;
		memcpy(client_last, last, strlen(last) + 1);
	}
	/* nor into a vetoed directory through a symlink */
	if ((status = namerule_check_parent(tree->share, tree->root_fd,
	    target)) != STATUS_SUCCESS)
		return status;
	/* nothing moves or links into a previous version */
	if (snapshot_path_in(tree->share, target))
		return STATUS_NOT_SAME_DEVICE;
	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	/*
	 * The handle's name may be stale: renamed in another worker, or
	 * unlinked under a POSIX handle (POSIX delete semantics,
	 * shm/opens.c), the name may be another file's now, which a rename
	 * or link through this handle must not move.  It follows a rename;
	 * a handle whose file has no name left gets NAME_NOT_FOUND.
	 */
	if ((S_ISREG(st.mode) || S_ISDIR(st.mode)) &&
	    file_open_path_current(tree->root_fd, f, &st) != 0)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	rc = vfs->statat(tree->root_fd, target, &tst);
	exists = rc == 0;
	if (rc == -EXDEV || rc == -ELOOP) {
		log_warnx("%s: refused rename to \"%s\": outside the share",
		    req->conn->peer, target);
		return STATUS_ACCESS_DENIED;
	}
	if (exists && tst.dev == st.dev && tst.ino == st.ino) {
		/* the same file: a change of case only, keep the client's */
		char *slash = strrchr(target, '/');
		size_t pre = slash ? (size_t)(slash + 1 - target) : 0;

		if (link)
			return replace ? STATUS_SUCCESS :
			    STATUS_OBJECT_NAME_COLLISION;
		if (pre + strlen(client_last) >= sizeof(target))
			return STATUS_OBJECT_NAME_INVALID;
		memcpy(target + pre, client_last, strlen(client_last) + 1);
		if (strcmp(target, f->path) == 0)
			return STATUS_SUCCESS;
		exists = 0;
		replace = 1;
	} else if (exists) {
		if (!replace)
			return STATUS_OBJECT_NAME_COLLISION;
		if (S_ISDIR(tst.mode))
			return STATUS_ACCESS_DENIED;
		/* an open target: its handle caching goes, then it refuses */
		if (!link && (status = state_rename_target(req, rsp, op,
		    tst.dev, tst.ino)) != STATUS_SUCCESS)
			return status;
	} else if (rc == -ENOTDIR || (rc == -ENOENT && last != NULL)) {
		/* is the target's directory there? */
		char parent[FILE_PATH_MAX];
		const char *s = strrchr(target, '/');

		if (s != NULL) {
			memcpy(parent, target, (size_t)(s - target));
			parent[s - target] = '\0';
			if (vfs->statat(tree->root_fd, parent, &tst) != 0)
				return STATUS_OBJECT_PATH_NOT_FOUND;
		}
	}
	if (link) {
		if (f->is_dir)
			return STATUS_FILE_IS_A_DIRECTORY;
		if (exists && (rc = vfs->unlink(tree->root_fd, target, 0)) != 0)
			return ntstatus_from_errno(rc);
		rc = vfs->link(tree->root_fd, f->path, target);
		if (rc == 0)
			dirlease_break_op(op, target);
		return ntstatus_from_errno(rc);
	}
	if ((status = info_rename_parent_check(req, rsp, tree, target,
	    f->is_dir)) !=
	    STATUS_SUCCESS)
		return status;
	/*
	 * MS-FSA 2.1.5.14.11: not a directory with open files below; a
	 * Mac renames it as POSIX does (fruit:posix_rename, worker/fruit.h)
	 */
	if (f->is_dir && !fruit_posix_rename(req->conn, tree) &&
	    (status = state_rename_dir_below(req, rsp, op)) != STATUS_SUCCESS)
		return status;
	dirlease_note_gone(tree, f->path);
	rc = vfs->rename(tree->root_fd, f->path, target, replace);
	if (rc != 0)
		return ntstatus_from_errno(rc);
	memcpy(from, f->path, sizeof(from));
	snprintf(f->path, sizeof(f->path), "%s", target);
	fruit_rsrc_rename(tree->share, tree->root_fd, from, f);
	/* the opens made by the old name now stand for the new one */
	file_open_renamed(f, from);
	state_open_renamed(op, from);
	smb2_notify_renamed(tree->root_fd, f);
	/* out of one directory and into another: both listings changed */
	dirlease_break_op(op, from);
	if (!info_same_parent(from, f->path))
		dirlease_break_op(op, f->path);
	return STATUS_SUCCESS;
}

static ntstatus_t
info_set(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body, b;
	struct open *op;
	struct file_open *f;
	uint8_t type, klass;
	uint32_t blen, mode, addl;
	int on;
	uint16_t boff;
	ntstatus_t status;

	if (cur_le16(c) != 33)
		return STATUS_INVALID_PARAMETER;
	type = cur_u8(c);
	klass = cur_u8(c);
	blen = cur_le32(c);
	boff = cur_le16(c);
	cur_skip(c, 2);			/* Reserved */
	addl = cur_le32(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	b = cur_sub(c, boff, blen);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	f = op->u.file;
	if (type == SMB2_0_INFO_SECURITY) {
		const uint8_t *sd = cur_view(&b, blen);

		if (sd == NULL)
			return STATUS_INVALID_PARAMETER;
		/* a previous version (below) */
		if (snapshot_path_in(op->tree->share, f->path))
			return STATUS_MEDIA_WRITE_PROTECTED;
		if (!smb2_posix_sd_chmod(op, addl, sd, blen, &status))
			status = smb2_secdesc_set(op, addl, sd, blen);
		if (status != STATUS_SUCCESS)
			return status;
		/* MS-FSA 2.1.5.16: inotify sees only an IN_ATTRIB */
		smb2_notify_file_change(op->tree->root_fd, f,
		    FILE_ACTION_MODIFIED, FILE_NOTIFY_CHANGE_SECURITY, 0);
		wcur_le16(&rsp->body, 2);
		return STATUS_SUCCESS;
	}
	if (type != SMB2_0_INFO_FILE)
		return type == SMB2_0_INFO_FILESYSTEM ?
		    STATUS_NOT_SUPPORTED : STATUS_INVALID_PARAMETER;
	if (klass != FilePositionInformation && klass != FileModeInformation) {
		if (req->tree->read_only)
			return STATUS_ACCESS_DENIED;
		/* a previous version: a read-only volume of its own to Windows */
		if (snapshot_path_in(op->tree->share, f->path))
			return klass == FileRenameInformation ||
			    klass == FileLinkInformation ||
			    klass == FileRenameInformationEx ?
			    STATUS_NOT_SAME_DEVICE :
			    STATUS_MEDIA_WRITE_PROTECTED;
	}
	switch (klass) {
	case FileBasicInformation:
		if (blen < 40)
			return STATUS_INFO_LENGTH_MISMATCH;
	{
		/* which fields change, for CHANGE_NOTIFY (MS-FSA 2.1.5.14.2) */
		struct cur pb = b;
		uint32_t nf = 0;
		int ctime_set;

		if (cur_le64(&pb) != 0)
			nf |= FILE_NOTIFY_CHANGE_CREATION;
		if (cur_le64(&pb) - 1 < UINT64_MAX - 2)
			nf |= FILE_NOTIFY_CHANGE_LAST_ACCESS;
		if (cur_le64(&pb) - 1 < UINT64_MAX - 2)
			nf |= FILE_NOTIFY_CHANGE_LAST_WRITE;
		/* no notify filter for ChangeTime; a listing shows it */
		ctime_set = cur_le64(&pb) - 1 < UINT64_MAX - 2;
		if (cur_le32(&pb) != 0)
			nf |= FILE_NOTIFY_CHANGE_ATTRIBUTES;
		status = info_set_basic(op, &b);
		if (status == STATUS_SUCCESS && nf != 0)
			smb2_notify_file_change(op->tree->root_fd, f,
			    FILE_ACTION_MODIFIED, nf, 0);
		if (status == STATUS_SUCCESS && (nf != 0 || ctime_set))
			dirlease_break_op(op, f->path);
		break;
	}
	case FileEndOfFileInformation:
	case FileAllocationInformation:
		status = info_set_size(op, &b, klass == FileAllocationInformation);
		/* MS-FSA 2.1.5.14.2 / .4: read caching goes, as on a write */
		if (status == STATUS_SUCCESS) {
			state_break_read_caching(op);
			/* a listing shows the size */
			if (f->stream[0] == '\0')
				dirlease_break_op(op, f->path);
		}
		break;
	case FileDispositionInformation:
	case FileDispositionInformationEx:
		if (blen < (klass == FileDispositionInformation ? 1u : 4u))
			return STATUS_INFO_LENGTH_MISMATCH;
		/*
		 * FILE_DISPOSITION_DELETE = 1.  FILE_DISPOSITION_POSIX_SEMANTICS
		 * (2) is what every delete through a POSIX handle gets
		 * anyway (its name goes at the close that leaves only POSIX
		 * opens of it: shm/opens.c, SHM_OPEN_POSIX); a Windows handle
		 * keeps Windows semantics, flag or not.
		 */
		on = klass == FileDispositionInformation ? cur_u8(&b) != 0 :
		    (cur_le32(&b) & 1) != 0;
		/*
		 * Setting it breaks the other lease keys' handle caching
		 * first, and waits, as a rename does (Samba 4.22 does the
		 * same; smb2.lease.unlink).
		 */
		if (on && (status = state_rename_breaks(req, rsp, op)) !=
		    STATUS_SUCCESS)
			return status;
		status = info_set_disposition(op, on);
		break;
	case FileRenameInformation:
		/* MS-FSA 2.1.5.14.11: other handle caching goes first */
		status = state_rename_breaks(req, rsp, op);
		if (status != STATUS_SUCCESS)
			return status;
		status = info_set_name(req, rsp, op, &b, 0);
		break;
	case FileLinkInformation:
		status = info_set_name(req, rsp, op, &b, 1);
		break;
	case FilePositionInformation:
		if (blen < 8)
			return STATUS_INFO_LENGTH_MISMATCH;
		f->position = cur_le64(&b);
		status = STATUS_SUCCESS;
		break;
	case FileModeInformation:
		if (blen < 4)
			return STATUS_INFO_LENGTH_MISMATCH;
		mode = cur_le32(&b);
		/* MS-FSCC 2.4.26: only these bits may be set */
		if (mode & ~0x0000003Eu)
			return STATUS_INVALID_PARAMETER;
		f->mode = mode;
		status = STATUS_SUCCESS;
		break;
	case FileFullEaInformation: {
		const uint8_t *eas = cur_view(&b, blen);

		if (!(op->access & FILE_WRITE_EA))
			return STATUS_ACCESS_DENIED;
		if (eas == NULL)
			return STATUS_INVALID_PARAMETER;
		status = smb2_ea_set(f, eas, blen);
		/* MS-FSA 2.1.5.14.6: inotify sees only an IN_ATTRIB */
		if (status == STATUS_SUCCESS)
			smb2_notify_file_change(op->tree->root_fd, f,
			    FILE_ACTION_MODIFIED, FILE_NOTIFY_CHANGE_EA, 0);
		break;
	}
	default:
		return STATUS_INVALID_INFO_CLASS;
	}
	if (status != STATUS_SUCCESS)
		return status;
	/* MS-SMB2 2.2.40 */
	wcur_le16(&rsp->body, 2);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_set_info_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	ntstatus_t status = info_set(req, rsp);

	/*
	 * A SET_INFO waiting for lease breaks (a rename, delete on close)
	 * sends no interim response: Windows answers it once, when it
	 * completes (smb2.compound_async.rename_non_compound_no_async).
	 */
	if (status == STATUS_PENDING)
		rsp->no_interim = 1;
	return status;
}
