/*
 * The descriptor writer's decision (worker/sdw_decide.c): what a caller
 * may store as a file's NT descriptor, given only what the writer read
 * itself.  Pure code, no I/O: worker/sdw.c reads the file's stat and
 * stored descriptors and writes the answer; the unit suite
 * (t/unit/check_sdw_decide.c) and a fuzz target (t/fuzz/fuzz_sdw.c) drive
 * it with hostile callers, which is who a compromised worker is.
 */
#ifndef USMBD_WORKER_SDW_DECIDE_H
#define USMBD_WORKER_SDW_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

/* Who asks: from the kernel (SO_PEERCRED, SO_PEERGROUPS), never the message. */
struct sdw_caller {
	uint32_t	 uid;
	uint32_t	 gid;
	unsigned	 ngroups;
	const uint32_t	*groups;
	int		 security;	/* holds SeSecurityPrivilege */
};

/*
 * The file as the writer read it.  stored_err: STATUS_SUCCESS when the
 * stored descriptor was read or is absent (stored NULL), else the error
 * reading it gave; the same for the parent of SDW_OP_INHERIT.
 */
struct sdw_target {
	uint32_t	 owner_uid;	/* st_uid */
	int		 is_dir;
	const uint8_t	*stored;
	size_t		 stored_len;
	ntstatus_t	 stored_err;
	int		 inherit;	/* SDW_OP_INHERIT: the parent below */
	const uint8_t	*parent;
	size_t		 parent_len;
	ntstatus_t	 parent_err;
};

/*
 * May the caller set the parts `which` of the descriptor sd (self-
 * relative, len bytes)?  On STATUS_SUCCESS, *outlen is the size of the
 * descriptor to store in out (outmax bytes), or 0 when nothing is to be
 * stored.  Any other status: store nothing.
 */
ntstatus_t	sdw_decide(const struct sdw_caller *, const struct sdw_target *,
		    uint32_t which, const uint8_t *sd, size_t len, uint8_t *out,
		    size_t outmax, size_t *outlen);

#endif
