/*
 * Small helpers shared by the unit tests (each check_*.c is its own
 * program, so everything here is static inline).
 */
#ifndef USMBD_T_TESTLIB_H
#define USMBD_T_TESTLIB_H

#include <check.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Decodes a hex string into a malloc'd buffer (free it); *len its size. */
static inline uint8_t *
test_hex(const char *s, size_t *len)
{
	size_t n = strlen(s) / 2, i;
	uint8_t *b = malloc(n ? n : 1);
	unsigned v;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(sscanf(s + 2 * i, "%2x", &v), 1);
		b[i] = (uint8_t)v;
	}
	*len = n;
	return b;
}

/*
 * A loopback TCP connection: the server's end returned, the client's in
 * *cli and the client's port (its getsockname) in *cport.
 */
static inline int
test_tcp_pair(int *cli, uint16_t *cport)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int l, s;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &al), 0);
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(*cli, 0);
	ck_assert_int_eq(connect(*cli, (struct sockaddr *)&a, sizeof(a)), 0);
	s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(s, 0);
	close(l);
	al = sizeof(a);
	ck_assert_int_eq(getsockname(*cli, (struct sockaddr *)&a, &al), 0);
	*cport = ntohs(a.sin_port);
	return s;
}

#endif
