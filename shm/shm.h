/*
 * Shared server state: opens and share modes, byte-range locks, leases and
 * oplocks, sessions, durable handles, workers, and the worker<->worker
 * datagram messages.
 *
 * This header is the clustering seam: the single-host implementation keeps
 * everything in one LMDB environment in the lock directory, but no LMDB type
 * appears here, so another store can sit behind the same functions.
 *
 * Every function returns 0 or -errno.  shm/ knows neither files nor the wire:
 * access masks and share flags are plain numbers (MS-SMB2 2.2.13 values), and
 * the caller maps errors to NTSTATUS at its seam:
 *   -EBUSY    sharing violation (shm_open_insert)
 *   -EIDRM    the name is delete pending (STATUS_DELETE_PENDING)
 *   -EAGAIN   byte-range lock conflict (LOCK_NOT_GRANTED / FILE_LOCK_CONFLICT)
 *   -EINVAL   bad argument, e.g. a lock range that wraps past 2^64
 *   -ENOENT   no such record (e.g. RANGE_NOT_LOCKED, durable not found)
 *   -ENOSPC   the state map is full (logged; nothing is half written)
 *
 * A struct shm belongs to the process that opened it: open it after exec
 * (never use one across fork).  One process uses it from one thread.
 * Callbacks of shm_foreach_*() run inside a read transaction: they must not
 * call other shm functions.
 */
#ifndef USMBD_SHM_SHM_H
#define USMBD_SHM_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct shm;

#define SHM_STATE_GROUP		"usmbd-state"
#define SHM_MAP_SIZE_DEFAULT	(64u << 20)
/*
 * Data envs (`state partitions`): a file's opens, leases, locks and
 * durable records live in one of them, by its inode number; 1 keeps
 * everything in the one env.  A power of two up to 64.
 */
#define SHM_PARTS_DEFAULT	8
int	shm_parts_valid(unsigned parts);

/* shm_attach() flags */
#define SHM_CREATE	0x1	/* tests: (re)create the env, reset all state */
/* with SHM_CREATE: 2^n data envs (default: 1, everything in one env) */
#define SHM_PARTS_LOG2(n)	((unsigned)(n) << 8)
/*
 * The state process: make the databases of files shm_create_files made
 * (or keep those it finds, after a restart); no file is made or reset.
 */
#define SHM_INIT	0x2

/* Readers for a worker count: every process holds one reader slot. */
unsigned	shm_readers_for(unsigned workers);

/*
 * Opens (flags 0) or creates (SHM_CREATE) the state envs in dir.  map_size
 * 0 means the default; each env maps that much; max_readers only matters
 * to the creator.  The envs are dir/state.mdb (+ -lock) and, with more
 * than one partition, dir/state-I.mdb (+ -lock); dir/state.hint holds
 * shared counters that let the READ/WRITE checks skip LMDB and the number
 * of partitions, which every process takes from it; SHM_CREATE makes
 * them all.
 */
int	shm_attach(const char *dir, size_t map_size, unsigned max_readers,
	    int flags, struct shm **out);
void	shm_detach(struct shm *);
/*
 * The master (root): empty state files of the state group in dir (each
 * env's two, for parts data envs, the hint file, msg/), made afresh; it
 * never opens the envs.  0 or -errno.
 */
int	shm_create_files(const char *dir, unsigned parts);
/* Renames every env's files to NAME.bad (kept for a look); 0 or -errno. */
int	shm_set_aside(const char *dir);
/* How many envs this handle opened (1, or 1 + the data envs). */
unsigned shm_env_count(const struct shm *);
/*
 * Env idx's writer lock's holder as its record says: pid << 32 | a count
 * that changes with every transaction, 0 when none (a hint: any writer
 * can write it).  0 or -errno.
 */
int	shm_writer_holder(const struct shm *, unsigned idx, uint64_t *mark);
/* Clears every env's record that names pid (after pid died). */
void	shm_writer_forget(struct shm *, pid_t pid);
/*
 * The size this process maps now, all envs added.  It only grows: every
 * process maps for each env the larger of its config's `state map size`
 * and the file's size, and a map grows in one place (a full map on a
 * release path or the purge).
 */
size_t	shm_map_size(struct shm *);
int	shm_check_names(struct shm *);
/* The pid that attached, without a syscall (lock owners, open records). */
pid_t	shm_self(const struct shm *);
/* Write transactions this handle committed (for the figures). */
unsigned long shm_write_count(const struct shm *);
/*
 * How long this process held the LMDB writer lock, by kind of write
 * transaction (the state layer's ceiling: t/bench/README.md, "The state
 * layer's ceiling").  hold_ns: from mdb_txn_begin's return (the lock is
 * ours) to mdb_txn_commit's (or abort's) return; wait_ns: from asking for
 * the lock to having it, i.e. the queue behind other writers plus
 * mdb_txn_begin's own work, which alone is all of it when nobody else
 * writes.  Read with CLOCK_MONOTONIC through the vDSO: no syscall.
 * CREATE is shm_open_insert_ex (the share-mode check and insert), CLOSE
 * shm_open_remove and shm_open_remove_stream; OTHER everything else.
 */
enum shm_txn_kind { SHM_TXN_CREATE, SHM_TXN_CLOSE, SHM_TXN_OTHER, SHM_TXN_KINDS };
struct shm_hold {
	uint64_t	txns;
	uint64_t	hold_ns;
	uint64_t	wait_ns;
};
void	shm_hold_stats(const struct shm *, struct shm_hold out[SHM_TXN_KINDS]);
/*
 * Of those, the transactions made in the main env (with partitions, a
 * CREATE or CLOSE takes a data env's lock only: `make perfcheck`).
 */
