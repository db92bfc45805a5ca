/*
 * Previous versions (MS-SMB2 3.3.5.15.1, 3.3.5.9.5): a share's snapshots
 * are the subdirectories of its `snapshot directory`, each a copy of the
 * share's root taken at the time its name gives (`snapshot format`, UTC).
 * FSCTL_SRV_ENUMERATE_SNAPSHOTS lists them as @GMT tokens; a CREATE with a
 * TWrp context opens the same path inside the snapshot of that time.
 * Everything under the snapshot directory is read-only over SMB, however it
 * is reached (snapshot_path_in): no name is made, changed or linked, and
 * an existing one opens with the write-type rights its mode grants, as
 * Windows opens a previous version, but withheld (SNAPSHOT_WRITE_RIGHTS,
 * struct open's access_withheld): the file is opened for reading only and
 * each change is refused with MEDIA_WRITE_PROTECTED.
 */
#ifndef USMBD_WORKER_SNAPSHOT_H
#define USMBD_WORKER_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"
#include "proto/ntstatus.h"
#include "worker/file_open.h"

struct conf_share;
struct tree;

#define SNAPSHOT_FORMAT_DEFAULT	"@GMT-%Y.%m.%d-%H.%M.%S"
/* "@GMT-YYYY.MM.DD-HH.MM.SS", MS-SMB2 2.2.32.2 */
#define SNAPSHOT_TOKEN_LEN	24
/* What a previous version's open is granted but cannot use. */
#define SNAPSHOT_WRITE_RIGHTS	(FILE_WRITE_DATA | FILE_APPEND_DATA | \
	FILE_WRITE_EA | FILE_WRITE_ATTRIBUTES | FILE_DELETE_CHILD | \
	DELETE_ACCESS | WRITE_DAC | WRITE_OWNER)
/* Snapshots listed at most (newest first); older ones are not offered. */
#define SNAPSHOT_MAX		512

/* Is path (share-relative, '/'-separated) the snapshot directory or in it? */
int		snapshot_path_in(const struct conf_share *, const char *path);
/*
 * The time (UTC seconds) a snapshot directory's entry name stands for;
 * -1 when the name does not follow fmt whole.
 */
int		snapshot_name_time(const char *name, const char *fmt,
		    int64_t *t);
/* The @GMT token of t, NUL-terminated, into buf (SNAPSHOT_TOKEN_LEN + 1). */
void		snapshot_token(int64_t t, char *buf);
/*
 * SRV_SNAPSHOT_ARRAY (MS-SMB2 2.2.32.2) of n times, newest first, for a
 * client that takes maxout bytes: the whole array when it fits, else the
 * counts and the size needed (NumberOfSnapShotsReturned 0, 16 bytes).
 * STATUS_INVALID_PARAMETER when maxout < 16.
 */
ntstatus_t	snapshot_array_put(struct wcur *, const int64_t *times,
		    unsigned n, uint32_t maxout);
/* The tree's snapshot times, newest first; how many (<= max), or -errno. */
int		snapshot_list(const struct tree *, int64_t *times, unsigned max);
/*
 * path (a share-relative name, "" = the root) inside the snapshot taken at
 * the FILETIME ft (TWrp, to the second), rewritten in place; len is its
 * buffer.  STATUS_OBJECT_NAME_NOT_FOUND when the share has no snapshot of
 * that time, STATUS_OBJECT_NAME_INVALID when the result does not fit.
 */
ntstatus_t	snapshot_path(const struct tree *, uint64_t ft, char *path,
		    size_t len);
/*
 * How many bytes of stored (a name snapshot_path made) come before the
 * client's name client: "snapdir/<one snapshot>/" then client (the whole
 * of stored when client is "", the root), compared as the share compares
 * names; 0 when stored is not that.  A durable reconnect of a previous
 * version's open finds its client's name again this way.
 */
size_t		snapshot_name_skip(const struct conf_share *,
		    const char *stored, const char *client);
/* FSCTL_SRV_ENUMERATE_SNAPSHOTS on a handle of tree. */
ntstatus_t	snapshot_enumerate(const struct tree *, struct wcur *out,
		    uint32_t maxout);

#endif
