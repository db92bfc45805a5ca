/*
 * SMB3 POSIX extensions: the worker's side (worker/smb2_posix.h).
 *
 * A handle opened with the POSIX create context is a POSIX handle
 * (struct file_open.posix): its names are looked up exactly (case
 * sensitive), a directory listing through it matches exactly too, it can
 * be a symlink or a special file (reported, never followed out of the
 * share: vfs/ resolves beneath the share root), and it may query the
 * POSIX information level.  Owner and group go on the wire as Samba's
 * Unix SIDs, S-1-22-1-uid and S-1-22-2-gid, as our security descriptors
 * show them (proto/secdesc.c).
 */
#include <string.h>
#include <sys/stat.h>

#include "daemon/conf.h"
#include "proto/create_ctx.h"
#include "proto/fscc.h"
#include "proto/reparse.h"
#include "proto/secdesc.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_posix.h"
#include "vfs/vfs.h"


ntstatus_t
smb2_posix_parse_ctx(struct smb2_req *req, const struct create_ctx_item *it,
    struct smb2_posix_req *pr)
{
	/*
	 * A share with `smb3 unix extensions = no` ignores the context, as
	 * Samba 4.22 (smb2_create.c): the open is a Windows one.
	 */
	if (!req->conn->posix || (req->tree != NULL &&
	    req->tree->share != NULL && !req->tree->share->smb3_unix_extensions) ||
	    it->name_len != sizeof(posix_tag) ||
	    memcmp(it->name, posix_tag, sizeof(posix_tag)) != 0)
		return STATUS_SUCCESS;
	if (posix_create_req_decode(it->data, it->data_len, &pr->perms) != 0)
		return STATUS_INVALID_PARAMETER;
	pr->posix = 1;
	return STATUS_SUCCESS;
}

uint32_t
smb2_posix_new_mode(const struct smb2_posix_req *pr,
    const struct conf_share *sh, int is_dir, uint32_t parent_mode)
{
	uint32_t mask = is_dir ? (sh ? sh->directory_mask : 0755) :
	    (sh ? sh->create_mask : 0744);
	uint32_t force = sh == NULL ? 0 : is_dir ? sh->force_directory_mode :
	    sh->force_create_mode;

	/* the share's mask and force bits shape a POSIX mode too, as Samba's */
	if (pr->posix)
		return ((pr->perms & mask) | force) & 07777u;
	/*
	 * inherit permissions, Samba's unix_mode(): a directory takes its
	 * parent's bits but setuid (setgid kept) and is writable by its
	 * owner, a file its parent's read and write bits; no mask applies.
	 */
	if (parent_mode != 0)
		return is_dir ? (S_IWUSR | (parent_mode & 07777u & ~S_ISUID)) :
		    parent_mode & 0666u;
	return (((is_dir ? 0777u : 0666u) & mask) | force) & 07777u;
}

void
smb2_posix_created(const struct smb2_posix_req *pr,
    const struct conf_share *sh, uint32_t mode, int fd, uint32_t *st_mode)
{
	static int known;
	static mode_t mask;
	uint32_t have = *st_mode & 07777u;

	if (!pr->posix) {
		/*
		 * Force bits and inherited ones are always set: those the
		 * umask took, and a directory's setgid (mkdir(2) never takes
		 * it from the mode), are added, nothing is taken away (a
		 * setgid parent's passes on), as Samba's mkdir_internal.
		 */
		if (sh != NULL && smb2_posix_mode_keys(sh) && (mode & ~have) &&
		    file_vfs()->fchmod(fd, (mode_t)(have | mode)) == 0)
			*st_mode = (*st_mode & S_IFMT) | have | mode;
		return;
	}
	/* the umask never changes in a worker: read once */
	if (!known) {
		mask = umask(0);
		(void)umask(mask);
		known = 1;
	}
	if ((mode & mask) && file_vfs()->fchmod(fd, (mode_t)mode) == 0)
		*st_mode = (*st_mode & S_IFMT) | mode;
}

void
smb2_posix_put_create_ctx(struct wcur *w, uint8_t **prev,
    struct file_open *f, const struct vfs_stat *st,
    const struct vfs_dosinfo *di, int has_dos)
{
	struct posix_info pi;

	/* the stat of the open: no second fstat and xattr read per CREATE */
	if (st != NULL)
		smb2_posix_from_stat(st, di, has_dos, &pi);
	else if (smb2_posix_fill(f, &pi) != STATUS_SUCCESS)
		return;
	smb2_posix_put_ctx(w, prev, &pi);
}

