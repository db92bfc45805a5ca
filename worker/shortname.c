/*
 * 8.3 short names of a share (worker/shortname.h).  Nothing here costs a
 * request that does not use short names: a listing of `mangled names =
 * yes` pays the generator per name that is not 8.3 (no system call); a
 * lookup pays only when the name was not found and a component has the
 * short-name shape.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "proto/fscc.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/namerule.h"
#include "worker/shortname.h"

/*
 * Short names this worker gave out (FileAlternateNameInformation, an
 * open by one), by share, directory and short name, so that a name
 * recreated by its short name after its file was deleted gets its long
 * name back.  The last SN_CACHE given out, the oldest replaced first: a
 * direct-mapped table lost a name to any other of its slot, and the
 * slot moved with the share's address from run to run, so whether a
 * name came back was chance.  Searched only where a short-shaped name
 * was not found or one is given out; a lost entry only means the short
 * name is taken as typed, as any other name.
 */
#define SN_CACHE	256

struct sn_entry {
	uint64_t	 dir;		/* hash of share and directory; 0 free */
	char		 sname[MANGLE_MAX + 1];
	char		 lname[256];
};

static struct sn_entry sn_cache[SN_CACHE];
static unsigned sn_next;	/* the oldest entry: the next to replace */

int
shortname_on(const struct conf_share *sh)
{
	return sh != NULL && sh->mangled_names != MANGLED_NAMES_NO;
}

size_t
shortname_listing(const struct conf_share *sh, const char *name, size_t len,
    uint8_t *out16)
{
	char sn[MANGLE_MAX + 1];
	size_t n, i;

	if (sh == NULL || sh->mangled_names != MANGLED_NAMES_YES)
		return 0;
	/* an 8.3 name comes back as itself: it lists no short name */
	n = mangle_make(name, len, sn);
	if (n == len && memcmp(sn, name, len) == 0)
		return 0;
	for (i = 0; i < n; i++) {	/* ASCII only */
		out16[2 * i] = (uint8_t)sn[i];
		out16[2 * i + 1] = 0;
	}
	return 2 * n;
}

int
shortname_pattern(const struct conf_share *sh, const char *pattern,
    size_t plen, const char *name, size_t len, int case_sensitive)
{
	char sn[MANGLE_MAX + 1];
	size_t n;

	if (!shortname_on(sh))
		return 0;
	n = mangle_make(name, len, sn);
	if (n == len && memcmp(sn, name, len) == 0)
		return 0;	/* 8.3: the long name was matched already */
	return fscc_name_match(pattern, plen, sn, n, case_sensitive);
}

/* FNV-1a of the share's address and the directory's path. */
static uint64_t
sn_dir_key(const struct conf_share *sh, const char *dir, size_t dlen)
{
	uint64_t h = 0xcbf29ce484222325ull, v = (uint64_t)(uintptr_t)sh;
	size_t i;

	for (i = 0; i < sizeof(v); i++, v >>= 8)
		h = (h ^ (v & 0xFF)) * 0x100000001b3ull;
	for (i = 0; i < dlen; i++)
		h = (h ^ (uint8_t)dir[i]) * 0x100000001b3ull;
	return h | 1;		/* never 0, the free mark */
}

/* Is e the entry of sname (upper-cased, or as given when exact) in dir? */
static int
sn_match(const struct sn_entry *e, uint64_t dir, const char *sname,
    size_t slen, int exact)
{
	size_t i;

	if (e->dir != dir || strlen(e->sname) != slen)
		return 0;
	for (i = 0; i < slen; i++)
		if (e->sname[i] != (!exact && sname[i] >= 'a' &&
		    sname[i] <= 'z' ? sname[i] - 32 : sname[i]))
			return 0;
	return 1;
}

static void
sn_remember(uint64_t dir, const char *sname, size_t slen, const char *lname,
    size_t llen)
{
	struct sn_entry *e = NULL;
	size_t i;

	if (slen > MANGLE_MAX || llen >= sizeof(e->lname))
		return;
	for (i = 0; i < SN_CACHE && e == NULL; i++)
		if (sn_match(&sn_cache[i], dir, sname, slen, 0))
			e = &sn_cache[i];
	if (e == NULL) {
		e = &sn_cache[sn_next];
		sn_next = (sn_next + 1) % SN_CACHE;
	}
	e->dir = dir;
	for (i = 0; i < slen; i++)
		e->sname[i] = sname[i] >= 'a' && sname[i] <= 'z' ?
		    (char)(sname[i] - 32) : sname[i];
	e->sname[slen] = '\0';
	memcpy(e->lname, lname, llen);
	e->lname[llen] = '\0';
}

/*
 * The remembered long name of sname in dir, or NULL.  exact: sname as
 * given out (upper case) only, for a case-sensitive share.
 */
static const char *
sn_recall(uint64_t dir, const char *sname, size_t slen, int exact)
{
	size_t i;

	for (i = 0; i < SN_CACHE; i++)
		if (sn_match(&sn_cache[i], dir, sname, slen, exact))
			return sn_cache[i].lname;
	return NULL;
}

