/*
 * usmbctl user ... (what pdbedit and smbpasswd do for Samba) and usmbctl
 * testparm.  These work on files directly, so they need no running daemon:
 * the master reads the password database in a fresh transaction on every
 * authentication, so a change here is live at once.
 */
#include "daemon/usmbctl_user.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <readpassphrase.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/passdb.h"
#include "daemon/usmbctl_krb.h"

#define USMBCTL_PW_MAX	256	/* bytes of UTF-8; Windows allows 256 characters */

static int
usmbctl_user_usage(void)
{
	fprintf(stderr,
	    "usage: usmbctl user add|del|passwd|enable|disable|show NAME\n"
	    "       usmbctl user list\n"
	    "       usmbctl user policy [\"bad lockout attempt\" N | \"lockout duration\" MINUTES]\n"
	    "       usmbctl user import [FILE]   (pdbedit -L -w / smbpasswd format)\n");
	return 2;
}

static void
usmbctl_time(time_t t, char *buf, size_t cap)
{
	struct tm tm;

	if (t == 0 || localtime_r(&t, &tm) == NULL)
		snprintf(buf, cap, "never");
	else
		strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

/*
 * One line from a non-terminal stdin, or two matching prompts on a
 * terminal.  Returns 0, or 1 after printing why the password was refused.
 */
/* Characters, not bytes: UTF-8 continuation bytes are not counted. */
static size_t
usmbctl_utf8_len(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static int
usmbctl_read_password(const struct conf *conf, const char *name, char *out,
    size_t cap)
{
	char again[USMBCTL_PW_MAX + 2], prompt[128];
	uint8_t h[16];
	size_t len;

	if (!isatty(STDIN_FILENO)) {
		if (fgets(out, (int)cap, stdin) == NULL) {
			fprintf(stderr, "usmbctl: no password on standard input\n");
			return 1;
		}
		len = strlen(out);
		if (len > 0 && out[len - 1] == '\n')
			out[--len] = '\0';
		else if (!feof(stdin)) {
			fprintf(stderr, "usmbctl: password too long (at most %d bytes)\n",
			    USMBCTL_PW_MAX);
			return 1;
		}
		if (len > 0 && out[len - 1] == '\r')
			out[--len] = '\0';
	} else {
		snprintf(prompt, sizeof(prompt), "New SMB password for %s: ", name);
		if (readpassphrase(prompt, out, cap, RPP_REQUIRE_TTY) == NULL) {
			fprintf(stderr, "usmbctl: cannot read password: %s\n", strerror(errno));
			return 1;
		}
		if (readpassphrase("Retype new SMB password: ", again, sizeof(again),
		    RPP_REQUIRE_TTY) == NULL) {
			fprintf(stderr, "usmbctl: cannot read password: %s\n", strerror(errno));
			return 1;
		}
		if (strcmp(out, again) != 0) {
			explicit_bzero(again, sizeof(again));
			fprintf(stderr, "usmbctl: passwords do not match, nothing changed\n");
			return 1;
		}
		explicit_bzero(again, sizeof(again));
		len = strlen(out);
	}
	if (len == 0) {
		fprintf(stderr, "usmbctl: empty password refused\n");
		return 1;
	}
	if (len > USMBCTL_PW_MAX) {
		fprintf(stderr, "usmbctl: password too long (at most %d bytes)\n",
		    USMBCTL_PW_MAX);
		return 1;
	}
	if (passdb_nt_hash(out, h) < 0) {
		fprintf(stderr, "usmbctl: password is not valid UTF-8\n");
		return 1;
	}
	if (usmbctl_utf8_len(out) < (size_t)conf->min_password_length) {
		fprintf(stderr, "usmbctl: password too short (min password length = %d)\n",
		    conf->min_password_length);
		return 1;
	}
	return 0;
}

static int
usmbctl_open(const struct conf *conf, int readonly, struct passdb **db)
{
	int rc = passdb_open(conf->private_dir, readonly, db);

	if (rc == 0)
		return 0;
	if (rc == -ENOENT && readonly)
		fprintf(stderr, "usmbctl: no password database in %s (add a user first)\n",
		    conf->private_dir);
	else
		fprintf(stderr, "usmbctl: cannot open password database in %s: %s\n",
		    conf->private_dir, strerror(-rc));
	return 1;
}

static int
usmbctl_user_add(const struct conf *conf, struct passdb *db, const char *name)
{
	char pw[USMBCTL_PW_MAX + 2];
	struct passdb_entry e;
	struct passwd *p;
	int rc;

	if ((p = getpwnam(name)) == NULL) {
		fprintf(stderr, "usmbctl: user add: '%s' is not a Unix account "
		    "(create it first, e.g. useradd)\n", name);
		return 1;
	}
	if (strlen(name) >= PASSDB_NAME_MAX) {
		fprintf(stderr, "usmbctl: user add: name '%s' is too long\n", name);
		return 2;
	}
	if (passdb_get(db, name, &e) == 0) {
		fprintf(stderr, "usmbctl: user add: '%s' is already in the password "
		    "database (use 'user passwd')\n", name);
		return 1;
	}
	memset(&e, 0, sizeof(e));
	snprintf(e.name, sizeof(e.name), "%s", name);
	snprintf(e.unix_name, sizeof(e.unix_name), "%s", p->pw_name);
	e.uid = p->pw_uid;
	if (usmbctl_read_password(conf, name, pw, sizeof(pw)) != 0)
		return 1;
	rc = passdb_nt_hash(pw, e.nt_hash);
	explicit_bzero(pw, sizeof(pw));
	if (rc < 0)
		return 1;
	e.changed = time(NULL);
	if ((rc = passdb_put(db, &e)) < 0) {
		fprintf(stderr, "usmbctl: user add: %s: %s\n", name, strerror(-rc));
		return 1;
	}
	explicit_bzero(&e, sizeof(e));
	printf("added user %s (uid %u)\n", name, (unsigned)p->pw_uid);
	return 0;
}

static int
usmbctl_get(struct passdb *db, const char *cmd, const char *name,
    struct passdb_entry *e)
{
	int rc = passdb_get(db, name, e);

	if (rc == -ENOENT) {
		fprintf(stderr, "usmbctl: user %s: no user '%s' in the password database\n",
		    cmd, name);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "usmbctl: user %s: %s: %s\n", cmd, name, strerror(-rc));
		return 1;
	}
	return 0;
}

static int
usmbctl_user_passwd(const struct conf *conf, struct passdb *db, const char *name)
{
	char pw[USMBCTL_PW_MAX + 2];
	struct passdb_entry e;
	int rc;

	if (usmbctl_get(db, "passwd", name, &e) != 0)
		return 1;
	if (usmbctl_read_password(conf, name, pw, sizeof(pw)) != 0)
		return 1;
	rc = passdb_nt_hash(pw, e.nt_hash);
	explicit_bzero(pw, sizeof(pw));
	if (rc < 0)
		return 1;
	e.changed = time(NULL);
	e.failed_logons = 0;
	rc = passdb_put(db, &e);
	explicit_bzero(&e, sizeof(e));
	if (rc < 0) {
		fprintf(stderr, "usmbctl: user passwd: %s: %s\n", name, strerror(-rc));
		return 1;
	}
	printf("changed password of %s\n", name);
	return 0;
}

static int
usmbctl_user_flag(struct passdb *db, const char *cmd, const char *name, int disable)
{
	struct passdb_entry e;
	int rc;

	if (usmbctl_get(db, cmd, name, &e) != 0)
		return 1;
	if (disable)
		e.flags |= PASSDB_FLAG_DISABLED;
	else {
		e.flags &= ~(uint32_t)PASSDB_FLAG_DISABLED;
		e.failed_logons = 0;
		e.locked_at = 0;
	}
	rc = passdb_put(db, &e);
	explicit_bzero(&e, sizeof(e));
	if (rc < 0) {
		fprintf(stderr, "usmbctl: user %s: %s: %s\n", cmd, name, strerror(-rc));
		return 1;
	}
	printf("%s %s\n", disable ? "disabled" : "enabled", name);
	return 0;
}

static int
usmbctl_list_one(const struct passdb_entry *e, void *arg)
{
	char when[32];

	(void)arg;
	usmbctl_time(e->changed, when, sizeof(when));
	printf("%-20s %-8u %-9s %s\n", e->name, (unsigned)e->uid,
	    (e->flags & PASSDB_FLAG_DISABLED) ? "disabled" : "-", when);
	return 0;
}

static int
usmbctl_user_show(struct passdb *db, const char *name)
{
	struct passdb_entry e;
	struct passwd *p;
	char when[32];

	if (usmbctl_get(db, "show", name, &e) != 0)
		return 1;
	printf("name:           %s\n", e.name);
	printf("unix account:   %s (uid %u)\n", e.unix_name, (unsigned)e.uid);
	/* the one rule of security descriptors (HACKING.md): Unix User\NAME */
	printf("sid:            S-1-22-1-%u\n", (unsigned)e.uid);
	printf("flags:          %s\n", (e.flags & PASSDB_FLAG_DISABLED) ? "disabled" : "enabled");
	usmbctl_time(e.changed, when, sizeof(when));
	printf("last change:    %s\n", when);
	usmbctl_time(e.last_logon, when, sizeof(when));
	printf("last logon:     %s\n", when);
	printf("failed logons:  %u\n", e.failed_logons);
	if (e.locked_at != 0) {
		usmbctl_time(e.locked_at, when, sizeof(when));
		printf("locked out:     since %s (see user policy)\n", when);
	}
	p = getpwnam(e.unix_name);
	if (p == NULL)
		printf("warning:        Unix account '%s' no longer exists\n", e.unix_name);
	else if (p->pw_uid != e.uid)
		printf("warning:        Unix account '%s' now has uid %u\n", e.unix_name,
		    (unsigned)p->pw_uid);
	explicit_bzero(&e, sizeof(e));
	return 0;
}

static int
usmbctl_hex16(const char *s, uint8_t out[16])
{
	int i;

	for (i = 0; i < 16; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]))
			return -1;
		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return 0;
}

