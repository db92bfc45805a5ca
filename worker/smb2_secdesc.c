/*
 * Security descriptors of files and directories (HACKING.md, "Security
 * descriptors"): kept whole in the security.usmbd.sd xattr, which only the
 * descriptor writer (worker/sdw.h) can write, and mapped onto the POSIX
 * ACL the kernel enforces (worker/secdesc_posix.h).  A file without a
 * stored descriptor shows the one derived from owner, group, mode and ACL.
 *
 * Two locks: an open of a file with a stored descriptor needs the NT
 * access check (proto/ntacl.h) AND the kernel.  A SET changes the POSIX
 * side first, as the user (the kernel says whether this user may: the
 * owner only), then asks the writer, which checks WRITE_DAC/WRITE_OWNER
 * under the stored descriptor itself; when the writer refuses, the POSIX
 * side is put back.
 */

/*
 * Two locks, in detail.
 *
 * Two locks.  An open of an existing file with a stored descriptor is
 * granted only when the NT access check (proto/ntacl.c, MS-DTYP 2.5.3.2:
 * per bit, the first matching effective ACE decides; the owner holds
 * READ_CONTROL and WRITE_DAC unless an OWNER RIGHTS ACE is present;
 * MAXIMUM_ALLOWED is what that grants; a NULL DACL grants all) grants
 * the rights asked for AND the kernel opens the file.
 * FILE_READ_ATTRIBUTES and SYNCHRONIZE are always granted (the kernel
 * gives stat to whoever may look the name up; MS-FSA grants it from the
 * parent's list right). DELETE also comes from the parent's
 * FILE_DELETE_CHILD.  A create needs ADD_FILE / ADD_SUBDIRECTORY in the
 * parent's stored descriptor.
 */

/*
 * The hot path.
 *
 * Hot path. A share root where a descriptor was ever stored carries
 * security.usmbd.share (set by the writer, SDW_OP_MARK, before the first
 * store; a local account cannot remove it).  A tree reads it at its
 * first CREATE and, while unmarked, again at most once a second (a
 * coarse clock, no syscall), so another worker's first store is seen
 * within a second. On an unmarked share a CREATE costs nothing more; on
 * a marked one, an open of an existing file reads its descriptor (one
 * fgetxattr) unless the worker already knows the file has none (below),
 * and a create reads its parent's descriptor once (sd_parent_read: one
 * getxattr at the top of the share, an open, a getxattr and a close
 * below).
 *
 * Files known to have none.  Storing or removing the xattr changes the
 * inode's ctime, which the CREATE's fstat gives anyway: a worker keeps,
 * per inode (a fixed table, no allocation), the ctime at which it found
 * no descriptor, and while the ctime is the same it does not look again.
 * That is safe across workers and local processes: whoever writes the
 * xattr (the writer, or root by hand) moves the ctime.  The kernel takes
 * a new ctime from the coarse real-time clock (a fine-grained one is
 * never earlier), truncated to the file system's granularity; an answer
 * is kept only when the ctime it was found at is more than
 * SD_NONE_SETTLE_S seconds older than that clock read before the
 * fgetxattr, so any later change (even within the same tick or, on a
 * file system with one-second timestamps, the same second) gets a
 * different ctime.  Only a step of the system clock back to the same
 * nanosecond could fool it.
 *
 * Parents known to have none.  A parent's ctime is no help: every create
 * or unlink in it moves it, and the CREATE has no stat of it to compare.
 * But a new name on a case-insensitive share has just been looked up in
 * its parent by the name cache (vfs/name.c), whose inotify watch of the
 * directory now also asks for IN_ATTRIB: fsnotify queues one inside any
 * setxattr or removexattr of the directory, by the writer, another
 * worker's or root by hand, before the call returns, and the lookup
 * drains the queue first.  So a parent found to have no descriptor is
 * noted on its cache slot (vfs_name_dir_note), and the next create below
 * it, after its own lookup drained, trusts the note (vfs_name_dir_noted)
 * while no event of the directory's own came.  A create that looks no
 * name up (a POSIX handle, a `case sensitive = yes` share) has the other
 * note, vfs/dirnote.c (sd_parent_watch): a parent read without one is
 * marked with fanotify, with every directory above it, read again, and
 * noted; the marks' events the worker's ring takes ahead of any later
 * request.  A lost event, a dropped or refilled slot, no watch or mark
 * (a network file system, a directory the worker may not read, a symlink
 * on the way), a request that did not look the name up and could not be
 * marked: the getxattr, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "worker/conn.h"
#include "worker/errmap.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/open.h"
#include "worker/sdw.h"
#include "worker/secdesc_posix.h"
#include "worker/smb2_create_fs.h"
#include "worker/smb2_file.h"
#include "worker/worker.h"

/* one request at a time: no descriptor on the stack */
static struct secdesc	sd_cur, sd_new, sd_par, sd_der;
static struct vfs_acl	sd_acc, sd_def, sd_oacc, sd_odef;
static uint8_t		sd_raw[SDW_SD_MAX];
static struct ntacl_token sd_token;
static int		sd_token_ready;

