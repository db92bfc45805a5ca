/*
 * Private to shm/: the LMDB handle, transaction helpers, key and record
 * codecs shared by the files of the module.  Nothing outside shm/ includes
 * this (the public interface is shm.h).
 *
 * Records are encoded with proto/cur.h: a version byte, then fields in
 * little-endian order; decoders return host values.  Keys are big-endian so
 * that LMDB's memcmp order is numeric order:
 *   opens    fid(16)            -> the file: flags (delete pending) and all
 *                                  its open records, one value (opens.c)
 *            fid(16) 'S'        -> its named streams' opens (opens.c)
 *            fid(16) 'N' pid(8) -> the name open pid(8) was made by (oname.c)
 *   brlocks  fid(16)            -> every lock and waiter of the file
 *   leases   client guid(16) lease key(16) -> lease record
 *   sessions session id(8)      -> session record
 *   durable  persistent id(8)   -> durable record
 *   workers  pid(4)             -> worker record; "\xff#idnext" -> id counter
 *   notify   fid(16)            -> the workers watching the directory
 *
 * The hot paths (CREATE, CLOSE, READ, WRITE) use mdb_get and mdb_put only:
 * LMDB allocates every cursor opened in a write transaction, so a file's
 * state is one value per database, never a range walked with a cursor.
 * Cursors remain for the walks of status listings, the master's purge and
 * the durable expiry, none of them per request.
 *
 * Beside the env, a small shared file (state.hint, struct shm_hint) holds
 * per-bucket counters of files with byte-range locks and of opens holding an
 * oplock or lease.  They are hints that may only over-count: a writer adds
 * before its transaction commits (undone on abort) and subtracts after it
 * committed, so a zero is always true and lets READ and WRITE skip LMDB.
 */
#ifndef USMBD_SHM_PRIV_H
#define USMBD_SHM_PRIV_H

#include <lmdb.h>
#include <string.h>

#include "proto/cur.h"
#include "shm/shm.h"

#define SHM_FID_KEY_LEN		16
#define SHM_LEASE_KEY_LEN	32
#define SHM_REC_V1		1

/* The shared hint counters (state.hint). */
#define SHM_HINT_MAGIC		0x746e6968u	/* "hint" */
#define SHM_HINT_BUCKETS	4096
enum { SHM_HINT_LOCKED = 0, SHM_HINT_CACHING = 1, SHM_HINT_NOTIFY = 2,
	SHM_HINT_LEASES = 3 };

/*
 * The partitions (shm/part.c): the main env (state.mdb) and N data envs
 * (state-I.mdb), N a power of two; with N = 1 the main env is the data
 * env too and there is no other file.
 */
#define SHM_PARTS_MAX		64
#define SHM_ENVS_MAX		(1 + SHM_PARTS_MAX)

struct shm_hint {
	uint32_t	magic;
	uint32_t	buckets;
	/*
	 * [LOCKED]: files with a brlock record; [CACHING]: opens with an
	 * oplock or lease; [NOTIFY]: directories with a notify record;
	 * [LEASES]: lease records, by the bucket of their client GUID and
	 * key (shm_lease_bucket: a new lease looks in the other data envs
	 * for its key only when this is not zero)
	 */
	uint32_t	count[4][SHM_HINT_BUCKETS];
	/* directories with a notify record, all buckets (notify.c) */
	uint32_t	watched;
	/* data envs, as the master made them (shm_create_files) */
	uint32_t	parts;
	/*
	 * Who holds each env's LMDB writer lock ([0] the main env's, [1 +
	 * I] data env I's): pid << 32 | that process's count of its write
	 * transactions (low 32 bits), set by shm_wbegin once the lock is
	 * taken and cleared (if still ours) when the transaction ends; 0
	 * when none.  The same value seen for a while is one transaction
	 * held that long (the watchdog, worker/statep.c).  Written by every
	 * writer, so a hint for a check, never a proof.
	 */
	uint64_t	writer[SHM_ENVS_MAX];
};

/* Adds delta to a state.hint counter, never below zero (shm/env.c). */
void	shm_hint_counter_add(uint32_t *c, int delta);

/* Counter changes of the open write transaction (see shm_hint_add). */
#define SHM_PEND_MAX		64
struct shm_pend {
	uint16_t	which;
	uint16_t	bucket;
	int32_t		delta;
};

/*
 * A lease released in a write transaction whose claim lives in another
 * env: the claim goes later, in batches (claim.c shm_claim_drain).
 */
