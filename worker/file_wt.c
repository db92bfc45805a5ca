/*
 * Windows' delayed write-time update: the rules are in worker/file_wt.h.
 *
 * Per open (struct file_open wt_*), one of:
 *   NONE        not written yet: the first WRITE defers the update
 *   PENDING     the deferred value is published; the update is due at
 *               wt_fire (past it, the open counts as FIRED)
 *   FIRED       the update took effect; wt_dirty: written since
 *   OFF         nothing of ours: the file's mtime is what clients see
 *               (after a flush, a stream or directory, another open
 *               holding the file's write time, no shared state)
 *   STICKY      a client fixed the write time on this handle (wt_sticky);
 *               the first write or size change after it publishes it
 *   STICKY_PUB  ... published: writes and size changes on this handle do
 *               not move it
 *   STICKY_LOCAL ... but nowhere to publish it (a file system without
 *               user xattrs, no shared state): each write or size change
 *               on this handle puts the mtime back once it landed
 *               (file_wt_written)
 * "Published" means the DOS xattr names this open in wt_owner (one open
 * per file at a time).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "proto/fscc.h"
#include "shm/shm.h"
#include "worker/file_open.h"
#include "worker/file_wt.h"
#include "worker/open.h"
#include "worker/state.h"

enum {
	WT_NONE = 0,
	WT_PENDING,
	WT_FIRED,
	WT_OFF,
	WT_STICKY,
	WT_STICKY_PUB,
	WT_STICKY_LOCAL,
};

/* MS-FSCC 2.4.7: the special LastWriteTime values of a Basic set */
#define WT_FREEZE	UINT64_MAX		/* -1 */
#define WT_THAW		(UINT64_MAX - 1)	/* -2 */

static uint64_t
wt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return fscc_time_from_timespec(&ts);
}

/* Is the open that published a write time still open (in any worker)? */
static int
wt_owner_alive(uint64_t dev, uint64_t ino, uint64_t owner)
{
	struct shm *s = state_shm();
	struct shm_file_id fid = { .dev = dev, .ino = ino };
	struct shm_open_rec rec;

	return s != NULL && shm_open_get(s, &fid, owner, &rec) == 0;
}

/*
 * The file's stat and DOS info; a file without the xattr gets the values
 * clients see for it now (file_info_from_stat's defaults), so that
 * writing it back changes nothing else.
 */
static int
wt_load(struct file_open *f, struct vfs_stat *st, struct vfs_dosinfo *di)
{
	const struct vfs_ops *vfs = file_vfs();
	struct fscc_info fi;
	int rc;

	if ((rc = vfs->fstat(f->fd, st)) != 0)
		return rc;
	rc = vfs_dos_get(vfs, f->fd, di);
	if (rc == -ENODATA) {
		file_info_from_stat(st, di, 0, &fi);
		di->attrs = fi.attrs & FILE_ATTRIBUTE_SETTABLE;
		di->create_time = fi.creation;
		rc = 0;
	}
	return rc;
}

/* Sets the file's mtime; without ownership (EPERM) only "now" is allowed. */
static void
wt_set_mtime(struct file_open *f, uint64_t ft)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = fscc_time_to_timespec(ft);
	if (file_vfs()->utimens(f->fd, ts) == -EPERM) {
		ts[1].tv_nsec = UTIME_NOW;
		(void)file_vfs()->utimens(f->fd, ts);
	}
}

/*
 * Publishes (old, fire) as this open's write time.  -EBUSY when another
 * live open holds the file's write time (its value counts, not ours).
 */
static int
wt_publish(struct open *op, struct vfs_dosinfo *di, uint64_t old,
    uint64_t fire)
{
	struct file_open *f = op->u.file;

	if (di->wt_owner != 0 && di->wt_owner != op->fid_persistent &&
	    wt_owner_alive(f->dev, f->ino, di->wt_owner))
		return -EBUSY;
	di->wt_old = old;
	di->wt_fire = fire;
	di->wt_owner = op->fid_persistent;
	return vfs_dos_set(file_vfs(), f->fd, di);
}

/*
 * Ends this open's hold on the file's write time: sets the mtime to ft
 * (0: leaves it) and clears the published value -- only when it is still
 * ours (a write time someone set since wins).
 */