void	shm_main_txns(const struct shm *, uint64_t out[SHM_TXN_KINDS]);
/*
 * Drops the lease-key claims this process has waiting (shm/claim.c; a
 * periodic tick's call: they refuse nobody meanwhile, they take room).
 */
void	shm_claim_flush(struct shm *);
/* Clears reader slots of dead processes; returns how many (or -errno). */
int	shm_reader_check(struct shm *);
/* Unique ids (persistent file ids, session ids); never 0. */
int	shm_id_alloc(struct shm *, uint64_t *id);
/* CLOCK_MONOTONIC milliseconds, the clock of durable timeouts. */
uint64_t shm_now_ms(void);

/* ---- keys ---- */

/* (st_dev, st_ino); stored as 16 bytes big-endian so ranges sort. */
struct shm_file_id {
	uint64_t	dev;
	uint64_t	ino;
};

#define SHM_GUID_LEN	16

/* A set of pids to notify (lock waiters); overflow: notify every worker. */
#define SHM_PIDS_MAX	64
struct shm_pids {
	unsigned	n;
	int		overflow;
	pid_t		pid[SHM_PIDS_MAX];
};

#define SHM_NAME_MAX	256
#define SHM_ADDR_MAX	64
#define SHM_PATH_MAX	4096

/* ---- opens and share modes ---- */

/* Access mask bits used by the share-mode check, MS-SMB2 2.2.13.1.1 */
#define SHM_FILE_READ_DATA	0x00000001
#define SHM_FILE_WRITE_DATA	0x00000002
#define SHM_FILE_APPEND_DATA	0x00000004
#define SHM_FILE_EXECUTE	0x00000020
#define SHM_DELETE		0x00010000
/* ShareAccess, MS-SMB2 2.2.13 */
#define SHM_FILE_SHARE_READ	0x1
#define SHM_FILE_SHARE_WRITE	0x2
#define SHM_FILE_SHARE_DELETE	0x4
/* CreateOptions, MS-SMB2 2.2.13 */
#define SHM_FILE_DELETE_ON_CLOSE 0x00001000
/* Oplock levels, MS-SMB2 2.2.13 */
#define SHM_OPLOCK_NONE		0x00
#define SHM_OPLOCK_II		0x01
#define SHM_OPLOCK_EXCLUSIVE	0x08
#define SHM_OPLOCK_BATCH	0x09
#define SHM_OPLOCK_LEASE	0xff
/* Lease state bits, MS-SMB2 2.2.13.2.8 */
#define SHM_LEASE_R		0x1
#define SHM_LEASE_H		0x2
#define SHM_LEASE_W		0x4

/* shm_open_rec.flags */
#define SHM_OPEN_DURABLE	0x1	/* survives a disconnect for its timeout */
#define SHM_OPEN_DISCONNECTED	0x2	/* durable, waiting for a reconnect */
#define SHM_OPEN_BREAKING	0x4	/* oplock break sent, not yet acked */
/*
 * Opened with the SMB3 POSIX create context: it never holds back the
 * unlink of a delete-pending name (shm_open_remove; Samba 4.22's
 * has_other_nonposix_opens), and keeps working on the unlinked file.
 */
#define SHM_OPEN_POSIX		0x8
/*
 * Its share says `level2 oplocks = no`: it is never granted, nor broken
 * to, read caching without write caching (level II, R, RH): none instead.
 */
#define SHM_OPEN_NO_LEVEL2	0x10

struct shm_open_rec {
	uint64_t	persistent_id;
	pid_t		pid;		/* worker; 0 while disconnected */
	uint64_t	session_id;
	uint32_t	access;
	uint32_t	share_access;
	uint32_t	create_options;
	uint8_t		oplock_level;	/* SHM_OPLOCK_*; LEASE: see lease_* */
	uint8_t		oplock_breaking_to;
	uint32_t	lease_state;	/* requested (insert) / granted */
	uint8_t		lease_key[SHM_GUID_LEN];
	uint8_t		client_guid[SHM_GUID_LEN];
	uint32_t	flags;
	uint64_t	opened;		/* realtime seconds, for status */
	/*
	 * The name the file was opened by (a hash of the absolute path:
	 * worker/state.c state_link_id).  Delete pending belongs to a name:
	 * of two hard links, deleting one never removes the other.
	 */
	uint64_t	link;
	/* Used by an insert that creates the lease; not kept in the open. */
	uint8_t		lease_version;	/* 1 or 2 */
	uint8_t		parent_lease_key[SHM_GUID_LEN];
	uint16_t	lease_epoch;	/* v2: the client's; a new lease gets +1 */
	/*
	 * Insert only: an open of a named stream names its file (the
	 * unnamed stream's id) in stream_base, with has_base set; the file's
	 * share mode and delete pending state then apply to it (below).
	 */
	uint8_t		has_base;
	struct shm_file_id stream_base;
	/*
	 * Insert only: access bits the share-mode check counts besides
	 * access, not kept in the open (an overwrite's truncation is a
	 * write: SHM_FILE_WRITE_DATA, whatever the client asked for).
	 */
	uint32_t	check_access;
	/*
	 * Insert only: the name the open was made by, for the
	 * administrator's listing (shm_open_name_get; NULL name_path: none
	 * recorded): the share, the path below its root ('/'-separated,
	 * "" the root) and the named stream ("" or NULL: none).
	 */
	const char	*name_share;
	const char	*name_path;
	const char	*name_stream;
};

