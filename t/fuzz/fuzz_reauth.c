/*
 * libFuzzer target: what worker/smb2_reauth.c reads of a request of a
 * session re-authenticated as another identity (SET_INFO's InfoType,
 * FileInfoClass and AdditionalInformation, IOCTL's CtlCode).  The first
 * two bytes pick the command; the rest is the body.  It must never read
 * past the body, and a CREATE or TREE_CONNECT is always refused.
 *
 * Build: make build/fuzz/fuzz_reauth
 * Run:   build/fuzz/fuzz_reauth -max_total_time=60 t/fuzz/corpus/reauth
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/smb2.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/smb2.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct conn_private pv;
	static struct conn conn;
	static struct session sess;
	struct smb2_req req;
	uint16_t command;
	uint8_t *body;
	ntstatus_t st;

	if (size < 2)
		return 0;
	command = (uint16_t)(data[0] | data[1] << 8) % (SMB2_NCOMMANDS + 2);
	/* An exact copy, so ASan sees a read past the body. */
	body = malloc(size - 2 > 0 ? size - 2 : 1);
	if (body == NULL)
		return 0;
	memcpy(body, data + 2, size - 2);
	memset(&req, 0, sizeof(req));
	conn.priv = &pv;
	sess.reauth_other = 1;
	req.conn = &conn;
	req.sess = &sess;
	cur_init(&req.body, body, size - 2);
	st = smb2_session_may_act(&req, command);
	if ((command == SMB2_CREATE || command == SMB2_TREE_CONNECT) &&
	    st != STATUS_ACCESS_DENIED)
		abort();
	free(body);
	return 0;
}
