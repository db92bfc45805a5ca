/*
 * An administrator's srvsvc request that only another user's worker can
 * carry out: NetrFileClose (MS-SRVS 3.1.4.4) and NetrSessionDel
 * (3.1.4.6).  The payload of three messages (daemon/msg.h):
 *
 *	MSG_ADMIN_REQ	worker -> master, the admin's worker asks
 *	MSG_ADMIN_DO	master -> every worker (and usmbctl close-file),
 *			re-encoded by the master from what it decoded;
 *			answered MSG_CTL_DONE with u32 how many it ended
 *	MSG_ADMIN_REP	master -> the asking worker: u32 WERROR
 *
 * Layout (little-endian): u8 op, then for ADMMSG_FILE_CLOSE u32 FileId
 * (worker/pipe_srvsvc.h srvsvc_file_id), for ADMMSG_SESS_DEL str client,
 * str user (u16 length + bytes, no NUL; "" = any).  Nothing in it says
 * who asks: the master takes that from its own child table (the worker
 * it forked with a uid, gid and user), never from the message.
 */
#ifndef USMBD_DAEMON_ADMMSG_H
#define USMBD_DAEMON_ADMMSG_H

#include <stddef.h>
#include <stdint.h>

#define ADMMSG_FILE_CLOSE	1
#define ADMMSG_SESS_DEL		2
#define ADMMSG_NAME_MAX		256	/* client and user, with the NUL */
#define ADMMSG_MAX_LEN		(1 + 2 * (2 + ADMMSG_NAME_MAX))

/* Workers get this long to answer MSG_ADMIN_DO (the asker waits longer). */
#define ADMMSG_TIMEOUT_MS	2000

/* MS-ERREF 2.2 / MS-SRVS: the WERRORs of MSG_ADMIN_REP. */
#define ADMMSG_WERR_OK			0
#define ADMMSG_WERR_ACCESS_DENIED	5
#define ADMMSG_WERR_NOT_ENOUGH_MEMORY	8
#define ADMMSG_WERR_INVALID_PARAMETER	87
#define ADMMSG_WERR_CLIENT_NOT_FOUND	2312	/* NERR_ClientNameNotFound */
#define ADMMSG_WERR_FILEID_NOT_FOUND	2314	/* NERR_FileIdNotFound */

struct admmsg_req {
	uint8_t		 op;
	uint32_t	 file_id;			/* ADMMSG_FILE_CLOSE */
	char		 client[ADMMSG_NAME_MAX];	/* ADMMSG_SESS_DEL */
	char		 user[ADMMSG_NAME_MAX];
};

/* Length written into buf, or -1 (unknown op, a name too long, no room). */
int	admmsg_encode(const struct admmsg_req *, uint8_t *buf, size_t cap);
/* 0, or -1 for a short, long or malformed payload (r is zeroed). */
int	admmsg_decode(struct admmsg_req *, const uint8_t *p, size_t len);

#endif
