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

#endif
