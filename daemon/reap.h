/* Reaping dead children: log, purge their shared state, free their slot. */
#ifndef USMBD_DAEMON_REAP_H
#define USMBD_DAEMON_REAP_H

#include <sys/types.h>

/* waitpid(WNOHANG) until nothing is left to reap; returns how many. */
int	reap_children(void);
/* Every few seconds: drop disconnected durable opens past their timeout. */
void	reap_expire_durable(void);
/* Removes a dead child's opens, locks and sessions from the state env. */
void	state_purge_child(pid_t pid);

#endif
