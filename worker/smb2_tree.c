/*
 * TREE_CONNECT and TREE_DISCONNECT (MS-SMB2 2.2.9, 2.2.10, 3.3.5.7, 3.3.5.8).
 * The share root is opened by the worker itself, so the kernel checks the
 * user's right to reach it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/unicode.h"
#include "worker/conn_priv.h"
#include "worker/dfs.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/homes.h"
#include "worker/state.h"

#define SMB2_SHARE_TYPE_DISK		0x01
#define SMB2_SHARE_TYPE_PIPE		0x02
#define SMB2_SHAREFLAG_DFS		0x00000001u
#define SMB2_SHAREFLAG_DFS_ROOT		0x00000002u
#define SMB2_SHARE_CAP_DFS		0x00000008u
#define SMB2_SHAREFLAG_ACCESS_BASED_DIRECTORY_ENUM	0x00000800u
#define SMB2_SHAREFLAG_ENCRYPT_DATA	0x00008000u
#define SMB2_SHAREFLAG_COMPRESS_DATA	0x00100000u	/* 3.1.1 */
#define SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT	0x0004

/* MS-SMB2 2.2.13.1.1 access masks */
#define TREE_ACCESS_ALL		0x001F01FFu
#define TREE_ACCESS_READ	0x001200A9u	/* generic read + execute */

/*
 * Whether the share's file system shares blocks (btrfs; XFS made with
 * reflink): asked here, once per tree, so that no request pays for it.
 * A failed probe is logged and leaves the share without cloning.
 */
static uint32_t
tree_clone_unit(struct conn *c, const struct conf_share *sh, int fd)
{
	const struct vfs_ops *vfs = file_vfs();
	int unit;

	if (vfs->clone_unit == NULL || vfs->clone_range == NULL)
		return 0;
	if ((unit = vfs->clone_unit(fd)) == -EACCES) {
		/* XFS asks for a read open of the root: this user has none */
		log_debug(2, "%s: share %s: root not readable, no block "
		    "cloning", c->peer, sh->name);
		return 0;
	}
	if (unit < 0) {
		conn_warnx(c, "share %s: cannot tell whether it can clone "
		    "blocks: %s", sh->name, strerror(-unit));
		return 0;
	}
	return (uint32_t)unit;
}

/*
 * A share's hosts allow / hosts deny judge the address the kernel gives
 * for the socket, not the text the gate handed over (a gate parses
 * unauthenticated bytes: it is not trusted with this).  A relayed
 * connection's socket is the owner's socketpair, and a headless one has
 * none: theirs is the address the master read from the client's own
 * socket (getpeername of the socket the owner showed it, MSG_RELAY_PEER;
 * of the hand-off's for a headless one), never the owner's or the gate's
 * text; without it every list refuses.  Asked only of shares with a rule.
 */
static const char *
tree_peer_text(void *arg, char *addr, size_t cap)
{
	const struct conn *c = arg;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c->priv->relayed || c->priv->headless) {
		if (!c->priv->peer_vouched)
			return NULL;
		return c->peer;
	}
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == -1 ||
	    conf_addr_text((const struct sockaddr *)&ss, addr, cap) != 0)
		return NULL;
	return addr;
}

static int
tree_host_allowed(const struct conn *c, const struct conf_share *sh)
{
	char addr[INET6_ADDRSTRLEN];
	const char *p = tree_peer_text((void *)c, addr, sizeof(addr));

	if (p == NULL)
		return 0;
	return conf_peer_allowed(sh->hosts_allow, sh->hosts_deny, p);
}

/* FNV-1a of the root path, where state_link_id starts (worker/state.c). */
static uint64_t
tree_path_hash(const char *p)
{
	uint64_t h = 14695981039346656037ull;

	for (; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 1099511628211ull;
	}
	return h;
}

