/* NETWORK_INTERFACE_INFO encoding (MS-SMB2 2.2.32.5). */
#include "proto/netif.h"

size_t
smb2_netif_size(size_t n)
{
	return n * SMB2_NETIF_ENTRY_LEN;
}

int
smb2_netif_encode(struct wcur *w, const struct smb2_netif *v, size_t n)
{
	size_t i;
	uint8_t *e;

	for (i = 0; i < n; i++)
		if (v[i].ifindex == 0 || (v[i].family != SMB2_NETIF_FAMILY_IPV4 &&
		    v[i].family != SMB2_NETIF_FAMILY_IPV6))
			return -1;
	for (i = 0; i < n; i++) {
		if ((e = wcur_reserve(w, SMB2_NETIF_ENTRY_LEN)) == NULL)
			return -1;
		memset(e, 0, SMB2_NETIF_ENTRY_LEN);
		/* entries are 152 bytes, so each next one is 8-aligned */
		le32_put(e, i + 1 < n ? SMB2_NETIF_ENTRY_LEN : 0);
		le32_put(e + 4, v[i].ifindex);
		le32_put(e + 8, v[i].capability);
		le64_put(e + 16, v[i].link_speed);
		le16_put(e + 24, v[i].family);
		/* Port (e + 26) stays 0 */
		if (v[i].family == SMB2_NETIF_FAMILY_IPV4)
			memcpy(e + 28, v[i].addr, 4);	/* 2.2.32.5.1.1 */
		else {
			/* 2.2.32.5.1.2: FlowInfo 0, address, ScopeId */
			memcpy(e + 32, v[i].addr, 16);
			le32_put(e + 48, v[i].scope_id);
		}
	}
	return 0;
}
