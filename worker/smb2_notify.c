/*
 * CHANGE_NOTIFY through inotify (worker/smb2_notify.h).
 */
#include "worker/smb2_notify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/fscc.h"
#include "proto/unicode.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/fruit.h"
#include "worker/notify_priv.h"
#include "worker/open.h"
#include "worker/smb2.h"
#include "worker/smb2_file.h"
#include "worker/state.h"
#include "worker/worker.h"
#include "vfs/vfs.h"

/* MS-SMB2 2.2.35 Flags */
#define SMB2_WATCH_TREE			0x0001
#define FILE_NOTIFY_VALID_MASK		0x00000FFFu
/* NOTIFY message flag (shm_wmsg_msg.level): the change wrote xattrs */
#define NOTIFY_WMSG_XATTR		0x1
/* ... not for watches that see file names (a rename's MODIFIED) */
#define NOTIFY_WMSG_NOT_NAMES		0x2

#define NOTIFY_WATCH_MAX	1024	/* per worker: > CONN_MAX_PENDING */
#define NOTIFY_WD_MAX		2048	/* inotify watches per worker */
#define NOTIFY_TREE_DIRS	64	/* subdirectories one WATCH_TREE follows */
#define NOTIFY_MASK	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
	IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR)

/* One inotify watch descriptor used by a watch, for a relative prefix. */
struct notify_wd {
	int		 wd;		/* -1: free */
	int		 watch;		/* index in watches */
	char		 prefix[256];	/* "" or "sub/dir/" below the handle */
	uint64_t	 dev, ino;	/* the directory watched */
	int		 reg;		/* recorded in shm (shm_notify_watch) */
};

static void notify_file_change(int, const struct file_open *, uint32_t,
    uint32_t, uint32_t, int);

static struct notify_watch watches[NOTIFY_WATCH_MAX];
static int watch_hi;	/* the loops stop here: watches[watch_hi..] free */
static struct notify_wd wds[NOTIFY_WD_MAX];
static unsigned nwds;
static int ifd = -1;

int
smb2_notify_fd(void)
{
	if (ifd < 0) {
		ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ifd < 0)
			log_warn("inotify_init1: CHANGE_NOTIFY unavailable");
	}
	return ifd;
}

static int
notify_wd_shared(int wd, unsigned except)
{
	unsigned i;

	for (i = 0; i < nwds; i++)
		if (i != except && wds[i].wd == wd)
			return 1;
	return 0;
}

/*
 * The shared record of who watches which directory (shm/notify.c): the
 * inotify watches not yet recorded are, in one transaction.  A failure
 * leaves them unrecorded: changes of the other workers' xattrs are then
 * missed there, inotify still works.
 */
static struct shm_file_id reg_fids[NOTIFY_WD_MAX];

static void
notify_register(void)
{
	struct shm *s = state_shm();
	unsigned i, n = 0;

	if (s == NULL)
		return;
	for (i = 0; i < nwds; i++)
		if (!wds[i].reg) {
			reg_fids[n].dev = wds[i].dev;
			reg_fids[n++].ino = wds[i].ino;
		}
	if (n == 0 || shm_notify_watch(s, reg_fids, n, shm_self(s), 1) != 0)
		return;
	for (i = 0; i < nwds; i++)
		wds[i].reg = 1;
}

static void
notify_unregister(int w)
{
	struct shm *s = state_shm();
	unsigned i, n = 0;

	if (s == NULL)
		return;
	for (i = 0; i < nwds; i++)
		if (wds[i].watch == w && wds[i].reg) {
			reg_fids[n].dev = wds[i].dev;
			reg_fids[n++].ino = wds[i].ino;
		}
	if (n > 0)
		(void)shm_notify_watch(s, reg_fids, n, shm_self(s), -1);
}