#define SHM_UNCLAIM_MAX		256
#define SHM_UNCLAIM_BATCH	64
struct shm_unclaim {
	uint8_t			client_guid[SHM_GUID_LEN];
	uint8_t			lease_key[SHM_GUID_LEN];
	struct shm_file_id	fid;
};

/*
 * One LMDB env of the state.  Every env has the same databases, made in
 * the same order, so the dbi numbers of struct shm serve them all; what
 * a transaction touches is chosen by the env it begins in.
 */
struct shm_env {
	MDB_env		*env;
	unsigned	 idx;		/* 0: main; 1 + I: data env I */
	MDB_txn		*rtxn;		/* reset read transaction, renewed on use */
	int		 rtxn_live;
	MDB_cursor	*rcur_durable;	/* read-only cursor, renewed (no malloc) */
	int		 size_fd;	/* the data file, flock'd to change the map size */
	uint64_t	 wmark;		/* our value of hint->writer[idx] */
};

struct shm {
	struct shm_env	 e[SHM_ENVS_MAX];
	unsigned	 nenv;		/* 1 + nparts, or 1 when nparts is 1 */
	unsigned	 nparts;	/* data envs: a power of two */
	struct shm_env	*w;		/* the env of the open (or last) write */
	MDB_dbi		 db_opens;
	MDB_dbi		 db_leases;
	MDB_dbi		 db_brlocks;
	MDB_dbi		 db_sessions;
	MDB_dbi		 db_durable;
	MDB_dbi		 db_workers;
	MDB_dbi		 db_notify;	/* watched directories (notify.c) */
	MDB_dbi		 db_trees;	/* counted tree connects (trees.c) */
	uint32_t	 drop_del_uid;	/* shm_open_drop_txn: the token at the drop */
	pid_t		 pid;		/* the process that opened it */
	uint32_t	 euid;		/* its uid at attach: the delete token, read once */
	unsigned	 forkgen;	/* shm_forkgen at attach: detects a fork */
	struct shm_hint	*hint;		/* shared counters, mapped */
	struct shm_pend	 pend[SHM_PEND_MAX];
	unsigned	 npend;
	/* scratch copy of one file's opens value, edited then stored */
	uint8_t		*of_buf;
	size_t		 of_cap;
	/* scratch value of an open's name record (oname.c) */
	uint8_t		 oname_buf[SHM_ONAME_VAL_MAX];
	/* scratch durable record (~5 KiB: not on the event loop's stack) */
	struct shm_durable_rec	 dscratch;
	char		*dir;
	unsigned long	 nwrites;
	uint64_t	 id_next;	/* block of ids reserved for this process */
	uint64_t	 id_end;
	/* scratch for decoding a file's locks; grown, never shrunk */
	struct shm_brlock_rec	*brl_buf;
	unsigned		 brl_cap;
	struct shm_brlock_owner	*wait_buf;
	unsigned		 wait_cap;
	int			 brl_had;	/* brl_load found a record */
	uint32_t		 wgen;		/* write transactions begun */
	/* USMBD_TEST_STOP_IN_WRITE: stop once inside a write (tests) */
	int			 test_stop;
	unsigned		 brl_max_file;	/* locks per file; 0: BRL_MAX */
	/* the writer lock's hold meter (shm.h, shm_hold_stats) */
	uint8_t			 txn_kind;	/* of the open write transaction */
	uint64_t		 txn_locked_ns;	/* when mdb_txn_begin returned */
	struct shm_hold		 hold[SHM_TXN_KINDS];
	/* ... of which in the main env (perfcheck: a CREATE takes none) */
	uint64_t		 main_txns[SHM_TXN_KINDS];
	/*
	 * The lease-key claim (claim.c): the claim env's write transaction
	 * held beside s->w's by a CREATE granting a new lease, and the
	 * claims to drop (leases released, committed, whose claim lives in
	 * another env): unclaim[0..ndone) committed, [ndone..nunclaim) of
	 * the open write transaction.
	 */
	struct shm_env		*claim_env;
	MDB_txn			*claim_txn;
	uint64_t		 claim_locked_ns;
	struct shm_unclaim	 unclaim[SHM_UNCLAIM_MAX];
	unsigned		 nunclaim;
	unsigned		 ndone;
	int			 claim_draining;
	/* tests only: a leased CREATE's call with its locks held, before the commit */
	void			(*test_claim_hook)(struct shm *);
};