static void
wt_release(struct open *op, uint64_t ft)
{
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;

	if (vfs_dos_get(file_vfs(), f->fd, &di) != 0 ||
	    di.wt_owner != op->fid_persistent)
		return;
	if (ft != 0)
		wt_set_mtime(f, ft);
	di.wt_old = di.wt_fire = di.wt_owner = 0;
	(void)vfs_dos_set(file_vfs(), f->fd, &di);
}

/*
 * The first write or size change on a handle whose write time a client
 * set (WT_STICKY): the value must outlast this handle's changes to the
 * file even where it cannot be published, and there each change puts it
 * back (file_wt_written).  Only another live open's publication wins
 * (-EBUSY).
 */
static void
wt_stick(struct open *op)
{
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	struct vfs_stat st;
	int rc;

	rc = op->state_in ? wt_load(f, &st, &di) : -ENOENT;
	if (rc == 0)
		rc = wt_publish(op, &di, f->wt_sticky, VFS_WT_NEVER);
	f->wt_state = rc == 0 ? WT_STICKY_PUB : rc == -EBUSY ? WT_OFF :
	    WT_STICKY_LOCAL;
}

void
file_wt_apply(const struct vfs_stat *st, const struct vfs_dosinfo *di,
    struct fscc_info *fi)
{
	uint64_t v;

	if (di->wt_owner == 0 ||
	    !wt_owner_alive(st->dev, st->ino, di->wt_owner))
		return;		/* none, or left by a worker that died */
	v = di->wt_fire != VFS_WT_NEVER && wt_now() >= di->wt_fire ?
	    di->wt_fire : di->wt_old;
	if (fi->change == fi->write)
		fi->change = v;
	fi->write = v;
}

void
file_wt_write(struct open *op)
{
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	struct vfs_stat st;
	uint64_t now, old;
	int rc;

	switch (f->wt_state) {
	case WT_FIRED:
		f->wt_dirty = 1;
		return;
	case WT_PENDING:
		/* due: this write comes after the update, close shows it */
		if (wt_now() >= f->wt_fire) {
			f->wt_state = WT_FIRED;
			f->wt_dirty = 1;
		}
		return;
	case WT_NONE:
	case WT_STICKY:
		break;
	default:
		return;
	}
	/* the first write: the one time this costs I/O */
	if (f->stream[0] != '\0' || f->is_dir) {
		f->wt_state = WT_OFF;
		return;
	}
	if (f->wt_state == WT_STICKY) {
		wt_stick(op);
		return;
	}
	rc = op->state_in ? wt_load(f, &st, &di) : -ENOENT;
	if (rc != 0) {
		f->wt_state = WT_OFF;
		return;
	}
	/*
	 * A write time another open fixed holds against that open's writes
	 * only (MS-FSA 2.1.5.14.2, Open.UserSetModificationTime): this
	 * open's write takes the update over, from the value clients saw.
	 */
	old = fscc_time_from_timespec(&st.mtime);
	if (di.wt_owner != 0 && di.wt_owner != op->fid_persistent &&
	    di.wt_fire == VFS_WT_NEVER &&
	    wt_owner_alive(f->dev, f->ino, di.wt_owner)) {
		old = di.wt_old;
		di.wt_owner = 0;
	}
	now = wt_now();
	f->wt_fire = now + (uint64_t)FILE_WT_DELAY_MS * 10000;
	f->wt_dirty = 0;
	f->wt_state = wt_publish(op, &di, old, f->wt_fire) == 0 ?
	    WT_PENDING : WT_OFF;
}

void
file_wt_written(struct open *op)
{
	struct file_open *f = op->u.file;
	struct timespec ts[2];

	if (f->wt_state != WT_STICKY_LOCAL)
		return;
	/* (the set succeeded, so this may set it: no "now" fallback) */
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = fscc_time_to_timespec(f->wt_sticky);
	(void)file_vfs()->utimens(f->fd, ts);
}

void
file_wt_flush(struct open *op)
{
	struct file_open *f = op->u.file;

	if (f == NULL ||
	    (f->wt_state != WT_PENDING && f->wt_state != WT_FIRED))
		return;
	/* MS-FSA: the pending update happens now, and only once */
	f->wt_state = WT_OFF;
	wt_release(op, wt_now());
}

