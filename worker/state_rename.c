/*
 * Renaming a directory with files open below it (MS-FSA 2.1.5.14.11 says
 * no), as Windows does it (smbtorture 4.22 smb2.lease.rename_dir_openfile):
 * an open below that caches handles (a lease with H) may be asked to give
 * it up, one file at a time, and the rename waits for each answer; the
 * holder that closes lets the rename go on, the holder that keeps its
 * handle (acknowledges to R) makes it fail with ACCESS_DENIED, and so does
 * any open below without handle caching, at once and without a break.
 * The rename waits for at most as many breaks as it found files with
 * handle caching at its first look: an open made below meanwhile is not
 * waited for (the test's addopen cases).
 *
 * Which opens are below is known by path, for this worker's opens only
 * (worker/file_open.c file_open_next_below: the shared open records carry
 * no path); their files' opens in other workers count through the shared
 * state (shm_open_handle_caching).  A file below open only in another
 * worker does not stop the rename (Linux renames the directory under it):
 * Samba's default is the same (without `strict rename` it looks at its
 * own process's opens only, source3/smbd/dir.c have_file_open_below);
 * a strict look would need the path of every open in the shared state,
 * or a walk of the tree below with a lookup per file.
 */
#include "worker/state.h"
#include "worker/state_priv.h"

#include <string.h>

#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/open.h"

ntstatus_t
state_rename_dir_below(struct smb2_req *req, struct smb2_rsp *rsp,
    struct open *op)
{
	const struct file_open *f = op->u.file, *g = NULL;
	struct conn_pending *p = dispatch_resuming(req);
	struct shm *s = state_shm();
	struct shm_file_id fid, first;
	struct shm_break_req br;
	unsigned nfiles = 0, left;
	ntstatus_t status;
	int cached, bare, same;

	memset(&first, 0, sizeof(first));
	while ((g = file_open_next_below(f->share, f->path, f, g)) != NULL) {
		if (s == NULL)
			return STATUS_ACCESS_DENIED;
		state_file_id(&fid, g->dev, g->ino, g->stream);
		if (shm_open_handle_caching(s, &fid, &cached, &bare) != 0 ||
		    bare > 0)
			return STATUS_ACCESS_DENIED;
		if (cached == 0)
			continue;	/* a handle of ours not yet in the state */
		if (nfiles++ == 0)
			first = fid;
	}
	if (nfiles == 0)
		return STATUS_SUCCESS;
	/*
	 * waits_left is 1 + the breaks still allowed once the first look
	 * set it (0: this is the first look).  Waking again for the file
	 * waited on, its break still going, costs nothing.
	 */
	left = p != NULL && p->waits_left > 0 ? p->waits_left - 1 : nfiles;
	same = p != NULL && p->waits_left > 0 && p->dev == first.dev &&
	    p->ino == first.ino;
	if (!same) {
		if (left == 0)
			return STATUS_ACCESS_DENIED;
		left--;
	}
	memset(&br, 0, sizeof(br));
	br.access = DELETE_ACCESS;
	br.flags = SHM_BREAK_HANDLE_ONLY;
	status = state_break_wait(req, rsp, s, &first, &br);
	if (status != STATUS_PENDING)
		return status == STATUS_SUCCESS ? STATUS_ACCESS_DENIED : status;
	p = conn_pending_find(req->chan != NULL ? req->chan : req->conn, 0,
	    req->message_id);
	if (p != NULL)
		p->waits_left = left + 1;
	return status;
}
