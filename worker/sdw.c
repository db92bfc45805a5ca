/*
 * The security descriptor writer (worker/sdw.h).  Why a process of its
 * own: a security.* xattr can be written only with CAP_SYS_ADMIN, which no
 * worker may hold (it is pinned to its user) and which the root master
 * must not spend on parsing descriptors.  This process holds that one
 * capability in an unprivileged account, reads nothing but the request,
 * the file's stat and its stored descriptor, and decides with the NT
 * access check of the stored descriptor plus the kernel's rule for the
 * POSIX side (only the owner changes a file's ACL).
 */

/*
 * Where the descriptor lives, and the threat model.
 *
 * Where it lives, and the threat model.  The descriptor must not be
 * changeable by who may merely write the file, by an ordinary local
 * account, nor by a compromised worker against another user's files.
 * security.* xattrs can be written or removed only with CAP_SYS_ADMIN
 * (the kernel's capability LSM, cap_inode_setxattr) and are read by
 * anyone, like an ACL with getfacl: so the worker reads a descriptor
 * with one fgetxattr (no other process on the path of a CREATE), and
 * only the descriptor writer ("sdw", worker/sdw.c) writes it.  The
 * writer is a child of its own: it serves <lock dir>/sdw.sock
 * (SEQPACKET, 0660 root:usmbd-state, bound as root by the master, or by
 * itself when started without it), drops every capability from the
 * bounding set but CAP_SYS_ADMIN, becomes the usmbd account keeping that
 * one (PR_SET_KEEPCAPS, capset), sets NO_NEW_PRIVS and checks that root
 * is out of reach.  It is not the root master: that one reads no file
 * contents (issue 19).  A request is one datagram, u32 op, u32 which,
 * descriptor, with the open file attached (SCM_RIGHTS, so the caller
 * could reach it; an O_PATH open is reached through /proc/self/fd); the
 * answer is one u32 NTSTATUS.  The writer takes the caller's identity
 * from the kernel (SO_PEERCRED and SO_PEERGROUPS at accept), never from
 * the message, and decides with what it reads itself (fstat, the stored
 * descriptor):
 * - the file's Unix owner may change the descriptor: the kernel lets it
 *   rewrite the POSIX side anyway (chmod, setfacl), and it can never be
 *   locked out of its own file;
 * - anyone else needs WRITE_OWNER under the *stored* descriptor for
 *   owner or group (none stored: refused), and may not change the DACL
 *   at all, since the kernel would not let it change the POSIX ACL
 *   beside it;
 * - the SACL needs SeSecurityPrivilege, whoever owns the file: the
 *   admin group's gid (`server admin group`, looked up at start; a
 *   reload restarts the writer) among the groups the kernel shows for
 *   the caller, which the master gave it and it cannot add to;
 * - the SACL a new file inherits (SDW_OP_INHERIT) needs no privilege,
 *   as on Windows: the writer computes it again from the parent's
 *   stored descriptor (the parent's fd comes beside the file's) and the
 *   caller's identity, and stores it only on a file the caller owns and
 *   only when it is the one sent (sdw_inherit_check);
 * - a label needs what the owner needs, resource attributes what the
 *   DACL needs but not the ownership, scoped policy ids the privilege;
 * - a new owner must be a SID of the caller's token (Windows' rule
 *   without SeRestorePrivilege). So a compromised worker of alice can
 *   store on bob's file only what bob's own descriptor lets alice do to
 *   its owner or group, never bob's DACL; it cannot read bob's files
 *   (the kernel); and a local account can neither write nor remove the
 *   xattr (tested in t/integ/acl.sh).  What a compromised worker can do:
 *   skip its own NT checks (its kernel identity still stands), and mark
 *   share roots (worker/smb2_secdesc.c).  The writer runs under a seccomp allow-list of
 *   its own (worker/confine.c, confine_sdw_filter), so nothing
 *   CAP_SYS_ADMIN would otherwise give (mount, namespaces, bpf, keys,
 *   modules, swap, hostname, file handles, opening a path, exec) is
 *   within reach: see "Confinement".  A writer restart breaks the
 *   workers' connections to it; each connects again at its next request
 *   and retries it once.  At a reload the new writer starts before the
 *   old one ends (daemon/spawn.c), so there is always one to connect to.
 */
