/*
 * Internals of the SMB2 core shared by worker/conn.c, dispatch.c, gate.c,
 * loop.c, loop_chan.c, handoff.c and the
 * smb2_{negotiate,session,tree,misc,ioctl}.c handlers.  Command handlers of other parts use worker/conn.h only.
 */
#ifndef USMBD_WORKER_CONN_PRIV_H
#define USMBD_WORKER_CONN_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/authmsg.h"
#include "worker/compress.h"
#include "worker/conn.h"
#include "worker/smb2.h"

#define CONN_ROLE_GATE		1
#define CONN_ROLE_WORKER	2

/* conn_private.tx: where the answer in [out_p, out_p + out_len) is. */
#define CONN_TX_NONE		0	/* conn_flush sends it */
#define CONN_TX_DEFERRED	1	/* left to the loop (wk_process) */
#define CONN_TX_RING		2	/* in the io_uring until its completion */

/* 8 MiB transactions plus room for headers of READ/WRITE/compounds. */
#define CONN_MAX_TRANS		(8u * 1024 * 1024)
#define CONN_BUF_BIG		(CONN_MAX_TRANS + 64 * 1024)
/* Before authentication only NEGOTIATE/SESSION_SETUP fit in here. */
#define CONN_BUF_SMALL		(64u * 1024)

#define CONN_MAX_CREDITS	8192
#define CONN_MAX_OPENS		1024
/*
 * Parked (async) requests a connection may hold: Samba's `smb2 max async
 * credits` (512) less one, the numbers smbtorture 4.22's
 * smb2.credits.*notify_max_async_credits expect; the next one is refused
 * with STATUS_INSUFFICIENT_RESOURCES (MS-SMB2 3.3.4.2).  The slots: see
 * struct conn_park_page.
 */
#define CONN_MAX_PENDING	511
#define CONN_MAX_COMPOUND	64

/* SMB2 NEGOTIATE capabilities, MS-SMB2 2.2.3 */
#define SMB2_GLOBAL_CAP_DFS			0x00000001u
#define SMB2_GLOBAL_CAP_LEASING			0x00000002u
#define SMB2_GLOBAL_CAP_LARGE_MTU		0x00000004u
#define SMB2_GLOBAL_CAP_MULTI_CHANNEL		0x00000008u
#define SMB2_GLOBAL_CAP_PERSISTENT_HANDLES	0x00000010u
#define SMB2_GLOBAL_CAP_DIRECTORY_LEASING	0x00000020u
#define SMB2_GLOBAL_CAP_ENCRYPTION		0x00000040u

#define SMB2_NEGOTIATE_SIGNING_ENABLED		0x0001
#define SMB2_NEGOTIATE_SIGNING_REQUIRED		0x0002

/* SESSION_SETUP, MS-SMB2 2.2.5 / 2.2.6 */
#define SMB2_SESSION_FLAG_BINDING		0x01
#define SMB2_SESSION_FLAG_IS_GUEST		0x0001
#define SMB2_SESSION_FLAG_IS_NULL		0x0002
#define SMB2_SESSION_FLAG_ENCRYPT_DATA		0x0004

/* The message-id window of MS-SMB2 3.3.1.1 (Samba's seqnum range). */
struct conn_credits {
	uint64_t	low;		/* lowest message id not yet used */
	uint32_t	range;		/* ids [low, low + range) are valid */
	uint32_t	granted;	/* credits the client holds */
	uint32_t	max;
	uint8_t		bitmap[CONN_MAX_CREDITS * 2 / 8];	/* used ids >= low */
};

/*
 * A request answered with STATUS_PENDING that completes later (MS-SMB2
 * 3.3.4.2).  The request's bytes are copied into the slot (its buffer is
 * allocated on the slot's first use and kept, so parking does not malloc
 * once warm) and the whole request runs again through its handler when
 * the slot is woken: by a worker message (LOCK_RELEASED, BREAK_ACK), a
 * deadline, or an inotify event.  CANCEL, close, logoff and disconnect
 * end it.
 */
enum conn_park_kind {
	PARK_NONE = 0,
	PARK_LOCK,		/* blocking byte-range lock: LOCK_RELEASED */
	PARK_BREAK,		/* CREATE waiting for a break ack: BREAK_ACK */
	PARK_NOTIFY,		/* CHANGE_NOTIFY: file system events */
	PARK_KLEASE,		/* CREATE waiting for a kernel lease: its tick */
};

