/*
 * MS-SRVS: who is connected and what is open, for Computer Management's
 * Shared Folders, `net session`, `net file` and `openfiles /query`:
 * NetrConnectionEnum (3.1.4.1), NetrFileEnum (3.1.4.2), NetrFileGetInfo
 * (3.1.4.3), NetrSessionEnum (3.1.4.5), structures of 2.2.4, and the
 * administrator's NetrFileClose (3.1.4.4) and NetrSessionDel (3.1.4.6),
 * which other workers carry out, asked by the master.
 *
 * The data is the shared state this worker maps already (shm/): session
 * records (user, client address, logon time), open records (session,
 * access, time), their names (share and path) and byte-range locks, and
 * the tree records of every disk share.
 * For the lists nothing is asked of the master or of another worker, so a
 * caller learns nothing this worker's process could not read by itself;
 * the answer is refused to anyone but a member of `server admin group`
 * (Windows: the Administrators and Server Operators), and to guests and
 * null sessions always, since the records name other users and their
 * addresses.
 *
 * An answer is built from one snapshot per call (static arrays: no heap,
 * a bounded size), so the NDR counts and the entries always agree.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "daemon/admmsg.h"
#include "daemon/conf.h"
#include "shm/shm.h"
#include "worker/pipe.h"
#include "worker/pipe_srvsvc.h"

/* MS-ERREF 2.2 */
#define WERR_OK			0
#define WERR_ACCESS_DENIED	5
#define WERR_NOT_SUPPORTED	50
#define WERR_INVALID_PARAMETER	87
#define WERR_INVALID_LEVEL	124
#define WERR_MORE_DATA		234
#define WERR_NERR_FILEIDNOTFOUND	2314

/* MS-SRVS 2.2.4.2 / 2.2.4.4: FILE_INFO_3 fi3_permissions */
#define PERM_FILE_READ		0x1
#define PERM_FILE_WRITE		0x2
#define PERM_FILE_CREATE	0x4
/* MS-SRVS 2.2.4.15 sesi1_user_flags */
#define SESS_GUEST		0x1
/* MS-SRVS 2.2.2.4: a connection's share type */
#define STYPE_DISKTREE		0

/* The most entries one answer carries (the rest: TotalEntries says). */
#define SRVSVC_ENUM_SESS_MAX	1024
#define SRVSVC_ENUM_FILE_MAX	4096
#define SRVSVC_ENUM_CONN_MAX	1024
#define SRVSVC_ENUM_NAME	256
/*
 * The most bytes of FILE_INFO entries one answer carries, well under the
 * pipe's stub ceiling (PIPE_MAX_RSP_STUB): an open's path is up to
 * 1 KiB below a share's path of up to 4 KiB, 10 KiB in UTF-16, so 4,096
 * of them (any user can hold that many with long names) would not fit, and the administrator's listing failed
 * whole (nca_s_fault_remote_no_memory).  Past it: ERROR_MORE_DATA and a
 * ResumeHandle.  Sessions and trees fit whole (1,024 of at most ~1.1 KiB).
 */
#define SRVSVC_ENUM_FILE_BYTES	(PIPE_MAX_RSP_STUB / 2)

struct enum_sess {
	uint64_t	id;
	uint64_t	since;
	uint32_t	nopens;
	char		user[64];
	char		addr[SHM_ADDR_MAX];
};

struct enum_file {
	struct shm_file_id fid;
	uint64_t	pers;
	uint64_t	session_id;
	uint32_t	access;
	uint32_t	nlocks;
};

struct enum_conn {
	uint64_t	key;
	uint64_t	since;
	pid_t		pid;
	char		share[64];
};

static struct enum_sess	es[SRVSVC_ENUM_SESS_MAX];
static struct enum_file	ef[SRVSVC_ENUM_FILE_MAX];
static struct enum_conn	ec[SRVSVC_ENUM_CONN_MAX];

struct enum_walk {
	const char	*client;	/* filters, NULL: any */
	const char	*user;
	uint32_t	n;		/* kept */
	uint32_t	total;		/* matched */
	uint32_t	only_id;	/* files: a 32-bit id, with has_id */
	int		has_id;
	uint32_t	nsess;		/* files: the user's sessions in es[] */
};

