/*
 * Case-insensitive name resolution for shares with `case sensitive = no`.
 *
 * A name is first tried exactly (one openat2).  Only a miss scans the
 * parent directory, and the scan is kept: a small cache of directories,
 * each a hash table of upper-cased name hashes over an arena of names,
 * keyed by (dev, ino).  A directory too big for a slot is marked
 * overflowed and is scanned on each miss (correct, just slower).  The
 * arenas are allocated once, on first use, and reused.
 *
 * Keeping a slot current.  Every CREATE of a new name changes the
 * directory, so a cache that is only valid while the directory's mtime is
 * unchanged rescans the whole directory per new name: O(n^2) getdents for
 * n creates.  Learning our own creates from the mtime is not sound: one
 * timestamp cannot tell "only our create happened since the last check"
 * from "our create and a foreign one" (a foreign create between our
 * fstat and our openat2, or between our openat2 and the fstat after it,
 * leaves the same single new mtime), and the foreign name would then stay
 * hidden for as long as only this worker changes the directory, where the
 * mtime rule finds it at the next lookup.  A counter of changes would
 * settle it, but the kernel's i_version is not exported.
 *
 * So a cached directory on a local filesystem is watched with inotify
 * (one non-blocking instance per worker, a watch per slot) and its slot
 * follows every name change, ours and foreign alike: each lookup first
 * drains the queued events (IN_CREATE / IN_MOVED_TO add the name,
 * IN_DELETE / IN_MOVED_FROM remove it).  fsnotify queues the event inside
 * the syscall that changed the directory, before it returns, so any change
 * that completed before the drain is applied; a change racing with the
 * drain is the same race as a change racing with the lookup itself.  The
 * watch is added before the scan: a change after it is both queued and
 * maybe seen by the scan, and applying events in order is idempotent per
 * name (add skips a name present, remove skips one absent), so the last
 * event of each name wins, which is its state after the scan.  A lost
 * event (the queue overflowed: IN_Q_OVERFLOW), or a queue one lookup
 * cannot empty, invalidates every watched slot; a
 * removed watch (IN_IGNORED: the directory was deleted or its filesystem
 * unmounted) invalidates its slot.  Network and FUSE filesystems do not
 * report remote changes to inotify: there (and when inotify is not
 * available, e.g. out of instances) a slot keeps the old rule, valid
 * while the directory's mtime and ctime are unchanged.
 *
 * A note on the directory itself (vfs_name_dir_note).  The watch also
 * asks for IN_ATTRIB, which fsnotify queues inside any setxattr,
 * removexattr, chmod, chown or utimes of the directory (and of its
 * entries: those carry a name and are ignored here).  A caller that
 * looked at one of the directory's attributes after the lookup that
 * drained the queue (worker/smb2_secdesc.c: no stored descriptor) may
 * note what it found; the note is kept while the watch queues no event
 * of the directory's own, so a later lookup, whose drain comes first,
 * answers for it without a system call.  Any doubt (a slot dropped or
 * rescanned, a lost event, no watch) forgets it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "proto/unicode.h"
#include "vfs/vfs.h"

#define NAME_SLOTS	4
#define NAME_ARENA	(2u << 20)
#define NAME_BUCKETS	(1u << 17)	/* power of two, >= 2 * names that fit */
#define NAME_SCANBUF	(32u << 10)
#define NAME_DEAD	0x8000u		/* in a record's length: removed */
#define NAME_DRAINS	64		/* reads of the event queue per lookup */
#define NAME_EVENTS	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | \
			 IN_MOVED_TO | IN_DELETE_SELF | IN_ATTRIB | IN_ONLYDIR)

struct name_slot {
	uint64_t	 dev;
	uint64_t	 ino;
	struct timespec	 mtime;
	struct timespec	 ctime;
	int		 valid;
	int		 overflow;
	int		 wd;		/* inotify watch, -1: the mtime rule */
	int		 noted;		/* vfs_name_dir_note, while no IN_ATTRIB */
	uint64_t	 gen;		/* changes whenever the slot is refilled */
	uint64_t	 lru;
	uint32_t	 used;		/* arena bytes */
	uint32_t	 count;		/* records, removed ones included */
	uint32_t	 mask;		/* buckets in use - 1 */
	char		*arena;		/* [u32 hash][u16 len][name] ... */
	uint32_t	*bucket;	/* arena offset + 1, 0 = empty */
};

static struct name_slot	 name_slots[NAME_SLOTS];
static uint8_t		*name_scanbuf;
static uint64_t		 name_clock;
static int		 name_ready;
static int		 name_inofd = -1;

