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
 * and closed; such a change breaks the directory's leases unless an
 * operation of this worker caused it.  That is decided exactly, with no
 * time window: the worker's own syscalls queue their events before they
 * return, so the queue is drained before each response of a request that
 * may change names (dirlease_settle): what it holds then for a name the
 * request noted, or that is open here, is the request's; anything read
 * between requests is a local change, but for the one removal of a name
 * this worker noted right before its unlink or rename away.  A local
 * change the client makes after it saw the response is always seen.
 * Changes made through another worker are broken by that worker; its
 * events here break again, which costs nothing (the break is already
 * in progress), but a lease it spared for its parent key is broken too.
 */
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
 * This worker's operation touches path of tree (its events before the
 * next drain are no local change) / is about to unlink it or rename it
 * away (the one IN_DELETE or IN_MOVED_FROM that follows is not).
 */
void	dirlease_note(const struct tree *, const char *path);
void	dirlease_note_gone(const struct tree *, const char *path);
/*
 * Must the queue be drained before the response of a request of this
 * command (one that may change names: 0 while no leased directory is
 * watched)?  dirlease_settle drains it (one read(2)), attributing to the
 * request what it explains and breaking for the rest.
 */
int	dirlease_settles(uint16_t command);
void	dirlease_settle(void);

#endif
