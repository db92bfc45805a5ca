/*
 * smb.conf-style configuration: a small line lexer and a directive table
 * {name, scope, type, offset}.  Keys keep Samba's names and meanings; they
 * are matched case-insensitively with spaces and underscores ignored, as
 * Samba does ("smbports" and "smb ports" are one key).
 *
 * Every problem is reported as "FILE:LINE: what is wrong" and parsing goes
 * on, so one run shows every error; conf_load() then returns 2.  Share keys
 * given in [global] become defaults for every share, as in Samba.
 * The directive table is in conf_table.c, printing (conf_dump) in
 * conf_dump.c, access checks in conf_access.c, list values and
 * `interfaces` expansion in conf_list.c, one value's parsers in
 * conf_value.c.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONF_LINE_MAX	(64 * 1024)

enum section_kind { SEC_GLOBAL, SEC_SHARE, SEC_SKIP };

struct conf_parse {
	struct conf	*c;
	const char	*file;
	FILE		*errf;
	int		 errors;
	enum section_kind sec;
	int		 share;		/* index when sec == SEC_SHARE */
	uint64_t	*set;		/* per share: CONF_SB_* bits set explicitly */
	int		 setcap;
	struct conf_share tmpl;		/* share keys given in [global] */
	uint64_t	 tmpl_set;
	int		 line;
	int		 min_line, max_line;
};

static void
conf_report(struct conf_parse *p, int line, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
conf_report(struct conf_parse *p, int line, int is_error, const char *fmt, ...)
{
	va_list ap;

	if (is_error)
		p->errors++;
	if (p->errf == NULL)
		return;
	if (line > 0)
		fprintf(p->errf, "%s:%d: ", p->file, line);
	else
		fprintf(p->errf, "%s: ", p->file);
	va_start(ap, fmt);
	vfprintf(p->errf, fmt, ap);
	va_end(ap);
	fputc('\n', p->errf);
}

/* Lower case with spaces, tabs and underscores dropped: Samba's key identity. */
static void
conf_key_norm(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in != '\0' && n + 1 < cap; in++) {
		if (*in == ' ' || *in == '\t' || *in == '_')
			continue;
		out[n++] = (char)tolower((unsigned char)*in);
	}
	out[n] = '\0';
}

static const struct conf_directive *
conf_directive_find(const char *key, int scope)
{
	char want[64], have[64];
	const struct conf_directive *d;

	conf_key_norm(key, want, sizeof(want));
	for (d = conf_directives; d->name != NULL; d++) {
		if (!(d->scope & scope))
			continue;
		conf_key_norm(d->name, have, sizeof(have));
		if (strcmp(want, have) == 0)
			return d;
	}
	return NULL;
}

/*
 * Sets one directive on base (a struct conf or struct conf_share).
 * key is the key as written, for messages.
 */
