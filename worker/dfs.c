/*
 * DFS, as Samba's smbd serves it (source3/smbd/msdfs.c): a share with
 * `msdfs root` is a DFS root whose msdfs links, symlinks whose text is
 * "msdfs:server\share[,server2\share2...]", refer clients to other
 * shares; a share with `msdfs proxy` is a referral as a whole.
 *
 * A link is found by walking the share one component at a time with
 * O_NOFOLLOW from the tree's root fd (vfs first_link_any); an ordinary
 * symlink on the way is gone through as the share's own lookups go
 * (beneath the root, never out of the share), and a link is read with
 * readlinkat on its own O_PATH fd, as the worker's user: a referral
 * shows the link's text, which that user could read anyway, never a
 * server-side path.
 * A CREATE pays for the walk only when its own lookup failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon/conf.h"
#include "daemon/log.h"
#include "proto/dfs.h"
#include "proto/fscc.h"
#include "proto/smb2.h"
#include "proto/unicode.h"
#include "worker/conn_priv.h"
#include "worker/dfs.h"
#include "worker/dispatch.h"
#include "worker/file_open.h"
#include "worker/homes.h"
#include "worker/namerule.h"

#ifndef STATUS_PATH_NOT_COVERED
#define STATUS_PATH_NOT_COVERED		0xC0000257u
#endif
#ifndef STATUS_ILLEGAL_CHARACTER
#define STATUS_ILLEGAL_CHARACTER	0xC0000161u
#endif

/* the request's name (UTF-8), the link's text and the answer: no heap */
static char	 dfs_name[FILE_PATH_MAX];
static char	 dfs_rel[FILE_PATH_MAX];
static char	 dfs_prefix[FILE_PATH_MAX];
static char	 dfs_text[FILE_PATH_MAX + 1];
static uint8_t	 dfs_out[32768];
static uint8_t	 dfs_u16[FILE_PATH_MAX * 2];
/* the share a referral names (dfs_share_resolve) */
static struct homes_target dfs_ht;

int
dfs_share_root(const struct conf *conf, const struct conf_share *sh)
{
	return sh != NULL && conf != NULL && conf->host_msdfs &&
	    sh->msdfs_root && !sh->is_ipc;
}

int
dfs_req_prefixed(const struct smb2_req *req)
{
	return (req->flags & SMB2_FLAGS_DFS_OPERATIONS) && req->tree != NULL &&
	    dfs_share_root(req->conn->conf, req->tree->share);
}

/* Is the share component s (slen bytes) name, any case? */
static int
dfs_share_is(const char *s, size_t slen, const char *name)
{
	return s != NULL && name != NULL &&
	    unicode_casecmp(s, slen, name, strlen(name)) == 0;
}

ntstatus_t
dfs_strip_prefix(char *path, const char *tree_name, const char *conf_name,
    int (*ours)(void *arg, const char *host, size_t len), void *arg)
{
	const char *host, *share = NULL;
	char *p = path;
	size_t hlen, slen = 0;

	/* Windows 2022 and Samba: an empty DFS name is refused */
	if (*p == '\0')
		return STATUS_INVALID_PARAMETER;
	while (*p == '\\')
		p++;
	/* the server name */
	for (host = p; *p != '\0' && *p != '\\'; p++)
		;
	hlen = (size_t)(p - host);
	if (*p == '\\') {
		/* the share name */
		for (share = ++p; *p != '\0' && *p != '\\'; p++)
			;
		slen = (size_t)(p - share);
		if (*p == '\\')
			p++;
	}
	/*
	 * A prefix only when it names this tree's share or this server:
	 * Windows and Samba 4.22 take two components off whatever they
	 * say, so a client that sets the flag without the prefix (impacket)
	 * writing "dir\sub\file" would land in "file".  Any other name is
	 * taken whole, as on a share without DFS.
	 */
	if (!dfs_share_is(share, slen, tree_name) &&
	    !dfs_share_is(share, slen, conf_name) &&
	    !(ours != NULL && ours(arg, host, hlen)))
		return STATUS_SUCCESS;
	/* ':' is the one character a share name may not hold */
	if (share != NULL && memchr(share, ':', slen) != NULL)
		return STATUS_OBJECT_NAME_INVALID;
	memmove(path, p, strlen(p) + 1);
	return STATUS_SUCCESS;
}

