/*
 * Previous versions: a share's snapshots, listed and opened
 * (worker/snapshot.h).
 *
 * The snapshot directory is read with the user's own rights, through the
 * share's root like any client path (beneath it, no link out), so a user
 * who may not list it is offered no previous versions, and a snapshot
 * directory that leads outside the share is refused as such a path would
 * be.  A snapshot is named by the client with a time only; the name opened
 * is one read from the directory, never one the client spelled.
 */
#include "worker/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/fscc.h"
#include "worker/conn.h"
#include "worker/file_open.h"

/* struct linux_dirent64: d_ino, d_off, d_reclen at 16, d_type at 18, name */
#define DIRENT_RECLEN_OFF	16
#define DIRENT_TYPE_OFF		18
#define DIRENT_NAME_OFF		19
#define SNAPSHOT_DENTS_BUF	8192
/* One token in the array: UTF-16 with its terminating NUL. */
#define SNAPSHOT_TOKEN_BYTES	(2 * (SNAPSHOT_TOKEN_LEN + 1))

int
snapshot_path_in(const struct conf_share *sh, const char *path)
{
	const char *d = sh != NULL ? sh->snapshot_dir : NULL;
	size_t n;

	if (d == NULL || d[0] == '\0')
		return 0;
	n = strlen(d);
	if ((sh->case_sensitive ? strncmp(path, d, n) :
	    strncasecmp(path, d, n)) != 0)
		return 0;
	return path[n] == '\0' || path[n] == '/';
}

int
snapshot_name_time(const char *name, const char *fmt, int64_t *t)
{
	struct tm tm;
	const char *end;
	time_t v;

	memset(&tm, 0, sizeof(tm));
	end = strptime(name, fmt, &tm);
	if (end == NULL || *end != '\0')
		return -1;
	tm.tm_isdst = 0;
	v = timegm(&tm);
	if (v == (time_t)-1 || v < 0)
		return -1;
	*t = (int64_t)v;
	return 0;
}

void
snapshot_token(int64_t t, char *buf)
{
	struct tm tm;
	time_t v = (time_t)t;

	if (gmtime_r(&v, &tm) == NULL ||
	    strftime(buf, SNAPSHOT_TOKEN_LEN + 1, "@GMT-%Y.%m.%d-%H.%M.%S",
	    &tm) != SNAPSHOT_TOKEN_LEN)
		memcpy(buf, "@GMT-1970.01.01-00.00.00", SNAPSHOT_TOKEN_LEN + 1);
}

