#!/usr/bin/env bash
# Per-user access on shares with real clients (smbclient, impacket):
# `read list` (alice may only read a writable share, every write path),
# `write list` (carol writes on a read-only share; dave, in both lists,
# writes), `access based share enum` (a share left out of the list of a
# user valid users excludes, shown to the others) and `hide unreadable`
# (a file only its owner may read is not listed for another user, is
# listed without the key, and is still refused by name).
#
# SHARELISTS_SERVER=samba runs the same checks against Debian's Samba
# (t/compat/samba.conf.in with the same shares, a private smbd on another
# loopback port): what it does differently fails there.
. "$(dirname "$0")/lib.sh"

integ_init
mkdir -p "$T/rw" "$T/ro" "$T/abe" "$T/hide/sub" "$T/hide/private"
chmod 0777 "$T/rw" "$T/ro" "$T/abe" "$T/hide"
INTEG_SHARES=$(printf '%s\n' \
	'[rw]' "	path = $T/rw" '	read only = no' '	read list = alice dave' \
	'	write list = dave' \
	'[ro]' "	path = $T/ro" '	read only = yes' '	write list = carol dave' \
	'[abe]' "	path = $T/abe" '	valid users = alice bob' \
	'	access based share enum = yes' '	comment = for alice and bob' \
	'[hide]' "	path = $T/hide" '	read only = no' '	hide unreadable = yes' \
	'[show]' "	path = $T/hide" '	read only = no')
integ_conf
integ_users || { fail "users"; finish; }
integ_user carol carolpw1 || { fail "user carol"; finish; }
integ_user dave davepw1 || { fail "user dave"; finish; }
for d in rw ro; do
	echo base >"$T/$d/base.txt"
	chmod 0666 "$T/$d/base.txt"
done
echo secret >"$T/hide/secret.txt"
echo public >"$T/hide/public.txt"
echo ntacl >"$T/hide/ntacl.txt"
chown alice "$T/hide/secret.txt" "$T/hide/private" "$T/hide/public.txt" \
	"$T/hide/ntacl.txt"
chmod 0600 "$T/hide/secret.txt"
chmod 0700 "$T/hide/private"
chmod 0644 "$T/hide/public.txt" "$T/hide/ntacl.txt"
if [ "${SHARELISTS_SERVER:-usmbd}" = samba ]; then
	# the reference Samba with the same shares and users on a port of
	# its own (PORT then names it)
	PORT=$(integ_free_port)
	samba_start "$T/samba" "$PORT" "$INTEG_SHARES" "alice:$ALICE_PW" "bob:$BOB_PW" carol:carolpw1 dave:davepw1 ||
	    { fail "Samba start"; finish; }
	LOG=$T/samba/smbd.log
else
	integ_start || { fail "server start"; finish; }
fi

SMB=(smbclient -p "$PORT" -m SMB3)

# smbclient as USER PW on SHARE running the commands CMDS; output in $T/out.
smb() {
	"${SMB[@]}" "//127.0.0.1/$3" -U "$1%$2" -c "$4" >"$T/out" 2>&1
}

# --- read list / write list: smbclient put, then every write path ---
echo data >"$T/local.txt"
check_fails "alice (read list) cannot put on writable [rw]" \
	smb alice "$ALICE_PW" rw "put $T/local.txt alice.txt"
grep -q NT_STATUS_ACCESS_DENIED "$T/out" && ok "alice's put: ACCESS_DENIED" ||
	fail "alice's put: $(cat "$T/out")"
[ ! -e "$T/rw/alice.txt" ] && ok "alice's file not made" || fail "alice.txt made"
smb alice "$ALICE_PW" rw "mkdir adir"
grep -q NT_STATUS_ACCESS_DENIED "$T/out" && [ ! -e "$T/rw/adir" ] &&
	ok "alice cannot mkdir on [rw]" || fail "alice's mkdir: $(cat "$T/out")"
check "alice can still read [rw]" smb alice "$ALICE_PW" rw "get base.txt $T/got.txt"
check "bob can put on [rw]" smb bob "$BOB_PW" rw "put $T/local.txt bob.txt"
[ -e "$T/rw/bob.txt" ] && ok "bob's file made" || fail "bob.txt missing"
check "dave (read list and write list) can put on [rw]" \
	smb dave davepw1 rw "put $T/local.txt dave.txt"
