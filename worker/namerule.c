/*
 * Samba's name rules of a share (worker/namerule.h).  Veto is judged on
 * the names a client gives and the names a listing returns, not on what
 * a symlink points to, as Samba does: the rules hide names, they are not
 * access control.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/fscc.h"
#include "worker/file_open.h"
#include "worker/namerule.h"

/* Levels below a vetoed directory that delete veto files descends. */
#define NAMERULE_DEPTH	16
/* Passes over a directory whose listing changes under the deletions. */
#define NAMERULE_PASSES	8

ntstatus_t
namerule_check_path(const struct conf_share *sh, const char *path)
{
	if (sh == NULL || sh->veto_pat == NULL)
		return STATUS_SUCCESS;
	switch (conf_namepat_path(sh->veto_pat, path, sh->case_sensitive)) {
	case 1:
		return STATUS_OBJECT_NAME_NOT_FOUND;
	case 2:
		return STATUS_OBJECT_PATH_NOT_FOUND;
	default:
		return STATUS_SUCCESS;
	}
}

/* The path the kernel has for fd, NUL-terminated; its length or -1. */
static ssize_t
namerule_fd_path(int fd, char *buf, size_t cap)
{
	char p[40];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlinkat(AT_FDCWD, p, buf, cap - 1);
	if (n < 0 || (size_t)n >= cap - 1)
		return -1;
	buf[n] = '\0';
	return n;
}

ntstatus_t
namerule_check_fd(const struct conf_share *sh, int root_fd, int fd,
    int as_parent)
{
	static char root[PATH_MAX], real[PATH_MAX];
	ssize_t rn, fn;
	const char *rel;

	if (sh == NULL || sh->veto_pat == NULL || fd < 0)
		return STATUS_SUCCESS;
	/* unknown (no /proc): what the names said stands */
	if ((rn = namerule_fd_path(root_fd, root, sizeof(root))) < 0 ||
	    (fn = namerule_fd_path(fd, real, sizeof(real))) < 0)
		return STATUS_SUCCESS;
	if (rn == 1)
		rn = 0;			/* the root is "/" */
	if (fn < rn || memcmp(real, root, (size_t)rn) != 0 ||
	    (fn > rn && real[rn] != '/'))
		return STATUS_SUCCESS;	/* not beneath: the open refused it */
	rel = real + rn + (fn > rn);
	switch (conf_namepat_path(sh->veto_pat, rel, sh->case_sensitive)) {
	case 1:
		return as_parent ? STATUS_OBJECT_PATH_NOT_FOUND :
		    STATUS_OBJECT_NAME_NOT_FOUND;
	case 2:
		return STATUS_OBJECT_PATH_NOT_FOUND;
	default:
		return STATUS_SUCCESS;
	}
}

