/*
 * Windows' delayed update of a file's LastWriteTime (MS-FSA 2.1.5.3 and
 * what Windows Server up to 2016 and Samba 4.17 do; smbtorture's
 * smb2.timestamps.delayed-* check it):
 *
 *   - the first WRITE on an open leaves the write time clients see at its
 *     old value; about 2 s later it becomes the time of that moment, once;
 *     later writes on the open show only when it is closed;
 *   - FLUSH, a set of EndOfFile / AllocationSize, or a set of Basic info
 *     without a write time take the pending update at once;
 *   - a write time a client sets sticks: later writes and sets of
 *     EndOfFile / AllocationSize on that handle do not move it (until a
 *     -2 "thaw"); -1 freezes the current value; a write or a size set
 *     through another open moves it (MS-FSA 2.1.5.14.2 and .4: the rule
 *     is per open); on a file system without user xattrs the handle's
 *     own changes put the value back after they land;
 *   - CLOSE takes what is pending: the close time when the file was
 *     written after the update (or before it was due), else the update's.
 *
 * The kernel moves mtime on every write, so the value clients must see
 * while an open defers it is kept next to the file, in the DOS xattr
 * (vfs_dosinfo wt_*), which every QUERY_INFO, CLOSE and directory listing
 * of every worker reads anyway; the open named there must still be in the
 * shared open table for it to count, so a worker that died leaves nothing
 * that sticks.  When it takes effect is a time written down at the first
 * write, so no timer is needed: readers compare it with the clock.  The
 * WRITE path does I/O for this only on an open's first write.
 */
#ifndef USMBD_WORKER_FILE_WT_H
#define USMBD_WORKER_FILE_WT_H

#include <stdint.h>

struct open;
struct vfs_stat;
struct vfs_dosinfo;
struct fscc_info;

/* How long the first write's update is deferred (Windows: 2 s). */
#define FILE_WT_DELAY_MS	2000

/*
 * The write (and change) time a client sees for a file of stat st with
 * DOS info di (has_dos set), replacing what fi has from the stat.
 */
void	file_wt_apply(const struct vfs_stat *st, const struct vfs_dosinfo *di,
	    struct fscc_info *fi);
/* WRITE, before the data lands; only the open's first write does I/O. */
void	file_wt_write(struct open *);
/*
 * WRITE, after the data landed: puts back the write time a client set on
 * this handle where it could not be published (no user xattrs); nothing
 * otherwise.
 */
void	file_wt_written(struct open *);
/* FLUSH, Basic without a write time. */
void	file_wt_flush(struct open *);
/*
 * EndOfFile / AllocationSize, before the size changes: a pending update
 * lands (as file_wt_flush), a write time set on this handle is kept.
 */
void	file_wt_resize(struct open *);
/*
 * ... after it (changed: it succeeded): a write time set on this handle
 * is put back where it could not be published, one another open set no
 * longer holds.
 */
void	file_wt_resized(struct open *, int changed);
/*
 * A Basic set's LastWriteTime field: 0 none (a pending update is taken),
 * a value (set by the caller already) sticks on this handle, -1 freezes
 * the current write time, -2 thaws.
 */
void	file_wt_set(struct open *, uint64_t write_time);
/* CLOSE before its attributes are read, and every close (idempotent). */
void	file_wt_close(struct open *);

#endif
