/*
 * Several users on one connection (HACKING.md "Several users on one
 * connection").  The worker that holds a client's socket (the owner) serves
 * its own user's sessions; a session of another user is served by a worker
 * of that user, over a socketpair the master brokers (MSG_RELAY).  The
 * owner forwards that session's frames whole (signed or encrypted with keys
 * it never holds) and writes back what the other worker answers; it keeps
 * the connection's message-id window, told beside each answer which ids it
 * used and what it granted.  The other worker serves the socketpair as a
 * connection of its own (conn_private.relayed).  How a session comes to
 * be relayed (relay_start, relay_accept): worker/relay_setup.c; the
 * owner's frame path: worker/relay.c; what they share of the owner's
 * table of relays: worker/relay_priv.h.
 *
 * On the relay, both ways, frames are the client's framing (a 4-byte
 * header: 0x00 and a 24-bit length).  After each frame it sends, the
 * relayed worker sends a control record: a 4-byte header RELAY_CTL_TYPE
 * and a 24-bit length, then u16 credits granted, u16 n, and n times u64
 * message id + u16 credit charge of the requests the frame answered; for
 * an encrypted frame, then u16 na and na times u64 message id, u64
 * AsyncId, u16 command, u8 final of its async answers (interim or final),
 * which the owner cannot read there (relay_inflight_sealed).
 * Where a frame would start, a 4-byte RELAY_DROP_TYPE record (length 0)
 * says the relayed worker met a request for which a server drops the
 * connection (a transform it cannot decrypt, a malformed frame: MS-SMB2
 * 3.3.5.2.1.1, 3.3.5.2): the owner drops the client's connection.
 * Ahead of every frame, the owner sends one RELAY_RING_TYPE byte with the
 * fd of the relayed worker's ring (relay_ring_send, below).
 */
#ifndef USMBD_WORKER_RELAY_H
#define USMBD_WORKER_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/smb2_hdr.h"
#include "worker/smb2.h"

struct authmsg_ident;
struct authmsg_rep;
struct conn;
struct dispatch_out;
struct relay_ctl_async;
struct session;
struct smb2_req;

#define RELAY_MAX		256	/* relayed sessions on one connection */
#define RELAY_CTL_TYPE		0xA5
/* header, RELAY_CTL_IDS answers, as many async states of a sealed frame */
#define RELAY_CTL_MAX		(8 + 64 * 10 + 2 + 64 * 19)
#define RELAY_DROP_TYPE		0xA6
#define RELAY_VERSION		2
/*
 * A relay that takes no byte of what waits for it this long is dropped:
 * any user can stop his own worker (issue 20).  The owner never waits on
 * it: what the relay's socket does not take waits in its backlog.
 */
#define RELAY_WAIT_MS		1000

/* ---- on the owner ---- */

/*
 * A verdict for another user (AUTH_FLAG_RELAY) on the AUTHENTICATE leg of
 * a new session s: hands the session to that user's worker.  On success
 * the session leaves this connection's table, the request gets no answer
 * from here (that worker answers it) and STATUS_SUCCESS is returned; else
 * the status to answer (ACCESS_DENIED when the connection does not
 * require signing and sealed relays are not allowed: relay_setup.c).
 */
ntstatus_t	relay_start(struct smb2_req *req, struct session *s,
		    const struct authmsg_rep *verdict);
/*
 * A client frame (msg, len: after the 4-byte framing) of a relayed
 * session goes to its worker: 1 forwarded (or lost with a broken relay),
 * 0 not a relayed session's.  An unrelated compound (MS-SMB2 3.3.5.2.7.1)
 * whose elements name several sessions is split: each element of a
 * relayed session goes alone to its worker, its bytes as signed (a
 * NextCommand that points at the end: struct smb2_chain tail_ok), and
 * is answered apart, as 3.2.4.1.4 lets a server; *split is then set and
 * 0 returned when elements are left for this worker, which skips the
 * others (relay_owns).  -1: a sealed frame for a relay that may not
 * carry one (relay sealed sessions = no); the connection drops.
 */
