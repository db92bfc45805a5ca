/*
 * DFS referrals (MS-DFSC): the request of FSCTL_DFS_GET_REFERRALS and
 * _EX decoded in place, the text of an msdfs link (Samba's
 * "msdfs:server\share[,server2\share2]") split into its targets, and the
 * RESP_GET_DFS_REFERRAL encoded.  Pure codecs over caller buffers.
 */
#ifndef USMBD_PROTO_DFS_H
#define USMBD_PROTO_DFS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

/* MS-DFSC 2.2.3: RequestFlags */
#define DFS_REQ_FLAG_SITENAME		0x0001u
/* MS-DFSC 2.2.4: ReferralHeaderFlags */
#define DFS_HEADER_REFERRAL_SERVERS	0x00000001u
#define DFS_HEADER_STORAGE_SERVERS	0x00000002u
/* MS-DFSC 2.2.5.2: ServerType */
#define DFS_SERVER_NON_ROOT		0x0000u
#define DFS_SERVER_ROOT			0x0001u
/* MS-DFSC 2.2.5.4: ReferralEntryFlags of V4, the first of a target set */
#define DFS_ENTRY_TARGET_SET_BOUNDARY	0x0004u
/* MS-FSCC 2.1.2.1: the reparse tag a DFS link is listed with */
#define IO_REPARSE_TAG_DFS		0x8000000Au
/* Samba's REFERRAL_TTL, seconds */
#define DFS_REFERRAL_TTL		600u
/* targets of one link answered; the rest of the text is not read */
#define DFS_MAX_TARGETS			32

/*
 * A request: MaxReferralLevel, the file name (UTF-16LE, its terminating
 * NUL not counted) and, for _EX, the site name.  Views into the input.
 */
struct dfs_req {
	uint16_t	 max_level;
	uint16_t	 flags;		/* _EX RequestFlags; 0 otherwise */
	const uint8_t	*name16;
	size_t		 name16_len;
	const uint8_t	*site16;
	size_t		 site16_len;
};

/*
 * REQ_GET_DFS_REFERRAL (MS-DFSC 2.2.2) and REQ_GET_DFS_REFERRAL_EX
 * (2.2.3).  0, or -EINVAL: truncated, an odd name length, lengths that
 * disagree.  A name without its NUL is taken whole (as Samba does).
 */
int	dfs_req_decode(const uint8_t *in, size_t len, struct dfs_req *out);
int	dfs_req_ex_decode(const uint8_t *in, size_t len, struct dfs_req *out);

/* One target as the link writes it, its leading separators skipped. */
struct dfs_target {
	const char	*p;
	size_t		 len;
};

/* Does the symlink text start with "msdfs:" (any case, as Samba)? */
int	dfs_link_is(const char *text, size_t len);
/*
 * The targets of an msdfs link text ("msdfs:" then targets separated by
 * commas, empty ones skipped), at most max: their number (> 0), or
 * -EINVAL (not an msdfs link, no target, a control character).
 */
int	dfs_link_parse(const char *text, size_t len, struct dfs_target *t,
	    size_t max);

/*
 * A response: every target gets one entry of the version max_level
 * allows (below 3: V2, 3: V3, 4 and up: V4, the first entry marked as
 * the target set's start), with path as DFSPath and DFSAlternatePath
 * (written once) and "\" + target as NetworkAddress, '/' written as '\'.
 */
struct dfs_rsp {
	uint16_t	 max_level;
	uint16_t	 path_consumed;		/* bytes of UTF-16 */
	uint32_t	 header_flags;
	uint16_t	 server_type;
	uint32_t	 ttl;
	const char	*path;			/* UTF-8 */
	size_t		 path_len;
	const struct dfs_target *t;
	size_t		 nt;
};

/* RESP_GET_DFS_REFERRAL (MS-DFSC 2.2.4) into w: 0, or -EINVAL / -ENOSPC. */
int	dfs_rsp_encode(struct wcur *w, const struct dfs_rsp *r);

#endif
