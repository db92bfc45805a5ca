#include "daemon/usermap.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

/* The next word of *p (quoted or not) into w; 0 when there is none. */
static int
usermap_word(char **p, char *w, size_t cap)
{
	char *s = *p, end = ' ';
	size_t n = 0;

	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	if (*s == '\0')
		return 0;
	if (*s == '"') {
		end = '"';
		s++;
	}
	while (*s != '\0' && (end == '"' ? *s != '"' :
	    !isspace((unsigned char)*s))) {
		if (n + 1 < cap)
			w[n++] = *s;
		s++;
	}
	if (*s == '"')
		s++;
	w[n] = '\0';
	*p = s;
	return 1;
}

/* Does the right-hand side of a line name `name`? */
static int
usermap_matches(char *rhs, const char *name)
{
	char w[USERMAP_LINE_MAX];

	while (usermap_word(&rhs, w, sizeof(w)))
		if (strcmp(w, "*") == 0 || strcasecmp(w, name) == 0)
			return 1;
	return 0;
}

int
usermap_lookup(FILE *f, const char *name, char *out, size_t cap)
{
	char line[USERMAP_LINE_MAX], unix_name[USERMAP_LINE_MAX];
	char *p, *eq, *lhs;
	int found = 0, stop;
	size_t n;

	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#' || *p == ';')
			continue;
		stop = *p == '!';
		if (stop)
			p++;
		if ((eq = strchr(p, '=')) == NULL)
			continue;
		*eq = '\0';
		lhs = p;
		if (!usermap_word(&lhs, unix_name, sizeof(unix_name)) ||
		    !usermap_matches(eq + 1, name))
			continue;
		n = strlen(unix_name);
		if (n + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out, unix_name, n + 1);
		found = 1;
		if (stop)
			break;
	}
	return found;
}
