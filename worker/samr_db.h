/*
 * The accounts the samr pipe lists (worker/pipe_samr*.c): the users of the
 * passdb, which the master sends as MSG_USERS at the worker's start and on
 * every reload (daemon/userlist.c), and the Unix groups those users are
 * in.  Only accounts that can log on are listed, not every NSS entry (an
 * LDAP directory may have tens of thousands), and everything is bounded:
 * static tables, no allocation.
 */
#ifndef USMBD_WORKER_SAMR_DB_H
#define USMBD_WORKER_SAMR_DB_H

#include <stddef.h>
#include <stdint.h>

#define SAMR_DB_MAX_USERS	1000
#define SAMR_DB_MAX_GROUPS	1000
#define SAMR_DB_NAME_MAX	64
/* Groups looked at per user (getgrouplist) */
#define SAMR_DB_USER_GROUPS	64

#define SAMR_DB_DISABLED	0x1	/* PASSDB_FLAG_DISABLED */

struct samr_acct {
	uint32_t	id;		/* uid or gid: the RID */
	uint32_t	flags;		/* SAMR_DB_DISABLED */
	char		name[SAMR_DB_NAME_MAX];
};

/*
 * Replaces the user list with a MSG_USERS payload; 0, or -EINVAL (the
 * list is then empty).  Entries are kept in uid order, one per uid.
 */
int	samr_db_set(const uint8_t *payload, size_t len);
/* The users in uid order; the count. */
unsigned samr_db_users(const struct samr_acct **out);
/* Their groups in gid order (looked up in NSS after each set); the count. */
unsigned samr_db_groups(const struct samr_acct **out);
/* One listed user or group by RID, or NULL. */
const struct samr_acct *samr_db_user(uint32_t uid);
const struct samr_acct *samr_db_group(uint32_t gid);
/* One listed user or group by name (case-insensitive), or NULL. */
const struct samr_acct *samr_db_user_named(const char *name);
const struct samr_acct *samr_db_group_named(const char *name);

#endif