/*
 * The first msdfs link along path below root: 1, 0 none, its end in
 * *end; -EACCES when a directory on the way may not be searched.
 *
 * An ordinary symlink on the way is followed, as the CREATE's own lookup
 * follows it (and Samba's filename_convert_dirfsp): the names up to it
 * are opened again from root with the share's rules (vfs open:
 * RESOLVE_BENEATH, so a symlink out of the share ends the walk), and
 * the walk goes on from the directory it reached.  Each round consumes
 * one component at least, so the rounds are bounded by the path.
 */
static int
dfs_find_link(int root, const char *path, size_t *end)
{
	const struct vfs_ops *vfs = file_vfs();
	size_t off = 0, e;
	ssize_t n;
	int dir = root, fd, rc = 0;

	if (vfs->first_link_any == NULL)
		return 0;
	for (;;) {
		if ((fd = vfs->first_link_any(dir, path + off, &e)) < 0) {
			rc = fd == -EACCES ? fd : 0;
			break;
		}
		n = vfs->readlink(fd, dfs_text, sizeof(dfs_text));
		close(fd);
		e += off;
		if (n > 0 && dfs_link_is(dfs_text, (size_t)n)) {
			*end = e;
			rc = 1;
			break;
		}
		/* an ordinary symlink: the last name, or one to go through */
		if (n <= 0 || path[e] != '/' || e >= sizeof(dfs_prefix))
			break;
		memcpy(dfs_prefix, path, e);
		dfs_prefix[e] = '\0';
		if (dir != root)
			close(dir);
		dir = vfs->open(root, dfs_prefix, O_PATH | O_DIRECTORY, 0);
		if (dir < 0) {
			/* out of the share, a loop, no directory: no link */
			rc = dir == -EACCES ? dir : 0;
			dir = root;
			break;
		}
		off = e + 1;
	}
	if (dir != root)
		close(dir);
	return rc;
}

int
dfs_entry_link(const struct smb2_req *req, int dirfd, const char *name)
{
	ssize_t n;

	if (req->tree == NULL ||
	    !dfs_share_root(req->conn->conf, req->tree->share))
		return 0;
	n = readlinkat(dirfd, name, dfs_text, sizeof(dfs_text) - 1);
	return n > 0 && dfs_link_is(dfs_text, (size_t)n);
}

void
dfs_entry_info(struct fscc_info *fi)
{
	/* MS-FSCC 2.4: EaSize carries the tag of a reparse point */
	fi->attrs |= FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT;
	fi->attrs &= ~FILE_ATTRIBUTE_ARCHIVE;
	fi->reparse_tag = IO_REPARSE_TAG_DFS;
	fi->ea_size = IO_REPARSE_TAG_DFS;
	fi->directory = 1;
}

ntstatus_t
dfs_path_covered(const struct smb2_req *req, const char *path)
{
	size_t end;

	if (req->tree == NULL || req->tree->root_fd < 0 ||
	    !dfs_share_root(req->conn->conf, req->tree->share))
		return STATUS_SUCCESS;
	return dfs_find_link(req->tree->root_fd, path, &end) == 1 ?
	    STATUS_PATH_NOT_COVERED : STATUS_SUCCESS;
}

static int
dfs_name_eq(const char *a, size_t alen, const char *b)
{
	return b != NULL && strlen(b) == alen && strncasecmp(a, b, alen) == 0;
}

/*
 * Is host (not NUL-terminated) this server: its NetBIOS name, its host
 * name (whole or up to the first dot), or the address the client reached
 * (Samba's is_myname_or_ipaddr, without the interface list).
 */