/* Who may see these lists: administrators, never a guest or null session. */
int
srvsvc_enum_allowed(const struct pipe_env *env)
{
	return env->admin && !env->anonymous && !env->guest;
}

static uint32_t
enum_secs_since(uint64_t since)
{
	time_t now = time(NULL);

	return (uint64_t)now > since ? (uint32_t)((uint64_t)now - since) : 0;
}

/* "\\host" or "host" names the client address host. */
static int
enum_client_match(const char *want, const char *addr)
{
	while (*want == '\\')
		want++;
	return strcasecmp(want, addr) == 0;
}

/* ---- sessions ---- */

static int
enum_sess_cb(const struct shm_session_rec *r, void *arg)
{
	struct enum_walk *w = arg;
	struct enum_sess *s;

	if (w->client != NULL && !enum_client_match(w->client, r->client_addr))
		return 0;
	if (w->user != NULL && strcasecmp(w->user, r->user) != 0)
		return 0;
	w->total++;
	if (w->n >= SRVSVC_ENUM_SESS_MAX)
		return 0;
	s = &es[w->n++];
	s->id = r->session_id;
	s->since = r->since;
	s->nopens = 0;
	strlcpy(s->user, r->user, sizeof(s->user));
	strlcpy(s->addr, r->client_addr, sizeof(s->addr));
	return 0;
}

static int
enum_sess_open_cb(const struct shm_file_id *fid, const struct shm_open_rec *r,
    void *arg)
{
	struct enum_walk *w = arg;
	uint32_t i;

	(void)fid;
	for (i = 0; i < w->n; i++)
		if (es[i].id == r->session_id) {
			es[i].nopens++;
			break;
		}
	return 0;
}

/* Sessions matching the filters into es[]; w->n of w->total kept. */
static void
enum_sessions(struct shm *shm, struct enum_walk *w, int count_opens)
{
	if (shm == NULL)
		return;
	(void)shm_foreach_session(shm, enum_sess_cb, w);
	if (count_opens)
		(void)shm_foreach_open(shm, enum_sess_open_cb, w);
}

/* SESSION_INFO_x field layouts: p = [string] pointer, u = DWORD. */
static int
enum_sess_level(uint32_t level)
{
	return level == 0 || level == 1 || level == 2 || level == 10 ||
	    level == 502;
}

static int
enum_guest_name(const struct pipe_env *env, const char *user)
{
	return env->conf->guest_account != NULL &&
	    strcmp(env->conf->guest_account, user) == 0;
}

static void
enum_sess_scalars(const struct pipe_env *env, struct ndr_w *o, uint32_t level,
    const struct enum_sess *s)
{
	ndr_put_ptr(o, 1);				/* cname */
	if (level == 0)
		return;
	ndr_put_ptr(o, 1);				/* username */
	if (level != 10)
		ndr_put_u32(o, s->nopens);		/* num_opens */
	ndr_put_u32(o, enum_secs_since(s->since));	/* time */
	ndr_put_u32(o, 0);				/* idle_time: not kept */
	if (level == 10)
		return;
	ndr_put_u32(o, enum_guest_name(env, s->user) ? SESS_GUEST : 0);
	if (level == 1)
		return;
	ndr_put_ptr(o, 1);				/* cltype_name */
	if (level == 502)
		ndr_put_ptr(o, 1);			/* transport */
}

static void
enum_sess_buffers(struct ndr_w *o, uint32_t level, const struct enum_sess *s)
{
	ndr_put_string(o, s->addr);
	if (level == 0)
		return;
	ndr_put_string(o, s->user);
	if (level == 1 || level == 10)
		return;
	ndr_put_string(o, "");
	if (level == 502)
		ndr_put_string(o, "");
}

/*
 * The [in, out] container of an *_ENUM_STRUCT: Level, the union's
 * discriminant, the container pointer and in it EntriesRead and the
 * array pointer.  A client sends no entries (impacket sends an empty
 * array, others a NULL one; the IDL allows entries, no client sends
 * any): an array that is not empty is refused as malformed.
 */