/* The directory the last name_resolve_last looked in (vfs_name_dir_note). */
static struct {
	struct name_slot *slot;		/* NULL: none */
	uint64_t	 gen;
	int		 root;
	char		 parent[PATH_MAX];
} name_last;
static struct name_slot	*name_looked;	/* the slot name_lookup used */

static int
name_init(void)
{
	int i;

	if (name_ready)
		return 0;
	if ((name_scanbuf = malloc(NAME_SCANBUF)) == NULL)
		return -ENOMEM;
	for (i = 0; i < NAME_SLOTS; i++) {
		name_slots[i].wd = -1;
		name_slots[i].arena = malloc(NAME_ARENA);
		name_slots[i].bucket = calloc(NAME_BUCKETS, sizeof(uint32_t));
		if (name_slots[i].arena == NULL ||
		    name_slots[i].bucket == NULL)
			return -ENOMEM;
	}
	/* none (out of instances, say): every slot keeps the mtime rule */
	name_inofd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	name_ready = 1;
	return 0;
}

/* Forgets a slot's names and its watch (rescanned on next use). */
static void
name_slot_drop(struct name_slot *s)
{
	if (s->wd >= 0)
		(void)inotify_rm_watch(name_inofd, s->wd);
	s->wd = -1;
	s->valid = 0;
	s->noted = 0;
	s->gen++;
}

void
vfs_name_invalidate(void)
{
	int i;

	for (i = 0; i < NAME_SLOTS; i++)
		name_slot_drop(&name_slots[i]);
}

static uint32_t
name_rec_len(const struct name_slot *s, uint32_t off)
{
	return (uint8_t)s->arena[off + 4] |
	    (uint32_t)(uint8_t)s->arena[off + 5] << 8;
}

static void
name_insert(struct name_slot *s, const char *name, size_t len)
{
	uint32_t h, need = (uint32_t)(6 + len);

	if (s->overflow)
		return;
	if (s->used + need > NAME_ARENA || s->count + 1 > NAME_BUCKETS / 2) {
		s->overflow = 1;
		return;
	}
	h = unicode_casehash(name, len);
	memcpy(s->arena + s->used, &h, 4);
	s->arena[s->used + 4] = (char)(len & 0xFF);
	s->arena[s->used + 5] = (char)(len >> 8);
	memcpy(s->arena + s->used + 6, name, len);
	s->used += need;
	s->count++;
}

/*
 * Hashes the scanned names into a table of at least twice their count:
 * clearing only that much keeps a rescan of a small directory (every
 * CREATE of a new name changes its mtime) from touching all 512 KiB of
 * buckets.
 */
static void
name_index(struct name_slot *s)
{
	uint32_t n = 256, off, h, b;

	while (n < 2 * s->count && n < NAME_BUCKETS)
		n <<= 1;
	s->mask = n - 1;
	memset(s->bucket, 0, n * sizeof(uint32_t));
	for (off = 0; off < s->used;
	    off += 6 + (name_rec_len(s, off) & ~NAME_DEAD)) {
		memcpy(&h, s->arena + off, 4);
		for (b = h & s->mask; s->bucket[b] != 0; b = (b + 1) & s->mask)
			;
		s->bucket[b] = off + 1;
	}
}

/* The record of exactly this name (not folded), arena offset + 1, or 0. */
static uint32_t
name_find_exact(const struct name_slot *s, const char *name, size_t len,
    uint32_t h)
{
	uint32_t b, off, eh;

	for (b = h & s->mask; s->bucket[b] != 0; b = (b + 1) & s->mask) {
		off = s->bucket[b] - 1;
		memcpy(&eh, s->arena + off, 4);
		if (eh == h && name_rec_len(s, off) == len &&
		    memcmp(s->arena + off + 6, name, len) == 0)
			return off + 1;
	}
	return 0;
}

/*
 * A name appeared in a watched directory (created, renamed or linked in):
 * adds it unless present (the scan may have seen it already).  A slot that
 * runs out of room is dropped and rescanned on next use, which also
 * compacts the records of removed names.
 */
static void
name_add(struct name_slot *s, const char *name, size_t len)
{
	uint32_t h, b, off;

	if (s->overflow || len == 0 || len > NAME_MAX)
		return;
	h = unicode_casehash(name, len);
	if (name_find_exact(s, name, len, h) != 0)
		return;
	off = s->used;
	name_insert(s, name, len);
	if (s->overflow) {
		name_slot_drop(s);
		return;
	}
	if (s->count > (s->mask + 1) / 2) {
		name_index(s);		/* grows the table */
		return;
	}
	for (b = h & s->mask; s->bucket[b] != 0; b = (b + 1) & s->mask)
		;
	s->bucket[b] = off + 1;
}

