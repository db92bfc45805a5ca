#include "daemon/msg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/cur.h"

int
msg_send(int sock, uint32_t type, uint32_t id, const void *payload, size_t len,
    int fd)
{
	uint8_t hdr[MSG_HDR_LEN];
	struct iovec iov[2];
	struct msghdr mh;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cm;
	ssize_t n;

	if (len > MSG_MAX_PAYLOAD)
		return -EMSGSIZE;
	le32_put(hdr, type);
	le32_put(hdr + 4, (uint32_t)len);
	le32_put(hdr + 8, id);
	iov[0].iov_base = hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)(uintptr_t)payload;
	iov[1].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = len > 0 ? 2 : 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(hdr) + len)
		return -EIO;
	return 0;
}

/* Closes every fd carried in the control data except the one we keep. */
static int
msg_take_fds(struct msghdr *mh, int *keep)
{
	struct cmsghdr *c;
	int bad = 0;

	*keep = -1;
	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		size_t nfd, i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		if (c->cmsg_len < CMSG_LEN(0)) {
			bad = 1;
			continue;
		}
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*keep < 0)
				*keep = fd;
			else {
				close(fd);
				bad = 1;
			}
		}
	}
	return bad;
}

int
msg_recv(int sock, struct msg *m, uint8_t *buf, size_t bufsz)
{
	struct iovec iov;
	struct msghdr mh;
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	ssize_t n;
	int fd, bad;

	m->fd = -1;
	iov.iov_base = buf;
	iov.iov_len = bufsz;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	bad = msg_take_fds(&mh, &fd);
	if (n == 0 && fd < 0)
		return -EPIPE;
	if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    (size_t)n < MSG_HDR_LEN || le32_get(buf + 4) != (size_t)n - MSG_HDR_LEN ||
	    le32_get(buf + 4) > MSG_MAX_PAYLOAD) {
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	m->type = le32_get(buf);
	m->len = le32_get(buf + 4);
	m->id = le32_get(buf + 8);
	m->payload = buf + MSG_HDR_LEN;
	m->fd = fd;
	return 0;
}
