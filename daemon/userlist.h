/*
 * The passdb's accounts, names and uids only, sent to a user worker for
 * its samr pipe (MSG_USERS): the worker cannot read the root-only passdb,
 * and only the accounts that can log on are worth listing (an LDAP
 * directory behind NSS may hold tens of thousands).
 */
#ifndef USMBD_DAEMON_USERLIST_H
#define USMBD_DAEMON_USERLIST_H

#include <stddef.h>
#include <stdint.h>

struct child;
struct passdb;

/*
 * Sends MSG_USERS to worker c (nothing without a passdb); a channel
 * without room marks it pending for userlist_tick instead.  0 or -errno.
 */
int	userlist_send(struct child *c);
/* Sends the lists still pending (each main-loop turn, at least 1/s). */
void	userlist_tick(void);
/*
 * The MSG_USERS payload of db's accounts into buf (as many whole entries
 * as fit cap, the rest left out with a warning); *len its size.  0 or
 * -EIO.
 */
int	userlist_encode(struct passdb *db, uint8_t *buf, size_t cap,
	    size_t *len);

#endif