ntstatus_t
smb2_tree_connect(struct smb2_req *req, struct smb2_rsp *rsp)
{
	struct conn *c = req->conn;
	struct session *s = req->sess;
	const struct conf_share *sh;
	struct homes_target ht;
	const char *tname;
	struct tree *t;
	char path[512], *name;
	const uint8_t *p;
	uint16_t flags, off, len;
	uint32_t shareflags = 0, sharecaps = 0;
	int n, encrypt = 0, fd = -1;
	struct stat rst;
	ntstatus_t st;

	cur_skip(&req->body, 2);
	flags = cur_le16(&req->body);
	off = cur_le16(&req->body);
	len = cur_le16(&req->body);
	p = cur_sub(&req->body, off, len).p;
	if (req->body.err || len == 0)
		return STATUS_INVALID_PARAMETER;
	if (flags & SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT)
		return STATUS_NOT_SUPPORTED;	/* remoted identity: not offered */
	n = unicode_utf16_to_utf8(p, len, path, sizeof(path));
	if (n < 0)
		return STATUS_BAD_NETWORK_NAME;
	/* \\server\share */
	if (n < 3 || path[0] != '\\' || path[1] != '\\' ||
	    (name = strchr(path + 2, '\\')) == NULL)
		return STATUS_BAD_NETWORK_NAME;
	name++;
	if (*name == '\0' || strchr(name, '\\') != NULL)
		return STATUS_BAD_NETWORK_NAME;
	/* a configured share, or a user's home from [homes] (worker/homes.c) */
	st = homes_resolve(c->conf, name, s->anonymous || s->guest ? NULL :
	    s->user, tree_peer_text, c, &ht);
	if (st != STATUS_SUCCESS) {
		log_debug(2, "%s: no share \"%s\"", c->peer, name);
		return st;
	}
	sh = ht.share;
	/*
	 * An msdfs proxy share is a referral only: a client that connects
	 * without asking for it first is refused, as Samba refuses it.
	 */
	if (c->conf->host_msdfs && sh->msdfs_proxy != NULL) {
		log_debug(2, "%s: share %s is an msdfs proxy to %s", c->peer,
		    sh->name, sh->msdfs_proxy);
		return STATUS_BAD_NETWORK_NAME;
	}
	/* the share's own hosts rule, as Samba's make_connection_snum */
	if ((sh->hosts_allow != NULL || sh->hosts_deny != NULL) &&
	    !tree_host_allowed(c, sh)) {
		conn_warnx(c, "share %s refused to %s (hosts allow/deny)",
		    ht.name, c->peer);
		return STATUS_ACCESS_DENIED;
	}
	if (s->anonymous && !sh->is_ipc) {
		conn_warnx(c, "anonymous session refused share %s", ht.name);
		return STATUS_ACCESS_DENIED;
	}
	if (s->guest && !sh->is_ipc && !sh->guest_ok) {
		conn_warnx(c, "guest refused share %s (guest ok = no)", ht.name);
		return STATUS_ACCESS_DENIED;
	}
	if (!sh->is_ipc && state_is_stateless()) {
		/*
		 * This worker was started IPC$ only, without the state group
		 * (no share was `guest ok`); a reload added one since.  Only
		 * a new worker of the guest account, with the state, may
		 * serve it: this one exits at the reload (wk_reload), and
		 * this is a connection that reached it before.
		 */
		conn_warnx(c, "share %s refused: this worker serves IPC$ only "
		    "(started when no share was `guest ok`)", ht.name);
		return STATUS_ACCESS_DENIED;
	}
	if (!sh->is_ipc && !s->guest && !conf_share_user_ok_subst(sh, s->user,
	    &ht.v)) {
		conn_warnx(c, "user %s refused share %s (valid/invalid users)",
		    s->user, ht.name);
		return STATUS_ACCESS_DENIED;
	}
	if (sh->smb_encrypt == ENCRYPT_REQUIRED || sh->smb_encrypt == ENCRYPT_DESIRED) {
		/* A relay in the clear may not seal (worker/relay_setup.c). */
		int relay_clear = c->priv->relayed &&
		    !c->conf->relay_sealed_sessions;
		int can = s->cipher != 0 && !s->guest && !s->anonymous &&
		    !relay_clear;

		if (can)
			encrypt = 1;
		else if (sh->smb_encrypt == ENCRYPT_REQUIRED) {
			conn_warnx(c, "share %s requires encryption the session "
			    "cannot do%s", ht.name, relay_clear ? " (relayed: "
			    "see `relay sealed sessions`)" : "");
			return STATUS_ACCESS_DENIED;
		}
	}
	if (!sh->is_ipc) {
		fd = open(ht.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || faccessat(AT_FDCWD, ht.path, X_OK, AT_EACCESS) < 0) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			conn_warnx(c, "share %s: path %s: %s", ht.name, ht.path,
			    strerror(e));
			return e == EACCES || e == EPERM ? STATUS_ACCESS_DENIED :
			    STATUS_BAD_NETWORK_NAME;
		}
	}
	tname = homes_tree_name(&ht);
	t = tname != NULL ? conn_tree_new(c, s) : NULL;
	if (t == NULL) {
		if (fd >= 0)
			close(fd);
		return STATUS_INSUFF_SERVER_RESOURCES;
	}
	t->share = sh;
	t->name = tname;
	t->path_hash = tree_path_hash(ht.path);
	t->root_fd = fd;
	/* last of the checks: a refusal above takes no slot */
	if (!sh->is_ipc && (st = state_tree_claim(c, t, sh)) != STATUS_SUCCESS) {
		conn_tree_free(c, t);
		return st;
	}
	t->root_id_known = 0;
	if (fd >= 0 && fstat(fd, &rst) == 0) {
		t->root_dev = (uint64_t)rst.st_dev;
		t->root_ino = (uint64_t)rst.st_ino;
		t->root_id_known = 1;
	}
	t->clone_unit = 0;
	if (fd >= 0)
		t->clone_unit = tree_clone_unit(c, sh, fd);
	t->is_ipc = sh->is_ipc;
	/* read list / write list: the user's, once, for every write path */
	t->read_only = sh->is_ipc || s->anonymous ? sh->read_only :
	    conf_share_user_read_only_subst(sh, s->user, &ht.v);
	t->encrypt = encrypt;
	t->maximal_access = sh->is_ipc || !t->read_only ? TREE_ACCESS_ALL :
	    TREE_ACCESS_READ;
	req->tree = t;
	if (encrypt)
		shareflags |= SMB2_SHAREFLAG_ENCRYPT_DATA;
	/* READs answered compressed, WRITEs sent so (worker/compress.h) */
	if (sh->compress_data && c->compress_algs != 0)
		shareflags |= SMB2_SHAREFLAG_COMPRESS_DATA;
	/* listings leave out what the user cannot read (worker/smb2_dir.c) */
	if (sh->hide_unreadable)
		shareflags |= SMB2_SHAREFLAG_ACCESS_BASED_DIRECTORY_ENUM;
	/* a DFS root: its links answer PATH_NOT_COVERED (worker/dfs.h) */
	if (dfs_share_root(c->conf, sh)) {
		shareflags |= SMB2_SHAREFLAG_DFS | SMB2_SHAREFLAG_DFS_ROOT;
		sharecaps |= SMB2_SHARE_CAP_DFS;
	}
	wcur_le16(&rsp->body, 16);
	wcur_u8(&rsp->body, sh->is_ipc ? SMB2_SHARE_TYPE_PIPE : SMB2_SHARE_TYPE_DISK);
	wcur_u8(&rsp->body, 0);
	wcur_le32(&rsp->body, shareflags);
	wcur_le32(&rsp->body, sharecaps);	/* no CA, scale-out, cluster */
	wcur_le32(&rsp->body, t->maximal_access);
	log_debug(2, "%s: %s connected to %s (tree %u)", c->peer,
	    s->anonymous ? "anonymous" : s->user, ht.name, t->tree_id);
	return STATUS_SUCCESS;
}

ntstatus_t
smb2_tree_disconnect(struct smb2_req *req, struct smb2_rsp *rsp)
{
	conn_tree_free(req->conn, req->tree);
	wcur_le16(&rsp->body, 4);
	wcur_le16(&rsp->body, 0);
	return STATUS_SUCCESS;
}