static void
notify_watch_end(int w)
{
	unsigned i = 0;

	notify_unregister(w);

	/* inotify gives one wd per inode: rm only its last user's */
	while (i < nwds) {
		if (wds[i].watch != w) {
			i++;
			continue;
		}
		if (ifd >= 0 && !notify_wd_shared(wds[i].wd, i))
			(void)inotify_rm_watch(ifd, wds[i].wd);
		wds[i] = wds[--nwds];
	}
	memset(&watches[w], 0, sizeof(watches[w]));
	while (watch_hi > 0 && !watches[watch_hi - 1].in_use)
		watch_hi--;
}

void
smb2_notify_open_gone(struct conn *c, uint64_t fp, uint64_t fv)
{
	int i;

	for (i = 0; i < watch_hi; i++)
		if (watches[i].in_use && watches[i].conn == c &&
		    watches[i].fid_p == fp && watches[i].fid_v == fv)
			notify_watch_end(i);
}

void
smb2_notify_conn_gone(struct conn *c)
{
	int i;

	for (i = 0; i < watch_hi; i++)
		if (watches[i].in_use && watches[i].conn == c)
			notify_watch_end(i);
}

static int
notify_add_wd(int w, int dirfd, const char *prefix)
{
	struct vfs_stat st;	/* the vfs's dev encoding, as f->dev */
	char p[64];
	int wd;

	if (nwds >= NOTIFY_WD_MAX || smb2_notify_fd() < 0 ||
	    file_vfs()->fstat(dirfd, &st) != 0)
		return -1;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(ifd, p, NOTIFY_MASK);
	if (wd < 0)
		return -1;
	wds[nwds].wd = wd;
	wds[nwds].watch = w;
	wds[nwds].dev = st.dev;
	wds[nwds].ino = st.ino;
	wds[nwds].reg = 0;
	snprintf(wds[nwds].prefix, sizeof(wds[nwds].prefix), "%s", prefix);
	nwds++;
	return 0;
}

/* WATCH_TREE: the subdirectories below dirfd, breadth first, capped. */
static void
notify_add_tree(int w, int dirfd, const char *prefix, unsigned *budget,
    int depth)
{
	char sub[256];
	struct dirent *de;
	DIR *d;
	int fd, sfd;

	if (depth > 8 || *budget == 0)
		return;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (*budget > 0 && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s/", prefix, de->d_name) >=
		    (int)sizeof(sub))
			continue;
		sfd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		(*budget)--;
		if (notify_add_wd(w, sfd, sub) == 0)
			notify_add_tree(w, sfd, sub, budget, depth + 1);
		close(sfd);
	}
	closedir(d);
}

static int
notify_watch_find(struct conn *c, const struct open *op)
{
	int i;

	for (i = 0; i < watch_hi; i++)
		if (watches[i].in_use && watches[i].conn == c &&
		    watches[i].fid_p == op->fid_persistent &&
		    watches[i].fid_v == op->fid_volatile)
			return i;
	return -1;
}

static int
notify_watch_start(struct conn *c, struct open *op, uint32_t filter, int tree)
{
	struct file_open *f = op->u.file;
	unsigned budget = NOTIFY_TREE_DIRS;
	int i;

	for (i = 0; i < NOTIFY_WATCH_MAX; i++)
		if (!watches[i].in_use)
			break;
	if (i == NOTIFY_WATCH_MAX)
		return -1;
	watch_hi = i >= watch_hi ? i + 1 : watch_hi;
	memset(&watches[i], 0, sizeof(watches[i]));
	watches[i].in_use = 1;
	watches[i].conn = c;
	watches[i].fid_p = op->fid_persistent;
	watches[i].fid_v = op->fid_volatile;
	watches[i].dev = f->dev;
	watches[i].ino = f->ino;
	watches[i].filter = filter;
	watches[i].tree = tree;
	watches[i].share = op->tree != NULL ? op->tree->share : NULL;
	/* as a listing of this handle names them (smb2_dir.c dir_emit) */
	watches[i].native = !f->posix && fruit_name_native(watches[i].share);
	if (notify_add_wd(i, f->fd, "") != 0) {
		notify_watch_end(i);
		return -1;
	}
	if (tree)
		notify_add_tree(i, f->fd, "", &budget, 0);
	notify_register();
	return i;
}

