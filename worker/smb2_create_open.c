/*
 * The CREATE's open on disk (worker/smb2_create_priv.h): a directory made
 * or opened, a file opened with the access mode the rights ask for (so
 * that the kernel judges them) or made.
 */
#include "worker/smb2_create_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/smb2.h"
#include "worker/smb2_create_fs.h"
#include "worker/smb2_posix.h"
#include "worker/snapshot.h"

/* A directory: made when it is missing, then opened. */
static int
create_open_dir(struct create_call *cr, ntstatus_t *status)
{
	const struct vfs_ops *vfs = file_vfs();
	struct tree *tree = cr->tree;
	struct file_open *f = cr->f;
	uint32_t want = cr->want;
	int fd, rc;

	if (!cr->exists) {
		cr->new_mode = create_new_mode(tree, f->path, &cr->cc.posix, 1);
		rc = vfs->mkdir(tree->root_fd, f->path, cr->new_mode);
		if (rc != 0) {
			/* no parent (create_check_missing did not look) */
			*status = rc == -ENOENT || rc == -ENOTDIR ?
			    STATUS_OBJECT_PATH_NOT_FOUND :
			    ntstatus_from_errno(rc);
			return -1;
		}
		cr->action = FILE_CREATED;
	}
	fd = vfs->open(tree->root_fd, f->path, O_RDONLY | O_DIRECTORY |
	    (cr->links != CREATE_FOLLOW ? O_NOFOLLOW : 0), 0);
	/*
	 * A directory's stream is an xattr: its data access is what was
	 * granted, and the kernel checks each xattr call.
	 */
	if (fd >= 0 && f->stream[0] != '\0') {
		f->readable = (want & (FILE_READ_DATA | FILE_EXECUTE)) != 0 ||
		    cr->disp != FILE_OPEN;
		f->writable = !cr->snapshot && ((want & (FILE_WRITE_DATA |
		    FILE_APPEND_DATA)) != 0 || cr->disp != FILE_OPEN);
	}
	if (fd == -EACCES && !(want & FILE_READ_DATA))
		fd = vfs->open(tree->root_fd, f->path, O_PATH | O_DIRECTORY,
		    0);
	return fd;
}

/*
 * A file (or the base of a stream): opened with the access mode the
 * rights ask for, so that the kernel judges them, or created.
 */
static int
create_open_file(struct create_call *cr)
{
	struct tree *tree = cr->tree;
	struct file_open *f = cr->f;
	/* a previous version's write rights are withheld: read only */
	uint32_t want = cr->want, maxacc = cr->maxacc &
	    (cr->snapshot ? ~SNAPSHOT_WRITE_RIGHTS : ~0u);
	int r = (want & (FILE_READ_DATA | FILE_EXECUTE)) != 0;
	int w = !cr->snapshot &&
	    (want & (FILE_WRITE_DATA | FILE_APPEND_DATA)) != 0;
	int flags, fd;

	if (f->stream[0] != '\0')
		w = w || (!cr->snapshot && cr->disp != FILE_OPEN);
	if (cr->truncate || !cr->exists)
		w = 1;
	flags = w ? (r ? O_RDWR : O_WRONLY) : (r ? O_RDONLY : O_PATH);
	if (cr->access & MAXIMUM_ALLOWED && cr->exists)
		flags = (maxacc & FILE_WRITE_DATA) ?
		    ((maxacc & FILE_READ_DATA) ? O_RDWR : O_WRONLY) :
		    ((maxacc & FILE_READ_DATA) ? O_RDONLY : O_PATH);
	if (cr->special)
		flags = O_PATH;		/* never their data (a FIFO would block) */
	if (flags != O_PATH)
		flags |= O_NONBLOCK | O_NOCTTY;
	if (!cr->exists) {
		/* a new file (or the base of a new stream) */
		flags |= O_CREAT | O_EXCL;
		cr->new_mode = create_new_mode(tree, f->path, &cr->cc.posix, 0);
		if ((flags & O_ACCMODE) != O_RDWR && !(flags & O_PATH))
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		if (flags & O_PATH)
			flags = O_RDWR | O_CREAT | O_EXCL | O_NONBLOCK;
		cr->action = FILE_CREATED;
	} else if (cr->truncate) {
		/* truncated in create_set_up, after the read-only check */
		cr->action = cr->disp == FILE_SUPERSEDE ? FILE_SUPERSEDED :
		    FILE_OVERWRITTEN;
	}
	cr->flags = flags;
	if (flags == O_PATH && cr->pfd >= 0) {
		/* no data access: the lookup's O_PATH fd is the open */
		fd = cr->pfd;
		cr->pfd = -1;
		cr->st_fresh = 1;
	} else
		/* a name found to be no link stays one (never followed) */
		fd = file_vfs()->open(tree->root_fd, f->path, flags |
		    (cr->links != CREATE_FOLLOW ? O_NOFOLLOW : 0),
		    cr->new_mode);
	if (fd >= 0) {
		f->readable = (flags & O_PATH) == 0 &&
		    (flags & O_ACCMODE) != O_WRONLY;
		f->writable = (flags & O_PATH) == 0 &&
		    (flags & O_ACCMODE) != O_RDONLY;
	}
	return fd;
}

/* Open (or create) the object, letting the kernel judge the mode. */
ntstatus_t
create_open_object(struct create_call *cr)
{
	struct file_open *f = cr->f;
	ntstatus_t status = STATUS_SUCCESS;
	int fd;

	cr->truncate = f->stream[0] == '\0' && cr->exists &&
	    (cr->disp == FILE_SUPERSEDE || cr->disp == FILE_OVERWRITE ||
	    cr->disp == FILE_OVERWRITE_IF);
	if (cr->is_dir) {
		fd = create_open_dir(cr, &status);
		if (status != STATUS_SUCCESS)
			return status;
	} else
		fd = create_open_file(cr);
	if (cr->pfd >= 0) {
		close(cr->pfd);
		cr->pfd = -1;
	}
	/*
	 * O_NONBLOCK's EWOULDBLOCK from open(2) of an existing file: another
	 * process's kernel lease, which the kernel is now breaking.
	 */
	if (fd == -EWOULDBLOCK && cr->exists && !cr->is_dir)
		return state_open_klease_wait(cr->req, cr->rsp, f->path);
	if (fd < 0) {
		if (fd == -EXDEV || fd == -ELOOP)
			log_warnx("%s: refused \"%s\": resolves outside the "
			    "share", cr->req->conn->peer, f->path);
		/* a create's ENOENT/ENOTDIR: the parent is missing */
		return !cr->exists && (fd == -ENOENT || fd == -ENOTDIR) ?
		    STATUS_OBJECT_PATH_NOT_FOUND :
		    fd == -ENOENT ? STATUS_OBJECT_NAME_NOT_FOUND :
		    ntstatus_from_errno(fd);
	}
	cr->fd = f->fd = fd;
	f->is_dir = cr->is_dir && f->stream[0] == '\0';
	return STATUS_SUCCESS;
}
