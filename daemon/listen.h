/* The SMB listeners: bind, accept, hosts allow/deny, hand-off to a gate. */
#ifndef USMBD_DAEMON_LISTEN_H
#define USMBD_DAEMON_LISTEN_H

#include <stdint.h>

struct conf;

#define LISTEN_MAX	32

/* Opens every interface x port of conf; 0, or -1 after logging why. */
int	listen_open(const struct conf *conf);
void	listen_close(void);
/* Do a and b listen on the same addresses and ports? */
int	listen_same(const struct conf *a, const struct conf *b);
void	listen_event(uint32_t idx);
/* Polls the listeners only while a gate is ready and we are not stopping. */
void	listen_update_polling(void);
/* Samba's hosts allow / hosts deny rule for a numeric address text. */
int	listen_host_allowed(char *const *allow, char *const *deny, const char *addr);

#endif
