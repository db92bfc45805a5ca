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

#include "worker/open.h"

struct conf;
struct conf_share;

#define CONN_MAX_SESSIONS	16
#define CONN_MAX_TREES		64

struct tree {
	int			 in_use;
	uint32_t		 tree_id;
	struct session		*sess;
	const struct conf_share	*share;
	int			 root_fd;	/* O_PATH|O_DIRECTORY fd of the share root; -1 for IPC$ */
	int			 is_ipc;
	int			 read_only;	/* the share is read only (or the user is limited to reading) */
	int			 encrypt;	/* requests must arrive encrypted */
	uint32_t		 maximal_access;
};

struct session {
	int		 in_use;
	uint64_t	 session_id;
	char		 user[64];	/* Unix account; "" for anonymous */
	uid_t		 uid;
	gid_t		 gid;
	int		 guest;
	int		 anonymous;
	int		 signing_required;
	int		 encrypt;	/* every request and response is encrypted */
	uint8_t		 session_key[16];
	uint8_t		 signing_key[16];
	uint8_t		 enc_key[32];	/* server -> client (ServerOut) */
	uint8_t		 dec_key[32];	/* client -> server (ServerIn) */
	uint8_t		 app_key[16];
	uint16_t	 cipher;	/* MS-SMB2 2.2.3.1.2 cipher id, 0 = none */
};

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
};

#endif