#define CONN_PARK_BUF	(16u * 1024)
#define CONN_HELD_MAX	8	/* responses held before a silent one */
/*
 * Where parked requests live.  CONN_PARK_BASE slots are in struct
 * conn_private; each gets a CONN_PARK_BUF buffer at its first use, enough
 * for a CREATE with its chain (what may wait in dispatch_park_rest and
 * dispatch_park_silent).  Past those, pages of CONN_PARK_PAGE slots are
 * added as they fill, at most CONN_PARK_PAGES a connection and
 * CONN_PARK_WORKER_PAGES a worker, and kept until the connection ends
 * (allocated when the table grows, never per request).  A page slot holds
 * CONN_PARK_SMALL bytes: a CHANGE_NOTIFY (96) or a blocking LOCK, never a
 * CREATE or SET_INFO, which may keep a chain behind them.
 */
#define CONN_PARK_BASE		64
#define CONN_PARK_PAGE		64
#define CONN_PARK_PAGES		7
#define CONN_PARK_WORKER_PAGES	64
#define CONN_PARK_SMALL		256

struct conn_pending {
	int		 in_use;
	uint64_t	 async_id;
	uint64_t	 message_id;
	uint64_t	 session_id;
	uint16_t	 command;
	int		 kind;		/* enum conn_park_kind */
	uint64_t	 dev, ino;	/* state key of the file waited on */
	uint64_t	 fid_persistent, fid_volatile;	/* the open it names */
	uint64_t	 deadline_ms;	/* shm_now_ms() clock; 0 = none */
	uint64_t	 since_ms;	/* parked as this kind since (same clock) */
	int		 ready;		/* run it again */
	ntstatus_t	 final;		/* != 0: answer this status (cancel) */
	int		 silent;	/* no interim was sent: answer sync */
	/* a directory rename: breaks below it it may still wait for */
	unsigned	 waits_left;
	/*
	 * A silent request that ends a chain holds the chain's earlier
	 * responses (at buf + len, unsigned, unpadded: held_len bytes as
	 * they stood at sbuf + SMB2_FRAME_LEN), sent with its own.
	 */
	size_t		 held_len;
	unsigned	 held_n;
	size_t		 held_off[CONN_HELD_MAX], held_olen[CONN_HELD_MAX];
	struct session	*held_sign[CONN_HELD_MAX];
	uint64_t	 held_sign_id[CONN_HELD_MAX];
	int		 held_encrypt;
	uint8_t		*buf;		/* the request: header + body */
	size_t		 cap;		/* bytes at buf: CONN_PARK_BUF or _SMALL */
	size_t		 len;
	size_t		 rest_len;	/* a chain's requests after it, at buf + len */
	uint32_t	 tree_id;
	int		 encrypted;
	int		 related;
	uint64_t	 related_fp, related_fv;
	/* Undoes what the handler registered (e.g. a lock waiter record). */
	void		(*cancel)(struct conn *, struct conn_pending *);
	void		*arg;		/* the handler's, e.g. a notify watch */
};

struct conn_park_page {
	struct conn_pending slot[CONN_PARK_PAGE];
	uint8_t		 buf[CONN_PARK_PAGE][CONN_PARK_SMALL];
};

/* The NTLMSSP/SPNEGO exchange of a session being set up. */
struct sess_auth {
	int		 step;		/* 0 expect NEGOTIATE, 1 expect AUTHENTICATE */
	int		 spnego;	/* the client wraps in SPNEGO */
	uint8_t		 negotiate[512];
	uint32_t	 negotiate_len;
	uint8_t		 challenge[1024];
	uint32_t	 challenge_len;
	uint8_t		 mech_types[256];	/* DER of the client's mechTypes */
	uint32_t	 mech_types_len;
	uint8_t		 server_challenge[8];
	int		 krb_mech;	/* SPNEGO_MECH_KRB5(_MS) chosen, else 0 */
	int		 krb_mic;	/* chosen after another mechanism: the
					 * mechListMICs are exchanged */
	uint64_t	 krb_ctx;	/* the helper's context awaiting the
					 * client's mechListMIC, else 0 */
	/* Kerberos: the whole session key for sess_keys, else len 0. */
	uint32_t	 full_key_len;
	uint8_t		 full_key[32];
};