struct shm_open_conflict {
	uint64_t	persistent_id;	/* the existing open in the way */
	pid_t		pid;
	uint64_t	session_id;
	uint32_t	access;
	uint32_t	share_access;
	int		delete_pending;
};

/* What shm_open_insert_ex() granted after the share-mode check. */
struct shm_open_grant {
	uint8_t		oplock_level;
	uint32_t	lease_state;
	uint16_t	lease_epoch;
	int		nopens;		/* opens of the file, this one included */
	uint8_t		lease_version;	/* the lease's, set by its first open */
};

struct shm_durable_rec;

/*
 * Checks new against every open of the file (MS-FSA 2.1.5.1.2 share access)
 * and inserts it in the same write transaction.  0, -EBUSY (conflict filled
 * in when not NULL), -EIDRM (delete pending) or -errno.
 */
int	shm_open_insert(struct shm *, const struct shm_file_id *,
	    const struct shm_open_rec *new, struct shm_open_conflict *conflict_out);
/*
 * The same, and also: reduces the requested oplock / lease to what can be
 * granted next to the other opens, creates or updates the lease record, and
 * when durable is not NULL records the durable handle -- all in the one
 * transaction.  grant may be NULL.
 */
int	shm_open_insert_ex(struct shm *, const struct shm_file_id *,
	    const struct shm_open_rec *new, const struct shm_durable_rec *durable,
	    struct shm_open_grant *grant, struct shm_open_conflict *conflict_out);

/*
 * The share-mode check of a would-be open (access, share) against the
 * file's opens, read only: nothing is inserted, and no name is looked at
 * (delete pending is not checked).  0, -EBUSY (conflict filled in when
 * not NULL) or -errno.
 */
int	shm_open_share_check(struct shm *, const struct shm_file_id *,
	    uint32_t access, uint32_t share,
	    struct shm_open_conflict *conflict_out);

struct shm_close_result {
	int		last_close;	/* no open of the file is left */
	/*
	 * No open of the closed open's name is left, and that name was
	 * delete pending: unlink it (the closer's path is that name).
	 */
	int		delete_file;
	/*
	 * ... the delete token: the uid of the worker that made it delete
	 * pending (SET_INFO disposition or a delete-on-close open's close),
	 * 0 when unknown.  The last closer may lack the rights to unlink.
	 */
	uint32_t	delete_uid;
	/*
	 * shm_open_remove_stream: this was the last open of any stream of a
	 * file whose own opens are closed and which is delete pending: unlink
	 * the file itself (delete_uid is its token).
	 */
	int		delete_base;
	struct shm_pids	wake;		/* lock waiters to send LOCK_RELEASED */
};

/*
 * Removes an open, its byte-range locks, its durable record and its lease
 * when it was the lease's last open, in one write transaction.  An open with
 * FILE_DELETE_ON_CLOSE makes its name delete pending; the close that leaves
 * no open of a delete-pending name but POSIX ones (SHM_OPEN_POSIX) says to
 * unlink it, and the name is no longer delete pending.  res may be NULL.
 */
int	shm_open_remove(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_close_result *res);
/*
 * Named streams (MS-FSA 2.1.5.1.2; Samba's open_streams_for_delete): the
 * opens of a named stream are share-mode records of their own (under the
 * stream's id) and also count for the file they belong to:
 *  - an open of the file asking for DELETE (an unlink, a rename) fails
 *    with -EBUSY while a stream is open with data access and without
 *    FILE_SHARE_DELETE;
 *  - the last close of the file's own opens, delete pending, leaves it
 *    delete pending while streams are open (nothing to unlink yet); its
 *    opens and its streams' opens get -EIDRM, and the last stream close
 *    says to unlink it (delete_base).
 * A stream open inserted with has_base must be removed with this call.
 */
int	shm_open_remove_stream(struct shm *, const struct shm_file_id *fid,
	    const struct shm_file_id *base, uint64_t persistent_id,
	    struct shm_close_result *res);
/*
 * Takes back an open whose CREATE did not complete (it waits for a break
 * and will be inserted again, or it failed): as shm_open_remove (or
 * shm_open_remove_stream, with base), but its FILE_DELETE_ON_CLOSE never
 * took effect, so its name does not become delete pending.
 */
int	shm_open_withdraw(struct shm *, const struct shm_file_id *fid,
	    const struct shm_file_id *base, uint64_t persistent_id);
int	shm_open_get(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_open_rec *out);
/*
 * Makes the name that open persistent_id was opened by delete pending (the
 * caller's uid is the delete token), or no longer so.  A file has at most
 * SHM_ODEL_MAX (8) names delete pending at once: -ENOSPC beyond.
 */
int	shm_open_set_delete_pending(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, int on);
/* *on = 0 or 1: is the name of open persistent_id delete pending? */
int	shm_open_get_delete_pending(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, int *on);
/*
 * A rename: the file's opens (and its named streams' entries in its
 * stream list) that were opened by name `from` are now opened by `to`;
 * the recorded names of those made through share (any case) become path
 * (a stream open's keeps its ":stream"), when share and path are not NULL.
 */
