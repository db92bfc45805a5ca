/*
 * SMB2 CLOSE (MS-SMB2 2.2.15, 2.2.16; server rules 3.3.5.10) and the
 * release of an open's file state wherever an open ends (CLOSE, tree
 * disconnect, logoff, connection loss): a pending delete happens there.
 */
#include <errno.h>
#include <string.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/fscc.h"
#include "worker/conn.h"
#include "worker/dirlease.h"
#include "worker/file_open.h"
#include "worker/file_wt.h"
#include "worker/fruit.h"
#include "worker/namerule.h"
#include "worker/open.h"
#include "worker/recycle.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/smb2_notify.h"
#include "worker/state.h"
#include "worker/unlink_as.h"
#include "worker/worker.h"

#define SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB	0x0001

/*
 * A delete on close found f's name gone or another file's: a rename in
 * another worker may have moved f.  1 when f->path now names f elsewhere.
 */
static int
close_path_moved(int root_fd, struct file_open *f)
{
	char was[sizeof(f->path)];
	struct vfs_stat st;

	if (file_vfs()->fstat(f->fd, &st) != 0)
		return 0;
	memcpy(was, f->path, sizeof(was));
	return file_open_path_current(root_fd, f, &st) == 0 &&
	    strcmp(was, f->path) != 0;
}

/*
 * Is the delete of f another user's (duid) into a recycle bin?  Then it
 * is his worker's to do: the file goes into his bin, not the closer's.
 */
static int
close_recycle_as(const struct tree *t, const struct file_open *f,
    uint32_t duid)
{
	return t->share != NULL && t->share->recycle_dir != NULL &&
	    !f->is_dir && duid != 0 && duid != (uint32_t)user_euid();
}

/*
 * Releases the file state of an open (CLOSE, tree disconnect, logoff,
 * connection loss): a pending delete happens now.
 */
