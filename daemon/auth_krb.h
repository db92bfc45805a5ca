/*
 * Kerberos verdicts (HACKING.md "Kerberos logons").  The master hands a
 * client's AP-REQ, unread, to the ticket helper (`usmbd --child krb`,
 * worker/krb.c) and answers the gate or worker when the helper has said
 * whose ticket it is: it maps the principal to a Unix account (realm,
 * `username map`, NSS) and refuses disabled passdb accounts.
 */
#ifndef USMBD_DAEMON_AUTH_KRB_H
#define USMBD_DAEMON_AUTH_KRB_H

#include <stddef.h>
#include <stdint.h>

struct authmsg_req;
struct child;
struct conf;
struct msg;

/* A MSG_AUTH_REQ with AUTHMSG_MECH_KRB5 from c: to the helper. */
void	auth_krb_start(struct child *c, uint32_t id, const struct authmsg_req *);
/* The helper's MSG_KRB_REP; -1 when malformed (the caller drops it). */
int	auth_krb_rep(struct child *helper, const struct msg *m);
/* The helper said hello (or the config was reloaded): hand it the keytab. */
void	auth_krb_keytab(struct child *helper);
/* The helper is gone: its logons in flight fail. */
void	auth_krb_gone(struct child *helper);
/* Logons the helper did not answer in time fail. */
void	auth_krb_tick(void);
/* Is any logon waiting for the helper (auth_tick must run)? */
int	auth_krb_waiting(void);
/*
 * The Unix account of principal (user@REALM) under conf's `realm` and
 * `username map`: 0 and out, or -1 and *why.
 */
int	auth_krb_map(const struct conf *conf, const char *principal, char *out,
	    size_t cap, const char **why);

#endif
