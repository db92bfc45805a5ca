/*
 * Helpers of the unit tests that drive a worker's connection
 * (check_handoff.c, check_relay.c, check_relay_ring.c); static inline, as
 * in testlib.h.
 */
#ifndef USMBD_T_TESTCONN_H
#define USMBD_T_TESTCONN_H

#include <check.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/cur.h"
#include "proto/smb2_hdr.h"
#include "worker/conn_priv.h"

/* A worker's connection on one end of a socketpair; the other in *peer. */
static inline struct conn *
test_worker_conn(int *peer)
{
	int sv[2];
	struct conn *c;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv), 0);
	c = conn_new(NULL, sv[0], CONN_ROLE_WORKER, "t", CONN_BUF_SMALL);
	ck_assert_ptr_nonnull(c);
	*peer = sv[1];
	return c;
}

/* An SMB2 header at p: command, mid, flags, status (a response's). */
static inline void
test_smb2_hdr(uint8_t *p, uint16_t cmd, uint64_t mid, uint32_t flags,
    uint32_t status, uint64_t async_id)
{
	struct smb2_hdr h;

	memset(&h, 0, sizeof(h));
	h.command = cmd;
	h.message_id = mid;
	h.flags = flags;
	h.status = status;
	h.async_id = async_id;
	h.credit_charge = 1;
	h.tree_id = 5;
	smb2_hdr_encode(p, &h);
	le16_put(p + 64, 9);
}

/* A response header at the connection's sbuf + off. */
static inline void
test_rsp_hdr(struct conn *c, size_t off, uint64_t mid, uint16_t charge,
    uint16_t credits, uint32_t flags, uint32_t status)
{
	uint8_t *h = c->priv->sbuf + off;

	memset(h, 0, 64);
	le16_put(h + 6, charge);
	le32_put(h + 8, status);
	le16_put(h + 14, credits);
	le32_put(h + 16, flags);
	le64_put(h + 24, mid);
}

#endif
