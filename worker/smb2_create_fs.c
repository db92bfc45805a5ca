/*
 * What a CREATE asks of the file system before it opens anything: the
 * generic rights mapped, the maximal access (asked of the kernel: the
 * process is the user), the lookup of the name, the DOS attributes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/fscc.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/smb2_create_fs.h"
#include "worker/smb2_posix.h"
#include "worker/worker.h"

uint32_t
create_map_generic(uint32_t a)
{
	/* MS-SMB2 / MS-DTYP 2.4.3 file generic mapping */
	if (a & GENERIC_READ)
		a |= 0x00120089u;
	if (a & GENERIC_WRITE)
		a |= 0x00120116u;
	if (a & GENERIC_EXECUTE)
		a |= 0x001200A0u;
	if (a & GENERIC_ALL)
		a |= FILE_ALL_ACCESS;
	return a & ~(GENERIC_READ | GENERIC_WRITE | GENERIC_EXECUTE |
	    GENERIC_ALL);
}

/* The parent of path ("" for a top-level name) in buf. */
void
create_parent(const char *path, char *buf, size_t len)
{
	const char *s = strrchr(path, '/');
	size_t n = s ? (size_t)(s - path) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
}

/*
 * What this user may do with path, by asking the kernel (faccessat with
 * AT_EACCESS: the process is the user).  The parent is opened once and
 * asked about the name and about itself (DELETE needs write and search
 * on it), instead of one parent lookup per question.
 */
uint32_t
create_maximal_access(struct tree *tree, const char *path,
    const struct vfs_stat *st, int delete_only)
{
	const struct vfs_ops *vfs = file_vfs();
	char parent[FILE_PATH_MAX];
	const char *last;
	uint32_t a = FILE_READ_ATTRIBUTES | FILE_READ_EA | READ_CONTROL |
	    SYNCHRONIZE;
	int pfd = -1, ok_r, ok_x, ok_w;

	if (path[0] == '\0') {
		ok_r = vfs->access(tree->root_fd, path, R_OK) == 0;
		ok_x = vfs->access(tree->root_fd, path, X_OK) == 0;
		ok_w = vfs->access(tree->root_fd, path, W_OK) == 0;
	} else {
		create_parent(path, parent, sizeof(parent));
		last = strrchr(path, '/');
		last = last != NULL ? last + 1 : path;
		pfd = vfs->open(tree->root_fd, parent, O_PATH | O_DIRECTORY, 0);
		/* delete_only: just the DELETE bit (the parent's rights) */
		ok_r = !delete_only && pfd >= 0 &&
		    vfs->accessat(pfd, last, R_OK) == 0;
		ok_x = !delete_only && pfd >= 0 &&
		    vfs->accessat(pfd, last, X_OK) == 0;
		ok_w = !delete_only && pfd >= 0 &&
		    vfs->accessat(pfd, last, W_OK) == 0;
	}
	if (ok_r)
		a |= FILE_READ_DATA;
	if (ok_x)
		a |= FILE_EXECUTE;
	if (ok_w)
		a |= FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA |
		    FILE_WRITE_ATTRIBUTES |
		    (S_ISDIR(st->mode) ? FILE_DELETE_CHILD : 0);
	if (st->uid == (uint32_t)user_euid())
		/*
		 * The owner may chmod: what the mode withholds (execute) it
		 * can grant itself, as Samba's owner mapping says.
		 */
		a |= FILE_WRITE_ATTRIBUTES | WRITE_DAC | WRITE_OWNER |
		    ((a & FILE_READ_DATA) && (a & FILE_WRITE_DATA) ?
		    FILE_EXECUTE | FILE_DELETE_CHILD : 0);
	if (pfd >= 0) {
		if (vfs->accessat(pfd, "", W_OK | X_OK) == 0)
			a |= DELETE_ACCESS;
		close(pfd);
	}
	if (tree->read_only)
		a &= ~(FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA |
		    FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | DELETE_ACCESS |
		    WRITE_DAC | WRITE_OWNER);
	return a;
}

/*
 * The name as spelled: stat through an O_PATH open that is kept (*pfd),
 * so an open without data access needs no second lookup and fstat.  What
 * vfs statat does (openat2 beneath the root, statx) minus its close.
 */
