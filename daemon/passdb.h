/*
 * The password database: a root-only LMDB environment in `private dir`
 * (directory 0700, files 0600, synced writes).  Key: the SMB user name as
 * given to `usmbctl user add` (which must be a Unix account).  The master
 * opens it read-mostly; usmbctl writes it.
 */
#ifndef USMBD_DAEMON_PASSDB_H
#define USMBD_DAEMON_PASSDB_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define PASSDB_NAME_MAX		64
#define PASSDB_FLAG_DISABLED	0x1

struct passdb;

struct passdb_entry {
	char		name[PASSDB_NAME_MAX];		/* SMB user name */
	char		unix_name[PASSDB_NAME_MAX];	/* Unix account */
	uid_t		uid;
	uint8_t		nt_hash[16];			/* MD4(UTF-16LE(password)) */
	uint32_t	flags;				/* PASSDB_FLAG_* */
	time_t		changed;
	time_t		last_logon;			/* 0 = never */
	uint32_t	failed_logons;			/* since the last good one */
	time_t		locked_at;			/* lockout start, 0 = none */
};

/*
 * The account policy (pdbedit -P): after `bad lockout attempt` failed
 * logons in a row (0 = never) an account is locked out for `lockout
 * duration` minutes (0 = until `usmbctl user enable`).
 */
struct passdb_policy {
	uint32_t	bad_lockout_attempts;
	uint32_t	lockout_duration;		/* minutes */
};

/* Failed logons the master batches into the database (passdb_note_failures). */
struct passdb_failures {
	char		name[PASSDB_NAME_MAX];
	uint32_t	count;		/* to add */
	int		reset;		/* first set the count to 0 and unlock */
	time_t		locked_at;	/* a lockout to record, 0 = none */
};

/* All return 0 or -errno (-ENOENT: no such user). */
int	passdb_open(const char *private_dir, int readonly, struct passdb **out);
void	passdb_close(struct passdb *);
/* Case-insensitive on name, as Windows user names are. */
int	passdb_get(struct passdb *, const char *name, struct passdb_entry *out);
int	passdb_put(struct passdb *, const struct passdb_entry *);
int	passdb_del(struct passdb *, const char *name);
/* Calls fn for each entry in name order; stops and returns fn's value if non-zero. */
int	passdb_foreach(struct passdb *, int (*fn)(const struct passdb_entry *, void *), void *arg);
/* The policy; all zero (no lockout) when none was set. */
int	passdb_policy_get(struct passdb *, struct passdb_policy *out);
int	passdb_policy_put(struct passdb *, const struct passdb_policy *);
/* Adds n users' failed logons in one synced transaction; unknown names are skipped. */
int	passdb_note_failures(struct passdb *, const struct passdb_failures *f, size_t n);
/* NT hash of a UTF-8 password: MD4 of its UTF-16LE form.  0 or -EINVAL. */
int	passdb_nt_hash(const char *password, uint8_t out[16]);

#endif
