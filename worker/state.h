/*
 * The worker's handle on the shared state of shm/ (share modes, byte-range
 * locks, oplocks and leases, durable handles, sessions) and on the
 * worker<->worker messages, plus the helpers the file command handlers call
 * at their hook points.  Owned by the SMB2 core.
 *
 * The state env is opened lazily, once per process, after the privilege
 * drop (the worker runs as the user, with the state group), from the
 * config's `lock dir`.  When it cannot be opened every helper here lets the
 * caller proceed with per-process semantics only, and the failure is logged
 * once: a server without cross-process state still serves files.
 *
 * Hook contract for the files handlers:
 *
 *   CREATE   after the object is opened and fstat'ed (file_open dev, ino,
 *            path, stream set) and the struct open allocated with u.file
 *            set, but BEFORE any side effect on an existing file (truncate,
 *            attributes): state_open_enter().  On an error status undo and
 *            return it.  STATUS_PENDING means the request was parked until
 *            an oplock/lease break is acknowledged: undo everything (close
 *            the fd, release the open) and return STATUS_PENDING; dispatch
 *            runs the whole CREATE again when the break completes.
 *            The granted oplock level / lease goes in the response (see
 *            state_open_grant and state_put_create_contexts()).
 *   CLOSE    (and every file_open_close()) state_open_leave() first: it
 *            says whether the file must now be unlinked (last close of a
 *            delete-pending file).
 *   SET_INFO FileDispositionInformation: state_delete_pending_set().
 *   READ     state_io_check(op, off, len, 0) before reading.
 *   WRITE    state_io_check(op, off, len, 1) before writing (also breaks
 *            level II oplocks and read leases of other opens).
 *   SET_INFO FileEndOfFileInformation / FileAllocationInformation:
 *            state_break_read_caching() once the size changed.
 *   SET_INFO FileRenameInformation: state_rename_breaks() first; return
 *            what it returns unless STATUS_SUCCESS.
 */
#ifndef USMBD_WORKER_STATE_H
#define USMBD_WORKER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"
#include "shm/shm.h"

struct conf;
struct conf_share;
struct conn;
struct open;
struct session;
struct smb2_req;
struct smb2_rsp;
struct tree;
struct wcur;

/* SMB2 oplock levels, MS-SMB2 2.2.13 */
#define SMB2_OPLOCK_LEVEL_NONE		0x00
#define SMB2_OPLOCK_LEVEL_II		0x01
#define SMB2_OPLOCK_LEVEL_EXCLUSIVE	0x08
#define SMB2_OPLOCK_LEVEL_BATCH		0x09
#define SMB2_OPLOCK_LEVEL_LEASE		0xFF

/* How long an opener waits for a break acknowledgement, MS-SMB2 3.3.2.1 */
#define STATE_BREAK_TIMEOUT_MS		35000u

/* Remembers the config (lock dir, map size); the env opens on first use. */
void		 state_init(const struct conf *, int stateless);
/*
 * 1 in an IPC$-only worker (worker/user.c user_worker_ipc_only): it never
 * opens the env nor a mailbox; its sessions are announced to the master
 * only, and it refuses disk shares.
 */
int		 state_is_stateless(void);
/* The env, or NULL when unavailable (logged once). */
struct shm	*state_shm(void);
/* This process's message socket, or NULL. */
struct shm_wmsg	*state_wmsg(void);
/* Closes both (worker exit). */
void		 state_close(void);
struct metrics;
/* Copies the env's writer-lock hold meter into m->txn (none: untouched). */
void		 state_metrics_fill(struct metrics *m);

/*
 * The state key of a file: (st_dev, st_ino).  A named stream is a separate
 * object for share modes and locks (as on NTFS), so its key mixes a hash of
 * the stream name into the device half (top bit set: never a real st_dev).
 */
void		 state_file_id(struct shm_file_id *, uint64_t dev, uint64_t ino,
		    const char *stream);

/* What CREATE asks of the state layer. */
struct state_open_req {
	uint32_t	access;		/* granted access mask */
	uint32_t	share_access;
	uint32_t	create_options;
	int		truncate;	/* overwrite or supersede */
	uint8_t		oplock_level;	/* requested SMB2_OPLOCK_LEVEL_* */
	/* RqLs (oplock_level == SMB2_OPLOCK_LEVEL_LEASE) */
	int		lease;
	uint8_t		lease_version;	/* 1 or 2 */
	uint32_t	lease_state;
	uint8_t		lease_key[16];
	uint8_t		parent_lease_key[16];	/* zero unless flagged */
	uint16_t	lease_epoch;	/* v2: the client's epoch */
	/* level2 oplocks = no: never read caching alone (SHM_OPEN_NO_LEVEL2) */
	int		no_level2;
	/* DHnQ (1) / DH2Q (2) */
	int		durable;
	uint32_t	durable_timeout_ms;	/* DH2Q, 0 = default */
	uint8_t		create_guid[16];	/* DH2Q / DH2C */
	/* DHnC (1) / DH2C (2): reclaim a durable open (worker/durable.h) */
	int		reconnect;
	uint64_t	reconnect_persistent;
	uint32_t	durable_seen;		/* DURABLE_CTX_* seen */
};

