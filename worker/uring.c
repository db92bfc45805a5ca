/*
 * A minimal io_uring on raw system calls (no liburing: the worker needs
 * five request kinds, worker/uring.h).  The rings are mapped once at
 * start; queueing a request writes an SQE into the shared ring, no call.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vfs/vfs.h"
#include "worker/uring.h"

/*
 * vfs/dirnote.c's fanotify fd, polled by the ring (multishot) so that
 * its events are taken, in order, ahead of any request received after
 * them (uring_reap), with no system call of their own.  Its completions
 * never reach the caller.
 */
#define URING_UD_DIRNOTE	(UINT64_MAX - 1)

static int	uring_poll_add(int fd, unsigned events, uint32_t mode,
		    uint64_t ud);

/* Buffers of cancelled receives, freed at their completion (uring_bury). */
struct uring_grave {
	uint64_t		 ud;
	void			*buf;
	struct uring_grave	*next;
};
static struct uring_grave *uring_graves;

#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN	(1U << 13)
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER	(1U << 12)
#endif

static struct {
	int			 fd;
	unsigned		 sq_entries;
	unsigned		*sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned		*cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe	*sqes;
	struct io_uring_cqe	*cqes;
	unsigned		 sqt;		/* our tail, published on submit */
	unsigned		 pending;	/* queued, not yet submitted */
	unsigned		 quick;		/* sends queued, not yet reaped */
	int			 ext_arg;	/* IORING_FEAT_EXT_ARG: a timed wait */
	void			*ring_map;	/* SQ and CQ rings, one map */
	size_t			 ring_len, sqe_len;
} ur = { .fd = -1 };

static int
uring_setup(unsigned entries, struct io_uring_params *p)
{
	return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int
uring_enter(unsigned submit, unsigned wait, unsigned flags)
{
	return (int)syscall(__NR_io_uring_enter, ur.fd, submit, wait, flags,
	    NULL, 0);
}

int
uring_active(void)
{
	return ur.fd >= 0;
}

int
uring_send_bounded(void)
{
	return ur.fd >= 0 && ur.ext_arg;
}

/*
 * The wait of an enter that submits sends (uring_send): for one
 * completion more than those sends, but no longer than URING_QUICK_NS.
 * A send that the socket did not take whole completes short or -EAGAIN,
 * and its owner must watch for room (EPOLLOUT): the bound keeps it from
 * waiting on an event its client will not send before its answer.  A
 * wait that ends on the bound costs the enter that the send saved, so
 * the bound is well above a busy client's pause between requests (2 ms
 * cost perfcheck a tenth of a call per CREATE at a load near 6), and low
 * enough for the rare full socket (a client not reading) to cost little.
 */
#define URING_QUICK_NS	10000000L

static int
uring_enter_bounded(unsigned submit, unsigned wait)
{
	struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = URING_QUICK_NS };
	struct io_uring_getevents_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.sigmask_sz = _NSIG / 8;
	arg.ts = (uint64_t)(uintptr_t)&ts;
	return (int)syscall(__NR_io_uring_enter, ur.fd, submit, wait,
	    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg, sizeof(arg));
}

void
uring_fini(void)
{
	struct uring_grave *g;

	if (ur.fd < 0)
		return;
	vfs_dirnote_armed(0);	/* its poll goes with the ring */
	if (ur.sqes != NULL)
		(void)munmap(ur.sqes, ur.sqe_len);
	if (ur.ring_map != NULL)
		(void)munmap(ur.ring_map, ur.ring_len);
	(void)close(ur.fd);
	memset(&ur, 0, sizeof(ur));
	ur.fd = -1;
	while ((g = uring_graves) != NULL) {	/* the ring is gone first */
		uring_graves = g->next;
		free(g->buf);
		free(g);
	}
}

/* A shared mapping of the ring fd at off, or NULL (errno set). */
static void *
uring_map(size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, ur.fd, off);

	return p == MAP_FAILED ? NULL : p;
}