int	shm_open_relink(struct shm *, const struct shm_file_id *, uint64_t from,
	    uint64_t to, const char *share, const char *path);
/*
 * The name an open was made by (srvsvc NetrFileEnum level 3, worker/
 * pipe_srvsvc_enum.c), kept beside the file's opens in its data env,
 * written in the CREATE's transaction and removed with the open (close,
 * withdrawal, purge, durable expiry).  A path longer than
 * SHM_ONAME_PATH_MAX bytes (a stream's ":name" included) keeps its last
 * bytes, cut at a character, and SHM_ONAME_TRUNC; it never fails the
 * open.  Any worker can write these records: decoded with every length
 * checked, strings NUL-terminated.
 */
#define SHM_ONAME_PATH_MAX	1024
#define SHM_ONAME_TRUNC		0x1
struct shm_open_name {
	uint8_t		flags;		/* SHM_ONAME_* */
	char		share[SHM_NAME_MAX];
	char		path[SHM_ONAME_PATH_MAX + 1];
};
/* 0, -ENOENT (no name recorded), -EPROTO (malformed) or -errno. */
int	shm_open_name_get(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_open_name *out);
/* A name record's value as stored (fuzz targets, tests): 0 or -EPROTO. */
int	shm_open_name_decode(const void *val, size_t len,
	    struct shm_open_name *out);
/*
 * Encodes a name record's value into buf (at least SHM_ONAME_VAL_MAX
 * bytes); returns its length.  A share name past SHM_NAME_MAX - 1 bytes
 * is cut, a path as above.
 */
#define SHM_ONAME_VAL_MAX	(6 + (SHM_NAME_MAX - 1) + SHM_ONAME_PATH_MAX)
size_t	shm_open_name_encode(uint8_t *buf, const char *share,
	    const char *path, const char *stream);

/* Number of opens of a file (read only). */
int	shm_open_count(struct shm *, const struct shm_file_id *, int *n);

typedef int (*shm_open_fn)(const struct shm_file_id *, const struct shm_open_rec *,
    void *arg);
int	shm_foreach_open(struct shm *, shm_open_fn, void *arg);

/* ---- oplocks and leases ---- */

struct shm_lease_rec {
	uint8_t		client_guid[SHM_GUID_LEN];
	uint8_t		lease_key[SHM_GUID_LEN];
	uint8_t		parent_key[SHM_GUID_LEN];
	struct shm_file_id fid;
	uint32_t	state;		/* SHM_LEASE_* */
	uint32_t	breaking_to;	/* valid while breaking */
	uint16_t	epoch;
	uint8_t		version;	/* 1 or 2 */
	uint8_t		breaking;
	/*
	 * While breaking: the lowest state the openers waiting on this
	 * break need (<= breaking_to).  When the ack leaves more than that,
	 * the next break follows at once, in steps as Windows does: first
	 * to R, then to none.
	 */
	uint32_t	required;
	/*
	 * While breaking: when the break started (shm_now_ms()); each break
	 * times out on its own (MS-SMB2 3.3.2.1).  0 in a record written
	 * before the field existed: the start is unknown.
	 */
	uint64_t	break_started;
};

/* What a new open asks for, to compute the breaks it causes. */
#define SHM_BREAK_TRUNCATE	0x1	/* overwrite / supersede: break R too */
#define SHM_BREAK_SHARING	0x2	/* it met a sharing violation: break H */
#define SHM_BREAK_BATCH_ONLY	0x4	/* sharing violation, first pass: only
					   batch oplocks break (to level II) */
#define SHM_BREAK_HANDLE_ONLY	0x8	/* rename: H of other lease keys only,
					   oplocks untouched */
#define SHM_BREAK_RESUMED	0x10	/* the opener already waited once */

struct shm_break_req {
	uint32_t	access;
	uint32_t	share_access;
	uint32_t	flags;		/* SHM_BREAK_* */
	uint8_t		lease_key[SHM_GUID_LEN];	/* all zero: no lease */
	uint8_t		client_guid[SHM_GUID_LEN];
};

struct shm_break {
	pid_t		pid;		/* worker holding it; 0 = disconnected */
	int		is_lease;
	uint64_t	persistent_id;	/* oplock: the open */
	uint8_t		lease_key[SHM_GUID_LEN];
	uint8_t		client_guid[SHM_GUID_LEN];
	uint32_t	cur;		/* current level or lease state */
	uint32_t	new_level;	/* level or lease state to break to */
	uint16_t	epoch;		/* lease epoch after the break started */
	int		in_progress;	/* already breaking: wait, don't resend */
	int		must_wait;	/* in progress: the opener waits for it */
	uint64_t	started_ms;	/* shm_now_ms() the break began; 0 unknown */
};

#define SHM_BREAKS_MAX	32
struct shm_breaks {
	unsigned	n;
	int		overflow;
	struct shm_break b[SHM_BREAKS_MAX];
};

/*
 * Which oplocks and leases of other opens of the file a new open must break
 * (MS-FSA 2.1.4.12 / MS-SMB2 3.3.5.9): any other open breaks W (batch and
 * exclusive oplocks to level II), SHM_BREAK_SHARING breaks H (batch to
 * none), SHM_BREAK_TRUNCATE breaks to none; attribute-only opens break
 * nothing.  With mark, the breaks are recorded as in progress (lease epoch
 * bumped) in one write transaction, so a second opener waits for the same
 * break instead of sending another.
 */
