/*
 * Recycle bin, as Samba's vfs_recycle: on a share with a `recycle
 * directory`, the delete of a regular file (the last close of a
 * delete-pending file) moves it into that directory, %U standing for the
 * deleting user's Unix name, instead of removing it.  Directories, files
 * already in the bin, excluded names, files in excluded directories and
 * files above `recycle max size` are removed as before; so is a file the
 * move fails for (another mount, no rights, no space, a symlink or
 * another user's directory where the bin should be), logged at level 1
 * (level 3 while one share keeps failing for one reason).  The move never leaves the share and follows no symlink:
 * the bin's components are opened one by one beneath the share root with
 * the vfs no-links open, missing ones made with mkdirat on those fds, and
 * the file goes with one renameat2 between directory fds (its streams,
 * extended attributes, go with it).  Nothing here allocates.
 */
#ifndef USMBD_WORKER_RECYCLE_H
#define USMBD_WORKER_RECYCLE_H

#include <stddef.h>
#include <stdint.h>

struct conf_share;

/* "Copy #N of name" tried at most (versions); past it the file is deleted. */
#define RECYCLE_VERSIONS_MAX	9999

/*
 * The delete of path (share-relative, under root) while it is still
 * dev/ino, done by user (the Unix name %U stands for): moved into the bin
 * when the share has one and the file qualifies, unlinked otherwise.
 * Returns what vfs unlink_same would (0, -ESTALE when another file took
 * the name, -ENOENT, -errno): a file moved into the bin counts as deleted.
 */
int	recycle_unlink(const struct conf_share *s, const char *user, int root,
	    const char *path, int is_dir, uint64_t dev, uint64_t ino);

/*
 * The pieces, exposed for t/unit/check_recycle.c.
 *
 * recycle_bin_path: the share's recycle directory dir with %U replaced by
 * user, into out (cap bytes); the length, or -ENAMETOOLONG, or -EINVAL
 * for a user name that could not be a directory's ("", ".", "..", '/').
 * *user_at (may be NULL) gets the length of the bin's leading part made
 * for everyone, before the component holding %U (or the whole length
 * when there is no %U: one bin shared by all).
 */
int	recycle_bin_path(const char *dir, const char *user, char *out,
	    size_t cap, size_t *user_at);
/* Is path the bin (bin_len bytes of bin) or inside it?  1 or 0. */
int	recycle_path_in(const char *bin, size_t bin_len, const char *path,
	    int case_sensitive);
/*
 * Does name match a pattern of list (Samba's list: separated by spaces,
 * tabs, commas or semicolons; * any run, ? one character; ASCII case
 * ignored)?  1 or 0; a NULL list matches nothing.
 */
int	recycle_list_match(const char *list, const char *name, size_t len);
/* Does any component of dir ('/'-separated, "" for the root) match? */
int	recycle_dir_match(const char *list, const char *dir);
/*
 * Where a file of path goes: the directory (the bin, then with keep_tree
 * the file's own directories) into dir, and the name, "Copy #n of NAME"
 * when n > 0, into name.  0 or -ENAMETOOLONG.
 */
int	recycle_target(const char *bin, const char *path, int keep_tree,
	    unsigned n, char *dir, size_t dir_cap, char *name, size_t name_cap);

#endif
