/*
 * NTLMv2 verdicts for the children's MSG_AUTH_REQ, against the passdb,
 * with a per-address failure throttle that delays replies on a timer queue.
 */
#ifndef USMBD_DAEMON_AUTH_H
#define USMBD_DAEMON_AUTH_H

#include <stdint.h>

struct child;
struct conf;
struct msg;

/* (Re)opens the passdb of conf's private dir into master.passdb. */
int	auth_passdb_open(const struct conf *conf);
void	auth_passdb_close(void);
void	auth_handle_req(struct child *c, const struct msg *m);
struct authmsg_rep;
/*
 * Gives the verdict rep for c's request id (NTLM's, or Kerberos' from
 * daemon/auth_krb.c): the key withheld from a worker of another uid, the
 * failure throttle of client and name, then MSG_AUTH_REP.
 */
void	auth_answer(struct child *c, uint32_t id, const char *client,
	    const char *name, struct authmsg_rep *rep);
/* Sends delayed replies that are due. */
void	auth_tick(void);
int	auth_timeout_ms(void);
/* Milliseconds to delay a reply to addr after `failures` recent failures. */
int	auth_throttle_delay_ms(unsigned failures);

#endif