/*
 * Which env: a file's opens (and its named streams'), leases, byte-range
 * locks and durable records live in the data env of hash(st_ino) --
 * st_ino alone, since a stream's id keeps its file's ino (worker/state.c
 * state_file_id): a share-mode check with its streams stays one
 * transaction of one env.  Sessions, workers, the id counter and the
 * notify watches live in the main env.
 */
static inline struct shm_env *
shm_env_fid(struct shm *s, const struct shm_file_id *fid)
{
	uint64_t h = fid->ino * 0x9e3779b97f4a7c15ull;

	if (s->nparts == 1)
		return &s->e[0];
	return &s->e[1 + ((unsigned)(h >> 40) & (s->nparts - 1))];
}

static inline struct shm_env *
shm_env_main(struct shm *s)
{
	return &s->e[0];
}

/* The data envs are s->e[shm_data_first(s)] .. s->e[s->nenv - 1]. */
static inline unsigned
shm_data_first(const struct shm *s)
{
	return s->nparts == 1 ? 0 : 1;
}

/* Transactions.  Every error is returned as -errno. */
int	shm_err(int mdb_rc);
int	shm_wbegin(struct shm *, struct shm_env *, MDB_txn **);
/* The same, counted under kind in the hold meter (shm_wbegin: OTHER). */
int	shm_wbegin_kind(struct shm *, struct shm_env *, MDB_txn **,
	    enum shm_txn_kind);
/* One write transaction at a time per process: these end s->w's. */
int	shm_wcommit(struct shm *, MDB_txn *);
void	shm_wabort(struct shm *, MDB_txn *);
/*
 * A second write transaction, in env e, while s->w's is open (claim.c):
 * begun in env index order with the first, so that no two processes
 * wait on each other; marked for the watchdog and timed as OTHER.
 * shm_wend2 commits it (commit) or aborts it.
 */
int	shm_wbegin2(struct shm *, struct shm_env *e, MDB_txn **, uint64_t *locked_ns);
int	shm_wend2(struct shm *, struct shm_env *e, MDB_txn *, uint64_t locked_ns,
	    int commit);
int	shm_rbegin(struct shm *, struct shm_env *, MDB_txn **);
void	shm_rend(struct shm *, MDB_txn *);
/* Grows the env of the last write transaction (s->w), which was full. */
int	shm_grow(struct shm *);
/* Maps what the file holds now (after MDB_MAP_RESIZED); never shrinks. */
int	shm_adopt(struct shm *, struct shm_env *);

/* files.c: the files of the state (the master makes them). */
int	shm_env_path(const char *dir, unsigned idx, char *buf, size_t size);
int	shm_hint_map(struct shm *);
int	shm_prepare(const char *dir, unsigned parts);
/*
 * Ends a write transaction begun with shm_wbegin: commits it when rc is 0,
 * else aborts it and returns rc.  The common tail of every edit.
 */
static inline int
shm_wend(struct shm *s, MDB_txn *txn, int rc)
{
	if (rc != 0) {
		shm_wabort(s, txn);
		return rc;
	}
	return shm_wcommit(s, txn);
}

/*
 * rec.c: one record by key, each call its own transaction, in the main
 * env (sessions, workers, notify watches).
 */
int	shm_rec_put(struct shm *, MDB_dbi, const void *key, size_t klen,
	    const void *val, size_t vlen);
/* Decodes the value found into out; -ENOENT when there is none. */
typedef int (*shm_rec_decode_fn)(const MDB_val *k, const MDB_val *v, void *out);
int	shm_rec_get(struct shm *, MDB_dbi, const void *key, size_t klen,
	    shm_rec_decode_fn, void *out);
/* Deletes, growing a full map once (a release path). */
int	shm_rec_del(struct shm *, MDB_dbi, const void *key, size_t klen);
/*
 * Walks every record of the database in a read transaction; visit returns
 * non-zero to stop.  For listings and the purge, never per request (the
 * cursor is allocated).
 */
typedef int (*shm_rec_visit_fn)(const MDB_val *k, const MDB_val *v, void *arg);
int	shm_rec_walk(struct shm *, struct shm_env *, MDB_dbi, shm_rec_visit_fn,
	    void *arg);
/* The same over every data env in turn (opens, locks: the listings). */
int	shm_rec_walk_data(struct shm *, MDB_dbi, shm_rec_visit_fn, void *arg);

/*
 * For release paths (and the purge): run again after growing a full map,
 * up to SHM_GROW_TRIES times (each growth adds at least 1/8).
 */
