/*
 * The smb.conf-style configuration.  conf_load() reads a whole file into a
 * fresh struct conf; a reload builds a new one and swaps it in only when it
 * loaded cleanly, so a broken file never replaces a working config.
 */
#ifndef USMBD_DAEMON_CONF_H
#define USMBD_DAEMON_CONF_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CONF_MAX_PORTS	8

/* SMB2 dialect codes, MS-SMB2 2.2.3 */
#define DIALECT_202	0x0202
#define DIALECT_210	0x0210
#define DIALECT_300	0x0300
#define DIALECT_302	0x0302
#define DIALECT_311	0x0311

enum conf_signing { SIGNING_AUTO, SIGNING_MANDATORY, SIGNING_DISABLED };
/* Samba's `smb encrypt` values: off, if_required/auto/default, desired, required */
enum conf_encrypt { ENCRYPT_OFF, ENCRYPT_IF_REQUIRED, ENCRYPT_DESIRED, ENCRYPT_REQUIRED };

/* `mangled names` (struct conf_share) */
enum { MANGLED_NAMES_NO, MANGLED_NAMES_YES, MANGLED_NAMES_ILLEGAL };
enum conf_map_guest { MAP_GUEST_NEVER, MAP_GUEST_BAD_USER };
/*
 * Samba's `kerberos method`: where the service keys are.  "default" and
 * "secrets only" mean Samba's secrets.tdb, which usmbd has not: Kerberos
 * is off.
 */
/* Samba's fruit:resource and fruit:metadata values */
enum conf_fruit_rsrc { FRUIT_RSRC_FILE, FRUIT_RSRC_STREAM, FRUIT_RSRC_XATTR };
enum conf_fruit_meta { FRUIT_META_NETATALK, FRUIT_META_STREAM };
enum conf_krb_method { KRB_METHOD_OFF, KRB_METHOD_SYSTEM, KRB_METHOD_DEDICATED };
#define CONF_SYSTEM_KEYTAB	"/etc/krb5.keytab"