void
file_wt_resize(struct open *op)
{
	struct file_open *f = op->u.file;

	if (f == NULL)
		return;
	/*
	 * MS-FSA 2.1.5.14.4 and .2 update the write time on a size change
	 * only where Open.UserSetModificationTime is not set: a value set on
	 * this handle stays as it does across its writes.
	 */
	if (f->wt_state == WT_STICKY)
		wt_stick(op);
	else
		file_wt_flush(op);
}

void
file_wt_resized(struct open *op, int changed)
{
	struct file_open *f = op->u.file;
	struct shm *s = state_shm();
	struct shm_file_id fid;
	struct vfs_dosinfo di;
	int n;

	if (f == NULL)
		return;
	if (f->wt_state == WT_STICKY || f->wt_state == WT_STICKY_PUB ||
	    f->wt_state == WT_STICKY_LOCAL) {
		file_wt_written(op);
		return;
	}
	/*
	 * Through an open that did not fix the write time, the change moves
	 * it even where another open fixed it (Open.UserSetModificationTime
	 * is per open, as for a write: file_wt_write): that open's published
	 * value stops counting, the mtime the change left shows.  The file's
	 * only open has no other's value to drop: no I/O then.
	 */
	fid.dev = f->dev;
	fid.ino = f->ino;
	if (!changed || !op->state_in || s == NULL ||
	    shm_open_count(s, &fid, &n) != 0 || n < 2)
		return;
	if (vfs_dos_get(file_vfs(), f->fd, &di) != 0 || di.wt_owner == 0 ||
	    di.wt_owner == op->fid_persistent || di.wt_fire != VFS_WT_NEVER)
		return;
	di.wt_old = di.wt_fire = di.wt_owner = 0;
	(void)vfs_dos_set(file_vfs(), f->fd, &di);
}

void
file_wt_set(struct open *op, uint64_t write_time)
{
	struct file_open *f = op->u.file;
	struct vfs_dosinfo di;
	struct fscc_info fi;
	struct vfs_stat st;
	int held;

	if (f == NULL || f->is_dir || f->stream[0] != '\0')
		return;
	if (write_time == 0) {
		file_wt_flush(op);
		return;
	}
	if (write_time == WT_THAW) {
		/* automatic updates again, from the value it had */
		if (f->wt_state == WT_STICKY_PUB)
			wt_release(op, f->wt_sticky);
		if (f->wt_state == WT_STICKY || f->wt_state == WT_STICKY_PUB ||
		    f->wt_state == WT_STICKY_LOCAL)
			f->wt_state = WT_NONE;
		return;
	}
	if (write_time == WT_FREEZE) {
		/* the value clients see now stays (the pending one, if any) */
		if (f->wt_state == WT_STICKY || f->wt_state == WT_STICKY_PUB ||
		    f->wt_state == WT_STICKY_LOCAL ||
		    file_info_fill(f, &fi) != STATUS_SUCCESS)
			return;
		write_time = fi.write;
	}
	f->wt_sticky = write_time;
	held = f->wt_state == WT_PENDING || f->wt_state == WT_FIRED ||
	    f->wt_state == WT_STICKY_PUB;
	f->wt_state = WT_STICKY;
	if (!op->state_in || wt_load(f, &st, &di) != 0)
		return;
	/*
	 * A published write time (ours, or another open's: a value set
	 * explicitly wins over its pending update) now carries this one;
	 * otherwise the first write on this handle publishes it.
	 */
	if (held || di.wt_owner != 0) {
		di.wt_owner = 0;
		if (wt_publish(op, &di, write_time, VFS_WT_NEVER) == 0)
			f->wt_state = WT_STICKY_PUB;
	}
}

void
file_wt_close(struct open *op)
{
	struct file_open *f = op->u.file;
	uint64_t now;

	if (f == NULL)
		return;
	switch (f->wt_state) {
	case WT_PENDING:
		/*
		 * Closed before the update was due: the time of the last
		 * write, which the file's mtime already is (Windows takes the
		 * close time, a moment later; not worth a syscall per upload).
		 */
		now = wt_now();
		wt_release(op, now < f->wt_fire ? 0 : f->wt_fire);
		break;
	case WT_FIRED:
		wt_release(op, f->wt_dirty ? wt_now() : f->wt_fire);
		break;
	case WT_STICKY_PUB:
		/* writes since moved the mtime: back to the fixed value */
		wt_release(op, f->wt_sticky);
		break;
	default:
		break;
	}
	f->wt_state = WT_OFF;
}