int	shm_open_breaks(struct shm *, const struct shm_file_id *,
	    const struct shm_break_req *, int mark, struct shm_breaks *out);
/*
 * A directory rename (MS-FSA 2.1.5.14.11; smbtorture 4.22
 * smb2.lease.rename_dir_openfile): of a file's opens below it, how many
 * hold handle caching (a lease with H, also while H is being broken):
 * *cached, and how many do not (no lease, an oplock, a lease without H):
 * *bare.  Read only.
 */
int	shm_open_handle_caching(struct shm *, const struct shm_file_id *,
	    int *cached, int *bare);
/* Breaks a WRITE by persistent_id causes: level II oplocks and R leases to none. */
int	shm_write_breaks(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, int mark, struct shm_breaks *out);
/*
 * Breaks a change inside the directory fid causes (Samba's
 * contend_dirleases): every lease of the directory's opens to none, but
 * the one whose key is parent_key when given -- the changer's own open
 * names it as its parent lease key (MS-SMB2 3.3.5.9.11; compared by key
 * alone, as Samba does: smbtorture's second connection, another client
 * GUID, naming the key is spared too).
 */
int	shm_dirlease_breaks(struct shm *, const struct shm_file_id *,
	    const uint8_t *parent_key, int mark, struct shm_breaks *out);
int	shm_lease_get(struct shm *, const uint8_t *client_guid,
	    const uint8_t *lease_key, struct shm_lease_rec *out);
/*
 * The same when the caller knows the file the lease caches: one read of
 * that file's env (shm_lease_get may read every data env); -ENOENT when
 * the key caches no lease of fid.
 */
int	shm_lease_get_fid(struct shm *, const struct shm_file_id *fid,
	    const uint8_t *client_guid, const uint8_t *lease_key,
	    struct shm_lease_rec *out);
/*
 * Acknowledges (or, on a timeout, forces with state = breaking_to) a lease
 * break; state must be within breaking_to (-EINVAL otherwise, -ENOENT when
 * no break is in progress).
 */
int	shm_lease_break_ack(struct shm *, const uint8_t *client_guid,
	    const uint8_t *lease_key, uint32_t state);
/*
 * shm_lease_break_ack, and when the acknowledged state is still more than
 * the waiting openers need (shm_lease_rec.required), starts the next break
 * in the same transaction: *next gets it (pid 0, cur = the acknowledged
 * state, new_level, epoch) and *have_next 1.  A next break that needs no
 * ack (R -> none) is settled at once; one that does leaves the lease
 * breaking.
 */
int	shm_lease_break_ack_next(struct shm *, const uint8_t *client_guid,
	    const uint8_t *lease_key, uint32_t state, struct shm_break *next,
	    int *have_next);
/* The same for an oplock break of one open. */
/*
 * The break acknowledgement timer ran out (MS-SMB2 3.3.6, the oplock and
 * lease break acknowledgment timer events): every break still in progress on the
 * file takes effect without an ack; an oplock drops to the level it was
 * breaking to, a lease to none (a late ack then gets STATUS_UNSUCCESSFUL).
 * Returns how many breaks were ended, or -errno.
 */
int	shm_breaks_expire(struct shm *, const struct shm_file_id *);
/*
 * The same for the breaks that started at or before started_by
 * (shm_now_ms() clock) only: each break runs out its own timer, the
 * younger ones stay in progress.  A break whose start is unknown (a record
 * from before the start was kept) counts as old.
 */
int	shm_breaks_expire_before(struct shm *, const struct shm_file_id *,
	    uint64_t started_by);
/*
 * The file a lease caches and the workers with an open sharing it, for an
 * acknowledgement that arrives in another worker (pids: distinct, without
 * disconnected opens).  -ENOENT when there is no such lease.
 */
int	shm_lease_holders(struct shm *, const uint8_t *client_guid,
	    const uint8_t *lease_key, struct shm_file_id *fid,
	    struct shm_pids *pids);
int	shm_oplock_break_ack(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, uint8_t level);

/* ---- byte-range locks ---- */

struct shm_brlock_owner {
	pid_t		pid;
	uint64_t	persistent_id;
};

struct shm_brlock_range {
	uint64_t	offset;
	uint64_t	length;
	int		exclusive;
};

struct shm_brlock_rec {
	struct shm_brlock_owner owner;
	uint64_t	offset;
	uint64_t	length;
	int		exclusive;
	int		posix;		/* SHM_BRL_POSIX */
};

/* shm_brlock_lock() flags */
#define SHM_BRL_EXCLUSIVE	0x1
#define SHM_BRL_WAIT		0x2	/* on conflict, record owner as a waiter */
/*
 * A POSIX handle's locks (SMB3 POSIX extensions, as Samba 4.23's
 * POSIX_LOCK flavour): the owner's own never conflict with each other and
 * are merged and split as fcntl's (a lock over its own ranges takes them
 * over; shm_brlock_unlock_posix frees any part of them and never fails);
 * they never hold up a POSIX handle's I/O (shm_brlock_check with
 * SHM_BRL_POSIX), only a Windows handle's.  Between a POSIX and a Windows
 * lock the Windows rules hold.
 */
#define SHM_BRL_POSIX		0x4

/*
 * Takes one lock (SMB2 semantics: shared locks stack, a shared lock may sit
 * on its own exclusive lock, everything else overlapping conflicts;
 * zero-length ranges conflict only strictly inside another lock).  -EAGAIN
 * on a conflict, -EINVAL when offset + length - 1 wraps.
 */
