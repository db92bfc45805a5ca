/* The one seam where vfs/ errno values become NTSTATUS. */
#ifndef USMBD_WORKER_ERRMAP_H
#define USMBD_WORKER_ERRMAP_H

#include "proto/ntstatus.h"

/* err may be positive or negative (-errno as vfs/ returns it). */
ntstatus_t	ntstatus_from_errno(int err);

#endif