static void
notify_wake(struct notify_watch *w)
{
	if (conn_pending_wake_file(w->conn, PARK_NOTIFY, w->dev, w->ino) > 0)
		worker_kick(w->conn);
}

/* What an inotify event is in SMB terms: action, filter bits. */
static int
notify_map(uint32_t mask, uint32_t *action, uint32_t *filter)
{
	uint32_t name = (mask & IN_ISDIR) ? FILE_NOTIFY_CHANGE_DIR_NAME :
	    FILE_NOTIFY_CHANGE_FILE_NAME;

	if (mask & IN_CREATE) {
		*action = FILE_ACTION_ADDED;
		*filter = name;
	} else if (mask & IN_DELETE) {
		*action = FILE_ACTION_REMOVED;
		*filter = name;
	} else if (mask & IN_MOVED_FROM) {
		*action = FILE_ACTION_RENAMED_OLD_NAME;
		*filter = name;
	} else if (mask & IN_MOVED_TO) {
		*action = FILE_ACTION_RENAMED_NEW_NAME;
		*filter = name;
	} else if (mask & IN_MODIFY) {
		*action = FILE_ACTION_MODIFIED;
		*filter = FILE_NOTIFY_CHANGE_LAST_WRITE |
		    FILE_NOTIFY_CHANGE_SIZE;
	} else if (mask & IN_ATTRIB) {
		/*
		 * mode, owner, times, xattrs -- by a local process: the
		 * server's own EA, security, stream and DOS attribute writes
		 * are reported by the worker making them, with the filter
		 * they match (smb2_notify_file_change), and their IN_ATTRIB
		 * is claimed (notify_claimed).
		 */
		*action = FILE_ACTION_MODIFIED;
		*filter = FILE_NOTIFY_CHANGE_ATTRIBUTES |
		    FILE_NOTIFY_CHANGE_LAST_WRITE;
	} else
		return -1;
	return 0;
}

static void
notify_mark_delete_pending(struct notify_watch *w)
{
	w->delete_pending = 1;
	notify_wake(w);
}

static void
notify_overflow_all(void)
{
	int i;

	for (i = 0; i < watch_hi; i++)
		if (watches[i].in_use) {
			watches[i].overflow = 1;
			watches[i].qlen = 0;
			notify_wake(&watches[i]);
		}
}

/*
 * A create is followed by the server's own attribute write (DOS
 * attributes and create time in one xattr): the first IN_ATTRIB on the new
 * name within a moment of its IN_CREATE is part of the create, which
 * Windows reports as FILE_ACTION_ADDED alone.
 */
#define NOTIFY_RECENT		16
#define NOTIFY_RECENT_MS	500
static struct {
	int		 wd;
	uint64_t	 hash;
	uint64_t	 at_ms;
} recent[NOTIFY_RECENT];
static unsigned recent_next;

static uint64_t
notify_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int
notify_after_create(const struct inotify_event *ev)
{
	uint64_t h = notify_hash(ev->name), now = shm_now_ms();
	unsigned i;

	if (ev->mask & IN_CREATE) {
		recent[recent_next].wd = ev->wd;
		recent[recent_next].hash = h;
		recent[recent_next].at_ms = now;
		recent_next = (recent_next + 1) % NOTIFY_RECENT;
		return 0;
	}
	if (!(ev->mask & IN_ATTRIB))
		return 0;
	for (i = 0; i < NOTIFY_RECENT; i++)
		if (recent[i].wd == ev->wd && recent[i].hash == h &&
		    now - recent[i].at_ms < NOTIFY_RECENT_MS) {
			recent[i].wd = -1;	/* once: a later change counts */
			return 1;
		}
	return 0;
}

