/*
 * Unit tests for daemon/conf.c: the smb.conf lexer, every value type, the
 * exact "FILE:LINE: ..." messages, defaults, and the conf_dump round trip.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/un.h>

#include "daemon/conf.h"
#include "t/unit/conf_test.h"

START_TEST(test_defaults)
{
	struct conf *c;

	ck_assert_int_eq(load("", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->nports, 1);
	ck_assert_uint_eq(c->ports[0], 445);
	ck_assert_ptr_null(c->interfaces);
	ck_assert_str_eq(c->pid_dir, "/run/usmbd");
	ck_assert_str_eq(c->lock_dir, "/run/usmbd");
	ck_assert_str_eq(c->private_dir, "/var/lib/usmbd/private");
	ck_assert_ptr_null(c->log_file);
	ck_assert_int_eq(c->log_level, 1);
	ck_assert_int_eq(c->min_protocol, DIALECT_202);
	ck_assert_int_eq(c->max_protocol, DIALECT_311);
	ck_assert_int_eq(c->server_signing, SIGNING_AUTO);
	ck_assert_int_eq(c->smb_encrypt, ENCRYPT_IF_REQUIRED);
	ck_assert_str_eq(c->guest_account, "nobody");
	ck_assert_int_eq(c->map_to_guest, MAP_GUEST_NEVER);
	ck_assert_ptr_null(c->hosts_allow);
	ck_assert_ptr_null(c->hosts_deny);
	ck_assert_ptr_nonnull(c->netbios_name);
	ck_assert_str_eq(c->workgroup, "WORKGROUP");
	ck_assert_str_eq(c->server_string, "usmbd");
	ck_assert_int_eq(c->gate_processes, 4);
	ck_assert_int_eq(c->max_workers_per_user, 1);
	ck_assert_int_eq(c->worker_idle_timeout, 60);
	ck_assert_uint_eq(c->state_map_size, 64u << 20);
	ck_assert_int_eq(c->state_partitions, 8);
	ck_assert_int_eq(c->min_password_length, 5);
	/* only the implicit IPC$ */
	ck_assert_int_eq(c->nshares, 1);
	ck_assert_int_eq(c->shares[0].is_ipc, 1);
	ck_assert_str_eq(c->shares[0].name, "IPC$");
	ck_assert_str_eq(c->shares[0].comment, "IPC Service (usmbd)");
	ck_assert_ptr_null(c->shares[0].path);
	conf_free(c);
}
END_TEST