#include "worker/sdw.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/capability.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "daemon/msg.h"
#include "proto/cur.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "worker/confine.h"
#include "worker/sdw_decide.h"
#include "worker/worker.h"

#define SDW_ACCOUNT		"usmbd"
#define SDW_FALLBACK		"nobody"
#define SDW_STATE_GROUP		"usmbd-state"
#define SDW_CLIENTS		256
#define SDW_REQ_HDR		8

struct sdw_client {
	int		 fd;	/* -1: free */
	int		 security;	/* holds SeSecurityPrivilege */
	uid_t		 uid;
	gid_t		 gid;
	unsigned	 ngroups;
	gid_t		 groups[NTACL_TOKEN_GROUPS];
};

static struct sdw_client sdw_clients[SDW_CLIENTS];
static uint8_t		sdw_buf[SDW_SD_MAX + 64], sdw_pbuf[SDW_SD_MAX + 64];
static gid_t		sdw_groups[65536];	/* NGROUPS_MAX */
/* `server admin group`, read at start (a reload restarts this process) */
static gid_t		sdw_admin_gid;
static int		sdw_admin_known;

/*
 * As root (the master, daemon/spawn.c, or a writer started without its
 * socket): the socket workers connect to, 0660 root:usmbd-state.  It is
 * bound under a name of its own, then renamed over SDW_SOCK_NAME, so a
 * worker's connect never finds the name missing.
 */
int
sdw_listen_socket(const char *lock_dir)
{
	struct sockaddr_un sun;
	char final[sizeof(sun.sun_path)];
	struct group *gr;
	int s, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(final, sizeof(final), "%s/%s", lock_dir,
	    SDW_SOCK_NAME) >= sizeof(final) ||
	    (size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.%d",
	    final, (int)getpid()) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	(void)unlink(sun.sun_path);
	if (bind(s, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    listen(s, SOMAXCONN) != 0)
		goto fail;
	/*
	 * Without the state group any local account may connect: harmless,
	 * it is judged by its kernel identity like a worker, but the group
	 * keeps the door to the server's own processes.
	 */
	gr = getgrnam(SDW_STATE_GROUP);
	if (gr != NULL) {
		if (chown(sun.sun_path, 0, gr->gr_gid) != 0 ||
		    chmod(sun.sun_path, 0660) != 0)
			goto fail;
	} else if (chmod(sun.sun_path, 0666) != 0)
		goto fail;
	if (rename(sun.sun_path, final) != 0)
		goto fail;
	return s;
fail:
	e = errno;
	(void)unlink(sun.sun_path);
	close(s);
	return -e;
}

static int
sdw_capset(uint32_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[keep / 32].effective = d[keep / 32].permitted = 1u << (keep % 32);
	return (int)syscall(SYS_capset, &h, d);
}

/* Root -> the usmbd account with CAP_SYS_ADMIN alone, checked. */
static int
sdw_drop(void)
{
	struct passwd *pw;
	uid_t uid;
	gid_t gid;
	int cap;

	if ((pw = getpwnam(SDW_ACCOUNT)) == NULL)
		pw = getpwnam(SDW_FALLBACK);
	if (pw == NULL || pw->pw_uid == 0)
		fatalx("sdw: no unprivileged account (%s, %s)", SDW_ACCOUNT,
		    SDW_FALLBACK);
	uid = pw->pw_uid;
	gid = pw->pw_gid;
	for (cap = 0; cap <= 63; cap++)
		if (cap != CAP_SYS_ADMIN && prctl(PR_CAPBSET_DROP, cap, 0, 0,
		    0) != 0 && errno != EINVAL)
			fatal("sdw: PR_CAPBSET_DROP %d", cap);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 ||
	    setgroups(1, &gid) != 0 || setresgid(gid, gid, gid) != 0 ||
	    setresuid(uid, uid, uid) != 0)
		fatal("sdw: privilege drop");
	if (sdw_capset(CAP_SYS_ADMIN) != 0)
		fatal("sdw: capset");
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fatal("sdw: prctl");
	/* root must be out of reach, and nothing but CAP_SYS_ADMIN left */
	if (setresuid(0, 0, 0) == 0 || geteuid() != uid)
		fatalx("sdw: could get root back");
	if (prctl(PR_CAPBSET_READ, CAP_SETUID, 0, 0, 0) != 0 ||
	    prctl(PR_CAPBSET_READ, CAP_DAC_OVERRIDE, 0, 0, 0) != 0)
		fatalx("sdw: capabilities left in the bounding set");
	log_debug(2, "sdw running as %s with CAP_SYS_ADMIN only", pw->pw_name);
	return 0;
}

