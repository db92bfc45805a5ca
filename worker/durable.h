/*
 * Durable handles v1 and v2 (MS-SMB2 3.3.5.9.6, 3.3.5.9.7, 3.3.5.9.10,
 * 3.3.5.9.12): the CREATE contexts DHnQ, DHnC, DH2Q, DH2C, the disconnect
 * that keeps a durable open (with its lease and locks) in shm/, and the
 * reconnect that reclaims it on a new connection, in this worker or in
 * another one after this one died.
 *
 * A disconnected durable open keeps no fd: a reconnect reopens the file by
 * the path recorded (relative to the share) and verifies (st_dev, st_ino),
 * so it works the same whether the worker that held it lives or not.
 */
#ifndef USMBD_WORKER_DURABLE_H
#define USMBD_WORKER_DURABLE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct conn;
struct open;
struct smb2_req;
struct state_open_req;
struct state_open_grant;

/* Default and maximum reservation of a disconnected handle (as Samba). */
#define DURABLE_TIMEOUT_DEFAULT_MS	60000u
#define DURABLE_TIMEOUT_MAX_MS		300000u

/* state_open_req.durable_seen bits */
#define DURABLE_CTX_DHNQ	0x1
#define DURABLE_CTX_DHNC	0x2
#define DURABLE_CTX_DH2Q	0x4
#define DURABLE_CTX_DH2C	0x8

/*
 * One of the four contexts (name: its 4-byte tag), fed with its data:
 * fills the durable / reconnect fields of r and applies the combination
 * rules (v1 with v2, or DH2Q with DH2C: STATUS_INVALID_PARAMETER).  The v2
 * contexts are ignored below dialect 3.0.
 */
ntstatus_t	durable_parse_ctx(struct smb2_req *, const uint8_t *name,
		    const uint8_t *data, size_t len, struct state_open_req *r);
/* The timeout granted for a request (v1: the default). */
uint32_t	durable_timeout_for(const struct state_open_req *);
/*
 * DHnC / DH2C: reclaims the disconnected durable open r names for this
 * session and reopens its file; *out is a new open (state_in set, lease and
 * oplock as recorded) and g what the CREATE response reports.  Fails with
 * STATUS_OBJECT_NAME_NOT_FOUND when there is no such open for this client
 * (or it cannot be reopened), STATUS_ACCESS_DENIED for another user,
 * STATUS_INVALID_PARAMETER for a leased open asked for by another name.
 */
ntstatus_t	durable_reconnect(struct smb2_req *, const uint8_t *name16,
		    size_t name_len, const struct state_open_req *r,
		    struct open **out, struct state_open_grant *g);
/*
 * The connection is gone (sess NULL), or the session sess ended (LOGOFF,
 * replaced through PreviousSessionId): their durable opens are kept in
 * shm/ as disconnected (fd parked, slot released) instead of being closed,
 * as Windows and Samba do.  Called before the other opens are closed.
 */
struct session;
void		durable_disconnect(struct conn *, const struct session *sess);
/*
 * The same for the durable opens of one tree, which the administrator
 * disconnects (`usmbctl close-share`, `reload --force`): kept as on a
 * network loss, for the client to reclaim on a new tree or connection.
 */
struct tree;
void		durable_disconnect_tree(struct conn *, const struct tree *tree);
/* Once a second: closes parked fds whose durable record is gone. */
/* Releases parked fds whose records are gone; non-zero while any remain. */
int		durable_tick(void);
/*
 * A new open needs the file (a share-mode conflict, or an oplock or lease
 * to break) and the holder is a disconnected durable open: as Windows does,
 * that open is closed, with its locks and lease (a resilient one only when
 * it holds a batch oplock or a lease: worker/resilient.h).  Returns how
 * many.
 */
struct shm_file_id;
struct tree;
/*
 * A purged open with delete-on-close that was the file's last deletes it
 * (path relative to tree's share): *unlinked is set then, and the caller's
 * open of the old file is stale.
 */
unsigned	durable_purge_disconnected(const struct shm_file_id *,
		    const struct tree *, int *unlinked);

/*
 * DH2Q replay detection (MS-SMB2 3.3.5.9.10).  durable_replay_note()
 * remembers a successful CREATE that carried a DH2Q context (its create
 * GUID, the client's GUID, the open and the CreateAction it answered);
 * durable_replay_find() answers a CREATE with SMB2_FLAGS_REPLAY_OPERATION
 * and a DH2Q whose create GUID names such an open on this connection that
 * is still open and replay eligible (no request used the handle since):
 * STATUS_SUCCESS with *out the existing open (nothing about
 * it changes), *action the original CreateAction and g what the response
 * reports; STATUS_ACCESS_DENIED when the replay asks for a lease the open
 * does not hold (another key, or a lease on an oplock open);
 * STATUS_FILE_NOT_AVAILABLE while the create it replays is still pending;
 * STATUS_DUPLICATE_OBJECTID for such a create GUID without the replay flag;
 * STATUS_NOT_FOUND when there is nothing to replay (the create goes on).
 */
void		durable_replay_note(struct smb2_req *, const struct state_open_req *,
		    struct open *, uint32_t action);
ntstatus_t	durable_replay_find(struct smb2_req *, const struct state_open_req *,
		    uint8_t oplock_req, struct open **out, uint32_t *action,
		    struct state_open_grant *g);
/*
 * A DH2Q create did not finish: pending (parked for a break) makes a
 * replay of it meanwhile STATUS_FILE_NOT_AVAILABLE (what Samba answers,
 * smb2.replay.dhv2-pending1*-sane); a failure forgets it.
 */
void		durable_replay_unfinished(struct smb2_req *,
		    const struct state_open_req *, int pending);

#endif