int		relay_route(struct conn *c, const uint8_t *msg, size_t len,
		    int *split);
/* 1 when a session of c is relayed to another worker. */
int		relay_any(const struct conn *c);
/* Is the element m (mlen) of a split compound a relayed session's? */
int		relay_owns(struct conn *c, const uint8_t *m, size_t mlen);
/*
 * The relay on fd is readable or writable (ev: epoll's events): reads
 * what it has, writes what waits for it.  0, or -1 (no such relay).
 */
int		relay_input(struct conn *c, int fd, uint32_t ev);
/*
 * With io_uring the owner receives a relay's answers by the ring, not
 * epoll (worker/uring.h): tagged RELAY_UD_BIT | generation << 32 | fd,
 * the generation 29 bits (its sends also RELAY_UD_SEND; bit 61 is
 * worker/loop.c's, for a connection's sends).
 * The completion (ud, res) of a relay of c: 0, or -1 when it is stale
 * (its relay closed meanwhile).  relay_pump passes the answers on and
 * arms the next receive.
 */
#define RELAY_UD_BIT	(1ull << 63)
#define RELAY_UD_SEND	(1ull << 62)	/* its sends: URING_UD_QUICK */
int		relay_received(struct conn *c, uint64_t ud, int32_t res);
/*
 * The 1 s tick: a relay whose backlog's head waited RELAY_WAIT_MS is
 * dropped (relay_pump then ends its session): 1 when one was, else 0.
 * *need is set while a backlog still waits (the tick must go on).
 */
int		relay_tick(struct conn *c, int *need);
/*
 * Writes the relayed workers' answers to the client while the socket
 * takes them.  0, or -1 when the connection must be closed.
 */
int		relay_pump(struct conn *c);
/*
 * 1 when no relay of c has an answer (or its end) to pass on without a
 * new event, each with its receive armed (armed here if need be): an
 * answer of c may then wait for the loop's next io_uring_enter
 * (worker/loop.c wk_tx_quiet).  Else 0.
 */
int		relay_quiet(struct conn *c);
/* The connection ends: every relay closes (the other workers clean up). */
void		relay_conn_gone(struct conn *c);

/*
 * Answers only to its own requests (worker/relay_mids.c): the ids of the
 * requests the owner forwarded to a relay in the clear whose final
 * answer has not gone by.  An answer in the clear is passed on only when
 * every header of it names one (or is a break notice); a client may
 * otherwise take it for another session's request of that id.  Room for
 * every request a client may have in flight on one connection (a credit
 * each, plus the async ones); RELAY_MIDS_SLOTS a power of two above it.
 */
#define RELAY_MIDS_MAX		(CONN_MAX_CREDITS + CONN_MAX_PENDING + 1)
#define RELAY_MIDS_SLOTS	16384
struct relay_mids {
	unsigned	 n;
	uint64_t	 slot[RELAY_MIDS_SLOTS];	/* id + 1; 0 free */
};
/* Notes mid: 0, or -1 when the table is full (or mid is 0xFFFF...). */
int		relay_mids_add(struct relay_mids *, uint64_t mid);
/* Is mid noted? */
int		relay_mids_has(const struct relay_mids *, uint64_t mid);
/*
 * A client frame (msg, len: after the framing) forwarded on the relay:
 * the ids of its requests but CANCELs are noted (nothing of a sealed
 * one).  0, or -1 when the table is full.
 */
int		relay_mids_note(struct relay_mids *, const uint8_t *msg,
		    size_t len);
/*
 * A frame of answers in the clear (msg, len) from the relayed worker: 0
 * when each header's id is noted (or it is a break notice), the final
 * answers' ids then forgotten; -1 (nothing changed) when one is not, or
 * the frame is not a well-formed SMB2 chain.
 */
