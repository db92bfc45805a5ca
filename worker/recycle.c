/*
 * Recycle bin (worker/recycle.h).
 *
 * The rules are Samba's vfs_recycle's, in its order: a file already in
 * the bin, one larger than the maximum size, an excluded name or a name
 * in an excluded directory is deleted; otherwise it is renamed into the
 * bin (with keep tree under its own directories), an older file of the
 * same name replaced, or with versions kept as "Copy #N of NAME"; when
 * the rename fails the file is deleted.  Samba resolves the bin by name
 * and would follow a symlink planted there; here each component is
 * opened with RESOLVE_NO_SYMLINKS beneath the share root, and a user's
 * own directory (the component holding %U) must belong to that user, so
 * nobody can make another's bin a directory he controls.
 */
#include "worker/recycle.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "vfs/vfs.h"
#include "worker/file_open.h"
#include "worker/worker.h"

/* The parents of per-user bins: everyone makes his own there, sticky. */
#define RECYCLE_SHARED_MODE	01777

int
recycle_bin_path(const char *dir, const char *user, char *out, size_t cap,
    size_t *user_at)
{
	const char *u = strstr(dir, "%U"), *slash;
	size_t pre, ulen = strlen(user), n;

	if (u == NULL) {
		n = strlen(dir);
		if (n >= cap)
			return -ENAMETOOLONG;
		memcpy(out, dir, n + 1);
		if (user_at != NULL)
			*user_at = n;
		return (int)n;
	}
	if (ulen == 0 || strchr(user, '/') != NULL || strcmp(user, ".") == 0 ||
	    strcmp(user, "..") == 0)
		return -EINVAL;
	pre = (size_t)(u - dir);
	n = pre + ulen + strlen(u + 2);
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(out, dir, pre);
	memcpy(out + pre, user, ulen);
	memcpy(out + pre + ulen, u + 2, strlen(u + 2) + 1);
	if (user_at != NULL) {
		/* the '/' ending the shared part, before the %U component */
		for (slash = u; slash > dir && slash[-1] != '/'; slash--)
			;
		*user_at = slash > dir ? (size_t)(slash - dir - 1) : 0;
	}
	return (int)n;
}

int
recycle_path_in(const char *bin, size_t bin_len, const char *path,
    int case_sensitive)
{
	int same = case_sensitive ? strncmp(path, bin, bin_len) == 0 :
	    strncasecmp(path, bin, bin_len) == 0;

	return same && (path[bin_len] == '\0' || path[bin_len] == '/');
}

