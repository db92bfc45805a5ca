/*
 * Resilient handles (MS-SMB2 3.3.5.15.9): FSCTL_LMR_REQUEST_RESILIENCY
 * marks an open Open.IsResilient with a ResiliencyTimeout.  A resilient
 * open is kept after its connection is lost, and reclaimed by a DHnC
 * reconnect, through the durable handles' machinery (worker/durable.h,
 * shm/durable.c): its durable record carries SHM_DURABLE_RESILIENT.  How
 * it differs from a durable open: no batch oplock or handle lease is
 * needed, its byte-range locks are always kept, an explicit LOGOFF closes
 * it, a conflicting open does not while it holds no batch oplock or lease
 * (the opener gets SHARING_VIOLATION), and its LockSequence is checked on
 * every dialect from 2.1 (worker/smb2_lock.c).
 */
#ifndef USMBD_WORKER_RESILIENT_H
#define USMBD_WORKER_RESILIENT_H

#include "proto/ntstatus.h"

/*
 * MS-SMB2 3.3.5.15.9: a Timeout of 0 gets the default; one above the
 * maximum (compared in whole seconds, as the spec says) is
 * STATUS_INVALID_PARAMETER, not clamped.  The maximum is the durable
 * handles' (worker/durable.h): no client pins an open or its locks past it.
 */
#define RESILIENT_TIMEOUT_DEFAULT_MS	120000u
/*
 * Grants per worker within DURABLE_TIMEOUT_MAX_MS; past it the FSCTL gets
 * STATUS_INSUFF_SERVER_RESOURCES with a log line (worker/resilient.c).
 */
#define RESILIENT_GRANTS_MAX		1024u

/* FSCTL_LMR_REQUEST_RESILIENCY, MS-FSCC 2.3 / MS-SMB2 2.2.31 */
#define FSCTL_LMR_REQUEST_RESILIENCY	0x001401D4u

struct smb2_req;
struct open;
struct cur;

/*
 * The FSCTL on op with its input: STATUS_SUCCESS (no output), or
 * INVALID_DEVICE_REQUEST (2.0.2), INVALID_PARAMETER (short input, timeout
 * past the maximum), ACCESS_DENIED (an anonymous or guest session: anyone
 * of them could reclaim it; a session re-authenticated as another
 * identity), NOT_SUPPORTED (a directory, a named stream, a
 * previous version: what a reconnect cannot reopen by path), or what the
 * shared state answers.
 */
ntstatus_t	resilient_request(struct smb2_req *, struct open *, struct cur *in);

#endif
