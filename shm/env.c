/*
 * The state environments: LMDB envs in the lock directory, created by the
 * master at start and opened by every child after exec.  It is volatile
 * state (a reboot or a master restart clears it), so they run without
 * syncs.
 */

/*
 * Files, modes, map size, purge.
 *
 * The main env (state.mdb, state.mdb-lock) and, with `state partitions`
 * N > 1, N data envs (state-I.mdb, state-I.mdb-lock; shm_priv.h says
 * what lives where).  Their files are made by the master
 * (shm_create_files, shm/files.c: empty, fresh at every start, files 0660
 * and msg/ 0710 with one 02710 directory per worker (see Confinement),
 * group usmbd-state when it exists; the lock directory itself stays 0755
 * root since it also holds the control socket), which never opens them;
 * the state process makes the databases in them (shm_attach with
 * SHM_INIT) before its hello, and a worker that finds no databases yet
 * waits for them (2 s at most).  Opened by those children after exec
 * with MDB_NOTLS | MDB_WRITEMAP | MDB_NOSYNC, each env mapping `state map
 * size` (default 64M), 126 + 4 x 512 reader slots.  A full map: the
 * change is not made, shm/ returns -ENOSPC, the client gets
 * STATUS_INSUFF_SERVER_RESOURCES and the log "the LMDB map is full";
 * release paths (close, purge, expiry) grow that env's map instead of
 * failing (shm_grow).  When a child dies the state process's
 * shm_purge_worker removes, env by env, each in one transaction, its
 * non-durable opens, locks and sessions, marks its durable opens
 * disconnected (pid 0), wakes the waiters, runs mdb_reader_check and
 * drops its notify watches.  Durable opens past their timeout are removed
 * with their locks by the state process (every 5 s, each data env).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/log.h"
#include "shm/shm_priv.h"

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

/*
 * Bumped in the child of every fork (pthread_atfork), so a handle can tell
 * it was inherited without a getpid() syscall on every transaction.
 */
static unsigned shm_forkgen;
static pthread_once_t shm_atfork_once = PTHREAD_ONCE_INIT;

static void
shm_atfork_child(void)
{
	shm_forkgen++;
}

static void
shm_atfork_register(void)
{
	(void)pthread_atfork(NULL, NULL, shm_atfork_child);
}

static int
shm_guard(const struct shm *s)
{
	/* An LMDB env must not be used across fork: each process opens its own. */
	if (s->forkgen != shm_forkgen) {
		log_warnx("state: env handle used after fork (opened by %d)", (int)s->pid);
		return -EINVAL;
	}
	return 0;
}

/* Adds delta to a state.hint counter, never below zero. */
void
shm_hint_counter_add(uint32_t *c, int delta)
{
	uint32_t old, nv;

	if (delta > 0) {
		__atomic_fetch_add(c, (uint32_t)delta, __ATOMIC_RELEASE);
		return;
	}
	/* Never below zero, whatever a crashed writer left behind. */
	old = __atomic_load_n(c, __ATOMIC_RELAXED);
	do {
		nv = old > (uint32_t)-delta ? old + (uint32_t)delta : 0;
	} while (!__atomic_compare_exchange_n(c, &old, nv, 0, __ATOMIC_RELEASE,
	    __ATOMIC_RELAXED));
}

static void
shm_hint_apply(struct shm *s, unsigned which, unsigned bucket, int delta)
{
	shm_hint_counter_add(&s->hint->count[which][bucket], delta);
}

/*
 * Counters only over-count: an increase is made now (before the commit
 * makes the state visible) and undone on abort; a decrease waits for the
 * commit.  When the list is full an increase stays (over-count) and a
 * decrease is dropped (over-count): both are safe, only slower.
 */
void
shm_hint_add(struct shm *s, int which, const struct shm_file_id *fid, int delta)
{
	shm_hint_add_bucket(s, which, shm_hint_bucket(fid), delta);
}

void
shm_hint_add_bucket(struct shm *s, int which, unsigned b, int delta)
{
	if (delta == 0)
		return;
	if (delta > 0)
		shm_hint_apply(s, (unsigned)which, b, delta);
	if (s->npend == SHM_PEND_MAX)
		return;
	s->pend[s->npend].which = (uint16_t)which;
	s->pend[s->npend].bucket = (uint16_t)b;
	s->pend[s->npend].delta = delta;
	s->npend++;
}