/*
 * The IN_ATTRIB of a change a worker reported itself (its xattr writes):
 * claimed for a moment on (wd, file name), so it is not reported a second
 * time, and not as an attribute change Windows would not make.
 */
#define NOTIFY_CLAIMS		16
#define NOTIFY_CLAIM_MS		300
static struct {
	int		 wd;
	uint64_t	 hash;
	uint64_t	 at_ms;
} claims[NOTIFY_CLAIMS];
static unsigned claim_next;

static void
notify_claim(int wd, const char *base, size_t blen)
{
	char b[256];
	uint64_t h, now = shm_now_ms();
	unsigned i;

	if (blen >= sizeof(b))
		return;
	memcpy(b, base, blen);
	b[blen] = '\0';
	h = notify_hash(b);
	for (i = 0; i < NOTIFY_CLAIMS; i++)
		if (claims[i].wd == wd && claims[i].hash == h) {
			claims[i].at_ms = now;
			return;
		}
	claims[claim_next].wd = wd;
	claims[claim_next].hash = h;
	claims[claim_next].at_ms = now;
	claim_next = (claim_next + 1) % NOTIFY_CLAIMS;
}

static int
notify_claimed(const struct inotify_event *ev)
{
	uint64_t h, now;
	unsigned i;

	if (!(ev->mask & IN_ATTRIB))
		return 0;
	h = notify_hash(ev->name);
	now = shm_now_ms();
	for (i = 0; i < NOTIFY_CLAIMS; i++)
		if (claims[i].wd == ev->wd && claims[i].hash == h &&
		    claims[i].at_ms != 0 && now - claims[i].at_ms <
		    NOTIFY_CLAIM_MS)
			return 1;
	return 0;
}

/*
 * A change of name (UTF-8, "file" or "file:stream") in the directory
 * (dev, ino), made by a worker: every watch here with an inotify watch on
 * that directory (the handle's own or, with WATCH_TREE, one below it)
 * whose filter matches queues it.  xattr: the change wrote xattrs, claim
 * their IN_ATTRIB.
 */
static void
notify_deliver(uint64_t dev, uint64_t ino, uint32_t action, uint32_t filter,
    uint32_t unless, const char *name, int xattr)
{
	char full[512];
	struct notify_watch *w;
	unsigned i, n = nwds;
	size_t blen = fscc_notify_file_len(action, name, strlen(name));

	for (i = 0; i < n && i < nwds; i++) {
		if (wds[i].dev != dev || wds[i].ino != ino)
			continue;
		if (xattr)
			notify_claim(wds[i].wd, name, blen);
		w = &watches[wds[i].watch];
		if (!w->in_use || (wds[i].prefix[0] != '\0' && !w->tree) ||
		    !(w->filter & filter) || (w->filter & unless))
			continue;
		if (snprintf(full, sizeof(full), "%s%s", wds[i].prefix, name) >=
		    (int)sizeof(full))
			continue;
		notify_queue(w, action, full, NULL);
		notify_wake(w);
	}
}

/*
 * move: 0, or the action a move's half is reported as (its pairing,
 * notify_move_pair); the mask's own mapping otherwise.
 */
