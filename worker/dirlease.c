/*
 * Directory leases: the breaks a change inside a directory causes
 * (worker/dirlease.h).
 */

/*
 * Directory leases, in detail.
 *
 * - Directory leases (issue 16; worker/dirlease.[ch], shm/leases.c
 *   shm_dirlease_breaks).  smb3 directory leases (default yes) tells SMB
 *   3.x clients that ask for it SMB2_GLOBAL_CAP_DIRECTORY_LEASING
 *   (worker/smb2_negotiate.c; a client that does not ask is not told, as
 *   in Samba 4.22: impacket 0.10 fails on top-level CREATEs once told).
 *   A directory opened with a v2 lease context gets R or RH, never W
 *   (worker/state_open.c state_open_dir_lease, state_open_rec_fill).  A
 *   change that makes a cached listing wrong breaks every lease of the
 *   parent directory to none, across workers, without waiting for the
 *   acks (Samba's contend_dirleases; worker/state.c state_break_dir),
 *   but the lease whose key the changer's open names as its parent lease
 *   key (compared by key alone, as Samba; open.parent_lease_key): a name
 *   created, overwritten or superseded (smb2_create.c), deleted at its
 *   last close (only the closer's key is spared, and only when that open
 *   set the delete itself), renamed (both directories) or hard-linked
 *   (smb2_setinfo.c), FileBasicInformation with any time, ChangeTime or
 *   attributes, EndOfFile/Allocation, and the close of a handle that
 *   wrote (file_open.modified; not each WRITE).  A rename that meets a
 *   sharing violation on the destination directory first breaks its
 *   opens' H and waits (state_rename_parent_breaks), so a holder may
 *   close.  Local changes: the worker holding a leased directory watches
 *   it on an inotify fd of its own (dirlease_fd in the event loop; 64
 *   directories per worker); an event breaks the leases unless an
 *   operation of this worker caused it, decided with no time window.
 *   fsnotify queues an event inside the syscall that causes it, so before
 *   the response of a request that may change names (CREATE, CLOSE,
 *   WRITE, FLUSH, SET_INFO, IOCTL, TREE_DISCONNECT, LOGOFF: the chain's
 *   commands, worker/dispatch_out.c) the worker drains its queue
 *   (dirlease_settle, one read(2) while it watches a leased directory,
 *   none otherwise: a CREATE + CLOSE of an existing file costs 13
 *   syscalls instead of 11 then, strace -c of the worker): the events of names the request noted
 *   (dirlease_note) or, but for removals, that are open here, are its
 *   own; every other event, and every event read between requests in the
 *   event loop (but the one IN_DELETE or IN_MOVED_FROM of a name this
 *   worker unlinked or renamed away right before, dirlease_note_gone), is
 *   a local change.  So a local touch or write of a name this worker
 *   holds open or has just closed breaks the leases once the client has
 *   the response of what it did there (a local change during the request
 *   itself, to one of its names, is taken for the request's); a
 *   teardown's closes outside a request (a connection lost) may break
 *   them needlessly, never miss a change.  Events of another worker's SMB changes break
 *   again (a no-op, the break is in progress) and so break a lease that
 *   worker spared for its parent key.  On the holder's own connection
 *   the break is queued while the change is served and goes out right
 *   after its response (notices follow responses,
 *   worker/dispatch_async.c), as Samba's, which messages itself; Samba
 *   4.22's smb2.dirlease hardlink, rename and unlink_different_* rely on
 *   that order (they take the break only once the SET_INFO or CLOSE is
 *   answered; sent ahead, smbtorture acks it inside the request and the
 *   test's own ack fails, or it misses the second break).  The
 *   stat of the parent costs three syscalls per change (not per open;
 *   none for a top-level name, whose parent the tree knows),
 *   none when the key is off.
 */
#include "worker/dirlease.h"

#include <sys/inotify.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/state.h"

/* The directory holding path: its dev and ino.  0 or -errno. */
static int
dirlease_parent_id(const struct tree *t, const char *path, uint64_t *dev,
    uint64_t *ino)
{
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) : 0;
	struct vfs_stat st;
	int rc;

	if (n == 0 && t->root_id_known) {
		/* a top-level name: the root's identity, kept by the tree */
		*dev = t->root_dev;
		*ino = t->root_ino;
		return 0;
	}
	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, n);
	parent[n] = '\0';
	/* a top-level name: the share root, which the tree holds open */
	rc = n == 0 ? file_vfs()->fstat(t->root_fd, &st) :
	    file_vfs()->statat(t->root_fd, parent, &st);
	if (rc != 0)
		return rc;
	*dev = st.dev;
	*ino = st.ino;
	return 0;
}

