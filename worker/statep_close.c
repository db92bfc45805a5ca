/*
 * An administrator closes a disconnected durable open (srvsvc
 * NetrFileClose, `usmbctl close-file`; HACKING.md "Sessions and open files
 * over srvsvc").  No worker holds such an open -- its client went away
 * and the record waits in the shared state for a reconnect or its
 * timeout, blocking others' opens by its share mode and lease -- so the
 * master, which maps no shared state, sends the state process the same
 * MSG_ADMIN_DO it sends the workers, and the state process ends the
 * matching records as their expiry would (shm_end_durable).  The records
 * are any worker's to write: each is decoded with bounds checks, judged
 * again under the writer lock, and a connected open is never touched
 * (its worker closes it, worker/open.c open_close_file_id).
 */
#include "worker/statep_close.h"

#include "shm/shm.h"
#include "worker/pipe_srvsvc.h"

static int
statep_close_match(const struct shm_durable_rec *d, void *arg)
{
	return srvsvc_file_id(d->persistent_id) == *(const uint32_t *)arg;
}

int
statep_close_file_id(struct shm *s, uint32_t file_id, unsigned *n,
    struct shm_pids *wake)
{
	return shm_end_durable(s, statep_close_match, &file_id, n, wake);
}