void
smb2_posix_from_stat(const struct vfs_stat *st, const struct vfs_dosinfo *di,
    int has_dos, struct posix_info *pi)
{
	struct fscc_info fi;

	file_info_from_stat(st, di, has_dos, &fi);
	memset(pi, 0, sizeof(*pi));
	pi->creation = fi.creation;
	pi->access = fi.access;
	pi->write = fi.write;
	pi->change = fi.change;
	pi->eof = fi.eof;
	pi->alloc = fi.alloc;
	pi->attrs = fi.attrs;
	pi->ino = st->ino;
	pi->dev = (uint32_t)st->dev;
	pi->nlink = st->nlink;
	pi->mode = st->mode;
	pi->uid = st->uid;
	pi->gid = st->gid;
	/*
	 * What is neither a file nor a directory is a reparse point, as
	 * Samba reports it: a symlink with the symlink tag, the special
	 * files with the NFS one (their type is in the mode).
	 */
	if (!S_ISREG(st->mode) && !S_ISDIR(st->mode)) {
		pi->reparse_tag = S_ISLNK(st->mode) ? IO_REPARSE_TAG_SYMLINK :
		    IO_REPARSE_TAG_NFS;
		pi->attrs = (pi->attrs & ~FILE_ATTRIBUTE_NORMAL) |
		    FILE_ATTRIBUTE_REPARSE_POINT;
		pi->eof = S_ISLNK(st->mode) ? st->size : 0;
		pi->alloc = 0;
	}
}

ntstatus_t
smb2_posix_fill(struct file_open *f, struct posix_info *pi)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_dosinfo di;
	struct vfs_stat st;
	int rc, has_dos;

	if ((rc = vfs->fstat(f->fd, &st)) != 0)
		return ntstatus_from_errno(rc);
	has_dos = (S_ISREG(st.mode) || S_ISDIR(st.mode)) &&
	    vfs_dos_get(vfs, f->fd, &di) == 0;
	smb2_posix_from_stat(&st, &di, has_dos, pi);
	return STATUS_SUCCESS;
}

void
smb2_posix_put_ctx(struct wcur *w, uint8_t **prev, const struct posix_info *pi)
{
	uint8_t *start;

	wcur_align(w, 8);
	start = w->p;
	if (*prev != NULL && !w->err)
		le32_put(*prev, (uint32_t)(start - *prev));
	/* MS-SMB2 2.2.14.2: Next, NameOffset, NameLength, Reserved, DataOffset, DataLength */
	wcur_le32(w, 0);
	wcur_le16(w, 16);
	wcur_le16(w, sizeof(posix_tag));
	wcur_le16(w, 0);
	wcur_le16(w, 16 + sizeof(posix_tag));
	wcur_le32(w, POSIX_CC_LEN);
	wcur_bytes(w, posix_tag, sizeof(posix_tag));
	posix_put_cc(w, pi);
	*prev = start;
}

ntstatus_t
smb2_posix_query_info(struct open *op, struct wcur *w)
{
	struct file_open *f = op->u.file;
	struct posix_info pi;
	ntstatus_t status;

	if (!f->posix)
		return STATUS_INVALID_LEVEL;
	if (!(op->access & FILE_READ_ATTRIBUTES))
		return STATUS_ACCESS_DENIED;
	if ((status = smb2_posix_fill(f, &pi)) != STATUS_SUCCESS)
		return status;
	posix_put_info(w, &pi);
	return STATUS_SUCCESS;
}

int
smb2_posix_sd_chmod(struct open *op, uint32_t which, const uint8_t *sd,
    size_t len, ntstatus_t *status)
{
	static struct secdesc d;	/* large: kept off the stack */
	static const uint8_t auth5[6] = { 0, 0, 0, 0, 0, 5 };
	const struct secdesc_sid *s;
	int rc;

	if (!op->u.file->posix || !(which & DACL_SECURITY_INFORMATION) ||
	    secdesc_decode(sd, len, &d) != 0 || !d.has_dacl || d.nace != 1)
		return 0;
	s = &d.ace[0].sid;
	if (s->nsub != 3 || memcmp(s->auth, auth5, 6) != 0 ||
	    s->sub[0] != 88 || s->sub[1] != 3)
		return 0;
	if (!(op->access & WRITE_DAC) || (op->tree && op->tree->read_only)) {
		*status = STATUS_ACCESS_DENIED;
		return 1;
	}
	/* the permission bits only, as Samba applies it */
	rc = file_vfs()->fchmod(op->u.file->fd, (mode_t)(s->sub[2] & 0777));
	*status = rc == 0 ? STATUS_SUCCESS : ntstatus_from_errno(rc);
	return 1;
}
