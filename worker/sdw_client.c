/*
 * The worker's side of the descriptor writer (worker/sdw.h): one
 * connection, made at the first request and kept; a request waits for its
 * answer (a SET_INFO of a descriptor is rare; nothing else waits on it).
 */
#include "worker/sdw.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/log.h"
#include "proto/cur.h"

static int	sdw_sock = -1;

static int
sdw_connect(const char *lock_dir)
{
	struct sockaddr_un sun;
	int s;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s",
	    lock_dir, SDW_SOCK_NAME) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		int e = errno;

		close(s);
		return -e;
	}
	return s;
}

static ntstatus_t
sdw_exchange(int fd, int pfd, uint32_t op, uint32_t which,
    const uint8_t *sd, size_t len)
{
	static uint8_t hdr[8];
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	int fds[2] = { fd, pfd }, nfd = pfd >= 0 ? 2 : 1;
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)sd, len } };
	struct pollfd pl = { sdw_sock, POLLIN, 0 };
	struct msghdr mh;
	struct cmsghdr *cm;
	uint8_t rsp[4];
	ssize_t n;

	le32_put(hdr, op);
	le32_put(hdr + 4, which);
	memset(&mh, 0, sizeof(mh));
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = iov;
	mh.msg_iovlen = len > 0 ? 2 : 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)nfd * sizeof(int));
	if (sendmsg(sdw_sock, &mh, MSG_NOSIGNAL) != (ssize_t)(sizeof(hdr) +
	    len))
		return (ntstatus_t)-1;
	if (poll(&pl, 1, SDW_TIMEOUT_MS) != 1)
		return (ntstatus_t)-1;
	n = recv(sdw_sock, rsp, sizeof(rsp), 0);
	if (n != (ssize_t)sizeof(rsp))
		return (ntstatus_t)-1;
	return le32_get(rsp);
}

ntstatus_t
sdw_request(const char *lock_dir, uint32_t op, int fd, int pfd,
    uint32_t which, const uint8_t *sd, size_t len)
{
	ntstatus_t status;
	int tries;

	if (len > SDW_SD_MAX)
		return STATUS_INVALID_SECURITY_DESCR;
	/* a writer restarted since: connect again, once */
	for (tries = 0; tries < 2; tries++) {
		if (sdw_sock < 0 && (sdw_sock = sdw_connect(lock_dir)) < 0) {
			log_warnx("descriptor writer %s/%s: %s", lock_dir,
			    SDW_SOCK_NAME, strerror(-sdw_sock));
			sdw_sock = -1;
			return STATUS_INTERNAL_ERROR;
		}
		status = sdw_exchange(fd, pfd, op, which, sd, len);
		if (status != (ntstatus_t)-1)
			return status;
		close(sdw_sock);
		sdw_sock = -1;
	}
	log_warnx("descriptor writer: no answer");
	return STATUS_INTERNAL_ERROR;
}