struct conf_share {
	char		*name;		/* as written in the section header */
	char		*path;
	char		*comment;
	int		 read_only;	/* default yes, as Samba */
	int		 browseable;	/* default yes */
	int		 guest_ok;	/* default no */
	int		 case_sensitive;/* default no */
	enum conf_encrypt smb_encrypt;	/* default: the global value */
	/* POSIX create contexts taken here; default: the global value */
	int		 smb3_unix_extensions;
	mode_t		 create_mask;	/* default 0744 */
	mode_t		 directory_mask;/* default 0755 */
	/*
	 * Samba's: bits always set on a new file or directory after the
	 * mask (default 0); inherit permissions instead gives it its
	 * parent's bits (files its rw bits, directories all but setuid),
	 * masks and force bits then unused (worker/smb2_posix.c).
	 */
	mode_t		 force_create_mode;
	mode_t		 force_directory_mode;
	int		 inherit_permissions;	/* default no */
	/*
	 * Samba's per-share hosts allow / hosts deny, judged at TREE_CONNECT
	 * (worker/smb2_tree.c); NULL = no rule (the [global] lists, judged
	 * on accept, still apply).
	 */
	char		**hosts_allow;
	char		**hosts_deny;
	/*
	 * Previous versions (worker/snapshot.h): a directory under the share's
	 * path holding one copy of the share per snapshot, named by
	 * snapshot_format (strptime, UTC); NULL = none.
	 */
	char		*snapshot_dir;
	char		*snapshot_format;	/* NULL = "@GMT-%Y.%m.%d-%H.%M.%S" */
	/*
	 * Per-user access (Samba's keys): read list makes its users read-only
	 * on a writable share, write list makes its users read-write on a
	 * read-only one and wins over read list; same syntax as valid users.
	 * access based share enum keeps the share out of the share lists of
	 * users who could not connect; hide unreadable keeps entries the user
	 * cannot read out of directory listings.
	 */
	char		**read_list;	/* NULL-terminated; NULL = nobody */
	char		**write_list;	/* NULL-terminated; NULL = nobody */
	int		 access_based_share_enum;	/* default no */
	int		 hide_unreadable;	/* default no */
	/*
	 * Recycle bin (worker/recycle.h): a delete moves a regular file into
	 * recycle_dir (relative to the share's path, %U the user's name)
	 * instead of removing it; NULL = off.  The patterns are Samba's list
	 * (separated by spaces, commas or semicolons; * and ?, any case).
	 */
	char		*recycle_dir;
	int		 recycle_keep_tree;	/* the file's directories too; no */
	int		 recycle_versions;	/* "Copy #N of name"; no: replaced */
	int		 recycle_touch;		/* access time set to the delete's; no */
	char		*recycle_exclude;	/* names deleted as before; NULL none */
	char		*recycle_exclude_dir;	/* any directory of the path */
	char		*recycle_max_size_s;	/* as written; parsed below */
	uint64_t	 recycle_max_size;	/* bytes, larger deleted; 0 none */
	mode_t		 recycle_dir_mode;	/* directories it creates; 0700 */
	/*
	 * Name rules, Samba's keys (worker/namerule.h): '/'-separated name
	 * patterns as written (NULL = none) and their compiled form.
	 */
	char		*veto_files;
	char		*hide_files;
	int		 delete_veto_files;	/* default no */
	int		 hide_dot_files;	/* default yes */
	struct conf_namepat *veto_pat;	/* NULL = no veto files */
	struct conf_namepat *hide_pat;
	/*
	 * Caching a client may hold (Samba's keys, worker/smb2_create.c):
	 * oplocks = no grants no oplock and no lease, directories included;
	 * level2 oplocks = no never leaves read caching without write
	 * caching (level II, R, RH: none; a break goes to none); names
	 * matching veto oplock files (veto files syntax, last component)
	 * get no oplock or lease.
	 */
	int		 oplocks;		/* default yes */
	int		 level2_oplocks;	/* default yes */
	char		*veto_oplock_files;
	struct conf_namepat *veto_oplock_pat;	/* NULL = none */
	/*
	 * 8.3 short names, Samba's `mangled names` (worker/shortname.h):
	 * MANGLED_NAMES_NO none (FileAlternateNameInformation gives the
	 * name cut to 12 bytes, as Samba); ILLEGAL (the default) short names
	 * answer FileAlternateNameInformation, match search patterns and
	 * open files, but listings carry none; YES listings carry them too.
	 */
	int		 mangled_names;
	/*
	 * Samba's `ea support` (default yes): extended attributes served
	 * (worker/smb2_ea.c).  no: every file has none (EaSize 0 in
	 * QUERY_INFO and listings, a query STATUS_NO_EAS_ON_FILE) and sets,
	 * by SET_INFO or a create's ExtA context, STATUS_EAS_NOT_SUPPORTED.
	 */
	int		 ea_support;
	/*
	 * Samba's `max connections`: tree connects to the share across the
	 * whole server (counted in the state env, worker/state_tree.c);
	 * past it TREE_CONNECT gets STATUS_INSUFFICIENT_RESOURCES.  0 = no
	 * limit (default).
	 */
	int		 max_connections;
	/*
	 * macOS clients (worker/fruit.h): Samba's vfs_fruit keys.  The Apple
	 * extensions are on where `vfs objects` names fruit (the rest of
	 * the list, catia, streams_xattr and the like, is what usmbd does
	 * anyway and is not judged).
	 */
	char		*vfs_objects;		/* as written; NULL none */
	int		 fruit;			/* vfs objects names fruit */
	int		 fruit_resource;	/* enum conf_fruit_rsrc; file */
	int		 fruit_metadata;	/* enum conf_fruit_meta; netatalk */
	int		 fruit_locking;		/* accepted: none or netatalk */
	int		 fruit_encoding;	/* accepted: native or private */
	int		 fruit_time_machine;	/* FULL_SYNC; default no */
	char		*fruit_tm_max_size_s;	/* as written; parsed below */
	uint64_t	 fruit_tm_max_size;	/* bytes reported; 0 none */
	int		 fruit_zero_file_id;	/* default yes */
	int		 fruit_validate_afpinfo;	/* default yes */
	int		 fruit_veto_appledouble;	/* default yes */
	int		 fruit_posix_rename;	/* accepted; default yes */
	int		 fruit_wipe_blank_rfork;	/* default no */
	int		 fruit_delete_empty_adfiles;	/* default no */
	int		 fruit_convert_adouble;	/* convert Mac ._ files; yes */
	/*
	 * DFS (worker/dfs.h), Samba's keys: msdfs root makes the share a DFS
	 * root whose msdfs links (symlinks "msdfs:server\share,...") refer
	 * clients elsewhere; msdfs proxy makes the whole share a referral
	 * to that target (no path needed).  Both need `host msdfs`.
	 */
	int		 msdfs_root;		/* default no */
	char		*msdfs_proxy;		/* as written; NULL none */
	/*
	 * SMB2_SHAREFLAG_COMPRESS_DATA (worker/compress.h): READs of the
	 * share are answered compressed on a connection that negotiated
	 * it, asked or not; clients compress their WRITEs to it.  No.
	 */
	int		 compress_data;
	char		**valid_users;	/* NULL-terminated; NULL = everyone */
	char		**invalid_users;/* NULL-terminated; NULL = nobody */
	int		 is_ipc;	/* the implicit IPC$ */
	/*
	 * [homes] (worker/homes.c): a TREE_CONNECT to a name that is no
	 * share but a user's becomes that user's home share, with every key
	 * of this section; path NULL means the user's home directory.
	 * path_varies: path holds a substitution (conf_subst), made at each
	 * TREE_CONNECT.
	 */
	int		 is_homes;
	int		 path_varies;
	const char	*file;		/* where it was defined */
	int		 line;
};