static int
dfs_host_ours(const struct conn *c, const char *host, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct utsname u;
	char addr[64], *dot;

	if (len == 0)
		return 0;
	if (dfs_name_eq(host, len, c->conf->netbios_name))
		return 1;
	if (uname(&u) == 0) {
		if (dfs_name_eq(host, len, u.nodename))
			return 1;
		if ((dot = strchr(u.nodename, '.')) != NULL) {
			*dot = '\0';
			if (dfs_name_eq(host, len, u.nodename))
				return 1;
		}
	}
	/* a relayed connection's socket is a socketpair: no address */
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    conf_addr_text((const struct sockaddr *)&ss, addr,
	    sizeof(addr)) == 0 && dfs_name_eq(host, len, addr))
		return 1;
	return 0;
}

static int
dfs_host_ours_cb(void *arg, const char *host, size_t len)
{
	return dfs_host_ours(arg, host, len);
}

ntstatus_t
dfs_req_strip(const struct smb2_req *req, char *path)
{
	/* a home share is its user's name and "homes" (worker/homes.h) */
	return dfs_strip_prefix(path, tree_name(req->tree),
	    req->tree->share->name, dfs_host_ours_cb, req->conn);
}

/*
 * The share a referral names, found as a TREE_CONNECT finds it: a
 * configured share, or the caller's own home share from [homes]
 * ("homes" or his own name, any case), with the substitutions of its
 * path and lists (dfs_ht).  Another user's name is no share here, as a
 * name that does not exist: a referral tells nobody which accounts
 * there are (and costs no passwd lookup).  NULL: no DFS share.
 */
static const struct conf_share *
dfs_share_resolve(struct smb2_req *req, const char *name)
{
	const struct session *s = req->sess;
	const struct conf *cf = req->conn->conf;
	const struct conf_share *sh = conf_share_find(cf, name);
	const char *user = NULL;

	if (s != NULL && !s->anonymous && !s->guest)
		user = s->user;
	if ((sh == NULL || sh->is_homes) && (conf_homes(cf) == NULL ||
	    user == NULL || (sh == NULL && strcasecmp(name, user) != 0)))
		return NULL;
	if (homes_resolve(cf, name, user, NULL, NULL, &dfs_ht) !=
	    STATUS_SUCCESS) {
		/* a configured share's path the session cannot make */
		if (sh == NULL || sh->is_homes)
			return NULL;
		dfs_ht.share = sh;
		dfs_ht.path[0] = '\0';
	}
	sh = dfs_ht.share;
	if (sh->is_ipc || (!sh->msdfs_root && sh->msdfs_proxy == NULL))
		return NULL;
	return sh;
}

/* The UTF-16 length of s (n bytes): PathConsumed; -1 past 16 bits. */
static int
dfs_len16(const char *s, size_t n)
{
	int m = unicode_utf8_to_utf16(s, n, dfs_u16, sizeof(dfs_u16));

	return m < 0 || m > UINT16_MAX ? -1 : m;
}

/*
 * rest ('\' or '/' separated, no trailing separator) as a share-relative
 * '/' path in dfs_rel, each component checked as a CREATE's are.
 */
static ntstatus_t
dfs_rel_path(const char *rest, size_t *ncomp)
{
	const char *p = rest, *s;
	size_t n, o = 0;

	*ncomp = 0;
	while (*p != '\0') {
		for (s = p; *s != '\0' && *s != '\\' && *s != '/'; s++)
			;
		n = (size_t)(s - p);
		if (n == 0 || n > 255)
			return STATUS_OBJECT_NAME_INVALID;
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return STATUS_OBJECT_PATH_SYNTAX_BAD;
		if (o + n + 2 > sizeof(dfs_rel))
			return STATUS_OBJECT_NAME_INVALID;
		if (o > 0)
			dfs_rel[o++] = '/';
		memcpy(dfs_rel + o, p, n);
		o += n;
		(*ncomp)++;
		p = s + (*s != '\0');
	}
	dfs_rel[o] = '\0';
	return STATUS_SUCCESS;
}

/* Where the first k components of rest end. */
static const char *
dfs_skip_comps(const char *rest, size_t k)
{
	const char *p = rest;

	while (k-- > 0) {
		while (*p != '\0' && *p != '\\' && *p != '/')
			p++;
		if (k > 0 && *p != '\0')
			p++;
	}
	return p;
}