static void
sdw_accept(int ls, int ep)
{
	struct epoll_event ev;
	struct sdw_client *cl = NULL;
	struct ucred cred;
	socklen_t len;
	int fd, i, n;

	fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	for (i = 0; i < SDW_CLIENTS; i++)
		if (sdw_clients[i].fd < 0) {
			cl = &sdw_clients[i];
			break;
		}
	len = sizeof(cred);
	if (cl == NULL || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred,
	    &len) != 0 || len != sizeof(cred)) {
		log_warnx("sdw: refusing a client (table full or no creds)");
		close(fd);
		return;
	}
	cl->uid = cred.uid;
	cl->gid = cred.gid;
	len = sizeof(sdw_groups);
	/*
	 * The groups the kernel saw at connect (Linux 4.13).  The token
	 * keeps the first NTACL_TOKEN_GROUPS, as the worker's own does
	 * (smb2_secdesc.c): ACEs for groups past them are not matched.
	 */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, sdw_groups, &len) != 0) {
		log_warn("sdw: SO_PEERGROUPS");
		close(fd);
		return;
	}
	n = (int)(len / sizeof(gid_t));
	/*
	 * SeSecurityPrivilege: the admin group among all the groups the
	 * master gave that worker (it cannot add one: no CAP_SETGID).
	 */
	cl->security = sdw_admin_known && cred.gid == sdw_admin_gid;
	for (i = 0; i < n && !cl->security; i++)
		cl->security = sdw_admin_known && sdw_groups[i] == sdw_admin_gid;
	if (n > NTACL_TOKEN_GROUPS)
		n = NTACL_TOKEN_GROUPS;
	memcpy(cl->groups, sdw_groups, (size_t)n * sizeof(gid_t));
	cl->ngroups = (unsigned)n;
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(cl - sdw_clients);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		return;
	}
	cl->fd = fd;
	log_debug(3, "sdw: client uid %u%s", (unsigned)cred.uid,
	    cl->security ? " (SeSecurityPrivilege)" : "");
}

/*
 * A worker's open without data access is an O_PATH fd, which the f*xattr
 * calls refuse (EBADF): its /proc name reaches the same inode, with no
 * path walk (the magic link is the open file).
 */
static ssize_t
sdw_getxattr(int fd, const char *name, void *buf, size_t len)
{
	char p[32];
	ssize_t n = fgetxattr(fd, name, buf, len);

	if (n < 0 && errno == EBADF) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = getxattr(p, name, buf, len);
	}
	return n;
}

static int
sdw_setxattr(int fd, const char *name, const void *buf, size_t len)
{
	char p[32];
	int rc = fsetxattr(fd, name, buf, len, 0);

	if (rc < 0 && errno == EBADF) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		rc = setxattr(p, name, buf, len, 0);
	}
	return rc;
}

/*
 * A stored descriptor as sdw_decide takes it: *p NULL when there is none
 * (or the file system keeps no xattrs), else n bytes in buf.
 */
static ntstatus_t
sdw_read_stored(int fd, uint8_t *buf, size_t len, const uint8_t **p,
    size_t *n)
{
	ssize_t got = sdw_getxattr(fd, SDW_XATTR_SD, buf, len);

	*p = NULL;
	*n = 0;
	if (got < 0)
		return errno == ENODATA || errno == EOPNOTSUPP ?
		    STATUS_SUCCESS : STATUS_ACCESS_DENIED;
	*p = buf;
	*n = (size_t)got;
	return STATUS_SUCCESS;
}

