/*
 * CHANGE_NOTIFY (MS-SMB2 3.3.5.19).  Not served yet: the command is
 * answered STATUS_NOT_SUPPORTED, and messages from other workers are
 * dropped, until the inotify watcher lands.
 */
#include "worker/smb2_notify.h"

#include "worker/smb2.h"

ntstatus_t
smb2_change_notify_handle(struct smb2_req *req, struct smb2_rsp *rsp)
{
	return STATUS_NOT_SUPPORTED;
}

void
smb2_notify_wmsg(const struct shm_wmsg_msg *m)
{
	(void)m;
}
