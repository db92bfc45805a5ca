/*
 * MS-SRVS over the srvsvc pipe: the calls that list shares and describe
 * the server (enough for `smbclient -L`, `net view` and rpcclient).
 *
 * Wire layouts follow the IDL of MS-SRVS 3.1.4 (NetrShareEnum 3.1.4.8,
 * NetrShareGetInfo 3.1.4.10, NetrServerGetInfo 3.1.4.17, NetrRemoteTOD
 * 3.1.4.21) and the structure definitions of 2.2.4.  A level outside the
 * ones we serve gets ERROR_INVALID_LEVEL with the union's empty default
 * arm, or a NULL pointer where the level is an arm we do not fill, the
 * way Windows and Samba answer it.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/conf.h"
#include "worker/homes.h"
#include "worker/pipe.h"
#include "worker/pipe_srvsvc.h"

/* MS-SRVS 3.1.4 opnums */
#define SRVSVC_OPNUM_NETR_SHARE_ENUM		15
#define SRVSVC_OPNUM_NETR_SHARE_GET_INFO	16
#define SRVSVC_OPNUM_NETR_SERVER_GET_INFO	21
#define SRVSVC_OPNUM_NETR_SERVER_DISK_ENUM	23
#define SRVSVC_OPNUM_NETR_REMOTE_TOD		28
#define SRVSVC_OPNUM_NETR_SHARE_ENUM_STICKY	36

/* MS-SRVS 2.2.2.4 share types */
#define STYPE_DISKTREE		0x00000000u
#define STYPE_IPC		0x00000003u
#define STYPE_SPECIAL		0x80000000u
#define SHI_USES_UNLIMITED	0xFFFFFFFFu
/* MS-SRVS 2.2.4.29 shi1005_flags */
#define SHI1005_FLAGS_ACCESS_BASED_DIRECTORY_ENUM	0x00000800u

/* MS-SRVS 2.2.2.6 / MS-DTYP 2.2.25 platform ids, 2.2.2.7 server types */
#define PLATFORM_ID_NT		500
#define SV_TYPE_WORKSTATION	0x00000001u
#define SV_TYPE_SERVER		0x00000002u
#define SV_TYPE_SERVER_UNIX	0x00000800u
#define SV_TYPE_NT		0x00001000u
#define SV_TYPE_SERVER_NT	0x00008000u

/* MS-ERREF 2.2 */
#define WERR_OK			0
#define WERR_ACCESS_DENIED	5
#define WERR_INVALID_LEVEL	124
#define WERR_NERR_NETNAMENOTFOUND	2310

/* The version we report (what current Windows servers say). */
#define SRVSVC_VERSION_MAJOR	10
#define SRVSVC_VERSION_MINOR	0

#define SRVSVC_NAME_MAX		1024

/* Pointer layouts of SHARE_INFO_x, for skipping a client-sent array:
 * p = [string] pointer, u = DWORD, s = SD byte array sized by the last u. */
static const char *
srvsvc_share_layout(uint32_t level)
{
	switch (level) {
	case 0:		return "p";
	case 1:		return "pup";
	case 2:		return "pupuuupp";
	case 501:	return "pupu";
	case 502:	return "pupuuuppus";
	default:	return NULL;
	}
}

static uint32_t
srvsvc_share_type(const struct conf_share *s)
{
	size_t n = strlen(s->name);

	if (s->is_ipc)
		return STYPE_IPC | STYPE_SPECIAL;
	/* A name ending in '$' is hidden from browse lists (Windows, Samba). */
	return STYPE_DISKTREE | (n > 0 && s->name[n - 1] == '$' ?
	    STYPE_SPECIAL : 0);
}

static const char *
srvsvc_share_comment(const struct pipe_env *env, const struct conf_share *s,
    char *buf, size_t size)
{
	if (s->comment != NULL)
		return s->comment;
	if (s->is_ipc) {
		snprintf(buf, size, "IPC Service (%s)",
		    env->conf->server_string ? env->conf->server_string : "");
		return buf;
	}
	return "";
}

