/*
 * Directory leases (MS-SMB2 3.3.5.9.11, issue 16): when a change inside a
 * directory breaks its leases.  worker/dirlease.c.
 *
 * A directory opened with a v2 lease context on a connection told
 * SMB2_GLOBAL_CAP_DIRECTORY_LEASING (`smb3 directory leases`, default
 * yes) holds R or RH (worker/state_open.c).  A change that would make
 * a cached listing wrong -- a name created, deleted or renamed in or
 * out, a child's size, times or attributes set -- breaks every lease of
 * the parent directory to none (shm/leases.c shm_dirlease_breaks),
 * across workers, before the change's response and without waiting for
 * the acknowledgements (Samba 4.22's contend_dirleases).  The lease the
 * changer's open names as its parent lease key is spared.  Changes made
 * by local processes on the server arrive through inotify
 * (dirlease_watch_*).
 */
#ifndef USMBD_WORKER_DIRLEASE_H
#define USMBD_WORKER_DIRLEASE_H

#include <stdint.h>

struct conn;
struct open;
struct tree;

/*
 * The name path (share-relative, '/'-separated) of tree changed, by a
 * client of conn whose open names parent_key (16 bytes; NULL or zero:
 * none) as its parent lease key: its directory's leases break.
 */
void	dirlease_break_parent(const struct conn *, const struct tree *,
	    const char *path, const uint8_t *parent_key);
/* The same for a change through op (its own parent lease key). */
void	dirlease_break_op(const struct open *op, const char *path);

/*
 * Local changes.  While this worker holds a leased directory open, an
 * inotify watch (its own inotify fd, in the event loop) sees names
 * created, deleted, moved, their attributes changed or a file written
 * and closed; such a change breaks the directory's leases unless this
 * worker's SMB traffic explains it: a name that goes away was unlinked
 * or renamed away here just before; another change is of a name open
 * here, or closed or changed here in the last DIRLEASE_RECENT_MS.
 * Changes made through another worker are broken by that worker; its
 * events here break again, which costs nothing (the break is already
 * in progress), but a lease it spared for its parent key is broken too.
 */
#define DIRLEASE_RECENT_MS	2000
/*
 * The inotify fd: made by dirlease_start when the key is on (-1: none),
 * for the event loop; its handler.
 */
struct conf;
int	dirlease_start(const struct conf *);
int	dirlease_fd(void);
void	dirlease_event(void);
/* op was granted a lease on a directory / op ends (either: no-op). */
void	dirlease_watch_open(struct open *op);
void	dirlease_watch_close(struct open *op);
/*
 * This worker's SMB traffic touched path of tree (its events in the next
 * DIRLEASE_RECENT_MS are no local change) / is about to unlink it or
 * rename it away (the one IN_DELETE or IN_MOVED_FROM that follows is not).
 */
void	dirlease_note(const struct tree *, const char *path);
void	dirlease_note_gone(const struct tree *, const char *path);

#endif