int
uring_init(unsigned entries)
{
	struct io_uring_params p;
	const char *env = getenv("USMBD_IO_URING");
	size_t cq_len;
	char *sq, *cq;
	int rc;

	if (env != NULL && strcmp(env, "0") == 0)
		return -ENOTSUP;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	ur.fd = uring_setup(entries, &p);
	if (ur.fd < 0)
		return -errno;
	/* Kernels that drop CQEs on overflow or map rings apart: not ours. */
	if (!(p.features & IORING_FEAT_NODROP) ||
	    !(p.features & IORING_FEAT_SINGLE_MMAP)) {
		rc = -ENOTSUP;
		goto fail;
	}
	ur.ring_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (cq_len > ur.ring_len)
		ur.ring_len = cq_len;
	ur.sqe_len = p.sq_entries * sizeof(struct io_uring_sqe);
	if ((ur.ring_map = uring_map(ur.ring_len, IORING_OFF_SQ_RING)) == NULL ||
	    (ur.sqes = uring_map(ur.sqe_len, IORING_OFF_SQES)) == NULL) {
		rc = -errno;
		goto fail;
	}
	sq = cq = ur.ring_map;
	ur.sq_entries = p.sq_entries;
	ur.sq_head = (unsigned *)(void *)(sq + p.sq_off.head);
	ur.sq_tail = (unsigned *)(void *)(sq + p.sq_off.tail);
	ur.sq_mask = (unsigned *)(void *)(sq + p.sq_off.ring_mask);
	ur.sq_array = (unsigned *)(void *)(sq + p.sq_off.array);
	ur.cq_head = (unsigned *)(void *)(cq + p.cq_off.head);
	ur.cq_tail = (unsigned *)(void *)(cq + p.cq_off.tail);
	ur.cq_mask = (unsigned *)(void *)(cq + p.cq_off.ring_mask);
	ur.cqes = (struct io_uring_cqe *)(void *)(cq + p.cq_off.cqes);
	ur.ext_arg = (p.features & IORING_FEAT_EXT_ARG) != 0;
	ur.sqt = *ur.sq_tail;
	ur.pending = 0;
	if ((rc = vfs_dirnote_init()) >= 0 &&
	    uring_poll_add(rc, POLLIN, IORING_POLL_ADD_MULTI,
	    URING_UD_DIRNOTE) == 0)
		vfs_dirnote_armed(1);
	return 0;
fail:
	uring_fini();
	return rc;
}

/* Hands the queued SQEs to the kernel without waiting. */
static int
uring_flush(void)
{
	int rc;

	__atomic_store_n(ur.sq_tail, ur.sqt, __ATOMIC_RELEASE);
	while (ur.pending > 0) {
		rc = uring_enter(ur.pending, 0, 0);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (rc == 0)
			return -EBUSY;
		ur.pending -= (unsigned)rc < ur.pending ? (unsigned)rc :
		    ur.pending;
	}
	return 0;
}

static struct io_uring_sqe *
uring_sqe(void)
{
	struct io_uring_sqe *q;
	unsigned idx;

	if (ur.fd < 0)
		return NULL;
	if (ur.sqt - __atomic_load_n(ur.sq_head, __ATOMIC_ACQUIRE) >=
	    ur.sq_entries && (uring_flush() < 0 ||
	    ur.sqt - __atomic_load_n(ur.sq_head, __ATOMIC_ACQUIRE) >=
	    ur.sq_entries))
		return NULL;
	idx = ur.sqt & *ur.sq_mask;
	q = &ur.sqes[idx];
	memset(q, 0, sizeof(*q));
	ur.sq_array[idx] = idx;
	ur.sqt++;
	ur.pending++;
	return q;
}

int
uring_send_now(void)
{
	return ur.quick > 0 ? uring_flush() : 0;
}

int
uring_recv(int fd, void *buf, size_t len, uint64_t ud)
{
	struct io_uring_sqe *q = uring_sqe();

	if (q == NULL)
		return -ENOBUFS;
	q->opcode = IORING_OP_RECV;
	q->fd = fd;
	q->addr = (uint64_t)(uintptr_t)buf;
	q->len = len > 0x7fffffff ? 0x7fffffff : (uint32_t)len;
	q->ioprio = IORING_RECVSEND_POLL_FIRST;
	q->user_data = ud;
	return 0;
}

int
uring_send(int fd, const void *buf, size_t len, int flags, uint64_t ud)
{
	struct io_uring_sqe *q = uring_sqe();

	if (q == NULL)
		return -ENOBUFS;
	ur.quick++;
	q->opcode = IORING_OP_SEND;
	q->fd = fd;
	q->addr = (uint64_t)(uintptr_t)buf;
	q->len = len > 0x7fffffff ? 0x7fffffff : (uint32_t)len;
	q->msg_flags = (uint32_t)flags;
	q->user_data = ud;
	return 0;
}