/* "C:\srv\data" for /srv/data, as Samba shows a Unix path to Windows. */
static const char *
srvsvc_share_path(const struct conf_share *s, char *buf, size_t size)
{
	size_t i;

	if (s->path == NULL || s->is_ipc)
		return "";
	snprintf(buf, size, "C:%s", s->path);
	for (i = 0; buf[i] != '\0'; i++)
		if (buf[i] == '/')
			buf[i] = '\\';
	return buf;
}

/*
 * Levels 2 and 502 carry the server's paths: administrators only, as
 * Windows answers them (ERROR_ACCESS_DENIED to other callers).
 */
static int
srvsvc_level_allowed(const struct pipe_env *env, uint32_t level)
{
	return (level != 2 && level != 502) || env->admin;
}

/* `restrict anonymous` 1 or 2: a null session gets nothing (issue 20). */
static int
srvsvc_caller_refused(const struct pipe_env *env)
{
	return env->anonymous && env->conf->restrict_anonymous >= 1;
}

/* valid users / invalid users, "%S" and "%U" substituted as the tree
 * connect does (worker/homes.c; %G, %H and %I match nobody here) */
static int
srvsvc_user_ok(const struct pipe_env *env, const struct conf_share *s)
{
	struct conf_subst v;

	memset(&v, 0, sizeof(v));
	v.user = v.unix_user = env->user;
	v.share = s->name;
	v.server = env->conf->netbios_name;
	return conf_share_user_ok_subst(s, env->user, &v);
}

/* Could the caller connect to s?  The tree connect's rules, as far as
 * the configuration decides them (the kernel judges the path later). */
static int
srvsvc_user_may_connect(const struct pipe_env *env, const struct conf_share *s)
{
	if (s->is_ipc)
		return 1;
	if (env->anonymous || strcmp(env->user, env->conf->guest_account ?
	    env->conf->guest_account : "") == 0)
		return s->guest_ok;
	return srvsvc_user_ok(env, s);
}

/*
 * NetShareGetInfo finds a share the caller may use (valid users, invalid
 * users; a guest or null session only a guest ok share) and, unless an
 * administrator asks, only a browseable one.  With access based share
 * enum an administrator who may not connect does not find it either.
 */
static const struct conf_share *
srvsvc_share_visible(const struct pipe_env *env, const char *name,
    struct conf_share *home, char *buf, size_t cap)
{
	const struct conf_share *s = conf_share_find(env->conf, name);

	if (s != NULL && s->is_homes)
		return NULL;
	/* the caller's own home share, as Samba registers it at logon */
	if (s == NULL && !env->anonymous && strcasecmp(name, env->user) == 0 &&
	    homes_own_share(env->conf, env->user, home, buf, cap) == 0)
		s = home;
	if (s == NULL || s->is_ipc)
		return s;
	if (s->access_based_share_enum && !srvsvc_user_may_connect(env, s))
		return NULL;
	if (env->admin)
		return s;
	if (!s->browseable)
		return NULL;
	return srvsvc_user_may_connect(env, s) ? s : NULL;
}

/*
 * Is share i in the list NetrShareEnum (all) or NetrShareEnumSticky gives?
 * `access based share enum` leaves out a share the caller could not
 * connect to, administrators included (Samba's is_enumeration_allowed).
 */
static int
srvsvc_share_listed(const struct pipe_env *env, const struct conf_share *s,
    int all)
{
	size_t n = strlen(s->name);

	/* [homes] stands for the user's own home share (srvsvc_home) */
	if (s->is_homes || (!s->is_ipc && !s->browseable))
		return 0;
	if (!all && n > 0 && s->name[n - 1] == '$')
		return 0;
	if (s->access_based_share_enum && !srvsvc_user_may_connect(env, s))
		return 0;
	return 1;
}