int		relay_mids_answered(struct relay_mids *, const uint8_t *msg,
		    size_t len);

/*
 * Requests in flight on a relay (worker/relay_inflight.c): the owner
 * notes each request it forwards in the clear (signed; an encrypted one
 * it cannot read) and forgets it when its answer goes by (an interim one
 * makes it wait for its async final answer).  When the relayed worker
 * dies, each one left gets USER_SESSION_DELETED from the owner (MS-SMB2
 * 3.3.4.x: the session is gone), async when it had its interim answer,
 * written into the relay's buffer as if that worker had sent it, with
 * its control record.  At most RELAY_INFLIGHT are kept; past that a
 * request is not noted (it then goes unanswered, as before).
 */
#define RELAY_INFLIGHT		64
struct relay_req {
	uint64_t	 mid;
	uint64_t	 async_id;	/* once its interim answer went by */
	uint32_t	 tree_id;
	uint32_t	 process_id;
	uint32_t	 flags;		/* the request's */
	uint16_t	 command;
	uint16_t	 charge;
	uint8_t		 async;
};
struct relay_inflight {
	unsigned	 n;
	struct relay_req r[RELAY_INFLIGHT];
};
/* A client frame (msg, len: after the framing) forwarded on the relay. */
void		relay_inflight_note(struct relay_inflight *,
		    const uint8_t *msg, size_t len);
/* A frame of answers (msg, len) the owner passes to the client. */
void		relay_inflight_answered(struct relay_inflight *,
		    const uint8_t *msg, size_t len);
/*
 * An async answer in an encrypted frame, as its control record tells it:
 * an interim one notes the request (answered unsigned and unsealed with
 * USER_SESSION_DELETED should the worker die: the one status a client
 * takes that way for a sealed session, Samba's smbXcli_base.c), a final
 * one forgets it.
 */
void		relay_inflight_sealed(struct relay_inflight *,
		    const struct relay_ctl_async *);
/*
 * The answers of session sid's requests still in flight, each a frame
 * and its control record, written at dst (cap bytes) for dialect; the
 * length written.  The table is emptied.
 */
size_t		relay_inflight_answer(struct relay_inflight *, uint64_t sid,
		    uint16_t dialect, uint8_t *dst, size_t cap);

/*
 * The ids of a relayed session's sealed requests that its worker has
 * read (worker/relay_ring.c): the owner cannot read them in the frames,
 * so the relayed worker writes them into a small shared memory ring
 * for each frame it decrypts (at its turn, or as soon as it is read
 * behind the one served: worker/relay_ahead.c) and clears each once its answer
 * (or interim answer) is all in the relay's socket, both with plain
 * stores: no system call per request.  The owner makes the ring (a memfd
 * sealed at RELAY_RING_BYTES: neither side can grow or shrink it) when it
 * brokers the relay and sends it ahead of every frame, with a
 * RELAY_RING_TYPE byte; the relayed worker maps it (the owner never does)
 * and never reads it back.  When the relay ends the owner reads it once
 * (relay_inflight_collect, relay_ring_lost): every byte is another
 * user's worker's.
 *
 * Each of RELAY_RING_SLOTS slots of RELAY_RING_SLOT bytes: a u64 (host
 * order) message id + 1, 0 when free, stored in one aligned store last;
 * u16 command, u16 credit charge.  At RELAY_RING_COUNTS, three u64 (host
 * order, each one aligned store) the relayed worker advances: the bytes
 * it has read from the relay, the sealed frames it has decrypted, their
 * bytes (framing included): what the owner forwarded past those was
 * never decrypted, so no live process knows those requests' ids.
 */