START_TEST(test_full)
{
	struct conf *c;
	const struct conf_share *s;

	ck_assert_int_eq(load(
	    "# a comment\n"
	    "; another comment\n"
	    "[global]\n"
	    "  smb ports = 4450 4451\n"
	    "  interfaces = 127.0.0.1, ::1\n"
	    "  PID Directory = /tmp/p\n"
	    "  lock_directory = /tmp/l\n"
	    "  privatedir = /tmp/priv\n"
	    "  log file = /tmp/log\n"
	    "  log level = 3\n"
	    "  server min protocol = SMB2_10\n"
	    "  server max protocol = SMB3\n"
	    "  server signing = mandatory\n"
	    "  smb encrypt = desired\n"
	    "  guest account = guesty\n"
	    "  map to guest = Bad User\n"
	    "  hosts allow = 127.0.0.1 10.0.0.0/8 EXCEPT 10.1.1.1\n"
	    "  hosts deny = ALL\n"
	    "  netbios name = fileserver\n"
	    "  workgroup = office\n"
	    "  server string = Files on %h\n"
	    "  gate processes = 2\n"
	    "  max workers per user = 3\n"
	    "  worker idle timeout = 30\n"
	    "  state map size = 128M\n"
	    "  min password length = 12\n"
	    "[Data]\n"
	    "  path = /srv/data\n"
	    "  comment = Shared data\n"
	    "  writable = yes\n"
	    "  browsable = no\n"
	    "  valid users = alice, @staff \"Domain Users\"\n"
	    "  invalid users = root\n"
	    "  public = yes\n"
	    "  smb encrypt = required\n"
	    "  case sensitive = true\n"
	    "  create mode = 0640\n"
	    "  directory mask = 750\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->nports, 2);
	ck_assert_uint_eq(c->ports[0], 4450);
	ck_assert_uint_eq(c->ports[1], 4451);
	ck_assert_str_eq(c->interfaces[0], "127.0.0.1");
	ck_assert_str_eq(c->interfaces[1], "::1");
	ck_assert_ptr_null(c->interfaces[2]);
	ck_assert_str_eq(c->pid_dir, "/tmp/p");
	ck_assert_str_eq(c->lock_dir, "/tmp/l");
	ck_assert_str_eq(c->private_dir, "/tmp/priv");
	ck_assert_str_eq(c->log_file, "/tmp/log");
	ck_assert_int_eq(c->log_level, 3);
	ck_assert_int_eq(c->min_protocol, DIALECT_210);
	ck_assert_int_eq(c->max_protocol, DIALECT_311);
	ck_assert_int_eq(c->server_signing, SIGNING_MANDATORY);
	ck_assert_int_eq(c->smb_encrypt, ENCRYPT_DESIRED);
	ck_assert_str_eq(c->guest_account, "guesty");
	ck_assert_int_eq(c->map_to_guest, MAP_GUEST_BAD_USER);
	ck_assert_str_eq(c->hosts_allow[2], "EXCEPT");
	ck_assert_str_eq(c->hosts_allow[3], "10.1.1.1");
	ck_assert_str_eq(c->hosts_deny[0], "ALL");
	ck_assert_str_eq(c->netbios_name, "FILESERVER");
	ck_assert_str_eq(c->workgroup, "OFFICE");
	ck_assert_str_eq(c->server_string, "Files on %h");
	ck_assert_int_eq(c->gate_processes, 2);
	ck_assert_int_eq(c->max_workers_per_user, 3);
	ck_assert_int_eq(c->worker_idle_timeout, 30);
	ck_assert_uint_eq(c->state_map_size, 128u << 20);
	ck_assert_int_eq(c->min_password_length, 12);
	ck_assert_int_eq(c->nshares, 2);

	s = conf_share_find(c, "data");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_eq(s, &c->shares[1]);
	ck_assert_str_eq(s->name, "Data");
	ck_assert_str_eq(s->path, "/srv/data");
	ck_assert_str_eq(s->comment, "Shared data");
	ck_assert_int_eq(s->read_only, 0);
	ck_assert_int_eq(s->browseable, 0);
	ck_assert_str_eq(s->valid_users[0], "alice");
	ck_assert_str_eq(s->valid_users[1], "@staff");
	ck_assert_str_eq(s->valid_users[2], "Domain Users");
	ck_assert_ptr_null(s->valid_users[3]);
	ck_assert_str_eq(s->invalid_users[0], "root");
	ck_assert_int_eq(s->guest_ok, 1);
	ck_assert_int_eq(s->smb_encrypt, ENCRYPT_REQUIRED);
	ck_assert_int_eq(s->case_sensitive, 1);
	ck_assert_uint_eq(s->create_mask, 0640);
	ck_assert_uint_eq(s->directory_mask, 0750);
	ck_assert_int_eq(s->is_ipc, 0);
	ck_assert_int_eq(s->line, 27);
	ck_assert_str_eq(s->file, path);
	ck_assert_ptr_eq(conf_share_find(c, "IPC$"), &c->shares[0]);
	ck_assert_ptr_null(conf_share_find(c, "nope"));
	ck_assert_str_eq(c->shares[0].comment, "IPC Service (Files on %h)");
	conf_free(c);
}
END_TEST

START_TEST(test_share_defaults_and_global_inherit)
{
	struct conf *c;

	ck_assert_int_eq(load(
	    "[global]\n"
	    "smb encrypt = off\n"
	    "read only = no\n"
	    "create mask = 0600\n"
	    "[a]\n"
	    "path = /a\n"
	    "[b]\n"
	    "path = /b\n"
	    "read only = yes\n"
	    "smb encrypt = required\n", &c), 0);
	ck_assert_str_eq(errs, "");
	/* built-in share defaults where nothing was said */
	ck_assert_int_eq(c->shares[1].browseable, 1);
	ck_assert_int_eq(c->shares[1].guest_ok, 0);
	ck_assert_int_eq(c->shares[1].case_sensitive, 0);
	ck_assert_uint_eq(c->shares[1].directory_mask, 0755);
	ck_assert_str_eq(c->shares[1].comment, "");
	ck_assert_ptr_null(c->shares[1].valid_users);
	/* share keys in [global] are every share's defaults */
	ck_assert_int_eq(c->shares[1].read_only, 0);
	ck_assert_uint_eq(c->shares[1].create_mask, 0600);
	ck_assert_int_eq(c->shares[1].smb_encrypt, ENCRYPT_OFF);
	/* and a share's own setting wins */
	ck_assert_int_eq(c->shares[2].read_only, 1);
	ck_assert_uint_eq(c->shares[2].create_mask, 0600);
	ck_assert_int_eq(c->shares[2].smb_encrypt, ENCRYPT_REQUIRED);
	conf_free(c);

	/* smb3 unix extensions: per share, the global value its default */
	ck_assert_int_eq(load("[a]\npath = /a\n[b]\npath = /b\n"
	    "smb3 unix extensions = no\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_int_eq(c->smb3_unix_extensions, 1);
	ck_assert_int_eq(c->shares[1].smb3_unix_extensions, 1);
	ck_assert_int_eq(c->shares[2].smb3_unix_extensions, 0);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nsmb3 unix extensions = no\n"
	    "[a]\npath = /a\n", &c), 0);
	ck_assert_int_eq(c->smb3_unix_extensions, 0);
	ck_assert_int_eq(c->shares[1].smb3_unix_extensions, 0);
	conf_free(c);

	/* read only defaults to yes, as in Samba */
	ck_assert_int_eq(load("[x]\npath = /x\n", &c), 0);
	ck_assert_int_eq(c->shares[1].read_only, 1);
	ck_assert_uint_eq(c->shares[1].create_mask, 0744);
	conf_free(c);
}
END_TEST

START_TEST(test_booleans)
{
	static const char *yes[] = { "yes", "YES", "true", "True", "1", "on", "On" };
	static const char *no[] = { "no", "No", "false", "FALSE", "0", "off" };
	char text[128];
	struct conf *c;
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		snprintf(text, sizeof(text), "[s]\npath = /s\nguest ok = %s\nwriteable = %s\n",
		    yes[i], yes[i]);
		ck_assert_int_eq(load(text, &c), 0);
		ck_assert_int_eq(c->shares[1].guest_ok, 1);
		ck_assert_int_eq(c->shares[1].read_only, 0);
		conf_free(c);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		snprintf(text, sizeof(text), "[s]\npath = /s\nguest ok = %s\nwrite ok = %s\n",
		    no[i], no[i]);
		ck_assert_int_eq(load(text, &c), 0);
		ck_assert_int_eq(c->shares[1].guest_ok, 0);
		ck_assert_int_eq(c->shares[1].read_only, 1);
		conf_free(c);
	}
	assert_fails("[s]\npath = /s\nread only = maybe\n",
	    "^:3: bad value 'maybe' for 'read only' (expected yes or no)\n");
	assert_fails("[s]\npath = /s\nbrowseable =\n",
	    "^:3: bad value '' for 'browseable' (expected yes or no)\n");
}
END_TEST

START_TEST(test_key_normalisation)
{
	struct conf *c;

	ck_assert_int_eq(load(
	    "[GLOBAL]\n"
	    "SMBPORTS = 1445\n"
	    "Server_Max_Protocol = smb3_02\n"
	    "gate\tprocesses = 7\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_uint_eq(c->ports[0], 1445);
	ck_assert_int_eq(c->max_protocol, DIALECT_302);
	ck_assert_int_eq(c->gate_processes, 7);
	conf_free(c);
}
END_TEST

START_TEST(test_continuation_and_comments)
{
	struct conf *c;

	ck_assert_int_eq(load(
	    "[global]\n"
	    "smb ports = 1000 \\\n"
	    "            2000 \\\n"
	    "   3000\n"
	    "# a comment ending in a backslash is not continued \\\n"
	    "workgroup = AFTER\n"
	    "[s]\n"
	    "path = /s\n"
	    "valid users = alice,\\\n"
	    "  bob\n"
	    "comment = value ; kept, as in Samba\n"
	    "read only = \\\n"
	    "no\n"
	    "server string = x\n", &c), 0);
	/* the last key is global in a share section: a warning with its line */
	assert_msgs("^:14: global key 'server string' in share [s] ignored\n");
	ck_assert_int_eq(c->nports, 3);
	ck_assert_uint_eq(c->ports[2], 3000);
	ck_assert_str_eq(c->workgroup, "AFTER");
	ck_assert_str_eq(c->shares[1].valid_users[0], "alice");
	ck_assert_str_eq(c->shares[1].valid_users[1], "bob");
	ck_assert_str_eq(c->shares[1].comment, "value ; kept, as in Samba");
	ck_assert_int_eq(c->shares[1].read_only, 0);
	conf_free(c);

	/* an error inside a continued line names the line where it started */
	assert_fails("[global]\n\nlog level = \\\n  eleven\n",
	    "^:3: bad value 'eleven' for 'log level' (expected a number from 0 to 10)\n");
	/* a continuation on the last line of the file still counts */
	ck_assert_int_eq(load("[global]\nworkgroup = LAST\\", &c), 0);
	ck_assert_str_eq(c->workgroup, "LAST");
	conf_free(c);
}
END_TEST

START_TEST(test_crlf_bom_and_keys_before_section)
{
	struct conf *c;

	ck_assert_int_eq(load("\xef\xbb\xbfworkgroup = EARLY\r\n[s]\r\npath = /s\r\n", &c), 0);
	ck_assert_str_eq(errs, "");
	ck_assert_str_eq(c->workgroup, "EARLY");
	ck_assert_str_eq(c->shares[1].path, "/s");
	conf_free(c);
}
END_TEST

START_TEST(test_unknown_keys_warn)
{
	struct conf *c;

	ck_assert_int_eq(load(
	    "[global]\n"
	    "security = user\n"
	    "[s]\n"
	    "path = /s\n"
	    "map archive = no\n"
	    "[homes]\n"
	    "browseable = no\n"
	    "[printers]\n"
	    "path = /var/spool\n", &c), 0);
	assert_msgs(
	    "^:2: unknown key 'security' ignored\n"
	    "^:5: unknown key 'map archive' ignored\n"
	    "^:8: section [printers] is not supported, ignored\n");
	/* [homes] is a section of its own (t/unit/check_subst.c) */
	ck_assert_int_eq(c->nshares, 3);
	ck_assert_int_eq(c->shares[2].is_homes, 1);
	conf_free(c);
}
END_TEST

START_TEST(test_syntax_errors)
{
	assert_fails("[global\n", "^:1: missing ']' in section header\n");
	assert_fails("[]\n", "^:1: empty section name\n");
	assert_fails("[  ]\n", "^:1: empty section name\n");
	assert_fails("[a] trailing\n", "^:1: unexpected text after ']'\n");
	assert_fails("[global]\njust words\n", "^:2: expected 'key = value' or '[section]'\n");
	assert_fails("[global]\n = 3\n", "^:2: missing key before '='\n");
	assert_fails("[bad/name]\npath = /x\n", "^:1: bad share name 'bad/name'\n");
	assert_fails("[s]\npath = /s\n[S]\npath = /t\n",
	    "^:3: duplicate share [S] (first defined at line 1)\n");
}
END_TEST

START_TEST(test_nul_byte)
{
	struct conf *c = (void *)1;
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fwrite("[global]\nworkgroup = a\0b\n", 1, 26, fp);
	fclose(fp);
	ck_assert_int_eq(conf_load(path, &c, NULL), 2);	/* no errf: silent */
	ck_assert_ptr_null(c);
	ck_assert_int_eq(load_bytes("[global]\nworkgroup = a\0b\nwork group = OK\n", 40, &c), 2);
	assert_msgs("^:2: NUL byte in line\n");
}
END_TEST

START_TEST(test_share_errors)
{
	assert_fails("[global]\nworkgroup = X\n\n[docs]\ncomment = no path\n",
	    "^:4: share [docs] has no path\n");
	assert_fails("[s]\npath = relative/dir\n",
	    "^:2: bad value 'relative/dir' for 'path' (expected an absolute path)\n"
	    "^:1: share [s] has no path\n");
	assert_fails("[s]\npath = /s\ncreate mask = 0999\n",
	    "^:3: bad value '0999' for 'create mask' (expected an octal mode such as 0755)\n");
	assert_fails("[s]\npath = /s\ndirectory mode = 17777\n",
	    "^:3: bad value '17777' for 'directory mode' (expected an octal mode such as 0755)\n");
	assert_fails("[s]\npath = /s\nvalid users = &netgroup\n",
	    "^:3: bad value '&netgroup' for 'valid users' (netgroups ('&netgroup') are not supported)\n");
	assert_fails("[s]\npath = /s\ninvalid users = \"open\n",
	    "^:3: bad value '\"open' for 'invalid users' (unterminated quote)\n");
	assert_fails("[s]\npath = /s\nvalid users = @\n",
	    "^:3: bad value '@' for 'valid users' ('@' names no user or group)\n");
	/* previous versions: a directory inside the share */
	assert_fails("[s]\npath = /s\nsnapshot directory = ../x\n",
	    "^:1: share [s]: snapshot directory '../x' must be a directory "
	    "inside the share, relative to its path\n");
	assert_fails("[s]\npath = /s\nsnapshot directory = /srv/snaps\n",
	    "^:1: share [s]: snapshot directory '/srv/snaps' must be a "
	    "directory inside the share, relative to its path\n");
	assert_fails("[s]\npath = /s\nsnapshot directory = a/../../b\n",
	    "^:1: share [s]: snapshot directory 'a/../../b' must be a "
	    "directory inside the share, relative to its path\n");
	{
		struct conf *c;

		ck_assert_int_eq(load("[global]\nsnapshot directory = .snap/\n"
		    "[s]\npath = /s\n[t]\npath = /t\nsnapshot directory =\n"
		    "[u]\npath = /u\nsnapshot format = daily-%Y%m%d\n", &c), 0);
		ck_assert_str_eq(c->shares[1].snapshot_dir, ".snap");
		ck_assert_ptr_null(c->shares[1].snapshot_format);
		ck_assert_ptr_null(c->shares[2].snapshot_dir);
		ck_assert_str_eq(c->shares[3].snapshot_dir, ".snap");
		ck_assert_str_eq(c->shares[3].snapshot_format, "daily-%Y%m%d");
		conf_free(c);
	}
	/* IPC$ needs no path */
	{
		struct conf *c;

		ck_assert_int_eq(load("[IPC$]\ncomment = pipes\n", &c), 0);
		ck_assert_int_eq(c->nshares, 1);
		ck_assert_str_eq(c->shares[0].comment, "pipes");
		conf_free(c);
	}
}
END_TEST

START_TEST(test_value_errors)
{
	assert_fails("[global]\nsmb ports = 0\n",
	    "^:2: bad value '0' for 'smb ports' ('0' is not a port number)\n");
	assert_fails("[global]\nsmb ports = 445 70000\n",
	    "^:2: bad value '445 70000' for 'smb ports' ('70000' is not a port number)\n");
	assert_fails("[global]\nsmb ports = 1 2 3 4 5 6 7 8 9\n",
	    "^:2: bad value '1 2 3 4 5 6 7 8 9' for 'smb ports' (at most 8 ports)\n");
	assert_fails("[global]\nsmb ports =\n",
	    "^:2: bad value '' for 'smb ports' (expected port numbers)\n");
	assert_fails("[global]\ngate processes = 0\n",
	    "^:2: bad value '0' for 'gate processes' (expected a number from 1 to 64)\n");
	assert_fails("[global]\nmax workers per user = 2x\n",
	    "^:2: bad value '2x' for 'max workers per user' (expected a number from 1 to 64)\n");
	assert_fails("[global]\nworker idle timeout = -1\n",
	    "^:2: bad value '-1' for 'worker idle timeout' (expected a number from 1 to 86400)\n");
	assert_fails("[global]\nstate map size = 12\n",
	    "^:2: bad value '12' for 'state map size' (expected a size from 1M to 1T, such as 64M)\n");
	assert_fails("[global]\nstate partitions = 6\n",
	    "^:2: bad value '6' for 'state partitions' (expected one of 1, 2, 4, 8, 16, 32, 64)\n");
	assert_fails("[global]\npid directory = run/usmbd\n",
	    "^:2: bad value 'run/usmbd' for 'pid directory' (expected an absolute path)\n");
	assert_fails("[global]\nprivate dir =\n",
	    "^:2: bad value '' for 'private dir' (expected an absolute path)\n");
	assert_fails("[global]\nguest account =\n",
	    "^:2: bad value '' for 'guest account' (must not be empty)\n");
	assert_fails("[global]\nnetbios name = much-too-long-name\n",
	    "^:2: bad value 'much-too-long-name' for 'netbios name' (expected 1 to 15 "
	    "characters without spaces, dots or \\/:*?\"<>|)\n");
	assert_fails("[global]\nserver signing = sometimes\n",
	    "^:2: bad value 'sometimes' for 'server signing' (expected one of auto, "
	    "mandatory, disabled)\n");
	assert_fails("[global]\nsmb encrypt = maybe\n",
	    "^:2: bad value 'maybe' for 'smb encrypt' (expected one of off, if_required, "
	    "desired, required)\n");
	assert_fails("[global]\nmap to guest = bad password\n",
	    "^:2: bad value 'bad password' for 'map to guest' (expected one of never, "
	    "bad user)\n");
	assert_fails("[global]\ninterfaces = 300.1.1.1\n",
	    "^:2: bad value '300.1.1.1' for 'interfaces' ('300.1.1.1' is not an address "
	    "or a local interface)\n");
	assert_fails("[global]\nhosts allow = 10.0.0.0/33\n",
	    "^:2: bad value '10.0.0.0/33' for 'hosts allow' ('10.0.0.0/33' is not an "
	    "address, a network or ALL)\n");
	assert_fails("[global]\nhosts deny = EXCEPT 1.2.3.4\n",
	    "^:2: bad value 'EXCEPT 1.2.3.4' for 'hosts deny' (EXCEPT must stand once "
	    "between two lists)\n");
	/* every problem is reported, not only the first */
	assert_fails("[global]\nlog level = x\ngate processes = 99\n[s]\n",
	    "^:2: bad value 'x' for 'log level' (expected a number from 0 to 10)\n"
	    "^:3: bad value '99' for 'gate processes' (expected a number from 1 to 64)\n"
	    "^:4: share [s] has no path\n");
}
END_TEST

START_TEST(test_protocols)
{
	struct conf *c;

	assert_fails("[global]\nserver min protocol = NT1\n",
	    "^:2: bad value 'NT1' for 'server min protocol' (SMB1 is not supported; "
	    "use SMB2_02, SMB2_10, SMB3_00, SMB3_02 or SMB3_11)\n");
	assert_fails("[global]\nserver max protocol = SMB1\n",
	    "^:2: bad value 'SMB1' for 'server max protocol' (SMB1 is not supported; "
	    "use SMB2_02, SMB2_10, SMB3_00, SMB3_02 or SMB3_11)\n");
	assert_fails("[global]\nserver max protocol = SMB4\n",
	    "^:2: bad value 'SMB4' for 'server max protocol' (expected one of SMB2_02, "
	    "SMB2_10, SMB3_00, SMB3_02, SMB3_11)\n");
	assert_fails("[global]\nserver max protocol = SMB2_10\nserver min protocol = SMB3\n",
	    "^:3: server min protocol SMB3_11 is above server max protocol SMB2_10\n");
	ck_assert_int_eq(conf_parse_protocol("SMB2_02"), DIALECT_202);
	ck_assert_int_eq(conf_parse_protocol("smb2"), DIALECT_210);
	ck_assert_int_eq(conf_parse_protocol("SMB2_22"), DIALECT_300);
	ck_assert_int_eq(conf_parse_protocol("SMB2_24"), DIALECT_300);
	ck_assert_int_eq(conf_parse_protocol("SMB3_00"), DIALECT_300);
	ck_assert_int_eq(conf_parse_protocol("SMB3_02"), DIALECT_302);
	ck_assert_int_eq(conf_parse_protocol("SMB3"), DIALECT_311);
	ck_assert_int_eq(conf_parse_protocol("NT1"), -1);
	ck_assert_int_eq(load("[global]\nmin protocol = default\nmax protocol = default\n", &c), 0);
	ck_assert_int_eq(c->min_protocol, DIALECT_202);
	ck_assert_int_eq(c->max_protocol, DIALECT_311);
	conf_free(c);
}
END_TEST

START_TEST(test_enum_aliases)
{
	struct conf *c;

	ck_assert_int_eq(load("[global]\nserver signing = required\nsmb encrypt = auto\n", &c), 0);
	ck_assert_int_eq(c->server_signing, SIGNING_MANDATORY);
	ck_assert_int_eq(c->smb_encrypt, ENCRYPT_IF_REQUIRED);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nserver signing = no\nsmb encrypt = mandatory\n", &c), 0);
	ck_assert_int_eq(c->server_signing, SIGNING_DISABLED);
	ck_assert_int_eq(c->smb_encrypt, ENCRYPT_REQUIRED);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nserver signing = default\nsmb encrypt = no\n"
	    "log level = 2 auth:5\n", &c), 0);
	ck_assert_int_eq(c->server_signing, SIGNING_AUTO);
	ck_assert_int_eq(c->smb_encrypt, ENCRYPT_OFF);
	ck_assert_int_eq(c->log_level, 2);
	assert_msgs("^:4: per-class levels in 'log level' ignored, using 2\n");
	conf_free(c);
}
END_TEST

START_TEST(test_interfaces)
{
	struct conf *c;
	int i, has_lo = 0;

	ck_assert_int_eq(load("[global]\ninterfaces = lo 192.168.7.1/24 [::1] 127.0.0.1\n", &c), 0);
	ck_assert_str_eq(errs, "");
	/* lo expands to its addresses; duplicates are dropped; masks removed */
	for (i = 0; c->interfaces[i] != NULL; i++) {
		ck_assert_ptr_null(strchr(c->interfaces[i], '/'));
		if (strcmp(c->interfaces[i], "127.0.0.1") == 0)
			has_lo++;
	}
	ck_assert_int_eq(has_lo, 1);
	conf_free(c);
}
END_TEST

static struct sockaddr_in
sin4(const char *a)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, a, &s.sin_addr), 1);
	return s;
}