/* The fixed part of one SHARE_INFO_x (pointers only stand for strings). */
static void
srvsvc_share_scalars(struct ndr_w *w, uint32_t level, const struct conf_share *s)
{
	ndr_put_ptr(w, 1);				/* netname */
	if (level == 0)
		return;
	ndr_put_u32(w, srvsvc_share_type(s));
	ndr_put_ptr(w, 1);				/* remark */
	if (level == 1)
		return;
	if (level == 501) {
		ndr_put_u32(w, 0);			/* shi501_flags */
		return;
	}
	ndr_put_u32(w, 0);				/* permissions */
	ndr_put_u32(w, SHI_USES_UNLIMITED);		/* max_uses */
	ndr_put_u32(w, 0);				/* current_uses */
	ndr_put_ptr(w, 1);				/* path */
	ndr_put_ptr(w, 1);				/* passwd: "" */
	if (level == 502) {
		ndr_put_u32(w, 0);			/* reserved: SD size */
		ndr_put_ptr(w, 0);			/* no security descriptor */
	}
}

static void
srvsvc_share_buffers(const struct pipe_env *env, struct ndr_w *w,
    uint32_t level, const struct conf_share *s)
{
	char buf[PATH_MAX + 8];

	ndr_put_string(w, s->name);
	if (level == 0)
		return;
	ndr_put_string(w, srvsvc_share_comment(env, s, buf, sizeof(buf)));
	if (level == 1 || level == 501)
		return;
	ndr_put_string(w, srvsvc_share_path(s, buf, sizeof(buf)));
	ndr_put_string(w, "");
}

/*
 * Skips what a client sent in an [in, out] share container: entries are
 * allowed by the IDL, however pointless, so decode them rather than fail.
 * At most SRVSVC_SKIP_MAX of them: no real client sends any.
 */
#define SRVSVC_SKIP_MAX	256

static void
srvsvc_skip_share_array(struct cur *in, uint32_t level, uint32_t count)
{
	const char *layout = srvsvc_share_layout(level), *l;
	uint16_t present[SRVSVC_SKIP_MAX];	/* bit j: j-th pointer non-NULL */
	uint32_t max, i, sdsize[SRVSVC_SKIP_MAX], u = 0;
	char tmp[SRVSVC_NAME_MAX];
	unsigned j;

	max = ndr_u32(in);
	if (in->err || max != count || count > SRVSVC_SKIP_MAX) {
		in->err = 1;
		return;
	}
	for (i = 0; i < count && !in->err; i++) {
		present[i] = 0;
		sdsize[i] = 0;
		for (l = layout, j = 0; *l != '\0'; l++, j++) {
			if (*l == 'u') {
				u = ndr_u32(in);
				continue;
			}
			if (ndr_ptr(in) != 0)
				present[i] |= (uint16_t)(1u << j);
			if (*l == 's')
				sdsize[i] = u;
		}
	}
	/* The pointees follow, element by element, in field order. */
	for (i = 0; i < count && !in->err; i++)
		for (l = layout, j = 0; *l != '\0'; l++, j++) {
			if (!(present[i] & (1u << j)))
				continue;
			if (*l == 'p')
				ndr_string(in, tmp, sizeof(tmp));
			else if (ndr_u32(in) != sdsize[i])
				in->err = 1;
			else
				cur_skip(in, sdsize[i]);
		}
}

/* The i-th share of a listing: the configured ones, then the home. */
#define SRVSVC_NTH(i)	((i) < (uint32_t)conf->nshares ? \
	&conf->shares[(i)] : &home)

