/*
 * Delete-on-close across users (worker/unlink_as.h).
 *
 * The asking side sends what identifies the file: the share name and the
 * share-relative path it was opened under, and its dev and ino.  The master
 * routes by the uid alone and adds the share's root from its config; it
 * never touches the file.  The answering side trusts nothing of the path:
 * it opens the root, resolves the parent beneath it (vfs openat2
 * RESOLVE_BENEATH, never a concatenated string), and unlinks the last name
 * only when it is still the same inode -- a file created in its place since
 * the close is left alone.  A replacement between that check and the
 * unlinkat(2) cannot be excluded (POSIX has no unlink-by-inode); the window
 * is one syscall wide.
 */
#include "worker/unlink_as.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "daemon/unlinkmsg.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"

/* One request at a time in a single-threaded worker: off the stack. */
static struct unlinkmsg	unlink_as_msg;
static uint8_t		unlink_as_buf[MSG_MAX_PAYLOAD];

int
unlink_as_request(const struct tree *t, const struct file_open *f,
    uint32_t uid)
{
	struct unlinkmsg *u = &unlink_as_msg;
	int n, rc;

	if (t == NULL || t->share == NULL || f->path[0] == '\0' || uid == 0)
		return -EINVAL;
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->dev = f->dev;
	u->ino = f->ino;
	u->is_dir = f->is_dir != 0;
	if (strlen(t->share->name) >= sizeof(u->share) ||
	    strlen(f->path) >= sizeof(u->path))
		return -ENAMETOOLONG;
	strcpy(u->share, t->share->name);
	strcpy(u->path, f->path);
	n = unlinkmsg_encode(u, 0, unlink_as_buf, sizeof(unlink_as_buf));
	if (n < 0)
		return -EMSGSIZE;
	rc = msg_send(MSG_CHILD_FD, MSG_UNLINK_AS, 0, unlink_as_buf, (size_t)n, -1);
	if (rc != 0)
		log_warnx("delete on close of \"%s\" as uid %u: cannot ask the "
		    "master: %s", f->path, uid, strerror(-rc));
	else
		log_debug(2, "delete on close of \"%s\": asked a worker of uid %u",
		    f->path, uid);
	return rc;
}

/* Unlinks u->path beneath root_fd if it still is dev/ino: 0 or -errno. */
static int
unlink_as_do(const struct unlinkmsg *u, int root_fd)
{
	const struct vfs_ops *vfs = file_vfs();
	char parent[MSG_UNLINK_STR_MAX];
	const char *last;
	struct vfs_stat st;
	int pfd, rc;

	last = strrchr(u->path, '/');
	if (last == NULL) {
		parent[0] = '\0';
		last = u->path;
	} else {
		memcpy(parent, u->path, (size_t)(last - u->path));
		parent[last - u->path] = '\0';
		last++;
	}
	if (last[0] == '\0' || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
		return -EINVAL;
	pfd = vfs->open(root_fd, parent, O_PATH | O_DIRECTORY, 0);
	if (pfd < 0)
		return pfd;
	/* The backend's own dev/ino encoding, a final symlink not followed. */
	if ((rc = vfs->entstat(pfd, last, &st)) != 0)
		goto out;
	if (st.dev != u->dev || st.ino != u->ino ||
	    (S_ISDIR(st.mode) != 0) != (u->is_dir != 0)) {
		rc = -ESTALE;
		goto out;
	}
	rc = unlinkat(pfd, last, u->is_dir ? AT_REMOVEDIR : 0) < 0 ? -errno : 0;
out:
	close(pfd);
	return rc;
}

void
unlink_as_handle(const struct msg *m)
{
	struct unlinkmsg *u = &unlink_as_msg;
	int root_fd, rc;

	if (unlinkmsg_decode(u, 1, m->payload, m->len) != 0) {
		log_warnx("malformed MSG_UNLINK_DO (%u bytes) ignored", m->len);
		return;
	}
	/* The master picked this worker by uid; a mismatch is its bug. */
	if (u->uid != (uint32_t)geteuid()) {
		log_warnx("delete on close of \"%s\" for uid %u sent to uid %u: "
		    "ignored", u->path, u->uid, (unsigned)geteuid());
		return;
	}
	if (u->path[0] == '\0' || u->path[0] == '/' || u->root[0] != '/') {
		log_warnx("delete on close: bad path \"%s\" or root \"%s\"",
		    u->path, u->root);
		return;
	}
	root_fd = open(u->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = unlink_as_do(u, root_fd);
	close(root_fd);
out:
	if (rc == 0)
		log_info("delete on close of %s\\%s done for another user's "
		    "last close", u->share, u->path);
	else if (rc == -ESTALE)
		log_info("delete on close of %s\\%s: the name is now another "
		    "file (dev/ino changed): not deleted", u->share, u->path);
	else
		log_info("delete on close of %s\\%s as uid %u failed: %s",
		    u->share, u->path, u->uid, strerror(-rc));
}
