/*
 * Name patterns of the share keys `veto files` and `hide files`.
 *
 * Samba's syntax: a list of entries separated by '/', each a file name in
 * which '*' stands for any run of characters and '?' for one, as in
 * "/.DS_Store/Thumbs.db/._*.plist/".  Empty entries are skipped; spaces
 * belong to the name.
 * A list is compiled once, when the configuration is loaded, into one
 * block (entries and their text), so a request matches it without
 * allocating.  Matching compares code points, upper-cased unless the share
 * is case sensitive, with the folding the case-insensitive name lookup uses
 * (proto/unicode.c): every spelling that lookup would take to a name is
 * matched by the pattern that matches the name.
 */
#include "daemon/conf.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/unicode.h"

/* The longest entry: a component's limit in bytes (file_open.c refuses more). */
#define NAMEPAT_ENTRY_MAX	255

struct conf_namepat_ent {
	uint32_t	 off;		/* in text */
	uint16_t	 len;
	uint8_t		 wild;		/* holds '*' or '?' */
	uint8_t		 ascii;		/* only bytes < 0x80 */
	/*
	 * A wild entry's literal ends: the ASCII bytes before its first
	 * wildcard and after its last '*' ("._*" 2 and 0, "*.tmp" 0 and 4),
	 * which a name must begin and end with; tested first, a byte compare
	 * that turns most names away before the matcher runs.
	 */
	uint8_t		 head;
	uint8_t		 tail;
};

struct conf_namepat {
	uint32_t	 n;
	const char	*text;		/* inside this block, after ent[] */
	struct conf_namepat_ent ent[];
};

/* Calls fn for each non-empty entry of list; stops at the first non-zero. */
static int
namepat_each(const char *list, int (*fn)(void *, const char *, size_t),
    void *arg)
{
	const char *p = list, *e;
	int rc;

	while (*p != '\0') {
		e = strchr(p, '/');
		if (e == NULL)
			e = p + strlen(p);
		if (e > p && (rc = fn(arg, p, (size_t)(e - p))) != 0)
			return rc;
		p = *e == '/' ? e + 1 : e;
	}
	return 0;
}

static void
namepat_ends(const char *s, size_t len, uint8_t *head, uint8_t *tail)
{
	size_t h = 0, t = 0;

	while (h < len && s[h] != '*' && s[h] != '?' &&
	    (unsigned char)s[h] < 0x80)
		h++;
	while (t < len && s[len - 1 - t] != '*' && s[len - 1 - t] != '?' &&
	    (unsigned char)s[len - 1 - t] < 0x80)
		t++;
	/* a tail counts only when a '*' ends it, and never overlaps the head */
	if (t == len || s[len - 1 - t] != '*' || t > len - h)
		t = 0;
	*head = (uint8_t)h;
	*tail = (uint8_t)t;
}

struct namepat_build {
	struct conf_namepat *np;	/* NULL while counting */
	uint32_t	 n;
	size_t		 bytes;
	char		*hint;
	size_t		 cap;
};

static int
namepat_entry_cb(void *arg, const char *s, size_t len)
{
	struct namepat_build *b = arg;
	struct conf_namepat_ent *e;
	size_t i;

	if (len > NAMEPAT_ENTRY_MAX) {
		snprintf(b->hint, b->cap, "entry \"%.32s...\" is longer than "
		    "%d bytes", s, NAMEPAT_ENTRY_MAX);
		return -EINVAL;
	}
	if (memchr(s, '\\', len) != NULL) {
		snprintf(b->hint, b->cap, "entry \"%.*s\" holds a '\\' (entries "
		    "are names, not paths)", (int)len, s);
		return -EINVAL;
	}
	if (b->np != NULL) {
		e = &b->np->ent[b->n];
		e->off = (uint32_t)b->bytes;
		e->len = (uint16_t)len;
		e->wild = memchr(s, '*', len) != NULL ||
		    memchr(s, '?', len) != NULL;
		e->ascii = 1;
		for (i = 0; i < len; i++)
			if ((unsigned char)s[i] >= 0x80)
				e->ascii = 0;
		namepat_ends(s, len, &e->head, &e->tail);
		memcpy((char *)b->np->text + b->bytes, s, len);
		((char *)b->np->text)[b->bytes + len] = '\0';
	}
	b->n++;
	b->bytes += len + 1;
	return 0;
}

int
conf_namepat_compile(const char *list, struct conf_namepat **out, char *hint,
    size_t cap)
{
	struct namepat_build b = { NULL, 0, 0, hint, cap };
	size_t head;
	int rc;

	*out = NULL;
	if (list == NULL)
		return 0;
	if ((rc = namepat_each(list, namepat_entry_cb, &b)) != 0)
		return rc;
	if (b.n == 0)
		return 0;
	head = sizeof(struct conf_namepat) + b.n *
	    sizeof(struct conf_namepat_ent);
	if ((b.np = calloc(1, head + b.bytes)) == NULL)
		return -ENOMEM;
	b.np->text = (const char *)b.np + head;
	b.n = 0;
	b.bytes = 0;
	(void)namepat_each(list, namepat_entry_cb, &b);
	b.np->n = b.n;
	*out = b.np;
	return 0;
}

