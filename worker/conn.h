/*
 * A client connection served by a gate or a user worker, its sessions and
 * its tree connects.  Owned by worker/conn.c (the SMB2 core); the fields
 * documented here are what command handlers may read.  The core may add
 * fields.
 */
#ifndef USMBD_WORKER_CONN_H
#define USMBD_WORKER_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/conf.h"
#include "proto/crypt.h"
#include "proto/sign.h"
#include "worker/open.h"
#include "worker/smb2.h"

struct conf;
struct conf_share;

#define CONN_MAX_SESSIONS	16
#define CONN_MAX_TREES		64
/*
 * Channels (connections other than its home) one session may be bound
 * to: 32 connections in all, as Windows and Samba allow.
 */
#define CONN_MAX_CHANNELS	31

struct tree {
	int			 in_use;
	uint32_t		 tree_id;
	struct session		*sess;
	const struct conf_share	*share;
	/*
	 * The name it was connected as, read through tree_name(): a home
	 * share's is its user's, its share [homes] (worker/homes.h: the
	 * string lives as long as the worker); NULL: share->name.  What
	 * status, max connections, durable handles and the volume label
	 * use.  And the hash of its root path with substitutions made
	 * (state_link_id).  A pointer, not a buffer: 64 trees a connection.
	 */
	const char		*name;
	uint64_t		 path_hash;
	int			 root_fd;	/* O_PATH|O_DIRECTORY fd of the share root; -1 for IPC$ */
	/* the share root's identity, read once at the tree connect: a
	 * change of a top-level name needs its parent's (directory leases) */
	uint64_t		 root_dev, root_ino;
	int			 root_id_known;
	int			 is_ipc;
	int			 read_only;	/* the share is read only (or the user is limited to reading) */
	int			 encrypt;	/* requests must arrive encrypted */
	uint32_t		 maximal_access;
	/*
	 * Files of this share can share blocks (reflink): the unit in bytes
	 * clones are aligned to, 0 when they cannot.  Read once at the tree
	 * connect; FILE_SUPPORTS_BLOCK_REFCOUNTING and
	 * FSCTL_DUPLICATE_EXTENTS_TO_FILE follow it (worker/smb2_fsctl.c).
	 */
	uint32_t		 clone_unit;
	/* no quota to read here until then (worker/smb2_info.c) */
	int64_t			 quota_off_until_ms;
	/* descriptors are stored in this share (worker/smb2_secdesc.c) */
	int			 sd_stored;
	int64_t			 sd_checked_ms;
	/* its slot of `max connections` (worker/state_tree.c); 0: none */
	uint64_t		 mc_key;
};

struct session {
	int		 in_use;
	uint64_t	 session_id;
	char		 user[64];	/* Unix account; "" for anonymous */
	uid_t		 uid;
	gid_t		 gid;
	int		 guest;
	int		 anonymous;
	/*
	 * Re-authenticated (MS-SMB2 3.3.5.5.2) as an identity other than
	 * user/uid, on the master's verdict: its handles and trees keep the
	 * access granted before; anything needing new authority is refused
	 * until a re-authentication as user/uid (worker/smb2_session.c).
	 */
	int		 reauth_other;
	int		 signing_required;
	int		 encrypt;	/* every request and response is encrypted */
	uint8_t		 session_key[16];
	uint8_t		 signing_key[16];
	uint8_t		 enc_key[32];	/* server -> client (ServerOut) */
	uint8_t		 dec_key[32];	/* client -> server (ServerIn) */
	uint8_t		 app_key[16];
	uint16_t	 cipher;	/* MS-SMB2 2.2.3.1.2 cipher id, 0 = none */
	/* Core fields (worker/smb2_session.c). */
	int		 state;		/* SESS_* */
	int		 signing;	/* responses are signed (keys are set) */
	uint32_t	 ntlm_flags;	/* negotiated NTLMSSP flags */
	uint8_t		 preauth[64];	/* 3.1.1 session preauth hash */
	uint32_t	 expire;	/* CLOCK_MONOTONIC seconds; 0 = never */
	/*
	 * Ended by the client's LOGOFF (worker/smb2_misc.c), not lost or
	 * replaced: its resilient opens are closed, not kept (worker/durable.c).
	 */
	int		 logged_off;
	/* PreviousSessionId of the setup (MS-SMB2 3.3.5.5.3), 0 = none. */
	uint64_t	 previous_id;
	struct sess_auth *auth;		/* in-progress exchange; NULL when valid */
	/* With sign_other set, sign with sign_algo, not the connection's:
	 * the answer to a refused channel binding is signed as its session
	 * signs on its own connection. */
	int		 sign_other;
	uint16_t	 sign_algo;
	/* Crypto handles made once per session key (no malloc per request);
	 * freed by conn_session_free. */
	struct smb2_sign_ctx	 sign_cx;
	struct smb2_crypt_ctx	 enc_cx;	/* with enc_key */
	struct smb2_crypt_ctx	 dec_cx;	/* with dec_key */
	/*
	 * Multichannel (MS-SMB2 3.3.1.14, the top of worker/smb2_session.c).  A
	 * session lives on the connection that authenticated it (its home:
	 * trees and opens are there).  Another connection bound to it holds
	 * a channel slot: a struct session with the same id, its own
	 * signing key (signing_key, sign_algo) and bound/bound_conn naming
	 * the session; requests on it are served against the session and
	 * its home's trees and opens, answered on the channel.  A home
	 * whose socket is lost stays, headless, while a channel of its
	 * session is alive (worker/conn_priv.h conn_keep_headless).
	 */
	struct session	*bound;		/* channel slot: the session served */
	struct conn	*bound_conn;	/* the session's home connection */
	int		 binding;	/* binding exchange running (signs with sign_algo) */
	struct session	*chan[CONN_MAX_CHANNELS];	/* session: its channel slots */
	struct conn	*chan_conn[CONN_MAX_CHANNELS];
	unsigned	 nchan;
};