struct state_open_grant {
	uint8_t		oplock_level;	/* for the CREATE response */
	int		lease;		/* put a lease response context */
	uint8_t		lease_version;
	uint32_t	lease_state;
	uint8_t		lease_key[16];
	uint8_t		parent_lease_key[16];
	uint16_t	lease_epoch;
	int		lease_breaking;	/* SMB2_LEASE_FLAG_BREAK_IN_PROGRESS */
	int		durable;	/* put DHnQ (1) / DH2Q (2) response */
	uint32_t	durable_timeout_ms;
};

/*
 * Records op (kind FILE or DIR, u.file set) in the shared state: share-mode
 * check and insert in one transaction, oplock/lease grant, durable record.
 * Returns STATUS_SUCCESS, STATUS_SHARING_VIOLATION, STATUS_DELETE_PENDING,
 * STATUS_PENDING (parked for a break, see above), or another error.
 */
ntstatus_t	 state_open_enter(struct smb2_req *, struct smb2_rsp *,
		    struct open *, const struct state_open_req *,
		    struct state_open_grant *);
/*
 * Decoders of the CREATE request contexts the state layer serves, fed
 * with the context's data: RqLs (v1: 32 bytes, v2: 52 bytes), DHnQ, DH2Q.
 * They fill the matching fields of req; STATUS_INVALID_PARAMETER when
 * malformed.  A lease is only taken when the dialect is 2.1 or later.
 */
ntstatus_t	 state_parse_lease_ctx(struct smb2_req *, const uint8_t *data,
		    size_t len, struct state_open_req *);
/*
 * Appends the RqLs / DHnQ / DH2Q response contexts for a grant, chained
 * after *prev (the previous context's start, or NULL); see
 * MS-SMB2 2.2.14.2.  Returns 0, or -1 when the buffer is full.
 */
int		 state_put_create_contexts(struct wcur *, uint8_t **prev,
		    const struct state_open_grant *);
/*
 * The share's caching keys (daemon/conf.h) applied to what CREATE asks:
 * oplocks = no, or a file named in veto oplock files, asks for nothing
 * (no lease context in the reply: Samba masks the request the same way);
 * level2 oplocks = no marks the open for the grant and its breaks.
 * Three loads on a share without the keys.
 */
void		 state_open_share_caching(struct state_open_req *,
		    const struct conf_share *, const char *path, int is_dir);
/*
 * Removes op from the shared state (its locks, lease, durable record).
 * *delete_file: in, what the caller would do alone (delete-on-close seen
 * locally); out, 1 when this was the last open of a delete-pending file and
 * the caller must unlink it now, 0 when another open still holds it.
 * Untouched when the open was not recorded.
 */
void		 state_open_leave(struct open *, int *delete_file);
/* The same; *delete_uid (may be NULL) gets the delete token, 0 if none. */
void		 state_open_leave_token(struct open *, int *delete_file,
		    uint32_t *delete_uid);
/*
 * The same; for an open of a named stream *delete_base (may be NULL) says
 * the file itself must now be unlinked: it was delete pending behind this
 * last open of its streams (shm_open_remove_stream).
 */
void		 state_open_leave_ex(struct open *, int *delete_file,
		    uint32_t *delete_uid, int *delete_base);
/*
 * The CREATE's open(2) met a kernel lease (F_SETLEASE) of a process outside
 * usmbd: a local program, knfsd's delegation of an NFS client, another
 * server.  The kernel has told the holder to let go; the CREATE waits
 * (STATUS_PENDING, an interim response) and runs again every second until
 * the open succeeds, or fails with STATUS_SHARING_VIOLATION after
 * STATE_KLEASE_WAIT_MS.  path names the file in the share (for the log).
 */
ntstatus_t	 state_open_klease_wait(struct smb2_req *, struct smb2_rsp *,
		    const char *path);
/*
 * The kernel takes a lease away by itself after /proc/sys/fs/lease-break-time
 * (45 s by default), and an open then succeeds; a holder that takes a new
 * lease each time has its file refused past this, as Samba does (twice its
 * 30 s oplock break timeout).
 */
#define STATE_KLEASE_WAIT_MS		60000u
#define STATE_KLEASE_RETRY_MS		1000u
/*
 * A CREATE that failed after state_open_enter: its record goes, and its
 * FILE_DELETE_ON_CLOSE never took effect.
 */
void		 state_open_withdraw(struct open *);
/*
 * FileDispositionInformation: set or clear delete pending for the name the
 * open was made by (a hard link's other names are not touched); every open
 * of that name sees it, new opens of it get STATUS_DELETE_PENDING.
 */
ntstatus_t	 state_delete_pending_set(struct open *, int on);
/* Is the open's name delete pending? */
int		 state_delete_pending_get(struct open *);
/*
 * The identity of a name (a link) in the shared state: a hash of the
 * share's path and the path below it.
 */
uint64_t	 state_link_id(const struct tree *, const char *path);
/*
 * After a rename of the open's file from path `from` to its f->path: the
 * opens made by the old name (any worker's) now stand for the new one.
 */
