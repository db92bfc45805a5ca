/*
 * The state environment: one LMDB env in the lock directory, created by the
 * master at start and opened by every child after exec.  It is volatile
 * state (a reboot or a master restart clears it), so it runs without syncs.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

#define SHM_FILE		"state.mdb"
#define SHM_ID_BLOCK		1024
static const uint8_t shm_id_key[8] = { 0xff, '#', 'i', 'd', 'n', 'e', 'x', 't' };

int
shm_err(int rc)
{
	static unsigned nfull;

	switch (rc) {
	case 0:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
	case MDB_TXN_FULL:
	case MDB_PAGE_FULL:
		/* Every 100th after the first 10: a flood must not fill the log. */
		if (nfull++ < 10 || nfull % 100 == 0)
			log_warnx("state: the LMDB map is full (%s); the change was "
			    "not made -- raise `state map size`", mdb_strerror(rc));
		return -ENOSPC;
	case MDB_READERS_FULL:
		log_warnx("state: no free LMDB reader slot; raise the reader count");
		return -EUSERS;
	case MDB_KEYEXIST:
		return -EEXIST;
	case MDB_MAP_RESIZED:
		return -EAGAIN;
	case MDB_BAD_VALSIZE:
		return -EINVAL;
	default:
		if (rc > 0)
			return -rc;
		log_warnx("state: LMDB error: %s", mdb_strerror(rc));
		return -EIO;
	}
}

static int
shm_guard(const struct shm *s)
{
	/* An LMDB env must not be used across fork: each process opens its own. */
	if (s->pid != getpid()) {
		log_warnx("state: env handle used after fork (opened by %d)", (int)s->pid);
		return -EINVAL;
	}
	return 0;
}

int
shm_wbegin(struct shm *s, MDB_txn **txn)
{
	int rc;

	if ((rc = shm_guard(s)) != 0)
		return rc;
	rc = mdb_txn_begin(s->env, NULL, 0, txn);
	if (rc == MDB_MAP_RESIZED) {
		/* Another process grew the map: adopt its size and retry once. */
		mdb_env_set_mapsize(s->env, 0);
		rc = mdb_txn_begin(s->env, NULL, 0, txn);
	}
	return shm_err(rc);
}

int
shm_wcommit(struct shm *s, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	if (rc == 0)
		s->nwrites++;
	return shm_err(rc);
}

int
shm_rbegin(struct shm *s, MDB_txn **txn)
{
	int rc;

	if ((rc = shm_guard(s)) != 0)
		return rc;
	if (s->rtxn == NULL) {
		rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->rtxn);
		if (rc == MDB_MAP_RESIZED) {
			mdb_env_set_mapsize(s->env, 0);
			rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->rtxn);
		}
		if (rc != 0) {
			s->rtxn = NULL;
			return shm_err(rc);
		}
	} else {
		/* Keeps the reader slot: no lock or syscall on the hot path. */
		rc = mdb_txn_renew(s->rtxn);
		if (rc == MDB_MAP_RESIZED) {
			mdb_env_set_mapsize(s->env, 0);
			rc = mdb_txn_renew(s->rtxn);
		}
		if (rc != 0)
			return shm_err(rc);
	}
	s->rtxn_live = 1;
	*txn = s->rtxn;
	return 0;
}

void
shm_rend(struct shm *s, MDB_txn *txn)
{
	if (txn != NULL && txn == s->rtxn && s->rtxn_live) {
		mdb_txn_reset(txn);
		s->rtxn_live = 0;
	}
}

void
shm_wstr(struct wcur *w, const char *str)
{
	size_t n = str != NULL ? strnlen(str, UINT16_MAX) : 0;

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, str, n);
}