void
dirlease_break_parent(const struct conn *c, const struct tree *t,
    const char *path, const uint8_t *parent_key)
{
	uint64_t dev, ino;

	/*
	 * No directory is leased unless the feature is on; then one stat
	 * of the parent per change (not per open), and the shared state's
	 * hint answers "no lease there" without a transaction.
	 */
	if (c == NULL || c->conf == NULL || !c->conf->smb3_directory_leases ||
	    t == NULL || t->root_fd < 0 || path == NULL || path[0] == '\0' ||
	    state_shm() == NULL)
		return;
	dirlease_note(t, path);
	if (dirlease_parent_id(t, path, &dev, &ino) != 0)
		return;
	state_break_dir(dev, ino, parent_key);
}

void
dirlease_break_op(const struct open *op, const char *path)
{
	dirlease_break_parent(op->conn, op->tree, path,
	    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE ?
	    op->parent_lease_key : NULL);
}

/* ---- local changes: inotify ---- */

#define DIRLEASE_WATCH_MAX	64	/* leased directories per worker */
#define DIRLEASE_PENDING_MAX	64	/* names one request touches */
#define DIRLEASE_MASK	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | \
	    IN_MOVED_TO | IN_ATTRIB | IN_CLOSE_WRITE | IN_ONLYDIR | \
	    IN_EXCL_UNLINK)

struct dirlease_watch {
	int		 wd;		/* -1: gone (IN_IGNORED) */
	unsigned	 refs;		/* leased opens; 0: a free slot */
	uint64_t	 dev, ino;
	const void	*share;
	char		 path[FILE_PATH_MAX];	/* share-relative */
};

/*
 * A name this worker's own operation touches (dirlease_note*): pending
 * until the next drain of the inotify queue, which its events reach
 * before the operation returns (fsnotify queues them in the syscall).
 */
struct dirlease_pending {
	const void	*share;
	uint64_t	 hash;		/* of the share-relative path */
	int		 gone;		/* unlinked / renamed away: one event */
	int		 used;
};

static int dl_ifd = -1;
static struct dirlease_watch dl_watch[DIRLEASE_WATCH_MAX];
static unsigned dl_nwatch;		/* slots with refs > 0 */
static struct dirlease_pending dl_pending[DIRLEASE_PENDING_MAX];
static unsigned dl_pending_next;

static uint64_t
dirlease_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

int
dirlease_start(const struct conf *conf)
{
	if (dl_ifd < 0 && conf->smb3_directory_leases) {
		dl_ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (dl_ifd < 0)
			log_warn("inotify_init1: local changes will not break "
			    "directory leases");
	}
	return dl_ifd;
}

int
dirlease_fd(void)
{
	return dl_ifd;
}

static void
dirlease_note_kind(const struct tree *t, const char *path, int gone)
{
	struct dirlease_pending *r;

	/* nothing to tell apart while no leased directory is watched */
	if (dl_nwatch == 0 || t == NULL)
		return;
	r = &dl_pending[dl_pending_next];
	dl_pending_next = (dl_pending_next + 1) % DIRLEASE_PENDING_MAX;
	r->share = t->share;
	r->hash = dirlease_hash(path);
	r->gone = gone;
	r->used = 1;
}

void
dirlease_note(const struct tree *t, const char *path)
{
	dirlease_note_kind(t, path, 0);
}

void
dirlease_note_gone(const struct tree *t, const char *path)
{
	dirlease_note_kind(t, path, 1);
}

