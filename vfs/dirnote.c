/*
 * Directories known to have no stored security descriptor, for the
 * creates that do no case-insensitive lookup (a POSIX handle, a share
 * with `case sensitive = yes`): without it such a create below a
 * directory on a marked share reads the parent's descriptor each time
 * (an O_PATH open, a getxattr answering ENODATA, a close).  The name
 * cache's note (vfs/name.c) cannot serve them: it is trusted only right
 * after the lookup that drained its inotify queue.
 *
 * Why fanotify, not inotify.  An inotify watch of a directory also
 * reports its entries' attribute changes, and every create writes the
 * new file's DOS attributes (an xattr): the queue would fill at each
 * create and have to be read.  A fanotify inode mark without
 * FAN_EVENT_ON_CHILD reports the directory's own changes only
 * (FAN_ATTRIB: any setxattr or removexattr of it, by whoever, queued
 * inside that call), and unprivileged processes may make one (Linux
 * 5.13, with FAN_REPORT_FID, on a directory they may read).
 *
 * What a note says.  "parent", a path below the share root (dev, ino),
 * resolved through directories only (no symlink: O_PATH | O_NOFOLLOW,
 * one component at a time), had no descriptor when read, and since the
 * marks made before that read no component saw FAN_ATTRIB (the parent's
 * xattr, or a rename over an empty one), FAN_MOVE_SELF or
 * FAN_DELETE_SELF (the path now names another directory).  Every
 * component from the share root down is marked, so a rename of any of
 * them forgets the notes.  Any event, or a lost one (the queue
 * overflowed), forgets every note and flushes every mark: events are
 * rare (only the marked directories' own changes) and each costs one
 * walk again.  A mount over a component (root only) is not seen.
 *
 * Learning of an event without a system call.  The worker's io_uring
 * holds a multishot poll of the fanotify fd (worker/uring.c): fsnotify
 * queues the event and wakes the poll inside the setxattr, which queues
 * its completion ahead of the receive of any request sent after that
 * setxattr returned (both run, in order, inside the worker's own
 * io_uring_enter: DEFER_TASKRUN), and uring_reap takes it as it comes,
 * before handing the batch to the loop, so vfs_dirnote_event runs
 * before that request does.  Once the
 * multishot poll ended (or could not be armed) each look reads the fd
 * first: one read instead of three calls.  A worker without the ring
 * (epoll only) makes no note: worker/uring.c starts this.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "vfs/vfs.h"

#define DN_SLOTS	32
#define DN_PATH		256
#define DN_DEPTH	16
#define DN_EVENTS	(FAN_ATTRIB | FAN_MOVE_SELF | FAN_DELETE_SELF | \
			 FAN_ONDIR)
#define DN_READS	64

struct dn_slot {
	int		 used;
	int		 none;		/* no descriptor, read after the marks */
	uint64_t	 dev, ino;	/* the share root's */
	char		 path[DN_PATH];
};

static struct dn_slot	dn_slots[DN_SLOTS];
static int		dn_used;
static int		dn_fd = -1;
static int		dn_armed;
static uint8_t		dn_buf[4096];

int
vfs_dirnote_init(void)
{
	if (dn_fd < 0)
		dn_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID |
		    FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY);
	return dn_fd;
}

void
vfs_dirnote_armed(int on)
{
	dn_armed = on && dn_fd >= 0;
}

static void
dn_forget_all(void)
{
	int i;

	if (dn_used == 0)
		return;
	for (i = 0; i < DN_SLOTS; i++)
		dn_slots[i].used = 0;
	dn_used = 0;
	(void)fanotify_mark(dn_fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
}

/* Reads the queue empty: 1 when something came (or cannot tell). */
static int
dn_drain(void)
{
	ssize_t n;
	int got = 0, i;

	for (i = 0; i < DN_READS; i++) {
		n = read(dn_fd, dn_buf, sizeof(dn_buf));
		if (n > 0) {
			got = 1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return got || (n < 0 && errno != EAGAIN);
	}
	return 1;
}

void
vfs_dirnote_event(void)
{
	if (dn_fd >= 0 && dn_drain())
		dn_forget_all();
}

static struct dn_slot *
dn_find(uint64_t dev, uint64_t ino, const char *parent)
{
	int i;

	for (i = 0; i < DN_SLOTS; i++)
		if (dn_slots[i].used && dn_slots[i].dev == dev &&
		    dn_slots[i].ino == ino &&
		    strcmp(dn_slots[i].path, parent) == 0)
			return &dn_slots[i];
	return NULL;
}

static int
dn_mark(int fd)
{
	char proc[32];

	/* an O_PATH fd: its /proc name is the open file itself */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return fanotify_mark(dn_fd, FAN_MARK_ADD, DN_EVENTS, AT_FDCWD, proc);
}

/*
 * Marks root and each directory of parent under it, walking one
 * component at a time without following a symlink.  0, or -1: no note.
 */
static int
dn_mark_walk(int root, const char *parent)
{
	char comp[NAME_MAX + 1];
	const char *p = parent, *e;
	int cur = root, fd, depth = 0, rc = 0;
	size_t len;

	if (dn_mark(root) != 0)
		return -1;
	while (*p != '\0') {
		e = strchr(p, '/');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == 0 || len >= sizeof(comp) || ++depth > DN_DEPTH ||
		    (p[0] == '.' && (len == 1 || (len == 2 && p[1] == '.')))) {
			rc = -1;
			break;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY |
		    O_CLOEXEC);
		if (cur != root)
			close(cur);
		cur = fd;
		if (fd < 0 || dn_mark(fd) != 0) {
			rc = -1;
			break;
		}
		p = e != NULL ? e + 1 : p + len;
	}
	if (cur >= 0 && cur != root)
		close(cur);
	return rc;
}

int
vfs_dirnote_noted(uint64_t dev, uint64_t ino, const char *parent)
{
	const struct dn_slot *s;

	if (dn_fd < 0)
		return 0;
	if (!dn_armed)
		vfs_dirnote_event();	/* nothing tells us: read */
	s = dn_find(dev, ino, parent);
	return s != NULL && s->none;
}

int
vfs_dirnote_watch(int root, uint64_t dev, uint64_t ino, const char *parent)
{
	struct dn_slot *s;
	int i;

	if (dn_fd < 0 || strlen(parent) >= DN_PATH)
		return -1;
	if (dn_find(dev, ino, parent) != NULL)
		return 0;
	if (dn_used == DN_SLOTS)
		dn_forget_all();
	for (i = 0; i < DN_SLOTS && dn_slots[i].used; i++)
		;
	if (i == DN_SLOTS || dn_mark_walk(root, parent) != 0)
		return -1;	/* marks made stay until the next flush */
	s = &dn_slots[i];
	s->used = 1;
	s->none = 0;
	s->dev = dev;
	s->ino = ino;
	memcpy(s->path, parent, strlen(parent) + 1);
	dn_used++;
	return 0;
}

void
vfs_dirnote_none(uint64_t dev, uint64_t ino, const char *parent)
{
	struct dn_slot *s = dn_find(dev, ino, parent);

	if (s != NULL)
		s->none = 1;
}