ntstatus_t
snapshot_array_put(struct wcur *w, const int64_t *times, unsigned n,
    uint32_t maxout)
{
	char tok[SNAPSHOT_TOKEN_LEN + 1];
	uint32_t size = n > 0 ? n * SNAPSHOT_TOKEN_BYTES + 2 : 0;
	unsigned i, k;

	if (maxout < 16)
		return STATUS_INVALID_PARAMETER;
	wcur_le32(w, n);
	if (n == 0 || 12 + (uint64_t)size > maxout) {
		/* MS-SMB2 3.3.5.15.1: the counts and the size it takes */
		wcur_le32(w, 0);
		wcur_le32(w, size);
		wcur_le32(w, 0);
		return w->err ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
	}
	wcur_le32(w, n);
	wcur_le32(w, size);
	for (i = 0; i < n; i++) {
		snapshot_token(times[i], tok);
		for (k = 0; k <= SNAPSHOT_TOKEN_LEN; k++)
			wcur_le16(w, (uint8_t)tok[k]);
	}
	wcur_le16(w, 0);
	return w->err ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

typedef int (*snapshot_fn)(void *arg, const char *name, int64_t t);

/* Calls fn for each entry of the snapshot directory named by the format. */
static int
snapshot_scan(const struct tree *tree, snapshot_fn fn, void *arg)
{
	const struct conf_share *sh = tree->share;
	const struct vfs_ops *vfs = file_vfs();
	uint8_t buf[SNAPSHOT_DENTS_BUF];
	const char *fmt;
	ssize_t n;
	int dfd, rc = 0;

	if (sh == NULL || sh->snapshot_dir == NULL || tree->root_fd < 0)
		return -ENOENT;
	fmt = sh->snapshot_format != NULL ? sh->snapshot_format :
	    SNAPSHOT_FORMAT_DEFAULT;
	dfd = vfs->open(tree->root_fd, sh->snapshot_dir, O_RDONLY |
	    O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd;
	while (rc == 0 && (n = vfs->getdents(dfd, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (rc == 0 && off + DIRENT_NAME_OFF < (size_t)n) {
			const char *name = (const char *)buf + off +
			    DIRENT_NAME_OFF;
			uint16_t reclen;
			uint8_t type = buf[off + DIRENT_TYPE_OFF];
			int64_t t;

			memcpy(&reclen, buf + off + DIRENT_RECLEN_OFF,
			    sizeof(reclen));
			if (reclen <= DIRENT_NAME_OFF ||
			    off + reclen > (size_t)n ||
			    memchr(name, '\0', reclen - DIRENT_NAME_OFF) ==
			    NULL)
				break;
			/* a snapshot is a directory (a link is never one) */
			if ((type == DT_DIR || type == DT_UNKNOWN) &&
			    snapshot_name_time(name, fmt, &t) == 0)
				rc = fn(arg, name, t);
			off += reclen;
		}
		if (off == 0)
			break;
	}
	if (rc == 0 && n < 0)
		rc = (int)n;
	close(dfd);
	return rc;
}

struct snapshot_times {
	int64_t		*times;
	unsigned	 max, n;
};

/* Keeps the newest max times, newest first. */
static int
snapshot_collect(void *arg, const char *name, int64_t t)
{
	struct snapshot_times *st = arg;
	unsigned i;

	(void)name;
	if (st->max == 0)
		return 0;
	if (st->n == st->max) {
		if (t <= st->times[st->n - 1])
			return 0;
		st->n--;		/* the oldest makes room */
	}
	for (i = st->n; i > 0 && st->times[i - 1] < t; i--)
		st->times[i] = st->times[i - 1];
	st->times[i] = t;
	st->n++;
	return 0;
}

int
snapshot_list(const struct tree *tree, int64_t *times, unsigned max)
{
	struct snapshot_times st = { times, max, 0 };
	int rc;

	rc = snapshot_scan(tree, snapshot_collect, &st);
	return rc < 0 ? rc : (int)st.n;
}

struct snapshot_find {
	int64_t		 t;
	char		*name;
	size_t		 len;
	int		 found;
};

static int
snapshot_match(void *arg, const char *name, int64_t t)
{
	struct snapshot_find *sf = arg;

	if (t != sf->t)
		return 0;
	if ((size_t)snprintf(sf->name, sf->len, "%s", name) >= sf->len)
		return -ENAMETOOLONG;
	sf->found = 1;
	return 1;
}

ntstatus_t
snapshot_path(const struct tree *tree, uint64_t ft, char *path, size_t len)
{
	char name[256], rest[FILE_PATH_MAX];
	struct snapshot_find sf;
	int rc, w;

	if (ft < FSCC_TIME_UNIX_EPOCH)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	sf.t = (int64_t)((ft - FSCC_TIME_UNIX_EPOCH) / 10000000u);
	sf.name = name;
	sf.len = sizeof(name);
	sf.found = 0;
	rc = snapshot_scan(tree, snapshot_match, &sf);
	if (rc < 0 || !sf.found)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest))
		return STATUS_OBJECT_NAME_INVALID;
	w = snprintf(path, len, "%s/%s%s%s", tree->share->snapshot_dir, name,
	    rest[0] != '\0' ? "/" : "", rest);
	if (w < 0 || (size_t)w >= len)
		return STATUS_OBJECT_NAME_INVALID;
	return STATUS_SUCCESS;
}

size_t
snapshot_name_skip(const struct conf_share *sh, const char *stored,
    const char *client)
{
	const char *p, *slash;
	size_t n, c = strlen(client);

	if (!snapshot_path_in(sh, stored))
		return 0;
	p = stored + strlen(sh->snapshot_dir);
	if (*p != '/' || p[1] == '\0' || p[1] == '/')
		return 0;
	slash = strchr(p + 1, '/');
	if (c == 0)		/* the root of a snapshot: no name after it */
		return slash == NULL ? strlen(stored) : 0;
	if (slash == NULL)
		return 0;
	n = (size_t)(slash + 1 - stored);
	if (strlen(stored + n) != c || (sh->case_sensitive ?
	    strcmp(stored + n, client) : strcasecmp(stored + n, client)) != 0)
		return 0;
	return n;
}

ntstatus_t
snapshot_enumerate(const struct tree *tree, struct wcur *out,
    uint32_t maxout)
{
	int64_t times[SNAPSHOT_MAX];
	int n;

	if (tree->share == NULL || tree->share->snapshot_dir == NULL)
		return STATUS_INVALID_DEVICE_REQUEST;
	/* a directory the user may not list offers nothing */
	n = snapshot_list(tree, times, SNAPSHOT_MAX);
	if (n < 0) {
		log_debug(2, "snapshots of [%s]: %s", tree_name(tree),
		    strerror(-n));
		n = 0;
	}
	return snapshot_array_put(out, times, (unsigned)n, maxout);
}
