/*
 * The SMB2 commands on an IPC$ tree (named pipes), called by dispatch for
 * trees with is_ipc and by smb2_ioctl() for FSCTL_PIPE_TRANSCEIVE.  Each
 * decodes its whole request body from req->body (positioned after the
 * header) and follows the conventions of worker/smb2.h.
 */
#ifndef USMBD_WORKER_SMB2_PIPE_H
#define USMBD_WORKER_SMB2_PIPE_H

#include "worker/smb2.h"

ntstatus_t	smb2_pipe_create(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_close(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_read(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_write(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_flush(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_ioctl(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_pipe_query_info(struct smb2_req *, struct smb2_rsp *);

#endif
