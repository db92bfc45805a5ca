/* Reaping dead children: log, have their shared state purged, free their slot. */
#ifndef USMBD_DAEMON_REAP_H
#define USMBD_DAEMON_REAP_H

#include <sys/types.h>

/* waitpid(WNOHANG) until nothing is left to reap; returns how many. */
int	reap_children(void);

#endif
