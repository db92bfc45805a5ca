/*
 * Internals shared by daemon/conf.c (parser), daemon/conf_table.c (the
 * directive table), daemon/conf_dump.c (printer) and daemon/conf_access.c
 * (hosts allow / valid users).  Not part of the configuration interface:
 * use daemon/conf.h.
 */
#ifndef USMBD_DAEMON_CONF_INT_H
#define USMBD_DAEMON_CONF_INT_H

#include <stddef.h>

#include "daemon/conf.h"

enum conf_dtype {
	D_BOOL, D_INT, D_STR, D_PATH, D_USERS, D_HOSTS, D_MODE, D_ENUM,
	D_SIZE, D_PROTO, D_PORTS, D_IFACES, D_LOGLEVEL, D_NAME15
};

/* conf_directive.scope bits */
#define CONF_GLOBAL	0x01
#define CONF_SHARE	0x02
#define CONF_ALIAS	0x04	/* another spelling; not printed */
#define CONF_INVERT	0x08	/* boolean with the opposite sense (writable) */
#define CONF_EMPTY_OK	0x10	/* an empty value is allowed (NULL for paths) */

/* Share directives: bit numbers of "set explicitly" masks. */
enum {
	CONF_SB_PATH, CONF_SB_COMMENT, CONF_SB_READ_ONLY, CONF_SB_BROWSEABLE,
	CONF_SB_VALID_USERS, CONF_SB_INVALID_USERS, CONF_SB_GUEST_OK,
	CONF_SB_ENCRYPT, CONF_SB_CASE, CONF_SB_CREATE_MASK, CONF_SB_DIR_MASK,
	CONF_SB_UNIX_EXT, CONF_SB_SNAP_DIR, CONF_SB_SNAP_FORMAT,
	CONF_SB_READ_LIST, CONF_SB_WRITE_LIST, CONF_SB_ABSE, CONF_SB_HIDE_UNREADABLE,
	CONF_SB_RECYCLE_DIR, CONF_SB_RECYCLE_TREE, CONF_SB_RECYCLE_VERSIONS,
	CONF_SB_RECYCLE_TOUCH, CONF_SB_RECYCLE_EXCL, CONF_SB_RECYCLE_EXCL_DIR,
	CONF_SB_RECYCLE_MAX, CONF_SB_RECYCLE_MODE,
	CONF_SB_VETO_FILES, CONF_SB_DELETE_VETO, CONF_SB_HIDE_FILES,
	CONF_SB_HIDE_DOT, CONF_SB_FORCE_CREATE, CONF_SB_FORCE_DIR,
	CONF_SB_INHERIT_PERMS, CONF_SB_HOSTS_ALLOW, CONF_SB_HOSTS_DENY,
	CONF_SB_OPLOCKS, CONF_SB_LEVEL2, CONF_SB_VETO_OPLOCK,
	CONF_SB_MANGLED_NAMES,
	CONF_SB_MAX_CONN,
	CONF_SB_VFS_OBJECTS, CONF_SB_FRUIT_RSRC, CONF_SB_FRUIT_META,
	CONF_SB_FRUIT_LOCKING, CONF_SB_FRUIT_ENCODING, CONF_SB_FRUIT_TM,
	CONF_SB_FRUIT_TM_SIZE, CONF_SB_FRUIT_ZERO_FID, CONF_SB_FRUIT_VALIDATE,
	CONF_SB_FRUIT_VETO_AD, CONF_SB_FRUIT_POSIX_RENAME,
	CONF_SB_FRUIT_WIPE_RFORK, CONF_SB_FRUIT_DELETE_EMPTY_AD,
	CONF_SB_FRUIT_CONVERT_AD,
	CONF_SB_EA_SUPPORT,
	CONF_SB_MSDFS_ROOT, CONF_SB_MSDFS_PROXY,
	CONF_SB_COMPRESS_DATA
};

struct conf_enum {
	const char	*name;
	int		 value;
};

struct conf_directive {
	const char	*name;		/* Samba's spelling, as printed */
	int		 type;		/* enum conf_dtype */
	int		 scope;		/* CONF_* bits */
	size_t		 off;		/* in struct conf or struct conf_share */
	int		 min, max;
	const struct conf_enum *vals;
	int		 bit;		/* CONF_SB_* for share directives */
};

extern const struct conf_directive conf_directives[];
/* The protocol names (server min/max protocol), in daemon/conf_table.c. */
extern const struct conf_enum conf_proto_vals[];

struct conf	*conf_defaults(void);
void		 conf_share_defaults(struct conf_share *);
const char	*conf_protocol_name(int dialect);
int		 conf_parse_bool(const char *);
/* daemon/conf_value.c: one value each; 0 or -1 (conf_set_str: -ENOMEM) */
int		 conf_is_smb1(const char *);
int		 conf_set_str(char **field, const char *value, int empty_null);
/* "64M", "1G", "1048576" (binary units), 1 MiB to 1 TiB */
int		 conf_parse_size(const char *, size_t *out);
int		 conf_parse_int(const char *, long min, long max, long *out);
/* "a, b, c": an enumeration's names, each value once, for messages */
void		 conf_enum_hint(const struct conf_enum *, char *buf, size_t cap);
int		 conf_list_split(const char *, char ***out);
char		**conf_list_dup(char *const *);
void		 conf_list_free(char **);
/* Appends a copy of s[0..len) to the NULL-terminated list *lp of *n items. */
int		 conf_list_add(char ***lp, int *n, const char *s, size_t len);
/* Adds the addresses an `interfaces` item stands for: 1, 0 (not an address
 * or a local interface) or -ENOMEM. */
int		 conf_iface_expand(const char *item, char ***lp, int *n);
/*
 * conf_list.c: `smb ports` into c->ports and `interfaces` into *field;
 * a bad value leaves them and says why in hint.  0 or -ENOMEM.
 */
int		 conf_set_ports(struct conf *c, const char *value, char *hint,
		    size_t cap);
int		 conf_set_ifaces(char ***field, const char *value, char *hint,
		    size_t cap);
/* Validate a list; on failure write the reason into hint and return -1. */
int		 conf_hosts_check(char *const *list, char *hint, size_t cap);
int		 conf_users_check(char *const *list, char *hint, size_t cap);
/*
 * daemon/conf_recycle.c: a share's recycle keys made ready (empty values
 * dropped, the maximum size parsed); -1 with the reason in why.
 */
int		 conf_recycle_check(struct conf_share *s, char *why, size_t cap);
/*
 * daemon/conf_subst.c: a share's path template (sets path_varies); 0,
 * -1 with the reason in why, or 1 with a warning in why (a letter Samba
 * substitutes and usmbd keeps as written).
 */
int		 conf_subst_check(struct conf_share *s, char *why, size_t cap);
/* daemon/conf_recycle.c: the snapshot directory (relative, inside). */
int		 conf_snapshot_check(struct conf_share *s, char *why, size_t cap);

#endif
