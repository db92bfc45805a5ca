/*
 * Samba's variable substitutions (smb.conf(5), VARIABLE SUBSTITUTIONS) in
 * a share's path and in its user lists, and the [homes] section's checks
 * at load (daemon/conf.h, struct conf_subst).
 *
 * The values come from the session (the master's verdict), the passwd
 * and group databases (read by the worker once, worker/homes.c), the
 * configuration and the socket; never from a client's bytes but %S, the
 * share name it asked for, which for a home share is a user name found in
 * passwd.  Whatever their source, a value is refused when it could name
 * another place than the one it stands for: empty, ".", "..", or holding
 * '/' (%H, a home directory, is a path: it must be absolute).  A path
 * made of them is refused when any component is "." or "..".  Unknown
 * letters are kept as written, as Samba keeps them.  No allocation: the
 * caller gives the buffer (a TREE_CONNECT's stack).
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The letters usmbd substitutes: %U %u %G %g %H %S %L %N %h %I, and %%. */
static const char conf_subst_known[] = "UuGgHSLNhI";
/* Samba substitutes these too; usmbd keeps them as written (a warning). */
static const char conf_subst_samba_only[] = "DMmaTtdvRwVJijP$";

static const char *
conf_subst_value(const struct conf_subst *v, char letter)
{
	switch (letter) {
	case 'U': return v->user;
	case 'u': return v->unix_user;
	case 'G':
	case 'g': return v->group;
	case 'H': return v->home;
	case 'S': return v->share;
	case 'L':
	case 'N': return v->server;
	case 'h': return v->host;
	case 'I': return v->client;
	default:  return NULL;
	}
}

int
conf_subst_value_ok(const char *val, int is_path)
{
	if (val == NULL || val[0] == '\0')
		return 0;
	/* a home of "/" alone would serve the whole system (Samba's rule) */
	if (is_path)
		return val[0] == '/' && strspn(val, "/") != strlen(val);
	return strcmp(val, ".") != 0 && strcmp(val, "..") != 0 &&
	    strchr(val, '/') == NULL;
}

/* 1 when no component of the absolute path p is "." or "..". */
static int
conf_subst_path_ok(const char *p)
{
	size_t len;

	if (p[0] != '/')
		return 0;
	for (;;) {
		p += strspn(p, "/");
		if (*p == '\0')
			return 1;
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += len;
	}
}

int
conf_subst(const char *tmpl, const struct conf_subst *v, int flags,
    char *out, size_t cap)
{
	size_t n = 0, len;
	const char *p, *val;

	if (cap == 0)
		return -ENAMETOOLONG;
	for (p = tmpl; *p != '\0'; p++) {
		char add[2] = { *p, '\0' };

		val = add;
		if (p[0] == '%' && p[1] == '%') {
			p++;
		} else if (p[0] == '%' && p[1] != '\0' &&
		    strchr(conf_subst_known, p[1]) != NULL) {
			val = conf_subst_value(v, p[1]);
			if (!conf_subst_value_ok(val, p[1] == 'H'))
				return -EINVAL;
			p++;
		}
		len = strlen(val);
		if (n + len >= cap)
			return -ENAMETOOLONG;
		memcpy(out + n, val, len);
		n += len;
	}
	out[n] = '\0';
	if ((flags & CONF_SUBST_PATH) && !conf_subst_path_ok(out))
		return -EINVAL;
	return 0;
}

int
conf_subst_uses(const char *tmpl, char letter)
{
	const char *p;

	for (p = tmpl; p != NULL && *p != '\0'; p++) {
		if (p[0] != '%' || p[1] == '\0')
			continue;
		if (p[1] == letter && letter != '%')
			return 1;
		p++;	/* "%%" and "%X" are one unit */
	}
	return 0;
}

int
conf_subst_varies(const char *tmpl)
{
	const char *k;

	for (k = conf_subst_known; *k != '\0'; k++)
		if (conf_subst_uses(tmpl, *k))
			return 1;
	return 0;
}

/*
 * A share's path template and the [homes] section, once the share has
 * all its values (conf_finish).  The path's letters that Samba would
 * substitute and usmbd does not are a warning in warn (kept as written);
 * what cannot work is an error in why.
 */
int
conf_subst_check(struct conf_share *s, char *why, size_t cap)
{
	const char *p;

	s->path_varies = s->path != NULL && conf_subst_varies(s->path);
	if (s->path == NULL)
		return 0;	/* [homes]: the user's home directory */
	if (s->path[0] != '/' && strncmp(s->path, "%H", 2) != 0) {
		snprintf(why, cap, "path '%s' is neither absolute nor %%H", s->path);
		return -1;
	}
	/* the admin's own text: a "." or ".." component is never meant */
	if (!conf_subst_path_ok(s->path[0] == '/' ? s->path : s->path + 2) &&
	    strcmp(s->path, "%H") != 0) {
		snprintf(why, cap, "path '%s' has a \".\" or \"..\" component",
		    s->path);
		return -1;
	}
	for (p = s->path; (p = strchr(p, '%')) != NULL; p += 2) {
		if (p[1] == '\0')
			break;
		if (p[1] != '%' && strchr(conf_subst_samba_only, p[1]) != NULL) {
			snprintf(why, cap, "path '%s': %%%c is not substituted "
			    "by usmbd (kept as written)", s->path, p[1]);
			return 1;
		}
	}
	return 0;
}

const struct conf_share *
conf_homes(const struct conf *c)
{
	int i;

	for (i = 1; c != NULL && i < c->nshares; i++)
		if (c->shares[i].is_homes)
			return &c->shares[i];
	return NULL;
}