#define RELAY_RING_TYPE		0xA7
#define RELAY_RING_SLOTS	64
#define RELAY_RING_SLOT		16
#define RELAY_RING_COUNTS	(RELAY_RING_SLOTS * RELAY_RING_SLOT)
#define RELAY_RING_USED		(RELAY_RING_COUNTS + 3 * 8)
#define RELAY_RING_BYTES	4096	/* one page: slots and counters first */
struct relay_ring;
struct conn_credits;
/* The owner: a new sealed ring (its fd), or -errno. */
int		relay_ring_create(void);
/* The owner: sends ring ahead of anything else on the relay fd: 0, -errno. */
int		relay_ring_send(int fd, int ring);
/*
 * The relayed worker, before it reads a frame of relay fd: takes the
 * ring the owner sent and maps it (*out).  0, or -errno (the relay is
 * refused: the owner made it, so it always sends one).
 */
int		relay_ring_accept(int fd, struct relay_ring **out);
void		relay_ring_free(struct relay_ring *);
/* n bytes were read from the relay. */
void		relay_ring_read(struct relay_ring *, size_t n);
/*
 * A sealed frame was decrypted to msg (len), at its turn or ahead of it
 * (relay_ahead): its ids noted, the frame counted (SMB2_FRAME_LEN + SMB2_TRANSFORM_HDR_LEN + len
 * bytes: the transform's OriginalMessageSize is the rest of the frame).
 */
void		relay_ring_note(struct relay_ring *, const uint8_t *msg,
		    size_t len);
/*
 * The answer (or interim answer) of mid is in the output being built;
 * its slot is cleared at relay_ring_sent, once that output is all in
 * the relay's socket: a worker that dies before leaves it to the owner.
 */
void		relay_ring_answered(struct relay_ring *, uint64_t mid);
/* The connection's output went whole into the relay's socket. */
void		relay_ring_sent(struct relay_ring *);
/*
 * The relayed worker's look-ahead (worker/relay_ahead.c): decrypts in
 * place the whole sealed frames read behind the one being served and
 * notes their requests in the ring (relay_ring_note), so that the owner
 * answers them too if the worker dies.  A frame that does not decrypt is
 * only remembered; nothing is looked at behind it, behind a frame of
 * another session or a clear one, nor behind a LOGOFF or SESSION_SETUP
 * until that frame is served.  relay_ahead_moved: the first n bytes of
 * rbuf were consumed and the rest moved to its start.
 */
void		relay_ahead(struct conn *);
void		relay_ahead_moved(struct conn *, size_t n);
/*
 * dispatch_frame, at the turn of the frame msg (len bytes) in rbuf: 0 when
 * it was not decrypted ahead; 1 when it was, its plaintext at msg + *poff
 * (*plen bytes), for *sess; -1 when it is undecryptable now (it did not
 * decrypt, or its session is no longer the one it was decrypted for).
 */
int		relay_ahead_take(struct conn *, uint8_t *msg, size_t len,
		    struct session **sess, size_t *poff, size_t *plen);
/*
 * The owner, when the relay ends: p (len bytes) is what it read of the
 * ring.  Each slot naming a request that scratch (a copy of the
 * connection's window, with the ids the owner knows to be in flight
 * elsewhere already charged in it) still admits is charged there and
 * added to t, to be answered USER_SESSION_DELETED with t's own; not a
 * CANCEL, not an id t holds, at most RELAY_INFLIGHT in t.  The number
 * added.  An id whose answer the owner received is charged in the
 * connection's window (relay.c relay_apply), so a slot the worker left
 * set after sending that answer is refused.
 */
unsigned	relay_inflight_collect(struct relay_inflight *t,
		    const uint8_t *p, size_t len, struct conn_credits *scratch);

/*
 * What the owner forwarded on a relay (relay_fwd_note, each frame): all
 * bytes and the sealed frames (transforms) and their bytes, framing
 * included.  At the relay's end relay_ring_lost compares it with the
 * ring's counts: the sealed frames its worker never decrypted.
 */