check "carol (write list) can put on read-only [ro]" \
	smb carol carolpw1 ro "put $T/local.txt carol.txt"
[ -e "$T/ro/carol.txt" ] && ok "carol's file made on [ro]" || fail "carol.txt missing"
check "dave (both lists) can put on read-only [ro]" \
	smb dave davepw1 ro "put $T/local.txt dave.txt"
check_fails "bob cannot put on read-only [ro]" \
	smb bob "$BOB_PW" ro "put $T/local.txt bob.txt"

client_checks "alice on [rw]" "$PYTHON" "$ROOT/t/integ/sharelists_client.py" \
	"$PORT" alice "$ALICE_PW" rw denied
client_checks "bob on [ro]" "$PYTHON" "$ROOT/t/integ/sharelists_client.py" \
	"$PORT" bob "$BOB_PW" ro denied
[ "$(cat "$T/rw/base.txt")" = base ] && ok "[rw] base.txt unchanged by alice" ||
	fail "[rw] base.txt changed"
[ -e "$T/ro/base.txt" ] && [ "$(cat "$T/ro/base.txt")" = base ] &&
	ok "[ro] base.txt unchanged by bob" || fail "[ro] base.txt changed"
for d in rw ro; do
	getfattr -d -m 'user\.usmbd\.stream\.' "$T/$d/base.txt" 2>/dev/null |
	    grep -q stream && fail "[$d] base.txt got a named stream" ||
	    ok "[$d] base.txt got no named stream"
done
# the same paths where the lists let the user write
client_checks "bob on [rw]" "$PYTHON" "$ROOT/t/integ/sharelists_client.py" \
	"$PORT" bob "$BOB_PW" rw allowed
client_checks "carol on [ro]" "$PYTHON" "$ROOT/t/integ/sharelists_client.py" \
	"$PORT" carol carolpw1 ro allowed

# --- access based share enum ---
if "${SMB[@]}" -L //127.0.0.1 -U "carol%carolpw1" >"$T/out" 2>&1 &&
    grep -Eq '^[[:space:]]+rw[[:space:]]+Disk' "$T/out" &&
    ! grep -Eq '^[[:space:]]+abe[[:space:]]' "$T/out"; then
	ok "carol (not in valid users) does not see [abe] in smbclient -L"
else
	fail "carol's share list"; sed 's/^/     /' "$T/out"
fi
if "${SMB[@]}" -L //127.0.0.1 -U "alice%$ALICE_PW" >"$T/out" 2>&1 &&
    grep -Eq '^[[:space:]]+abe[[:space:]]+Disk[[:space:]]+for alice and bob$' "$T/out"; then
	ok "alice sees [abe] in smbclient -L"
else
	fail "alice's share list"; sed 's/^/     /' "$T/out"
fi
if rpcclient -p "$PORT" -U "carol%carolpw1" 127.0.0.1 \
    -c 'netsharegetinfo abe 1' >"$T/out" 2>&1; then
	fail "carol's netsharegetinfo abe found it"; sed 's/^/     /' "$T/out"
else
	grep -q NETNAMENOTFOUND "$T/out" &&
	    ok "carol's netsharegetinfo abe: not found" ||
	    { fail "carol's netsharegetinfo abe"; sed 's/^/     /' "$T/out"; }
fi
check "bob's netsharegetinfo abe finds it" rpcclient -p "$PORT" \
	-U "bob%$BOB_PW" 127.0.0.1 -c 'netsharegetinfo abe 1'

# --- hide unreadable ---
if rpcclient -p "$PORT" -U "bob%$BOB_PW" 127.0.0.1 \
    -c 'netsharegetinfo hide 1005' >"$T/out" 2>&1 &&
    grep -q 'flags: 0x800$' "$T/out"; then
	ok "netsharegetinfo hide 1005: SHI1005_FLAGS_ACCESS_BASED_DIRECTORY_ENUM"