/* mode IORING_POLL_ADD_MULTI: a multishot poll, a completion at each
 * wakeup, IORING_CQE_F_MORE set while it stays armed; 0: one shot. */
static int
uring_poll_add(int fd, unsigned events, uint32_t mode, uint64_t ud)
{
	struct io_uring_sqe *q = uring_sqe();

	if (q == NULL)
		return -ENOBUFS;
	q->opcode = IORING_OP_POLL_ADD;
	q->fd = fd;
	q->poll32_events = events;
	q->len = mode;
	q->user_data = ud;
	return 0;
}

int
uring_poll(int fd, unsigned events, uint64_t ud)
{
	return uring_poll_add(fd, events, 0, ud);
}

/* Frees the buffer buried for completion ud: 1 if there was one. */
static int
uring_unbury(uint64_t ud)
{
	struct uring_grave **gp, *g;

	for (gp = &uring_graves; (g = *gp) != NULL; gp = &g->next)
		if (g->ud == ud) {
			*gp = g->next;
			free(g->buf);
			free(g);
			return 1;
		}
	return 0;
}

void
uring_bury(uint64_t ud, void *buf)
{
	struct uring_grave *g;

	(void)uring_cancel(ud);
	if ((g = malloc(sizeof(*g))) == NULL)
		return;		/* the buffer is left to the kernel, never freed */
	g->ud = ud;
	g->buf = buf;
	g->next = uring_graves;
	uring_graves = g;
}

static int
uring_reap(struct uring_cqe *out, int max)
{
	unsigned head = *ur.cq_head;
	unsigned tail = __atomic_load_n(ur.cq_tail, __ATOMIC_ACQUIRE);
	int n = 0;

	while (head != tail && n < max) {
		const struct io_uring_cqe *c = &ur.cqes[head & *ur.cq_mask];

		head++;
		if ((c->user_data & URING_UD_QUICK) == URING_UD_QUICK &&
		    c->user_data < URING_UD_DIRNOTE && ur.quick > 0)
			ur.quick--;
		/* taken here, before any request of this batch (URING_UD_DIRNOTE) */
		if (c->user_data == URING_UD_DIRNOTE) {
			vfs_dirnote_event();
			if (!(c->flags & IORING_CQE_F_MORE))
				vfs_dirnote_armed(0);	/* ended: read at each look */
			continue;
		}
		if (uring_graves != NULL && uring_unbury(c->user_data))
			continue;	/* of a receive taken back meanwhile */
		out[n].ud = c->user_data;
		out[n].res = c->res;
		out[n].flags = c->flags;
		n++;
	}
	__atomic_store_n(ur.cq_head, head, __ATOMIC_RELEASE);
	return n;
}

int
uring_wait(struct uring_cqe *out, int max)
{
	int n, rc;

	n = uring_reap(out, max);
	if (n > 0)
		return n;
	__atomic_store_n(ur.sq_tail, ur.sqt, __ATOMIC_RELEASE);
	/* The sends submitted here complete at once (uring_send). */
	if (ur.quick > 0 && ur.ext_arg)
		rc = uring_enter_bounded(ur.pending, 1 + ur.quick);
	else
		rc = uring_enter(ur.pending, 1 + ur.quick,
		    IORING_ENTER_GETEVENTS);
	if (rc < 0) {
		/* EINTR, ETIME (bounded), or EBUSY with completions to take
		 * first: reap. */
		if (errno != EINTR && errno != EBUSY && errno != EAGAIN &&
		    errno != ETIME)
			return -errno;
	} else
		ur.pending -= (unsigned)rc < ur.pending ? (unsigned)rc :
		    ur.pending;
	return uring_reap(out, max);
}

int
uring_cancel(uint64_t ud)
{
	struct io_uring_sync_cancel_reg reg;
	int rc;

	if (ur.fd < 0)
		return -ENOENT;
	/* The request may still sit in the SQ: the kernel must see it. */
	if ((rc = uring_flush()) < 0)
		return rc;
	memset(&reg, 0, sizeof(reg));
	reg.addr = ud;
	reg.timeout.tv_sec = -1;
	reg.timeout.tv_nsec = -1;
	do
		rc = (int)syscall(__NR_io_uring_register, ur.fd,
		    IORING_REGISTER_SYNC_CANCEL, &reg, 1);
	while (rc < 0 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}