/* How a connection asks the master for a verdict: gate or worker. */
typedef int (*conn_auth_fn)(struct conn *, const struct authmsg_req *,
    struct authmsg_rep *);

/*
 * A relayed worker's look-ahead (worker/relay_ahead.c): rbuf's frames
 * [0, end) were decrypted in place for session sess (id sid, cipher),
 * the plaintext at poff of each transform, but the one at bad - 1 (0:
 * none), which did not decrypt; stop: look no further until they are
 * all served.
 */
struct relay_ahead {
	size_t		 end;
	size_t		 bad;
	size_t		 poff;
	struct session	*sess;
	uint64_t	 sid;
	uint16_t	 cipher;
	int		 stop;
};

struct conn_private {
	int		 role;
	int		 dead;		/* disconnect after the current send */
	/*
	 * The socket is gone but a session living here still has channels
	 * (conn_keep_headless): kept for its trees, opens and parked CREATEs;
	 * output is discarded.
	 */
	int		 headless;
	/*
	 * c->peer is the master's reading of the client's socket (the
	 * identity of MSG_CONN, worker/handoff.c handoff_peer), so a relayed
	 * or headless connection's share host lists may judge it.
	 */
	int		 peer_vouched;
	/*
	 * The client's TCP port where getpeername cannot tell it: a
	 * headless connection's (kept before its socket went) and a
	 * relayed connection's (its socket is a socketpair; the port is
	 * the owner's word, from the hand-off: worker/handoff.c).
	 */
	uint16_t	 peer_port;
	/* receive: frames are parsed in place */
	uint8_t		*rbuf;
	size_t		 rcap;
	size_t		 rlen;
	size_t		 max_frame;
	/* send: [frame header][responses...] */
	uint8_t		*sbuf;
	size_t		 scap;
	uint8_t		*ebuf;		/* encrypted output, allocated when first needed */
	size_t		 ecap;
	/* output not yet written (non-blocking worker) */
	const uint8_t	*out_p;
	size_t		 out_len;
	int		 out_fd;
	int		 out_fd_owned;
	off_t		 out_foff;
	size_t		 out_flen;
	struct conn_credits cred;
	uint8_t		 preauth[64];	/* 3.1.1 connection preauth hash */
	int		 smb1_neg;	/* answered an SMB1 NEGOTIATE with 0x02FF */
	struct open	*opens;
	unsigned	 nopens;
	struct open	*free_opens;
	unsigned	 nlive;		/* opens in use: `max opens per connection` */
	uint32_t	 open_gen;
	uint64_t	 next_async_id;
	struct conn_pending pending[CONN_PARK_BASE];
	struct conn_park_page *park_pages[CONN_PARK_PAGES];
	unsigned	 npark_pages;
	struct conn_pending *resuming;	/* the slot being run again */
	unsigned	 nready;	/* slots with ready or final set */
	/* Unsolicited OPLOCK_BREAK notifications waiting for the socket. */
	struct conn_notice {
		uint8_t	 buf[128];	/* SMB2 header + body */
		uint16_t len;
		uint64_t session_id;	/* encrypt with this session, 0 = plain */
	}		 notices[16];
	unsigned	 nnotices;
	/* set by handlers for dispatch */
	struct session	*preauth_rsp_sess;	/* hash this SESSION_SETUP response */
	int		 preauth_rsp_conn;	/* hash this NEGOTIATE response */
	struct session	*sign_final;		/* sign this final SESSION_SETUP */
	struct session	*logged_in;		/* a session just became valid */
	int		 no_response;		/* CANCEL: send nothing */
	struct session	*free_after;		/* LOGOFF, replaced session: free once answered */
	conn_auth_fn	 auth;
	void		*host;		/* gate or worker state */
	/* rate limit of warnings */
	time_t		 warn_t;
	unsigned	 warn_n;
	int		 epoll_out;	/* EPOLLOUT is armed (worker) */
	/*
	 * A receive (or a readiness poll) of the worker's io_uring is
	 * armed on this connection (worker/loop.c): until its completion
	 * nothing else reads the socket or moves rbuf, since the kernel
	 * writes at rbuf + rlen as it was at arming.
	 */
	int		 rx_armed;
	uint32_t	 rx_gen;	/* tag of the armed request */
	/*
	 * The answer's send by the worker's io_uring (worker/loop.c
	 * wk_process): while tx_ring is set (conn_process under a ring
	 * worker's loop) conn_flush leaves a contiguous answer to the loop
	 * (CONN_TX_DEFERRED), which either hands it to the ring (CONN_TX_RING:
	 * sent, MSG_DONTWAIT, by the next io_uring_enter, which also waits for
	 * the next request) or sends it at once.  Under CONN_TX_RING the
	 * kernel reads [out_p, out_p + out_len) until the completion, so the
	 * output stays pending (nothing else is sent or built over it) and the
	 * connection closes only after the send went (wk_close).
	 * dispatch_async_run sends at once (its callers free what the answers
	 * need right after).
	 */
	int		 tx_ring;
	int		 tx;
	uint32_t	 tx_gen;	/* tag of the send in the ring */
	/*
	 * A connection routed to a worker for binding, with no session of
	 * its own: closed at this deadline (shm_now_ms clock; 0 = none, or
	 * it has logged in) or after CONN_BIND_MAX_FAILS failed setups.
	 */
	uint64_t	 bind_deadline_ms;
	unsigned	 bind_fails;
	/*
	 * A WRITE dispatched with its payload still on the socket
	 * (worker/conn_rx.c): bytes [rx_pos, rx_end) of the frame at rbuf
	 * are not read yet.
	 */
	int		 rx_active;
	size_t		 rx_pos;
	size_t		 rx_end;
	int		 rx_wait;	/* conn_rx.c RX_WAIT_*: awaiting the payload */
	size_t		 rx_pend;	/* [rx_pos, rx_pend) is in rx_pfd, the rest on fd */
	int		 rx_lowat;	/* SO_RCVLOWAT as set by conn_rx.c (0: 1) */
	/*
	 * RX_WAIT_PIPE: the payload of the frame at rbuf (its head is
	 * [0, rlen)) is being buffered in a pipe of the connection's own
	 * while it arrives; rx_piped bytes after rlen are in it.  Held only
	 * in that state (then given back to the worker's spares), so idle
	 * connections hold no pipe.
	 */
	int		 rx_pfd[2];
	size_t		 rx_pcap;
	size_t		 rx_piped;
	int		 rx_pfull;	/* the pipe took no more: the rest is awaited on fd */
	uint32_t	 rx_ptime;	/* conn_now() of the last bytes piped */
	/*
	 * Several users on one connection (worker/relay.h).  On the
	 * connection's owner: the sessions of other users it relays (NULL
	 * when none).  On a relayed connection (its socket is the other
	 * end of such a relay): relayed is set, and relay_verdict is the
	 * master's verdict for its first SESSION_SETUP, used once.
	 */
	struct relay_tab *relays;
	int		 relayed;
	/* Relayed: the owner's ring of sealed ids read (worker/relay_ring.c). */
	struct relay_ring *relay_ring;
	/* Relayed: the sealed frames read and decrypted ahead (relay_ahead.c). */
	struct relay_ahead ahead;
	struct authmsg_rep *relay_verdict;
	uint32_t	 auth_id;	/* id of the last MSG_AUTH_REQ (wk_auth) */
	uint8_t		 relay_preauth[64];	/* a setup's session hash before its request */
	/*
	 * A real user's session (not anonymous, not guest) was set up on
	 * this connection.  Until then a transform is not decrypted, even
	 * for an anonymous session that has keys (as Samba 4.22's
	 * got_authenticated_session; smbtorture smb2.session.anon-encryption1).
	 */
	int		 user_authed;
	/*
	 * Compressed requests are decompressed here (worker/compress.c):
	 * allocated at the connection's first one, zcap bytes, kept.
	 */
	uint8_t		*zbuf;
	size_t		 zcap;
};

