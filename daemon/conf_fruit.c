/*
 * The fruit keys of a share (worker/fruit.h): whether `vfs objects` names
 * fruit, and the time machine size, checked once the share has all its
 * values (conf_finish).
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Samba's conv_str_size: a number with an optional K, M, G, T or P. */
static int
conf_fruit_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	case 'P': shift = 50; end++; break;
	default: break;
	}
	if (*end != '\0' || v > (~0ULL >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int
conf_fruit_check(struct conf_share *s, char *why, size_t cap)
{
	const char *p = s->vfs_objects;
	size_t n;

	/* a list separated by spaces, commas or tabs, as Samba's */
	s->fruit = 0;
	while (p != NULL && *p != '\0') {
		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == 5 && strncasecmp(p, "fruit", 5) == 0)
			s->fruit = 1;
		p += n;
	}
	/*
	 * fruit:veto_appledouble (default yes), as Samba's fruit_connect:
	 * "._*" names join `veto files`, so that the "._" files holding
	 * resource forks are neither listed nor opened by name.  Before
	 * the patterns are compiled (conf_share_namepats).
	 */
	if (s->fruit && s->fruit_veto_appledouble &&
	    (s->veto_files == NULL || strstr(s->veto_files, "/._*/") == NULL)) {
		char *v;

		const char *was = s->veto_files != NULL ? s->veto_files : "";
		size_t wl = strlen(was);

		if (asprintf(&v, "%s%s._*/", was,
		    wl > 0 && was[wl - 1] == '/' ? "" : "/") < 0) {
			snprintf(why, cap, "out of memory");
			return -1;
		}
		free(s->veto_files);
		s->veto_files = v;
	}
	s->fruit_tm_max_size = 0;
	if (s->fruit_tm_max_size_s != NULL && s->fruit_tm_max_size_s[0] != '\0' &&
	    conf_fruit_size(s->fruit_tm_max_size_s, &s->fruit_tm_max_size) < 0) {
		snprintf(why, cap, "fruit:time machine max size '%s' is not a "
		    "size in bytes (K, M, G, T allowed)", s->fruit_tm_max_size_s);
		return -1;
	}
	return 0;
}