/*
 * A name left a watched directory (deleted or renamed away): its record
 * is marked removed and stays in the table as a tombstone, so the probe
 * chains through it stay intact.
 */
static void
name_remove(struct name_slot *s, const char *name, size_t len)
{
	uint32_t at, rl;

	if (s->overflow || len == 0 || len > NAME_MAX)
		return;
	at = name_find_exact(s, name, len, unicode_casehash(name, len));
	if (at == 0)
		return;
	rl = (uint32_t)len | NAME_DEAD;
	s->arena[at - 1 + 4] = (char)(rl & 0xFF);
	s->arena[at - 1 + 5] = (char)(rl >> 8);
}

static struct name_slot *
name_slot_by_wd(int wd)
{
	int i;

	for (i = 0; i < NAME_SLOTS; i++)
		if (name_slots[i].valid && name_slots[i].wd == wd)
			return &name_slots[i];
	return NULL;
}

static void
name_event(const struct inotify_event *ev, const char *nm, size_t len)
{
	struct name_slot *s;
	int i;

	if (ev->mask & IN_Q_OVERFLOW) {
		/* events were lost: no watched slot can be trusted */
		for (i = 0; i < NAME_SLOTS; i++)
			if (name_slots[i].wd >= 0)
				name_slot_drop(&name_slots[i]);
		return;
	}
	if ((s = name_slot_by_wd(ev->wd)) == NULL)
		return;		/* a watch dropped before: stale events */
	if (ev->mask & IN_IGNORED) {
		s->wd = -1;	/* the kernel removed the watch itself */
		s->valid = 0;
		s->noted = 0;
		s->gen++;
	} else if (ev->mask & IN_ATTRIB) {
		if (len == 0)	/* the directory's own, not an entry's */
			s->noted = 0;
	} else if (ev->mask & (IN_DELETE_SELF | IN_UNMOUNT))
		name_slot_drop(s);
	else if (ev->mask & (IN_CREATE | IN_MOVED_TO))
		name_add(s, nm, len);
	else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
		name_remove(s, nm, len);
}

/*
 * Applies the queued changes of the watched directories to their slots.
 * Bounded: a queue that NAME_DRAINS reads do not empty (names changing
 * faster than a lookup drains them) drops the watched slots instead, so
 * no lookup answers from a slot that is behind its directory.
 */
static void
name_drain(void)
{
	struct inotify_event ev;
	ssize_t n, off;
	size_t hdr = sizeof(ev);
	const char *nm;
	int i;

	if (name_inofd < 0)
		return;
	for (i = 0; i < NAME_DRAINS; i++) {
		n = read(name_inofd, name_scanbuf, NAME_SCANBUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			/* cannot tell what changed: back to scanning */
			vfs_name_invalidate();
			return;
		}
		if (n <= 0)
			return;
		for (off = 0; off + (ssize_t)hdr <= n;
		    off += (ssize_t)(hdr + ev.len)) {
			memcpy(&ev, name_scanbuf + off, hdr);
			if (ev.len > (size_t)(n - off) - hdr)
				break;
			nm = (const char *)name_scanbuf + off + hdr;
			name_event(&ev, nm, strnlen(nm, ev.len));
		}
		/* a short read emptied the queue */
		if (n < (ssize_t)(NAME_SCANBUF - hdr - NAME_MAX - 1))
			return;
	}
	vfs_name_invalidate();
}

/*
 * Only local filesystems report every change to inotify; a network or
 * FUSE one reports only what this host did through it.
 */
