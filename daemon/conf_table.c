/*
 * The directive table: every configuration key with its section, type,
 * field, limits and values (daemon/conf_int.h).  Keys keep Samba's
 * spelling; aliases follow the key they stand for.
 */
#include "daemon/conf.h"
#include "daemon/conf_int.h"

#include <stddef.h>

static const struct conf_enum conf_signing_vals[] = {
	{ "auto", SIGNING_AUTO }, { "default", SIGNING_AUTO },
	{ "if_required", SIGNING_AUTO }, { "desired", SIGNING_AUTO },
	{ "yes", SIGNING_AUTO }, { "true", SIGNING_AUTO }, { "on", SIGNING_AUTO },
	{ "1", SIGNING_AUTO }, { "enabled", SIGNING_AUTO },
	{ "mandatory", SIGNING_MANDATORY }, { "required", SIGNING_MANDATORY },
	{ "force", SIGNING_MANDATORY }, { "forced", SIGNING_MANDATORY },
	{ "enforced", SIGNING_MANDATORY },
	{ "disabled", SIGNING_DISABLED }, { "no", SIGNING_DISABLED },
	{ "false", SIGNING_DISABLED }, { "off", SIGNING_DISABLED },
	{ "0", SIGNING_DISABLED },
	{ NULL, 0 }
};

static const struct conf_enum conf_encrypt_vals[] = {
	{ "off", ENCRYPT_OFF }, { "no", ENCRYPT_OFF }, { "false", ENCRYPT_OFF },
	{ "0", ENCRYPT_OFF }, { "disabled", ENCRYPT_OFF },
	{ "if_required", ENCRYPT_IF_REQUIRED }, { "auto", ENCRYPT_IF_REQUIRED },
	{ "default", ENCRYPT_IF_REQUIRED }, { "yes", ENCRYPT_IF_REQUIRED },
	{ "true", ENCRYPT_IF_REQUIRED }, { "on", ENCRYPT_IF_REQUIRED },
	{ "1", ENCRYPT_IF_REQUIRED }, { "enabled", ENCRYPT_IF_REQUIRED },
	{ "desired", ENCRYPT_DESIRED },
	{ "required", ENCRYPT_REQUIRED }, { "mandatory", ENCRYPT_REQUIRED },
	{ "force", ENCRYPT_REQUIRED }, { "forced", ENCRYPT_REQUIRED },
	{ "enforced", ENCRYPT_REQUIRED },
	{ NULL, 0 }
};

static const struct conf_enum conf_map_guest_vals[] = {
	{ "never", MAP_GUEST_NEVER }, { "bad user", MAP_GUEST_BAD_USER },
	{ NULL, 0 }
};

static const struct conf_enum conf_krb_method_vals[] = {
	{ "default", KRB_METHOD_OFF }, { "secrets only", KRB_METHOD_OFF },
	{ "system keytab", KRB_METHOD_SYSTEM },
	{ "secrets and keytab", KRB_METHOD_SYSTEM },
	{ "dedicated keytab", KRB_METHOD_DEDICATED },
	{ NULL, 0 }
};

/* Samba's `ntlm auth` values; the NTLMv1 ones mean NTLMv2 here (no v1). */
static const struct conf_enum conf_ntlm_auth_vals[] = {
	{ "yes", 0 }, { "ntlmv2-only", 0 }, { "ntlmv1-permitted", 0 },
	{ "mschapv2-and-ntlmv2-only", 0 }, { "true", 0 }, { "on", 0 },
	{ "1", 0 },
	{ "no", 1 }, { "disabled", 1 }, { "false", 1 }, { "off", 1 }, { "0", 1 },
	{ NULL, 0 }
};

/* The state's data envs: a power of two (shm/shm.h, SHM_PARTS_MAX). */
static const struct conf_enum conf_parts_vals[] = {
	{ "1", 1 }, { "2", 2 }, { "4", 4 }, { "8", 8 }, { "16", 16 },
	{ "32", 32 }, { "64", 64 },
	{ NULL, 0 }
};

/* Samba's `mangled names` (worker/shortname.h). */
static const struct conf_enum conf_mangled_vals[] = {
	{ "no", MANGLED_NAMES_NO }, { "false", MANGLED_NAMES_NO },
	{ "0", MANGLED_NAMES_NO },
	{ "illegal", MANGLED_NAMES_ILLEGAL },
	{ "yes", MANGLED_NAMES_YES }, { "true", MANGLED_NAMES_YES },
	{ "1", MANGLED_NAMES_YES },
	{ NULL, 0 }
};

