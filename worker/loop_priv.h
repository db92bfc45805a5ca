/*
 * What worker/loop.c (the event loop, the connections' receives and
 * answers) shares with worker/loop_chan.c (the master's channel: the
 * connections it hands over, the verdict and relay round trips, reload).
 */
#ifndef USMBD_WORKER_LOOP_PRIV_H
#define USMBD_WORKER_LOOP_PRIV_H

#include <stdint.h>

#include "daemon/msg.h"

struct conf;
struct conn;

struct worker {
	int		 chan, ep, sigfd, tfd;
	int		 tickfd;	/* 1 s: async deadlines, durable expiry */
	int		 wmsgfd;	/* worker<->worker messages, -1 if none */
	int		 notifyfd;	/* inotify of CHANGE_NOTIFY, -1 if none */
	int		 hifd;		/* highest connection fd + 1 */
	struct conf	*conf;
	const char	*conf_path;
	const char	*user;
	struct conn	**conns;	/* indexed by fd */
	struct conn	**rconns;	/* a relay's fd -> its connection (worker/relay.h) */
	int		 maxfd;
	int		 nconns;
	int		 shutdown, reload;
	int		 nheadless;	/* connections kept by conn_keep_headless */
	uint32_t	 next_id;
	uint32_t	 rx_gen;	/* last io_uring tag generation */
	uint32_t	 tx_gen;	/* last generation of a send's tag */
	int		 uring;		/* receives go through worker/uring.c */
	/*
	 * fds to run at the end of the loop turn (bytes buffered at a
	 * take-over, a kick); maxfd long with a flag per fd, so none is
	 * ever dropped.
	 */
	int		*defer;
	uint8_t		*deferred;
	int		 ndefer;
	uint8_t		 mbuf[MSG_BUF_SIZE];
	uint8_t		 obuf[MSG_MAX_PAYLOAD];
};

/* The one worker of this process. */
extern struct worker wk;

/*
 * worker/loop.c: the connection count to the master; the idle exit's
 * timer (armed while no connection is left); a connection's close
 * (headless if a session of it lives on another channel); its next
 * receive armed in the ring, 0 or -1 (close it).
 */
void	wk_count(void);
void	wk_idle_timer(void);
void	wk_close(struct conn *c);
int	wk_rx_arm(struct conn *c);

/*
 * worker/loop_chan.c: reads what the master's channel holds (at most 64
 * messages a turn); swaps in the config after SIGHUP or MSG_RELOAD.
 */
void	wk_chan(void);
/* Reads and drops what the master still queued, before the worker ends. */
void	wk_chan_drain(void);
void	wk_reload(void);

#endif
