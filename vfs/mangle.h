/*
 * 8.3 short names ("name mangling") for the names of a directory, our
 * own scheme: a pure function of the long name, so every worker, every
 * restart and every version of the server gives a name the same short
 * name, and nothing is stored.
 *
 *	PPHHHH~H.EXT
 *
 * PP: the first two characters of the name that are legal in an 8.3
 * name (upper-cased; spaces and dots dropped, any other character '_',
 * '_' when the name has fewer); HHHH and H: five base-36 digits of a
 * 32-bit FNV-1a hash of the whole name with every code point upper-cased
 * the way the case-insensitive lookup folds it (proto/unicode.h), so
 * names equal but for case share their short name; EXT: the first three
 * characters after the last dot (not a leading one), mapped like PP,
 * none when there is no such dot.  Two names collide only when their
 * first two legal characters and their hashes (36^5 values) agree.
 *
 * A name that is already a valid 8.3 name (Samba's rules: at most 8
 * characters, a dot and 1-3 more, printable ASCII but for
 * "*?<>|:\/\" +,[];=", no reserved DOS device name) has no other short
 * name; lower case is allowed, as Samba allows it.
 */
#ifndef USMBD_VFS_MANGLE_H
#define USMBD_VFS_MANGLE_H

#include <stddef.h>

struct vfs_ops;

#define MANGLE_MAX	12	/* characters of a short name, "XXXXXX~X.XXX" */

/* 1 when name (UTF-8, len bytes) is a valid 8.3 name as it is, else 0. */
int	mangle_is_83(const char *name, size_t len);
/*
 * The short name of name into out (MANGLE_MAX + 1 bytes, NUL
 * terminated): the name itself when mangle_is_83, else the scheme
 * above.  Returns its length.
 */
size_t	mangle_make(const char *name, size_t len, char *out);
/*
 * Could name be a short name of ours (the shape above, ASCII letters of
 * either case)?  1 or 0: only such a name is looked up by scanning.
 */
int	mangle_shape(const char *name, size_t len);
/*
 * Is want (a name of mangle_shape) the short name of name?  Compared
 * ignoring ASCII case unless exact.  1 or 0.
 */
int	mangle_is_short_of(const char *name, size_t len, const char *want,
	    size_t wlen, int exact);

/* A name the scan must not see (vetoed ones): 1 to skip it. */
typedef int (*mangle_skip_fn)(void *arg, const char *name, size_t len);

#define MANGLE_SCAN_MAX	(1u << 17)	/* entries a scan looks at, at most */

/*
 * Scans the directory open as dirfd (freshly opened: not rewound) for
 * the long name whose short name is want, skipping what skip (may be
 * NULL) refuses and "." and ".."; at most MANGLE_SCAN_MAX entries.
 * 1 and the name in out (cap bytes), 0 when none, -errno.
 */
int	mangle_find(const struct vfs_ops *, int dirfd, const char *want,
	    size_t wlen, int exact, mangle_skip_fn skip, void *arg, char *out,
	    size_t cap);

#endif