static void
conf_set(struct conf_parse *p, const struct conf_directive *d, void *base,
    const char *key, const char *value)
{
	char *field = (char *)base + d->off;
	char hint[256];
	char **list = NULL, **q;
	long v;
	int b, i, rc = 0;

	hint[0] = '\0';
	switch (d->type) {
	case D_BOOL:
		if ((b = conf_parse_bool(value)) < 0) {
			snprintf(hint, sizeof(hint), "expected yes or no");
			break;
		}
		*(int *)(void *)field = (d->scope & CONF_INVERT) ? !b : b;
		break;
	case D_INT:
		if (conf_parse_int(value, d->min, d->max, &v) < 0) {
			snprintf(hint, sizeof(hint), "expected a number from %d to %d",
			    d->min, d->max);
			break;
		}
		*(int *)(void *)field = (int)v;
		break;
	case D_LOGLEVEL: {
		char first[32];
		size_t n = strcspn(value, " \t,");

		snprintf(first, sizeof(first), "%.*s", (int)(n < 31 ? n : 31), value);
		if (n > 31 || conf_parse_int(first, d->min, d->max, &v) < 0) {
			snprintf(hint, sizeof(hint), "expected a number from %d to %d",
			    d->min, d->max);
			break;
		}
		*(int *)(void *)field = (int)v;
		if (value[n] != '\0')
			conf_report(p, p->line, 0,
			    "per-class levels in '%s' ignored, using %ld", key, v);
		break;
	}
	case D_MODE: {
		char *end;

		errno = 0;
		v = strtol(value, &end, 8);
		if (*value == '\0' || *end != '\0' || errno != 0 || v < 0 ||
		    v > d->max) {
			snprintf(hint, sizeof(hint), "expected an octal mode such as 0755");
			break;
		}
		*(mode_t *)(void *)field = (mode_t)v;
		break;
	}
	case D_STR:
		if (*value == '\0' && !(d->scope & CONF_EMPTY_OK)) {
			snprintf(hint, sizeof(hint), "must not be empty");
			break;
		}
		rc = conf_set_str((char **)(void *)field, value, 0);
		break;
	case D_PATH:
		if (*value == '\0' && (d->scope & CONF_EMPTY_OK)) {
			rc = conf_set_str((char **)(void *)field, value, 1);
			break;
		}
		/* a share's path may start with %H, the home (conf_subst.c) */
		if (value[0] != '/' && !(d->bit == CONF_SB_PATH &&
		    (d->scope & CONF_SHARE) && strncmp(value, "%H", 2) == 0)) {
			snprintf(hint, sizeof(hint), "expected an absolute path");
			break;
		}
		rc = conf_set_str((char **)(void *)field, value, 0);
		break;
	case D_NAME15:
		if (*value == '\0' || strlen(value) > 15 || strpbrk(value, " \t.\\/:*?\"<>|") != NULL) {
			snprintf(hint, sizeof(hint),
			    "expected 1 to 15 characters without spaces, dots or \\/:*?\"<>|");
			break;
		}
		rc = conf_set_str((char **)(void *)field, value, 0);
		for (q = (char **)(void *)field, i = 0; rc == 0 && (*q)[i] != '\0'; i++)
			(*q)[i] = (char)toupper((unsigned char)(*q)[i]);
		break;
	case D_ENUM:
	case D_PROTO: {
		const struct conf_enum *e;

		if (d->type == D_PROTO && conf_is_smb1(value)) {
			snprintf(hint, sizeof(hint), "SMB1 is not supported; use SMB2_02, "
			    "SMB2_10, SMB3_00, SMB3_02 or SMB3_11");
			break;
		}
		if (d->type == D_PROTO && strcasecmp(value, "default") == 0) {
			*(int *)(void *)field = d->off == offsetof(struct conf, min_protocol) ?
			    DIALECT_202 : DIALECT_311;
			goto proto_line;
		}
		for (e = d->vals; e->name != NULL; e++)
			if (strcasecmp(value, e->name) == 0)
				break;
		if (e->name == NULL) {
			char names[200];

			conf_enum_hint(d->vals, names, sizeof(names));
			snprintf(hint, sizeof(hint), "expected one of %s", names);
			break;
		}
		*(int *)(void *)field = e->value;
proto_line:
		if (d->type == D_PROTO) {
			if (d->off == offsetof(struct conf, min_protocol))
				p->min_line = p->line;
			else
				p->max_line = p->line;
		}
		break;
	}
	case D_SIZE:
		if (conf_parse_size(value, (size_t *)(void *)field) < 0)
			snprintf(hint, sizeof(hint),
			    "expected a size from 1M to 1T, such as 64M");
		break;
	case D_PORTS:
		rc = conf_set_ports(base, value, hint, sizeof(hint));
		break;
	case D_IFACES:
		rc = conf_set_ifaces((char ***)(void *)field, value, hint,
		    sizeof(hint));
		break;
	case D_HOSTS:
	case D_USERS:
		if ((rc = conf_list_split(value, &list)) < 0) {
			if (rc == -EINVAL)
				snprintf(hint, sizeof(hint), "unterminated quote");
			rc = rc == -EINVAL ? 0 : rc;
			break;
		}
		if (d->type == D_HOSTS && conf_hosts_check(list, hint, sizeof(hint)) < 0)
			break;
		if (d->type == D_USERS && conf_users_check(list, hint, sizeof(hint)) < 0)
			break;
		conf_list_free(*(char ***)(void *)field);
		*(char ***)(void *)field = list;
		list = NULL;
		break;
	}
	conf_list_free(list);
	if (rc == -ENOMEM)
		conf_report(p, p->line, 1, "out of memory");
	else if (hint[0] != '\0')
		conf_report(p, p->line, 1, "bad value '%s' for '%s' (%s)", value, key, hint);
}

