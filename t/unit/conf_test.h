/*
 * What the config unit tests share (t/unit/check_conf*.c, each its own
 * program, so everything here is static): a config written to a temp
 * file and loaded, its messages kept, and "FILE:LINE: ..." checks.
 */
#ifndef USMBD_T_CONF_TEST_H
#define USMBD_T_CONF_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"

static char path[64];		/* the config file of the test */
static char errs[8192];		/* what the last load said */

static inline void
conf_test_setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/check_conf.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static inline void
conf_test_teardown(void)
{
	unlink(path);
}

/* Writes the bytes to the temp file and loads it; messages land in errs. */
static inline int
load_bytes(const char *bytes, size_t n, struct conf **c)
{
	FILE *fp = fopen(path, "w"), *ef;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	ck_assert_ptr_nonnull(fp);
	fwrite(bytes, 1, n, fp);
	fclose(fp);
	ef = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(ef);
	rc = conf_load(path, c, ef);
	fclose(ef);
	snprintf(errs, sizeof(errs), "%s", buf ? buf : "");
	free(buf);
	return rc;
}

static inline int
load(const char *text, struct conf **c)
{
	return load_bytes(text, strlen(text), c);
}

/* expected uses '^' for the file name */
static inline void
assert_msgs(const char *expected)
{
	char want[8192];
	size_t n = 0;

	for (; *expected != '\0' && n + 64 < sizeof(want); expected++) {
		if (*expected == '^')
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%s", path);
		else
			want[n++] = *expected;
	}
	want[n] = '\0';
	ck_assert_str_eq(errs, want);
}

/* A config that must fail with exactly these messages. */
static inline void
assert_fails(const char *text, const char *expected)
{
	struct conf *c = (void *)1;

	ck_assert_int_eq(load(text, &c), 2);
	ck_assert_ptr_null(c);
	assert_msgs(expected);
}

#endif