/*
 * A link below the share (rest not empty): its targets, and where the
 * path it covers ends in dfs_name (*cend).  The session must be one the
 * share would take; the walk is the user's own.
 */
static ntstatus_t
dfs_link_referral(struct smb2_req *req, const struct conf_share *sh,
    const char *rest, const char **cend, struct dfs_target *t, int *nt)
{
	const struct session *s = req->sess;
	size_t ncomp, end, k, i;
	int root = -1, own = 0, found, r;
	ntstatus_t st;
	ssize_t n;
	char c;

	if (s == NULL || s->anonymous || (s->guest && !sh->guest_ok) ||
	    (!s->guest && !conf_share_user_ok_subst(sh, s->user, &dfs_ht.v)))
		return STATUS_ACCESS_DENIED;
	/*
	 * A share with its own hosts allow / deny: asked on a tree of that
	 * share only, whose TREE_CONNECT judged the client's address.
	 */
	if ((sh->hosts_allow != NULL || sh->hosts_deny != NULL) &&
	    (req->tree == NULL || req->tree->share != sh))
		return STATUS_ACCESS_DENIED;
	if ((st = dfs_rel_path(rest, &ncomp)) != STATUS_SUCCESS)
		return st;
	/* two home trees share [homes]: the name tells them apart */
	if (req->tree != NULL && req->tree->share == sh &&
	    req->tree->root_fd >= 0 &&
	    strcasecmp(tree_name(req->tree), dfs_ht.name) == 0)
		root = req->tree->root_fd;
	else {
		/* a path the session could not make: no link to tell */
		if (dfs_ht.path[0] == '\0')
			return STATUS_NOT_FOUND;
		if ((root = open(dfs_ht.path, O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) < 0)
			return errno == EACCES ? STATUS_ACCESS_DENIED :
			    STATUS_NOT_FOUND;
		own = 1;
	}
	found = dfs_find_link(root, dfs_rel, &end);
	if (found == 0 && !sh->case_sensitive) {
		/* another spelling of the names on the way */
		r = vfs_name_resolve_miss(file_vfs(), root, dfs_rel,
		    sizeof(dfs_rel));
		if (r > 0)
			found = dfs_find_link(root, dfs_rel, &end);
	}
	if (own)
		close(root);
	/* as Samba: the walk's own refusal, which the user may learn anyway */
	if (found == -EACCES)
		return STATUS_ACCESS_DENIED;
	if (found != 1)
		return STATUS_NOT_FOUND;
	/* a link in a vetoed place is no more there than for a CREATE */
	c = dfs_rel[end];
	dfs_rel[end] = '\0';
	st = namerule_check_path(sh, dfs_rel);
	dfs_rel[end] = c;
	if (st != STATUS_SUCCESS)
		return STATUS_NOT_FOUND;
	n = (ssize_t)strlen(dfs_text);
	if ((*nt = dfs_link_parse(dfs_text, (size_t)n, t,
	    DFS_MAX_TARGETS)) < 0)
		return STATUS_NOT_FOUND;
	/* the components up to the link's, in the client's own spelling */
	for (k = 1, i = 0; i < end; i++)
		if (dfs_rel[i] == '/')
			k++;
	*cend = dfs_skip_comps(rest, k);
	return STATUS_SUCCESS;
}

ntstatus_t
dfs_get_referrals(struct smb2_req *req, const uint8_t *in, size_t in_len,
    int ex, uint32_t max_out, const uint8_t **out, uint32_t *out_len)
{
	struct conn *c = req->conn;
	struct dfs_target t[DFS_MAX_TARGETS];
	struct dfs_req q;
	struct dfs_rsp r;
	struct wcur w;
	const struct conf_share *sh;
	char share[96], proxy[1024];
	const char *p, *host, *sep, *name, *rest, *cend;
	size_t len;
	int n, nt = 0, len16;
	ntstatus_t st;

	if (!c->conf->host_msdfs)
		return STATUS_FS_DRIVER_REQUIRED;
	if ((ex ? dfs_req_ex_decode : dfs_req_decode)(in, in_len, &q) != 0)
		return STATUS_INVALID_PARAMETER;
	n = unicode_utf16_to_utf8(q.name16, q.name16_len, dfs_name,
	    sizeof(dfs_name));
	if (n == -ENAMETOOLONG)
		return STATUS_OBJECT_NAME_INVALID;
	if (n < 0)
		return STATUS_ILLEGAL_CHARACTER;
	/* one leading backslash, as Samba trims it */
	p = dfs_name;
	while ((p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/'))
		p++;
	if (p[0] != '\\')
		return STATUS_NOT_FOUND;
	host = p + 1;
	if ((sep = strchr(host, '\\')) == NULL ||
	    !dfs_host_ours(c, host, (size_t)(sep - host)))
		return STATUS_NOT_FOUND;
	name = sep + 1;
	sep = strchr(name, '\\');
	len = sep != NULL ? (size_t)(sep - name) : strlen(name);
	if (len == 0 || len >= sizeof(share))
		return STATUS_NOT_FOUND;
	memcpy(share, name, len);
	share[len] = '\0';
	if ((sh = dfs_share_resolve(req, share)) == NULL)
		return STATUS_NOT_FOUND;
	rest = sep != NULL ? sep + 1 : "";
	/* a trailing backslash names the same */
	len = strlen(rest);
	while (len > 0 && rest[len - 1] == '\\')
		dfs_name[(size_t)(rest - dfs_name) + --len] = '\0';
	memset(&r, 0, sizeof(r));
	r.max_level = q.max_level;
	r.ttl = DFS_REFERRAL_TTL;
	r.t = t;
	if (*rest == '\0' && sh->msdfs_proxy != NULL) {
		/* the whole share refers to the proxy's targets */
		memcpy(proxy, "msdfs:", 6);
		if (conf_subst(sh->msdfs_proxy, &dfs_ht.v, 0, proxy + 6,
		    sizeof(proxy) - 6) != 0 ||
		    (nt = dfs_link_parse(proxy, strlen(proxy), t,
		    DFS_MAX_TARGETS)) < 0)
			return STATUS_NOT_FOUND;
		cend = p + strlen(p);
		r.header_flags = DFS_HEADER_STORAGE_SERVERS;
		r.server_type = DFS_SERVER_NON_ROOT;
	} else if (*rest == '\0') {
		/* a root referral: the root itself (Samba's self_ref) */
		t[0].p = p + 1;
		t[0].len = strlen(p + 1);
		nt = 1;
		cend = p + strlen(p);
		r.header_flags = DFS_HEADER_REFERRAL_SERVERS |
		    DFS_HEADER_STORAGE_SERVERS;
		r.server_type = DFS_SERVER_ROOT;
	} else {
		if (!sh->msdfs_root)
			return STATUS_NOT_FOUND;
		if ((st = dfs_link_referral(req, sh, rest, &cend, t, &nt)) !=
		    STATUS_SUCCESS)
			return st;
		r.header_flags = DFS_HEADER_STORAGE_SERVERS;
		r.server_type = DFS_SERVER_NON_ROOT;
	}
	r.path = p;
	r.path_len = (size_t)(cend - p);
	r.nt = (size_t)nt;
	if ((len16 = dfs_len16(p, r.path_len)) < 0)
		return STATUS_OBJECT_NAME_INVALID;
	r.path_consumed = (uint16_t)len16;
	wcur_init(&w, dfs_out, sizeof(dfs_out));
	if (dfs_rsp_encode(&w, &r) != 0)
		return STATUS_INVALID_PARAMETER;
	log_debug(2, "%s: DFS referral for %s: %d target(s), %s%.*s", c->peer,
	    p, nt, nt > 0 ? "first \\" : "", nt > 0 ? (int)t[0].len : 0,
	    nt > 0 ? t[0].p : "");
	*out = dfs_out;
	*out_len = (uint32_t)wcur_off(&w);
	if (*out_len > max_out) {
		/* Samba cuts the answer to what the client takes */
		*out_len = max_out;
		return STATUS_BUFFER_OVERFLOW;
	}
	return STATUS_SUCCESS;
}
