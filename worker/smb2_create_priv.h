/*
 * What the files of SMB2 CREATE share (worker/smb2_create.c, the
 * request's steps; worker/smb2_create_open.c, the open on disk): the
 * request's constants and the call as it goes.
 */
#ifndef USMBD_WORKER_SMB2_CREATE_PRIV_H
#define USMBD_WORKER_SMB2_CREATE_PRIV_H

#include <stdint.h>

#include "proto/aapl.h"
#include "proto/ntstatus.h"
#include "vfs/vfs.h"
#include "worker/smb2_create_ctx.h"
#include "worker/state.h"

struct smb2_req;
struct smb2_rsp;
struct tree;
struct file_open;
struct open;

/* MS-SMB2 2.2.13 */
#define FILE_SUPERSEDE		0
#define FILE_OPEN		1
#define FILE_CREATE		2
#define FILE_OPEN_IF		3
#define FILE_OVERWRITE		4
#define FILE_OVERWRITE_IF	5

#define FILE_DIRECTORY_FILE	0x00000001u
#define FILE_WRITE_THROUGH	0x00000002u
#define FILE_NON_DIRECTORY_FILE	0x00000040u
#define FILE_DELETE_ON_CLOSE	0x00001000u
#define FILE_OPEN_BY_FILE_ID	0x00002000u
#define FILE_CREATE_TREE_CONNECTION 0x00000080u
#define FILE_RESERVE_OPFILTER	0x00100000u
/* bits MS-SMB2 says the server must refuse */
#define FILE_OPTIONS_INVALID	0xFF000000u

#define CREATE_RSP_FIXED	88

/*
 * One CREATE on its way through smb2_create_handle: the request as
 * decoded, then what each step learns (the name's stat, the open it made,
 * what the shared state granted).  It lives on the handler's stack.
 */
struct create_call {
	struct smb2_req	*req;
	struct smb2_rsp	*rsp;
	struct tree	*tree;
	/* MS-SMB2 2.2.13 */
	uint8_t		 oplock_req;
	uint32_t	 imp, access, attrs, share, disp, opts;
	uint32_t	 ctx_off, ctx_len;
	uint16_t	 name_off, name_len;
	const uint8_t	*name16;
	struct create_ctx cc;
	/* found and made on the way */
	struct file_open *f;
	struct open	*op;
	struct vfs_stat	 st;
	struct vfs_dosinfo di;
	struct state_open_grant grant;
	uint32_t	 want;		/* the access asked for, mapped */
	uint32_t	 maxacc;
	uint32_t	 action;
	int		 exists, is_dir, flags, fd, truncate;
	int		 dos_known, has_dos, replayed, pfd, st_fresh, st_valid;
	int		 links;		/* CREATE_FOLLOW... (smb2_create_fs.h) */
	int		 special;	/* a symlink or special file itself */
	int		 snapshot;	/* a name in the snapshot directory */
	uint32_t	 new_mode;	/* what a create made it with */
	struct aapl_query aapl;		/* an AAPL query answered (fruit.h) */
	int		 aapl_answer;
};

/*
 * The object opened (or made) as the call asks: cr->fd and the file's fd,
 * or the status to answer (a kernel lease: parked, worker/state_open.c).
 */
ntstatus_t	create_open_object(struct create_call *);

#endif