/*
 * One line of `pdbedit -L -w` (smbpasswd format):
 *   name:uid:LMHASH:NTHASH:[UX         ]:LCT-5F3A1B2C:
 * The NT hash moves over as is, so users keep the password Samba knew.
 * Returns 0 imported, 1 skipped (reason printed).
 */
static int
usmbctl_import_line(struct passdb *db, const char *file, int lineno, char *line)
{
	char *field[7] = { 0 }, *s = line, *flags;
	struct passdb_entry e;
	struct passwd *p;
	int n = 0, rc;

	while (n < 7 && s != NULL) {
		field[n++] = s;
		if ((s = strchr(s, ':')) != NULL)
			*s++ = '\0';
	}
	if (n < 6) {
		fprintf(stderr, "%s:%d: not a pdbedit -w line, skipped\n", file, lineno);
		return 1;
	}
	flags = field[4];
	if (strchr(flags, 'W') || strchr(flags, 'S') || strchr(flags, 'I')) {
		fprintf(stderr, "%s:%d: '%s' is a trust account, skipped\n", file, lineno,
		    field[0]);
		return 1;
	}
	if ((p = getpwnam(field[0])) == NULL) {
		fprintf(stderr, "%s:%d: '%s' is not a Unix account, skipped\n", file,
		    lineno, field[0]);
		return 1;
	}
	memset(&e, 0, sizeof(e));
	if (strlen(field[0]) >= sizeof(e.name) || strlen(field[3]) != 32 ||
	    usmbctl_hex16(field[3], e.nt_hash) < 0) {
		fprintf(stderr, "%s:%d: '%s' has no usable NT hash, skipped\n", file,
		    lineno, field[0]);
		return 1;
	}
	snprintf(e.name, sizeof(e.name), "%s", field[0]);
	snprintf(e.unix_name, sizeof(e.unix_name), "%s", p->pw_name);
	e.uid = p->pw_uid;
	if (strchr(flags, 'D') != NULL)
		e.flags |= PASSDB_FLAG_DISABLED;
	e.changed = strncmp(field[5], "LCT-", 4) == 0 ?
	    (time_t)strtoll(field[5] + 4, NULL, 16) : time(NULL);
	rc = passdb_put(db, &e);
	explicit_bzero(&e, sizeof(e));
	if (rc < 0) {
		fprintf(stderr, "%s:%d: %s: %s\n", file, lineno, field[0], strerror(-rc));
		return 1;
	}
	printf("imported %s\n", field[0]);
	return 0;
}