static uint32_t
srvsvc_share_enum(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out, int all)
{
	const struct conf *conf = env->conf;
	char server[SRVSVC_NAME_MAX], hbuf[PATH_MAX + 128];
	struct conf_share home;
	uint32_t level, sw, count, resume = 0, n, i, k, nall;
	int has_resume, known, denied, has_home;

	/* [in] ServerName, InfoStruct, PreferedMaximumLength, ResumeHandle */
	(void)ndr_unique_string(in, server, sizeof(server));
	level = ndr_u32(in);
	sw = ndr_u32(in);
	if (in->err || sw != level)
		return DCERPC_FAULT_NDR;
	known = srvsvc_share_layout(level) != NULL;
	denied = srvsvc_caller_refused(env) || !srvsvc_level_allowed(env, level);
	if (known && ndr_ptr(in) != 0) {
		count = ndr_u32(in);
		if (ndr_ptr(in) != 0)
			srvsvc_skip_share_array(in, level, count);
	}
	(void)ndr_u32(in);	/* PreferedMaximumLength: we send all at once */
	has_resume = ndr_ptr(in) != 0;
	if (has_resume)
		resume = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;

	/*
	 * Which shares, from the resume point on: the configured ones, then
	 * the caller's own home share (worker/homes.c), which Samba adds at
	 * logon and lists as browseable as [global] says.
	 */
	has_home = !env->anonymous &&
	    homes_own_share(conf, env->user, &home, hbuf, sizeof(hbuf)) == 0;
	nall = (uint32_t)conf->nshares + (has_home ? 1 : 0);
	for (n = 0, i = 0; i < nall; i++)
		if (srvsvc_share_listed(env, SRVSVC_NTH(i), all))
			n++;
	count = known && !denied && resume < n ? n - resume : 0;

	ndr_put_u32(out, level);
	ndr_put_u32(out, level);			/* union discriminant */
	if (known) {
		ndr_put_ptr(out, 1);			/* the container */
		ndr_put_u32(out, count);		/* EntriesRead */
		ndr_put_ptr(out, count > 0);
		if (count > 0) {
			ndr_put_u32(out, count);	/* conformance */
			for (k = 0, i = 0; i < nall; i++) {
				if (!srvsvc_share_listed(env, SRVSVC_NTH(i), all))
					continue;
				if (k++ >= resume)
					srvsvc_share_scalars(out, level,
					    SRVSVC_NTH(i));
			}
			for (k = 0, i = 0; i < nall; i++) {
				if (!srvsvc_share_listed(env, SRVSVC_NTH(i), all))
					continue;
				if (k++ >= resume)
					srvsvc_share_buffers(env, out, level,
					    SRVSVC_NTH(i));
			}
		}
	}
	ndr_put_u32(out, count);			/* TotalEntries */
	ndr_put_ptr(out, has_resume);
	if (has_resume)
		ndr_put_u32(out, 0);			/* nothing left */
	ndr_put_u32(out, !known ? WERR_INVALID_LEVEL : denied ?
	    WERR_ACCESS_DENIED : WERR_OK);
	return 0;
}

static uint32_t
srvsvc_share_get_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char server[SRVSVC_NAME_MAX], name[SRVSVC_NAME_MAX];
	char hbuf[PATH_MAX + 128];
	const struct conf_share *s;
	struct conf_share home;
	uint32_t level;

	/* [in] ServerName, NetName (a [ref, string] pointer), Level */
	(void)ndr_unique_string(in, server, sizeof(server));
	ndr_string(in, name, sizeof(name));
	level = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (srvsvc_caller_refused(env) || (srvsvc_share_layout(level) != NULL &&
	    !srvsvc_level_allowed(env, level))) {
		ndr_put_u32(out, level);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, WERR_ACCESS_DENIED);
		return 0;
	}
	s = srvsvc_share_visible(env, name, &home, hbuf, sizeof(hbuf));

	ndr_put_u32(out, level);			/* union discriminant */
	if (level == 1005) {
		ndr_put_ptr(out, s != NULL);
		if (s != NULL)
			ndr_put_u32(out, s->hide_unreadable ?
			    SHI1005_FLAGS_ACCESS_BASED_DIRECTORY_ENUM : 0);
	} else if (srvsvc_share_layout(level) != NULL) {
		ndr_put_ptr(out, s != NULL);
		if (s != NULL) {
			srvsvc_share_scalars(out, level, s);
			srvsvc_share_buffers(env, out, level, s);
		}
	} else {
		ndr_put_u32(out, WERR_INVALID_LEVEL);
		return 0;
	}
	ndr_put_u32(out, s != NULL ? WERR_OK : WERR_NERR_NETNAMENOTFOUND);
	return 0;
}