#define CONN_BIND_LOGIN_SECS	15	/* like the gate's login deadline */
#define CONN_BIND_MAX_FAILS	8

struct conn	*conn_new(const struct conf *, int fd, int role, const char *peer,
		    size_t bufsize);
void		 conn_free(struct conn *);
/*
 * Multichannel (MS-SMB2 3.3.7.1): a session outlives its home connection
 * while another channel of it is alive.  When the home's socket is lost,
 * conn_keep_headless(c) returns 1 if some valid session of c still has a
 * channel: c is kept (headless) as the store of those sessions' trees,
 * opens and parked CREATEs, everything else on it ends as on a
 * disconnect; 0 when c should be freed as usual.  conn_headless_done(c):
 * no session of a headless c has a channel left (or it was killed): the
 * caller frees it now (conn_free: the usual disconnect, durable handles
 * kept).  worker/conn_headless.c.
 */
int		 conn_keep_headless(struct conn *);
/*
 * The client's TCP port: getpeername of the socket, or peer_port when the
 * socket is gone (headless) or not the client's (relayed).
 */
uint16_t	 conn_peer_port(const struct conn *);
int		 conn_headless_done(struct conn *);
/* A live connection bound as a channel to session sid of c, or NULL. */
struct conn	*conn_headless_channel(struct conn *c, uint64_t sid);
/* Grows a gate-sized connection to the big buffers (on the worker). */
int		 conn_set_bufsize(struct conn *, size_t);