static int
enum_container_in(struct cur *in, uint32_t *level)
{
	uint32_t sw, count;

	*level = ndr_u32(in);
	sw = ndr_u32(in);
	if (in->err || sw != *level)
		return -1;
	if (ndr_ptr(in) != 0) {
		count = ndr_u32(in);		/* EntriesRead */
		if (ndr_ptr(in) != 0 && (count != 0 || ndr_u32(in) != 0))
			return -1;		/* entries, or a bad conformance */
	}
	return in->err ? -1 : 0;
}

/* PreferedMaximumLength and ResumeHandle (*has: the pointer was sent). */
static int
enum_tail_in(struct cur *in, int *has, uint32_t *resume)
{
	(void)ndr_u32(in);	/* PreferedMaximumLength: all at once */
	*has = ndr_ptr(in) != 0;
	*resume = *has ? ndr_u32(in) : 0;
	return in->err ? -1 : 0;
}

/*
 * The answer's tail after the container: TotalEntries, ResumeHandle (next:
 * where a call again resumes, 0 when nothing is left), status.
 */
static void
enum_tail_next(struct ndr_w *o, uint32_t total, int has, uint32_t next,
    uint32_t werr)
{
	ndr_put_u32(o, total);
	ndr_put_ptr(o, has);
	if (has)
		ndr_put_u32(o, next);
	ndr_put_u32(o, werr);
}

static void
enum_tail_out(struct ndr_w *o, uint32_t total, int has, uint32_t werr)
{
	enum_tail_next(o, total, has, 0, werr);
}

/* An empty container of a known level, or the bare arm of an unknown one. */
static void
enum_empty_out(struct ndr_w *o, uint32_t level, int known, int has,
    uint32_t werr)
{
	ndr_put_u32(o, level);
	ndr_put_u32(o, level);
	if (known) {
		ndr_put_ptr(o, 1);
		ndr_put_u32(o, 0);
		ndr_put_ptr(o, 0);
	}
	enum_tail_out(o, 0, has, werr);
}

/* An optional [string] argument: NULL when absent or empty. */
static const char *
enum_opt_string(struct cur *in, char *buf, size_t cap)
{
	int present = ndr_unique_string(in, buf, cap);

	return present > 0 && buf[0] != '\0' ? buf : NULL;
}

uint32_t
srvsvc_session_enum(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char server[SRVSVC_ENUM_NAME], client[SRVSVC_ENUM_NAME];
	char user[SRVSVC_ENUM_NAME];
	struct enum_walk w;
	uint32_t level, resume, i;
	int has;

	memset(&w, 0, sizeof(w));
	(void)ndr_unique_string(in, server, sizeof(server));
	w.client = enum_opt_string(in, client, sizeof(client));
	w.user = enum_opt_string(in, user, sizeof(user));
	if (enum_container_in(in, &level) < 0 ||
	    enum_tail_in(in, &has, &resume) < 0)
		return DCERPC_FAULT_NDR;
	if (!enum_sess_level(level)) {
		enum_empty_out(out, level, 0, has, WERR_INVALID_LEVEL);
		return 0;
	}
	if (!srvsvc_enum_allowed(env)) {
		enum_empty_out(out, level, 1, has, WERR_ACCESS_DENIED);
		return 0;
	}
	enum_sessions(env->shm, &w, level != 0 && level != 10);
	if (resume >= w.n)
		resume = w.n;

	ndr_put_u32(out, level);
	ndr_put_u32(out, level);
	ndr_put_ptr(out, 1);
	ndr_put_u32(out, w.n - resume);
	ndr_put_ptr(out, w.n > resume);
	if (w.n > resume) {
		ndr_put_u32(out, w.n - resume);
		for (i = resume; i < w.n; i++)
			enum_sess_scalars(env, out, level, &es[i]);
		for (i = resume; i < w.n; i++)
			enum_sess_buffers(out, level, &es[i]);
	}
	enum_tail_out(out, w.total > resume ? w.total - resume : 0, has,
	    WERR_OK);
	return 0;
}

/*
 * NetrSessionDel (MS-SRVS 3.1.4.6) ends sessions held by other users'
 * workers: only the master can have them ended, and it judges the
 * caller by its own records (daemon/admreq.c).  A caller this worker
 * knows is no administrator (every user of it, a guest, a null session)
 * is refused here without a message; the master checks again whatever
 * this worker says.
 */