void		 state_open_renamed(struct open *, const char *from);
/*
 * READ (write 0) / WRITE (write 1) against other opens' byte-range locks:
 * STATUS_SUCCESS or STATUS_FILE_LOCK_CONFLICT.  A WRITE also breaks level II
 * oplocks and read leases of other opens to none (no wait).
 */
ntstatus_t	 state_io_check(struct open *, uint64_t off, uint64_t len,
		    int write);

/*
 * What a write does to read caching, for the other operations that change
 * the data under a cache: SET_INFO EndOfFile / Allocation (MS-FSA 2.1.5.14)
 * and a byte-range LOCK (MS-FSA 2.1.5.7).  Level II oplocks (the caller's
 * own too) and read leases of other lease keys go to none; no wait.
 */
void		 state_break_read_caching(struct open *);

/*
 * SET_INFO FileRenameInformation, before the rename (MS-FSA 2.1.5.14.11):
 * other lease keys lose handle caching (RH -> R) and the rename waits for
 * their acknowledgement.  STATUS_SUCCESS: go on; STATUS_PENDING: parked,
 * the whole SET_INFO runs again once the break is acknowledged or timed
 * out.
 */
ntstatus_t	 state_rename_breaks(struct smb2_req *, struct smb2_rsp *,
		    struct open *);
/*
 * A rename with ReplaceIfExists onto an existing file (dev, ino), after
 * state_rename_breaks: the target's handle caching is broken first (the
 * rename parks as above), then a target that is still open refuses the
 * rename: STATUS_ACCESS_DENIED (MS-FSA 2.1.5.14.11; smbtorture's
 * smb2.lease.v2_rename_target_overwrite).
 */
/*
 * A rename into the directory (dev, ino) met a sharing violation with
 * its opens: their handle caching (RH directory leases) is broken first
 * and the rename parks until acknowledged (a holder may close its handle;
 * Samba 4.22, smb2.dirlease.rename_dst_parent); the caller checks the
 * share modes again when this returns STATUS_SUCCESS.
 */
ntstatus_t	 state_rename_parent_breaks(struct smb2_req *, struct smb2_rsp *,
		    uint64_t dev, uint64_t ino);
ntstatus_t	 state_rename_target(struct smb2_req *, struct smb2_rsp *,
		    struct open *, uint64_t dev, uint64_t ino);
/*
 * The directory op is renamed: the opens below it give up their handle
 * caching one file at a time, or the rename is refused
 * (STATUS_ACCESS_DENIED); STATUS_PENDING while it waits
 * (worker/state_rename.c).
 */
ntstatus_t	 state_rename_dir_below(struct smb2_req *, struct smb2_rsp *,
		    struct open *);
/*
 * The file (dev, ino) was left delete pending behind other opens (the
 * close of a delete-on-close handle): their handle caching goes (RH -> R),
 * as Windows and Samba break it, without anybody waiting for the
 * acknowledgement (smb2.lease.unlink, initial_delete_tdis/logoff/
 * disconnect).
 */
void		 state_break_handle_caching(uint64_t dev, uint64_t ino);
/*
 * A name inside the directory (dev, ino) was created, deleted, renamed or
 * had its size, times or attributes set: its directory leases break to
 * none, but the lease whose key is parent_key (the changer's open names
 * it as its parent; NULL or zero: none spared).  Nothing waits for the
 * acknowledgements.  worker/dirlease.c decides when.
 */
void		 state_break_dir(uint64_t dev, uint64_t ino,
		    const uint8_t *parent_key);

/*
 * `max connections` (worker/state_tree.c): a tree of a share with the key
 * takes one of its slots, STATUS_SUCCESS or STATUS_INSUFFICIENT_RESOURCES
 * (Samba's) when they are taken; release gives a claimed tree's slot back
 * (called by conn_tree_free; nothing for a tree that claimed none).
 */
struct conf_share;
ntstatus_t	 state_tree_claim(struct conn *, struct tree *,
		    const struct conf_share *);
void		 state_tree_release(struct tree *);

/* Sessions for `usmbctl status` (SESSION_SETUP, LOGOFF, disconnect). */
/*
 * Records sess in the state env; -EEXIST when its id is another worker's
 * session (ids are unique across the server, checked here at insert).
 */
int		 state_session_put(struct conn *, struct session *);
/* Is id a session of another process in the state env? */
int		 state_session_id_taken(uint64_t id);
void		 state_session_del(struct session *);

/* The worker's event loop: the wmsg fd to poll (-1 if none), and its handler. */
int		 state_wmsg_fd(void);
void		 state_wmsg_event(void);

/* Wakes this worker's parked requests of a kind on a file (NULL: all). */
void		 state_wake_local(int kind, const struct shm_file_id *);
/* A break was acknowledged: wake the openers waiting on it (by pid). */
void		 state_break_acked(const struct shm_file_id *, const pid_t *pids,
		    unsigned n);

/*
 * Once a second from the loop while armed: parked deadlines and parked
 * durable fds.  Returns non-zero while something still needs the tick.
 * (Expiry of disconnected durable records is the master's: reap.c.)
 */
int		 state_tick(void);

#endif
