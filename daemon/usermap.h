/*
 * `username map` (Samba's file format, smb.conf(5)): lines
 *	unixname = name1 name2 "a name with spaces" ...
 * mapping the names on the right (case-insensitive; `*` matches any name)
 * to the Unix account on the left.  A line that starts with `!` ends the
 * search when it matches; otherwise the last matching line wins, as in
 * Samba.  `#` and `;` start comments.  Used by the master for Kerberos
 * principals (daemon/auth_krb.c).
 */
#ifndef USMBD_DAEMON_USERMAP_H
#define USMBD_DAEMON_USERMAP_H

#include <stddef.h>
#include <stdio.h>

#define USERMAP_LINE_MAX	1024

/*
 * Looks name up in the map read from f (from its current position).
 * Returns 1 and the Unix name in out (cap bytes), 0 when nothing matches,
 * -ENAMETOOLONG when the matching account does not fit.
 */
int	usermap_lookup(FILE *f, const char *name, char *out, size_t cap);

#endif