static uint32_t
enum_admin_ask(const struct pipe_env *env, const struct admmsg_req *r)
{
	if (!srvsvc_enum_allowed(env))
		return WERR_ACCESS_DENIED;
	if (pipe_admin_ask == NULL)
		return WERR_NOT_SUPPORTED;
	return pipe_admin_ask(r);
}

uint32_t
srvsvc_session_del(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static struct admmsg_req r;
	char server[SRVSVC_ENUM_NAME];
	uint32_t werr;

	memset(&r, 0, sizeof(r));
	(void)ndr_unique_string(in, server, sizeof(server));
	(void)ndr_unique_string(in, r.client, sizeof(r.client));
	(void)ndr_unique_string(in, r.user, sizeof(r.user));
	if (in->err)
		return DCERPC_FAULT_NDR;
	r.op = ADMMSG_SESS_DEL;
	/*
	 * 3.1.4.6 wants "\\host"; rpcclient -c sends fewer backslashes, so
	 * any number is taken (the workers skip them), as Samba does.  Both
	 * names absent would end every session: refused.
	 */
	if (r.client[0] == '\0' && r.user[0] == '\0')
		werr = srvsvc_enum_allowed(env) ? WERR_INVALID_PARAMETER :
		    WERR_ACCESS_DENIED;
	else
		werr = enum_admin_ask(env, &r);
	ndr_put_u32(out, werr);
	return 0;
}

uint32_t
srvsvc_file_id(uint64_t persistent_id)
{
	uint32_t h = (uint32_t)(persistent_id >> 32);

	/* murmur3's finalizer: pids that differ by little differ widely */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h + (uint32_t)persistent_id;
}

/* ---- open files ---- */

static int
enum_file_cb(const struct shm_file_id *fid, const struct shm_open_rec *r,
    void *arg)
{
	struct enum_walk *w = arg;
	struct enum_file *f;
	uint32_t i;

	if (w->has_id && srvsvc_file_id(r->persistent_id) != w->only_id)
		return 0;
	/* a user filter: the open's session among that user's (es[]) */
	for (i = 0; w->user != NULL && i < w->nsess; i++)
		if (es[i].id == r->session_id)
			break;
	if (w->user != NULL && i == w->nsess)
		return 0;
	w->total++;
	if (w->n >= SRVSVC_ENUM_FILE_MAX)
		return 0;
	f = &ef[w->n++];
	f->fid = *fid;
	f->pers = r->persistent_id;
	f->session_id = r->session_id;
	f->access = r->access;
	f->nlocks = 0;
	return 0;
}

static int
enum_file_lock_cb(const struct shm_file_id *fid, const struct shm_brlock_rec *l,
    void *arg)
{
	struct enum_walk *w = arg;
	uint32_t i;

	(void)fid;
	for (i = 0; i < w->n; i++)
		if (ef[i].pers == l->owner.persistent_id) {
			ef[i].nlocks++;
			break;
		}
	return 0;
}

/*
 * Opens into ef[].  A lookup inside a walk would be a second read
 * transaction of the same env in this thread (LMDB allows one): a user
 * filter takes that user's sessions first, each walk in turn.
 */
static void
enum_files(struct shm *shm, struct enum_walk *w, int count_locks)
{
	struct enum_walk sw;

	if (shm == NULL)
		return;
	if (w->user != NULL) {
		memset(&sw, 0, sizeof(sw));
		sw.user = w->user;
		enum_sessions(shm, &sw, 0);
		w->nsess = sw.n;
	}
	(void)shm_foreach_open(shm, enum_file_cb, w);
	if (count_locks)
		(void)shm_foreach_brlock(shm, enum_file_lock_cb, w);
}

/* MS-SRVS 2.2.4.4: what the open may do, in the old LAN Manager bits. */
static uint32_t
enum_file_perms(uint32_t access)
{
	uint32_t p = 0;

	if (access & SHM_FILE_READ_DATA)
		p |= PERM_FILE_READ;
	if (access & (SHM_FILE_WRITE_DATA | SHM_FILE_APPEND_DATA))
		p |= PERM_FILE_WRITE;
	return p;
}

