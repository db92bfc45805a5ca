/*
 * Per-process request counters for `usmbctl metrics`.
 *
 * A worker bumps one fixed struct after each request (metrics_request(),
 * called once from worker/dispatch.c): no syscall (the monotonic clock is
 * read through the vDSO), no allocation, no lock.  The master asks each
 * worker for its struct with MSG_METRICS_REQ; the answer (MSG_METRICS_REP)
 * is metrics_encode()'s little-endian encoding, which the master adds up
 * with metrics_decode_add() and prints with metrics_print() in the
 * Prometheus text format.  A gate answers the same way (its NEGOTIATE and
 * SESSION_SETUP, plus struct metrics_gate).  Every field is a counter that
 * only grows, so the master may keep a child's last answer and fold it
 * into a total when the child exits (daemon/ctl_ops.c): a child sends its
 * final counters unasked (MSG_METRICS_REP with id 0) just before it exits.  The codec is pure (no I/O), so the master may
 * link it as it links proto/.
 */
#ifndef USMBD_WORKER_METRICS_H
#define USMBD_WORKER_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define METRICS_NCMD		19	/* SMB2_NCOMMANDS; index = command code */
#define METRICS_NSTATUS		6	/* distinct statuses kept per command */
#define METRICS_NBUCKETS	14	/* latency buckets, the last is +Inf */
#define METRICS_VERSION		4
#define METRICS_NTXN		3	/* kinds of state write transactions */

struct metrics_cmd {
	uint64_t	count;
	uint64_t	lat_sum_us;
	uint64_t	lat_bucket[METRICS_NBUCKETS];	/* not cumulative */
	uint32_t	status[METRICS_NSTATUS];	/* NTSTATUS of the slot */
	uint64_t	status_count[METRICS_NSTATUS];	/* 0 = free slot */
	uint64_t	status_other;	/* statuses beyond the slots */
};

/* A gate's logins (worker/gate.c); zero in a user worker. */
struct metrics_gate {
	uint64_t	conns;		/* connections taken from the master */
	uint64_t	logins;		/* authenticated and handed off */
	uint64_t	auth_failures;	/* verdicts that refused the logon */
	uint64_t	timeouts;	/* closed at the first-bytes or login deadline */
};

/*
 * The state env's writer lock as this process held it, by kind of write
 * transaction: [0] CREATE (share-mode check + insert), [1] CLOSE, [2]
 * other (shm/shm.h, shm_hold_stats; copied in before each encoding).
 */
struct metrics_txn {
	uint64_t	txns;
	uint64_t	hold_ns;	/* lock taken -> commit done */
	uint64_t	wait_ns;	/* asked -> lock taken (+ txn begin) */
	uint64_t	main_txns;	/* of txns, those of the main env */
};

struct metrics {
	struct metrics_cmd cmd[METRICS_NCMD];
	uint64_t	bytes_read;	/* READ data sent to clients */
	uint64_t	bytes_written;	/* WRITE data received */
	uint64_t	bad_command;	/* command codes beyond the table */
	struct metrics_gate gate;
	struct metrics_txn txn[METRICS_NTXN];
};

/* This process's counters. */
extern struct metrics	metrics;

/* Upper bounds of the latency buckets in microseconds (last: none). */
extern const uint32_t	metrics_bucket_us[METRICS_NBUCKETS - 1];

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no syscall). */
uint64_t	metrics_clock(void);
/*
 * One request done: its command, final status, request and response
 * lengths in bytes (response: header + body + bulk data), and the
 * metrics_clock() value taken when it started.
 */
void		metrics_request(uint16_t cmd, uint32_t status, size_t req_len,
		    size_t rsp_len, uint64_t t0_ns);

/* Encodes m into buf; the length, or -1 when cap is too small. */
int		metrics_encode(const struct metrics *m, uint8_t *buf, size_t cap);
/* Adds an encoded struct to sum; 0, or -1 when malformed (sum untouched). */
int		metrics_decode_add(struct metrics *sum, const uint8_t *p, size_t len);
/* Adds the counters of m to sum. */
void		metrics_add(struct metrics *sum, const struct metrics *m);
/* Adds one command's status count to sum (merging by status). */
void		metrics_add_status(struct metrics_cmd *sum, uint32_t status,
		    uint64_t n);
/* Prints the request families of m in the Prometheus text format. */
void		metrics_print(FILE *f, const struct metrics *m);
/* "READ", "CREATE", ...; "UNKNOWN" beyond the table. */
const char	*metrics_cmd_name(unsigned cmd);

#endif
