/*
 * Small helpers shared by the unit tests (each check_*.c is its own
 * program, so everything here is static inline).
 */
#ifndef USMBD_T_TESTLIB_H
#define USMBD_T_TESTLIB_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