void
conf_namepat_free(struct conf_namepat *np)
{
	free(np);
}

static uint32_t
namepat_fold(uint32_t c, int cs)
{
	if (cs)
		return c;
	if (c < 0x80)
		return c >= 'a' && c <= 'z' ? c - 0x20 : c;
	return unicode_upper(c);
}

/*
 * A '*' and '?' match of name against pat, code point by code point.  One
 * backtrack point suffices: a later '*' supersedes an earlier one, since
 * whatever the earlier one would absorb extra the later one can too.
 */
static int
namepat_glob(const char *p, const char *pe, const char *n, const char *ne,
    int cs)
{
	const char *star = NULL, *resume = NULL, *q, *m;
	uint32_t pc, nc;

	while (n < ne) {
		if (p < pe && *p == '*') {
			star = ++p;
			resume = n;
			continue;
		}
		if (p < pe) {
			q = p;
			m = n;
			pc = unicode_utf8_next(&q, pe);
			nc = unicode_utf8_next(&m, ne);
			if (pc == '?' || namepat_fold(pc, cs) ==
			    namepat_fold(nc, cs)) {
				p = q;
				n = m;
				continue;
			}
		}
		if (star == NULL)
			return 0;
		/* the last '*' takes one more code point of the name */
		p = star;
		(void)unicode_utf8_next(&resume, ne);
		n = resume;
	}
	while (p < pe && *p == '*')
		p++;
	return p == pe;
}

/* Not strncasecmp: that follows the locale; names fold as proto/unicode.c. */
static int
namepat_ascii_eq(const char *a, const char *b, size_t len, int cs)
{
	size_t i;

	if (cs)
		return memcmp(a, b, len) == 0;
	for (i = 0; i < len; i++)
		if (namepat_fold((unsigned char)a[i], 0) !=
		    namepat_fold((unsigned char)b[i], 0))
			return 0;
	return 1;
}

int
conf_namepat_match(const struct conf_namepat *np, const char *name,
    size_t len, int case_sensitive)
{
	const struct conf_namepat_ent *e;
	const char *s;
	uint32_t i;

	if (np == NULL || len == 0)
		return 0;
	/* "." and ".." are never matched, as Samba (a ".*" entry) */
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	for (i = 0; i < np->n; i++) {
		e = &np->ent[i];
		s = np->text + e->off;
		if (!e->wild) {
			if (case_sensitive || e->ascii) {
				/* an ASCII name folds to one of the same length */
				if (e->len != len)
					continue;
				if (namepat_ascii_eq(s, name, len, case_sensitive))
					return 1;
				continue;
			}
			if (unicode_casecmp(s, e->len, name, len) == 0)
				return 1;
			continue;
		}
		/* an ASCII pattern byte never matches a non-ASCII name's */
		if (e->head + e->tail > len ||
		    !namepat_ascii_eq(s, name, e->head, case_sensitive) ||
		    !namepat_ascii_eq(s + e->len - e->tail, name + len - e->tail,
		    e->tail, case_sensitive))
			continue;
		if (namepat_glob(s, s + e->len, name, name + len,
		    case_sensitive))
			return 1;
	}
	return 0;
}

int
conf_namepat_path(const struct conf_namepat *np, const char *path,
    int case_sensitive)
{
	const char *p = path, *e;

	if (np == NULL)
		return 0;
	while (*p != '\0') {
		e = strchr(p, '/');
		if (e == NULL)
			return conf_namepat_match(np, p, strlen(p),
			    case_sensitive) ? 1 : 0;
		if (conf_namepat_match(np, p, (size_t)(e - p), case_sensitive))
			return 2;
		p = e + 1;
	}
	return 0;
}

int
conf_share_namepats(struct conf_share *s, char *hint, size_t cap)
{
	static const struct {
		size_t		 list, pat;
		const char	*key;
	} keys[] = {
		{ offsetof(struct conf_share, veto_files),
		  offsetof(struct conf_share, veto_pat), "veto files" },
		{ offsetof(struct conf_share, hide_files),
		  offsetof(struct conf_share, hide_pat), "hide files" },
		{ offsetof(struct conf_share, veto_oplock_files),
		  offsetof(struct conf_share, veto_oplock_pat),
		  "veto oplock files" },
	};
	struct conf_namepat **pat;
	const char *list;
	size_t i, n;
	int rc;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		pat = (struct conf_namepat **)(void *)((char *)s + keys[i].pat);
		conf_namepat_free(*pat);
		*pat = NULL;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		list = *(char **)(void *)((char *)s + keys[i].list);
		pat = (struct conf_namepat **)(void *)((char *)s + keys[i].pat);
		if ((rc = conf_namepat_compile(list, pat, hint, cap)) != 0) {
			if (rc == -EINVAL) {
				n = strlen(hint);
				snprintf(hint + n, cap - n, " in %s",
				    keys[i].key);
			}
			return rc;
		}
	}
	return 0;
}