int	shm_brlock_lock(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, uint64_t offset, uint64_t length,
	    unsigned flags);
/* Locks one file may hold (all opens); past it -EDQUOT.  0: no limit. */
void	shm_brlock_set_max(struct shm *, unsigned per_file);
/*
 * Several ranges, all or none (one SMB2 LOCK request); *failed = index.
 * wake (may be NULL): the waiters to send LOCK_RELEASED, when a POSIX
 * owner's shared lock took over bytes of its own exclusive one.
 */
int	shm_brlock_lock_many(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, const struct shm_brlock_range *,
	    unsigned n, unsigned flags, unsigned *failed,
	    struct shm_pids *wake);
/* Exact range of this open; -ENOENT when none matches.  wake may be NULL. */
int	shm_brlock_unlock(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, uint64_t offset, uint64_t length,
	    struct shm_pids *wake);
/*
 * MS-SMB2 Open.LockSequenceArray entry of a durable or resilient open
 * (bucket index 1..64, value seq + 1), written into the owner's durable
 * record in the same write transaction as the lock or unlock it answers,
 * so the array outlives a worker killed with -9 (its purge keeps the
 * record) at no transaction of its own.  An owner without a durable
 * record keeps nothing, and an unchanged entry writes nothing.
 */
struct shm_lock_seq {
	uint32_t	index;
	uint8_t		value;
};
/* shm_brlock_lock_many, and when it grants, seq (may be NULL) recorded. */
int	shm_brlock_lock_many_seq(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, const struct shm_brlock_range *,
	    unsigned n, unsigned flags, unsigned *failed,
	    struct shm_pids *wake, const struct shm_lock_seq *seq);
/* shm_brlock_unlock (posix: _posix), and when it succeeds, seq recorded. */
int	shm_brlock_unlock_seq(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, uint64_t offset, uint64_t length,
	    int posix, struct shm_pids *wake, const struct shm_lock_seq *seq);
/* A POSIX owner's: any part of its locks goes, 0 even when none was held. */
int	shm_brlock_unlock_posix(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, uint64_t offset, uint64_t length,
	    struct shm_pids *wake);
/*
 * READ (write 0) or WRITE (write 1) against the locks: -EAGAIN when another
 * open's exclusive lock overlaps, or for a write any shared lock (even this
 * open's own, as Windows does).  write | SHM_BRL_POSIX: a POSIX handle's
 * I/O, which POSIX locks let through.  A read-only transaction; a file without any
 * lock (per the shared hint counters) returns without touching LMDB.
 */
int	shm_brlock_check(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *, uint64_t offset, uint64_t length,
	    int write);
/* Drops a waiter record (CANCEL, or the blocked request completed). */
int	shm_brlock_cancel_wait(struct shm *, const struct shm_file_id *,
	    const struct shm_brlock_owner *);
/* All locks of one open (close; shm_open_remove already does this). */
int	shm_brlock_remove_open(struct shm *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_pids *wake);

typedef int (*shm_brlock_fn)(const struct shm_file_id *,
    const struct shm_brlock_rec *, void *arg);
int	shm_foreach_brlock(struct shm *, shm_brlock_fn, void *arg);

/* ---- sessions and workers ---- */

struct shm_session_rec {
	uint64_t	session_id;
	pid_t		pid;
	uid_t		uid;
	char		user[SHM_NAME_MAX];
	char		client_addr[SHM_ADDR_MAX];
	uint16_t	dialect;
	uint8_t		signing;
	uint8_t		encryption;
	uint64_t	since;		/* realtime seconds */
};

/* Writes r; -EEXIST when another process holds r->session_id. */
int	shm_session_put(struct shm *, const struct shm_session_rec *);
int	shm_session_get(struct shm *, uint64_t session_id, struct shm_session_rec *);
int	shm_session_del(struct shm *, uint64_t session_id);
typedef int (*shm_session_fn)(const struct shm_session_rec *, void *arg);
int	shm_foreach_session(struct shm *, shm_session_fn, void *arg);

enum shm_role { SHM_ROLE_GATE = 1, SHM_ROLE_WORKER = 2 };

struct shm_worker_rec {
	pid_t		pid;
	uint8_t		role;		/* enum shm_role */
	uid_t		uid;
	char		user[SHM_NAME_MAX];
	uint32_t	nconn;
	uint64_t	since;
};

int	shm_worker_put(struct shm *, const struct shm_worker_rec *);
int	shm_worker_get(struct shm *, pid_t, struct shm_worker_rec *);
int	shm_worker_del(struct shm *, pid_t);
typedef int (*shm_worker_fn)(const struct shm_worker_rec *, void *arg);
int	shm_foreach_worker(struct shm *, shm_worker_fn, void *arg);

/* ---- tree connects counted for `max connections` (trees.c) ---- */

struct shm_tree_rec {
	char		share[SHM_NAME_MAX];	/* ASCII letters in lower case */
	pid_t		pid;
	uint64_t	tree_key;	/* unique in its worker, never 0 */
	uint64_t	since;		/* realtime seconds */
};

/*
 * Counts share's trees and, when fewer than max, records (pid, key) among
 * them, in one write transaction of the main env; *count (may be NULL)
 * gets the count with it.  0, -EUSERS (max reached), -EEXIST (that key is
 * recorded already), -EINVAL, or another -errno.
 */
int	shm_tree_claim(struct shm *, const char *share, pid_t pid,
	    uint64_t key, uint32_t max, uint32_t *count);
