/*
 * The DFS keys of a share (worker/dfs.h), checked once the share has all
 * its values (conf_finish): `msdfs proxy` must name at least one
 * \server\share target, written as Samba takes it (a leading backslash
 * or not, several separated by commas).
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dfs.h"

int
conf_dfs_check(struct conf_share *s, char *why, size_t cap)
{
	struct dfs_target t[DFS_MAX_TARGETS];
	char text[1024];
	int n, i;

	if (s->msdfs_proxy == NULL)
		return 0;
	if (s->msdfs_proxy[0] == '\0') {
		free(s->msdfs_proxy);
		s->msdfs_proxy = NULL;
		return 0;
	}
	/* the same reading as an msdfs link's text */
	if ((size_t)snprintf(text, sizeof(text), "msdfs:%s", s->msdfs_proxy) >=
	    sizeof(text) || (n = dfs_link_parse(text, strlen(text), t,
	    DFS_MAX_TARGETS)) < 0) {
		snprintf(why, cap, "msdfs proxy \"%s\": not a \\server\\share "
		    "list", s->msdfs_proxy);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (memchr(t[i].p, '\\', t[i].len) == NULL &&
		    memchr(t[i].p, '/', t[i].len) == NULL) {
			snprintf(why, cap, "msdfs proxy \"%s\": a target "
			    "without a share", s->msdfs_proxy);
			return -1;
		}
	return 0;
}
