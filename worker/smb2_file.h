/*
 * The file command handlers for trees that are not IPC$ (the SMB2 core's
 * dispatch calls these).  Each reads req->body from the start of its
 * request body and writes rsp->body; see worker/smb2.h.
 */
#ifndef USMBD_WORKER_SMB2_FILE_H
#define USMBD_WORKER_SMB2_FILE_H

#include "proto/ntstatus.h"

struct smb2_req;
struct smb2_rsp;

ntstatus_t	smb2_create_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_close_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_read_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_write_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_flush_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_query_directory_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_query_info_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t	smb2_set_info_handle(struct smb2_req *, struct smb2_rsp *);
/* FSCTLs on files; req->body is positioned at the IOCTL request fields. */
ntstatus_t	smb2_ioctl_file(struct smb2_req *, struct smb2_rsp *);

#endif