#define SHM_GROW_TRIES	8
#define SHM_RETRY_FULL(s, rc, call) do {				\
	int shm_try_;							\
	(rc) = (call);							\
	for (shm_try_ = 0; (rc) == -ENOSPC && shm_try_ < SHM_GROW_TRIES && \
	    shm_grow(s) == 0; shm_try_++)				\
		(rc) = (call);						\
} while (0)

/* Keys. */
static inline void
shm_be64_put(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static inline uint64_t
shm_be64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void
shm_fid_key(uint8_t *k, const struct shm_file_id *fid)
{
	shm_be64_put(k, fid->dev);
	shm_be64_put(k + 8, fid->ino);
}

static inline void
shm_fid_from_key(struct shm_file_id *fid, const uint8_t *k)
{
	fid->dev = shm_be64_get(k);
	fid->ino = shm_be64_get(k + 8);
}

/* Hint bucket of a file (Fibonacci hashing of dev and ino). */
static inline unsigned
shm_hint_bucket(const struct shm_file_id *fid)
{
	uint64_t h = (fid->dev * 0x9e3779b97f4a7c15ull) ^ fid->ino;

	h *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 52) & (SHM_HINT_BUCKETS - 1);
}

/* Is the counter of fid's bucket zero?  (Then nothing of that kind exists.) */
static inline int
shm_hint_zero(const struct shm *s, int which, const struct shm_file_id *fid)
{
	return __atomic_load_n(&s->hint->count[which][shm_hint_bucket(fid)],
	    __ATOMIC_ACQUIRE) == 0;
}

static inline int
shm_hint_zero_bucket(const struct shm *s, int which, unsigned bucket)
{
	return __atomic_load_n(&s->hint->count[which][bucket],
	    __ATOMIC_ACQUIRE) == 0;
}

/* Inside a write transaction: the file gained (>0) or lost (<0) delta. */
void	shm_hint_add(struct shm *, int which, const struct shm_file_id *, int delta);
/* The same for a bucket of another hash (SHM_HINT_LEASES). */
void	shm_hint_add_bucket(struct shm *, int which, unsigned bucket, int delta);

static inline int
shm_guid_zero(const uint8_t *g)
{
	static const uint8_t z[SHM_GUID_LEN];

	return memcmp(g, z, SHM_GUID_LEN) == 0;
}

static inline void
shm_pids_add(struct shm_pids *p, pid_t pid)
{
	if (p == NULL || pid <= 0)
		return;
	for (unsigned i = 0; i < p->n; i++)
		if (p->pid[i] == pid)
			return;
	if (p->n == SHM_PIDS_MAX) {
		p->overflow = 1;
		return;
	}
	p->pid[p->n++] = pid;
}

/* trees.c: the dead pid's tree records, in the purge's main-env txn. */
int	shm_tree_purge_txn(struct shm *, MDB_txn *, pid_t, unsigned *n);

/* Strings in records: u16 length + bytes; decoded NUL-terminated. */
void	shm_wstr(struct wcur *, const char *);
void	shm_rstr(struct cur *, char *dst, size_t size);

/*
 * opens.c: a file's opens value, v4: u8 version, u32 n, u8 ndel, ndel
 * delete-pending links (u64 link, u32 delete token: the uid that made that
 * name delete pending, so that its last close can unlink it with that
 * user's rights), n records.  Delete pending belongs to a name, not to the
 * file (MS-FSA: the Link's delete pending): two hard links are two names.
 */
#define SHM_OFILE_V4		4
#define SHM_OFILE_HDR		6
#define SHM_ODEL_LEN		12
#define SHM_ODEL_MAX		8
/* where a loaded value's records start in s->of_buf: room for the list */
#define SHM_OFILE_REC_OFF	(SHM_OFILE_HDR + SHM_ODEL_MAX * SHM_ODEL_LEN)
#define SHM_OREC_LEN		90

struct shm_odel {
	uint64_t	 link;
	uint32_t	 uid;		/* the delete token; 0 = unknown */
};

struct shm_ofile {
	uint32_t	 n;
	uint32_t	 ndel;
	struct shm_odel	 del[SHM_ODEL_MAX];	/* delete-pending links */
	uint8_t		*rec;		/* n records of SHM_OREC_LEN */
	uint32_t	 ncache0;	/* opens holding an oplock or lease, as loaded */
};

