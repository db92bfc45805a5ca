/*
 * One configuration value's parsers (daemon/conf_int.h): booleans,
 * protocol names, sizes, integers, strings and the hint listing an
 * enumeration's values, shared by the directive setter (conf.c) and the
 * checks of single keys.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
conf_parse_bool(const char *s)
{
	static const char *yes[] = { "yes", "true", "1", "on", NULL };
	static const char *no[] = { "no", "false", "0", "off", NULL };
	int i;

	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(s, yes[i]) == 0)
			return 1;
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(s, no[i]) == 0)
			return 0;
	return -1;
}

int
conf_parse_protocol(const char *s)
{
	const struct conf_enum *e;

	for (e = conf_proto_vals; e->name != NULL; e++)
		if (strcasecmp(s, e->name) == 0)
			return e->value;
	return -1;
}

const char *
conf_protocol_name(int dialect)
{
	const struct conf_enum *e;

	for (e = conf_proto_vals; e->name != NULL; e++)
		if (e->value == dialect)
			return e->name;
	return "?";
}

int
conf_is_smb1(const char *s)
{
	static const char *old[] = { "NT1", "SMB1", "LANMAN1", "LANMAN2",
	    "CORE", "COREPLUS", NULL };
	int i;

	for (i = 0; old[i] != NULL; i++)
		if (strcasecmp(s, old[i]) == 0)
			return 1;
	return 0;
}

int
conf_set_str(char **field, const char *value, int empty_null)
{
	char *dup = NULL;

	if (!(empty_null && *value == '\0')) {
		dup = strdup(value);
		if (dup == NULL)
			return -ENOMEM;
	}
	free(*field);
	*field = dup;
	return 0;
}

/* Parses "64M", "1G", "1048576" (binary units). */
int
conf_parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (toupper((unsigned char)*end) == 'B' && end[-1] != *s)
		end++;
	if (*end != '\0' || v < (1ULL << 20) || v > (1ULL << 40))
		return -1;
	*out = (size_t)v;
	return 0;
}

int
conf_parse_int(const char *s, long min, long max, long *out)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

void
conf_enum_hint(const struct conf_enum *vals, char *buf, size_t cap)
{
	const struct conf_enum *e;
	size_t n = 0;
	int seen[16] = { 0 }, nseen = 0, i, dup;

	buf[0] = '\0';
	for (e = vals; e->name != NULL && n < cap; e++) {
		for (dup = 0, i = 0; i < nseen; i++)
			if (seen[i] == e->value)
				dup = 1;
		if (dup || nseen >= 16)
			continue;
		seen[nseen++] = e->value;
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", e->name);
	}
}