void
dirlease_watch_open(struct open *op)
{
	const struct file_open *f = op->u.file;
	char proc[64];
	unsigned i, slot = DIRLEASE_WATCH_MAX;
	int wd;

	if (op->dirlease_watch != 0 || f == NULL || !f->is_dir ||
	    op->tree == NULL || dl_ifd < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
	/* the same directory twice: the same watch descriptor */
	if ((wd = inotify_add_watch(dl_ifd, proc, DIRLEASE_MASK)) < 0) {
		log_debug(1, "dirlease: no watch on \"%s\"", f->path);
		return;
	}
	for (i = 0; i < DIRLEASE_WATCH_MAX; i++) {
		if (dl_watch[i].refs > 0 && dl_watch[i].wd == wd)
			break;
		if (dl_watch[i].refs == 0 && slot == DIRLEASE_WATCH_MAX)
			slot = i;
	}
	if (i == DIRLEASE_WATCH_MAX) {
		if (slot == DIRLEASE_WATCH_MAX) {
			(void)inotify_rm_watch(dl_ifd, wd);
			log_debug(1, "dirlease: %d directories watched, not "
			    "\"%s\"", DIRLEASE_WATCH_MAX, f->path);
			return;
		}
		i = slot;
		dl_watch[i].wd = wd;
		dl_watch[i].dev = f->dev;
		dl_watch[i].ino = f->ino;
		dl_watch[i].share = op->tree->share;
		snprintf(dl_watch[i].path, sizeof(dl_watch[i].path), "%s",
		    f->path);
		dl_nwatch++;
	}
	dl_watch[i].refs++;
	op->dirlease_watch = (uint8_t)(i + 1);
}

void
dirlease_watch_close(struct open *op)
{
	struct dirlease_watch *w;

	if (op->dirlease_watch == 0)
		return;
	w = &dl_watch[op->dirlease_watch - 1];
	op->dirlease_watch = 0;
	if (w->refs == 0 || --w->refs > 0)
		return;
	if (w->wd >= 0)
		(void)inotify_rm_watch(dl_ifd, w->wd);
	w->wd = -1;
	dl_nwatch--;
}

/*
 * Does this worker's own operation explain a change of name in w?  At the
 * end of a request (settle): a name it noted, or, for a change that is no
 * removal, a name open here (an EA, a descriptor, a write time set
 * through a handle), since the queue was drained before and nobody reads
 * it meanwhile.  Read in the event loop, between requests: only the
 * removal this worker noted right before its unlink or rename away (one
 * event each); anything else is a local change, whatever this worker has
 * open or touched before.
 */
static int
dirlease_ours(const struct dirlease_watch *w, const char *name, uint32_t mask,
    int settle)
{
	static char path[FILE_PATH_MAX];
	uint64_t h;
	unsigned i;
	int n, gone = (mask & (IN_DELETE | IN_MOVED_FROM)) != 0;

	if (!gone && !settle)
		return 0;
	n = w->path[0] == '\0' ?
	    snprintf(path, sizeof(path), "%s", name) :
	    snprintf(path, sizeof(path), "%s/%s", w->path, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	if (!gone && file_open_named(w->share, path))
		return 1;
	h = dirlease_hash(path);
	for (i = 0; i < DIRLEASE_PENDING_MAX; i++) {
		struct dirlease_pending *r = &dl_pending[i];

		if (!r->used || r->hash != h || r->share != w->share ||
		    r->gone != gone)
			continue;
		if (gone)
			r->used = 0;	/* its one event */
		return 1;
	}
	return 0;
}

static struct dirlease_watch *
dirlease_watch_find(int wd)
{
	unsigned i;

	for (i = 0; i < DIRLEASE_WATCH_MAX; i++)
		if (dl_watch[i].refs > 0 && dl_watch[i].wd == wd)
			return &dl_watch[i];
	return NULL;
}

/* The queue overflowed: any watched directory may have changed. */
static void
dirlease_break_all(void)
{
	unsigned i;

	for (i = 0; i < DIRLEASE_WATCH_MAX; i++)
		if (dl_watch[i].refs > 0 && dl_watch[i].wd >= 0)
			state_break_dir(dl_watch[i].dev, dl_watch[i].ino, NULL);
}

/*
 * Reads the queue; a change no operation of this worker explains breaks
 * the directory's leases.  Every note is settled then: the events of the
 * operations it stood for were queued before.
 */
static void
dirlease_drain(int settle)
{
	/* the kernel's records, aligned as it writes them */
	static char buf[8192]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct dirlease_watch *w;
	ssize_t n;
	char *p;

	while ((n = read(dl_ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p + sizeof(*ev) <= buf + n;
		    p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(void *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				dirlease_break_all();
				continue;
			}
			if ((w = dirlease_watch_find(ev->wd)) == NULL)
				continue;
			if (ev->mask & IN_IGNORED) {
				w->wd = -1;	/* the directory is gone */
				continue;
			}
			/* the directory itself, or a name we explain */
			if (ev->len == 0 || ev->name[0] == '\0' ||
			    dirlease_ours(w, ev->name, ev->mask, settle))
				continue;
			log_debug(2, "dirlease: local change of \"%s\" in "
			    "\"%s\"", ev->name, w->path);
			state_break_dir(w->dev, w->ino, NULL);
		}
	}
	memset(dl_pending, 0, sizeof(dl_pending));
	dl_pending_next = 0;
}

void
dirlease_event(void)
{
	dirlease_drain(0);
}

int
dirlease_settles(uint16_t command)
{
	if (dl_ifd < 0 || dl_nwatch == 0)
		return 0;
	switch (command) {
	case SMB2_CREATE:
	case SMB2_CLOSE:
	case SMB2_WRITE:		/* its write time, published in an xattr */
	case SMB2_FLUSH:
	case SMB2_SET_INFO:
	case SMB2_IOCTL:
	case SMB2_TREE_DISCONNECT:	/* closes */
	case SMB2_LOGOFF:
		return 1;
	default:
		return 0;
	}
}

void
dirlease_settle(void)
{
	if (dl_ifd >= 0 && dl_nwatch > 0)
		dirlease_drain(1);
}
