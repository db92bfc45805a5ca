/*
 * NETWORK_INTERFACE_INFO (MS-SMB2 2.2.32.5), the answer to
 * FSCTL_QUERY_NETWORK_INTERFACE_INFO.  Pure code: the caller enumerates
 * the interfaces, this lays them out.
 */
#ifndef USMBD_PROTO_NETIF_H
#define USMBD_PROTO_NETIF_H

#include <stddef.h>
#include <stdint.h>

#include "proto/cur.h"

#define SMB2_NETIF_ENTRY_LEN		152	/* 24 + SockAddr_Storage (128) */
/* 2.2.32.5 Capability */
#define SMB2_NETIF_RSS_CAPABLE		0x00000001u
#define SMB2_NETIF_RDMA_CAPABLE		0x00000002u
/* 2.2.32.5.1 SockAddr_Storage Family */
#define SMB2_NETIF_FAMILY_IPV4		0x0002
#define SMB2_NETIF_FAMILY_IPV6		0x0017

struct smb2_netif {
	uint32_t	 ifindex;	/* never 0 (3.3.5.15.11) */
	uint32_t	 capability;	/* SMB2_NETIF_*_CAPABLE */
	uint64_t	 link_speed;	/* bit/s */
	uint16_t	 family;	/* SMB2_NETIF_FAMILY_* */
	uint8_t		 addr[16];	/* network order; IPv4 uses 4 bytes */
	uint32_t	 scope_id;	/* IPv6 only */
};

/* The bytes n entries take on the wire. */
size_t	smb2_netif_size(size_t n);
/*
 * Writes the n entries as one chain (Next links each to the following,
 * 0 on the last).  Returns 0, or -1 when an entry is invalid (ifindex 0,
 * unknown family) or w has no room (w->err then set); nothing useful is
 * left in w on -1.
 */
int	smb2_netif_encode(struct wcur *w, const struct smb2_netif *v, size_t n);

#endif