void
file_open_close(struct open *op)
{
	const struct vfs_ops *vfs = file_vfs();
	struct file_open *f = op->u.file;
	char xname[300];
	uint32_t duid;
	int rc, del, del_base;

	if (f == NULL)
		return;
	/* its closing and unlink are no local change (worker/dirlease.h) */
	dirlease_note(op->tree, f->path);
	dirlease_watch_close(op);
	file_wt_close(op);	/* a deferred write time lands (CLOSE did it) */
	/*
	 * Its size and write time in a listing moved: Samba breaks the
	 * directory's leases at the close of a written handle, not at each
	 * write (smb2.dirlease.v2_request).
	 */
	if (f->modified && f->stream[0] == '\0')
		dirlease_break_op(op, f->path);
	/* Across workers: only the last close of a delete-pending file. */
	del = f->delete_on_close;
	state_open_leave_ex(op, &del, &duid, &del_base);
	/* A directory left delete pending behind other handles: watchers */
	if (f->delete_on_close && !del && f->is_dir && f->stream[0] == '\0')
		smb2_notify_delete_pending(f->dev, f->ino);
	/*
	 * Left to another open's last close, maybe another user's worker,
	 * which may have to ask this user's worker to unlink: vouch for it
	 * here, where nobody else can write (worker/unlink_as.h).
	 */
	if (f->delete_on_close && !del && f->stream[0] == '\0') {
		unlink_as_vouch(op->tree, f);
		state_break_handle_caching(f->dev, f->ino);
	}
	/*
	 * The last stream open of a file left delete pending behind it:
	 * the file goes now, streams and all.
	 */
	if (del_base)
		del = 1;
	if (del && op->tree != NULL && op->tree->root_fd >= 0) {
		if (f->stream[0] != '\0' && !del_base) {
			/* a Mac keeps a resource fork that holds data */
			if (vfs_stream_xattr_name(f->stream, xname,
			    sizeof(xname)) == 0 && !fruit_rsrc_kept(f) &&
			    (fruit_rsrc_file(f) ? fruit_rsrc_remove(f) :
			    fruit_meta_netatalk(f) ? fruit_afpinfo_remove(f) :
			    vfs->removexattr(f->fd, xname)) == 0)
				smb2_notify_file_change(op->tree->root_fd, f,
				    FILE_ACTION_REMOVED_STREAM,
				    FILE_NOTIFY_CHANGE_STREAM_NAME, 1);
		} else if (f->path[0] != '\0') {
			/*
			 * Only the file this open has: a rename in another
			 * worker may have given its old name to another file.
			 */
			dirlease_note_gone(op->tree, f->path);
			/* delete veto files: what only hid the directory */
			if (f->is_dir && (rc = namerule_purge(op->tree->share,
			    f->fd)) != 0)
				log_debug(2, "delete veto files in \"%s\": %s",
				    f->path, strerror(-rc));
			/*
			 * A bin takes the file as the user who deleted it
			 * (worker/recycle.h): another user's delete is done
			 * by his worker, into his bin, with his rights.
			 */
			if (close_recycle_as(op->tree, f, duid) &&
			    unlink_as_request(op->tree, f, duid) == 0)
				goto done;
			rc = recycle_unlink(op->tree->share, worker_user(),
			    op->tree->root_fd, f->path, f->is_dir, f->dev,
			    f->ino);
			/* renamed in another worker: its name now */
			if ((rc == -ESTALE || rc == -ENOENT) &&
			    close_path_moved(op->tree->root_fd, f)) {
				dirlease_note_gone(op->tree, f->path);
				rc = recycle_unlink(op->tree->share,
				    worker_user(), op->tree->root_fd, f->path,
				    f->is_dir, f->dev, f->ino);
			}
			/*
			 * The name is gone from its directory's listing.  The
			 * parent key is spared only when this open set the
			 * delete itself (Samba compares the setter's key with
			 * the last closer's; smb2.dirlease.unlink_*).
			 */
			/* its "._" file goes too, as Samba's fruit_unlink */
			if (rc == 0 && !f->is_dir)
				(void)fruit_rsrc_unlinked(op->tree->share,
				    worker_user(), op->tree->root_fd, f->path);
			if (rc == 0)
				dirlease_break_parent(op->conn, op->tree,
				    f->path, f->delete_on_close &&
				    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE ?
				    op->parent_lease_key : NULL);
			if (rc == -ESTALE)
				log_info("delete on close of %s\\%s: the name is "
				    "now another file (dev/ino changed): not "
				    "deleted", op->tree->share != NULL ?
				    tree_name(op->tree) : "", f->path);
			else if (rc != 0)
				log_debug(2, "delete on close of \"%s\": %s",
				    f->path, strerror(-rc));
			/* Another user made it delete pending: done as them. */
			if ((rc == -EACCES || rc == -EPERM) && duid != 0 &&
			    duid != (uint32_t)user_euid())
				(void)unlink_as_request(op->tree, f, duid);
		}
	}
done:
	op->u.file = NULL;
	file_open_put(f);
}

ntstatus_t
smb2_close_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body;
	struct fscc_info fi;
	struct open *op;
	uint16_t flags;
	ntstatus_t status;
	int post;

	if (cur_le16(c) != 24)
		return STATUS_INVALID_PARAMETER;
	flags = cur_le16(c);
	cur_skip(c, 4);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	/*
	 * The close of a handle opened with FILE_DELETE_ON_CLOSE makes the
	 * file delete pending: the other lease keys lose their handle
	 * caching first and the CLOSE waits for their acknowledgement, as
	 * Samba 4.22's does (smb2.lease.unlink); on a disconnect nobody
	 * waits (file_open_close).
	 */
	if (op->u.file != NULL && op->u.file->delete_on_close &&
	    op->u.file->stream[0] == '\0' &&
	    (status = state_rename_breaks(req, rsp, op)) != STATUS_SUCCESS)
		return status;
	file_wt_close(op);	/* a deferred write time lands first */
	post = (flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB) &&
	    file_info_fill(op->u.file, &fi) == STATUS_SUCCESS;
	file_open_close(op);
	open_release(op);
	/* MS-SMB2 2.2.16 */
	wcur_le16(&rsp->body, 60);
	wcur_le16(&rsp->body, post ? SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB : 0);
	wcur_le32(&rsp->body, 0);
	if (post) {
		wcur_le64(&rsp->body, fi.creation);
		wcur_le64(&rsp->body, fi.access);
		wcur_le64(&rsp->body, fi.write);
		wcur_le64(&rsp->body, fi.change);
		wcur_le64(&rsp->body, fi.alloc);
		wcur_le64(&rsp->body, fi.eof);
		wcur_le32(&rsp->body, fi.attrs);
	} else
		wcur_zero(&rsp->body, 52);
	return STATUS_SUCCESS;
}