/* Deep copy of one share directive's value from src to dst. */
static int
conf_copy(const struct conf_directive *d, struct conf_share *dst,
    const struct conf_share *src)
{
	char *df = (char *)dst + d->off;
	const char *sf = (const char *)src + d->off;

	switch (d->type) {
	case D_STR:
	case D_PATH: {
		const char *s = *(char *const *)(const void *)sf;

		return conf_set_str((char **)(void *)df, s ? s : "", s == NULL);
	}
	case D_USERS:
	case D_HOSTS: {
		char *const *l = *(char **const *)(const void *)sf;
		char **nl = conf_list_dup(l);

		if (l != NULL && nl == NULL)
			return -ENOMEM;
		conf_list_free(*(char ***)(void *)df);
		*(char ***)(void *)df = nl;
		return 0;
	}
	case D_MODE:
		*(mode_t *)(void *)df = *(const mode_t *)(const void *)sf;
		return 0;
	default:
		*(int *)(void *)df = *(const int *)(const void *)sf;
		return 0;
	}
}

void
conf_share_defaults(struct conf_share *s)
{
	memset(s, 0, sizeof(*s));
	s->read_only = 1;
	s->browseable = 1;
	s->smb_encrypt = ENCRYPT_IF_REQUIRED;
	s->smb3_unix_extensions = 1;
	s->create_mask = 0744;
	s->directory_mask = 0755;
	s->recycle_dir_mode = 0700;
	s->hide_dot_files = 1;		/* Samba's default */
	s->oplocks = 1;
	s->level2_oplocks = 1;
	s->mangled_names = MANGLED_NAMES_ILLEGAL;	/* Samba 4.17's default */
	s->ea_support = 1;		/* Samba 4.17's default */
	s->fruit_zero_file_id = 1;	/* Samba's fruit defaults */
	s->fruit_validate_afpinfo = 1;
	s->fruit_veto_appledouble = 1;
	s->fruit_posix_rename = 1;
	s->fruit_convert_adouble = 1;
}

static void
conf_share_clear(struct conf_share *s)
{
	free(s->name);
	free(s->path);
	free(s->comment);
	free(s->snapshot_dir);
	free(s->snapshot_format);
	free(s->recycle_dir);
	free(s->recycle_exclude);
	free(s->recycle_exclude_dir);
	free(s->recycle_max_size_s);
	free(s->veto_files);
	free(s->hide_files);
	free(s->veto_oplock_files);
	free(s->vfs_objects);
	free(s->fruit_tm_max_size_s);
	free(s->msdfs_proxy);
	conf_namepat_free(s->veto_pat);
	conf_namepat_free(s->hide_pat);
	conf_namepat_free(s->veto_oplock_pat);
	conf_list_free(s->valid_users);
	conf_list_free(s->invalid_users);
	conf_list_free(s->read_list);
	conf_list_free(s->write_list);
	conf_list_free(s->hosts_allow);
	conf_list_free(s->hosts_deny);
}