#define SD_RECHECK_MS	1000
#define SD_NONE_SETTLE_S	2
#define SD_NONE_SLOTS	4096		/* a power of two */

struct sd_none {
	uint64_t	 dev;
	uint64_t	 ino;		/* 0: free */
	struct timespec	 ctime;
};
static struct sd_none	sd_none[SD_NONE_SLOTS];

static const struct ntacl_token *
smb2_secdesc_token(void)
{
	gid_t g[NTACL_TOKEN_GROUPS];
	uint32_t ids[NTACL_TOKEN_GROUPS];
	int n, i;

	if (sd_token_ready)
		return &sd_token;
	/* the worker's groups never change (worker/user.c): read once */
	n = getgroups(NTACL_TOKEN_GROUPS, g);
	if (n < 0)
		n = 0;
	for (i = 0; i < n; i++)
		ids[i] = g[i];
	ntacl_token_unix(&sd_token, user_euid(), getegid(), ids, (unsigned)n);
	sd_token_ready = 1;
	return &sd_token;
}

/*
 * SeSecurityPrivilege (ACCESS_SYSTEM_SECURITY, the SACL): held by the
 * members of `server admin group`, as Windows gives it to Administrators.
 * The worker's groups are the master's doing and never change
 * (worker/user.c), so the answer is kept per group name (a reload may
 * name another group); the writer judges again from the groups the
 * kernel shows it (worker/sdw.c).
 */
int
smb2_secdesc_privileged(const struct conf *conf)
{
	static char name[64];
	static int known, held;
	static gid_t g[NGROUPS_MAX];
	const char *want = conf != NULL ? conf->admin_group : NULL;
	struct group *gr;
	int n, i;

	if (want == NULL || want[0] == '\0')
		return 0;
	if (known && strcmp(name, want) == 0)
		return held;
	held = 0;
	if ((gr = getgrnam(want)) != NULL) {
		held = getegid() == gr->gr_gid;
		n = getgroups(NGROUPS_MAX, g);
		for (i = 0; i < n && !held; i++)
			held = g[i] == gr->gr_gid;
	}
	/* a name too long for the cache is looked up every time */
	known = strlcpy(name, want, sizeof(name)) < sizeof(name);
	return held;
}

/* fgetxattr, or through /proc for an O_PATH fd (one syscall either way). */
static ssize_t
sd_getxattr(int fd, const char *name, void *buf, size_t len)
{
	char p[32];
	ssize_t n = fgetxattr(fd, name, buf, len);

	if (n < 0 && errno == EBADF) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = getxattr(p, name, buf, len);
	}
	return n < 0 ? -errno : n;
}

/* An O_PATH fd's xattr: through /proc at once (fgetxattr says EBADF). */
static ssize_t
sd_getxattr_opath(int fd, const char *name, void *buf, size_t len)
{
	char p[32];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = getxattr(p, name, buf, len);
	return n < 0 ? -errno : n;
}

static int	sd_stored_decode(ssize_t, struct secdesc *);

int
smb2_secdesc_stored(int fd, struct secdesc *sd)
{
	return sd_stored_decode(sd_getxattr(fd, SDW_XATTR_SD, sd_raw,
	    sizeof(sd_raw)), sd);
}

static int
sd_stored_decode(ssize_t n, struct secdesc *sd)
{

	if (n == -ENODATA || n == -EOPNOTSUPP)
		return 0;
	if (n < 0)
		return (int)n;
	if (secdesc_decode(sd_raw, (size_t)n, sd) != 0) {
		log_warnx("a stored security descriptor does not decode");
		return -EINVAL;
	}
	return 1;
}