/* committed: apply the decreases; else undo the increases. */
static void
shm_hint_settle(struct shm *s, int committed)
{
	for (unsigned i = 0; i < s->npend; i++) {
		const struct shm_pend *p = &s->pend[i];

		if (committed ? p->delta < 0 : p->delta > 0)
			shm_hint_apply(s, p->which, p->bucket,
			    committed ? p->delta : -p->delta);
	}
	s->npend = 0;
}

/* We hold e's writer lock now: say so where the watchdog looks. */
static void
shm_writer_mark(struct shm *s, struct shm_env *e)
{
	if (s->hint == NULL)
		return;
	e->wmark = (uint64_t)(uint32_t)s->pid << 32 | ++s->wgen;
	__atomic_store_n(&s->hint->writer[e->idx], e->wmark, __ATOMIC_RELEASE);
}

/* Ours no more: cleared unless the next writer already wrote its own. */
static void
shm_writer_unmark(struct shm *s, struct shm_env *e)
{
	uint64_t mine = e->wmark;

	if (s->hint == NULL || mine == 0)
		return;
	(void)__atomic_compare_exchange_n(&s->hint->writer[e->idx], &mine, 0, 0,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	e->wmark = 0;
}

/* CLOCK_MONOTONIC in ns: the vDSO, no syscall (perfcheck counts them). */
static uint64_t
shm_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
shm_wbegin_kind(struct shm *s, struct shm_env *e, MDB_txn **txn,
    enum shm_txn_kind kind)
{
	uint64_t t0;
	int rc;

	if ((rc = shm_guard(s)) != 0)
		return rc;
	s->npend = 0;
	/* shm_grow grows the env that said it was full: this one */
	s->w = e;
	t0 = shm_clock_ns();
	rc = mdb_txn_begin(e->env, NULL, 0, txn);
	if (rc == MDB_MAP_RESIZED && shm_adopt(s, e) == 0)
		/* Another process grew the map: adopt its size and retry once. */
		rc = mdb_txn_begin(e->env, NULL, 0, txn);
	if (rc == 0) {
		shm_writer_mark(s, e);
		s->txn_kind = (uint8_t)kind;
		s->txn_locked_ns = shm_clock_ns();
		s->hold[kind].wait_ns += s->txn_locked_ns - t0;
	}
	return shm_err(rc);
}

int
shm_wbegin(struct shm *s, struct shm_env *e, MDB_txn **txn)
{
	return shm_wbegin_kind(s, e, txn, SHM_TXN_OTHER);
}

int
shm_wbegin2(struct shm *s, struct shm_env *e, MDB_txn **txn, uint64_t *locked_ns)
{
	uint64_t t0 = shm_clock_ns();
	int rc;

	rc = mdb_txn_begin(e->env, NULL, 0, txn);
	if (rc == MDB_MAP_RESIZED && shm_adopt(s, e) == 0)
		rc = mdb_txn_begin(e->env, NULL, 0, txn);
	if (rc != 0)
		return shm_err(rc);
	shm_writer_mark(s, e);
	*locked_ns = shm_clock_ns();
	s->hold[SHM_TXN_OTHER].wait_ns += *locked_ns - t0;
	return 0;
}

int
shm_wend2(struct shm *s, struct shm_env *e, MDB_txn *txn, uint64_t locked_ns,
    int commit)
{
	int rc = 0;

	if (commit)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	s->hold[SHM_TXN_OTHER].txns++;
	s->hold[SHM_TXN_OTHER].hold_ns += shm_clock_ns() - locked_ns;
	shm_writer_unmark(s, e);
	if (commit && rc == 0)
		s->nwrites++;
	return shm_err(rc);
}

/* The writer lock is released: count the hold. */
static void
shm_hold_end(struct shm *s)
{
	unsigned kind = s->txn_kind < SHM_TXN_KINDS ? s->txn_kind : SHM_TXN_OTHER;
	struct shm_hold *h = &s->hold[kind];

	h->txns++;
	h->hold_ns += shm_clock_ns() - s->txn_locked_ns;
	if (s->w == &s->e[0])
		s->main_txns[kind]++;
}

void
shm_hold_stats(const struct shm *s, struct shm_hold out[SHM_TXN_KINDS])
{
	memcpy(out, s->hold, sizeof(s->hold));
}

void
shm_main_txns(const struct shm *s, uint64_t out[SHM_TXN_KINDS])
{
	memcpy(out, s->main_txns, sizeof(s->main_txns));
}

unsigned
shm_env_count(const struct shm *s)
{
	return s->nenv;
}

int
shm_writer_holder(const struct shm *s, unsigned idx, uint64_t *mark)
{
	if (s->hint == NULL || idx >= s->nenv)
		return -ENOENT;
	*mark = __atomic_load_n(&s->hint->writer[idx], __ATOMIC_ACQUIRE);
	return 0;
}

void
shm_writer_forget(struct shm *s, pid_t pid)
{
	uint64_t v;
	unsigned i;

	if (s->hint == NULL)
		return;
	for (i = 0; i < s->nenv; i++) {
		v = __atomic_load_n(&s->hint->writer[i], __ATOMIC_ACQUIRE);
		if (v != 0 && (pid_t)(v >> 32) == pid)
			(void)__atomic_compare_exchange_n(&s->hint->writer[i],
			    &v, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

/*
 * The one heap allocation left per write transaction is LMDB's own: when a
 * transaction reuses pages freed by earlier ones, mdb_page_alloc() reads a
 * freeDB record into env->me_pghead with mdb_midl_alloc() (and merges a
 * second record with mdb_midl_need(), a realloc), and every commit frees
 * me_pghead again.  Measured with t/unit/shm_figures.c: 1.5 calls per write
 * transaction in a steady open/close churn, at those two call sites only
 * (objdump of liblmdb.so.0 0.9.24).  Avoiding it needs a change to LMDB.
 */
int
shm_wcommit(struct shm *s, MDB_txn *txn)
{
	int rc;

	if (s->test_stop) {
		/* The writer-lock watchdog's test (HACKING.md): once. */
		s->test_stop = 0;
		log_warnx("state: USMBD_TEST_STOP_IN_WRITE: stopping inside a "
		    "write transaction");
		(void)raise(SIGSTOP);
	}
	rc = mdb_txn_commit(txn);
	shm_hold_end(s);
	shm_writer_unmark(s, s->w);
	/* A failed commit has aborted the transaction. */
	shm_hint_settle(s, rc == 0);
	if (rc == 0)
		s->nwrites++;
	/* the claims of the leases this one released: dropped in batches */
	if (rc != 0)
		s->nunclaim = s->ndone;
	s->ndone = s->nunclaim;
	/* never while a claim env's lock is ours: the drain may want it */
	if (s->ndone >= SHM_UNCLAIM_BATCH && !s->claim_draining &&
	    s->claim_txn == NULL)
		shm_claim_drain(s);
	return shm_err(rc);
}

void
shm_wabort(struct shm *s, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	shm_hold_end(s);
	shm_writer_unmark(s, s->w);
	shm_hint_settle(s, 0);
	s->nunclaim = s->ndone;
}

int
shm_rbegin(struct shm *s, struct shm_env *e, MDB_txn **txn)
{
	int rc;

	if ((rc = shm_guard(s)) != 0)
		return rc;
	if (e->rtxn == NULL) {
		rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &e->rtxn);
		if (rc == MDB_MAP_RESIZED && shm_adopt(s, e) == 0)
			rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &e->rtxn);
		if (rc != 0) {
			e->rtxn = NULL;
			return shm_err(rc);
		}
	} else {
		/* Keeps the reader slot: no lock or syscall on the hot path. */
		rc = mdb_txn_renew(e->rtxn);
		if (rc == MDB_MAP_RESIZED && shm_adopt(s, e) == 0)
			rc = mdb_txn_renew(e->rtxn);
		if (rc != 0)
			return shm_err(rc);
	}
	e->rtxn_live = 1;
	*txn = e->rtxn;
	return 0;
}

void
shm_rend(struct shm *s, MDB_txn *txn)
{
	for (unsigned i = 0; txn != NULL && i < s->nenv; i++) {
		struct shm_env *e = &s->e[i];

		if (txn == e->rtxn && e->rtxn_live) {
			mdb_txn_reset(txn);
			e->rtxn_live = 0;
			return;
		}
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
 * The map's size.  With MDB_WRITEMAP, LMDB ftruncate()s the data file to
 * the size a process maps (at mdb_env_open and mdb_env_set_mapsize); a
 * size smaller than the file's would cut pages other processes have
 * mapped, and their next touch of them is SIGBUS.  So every size change,
 * in every process, is made under an exclusive flock of the data file and
 * is never below the file's current size: the file only grows, and a
 * process maps at most what the file holds.
 */
static int
shm_size_lock(int fd, off_t *size)
{
	struct stat st;

	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR)
			return -errno;
	if (fstat(fd, &st) == -1) {
		int e = errno;

		(void)flock(fd, LOCK_UN);
		return -e;
	}
	*size = st.st_size;
	return 0;
}

static void
shm_size_unlock(int fd)
{
	(void)flock(fd, LOCK_UN);
}

/* No transaction of ours may be live while the map changes. */
static void
shm_drop_rtxn(struct shm_env *e)
{
	if (e->rcur_durable != NULL) {
		mdb_cursor_close(e->rcur_durable);
		e->rcur_durable = NULL;
	}
	if (e->rtxn != NULL) {
		mdb_txn_abort(e->rtxn);
		e->rtxn = NULL;
		e->rtxn_live = 0;
	}
}

/* Maps max(size, the file's size, our size) bytes of e, under the lock. */
static int
shm_map_at_least(struct shm_env *e, size_t want, size_t *now)
{
	MDB_envinfo info;
	off_t fsize;
	size_t size;
	int rc;

	if ((rc = shm_size_lock(e->size_fd, &fsize)) != 0)
		return rc;
	if ((rc = mdb_env_info(e->env, &info)) != 0) {
		shm_size_unlock(e->size_fd);
		return shm_err(rc);
	}
	size = info.me_mapsize;
	if ((size_t)fsize > size)
		size = (size_t)fsize;
	if (want > size)
		size = want;
	rc = size != info.me_mapsize ? mdb_env_set_mapsize(e->env, size) : 0;
	shm_size_unlock(e->size_fd);
	if (now != NULL)
		*now = size;
	return shm_err(rc);
}

int
shm_adopt(struct shm *s, struct shm_env *e)
{
	(void)s;
	return shm_map_at_least(e, 0, NULL);
}

/*
 * A full map refuses new state (-ENOSPC), but releasing state must never
 * fail for want of pages (even a delete copies pages in LMDB): the release
 * paths and the purge call this and retry (SHM_RETRY_FULL).  The one place
 * the map grows: by 1/8 (at least 1 MiB) of the larger of the file and our
 * map.  Other processes adopt the new size at their next transaction that
 * needs it (MDB_MAP_RESIZED, shm_adopt).
 */
int
shm_grow(struct shm *s)
{
	struct shm_env *e = s->w != NULL ? s->w : &s->e[0];
	MDB_envinfo info;
	off_t fsize;
	size_t base, add, now;
	int rc;

	shm_drop_rtxn(e);
	if ((rc = mdb_env_info(e->env, &info)) != 0)
		return shm_err(rc);
	if ((rc = shm_size_lock(e->size_fd, &fsize)) != 0)
		return rc;
	shm_size_unlock(e->size_fd);
	base = info.me_mapsize > (size_t)fsize ? info.me_mapsize : (size_t)fsize;
	if (base > info.me_mapsize) {
		/* Another process grew it meanwhile: take its growth first. */
		if ((rc = shm_map_at_least(e, base, &now)) != 0)
			return rc;
		log_info("state: map of env %u grown by another process to %zu KiB",
		    e->idx, now >> 10);
		return 0;
	}
	add = base / 8;
	if (add < (1u << 20))
		add = 1u << 20;
	if ((rc = shm_map_at_least(e, base + add, &now)) != 0)
		return rc;
	log_warnx("state: map of env %u full while releasing state; grew it "
	    "to %zu KiB", e->idx, now >> 10);
	return 0;
}

size_t
shm_map_size(struct shm *s)
{
	MDB_envinfo info;
	size_t sum = 0;

	for (unsigned i = 0; i < s->nenv; i++)
		if (mdb_env_info(s->e[i].env, &info) == 0)
			sum += info.me_mapsize;
	return sum;
}

/*
 * Whether the main database still names every database, as a process
 * opening the env would look them up.  mdb_dbi_open answers from the
 * names this env already opened without reading the file, so a main
 * tree rewritten under us (a compromised worker has write access) goes
 * unseen by our own walks while every new worker finds "no databases":
 * read the names themselves.  0 when all are there, -EIO when one is
 * missing or is not a database record, else a negative errno.
 */
static int
shm_check_names_env(struct shm_env *e)
{
	static const char *const names[] = { "opens", "leases", "brlocks",
	    "sessions", "durable", "workers", "notify" };
	MDB_txn *txn;
	MDB_val k, v;
	size_t i;
	int rc;

	if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn)) != 0)
		return shm_err(rc);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		k.mv_data = (void *)names[i];
		k.mv_size = strlen(names[i]);
		/* dbi 1 is LMDB's main database, the one holding the names */
		rc = mdb_get(txn, 1, &k, &v);
		if (rc == 0 && v.mv_size != 48)	/* sizeof(MDB_db) */
			rc = MDB_CORRUPTED;
		if (rc != 0)
			break;
	}
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND || rc == MDB_CORRUPTED)
		return -EIO;
	return rc == 0 ? 0 : shm_err(rc);
}

