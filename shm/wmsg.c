/*
 * Worker <-> worker messages: unix datagram sockets lockdir/msg/PID/s, so a
 * worker of one user can tell a worker of another user that its lease must
 * break, that a lock was released, or that a directory changed.  The sender
 * is taken from the kernel's credentials (SO_PASSCRED), not from the payload.
 *
 * Mailboxes are private.  msg/ belongs to root (0710, state group): only
 * the master makes entries in it.  Before a worker starts, the master makes
 * msg/PID (shm_wmsg_prepare: whatever an earlier process of that pid left
 * is removed first) owned by the worker's uid, group the state group, mode
 * 02710: the state group may reach the socket inside (0660) but not
 * create, rename or remove anything there, so no worker can replace
 * another's socket and receive its breaks, lock wakes and notifications,
 * nor squat the name of a worker still to come.  The master removes the
 * directory when the worker is gone (shm_wmsg_remove).
 *
 * Datagram v1: u8 'W', u8 version, u8 type, u64 dev, u64 ino,
 *   u64 persistent id, u8 is_lease, lease key[16], client guid[16],
 *   u32 level, u16 epoch, u32 action, u32 filter, u16 name length, name.
 */

/*
 * Mailbox permissions.
 *
 * - Mailboxes (shm/wmsg.c): msg/ is 0710 root:usmbd-state and only the
 *   master makes entries: before a worker execs, its forked child (still
 *   root) removes whatever an earlier process of that pid left at
 *   msg/PID and makes msg/PID 02710 owned by the worker's uid, group
 *   usmbd-state; the worker binds msg/PID/s (0660).  Another worker can
 *   send to it but not remove, rename or add anything, nor squat the
 *   name of a worker to come. The master removes msg/PID when it reaps
 *   the worker; a fresh start empties msg/.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/cur.h"
#include "shm/shm.h"

#define WMSG_MAGIC	'W'
#define WMSG_V1		1
#define WMSG_FIXED	(3 + 8 + 8 + 8 + 1 + 16 + 16 + 4 + 2 + 4 + 4 + 2)
#define WMSG_MAX	(WMSG_FIXED + SHM_WMSG_NAME_MAX)

struct shm_wmsg {
	int		 fd;
	pid_t		 self;
	char		 dir[PATH_MAX];
	struct sockaddr_un addr;
	uint8_t		 buf[WMSG_MAX + 1];
};

static int
wmsg_addr(struct sockaddr_un *sa, const char *dir, pid_t pid)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/msg/%d/s",
	    dir, (int)pid) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

/* Removes msg/NAME (a mailbox directory and its socket, or a stray file). */
static int
wmsg_remove_at(int mfd, const char *name)
{
	int dfd;

	dfd = openat(mfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		DIR *d = fdopendir(dfd);
		struct dirent *e;

		if (d == NULL) {
			close(dfd);
			return -errno;
		}
		/* Anything the owner put there goes too. */
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0)
				(void)unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
		if (unlinkat(mfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (unlinkat(mfd, name, 0) == -1 && errno != ENOENT)
		return -errno;
	return 0;
}

static int
wmsg_open_dir(const char *dir)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/msg", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int
shm_wmsg_prepare(const char *dir, pid_t pid, uid_t uid)
{
	char name[16];
	struct stat st;
	int mfd, rc;

	if ((mfd = wmsg_open_dir(dir)) < 0)
		return mfd == -ENAMETOOLONG ? mfd : -errno;
	snprintf(name, sizeof(name), "%d", (int)pid);
	/* The group of msg/ is the state group (shm_prepare), or root's. */
	if (fstat(mfd, &st) == -1) {
		rc = -errno;
		goto out;
	}
	if ((rc = wmsg_remove_at(mfd, name)) != 0)
		goto out;
	if (mkdirat(mfd, name, 0700) == -1) {
		rc = -errno;
		goto out;
	}
	if (fchownat(mfd, name, uid, st.st_gid, AT_SYMLINK_NOFOLLOW) == -1 ||
	    fchmodat(mfd, name, 02710, 0) == -1) {
		rc = -errno;
		(void)unlinkat(mfd, name, AT_REMOVEDIR);
	}
out:
	close(mfd);
	return rc;
}

int
shm_wmsg_remove(const char *dir, pid_t pid)
{
	char name[16];
	int mfd, rc;

	if ((mfd = wmsg_open_dir(dir)) < 0)
		return mfd == -ENAMETOOLONG ? mfd : -errno;
	snprintf(name, sizeof(name), "%d", (int)pid);
	rc = wmsg_remove_at(mfd, name);
	close(mfd);
	return rc;
}

int
shm_wmsg_clear(const char *dir)
{
	struct dirent *e;
	DIR *d;
	int mfd, rc = 0;

	if ((mfd = wmsg_open_dir(dir)) < 0)
		return mfd == -ENAMETOOLONG ? mfd : -errno;
	if ((d = fdopendir(mfd)) == NULL) {
		rc = -errno;
		close(mfd);
		return rc;
	}
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    (rc = wmsg_remove_at(dirfd(d), e->d_name)) != 0)
			break;
	closedir(d);
	return rc;
}

int
shm_wmsg_open(const char *dir, pid_t self, struct shm_wmsg **out)
{
	struct shm_wmsg *m;
	int on = 1, rc;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -ENOMEM;
	m->fd = -1;
	m->self = self;
	if ((size_t)snprintf(m->dir, sizeof(m->dir), "%s", dir) >= sizeof(m->dir) ||
	    (rc = wmsg_addr(&m->addr, dir, self)) != 0) {
		rc = -ENAMETOOLONG;
		goto fail;
	}
	m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->fd == -1 ||
	    setsockopt(m->fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == -1) {
		rc = -errno;
		goto fail;
	}
	/*
	 * The directory is fresh for this process (shm_wmsg_prepare), and
	 * only its owner -- this process's uid -- may leave a socket in it.
	 */
	(void)unlink(m->addr.sun_path);
	if (bind(m->fd, (struct sockaddr *)&m->addr, sizeof(m->addr)) == -1 ||
	    chmod(m->addr.sun_path, 0660) == -1) {
		rc = -errno;
		goto fail;
	}
	*out = m;
	return 0;
fail:
	if (m->fd != -1)
		close(m->fd);
	free(m);
	return rc;
}

int
shm_wmsg_fd(const struct shm_wmsg *m)
{
	return m->fd;
}

size_t
shm_wmsg_encode(uint8_t *buf, size_t size, const struct shm_wmsg_msg *msg)
{
	struct wcur w;
	size_t n = strnlen(msg->name, SHM_WMSG_NAME_MAX);

	wcur_init(&w, buf, size);
	wcur_u8(&w, WMSG_MAGIC);
	wcur_u8(&w, WMSG_V1);
	wcur_u8(&w, msg->type);
	wcur_le64(&w, msg->fid.dev);
	wcur_le64(&w, msg->fid.ino);
	wcur_le64(&w, msg->persistent_id);
	wcur_u8(&w, msg->is_lease ? 1 : 0);
	wcur_bytes(&w, msg->lease_key, SHM_GUID_LEN);
	wcur_bytes(&w, msg->client_guid, SHM_GUID_LEN);
	wcur_le32(&w, msg->level);
	wcur_le16(&w, msg->epoch);
	wcur_le32(&w, msg->action);
	wcur_le32(&w, msg->filter);
	/* A name that fills the array has no NUL: it is cut to fit, not read past. */
	if (n == SHM_WMSG_NAME_MAX)
		n--;
	wcur_le16(&w, (uint16_t)n);
	wcur_bytes(&w, msg->name, n);
	return w.err ? 0 : wcur_off(&w);
}

int
shm_wmsg_decode(const uint8_t *buf, size_t len, struct shm_wmsg_msg *msg)
{
	struct cur c;
	size_t n;

	cur_init(&c, buf, len);
	if (cur_u8(&c) != WMSG_MAGIC || cur_u8(&c) != WMSG_V1)
		return -EBADMSG;
	msg->type = cur_u8(&c);
	msg->fid.dev = cur_le64(&c);
	msg->fid.ino = cur_le64(&c);
	msg->persistent_id = cur_le64(&c);
	msg->is_lease = cur_u8(&c) != 0;
	cur_bytes(&c, msg->lease_key, SHM_GUID_LEN);
	cur_bytes(&c, msg->client_guid, SHM_GUID_LEN);
	msg->level = cur_le32(&c);
	msg->epoch = cur_le16(&c);
	msg->action = cur_le32(&c);
	msg->filter = cur_le32(&c);
	n = cur_le16(&c);
	if (n >= SHM_WMSG_NAME_MAX)
		return -EBADMSG;
	cur_bytes(&c, msg->name, n);
	msg->name[n] = '\0';
	/* Exact length: trailing bytes are as wrong as missing ones. */
	if (c.err || cur_left(&c) != 0)
		return -EBADMSG;
	if (msg->type < SHM_WMSG_BREAK || msg->type > SHM_WMSG_BREAK_WAIT)
		return -EBADMSG;
	return 0;
}

int
shm_wmsg_send(struct shm_wmsg *m, pid_t to, const struct shm_wmsg_msg *msg)
{
	struct sockaddr_un sa;
	size_t len;
	int rc;

	if ((rc = wmsg_addr(&sa, m->dir, to)) != 0)
		return rc;
	if ((len = shm_wmsg_encode(m->buf, sizeof(m->buf), msg)) == 0)
		return -EINVAL;
	if (sendto(m->fd, m->buf, len, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (struct sockaddr *)&sa, sizeof(sa)) == -1)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return 0;
}

int
shm_wmsg_recv(struct shm_wmsg *m, struct shm_wmsg_msg *msg)
{
	union {
		struct cmsghdr	hdr;
		uint8_t		buf[CMSG_SPACE(sizeof(struct ucred))];
	} cbuf;
	struct iovec iov = { m->buf, sizeof(m->buf) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *cm;
	struct ucred cred;
	ssize_t n;
	int rc;

	n = recvmsg(m->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n == -1)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	memset(msg, 0, sizeof(*msg));
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EBADMSG;
	if ((rc = shm_wmsg_decode(m->buf, (size_t)n, msg)) != 0)
		return rc;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
			msg->from = cred.pid;
		}
	}
	return 0;
}

int
shm_wmsg_wake(struct shm_wmsg *m, const struct shm_pids *p,
    const struct shm_file_id *fid)
{
	struct shm_wmsg_msg msg;
	int rc, ret = 0;

	if (p == NULL || p->n == 0)
		return 0;
	memset(&msg, 0, sizeof(msg));
	msg.type = SHM_WMSG_LOCK_RELEASED;
	if (fid != NULL)
		msg.fid = *fid;
	for (unsigned i = 0; i < p->n; i++) {
		/* A waiter that died meanwhile is no error. */
		rc = shm_wmsg_send(m, p->pid[i], &msg);
		if (rc != 0 && rc != -ECONNREFUSED && rc != -ENOENT && ret == 0)
			ret = rc;
	}
	return ret;
}

void
shm_wmsg_close(struct shm_wmsg *m)
{
	if (m == NULL)
		return;
	if (m->fd != -1) {
		close(m->fd);
		(void)unlink(m->addr.sun_path);
	}
	free(m);
}
