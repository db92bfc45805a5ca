/*
 * What worker/smb2_notify.c (watches, inotify, other workers' reports)
 * and worker/notify_queue.c (a watch's queue of changes: what goes in,
 * how it is answered) share.  Nothing else includes it.
 */
#ifndef USMBD_WORKER_NOTIFY_PRIV_H
#define USMBD_WORKER_NOTIFY_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct conf_share;
struct conn;
struct smb2_rsp;

#define NOTIFY_QUEUE_BYTES	4096	/* queued changes per handle */

struct notify_watch {
	int		 in_use;
	struct conn	*conn;
	uint64_t	 fid_p, fid_v;
	uint64_t	 dev, ino;	/* the directory (wake key) */
	uint32_t	 filter;
	int		 tree;
	int		 overflow;	/* lost changes: NOTIFY_ENUM_DIR */
	int		 delete_pending; /* the directory itself: DELETE_PENDING */
	/* queued changes: [u32 action][u16 len][name bytes] ... */
	uint8_t		 q[NOTIFY_QUEUE_BYTES];
	size_t		 qlen;
	size_t		 qlast;		/* the last change queued, when qlen > 0 */
	uint32_t	 bufsize;	/* the first request's OutputBufferLength */
	const struct conf_share *share;	/* its veto files are never reported */
	int		 native;	/* names sent as a Mac knows them */
};
/*
 * Queues one change on w (UTF-8 name relative to its directory, '/'
 * between the components of a WATCH_TREE change) unless a filter of the
 * share leaves it out; judge as smb2_dir_notify_visible's.
 */
void		notify_queue(struct notify_watch *, uint32_t action,
		    const char *name, const char *judge);
/*
 * The CHANGE_NOTIFY response (MS-SMB2 2.2.36) of the changes queued on w,
 * which is then empty: STATUS_SUCCESS, or STATUS_NOTIFY_ENUM_DIR when
 * they do not fit the client's buffer (outlen, or the first request's).
 */
ntstatus_t	notify_answer(struct notify_watch *, struct smb2_rsp *,
		    uint32_t outlen);

#endif
