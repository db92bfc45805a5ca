/*
 * IOCTL (MS-SMB2 2.2.31, 2.2.32, 3.3.5.15): the FSCTLs of the core
 * (VALIDATE_NEGOTIATE_INFO, QUERY_NETWORK_INTERFACE_INFO, PIPE_WAIT, the
 * DFS referral refusal); pipe transceive and file FSCTLs go to their
 * owners.  An FSCTL nobody knows: NOT_SUPPORTED on IPC$,
 * INVALID_DEVICE_REQUEST on a disk share (smb2_ioctl_file's default).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/netif.h"
#include "proto/smb2_hdr.h"
#include "proto/unicode.h"
#include "worker/conn_priv.h"
#include "worker/dfs.h"
#include "worker/dispatch.h"
#include "worker/smb2_file.h"
#include "worker/pipe.h"
#include "worker/smb2_pipe.h"

#define FSCTL_PIPE_TRANSCEIVE			0x0011C017u
#define FSCTL_VALIDATE_NEGOTIATE_INFO		0x00140204u
#define FSCTL_QUERY_NETWORK_INTERFACE_INFO	0x001401FCu
#define FSCTL_DFS_GET_REFERRALS			0x00060194u
#define FSCTL_DFS_GET_REFERRALS_EX		0x000601B0u
#define FSCTL_PIPE_WAIT				0x00110018u
#define SMB2_0_IOCTL_IS_FSCTL			0x00000001u

#define IOCTL_RSP_BUF_OFF	(SMB2_HDR_LEN + 48)
/* entries kept per answer: 64 addresses (9.7 KB) is plenty for a server */
#define IOCTL_NETIF_MAX		64


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

/*
 * Link speed in bit/s from sysfs (Mbit/s there); 1 Gbit/s when the
 * interface reports none (loopback, many virtual ones), as Samba does.
 */
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
	return mbps > 0 ? (uint64_t)mbps * 1000000 : 1000000000ull;
}

/*
 * RSS_CAPABLE when the kernel spreads the interface's receive side over
 * several queues (more than one rx-N under queues/).  RDMA_CAPABLE is
 * never set: usmbd serves no SMB Direct.
 */
static uint32_t
ioctl_link_caps(const char *ifname)
{
	char path[96];
	DIR *d;
	struct dirent *de;
	int rx = 0, guard = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && guard++ < 4096)
		if (strncmp(de->d_name, "rx-", 3) == 0)
			rx++;
	closedir(d);
	return rx > 1 ? SMB2_NETIF_RSS_CAPABLE : 0;
}

/*
 * Does usmbd listen on this address?  With `interfaces` unset it listens
 * on every address (0.0.0.0 and ::) but a loopback address is useless to
 * another host, so it is offered only when configured by name.
 */
static int
ioctl_addr_served(const struct conf *conf, const struct sockaddr *sa,
    unsigned ifflags)
{
	static const uint8_t any[16];	/* 0.0.0.0 and :: */
	char *const *ifs;
	uint8_t want[16];
	const void *have;
	size_t alen;
	int fam = sa->sa_family;

	if (fam == AF_INET) {
		have = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		alen = 4;
	} else {
		have = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		alen = 16;
	}
	if (conf == NULL || conf->interfaces == NULL)
		return !(ifflags & IFF_LOOPBACK);
	for (ifs = conf->interfaces; *ifs != NULL; ifs++) {
		if (inet_pton(fam, *ifs, want) != 1)
			continue;	/* the other family */
		/* a wildcard listener serves the family's every address */
		if (memcmp(want, any, alen) == 0)
			return !(ifflags & IFF_LOOPBACK);
		if (memcmp(want, have, alen) == 0)
			return 1;
	}
	return 0;
}

/*
 * The addresses of the server's interfaces that are up, one entry each
 * (MS-SMB2 3.3.5.15.11); at most max.  getifaddrs allocates, which is
 * acceptable here: clients ask for this about every ten minutes.
 */
static size_t
ioctl_netif_list(const struct conf *conf, struct smb2_netif *v, size_t max)
{
	struct ifaddrs *ifa = NULL, *i;
	size_t n = 0;

	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL && n < max; i = i->ifa_next) {
		struct smb2_netif *e = &v[n];
		const struct sockaddr *sa = i->ifa_addr;

		if (sa == NULL || (sa->sa_family != AF_INET &&
		    sa->sa_family != AF_INET6))
			continue;
		if (!(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_RUNNING) ||
		    !ioctl_addr_served(conf, sa, i->ifa_flags))
			continue;
		memset(e, 0, sizeof(*e));
		if ((e->ifindex = if_nametoindex(i->ifa_name)) == 0)
			continue;
		e->capability = ioctl_link_caps(i->ifa_name);
		e->link_speed = ioctl_link_speed(i->ifa_name);
		if (sa->sa_family == AF_INET) {
			e->family = SMB2_NETIF_FAMILY_IPV4;
			memcpy(e->addr, &((const struct sockaddr_in *)
			    (const void *)sa)->sin_addr, 4);
		} else {
			const struct sockaddr_in6 *s6 = (const void *)sa;

			e->family = SMB2_NETIF_FAMILY_IPV6;
			memcpy(e->addr, &s6->sin6_addr, 16);
			e->scope_id = s6->sin6_scope_id;
		}
		n++;
	}
	freeifaddrs(ifa);
	return n;
}

