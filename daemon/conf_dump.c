/*
 * Prints a loaded config as smb.conf text that conf_load() reads back to the
 * same config (the round trip is a unit test).  Without verbose only values
 * that differ from the defaults are printed, as Samba's testparm does.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
conf_fmt_list(char *const *l, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; l != NULL && *l != NULL && n < cap; l++) {
		int quote = strpbrk(*l, " \t,") != NULL;

		n += (size_t)snprintf(buf + n, cap - n, "%s%s%s%s", n ? ", " : "",
		    quote ? "\"" : "", *l, quote ? "\"" : "");
	}
}

static void
conf_fmt_size(size_t v, char *buf, size_t cap)
{
	if (v % (1u << 30) == 0)
		snprintf(buf, cap, "%zuG", v >> 30);
	else if (v % (1u << 20) == 0)
		snprintf(buf, cap, "%zuM", v >> 20);
	else if (v % 1024 == 0)
		snprintf(buf, cap, "%zuK", v >> 10);
	else
		snprintf(buf, cap, "%zu", v);
}

/* Formats the value of d in base (struct conf or struct conf_share). */
static void
conf_fmt(const struct conf_directive *d, const void *base, char *buf, size_t cap)
{
	const char *f = (const char *)base + d->off;
	const struct conf_enum *e;
	int v;

	buf[0] = '\0';
	switch (d->type) {
	case D_BOOL:
		snprintf(buf, cap, "%s", *(const int *)(const void *)f ? "yes" : "no");
		break;
	case D_INT:
	case D_LOGLEVEL:
		snprintf(buf, cap, "%d", *(const int *)(const void *)f);
		break;
	case D_STR:
	case D_PATH:
	case D_NAME15: {
		const char *s = *(char *const *)(const void *)f;

		snprintf(buf, cap, "%s", s ? s : "");
		break;
	}
	case D_USERS:
	case D_HOSTS:
	case D_IFACES:
		conf_fmt_list(*(char **const *)(const void *)f, buf, cap);
		break;
	case D_MODE:
		snprintf(buf, cap, "%04o", (unsigned)*(const mode_t *)(const void *)f);
		break;
	case D_ENUM:
	case D_PROTO:
		v = *(const int *)(const void *)f;
		for (e = d->vals; e->name != NULL; e++)
			if (e->value == v)
				break;
		snprintf(buf, cap, "%s", e->name ? e->name : "?");
		break;
	case D_SIZE:
		conf_fmt_size(*(const size_t *)(const void *)f, buf, cap);
		break;
	case D_PORTS: {
		const struct conf *c = base;
		size_t n = 0;
		int i;

		for (i = 0; i < c->nports && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%u", i ? " " : "",
			    (unsigned)c->ports[i]);
		break;
	}
	}
}

static void
conf_dump_section(const void *base, const void *defs, int scope, FILE *fp,
    int verbose)
{
	const struct conf_directive *d;
	char val[4096], def[4096];

	for (d = conf_directives; d->name != NULL; d++) {
		if (!(d->scope & scope) || (d->scope & CONF_ALIAS))
			continue;
		if (scope == CONF_SHARE && d->bit == CONF_SB_PATH &&
		    ((const struct conf_share *)base)->is_ipc)
			continue;	/* IPC$ has no path */
		conf_fmt(d, base, val, sizeof(val));
		if (!verbose) {
			conf_fmt(d, defs, def, sizeof(def));
			if (strcmp(val, def) == 0)
				continue;
		}
		fprintf(fp, "\t%s = %s\n", d->name, val);
	}
}

void
conf_dump(const struct conf *c, FILE *fp, int verbose)
{
	struct conf *defs = conf_defaults();
	struct conf_share sdef;
	int i;

	if (defs == NULL) {
		fprintf(fp, "# out of memory\n");
		return;
	}
	fprintf(fp, "# usmbd configuration%s%s\n", c->file ? " from " : "",
	    c->file ? c->file : "");
	fprintf(fp, "[global]\n");
	conf_dump_section(c, defs, CONF_GLOBAL, fp, verbose);
	for (i = 0; i < c->nshares; i++) {
		const struct conf_share *s = &c->shares[i];
		char *ipc_comment = NULL;

		conf_share_defaults(&sdef);
		sdef.smb_encrypt = c->smb_encrypt;
		sdef.smb3_unix_extensions = c->smb3_unix_extensions;
		sdef.comment = "";
		if (s->is_ipc) {
			if (asprintf(&ipc_comment, "IPC Service (%s)",
			    c->server_string ? c->server_string : "") < 0)
				ipc_comment = NULL;
			sdef.comment = ipc_comment ? ipc_comment : "";
			sdef.path = s->path;
		}
		if (s->is_ipc && !verbose) {
			/* the implicit IPC$ is printed only when changed */
			const struct conf_directive *d;
			char val[4096], def[4096];
			int changed = 0;

			for (d = conf_directives; d->name != NULL; d++) {
				if (!(d->scope & CONF_SHARE) || (d->scope & CONF_ALIAS))
					continue;
				conf_fmt(d, s, val, sizeof(val));
				conf_fmt(d, &sdef, def, sizeof(def));
				changed |= strcmp(val, def) != 0;
			}
			if (!changed) {
				free(ipc_comment);
				continue;
			}
		}
		fprintf(fp, "\n[%s]\n", s->name);
		conf_dump_section(s, &sdef, CONF_SHARE, fp, verbose);
		free(ipc_comment);
	}
	conf_free(defs);
}