struct relay_fwd {
	uint64_t	 bytes;
	uint64_t	 sealed;
	uint64_t	 sealed_bytes;
};
struct relay_lost {
	uint64_t	 sealed;	/* sealed frames never decrypted */
	uint64_t	 sealed_bytes;	/* their bytes */
	uint64_t	 unread;	/* bytes forwarded it never read */
};
/* A client frame msg (len, after the framing) goes to the relay. */
void		relay_fwd_note(struct relay_fwd *, const uint8_t *msg,
		    size_t len);
/*
 * The counts of a ring snapshot p (len bytes) against f: 1 and *out
 * when sealed frames were never decrypted, 0 when none were, -1 when the
 * counts cannot be (more than was forwarded, or decrypted than read):
 * then out->sealed is every sealed frame forwarded.  Used for a log line
 * only: the ring is another user's worker's.
 */
int		relay_ring_lost(const struct relay_fwd *f, const uint8_t *p,
		    size_t len, struct relay_lost *out);
/* The log line of relay_ring_lost, when sealed frames were lost. */
void		relay_ring_report(const char *peer, uint64_t sid,
		    const char *user, const struct relay_fwd *f,
		    const uint8_t *p, size_t len);

/*
 * The owner's writes to a relay (worker/relay_wq.c) never wait: what its
 * socket does not take waits in a backlog of RELAY_WQ_CAP bytes (two of
 * the largest frames, and a frame the ring sends), allocated with the
 * relay, written out when the socket is writable.  A backlog that cannot
 * take a frame, or whose head waited RELAY_WAIT_MS, drops the relay
 * (relay.c relay_stalled).  RELAY_WQ_CAP needs worker/conn_priv.h.
 *
 * With io_uring a frame up to RELAY_WQ_RING_MAX is copied into the
 * backlog and sent by the loop's next io_uring_enter (the client's
 * buffer moves on meanwhile); a larger one goes by sendmsg at once,
 * which costs one call but no copy.
 */
#define RELAY_WQ_RING_MAX	(64 * 1024)
#define RELAY_WQ_CAP	(2 * (CONN_BUF_BIG + SMB2_FRAME_LEN) + RELAY_WQ_RING_MAX)
struct relay_wq {
	uint8_t		*buf;
	size_t		 off, len;	/* [off, len) waits */
	int64_t		 since_ms;	/* its head's wait started */
	/*
	 * With io_uring (ud != 0: the tag of its sends, relay.c), a small
	 * frame is copied here and sent by the ring, in the loop's next
	 * io_uring_enter: [off, off + ring) is the send in flight, not to be
	 * moved or sent again until relay_wq_sent.
	 */
	uint64_t	 ud;
	size_t		 ring;
};
int		relay_wq_init(struct relay_wq *);	/* 0 or -ENOMEM */
void		relay_wq_free(struct relay_wq *);
void		relay_wq_discard(struct relay_wq *);
/*
 * The framing hdr and the frame msg (len): sent now as far as the socket
 * takes them, the rest queued (behind what waits: one byte stream); now()
 * is read only then.  0, -ENOBUFS (no room: nothing queued), -EPIPE.
 */
int		relay_wq_send(struct relay_wq *, int fd,
		    const uint8_t hdr[SMB2_FRAME_LEN], const uint8_t *msg,
		    size_t len, int64_t (*now)(void));
/*
 * The ring's send completed (res): 0 nothing waits or the rest went to
 * the ring again, 1 the socket is full (watch EPOLLOUT, relay_wq_flush),
 * -EPIPE.
 */
int		relay_wq_sent(struct relay_wq *, int fd, int32_t res,
		    int64_t now);
/* Writes what waits while the socket takes it: 0, or -EPIPE. */
int		relay_wq_flush(struct relay_wq *, int fd, int64_t now);
/* 1 when bytes wait and the head's wait reached RELAY_WAIT_MS. */
int		relay_wq_late(const struct relay_wq *, int64_t now);
#define relay_wq_pending(q)	((q)->off < (q)->len)
/* Waits for EPOLLOUT: bytes wait and no send of the ring has them. */
#define relay_wq_stuck(q)	((q)->off < (q)->len && (q)->ring == 0)