/*
 * SDW_OP_SET (pfd -1) and SDW_OP_INHERIT: read what the decision needs
 * (worker/sdw_decide.c has the rules), then store what it says.
 */
static ntstatus_t
sdw_set(const struct sdw_client *cl, int fd, int pfd, uint32_t which,
    const uint8_t *p, size_t len)
{
	static uint8_t out[SDW_SD_MAX];
	struct sdw_caller who;
	struct sdw_target t;
	uint32_t gids[NTACL_TOKEN_GROUPS];
	struct stat st;
	ntstatus_t status;
	size_t outlen;
	unsigned i;

	if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) ||
	    S_ISDIR(st.st_mode)))
		return STATUS_INVALID_PARAMETER;
	for (i = 0; i < cl->ngroups; i++)
		gids[i] = cl->groups[i];
	who = (struct sdw_caller){ .uid = cl->uid, .gid = cl->gid,
	    .ngroups = cl->ngroups, .groups = gids,
	    .security = cl->security };
	memset(&t, 0, sizeof(t));
	t.owner_uid = st.st_uid;
	t.is_dir = S_ISDIR(st.st_mode);
	t.stored_err = sdw_read_stored(fd, sdw_buf, sizeof(sdw_buf),
	    &t.stored, &t.stored_len);
	if (pfd >= 0) {
		t.inherit = 1;
		t.parent_err = sdw_read_stored(pfd, sdw_pbuf,
		    sizeof(sdw_pbuf), &t.parent, &t.parent_len);
	}
	status = sdw_decide(&who, &t, which, p, len, out, sizeof(out),
	    &outlen);
	if (status != STATUS_SUCCESS || outlen == 0)
		return status;
	if (sdw_setxattr(fd, SDW_XATTR_SD, out, outlen) != 0) {
		log_warn("sdw: storing the descriptor of inode %llu",
		    (unsigned long long)st.st_ino);
		return errno == ENOSPC || errno == E2BIG ?
		    STATUS_INSUFF_SERVER_RESOURCES : STATUS_ACCESS_DENIED;
	}
	return STATUS_SUCCESS;
}

/* A share root: from now on its CREATEs look for stored descriptors. */
static ntstatus_t
sdw_mark(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode))
		return STATUS_INVALID_PARAMETER;
	if (sdw_getxattr(fd, SDW_XATTR_SHARE, NULL, 0) >= 0)
		return STATUS_SUCCESS;
	if (sdw_setxattr(fd, SDW_XATTR_SHARE, "1", 1) != 0)
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
}

static void
sdw_drop_client(struct sdw_client *cl)
{
	close(cl->fd);
	cl->fd = -1;
}

static void
sdw_serve(struct sdw_client *cl)
{
	static uint8_t req[SDW_REQ_HDR + SDW_SD_MAX];
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { req, sizeof(req) };
	struct msghdr mh;
	struct cmsghdr *cm;
	ntstatus_t status = STATUS_INVALID_PARAMETER;
	uint8_t rsp[4];
	uint32_t op, which;
	ssize_t n;
	int fd = -1, pfd = -1;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	n = recvmsg(cl->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* one fd, or two (SDW_OP_INHERIT): every one closed below */
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm != NULL && cm->cmsg_level == SOL_SOCKET &&
	    cm->cmsg_type == SCM_RIGHTS && (cm->cmsg_len ==
	    CMSG_LEN(sizeof(int)) || cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))) {
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		if (cm->cmsg_len == CMSG_LEN(2 * sizeof(int)))
			memcpy(&pfd, CMSG_DATA(cm) + sizeof(int), sizeof(int));
	}
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		goto drop;
	if (fd < 0 || n < SDW_REQ_HDR)
		goto answer;
	op = le32_get(req);
	which = le32_get(req + 4);
	if (op == SDW_OP_SET && pfd < 0)
		status = sdw_set(cl, fd, -1, which, req + SDW_REQ_HDR,
		    (size_t)n - SDW_REQ_HDR);
	else if (op == SDW_OP_INHERIT && pfd >= 0)
		status = sdw_set(cl, fd, pfd, which, req + SDW_REQ_HDR,
		    (size_t)n - SDW_REQ_HDR);
	else if (op == SDW_OP_MARK && pfd < 0 && n == SDW_REQ_HDR)
		status = sdw_mark(fd);