/*
 * The arms of LPSERVER_INFO (MS-SRVS 2.2.3.7): each is a pointer, so an
 * answer at a level we do not fill still carries a NULL one there.
 * Without it the client reads the WERROR as the pointer and the stub
 * comes out four bytes short (smbtorture's NetSrvGetInfo 502:
 * NT_STATUS_BUFFER_TOO_SMALL).
 */
static int
srvsvc_server_info_arm(uint32_t level)
{
	static const uint16_t arms[] = {
		100, 101, 102, 103, 502, 503, 599, 1005, 1107, 1010, 1016,
		1017, 1018, 1501, 1502, 1503, 1506, 1510, 1511, 1512, 1513,
		1514, 1515, 1516, 1518, 1523, 1528, 1529, 1530, 1533, 1534,
		1535, 1536, 1538, 1539, 1540, 1541, 1542, 1543, 1544, 1545,
		1546, 1547, 1548, 1549, 1550, 1552, 1553, 1554, 1555, 1556,
	};
	size_t i;

	for (i = 0; i < sizeof(arms) / sizeof(arms[0]); i++)
		if (arms[i] == level)
			return 1;
	return 0;
}

static uint32_t
srvsvc_server_get_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	const struct conf *conf = env->conf;
	char server[SRVSVC_NAME_MAX];
	uint32_t level;
	const char *name = conf->netbios_name ? conf->netbios_name : "";
	const char *comment = conf->server_string ? conf->server_string : "";

	(void)ndr_unique_string(in, server, sizeof(server));
	level = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;

	ndr_put_u32(out, level);
	if (srvsvc_caller_refused(env)) {
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, WERR_ACCESS_DENIED);
		return 0;
	}
	if (level != 100 && level != 101 && level != 102) {
		/* an arm of the union is a NULL pointer; outside them nothing */
		if (srvsvc_server_info_arm(level))
			ndr_put_ptr(out, 0);
		ndr_put_u32(out, WERR_INVALID_LEVEL);
		return 0;
	}
	ndr_put_ptr(out, 1);
	ndr_put_u32(out, PLATFORM_ID_NT);
	ndr_put_ptr(out, 1);				/* name */
	if (level >= 101) {
		ndr_put_u32(out, SRVSVC_VERSION_MAJOR);
		ndr_put_u32(out, SRVSVC_VERSION_MINOR);
		ndr_put_u32(out, SV_TYPE_WORKSTATION | SV_TYPE_SERVER |
		    SV_TYPE_SERVER_UNIX | SV_TYPE_NT | SV_TYPE_SERVER_NT);
		ndr_put_ptr(out, 1);			/* comment */
	}
	if (level == 102) {
		ndr_put_u32(out, 0xFFFFFFFFu);		/* users: no limit */
		ndr_put_u32(out, 15);			/* autodisconnect minutes */
		ndr_put_u32(out, 0);			/* hidden */
		ndr_put_u32(out, 240);			/* announce, seconds */
		ndr_put_u32(out, 3000);			/* anndelta, ms */
		ndr_put_u32(out, 0);			/* licenses */
		ndr_put_ptr(out, 1);			/* userpath */
	}
	ndr_put_string(out, name);
	if (level >= 101)
		ndr_put_string(out, comment);
	if (level == 102)
		ndr_put_string(out, "C:\\");
	ndr_put_u32(out, WERR_OK);
	return 0;
}

