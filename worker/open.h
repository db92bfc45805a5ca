/*
 * The per-connection table of open handles (files, directories and pipes).
 * Slots are allocated once and recycled through a free list, so an open on
 * the request path does not call malloc once the table has warmed up.
 * The volatile file id indexes the table; the persistent id is unique per
 * server start (the state layer of shm/ records it).
 */

/*
 * ChannelSequence and LockSequence.
 *
 * - ChannelSequence per open (worker/open.h, channel_sequence): the
 *   newest ChannelSequence seen on the handle (set by its CREATE);
 *   WRITE, SET_INFO and IOCTL with an older one fail (worker/dispatch.c,
 *   MS-SMB2 3.3.5.2.10). LockSequence entries are per open too
 *   (lock_seq[], worker/smb2_lock.c), kept in the durable record across
 *   a durable or resilient open's disconnect (worker/durable.c).
 */
#ifndef USMBD_WORKER_OPEN_H
#define USMBD_WORKER_OPEN_H

#include <stdint.h>

struct conn;
struct session;
struct tree;
struct rpc_pipe;
struct file_open;

enum open_kind { OPEN_FREE = 0, OPEN_FILE, OPEN_DIR, OPEN_PIPE };

struct open {
	enum open_kind	 kind;
	uint64_t	 fid_persistent;
	uint64_t	 fid_volatile;
	struct conn	*conn;
	struct session	*sess;
	struct tree	*tree;
	uint32_t	 access;	/* granted access mask */
	/*
	 * Rights granted but not usable: a previous version's write-type
	 * rights (worker/snapshot.h).  Shown in FileAccessInformation as
	 * Windows shows them; every guard judges access alone, and WRITE
	 * answers MEDIA_WRITE_PROTECTED.
	 */
	uint32_t	 access_withheld;
	union {
		struct rpc_pipe	 *pipe;	/* OPEN_PIPE, owned by worker/smb2_pipe.c */
		struct file_open *file;	/* OPEN_FILE / OPEN_DIR, owned by worker/smb2_create.c */
	} u;
	struct open	*next_free;
	/*
	 * Shared state (worker/state.c): set by state_open_enter() once the
	 * open is recorded in shm/, cleared by state_open_leave().
	 */
	int		 state_in;
	uint64_t	 state_dev;	/* struct shm_file_id of the open */
	uint64_t	 state_ino;
	uint8_t		 oplock_level;	/* granted SMB2 oplock level (0xff lease) */
	uint32_t	 lease_state;	/* granted lease state */
	uint8_t		 lease_key[16];
	uint8_t		 lease_version;
	/* the lease's parent key (v2, flagged; zero: none): worker/dirlease.c */
	uint8_t		 parent_lease_key[16];
	/* a leased directory's inotify watch (worker/dirlease.c): slot + 1 */
	uint8_t		 dirlease_watch;
	int		 durable;	/* 0, 1 (v1) or 2 (v2) */
	/* durable or resilient: kept this long after a disconnect */
	uint32_t	 durable_timeout_ms;
	/*
	 * MS-SMB2 Open.IsResilient (FSCTL_LMR_REQUEST_RESILIENCY,
	 * worker/resilient.c): durable is 0 then, the timeout above is the
	 * ResiliencyTimeout.
	 */
	uint8_t		 resilient;
	uint8_t		 create_guid[16];
	/* MS-SMB2 Open.AppInstanceId (worker/smb2_create.c), when set */
	uint8_t		 app_instance_id[16];
	uint8_t		 app_instance;
	/*
	 * MS-SMB2 Open.IsReplayEligible: set by a CREATE with DH2Q
	 * (worker/durable.c), cleared by any request on the handle.
	 */
	uint8_t		 replay_eligible;
	unsigned	 nlocks;	/* byte-range locks it holds (open_locks_charge) */
	uint8_t		 lock_seq[65];	/* LockSequenceArray: seq + 1, 0 = unset */
	/*
	 * MS-SMB2 Open.ChannelSequence (3.3.5.2.10), 3.x only: the newest
	 * ChannelSequence seen on the handle (set by its CREATE, moved on by
	 * newer requests); WRITE, SET_INFO and IOCTL with an older one fail
	 * (worker/dispatch.c).
	 */
	uint16_t	 channel_sequence;
	uint8_t		 channel_sequence_set;	/* its CREATE answered */
	/* Workers whose openers wait for this open's break to be acked. */
	int		 breakers[4];
	unsigned	 nbreakers;
};

/* A fresh slot with new file ids, or NULL when the table is full. */
struct open	*open_alloc(struct conn *, struct session *, struct tree *, enum open_kind);
/* The open for these ids on this connection's session/tree, or NULL. */
struct open	*open_find(struct conn *, uint64_t fid_persistent, uint64_t fid_volatile);

struct smb2_req;
struct cur;
/*
 * Reads a request's 16-byte FileId at the cursor; all-ones means the file
 * id of the previous request of a related compound (MS-SMB2 3.3.5.2.7.2).
 * Returns 0, or an NTSTATUS (INVALID_PARAMETER, FILE_CLOSED) to answer.
 */
uint32_t	 open_fid_decode(const struct smb2_req *, struct cur *,
		    uint64_t *fid_persistent, uint64_t *fid_volatile);
/* Returns the slot to the free list (the owner has released u first). */
void		 open_release(struct open *);
/*
 * Byte-range locks held, per open and per worker (= per user with `max
 * workers per user` 1): 0, or -EDQUOT with a log line naming the user when
 * n more would pass `max locks per open` or `max locks per user`.
 */
int		 open_locks_charge(struct open *, unsigned n);
void		 open_locks_uncharge(struct open *, unsigned n);

/*
 * Closes every open of a tree, of a session, or of the whole connection
 * (tree disconnect, logoff, connection loss): calls the kind's close
 * (smb2_pipe_close_open / file_open_close) and releases the slot.
 */
void		 open_close_tree(struct conn *, struct tree *);
void		 open_close_session(struct conn *, struct session *);
void		 open_close_all(struct conn *);
/*
 * MS-SMB2 3.3.5.9.13: an application that moved to another client (a
 * cluster's failover) opens again with its AppInstanceId; the opens of
 * that id on the same share, name and stream from any other client are
 * closed first, as the server closes an open (3.3.4.17): no break, no
 * answer, their client learns on its next request (FILE_CLOSED).  Only
 * this worker's opens, which are all its user's: no user closes
 * another's.  Returns how many.
 */
struct conf_share;
unsigned	 open_close_app_instance(const uint8_t id[16],
		    const uint8_t client_guid[16], const struct conf_share *,
		    const char *path, const char *stream, const char *by);

/*
 * NetrFileClose of an administrator (MS-SRVS 3.1.4.4, daemon/admreq.c):
 * this worker's file and directory opens whose srvsvc FileId
 * (worker/pipe_srvsvc.h srvsvc_file_id) is id are closed as the server
 * closes an open (MS-SMB2 3.3.4.17): share mode, locks, lease and
 * durable record released, no answer to the client, whose next request
 * on the handle gets STATUS_FILE_CLOSED.  Returns how many.
 */
unsigned	 open_close_file_id(uint32_t id, const char *by);

/* Implemented by the owners of each kind; called by the open_close_*(). */
void		 smb2_pipe_close_open(struct open *);
void		 file_open_close(struct open *);

#endif
