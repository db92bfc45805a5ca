/*
 * List values of the configuration: splitting (commas, blanks, "quoted
 * items"), copying, freeing, and the expansion of `interfaces` items into
 * addresses.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
conf_list_free(char **l)
{
	char **q;

	if (l == NULL)
		return;
	for (q = l; *q != NULL; q++)
		free(*q);
	free(l);
}

int
conf_list_add(char ***lp, int *n, const char *s, size_t len)
{
	char **nl;
	char *dup;

	dup = strndup(s, len);
	if (dup == NULL)
		return -ENOMEM;
	nl = reallocarray(*lp, (size_t)*n + 2, sizeof(char *));
	if (nl == NULL) {
		free(dup);
		return -ENOMEM;
	}
	nl[(*n)++] = dup;
	nl[*n] = NULL;
	*lp = nl;
	return 0;
}

/*
 * Splits on commas and whitespace; "double quotes" keep an item with spaces
 * together (Samba's `valid users = "Domain Users"`).  An empty list is NULL.
 * Returns 0, -EINVAL (unterminated quote) or -ENOMEM.
 */
int
conf_list_split(const char *s, char ***out)
{
	char **l = NULL;
	int n = 0, rc;

	*out = NULL;
	while (*s != '\0') {
		const char *start;

		if (*s == ',' || isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (*s == '"') {
			start = ++s;
			while (*s != '\0' && *s != '"')
				s++;
			if (*s != '"') {
				conf_list_free(l);
				return -EINVAL;
			}
			rc = conf_list_add(&l, &n, start, (size_t)(s - start));
			s++;
		} else {
			start = s;
			while (*s != '\0' && *s != ',' && !isspace((unsigned char)*s))
				s++;
			rc = conf_list_add(&l, &n, start, (size_t)(s - start));
		}
		if (rc < 0) {
			conf_list_free(l);
			return rc;
		}
	}
	*out = l;
	return 0;
}

char **
conf_list_dup(char *const *l)
{
	char **out = NULL;
	int n = 0;

	for (; l != NULL && *l != NULL; l++) {
		if (conf_list_add(&out, &n, *l, strlen(*l)) < 0) {
			conf_list_free(out);
			return NULL;
		}
	}
	return out;
}

/* Adds an address unless already listed. */
static int
conf_addr_add(char ***lp, int *n, const char *addr)
{
	int i;

	for (i = 0; i < *n; i++)
		if (strcmp((*lp)[i], addr) == 0)
			return 0;
	return conf_list_add(lp, n, addr, strlen(addr));
}

/*
 * One `interfaces` item: an address (with an optional /prefix or /mask, as
 * Samba writes them, which is dropped: we listen on the address) or the name
 * of a local interface, which stands for its addresses.  IPv6 link-local
 * addresses are skipped: they cannot be bound without a scope.
 */
int
conf_iface_expand(const char *item, char ***lp, int *n)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned char tmp[16];
	struct ifaddrs *ifa, *i;
	int found = 0, rc = 0;
	size_t len;

	snprintf(buf, sizeof(buf), "%s", item);
	if ((slash = strchr(buf, '/')) != NULL)
		*slash = '\0';
	len = strlen(buf);
	if (len > 2 && buf[0] == '[' && buf[len - 1] == ']') {
		memmove(buf, buf + 1, len - 2);
		buf[len - 2] = '\0';
	}
	if (inet_pton(AF_INET, buf, tmp) == 1 || inet_pton(AF_INET6, buf, tmp) == 1)
		return conf_addr_add(lp, n, buf) < 0 ? -ENOMEM : 1;
	if (slash != NULL || getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i != NULL && rc == 0; i = i->ifa_next) {
		char a[INET6_ADDRSTRLEN];

		if (i->ifa_addr == NULL || strcmp(i->ifa_name, item) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)i->ifa_addr;

			inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const void *)i->ifa_addr;

			if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
				continue;
			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		} else
			continue;
		found = 1;
		if (conf_addr_add(lp, n, a) < 0)
			rc = -ENOMEM;
	}
	freeifaddrs(ifa);
	return rc < 0 ? rc : found;
}

int
conf_set_ports(struct conf *c, const char *value, char *hint, size_t cap)
{
	uint16_t ports[CONF_MAX_PORTS];
	char **list = NULL, **q;
	long v;
	int n = 0;

	if (conf_list_split(value, &list) < 0 || list == NULL) {
		snprintf(hint, cap, "expected port numbers");
		return 0;
	}
	for (q = list; *q != NULL; q++) {
		if (conf_parse_int(*q, 1, 65535, &v) < 0) {
			snprintf(hint, cap, "'%s' is not a port number", *q);
			break;
		}
		if (n == CONF_MAX_PORTS) {
			snprintf(hint, cap, "at most %d ports", CONF_MAX_PORTS);
			break;
		}
		ports[n++] = (uint16_t)v;
	}
	if (hint[0] == '\0') {
		memcpy(c->ports, ports, sizeof(ports[0]) * (size_t)n);
		c->nports = n;
	}
	conf_list_free(list);
	return 0;
}

int
conf_set_ifaces(char ***field, const char *value, char *hint, size_t cap)
{
	char **list = NULL, **addrs = NULL, **q;
	int n = 0, r, rc = 0;

	if (conf_list_split(value, &list) < 0) {
		snprintf(hint, cap, "unterminated quote");
		return 0;
	}
	for (q = list; q != NULL && *q != NULL; q++) {
		if ((r = conf_iface_expand(*q, &addrs, &n)) < 0) {
			rc = r;
			break;
		}
		if (r == 0) {
			snprintf(hint, cap,
			    "'%s' is not an address or a local interface", *q);
			break;
		}
	}
	conf_list_free(list);
	if (hint[0] != '\0' || rc < 0) {
		conf_list_free(addrs);
		return rc;
	}
	conf_list_free(*field);
	*field = addrs;
	return 0;
}