/*
 * NetrRemoteTOD (MS-SRVS 3.1.4.21): the server's clock, which `net time`
 * and domain-less clients set theirs from.  It reveals nothing a SMB2
 * NEGOTIATE response does not (SystemTime), so it is answered to every
 * caller srvsvc answers at all.
 */
static uint32_t
srvsvc_remote_tod(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	char server[SRVSVC_NAME_MAX];
	struct timespec ts, mono;
	struct tm utc, local;
	time_t t;
	int32_t tz = -1;			/* undefined */

	(void)ndr_unique_string(in, server, sizeof(server));
	if (in->err)
		return DCERPC_FAULT_NDR;
	if (srvsvc_caller_refused(env)) {
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, WERR_ACCESS_DENIED);
		return 0;
	}
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	t = ts.tv_sec;
	if (gmtime_r(&t, &utc) == NULL)
		memset(&utc, 0, sizeof(utc));
	/* minutes west of UTC, as the field is defined */
	if (localtime_r(&t, &local) != NULL)
		tz = (int32_t)(-local.tm_gmtoff / 60);
	ndr_put_ptr(out, 1);			/* TIME_OF_DAY_INFO */
	ndr_put_u32(out, (uint32_t)t);		/* tod_elapsedt */
	(void)clock_gettime(CLOCK_MONOTONIC, &mono);
	/* tod_msecs: from "an arbitrary starting point" (boot here) */
	ndr_put_u32(out, (uint32_t)((uint64_t)mono.tv_sec * 1000 +
	    (uint64_t)mono.tv_nsec / 1000000));
	ndr_put_u32(out, (uint32_t)utc.tm_hour);
	ndr_put_u32(out, (uint32_t)utc.tm_min);
	ndr_put_u32(out, (uint32_t)utc.tm_sec);
	ndr_put_u32(out, (uint32_t)(ts.tv_nsec / 10000000));	/* hundredths */
	ndr_put_u32(out, (uint32_t)tz);
	ndr_put_u32(out, 310);			/* tod_tinterval, 0.0001 s */
	ndr_put_u32(out, (uint32_t)utc.tm_mday);
	ndr_put_u32(out, (uint32_t)utc.tm_mon + 1);
	ndr_put_u32(out, (uint32_t)utc.tm_year + 1900);
	ndr_put_u32(out, (uint32_t)utc.tm_wday);
	ndr_put_u32(out, WERR_OK);
	return 0;
}

/* An [in, out, unique] ResumeHandle: there, 0 (the end), when sent. */
static void
srvsvc_put_resume(struct ndr_w *out, int present)
{
	ndr_put_ptr(out, present);
	if (present)
		ndr_put_u32(out, 0);
}

/*
 * NetrServerDiskEnum (MS-SRVS 3.1.4.19), level 0: the server's disk
 * drives, for administrators (as Windows).  One "C:", the drive every
 * share's Windows path names (NetrShareGetInfo's "C:\\..."), then the
 * empty entry that ends the list, as Windows and Samba send it
 * (EntriesRead counts it, TotalEntries does not).
 */