static struct sockaddr_in6
sin6(const char *a)
{
	struct sockaddr_in6 s;

	memset(&s, 0, sizeof(s));
	s.sin6_family = AF_INET6;
	ck_assert_int_eq(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return s;
}

/*
 * [global]'s lists judged as the master judges an accepted socket
 * (daemon/listen.c): its address as text, then the one matcher.
 */
static int
allowed(const struct conf *c, const struct sockaddr *sa)
{
	char text[64];

	if (conf_addr_text(sa, text, sizeof(text)) != 0)
		return conf_peer_allowed(c->hosts_allow, c->hosts_deny, "?");
	return conf_peer_allowed(c->hosts_allow, c->hosts_deny, text);
}

#define ALLOWED(c, a) allowed((c), (const struct sockaddr *)&(a))

START_TEST(test_hosts)
{
	struct conf *c;
	struct sockaddr_in a;
	struct sockaddr_in6 b;

	ck_assert_int_eq(load("", &c), 0);
	a = sin4("8.8.8.8");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	conf_free(c);

	ck_assert_int_eq(load("[global]\nhosts allow = 192.168. 10.0.0.0/255.0.0.0 "
	    "EXCEPT 10.9.0.0/16\n", &c), 0);
	a = sin4("192.168.44.5");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	a = sin4("192.169.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	a = sin4("10.2.3.4");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	a = sin4("10.9.3.4");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	b = sin6("::ffff:192.168.1.1");	/* v4-mapped matches v4 patterns */
	ck_assert_int_eq(ALLOWED(c, b), 1);
	b = sin6("2001:db8::1");
	ck_assert_int_eq(ALLOWED(c, b), 0);
	conf_free(c);

	ck_assert_int_eq(load("[global]\nhosts deny = 172.16.0.0/12, 2001:db8::/32\n", &c), 0);
	a = sin4("172.20.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	a = sin4("172.32.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	b = sin6("2001:db8:1::1");
	ck_assert_int_eq(ALLOWED(c, b), 0);
	b = sin6("2001:db9::1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	conf_free(c);

	/* both lists: allow wins, then deny, then let in */
	ck_assert_int_eq(load("[global]\nhosts allow = localhost 10.1.1.1\nhosts deny = 10.0.0.0/8\n", &c), 0);
	a = sin4("10.1.1.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	a = sin4("10.1.1.2");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	a = sin4("127.0.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	b = sin6("::1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	a = sin4("11.0.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	conf_free(c);

	/*
	 * Samba's loopback rule, which the master and the workers share: an
	 * allow list that does not name it still lets 127.0.0.1 and ::1 in
	 * (v4-mapped too); a deny list naming it keeps them out.
	 */
	ck_assert_int_eq(load("[global]\nhosts allow = 10.0.0.0/8\n", &c), 0);
	a = sin4("127.0.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	b = sin6("::ffff:127.0.0.1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	b = sin6("::1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	a = sin4("127.0.0.2");		/* not the loopback rule's address */
	ck_assert_int_eq(ALLOWED(c, a), 0);
	conf_free(c);
	ck_assert_int_eq(load("[global]\nhosts deny = localhost\n", &c), 0);
	a = sin4("127.0.0.1");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	b = sin6("::1");
	ck_assert_int_eq(ALLOWED(c, b), 0);
	a = sin4("192.0.2.1");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	conf_free(c);
}
END_TEST

/*
 * The load check and the matcher share one grammar: every form loads and
 * then matches as loaded (the IPv6 prefix "fe80:" used to match but not
 * load); what the matcher has no meaning for does not load.
 */
START_TEST(test_hosts_forms_load)
{
	static const char *refused[] = {
		"lapland", ".example.com", "@foonet", "LOCAL", "10.0.0.*",
		"010.", "10.0.0.0/08", "fe80::/ffc0::", "[10.0.0.1]",
		"1:2:3:4:5:6:7:8:",
	};
	char text[128], want[256];
	struct conf *c;
	struct sockaddr_in6 b;
	struct sockaddr_in a;
	unsigned i;

	ck_assert_int_eq(load("[global]\nhosts allow = fe80: [2001:db8::]/32 "
	    "::ffff:10.0.0.0/104 localhost\nhosts deny = ALL\n", &c), 0);
	b = sin6("fe80::1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	b = sin6("fe81::1");
	ck_assert_int_eq(ALLOWED(c, b), 0);
	b = sin6("2001:db8:7::1");
	ck_assert_int_eq(ALLOWED(c, b), 1);
	a = sin4("10.3.3.3");
	ck_assert_int_eq(ALLOWED(c, a), 1);
	a = sin4("11.3.3.3");
	ck_assert_int_eq(ALLOWED(c, a), 0);
	conf_free(c);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text), "[global]\nhosts deny = %s\n",
		    refused[i]);
		snprintf(want, sizeof(want), "^:2: bad value '%s' for 'hosts "
		    "deny' ('%s' is not an address, a network or ALL)\n",
		    refused[i], refused[i]);
		assert_fails(text, want);
	}
}
END_TEST

/* A socket that is not IP has no address text: refused by any list. */
START_TEST(test_hosts_not_ip)
{
	struct sockaddr_un u;
	struct conf *c;
	char text[8];

	memset(&u, 0, sizeof(u));
	u.sun_family = AF_UNIX;
	ck_assert_int_eq(conf_addr_text((const struct sockaddr *)&u, text,
	    sizeof(text)), -1);
	ck_assert_str_eq(text, "?");
	ck_assert_int_eq(load("[global]\nhosts deny = 10.0.0.1\n", &c), 0);
	ck_assert_int_eq(ALLOWED(c, u), 0);
	conf_free(c);
	ck_assert_int_eq(load("", &c), 0);
	ck_assert_int_eq(ALLOWED(c, u), 1);
	conf_free(c);
}
END_TEST

static char *
dump(const struct conf *c, int verbose)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	conf_dump(c, fp, verbose);
	fclose(fp);
	return buf;
}

static const char round_trip_conf[] =
    "[global]\n"
    "smb ports = 4450 139\n"
    "interfaces = 127.0.0.1\n"
    "log file = /tmp/x.log\n"
    "log level = 5\n"
    "server min protocol = SMB3_00\n"
    "server signing = disabled\n"
    "smb encrypt = off\n"
    "map to guest = bad user\n"
    "hosts allow = 10.0.0.0/8 EXCEPT 10.1.1.1\n"
    "server string = Office files\n"
    "state map size = 3G\n"
    "read only = no\n"
    "[IPC$]\n"
    "valid users = alice\n"
    "[Public Docs]\n"
    "path = /srv/docs\n"
    "comment = Documents, for all\n"
    "valid users = \"Domain Users\", @staff alice\n"
    "guest ok = yes\n"
    "create mask = 0600\n"
    "[priv]\n"
    "path = /srv/priv\n"
    "smb encrypt = required\n"
    "case sensitive = yes\n";

START_TEST(test_dump_round_trip)
{
	struct conf *c, *c2;
	char *d1, *d2, *v1, *v2;
	FILE *fp;

	ck_assert_int_eq(load(round_trip_conf, &c), 0);
	ck_assert_str_eq(errs, "");
	for (int verbose = 0; verbose <= 1; verbose++) {
		d1 = dump(c, verbose);
		fp = fopen(path, "w");
		ck_assert_ptr_nonnull(fp);
		fputs(d1, fp);
		fclose(fp);
		ck_assert_int_eq(conf_load(path, &c2, stderr), 0);
		d2 = dump(c2, verbose);
		/* the first line names the file, which is the same path here */
		ck_assert_str_eq(d1, d2);
		/* and the loaded config is the same in every detail */
		v1 = dump(c, 1);
		v2 = dump(c2, 1);
		ck_assert_str_eq(v1, v2);
		free(v1);
		free(v2);
		free(d1);
		free(d2);
		conf_free(c2);
	}
	/* non-verbose output holds what was set, not the defaults */
	d1 = dump(c, 0);
	ck_assert_ptr_nonnull(strstr(d1, "\tsmb ports = 4450 139\n"));
	ck_assert_ptr_nonnull(strstr(d1, "\tvalid users = \"Domain Users\", @staff, alice\n"));
	/* IPC$ is printed because it was changed (and inherits read only) */
	ck_assert_ptr_nonnull(strstr(d1, "[IPC$]\n\tread only = no\n\tvalid users = alice\n"));
	ck_assert_ptr_nonnull(strstr(d1, "\tstate map size = 3G\n"));
	ck_assert_ptr_null(strstr(d1, "gate processes"));
	free(d1);
	d1 = dump(c, 1);
	ck_assert_ptr_nonnull(strstr(d1, "\tgate processes = 4\n"));
	ck_assert_ptr_nonnull(strstr(d1, "\tworker idle timeout = 60\n"));
	free(d1);
	conf_free(c);
}
END_TEST

START_TEST(test_missing_file)
{
	struct conf *c = (void *)1;
	char *buf = NULL;
	size_t len = 0;
	FILE *ef = open_memstream(&buf, &len);
	char want[128];

	ck_assert_int_eq(conf_load("/nonexistent/usmbd.conf", &c, ef), 2);
	fclose(ef);
	ck_assert_ptr_null(c);
	snprintf(want, sizeof(want), "/nonexistent/usmbd.conf: No such file or directory\n");
	ck_assert_str_eq(buf, want);
	free(buf);
}
END_TEST

START_TEST(test_long_line)
{
	struct conf *c;
	size_t n = 70 * 1024;
	char *text = malloc(n + 64);

	ck_assert_ptr_nonnull(text);
	strcpy(text, "[global]\ncomment = ");
	memset(text + strlen(text), 'a', n);
	strcpy(text + 19 + n, "\n");
	assert_fails(text, "^:2: line too long\n");
	free(text);
	(void)c;
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, conf_test_setup, conf_test_teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_share_defaults_and_global_inherit);
	tcase_add_test(tc, test_booleans);
	tcase_add_test(tc, test_key_normalisation);
	tcase_add_test(tc, test_continuation_and_comments);
	tcase_add_test(tc, test_crlf_bom_and_keys_before_section);
	tcase_add_test(tc, test_unknown_keys_warn);
	tcase_add_test(tc, test_syntax_errors);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_share_errors);
	tcase_add_test(tc, test_value_errors);
	tcase_add_test(tc, test_protocols);
	tcase_add_test(tc, test_enum_aliases);
	tcase_add_test(tc, test_interfaces);
	tcase_add_test(tc, test_hosts);
	tcase_add_test(tc, test_hosts_not_ip);
	tcase_add_test(tc, test_hosts_forms_load);
	tcase_add_test(tc, test_dump_round_trip);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_long_line);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(conf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