int
shm_check_names(struct shm *s)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < s->nenv; i++)
		rc = shm_check_names_env(&s->e[i]);
	return rc;
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

pid_t
shm_self(const struct shm *s)
{
	return s->pid;
}

unsigned long
shm_write_count(const struct shm *s)
{
	return s->nwrites;
}

int
shm_reader_check(struct shm *s)
{
	int dead, sum = 0, rc;

	for (unsigned i = 0; i < s->nenv; i++) {
		dead = 0;
		if ((rc = mdb_reader_check(s->e[i].env, &dead)) != 0)
			return shm_err(rc);
		sum += dead;
	}
	return sum;
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
	if ((rc = shm_wbegin(s, shm_env_main(s), &txn)) != 0)
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
		shm_wabort(s, txn);
	return shm_err(rc);
}

/*
 * The databases of one env, in one order: the dbi numbers are then the
 * same in every env, and struct shm keeps one set.
 */
static int
shm_open_dbs(struct shm *s, struct shm_env *e, int create)
{
	MDB_dbi d[8];
	MDB_dbi *mine[8] = { &s->db_opens, &s->db_leases, &s->db_brlocks,
	    &s->db_sessions, &s->db_durable, &s->db_workers, &s->db_notify,
	    &s->db_trees };
	static const char *const names[8] = { "opens", "leases", "brlocks",
	    "sessions", "durable", "workers", "notify", "trees" };
	MDB_txn *txn;
	unsigned f = create ? MDB_CREATE : 0, i;
	int rc = 0;

	rc = mdb_txn_begin(e->env, NULL, create ? 0 : MDB_RDONLY, &txn);
	if (rc != 0)
		return shm_err(rc);
	for (i = 0; i < 8 && rc == 0; i++)
		rc = mdb_dbi_open(txn, names[i], f, &d[i]);
	if (rc != 0) {
		mdb_txn_abort(txn);
		if (rc == MDB_NOTFOUND)
			log_debug(1, "state: env %u in %s has no databases yet "
			    "(the state process makes them)", e->idx, s->dir);
		return shm_err(rc);
	}
	for (i = 0; i < 8; i++) {
		if (e->idx == 0)
			*mine[i] = d[i];
		else if (*mine[i] != d[i]) {
			mdb_txn_abort(txn);
			log_warnx("state: env %u's databases are not the main "
			    "env's", e->idx);
			return -EPROTO;
		}
	}
	if (create && e->idx == 0) {
		/* Seed ids from the clock so they differ from a previous run's. */
		MDB_val k = { sizeof(shm_id_key), (void *)shm_id_key }, v;
		uint8_t buf[8];

		shm_be64_put(buf, ((uint64_t)time(NULL) << 20) | 1);
		v.mv_size = sizeof(buf);
		v.mv_data = buf;
		/* A restarted state process keeps the counter it finds. */
		rc = mdb_put(txn, s->db_workers, &k, &v, MDB_NOOVERWRITE);
		if (rc == MDB_KEYEXIST)
			rc = 0;
		if (rc != 0) {
			mdb_txn_abort(txn);
			return shm_err(rc);
		}
	}
	return shm_err(mdb_txn_commit(txn));
}

