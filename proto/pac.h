/*
 * The group memberships of a Kerberos ticket's PAC (MS-PAC 2.5
 * KERB_VALIDATION_INFO, the PAC_LOGON_INFO buffer of type 1), as the
 * ticket helper reads them for the log.  They are never authority:
 * usmbd takes a user's groups from NSS (HACKING.md "Kerberos logons").
 *
 * The buffer is an NDR type serialization (MS-RPCE 2.2.6: common and
 * private headers, then a unique pointer to the structure); the decoder
 * walks the fixed part and the deferred referents in order up to the
 * logon domain's SID, skipping the strings, and stops there (the extra
 * and resource SIDs after it are only counted).
 */
#ifndef USMBD_PROTO_PAC_H
#define USMBD_PROTO_PAC_H

#include <stddef.h>
#include <stdint.h>

#define PAC_MAX_RIDS		32	/* group RIDs kept; the rest counted */
#define PAC_SID_STR_MAX		96	/* "S-1-5-21-..." with 15 sub-authorities */

struct pac_groups {
	uint32_t	 user_rid;
	uint32_t	 primary_rid;	/* PrimaryGroupId */
	uint32_t	 n_groups;	/* GroupCount, as sent */
	uint32_t	 n_rids;	/* of them in rids, at most PAC_MAX_RIDS */
	uint32_t	 rids[PAC_MAX_RIDS];
	uint32_t	 n_extra_sids;	/* SidCount: ExtraSids, not decoded */
	char		 domain[PAC_SID_STR_MAX];	/* LogonDomainId, or "" */
};

/* 0, or -EBADMSG for anything malformed or truncated. */
int	pac_logon_groups(const uint8_t *p, size_t len, struct pac_groups *out);

#endif