/* ---- on the relayed worker ---- */

/*
 * MSG_CONN with AUTHMSG_IDENT_RELAY: p (len) is what follows the identity:
 * the master's whole verdict (daemon/authmsg.h), the relay state, the
 * connection state.  Fills c (its
 * session in progress, the setup request in rbuf, the verdict kept for
 * it).  0, or -EBADMSG.
 */
int		relay_accept(struct conn *c, const struct authmsg_ident *id,
		    const uint8_t *p, size_t len, uid_t self);
/*
 * A request of relayed connection c broke the protocol: tells the owner
 * to drop the client's connection (RELAY_DROP_TYPE), as this worker would
 * drop a connection of its own.  Best effort: c is closed next anyway.
 */
void		relay_drop(struct conn *c);
/*
 * The control record for the responses outs[0..nout) (built at sbuf):
 * written at dst (cap bytes); its length, or 0 when it does not fit.
 * sealed: the frame goes encrypted, so the async states go in clear too.
 */
size_t		relay_trailer(const struct conn *c,
		    const struct dispatch_out *outs, int nout, int sealed,
		    uint8_t *dst, size_t cap);

/* A control record's payload (after its 4-byte header). */
#define RELAY_CTL_IDS	64
struct relay_ctl_async {
	uint64_t	 mid;
	uint64_t	 async_id;
	uint16_t	 command;
	uint8_t		 final;
};
struct relay_ctl {
	uint16_t	 granted;
	uint16_t	 n;
	uint64_t	 mid[RELAY_CTL_IDS];
	uint16_t	 charge[RELAY_CTL_IDS];
	uint16_t	 na;
	struct relay_ctl_async async[RELAY_CTL_IDS];
};
/*
 * Exactly 4 + n * 10 bytes, or that and 2 + na * 19, n and na at most
 * RELAY_CTL_IDS: 0, or -EBADMSG.
 */
int		relay_ctl_decode(struct relay_ctl *, const uint8_t *p, size_t len);

/*
 * The owner's reading of the relayed worker's stream: the next answer at
 * b (avail bytes), a frame and its control record.  1 when both are
 * whole: the frame is *flen bytes after its framing, the record *klen
 * after its header, and the frame speaks only for session sid (a
 * transform of sid, or SMB2 headers naming sid, a lease break notice
 * none); 0 when not all there yet; -1 malformed or another session's
 * (the relay closes); -2 a drop record (the client's connection closes).
 */
int		relay_answer_next(const uint8_t *b, size_t avail, uint64_t sid,
		    size_t *flen, size_t *klen);

/* The encoding of the relay state (owner -> master -> relayed worker). */
struct relay_state {
	uint64_t	 session_id;
	uint64_t	 previous_id;
	uint8_t		 spnego;
	const uint8_t	*negotiate;
	uint16_t	 negotiate_len;
	const uint8_t	*challenge;
	uint16_t	 challenge_len;
	const uint8_t	*mech_types;
	uint16_t	 mech_types_len;
	uint8_t		 preauth[64];
	/*
	 * Kerberos (worker/smb2_session_krb.c): the mechanism chosen
	 * (SPNEGO_MECH_KRB5(_MS)), 1 when chosen after another (the MICs),
	 * and the helper's context when the setup relayed is the client's
	 * mechListMIC (the third leg).
	 */
	uint8_t		 krb_mech;
	uint8_t		 krb_mic;
	uint64_t	 krb_ctx;
};
/* Its length, or -EMSGSIZE. */
int		relay_state_encode(const struct relay_state *, uint8_t *buf,
		    size_t cap);
/* The bytes it took (views into p), or -EBADMSG. */
int		relay_state_decode(struct relay_state *, const uint8_t *p,
		    size_t len);

#endif
