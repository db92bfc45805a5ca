/*
 * `hosts allow` / `hosts deny` against a client's numeric address, as
 * Samba's allow_access() judges it.  The master asks it of [global]'s
 * lists on accept (daemon/listen.c); a worker asks it of a share's lists
 * at TREE_CONNECT (worker/smb2_tree.c).  No allocation: the items are
 * parsed as they are matched, by the one parser the load-time check uses
 * (daemon/conf_access.c conf_hosts_check), so what loads is what matches.
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

/*
 * "10.", "10.1.", "10.1.2.": one to three decimal octets (no leading
 * zero: the address text never has one, so Samba's textual prefix could
 * never match it), each ending in '.'; the network of those octets.
 */
static int
hosts_v4_prefix(const char *s, struct conf_hostpat *hp)
{
	int n = 0;

	while (*s != '\0') {
		unsigned v = 0, digits = 0;

		for (; *s >= '0' && *s <= '9'; s++, digits++)
			v = v * 10 + (unsigned)(*s - '0');
		if (digits == 0 || digits > 3 || v > 255 || *s != '.' ||
		    (digits > 1 && s[-(int)digits] == '0') || n == 3)
			return -1;
		hp->addr[n++] = (uint8_t)v;
		s++;
	}
	hp->family = AF_INET;
	hp->bits = 8 * n;
	return n > 0 ? 0 : -1;
}

static int
hosts_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * "fe80:", "2001:db8:": one to seven groups of one to four hex digits,
 * each ending in ':' (no "::"); the network of those groups, fe80::/16,
 * 2001:db8::/32.  Numeric, not a prefix of the text: "2001:db8:0:" takes
 * 2001:db8::5 too, whose text does not begin so.
 */
static int
hosts_v6_prefix(const char *s, struct conf_hostpat *hp)
{
	int n = 0;

	while (*s != '\0') {
		unsigned v = 0, digits = 0;
		int h;

		for (; (h = hosts_hex(*s)) >= 0; s++, digits++)
			v = v << 4 | (unsigned)h;
		if (digits == 0 || digits > 4 || *s != ':' || n == 7)
			return -1;
		hp->addr[2 * n] = (uint8_t)(v >> 8);
		hp->addr[2 * n + 1] = (uint8_t)v;
		n++;
		s++;
	}
	hp->family = AF_INET6;
	hp->bits = 16 * n;
	return n > 0 ? 0 : -1;
}

/* "/8", "/64": decimal, no sign, no leading zero, at most max; or -1. */
static int
hosts_bits(const char *s, int max)
{
	int v = 0, digits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++)
		v = v * 10 + (*s - '0');
	if (*s != '\0' || digits == 0 || digits > 3 ||
	    (digits > 1 && s[-digits] == '0') || v > max)
		return -1;
	return v;
}

int
conf_hostpat_parse(const char *s, struct conf_hostpat *hp)
{
	char net[INET6_ADDRSTRLEN + 8];
	const char *slash, *mask = NULL;
	size_t len = strlen(s), nl;
	int bracket = s[0] == '[';

	memset(hp, 0, sizeof(*hp));
	if (strcasecmp(s, "ALL") == 0) {
		hp->kind = CONF_HOSTPAT_ALL;
		return 0;
	}
	if (strcasecmp(s, "localhost") == 0) {
		hp->kind = CONF_HOSTPAT_LOCALHOST;
		return 0;
	}
	hp->kind = CONF_HOSTPAT_NET;
	if (len == 0 || len >= sizeof(net) + 8)
		return -1;
	if (s[len - 1] == '.')
		return hosts_v4_prefix(s, hp);
	if (s[len - 1] == ':' && (len < 2 || s[len - 2] != ':'))
		return hosts_v6_prefix(s, hp);
	slash = strchr(s, '/');
	nl = slash != NULL ? (size_t)(slash - s) : len;
	if (slash != NULL)
		mask = slash + 1;
	/* Samba's "[2001:db8::]/32" */
	if (bracket) {
		if (nl < 3 || s[nl - 1] != ']')
			return -1;
		s++;
		nl -= 2;
	}
	if (nl == 0 || nl >= sizeof(net))
		return -1;
	memcpy(net, s, nl);
	net[nl] = '\0';
	if (bracket && strchr(net, ':') == NULL)
		return -1;
	hp->family = conf_parse_addr(net, hp->addr);
	if (hp->family == 0)
		return -1;
	hp->bits = hp->family == AF_INET ? 32 : 128;
	if (mask != NULL) {
		if (hp->family == AF_INET && strchr(mask, '.') != NULL) {
			uint8_t m[16];

			if (conf_parse_addr(mask, m) != AF_INET ||
			    (hp->bits = hosts_mask_bits(m)) < 0)
				return -1;
		} else if ((hp->bits = hosts_bits(mask, hp->bits)) < 0)
			return -1;
	}
	/*
	 * ::ffff:10.1.2.3 is 10.1.2.3, as Samba strips "::ffff:": a peer
	 * address is never v4-mapped (conf_addr_text).
	 */
	if (hp->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)
	    (const void *)hp->addr)) {
		if (hp->bits < 96)
			return -1;
		memmove(hp->addr, hp->addr + 12, 4);
		memset(hp->addr + 4, 0, 12);
		hp->family = AF_INET;
		hp->bits -= 96;
	}
	return 0;
}

/* One `hosts allow` / `hosts deny` item against a numeric address. */
static int
hosts_item_match(const char *item, int fam, const uint8_t a[16])
{
	static const uint8_t lo4[4] = { 127, 0, 0, 1 };
	static const uint8_t lo6[16] = { [15] = 1 };
	struct conf_hostpat hp;

	/* an item the load check would refuse matches nothing */
	if (conf_hostpat_parse(item, &hp) != 0)
		return 0;
	switch (hp.kind) {
	case CONF_HOSTPAT_ALL:
		return 1;
	case CONF_HOSTPAT_LOCALHOST:
		return (fam == AF_INET && memcmp(a, lo4, 4) == 0) ||
		    (fam == AF_INET6 && memcmp(a, lo6, 16) == 0);
	default:
		return fam != 0 && fam == hp.family &&
		    hosts_prefix_match(hp.addr, a, hp.bits);
	}
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
				if (hosts_item_match(*list, fam, a))
					return 0;
			return 1;
		}
		if (!in && hosts_item_match(*list, fam, a))
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