int
create_lookup(int root, const char *path, struct vfs_stat *st, int *pfd,
    int links)
{
	const struct vfs_ops *vfs = file_vfs();
	int fd, rc;

	if (*pfd >= 0) {
		close(*pfd);
		*pfd = -1;
	}
	if (links == CREATE_NOLINKS)
		fd = vfs->open_nolinks(root, path, O_PATH | O_NOFOLLOW, 0);
	else
		fd = vfs->open(root, path, links == CREATE_NOFOLLOW ?
		    O_PATH | O_NOFOLLOW : O_PATH, 0);
	if (fd < 0)
		return fd;
	if ((rc = vfs->fstat(fd, st)) != 0) {
		close(fd);
		return rc;
	}
	*pfd = fd;
	return 0;
}

/*
 * The DOS xattr.  The kernel refuses fgetxattr on an O_PATH fd (EBADF;
 * getxattrat refuses it too), which the vfs retries through
 * /proc/self/fd/N: an O_PATH open goes there directly, one syscall.
 */
int
create_dos_get(int fd, int opath, struct vfs_dosinfo *di)
{
	uint8_t buf[64];
	char p[32];
	ssize_t n;

	if (!opath || file_vfs() != &vfs_posix)
		return vfs_dos_get(file_vfs(), fd, di);
	memset(di, 0, sizeof(*di));
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = getxattr(p, VFS_XATTR_DOS, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return vfs_dos_decode(buf, (size_t)n, di);
}

ntstatus_t
create_open_stream(struct file_open *f, int may_create, int truncate,
    uint32_t *action)
{
	const struct vfs_ops *vfs = file_vfs();
	char xname[300];
	ssize_t n;
	int rc;

	if (vfs_stream_xattr_name(f->stream, xname, sizeof(xname)) != 0)
		return STATUS_OBJECT_NAME_INVALID;
	/* a resource fork in a "._" file, made as Samba makes it (fruit.h) */
	if (fruit_rsrc_file(f)) {
		int made = 0;

		n = fruit_rsrc_size(f);
		if (n < 0 && n != -ENODATA)
			return ntstatus_from_errno((int)n);
		if (n == -ENODATA && !may_create)
			return STATUS_OBJECT_NAME_NOT_FOUND;
		if (n == -ENODATA || truncate) {
			if ((rc = fruit_rsrc_create(f, truncate, &made)) != 0)
				return ntstatus_from_errno(rc);
			*action = n == -ENODATA ? FILE_CREATED :
			    FILE_OVERWRITTEN;
		}
		return STATUS_SUCCESS;
	}
	/* netatalk's blob is an AfpInfo, or none (fruit.h) */
	n = fruit_meta_netatalk(f) ? file_stream_size(f) :
	    vfs->getxattr(f->fd, xname, NULL, 0);
	if (n < 0 && n != -ENODATA)
		return ntstatus_from_errno((int)n);
	/*
	 * AFP_AfpInfo is stored by its first write (fruit.h): until then it
	 * reads as a new record and is nothing on disk, as Samba keeps it
	 * in memory only, so an open never written leaves nothing behind
	 * and no close has to remove what another open may have written
	 * meanwhile.  The kernel still says whether the user could write it.
	 */
	if (n == -ENODATA) {
		if (!may_create)
			return STATUS_OBJECT_NAME_NOT_FOUND;
		rc = fruit_is_afpinfo(f) ? vfs->accessat(f->fd, "", W_OK) :
		    vfs->setxattr(f->fd, xname, "", 0, XATTR_CREATE);
		if (rc != 0)
			return ntstatus_from_errno(rc);
		*action = FILE_CREATED;
	} else if (truncate) {
		/* an AfpInfo overwritten is as new: the same */
		rc = fruit_meta_netatalk(f) ? fruit_afpinfo_remove(f) :
		    fruit_is_afpinfo(f) ? vfs->removexattr(f->fd, xname) :
		    vfs->setxattr(f->fd, xname, "", 0, 0);
		if (rc != 0 && rc != -ENODATA)
			return ntstatus_from_errno(rc);
		*action = FILE_OVERWRITTEN;
	}
	return STATUS_SUCCESS;
}

uint32_t
create_new_mode(const struct tree *t, const char *path,
    const struct smb2_posix_req *pr, int is_dir)
{
	const struct conf_share *sh = t->share;
	char parent[FILE_PATH_MAX];
	struct vfs_stat st;
	uint32_t pmode = 0;

	if (sh != NULL && sh->inherit_permissions && !pr->posix) {
		create_parent(path, parent, sizeof(parent));
		/* the root's is one fstat of the tree's fd, not a lookup */
		if ((parent[0] == '\0' ?
		    file_vfs()->fstat(t->root_fd, &st) :
		    file_vfs()->statat(t->root_fd, parent, &st)) == 0)
			pmode = st.mode;
	}
	return smb2_posix_new_mode(pr, sh, is_dir, pmode);
}
