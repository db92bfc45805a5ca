/*
 * CHANGE_NOTIFY (MS-SMB2 2.2.35, 3.3.5.19): worker/smb2_notify.c.
 */
#ifndef USMBD_WORKER_SMB2_NOTIFY_H
#define USMBD_WORKER_SMB2_NOTIFY_H

#include "proto/ntstatus.h"
#include "shm/shm.h"

struct smb2_req;
struct smb2_rsp;

ntstatus_t	smb2_change_notify_handle(struct smb2_req *, struct smb2_rsp *);
/* A NOTIFY message from another worker (a change it made). */
void		smb2_notify_wmsg(const struct shm_wmsg_msg *);

#endif