/* Reads what the socket has; returns >0, 0 on EOF, -EAGAIN or -errno. */
ssize_t		 conn_read(struct conn *);
/*
 * conn_read in two halves, for a receive done elsewhere (io_uring):
 * how much may be read now at rbuf + rlen (0: nothing, its payload is
 * awaited whole; -ENOBUFS: the buffer is full), and the count received.
 */
ssize_t		 conn_read_want(struct conn *);
void		 conn_read_done(struct conn *, size_t);
/*
 * Handles every complete frame in the receive buffer while no output is
 * pending.  Returns 0, or -1 when the connection must be closed.
 */
int		 conn_process(struct conn *);
/*
 * The session whose keys decrypt the transform msg (len bytes), its id
 * in *sid: the one it names, or the session a channel slot of that id
 * is bound to; NULL when there is none, it has no cipher, or it is
 * anonymous before a real user logged on (user_authed).
 */
struct session	*conn_transform_session(struct conn *, const uint8_t *msg,
		    size_t len, uint64_t *sid);
/* The length of the first complete frame in rbuf, 0 if incomplete, -1 bad. */
long		 conn_frame_ready(struct conn *);
/* Writes pending output; 0 when all written, -EAGAIN, or -errno. */
int		 conn_flush(struct conn *);
int		 conn_output_pending(const struct conn *);

/*
 * Receive without a copy (worker/conn_rx.c).  A worker reads at most
 * CONN_RX_PREFIX bytes of a new frame (conn_rx_read_want: how much
 * conn_read may read now).  conn_rx_splice_frame, for the incomplete frame
 * of length len at rbuf: when it is a lone unsigned unencrypted WRITE of
 * at least CONN_RX_SPLICE_MIN bytes whose payload is all queued, it
 * dispatches it (the handler splices the payload to the file), drains
 * what the handler did not take, empties rbuf and returns 1; 0 when the
 * frame does not qualify or its payload is awaited (possibly buffered in
 * a pipe of the connection's own as it arrives: RX_WAIT_PIPE); 1 also
 * when rbuf changed and should be looked at again; -1 when the
 * connection must be closed.
 */
#define CONN_RX_PREFIX		(16u * 1024)
#define CONN_RX_SPLICE_MIN	(64u * 1024)
size_t		 conn_rx_read_want(struct conn *, size_t room);
int		 conn_rx_splice_frame(struct conn *, size_t len);
/*
 * A worker's connection starts with CONN_BUF_SMALL buffers (anonymous,
 * IPC$-only and not yet bound connections never need more) and takes
 * CONN_BUF_BIG ones, between two frames, once one of its sessions has a
 * disk tree (or it is a channel of a session): 0 (grown or not yet
 * needed), -ENOMEM.
 */
int		 conn_rx_grow(struct conn *);
/* Gives back the connection's payload pipe, if any (conn_free). */
void		 conn_rx_release(struct conn *);
/*
 * The 1 s tick: a connection whose payload stopped coming for
 * CONN_RX_STALL_SECS gives its pipe back and finishes the frame by the
 * copy path.  Non-zero while some connection buffers in a pipe.
 */
#define CONN_RX_STALL_SECS	10
int		 conn_rx_tick(void);

/* Credits (MS-SMB2 3.3.5.2.3 and 3.3.1.2). */
void		 conn_credits_init(struct conn_credits *, uint32_t max);
int		 conn_credits_charge(struct conn_credits *, uint64_t mid, uint16_t charge);
uint16_t	 conn_credits_grant(struct conn_credits *, uint16_t requested,
		    uint16_t charged);
