/*
 * libFuzzer target: the worker's CREATE context parser
 * (worker/smb2_create_ctx.c smb2_create_parse_contexts) over a request
 * body, with every context it reads: DHnQ, DHnC, DH2Q, DH2C
 * (worker/durable.c), RqLs v1 and v2 (worker/state_open.c), MxAc, QFid,
 * AlSi, TWrp, SecD, ExtA, the app instance id, the POSIX context
 * (worker/smb2_posix.c); unknown names are skipped.  What SecD and ExtA
 * carry is decoded as the CREATE would (proto/secdesc.c, proto/fscc.c;
 * the descriptor canonicalised and mapped onto the POSIX ACL it would be
 * written as, worker/secdesc_posix.c secdesc_posix_acl),
 * and the EA list goes through the worker's set (worker/smb2_ea.c
 * smb2_ea_set: its walk, the name rules, the xattr name) on a handle
 * with no file (fd -1), so nothing is written: the first write fails.
 *
 * Input: byte 0 the connection (bits 0-2 the dialect, 3 leasing, 4 POSIX
 * negotiated, 5 the share's `smb3 unix extensions`, 6 no tree; 7 the new
 * object is a directory, for the ACL mapping), bytes 1-2
 * and 3-4 CreateContextsOffset and CreateContextsLength (LE, from the
 * start of the rest, which stands for the request from its header on),
 * then the request.  Seeds: t/fuzz/gen_createctx_seeds.py.
 *
 * Besides not crashing, what it decodes must keep the parser's promises:
 * views inside the chain, a lease or a v2 durable context only where the
 * dialect allows them, the POSIX context only where negotiated and
 * allowed by the share, each durable context's fixed length.
 *
 * Build: make build/fuzz/fuzz_createctx
 * Run:   build/fuzz/fuzz_createctx -max_total_time=60 t/fuzz/corpus/createctx
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conf.h"
#include "proto/fscc.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "proto/smb2.h"
#include "worker/conn.h"
#include "worker/conn_priv.h"
#include "worker/file_open.h"
#include "worker/secdesc_posix.h"
#include "worker/smb2.h"
#include "worker/smb2_create_ctx.h"
#include "worker/smb2_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const uint16_t dialects[8] = {
	0x0202, 0x0210, 0x0300, 0x0302, 0x0311, 0x0311, 0x0210, 0x0300
};

static struct secdesc sd;

static void
inside(const uint8_t *v, size_t n, const uint8_t *lo, size_t len)
{
	if (v == NULL ? n != 0 : (v < lo || n > len ||
	    (size_t)(v - lo) > len - n))
		abort();
}

/* The EA list a CREATE would write (smb2_ea_set's walk). */
static void
walk_ea(const uint8_t *buf, size_t len)
{
	struct fscc_ea ea;
	size_t pos = 0, prev;
	int i;

	for (i = 0; i < 4096; i++) {
		prev = pos;
		if (fscc_ea_next(buf, len, &pos, &ea) != 0)
			return;
		inside(ea.name, ea.name_len, buf, len);
		inside(ea.value, ea.value_len, buf, len);
		if (ea.last)
			return;
		if (pos <= prev || pos > len)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct conf_share share;
	static struct tree tree;
	static struct conn conn;
	struct create_ctx cc;
	struct smb2_req req;
	const struct state_open_req *r = &cc.sreq;
	uint8_t *msg;
	uint32_t off, len;
	size_t n;
	ntstatus_t st;

	if (size < 5)
		return 0;
	n = size - 5;
	/* an exact copy, so ASan sees a read past the request */
	msg = malloc(n > 0 ? n : 1);
	if (msg == NULL)
		return 0;
	memcpy(msg, data + 5, n);
	off = (uint32_t)(data[1] | data[2] << 8);
	len = (uint32_t)(data[3] | data[4] << 8);
	memset(&conn, 0, sizeof(conn));
	conn.dialect = dialects[data[0] & 7];
	conn.capabilities = (data[0] & 0x08) ? SMB2_GLOBAL_CAP_LEASING : 0;
	conn.posix = (data[0] & 0x10) != 0;
	memset(&share, 0, sizeof(share));
	share.smb3_unix_extensions = (data[0] & 0x20) != 0;
	memset(&tree, 0, sizeof(tree));
	tree.share = &share;
	memset(&req, 0, sizeof(req));
	req.conn = &conn;
	req.tree = (data[0] & 0x40) ? NULL : &tree;
	cur_init(&req.body, msg, n);

	st = smb2_create_parse_contexts(&req, off, len, &cc);
	if (st != STATUS_SUCCESS) {
		/* the only refusals: malformed, or a durable context's own */
		if (st != STATUS_INVALID_PARAMETER &&
		    st != STATUS_OBJECT_NAME_NOT_FOUND)
			abort();
		goto out;
	}
	if (len == 0)
		goto out;
	if (off > n || len > n - off)
		abort();		/* a chain outside the request parsed */
	inside(cc.secd, cc.secd_len, msg + off, len);
	inside(cc.exta, cc.exta_len, msg + off, len);
	if ((cc.secd != NULL) != (cc.secd_len > 0) ||
	    (cc.exta != NULL) != (cc.exta_len > 0))
		abort();
	if (cc.lease && (conn.dialect < 0x0210 ||
	    !(conn.capabilities & SMB2_GLOBAL_CAP_LEASING) ||
	    r->oplock_level != SMB2_OPLOCK_LEVEL_LEASE ||
	    (r->lease_version == 2 && conn.dialect < 0x0300) ||
	    (r->lease_version != 1 && r->lease_version != 2)))
		abort();
	/* DH2Q and DH2C are taken at every dialect (worker/durable.c) */
	if (r->durable > 2 || r->reconnect > 2 ||
	    ((r->durable == 2 || r->reconnect == 2) &&
	    (r->durable == 1 || r->reconnect == 1)) ||
	    (r->durable == 2 && r->reconnect == 2))
		abort();		/* v1 with v2, DH2Q with DH2C */
	if (r->durable_seen != 0 && !cc.durable)
		abort();
	if (cc.posix.posix && (!conn.posix || (req.tree != NULL &&
	    !share.smb3_unix_extensions)))
		abort();
	if (cc.secd != NULL && secdesc_decode(cc.secd, cc.secd_len, &sd) == 0) {
		static struct vfs_acl acl;
		struct secdesc_sid us, gs;
		int named;

		/* as sd_create_given and sd_posix_apply would */
		ntacl_canon_set(&sd);
		secdesc_sid_unix_user(&us, 1000);
		secdesc_sid_unix_group(&gs, 1000);
		named = secdesc_posix_acl(&sd, data[0] >> 7, &us, &gs, &acl);
		if (named >= 0 && acl.n > VFS_ACL_MAX)
			abort();
		if (named >= 0)
			(void)secdesc_posix_perm(&acl, VFS_ACL_USER_OBJ);
	}
	if (cc.exta != NULL) {
		static struct file_open nofile = { .fd = -1 };

		walk_ea(cc.exta, cc.exta_len);
		st = smb2_ea_set(&nofile, cc.exta, cc.exta_len);
		if (st == STATUS_SUCCESS)
			abort();	/* a write to no file succeeded */
	}
out:
	free(msg);
	return 0;
}
