/*
 * Messages between the master and the state process (worker/statep.c),
 * the one child that maps the shared state for the master (HACKING.md,
 * "The state process").  Payloads, little-endian, each decoded only when
 * consumed exactly:
 *
 * MSG_STATE_PURGE (master -> state): a child died.
 *	u32 pid, u16 n, n x u32 pids of the live workers (woken when the
 *	purge's wake set overflowed)
 * MSG_STATE_COUNTS (state -> master, unasked every STATEMSG_COUNTS_MS):
 *	u64 sessions, u64 opens, u64 locks, u64 map bytes
 * MSG_STATE_WRITER (state -> master): the writer lock is held too long.
 *	u32 pid of the holder (as the holder's own record says), u32 ms it
 *	has been seen holding it
 * MSG_INFO_REP from the state process, answering MSG_INFO_REQ (status):
 *	u32 STATEMSG_INFO_MAGIC, then records, each u8 kind and its fields,
 *	then u8 0 and u8 truncated (1: records were left out for room):
 *	 1 session: u64 id, u32 pid, u32 uid, str user, str addr,
 *	   u16 dialect, u8 signing, u8 encryption, u64 since
 *	 2 open: u64 dev, u64 ino, u64 persistent id, u32 pid, u64 session,
 *	   u32 access, u32 share access, u8 oplock, u32 lease state,
 *	   u32 flags, u64 since, str share, str path (both empty unless the
 *	   open is disconnected: then from its durable record)
 *	 3 lock: u64 dev, u64 ino, u32 pid, u64 persistent id, u64 offset,
 *	   u64 length, u8 exclusive
 *	 4 durable (the record of a durable or resilient open, connected or
 *	   not; after the opens): u64 persistent id, u32 flags (bit 0 v2,
 *	   bit 1 disconnected, bit 2 resilient: shm.h SHM_DURABLE_*), u32
 *	   timeout in ms
 *	strings are u16 length + bytes, no NUL, shorter than their field.
 *
 * Everything here comes from a process that maps memory any worker can
 * write: the master takes it as display and hints, never as a reason to
 * act without its own check (HACKING.md, security model).
 */
#ifndef USMBD_DAEMON_STATEMSG_H
#define USMBD_DAEMON_STATEMSG_H

#include <stddef.h>
#include <stdint.h>

#define STATEMSG_INFO_MAGIC	0x53544931u	/* "STI1" */
#define STATEMSG_LIVE_MAX	512		/* SPAWN_MAX_CHILDREN */
#define STATEMSG_NAME_MAX	256
#define STATEMSG_ADDR_MAX	64
#define STATEMSG_PATH_MAX	1024		/* display: longer paths are cut */
#define STATEMSG_COUNTS_MS	2000

struct statemsg_purge {
	uint32_t	pid;
	uint16_t	nlive;
	uint32_t	live[STATEMSG_LIVE_MAX];
};

struct statemsg_counts {
	uint64_t	sessions;
	uint64_t	opens;
	uint64_t	locks;
	uint64_t	map_bytes;
};

struct statemsg_writer {
	uint32_t	pid;
	uint32_t	held_ms;
};

struct statemsg_sess {
	uint64_t	id;
	uint32_t	pid;
	uint32_t	uid;
	char		user[STATEMSG_NAME_MAX];
	char		addr[STATEMSG_ADDR_MAX];
	uint16_t	dialect;
	uint8_t		signing;
	uint8_t		encryption;
	uint64_t	since;
};

struct statemsg_open {
	uint64_t	dev, ino;
	uint64_t	pers;
	uint32_t	pid;
	uint64_t	sid;
	uint32_t	access;
	uint32_t	share_access;
	uint8_t		oplock;
	uint32_t	lease_state;
	uint32_t	flags;
	uint64_t	since;
	char		share[STATEMSG_NAME_MAX];
	char		path[STATEMSG_PATH_MAX];
};

struct statemsg_lock {
	uint64_t	dev, ino;
	uint32_t	pid;
	uint64_t	pers;
	uint64_t	offset;
	uint64_t	length;
	uint8_t		exclusive;
};

struct statemsg_durable {
	uint64_t	pers;
	uint32_t	flags;
	uint32_t	timeout_ms;
};

/* Fixed-size messages: the payload length, or -1 when cap is too small. */
int	statemsg_purge_encode(const struct statemsg_purge *, uint8_t *buf,
	    size_t cap);
int	statemsg_counts_encode(const struct statemsg_counts *, uint8_t *buf,
	    size_t cap);
int	statemsg_writer_encode(const struct statemsg_writer *, uint8_t *buf,
	    size_t cap);
/* 0, or -1 for a malformed payload. */
int	statemsg_purge_decode(struct statemsg_purge *, const uint8_t *p,
	    size_t len);
int	statemsg_counts_decode(struct statemsg_counts *, const uint8_t *p,
	    size_t len);
int	statemsg_writer_decode(struct statemsg_writer *, const uint8_t *p,
	    size_t len);

/*
 * The status answer is built record by record into buf; a record that
 * does not fit (with room kept for the end) is left out and the answer
 * says it was truncated.
 */
struct statemsg_info_enc {
	uint8_t		*buf;
	size_t		 cap;
	size_t		 len;
	int		 truncated;
};

void	statemsg_info_begin(struct statemsg_info_enc *, uint8_t *buf,
	    size_t cap);
/* 0, or -1 when it did not fit (the answer is then marked truncated). */
int	statemsg_info_sess(struct statemsg_info_enc *,
	    const struct statemsg_sess *);
int	statemsg_info_open(struct statemsg_info_enc *,
	    const struct statemsg_open *);
int	statemsg_info_lock(struct statemsg_info_enc *,
	    const struct statemsg_lock *);
int	statemsg_info_durable(struct statemsg_info_enc *,
	    const struct statemsg_durable *);
/* Writes the end; returns the payload length. */
size_t	statemsg_info_end(struct statemsg_info_enc *);

struct statemsg_info_cb {
	/* Each returns 0 to go on, -1 to stop (out of memory). */
	int	(*sess)(const struct statemsg_sess *, void *arg);
	int	(*open)(const struct statemsg_open *, void *arg);
	int	(*lock)(const struct statemsg_lock *, void *arg);
	void	*arg;
	int	(*durable)(const struct statemsg_durable *, void *arg);
};

/*
 * Decodes a status answer, calling cb for each record as it is read.
 * 0 (with *truncated set from the answer), or -1 for a malformed answer
 * (records before the fault may already have been delivered).
 */
int	statemsg_info_decode(const uint8_t *p, size_t len,
	    const struct statemsg_info_cb *cb, int *truncated);

#endif
