/*
 * NetrFileClose and NetrSessionDel for an administrator (daemon/admmsg.h):
 * the master judges the asking worker by its own child table, asks every
 * worker to end what matches, and answers the asker.
 */
#ifndef USMBD_DAEMON_ADMREQ_H
#define USMBD_DAEMON_ADMREQ_H

#include <stdint.h>
#include <sys/types.h>

struct child;
struct msg;

#define ADMREQ_MAX_PENDING	16
/*
 * MSG_ADMIN_REQ a second per worker, and a burst: Computer Management
 * closes 30 selected files as 30 calls, one after the other (about 8 ms
 * each); past the rate a request is dropped unanswered (an answer is a
 * message of the master's own, which must not pile up in a channel a
 * flooding worker does not read) and the worker gives up after its 3 s.
 */
#define ADMREQ_RATE		50
#define ADMREQ_BURST		200
/* The ids of the master's MSG_ADMIN_DO: apart from usmbctl's (high bit). */
#define ADMREQ_ID_BIT		0x40000000u

/*
 * The admin group check on the master's own facts: a live, set-up user
 * worker whose user (the one the master started it for, with that gid)
 * is a member of `server admin group`, and is not the guest account.
 * 1 or 0.
 */
int	admreq_is_admin(const struct child *c);
/* MSG_ADMIN_REQ from c: 0, or -1 for a malformed one (the child is killed). */
int	admreq_handle(struct child *c, const struct msg *m);
/* A MSG_CTL_DONE whose id is ours: 1 when taken, else 0. */
int	admreq_reply(struct child *c, const struct msg *m);
/*
 * A child gone (reaped): the requests it asked are dropped, its answers
 * are no longer awaited (a request all others answered is answered now).
 */
void	admreq_child_gone(pid_t pid);
/* Answers the requests whose deadline passed. */
void	admreq_tick(void);
/* Milliseconds until admreq_tick has work, -1 for none. */
int	admreq_timeout_ms(void);

#endif
