/*
 * The files of the state, which the master makes and never opens: in the
 * lock directory, the main env state.mdb (+ -lock), with more than one
 * partition the data envs state-I.mdb (+ -lock, I from 0), the hint
 * page state.hint (shared counters and the writer-lock holder records,
 * struct shm_hint) and the mailbox directory msg/.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

#define SHM_FILE		"state.mdb"
#define SHM_HINT_FILE		"state.hint"

int
shm_parts_valid(unsigned parts)
{
	return parts >= 1 && parts <= SHM_PARTS_MAX && (parts & (parts - 1)) == 0;
}

/* idx 0: the main env; 1 + I: data env I. */
int
shm_env_path(const char *dir, unsigned idx, char *buf, size_t size)
{
	int n = idx == 0 ? snprintf(buf, size, "%s/%s", dir, SHM_FILE) :
	    snprintf(buf, size, "%s/state-%u.mdb", dir, idx - 1);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Master only: make path a file of the state group, mode 0660. */
static int
shm_make_file(const char *path, gid_t gid, int have_gid)
{
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0660);
	if (fd == -1)
		return -errno;
	if ((have_gid && fchown(fd, (uid_t)-1, gid) == -1) || fchmod(fd, 0660) == -1) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

/* The counters start at zero: a fresh env has no lock and no open. */
static int
shm_hint_create(const char *dir, unsigned parts, gid_t gid, int have_gid)
{
	char path[PATH_MAX];
	struct shm_hint h;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, SHM_HINT_FILE) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (unlink(path) == -1 && errno != ENOENT)
		return -errno;
	if ((rc = shm_make_file(path, gid, have_gid)) != 0)
		return rc;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -errno;
	memset(&h, 0, sizeof(h));
	h.magic = SHM_HINT_MAGIC;
	h.buckets = SHM_HINT_BUCKETS;
	h.parts = parts;
	if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		rc = errno != 0 ? -errno : -EIO;
	close(fd);
	return rc;
}

int
shm_hint_map(struct shm *s)
{
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", s->dir, SHM_HINT_FILE) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/*
	 * Every writer must keep the counters, or a zero could lie: a process
	 * that cannot map them does not get the env at all.
	 */
	if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		rc = -errno;
		log_warn("state: cannot open %s", path);
		return rc;
	}
	if (fstat(fd, &st) == -1 || st.st_size != (off_t)sizeof(struct shm_hint)) {
		log_warnx("state: %s is not a hint file of this version", path);
		close(fd);
		return -EPROTO;
	}
	p = mmap(NULL, sizeof(struct shm_hint), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc != 0)
		return rc;
	s->hint = p;
	if (s->hint->magic != SHM_HINT_MAGIC || s->hint->buckets != SHM_HINT_BUCKETS ||
	    !shm_parts_valid(s->hint->parts)) {
		log_warnx("state: %s is not a hint file of this version", path);
		return -EPROTO;
	}
	return 0;
}

static int
shm_make_dir(const char *path, mode_t mode, gid_t gid, int have_gid)
{
	struct stat st;

	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) == -1)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (have_gid && chown(path, (uid_t)-1, gid) == -1)
		return -errno;
	if (chmod(path, mode) == -1)
		return -errno;
	return 0;
}

/*
 * Removes the env files of every partition a previous run may have made
 * (a run with another `state partitions`): what is left belongs to
 * processes that are gone.
 */
static int
shm_unlink_envs(const char *dir)
{
	char file[PATH_MAX], lock[PATH_MAX];
	unsigned i;
	int rc;

	for (i = 0; i < SHM_ENVS_MAX; i++) {
		if ((rc = shm_env_path(dir, i, file, sizeof(file))) != 0)
			return rc;
		if (snprintf(lock, sizeof(lock), "%s-lock", file) >= (int)sizeof(lock))
			return -ENAMETOOLONG;
		if ((unlink(file) == -1 && errno != ENOENT) ||
		    (unlink(lock) == -1 && errno != ENOENT))
			return -errno;
	}
	return 0;
}

int
shm_prepare(const char *dir, unsigned parts)
{
	char file[PATH_MAX], lock[PATH_MAX], msg[PATH_MAX];
	struct group *gr;
	gid_t gid = 0;
	int have_gid = 0, rc;
	unsigned i;
	struct stat st;

	if (!shm_parts_valid(parts))
		return -EINVAL;
	if ((gr = getgrnam(SHM_STATE_GROUP)) != NULL) {
		gid = gr->gr_gid;
		have_gid = 1;
	} else
		log_info("state: no group %s: only root can use the state in %s",
		    SHM_STATE_GROUP, dir);
	/* A lock directory that exists (shared with the pid file) is kept as is. */
	if (stat(dir, &st) == -1) {
		if (errno != ENOENT)
			return -errno;
		if ((rc = shm_make_dir(dir, 0770, gid, have_gid)) != 0)
			return rc;
	}
	if (snprintf(msg, sizeof(msg), "%s/msg", dir) >= (int)sizeof(msg))
		return -ENAMETOOLONG;
	/* Previous state belongs to processes that are gone: start afresh. */
	if ((rc = shm_unlink_envs(dir)) != 0)
		return rc;
	for (i = 0; i < (parts == 1 ? 1 : 1 + parts); i++) {
		if ((rc = shm_env_path(dir, i, file, sizeof(file))) != 0)
			return rc;
		if (snprintf(lock, sizeof(lock), "%s-lock", file) >= (int)sizeof(lock))
			return -ENAMETOOLONG;
		if ((rc = shm_make_file(file, gid, have_gid)) != 0 ||
		    (rc = shm_make_file(lock, gid, have_gid)) != 0)
			return rc;
	}
	if ((rc = shm_hint_create(dir, parts, gid, have_gid)) != 0)
		return rc;
	/*
	 * Only the master makes entries in msg/: one private directory per
	 * process (shm/wmsg.c).  The state group may pass through, no more.
	 */
	if ((rc = shm_make_dir(msg, 0710, gid, have_gid)) != 0)
		return rc;
	return shm_wmsg_clear(dir);
}

int
shm_create_files(const char *dir, unsigned parts)
{
	int rc;

	if ((rc = shm_prepare(dir, parts)) != 0) {
		errno = -rc;
		log_warn("state: cannot prepare the state files in %s", dir);
	}
	return rc;
}

/* Every env's files, however many partitions made them. */
int
shm_set_aside(const char *dir)
{
	static const char *const suffix[] = { "", "-lock" };
	char base[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	unsigned i, j;
	int rc;

	for (i = 0; i < SHM_ENVS_MAX; i++) {
		if ((rc = shm_env_path(dir, i, base, sizeof(base))) != 0)
			return rc;
		for (j = 0; j < 2; j++) {
			if (snprintf(from, sizeof(from), "%s%s", base, suffix[j]) >=
			    (int)sizeof(from) || snprintf(to, sizeof(to), "%s%s.bad",
			    base, suffix[j]) >= (int)sizeof(to))
				return -ENAMETOOLONG;
			if (rename(from, to) == -1 && errno != ENOENT)
				return -errno;
		}
	}
	return 0;
}