/*
 * A relayed connection checks no message id (the owner keeps the window):
 * it only counts the credits spent, so that it keeps granting.
 */
void		 conn_credits_spend(struct conn_credits *, uint16_t charge);
/*
 * A relayed connection's replay check: the owner could send a request of
 * the session again (its signature still holds), so each message id is
 * taken once, within CONN_MAX_CREDITS * 2 of the highest one seen (an
 * anti-replay window; cr->low is the highest + 1).  0, or -1.
 */
int		 conn_credits_replay(struct conn_credits *, uint64_t mid,
		    uint16_t charge);
/* The owner: credits another worker granted on a relayed session. */
void		 conn_credits_add(struct conn_credits *, uint16_t granted);

/* Pending async requests. */
/*
 * A free slot whose buffer holds at least need bytes (its buffer may still
 * be NULL: a base slot's is allocated by the caller), or NULL when the
 * connection holds CONN_MAX_PENDING or no slot can be had.
 */
struct conn_pending *conn_pending_add(struct conn *, uint64_t mid, uint64_t sid,
		    size_t need);
/* The slots: conn_pending_at(pv, i) for i < conn_pending_nslots(pv). */
static inline unsigned
conn_pending_nslots(const struct conn_private *pv)
{
	return CONN_PARK_BASE + pv->npark_pages * CONN_PARK_PAGE;
}

static inline struct conn_pending *
conn_pending_at(struct conn_private *pv, unsigned i)
{
	if (i < CONN_PARK_BASE)
		return &pv->pending[i];
	i -= CONN_PARK_BASE;
	return &pv->park_pages[i / CONN_PARK_PAGE]->slot[i % CONN_PARK_PAGE];
}
/* At the connection's end: the slots' buffers and pages. */
void		 conn_pending_free_all(struct conn *);
struct conn_pending *conn_pending_find(struct conn *, uint64_t async_id, uint64_t mid);
void		 conn_pending_del(struct conn_pending *);
/*
 * Marks a slot to run again (woken) or to be answered with a final status
 * (cancelled, closed); the connection does it as soon as its output is
 * idle (conn_process).
 */
void		 conn_pending_wake(struct conn *, struct conn_pending *);
void		 conn_pending_finish(struct conn *, struct conn_pending *,
		    ntstatus_t);
/* Forgets the slots of a session (sid 0: all) without answering them. */
void		 conn_pending_drop(struct conn *, uint64_t sid);
/* Wakes every slot of a kind waiting on (dev, ino); dev = ino = 0: all. */
unsigned	 conn_pending_wake_file(struct conn *, int kind, uint64_t dev,
		    uint64_t ino);
/* A session ends: its parked requests are finished (count). */
unsigned	 conn_pending_end_session(struct conn *, uint64_t session_id);
/*
 * A tree goes (TREE_DISCONNECT, kill): the requests of that session and
 * tree still parked after its opens closed (a CREATE waiting for a break)
 * are answered, here and on the session's channels; how many here.
 */
unsigned	 conn_pending_end_tree(struct conn *, uint64_t session_id,
		    uint32_t tree_id);
/* Ends the slots naming an open (CLOSE), with status (0: per kind). */
void		 conn_pending_end_open(struct conn *, uint64_t fid_persistent,
		    uint64_t fid_volatile, ntstatus_t);
/* Earliest deadline of the connection's slots (0 = none); fires due ones. */
uint64_t	 conn_pending_tick(struct conn *, uint64_t now_ms);
/* Work queued for when the output is idle (wakes, notices)? */
int		 conn_async_ready(const struct conn *);
/* Queues an unsolicited message (break notification) for the socket. */
int		 conn_notice_queue(struct conn *, const uint8_t *msg, size_t len,
		    uint64_t encrypt_session_id);

/* Rate-limited per-connection warning. */
void		 conn_warnx(struct conn *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

/* Encrypted output buffer of at least n bytes, or NULL. */
uint8_t		*conn_ebuf(struct conn *, size_t n);

/* Monotonic seconds. */
uint32_t	 conn_now(void);
/* FILETIME (100 ns since 1601) of the wall clock. */
uint64_t	 conn_filetime(void);

#endif