void
conf_free(struct conf *c)
{
	int i;

	if (c == NULL)
		return;
	free(c->file);
	conf_list_free(c->interfaces);
	free(c->pid_dir);
	free(c->lock_dir);
	free(c->private_dir);
	free(c->log_file);
	free(c->guest_account);
	conf_list_free(c->hosts_allow);
	conf_list_free(c->hosts_deny);
	free(c->netbios_name);
	free(c->workgroup);
	free(c->server_string);
	free(c->admin_group);
	free(c->realm);
	free(c->fruit_model);
	free(c->dedicated_keytab);
	free(c->username_map);
	for (i = 0; i < c->nshares; i++)
		conf_share_clear(&c->shares[i]);
	free(c->shares);
	free(c);
}

/* The host name up to its first dot, upper case, at most 15 characters. */
static char *
conf_default_netbios(void)
{
	char host[256], *dot;
	int i;

	if (gethostname(host, sizeof(host)) < 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "USMBD");
	host[sizeof(host) - 1] = '\0';
	if ((dot = strchr(host, '.')) != NULL)
		*dot = '\0';
	host[15] = '\0';
	for (i = 0; host[i] != '\0'; i++)
		host[i] = (char)toupper((unsigned char)host[i]);
	return strdup(host);
}

struct conf *
conf_defaults(void)
{
	struct conf *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->ports[0] = 445;
	c->nports = 1;
	c->pid_dir = strdup("/run/usmbd");
	c->lock_dir = strdup("/run/usmbd");
	c->private_dir = strdup("/var/lib/usmbd/private");
	c->log_level = 1;
	c->min_protocol = DIALECT_202;
	c->max_protocol = DIALECT_311;
	c->server_signing = SIGNING_AUTO;
	c->smb_encrypt = ENCRYPT_IF_REQUIRED;
	c->guest_account = strdup("nobody");
	c->map_to_guest = MAP_GUEST_NEVER;
	c->netbios_name = conf_default_netbios();
	c->workgroup = strdup("WORKGROUP");
	c->server_string = strdup("usmbd");
	c->gate_processes = 4;
	c->max_gate_processes = 16;
	c->max_workers_per_user = 1;
	c->worker_idle_timeout = 60;
	c->state_map_size = 64 << 20;
	c->state_partitions = 8;
	c->min_password_length = 5;
	c->max_open_files = 16384;
	c->max_opens_per_conn = 1024;
	c->max_locks_per_user = 16384;
	c->max_locks_per_open = 1024;
	c->max_locks_per_file = 4096;
	c->restrict_anonymous = 2;
	c->smb3_unix_extensions = 1;
	c->smb3_directory_leases = 1;
	c->smb2_leases = 1;
	c->change_notify = 1;
	c->relay_sealed_sessions = 1;
	c->fruit_aapl = 1;		/* Samba's fruit defaults */
	c->fruit_nfs_aces = 1;
	c->host_msdfs = 1;		/* Samba's default */
	c->smb_compression = 1;
	if (c->pid_dir == NULL || c->lock_dir == NULL || c->private_dir == NULL ||
	    c->guest_account == NULL || c->netbios_name == NULL ||
	    c->workgroup == NULL || c->server_string == NULL) {
		conf_free(c);
		return NULL;
	}
	return c;
}

const char *
conf_keytab_path(const struct conf *c)
{
	switch (c->kerberos_method) {
	case KRB_METHOD_SYSTEM:
		return CONF_SYSTEM_KEYTAB;
	case KRB_METHOD_DEDICATED:
		return c->dedicated_keytab;
	default:
		return NULL;
	}
}

const struct conf_share *
conf_share_find(const struct conf *c, const char *name)
{
	int i;

	for (i = 0; i < c->nshares; i++)
		if (strcasecmp(c->shares[i].name, name) == 0)
			return &c->shares[i];
	return NULL;
}

/* Characters Windows forbids in a share name, plus control characters. */
static int
conf_share_name_ok(const char *name)
{
	const unsigned char *s;

	if (*name == '\0' || strlen(name) > 80)
		return 0;
	for (s = (const unsigned char *)name; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f || strchr("\"/\\[]:|<>+=;,*?", *s) != NULL)
			return 0;
	return 1;
}

