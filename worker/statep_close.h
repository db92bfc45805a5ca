/*
 * The state process's part of an administrator's NetrFileClose and
 * `usmbctl close-file` (worker/statep_close.c).
 */
#ifndef USMBD_WORKER_STATEP_CLOSE_H
#define USMBD_WORKER_STATEP_CLOSE_H

#include <stdint.h>

struct shm;
struct shm_pids;

/*
 * Ends, as their expiry would, the disconnected durable opens whose
 * srvsvc FileId (srvsvc_file_id of the persistent id) is file_id: 0 or
 * -errno, *n how many (at most SHM_DURABLE_END_MAX), their lock waiters
 * in wake.
 */
int	statep_close_file_id(struct shm *, uint32_t file_id, unsigned *n,
	    struct shm_pids *wake);

#endif
