/*
 * `hosts allow` / `hosts deny` against a client's numeric address, as
 * Samba's allow_access() judges it.  The master asks it of [global]'s
 * lists on accept (daemon/listen.c); a worker asks it of a share's lists
 * at TREE_CONNECT (worker/smb2_tree.c).  No allocation: the items are
 * parsed as they are matched.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "daemon/conf.h"

int
conf_parse_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, out) == 1)
		return AF_INET6;
	return 0;
}

int
conf_addr_text(const struct sockaddr *sa, char *buf, size_t cap)
{
	const struct sockaddr_in6 *s6 = (const void *)sa;
	const struct sockaddr_in *s4 = (const void *)sa;
	const char *p = NULL;

	if (sa->sa_family == AF_INET)
		p = inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)cap);
	else if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		p = inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf,
		    (socklen_t)cap);
	else if (sa->sa_family == AF_INET6)
		p = inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)cap);
	if (p != NULL)
		return 0;
	if (cap > 0)
		snprintf(buf, cap, "?");
	return -1;
}

static int
hosts_prefix_match(const uint8_t *a, const uint8_t *b, int bits)
{
	int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

/* Bits set in a contiguous v4 netmask like 255.255.0.0, or -1. */
static int
hosts_mask_bits(const uint8_t m[4])
{
	uint32_t v = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 |
	    (uint32_t)m[2] << 8 | m[3];
	int bits = 0;

	while (v & 0x80000000u) {
		bits++;
		v <<= 1;
	}
	return v == 0 ? bits : -1;
}

/* One `hosts allow` / `hosts deny` item against a numeric address. */
static int
hosts_item_match(const char *item, const char *addr, int fam, const uint8_t a[16])
{
	char net[INET6_ADDRSTRLEN + 8];
	const char *slash;
	uint8_t n[16], m[16];
	int nfam, bits;
	size_t len = strlen(item);

	if (strcasecmp(item, "ALL") == 0)
		return 1;
	if (strcasecmp(item, "localhost") == 0)
		return strcmp(addr, "127.0.0.1") == 0 || strcmp(addr, "::1") == 0;
	/* "10.1." or "fe80:": a textual prefix, as Samba treats it. */
	if (len > 0 && (item[len - 1] == '.' || item[len - 1] == ':'))
		return strncasecmp(addr, item, len) == 0;
	slash = strchr(item, '/');
	if (slash == NULL) {
		nfam = conf_parse_addr(item, n);
		return nfam != 0 && nfam == fam && memcmp(n, a, 16) == 0;
	}
	if ((size_t)(slash - item) >= sizeof(net))
		return 0;
	memcpy(net, item, (size_t)(slash - item));
	net[slash - item] = '\0';
	nfam = conf_parse_addr(net, n);
	if (nfam == 0 || nfam != fam)
		return 0;
	if (fam == AF_INET && strchr(slash + 1, '.') != NULL) {
		if (conf_parse_addr(slash + 1, m) != AF_INET ||
		    (bits = hosts_mask_bits(m)) < 0)
			return 0;
	} else {
		char *end;
		long v = strtol(slash + 1, &end, 10);

		if (end == slash + 1 || *end != '\0' || v < 0 ||
		    v > (fam == AF_INET ? 32 : 128))
			return 0;
		bits = (int)v;
	}
	return hosts_prefix_match(n, a, bits);
}

static int
hosts_list_match(char *const *list, const char *addr)
{
	uint8_t a[16];
	int fam = conf_parse_addr(addr, a), in = 0;

	for (; list != NULL && *list != NULL; list++) {
		/* "A EXCEPT B", Samba's list_match: in A and not in B */
		if (strcasecmp(*list, "EXCEPT") == 0) {
			if (!in)
				return 0;
			for (list++; *list != NULL; list++)
				if (hosts_item_match(*list, addr, fam, a))
					return 0;
			return 1;
		}
		if (!in && hosts_item_match(*list, addr, fam, a))
			in = 1;
	}
	return in;
}

/*
 * Samba's order: loopback is allowed unless denied by name; with only an
 * allow list a host must be on it; with only a deny list it must not be;
 * with both, the allow list wins and an unlisted host is allowed.
 */
int
conf_peer_allowed(char *const *allow, char *const *deny, const char *addr)
{
	int have_allow = allow != NULL && *allow != NULL;
	int have_deny = deny != NULL && *deny != NULL;
	uint8_t a[16];

	/* an address we cannot read matches nothing: refused by any list */
	if ((have_allow || have_deny) && conf_parse_addr(addr, a) == 0)
		return 0;

	if (strcmp(addr, "127.0.0.1") == 0 || strcmp(addr, "::1") == 0)
		return !(have_deny && hosts_list_match(deny, addr) &&
		    !(have_allow && hosts_list_match(allow, addr)));
	if (!have_allow && !have_deny)
		return 1;
	if (!have_deny)
		return hosts_list_match(allow, addr);
	if (!have_allow)
		return !hosts_list_match(deny, addr);
	if (hosts_list_match(allow, addr))
		return 1;
	return !hosts_list_match(deny, addr);
}