static int
conf_share_add(struct conf_parse *p, const char *name)
{
	struct conf *c = p->c;
	struct conf_share *ns, *s;
	uint64_t *nset;

	ns = reallocarray(c->shares, (size_t)c->nshares + 1, sizeof(*ns));
	if (ns == NULL)
		return -ENOMEM;
	c->shares = ns;
	if (c->nshares + 1 > p->setcap) {
		nset = reallocarray(p->set, (size_t)c->nshares + 8, sizeof(*nset));
		if (nset == NULL)
			return -ENOMEM;
		p->set = nset;
		p->setcap = c->nshares + 8;
	}
	s = &c->shares[c->nshares];
	conf_share_defaults(s);
	if ((s->name = strdup(name)) == NULL)
		return -ENOMEM;
	s->file = c->file;
	s->line = p->line;
	p->set[c->nshares] = 0;
	return c->nshares++;
}

static void
conf_section(struct conf_parse *p, char *line)
{
	const struct conf_share *old;
	char *end, *name, *rest;
	int idx;

	end = strchr(line, ']');
	if (end == NULL) {
		conf_report(p, p->line, 1, "missing ']' in section header");
		p->sec = SEC_SKIP;
		return;
	}
	*end = '\0';
	rest = end + 1;
	rest += strspn(rest, " \t");
	if (*rest != '\0' && *rest != '#' && *rest != ';') {
		conf_report(p, p->line, 1, "unexpected text after ']'");
		p->sec = SEC_SKIP;
		return;
	}
	name = line + 1;
	name += strspn(name, " \t");
	for (end = name + strlen(name); end > name && (end[-1] == ' ' || end[-1] == '\t'); end--)
		end[-1] = '\0';
	if (*name == '\0') {
		conf_report(p, p->line, 1, "empty section name");
		p->sec = SEC_SKIP;
	} else if (strcasecmp(name, "global") == 0) {
		p->sec = SEC_GLOBAL;
	} else if (strcasecmp(name, "printers") == 0 ||
	    strcasecmp(name, "print$") == 0) {
		conf_report(p, p->line, 0, "section [%s] is not supported, ignored", name);
		p->sec = SEC_SKIP;
	} else if (strcasecmp(name, "IPC$") == 0) {
		p->sec = SEC_SHARE;
		p->share = 0;
	} else if (!conf_share_name_ok(name)) {
		conf_report(p, p->line, 1, "bad share name '%s'", name);
		p->sec = SEC_SKIP;
	} else if ((old = conf_share_find(p->c, name)) != NULL) {
		conf_report(p, p->line, 1, "duplicate share [%s] (first defined at line %d)",
		    name, old->line);
		p->sec = SEC_SKIP;
	} else if ((idx = conf_share_add(p, name)) < 0) {
		conf_report(p, p->line, 1, "out of memory");
		p->sec = SEC_SKIP;
	} else {
		p->sec = SEC_SHARE;
		p->share = idx;
		p->c->shares[idx].is_homes = strcasecmp(name, "homes") == 0;
	}
}