/* Samba's unix_wild_match: '*' any run (also empty), '?' one; any case. */
static int
recycle_wild(const char *p, size_t plen, const char *s, size_t slen)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;

	while (si < slen) {
		if (pi < plen && p[pi] == '*') {
			star_p = ++pi;
			star_s = si;
		} else if (pi < plen && (p[pi] == '?' ||
		    tolower((unsigned char)p[pi]) ==
		    tolower((unsigned char)s[si]))) {
			pi++;
			si++;
		} else if (star_p != (size_t)-1) {
			pi = star_p;
			si = ++star_s;
		} else
			return 0;
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

#define RECYCLE_LIST_SEP	" \t,;\r\n"

int
recycle_list_match(const char *list, const char *name, size_t len)
{
	const char *p = list;
	size_t n;

	if (list == NULL || len == 0)
		return 0;
	while (*p != '\0') {
		p += strspn(p, RECYCLE_LIST_SEP);
		n = strcspn(p, RECYCLE_LIST_SEP);
		if (n > 0 && recycle_wild(p, n, name, len))
			return 1;
		p += n;
	}
	return 0;
}

int
recycle_dir_match(const char *list, const char *dir)
{
	const char *p = dir;
	size_t n;

	if (list == NULL)
		return 0;
	while (*p != '\0') {
		n = strcspn(p, "/");
		if (recycle_list_match(list, p, n))
			return 1;
		p += n;
		p += *p == '/';
	}
	return 0;
}

int
recycle_target(const char *bin, const char *path, int keep_tree,
    unsigned n, char *dir, size_t dir_cap, char *name, size_t name_cap)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	int len;

	if (keep_tree && slash != NULL)
		len = snprintf(dir, dir_cap, "%s/%.*s", bin,
		    (int)(slash - path), path);
	else
		len = snprintf(dir, dir_cap, "%s", bin);
	if (len < 0 || (size_t)len >= dir_cap)
		return -ENAMETOOLONG;
	if (n > 0)
		len = snprintf(name, name_cap, "Copy #%u of %s", n, base);
	else
		len = snprintf(name, name_cap, "%s", base);
	if (len < 0 || (size_t)len >= name_cap)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * One component name of a directory under dirfd, made when missing: an
 * fd of it (O_PATH, or O_RDONLY when this call made it: its mode is set
 * through it, the umask aside), or -errno.  A symlink there gives -ELOOP.
 */
static int
recycle_step(int dirfd, const char *comp, mode_t mode)
{
	const struct vfs_ops *vfs = file_vfs();
	int fd;

	fd = vfs->open_nolinks(dirfd, comp, O_PATH | O_DIRECTORY, 0);
	if (fd != -ENOENT)
		return fd;
	if (mkdirat(dirfd, comp, mode) < 0)
		return errno != EEXIST ? -errno :
		    vfs->open_nolinks(dirfd, comp, O_PATH | O_DIRECTORY, 0);
	fd = vfs->open_nolinks(dirfd, comp, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -EACCES)	/* a mode without read for its owner */
		return vfs->open_nolinks(dirfd, comp, O_PATH | O_DIRECTORY, 0);
	if (fd >= 0 && fchmod(fd, mode) < 0)
		log_debug(2, "recycle: mode %o on \"%s\": %s", (unsigned)mode,
		    comp, strerror(errno));
	return fd;
}

/*
 * rel (components '/'-separated) under base: opened in one call when it
 * is all there, else walked and made.  An fd or -errno; base stays open.
 */
static int
recycle_open_dir(int base, char *rel, mode_t mode)
{
	char *p = rel, *slash;
	int fd, next;

	if (*rel == '\0') {
		fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	fd = file_vfs()->open_nolinks(base, rel, O_PATH | O_DIRECTORY, 0);
	if (fd != -ENOENT)
		return fd;
	fd = -1;
	for (;;) {
		slash = strchr(p, '/');
		if (slash != NULL)
			*slash = '\0';
		next = recycle_step(fd >= 0 ? fd : base, p, mode);
		if (slash != NULL)
			*slash = '/';
		if (fd >= 0)
			close(fd);
		if (next < 0 || slash == NULL)
			return next;
		fd = next;
		p = slash + 1;
	}
}

/*
 * The directory the file goes to (dir: the bin, user_at bytes of it
 * shared), opened: the shared part made sticky for all, the user's own
 * directory checked to be his.  An fd or -errno.
 */
static int
recycle_open_target(const struct conf_share *s, int root, char *dir,
    size_t user_at)
{
	struct vfs_stat st;
	char *rest;
	int ufd, fd, rc;

	if (user_at == strlen(dir))	/* no %U: one bin for everyone */
		return recycle_open_dir(root, dir, s->recycle_dir_mode);
	rest = strchr(dir + user_at + (user_at > 0), '/');
	if (rest != NULL)
		*rest = '\0';
	/* the user's directory is there but for its first delete */
	ufd = file_vfs()->open_nolinks(root, dir, O_PATH | O_DIRECTORY, 0);
	if (ufd != -ENOENT)
		goto made;
	if (user_at > 0) {
		dir[user_at] = '\0';
		fd = recycle_open_dir(root, dir, RECYCLE_SHARED_MODE);
		dir[user_at] = '/';
		if (fd < 0) {
			ufd = fd;
			goto out;
		}
		ufd = recycle_step(fd, dir + user_at + 1, s->recycle_dir_mode);
		close(fd);
	} else
		ufd = recycle_step(root, dir, s->recycle_dir_mode);
made:
	if (ufd < 0)
		goto out;
	if ((rc = file_vfs()->fstat(ufd, &st)) != 0 ||
	    st.uid != (uint32_t)user_euid()) {
		close(ufd);
		ufd = rc != 0 ? rc : -EPERM;
	}
out:
	if (rest != NULL)
		*rest = '/';
	if (ufd < 0 || rest == NULL)
		return ufd;
	fd = recycle_open_dir(ufd, rest + 1, s->recycle_dir_mode);
	close(ufd);
	return fd;
}

/*
 * Moves last (in pfd) into the bin: 0, or -errno and nothing moved.
 * Path is the file's share-relative name (keep tree).
 */
static int
recycle_move(const struct conf_share *s, int root, const char *bin,
    size_t user_at, const char *path, int pfd, const char *last)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	unsigned n;
	int dfd, rc;

	if ((rc = recycle_target(bin, path, s->recycle_keep_tree, 0, dir,
	    sizeof(dir), name, sizeof(name))) != 0)
		return rc;
	if ((dfd = recycle_open_target(s, root, dir, user_at)) < 0)
		return dfd;
	for (n = 0; n <= RECYCLE_VERSIONS_MAX; n++) {
		if (n > 0 && (rc = recycle_target(bin, path, 0, n, dir,
		    sizeof(dir), name, sizeof(name))) != 0)
			break;
		/* without versions an older file of the name is replaced */
		rc = renameat2(pfd, last, dfd, name,
		    s->recycle_versions ? RENAME_NOREPLACE : 0) < 0 ? -errno : 0;
		if (rc != -EEXIST || !s->recycle_versions)
			break;
	}
	if (rc == 0 && s->recycle_touch) {
		const struct timespec ts[2] = {
			{ .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT }
		};

		(void)utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
	}
	close(dfd);
	return rc;
}

/*
 * A bin that fails, fails for every delete (on another mount, not
 * writable): level 1 once per share and reason in a row, then level 3.
 */
static void
recycle_log_fallback(const struct conf_share *s, const char *path,
    const char *bin, int rc)
{
	static const struct conf_share *last_share;
	static int last_rc;
	int level = s == last_share && rc == last_rc ? 3 : 1;

	last_share = s;
	last_rc = rc;
	log_debug(level, "recycle: %s\\%s cannot go into the bin %s (%s): "
	    "deleted", s->name, path, bin, strerror(-rc));
}

int
recycle_unlink(const struct conf_share *s, const char *user, int root,
    const char *path, int is_dir, uint64_t dev, uint64_t ino)
{
	const struct vfs_ops *vfs = file_vfs();
	char bin[PATH_MAX], parent[PATH_MAX];
	struct vfs_stat st;
	const char *last, *slash;
	size_t user_at = 0;
	int pfd, rc, len;

	if (s == NULL || s->recycle_dir == NULL || is_dir)
		return vfs->unlink_same(root, path, is_dir, dev, ino);
	len = recycle_bin_path(s->recycle_dir, user, bin, sizeof(bin),
	    &user_at);
	slash = strrchr(path, '/');
	last = slash != NULL ? slash + 1 : path;
	if (len < 0 || recycle_path_in(bin, (size_t)len, path,
	    s->case_sensitive) ||
	    recycle_list_match(s->recycle_exclude, last, strlen(last)))
		return vfs->unlink_same(root, path, 0, dev, ino);
	if (slash != NULL) {
		if ((size_t)(slash - path) >= sizeof(parent))
			return -ENAMETOOLONG;
		memcpy(parent, path, (size_t)(slash - path));
		parent[slash - path] = '\0';
	} else
		parent[0] = '\0';
	if (recycle_dir_match(s->recycle_exclude_dir, parent))
		return vfs->unlink_same(root, path, 0, dev, ino);
	if ((pfd = vfs->open(root, parent, O_PATH | O_DIRECTORY, 0)) < 0)
		return pfd;
	if ((rc = vfs->entstat(pfd, last, &st)) != 0)
		goto out;
	if (st.dev != dev || st.ino != ino || S_ISDIR(st.mode)) {
		rc = -ESTALE;
		goto out;
	}
	/* only regular files within the size go to the bin */
	if (!S_ISREG(st.mode) ||
	    (s->recycle_max_size > 0 && st.size > s->recycle_max_size))
		goto unlink;
	if ((rc = recycle_move(s, root, bin, user_at, path, pfd, last)) == 0) {
		log_debug(3, "recycle: %s\\%s moved into %s", s->name, path,
		    bin);
		goto out;
	}
	recycle_log_fallback(s, path, bin, rc);
unlink:
	rc = unlinkat(pfd, last, 0) < 0 ? -errno : 0;
out:
	close(pfd);
	return rc;
}