/* Decodes a value in place: of->rec points into p.  0 or -EPROTO. */
/* Offsets in an open record (shm/orec.c). */
#define OR_ACCESS	20
#define OR_SHARE	24
#define OR_OPLOCK	32
#define OR_CLIENT_GUID	54
#define OR_FLAGS	70
#define OR_LINK		82
int	shm_ofile_parse(const uint8_t *p, size_t len, struct shm_ofile *);
uint32_t	shm_ofile_ncaching(const struct shm_ofile *);
void	shm_orec_get(const uint8_t *p, struct shm_open_rec *);
void	shm_orec_put(uint8_t *p, const struct shm_open_rec *);
static inline uint64_t
shm_orec_id(const struct shm_ofile *of, uint32_t i)
{
	return le64_get(of->rec + (size_t)i * SHM_OREC_LEN);
}
/* Read only, in place (valid while txn lives); a missing file is empty. */
int	shm_ofile_view(struct shm *, MDB_txn *, const struct shm_file_id *,
	    struct shm_ofile *);
/* A copy in s->of_buf with room for one more record, to edit and store. */
int	shm_ofile_load(struct shm *, MDB_txn *, const struct shm_file_id *,
	    struct shm_ofile *);
int	shm_ofile_find(const struct shm_ofile *, uint64_t persistent_id);
void	shm_ofile_del(struct shm_ofile *, uint32_t i);
int	shm_ofile_store(struct shm *, MDB_txn *, const struct shm_file_id *,
	    struct shm_ofile *);
/*
 * Removes one open from the loaded file and stores it; its lease goes when
 * no open of the file uses it any more.  SHM_DROP_DOC: a delete-on-close
 * open makes its name delete pending.  *last: no open of the file left;
 * *dp: no open of the closed open's name is left and that name was delete
 * pending (its entry is gone then; s->drop_del_uid has its token).
 * -ENOENT: no such open.
 */
#define SHM_DROP_DOC	0x1
int	shm_open_drop_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    uint64_t persistent_id, unsigned flags, struct shm_open_rec *out,
	    int *last, int *dp);

/*
 * oname.c: an open's name record, beside its file's opens value in the
 * opens database (fidkey: the file's 16-byte key).  put: in the CREATE's
 * transaction; del: with the open (no record: 0); rename: the record of
 * an open made through share takes path (its stream kept).
 */
#define SHM_ONAME_KEY_LEN	(SHM_FID_KEY_LEN + 1 + 8)
int	shm_oname_put_txn(struct shm *, MDB_txn *, const uint8_t *fidkey,
	    uint64_t persistent_id, const char *share, const char *path,
	    const char *stream);
int	shm_oname_del_txn(struct shm *, MDB_txn *, const uint8_t *fidkey,
	    uint64_t persistent_id);
int	shm_oname_rename_txn(struct shm *, MDB_txn *, const uint8_t *fidkey,
	    uint64_t persistent_id, const char *share, const char *path);

/* brlock.c: does the file hold a byte-range lock (waiters do not count)? */
int	shm_brlock_any_txn(struct shm *, MDB_txn *, const struct shm_file_id *);
/* brlock.c: rewrite a file's locks; keep() returns 0 to drop (may edit). */
typedef int (*shm_brl_keep_fn)(struct shm_brlock_rec *, void *arg);
typedef int (*shm_brl_keepw_fn)(struct shm_brlock_owner *, void *arg);
int	shm_brlock_edit_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    shm_brl_keep_fn, shm_brl_keepw_fn, void *arg, unsigned *nremoved,
	    struct shm_pids *wake);
int	shm_brlock_remove_open_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_pids *wake);
int	shm_brlock_repid_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    uint64_t persistent_id, pid_t pid);

/* leases.c: of holds the file's other opens */
int	shm_lease_grant_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const struct shm_ofile *, struct shm_open_rec *new, struct shm_open_grant *);
int	shm_lease_release_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const struct shm_ofile *, const uint8_t *client_guid,
	    const uint8_t *lease_key);
/* The hint bucket of a lease key ([SHM_HINT_LEASES]). */
static inline unsigned
shm_lease_bucket(const uint8_t *client_guid, const uint8_t *lease_key)
{
	uint64_t a, b;

	memcpy(&a, client_guid, 8);
	memcpy(&b, lease_key, 8);
	return (unsigned)(((a ^ (b * 0x9e3779b97f4a7c15ull)) *
	    0x9e3779b97f4a7c15ull) >> 52) & (SHM_HINT_BUCKETS - 1);
}
/*
 * The data env holding the lease of that key (*env), by a read of each
 * in turn (one env: no read at all).  0 or -ENOENT.
 */