static char *
conf_trim(char *s)
{
	char *e;

	s += strspn(s, " \t");
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

static void
conf_keyval(struct conf_parse *p, char *line)
{
	const struct conf_directive *d;
	char *eq, *key, *value;

	if ((eq = strchr(line, '=')) == NULL) {
		conf_report(p, p->line, 1, "expected 'key = value' or '[section]'");
		return;
	}
	*eq = '\0';
	key = conf_trim(line);
	value = conf_trim(eq + 1);
	if (*key == '\0') {
		conf_report(p, p->line, 1, "missing key before '='");
		return;
	}
	if (p->sec == SEC_SKIP)
		return;
	if (p->sec == SEC_GLOBAL) {
		if ((d = conf_directive_find(key, CONF_GLOBAL)) != NULL) {
			conf_set(p, d, p->c, key, value);
			return;
		}
		if ((d = conf_directive_find(key, CONF_SHARE)) != NULL) {
			int before = p->errors;

			conf_set(p, d, &p->tmpl, key, value);
			if (p->errors == before)
				p->tmpl_set |= 1ull << d->bit;
			return;
		}
	} else {
		if ((d = conf_directive_find(key, CONF_SHARE)) != NULL) {
			int before = p->errors;

			conf_set(p, d, &p->c->shares[p->share], key, value);
			if (p->errors == before)
				p->set[p->share] |= 1ull << d->bit;
			return;
		}
		if (conf_directive_find(key, CONF_GLOBAL) != NULL) {
			conf_report(p, p->line, 0, "global key '%s' in share [%s] ignored",
			    key, p->c->shares[p->share].name);
			return;
		}
	}
	conf_report(p, p->line, 0, "unknown key '%s' ignored", key);
}

static void
conf_logical_line(struct conf_parse *p, char *line)
{
	line = conf_trim(line);
	if (*line == '\0' || *line == '#' || *line == ';')
		return;
	if (*line == '[')
		conf_section(p, line);
	else
		conf_keyval(p, line);
}

/* Shares inherit what [global] set for them; checks that need the whole file. */
static void
conf_finish(struct conf_parse *p)
{
	const struct conf_directive *d;
	struct conf *c = p->c;
	char why[160], hint[160];
	int i, rc;

	for (i = 0; i < c->nshares; i++) {
		struct conf_share *s = &c->shares[i];

		for (d = conf_directives; d->name != NULL; d++) {
			if (!(d->scope & CONF_SHARE) || (d->scope & CONF_ALIAS))
				continue;
			if ((p->set[i] & (1ull << d->bit)) || !(p->tmpl_set & (1ull << d->bit)))
				continue;
			/* [homes] without its own path: the home (Samba's lp_add_home) */
			if ((i == 0 || s->is_homes) && d->bit == CONF_SB_PATH)
				continue;
			if (conf_copy(d, s, &p->tmpl) < 0)
				conf_report(p, 0, 1, "out of memory");
			else
				p->set[i] |= 1ull << d->bit;
		}
		if (!(p->set[i] & (1ull << CONF_SB_ENCRYPT)))
			s->smb_encrypt = c->smb_encrypt;
		/* Samba's share parameter, its [global] value the default */
		if (!(p->set[i] & (1ull << CONF_SB_UNIX_EXT)))
			s->smb3_unix_extensions = c->smb3_unix_extensions;
		if (s->comment == NULL) {
			if (i == 0 && asprintf(&s->comment, "IPC Service (%s)",
			    c->server_string ? c->server_string : "") < 0)
				s->comment = NULL;
			else if (i != 0)
				s->comment = strdup("");
			if (s->comment == NULL)
				conf_report(p, 0, 1, "out of memory");
		}
		if (conf_snapshot_check(s, why, sizeof(why)) < 0)
			conf_report(p, s->line, 1, "share [%s]: %s", s->name, why);
		if (conf_recycle_check(s, why, sizeof(why)) < 0)
			conf_report(p, s->line, 1, "share [%s]: %s", s->name, why);
		if (conf_fruit_check(s, why, sizeof(why)) < 0)
			conf_report(p, s->line, 1, "share [%s]: %s", s->name, why);
		if ((rc = conf_share_namepats(s, hint, sizeof(hint))) != 0)
			conf_report(p, s->line, 1, "share [%s]: %s", s->name,
			    rc == -ENOMEM ? "out of memory" : hint);
		if (conf_dfs_check(s, why, sizeof(why)) < 0)
			conf_report(p, s->line, 1, "share [%s]: %s", s->name, why);
		if (i != 0 && (rc = conf_subst_check(s, why, sizeof(why))) != 0)
			conf_report(p, s->line, rc < 0, "share [%s]: %s", s->name, why);
		if (i == 0) {
			free(s->path);
			s->path = NULL;
		} else if (s->path == NULL && !s->is_homes && !s->msdfs_proxy) {
			conf_report(p, s->line, 1, "share [%s] has no path", s->name);
		}
	}
	/* Samba's lp_add_home: a home share is browseable as [global] says */
	c->homes_browseable = p->tmpl.browseable;
	/* Samba's negotiate: the [global] oplocks value counts too */
	c->leasing = c->smb2_leases && p->tmpl.oplocks;
	if (c->min_protocol > c->max_protocol)
		conf_report(p, p->max_line > p->min_line ? p->max_line : p->min_line, 1,
		    "server min protocol %s is above server max protocol %s",
		    conf_protocol_name(c->min_protocol), conf_protocol_name(c->max_protocol));
}

/* Reads logical lines: joins `\` continuations, tracks the first line number. */
static void
conf_read(struct conf_parse *p, FILE *fp)
{
	char *raw = NULL, *acc = NULL;
	size_t cap = 0, acclen = 0;
	ssize_t n;
	int lineno = 0, start = 0, open = 0, toolong = 0;

	while ((n = getline(&raw, &cap, fp)) != -1) {
		char *text = raw, *first;
		size_t len;
		int cont;

		lineno++;
		if (strlen(raw) != (size_t)n) {
			conf_report(p, lineno, 1, "NUL byte in line");
			continue;
		}
		while (n > 0 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
			raw[--n] = '\0';
		if (lineno == 1 && strncmp(raw, "\xef\xbb\xbf", 3) == 0)
			text += 3;
		if (!open) {
			open = 1;
			start = lineno;
			toolong = 0;
			acclen = 0;
			first = text + strspn(text, " \t");
			/* a comment line is never continued */
			cont = *first != '#' && *first != ';';
		} else {
			text += strspn(text, " \t");
			cont = 1;
		}
		len = strlen(text);
		while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t'))
			len--;
		cont = cont && len > 0 && text[len - 1] == '\\';
		if (cont)
			len--;
		else
			len = strlen(text);
		if (acclen + len + 1 > CONF_LINE_MAX) {
			toolong = 1;
		} else if (!toolong) {
			char *na = realloc(acc, acclen + len + 1);

			if (na == NULL) {
				toolong = 1;
			} else {
				acc = na;
				memcpy(acc + acclen, text, len);
				acclen += len;
				acc[acclen] = '\0';
			}
		}
		if (cont)
			continue;
		open = 0;
		p->line = start;
		if (toolong)
			conf_report(p, start, 1, "line too long");
		else
			conf_logical_line(p, acc);
	}
	if (open) {	/* a continuation on the last line of the file */
		p->line = start;
		if (toolong)
			conf_report(p, start, 1, "line too long");
		else
			conf_logical_line(p, acc);
	}
	free(acc);
	free(raw);
}

int
conf_load(const char *path, struct conf **out, FILE *errf)
{
	struct conf_parse p;
	struct conf *c;
	FILE *fp;
	int rc = 2;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.file = path;
	p.errf = errf;
	conf_share_defaults(&p.tmpl);
	if ((c = conf_defaults()) == NULL || (c->file = strdup(path)) == NULL) {
		conf_report(&p, 0, 1, "out of memory");
		goto out;
	}
	p.c = c;
	p.file = c->file;
	if (conf_share_add(&p, "IPC$") < 0) {
		conf_report(&p, 0, 1, "out of memory");
		goto out;
	}
	c->shares[0].is_ipc = 1;
	c->shares[0].line = 0;
	if ((fp = fopen(path, "re")) == NULL) {
		conf_report(&p, 0, 1, "%s", strerror(errno));
		goto out;
	}
	p.sec = SEC_GLOBAL;	/* keys before any section are global, as Samba */
	conf_read(&p, fp);
	if (ferror(fp))
		conf_report(&p, 0, 1, "read error");
	fclose(fp);
	conf_finish(&p);
	if (p.errors == 0) {
		*out = c;
		c = NULL;
		rc = 0;
	}
out:
	conf_free(c);
	conf_share_clear(&p.tmpl);
	free(p.set);
	return rc;
}
