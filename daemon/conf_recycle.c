/*
 * The share keys that name a place inside the share, the snapshot
 * directory (worker/snapshot.h) and the recycle bin's (worker/recycle.h):
 * what conf_finish checks of them once a share has all its values.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * The recycle directory, like the snapshot directory, names a place inside
 * the share (relative, no ".."); %U (the user) is the only substitution,
 * once: the component that holds it is each user's own directory.
 * The maximum size takes Samba's K, M, G suffixes.
 */
int
conf_recycle_check(struct conf_share *s, char *why, size_t cap)
{
	char *d = s->recycle_dir, *m = s->recycle_max_size_s, *end, *q;
	unsigned long long v;
	size_t n, len;
	int bad = 0, nuser = 0;

	if (s->recycle_exclude != NULL && s->recycle_exclude[0] == '\0') {
		free(s->recycle_exclude);
		s->recycle_exclude = NULL;
	}
	if (s->recycle_exclude_dir != NULL && s->recycle_exclude_dir[0] == '\0') {
		free(s->recycle_exclude_dir);
		s->recycle_exclude_dir = NULL;
	}
	s->recycle_max_size = 0;
	if (m != NULL && m[0] != '\0') {
		errno = 0;
		v = strtoull(m, &end, 10);
		switch (toupper((unsigned char)*end)) {
		case 'K': v = v > (~0ULL >> 10) ? ~0ULL : v << 10; end++; break;
		case 'M': v = v > (~0ULL >> 20) ? ~0ULL : v << 20; end++; break;
		case 'G': v = v > (~0ULL >> 30) ? ~0ULL : v << 30; end++; break;
		default: break;
		}
		if (!isdigit((unsigned char)m[0]) || errno != 0 || *end != '\0' ||
		    v == ~0ULL) {
			snprintf(why, cap, "recycle max size '%s' is not a "
			    "size in bytes (K, M, G allowed)", m);
			return -1;
		}
		s->recycle_max_size = v;
	}
	if (d == NULL)
		return 0;
	n = strlen(d);
	while (n > 0 && d[n - 1] == '/')
		d[--n] = '\0';
	if (n == 0) {
		free(d);
		s->recycle_dir = NULL;
		return 0;
	}
	if (d[0] == '/' || strchr(d, '\\') != NULL || strstr(d, "//") != NULL)
		bad = 1;
	/* every component: not "." nor ".."; '%' only in one "%U" */
	for (q = d; !bad; q += len + 1) {
		size_t i;

		len = strcspn(q, "/");
		if ((len == 1 && q[0] == '.') ||
		    (len == 2 && q[0] == '.' && q[1] == '.'))
			bad = 1;
		for (i = 0; i < len; i++)
			if (q[i] == '%' && (i + 1 == len || q[i + 1] != 'U' ||
			    nuser++ > 0))
				bad = 1;
		if (q[len] == '\0')
			break;
	}
	if (bad) {
		snprintf(why, cap, "recycle directory '%s' must be a directory "
		    "inside the share, relative to its path, %%U at most once",
		    d);
		return -1;
	}
	/*
	 * Nothing moves into a snapshot (read-only over SMB): every delete
	 * would fall back to a real one.  Names compared in any case, as a
	 * case-insensitive lookup would find them (conf_snapshot_check ran
	 * first: no trailing '/').
	 */
	if (s->snapshot_dir != NULL) {
		len = strlen(s->snapshot_dir);
		if (strncasecmp(d, s->snapshot_dir, len) == 0 &&
		    (d[len] == '\0' || d[len] == '/')) {
			snprintf(why, cap, "recycle directory '%s' is inside "
			    "the snapshot directory '%s'", d, s->snapshot_dir);
			return -1;
		}
	}
	return 0;
}

/*
 * The snapshot directory is looked up beneath the share's root like any
 * client path, so it names a place inside the share: relative, no "..".
 * A trailing '/' goes; an empty value means none.
 */
int
conf_snapshot_check(struct conf_share *s, char *why, size_t cap)
{
	char *d = s->snapshot_dir;
	size_t n;

	if (s->snapshot_format != NULL && s->snapshot_format[0] == '\0') {
		free(s->snapshot_format);	/* empty: the default */
		s->snapshot_format = NULL;
	}
	if (d == NULL)
		return 0;
	n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	if (n == 0) {
		free(d);
		s->snapshot_dir = NULL;
		return 0;
	}
	if (d[0] == '/' || strcmp(d, "..") == 0 || strncmp(d, "../", 3) == 0 ||
	    strstr(d, "/../") != NULL ||
	    (n >= 3 && strcmp(d + n - 3, "/..") == 0) ||
	    strcmp(d, ".") == 0 || strchr(d, '\\') != NULL) {
		snprintf(why, cap, "snapshot directory '%s' must be a directory "
		    "inside the share, relative to its path", d);
		return -1;
	}
	return 0;
}