/* Samba's protocol names; the first spelling of a dialect is the one printed. */
const struct conf_enum conf_proto_vals[] = {
	{ "SMB2_02", DIALECT_202 }, { "SMB2_10", DIALECT_210 },
	{ "SMB3_00", DIALECT_300 }, { "SMB3_02", DIALECT_302 },
	{ "SMB3_11", DIALECT_311 }, { "SMB2", DIALECT_210 },
	{ "SMB2_22", DIALECT_300 }, { "SMB2_24", DIALECT_300 },
	{ "SMB3", DIALECT_311 },
	{ NULL, 0 }
};

/* Samba's vfs_fruit enums */
static const struct conf_enum conf_fruit_rsrc_vals[] = {
	{ "file", FRUIT_RSRC_FILE }, { "stream", FRUIT_RSRC_STREAM },
	{ "xattr", FRUIT_RSRC_XATTR },
	{ NULL, 0 }
};

static const struct conf_enum conf_fruit_meta_vals[] = {
	{ "netatalk", FRUIT_META_NETATALK }, { "stream", FRUIT_META_STREAM },
	{ NULL, 0 }
};

static const struct conf_enum conf_fruit_locking_vals[] = {
	{ "none", 0 }, { "netatalk", 1 },
	{ NULL, 0 }
};

static const struct conf_enum conf_fruit_encoding_vals[] = {
	{ "private", 0 }, { "native", 1 },
	{ NULL, 0 }
};

#define G(f)	offsetof(struct conf, f)
#define S(f)	offsetof(struct conf_share, f)

