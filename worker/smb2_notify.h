/*
 * CHANGE_NOTIFY (MS-SMB2 2.2.35, 2.2.36, 3.3.5.19): worker/smb2_notify.c.
 *
 * One inotify fd per worker, in the event loop.  The first CHANGE_NOTIFY
 * on a directory open starts a watch (inotify watches on the directory,
 * and with WATCH_TREE on its subdirectories up to a cap); changes are
 * queued on the watch from then on, as Windows does, and a request
 * completes at once when some are queued or parks (STATUS_PENDING) until
 * one arrives.  A queue overflow, or changes that do not fit the client's
 * output buffer, answer STATUS_NOTIFY_ENUM_DIR.  CANCEL answers
 * STATUS_CANCELLED and the close of the handle STATUS_NOTIFY_CLEANUP
 * (worker/conn.c).  NOTIFY worker messages of shm/ feed the same queues.
 */
#ifndef USMBD_WORKER_SMB2_NOTIFY_H
#define USMBD_WORKER_SMB2_NOTIFY_H

#include <stdint.h>

#include "proto/ntstatus.h"
#include "shm/shm.h"

struct conn;
struct smb2_req;
struct smb2_rsp;

ntstatus_t	smb2_change_notify_handle(struct smb2_req *, struct smb2_rsp *);
/* A NOTIFY message from another worker (a change it made). */
void		smb2_notify_wmsg(const struct shm_wmsg_msg *);
/* The worker's inotify fd for the event loop (-1: none yet), its handler. */
int		smb2_notify_fd(void);
void		smb2_notify_event(void);
/* A directory handle closed / a connection went away: its watches end. */
void		smb2_notify_open_gone(struct conn *, uint64_t fid_persistent,
		    uint64_t fid_volatile);
void		smb2_notify_conn_gone(struct conn *);
/*
 * The directory (dev, ino) went delete pending (the close of a
 * delete-on-close handle left other handles open): every CHANGE_NOTIFY on
 * it, in this worker and in the others that hold it open, completes with
 * STATUS_DELETE_PENDING, as later ones on the same watch do.
 */
void		smb2_notify_delete_pending(uint64_t dev, uint64_t ino);

/* MS-FSCC 2.4.42 / MS-SMB2 2.2.35 CompletionFilter */
#define FILE_NOTIFY_CHANGE_FILE_NAME	0x00000001u
#define FILE_NOTIFY_CHANGE_DIR_NAME	0x00000002u
#define FILE_NOTIFY_CHANGE_ATTRIBUTES	0x00000004u
#define FILE_NOTIFY_CHANGE_SIZE		0x00000008u
#define FILE_NOTIFY_CHANGE_LAST_WRITE	0x00000010u
#define FILE_NOTIFY_CHANGE_LAST_ACCESS	0x00000020u
#define FILE_NOTIFY_CHANGE_CREATION	0x00000040u
#define FILE_NOTIFY_CHANGE_EA		0x00000080u
#define FILE_NOTIFY_CHANGE_SECURITY	0x00000100u
#define FILE_NOTIFY_CHANGE_STREAM_NAME	0x00000200u
#define FILE_NOTIFY_CHANGE_STREAM_SIZE	0x00000400u
#define FILE_NOTIFY_CHANGE_STREAM_WRITE	0x00000800u
/* FILE_NOTIFY_INFORMATION Action (MS-FSCC 2.7.1) */
#define FILE_ACTION_ADDED		1
#define FILE_ACTION_REMOVED		2
#define FILE_ACTION_MODIFIED		3
#define FILE_ACTION_RENAMED_OLD_NAME	4
#define FILE_ACTION_RENAMED_NEW_NAME	5
#define FILE_ACTION_ADDED_STREAM	6
#define FILE_ACTION_REMOVED_STREAM	7
#define FILE_ACTION_MODIFIED_STREAM	8

/*
 * This worker changed something of the file f (of the share whose root
 * root_fd is) that inotify cannot
 * express (a named stream, an EA, the security descriptor, DOS attributes
 * or times kept in xattrs): the watchers of its directory, here and in the
 * other workers (NOTIFY messages), get action/filter on the file's name,
 * "name:stream" when stream is set (f's stream).  The IN_ATTRIB the
 * change's own xattr writes cause is not reported again.  Nothing is done
 * (one atomic load) while no directory is watched anywhere.
 */
struct file_open;
void		smb2_notify_file_change(int root_fd, const struct file_open *,
		    uint32_t action, uint32_t filter, int stream);

/*
 * The file f (not a directory) was renamed to f->path by this worker:
 * Windows reports it once more, after the names, as FILE_ACTION_MODIFIED
 * with the attribute and creation filters on the new name (w2k3 did, and
 * Samba's notify_rename does the same), but only to a watch that does not
 * see file names: smbtorture's smb2.notify.mask-change (a watch of
 * FILE_NOTIFY_CHANGE_ATTRIBUTES alone) waits for it, and smb2.notify.rec
 * (names, attributes and creation) wants the names alone.
 */
void		smb2_notify_renamed(int root_fd, const struct file_open *f);

#endif
