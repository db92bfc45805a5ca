/*
 * What the two halves of the owner's relays share (worker/relay.h): the
 * table of a connection's relays, filled by worker/relay_setup.c when a
 * session is relayed and run by worker/relay.c's frame path.
 */
#ifndef USMBD_WORKER_RELAY_PRIV_H
#define USMBD_WORKER_RELAY_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/conn_priv.h"
#include "worker/relay.h"

/*
 * Room for two of the largest frames and their control records: while the
 * owner writes a request, the other worker may have one answer queued in
 * the socket and be writing the next (it reads no more requests until it
 * is out).  Allocated whole, touched as used.
 */
#define RELAY_RBUF	(2 * (CONN_BUF_BIG + SMB2_FRAME_LEN + RELAY_CTL_MAX))

struct relay {
	uint64_t	 sid;		/* 0: broken, answers still drain */
	int		 fd;		/* -1: free slot */
	int		 eof;
	int		 paused;	/* buffer full: not watched until drained */
	uid_t		 uid;
	char		 user[64];
	uint64_t	 setup_mid;	/* charged here already */
	int		 setup_seen;
	uint8_t		*rbuf;
	size_t		 rlen;
	size_t		 head;		/* [head, rlen) is not yet passed on */
	size_t		 sent;		/* [head, sent) is written or being written */
	/*
	 * A receive armed in the worker's io_uring (worker/uring.h) at
	 * rbuf + rlen: the wait for an answer and its read are then the loop's
	 * one io_uring_enter.  While armed the kernel owns rbuf past rlen, so
	 * [0, rlen) is not moved (head advances instead) and rbuf is handed to
	 * the loop's graves, not freed, should the relay close (relay_disarm).
	 */
	int		 armed;
	uint32_t	 rx_gen;
	struct relay_inflight *inflight;	/* worker/relay_inflight.c */
	struct relay_mids *mids;	/* what it may answer: relay_mids.c */
	int		 sealed_ok;	/* `relay sealed sessions` when made */
	struct relay_wq	 wq;		/* what waits to be written to it */
	uint32_t	 watched;	/* its epoll events */
	uint64_t	 session_id;	/* sid's value, kept after a break */
	int		 gone;		/* its worker gone: its answers made here */
	int		 ring_fd;	/* its worker's sealed ids (relay_ring.c), or -1 */
	struct relay_fwd fwd;		/* what went to it, for relay_ring_lost */
};

struct relay_tab {
	unsigned	 n;
	struct relay	 r[RELAY_MAX];
};

/*
 * worker/relay.c: a free slot of c's table (the table made at the first
 * relay), or NULL when RELAY_MAX are in use.
 */
struct relay	*relay_slot(struct conn *c);
/*
 * worker/relay.c: r (its buffers allocated, its session, user and setup
 * message id set) starts on its end fd of the relay: counted in c's
 * table and watched.  0, or -1 (r is closed, fd with it).
 */
int		 relay_attach(struct conn *c, struct relay *r, int fd);

#endif