void
shm_rstr(struct cur *c, char *dst, size_t size)
{
	size_t n = cur_le16(c);
	const uint8_t *v = cur_view(c, n);

	if (v == NULL || n >= size) {
		c->err = 1;
		dst[0] = '\0';
		return;
	}
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/*
 * A full map refuses new state (-ENOSPC), but releasing state must never
 * fail for want of pages (even a delete copies pages in LMDB): the release
 * paths call this and retry once.  Other processes adopt the new size at
 * their next transaction (MDB_MAP_RESIZED).
 */
int
shm_grow(struct shm *s)
{
	MDB_envinfo info;
	size_t add;
	int rc;

	if (s->rtxn != NULL) {
		/* No transaction of ours may be live while the map changes. */
		mdb_txn_abort(s->rtxn);
		s->rtxn = NULL;
		s->rtxn_live = 0;
	}
	if ((rc = mdb_env_info(s->env, &info)) != 0)
		return shm_err(rc);
	add = info.me_mapsize / 8;
	if (add < (1u << 20))
		add = 1u << 20;
	if ((rc = mdb_env_set_mapsize(s->env, info.me_mapsize + add)) != 0)
		return shm_err(rc);
	log_warnx("state: map full while releasing state; grew it to %zu KiB",
	    (info.me_mapsize + add) >> 10);
	return 0;
}

unsigned
shm_readers_for(unsigned workers)
{
	return 126 + 4 * workers;
}

uint64_t
shm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

unsigned long
shm_write_count(const struct shm *s)
{
	return s->nwrites;
}

int
shm_reader_check(struct shm *s)
{
	int dead = 0, rc;

	rc = mdb_reader_check(s->env, &dead);
	if (rc != 0)
		return shm_err(rc);
	return dead;
}

/* Ids are handed out from a block reserved in one write transaction. */
int
shm_id_alloc(struct shm *s, uint64_t *id)
{
	MDB_txn *txn = NULL;
	MDB_val k = { sizeof(shm_id_key), (void *)shm_id_key }, v;
	uint8_t buf[8];
	uint64_t next = 1;
	int rc;

	if (s->id_next < s->id_end) {
		*id = s->id_next++;
		return 0;
	}
	if ((rc = shm_wbegin(s, &txn)) != 0)
		return rc;
	rc = mdb_get(txn, s->db_workers, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		next = shm_be64_get(v.mv_data);
	else if (rc != 0 && rc != MDB_NOTFOUND)
		goto out;
	shm_be64_put(buf, next + SHM_ID_BLOCK);
	v.mv_size = sizeof(buf);
	v.mv_data = buf;
	if ((rc = mdb_put(txn, s->db_workers, &k, &v, 0)) != 0)
		goto out;
	rc = shm_wcommit(s, txn);
	txn = NULL;
	if (rc != 0)
		return rc;
	s->id_next = next;
	s->id_end = next + SHM_ID_BLOCK;
	*id = s->id_next++;
	return 0;
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
	return shm_err(rc);
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

static int
shm_prepare(const char *dir, const char *file)
{
	char lock[PATH_MAX], msg[PATH_MAX];
	struct group *gr;
	gid_t gid = 0;
	int have_gid = 0, rc;
	struct stat st;

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
	if (snprintf(lock, sizeof(lock), "%s-lock", file) >= (int)sizeof(lock) ||
	    snprintf(msg, sizeof(msg), "%s/msg", dir) >= (int)sizeof(msg))
		return -ENAMETOOLONG;
	/* Previous state belongs to processes that are gone: start afresh. */
	if ((unlink(file) == -1 && errno != ENOENT) ||
	    (unlink(lock) == -1 && errno != ENOENT))
		return -errno;
	if ((rc = shm_make_file(file, gid, have_gid)) != 0 ||
	    (rc = shm_make_file(lock, gid, have_gid)) != 0)
		return rc;
	/* setgid so that every worker's socket gets the state group. */
	return shm_make_dir(msg, 02770, gid, have_gid);
}

static int
shm_open_dbs(struct shm *s, int create)
{
	MDB_txn *txn;
	unsigned f = create ? MDB_CREATE : 0;
	int rc;

	rc = mdb_txn_begin(s->env, NULL, create ? 0 : MDB_RDONLY, &txn);
	if (rc != 0)
		return shm_err(rc);
	if ((rc = mdb_dbi_open(txn, "opens", f, &s->db_opens)) != 0 ||
	    (rc = mdb_dbi_open(txn, "leases", f, &s->db_leases)) != 0 ||
	    (rc = mdb_dbi_open(txn, "brlocks", f, &s->db_brlocks)) != 0 ||
	    (rc = mdb_dbi_open(txn, "sessions", f, &s->db_sessions)) != 0 ||
	    (rc = mdb_dbi_open(txn, "durable", f, &s->db_durable)) != 0 ||
	    (rc = mdb_dbi_open(txn, "workers", f, &s->db_workers)) != 0) {
		mdb_txn_abort(txn);
		if (rc == MDB_NOTFOUND)
			log_warnx("state: %s/%s was not created by the master",
			    s->dir, SHM_FILE);
		return shm_err(rc);
	}
	if (create) {
		/* Seed ids from the clock so they differ from a previous run's. */
		MDB_val k = { sizeof(shm_id_key), (void *)shm_id_key }, v;
		uint8_t buf[8];

		shm_be64_put(buf, ((uint64_t)time(NULL) << 20) | 1);
		v.mv_size = sizeof(buf);
		v.mv_data = buf;
		if ((rc = mdb_put(txn, s->db_workers, &k, &v, 0)) != 0) {
			mdb_txn_abort(txn);
			return shm_err(rc);
		}
	}
	return shm_err(mdb_txn_commit(txn));
}

int
shm_attach(const char *dir, size_t map_size, unsigned max_readers, int flags,
    struct shm **out)
{
	char file[PATH_MAX];
	struct shm *s;
	int rc;

	*out = NULL;
	if (snprintf(file, sizeof(file), "%s/%s", dir, SHM_FILE) >= (int)sizeof(file))
		return -ENAMETOOLONG;
	if ((flags & SHM_CREATE) && (rc = shm_prepare(dir, file)) != 0) {
		errno = -rc;
		log_warn("state: cannot prepare %s", file);
		return rc;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->pid = getpid();
	if ((s->dir = strdup(dir)) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	if ((rc = shm_err(mdb_env_create(&s->env))) != 0)
		goto fail;
	if (map_size == 0)
		map_size = SHM_MAP_SIZE_DEFAULT;
	if ((rc = shm_err(mdb_env_set_maxdbs(s->env, 8))) != 0 ||
	    (rc = shm_err(mdb_env_set_mapsize(s->env, map_size))) != 0)
		goto fail;
	/* Only the creator sizes the reader table; later openers adopt it. */
	if (max_readers > 0 &&
	    (rc = shm_err(mdb_env_set_maxreaders(s->env, max_readers))) != 0)
		goto fail;
	rc = mdb_env_open(s->env, file,
	    MDB_NOSUBDIR | MDB_NOSYNC | MDB_NOMETASYNC | MDB_NOTLS, 0660);
	if (rc != 0) {
		log_warnx("state: cannot open %s: %s", file, mdb_strerror(rc));
		rc = shm_err(rc);
		goto fail;
	}
	if ((rc = shm_open_dbs(s, flags & SHM_CREATE)) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	shm_detach(s);
	return rc;
}

void
shm_detach(struct shm *s)
{
	if (s == NULL)
		return;
	if (s->env != NULL && s->pid == getpid()) {
		if (s->rtxn != NULL)
			mdb_txn_abort(s->rtxn);
		mdb_env_close(s->env);
	}
	free(s->brl_buf);
	free(s->wait_buf);
	free(s->dir);
	free(s);
}