ntstatus_t
namerule_check_parent(const struct conf_share *sh, int root_fd,
    const char *path)
{
	static char parent[PATH_MAX];
	const char *slash;
	ntstatus_t st;
	int fd;

	if (sh == NULL || sh->veto_pat == NULL ||
	    (slash = strrchr(path, '/')) == NULL)
		return STATUS_SUCCESS;	/* the root's names were checked */
	if ((size_t)(slash - path) >= sizeof(parent))
		return STATUS_SUCCESS;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	fd = file_vfs()->open(root_fd, parent, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return STATUS_SUCCESS;	/* the request's own lookup answers */
	st = namerule_check_fd(sh, root_fd, fd, 1);
	close(fd);
	return st;
}

int
namerule_vetoed(const struct conf_share *sh, const char *name, size_t len)
{
	if (sh == NULL || sh->veto_pat == NULL)
		return 0;
	return conf_namepat_match(sh->veto_pat, name, len, sh->case_sensitive);
}

int
namerule_oplock_vetoed(const struct conf_share *sh, const char *path)
{
	const char *base;

	if (sh == NULL || sh->veto_oplock_pat == NULL)
		return 0;
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	return conf_namepat_match(sh->veto_oplock_pat, base, strlen(base),
	    sh->case_sensitive);
}

uint32_t
namerule_attrs(const struct conf_share *sh, const char *name, size_t len,
    uint32_t attrs)
{
	int hide;

	if (sh == NULL || len == 0)
		return attrs;
	hide = sh->hide_dot_files && name[0] == '.' && !(len == 1 ||
	    (len == 2 && name[1] == '.'));
	if (!hide && sh->hide_pat != NULL)
		hide = conf_namepat_match(sh->hide_pat, name, len,
		    sh->case_sensitive);
	if (!hide)
		return attrs;
	/* NORMAL is only ever alone */
	return (attrs & ~FILE_ATTRIBUTE_NORMAL) | FILE_ATTRIBUTE_HIDDEN;
}

uint32_t
namerule_path_attrs(const struct conf_share *sh, const char *path,
    uint32_t attrs)
{
	const char *last;

	if (sh == NULL || (!sh->hide_dot_files && sh->hide_pat == NULL))
		return attrs;
	last = strrchr(path, '/');
	last = last != NULL ? last + 1 : path;
	return namerule_attrs(sh, last, strlen(last), attrs);
}

int
namerule_deletable(const struct conf_share *sh, const char *name)
{
	return sh != NULL && sh->delete_veto_files &&
	    namerule_vetoed(sh, name, strlen(name));
}

static int namerule_purge_dir(const struct conf_share *, int, int, int);

/* Removes one entry of dirfd; a directory with everything below it. */
static int
namerule_remove(const struct conf_share *sh, int dirfd, const char *name,
    int depth)
{
	const struct vfs_ops *vfs = file_vfs();
	struct vfs_stat st;
	int rc, fd;

	if ((rc = vfs->entstat(dirfd, name, &st)) != 0)
		return rc == -ENOENT ? 0 : rc;
	if (!S_ISDIR(st.mode))
		return vfs->unlink(dirfd, name, 0);
	if (depth >= NAMERULE_DEPTH)
		return -ENOTEMPTY;
	if ((fd = vfs->open(dirfd, name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW, 0)) < 0)
		return fd;
	rc = namerule_purge_dir(sh, fd, 1, depth + 1);
	close(fd);
	if (rc != 0)
		return rc;
	return vfs->unlink(dirfd, name, 1);
}

/*
 * Removes the vetoed entries of fd (all of them when all is set).  A
 * directory read while its entries go may skip some: passes repeat
 * until one removes nothing.
 */
static int
namerule_purge_dir(const struct conf_share *sh, int fd, int all, int depth)
{
	const struct vfs_ops *vfs = file_vfs();
	uint8_t buf[4096];
	uint16_t reclen;
	const char *nm;
	ssize_t n, off;
	int rc, pass, removed;

	for (pass = 0; pass < NAMERULE_PASSES; pass++) {
		removed = 0;
		if ((rc = vfs->rewinddir(fd)) != 0)
			return rc;
		while ((n = vfs->getdents(fd, buf, sizeof(buf))) > 0) {
			for (off = 0; off + 19 < n; off += reclen) {
				memcpy(&reclen, buf + off + 16, 2);
				if (reclen == 0 || off + reclen > n)
					return -EIO;
				nm = (const char *)buf + off + 19;
				if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
					continue;
				if (!all && !namerule_vetoed(sh, nm, strlen(nm)))
					continue;
				if ((rc = namerule_remove(sh, fd, nm, depth)) != 0)
					return rc;
				removed = 1;
			}
		}
		if (n < 0)
			return (int)n;
		if (!removed)
			return 0;
	}
	return 0;
}

int
namerule_purge(const struct conf_share *sh, int dirfd)
{
	const struct vfs_ops *vfs = file_vfs();
	int fd, rc;

	if (sh == NULL || !sh->delete_veto_files || sh->veto_pat == NULL)
		return 0;
	/* a fresh fd: the open's own listing position stays where it is */
	if ((fd = vfs->open(dirfd, "", O_RDONLY | O_DIRECTORY, 0)) < 0)
		return fd;
	rc = namerule_purge_dir(sh, fd, 0, 0);
	close(fd);
	return rc;
}