struct conf {
	char		*file;
	uint16_t	 ports[CONF_MAX_PORTS];	/* smb ports, default 445 */
	int		 nports;
	char		**interfaces;	/* NULL-terminated addresses; NULL = all (0.0.0.0 and ::) */
	char		*pid_dir;	/* default /run/usmbd */
	char		*lock_dir;	/* default /run/usmbd */
	char		*private_dir;	/* default /var/lib/usmbd/private */
	char		*log_file;	/* NULL = syslog */
	int		 log_level;	/* default 1 */
	int		 min_protocol;	/* DIALECT_*, default DIALECT_202 */
	int		 max_protocol;	/* default DIALECT_311 */
	enum conf_signing server_signing;	/* default auto */
	enum conf_encrypt smb_encrypt;		/* default if_required */
	char		*guest_account;	/* default nobody */
	enum conf_map_guest map_to_guest;	/* default never */
	char		**hosts_allow;	/* NULL-terminated; NULL = all */
	char		**hosts_deny;
	char		*netbios_name;	/* default: the host name, upper case */
	char		*workgroup;	/* default WORKGROUP */
	char		*server_string;	/* default "usmbd" */
	int		 gate_processes;	/* default 4 */
	int		 max_gate_processes;	/* under load, default 16 */
	int		 max_workers_per_user;	/* default 1 */
	int		 worker_idle_timeout;	/* seconds, default 60 */
	size_t		 state_map_size;	/* bytes, default 64 MiB */
	int		 state_partitions;	/* data envs, a power of two; 8 */
	int		 min_password_length;	/* characters, default 5 (Samba's); usmbctl user */
	/* Per user worker (README "Limits"); past one: INSUFF_SERVER_RESOURCES. */
	int		 max_open_files;	/* Samba's key; default 16384 */
	int		 max_opens_per_conn;	/* default 1024 (CONN_MAX_OPENS) */
	/* Past one: STATUS_LOCK_NOT_GRANTED. */
	int		 max_locks_per_user;	/* default 16384 */
	int		 max_locks_per_open;	/* default 1024 */
	int		 max_locks_per_file;	/* all opens of a file; default 4096 */
	char		*admin_group;	/* srvsvc administrators (levels 2, 502); NULL: none */
	int		 restrict_anonymous;	/* Samba's; 0 allow, 1 no srvsvc, 2 refuse (default) */
	/* Kerberos (README "Kerberos", HACKING.md "Kerberos logons"). */
	char		*realm;		/* NULL: none (principals keep their realm) */
	enum conf_krb_method kerberos_method;	/* default off */
	char		*dedicated_keytab;	/* `dedicated keytab file` */
	char		*username_map;	/* Samba's file format; NULL: none */
	int		 ntlm_disabled;	/* `ntlm auth = no`: NTLMSSP logons refused */
	int		 smb3_unix_extensions;	/* Samba's; POSIX extensions on 3.1.1, default yes */
	int		 smb3_directory_leases;	/* Samba's key; default yes */
	int		 smb2_leases;	/* Samba's key; default yes */
	/* Samba's `change notify` (global): no = CHANGE_NOTIFY answers NOT_IMPLEMENTED */
	int		 change_notify;	/* default yes */
	/*
	 * SMB2_GLOBAL_CAP_LEASING is offered (smb2 leases and the [global]
	 * value of oplocks, as Samba's negotiate): without it RqLs is ignored.
	 */
	int		 leasing;
	/* Another user's session relayed sealed (worker/relay_setup.c); yes. */
	int		 relay_sealed_sessions;
	/* macOS clients, Samba's global fruit keys (worker/fruit.h). */
	int		 fruit_aapl;		/* answer AAPL; default yes */
	char		*fruit_model;		/* NULL: "MacSamba" */
	int		 fruit_copyfile;	/* OSX_COPYFILE offered; no */
	int		 fruit_nfs_aces;	/* NFS ACEs (mode, owner, group); yes */
	/* a home share's browseable: the [global] default, as Samba's */
	int		 homes_browseable;
	/* DFS (worker/dfs.h): Samba's `host msdfs`; default yes. */
	int		 host_msdfs;
	/* SMB 3.1.1 compression negotiated (worker/compress.h); default yes. */
	int		 smb_compression;
	struct conf_share *shares;	/* shares[0] is IPC$ */
	int		 nshares;
};