static void
notify_dispatch(const struct inotify_event *ev, uint32_t move,
    const struct inotify_event *to)
{
	char name[512], now[512];
	uint32_t action, filter;
	unsigned i, j, n = nwds;
	struct notify_watch *w;
	const char *judge;
	int sub;

	if (ev->mask & IN_Q_OVERFLOW) {
		notify_overflow_all();
		return;
	}
	/* A watched directory removed under us (by a local process). */
	if (ev->mask & IN_DELETE_SELF) {
		for (i = 0; i < n; i++)
			if (wds[i].wd == ev->wd && wds[i].prefix[0] == '\0' &&
			    watches[wds[i].watch].in_use)
				notify_mark_delete_pending(
				    &watches[wds[i].watch]);
		return;
	}
	if (ev->len == 0 || notify_map(ev->mask, &action, &filter) != 0 ||
	    notify_after_create(ev) || notify_claimed(ev))
		return;
	if (move != 0)
		action = move;
	for (i = 0; i < n && i < nwds; i++) {
		if (wds[i].wd != ev->wd)
			continue;
		w = &watches[wds[i].watch];
		sub = wds[i].prefix[0] != '\0';
		if (!w->in_use || (sub && !w->tree))
			continue;
		if (snprintf(name, sizeof(name), "%s%s", wds[i].prefix,
		    ev->name) >= (int)sizeof(name))
			continue;
		if (!(w->filter & filter))
			continue;
		/*
		 * hide unreadable: a moved file is judged by its new name,
		 * when this watch sees where it went.
		 */
		judge = NULL;
		for (j = 0; to != NULL && w->share != NULL &&
		    w->share->hide_unreadable && j < nwds; j++)
			if (wds[j].watch == wds[i].watch &&
			    wds[j].wd == to->wd &&
			    snprintf(now, sizeof(now), "%s%s", wds[j].prefix,
			    to->name) < (int)sizeof(now)) {
				judge = now;
				break;
			}
		notify_queue(w, action, name, judge);
		notify_wake(w);
	}
}

/*
 * Adds watches for subdirectories that appeared below tree watches.  The
 * new directory is opened beneath the watched handle with no symlink in
 * any component: by the time its event is read, it or a directory above
 * it may have been replaced by a symlink leading out of the share (a
 * plain openat of "sub/dir/" follows even a final one, for the slash).
 */
static void
notify_follow_new_dir(const struct inotify_event *ev)
{
	char sub[256];
	struct open *op;
	unsigned i, n = nwds, budget;
	int w, dfd, len;

	if (!(ev->mask & (IN_CREATE | IN_MOVED_TO)) || !(ev->mask & IN_ISDIR) ||
	    ev->len == 0)
		return;
	for (i = 0; i < n; i++) {
		if (wds[i].wd != ev->wd)
			continue;
		w = wds[i].watch;
		if (!watches[w].in_use || !watches[w].tree)
			continue;
		op = open_find(watches[w].conn, watches[w].fid_p,
		    watches[w].fid_v);
		if (op == NULL || op->u.file == NULL)
			continue;
		len = snprintf(sub, sizeof(sub), "%s%s", wds[i].prefix,
		    ev->name);
		if (len < 0 || len >= (int)sizeof(sub) - 1)
			continue;
		dfd = file_vfs()->open_nolinks(op->u.file->fd, sub,
		    O_RDONLY | O_DIRECTORY, 0);
		if (dfd < 0)
			continue;
		sub[len] = '/';
		sub[len + 1] = '\0';
		budget = NOTIFY_TREE_DIRS / 4;
		if (notify_add_wd(w, dfd, sub) == 0)
			notify_add_tree(w, dfd, sub, &budget, 1);
		close(dfd);
	}
	notify_register();
}

/*
 * A rename is IN_MOVED_FROM then IN_MOVED_TO with the same cookie.  Within
 * one directory (one watch descriptor: inotify gives one per directory)
 * Windows reports RENAMED_OLD_NAME + RENAMED_NEW_NAME; across directories
 * REMOVED in the old one and ADDED in the new one (MS-FSCC 2.7.1).  The
 * IN_MOVED_FROM waits here for the event after it; one moved out of every
 * watched directory (no IN_MOVED_TO follows) is a REMOVED, and an
 * IN_MOVED_TO without its IN_MOVED_FROM (moved in from elsewhere) an
 * ADDED.
 */
static union {
	struct inotify_event	ev;
	char			buf[sizeof(struct inotify_event) + NAME_MAX + 1];
} move_from;
static int move_from_set;