/*
 * The path Windows shows (and Samba, in its own form): the share's local
 * path in Windows form, as NetShareGetInfo level 2 gives it to an
 * administrator, and the file below it, "C:\srv\docs\a\b.xlsx", from
 * the name the open recorded (shm_open_name_get, every open's).  A share
 * whose root this worker cannot name (another user's home share, a path
 * with substitutions, a share gone since) shows "\share\a\b.xlsx"
 * instead: never a path worked out for another user.  A name kept in
 * part (past SHM_ONAME_PATH_MAX bytes) shows "..." where its head was.
 */
static void
enum_file_path(const struct pipe_env *env, const struct enum_file *f,
    char *buf, size_t cap)
{
	static struct shm_open_name nm;		/* 1.3 KiB: off the stack */
	const struct conf_share *s;
	const char *sep, *cut;
	size_t i;

	buf[0] = '\0';
	if (env->shm == NULL ||
	    shm_open_name_get(env->shm, &f->fid, f->pers, &nm) != 0)
		return;
	s = conf_share_find(env->conf, nm.share);
	cut = (nm.flags & SHM_ONAME_TRUNC) ? "..." : "";
	sep = nm.path[0] != '\0' || cut[0] != '\0' ? "/" : "";
	if (s == NULL || s->path == NULL || strchr(s->path, '%') != NULL)
		snprintf(buf, cap, "\\%s%s%s%s", nm.share, sep, cut, nm.path);
	else
		snprintf(buf, cap, "C:%s%s%s%s", s->path, sep, cut, nm.path);
	for (i = 0; buf[i] != '\0'; i++)
		if (buf[i] == '/')
			buf[i] = '\\';
}

static void
enum_file_user(const struct pipe_env *env, uint64_t session_id, char *buf,
    size_t cap)
{
	struct shm_session_rec s;

	buf[0] = '\0';
	if (env->shm != NULL && shm_session_get(env->shm, session_id, &s) == 0)
		strlcpy(buf, s.user, cap);
}

static void
enum_file_scalars(struct ndr_w *o, uint32_t level, const struct enum_file *f)
{
	ndr_put_u32(o, srvsvc_file_id(f->pers));	/* fi_id */
	if (level == 2)
		return;
	ndr_put_u32(o, enum_file_perms(f->access));
	ndr_put_u32(o, f->nlocks);
	ndr_put_ptr(o, 1);				/* path_name */
	ndr_put_ptr(o, 1);				/* username */
}

/* "C:" + a share's path (at most SHM_PATH_MAX) + "/..." + a name */
static char enum_path[SHM_PATH_MAX + SHM_ONAME_PATH_MAX + 16];

static void
enum_file_buffers(const struct pipe_env *env, struct ndr_w *o, uint32_t level,
    const struct enum_file *f)
{
	char user[SHM_NAME_MAX];

	if (level == 2)
		return;
	enum_file_path(env, f, enum_path, sizeof(enum_path));
	enum_file_user(env, f->session_id, user, sizeof(user));
	ndr_put_string(o, enum_path);
	ndr_put_string(o, user);
}

/* A [string] pointee's bytes: its counts, UTF-16 and NUL, aligned to 4. */
static size_t
enum_string_bytes(const char *s)
{
	return 12 + ((2 * (ndr_utf16_len(s) + 1) + 3) & ~(size_t)3);
}

/* One FILE_INFO_x entry's bytes in the answer, its strings included. */
static size_t
enum_file_bytes(const struct pipe_env *env, uint32_t level,
    const struct enum_file *f)
{
	char user[SHM_NAME_MAX];

	if (level == 2)
		return 4;
	enum_file_path(env, f, enum_path, sizeof(enum_path));
	enum_file_user(env, f->session_id, user, sizeof(user));
	return 20 + enum_string_bytes(enum_path) + enum_string_bytes(user);
}

/* The end of the entries from ef[from] that fit SRVSVC_ENUM_FILE_BYTES. */
static uint32_t
enum_file_fit(const struct pipe_env *env, uint32_t level, uint32_t from,
    uint32_t n)
{
	size_t bytes = 0;
	uint32_t i;

	for (i = from; i < n; i++) {
		bytes += enum_file_bytes(env, level, &ef[i]);
		if (bytes > SRVSVC_ENUM_FILE_BYTES && i > from)
			break;
	}
	return i;
}

