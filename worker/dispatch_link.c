/*
 * Why this file exists: dispatch.c and open.c reference the other parts'
 * handlers weakly, so the tree links while those parts are being written.
 * A weak reference does not pull a member out of libusmbd.a, though, so
 * this table holds strong references to one handler of each source file
 * that exists, and dispatch.c references the table.  Files that do not
 * exist yet are left out by __has_include.  (Linking with
 * -Wl,--whole-archive would make this unnecessary.)
 */
#include <stddef.h>

#include "worker/smb2.h"

#define LINK(fn) (const void *)(fn)

ntstatus_t smb2_create_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_read_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_query_directory_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_query_info_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_lock_handle(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_ioctl_file(struct smb2_req *, struct smb2_rsp *);
ntstatus_t smb2_pipe_create(struct smb2_req *, struct smb2_rsp *);

const void *const dispatch_link_table[] = {
#if __has_include("worker/smb2_create.c")
	LINK(smb2_create_handle),
#endif
#if __has_include("worker/smb2_rw.c")
	LINK(smb2_read_handle),
#endif
#if __has_include("worker/smb2_dir.c")
	LINK(smb2_query_directory_handle),
#endif
#if __has_include("worker/smb2_info.c")
	LINK(smb2_query_info_handle),
#endif
#if __has_include("worker/smb2_lock.c")
	LINK(smb2_lock_handle),
#endif
#if __has_include("worker/smb2_fsctl.c")
	LINK(smb2_ioctl_file),
#endif
#if __has_include("worker/smb2_pipe.c")
	LINK(smb2_pipe_create),
#endif
	NULL,
};