static int64_t
sd_now_ms(void)
{
	struct timespec ts;

	/* the vDSO: no system call */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
smb2_secdesc_tree_stored(struct tree *t)
{
	int64_t now;

	if (t->sd_stored || t->root_fd < 0)
		return t->sd_stored;
	/* another worker may mark the share: look again, once a second */
	now = sd_now_ms();
	if (t->sd_checked_ms != 0 && now - t->sd_checked_ms < SD_RECHECK_MS)
		return 0;
	t->sd_checked_ms = now;
	t->sd_stored = sd_getxattr(t->root_fd, SDW_XATTR_SHARE, NULL, 0) >= 0;
	return t->sd_stored;
}

/* The descriptor of an open file: stored, else derived. */
static ntstatus_t
sd_current(int fd, struct vfs_stat *st, struct secdesc *sd, int *stored)
{
	const struct vfs_ops *vfs = file_vfs();
	int rc;

	if ((rc = vfs->fstat(fd, st)) != 0)
		return ntstatus_from_errno(rc);
	rc = smb2_secdesc_stored(fd, sd);
	if (rc < 0)
		return ntstatus_from_errno(rc);
	*stored = rc;
	if (!rc)
		(void)secdesc_posix_derive(vfs, fd, st, sd);
	else if (!sd->has_owner || !sd->has_group ||
	    !(sd->control & SE_DACL_PRESENT)) {
		/* only a SACL stored: the rest is the kernel's, as without */
		(void)secdesc_posix_derive(vfs, fd, st, &sd_der);
		sd_der.control |= sd->control & SE_SACL_BITS;
		sd_der.sacl_len = sd->sacl_len;
		memcpy(sd_der.sacl, sd->sacl, sd->sacl_len);
		*sd = sd_der;
	}
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_secdesc_query(struct open *op, uint32_t which, struct wcur *w,
    uint32_t *need)
{
	struct vfs_stat st;
	ntstatus_t status;
	int stored;

	*need = 0;
	/* all of it, for backup software (MS-DTYP 2.4.7) */
	if (which & BACKUP_SECURITY_INFORMATION)
		which |= OWNER_SECURITY_INFORMATION |
		    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION |
		    SACL_SECURITY_INFORMATION;
	/*
	 * READ_CONTROL guards the owner, group, DACL, label and resource
	 * attributes (MS-FSA 2.1.5.14; Windows' SECURITY_INFORMATION
	 * table): asking for none of them is allowed without it and
	 * returns an empty descriptor (smb2.sdread).  The SACL and the
	 * scoped policy ids need ACCESS_SYSTEM_SECURITY.
	 */
	if ((which & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
	    DACL_SECURITY_INFORMATION | LABEL_SECURITY_INFORMATION |
	    ATTRIBUTE_SECURITY_INFORMATION)) && !(op->access & READ_CONTROL))
		return STATUS_ACCESS_DENIED;
	if ((which & (SACL_SECURITY_INFORMATION | SCOPE_SECURITY_INFORMATION)) &&
	    !(op->access & ACCESS_SYSTEM_SECURITY))
		return STATUS_ACCESS_DENIED;
	if ((status = sd_current(op->u.file->fd, &st, &sd_cur, &stored)) !=
	    STATUS_SUCCESS)
		return status;
	/* a Mac's NFS ACEs: mode, owner, group (worker/fruit.h) */
	if (which & DACL_SECURITY_INFORMATION)
		fruit_nfs_add(op->conn, op->tree, &st, &sd_cur);
	*need = (uint32_t)secdesc_encode(w, &sd_cur, which);
	return w->err ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

/* Saves or restores the POSIX side (mode, access and default ACL). */
static void
sd_posix_save(int fd, int dir)
{
	const struct vfs_ops *vfs = file_vfs();

	if (vfs_acl_get(vfs, fd, 0, &sd_oacc) != 0)
		sd_oacc.n = 0;
	if (!dir || vfs_acl_get(vfs, fd, 1, &sd_odef) != 0)
		sd_odef.n = 0;
}

static void
sd_posix_restore(int fd, const struct vfs_stat *st)
{
	const struct vfs_ops *vfs = file_vfs();

	(void)vfs->fchmod(fd, st->mode & 07777);
	(void)vfs_acl_set(vfs, fd, 0, &sd_oacc);
	if (S_ISDIR(st->mode))
		(void)vfs_acl_set(vfs, fd, 1, &sd_odef);
}

/* The POSIX ACLs of sd, written as the user: the kernel decides. */
static int
sd_posix_apply(int fd, const struct vfs_stat *st, const struct secdesc *sd)
{
	const struct vfs_ops *vfs = file_vfs();
	struct secdesc_sid us, gs;
	int dir = S_ISDIR(st->mode), named, rc;
	mode_t mode;

	secdesc_sid_unix_user(&us, st->uid);
	secdesc_sid_unix_group(&gs, st->gid);
	if ((named = secdesc_posix_acl(sd, dir, &us, &gs, &sd_acc)) < 0)
		return -E2BIG;
	/* with named entries the group bits of the mode are the mask */
	mode = (st->mode & 07000) |
	    (mode_t)(secdesc_posix_perm(&sd_acc, VFS_ACL_USER_OBJ) << 6 |
	    secdesc_posix_perm(&sd_acc, named ? VFS_ACL_MASK :
	    VFS_ACL_GROUP_OBJ) << 3 | secdesc_posix_perm(&sd_acc,
	    VFS_ACL_OTHER));
	if ((rc = vfs->fchmod(fd, mode)) != 0)
		return rc;
	if (!named)
		sd_acc.n = 0;
	rc = vfs_acl_set(vfs, fd, 0, &sd_acc);
	if (rc == -EOPNOTSUPP && !named)
		rc = 0;
	if (rc != 0 || !dir)
		return rc;
	/*
	 * No default ACL: the kernel would apply it to files and
	 * directories alike, as their access ACL, before this worker could
	 * open what it made; an SMB create writes the inherited mapping
	 * itself (smb2_secdesc_create).  Made locally, a file gets the
	 * kernel's defaults and no stored descriptor.
	 */
	sd_def.n = 0;
	rc = vfs_acl_set(vfs, fd, 1, &sd_def);
	return rc == -EOPNOTSUPP && sd_def.n == 0 ? 0 : rc;
}

/*
 * Stores the parts of which through the writer.  pfd >= 0: the SACL is
 * the one inherited from the directory pfd (SDW_OP_INHERIT: the writer
 * computes it again from there, so no privilege is needed).
 */
static ntstatus_t
sd_store(const char *lock_dir, struct tree *t, int fd, uint32_t which,
    const struct secdesc *sd, int pfd)
{
	static uint8_t buf[SDW_SD_MAX];
	struct wcur w;
	ntstatus_t status;
	int rfd;

	if (t != NULL && !smb2_secdesc_tree_stored(t) && t->root_fd >= 0) {
		rfd = openat(t->root_fd, ".", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
		if (rfd < 0)
			return ntstatus_from_errno(-errno);
		status = sdw_request(lock_dir, SDW_OP_MARK, rfd, -1, 0, NULL,
		    0);
		close(rfd);
		if (status != STATUS_SUCCESS)
			return status;
		t->sd_stored = 1;
	}
	wcur_init(&w, buf, sizeof(buf));
	(void)secdesc_encode(&w, sd, OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION |
	    ((which & (SACL_SECURITY_INFORMATION | SACL_CLASS_BITS)) ?
	    SACL_SECURITY_INFORMATION : 0));
	if (w.err)
		return STATUS_INVALID_SECURITY_DESCR;
	return sdw_request(lock_dir, pfd >= 0 ? SDW_OP_INHERIT : SDW_OP_SET,
	    fd, pfd, which, buf, wcur_off(&w));
}

/*
 * The descriptor of a file this CREATE just made: nothing is stored on
 * it, and the kernel's parts are needed only when the new descriptor
 * does not give owner, group and DACL all three (the writer fills those
 * it lacks from what is sent: sdw_fill).  One fstat instead of
 * sd_current's fstat and two reads that would say ENODATA.
 */
static ntstatus_t
sd_fresh(int fd, uint32_t which, struct vfs_stat *st, struct secdesc *sd)
{
	const uint32_t ogd = OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
	const struct vfs_ops *vfs = file_vfs();
	int rc;

	if ((rc = vfs->fstat(fd, st)) != 0)
		return ntstatus_from_errno(rc);
	memset(sd, 0, sizeof(*sd));
	sd->control = SE_SELF_RELATIVE;
	if ((which & ogd) != 0 && (which & ogd) != ogd)
		(void)secdesc_posix_derive(vfs, fd, st, sd);
	return STATUS_SUCCESS;
}

/*
 * Sets the parts of which from new over the file's descriptor: the
 * kernel's side (chown, chgrp, POSIX ACL) as the user, then the stored
 * descriptor through the writer; undone when the writer refuses.  fresh:
 * a file this CREATE made (sd_fresh), which a failure unlinks
 * (smb2_create.c create_fail), so there is nothing to undo.
 */
static ntstatus_t
sd_set_parts(const char *lock_dir, struct tree *t, int fd, uint32_t which,
    const struct secdesc *new, int pfd, int fresh)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat st;
	ntstatus_t status;
	uint32_t id, uid, gid;
	int stored, rc, posix = 0;

	/* an empty SecD context sets nothing: the kernel's defaults hold */
	if (which == 0)
		return STATUS_SUCCESS;
	status = fresh ? sd_fresh(fd, which, &st, &sd_cur) :
	    sd_current(fd, &st, &sd_cur, &stored);
	if (status != STATUS_SUCCESS)
		return status;
	if (ntacl_validate(new) != 0)
		return STATUS_INVALID_PARAMETER;
	rc = ntacl_merge(&sd_cur, new, which, &sd_cur);
	if (rc != 0)
		return rc == -1 ? STATUS_INVALID_OWNER : rc == -2 ?
		    STATUS_INVALID_PRIMARY_GROUP : STATUS_INVALID_SECURITY_DESCR;
	/* no label (attribute, scope) given where there is no SACL: nothing */
	if (!(which & ~SACL_CLASS_BITS) && !(sd_cur.control & SE_SACL_PRESENT))
		return STATUS_SUCCESS;
	uid = st.uid;
	gid = st.gid;
	/* a Unix owner or group is given to the file, by the kernel's rules */
	if ((which & OWNER_SECURITY_INFORMATION) &&
	    secdesc_sid_unix(&new->owner, 1, &id))
		uid = id;
	if ((which & GROUP_SECURITY_INFORMATION) &&
	    secdesc_sid_unix(&new->group, 2, &id))
		gid = id;
	if ((which & OWNER_SECURITY_INFORMATION) &&
	    !ntacl_token_has(smb2_secdesc_token(), &new->owner))
		return STATUS_INVALID_OWNER;
	if (uid != st.uid || gid != st.gid) {
		rc = vfs->fchown(fd, uid != st.uid ? uid : (uid_t)-1,
		    gid != st.gid ? gid : (gid_t)-1);
		if (rc != 0)
			return ntstatus_from_errno(rc);
		st.uid = uid;
		st.gid = gid;
	}
	if (which & DACL_SECURITY_INFORMATION) {
		if (!fresh)
			sd_posix_save(fd, S_ISDIR(st.mode));
		if ((rc = sd_posix_apply(fd, &st, &sd_cur)) != 0) {
			if (!fresh)
				sd_posix_restore(fd, &st);
			return rc == -E2BIG ? STATUS_INVALID_PARAMETER :
			    ntstatus_from_errno(rc);
		}
		posix = !fresh;
	}
	status = sd_store(lock_dir, t, fd, which, &sd_cur, pfd);
	if (status != STATUS_SUCCESS && posix)
		sd_posix_restore(fd, &st);
	return status;
}

/*
 * MS-SMB2 3.3.5.21.3, MS-FSA 2.1.5.17 and the rights Windows documents
 * for SECURITY_INFORMATION: owner, group and label need WRITE_OWNER; the
 * DACL and the resource attributes WRITE_DAC; the SACL and the scoped
 * policy ids ACCESS_SYSTEM_SECURITY; BACKUP is owner, group, DACL and
 * SACL with all three.  Other bits are ignored (3.3.5.21.3).
 */
static uint32_t
sd_set_needs(uint32_t which)
{
	uint32_t need = 0;

	if (which & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
	    LABEL_SECURITY_INFORMATION))
		need |= WRITE_OWNER;
	if (which & (DACL_SECURITY_INFORMATION |
	    ATTRIBUTE_SECURITY_INFORMATION))
		need |= WRITE_DAC;
	if (which & (SACL_SECURITY_INFORMATION | SCOPE_SECURITY_INFORMATION))
		need |= ACCESS_SYSTEM_SECURITY;
	return need;
}

ntstatus_t
smb2_secdesc_set(struct open *op, uint32_t which, const uint8_t *buf,
    size_t len)
{
	uint32_t nfs_mode = 0;
	int nfs_chmod = 0, dacl_left = 1, rc;
	ntstatus_t status;

	if (which & BACKUP_SECURITY_INFORMATION)
		which |= OWNER_SECURITY_INFORMATION |
		    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION |
		    SACL_SECURITY_INFORMATION;
	which &= OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
	    DACL_SECURITY_INFORMATION | SACL_SECURITY_INFORMATION |
	    SACL_CLASS_BITS;
	if (sd_set_needs(which) & ~op->access)
		return STATUS_ACCESS_DENIED;
	if (op->tree != NULL && op->tree->read_only)
		return STATUS_ACCESS_DENIED;
	if (secdesc_decode(buf, len, &sd_new) != 0)
		return STATUS_INVALID_SECURITY_DESCR;
	/*
	 * A Mac's NFS ACEs (worker/fruit.h) are not stored: a mode ACE is
	 * a chmod, judged by the kernel (the owner may); a DACL of nothing
	 * else is no DACL.
	 */
	if (which & DACL_SECURITY_INFORMATION) {
		nfs_chmod = fruit_nfs_take(op->conn, op->tree, &sd_new,
		    &nfs_mode, &dacl_left);
		if (!dacl_left) {
			which &= ~DACL_SECURITY_INFORMATION;
			sd_new.control &= ~SE_DACL_PRESENT;
		}
	}
	ntacl_canon_set(&sd_new);
	/* the whole SACL holds every class */
	if (which & SACL_SECURITY_INFORMATION)
		which &= ~SACL_CLASS_BITS;
	if (which != 0 && (status = sd_set_parts(op->conn->conf->lock_dir,
	    op->tree, op->u.file->fd, which, &sd_new, -1, 0)) !=
	    STATUS_SUCCESS)
		return status;
	if (nfs_chmod && (rc = file_vfs()->fchmod(op->u.file->fd,
	    (mode_t)nfs_mode)) != 0)
		return ntstatus_from_errno(rc);
	return STATUS_SUCCESS;
}

static int	sd_parent_read(struct tree *, const char *, int, int *);
static int	sd_parent_open(struct tree *, const char *, int *own);

/* The SecD context's parts over what the parent passed on (in sd_new). */
static ntstatus_t
sd_create_given(const struct conf *conf, const uint8_t *secd,
    size_t secd_len, uint32_t *which)
{
	if (secdesc_decode(secd, secd_len, &sd_cur) != 0)
		return STATUS_INVALID_SECURITY_DESCR;
	/* a SACL given at create needs SeSecurityPrivilege too */
	if ((sd_cur.control & SE_SACL_PRESENT) &&
	    !smb2_secdesc_privileged(conf))
		return STATUS_PRIVILEGE_NOT_HELD;
	ntacl_canon_set(&sd_cur);
	/* the context's parts win (MS-SMB2 2.2.13.2.2) */
	if (sd_cur.has_owner) {
		sd_new.owner = sd_cur.owner;
		*which |= OWNER_SECURITY_INFORMATION;
	}
	if (sd_cur.has_group) {
		sd_new.group = sd_cur.group;
		*which |= GROUP_SECURITY_INFORMATION;
	}
	if (sd_cur.control & SE_DACL_PRESENT) {
		(void)ntacl_merge(&sd_new, &sd_cur, DACL_SECURITY_INFORMATION,
		    &sd_new);
		*which |= DACL_SECURITY_INFORMATION;
	}
	return STATUS_SUCCESS;
}

/*
 * What a new file or directory gets (MS-DTYP 2.5.3.4): the parent's
 * inheritable entries, then the SecD context's parts over them.  A parent
 * with a stored DACL that passes nothing on gives the creator's default
 * DACL instead (ntacl_default_dacl), as Windows does.  The SACL: the
 * parent's inheritable SACL ACEs, with a SACL of the context as
 * ntacl_sacl_inherit says; inheriting needs no privilege (Windows), so
 * the writer computes it again from the parent itself (SDW_OP_INHERIT).
 * Nothing stored when the parent has no descriptor and the context no
 * DACL: the kernel's defaults hold.
 */
ntstatus_t
smb2_secdesc_create(struct conn *c, struct tree *t, struct file_open *f,
    const uint8_t *secd, size_t secd_len)
{
	const struct ntacl_token *tok = smb2_secdesc_token();
	const struct secdesc *given = NULL;
	uint32_t which = 0;
	ntstatus_t status;
	int n = 0, rc = 0, ns = 0, pfd = -1, own = 0;

	if (smb2_secdesc_tree_stored(t)) {
		rc = sd_parent_read(t, f->path, 1, NULL);
		/* a parent with only a SACL stored passes on no DACL */
		if (rc > 0 && (sd_par.control & SE_DACL_PRESENT) &&
		    (n = ntacl_inherit(&sd_par, f->is_dir, tok, &sd_new)) < 0)
			return STATUS_INVALID_PARAMETER;
		if (rc > 0 && (sd_par.control & SE_DACL_PRESENT) && n == 0) {
			ntacl_default_dacl(tok, &sd_new);
			n = (int)sd_new.nace;
		}
	}
	if (n > 0)
		which = OWNER_SECURITY_INFORMATION |
		    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
	else {
		memset(&sd_new, 0, sizeof(sd_new));
		sd_new.control = SE_SELF_RELATIVE;
		sd_new.has_owner = sd_new.has_group = 1;
		sd_new.owner = tok->user;
		sd_new.group = tok->group;
	}
	if (secd != NULL && (status = sd_create_given(c->conf, secd,
	    secd_len, &which)) != STATUS_SUCCESS)
		return status;
	if (secd != NULL && (sd_cur.control & SE_SACL_PRESENT))
		given = &sd_cur;
	if (rc > 0 || given != NULL) {
		if (rc <= 0)
			memset(&sd_par, 0, sizeof(sd_par));
		if ((ns = ntacl_sacl_inherit(&sd_par, f->is_dir, tok, given,
		    &sd_new)) < 0)
			return STATUS_INVALID_PARAMETER;
		if (ns > 0 || given != NULL)
			which |= SACL_SECURITY_INFORMATION;
	}
	if (which == 0)
		return STATUS_SUCCESS;
	/* inherited alone: the writer checks it against the parent */
	if ((which & SACL_SECURITY_INFORMATION) && given == NULL &&
	    (pfd = sd_parent_open(t, f->path, &own)) < 0)
		return ntstatus_from_errno(pfd);
	if (which & DACL_SECURITY_INFORMATION)
		which |= OWNER_SECURITY_INFORMATION |
		    GROUP_SECURITY_INFORMATION;
	status = sd_set_parts(c->conf->lock_dir, t, f->fd, which, &sd_new,
	    pfd, 1);
	if (own)
		close(pfd);
	return status;
}

/*
 * The stored descriptor of path's parent, into sd_par: 1, 0 when none (or
 * the parent is gone: the create itself will say), -errno.  The share
 * root is read through the tree's own fd, a directory below through an
 * O_PATH open of it: one getxattr, or three calls.  A create reads it
 * twice (the ADD_FILE check, then inheritance) in one synchronous pass
 * of smb2_create_handle: the first read is kept for the second.
 */
static struct {
	int		 valid;
	const struct tree *t;
	int		 rc;
	char		 path[FILE_PATH_MAX];
} sd_par_memo;

static int
sd_parent_read(struct tree *t, const char *path, int kept, int *looked)
{
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dfd, rc;

	if (looked != NULL)
		*looked = 0;
	if (kept && sd_par_memo.valid && sd_par_memo.t == t &&
	    strcmp(sd_par_memo.path, path) == 0) {
		sd_par_memo.valid = 0;
		return sd_par_memo.rc;
	}
	/* sd_par is read again: what was kept no longer is */
	sd_par_memo.valid = 0;
	if (looked != NULL)
		*looked = 1;
	if (slash == NULL)
		return sd_stored_decode(sd_getxattr_opath(t->root_fd,
		    SDW_XATTR_SD, sd_raw, sizeof(sd_raw)), &sd_par);
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	dfd = file_vfs()->open(t->root_fd, parent, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0) {
		if (looked != NULL)
			*looked = 0;	/* gone: nothing was read */
		return 0;
	}
	rc = sd_stored_decode(sd_getxattr_opath(dfd, SDW_XATTR_SD, sd_raw,
	    sizeof(sd_raw)), &sd_par);
	close(dfd);
	return rc;
}

/*
 * An fd of path's parent for the writer (SDW_OP_INHERIT): the tree's own
 * at the top of the share (*own 0), else an O_PATH open (*own 1: close
 * it).  -errno.
 */
static int
sd_parent_open(struct tree *t, const char *path, int *own)
{
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');

	*own = 0;
	if (slash == NULL)
		return t->root_fd;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	*own = 1;
	return file_vfs()->open(t->root_fd, parent, O_PATH | O_DIRECTORY, 0);
}

/*
 * What the stored descriptor of path's parent grants this worker, or
 * every right when it has none (the kernel's answer stands).
 */
static uint32_t
sd_parent_granted(struct tree *t, const char *path)
{
	int rc = sd_parent_read(t, path, 0, NULL);

	return rc > 0 ? ntacl_granted(&sd_par, smb2_secdesc_token()) : ~0u;
}

/*
 * The other note, for creates that looked no name up (vfs/dirnote.c):
 * parent was just read without a descriptor; marked from now on, it is
 * read again after the marks, and noted when still without.  Only a
 * parent found without one is marked: one with a descriptor is read at
 * each create anyway.  sd_parent_read's answer (sd_par).
 */
static int
sd_parent_watch(struct tree *t, const char *path, const char *parent)
{
	int rc, looked = 0;

	if (!t->root_id_known ||
	    vfs_dirnote_watch(t->root_fd, t->root_dev, t->root_ino, parent) != 0)
		return 0;
	if ((rc = sd_parent_read(t, path, 0, &looked)) == 0 && looked)
		vfs_dirnote_none(t->root_dev, t->root_ino, parent);
	return rc;
}

ntstatus_t
smb2_secdesc_parent(struct tree *t, const char *path, int is_dir)
{
	uint32_t need = is_dir ? FILE_APPEND_DATA : FILE_WRITE_DATA;
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int rc, looked = 0;

	/* whatever was kept is from another pass */
	sd_par_memo.valid = 0;
	/* ADD_SUBDIRECTORY, ADD_FILE (MS-FSA 2.1.5.1.2) */
	if (!smb2_secdesc_tree_stored(t))
		return STATUS_SUCCESS;
	/*
	 * A parent found to have none, while the name cache's watch of it
	 * saw no change of its own attributes since ("Parents known to have
	 * none", above): no system call.
	 */
	create_parent(path, parent, sizeof(parent));
	if (slash != NULL && (size_t)(slash - path) >= sizeof(parent))
		rc = sd_parent_read(t, path, 0, NULL);
	else if (vfs_name_dir_noted(t->root_fd, parent) ||
	    (t->root_id_known &&
	    vfs_dirnote_noted(t->root_dev, t->root_ino, parent)))
		rc = 0;
	else if ((rc = sd_parent_read(t, path, 0, &looked)) == 0 && looked) {
		vfs_name_dir_note(t->root_fd, parent);
		if (!vfs_name_dir_noted(t->root_fd, parent))
			rc = sd_parent_watch(t, path, parent);
	}
	/* kept for smb2_secdesc_create in this pass (sd_par holds it) */
	sd_par_memo.valid = strlen(path) < sizeof(sd_par_memo.path);
	sd_par_memo.t = t;
	sd_par_memo.rc = rc;
	if (sd_par_memo.valid)
		memcpy(sd_par_memo.path, path, strlen(path) + 1);
	if (rc > 0 && !(ntacl_granted(&sd_par, smb2_secdesc_token()) &
	    need)) {
		log_debug(3, "NT access check: the parent refuses to add %s",
		    path);
		return STATUS_ACCESS_DENIED;
	}
	return STATUS_SUCCESS;
}

static struct sd_none *
sd_none_slot(const struct vfs_stat *st)
{
	uint64_t h = (st->ino ^ (st->dev << 32 | st->dev >> 32)) *
	    0x9E3779B97F4A7C15ull;

	return &sd_none[h >> 52 & (SD_NONE_SLOTS - 1)];
}

/* The file of st had no stored descriptor at its present ctime. */
static int
sd_none_known(const struct vfs_stat *st)
{
	const struct sd_none *e = sd_none_slot(st);

	return e->ino != 0 && e->ino == st->ino && e->dev == st->dev &&
	    e->ctime.tv_sec == st->ctime.tv_sec &&
	    e->ctime.tv_nsec == st->ctime.tv_nsec;
}

/* None found at ctime st->ctime; before is the clock read before looking. */
static void
sd_none_note(const struct vfs_stat *st, const struct timespec *before)
{
	struct sd_none *e = sd_none_slot(st);

	if (st->ino == 0 ||
	    st->ctime.tv_sec + SD_NONE_SETTLE_S >= before->tv_sec)
		return;
	e->dev = st->dev;
	e->ino = st->ino;
	e->ctime = st->ctime;
}

/*
 * MS-DTYP 2.5.3.2: ACCESS_SYSTEM_SECURITY asked for by name is granted by
 * SeSecurityPrivilege alone, whatever the DACL says, and refused without
 * it (PRIVILEGE_NOT_HELD, before any other check); MAXIMUM_ALLOWED never
 * adds it.  No system call but on the first ask (the group's lookup).
 */
ntstatus_t
smb2_secdesc_privilege(const struct conf *conf, uint32_t access)
{
	if ((access & ACCESS_SYSTEM_SECURITY) &&
	    !smb2_secdesc_privileged(conf))
		return STATUS_PRIVILEGE_NOT_HELD;
	return STATUS_SUCCESS;
}

/*
 * The NT lock of an open of an existing file: the stored descriptor (if
 * any) must grant the rights asked for by name (named, generic bits
 * mapped); what MAXIMUM_ALLOWED added to *want, and *maxacc, narrow to
 * what it grants.  DELETE may come from the parent instead (Windows:
 * FILE_DELETE_CHILD there): *maxacc holds it when the kernel lets this
 * user unlink the name.
 */
ntstatus_t
smb2_secdesc_check(struct tree *t, const char *path, int fd,
    const struct vfs_stat *st, uint32_t named, uint32_t *want,
    uint32_t *maxacc)
{
	struct timespec before;
	uint32_t have;
	int rc;

	if (!smb2_secdesc_tree_stored(t) || sd_none_known(st))
		return STATUS_SUCCESS;
	/* the vDSO: no system call */
	clock_gettime(CLOCK_REALTIME_COARSE, &before);
	rc = smb2_secdesc_stored(fd, &sd_cur);
	if (rc == 0)
		sd_none_note(st, &before);
	if (rc <= 0)
		return rc < 0 ? ntstatus_from_errno(rc) : STATUS_SUCCESS;
	/*
	 * A stored SACL alone leaves the DACL to the kernel (ntacl_granted
	 * grants all without one).  SYNCHRONIZE, and FILE_READ_ATTRIBUTES as the kernel gives stat to
	 * whoever may look up the name (MS-FSA: the parent's
	 * FILE_LIST_DIRECTORY grants it).
	 */
	have = ntacl_granted(&sd_cur, smb2_secdesc_token()) | SYNCHRONIZE |
	    FILE_READ_ATTRIBUTES;
	/* Windows: DELETE also through the parent's FILE_DELETE_CHILD */
	if ((*maxacc & DELETE_ACCESS) && !(have & DELETE_ACCESS) &&
	    (sd_parent_granted(t, path) & FILE_DELETE_CHILD))
		have |= DELETE_ACCESS;
	/* ACCESS_SYSTEM_SECURITY: judged by privilege (smb2_secdesc_privilege) */
	have |= ACCESS_SYSTEM_SECURITY;
	if (named & ~have & FILE_ALL_ACCESS) {
		log_debug(3, "NT access check: 0x%08x asked, 0x%08x granted",
		    named, have);
		return STATUS_ACCESS_DENIED;
	}
	*want &= have;
	*maxacc &= have;
	return STATUS_SUCCESS;
}

/*
 * hide unreadable (worker/smb2_dir.c): the NT lock of a read open of
 * entry name of dirfd, judged as smb2_secdesc_check judges the open, so
 * that a listing shows what an open would grant.  No system call on a
 * share without stored descriptors, nor for a file known to have none.
 */
#define SD_ENTRY_READ	(FILE_READ_DATA | FILE_READ_EA | \
	FILE_READ_ATTRIBUTES | READ_CONTROL)

int
smb2_secdesc_entry_readable(struct tree *t, int dirfd, const char *name,
    const struct vfs_stat *st)
{
	struct timespec before;
	int rc;

	if (!smb2_secdesc_tree_stored(t) || sd_none_known(st))
		return 1;
	/* the vDSO: no system call */
	clock_gettime(CLOCK_REALTIME_COARSE, &before);
	rc = sd_stored_decode(file_vfs()->entxattr(dirfd, name, SDW_XATTR_SD,
	    sd_raw, sizeof(sd_raw)), &sd_cur);
	if (rc == 0)
		sd_none_note(st, &before);
	if (rc <= 0)
		return rc == 0;	/* an unreadable descriptor fails the open too */
	/*
	 * What Windows' access-based enumeration asks of the descriptor,
	 * and Samba's hide unreadable (smbtorture smb2.acls.ACCESSBASED):
	 * every read right, not only the data (FILE_LIST_DIRECTORY is the
	 * same bit on a directory).
	 */
	return (ntacl_granted(&sd_cur, smb2_secdesc_token()) &
	    SD_ENTRY_READ) == SD_ENTRY_READ;
}