/* Forgets (share, pid, key): 0 or -ENOENT (or another -errno). */
int	shm_tree_release(struct shm *, const char *share, pid_t pid,
	    uint64_t key);
/* How many trees of share are recorded. */
int	shm_tree_count(struct shm *, const char *share, uint32_t *count);
typedef int (*shm_tree_fn)(const struct shm_tree_rec *, void *arg);
int	shm_foreach_tree(struct shm *, shm_tree_fn, void *arg);
/* A record as stored (fuzz targets, tests): 0 or -EPROTO. */
int	shm_tree_decode(const void *key, size_t klen, const void *val,
	    size_t vlen, struct shm_tree_rec *);
/* A share's count as stored (the value under name | 0): 0 or -EPROTO. */
int	shm_tree_counter_decode(const void *val, size_t vlen, uint32_t *n);

/* ---- durable handles ---- */

#define SHM_DURABLE_V2		0x1
#define SHM_DURABLE_DISCONNECTED 0x2
/*
 * A resilient open (MS-SMB2 3.3.5.15.9, FSCTL_LMR_REQUEST_RESILIENCY):
 * kept like a durable one whatever its oplock or lease, reclaimed by DHnC
 * (worker/resilient.c).
 */
#define SHM_DURABLE_RESILIENT	0x4
#define SHM_DURABLE_LOCK_SEQ	64	/* LockSequenceArray buckets 1..64 */

/*
 * The longest a disconnected durable or resilient open is kept, whatever
 * its record says: what a worker grants (300 s; a resilient Timeout is
 * compared in whole seconds, so up to 300,999 ms).  The records are
 * writable by every worker: one a compromised worker forged with a
 * timeout of days is expired as if it said this much.
 */
#define SHM_DURABLE_TIMEOUT_CAP_MS	300999u

struct shm_durable_rec {
	uint64_t	persistent_id;
	struct shm_file_id fid;
	char		path[SHM_PATH_MAX];	/* relative to the share root */
	char		share[SHM_NAME_MAX];
	char		user[SHM_NAME_MAX];
	uint32_t	access;
	uint32_t	share_access;
	uint8_t		oplock_level;
	uint8_t		lease_key[SHM_GUID_LEN];
	uint32_t	lease_state;
	uint8_t		client_guid[SHM_GUID_LEN];
	uint8_t		create_guid[SHM_GUID_LEN];	/* v2 */
	uint32_t	timeout_ms;
	uint64_t	disconnected_at;	/* shm_now_ms() */
	pid_t		pid;			/* 0 while disconnected */
	uint32_t	flags;			/* SHM_DURABLE_* */
	/*
	 * MS-SMB2 Open.LockSequenceArray as it was at the disconnect (seq + 1,
	 * 0 unset; index 0 is bucket 1): a lock replayed after the reconnect
	 * is still known (worker/smb2_lock.c).
	 */
	uint8_t		lock_seq[SHM_DURABLE_LOCK_SEQ];
};

/* Reconnect credentials (DHnC: client GUID; DH2C: create GUID). */
struct shm_durable_claim {
	const char	*user;
	uint8_t		client_guid[SHM_GUID_LEN];
	uint8_t		create_guid[SHM_GUID_LEN];
	int		v2;
	pid_t		pid;		/* the reclaiming worker */
	uint64_t	session_id;
};

/* Records an open as durable (also possible inside shm_open_insert_ex). */
int	shm_durable_put(struct shm *, const struct shm_durable_rec *);
int	shm_durable_get(struct shm *, uint64_t persistent_id, struct shm_durable_rec *);
/*
 * The connection went away: keep the open, locks and lease for the timeout;
 * lock_seq (SHM_DURABLE_LOCK_SEQ bytes, NULL: unchanged) is kept with it.
 */
int	shm_durable_disconnect(struct shm *, uint64_t persistent_id, uint64_t now_ms,
	    const uint8_t *lock_seq);
/*
 * Does the claim name this handle (-ENOENT if not) and is it its user's
 * (-EACCES if not)?  shm_durable_reclaim checks it again under the lock;
 * a worker asks first so that another user learns nothing from reopening
 * the file (worker/durable.c).
 */
int	shm_durable_claim_match(const struct shm_durable_rec *,
	    const struct shm_durable_claim *);
/*
 * A reconnect: the open must be disconnected and not expired, of the same
 * user (else -EACCES), and match the client GUID (v1) or the create GUID (v2); else
 * -ENOENT.  The open, its locks and the record move to claim->pid; out gets
 * what is needed to reopen the file.
 */
int	shm_durable_reclaim(struct shm *, uint64_t persistent_id,
	    const struct shm_durable_claim *, uint64_t now_ms,
	    struct shm_durable_rec *out);
/*
 * Every durable record (durable and resilient opens, connected or not),
 * each data env in its own read transaction: the state process's status
 * answer.  fn gets the record decoded (a malformed one is skipped) and
 * may not call shm/; it returns nonzero to stop.
 */
typedef int (*shm_durable_fn)(const struct shm_durable_rec *, void *arg);
int	shm_foreach_durable(struct shm *, shm_durable_fn, void *arg);
/* Removes expired disconnected durable opens with their locks and leases. */
int	shm_expire_durable(struct shm *, uint64_t now_ms, unsigned *nexpired,
	    struct shm_pids *wake);
