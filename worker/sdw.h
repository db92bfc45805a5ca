/*
 * The security descriptor writer ("sdw"): a small child that keeps only
 * CAP_SYS_ADMIN, so that it alone can write the security.* xattr where a
 * file's whole NT descriptor lives (HACKING.md, "Security descriptors").
 *
 * Workers connect to <lock dir>/sdw.sock (SOCK_SEQPACKET).  The writer
 * takes the caller's identity from the kernel (SO_PEERCRED, SO_PEERGROUPS
 * at accept), never from the message.  A request is one datagram with the
 * open file attached (SCM_RIGHTS: the caller could open it):
 *   u32 op (SDW_OP_SET, SDW_OP_MARK, SDW_OP_INHERIT), u32 which
 *   (SECURITY_INFORMATION), then for SDW_OP_SET and SDW_OP_INHERIT a
 *   self-relative descriptor.  SDW_OP_INHERIT attaches a second fd, the
 *   new file's parent directory (any open, O_PATH too).
 * The answer is one u32 NTSTATUS.
 */
#ifndef USMBD_WORKER_SDW_H
#define USMBD_WORKER_SDW_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

struct conf;

/* The stored descriptor of a file (self-relative, as proto/secdesc.c). */
#define SDW_XATTR_SD		"security.usmbd.sd"
/* On a share's root: descriptors are stored below (the value is "1"). */
#define SDW_XATTR_SHARE		"security.usmbd.share"
#define SDW_SOCK_NAME		"sdw.sock"
#define SDW_SD_MAX		8192

#define SDW_OP_SET		1	/* store the parts of which */
#define SDW_OP_MARK		2	/* mark a share root */
/*
 * As SET for a file just made, whose SACL is the one its parent passes on
 * (MS-DTYP 2.5.3.4): needs no SeSecurityPrivilege, as on Windows, but the
 * writer computes that SACL again from the parent's stored descriptor and
 * the caller's identity, and stores it only when it is the one given.
 */
#define SDW_OP_INHERIT		3

/*
 * The child role (daemon/main.c): binds the socket as root, drops to its
 * own account with CAP_SYS_ADMIN alone, then serves.  Exit code.
 */
int		sdw_main(struct conf *conf, int chan);

/*
 * Worker side: asks the writer.  fd is the open file; pfd the parent for
 * SDW_OP_INHERIT, else -1.  Blocks for the answer (at most
 * SDW_TIMEOUT_MS: a connect to the master's socket waits in its backlog
 * while a killed writer's successor starts); no answer is
 * STATUS_INTERNAL_ERROR...
 * the caller has already checked what it could.
 */
#define SDW_TIMEOUT_MS		5000
ntstatus_t	sdw_request(const char *lock_dir, uint32_t op, int fd, int pfd,
		    uint32_t which, const uint8_t *sd, size_t len);

#endif