/*
 * Reads path.  Returns 0 and *out, or 2 after writing one line per problem
 * to errf as "FILE:LINE: what is wrong" (unknown keys are warnings written
 * to errf, not failures).
 */
int	conf_load(const char *path, struct conf **out, FILE *errf);
void	conf_free(struct conf *);
/* Case-insensitive lookup; NULL when absent. */
const struct conf_share *conf_share_find(const struct conf *, const char *name);
/* Is user (a Unix account name) allowed by valid users / invalid users? */
int	conf_share_user_ok(const struct conf_share *, const char *user);
/*
 * Is user, with primary group primary, a member of group (primary, or
 * supplementary as getgrouplist gives them: the groups a worker of that
 * user is started with, worker/user.c)?
 */
int	conf_user_gid_in_group(const char *user, gid_t primary,
	    const char *group);
/* Is the share read-only for user (read only, read list, write list)? */
int	conf_share_user_read_only(const struct conf_share *, const char *user);
/*
 * Samba's variable substitutions (daemon/conf_subst.c), made once per
 * TREE_CONNECT into the caller's buffer: %U the session's user, %u its
 * Unix account (the same in usmbd: the name after `username map`), %G
 * and %g its primary group, %H its home directory, %S the share's name,
 * %L and %N the NetBIOS name, %h the host name, %I the client's address,
 * %% a '%'; another letter is kept as written.  A NULL value, or one that
 * is empty, "." or "..", or holds '/' (%H: not absolute), is refused;
 * with CONF_SUBST_PATH so is a result with a "." or ".." component or
 * not absolute.  0, -EINVAL (refused) or -ENAMETOOLONG.
 */
#define CONF_SHARE_NAME_MAX	80
#define CONF_SUBST_PATH		0x1
struct conf_subst {
	const char	*user;
	const char	*unix_user;
	const char	*group;
	const char	*home;
	const char	*share;
	const char	*server;
	const char	*host;
	const char	*client;
};
int	conf_subst(const char *tmpl, const struct conf_subst *, int flags,
	    char *out, size_t cap);
/* Is val a value conf_subst takes (is_path: %H's rule)?  1 or 0. */
int	conf_subst_value_ok(const char *val, int is_path);
/* Does tmpl use %letter?  Any letter conf_subst knows? */
int	conf_subst_uses(const char *tmpl, char letter);
int	conf_subst_varies(const char *tmpl);
/* The [homes] section, or NULL. */
const struct conf_share *conf_homes(const struct conf *);
/*
 * conf_share_user_ok and conf_share_user_read_only with the lists' items
 * substituted first (Samba's "valid users = %S"); v NULL: as written.
 */