uint32_t
srvsvc_file_enum(const struct pipe_env *env, struct cur *in, struct ndr_w *out)
{
	char server[SRVSVC_ENUM_NAME], base[SRVSVC_ENUM_NAME];
	char user[SRVSVC_ENUM_NAME];
	struct enum_walk w;
	uint32_t level, resume, end, i;
	int has;

	memset(&w, 0, sizeof(w));
	(void)ndr_unique_string(in, server, sizeof(server));
	(void)enum_opt_string(in, base, sizeof(base));	/* BasePath: below */
	w.user = enum_opt_string(in, user, sizeof(user));
	if (enum_container_in(in, &level) < 0 ||
	    enum_tail_in(in, &has, &resume) < 0)
		return DCERPC_FAULT_NDR;
	if (level != 2 && level != 3) {
		enum_empty_out(out, level, 0, has, WERR_INVALID_LEVEL);
		return 0;
	}
	if (!srvsvc_enum_allowed(env)) {
		enum_empty_out(out, level, 1, has, WERR_ACCESS_DENIED);
		return 0;
	}
	/* BasePath is not applied (Samba 4.17 ignores it too). */
	enum_files(env->shm, &w, level == 3);
	if (resume >= w.n)
		resume = w.n;
	end = enum_file_fit(env, level, resume, w.n);

	ndr_put_u32(out, level);
	ndr_put_u32(out, level);
	ndr_put_ptr(out, 1);
	ndr_put_u32(out, end - resume);
	ndr_put_ptr(out, end > resume);
	if (end > resume) {
		ndr_put_u32(out, end - resume);
		for (i = resume; i < end; i++)
			enum_file_scalars(out, level, &ef[i]);
		for (i = resume; i < end; i++)
			enum_file_buffers(env, out, level, &ef[i]);
	}
	enum_tail_next(out, w.total > resume ? w.total - resume : 0, has,
	    end < w.n ? end : 0, end < w.n ? WERR_MORE_DATA : WERR_OK);
	return 0;
}

uint32_t
srvsvc_file_get_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char server[SRVSVC_ENUM_NAME];
	struct enum_walk w;
	uint32_t level;

	memset(&w, 0, sizeof(w));
	(void)ndr_unique_string(in, server, sizeof(server));
	w.only_id = ndr_u32(in);
	w.has_id = 1;
	level = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	ndr_put_u32(out, level);			/* union discriminant */
	if (level != 2 && level != 3) {
		ndr_put_u32(out, WERR_INVALID_LEVEL);
		return 0;
	}
	if (srvsvc_enum_allowed(env))
		enum_files(env->shm, &w, level == 3);
	/* two opens whose FileIds agree (srvsvc_file_id): the first */
	ndr_put_ptr(out, w.n > 0);
	if (w.n > 0) {
		enum_file_scalars(out, level, &ef[0]);
		enum_file_buffers(env, out, level, &ef[0]);
	}
	ndr_put_u32(out, !srvsvc_enum_allowed(env) ? WERR_ACCESS_DENIED :
	    w.n > 0 ? WERR_OK : WERR_NERR_FILEIDNOTFOUND);
	return 0;
}

/*
 * NetrFileClose (MS-SRVS 3.1.4.4): the worker holding the open closes it
 * as the server closes an open, asked by the master (daemon/admreq.c,
 * worker/open.h open_close_file_id).  NERR_FileIdNotFound when no worker
 * holds it (Samba 4.17 answers ERROR_FILE_NOT_FOUND).
 */
uint32_t
srvsvc_file_close(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static struct admmsg_req r;
	char server[SRVSVC_ENUM_NAME];

	memset(&r, 0, sizeof(r));
	(void)ndr_unique_string(in, server, sizeof(server));
	r.file_id = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	r.op = ADMMSG_FILE_CLOSE;
	/* 4 bytes out: never called again for room (pipe.h), asked once */
	ndr_put_u32(out, enum_admin_ask(env, &r));
	return 0;
}

/* ---- tree connects ---- */

