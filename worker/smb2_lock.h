/* SMB2 LOCK (MS-SMB2 3.3.5.14): worker/smb2_lock.c. */
#ifndef USMBD_WORKER_SMB2_LOCK_H
#define USMBD_WORKER_SMB2_LOCK_H

#include "proto/ntstatus.h"

struct smb2_req;
struct smb2_rsp;

ntstatus_t	smb2_lock_handle(struct smb2_req *, struct smb2_rsp *);

#endif
