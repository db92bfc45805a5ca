/*
 * What worker/state.c and worker/state_open.c share and nobody else
 * uses: the break protocol's helpers.
 */
#ifndef USMBD_WORKER_STATE_PRIV_H
#define USMBD_WORKER_STATE_PRIV_H

#include "shm/shm.h"
#include "worker/smb2.h"

struct open;

/* The shared-state id of an open's file (or stream). */
void		state_open_fid(const struct open *, struct shm_file_id *);
int		state_fid_is_stream(const struct shm_file_id *);
/* An opener's deadline passed: the breaks 35 s old take effect. */
void		state_breaks_force(struct shm *, const struct shm_file_id *,
		    const struct shm_break_req *);
/*
 * Breaks what the new open conflicts with; STATUS_PENDING (parked) when
 * it must wait for an acknowledgement, STATUS_SUCCESS when it may go on.
 */
ntstatus_t	state_break_wait(struct smb2_req *, struct smb2_rsp *,
		    struct shm *, const struct shm_file_id *,
		    const struct shm_break_req *);

#endif