answer:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	le32_put(rsp, status);
	if (send(cl->fd, rsp, sizeof(rsp), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(rsp))
		sdw_drop_client(cl);
	return;
drop:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	sdw_drop_client(cl);
}

/*
 * The master's listening socket (SDW_LISTEN_FD), or -1.  Shared with the
 * writer being replaced at a reload: non-blocking, so that the one whose
 * accept loses the race gets EAGAIN (sdw_accept).
 */
static int
sdw_inherited(void)
{
	int on = 0;
	socklen_t len = sizeof(on);

	if (getsockopt(SDW_LISTEN_FD, SOL_SOCKET, SO_ACCEPTCONN, &on,
	    &len) != 0 || !on)
		return -1;
	if (fcntl(SDW_LISTEN_FD, F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(SDW_LISTEN_FD, F_SETFL, O_NONBLOCK) != 0)
		return -1;
	return SDW_LISTEN_FD;
}

int
sdw_main(struct conf *conf, int chan)
{
	struct epoll_event ev, evs[32];
	uint8_t role[4], buf[MSG_BUF_SIZE];
	int ls, ep, i, n;

	for (i = 0; i < SDW_CLIENTS; i++)
		sdw_clients[i].fd = -1;
	if ((ls = sdw_inherited()) < 0 &&
	    (ls = sdw_listen_socket(conf->lock_dir)) < 0) {
		errno = -ls;
		log_warn("sdw: %s/%s", conf->lock_dir, SDW_SOCK_NAME);
		return 1;
	}
	/* before the drop and the allow-list: NSS may open files */
	if (conf->admin_group != NULL && conf->admin_group[0] != '\0') {
		struct group *gr = getgrnam(conf->admin_group);

		if (gr != NULL) {
			sdw_admin_gid = gr->gr_gid;
			sdw_admin_known = 1;
		} else
			log_warnx("sdw: server admin group %s: no such group",
			    conf->admin_group);
	}
	if (sdw_drop() != 0)
		return 1;
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return 1;
	/*
	 * An allow-list of what it does from here on (worker/confine.c):
	 * whatever CAP_SYS_ADMIN would otherwise give (mount, namespaces,
	 * bpf, keys, swap, file handles, opening files, exec...) is out of
	 * reach; left is the xattr writing on the files it is handed.
	 */
	if ((i = confine_sdw()) != 0) {
		errno = -i;
		log_warn("sdw: cannot confine itself (seccomp)");
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)-1;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev) != 0)
		return 1;
	ev.data.u64 = (uint64_t)-2;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, chan, &ev) != 0)
		return 1;
	le32_put(role, MSG_ROLE_SDW);
	if (msg_send(chan, MSG_HELLO, 0, role, sizeof(role), -1) != 0)
		return 1;
	for (;;) {
		n = epoll_wait(ep, evs, 32, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 1;
		for (i = 0; i < n; i++) {
			uint64_t k = evs[i].data.u64;

			if (k == (uint64_t)-1) {
				sdw_accept(ls, ep);
				continue;
			}
			if (k == (uint64_t)-2) {
				struct msg m;
				int rc = msg_recv(chan, &m, buf, sizeof(buf));

				if (rc == -EPIPE || (rc == 0 &&
				    m.type == MSG_SHUTDOWN))
					return 0;
				/*
				 * It cannot read a new config (no open under
				 * its allow-list): the master starts a
				 * successor at a reload and ends this one
				 * with MSG_SHUTDOWN once that one serves
				 * (spawn.c); no MSG_RELOAD comes.
				 */
				if (rc == 0 && m.fd >= 0)
					close(m.fd);
				continue;
			}
			if (k < SDW_CLIENTS && sdw_clients[k].fd >= 0)
				sdw_serve(&sdw_clients[k]);
		}
	}
}
