/*
 * Directory leases: the breaks a change inside a directory causes
 * (worker/dirlease.h).
 */
#include "worker/dirlease.h"

#include <errno.h>
#include <string.h>

#include "daemon/conf.h"
#include "vfs/vfs.h"
#include "worker/conn.h"
#include "worker/file_open.h"
#include "worker/open.h"
#include "worker/state.h"

/* The directory holding path: its dev and ino.  0 or -errno. */
static int
dirlease_parent_id(const struct tree *t, const char *path, uint64_t *dev,
    uint64_t *ino)
{
	char parent[FILE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash != NULL ? (size_t)(slash - path) : 0;
	struct vfs_stat st;
	int rc;

	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, n);
	parent[n] = '\0';
	/* a top-level name: the share root, which the tree holds open */
	rc = n == 0 ? file_vfs()->fstat(t->root_fd, &st) :
	    file_vfs()->statat(t->root_fd, parent, &st);
	if (rc != 0)
		return rc;
	*dev = st.dev;
	*ino = st.ino;
	return 0;
}

void
dirlease_break_parent(const struct conn *c, const struct tree *t,
    const char *path, const uint8_t *parent_key)
{
	uint64_t dev, ino;

	/*
	 * No directory is leased unless the feature is on; then one stat
	 * of the parent per change (not per open), and the shared state's
	 * hint answers "no lease there" without a transaction.
	 */
	if (c == NULL || c->conf == NULL || !c->conf->smb3_directory_leases ||
	    t == NULL || t->root_fd < 0 || path == NULL || path[0] == '\0' ||
	    state_shm() == NULL)
		return;
	if (dirlease_parent_id(t, path, &dev, &ino) != 0)
		return;
	state_break_dir(dev, ino, parent_key);
}

void
dirlease_break_op(const struct open *op, const char *path)
{
	dirlease_break_parent(op->conn, op->tree, path,
	    op->oplock_level == SMB2_OPLOCK_LEVEL_LEASE ?
	    op->parent_lease_key : NULL);
}