const struct conf_directive conf_directives[] = {
	{ "smb ports", D_PORTS, CONF_GLOBAL, G(ports), 0, 0, NULL, 0 },
	{ "interfaces", D_IFACES, CONF_GLOBAL, G(interfaces), 0, 0, NULL, 0 },
	{ "pid directory", D_PATH, CONF_GLOBAL, G(pid_dir), 0, 0, NULL, 0 },
	{ "lock directory", D_PATH, CONF_GLOBAL, G(lock_dir), 0, 0, NULL, 0 },
	{ "lock dir", D_PATH, CONF_GLOBAL | CONF_ALIAS, G(lock_dir), 0, 0, NULL, 0 },
	{ "private dir", D_PATH, CONF_GLOBAL, G(private_dir), 0, 0, NULL, 0 },
	{ "log file", D_PATH, CONF_GLOBAL | CONF_EMPTY_OK, G(log_file), 0, 0, NULL, 0 },
	{ "log level", D_LOGLEVEL, CONF_GLOBAL, G(log_level), 0, 10, NULL, 0 },
	{ "debuglevel", D_LOGLEVEL, CONF_GLOBAL | CONF_ALIAS, G(log_level), 0, 10, NULL, 0 },
	{ "server min protocol", D_PROTO, CONF_GLOBAL, G(min_protocol), 0, 0, conf_proto_vals, 0 },
	{ "min protocol", D_PROTO, CONF_GLOBAL | CONF_ALIAS, G(min_protocol), 0, 0, conf_proto_vals, 0 },
	{ "server max protocol", D_PROTO, CONF_GLOBAL, G(max_protocol), 0, 0, conf_proto_vals, 0 },
	{ "max protocol", D_PROTO, CONF_GLOBAL | CONF_ALIAS, G(max_protocol), 0, 0, conf_proto_vals, 0 },
	{ "protocol", D_PROTO, CONF_GLOBAL | CONF_ALIAS, G(max_protocol), 0, 0, conf_proto_vals, 0 },
	{ "server signing", D_ENUM, CONF_GLOBAL, G(server_signing), 0, 0, conf_signing_vals, 0 },
	{ "smb encrypt", D_ENUM, CONF_GLOBAL, G(smb_encrypt), 0, 0, conf_encrypt_vals, 0 },
	{ "guest account", D_STR, CONF_GLOBAL, G(guest_account), 0, 0, NULL, 0 },
	{ "map to guest", D_ENUM, CONF_GLOBAL, G(map_to_guest), 0, 0, conf_map_guest_vals, 0 },
	{ "hosts allow", D_HOSTS, CONF_GLOBAL, G(hosts_allow), 0, 0, NULL, 0 },
	{ "allow hosts", D_HOSTS, CONF_GLOBAL | CONF_ALIAS, G(hosts_allow), 0, 0, NULL, 0 },
	{ "hosts deny", D_HOSTS, CONF_GLOBAL, G(hosts_deny), 0, 0, NULL, 0 },
	{ "deny hosts", D_HOSTS, CONF_GLOBAL | CONF_ALIAS, G(hosts_deny), 0, 0, NULL, 0 },
	{ "netbios name", D_NAME15, CONF_GLOBAL, G(netbios_name), 0, 0, NULL, 0 },
	{ "workgroup", D_NAME15, CONF_GLOBAL, G(workgroup), 0, 0, NULL, 0 },
	{ "server string", D_STR, CONF_GLOBAL | CONF_EMPTY_OK, G(server_string), 0, 0, NULL, 0 },
	{ "gate processes", D_INT, CONF_GLOBAL, G(gate_processes), 1, 64, NULL, 0 },
	{ "max gate processes", D_INT, CONF_GLOBAL, G(max_gate_processes), 1, 64, NULL, 0 },
	{ "max workers per user", D_INT, CONF_GLOBAL, G(max_workers_per_user), 1, 64, NULL, 0 },
	{ "worker idle timeout", D_INT, CONF_GLOBAL, G(worker_idle_timeout), 1, 86400, NULL, 0 },
	{ "state map size", D_SIZE, CONF_GLOBAL, G(state_map_size), 0, 0, NULL, 0 },
	{ "state partitions", D_ENUM, CONF_GLOBAL, G(state_partitions), 0, 0, conf_parts_vals, 0 },
	{ "min password length", D_INT, CONF_GLOBAL, G(min_password_length), 0, 256, NULL, 0 },
	/* Denial of service by one user, or none (issue 20): README "Limits". */
	{ "max open files", D_INT, CONF_GLOBAL, G(max_open_files), 16, 1048576, NULL, 0 },
	{ "max opens per connection", D_INT, CONF_GLOBAL, G(max_opens_per_conn), 1, 1024, NULL, 0 },
	{ "max locks per user", D_INT, CONF_GLOBAL, G(max_locks_per_user), 1, 1048576, NULL, 0 },
	{ "max locks per open", D_INT, CONF_GLOBAL, G(max_locks_per_open), 1, 65535, NULL, 0 },
	{ "max locks per file", D_INT, CONF_GLOBAL, G(max_locks_per_file), 1, 65535, NULL, 0 },
	{ "server admin group", D_STR, CONF_GLOBAL | CONF_EMPTY_OK, G(admin_group), 0, 0, NULL, 0 },
	{ "restrict anonymous", D_INT, CONF_GLOBAL, G(restrict_anonymous), 0, 2, NULL, 0 },
	/* Kerberos (issue 15): README "Kerberos". */
	{ "realm", D_STR, CONF_GLOBAL | CONF_EMPTY_OK, G(realm), 0, 0, NULL, 0 },
	{ "kerberos method", D_ENUM, CONF_GLOBAL, G(kerberos_method), 0, 0, conf_krb_method_vals, 0 },
	{ "dedicated keytab file", D_PATH, CONF_GLOBAL | CONF_EMPTY_OK, G(dedicated_keytab), 0, 0, NULL, 0 },
	{ "username map", D_PATH, CONF_GLOBAL | CONF_EMPTY_OK, G(username_map), 0, 0, NULL, 0 },
	{ "ntlm auth", D_ENUM, CONF_GLOBAL, G(ntlm_disabled), 0, 0, conf_ntlm_auth_vals, 0 },
	{ "smb3 unix extensions", D_BOOL, CONF_GLOBAL, G(smb3_unix_extensions), 0, 0, NULL, 0 },
	{ "smb3 directory leases", D_BOOL, CONF_GLOBAL, G(smb3_directory_leases), 0, 0, NULL, 0 },
	{ "change notify", D_BOOL, CONF_GLOBAL, G(change_notify), 0, 0, NULL, 0 },
	{ "smb2 leases", D_BOOL, CONF_GLOBAL, G(smb2_leases), 0, 0, NULL, 0 },
	/* Several users on one connection (HACKING.md's security model). */
	{ "relay sealed sessions", D_BOOL, CONF_GLOBAL, G(relay_sealed_sessions), 0, 0, NULL, 0 },
	/* macOS clients (worker/fruit.h): Samba's global vfs_fruit keys. */
	{ "fruit:aapl", D_BOOL, CONF_GLOBAL, G(fruit_aapl), 0, 0, NULL, 0 },
	{ "fruit:model", D_STR, CONF_GLOBAL | CONF_EMPTY_OK, G(fruit_model), 0, 0, NULL, 0 },
	{ "fruit:copyfile", D_BOOL, CONF_GLOBAL, G(fruit_copyfile), 0, 0, NULL, 0 },
	{ "fruit:nfs_aces", D_BOOL, CONF_GLOBAL, G(fruit_nfs_aces), 0, 0, NULL, 0 },
	/* DFS (worker/dfs.h): Samba's key. */
	{ "host msdfs", D_BOOL, CONF_GLOBAL, G(host_msdfs), 0, 0, NULL, 0 },
	/* SMB 3.1.1 compression (worker/compress.h). */
	{ "smb compression", D_BOOL, CONF_GLOBAL, G(smb_compression), 0, 0, NULL, 0 },

	{ "path", D_PATH, CONF_SHARE | CONF_EMPTY_OK, S(path), 0, 0, NULL, CONF_SB_PATH },
	{ "directory", D_PATH, CONF_SHARE | CONF_ALIAS, S(path), 0, 0, NULL, CONF_SB_PATH },
	{ "comment", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(comment), 0, 0, NULL, CONF_SB_COMMENT },
	{ "read only", D_BOOL, CONF_SHARE, S(read_only), 0, 0, NULL, CONF_SB_READ_ONLY },
	{ "writable", D_BOOL, CONF_SHARE | CONF_ALIAS | CONF_INVERT, S(read_only), 0, 0, NULL, CONF_SB_READ_ONLY },
	{ "writeable", D_BOOL, CONF_SHARE | CONF_ALIAS | CONF_INVERT, S(read_only), 0, 0, NULL, CONF_SB_READ_ONLY },
	{ "write ok", D_BOOL, CONF_SHARE | CONF_ALIAS | CONF_INVERT, S(read_only), 0, 0, NULL, CONF_SB_READ_ONLY },
	{ "browseable", D_BOOL, CONF_SHARE, S(browseable), 0, 0, NULL, CONF_SB_BROWSEABLE },
	{ "browsable", D_BOOL, CONF_SHARE | CONF_ALIAS, S(browseable), 0, 0, NULL, CONF_SB_BROWSEABLE },
	{ "valid users", D_USERS, CONF_SHARE, S(valid_users), 0, 0, NULL, CONF_SB_VALID_USERS },
	{ "invalid users", D_USERS, CONF_SHARE, S(invalid_users), 0, 0, NULL, CONF_SB_INVALID_USERS },
	{ "guest ok", D_BOOL, CONF_SHARE, S(guest_ok), 0, 0, NULL, CONF_SB_GUEST_OK },
	{ "public", D_BOOL, CONF_SHARE | CONF_ALIAS, S(guest_ok), 0, 0, NULL, CONF_SB_GUEST_OK },
	{ "smb encrypt", D_ENUM, CONF_SHARE, S(smb_encrypt), 0, 0, conf_encrypt_vals, CONF_SB_ENCRYPT },
	{ "case sensitive", D_BOOL, CONF_SHARE, S(case_sensitive), 0, 0, NULL, CONF_SB_CASE },
	{ "smb3 unix extensions", D_BOOL, CONF_SHARE, S(smb3_unix_extensions), 0, 0, NULL, CONF_SB_UNIX_EXT },
	{ "casesignames", D_BOOL, CONF_SHARE | CONF_ALIAS, S(case_sensitive), 0, 0, NULL, CONF_SB_CASE },
	{ "create mask", D_MODE, CONF_SHARE, S(create_mask), 0, 07777, NULL, CONF_SB_CREATE_MASK },
	{ "create mode", D_MODE, CONF_SHARE | CONF_ALIAS, S(create_mask), 0, 07777, NULL, CONF_SB_CREATE_MASK },
	{ "directory mask", D_MODE, CONF_SHARE, S(directory_mask), 0, 07777, NULL, CONF_SB_DIR_MASK },
	{ "directory mode", D_MODE, CONF_SHARE | CONF_ALIAS, S(directory_mask), 0, 07777, NULL, CONF_SB_DIR_MASK },
	{ "force create mode", D_MODE, CONF_SHARE, S(force_create_mode), 0, 07777, NULL, CONF_SB_FORCE_CREATE },
	{ "force directory mode", D_MODE, CONF_SHARE, S(force_directory_mode), 0, 07777, NULL, CONF_SB_FORCE_DIR },
	{ "inherit permissions", D_BOOL, CONF_SHARE, S(inherit_permissions), 0, 0, NULL, CONF_SB_INHERIT_PERMS },
	/* The share's own; [global]'s (above) are judged on accept. */
	{ "hosts allow", D_HOSTS, CONF_SHARE, S(hosts_allow), 0, 0, NULL, CONF_SB_HOSTS_ALLOW },
	{ "allow hosts", D_HOSTS, CONF_SHARE | CONF_ALIAS, S(hosts_allow), 0, 0, NULL, CONF_SB_HOSTS_ALLOW },
	{ "hosts deny", D_HOSTS, CONF_SHARE, S(hosts_deny), 0, 0, NULL, CONF_SB_HOSTS_DENY },
	{ "deny hosts", D_HOSTS, CONF_SHARE | CONF_ALIAS, S(hosts_deny), 0, 0, NULL, CONF_SB_HOSTS_DENY },
	/* Previous versions: Samba's shadow_copy2 shadow:snapdir and shadow:format. */
	{ "snapshot directory", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(snapshot_dir), 0, 0, NULL, CONF_SB_SNAP_DIR },
	{ "snapshot format", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(snapshot_format), 0, 0, NULL, CONF_SB_SNAP_FORMAT },
	/* Per-user access and access-based enumeration (daemon/conf.h). */
	{ "read list", D_USERS, CONF_SHARE, S(read_list), 0, 0, NULL, CONF_SB_READ_LIST },
	{ "write list", D_USERS, CONF_SHARE, S(write_list), 0, 0, NULL, CONF_SB_WRITE_LIST },
	{ "access based share enum", D_BOOL, CONF_SHARE, S(access_based_share_enum), 0, 0, NULL, CONF_SB_ABSE },
	{ "hide unreadable", D_BOOL, CONF_SHARE, S(hide_unreadable), 0, 0, NULL, CONF_SB_HIDE_UNREADABLE },
	/* Recycle bin (worker/recycle.h): Samba's vfs_recycle recycle:* options. */
	{ "recycle directory", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(recycle_dir), 0, 0, NULL, CONF_SB_RECYCLE_DIR },
	{ "recycle keep tree", D_BOOL, CONF_SHARE, S(recycle_keep_tree), 0, 0, NULL, CONF_SB_RECYCLE_TREE },
	{ "recycle versions", D_BOOL, CONF_SHARE, S(recycle_versions), 0, 0, NULL, CONF_SB_RECYCLE_VERSIONS },
	{ "recycle touch", D_BOOL, CONF_SHARE, S(recycle_touch), 0, 0, NULL, CONF_SB_RECYCLE_TOUCH },
	{ "recycle exclude", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(recycle_exclude), 0, 0, NULL, CONF_SB_RECYCLE_EXCL },
	{ "recycle exclude dir", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(recycle_exclude_dir), 0, 0, NULL, CONF_SB_RECYCLE_EXCL_DIR },
	{ "recycle max size", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(recycle_max_size_s), 0, 0, NULL, CONF_SB_RECYCLE_MAX },
	{ "recycle directory mode", D_MODE, CONF_SHARE, S(recycle_dir_mode), 0, 07777, NULL, CONF_SB_RECYCLE_MODE },
	/* Name rules (worker/namerule.c), Samba's keys and syntax. */
	{ "veto files", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(veto_files), 0, 0, NULL, CONF_SB_VETO_FILES },
	{ "delete veto files", D_BOOL, CONF_SHARE, S(delete_veto_files), 0, 0, NULL, CONF_SB_DELETE_VETO },
	{ "hide files", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(hide_files), 0, 0, NULL, CONF_SB_HIDE_FILES },
	{ "hide dot files", D_BOOL, CONF_SHARE, S(hide_dot_files), 0, 0, NULL, CONF_SB_HIDE_DOT },
	/* Caching kept from clients, Samba's keys (daemon/conf.h). */
	{ "oplocks", D_BOOL, CONF_SHARE, S(oplocks), 0, 0, NULL, CONF_SB_OPLOCKS },
	{ "level2 oplocks", D_BOOL, CONF_SHARE, S(level2_oplocks), 0, 0, NULL, CONF_SB_LEVEL2 },
	{ "veto oplock files", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(veto_oplock_files), 0, 0, NULL, CONF_SB_VETO_OPLOCK },
	/* 8.3 short names (worker/shortname.h), Samba's key and values. */
	{ "mangled names", D_ENUM, CONF_SHARE, S(mangled_names), 0, 0, conf_mangled_vals, CONF_SB_MANGLED_NAMES },
	/* Extended attributes served (worker/smb2_ea.c), Samba's key. */
	{ "ea support", D_BOOL, CONF_SHARE, S(ea_support), 0, 0, NULL, CONF_SB_EA_SUPPORT },
	/* Tree connects to the share across the server (worker/state_tree.c); 0: no limit. */
	{ "max connections", D_INT, CONF_SHARE, S(max_connections), 0, 1000000, NULL, CONF_SB_MAX_CONN },
	/* macOS clients (worker/fruit.h): Samba's vfs objects and fruit:*. */
	{ "vfs objects", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(vfs_objects), 0, 0, NULL, CONF_SB_VFS_OBJECTS },
	{ "vfs object", D_STR, CONF_SHARE | CONF_EMPTY_OK | CONF_ALIAS, S(vfs_objects), 0, 0, NULL, CONF_SB_VFS_OBJECTS },
	{ "fruit:resource", D_ENUM, CONF_SHARE, S(fruit_resource), 0, 0, conf_fruit_rsrc_vals, CONF_SB_FRUIT_RSRC },
	{ "fruit:metadata", D_ENUM, CONF_SHARE, S(fruit_metadata), 0, 0, conf_fruit_meta_vals, CONF_SB_FRUIT_META },
	{ "fruit:locking", D_ENUM, CONF_SHARE, S(fruit_locking), 0, 0, conf_fruit_locking_vals, CONF_SB_FRUIT_LOCKING },
	{ "fruit:encoding", D_ENUM, CONF_SHARE, S(fruit_encoding), 0, 0, conf_fruit_encoding_vals, CONF_SB_FRUIT_ENCODING },
	{ "fruit:time machine", D_BOOL, CONF_SHARE, S(fruit_time_machine), 0, 0, NULL, CONF_SB_FRUIT_TM },
	{ "fruit:time machine max size", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(fruit_tm_max_size_s), 0, 0, NULL, CONF_SB_FRUIT_TM_SIZE },
	{ "fruit:zero_file_id", D_BOOL, CONF_SHARE, S(fruit_zero_file_id), 0, 0, NULL, CONF_SB_FRUIT_ZERO_FID },
	{ "fruit:validate_afpinfo", D_BOOL, CONF_SHARE, S(fruit_validate_afpinfo), 0, 0, NULL, CONF_SB_FRUIT_VALIDATE },
	{ "fruit:veto_appledouble", D_BOOL, CONF_SHARE, S(fruit_veto_appledouble), 0, 0, NULL, CONF_SB_FRUIT_VETO_AD },
	{ "fruit:posix_rename", D_BOOL, CONF_SHARE, S(fruit_posix_rename), 0, 0, NULL, CONF_SB_FRUIT_POSIX_RENAME },
	{ "fruit:wipe_intentionally_left_blank_rfork", D_BOOL, CONF_SHARE, S(fruit_wipe_blank_rfork), 0, 0, NULL, CONF_SB_FRUIT_WIPE_RFORK },
	{ "fruit:delete_empty_adfiles", D_BOOL, CONF_SHARE, S(fruit_delete_empty_adfiles), 0, 0, NULL, CONF_SB_FRUIT_DELETE_EMPTY_AD },
	{ "fruit:convert_adouble", D_BOOL, CONF_SHARE, S(fruit_convert_adouble), 0, 0, NULL, CONF_SB_FRUIT_CONVERT_AD },
	/* DFS (worker/dfs.h): Samba's msdfs root and msdfs proxy. */
	{ "msdfs root", D_BOOL, CONF_SHARE, S(msdfs_root), 0, 0, NULL, CONF_SB_MSDFS_ROOT },
	{ "msdfs proxy", D_STR, CONF_SHARE | CONF_EMPTY_OK, S(msdfs_proxy), 0, 0, NULL, CONF_SB_MSDFS_PROXY },
	/* SMB2_SHAREFLAG_COMPRESS_DATA (worker/compress.h). */
	{ "compress data", D_BOOL, CONF_SHARE, S(compress_data), 0, 0, NULL, CONF_SB_COMPRESS_DATA },
	{ NULL, 0, 0, 0, 0, 0, NULL, 0 }
};

#undef G
#undef S
