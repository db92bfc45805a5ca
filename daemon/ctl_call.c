/*
 * The client side of the control protocol (daemon/ctl.h), used by usmbctl.
 * Kept apart from daemon/ctl.c so usmbctl links none of the master.
 */
#include "daemon/ctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int
ctl_socket_path(const char *lock_dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", lock_dir, CTL_SOCKET_NAME);

	if (n < 0 || (size_t)n >= len ||
	    (size_t)n >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int
ctl_call(const char *sock_path, const char *request, FILE *out, char *err,
    size_t errlen)
{
	struct sockaddr_un sun;
	char buf[4096], first[512];
	size_t flen = 0;
	int fd, rc = -EIO, got_first = 0, i;
	ssize_t n;

	if (err != NULL && errlen > 0)
		*err = '\0';
	if (strlen(sock_path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -errno;
	{
		struct timeval tv = { .tv_sec = 15 };

		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		rc = -errno;
		goto out;
	}
	snprintf(buf, sizeof(buf), "%s\n", request);
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) != (ssize_t)strlen(buf)) {
		rc = -EIO;
		goto out;
	}
	/* Bounded: at most 64 MiB of answer. */
	for (i = 0; i < 16384; i++) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (got_first) {
			fwrite(buf, 1, (size_t)n, out);
			continue;
		}
		{
			char *nl = memchr(buf, '\n', (size_t)n);
			size_t take = nl != NULL ? (size_t)(nl - buf) : (size_t)n;

			if (flen + take >= sizeof(first))
				take = sizeof(first) - 1 - flen;
			memcpy(first + flen, buf, take);
			flen += take;
			if (nl != NULL) {
				got_first = 1;
				first[flen] = '\0';
				fwrite(nl + 1, 1, (size_t)(buf + n - nl - 1), out);
			}
		}
	}
	if (!got_first) {
		rc = -EIO;
		goto out;
	}
	if (strcmp(first, "OK") == 0)
		rc = 0;
	else if (strncmp(first, "ERR", 3) == 0) {
		rc = 1;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s", first[3] == ' ' ? first + 4 :
			    first + 3);
	} else
		rc = -EPROTO;
out:
	close(fd);
	return rc;
}