/* MS-SMB2 3.3.5.15.11 */
static ntstatus_t
ioctl_interfaces(struct smb2_req *req, const struct ioctl_req *q,
    struct smb2_rsp *rsp)
{
	static struct smb2_netif v[IOCTL_NETIF_MAX];
	struct conn *c = req->conn;
	size_t n;
	uint32_t need;
	uint8_t nb[4];

	/*
	 * The spec's MAY: only where multichannel is offered (3.x, and one
	 * worker per user so that every channel meets the session).
	 */
	if (c->dialect < DIALECT_300 ||
	    !(c->capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
		return STATUS_NOT_SUPPORTED;
	n = ioctl_netif_list(c->conf, v, IOCTL_NETIF_MAX);
	need = (uint32_t)smb2_netif_size(n);
	if (q->max_out < need) {
		/* MS-SMB2 2.2.2.2: the error carries the size needed */
		le32_put(nb, need);
		smb2_error_encode(&rsp->body, c->dialect == DIALECT_311, nb, 4);
		return STATUS_BUFFER_TOO_SMALL;
	}
	ioctl_rsp(rsp, q, need);
	if (smb2_netif_encode(&rsp->body, v, n) != 0)
		return STATUS_INSUFF_SERVER_RESOURCES;
	return STATUS_SUCCESS;
}

/*
 * FSCTL_PIPE_WAIT (MS-FSCC 2.3.49): our pipes are served in process and
 * always have an instance free, so a known name answers at once and an
 * unknown one is not found; nothing ever waits.
 */
static ntstatus_t
ioctl_pipe_wait(const struct ioctl_req *q)
{
	struct cur r;
	uint32_t nlen;
	const uint8_t *name;
	char name8[256];

	cur_init(&r, q->in, q->in_len);
	cur_skip(&r, 8);		/* Timeout */
	nlen = cur_le32(&r);
	cur_skip(&r, 2);		/* TimeoutSpecified, Padding */
	name = cur_view(&r, nlen);
	if (r.err || nlen == 0 || (nlen & 1) ||
	    unicode_utf16_to_utf8(name, nlen, name8, sizeof(name8)) < 0)
		return STATUS_INVALID_PARAMETER;
	return pipe_lookup(name8) != NULL ? STATUS_SUCCESS :
	    STATUS_OBJECT_NAME_NOT_FOUND;
}

/* FSCTL_DFS_GET_REFERRALS and _EX, on IPC$ or any share (worker/dfs.c) */
static ntstatus_t
ioctl_dfs(struct smb2_req *req, const struct ioctl_req *q,
    struct smb2_rsp *rsp)
{
	const uint8_t *out;
	uint32_t n;
	ntstatus_t st;

	st = dfs_get_referrals(req, q->in, q->in_len,
	    q->ctl == FSCTL_DFS_GET_REFERRALS_EX, q->max_out, &out, &n);
	if (st != STATUS_SUCCESS && st != STATUS_BUFFER_OVERFLOW)
		return st;
	ioctl_rsp(rsp, q, n);
	wcur_bytes(&rsp->body, out, n);
	return rsp->body.err ? STATUS_INSUFF_SERVER_RESOURCES : st;
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
	case FSCTL_DFS_GET_REFERRALS:
	case FSCTL_DFS_GET_REFERRALS_EX:
	case FSCTL_PIPE_WAIT:
	case FSCTL_VALIDATE_NEGOTIATE_INFO:
	case FSCTL_QUERY_NETWORK_INTERFACE_INFO:
		/* MS-SMB2 3.3.5.15: these name no open */
		if (q.fid_p != UINT64_MAX || q.fid_v != UINT64_MAX)
			return STATUS_INVALID_PARAMETER;
		break;
	}
	switch (q.ctl) {
	case FSCTL_VALIDATE_NEGOTIATE_INFO:
		return ioctl_validate_negotiate(req->conn, &q, rsp);
	case FSCTL_QUERY_NETWORK_INTERFACE_INFO:
		return ioctl_interfaces(req, &q, rsp);
	case FSCTL_DFS_GET_REFERRALS:
	case FSCTL_DFS_GET_REFERRALS_EX:
		/* MS-SMB2 3.3.5.15.2; without host msdfs FS_DRIVER_REQUIRED */
		return ioctl_dfs(req, &q, rsp);
	case FSCTL_PIPE_WAIT:
		if (!req->tree->is_ipc)
			return STATUS_INVALID_DEVICE_REQUEST;
		return ioctl_pipe_wait(&q);
	case FSCTL_PIPE_TRANSCEIVE:
		if (!req->tree->is_ipc)
			return STATUS_INVALID_DEVICE_REQUEST;
		return smb2_pipe_ioctl(req, rsp);
	}
	/* MS-SMB2 3.3.5.15: an FSCTL the server does not know */
	if (req->tree->is_ipc)
		return STATUS_NOT_SUPPORTED;
	return smb2_ioctl_file(req, rsp);
}
