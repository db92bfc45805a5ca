/*
 * srvsvc's session, connection and open-file calls (worker/pipe_srvsvc_enum.c),
 * dispatched by worker/pipe_srvsvc.c.  Each decodes its request stub from
 * in and writes its response stub to out; 0 or a DCE/RPC fault status.
 */
#ifndef USMBD_WORKER_PIPE_SRVSVC_H
#define USMBD_WORKER_PIPE_SRVSVC_H

#include <stdint.h>

#include "proto/cur.h"
#include "proto/ndr.h"

struct pipe_env;

/* MS-SRVS 3.1.4 opnums */
#define SRVSVC_OPNUM_NETR_CONNECTION_ENUM	8
#define SRVSVC_OPNUM_NETR_FILE_ENUM		9
#define SRVSVC_OPNUM_NETR_FILE_GET_INFO		10
#define SRVSVC_OPNUM_NETR_FILE_CLOSE		11
#define SRVSVC_OPNUM_NETR_SESSION_ENUM		12
#define SRVSVC_OPNUM_NETR_SESSION_DEL		13

/* An administrator, not a guest nor a null session. */
int	 srvsvc_enum_allowed(const struct pipe_env *);
/*
 * The 32-bit FileId NetrFileEnum shows for an open (and NetrFileGetInfo
 * takes): its persistent id is the worker's pid above a per-worker
 * counter, so the counter alone repeats in every worker.  A mix of the
 * pid plus the counter differs between two workers' opens unless the
 * pids' mixes lie within their counters' distance (about 2^-15 for a
 * pair of workers with 65,536 opens each).
 */
uint32_t srvsvc_file_id(uint64_t persistent_id);
uint32_t srvsvc_conn_enum(const struct pipe_env *, struct cur *, struct ndr_w *);
uint32_t srvsvc_file_enum(const struct pipe_env *, struct cur *, struct ndr_w *);
uint32_t srvsvc_file_get_info(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t srvsvc_file_close(const struct pipe_env *, struct cur *, struct ndr_w *);
uint32_t srvsvc_session_enum(const struct pipe_env *, struct cur *,
	    struct ndr_w *);
uint32_t srvsvc_session_del(const struct pipe_env *, struct cur *,
	    struct ndr_w *);

#endif
