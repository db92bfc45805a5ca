/*
 * Oplock and lease breaks (MS-SMB2 3.3.4.6, 3.3.4.7) and their
 * acknowledgements (3.3.5.22): worker/smb2_oplock.c.
 */
#ifndef USMBD_WORKER_SMB2_OPLOCK_H
#define USMBD_WORKER_SMB2_OPLOCK_H

#include <sys/types.h>

#include "proto/ntstatus.h"
#include "shm/shm.h"

struct smb2_req;
struct smb2_rsp;

/*
 * A break for an oplock or lease held by a connection of this worker:
 * queues the notification on that connection and remembers breaker (the
 * worker whose opener waits) to tell it when the client acknowledges.
 */
void		smb2_oplock_break_deliver(const struct shm_file_id *,
		    const struct shm_break *, pid_t breaker);
/*
 * An opener of worker waiter waits for a break already in progress on an
 * oplock or lease held here: it is told (BREAK_ACK) when the client
 * acknowledges, at once when the break is already over or the holder gone.
 */
void		smb2_oplock_break_wait(const struct shm_file_id *,
		    const struct shm_break *, pid_t waiter);
/*
 * A lease was granted or upgraded: every open of this worker that shares
 * it (same client GUID and key) now holds state.
 */
void		smb2_oplock_lease_sync(const uint8_t *client_guid,
		    const uint8_t *key, uint32_t state);
/* OPLOCK_BREAK acknowledgement (oplock: 24 bytes; lease: 36 bytes). */
ntstatus_t	smb2_oplock_break_handle(struct smb2_req *, struct smb2_rsp *);

#endif