size_t
shortname_alt(const struct conf_share *sh, const char *path, char *out)
{
	const char *slash = strrchr(path, '/');
	const char *last = slash != NULL ? slash + 1 : path;
	size_t len = strlen(last), n;

	if (len == 0) {		/* the share's root: no name of its own */
		out[0] = '\0';
		return 0;
	}
	if (!shortname_on(sh)) {
		/* Samba: the name cut to 12 bytes; ours not inside a character */
		n = len < MANGLE_MAX ? len : MANGLE_MAX;
		while (n > 0 && n < len && ((unsigned char)last[n] & 0xC0) ==
		    0x80)
			n--;
		memcpy(out, last, n);
		out[n] = '\0';
		return n;
	}
	n = mangle_make(last, len, out);
	if (!mangle_is_83(last, len))
		sn_remember(sn_dir_key(sh, path, slash != NULL ?
		    (size_t)(slash - path) : 0), out, n, last, len);
	return n;
}

struct sn_skip {
	const struct conf_share	*sh;
	int			 dfd;
};

/* What the scan must not find: vetoed names; unreadable ones if hidden. */
static int
sn_skip(void *arg, const char *name, size_t len)
{
	const struct sn_skip *s = arg;

	if (namerule_vetoed(s->sh, name, len))
		return 1;
	return s->sh->hide_unreadable &&
	    file_vfs()->accessat(s->dfd, name, R_OK) != 0;
}

/* statat of lname in the directory named by path's first start bytes. */
static int
sn_stat(struct tree *tree, const char *path, size_t start, const char *lname)
{
	static char cand[FILE_PATH_MAX + 256];
	struct vfs_stat st;
	size_t llen = strlen(lname);

	if (start + llen + 1 > sizeof(cand))
		return -ENAMETOOLONG;
	memcpy(cand, path, start);
	memcpy(cand + start, lname, llen + 1);
	return file_vfs()->statat(tree->root_fd, cand, &st);
}

/*
 * Is the remembered long name of a short name still its answer: not
 * vetoed, still in the directory, and its short name still that one?  A
 * share with `hide unreadable` scans instead (the scan judges
 * readability over the directory it opened).
 */
static int
sn_still(struct tree *tree, const char *path, size_t start,
    const char *lname, const char *want, size_t wlen, int exact)
{
	size_t llen = strlen(lname);

	if (tree->share->hide_unreadable ||
	    namerule_vetoed(tree->share, lname, llen) ||
	    !mangle_is_short_of(lname, llen, want, wlen, exact))
		return 0;
	return sn_stat(tree, path, start, lname) == 0;
}

/* Has any component of path the short-name shape?  No system call. */
static int
sn_any_shape(const char *path)
{
	const char *p = path, *e;

	for (;;) {
		e = strchr(p, '/');
		if (mangle_shape(p, e != NULL ? (size_t)(e - p) : strlen(p)))
			return 1;
		if (e == NULL)
			return 0;
		p = e + 1;
	}
}

int
shortname_resolve(struct tree *tree, char *path, size_t cap)
{
	const struct vfs_ops *vfs = file_vfs();
	const struct conf_share *sh = tree->share;
	char real[256];
	struct vfs_stat st;
	struct sn_skip skip = { sh, -1 };
	size_t plen = strlen(path), start, end, rlen;
	const char *found, *recalled;
	uint64_t key;
	int exact, changed = 0, rc, dfd;
	char save;

	if (!shortname_on(sh) || !sn_any_shape(path))
		return 0;
	exact = sh->case_sensitive;
	for (start = 0; start < plen; start = end + 1) {
		for (end = start; end < plen && path[end] != '/'; end++)
			;
		if (!mangle_shape(path + start, end - start))
			continue;
		save = path[end];
		path[end] = '\0';
		rc = vfs->statat(tree->root_fd, path, &st);
		path[end] = save;
		if (rc == 0)
			continue;	/* a name of that spelling exists */
		if (rc != -ENOENT)
			break;		/* the caller meets the real error */
		key = sn_dir_key(sh, path, start > 0 ? start - 1 : 0);
		recalled = sn_recall(key, path + start, end - start, exact);
		/* a name this worker gave out and still there: no scan */
		if (recalled != NULL && sn_still(tree, path, start, recalled,
		    path + start, end - start, exact)) {
			found = recalled;
			goto splice;
		}
		if (start > 0)
			path[start - 1] = '\0';
		dfd = vfs->open(tree->root_fd, start > 0 ? path : "",
		    O_RDONLY | O_DIRECTORY, 0);
		if (start > 0)
			path[start - 1] = '/';
		if (dfd < 0)
			break;
		skip.dfd = dfd;
		rc = mangle_find(vfs, dfd, path + start, end - start, exact,
		    sn_skip, &skip, real, sizeof(real));
		close(dfd);
		if (rc < 0)
			return rc;
		/*
		 * Not in the directory: a remembered name whose file is gone
		 * (not one the scan skipped, vetoed or unreadable) is the name
		 * to create.
		 */
		found = rc > 0 ? real : recalled != NULL &&
		    sn_stat(tree, path, start, recalled) == -ENOENT ?
		    recalled : NULL;
		if (found == NULL)
			break;		/* no such name: the rest as sent */
		if (rc > 0)
			sn_remember(key, path + start, end - start, real,
			    strlen(real));
splice:
		rlen = strlen(found);
		if (plen - (end - start) + rlen + 1 > cap)
			return -ENAMETOOLONG;
		if (found != real) {
			memcpy(real, found, rlen + 1);
			found = real;
		}
		memmove(path + start + rlen, path + end, plen - end + 1);
		memcpy(path + start, found, rlen);
		plen = plen - (end - start) + rlen;
		end = start + rlen;
		changed = 1;
	}
	/* the components after a replaced one: their case, as typed ones */
	if (changed && !exact &&
	    (rc = vfs_name_resolve(vfs, tree->root_fd, path, cap)) != 0)
		return rc;
	return changed;
}
