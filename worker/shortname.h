/*
 * 8.3 short names of a share (Samba's `mangled names`): what listings,
 * FileAlternateNameInformation, search patterns and path lookups make of
 * the generator in vfs/mangle.h.  HACKING.md "Short names".
 */
#ifndef USMBD_WORKER_SHORTNAME_H
#define USMBD_WORKER_SHORTNAME_H

#include <stddef.h>
#include <stdint.h>

#include "vfs/mangle.h"

struct conf_share;
struct tree;

/* Short names answer lookups and patterns on this share (yes, illegal). */
int	shortname_on(const struct conf_share *);
/*
 * A listing entry's ShortName (FileBothDirectoryInformation and
 * FileIdBothDirectoryInformation) as UTF-16LE into out16 (2 *
 * MANGLE_MAX bytes): its length, 0 when the share lists none (not
 * `mangled names = yes`) or the name is a valid 8.3 name.
 */
size_t	shortname_listing(const struct conf_share *, const char *name,
	    size_t len, uint8_t *out16);
/*
 * Does the search pattern match name's short name (Windows matches a
 * pattern against both names)?  Only for a name that has one; 1 or 0.
 */
int	shortname_pattern(const struct conf_share *, const char *pattern,
	    size_t plen, const char *name, size_t len, int case_sensitive);
/*
 * FileAlternateNameInformation of the share-relative path (its last
 * component) into out (MANGLE_MAX * 4 + 1 bytes): the short name, the
 * name itself when it is a valid 8.3 name, and with `mangled names = no`
 * the name cut to 12 bytes (at a character boundary), as Samba.  The
 * short name is remembered (below).  Returns its length.
 */
size_t	shortname_alt(const struct conf_share *, const char *path, char *out);
/*
 * path (share-relative, its first components resolved as the lookup
 * left them) names nothing: replaces each missing component of the
 * short-name shape by the long name of its directory whose short name it
 * is (a bounded scan of that directory, vetoed names and, with `hide
 * unreadable`, unreadable ones skipped), else by the long name this
 * worker last gave that short name in that directory (FileAlternate
 * NameInformation or an earlier open by it: a program that deletes and
 * recreates a file by its short name keeps the long name, as with
 * Samba).  1 changed, 0 not, -errno.  The caller checks the new path
 * like a typed one.
 */
int	shortname_resolve(struct tree *, char *path, size_t cap);

#endif