static int
usmbctl_user_import(struct passdb *db, const char *file)
{
	FILE *fp = stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, skipped = 0, imported = 0;

	if (file != NULL && strcmp(file, "-") != 0 && (fp = fopen(file, "re")) == NULL) {
		fprintf(stderr, "usmbctl: user import: %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (file == NULL)
		file = "-";
	while ((len = getline(&line, &cap, fp)) != -1) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (usmbctl_import_line(db, file, lineno, line) == 0)
			imported++;
		else
			skipped++;
	}
	if (line != NULL)
		explicit_bzero(line, cap);
	free(line);
	if (fp != stdin)
		fclose(fp);
	printf("%d imported, %d skipped\n", imported, skipped);
	return skipped > 0 ? 1 : 0;
}

/*
 * usmbctl user policy [NAME VALUE]: pdbedit -P's "bad lockout attempt"
 * and "lockout duration" (minutes), the only two we keep.
 */
static int
usmbctl_user_policy(const struct conf *conf, int argc, char **argv)
{
	struct passdb_policy p;
	struct passdb *db = NULL;
	unsigned long v = 0;
	char *end;
	int rc;

	if (argc != 1 && argc != 3) {
		fprintf(stderr, "usmbctl: user policy: wrong number of arguments\n");
		return usmbctl_user_usage();
	}
	if (argc == 3) {
		errno = 0;
		v = strtoul(argv[2], &end, 10);
		if (argv[2][0] == '\0' || *end != '\0' || errno != 0 ||
		    v > 1000000 || (strcmp(argv[1], "bad lockout attempt") != 0 &&
		    strcmp(argv[1], "lockout duration") != 0)) {
			fprintf(stderr, "usmbctl: user policy: want \"bad lockout "
			    "attempt\" N or \"lockout duration\" MINUTES, not "
			    "'%s' '%s'\n", argv[1], argv[2]);
			return 2;
		}
	}
	if ((rc = usmbctl_open(conf, argc == 1, &db)) != 0)
		return rc;
	rc = passdb_policy_get(db, &p);
	if (rc == 0 && argc == 3) {
		if (strcmp(argv[1], "bad lockout attempt") == 0)
			p.bad_lockout_attempts = (uint32_t)v;
		else
			p.lockout_duration = (uint32_t)v;
		rc = passdb_policy_put(db, &p);
	}
	passdb_close(db);
	if (rc < 0) {
		fprintf(stderr, "usmbctl: user policy: %s\n", strerror(-rc));
		return 1;
	}
	printf("bad lockout attempt: %u\n", p.bad_lockout_attempts);
	printf("lockout duration:    %u\n", p.lockout_duration);
	return 0;
}

int
usmbctl_user_main(const struct conf *conf, int argc, char **argv)
{
	struct passdb *db = NULL;
	const char *cmd;
	int rc, readonly, needs_name;

	if (argc < 1)
		return usmbctl_user_usage();
	cmd = argv[0];
	if (strcmp(cmd, "policy") == 0)
		return usmbctl_user_policy(conf, argc, argv);
	needs_name = strcmp(cmd, "list") != 0 && strcmp(cmd, "import") != 0;
	if (strcmp(cmd, "add") != 0 && strcmp(cmd, "del") != 0 &&
	    strcmp(cmd, "passwd") != 0 && strcmp(cmd, "enable") != 0 &&
	    strcmp(cmd, "disable") != 0 && strcmp(cmd, "show") != 0 &&
	    strcmp(cmd, "list") != 0 && strcmp(cmd, "import") != 0) {
		fprintf(stderr, "usmbctl: user: unknown subcommand '%s'\n", cmd);
		return usmbctl_user_usage();
	}
	if ((needs_name && argc != 2) || (!needs_name && argc > 2) ||
	    (strcmp(cmd, "list") == 0 && argc != 1)) {
		fprintf(stderr, "usmbctl: user %s: wrong number of arguments\n", cmd);
		return usmbctl_user_usage();
	}
	if (needs_name && argv[1][0] == '\0') {
		fprintf(stderr, "usmbctl: user %s: empty user name\n", cmd);
		return 2;
	}
	readonly = strcmp(cmd, "list") == 0 || strcmp(cmd, "show") == 0;
	if (readonly) {
		/* nothing added yet is an empty list, not an error */
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/passdb.mdb", conf->private_dir);
		if (stat(path, &st) < 0 && errno == ENOENT) {
			if (strcmp(cmd, "show") == 0) {
				fprintf(stderr, "usmbctl: user show: no user '%s' in the "
				    "password database\n", argv[1]);
				return 1;
			}
			printf("%-20s %-8s %-9s %s\n", "NAME", "UID", "FLAGS", "CHANGED");
			return 0;
		}
	}
	if ((rc = usmbctl_open(conf, readonly, &db)) != 0)
		return rc;
	if (strcmp(cmd, "add") == 0)
		rc = usmbctl_user_add(conf, db, argv[1]);
	else if (strcmp(cmd, "del") == 0) {
		int r = passdb_del(db, argv[1]);

		if (r == -ENOENT) {
			fprintf(stderr, "usmbctl: user del: no user '%s' in the password "
			    "database\n", argv[1]);
			rc = 1;
		} else if (r < 0) {
			fprintf(stderr, "usmbctl: user del: %s: %s\n", argv[1], strerror(-r));
			rc = 1;
		} else
			printf("deleted user %s\n", argv[1]);
	} else if (strcmp(cmd, "passwd") == 0)
		rc = usmbctl_user_passwd(conf, db, argv[1]);
	else if (strcmp(cmd, "enable") == 0 || strcmp(cmd, "disable") == 0)
		rc = usmbctl_user_flag(db, cmd, argv[1], strcmp(cmd, "disable") == 0);
	else if (strcmp(cmd, "show") == 0)
		rc = usmbctl_user_show(db, argv[1]);
	else if (strcmp(cmd, "import") == 0)
		rc = usmbctl_user_import(db, argc == 2 ? argv[1] : NULL);
	else {
		printf("%-20s %-8s %-9s %s\n", "NAME", "UID", "FLAGS", "CHANGED");
		if ((rc = passdb_foreach(db, usmbctl_list_one, NULL)) < 0) {
			fprintf(stderr, "usmbctl: user list: %s\n", strerror(-rc));
			rc = 1;
		}
	}
	passdb_close(db);
	return rc;
}

/*
 * Loads the file like the daemon would; adds warnings for what would only
 * fail later (a share path that is missing, accounts that do not exist).
 */
int
usmbctl_testparm(const char *path, int verbose)
{
	struct conf *c;
	struct stat st;
	int i;

	fprintf(stderr, "Load smb config files from %s\n", path);
	if (conf_load(path, &c, stderr) != 0)
		return 2;
	for (i = 0; i < c->nshares; i++) {
		const struct conf_share *s = &c->shares[i];

		if (s->is_ipc)
			continue;
		/* made per user at each tree connect (worker/homes.c) */
		if (s->is_homes || s->path_varies)
			continue;
		if (stat(s->path, &st) < 0)
			fprintf(stderr, "%s:%d: warning: share [%s]: path %s: %s\n",
			    path, s->line, s->name, s->path, strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			fprintf(stderr, "%s:%d: warning: share [%s]: path %s is not a "
			    "directory\n", path, s->line, s->name, s->path);
	}
	if (getpwnam("usmbd") == NULL)
		fprintf(stderr, "warning: no 'usmbd' system account: gates will run as "
		    "'nobody' (scripts/install-deps.sh creates it)\n");
	if (c->map_to_guest == MAP_GUEST_BAD_USER && getpwnam(c->guest_account) == NULL)
		fprintf(stderr, "warning: guest account '%s' does not exist\n",
		    c->guest_account);
	(void)usmbctl_testparm_krb(path, c, stderr);
	fprintf(stderr, "Loaded services file OK.\n\n");
	conf_dump(c, stdout, verbose);
	conf_free(c);
	return 0;
}
