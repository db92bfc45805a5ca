/*
 * The user worker's io_uring: the wait for a connection's next request and
 * the read of it are one io_uring_enter instead of epoll_wait + read
 * (t/bench/README.md, "READ: 3 or 4 syscalls").  Only receives,
 * readiness polls, the owner's sends to a relay (worker/relay_wq.c) and
 * small answers (worker/loop.c wk_tx_ring) go through the ring;
 * everything else (pread, sendfile, large answers, splice, the master
 * channel) stays a plain call.  One ring per worker,
 * used by its one thread (IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN:
 * completions run only inside our own io_uring_enter, never while the
 * worker is touching a buffer).  Without io_uring (old kernel, a sandbox
 * that forbids it, USMBD_IO_URING=0) the worker stays on epoll alone.
 */

/*
 * Input by io_uring.
 *
 * Where the kernel allows io_uring (worker/uring.h), a connection's
 * input comes by the ring instead: a receive
 * (IORING_RECVSEND_POLL_FIRST) armed straight into the connection's
 * buffer at rbuf + rlen, so the wait and the read are one
 * io_uring_enter; the epoll set (channel, timers, signals, and a
 * connection only while its output is stuck) is polled through the ring.
 * While a receive is armed nothing else reads that socket or moves its
 * rbuf (conn_process leaves the frames alone; wk_close cancels it
 * synchronously first); completions carry fd | generation so a stale one
 * (closed connection, reused fd) is dropped.  SINGLE_ISSUER |
 * DEFER_TASKRUN: the kernel writes only inside our own io_uring_enter.
 * USMBD_IO_URING=0 in the environment keeps a worker on epoll
 * (t/integ/uring.sh runs both; so does an A/B bench).
 */
#ifndef USMBD_WORKER_URING_H
#define USMBD_WORKER_URING_H

#include <stddef.h>
#include <stdint.h>

struct uring_cqe {
	uint64_t	ud;
	int32_t		res;
	uint32_t	flags;
};

/* 0, or -errno: the caller keeps to epoll. */
int	uring_init(unsigned entries);
int	uring_active(void);
void	uring_fini(void);

/*
 * Queue a request (sent with the next uring_wait).  recv waits for
 * readability first (IORING_RECVSEND_POLL_FIRST: no failed attempt on an
 * empty socket); poll is one-shot and level-triggered: armed on a ready
 * fd it completes at once.  0 or -errno.
 */
int	uring_recv(int fd, void *buf, size_t len, uint64_t ud);
int	uring_poll(int fd, unsigned events, uint64_t ud);
/*
 * A send (flags: send(2)'s, with MSG_DONTWAIT) of buf, which must stay
 * until its completion.  Non-blocking, it completes in the io_uring_enter
 * that submits it (a full socket: -EAGAIN or short, as send(2)), so that
 * completion does not end the wait for the next event: the enter waits
 * for one more (the loop turn's send and its wait are then one call).
 * Its tag has both top bits set (URING_UD_QUICK).
 */
#define URING_UD_QUICK	(3ull << 62)
int	uring_send(int fd, const void *buf, size_t len, int flags, uint64_t ud);
/*
 * 1 when the kernel bounds that wait (IORING_FEAT_EXT_ARG): an enter
 * that submits sends then waits at most a few milliseconds for the one
 * more completion, so a send the socket did not take whole is seen even
 * when no other event comes.  A connection's answers go by the ring only
 * then (worker/loop.c).
 */
int	uring_send_bounded(void);

/*
 * Submits the queued sends now, without waiting (0 or -errno): an answer
 * left to the ring must not be overtaken by one sent by send(2) later in
 * the same loop turn.
 */
int	uring_send_now(void);

/* Submits what is queued and waits for at least one completion. */
int	uring_wait(struct uring_cqe *out, int max);

/*
 * Asks the kernel to cancel the request tagged ud and returns once that
 * was tried.  A request whose run is already queued (its fd was ready
 * when it was submitted) is out of the cancel's reach: it still runs, and
 * writes its buffer, at a later uring_wait.  Every request ends with one
 * completion (its result, or -ECANCELED): only then is its buffer free.
 * Callers tag requests so they can tell a stale completion.  0, or
 * -ENOENT when the cancel did not reach it (done or queued to run).
 */
int	uring_cancel(uint64_t ud);

/*
 * Cancels the receive ud, whose buffer buf (malloc'd) the kernel may still
 * write until its completion comes: buf is freed then (or by uring_fini),
 * and that completion never reaches the caller.
 */
void	uring_bury(uint64_t ud, void *buf);

#endif
