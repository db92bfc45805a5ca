/*
 * SMB2 CREATE (MS-SMB2 2.2.13, 2.2.14; server rules 3.3.5.9; CLOSE is in
 * worker/smb2_close.c).  What the user may do is decided by the kernel:
 * the file is opened with the access mode the client asked for, and an
 * EACCES from open(2) is the answer.  Share-mode and lease state belong to
 * the shm/ layer (next issue): their contexts are parsed and noted here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/create_ctx.h"
#include "proto/fscc.h"
#include "worker/conn.h"
#include "worker/dfs.h"
#include "worker/dirlease.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/namerule.h"
#include "worker/shortname.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_create_ctx.h"
#include "worker/smb2_create_fs.h"
#include "worker/smb2_file.h"
#include "worker/smb2_notify.h"
#include "worker/smb2_posix.h"
#include "worker/smb2_reparse.h"
#include "worker/snapshot.h"
#include "worker/worker.h"
#include "worker/state.h"
#include "worker/durable.h"

#include "worker/smb2_create_priv.h"


static void
create_call_init(struct create_call *cr, struct smb2_req *req,
    struct smb2_rsp *rsp)
{
	cr->req = req;
	cr->rsp = rsp;
	cr->tree = req->tree;
	cr->name16 = NULL;
	cr->f = NULL;
	cr->op = NULL;
	memset(&cr->grant, 0, sizeof(cr->grant));
	cr->want = 0;
	cr->maxacc = 0;
	cr->snapshot = 0;
	cr->new_mode = 0;
	cr->action = FILE_OPENED;
	cr->exists = 0;
	cr->is_dir = 0;
	cr->flags = 0;
	cr->fd = -1;
	cr->truncate = 0;
	cr->dos_known = 0;
	cr->has_dos = 0;
	cr->replayed = 0;
	cr->pfd = -1;
	cr->st_fresh = cr->st_valid = 0;
	cr->links = CREATE_FOLLOW;
	cr->special = 0;
	cr->aapl_answer = 0;
}

/* The fixed part of the request (MS-SMB2 2.2.13). */
static ntstatus_t
create_decode(struct create_call *cr)
{
	struct cur *c = &cr->req->body;

	if (cur_le16(c) != 57)
		return STATUS_INVALID_PARAMETER;
	cur_skip(c, 1);			/* SecurityFlags */
	cr->oplock_req = cur_u8(c);
	cr->imp = cur_le32(c);
	cur_skip(c, 16);		/* SmbCreateFlags, Reserved */
	cr->access = cur_le32(c);
	cr->attrs = cur_le32(c);
	cr->share = cur_le32(c);
	cr->disp = cur_le32(c);
	cr->opts = cur_le32(c);
	cr->name_off = cur_le16(c);
	cr->name_len = cur_le16(c);
	cr->ctx_off = cur_le32(c);
	cr->ctx_len = cur_le32(c);
	return c->err ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

/* DHnC / DH2C: the disconnected durable open comes back as it was. */
static ntstatus_t
create_reconnect(struct create_call *cr)
{
	struct cur nc = cur_sub(&cr->req->body, cr->name_off, cr->name_len);
	ntstatus_t status;

	cr->name16 = cr->name_len > 0 ? cur_view(&nc, cr->name_len) : NULL;
	status = durable_reconnect(cr->req, cr->name16,
	    cr->name16 ? cr->name_len : 0, &cr->cc.sreq, &cr->op, &cr->grant);
	if (status != STATUS_SUCCESS)
		return status;
	cr->f = cr->op->u.file;
	cr->want = cr->op->access;
	return STATUS_SUCCESS;
}

/* The fields MS-SMB2 3.3.5.9 refuses before anything is looked up. */
static ntstatus_t
create_validate(struct create_call *cr)
{
	uint32_t opts = cr->opts, disp = cr->disp;

	if (cr->imp > 3)
		return STATUS_BAD_IMPERSONATION_LEVEL;
	if (disp > FILE_OVERWRITE_IF || (opts & FILE_OPTIONS_INVALID) ||
	    ((opts & FILE_DIRECTORY_FILE) && (opts & FILE_NON_DIRECTORY_FILE)))
		return STATUS_INVALID_PARAMETER;
	/*
	 * MS-SMB2 2.2.13: a filter oplock is for local callers only, and
	 * the server MUST fail FILE_RESERVE_OPFILTER with NOT_SUPPORTED, as
	 * Windows does (smb2.create.gentest's not_supported_mask 0x00102080
	 * with FILE_OPEN_BY_FILE_ID and FILE_CREATE_TREE_CONNECTION).  No
	 * client sends it; every other option bit below 0x01000000 is
	 * accepted, as Windows accepts it.
	 */
	if (opts & (FILE_OPEN_BY_FILE_ID | FILE_RESERVE_OPFILTER))
		return STATUS_NOT_SUPPORTED;
	if (opts & FILE_CREATE_TREE_CONNECTION)
		return STATUS_NOT_SUPPORTED;	/* MS-SMB2 3.3.5.9 */
	if (cr->access & 0x0CE0FE00u)	/* reserved bits, MS-SMB2 3.3.5.9 */
		return STATUS_ACCESS_DENIED;
	if ((opts & FILE_DIRECTORY_FILE) && disp != FILE_CREATE &&
	    disp != FILE_OPEN && disp != FILE_OPEN_IF)
		return STATUS_INVALID_PARAMETER;
	if (cr->attrs & ~0x7FB7u)
		return STATUS_INVALID_PARAMETER;
	if (cr->name_len > 0) {
		struct cur nc = cur_sub(&cr->req->body, cr->name_off,
		    cr->name_len);

		cr->name16 = cur_view(&nc, cr->name_len);
		if (cr->name16 == NULL)
			return STATUS_INVALID_PARAMETER;
	}
	return STATUS_SUCCESS;
}

/* MS-SMB2 3.3.5.9.10: a replayed DH2Q create gets its open back. */
static ntstatus_t
create_replay(struct create_call *cr)
{
	ntstatus_t status;

	status = durable_replay_find(cr->req, &cr->cc.sreq, cr->oplock_req,
	    &cr->op, &cr->action, &cr->grant);
	if (status != STATUS_SUCCESS)
		return status;
	cr->replayed = 1;
	cr->f = cr->op->u.file;
	cr->want = cr->op->access;
	return STATUS_SUCCESS;
}

/*
 * The rights asked for, judged against the share and delete-on-close
 * before the name is looked up.
 */
/* Does the request ask to change the object (rights, delete on close)? */
static int
create_writes(const struct create_call *cr)
{
	return (cr->want & (FILE_WRITE_DATA | FILE_APPEND_DATA |
	    FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | DELETE_ACCESS | WRITE_DAC |
	    WRITE_OWNER)) || (cr->opts & FILE_DELETE_ON_CLOSE);
}

static ntstatus_t
create_check_request(struct create_call *cr)
{
	uint32_t access, opts, disp = cr->disp;
	int writes;

	access = cr->access;
	opts = cr->opts;
	cr->want = create_map_generic(access & ~MAXIMUM_ALLOWED);
	writes = create_writes(cr);
	/* a read-only share: OPEN_IF of an existing file is still an open */
	if (cr->tree->read_only && (writes || (disp != FILE_OPEN &&
	    disp != FILE_OPEN_IF)))
		return STATUS_ACCESS_DENIED;
	if ((opts & FILE_DELETE_ON_CLOSE) && !(cr->want & DELETE_ACCESS) &&
	    !(access & MAXIMUM_ALLOWED))
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
}

/*
 * Stat as spelled first: an existing name costs one lookup; only a miss
 * on a case-insensitive share looks for another spelling.  Sets exists.
 */
static ntstatus_t
create_resolve_name(struct create_call *cr)
{
	struct tree *tree = cr->tree;
	struct file_open *f = cr->f;
	int rc;

	/* what a lookup of an earlier request saw proves nothing here */
	vfs_name_dir_forget();
	/* a POSIX handle follows no link; OPEN_REPARSE_POINT not the last */
	cr->links = f->posix ? CREATE_NOLINKS :
	    (cr->opts & FILE_OPEN_REPARSE_POINT) ? CREATE_NOFOLLOW :
	    CREATE_FOLLOW;
	rc = create_lookup(tree->root_fd, f->path, &cr->st, &cr->pfd,
	    cr->links);
	if (rc == -ELOOP && cr->links == CREATE_NOLINKS)
		return smb2_reparse_stopped(tree, f->path);
	if (rc == -ENOENT && tree->share != NULL &&
	    !tree->share->case_sensitive && !f->posix) {
		int r = vfs_name_resolve_miss(file_vfs(), tree->root_fd,
		    f->path, sizeof(f->path));

		if (r < 0)
			return ntstatus_from_errno(r);
		if (r > 0)
			rc = create_lookup(tree->root_fd, f->path, &cr->st,
			    &cr->pfd, cr->links);
	}
	/* an 8.3 short name: the long name, judged as a typed one */
	if (rc == -ENOENT && !f->posix && shortname_on(tree->share)) {
		ntstatus_t status;
		int r = shortname_resolve(tree, f->path, sizeof(f->path));

		if (r < 0)
			return ntstatus_from_errno(r);
		if (r > 0) {
			status = namerule_check_path(tree->share, f->path);
			if (status != STATUS_SUCCESS)
				return status;
			rc = create_lookup(tree->root_fd, f->path, &cr->st,
			    &cr->pfd, cr->links);
		}
	}
	/*
	 * A DFS root: a failed lookup may have met an msdfs link (its text
	 * is no name here).  Only failures pay for the walk (worker/dfs.h).
	 */
	if (rc < 0 && rc != -EACCES && cr->tree->share != NULL &&
	    cr->tree->share->msdfs_root) {
		ntstatus_t dst = dfs_path_covered(cr->req, f->path);

		if (dst != STATUS_SUCCESS)
			return dst;
	}
	if (rc == -EXDEV || rc == -ELOOP) {
		log_warnx("%s: refused \"%s\": resolves outside the share",
		    cr->req->conn->peer, f->path);
		return STATUS_ACCESS_DENIED;
	}
	if (rc == -ENOTDIR)
		return STATUS_OBJECT_PATH_NOT_FOUND;
	if (rc != 0 && rc != -ENOENT)
		return ntstatus_from_errno(rc);
	cr->exists = rc == 0;
	/* links and special files: only ever opened as themselves */
	if (cr->exists && !S_ISREG(cr->st.mode) && !S_ISDIR(cr->st.mode)) {
		cr->special = 1;
		return smb2_reparse_found(&cr->st, cr->pfd, f->posix,
		    cr->opts, cr->disp);
	}
	return STATUS_SUCCESS;
}

/*
 * A previous version is a read-only volume (worker/snapshot.h): judged on
 * the name as resolved, the spelling on disk, so that no other spelling of
 * the snapshot directory (case, Unicode folding) gets past it.
 */
static ntstatus_t
create_check_snapshot(struct create_call *cr)
{
	if (!snapshot_path_in(cr->tree->share, cr->f->path))
		return STATUS_SUCCESS;
	cr->snapshot = 1;
	/* a missing name to open: not found, as anywhere */
	if (!cr->exists && cr->disp == FILE_OPEN)
		return STATUS_SUCCESS;
	/*
	 * OPEN_IF of an existing name is an open; anything else a change.
	 * Write-type rights are judged and granted, then withheld
	 * (create_set_up), as Windows opens a previous version
	 * (smbtorture smb2.twrp.write).
	 */
	if (!cr->exists || (cr->opts & FILE_DELETE_ON_CLOSE) ||
	    (cr->disp != FILE_OPEN && cr->disp != FILE_OPEN_IF))
		return STATUS_MEDIA_WRITE_PROTECTED;
	return STATUS_SUCCESS;
}

/*
 * TWrp: the name rewritten to the same name in the snapshot of that time;
 * name queries still answer the client's own name (client_len), not
 * where the server keeps its snapshots: MS-FSA 2.1.5.12.19 names an open
 * relative to its volume's root, and on Windows a snapshot is a volume of
 * its own; Samba's shadow_copy2 answers the same.
 */
static ntstatus_t
create_twrp(struct create_call *cr)
{
	struct file_open *f = cr->f;
	size_t before = strlen(f->path);
	ntstatus_t status;

	status = snapshot_path(cr->tree, cr->cc.twrp_time, f->path,
	    sizeof(f->path));
	if (status == STATUS_SUCCESS) {
		f->prev_version = 1;
		f->client_len = (uint16_t)before;
	}
	return status;
}

/*
 * MS-SMB2 3.3.5.9.13: the opens of this AppInstanceId on the same name
 * from another client are closed first (worker/open.h), once the name,
 * its kind and the rights asked are judged, so a CREATE refused for
 * those closes nothing.  SMB 3.x only.
 */
static ntstatus_t
create_app_instance(struct create_call *cr)
{
	if (cr->cc.app_instance && cr->req->conn->dialect >= DIALECT_300)
		(void)open_close_app_instance(cr->cc.app_instance_id,
		    cr->req->conn->client_guid, cr->tree->share, cr->f->path,
		    cr->f->stream, cr->req->conn->peer);
	return STATUS_SUCCESS;
}

/* A name that does not exist: may this create make it? */
static ntstatus_t
create_check_missing(struct create_call *cr)
{
	struct file_open *f = cr->f;
	uint32_t disp = cr->disp, opts = cr->opts;
	char parent[FILE_PATH_MAX];
	ntstatus_t status = STATUS_SUCCESS;
	int rc;

	if (cr->exists)
		return STATUS_SUCCESS;
	if (f->stream[0] == '\0' &&
	    (disp == FILE_OPEN || disp == FILE_OVERWRITE))
		status = STATUS_OBJECT_NAME_NOT_FOUND;
	else if (f->stream[0] != '\0' && disp == FILE_OPEN)
		status = STATUS_OBJECT_NAME_NOT_FOUND;
	else if (f->path[0] == '\0')
		status = STATUS_OBJECT_NAME_COLLISION;
	else if (cr->tree->read_only)
		status = STATUS_ACCESS_DENIED;
	/* a new read-only file could never be deleted on close */
	else if ((opts & FILE_DELETE_ON_CLOSE) &&
	    f->stream[0] == '\0' && (cr->attrs & FILE_ATTRIBUTE_READONLY))
		status = STATUS_CANNOT_DELETE;
	else if (f->stream[0] != '\0' && (opts & FILE_DIRECTORY_FILE))
		status = STATUS_NOT_A_DIRECTORY;
	/*
	 * A missing parent answers first.  On the way to a create it is not
	 * stat'ed: the create itself fails with ENOENT or ENOTDIR then
	 * (mapped in create_open_object), 3 syscalls fewer per new name.
	 */
	if (status != STATUS_SUCCESS) {
		create_parent(f->path, parent, sizeof(parent));
		rc = file_vfs()->statat(cr->tree->root_fd, parent, &cr->st);
		if (rc != 0 || !S_ISDIR(cr->st.mode))
			status = rc == -EXDEV || rc == -ELOOP ?
			    STATUS_ACCESS_DENIED :
			    STATUS_OBJECT_PATH_NOT_FOUND;
	}
	return status;
}

/* File or directory, as the options and the disposition ask. */
static ntstatus_t
create_check_kind(struct create_call *cr)
{
	struct file_open *f = cr->f;
	uint32_t disp = cr->disp, opts = cr->opts;
	int exists = cr->exists, is_dir;

	is_dir = cr->is_dir = exists ? S_ISDIR(cr->st.mode) :
	    (opts & FILE_DIRECTORY_FILE) != 0;
	if (exists && f->stream[0] == '\0') {
		if (disp == FILE_CREATE)
			return STATUS_OBJECT_NAME_COLLISION;
		if (is_dir && (opts & FILE_NON_DIRECTORY_FILE))
			return STATUS_FILE_IS_A_DIRECTORY;
		if (!is_dir && (opts & FILE_DIRECTORY_FILE))
			return STATUS_NOT_A_DIRECTORY;
		if (is_dir && disp != FILE_OPEN && disp != FILE_OPEN_IF)
			return STATUS_INVALID_PARAMETER;
	}
	/* a stream is never a directory; "dir::$DATA" is not the directory */
	if (f->stream[0] != '\0' && (opts & FILE_DIRECTORY_FILE))
		return STATUS_NOT_A_DIRECTORY;
	if (f->stream[0] == '\0' && is_dir && exists &&
	    file_name_data_suffix(cr->name16, cr->name_len))
		return (opts & FILE_DIRECTORY_FILE) ?
		    STATUS_NOT_A_DIRECTORY : STATUS_FILE_IS_A_DIRECTORY;
	return STATUS_SUCCESS;
}

/*
 * The maximal access costs a handful of syscalls: only when the client
 * asked for it (MAXIMUM_ALLOWED, MxAc) or DELETE must be judged here;
 * every other right is judged by the kernel at open.
 */
static ntstatus_t
create_judge_access(struct create_call *cr)
{
	uint32_t access = cr->access;
	ntstatus_t status;

	/* the SACL right: SeSecurityPrivilege, before any other check */
	if ((status = smb2_secdesc_privilege(cr->req->conn->conf, access)) !=
	    STATUS_SUCCESS)
		return status;
	/*
	 * A previous version is opened for reading only, so the kernel
	 * judges none of its write-type rights: they are judged here.
	 */
	if (cr->exists && ((access & MAXIMUM_ALLOWED) || cr->cc.mxac ||
	    (cr->want & DELETE_ACCESS) ||
	    (cr->snapshot && (cr->want & SNAPSHOT_WRITE_RIGHTS)))) {
		cr->maxacc = create_maximal_access(cr->tree, cr->f->path,
		    &cr->st, !(access & MAXIMUM_ALLOWED) && !cr->cc.mxac &&
		    !cr->snapshot);
		/*
		 * MS-SMB2 3.3.5.9: MAXIMUM_ALLOWED adds the maximal access
		 * but the rights also asked for by name are still checked;
		 * the data rights are the ones the open would otherwise
		 * leave unchecked (its mode follows maxacc).
		 */
		if ((access & MAXIMUM_ALLOWED) && (cr->want & (FILE_READ_DATA |
		    FILE_WRITE_DATA | FILE_APPEND_DATA) & ~cr->maxacc))
			return STATUS_ACCESS_DENIED;
		if (access & MAXIMUM_ALLOWED)
			cr->want |= cr->maxacc;
		if ((cr->want & DELETE_ACCESS) &&
		    !(cr->maxacc & DELETE_ACCESS)) {
			if ((access & DELETE_ACCESS) ||
			    (cr->opts & FILE_DELETE_ON_CLOSE))
				return STATUS_ACCESS_DENIED;
			/* from GENERIC_ALL only */
			cr->want &= ~DELETE_ACCESS;
		}
		if (cr->snapshot &&
		    (cr->want & SNAPSHOT_WRITE_RIGHTS & ~cr->maxacc))
			return STATUS_ACCESS_DENIED;
	} else if (!cr->exists) {
		cr->want |= (access & MAXIMUM_ALLOWED) ? FILE_ALL_ACCESS : 0;
		/* the NT lock of a create: the parent's descriptor */
		if (cr->disp != FILE_OPEN && cr->disp != FILE_OVERWRITE &&
		    cr->f->stream[0] == '\0')
			return smb2_secdesc_parent(cr->tree, cr->f->path,
			    cr->is_dir);
	}
	return STATUS_SUCCESS;
}


/*
 * What was opened: still a file or directory, its identity, and its DOS
 * attributes against the request (hidden, system, read-only).
 */
static ntstatus_t
create_check_opened(struct create_call *cr)
{
	struct file_open *f = cr->f;
	struct vfs_dosinfo *di = &cr->di;
	ntstatus_t status;
	int rc;

	if (!cr->st_fresh && (rc = file_vfs()->fstat(cr->fd, &cr->st)) != 0)
		return ntstatus_from_errno(rc);
	if (!S_ISREG(cr->st.mode) && !S_ISDIR(cr->st.mode) && !cr->special)
		return STATUS_ACCESS_DENIED;
	/* the NT lock, where descriptors are stored (the kernel's passed) */
	if (cr->exists && (status = smb2_secdesc_check(cr->tree, f->path,
	    cr->fd, &cr->st,
	    create_map_generic(cr->access & ~MAXIMUM_ALLOWED), &cr->want,
	    &cr->maxacc)) != STATUS_SUCCESS)
		return status;
	f->dev = cr->st.dev;
	f->ino = cr->st.ino;
	/* the stream's stored spelling, before it keys the shared state */
	(void)file_stream_resolve(f);
	/* A read-only file is not opened for writing (Windows semantics). */
	if (cr->exists && f->stream[0] == '\0') {
		/* kept for the reply: no second stat and xattr read there */
		cr->has_dos = create_dos_get(cr->fd, cr->flags == O_PATH &&
		    !cr->is_dir, di) == 0;
		cr->dos_known = 1;
	}
	/*
	 * MS-FSA 2.1.5.1.2.1: an overwrite may not silently drop HIDDEN or
	 * SYSTEM; the new attributes must carry the bits the file has.
	 */
	if (cr->has_dos && cr->truncate && (di->attrs &
	    (FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM) & ~cr->attrs))
		return STATUS_ACCESS_DENIED;
	if (cr->has_dos && (di->attrs & FILE_ATTRIBUTE_READONLY)) {
		if (cr->opts & FILE_DELETE_ON_CLOSE)
			return STATUS_CANNOT_DELETE;
		if ((cr->access & (FILE_WRITE_DATA | FILE_APPEND_DATA |
		    GENERIC_WRITE)) || cr->truncate)
			return STATUS_ACCESS_DENIED;
	}
	return STATUS_SUCCESS;
}

/*
 * veto files, through symlinks inside the share: the names the lookup
 * reached (the object, or the directory a new name goes in), not only
 * the names the client gave.  Nothing on a share without the key.
 */
static ntstatus_t
create_check_links(struct create_call *cr)
{
	const struct conf_share *sh = cr->tree->share;

	if (sh == NULL || sh->veto_pat == NULL || cr->cc.twrp)
		return STATUS_SUCCESS;
	if (cr->exists)
		return namerule_check_fd(sh, cr->tree->root_fd, cr->pfd, 0);
	return namerule_check_parent(sh, cr->tree->root_fd, cr->f->path);
}

/*
 * Shared state before any change to an existing file: share modes,
 * delete pending, oplock/lease breaks and grant (worker/state.h).
 */
static ntstatus_t
create_share_mode(struct create_call *cr)
{
	struct create_ctx *cc = &cr->cc;
	struct open *op;

	op = open_alloc(cr->req->conn, cr->req->sess, cr->tree, cr->f->is_dir ?
	    OPEN_DIR : OPEN_FILE);
	if (op == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	cr->op = op;
	op->u.file = cr->f;
	cc->sreq.access = cr->want;
	cc->sreq.share_access = cr->share;
	cc->sreq.create_options = cr->opts;
	cc->sreq.truncate = cr->truncate;
	if (!cc->lease)
		cc->sreq.oplock_level = cr->oplock_req ==
		    SMB2_OPLOCK_LEVEL_LEASE ? SMB2_OPLOCK_LEVEL_NONE :
		    cr->oplock_req;
	state_open_share_caching(&cc->sreq, cr->tree->share, cr->f->path,
	    cr->f->is_dir);
	return state_open_enter(cr->req, cr->rsp, op, &cc->sreq, &cr->grant);
}

/* A file this create made or overwrote gets its DOS attributes. */
static void
create_set_attributes(struct create_call *cr)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_dosinfo *di = &cr->di;
	struct timespec now;

	if (cr->action == FILE_CREATED && cr->f->stream[0] == '\0') {
		/* born with its first write time, as on NTFS */
		now = cr->st.mtime;
		memset(di, 0, sizeof(*di));
		di->attrs = (cr->attrs & FILE_ATTRIBUTE_SETTABLE) |
		    (cr->is_dir ? 0 : FILE_ATTRIBUTE_ARCHIVE);
		di->create_time = fscc_time_from_timespec(&now);
		/* best effort: a file system without user xattrs still works */
		cr->has_dos = vfs_dos_set(vfs, cr->fd, di) == 0;
		/* its ctime moved, which no reply field shows */
		cr->dos_known = 1;
		if (!cr->exists && ((cr->access & MAXIMUM_ALLOWED) ||
		    cr->cc.mxac))
			cr->maxacc = create_maximal_access(cr->tree,
			    cr->f->path, &cr->st, 0);
	} else if (cr->action != FILE_OPENED && cr->f->stream[0] == '\0' &&
	    vfs_dos_get(vfs, cr->fd, di) == 0) {
		/* overwrite/supersede: the new attributes plus archive */
		di->attrs = (cr->attrs & FILE_ATTRIBUTE_SETTABLE) |
		    FILE_ATTRIBUTE_ARCHIVE;
		(void)vfs_dos_set(vfs, cr->fd, di);
		cr->dos_known = 0;
	}
	if (!cr->exists && (cr->access & MAXIMUM_ALLOWED))
		cr->want = create_map_generic(cr->access & ~MAXIMUM_ALLOWED) |
		    cr->maxacc;
}

/*
 * The open is granted: the named stream, the truncation, and what the
 * contexts give a new or overwritten file (security descriptor, EAs,
 * allocation size).
 */
static ntstatus_t
create_set_up(struct create_call *cr)
{
	struct file_open *f = cr->f;
	struct create_ctx *cc = &cr->cc;
	uint32_t disp = cr->disp;
	ntstatus_t status;
	int rc;

	create_set_attributes(cr);
	if (f->stream[0] != '\0') {
		uint32_t saction = cr->action == FILE_CREATED ? FILE_CREATED :
		    FILE_OPENED;
		int make = disp != FILE_OPEN && disp != FILE_OVERWRITE;

		/* a Mac's "._" file met first here (Samba's ad_convert) */
		if ((fruit_is_afpinfo(f) || fruit_is_resource(f)) &&
		    !cr->snapshot && !cr->tree->read_only &&
		    cr->tree->share->fruit_convert_adouble)
			(void)fruit_conv(cr->tree->share, f->root_fd, f->path,
			    f->fd, 1);
		/*
		 * No stream is made in a previous version, nor on a
		 * read-only tree: OPEN_IF of an existing file passed
		 * create_check_request as an open, but a new stream is an
		 * xattr written (refused as a new file is there).
		 */
		status = create_open_stream(f, make && !cr->snapshot &&
		    !cr->tree->read_only,
		    disp == FILE_SUPERSEDE ||
		    disp == FILE_OVERWRITE || disp == FILE_OVERWRITE_IF,
		    &saction);
		if (status == STATUS_OBJECT_NAME_NOT_FOUND && make &&
		    cr->tree->read_only)
			status = STATUS_ACCESS_DENIED;
		if (status != STATUS_SUCCESS)
			return status;
		/*
		 * A Mac's rule (Samba's fruit_create_file): once AAPL is
		 * negotiated, an empty named stream opened as existing is
		 * not there.
		 */
		if (disp == FILE_OPEN && fruit_conn_aapl(cr->req->conn) &&
		    fruit_tree_on(cr->tree) && file_stream_size(f) == 0)
			return STATUS_OBJECT_NAME_NOT_FOUND;
		/* an AfpInfo not of 60 bytes is not there (nor listed) */
		if (disp == FILE_OPEN && fruit_is_afpinfo(f) &&
		    file_stream_size(f) != AFPINFO_SIZE)
			return STATUS_OBJECT_NAME_NOT_FOUND;
		cr->action = saction;
		/* a new named stream: inotify sees only an IN_ATTRIB */
		if (saction == FILE_CREATED)
			smb2_notify_file_change(cr->tree->root_fd, f,
			    FILE_ACTION_ADDED_STREAM,
			    FILE_NOTIFY_CHANGE_STREAM_NAME, 1);
	}
	if (cr->truncate && (rc = file_vfs()->ftruncate(cr->fd, 0)) != 0)
		return ntstatus_from_errno(rc);
	if (cr->action == FILE_CREATED && f->stream[0] == '\0')
		smb2_posix_created(&cc->posix, cr->tree->share, cr->new_mode,
		    cr->fd, &cr->st.mode);
	/*
	 * MS-SMB2 2.2.13.2.2, MS-DTYP 2.5.3.4: the descriptor of a file
	 * this create made, from the SecD context and what its parent
	 * passes on (looked for only where descriptors are stored).
	 */
	if (cr->action == FILE_CREATED && f->stream[0] == '\0' &&
	    (cc->secd != NULL || smb2_secdesc_tree_stored(cr->tree)) &&
	    (status = smb2_secdesc_create(cr->req->conn, cr->tree, f,
	    cc->secd, cc->secd_len)) != STATUS_SUCCESS)
		return status;
	/* MS-SMB2 2.2.13.2.1: EAs given with a create or an overwrite */
	if (cc->exta != NULL && cr->action != FILE_OPENED &&
	    f->stream[0] == '\0' &&
	    (status = smb2_ea_set(f, cc->exta, cc->exta_len)) != STATUS_SUCCESS)
		return status;
	if (cc->alsi && !f->is_dir && f->stream[0] == '\0' &&
	    cr->action != FILE_OPENED && cc->alloc_size > 0)
		(void)file_vfs()->fallocate(cr->fd, 0, cc->alloc_size);

	f->create_options = cr->opts;
	f->share_access = cr->share;
	f->delete_on_close = (cr->opts & FILE_DELETE_ON_CLOSE) != 0;
	if (cr->opts & FILE_WRITE_THROUGH)
		f->mode |= FILE_WRITE_THROUGH;
	cr->op->access = cr->want;
	/* SMB 3.x only (MS-SMB2 3.3.5.9.13): an older dialect's is ignored */
	if (cr->cc.app_instance && cr->req->conn->dialect >= DIALECT_300) {
		memcpy(cr->op->app_instance_id, cr->cc.app_instance_id, 16);
		cr->op->app_instance = 1;
	}
	if (cr->snapshot) {
		cr->op->access_withheld = cr->want & SNAPSHOT_WRITE_RIGHTS;
		cr->op->access &= ~SNAPSHOT_WRITE_RIGHTS;
	}
	cr->op->u.file = f;
	return STATUS_SUCCESS;
}

/* The response's create contexts: MxAc, QFid, lease and durable. */
static void
create_put_contexts(struct create_call *cr)
{
	struct wcur *w = &cr->rsp->body;
	uint8_t *ctxhdr = wcur_reserve(w, 8), *ctx_prev = NULL, buf[32];
	uint32_t ctx_start = (uint32_t)wcur_off(w);

	if (cr->cc.mxac) {
		le32_put(buf, 0);
		le32_put(buf + 4, cr->maxacc ? cr->maxacc : cr->want);
		smb2_create_put_ctx(w, &ctx_prev, "MxAc", buf, 8);
	}
	if (cr->cc.qfid) {
		memset(buf, 0, 32);
		/* fruit:zero_file_id: a Mac told no on-disk id (fruit.h) */
		if (!fruit_zero_file_id(cr->req->conn, cr->tree))
			le64_put(buf, cr->f->ino);
		le64_put(buf + 8, cr->f->dev);
		smb2_create_put_ctx(w, &ctx_prev, "QFid", buf, 32);
	}
	if (cr->grant.lease || cr->grant.durable)
		(void)state_put_create_contexts(w, &ctx_prev, &cr->grant);
	if (cr->aapl_answer)
		fruit_aapl_reply(cr->req->conn, cr->tree, &cr->aapl, w,
		    &ctx_prev);
	if (cr->cc.posix.posix)
		smb2_posix_put_create_ctx(w, &ctx_prev, cr->f, cr->st_valid ?
		    &cr->st : NULL, &cr->di, cr->has_dos);
	if (ctxhdr != NULL && ctx_prev != NULL) {
		le32_put(ctxhdr, ctx_start);
		le32_put(ctxhdr + 4, (uint32_t)wcur_off(w) - ctx_start);
	} else if (ctxhdr != NULL)
		memset(ctxhdr, 0, 8);
}

/* MS-SMB2 2.2.14 */
static ntstatus_t
create_reply(struct create_call *cr)
{
	struct file_open *f = cr->f;
	struct create_ctx *cc = &cr->cc;
	struct wcur *w = &cr->rsp->body;
	struct fscc_info fi;
	ntstatus_t status;

	/*
	 * A plain open or a create without contexts that change the file
	 * answers from what this request already read (stat, DOS xattr).
	 */
	if (cr->dos_known && f->stream[0] == '\0' && !cr->truncate &&
	    cc->secd == NULL && cc->exta == NULL && !cc->alsi &&
	    (cr->action == FILE_OPENED || cr->action == FILE_CREATED)) {
		file_info_from_stat(&cr->st, &cr->di, cr->has_dos, &fi);
		fi.attrs = namerule_path_attrs(cr->tree->share, f->path,
		    fi.attrs);
		fi.delete_pending = (uint8_t)(f->delete_on_close != 0);
		cr->st_valid = 1;
	} else if ((status = file_info_fill(f, &fi)) != STATUS_SUCCESS)
		return status;
	wcur_le16(w, 89);
	wcur_u8(w, cr->grant.oplock_level);	/* OplockLevel */
	wcur_u8(w, 0);
	wcur_le32(w, cr->action);
	wcur_le64(w, fi.creation);
	wcur_le64(w, fi.access);
	wcur_le64(w, fi.write);
	wcur_le64(w, fi.change);
	wcur_le64(w, fi.alloc);
	wcur_le64(w, fi.eof);
	wcur_le32(w, fi.attrs);
	wcur_le32(w, 0);
	wcur_le64(w, cr->op->fid_persistent);
	wcur_le64(w, cr->op->fid_volatile);
	create_put_contexts(cr);
	if (w->err)
		return STATUS_BUFFER_OVERFLOW;
	return STATUS_SUCCESS;
}

/*
 * A CREATE that failed (or waits: STATUS_PENDING) leaves nothing behind:
 * no record in the shared state, no open, no file it made.
 */
static ntstatus_t
create_fail(struct create_call *cr, ntstatus_t status)
{
	struct file_open *f = cr->f;

	if (cr->pfd >= 0)
		close(cr->pfd);
	smb2_reparse_put_error(cr->req, cr->rsp, status);
	if (cr->replayed)
		return status;	/* the open replayed stays as it was */
	durable_replay_unfinished(cr->req, &cr->cc.sreq,
	    status == STATUS_PENDING);
	if (cr->op != NULL) {
		/* a step after state_open_enter failed: drop its record */
		state_open_withdraw(cr->op);
		cr->op->u.file = NULL;
		open_release(cr->op);
	}
	if (f != NULL) {
		if (cr->action == FILE_CREATED && status != STATUS_SUCCESS &&
		    f->stream[0] == '\0' && f->path[0] != '\0')
			(void)file_vfs()->unlink(cr->tree->root_fd, f->path,
			    cr->is_dir);
		file_open_put(f);
	}
	return status;
}

/*
 * CREATE, step by step: decode; a durable reconnect or a replay answers
 * at once; validate; resolve the name; judge the request against what
 * exists; open or create the object; enter the share modes and leases;
 * set up what the create gives the file; reply.
 */
ntstatus_t
smb2_create_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct create_call cr;
	ntstatus_t status;

	if (req->tree == NULL || req->tree->root_fd < 0)
		return STATUS_INVALID_PARAMETER;
	create_call_init(&cr, req, rsp);
	if ((status = create_decode(&cr)) != STATUS_SUCCESS)
		return status;
	/*
	 * A durable reconnect ignores every other field (MS-SMB2 3.3.5.9.7,
	 * Samba's smb2.durable-open.reopen2): look for DHnC / DH2C first.
	 */
	if (smb2_create_parse_contexts(req, cr.ctx_off, cr.ctx_len, &cr.cc) ==
	    STATUS_SUCCESS && cr.cc.sreq.reconnect) {
		if ((status = create_reconnect(&cr)) != STATUS_SUCCESS)
			return status;
		goto reply;
	}
	if ((status = create_validate(&cr)) != STATUS_SUCCESS ||
	    (status = smb2_create_parse_contexts(req, cr.ctx_off, cr.ctx_len,
	    &cr.cc)) != STATUS_SUCCESS)
		return status;
	/* `ea support = no`: EAs given refuse the create, as Samba */
	if (cr.cc.exta != NULL && !smb2_ea_on(cr.tree->share))
		return STATUS_EAS_NOT_SUPPORTED;
	/* Apple's query: a malformed one is refused before anything opens */
	if (cr.cc.aapl_seen) {
		cr.aapl_answer = fruit_aapl_want(req->conn, cr.tree, cr.cc.aapl,
		    cr.cc.aapl_len, &cr.aapl, &status);
		if (status != STATUS_SUCCESS)
			return status;
	}
	status = create_replay(&cr);
	if (status == STATUS_SUCCESS)
		goto reply;
	if (status != STATUS_NOT_FOUND)
		return status;

	if ((cr.f = file_open_get()) == NULL)
		return STATUS_INSUFF_SERVER_RESOURCES;
	cr.f->share = cr.tree->share;
	cr.f->root_fd = cr.tree->root_fd;
	cr.f->posix = cr.cc.posix.posix;
	if ((status = (cr.f->posix ? file_name_parse_posix : file_name_parse)(
	    req, cr.name16, cr.name_len, cr.f->path, sizeof(cr.f->path),
	    cr.f->stream, sizeof(cr.f->stream))) != STATUS_SUCCESS ||
	    (status = namerule_check_path(cr.tree->share, cr.f->path)) !=
	    STATUS_SUCCESS ||
	    (cr.cc.twrp && (status = create_twrp(&cr)) != STATUS_SUCCESS) ||
	    (status = create_check_request(&cr)) != STATUS_SUCCESS ||
	    (status = create_resolve_name(&cr)) != STATUS_SUCCESS ||
	    (status = create_check_links(&cr)) != STATUS_SUCCESS ||
	    (status = create_check_snapshot(&cr)) != STATUS_SUCCESS ||
	    (status = create_check_missing(&cr)) != STATUS_SUCCESS ||
	    (status = create_check_kind(&cr)) != STATUS_SUCCESS ||
	    (status = create_judge_access(&cr)) != STATUS_SUCCESS ||
	    (status = create_app_instance(&cr)) != STATUS_SUCCESS ||
	    (status = create_open_object(&cr)) != STATUS_SUCCESS ||
	    (status = create_check_opened(&cr)) != STATUS_SUCCESS ||
	    (status = create_share_mode(&cr)) != STATUS_SUCCESS ||
	    (status = create_set_up(&cr)) != STATUS_SUCCESS)
		return create_fail(&cr, status);
	/* a name created, or a file's size and times reset: its listing */
	if (cr.action != FILE_OPENED && cr.f->stream[0] == '\0')
		dirlease_break_op(cr.op, cr.f->path);
reply:
	if ((status = create_reply(&cr)) != STATUS_SUCCESS)
		return create_fail(&cr, status);
	if (!cr.replayed)
		durable_replay_note(req, &cr.cc.sreq, cr.op, cr.action);
	rsp->set_fid = 1;
	rsp->fid_persistent = cr.op->fid_persistent;
	rsp->fid_volatile = cr.op->fid_volatile;
	return STATUS_SUCCESS;
}
