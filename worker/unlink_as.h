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
 * The worker of the token's uid, on MSG_UNLINK_DO: acts only on a delete
 * it vouched for itself (unlink_as_vouch; the entry is consumed), then
 * resolves the path beneath the share root with its own rights, checks
 * that dev and ino are still the file's, unlinks it and logs the outcome.
 * Any other request is refused and logged ("unvouched").
 */
void	unlink_as_handle(const struct msg *m);

/*
 * Vouching.  The worker that made f delete pending (SET_INFO disposition,
 * a FILE_DELETE_ON_CLOSE create) closed its handle while other workers'
 * opens remain, so the unlink will be another worker's last close: it
 * remembers (share, share-relative path, dev, ino) in a fixed table of
 * UNLINK_AS_VOUCH_MAX entries (the oldest is dropped, logged, when full).
 * A MSG_UNLINK_DO must match one.  Entries end when used, after
 * UNLINK_AS_VOUCH_TTL_S, or on the tick once the state db has shown no
 * open of the file on two sweeps UNLINK_AS_SWEEP_S apart (deleted, or the
 * disposition cleared and everyone closed).
 */
#define UNLINK_AS_VOUCH_MAX	256
#define UNLINK_AS_VOUCH_TTL_S	(24 * 3600)
#define UNLINK_AS_SWEEP_S	10
void	unlink_as_vouch(const struct tree *t, const struct file_open *f);
/* Entries held: the worker does not exit idle while non-zero. */
unsigned unlink_as_held(void);
/*
 * From the worker's 1 s tick: sweeps at most every UNLINK_AS_SWEEP_S;
 * non-zero while entries are held (the tick stays armed for them).
 */
int	unlink_as_tick(void);
/* Forgets every entry (tests). */
void	unlink_as_vouch_reset(void);

#endif