static uint32_t
srvsvc_disk_enum(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	static const char *const disks[] = { "C:", "" };
	char server[SRVSVC_NAME_MAX];
	uint32_t level, count, n, i, k;
	int denied, resume;

	(void)ndr_unique_string(in, server, sizeof(server));
	level = ndr_u32(in);
	/* [in, out] DISK_ENUM_CONTAINER: what a client sends is skipped */
	(void)ndr_u32(in);				/* EntriesRead */
	if (ndr_ptr(in) != 0) {
		(void)ndr_u32(in);			/* max_count */
		(void)ndr_u32(in);			/* offset */
		count = ndr_u32(in);
		for (i = 0; i < count && !in->err; i++) {
			ndr_align(in, 4);
			(void)ndr_u32(in);		/* offset */
			n = ndr_u32(in);
			if (n > 3) {		/* WCHAR Disk[3] */
				in->err = 1;
				break;
			}
			for (k = 0; k < n; k++)
				(void)ndr_u16(in);
		}
	}
	(void)ndr_u32(in);				/* PreferedMaximumLength */
	resume = ndr_ptr(in) != 0;
	if (resume)
		(void)ndr_u32(in);			/* ResumeHandle */
	if (in->err)
		return DCERPC_FAULT_NDR;
	denied = srvsvc_caller_refused(env) || !env->admin;
	if (denied || level != 0) {
		ndr_put_u32(out, 0);
		ndr_put_ptr(out, 0);
		ndr_put_u32(out, 0);			/* TotalEntries */
		srvsvc_put_resume(out, resume);
		ndr_put_u32(out, denied ? WERR_ACCESS_DENIED :
		    WERR_INVALID_LEVEL);
		return 0;
	}
	ndr_put_u32(out, 2);
	ndr_put_ptr(out, 1);
	ndr_put_u32(out, 2);				/* max_count */
	ndr_put_u32(out, 0);				/* offset */
	ndr_put_u32(out, 2);				/* actual_count */
	for (i = 0; i < 2; i++) {
		/* DISK_INFO: [string] WCHAR Disk[3], a varying array */
		ndr_put_align(out, 4);
		n = (uint32_t)ndr_utf16_len(disks[i]) + 1;
		ndr_put_u32(out, 0);
		ndr_put_u32(out, n);
		for (k = 0; k + 1 < n; k++)
			ndr_put_u16(out, (uint16_t)disks[i][k]);
		ndr_put_u16(out, 0);
	}
	ndr_put_align(out, 4);
	ndr_put_u32(out, 1);				/* TotalEntries */
	srvsvc_put_resume(out, resume);
	ndr_put_u32(out, WERR_OK);
	return 0;
}

static uint32_t
srvsvc_call(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	switch (opnum) {
	case SRVSVC_OPNUM_NETR_CONNECTION_ENUM:
		return srvsvc_conn_enum(env, in, out);
	case SRVSVC_OPNUM_NETR_FILE_ENUM:
		return srvsvc_file_enum(env, in, out);
	case SRVSVC_OPNUM_NETR_FILE_GET_INFO:
		return srvsvc_file_get_info(env, in, out);
	case SRVSVC_OPNUM_NETR_FILE_CLOSE:
		return srvsvc_file_close(env, in, out);
	case SRVSVC_OPNUM_NETR_SESSION_ENUM:
		return srvsvc_session_enum(env, in, out);
	case SRVSVC_OPNUM_NETR_SESSION_DEL:
		return srvsvc_session_del(env, in, out);
	case SRVSVC_OPNUM_NETR_SHARE_ENUM:
		return srvsvc_share_enum(env, in, out, 1);
	case SRVSVC_OPNUM_NETR_SHARE_ENUM_STICKY:
		return srvsvc_share_enum(env, in, out, 0);
	case SRVSVC_OPNUM_NETR_SHARE_GET_INFO:
		return srvsvc_share_get_info(env, in, out);
	case SRVSVC_OPNUM_NETR_SERVER_GET_INFO:
		return srvsvc_server_get_info(env, in, out);
	case SRVSVC_OPNUM_NETR_SERVER_DISK_ENUM:
		return srvsvc_disk_enum(env, in, out);
	case SRVSVC_OPNUM_NETR_REMOTE_TOD:
		return srvsvc_remote_tod(env, in, out);
	default:
		return DCERPC_NCA_S_OP_RNG_ERROR;
	}
}

/* MS-SRVS 1.9: 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3.0 */
const struct pipe_iface pipe_iface_srvsvc = {
	"srvsvc", "\\PIPE\\srvsvc",
	{ { 0x4b324fc8, 0x1670, 0x01d3,
	    { 0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88 } }, 3, 0 },
	srvsvc_call,
};