int	conf_share_user_ok_subst(const struct conf_share *, const char *user,
	    const struct conf_subst *v);
int	conf_share_user_read_only_subst(const struct conf_share *,
	    const char *user, const struct conf_subst *v);
/*
 * The keytab the ticket helper gets, from `kerberos method` and
 * `dedicated keytab file`; NULL when Kerberos is off (then SPNEGO offers
 * only NTLMSSP).
 */
const char *conf_keytab_path(const struct conf *);
/* Prints the effective config as smb.conf text; verbose adds the defaults. */
void	conf_dump(const struct conf *, FILE *, int verbose);
/* "SMB2_02", "SMB3_11", ... -> DIALECT_*, or -1. */
int	conf_parse_protocol(const char *s);

/*
 * Name patterns (daemon/conf_namepat.c): Samba's `veto files` syntax, a
 * '/'-separated list of names with '*' and '?', compiled at load.
 * compile: 0 and *out (NULL for an empty list), -EINVAL with a reason in
 * hint, or -ENOMEM.  match: does one name (no '/') match an entry?  1 or
 * 0, no allocation.  path: 0 no component matches, 1 the last one does,
 * 2 a directory component does.  conf_share_namepats compiles a share's
 * veto files, hide files and veto oplock files.
 */
struct conf_namepat;
int	conf_namepat_compile(const char *list, struct conf_namepat **out,
	    char *hint, size_t cap);
void	conf_namepat_free(struct conf_namepat *);
int	conf_namepat_match(const struct conf_namepat *, const char *name,
	    size_t len, int case_sensitive);
int	conf_namepat_path(const struct conf_namepat *, const char *path,
	    int case_sensitive);
int	conf_share_namepats(struct conf_share *, char *hint, size_t cap);
/*
 * The fruit keys of a share once it has all its values
 * (daemon/conf_fruit.c): fruit from vfs objects, the time machine size
 * (Samba's K, M, G, T suffixes).  0, or -1 with a reason in why.
 */
int	conf_fruit_check(struct conf_share *, char *why, size_t cap);
/*
 * The DFS keys of a share (daemon/conf_dfs.c): msdfs proxy names at least
 * one \server\share (an empty value: none).  0, or -1 with why.
 */
int	conf_dfs_check(struct conf_share *, char *why, size_t cap);

/*
 * Samba's hosts allow / hosts deny rule (daemon/conf_hosts.c) for a
 * numeric address text: 1 let in, 0 refused.  NULL lists allow all.
 */
int	conf_peer_allowed(char *const *allow, char *const *deny, const char *addr);
/* A numeric address into 16 bytes (v4 in the first 4): its family, or 0. */
int	conf_parse_addr(const char *s, uint8_t out[16]);

/*
 * One `hosts allow` / `hosts deny` item (daemon/conf_hosts.c), the one
 * grammar of the load check and the matcher: ALL; localhost (127.0.0.1
 * and ::1); an address; address/bits; v4 address/contiguous dotted mask;
 * "[v6 address]" and "[v6 address]/bits"; a v4 prefix of whole octets
 * ("10.1." = 10.1.0.0/16); a v6 prefix of whole groups ("fe80:" =
 * fe80::/16).  ::ffff:a.b.c.d is taken as a.b.c.d.  0, or -1.
 */
enum { CONF_HOSTPAT_NET, CONF_HOSTPAT_ALL, CONF_HOSTPAT_LOCALHOST };
struct conf_hostpat {
	int		kind;		/* CONF_HOSTPAT_* */
	int		family;		/* NET: AF_INET or AF_INET6 */
	uint8_t		addr[16];
	int		bits;
};
int	conf_hostpat_parse(const char *s, struct conf_hostpat *hp);

struct sockaddr;
/*
 * A socket address as the text conf_peer_allowed judges (a v4-mapped v6
 * address as v4): 0, or -1 with "?" written (not AF_INET or AF_INET6).
 */
int	conf_addr_text(const struct sockaddr *, char *buf, size_t cap);

#endif