else
	fail "netsharegetinfo hide 1005"; sed 's/^/     /' "$T/out"
fi
check "bob lists [hide]" smb bob "$BOB_PW" hide "ls"
if grep -q public.txt "$T/out" && grep -q 'sub[[:space:]]*D' "$T/out" &&
    ! grep -q secret.txt "$T/out" && ! grep -q private "$T/out"; then
	ok "[hide] leaves out alice's 0600 file and 0700 directory for bob"
else
	fail "bob's [hide] listing"; sed 's/^/     /' "$T/out"
fi
check "bob lists [show]" smb bob "$BOB_PW" show "ls"
grep -q secret.txt "$T/out" && grep -q private "$T/out" &&
	ok "[show] (no hide unreadable) lists them for bob" ||
	{ fail "bob's [show] listing"; sed 's/^/     /' "$T/out"; }
check_fails "bob cannot get secret.txt by name on [hide]" \
	smb bob "$BOB_PW" hide "get secret.txt $T/stolen.txt"
grep -q NT_STATUS_ACCESS_DENIED "$T/out" &&
	ok "bob's get of the hidden file: ACCESS_DENIED" ||
	{ fail "bob's get: not ACCESS_DENIED"; sed 's/^/     /' "$T/out"; }
check "bob can get public.txt on [hide]" \
	smb bob "$BOB_PW" hide "get public.txt $T/pub.txt"
check "alice lists [hide]" smb alice "$ALICE_PW" hide "ls"
grep -q secret.txt "$T/out" && grep -q private "$T/out" &&
	ok "alice (the owner) sees her files on [hide]" ||
	{ fail "alice's [hide] listing"; sed 's/^/     /' "$T/out"; }
# a pattern naming the file (one lookup, no scan) hides it too
check_fails "bob's ls secret.txt on [hide] finds nothing" \
	smb bob "$BOB_PW" hide "ls secret.txt"

# The Windows lock: a DACL for alice alone on a file the kernel lets bob
# read.  The listing agrees with what an open grants.
client_checks "alice's DACL" "$PYTHON" "$ROOT/t/integ/sharelists_client.py" \
	"$PORT" alice "$ALICE_PW" hide setdacl ntacl.txt "$(id -u alice)"
# the kernel's side back to readable by all: only the stored DACL refuses
"$PYTHON" -c 'import os, sys
try:
    os.removexattr(sys.argv[1], "system.posix_acl_access")
except OSError:
    pass' "$T/hide/ntacl.txt"
chmod 0644 "$T/hide/ntacl.txt"
check "the kernel lets bob read ntacl.txt" \
	su -s /bin/sh bob -c "cat '$T/hide/ntacl.txt'"
check "bob lists [hide] after the DACL" smb bob "$BOB_PW" hide "ls"
grep -q public.txt "$T/out" && ! grep -q ntacl.txt "$T/out" &&
	ok "[hide] leaves out a file whose DACL does not let bob read" ||
	{ fail "bob's [hide] listing after the DACL"; sed 's/^/     /' "$T/out"; }
check "bob lists [show] after the DACL" smb bob "$BOB_PW" show "ls"
grep -q ntacl.txt "$T/out" && ok "[show] lists it" ||
	{ fail "bob's [show] listing after the DACL"; sed 's/^/     /' "$T/out"; }
smb bob "$BOB_PW" hide "get ntacl.txt $T/ntacl.got"
grep -q NT_STATUS_ACCESS_DENIED "$T/out" &&
	ok "bob's get of ntacl.txt: ACCESS_DENIED" ||
	{ fail "bob's get of ntacl.txt"; sed 's/^/     /' "$T/out"; }

# CHANGE_NOTIFY: what bob's listing of [hide] leaves out is not reported
# to his watch either (new names, both halves of a rename, below a
# WATCH_TREE; a removal is NOTIFY_ENUM_DIR); [show] reports them all.
for s in hide show; do
	client_checks "bob's notify on [$s]" "$PYTHON" \
	    "$ROOT/t/integ/sharelists_notify.py" "$PORT" bob "$BOB_PW" "$s" \
	    "$T/hide" "$s"
done

finish