static int
enum_conn_cb(const struct shm_tree_rec *t, void *arg)
{
	struct enum_walk *w = arg;
	struct enum_conn *c;

	if (w->client != NULL && strcasecmp(w->client, t->share) != 0)
		return 0;
	w->total++;
	if (w->n >= SRVSVC_ENUM_CONN_MAX)
		return 0;
	c = &ec[w->n++];
	c->key = t->tree_key;
	c->since = t->since;
	c->pid = t->pid;
	strlcpy(c->share, t->share, sizeof(c->share));
	return 0;
}

struct enum_pid_user {
	pid_t		pid;
	char		*user;
	size_t		cap;
};

static int
enum_pid_user_cb(const struct shm_session_rec *r, void *arg)
{
	struct enum_pid_user *u = arg;

	if (r->pid != u->pid)
		return 0;
	strlcpy(u->user, r->user, u->cap);
	return 1;
}

/*
 * A tree's user: its worker serves one user, whose sessions name him (a
 * relayed session's tree is counted in its own user's worker).
 */
static void
enum_conn_buffers(struct shm *shm, struct ndr_w *o, const struct enum_conn *c)
{
	char user[SHM_NAME_MAX];
	struct enum_pid_user u = { c->pid, user, sizeof(user) };

	user[0] = '\0';
	if (shm != NULL)
		(void)shm_foreach_session(shm, enum_pid_user_cb, &u);
	ndr_put_string(o, user);
	ndr_put_string(o, c->share);
}

/* A tree's id: its key is unique in its worker only, so the pid goes in. */
static uint32_t
enum_conn_id(const struct enum_conn *c)
{
	return (uint32_t)c->key ^ ((uint32_t)c->pid << 12);
}

/*
 * The shared state records the tree connects of every disk share
 * (shm/trees.c, worker/state_tree.c), each with its worker (and so its
 * user): those are what this lists (IPC$'s are not recorded).  The Qualifier names a share (Windows also
 * takes a client's name; no record ties a tree to a client address, so
 * such a qualifier matches nothing).
 */
uint32_t
srvsvc_conn_enum(const struct pipe_env *env, struct cur *in, struct ndr_w *out)
{
	char server[SRVSVC_ENUM_NAME], qual[SRVSVC_ENUM_NAME];
	struct enum_walk w;
	uint32_t level, resume, i;
	int has;

	memset(&w, 0, sizeof(w));
	(void)ndr_unique_string(in, server, sizeof(server));
	w.client = enum_opt_string(in, qual, sizeof(qual));
	if (enum_container_in(in, &level) < 0 ||
	    enum_tail_in(in, &has, &resume) < 0)
		return DCERPC_FAULT_NDR;
	if (level != 0 && level != 1) {
		enum_empty_out(out, level, 0, has, WERR_INVALID_LEVEL);
		return 0;
	}
	if (!srvsvc_enum_allowed(env)) {
		enum_empty_out(out, level, 1, has, WERR_ACCESS_DENIED);
		return 0;
	}
	if (env->shm != NULL)
		(void)shm_foreach_tree(env->shm, enum_conn_cb, &w);
	if (resume >= w.n)
		resume = w.n;

	ndr_put_u32(out, level);
	ndr_put_u32(out, level);
	ndr_put_ptr(out, 1);
	ndr_put_u32(out, w.n - resume);
	ndr_put_ptr(out, w.n > resume);
	if (w.n > resume) {
		ndr_put_u32(out, w.n - resume);
		for (i = resume; i < w.n; i++) {
			ndr_put_u32(out, enum_conn_id(&ec[i]));	/* coni_id */
			if (level == 0)
				continue;
			ndr_put_u32(out, STYPE_DISKTREE);
			ndr_put_u32(out, 0);		/* num_opens: unknown */
			ndr_put_u32(out, 1);		/* num_users */
			ndr_put_u32(out, enum_secs_since(ec[i].since));
			ndr_put_ptr(out, 1);		/* username */
			ndr_put_ptr(out, 1);		/* netname */
		}
		for (i = resume; level == 1 && i < w.n; i++)
			enum_conn_buffers(env->shm, out, &ec[i]);
	}
	enum_tail_out(out, w.total > resume ? w.total - resume : 0, has,
	    WERR_OK);
	return 0;
}