/*
 * Ends, as their expiry would, the disconnected durable opens whose
 * record match (called on the record decoded, may not call shm/) accepts:
 * record, open, lease and byte-range locks removed, their waiters in
 * wake.  At most SHM_DURABLE_END_MAX per call (an administrator's
 * NetrFileClose: a FileId names one open, seldom two); a record whose
 * open is connected is left alone.  *nended: how many were ended.
 */
#define SHM_DURABLE_END_MAX	16
int	shm_end_durable(struct shm *, shm_durable_fn match, void *arg,
	    unsigned *nended, struct shm_pids *wake);

/* ---- crash cleanup (master) ---- */

struct shm_purge_result {
	unsigned	opens;		/* non-durable opens removed */
	unsigned	durable;	/* durable opens marked disconnected */
	unsigned	locks;
	unsigned	sessions;
	unsigned	trees;		/* counted tree connects (shm_tree_claim) */
	unsigned	stale_delete;	/* delete-pending files left with no open */
	struct shm_pids	wake;
};

/*
 * After pid died: in one write transaction, removes its non-durable opens
 * (and their leases), its locks and waiter records, its sessions, counted
 * trees and worker record, and marks its durable opens disconnected (keeping their locks and
 * leases); then clears stale reader slots and its message socket.
 */
int	shm_purge_worker(struct shm *, pid_t, struct shm_purge_result *);

/* ---- CHANGE_NOTIFY watchers (notify.c) ---- */

/*
 * pid gains (delta 1) or loses (delta -1) one watch on each directory of
 * fids, in one write transaction (a worker arms a watch on a directory and
 * its WATCH_TREE subdirectories at once).
 */
int	shm_notify_watch(struct shm *, const struct shm_file_id *fids,
	    unsigned n, pid_t pid, int delta);
/* Is any directory watched at all?  One atomic load of the hint file. */
int	shm_notify_any(const struct shm *);
/* The workers watching fid (out->n 0: none; the hint answers most). */
int	shm_notify_watchers(struct shm *, const struct shm_file_id *,
	    struct shm_pids *out);
/* Drops every watch of pid (the master's purge of a dead worker). */
int	shm_notify_purge(struct shm *, pid_t);

/* ---- worker <-> worker messages (unix datagrams named by pid) ---- */

struct shm_wmsg;

enum shm_wmsg_type {
	SHM_WMSG_BREAK = 1,		/* fid, persistent_id or lease, level */
	SHM_WMSG_BREAK_ACK = 2,
	SHM_WMSG_LOCK_RELEASED = 3,	/* fid */
	SHM_WMSG_NOTIFY = 4,		/* fid of the directory, action, filter, name */
	SHM_WMSG_BREAK_WAIT = 5,	/* like BREAK: the sender waits for that
					   break in progress; no notification */
};

#define SHM_WMSG_NAME_MAX	1024
/* NOTIFY action: the directory fid itself went delete pending (no name). */
#define SHM_WMSG_NOTIFY_DELETE_PENDING	0xFFFFFFFFu

struct shm_wmsg_msg {
	uint8_t		type;		/* enum shm_wmsg_type */
	pid_t		from;		/* filled in by the receiver (kernel creds) */
	struct shm_file_id fid;
	uint64_t	persistent_id;
	int		is_lease;
	uint8_t		lease_key[SHM_GUID_LEN];
	uint8_t		client_guid[SHM_GUID_LEN];
	uint32_t	level;		/* break: new level / state; ack: acked */
	uint16_t	epoch;
	uint32_t	action;		/* notify: FILE_ACTION_*; break: the lease
					   state it starts from when the sender
					   knows it (0: the holder's view) */
	uint32_t	filter;		/* notify: FILE_NOTIFY_CHANGE_* */
	char		name[SHM_WMSG_NAME_MAX];	/* notify: UTF-8 */
};

/* Binds dir/msg/<self>; the fd is non-blocking, for the event loop. */
/*
 * Master only (root): makes the private mailbox directory msg/PID of a
 * process about to start as uid, after removing what an earlier process of
 * that pid left; shm_wmsg_remove takes it away when the process is gone;
 * shm_wmsg_clear empties msg/ (a fresh start).  0 or -errno.
 */
int	shm_wmsg_prepare(const char *dir, pid_t pid, uid_t uid);
int	shm_wmsg_remove(const char *dir, pid_t pid);
int	shm_wmsg_clear(const char *dir);
/* Binds msg/SELF/s, in the directory shm_wmsg_prepare made for self. */
int	shm_wmsg_open(const char *dir, pid_t self, struct shm_wmsg **out);
int	shm_wmsg_fd(const struct shm_wmsg *);
/* -ECONNREFUSED / -ENOENT: the peer is gone; -EAGAIN: its queue is full. */
int	shm_wmsg_send(struct shm_wmsg *, pid_t to, const struct shm_wmsg_msg *);
/* -EAGAIN when nothing is queued; -EBADMSG for a malformed datagram. */
int	shm_wmsg_recv(struct shm_wmsg *, struct shm_wmsg_msg *);
/*
 * Sends LOCK_RELEASED for fid to every pid of a wake set (self included: its
 * own blocked requests retry too).  fid NULL sends file id {0, 0}: "retry
 * every blocked lock" (the master's purge spans many files).
 */
int	shm_wmsg_wake(struct shm_wmsg *, const struct shm_pids *,
	    const struct shm_file_id *);
void	shm_wmsg_close(struct shm_wmsg *);

#endif