static int
name_watchable(int dfd)
{
	struct statfs sf;

	if (name_inofd < 0 || fstatfs(dfd, &sf) != 0)
		return 0;
	switch ((unsigned long)sf.f_type) {
	case TMPFS_MAGIC:
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/*
 * Iterates the entries of dfd; for each calls fn.  fn returns 1 to stop.
 * rewind: dfd was read before (a freshly opened one is at its start, and
 * the lseek would be one more syscall per CREATE of a new name).
 */
static int
name_scan(const struct vfs_ops *ops, int dfd,
    int (*fn)(void *, const char *, size_t), void *arg, int rewind)
{
	ssize_t n, off;
	uint16_t reclen;
	const char *nm;
	int rc;

	if (rewind && (rc = ops->rewinddir(dfd)) != 0)
		return rc;
	for (;;) {
		if ((n = ops->getdents(dfd, name_scanbuf, NAME_SCANBUF)) < 0)
			return (int)n;
		if (n == 0)
			return 0;
		for (off = 0; off < n; off += reclen) {
			memcpy(&reclen, name_scanbuf + off + 16, 2);
			nm = (const char *)name_scanbuf + off + 19;
			if (reclen == 0)
				return -EIO;
			if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
				continue;
			if (fn(arg, nm, strlen(nm)))
				return 1;
		}
	}
}

static int
name_fill_cb(void *arg, const char *nm, size_t len)
{
	name_insert(arg, nm, len);
	return 0;
}

struct name_find {
	const char	*want;
	size_t		 len;
	char		*out;
	size_t		 cap;
	int		 found;
};

static int
name_find_cb(void *arg, const char *nm, size_t len)
{
	struct name_find *f = arg;

	if (unicode_casecmp(nm, len, f->want, f->len) != 0 || len >= f->cap)
		return 0;
	memcpy(f->out, nm, len + 1);
	f->found = 1;
	return 1;
}

static struct name_slot *
name_slot_get(const struct vfs_ops *ops, int dfd, const struct vfs_stat *st)
{
	struct name_slot *s, *victim = &name_slots[0];
	int i, rc;

	for (i = 0; i < NAME_SLOTS; i++) {
		s = &name_slots[i];
		if (s->valid && s->dev == st->dev && s->ino == st->ino &&
		    (s->wd >= 0 ||
		    (s->mtime.tv_sec == st->mtime.tv_sec &&
		    s->mtime.tv_nsec == st->mtime.tv_nsec &&
		    s->ctime.tv_sec == st->ctime.tv_sec &&
		    s->ctime.tv_nsec == st->ctime.tv_nsec))) {
			s->lru = ++name_clock;
			return s;
		}
		if (victim->valid && (!s->valid || s->lru < victim->lru))
			victim = s;
	}
	s = victim;
	name_slot_drop(s);
	s->used = s->count = 0;
	s->overflow = 0;
	/* the watch before the scan: a change during it is queued too */
	if (name_watchable(dfd)) {
		char proc[32];

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
		s->wd = inotify_add_watch(name_inofd, proc, NAME_EVENTS);
		if (s->wd < 0)
			s->wd = -1;
	}
	/* dfd: opened by name_lookup's caller just before, not read yet */
	rc = name_scan(ops, dfd, name_fill_cb, s, 0);
	if (rc < 0) {
		name_slot_drop(s);
		return NULL;
	}
	if (!s->overflow)
		name_index(s);
	s->dev = st->dev;
	s->ino = st->ino;
	s->mtime = st->mtime;
	s->ctime = st->ctime;
	s->valid = 1;
	s->lru = ++name_clock;
	return s;
}

/* Finds the real spelling of want in directory dfd; 1 found, 0 not, -errno. */
static int
name_lookup(const struct vfs_ops *ops, int dfd, const char *want, size_t len,
    char *out, size_t cap)
{
	struct name_find f = { want, len, out, cap, 0 };
	struct name_slot *s;
	struct vfs_stat st;
	uint32_t h, b, off, nlen, eh;
	int rc;

	if ((rc = ops->fstat(dfd, &st)) != 0)
		return rc;
	name_drain();
	s = name_slot_get(ops, dfd, &st);
	/* drained just now: a note on this directory holds (watched only) */
	name_looked = s != NULL && s->wd >= 0 ? s : NULL;
	if (s == NULL || s->overflow) {
		rc = name_scan(ops, dfd, name_find_cb, &f, 1);
		return rc < 0 ? rc : f.found;
	}
	h = unicode_casehash(want, len);
	for (b = h & s->mask; s->bucket[b] != 0; b = (b + 1) & s->mask) {
		off = s->bucket[b] - 1;
		memcpy(&eh, s->arena + off, 4);
		if (eh != h)
			continue;
		nlen = name_rec_len(s, off);
		if (nlen & NAME_DEAD)
			continue;
		if (unicode_casecmp(s->arena + off + 6, nlen, want, len) != 0 ||
		    nlen >= cap)
			continue;
		memcpy(out, s->arena + off + 6, nlen);
		out[nlen] = '\0';
		return 1;
	}
	return 0;
}

/*
 * The common miss: the parent exists as spelled and only the last name is
 * new or differs in case.  One open of the parent instead of a stat per
 * component.  1 resolved (or no match there), 0 when the parent itself is
 * missing (the caller walks the components), -errno.
 */
static int
name_resolve_last(const struct vfs_ops *ops, int root, char *path, size_t cap)
{
	char real[NAME_MAX + 1];
	char *slash = strrchr(path, '/');
	const char *last = slash != NULL ? slash + 1 : path;
	size_t llen = strlen(last), rlen, start = (size_t)(last - path);
	size_t plen = slash != NULL ? (size_t)(slash - path) : 0;
	int dfd, rc;

	name_last.slot = NULL;
	if (slash != NULL) {
		*slash = '\0';
		dfd = ops->open(root, path, O_RDONLY | O_DIRECTORY, 0);
		*slash = '/';
	} else
		dfd = ops->open(root, "", O_RDONLY | O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd == -ENOENT || dfd == -ENOTDIR ? 0 : 1;
	name_looked = NULL;
	rc = name_lookup(ops, dfd, last, llen, real, sizeof(real));
	close(dfd);
	if (name_looked != NULL && plen < sizeof(name_last.parent)) {
		name_last.slot = name_looked;
		name_last.gen = name_looked->gen;
		name_last.root = root;
		memcpy(name_last.parent, path, plen);
		name_last.parent[plen] = '\0';
	}
	if (rc <= 0)
		return 1;	/* no such name: left as sent */
	rlen = strlen(real);
	if (start + rlen + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(path + start, real, rlen + 1);
	return 2;
}

/* The slot of root/parent when the last lookup was there, or NULL. */
static struct name_slot *
name_last_dir(int root, const char *parent)
{
	struct name_slot *s = name_last.slot;

	if (s == NULL || !s->valid || s->wd < 0 || s->gen != name_last.gen ||
	    name_last.root != root || strcmp(name_last.parent, parent) != 0)
		return NULL;
	return s;
}

void
vfs_name_dir_note(int root, const char *parent)
{
	struct name_slot *s = name_last_dir(root, parent);

	if (s != NULL)
		s->noted = 1;
}

int
vfs_name_dir_noted(int root, const char *parent)
{
	const struct name_slot *s = name_last_dir(root, parent);

	return s != NULL && s->noted;
}

void
vfs_name_dir_forget(void)
{
	name_last.slot = NULL;
}

int
vfs_name_resolve_miss(const struct vfs_ops *ops, int root, char *path,
    size_t cap)
{
	char before[PATH_MAX];
	size_t n = strlen(path);
	int rc;

	if (path[0] == '\0')
		return 0;
	if ((rc = name_init()) != 0)
		return rc;
	if ((rc = name_resolve_last(ops, root, path, cap)) != 0)
		return rc < 0 ? rc : rc == 2;
	/* a directory on the way differs in case: the general walk */
	if (n >= sizeof(before))
		return -ENAMETOOLONG;
	memcpy(before, path, n + 1);
	if ((rc = vfs_name_resolve(ops, root, path, cap)) != 0)
		return rc;
	return strcmp(before, path) != 0;
}

int
vfs_name_resolve(const struct vfs_ops *ops, int root, char *path, size_t cap)
{
	char real[NAME_MAX + 1];
	struct vfs_stat st;
	size_t start, end, plen, rlen;
	char save;
	int dfd, rc;

	if (path[0] == '\0' || (rc = ops->statat(root, path, &st)) == 0)
		return 0;
	if ((rc == -ENOENT) && (rc = name_init()) == 0 &&
	    (rc = name_resolve_last(ops, root, path, cap)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = name_init()) != 0)
		return rc;
	plen = strlen(path);
	for (start = 0; start < plen; start = end + 1) {
		for (end = start; end < plen && path[end] != '/'; end++)
			;
		save = path[end];
		path[end] = '\0';
		rc = ops->statat(root, path, &st);
		path[end] = save;
		if (rc == 0)
			continue;
		if (rc != -ENOENT)
			return 0;	/* the caller meets the real error */
		if (start == 0)
			dfd = ops->open(root, "", O_RDONLY | O_DIRECTORY, 0);
		else {
			path[start - 1] = '\0';
			dfd = ops->open(root, path, O_RDONLY | O_DIRECTORY, 0);
			path[start - 1] = '/';
		}
		if (dfd < 0)
			return 0;
		save = path[end];
		path[end] = '\0';
		rc = name_lookup(ops, dfd, path + start, end - start, real,
		    sizeof(real));
		path[end] = save;
		close(dfd);
		if (rc <= 0)
			return 0;	/* no such name: leave the rest as sent */
		rlen = strlen(real);
		if (rlen != end - start) {
			/* a fold that changes the UTF-8 length (rare) */
			if (plen - (end - start) + rlen + 1 > cap)
				return -ENAMETOOLONG;
			memmove(path + start + rlen, path + end,
			    plen - end + 1);
			plen = plen - (end - start) + rlen;
			end = start + rlen;
		}
		memcpy(path + start, real, rlen);
	}
	return 0;
}