int	shm_lease_env(struct shm *, const uint8_t *client_guid,
	    const uint8_t *lease_key, struct shm_env **env);

/*
 * claim.c: MS-SMB2 3.3.5.9.8, one lease key caches one file, across data
 * envs.  A key's claim (the file it caches) lives in the data env of
 * hash(client GUID, lease key); every lease record is created holding
 * that env's writer lock, so a claim is checked exactly there.
 */
static inline struct shm_env *
shm_env_claim(struct shm *s, const uint8_t *client_guid, const uint8_t *lease_key)
{
	uint64_t a, b;

	if (s->nparts == 1)
		return &s->e[0];
	memcpy(&a, client_guid, 8);
	memcpy(&b, lease_key, 8);
	return &s->e[1 + ((unsigned)(((a ^ (b * 0x9e3779b97f4a7c15ull)) *
	    0x9e3779b97f4a7c15ull) >> 40) & (s->nparts - 1))];
}
/*
 * Before a leased CREATE's write transaction: the claim env whose lock
 * it must hold too (a new lease in another env than the file's), or NULL.
 */
struct shm_env *shm_claim_plan(struct shm *, const struct shm_file_id *,
	    const uint8_t *client_guid, const uint8_t *lease_key);
/* Takes c's lock beside s->w's when it comes first (first) or after. */
int	shm_claim_begin(struct shm *, struct shm_env *c, const struct shm_env *w,
	    int first);
/* Commits (commit) or aborts the claim env's transaction, if one is open. */
int	shm_claim_end(struct shm *, int commit);
/*
 * A new lease record for fid, in txn (s->w's): claims the key.  -EINVAL:
 * the key caches another file; -EDEADLK: the claim env's lock is not
 * held (the caller starts again with it).
 */
int	shm_claim_take(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const uint8_t *client_guid, const uint8_t *lease_key);
/* The key's lease record is gone from fid's env (in txn, s->w's). */
void	shm_claim_drop(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const uint8_t *client_guid, const uint8_t *lease_key);
/*
 * The claims of released leases, dropped: one transaction per claim env
 * (after a commit once SHM_UNCLAIM_BATCH are waiting, at the end of a
 * purge or expiry, shm_claim_flush, shm_detach).
 */
void	shm_claim_drain(struct shm *);
/* A claim's value: v1, the file id. 0 or -EPROTO. */
int	shm_claim_decode(const void *val, size_t len, struct shm_file_id *);

/*
 * notify.c: a watched directory's record (v1), its watchers' pids into
 * out (at most SHM_PIDS_MAX, the rest marked overflow).  0 or -EBADMSG.
 */
int	shm_notify_decode(const void *val, size_t len, struct shm_pids *out);

/* durable.c; shm_durable_env: the data env holding the record of id. */
int	shm_durable_env(struct shm *, uint64_t persistent_id, struct shm_env **);
int	shm_durable_put_txn(struct shm *, MDB_txn *, const struct shm_durable_rec *);
int	shm_durable_decode(const void *buf, size_t len, struct shm_durable_rec *);
int	shm_durable_disconnect_txn(struct shm *, MDB_txn *, uint64_t persistent_id,
	    uint64_t now_ms, const uint8_t *lock_seq);
/* One LockSequenceArray entry into id's record, if it has one (0 if not). */
int	shm_durable_lock_seq_txn(struct shm *, MDB_txn *, uint64_t persistent_id,
	    const struct shm_lock_seq *);

/*
 * The values any worker may write, decoded as every reader decodes them
 * (fuzzed: t/fuzz/fuzz_shm*.c).  0, or -EPROTO / -EBADMSG.
 */
int	shm_lease_decode(const void *key, size_t klen, const void *val,
	    size_t vlen, struct shm_lease_rec *);
int	shm_brlock_decode(const void *val, size_t len, unsigned *nl,
	    unsigned *nw);
void	shm_brlock_rec_get(const void *val, unsigned i, struct shm_brlock_rec *);
int	shm_session_decode(const void *key, size_t klen, const void *val,
	    size_t vlen, struct shm_session_rec *);
int	shm_worker_decode(const void *key, size_t klen, const void *val,
	    size_t vlen, struct shm_worker_rec *);
/* A worker's datagram (wmsg.c): exact length; the encoder gives 0 on error. */
int	shm_wmsg_decode(const uint8_t *buf, size_t len, struct shm_wmsg_msg *);
size_t	shm_wmsg_encode(uint8_t *buf, size_t size, const struct shm_wmsg_msg *);

#endif
