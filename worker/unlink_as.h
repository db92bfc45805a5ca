/*
 * Delete-on-close across users.  The last close of a delete-pending file
 * unlinks it with the rights of the closing worker's user; when that fails
 * (EACCES/EPERM: a sticky directory, a directory that user may not write)
 * and another user made the file delete pending (the delete token, shm/),
 * the unlink is asked of a worker of that user through the master
 * (MSG_UNLINK_AS -> MSG_UNLINK_DO, daemon/msg.h), as Windows deletes
 * whoever closes last once DELETE was checked for the one who asked.
 */
#ifndef USMBD_WORKER_UNLINK_AS_H
#define USMBD_WORKER_UNLINK_AS_H

#include <stdint.h>

struct file_open;
struct msg;
struct tree;

/*
 * The closing worker: asks for f (of tree t) to be unlinked as uid.  Fire
 * and forget (no answer is awaited); 0, or -errno when it was not sent.
 */
int	unlink_as_request(const struct tree *t, const struct file_open *f,
	    uint32_t uid);
/*
 * The worker of the token's uid, on MSG_UNLINK_DO: resolves the path
 * beneath the share root with its own rights, checks that dev and ino are
 * still the file's, unlinks it and logs the outcome.
 */
void	unlink_as_handle(const struct msg *m);

#endif
