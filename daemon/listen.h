/* The SMB listeners: bind, accept, hosts allow/deny, hand-off to a gate. */
#ifndef USMBD_DAEMON_LISTEN_H
#define USMBD_DAEMON_LISTEN_H

#include <stddef.h>
#include <stdint.h>

struct conf;

#define LISTEN_MAX	32
/*
 * Unauthenticated connections one client address (an IPv6 /64) may have in
 * the gates at once; a new one over it makes the gate drop that address's
 * oldest, so a flood from one address cannot lock out anyone else, nor hold
 * that address's own real clients out for long.
 */
#define LISTEN_PREAUTH_PER_ADDR	16
/* Gate connections the master keeps track of (all gates together). */
#define LISTEN_PREAUTH_MAX	4096

/* Opens every interface x port of conf; 0, or -1 after logging why. */
int	listen_open(const struct conf *conf);
void	listen_close(void);
/* Do a and b listen on the same addresses and ports? */
int	listen_same(const struct conf *a, const struct conf *b);
void	listen_event(uint32_t idx);
/* Polls the listeners only while a gate has room and we are not stopping. */
void	listen_update_polling(void);
struct child;
/*
 * The gate reported MSG_GATE_CONN_END for connection id; to_bind: it went
 * to a worker, unauthenticated, for a channel binding.
 */
void	listen_conn_end(struct child *gate, uint32_t id, int to_bind);
/* How many gates the pool should have now (`gate processes` .. `max gate processes`). */
int	listen_gate_target(void);
/* A gate is gone: its connections no longer count. */
void	listen_gate_gone(const struct child *gate);
/* Forgets connections a gate never ended (a backstop), once a second. */
void	listen_tick(void);
/*
 * The client address of fd, a connection a child shows the master, as
 * conf_peer_allowed reads addresses: only for a TCP socket whose own
 * address is one of our listeners' (what accept gave: a worker can make
 * sockets, but cannot bind one to an address and port we listen on), read
 * with getpeername.  0, or -1 with buf "".
 */
int	listen_peer_of(int fd, char *buf, size_t cap);
/* Unauthenticated connections of addr (text) counted now; for tests. */
unsigned listen_preauth_count(const char *addr);

#endif
