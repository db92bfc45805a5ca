/*
 * IOCTL (MS-SMB2 2.2.31, 2.2.32, 3.3.5.15): the FSCTLs of the core
 * (VALIDATE_NEGOTIATE_INFO, QUERY_NETWORK_INTERFACE_INFO); pipe transceive
 * and file FSCTLs go to their owners.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/log.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/smb2_file.h"
#include "worker/smb2_pipe.h"

#define FSCTL_PIPE_TRANSCEIVE			0x0011C017u
#define FSCTL_VALIDATE_NEGOTIATE_INFO		0x00140204u
#define FSCTL_QUERY_NETWORK_INTERFACE_INFO	0x001401FCu
#define SMB2_0_IOCTL_IS_FSCTL			0x00000001u

#define IOCTL_RSP_BUF_OFF	(SMB2_HDR_LEN + 48)
#define NETIF_ENTRY_LEN		152


struct ioctl_req {
	uint32_t	 ctl;
	uint64_t	 fid_p, fid_v;
	const uint8_t	*in;
	uint32_t	 in_len;
	uint32_t	 max_out;
	uint32_t	 flags;
};

/* The fixed part of the response; the output (n bytes) follows it. */
static void
ioctl_rsp(struct smb2_rsp *rsp, const struct ioctl_req *q, uint32_t out_len)
{
	wcur_le16(&rsp->body, 49);
	wcur_le16(&rsp->body, 0);
	wcur_le32(&rsp->body, q->ctl);
	wcur_le64(&rsp->body, q->fid_p);
	wcur_le64(&rsp->body, q->fid_v);
	wcur_le32(&rsp->body, IOCTL_RSP_BUF_OFF);	/* input: none echoed */
	wcur_le32(&rsp->body, 0);
	wcur_le32(&rsp->body, IOCTL_RSP_BUF_OFF);
	wcur_le32(&rsp->body, out_len);
	wcur_le32(&rsp->body, 0);
	wcur_le32(&rsp->body, 0);
}

/* MS-SMB2 3.3.5.15.12: a mismatch means a downgrade attack: disconnect. */
static ntstatus_t
ioctl_validate_negotiate(struct conn *c, const struct ioctl_req *q,
    struct smb2_rsp *rsp)
{
	struct cur r;
	uint32_t caps;
	uint8_t guid[16];
	uint16_t mode, n, i, best = 0;

	cur_init(&r, q->in, q->in_len);
	caps = cur_le32(&r);
	cur_bytes(&r, guid, 16);
	mode = cur_le16(&r);
	n = cur_le16(&r);
	for (i = 0; i < n && !r.err; i++) {
		uint16_t d = cur_le16(&r);

		if (d == c->dialect)
			best = d;
	}
	if (r.err || q->max_out < 24 || n == 0 || caps != c->client_capabilities ||
	    memcmp(guid, c->client_guid, 16) != 0 ||
	    mode != c->client_security_mode || best != c->dialect) {
		conn_warnx(c, "VALIDATE_NEGOTIATE_INFO mismatch, disconnecting");
		c->priv->dead = 1;
		return STATUS_ACCESS_DENIED;
	}
	ioctl_rsp(rsp, q, 24);
	wcur_le32(&rsp->body, c->capabilities);
	wcur_bytes(&rsp->body, c->server_guid, 16);
	wcur_le16(&rsp->body, c->security_mode);
	wcur_le16(&rsp->body, c->dialect);
	return STATUS_SUCCESS;
}

/* Link speed in bit/s from sysfs; 10 Gbit/s when unknown (loopback). */
static uint64_t
ioctl_link_speed(const char *ifname)
{
	char path[96];
	FILE *f;
	long mbps = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "re");
	if (f != NULL) {
		if (fscanf(f, "%ld", &mbps) != 1)
			mbps = -1;
		fclose(f);
	}
	return mbps > 0 ? (uint64_t)mbps * 1000000 : 10000000000ull;
}

/* The interface the client reached us on (MS-SMB2 2.2.32.5). */
static ntstatus_t
ioctl_interfaces(struct conn *c, const struct ioctl_req *q, struct smb2_rsp *rsp)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct ifaddrs *ifa = NULL, *i;
	const char *name = "lo";
	uint8_t *e;

	if (q->max_out < NETIF_ENTRY_LEN)
		return STATUS_BUFFER_TOO_SMALL;
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (getifaddrs(&ifa) == 0) {
		for (i = ifa; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL || i->ifa_addr->sa_family != ss.ss_family)
				continue;
			if (ss.ss_family == AF_INET &&
			    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
			    ((struct sockaddr_in *)&ss)->sin_addr.s_addr) {
				name = i->ifa_name;
				break;
			}
			if (ss.ss_family == AF_INET6 && memcmp(
			    &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
			    &((struct sockaddr_in6 *)&ss)->sin6_addr, 16) == 0) {
				name = i->ifa_name;
				break;
			}
		}
	}
	ioctl_rsp(rsp, q, NETIF_ENTRY_LEN);
	e = wcur_reserve(&rsp->body, NETIF_ENTRY_LEN);
	if (e != NULL) {
		memset(e, 0, NETIF_ENTRY_LEN);
		le32_put(e, 0);				/* Next: last entry */
		le32_put(e + 4, if_nametoindex(name));
		le32_put(e + 8, 0);			/* no RSS, no RDMA */
		le64_put(e + 16, ioctl_link_speed(name));
		le16_put(e + 24, ss.ss_family == AF_INET6 ? 0x17 : 0x02);
		if (ss.ss_family == AF_INET)
			memcpy(e + 28, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		else
			memcpy(e + 32, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
	if (ifa != NULL)
		freeifaddrs(ifa);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_ioctl(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct cur b = req->body;	/* the owners parse from the start */
	struct ioctl_req q;
	uint32_t in_off;

	cur_skip(&b, 4);
	q.ctl = cur_le32(&b);
	q.fid_p = cur_le64(&b);
	q.fid_v = cur_le64(&b);
	in_off = cur_le32(&b);
	q.in_len = cur_le32(&b);
	cur_skip(&b, 4 + 4 + 4);
	q.max_out = cur_le32(&b);
	q.flags = cur_le32(&b);
	q.in = cur_sub(&b, in_off, q.in_len).p;
	if (b.err)
		return STATUS_INVALID_PARAMETER;
	if (q.flags != SMB2_0_IOCTL_IS_FSCTL)
		return STATUS_NOT_SUPPORTED;
	if (q.max_out > req->conn->max_trans_size)
		return STATUS_INVALID_PARAMETER;
	switch (q.ctl) {
	case FSCTL_VALIDATE_NEGOTIATE_INFO:
		return ioctl_validate_negotiate(req->conn, &q, rsp);
	case FSCTL_QUERY_NETWORK_INTERFACE_INFO:
		return ioctl_interfaces(req->conn, &q, rsp);
	case FSCTL_PIPE_TRANSCEIVE:
		if (!req->tree->is_ipc)
			return STATUS_INVALID_DEVICE_REQUEST;
		return smb2_pipe_ioctl(req, rsp);
	}
	if (!req->tree->is_ipc)
		return smb2_ioctl_file(req, rsp);
	return req->tree->is_ipc ? STATUS_NOT_SUPPORTED :
	    STATUS_INVALID_DEVICE_REQUEST;
}
