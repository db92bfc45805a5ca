/* usmbctl testparm's Kerberos checks (daemon/usmbctl_krb.c). */
#ifndef USMBD_DAEMON_USMBCTL_KRB_H
#define USMBD_DAEMON_USMBCTL_KRB_H

#include <stdio.h>

struct conf;

/*
 * Warns on errf about what would make Kerberos logons fail: no keytab,
 * one that cannot be read or that others may read, no cifs/ key for
 * this server's names, no `realm`, an unreadable `username map`, and
 * `ntlm auth = no` without Kerberos.  Returns the number of warnings.
 */
int	usmbctl_testparm_krb(const char *path, const struct conf *c, FILE *errf);

#endif