static void
notify_move_flush(void)
{
	if (!move_from_set)
		return;
	move_from_set = 0;
	notify_dispatch(&move_from.ev, FILE_ACTION_REMOVED, NULL);
}

static void
notify_event_one(const struct inotify_event *ev)
{
	int same;

	if (move_from_set && (ev->mask & IN_MOVED_TO) &&
	    ev->cookie == move_from.ev.cookie) {
		same = ev->wd == move_from.ev.wd;
		move_from_set = 0;
		notify_dispatch(&move_from.ev, same ?
		    FILE_ACTION_RENAMED_OLD_NAME : FILE_ACTION_REMOVED, ev);
		notify_dispatch(ev, same ? FILE_ACTION_RENAMED_NEW_NAME :
		    FILE_ACTION_ADDED, NULL);
		return;
	}
	notify_move_flush();
	if ((ev->mask & IN_MOVED_FROM) && ev->len > 0 &&
	    ev->len <= NAME_MAX + 1) {
		memcpy(move_from.buf, ev, sizeof(*ev) + ev->len);
		move_from_set = 1;
		return;
	}
	notify_dispatch(ev, (ev->mask & IN_MOVED_TO) ? FILE_ACTION_ADDED : 0,
	    NULL);
}

/* Everything inotify holds now, in order. */
static void
notify_drain(void)
{
	static char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	size_t off;
	int guard;

	for (guard = 0; guard < 64 && ifd >= 0; guard++) {
		n = read(ifd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (off = 0; off + sizeof(*ev) <= (size_t)n;
		    off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			notify_event_one(ev);
			notify_follow_new_dir(ev);
		}
	}
	/* everything read: an IN_MOVED_FROM still waiting has no pair */
	notify_move_flush();
}

void
smb2_notify_event(void)
{
	/*
	 * The other workers' NOTIFY messages first: one that reports its
	 * own xattr write claims the IN_ATTRIB read below (the message is
	 * sent right after the write).
	 */
	state_wmsg_event();
	notify_drain();
}

void
smb2_notify_renamed(int root_fd, const struct file_open *f)
{
	struct shm *s = state_shm();

	if (f->is_dir || (nwds == 0 && (s == NULL || !shm_notify_any(s))))
		return;
	/*
	 * The rename's own IN_MOVED_FROM/IN_MOVED_TO are in the inotify
	 * queue already (the kernel makes them in the rename): read them
	 * first, so that the MODIFIED follows the names, as on Windows.
	 */
	notify_drain();
	notify_file_change(root_fd, f, FILE_ACTION_MODIFIED,
	    FILE_NOTIFY_CHANGE_ATTRIBUTES | FILE_NOTIFY_CHANGE_CREATION,
	    FILE_NOTIFY_CHANGE_FILE_NAME, 0);
}

static void
notify_delete_pending_local(uint64_t dev, uint64_t ino)
{
	int i;

	for (i = 0; i < watch_hi; i++)
		if (watches[i].in_use && watches[i].dev == dev &&
		    watches[i].ino == ino)
			notify_mark_delete_pending(&watches[i]);
}

/* The other workers that hold the directory open, each once. */
#define NOTIFY_PEERS_MAX	32
struct notify_peers {
	struct shm_file_id	 fid;
	pid_t			 self;
	pid_t			 pid[NOTIFY_PEERS_MAX];
	unsigned		 n;
};

static int
notify_peer_visit(const struct shm_file_id *fid, const struct shm_open_rec *o,
    void *arg)
{
	struct notify_peers *pp = arg;
	unsigned i;

	if (fid->dev != pp->fid.dev || fid->ino != pp->fid.ino ||
	    o->pid <= 0 || o->pid == pp->self)
		return 0;
	for (i = 0; i < pp->n; i++)
		if (pp->pid[i] == o->pid)
			return 0;
	if (pp->n < NOTIFY_PEERS_MAX)
		pp->pid[pp->n++] = o->pid;
	return 0;
}

void
smb2_notify_delete_pending(uint64_t dev, uint64_t ino)
{
	struct shm *s = state_shm();
	struct notify_peers pp;
	struct shm_wmsg_msg m;
	unsigned i;

	notify_delete_pending_local(dev, ino);
	if (s == NULL || state_wmsg() == NULL)
		return;
	/*
	 * A watch in another worker holds an open of the directory: the
	 * opens tell which workers to tell.  A full walk, but only when a
	 * directory stays delete pending behind other handles, which is
	 * rare (a plain rmdir is the directory's last close).
	 */
	memset(&pp, 0, sizeof(pp));
	pp.fid.dev = dev;
	pp.fid.ino = ino;
	pp.self = shm_self(s);
	if (shm_foreach_open(s, notify_peer_visit, &pp) != 0)
		return;
	memset(&m, 0, sizeof(m));
	m.type = SHM_WMSG_NOTIFY;
	m.fid = pp.fid;
	m.action = SHM_WMSG_NOTIFY_DELETE_PENDING;
	for (i = 0; i < pp.n; i++)
		(void)shm_wmsg_send(state_wmsg(), pp.pid[i], &m);
}

/* ~1 KiB: kept off the event loop's stack */
static struct shm_wmsg_msg notify_msg;

void
smb2_notify_wmsg(const struct shm_wmsg_msg *m)
{
	static char name[SHM_WMSG_NAME_MAX + 1];

	/*
	 * A change another worker made in a directory watched here (what
	 * inotify may not see, e.g. on a network file system).
	 */
	if (m->action == SHM_WMSG_NOTIFY_DELETE_PENDING) {
		notify_delete_pending_local(m->fid.dev, m->fid.ino);
		return;
	}
	memcpy(name, m->name, SHM_WMSG_NAME_MAX);
	name[SHM_WMSG_NAME_MAX] = '\0';
	if (m->filter == 0 || strchr(name, '/') != NULL || name[0] == '\0')
		return;
	notify_deliver(m->fid.dev, m->fid.ino, m->action, m->filter,
	    (m->level & NOTIFY_WMSG_NOT_NAMES) ? FILE_NOTIFY_CHANGE_FILE_NAME :
	    0, name, (m->level & NOTIFY_WMSG_XATTR) != 0);
}

/* unless: watches with one of these filter bits are not told */
static void
notify_file_change(int root_fd, const struct file_open *f, uint32_t action,
    uint32_t filter, uint32_t unless, int stream)
{
	const struct vfs_ops *vfs = file_vfs();
	struct shm *s = state_shm();
	struct shm_wmsg_msg *m = &notify_msg;
	struct shm_pids pids;
	struct vfs_stat st;
	char parent[FILE_PATH_MAX];
	const char *slash, *leaf;
	size_t n;
	unsigned i;

	/* nobody watches anything: the common case costs one load */
	if (nwds == 0 && (s == NULL || !shm_notify_any(s)))
		return;
	if (root_fd < 0 || f == NULL || f->path[0] == '\0')
		return;		/* the share root has no directory to tell */
	slash = strrchr(f->path, '/');
	n = slash != NULL ? (size_t)(slash - f->path) : 0;
	leaf = slash != NULL ? slash + 1 : f->path;
	memcpy(parent, f->path, n);
	parent[n] = '\0';
	if (vfs->statat(root_fd, parent, &st) != 0)
		return;
	memset(m, 0, sizeof(*m));
	if (stream && f->stream[0] != '\0') {
		if (snprintf(m->name, sizeof(m->name), "%s:%s", leaf,
		    f->stream) >= (int)sizeof(m->name))
			return;
	} else if (snprintf(m->name, sizeof(m->name), "%s", leaf) >=
	    (int)sizeof(m->name))
		return;
	notify_deliver(st.dev, st.ino, action, filter, unless, m->name, 1);
	if (s == NULL || state_wmsg() == NULL)
		return;
	m->type = SHM_WMSG_NOTIFY;
	m->fid.dev = st.dev;
	m->fid.ino = st.ino;
	m->action = action;
	m->filter = filter;
	m->level = NOTIFY_WMSG_XATTR | (unless != 0 ? NOTIFY_WMSG_NOT_NAMES : 0);
	if (shm_notify_watchers(s, &m->fid, &pids) != 0)
		return;
	for (i = 0; i < pids.n; i++)
		if (pids.pid[i] != shm_self(s))
			(void)shm_wmsg_send(state_wmsg(), pids.pid[i], m);
}

void
smb2_notify_file_change(int root_fd, const struct file_open *f,
    uint32_t action, uint32_t filter, int stream)
{
	notify_file_change(root_fd, f, action, filter, 0, stream);
}

ntstatus_t
smb2_change_notify_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur *c = &req->body;
	struct conn_pending *slot;
	struct notify_watch *w;
	struct open *op;
	uint16_t flags;
	uint32_t outlen, filter;
	ntstatus_t status;
	int wi, fresh = 0;

	if (cur_le16(c) != 32)
		return STATUS_INVALID_PARAMETER;
	flags = cur_le16(c);
	outlen = cur_le32(c);
	if ((status = file_open_lookup(req, c, &op)) != STATUS_SUCCESS)
		return status;
	filter = cur_le32(c);
	if (c->err)
		return STATUS_INVALID_PARAMETER;
	if (op->kind != OPEN_DIR)
		return STATUS_INVALID_PARAMETER;
	/* MS-SMB2 3.3.5.19: FILE_LIST_DIRECTORY is needed */
	if (!(op->access & FILE_READ_DATA))
		return STATUS_ACCESS_DENIED;
	/* `change notify = no`: no watch, Samba's answer (HACKING.md) */
	if (req->conn->conf != NULL && !req->conn->conf->change_notify)
		return STATUS_NOT_IMPLEMENTED;
	if (req->conn->max_trans_size != 0 &&
	    outlen > req->conn->max_trans_size)
		return STATUS_INVALID_PARAMETER;
	filter &= FILE_NOTIFY_VALID_MASK;
	if ((wi = notify_watch_find(req->conn, op)) < 0) {
		wi = notify_watch_start(req->conn, op, filter,
		    (flags & SMB2_WATCH_TREE) != 0);
		if (wi < 0)	/* MS-SMB2 3.3.4.2: resources constrained */
			return STATUS_INSUFFICIENT_RESOURCES;
		/*
		 * Like the filter, the first request's buffer size stays
		 * the handle's: changes that never fit it always answer
		 * NOTIFY_ENUM_DIR (smb2.notify.valid-req).
		 */
		watches[wi].bufsize = outlen;
		fresh = 1;
	}
	w = &watches[wi];
	/* MS-FSA 2.1.5.4: a directory deleted under its watch. */
	if (w->delete_pending)
		return STATUS_DELETE_PENDING;
	/* Windows keeps the first request's filter for the handle's watch. */
	if (w->overflow) {
		w->overflow = 0;
		w->qlen = 0;
		return STATUS_NOTIFY_ENUM_DIR;
	}
	if (w->qlen == 0) {
		status = dispatch_park(req, rsp, PARK_NOTIFY, w->dev, w->ino, 0,
		    &slot);
		/* no cancel: the watch stays, changes queue for the next */
		if (status == STATUS_PENDING) {
			slot->fid_persistent = op->fid_persistent;
			slot->fid_volatile = op->fid_volatile;
		} else if (fresh)
			notify_watch_end(wi);	/* refused: no watch left */
		return status;
	}
	return notify_answer(w, rsp, outlen);
}

