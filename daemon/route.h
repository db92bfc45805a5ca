/*
 * Routing authenticated connections from gates to the user workers, by the
 * verdict the master gave the gate (never by what the gate's payload says).
 */
#ifndef USMBD_DAEMON_ROUTE_H
#define USMBD_DAEMON_ROUTE_H

#include <stdint.h>

struct child;
struct msg;

void	route_handoff(struct child *gate, const struct msg *m);
void	route_worker_hello(struct child *worker);
void	route_conn_ack(struct child *worker, uint32_t id);
/* Fails hand-offs a worker did not acknowledge in time. */
void	route_tick(void);
/* A child died or was killed: fail or forget its queued connections. */
void	route_child_gone(struct child *c);

#endif