/* Opens env idx of dir and its databases. */
static int
shm_env_attach(struct shm *s, unsigned idx, size_t map_size,
    unsigned max_readers, int create)
{
	struct shm_env *e = &s->e[idx];
	char file[PATH_MAX];
	off_t fsize;
	int rc;

	e->idx = idx;
	if ((rc = shm_env_path(s->dir, idx, file, sizeof(file))) != 0)
		return rc;
	if ((rc = shm_err(mdb_env_create(&e->env))) != 0)
		return rc;
	if ((e->size_fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		rc = -errno;
		log_warn("state: cannot open %s", file);
		return rc;
	}
	/*
	 * Held until mdb_env_open has mapped (and sized) the file: the
	 * larger of the config's size and the file's, never less than what
	 * other processes map (see shm_size_lock).
	 */
	if ((rc = shm_size_lock(e->size_fd, &fsize)) != 0)
		return rc;
	if ((size_t)fsize > map_size)
		map_size = (size_t)fsize;
	if ((rc = shm_err(mdb_env_set_maxdbs(e->env, 16))) != 0 ||
	    (rc = shm_err(mdb_env_set_mapsize(e->env, map_size))) != 0 ||
	    /* Only the creator sizes the reader table; later openers adopt it. */
	    (max_readers > 0 &&
	    (rc = shm_err(mdb_env_set_maxreaders(e->env, max_readers))) != 0)) {
		shm_size_unlock(e->size_fd);
		return rc;
	}
	/*
	 * MDB_WRITEMAP: a commit changes the shared mapping in place, with no
	 * pwrite of the dirty pages and the meta page (two syscalls per write
	 * transaction otherwise) and no malloc'd page copies.
	 */
	rc = mdb_env_open(e->env, file, MDB_NOSUBDIR | MDB_NOSYNC | MDB_NOMETASYNC |
	    MDB_NOTLS | MDB_WRITEMAP, 0660);
	shm_size_unlock(e->size_fd);
	if (rc != 0) {
		log_warnx("state: cannot open %s: %s", file, mdb_strerror(rc));
		return shm_err(rc);
	}
	return shm_open_dbs(s, e, create);
}

int
shm_attach(const char *dir, size_t map_size, unsigned max_readers, int flags,
    struct shm **out)
{
	struct shm *s;
	unsigned i;
	int rc;

	*out = NULL;
	if ((flags & SHM_CREATE) && !(flags & SHM_INIT) &&
	    (rc = shm_prepare(dir, 1u << ((unsigned)flags >> 8 & 7))) != 0) {
		errno = -rc;
		log_warn("state: cannot prepare the state files in %s", dir);
		return rc;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	for (i = 0; i < SHM_ENVS_MAX; i++)
		s->e[i].size_fd = -1;
	(void)pthread_once(&shm_atfork_once, shm_atfork_register);
	s->pid = getpid();
	/* A worker attaches after its drop, so this is its user for good;
	 * asking once keeps credential syscalls off the request path. */
	s->euid = (uint32_t)geteuid();
	s->forkgen = shm_forkgen;
	if ((s->dir = strdup(dir)) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/*
	 * Scratch space sized for the common case, so that no request
	 * allocates: 64 opens of one file, 64 locks and 16 waiters.  Larger
	 * files grow them once.
	 */
	s->of_cap = SHM_OFILE_REC_OFF + 64 * SHM_OREC_LEN;
	s->brl_cap = 64;
	s->wait_cap = 16;
	if ((s->of_buf = malloc(s->of_cap)) == NULL ||
	    (s->brl_buf = calloc(s->brl_cap, sizeof(*s->brl_buf))) == NULL ||
	    (s->wait_buf = calloc(s->wait_cap, sizeof(*s->wait_buf))) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* The hint page says how many data envs the master made. */
	if ((rc = shm_hint_map(s)) != 0)
		goto fail;
	s->nparts = s->hint->parts;
	s->nenv = s->nparts == 1 ? 1 : 1 + s->nparts;
	if (map_size == 0)
		map_size = SHM_MAP_SIZE_DEFAULT;
	for (i = 0; i < s->nenv; i++)
		if ((rc = shm_env_attach(s, i, map_size, max_readers,
		    flags & (SHM_CREATE | SHM_INIT))) != 0)
			goto fail;
	{
		const char *stop = getenv("USMBD_TEST_STOP_IN_WRITE");

		s->test_stop = stop != NULL && *stop != '\0' &&
		    strtoul(stop, NULL, 10) == s->euid && s->euid != 0;
	}
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
	if (s->forkgen == shm_forkgen && s->ndone > 0)
		shm_claim_drain(s);
	for (unsigned i = 0; i < SHM_ENVS_MAX; i++) {
		struct shm_env *e = &s->e[i];

		if (e->env != NULL && s->forkgen == shm_forkgen) {
			if (e->rcur_durable != NULL)
				mdb_cursor_close(e->rcur_durable);
			if (e->rtxn != NULL)
				mdb_txn_abort(e->rtxn);
			mdb_env_close(e->env);
		}
		if (e->size_fd >= 0)
			close(e->size_fd);
	}
	if (s->hint != NULL)
		munmap(s->hint, sizeof(*s->hint));
	free(s->of_buf);
	free(s->brl_buf);
	free(s->wait_buf);
	free(s->dir);
	free(s);
}