/* struct session.state */
#define SESS_FREE		0
#define SESS_IN_PROGRESS	1
#define SESS_VALID		2
#define SESS_EXPIRED		3

struct conn {
	const struct conf	*conf;
	int			 fd;
	char			 peer[64];	/* client address as text */
	uint16_t		 dialect;	/* 0 before NEGOTIATE */
	uint32_t		 client_capabilities;
	uint16_t		 client_security_mode;
	uint8_t			 client_guid[16];
	uint8_t			 server_guid[16];
	uint16_t		 signing_algo;	/* MS-SMB2 2.2.3.1.7 id */
	uint16_t		 cipher;
	uint32_t		 max_read_size;
	uint32_t		 max_write_size;
	uint32_t		 max_trans_size;
	struct session		 sessions[CONN_MAX_SESSIONS];
	struct tree		 trees[CONN_MAX_TREES];
	/* The core adds framing buffers, credit window and open table here. */
	struct conn_private	*priv;
	/* Core fields. */
	uint16_t		 security_mode;	/* what the server sent in NEGOTIATE */
	uint32_t		 capabilities;	/* what the server sent in NEGOTIATE */
	uint16_t		 client_dialects[64];	/* for VALIDATE_NEGOTIATE_INFO */
	uint16_t		 client_ndialects;
	int			 signing_required;	/* server or client requires it */
	int			 posix;		/* SMB3 POSIX extensions negotiated */
	/* Apple's AAPL answered on a fruit share (worker/fruit.h) */
	int			 aapl;
	int			 aapl_rdattr;	/* READ_DIR_ATTR granted */
	int			 aapl_copyfile;	/* OSX_COPYFILE granted */
	uint64_t		 start_time;	/* server start FILETIME from the master */
	/*
	 * SMB 3.1.1 compression (worker/compress.h): the algorithms
	 * negotiated (Connection.CompressionIds as a mask of
	 * 1 << algorithm id, 0: none) and SupportsChainedCompression.
	 */
	uint32_t		 compress_algs;
	int			 compress_chained;
};

/* Lookups by id; NULL when absent (any state). */
struct session	*conn_session_find(struct conn *, uint64_t session_id);
static inline const char *
tree_name(const struct tree *t)
{
	return t->name != NULL ? t->name : t->share != NULL ? t->share->name :
	    "";
}

struct tree	*conn_tree_find(struct conn *, struct session *, uint32_t tree_id);
/* A free slot (zeroed, in_use set) with a fresh id, or NULL. */
struct session	*conn_session_new(struct conn *);
struct tree	*conn_tree_new(struct conn *, struct session *);
/* Releases a session: its trees (and their opens) first. */
void		 conn_session_free(struct conn *, struct session *);
void		 conn_tree_free(struct conn *, struct tree *);
/* Live sessions on the connection. */
int		 conn_session_count(const struct conn *);
/*
 * Binds channel slot ch (on connection cc) to session s: returns 0, or
 * -1 when s has CONN_MAX_CHANNELS channels.  conn_session_free of either
 * undoes it (the session's free frees its channel slots).
 */
int		 conn_channel_link(struct session *s, struct conn *cc,
		    struct session *ch);
/*
 * The session a request naming slot s is served against, and the
 * connection holding its trees and opens (s itself and c unless s is a
 * channel slot).
 */
struct session	*conn_session_home(struct session *s, struct conn *c,
		    struct conn **home);
/* The signing algorithm of slot s on connection c. */
uint16_t	 conn_session_sign_algo(const struct session *s,
		    const struct conn *c);

/*
 * May a READ handler answer with sendfile (rsp->data_fd)?  No when the
 * response will be signed or encrypted; the core then reads the data into
 * the send buffer itself, so data_fd is always correct, this is only a hint.
 */
int		 conn_rsp_may_sendfile(const struct smb2_req *);

/*
 * A large unsigned WRITE may be dispatched before its payload is read
 * (worker/conn_rx.c): the body cursor covers the whole request, but the
 * last conn_req_payload_unread() bytes of it are still on the socket (0
 * for every other request).  The WRITE handler then either writes the
 * payload with conn_req_payload_write (data = where the payload starts in
 * the request; the part in memory by pwrite, the rest spliced from the
 * socket into fd at off + ...: returns len or -errno) or first reads it
 * into memory with conn_req_payload_load (0 or -errno).  A handler that
 * does neither (an error answer) leaves the bytes to the core, which
 * drains them.
 */
size_t		 conn_req_payload_unread(const struct smb2_req *);
ssize_t		 conn_req_payload_write(struct smb2_req *, const uint8_t *data,
		    int fd, uint64_t off, size_t len);
int		 conn_req_payload_load(struct smb2_req *);

#endif
