#!/usr/bin/env bash
# Windows security descriptors (HACKING.md, "Security descriptors") with
# Debian's smbcacls: add, modify and delete ACEs; SACLs (set by a member
# of `server admin group`, through acl_sacl_client.py since smbcacls 4.17
# drops a SACL's ACEs when it sets one); a Windows-style folder
# descriptor (SYSTEM, Administrators, CREATOR OWNER inherit-only,
# Authenticated Users modify, a DENY for bob) read back as set; a child
# with the inherited descriptor; the kernel refusing locally what the
# descriptor denies; WRITE_DAC needed to change a DACL; the stored
# descriptor out of reach of local accounts.
#
# smbcacls has no port option: this server listens on 127.0.0.1:445, and
# the script skips (one line saying so) when that port is taken.
. "$(dirname "$0")/lib.sh"

command -v smbcacls >/dev/null || { fail "smbcacls is installed"; finish; }
command -v getfattr >/dev/null || { fail "getfattr is installed"; finish; }
if ss -ltnH 'sport = :445' | grep -q .; then
	echo "acl.sh: skipped: 127.0.0.1:445 is in use (smbcacls cannot use another port)"
	echo "0 passed, 0 failed"
	exit 0
fi
integ_init
PORT=445
# SeSecurityPrivilege (SACLs): the members of `server admin group` only
# [cs]: the same directory as a case-sensitive share (marked with it)
INTEG_SHARES=$(printf '[cs]\n\tpath = %s\n\tread only = no\n\tcase sensitive = yes\n' "$SHARE") \
    integ_conf "server admin group = usmbdsacl"
integ_users
integ_user carol carolpw1 || { fail "user carol"; finish; }
getent group usmbdsacl >/dev/null || groupadd usmbdsacl
integ_user sacladm sacladmpw1 || { fail "user sacladm"; finish; }
usermod -a -G usmbdsacl sacladm
integ_start || { fail "usmbd starts"; finish; }

ALICE=$(id -u alice) BOB=$(id -u bob) AGID=$(id -g alice)
# The writer at the start: the same process must serve to the end (a call
# outside its seccomp allow-list would kill it, and the master restart it).
SDW0=$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | head -n 1)
cacls() {	# cacls USER%PW PATH ARGS...
	local cred=$1 path=$2

	shift 2
	smbcacls //127.0.0.1/share "$path" -U "$cred" --numeric "$@" 2>&1
}
smbc() {	# smbc USER%PW COMMANDS
	smbclient //127.0.0.1/share -U "$1" -c "$2" 2>&1
}

# One rule for SIDs (HACKING.md, "SIDs"): Unix user UID is S-1-22-1-UID,
# and `usmbctl user show` says so.
"$USMBCTL" -s "$CONF" user show alice 2>&1 | grep -qE "^sid: +S-1-22-1-${ALICE}\$" &&
    ok "usmbctl user show alice: sid S-1-22-1-$ALICE" ||
    fail "usmbctl user show alice: sid S-1-22-1-$ALICE"
check "alice makes folder d" smbc "alice%$ALICE_PW" "mkdir d"

# A Windows-style folder: deny first (canonical), CREATOR OWNER
# inherit-only, Authenticated Users modify (0x1301bf).  Numeric masks:
# Samba's SDDL reads "FA" as 0x1ff.  AI (auto-inherited) is dropped as
# Windows drops it without AUTO_INHERIT_REQ, so the child's copies carry
# no INHERITED flag (smbtorture's acls.INHERITFLAGS).
FOLDER="O:S-1-22-1-${ALICE}G:S-1-22-2-${AGID}D:AI(D;OICI;0x1;;;S-1-22-1-${BOB})(A;OICI;0x1f01ff;;;SY)(A;OICI;0x1f01ff;;;BA)(A;OICIIO;0x1f01ff;;;CO)(A;OICI;0x1301bf;;;AU)(A;OICI;0x1f01ff;;;S-1-22-1-${ALICE})"
check "set the folder descriptor (SDDL)" \
    cacls "alice%$ALICE_PW" d --sddl --set "$FOLDER"
cacls "alice%$ALICE_PW" d >"$T/folder.txt"
for want in "CONTROL:0x8004" "OWNER:S-1-22-1-${ALICE}" \
    "ACL:S-1-22-1-${BOB}:1/0x3/0x00000001" \
    "ACL:S-1-5-18:0/0x3/0x001f01ff" \
    "ACL:S-1-5-32-544:0/0x3/0x001f01ff" \
    "ACL:S-1-3-0:0/0xb/0x001f01ff" \
    "ACL:S-1-5-11:0/0x3/0x001301bf" \
    "ACL:S-1-22-1-${ALICE}:0/0x3/0x001f01ff"; do
	if grep -qxF "$want" "$T/folder.txt"; then
		ok "read back: $want"
	else
		fail "read back: $want"
		cat "$T/folder.txt"
	fi
done
[ "$(grep -c '^ACL:' "$T/folder.txt")" = 6 ] && ok "six ACEs, no more" ||
    fail "six ACEs, no more"

# Names, as Windows' Security tab and smbcacls without --numeric show
# them: the server's lsarpc pipe translates (worker/pipe_lsarpc.c).
smbcacls //127.0.0.1/share d -U "alice%$ALICE_PW" >"$T/names.txt" 2>&1
for want in 'OWNER:Unix User\alice' 'GROUP:Unix Group\alice' \
    'ACL:Unix User\bob:DENIED/OI|CI/0x00000001' \
    'ACL:NT AUTHORITY\SYSTEM:ALLOWED/OI|CI/FULL' \
    'ACL:BUILTIN\Administrators:ALLOWED/OI|CI/FULL' \
    'ACL:CREATOR OWNER:ALLOWED/OI|CI|IO/FULL' \
    'ACL:NT AUTHORITY\Authenticated Users:ALLOWED/OI|CI/RWXD' \
    'ACL:Unix User\alice:ALLOWED/OI|CI/FULL'; do
	if grep -qxF "$want" "$T/names.txt"; then
		ok "smbcacls without --numeric: $want"
	else
		fail "smbcacls without --numeric: $want"
		cat "$T/names.txt"
	fi
done
# and an ACE added by name: the server looks the name up (LsarLookupNames)
smbcacls //127.0.0.1/share d -U "alice%$ALICE_PW" \
    -a 'ACL:carol:ALLOWED/OI|CI/READ' >"$T/out" 2>&1
cacls "alice%$ALICE_PW" d >"$T/folder2.txt"
grep -qxF "ACL:S-1-22-1-$(id -u carol):0/0x3/0x001200a9" "$T/folder2.txt" &&
    ok "smbcacls -a by name: carol's ACE is S-1-22-1-$(id -u carol)" ||
    { fail "smbcacls -a by name (carol)"; cat "$T/out" "$T/folder2.txt"; }
smbcacls //127.0.0.1/share d -U "alice%$ALICE_PW" \
    -D 'ACL:carol:ALLOWED/OI|CI/READ' >"$T/out" 2>&1
cacls "alice%$ALICE_PW" d >"$T/folder2.txt"
! grep -q "S-1-22-1-$(id -u carol):" "$T/folder2.txt" &&
    ok "smbcacls -D by name: carol's ACE gone" ||
    { fail "smbcacls -D by name (carol)"; cat "$T/out" "$T/folder2.txt"; }
stored=$(getfattr --absolute-names -n security.usmbd.sd -e hex "$SHARE/d" 2>/dev/null |
    sed -n 's/^security.usmbd.sd=//p')
[ -n "$stored" ] && ok "stored in security.usmbd.sd" || fail "stored in security.usmbd.sd"
# the same bytes come back over SMB (impacket reads the raw descriptor)
"$PYTHON" - "$stored" "$PORT" "$ALICE_PW" <<'PYEOF' >"$T/raw.out" 2>&1
import sys
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import FILE_READ_ATTRIBUTES, READ_CONTROL
stored, port, pw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port)
c.login("alice", pw)
tid = c.connectTree("share")
fid = c.openFile(tid, "d", desiredAccess=READ_CONTROL | FILE_READ_ATTRIBUTES,
                 creationOption=1)
raw = c._SMBConnection.queryInfo(tid, fid, infoType=3, fileInfoClass=0,
                                 additionalInformation=7)
print(raw.hex())
sys.exit(0 if "0x" + raw.hex() == stored else 1)
PYEOF
[ $? = 0 ] && ok "QUERY_INFO returns the stored bytes exactly" ||
    { fail "QUERY_INFO returns the stored bytes exactly"; cat "$T/raw.out"; }

# add, modify, delete one ACE
check "add an ACE" cacls "alice%$ALICE_PW" d -a "ACL:S-1-1-0:ALLOWED/0x0/0x00000001"
cacls "alice%$ALICE_PW" d | grep -qxF "ACL:S-1-1-0:0/0x0/0x00000001" &&
    ok "added ACE reads back" || fail "added ACE reads back"
check "modify it" cacls "alice%$ALICE_PW" d -M "ACL:S-1-1-0:ALLOWED/0x0/0x00000003"
cacls "alice%$ALICE_PW" d | grep -qxF "ACL:S-1-1-0:0/0x0/0x00000003" &&
    ok "modified ACE reads back" || fail "modified ACE reads back"
check "delete it" cacls "alice%$ALICE_PW" d -D "ACL:S-1-1-0:ALLOWED/0x0/0x00000003"
cacls "alice%$ALICE_PW" d | grep -q "^ACL:S-1-1-0:" &&
    fail "deleted ACE gone" || ok "deleted ACE gone"

# A child inherits: CREATOR OWNER becomes alice, the rest copied.
echo secret >"$T/secret.txt"
check "alice puts d/child" smbc "alice%$ALICE_PW" "put $T/secret.txt d\\child"
cacls "alice%$ALICE_PW" 'd\child' >"$T/child.txt"
for want in "ACL:S-1-22-1-${BOB}:1/0x0/0x00000001" \
    "ACL:S-1-22-1-${ALICE}:0/0x0/0x001f01ff" \
    "ACL:S-1-5-18:0/0x0/0x001f01ff" \
    "ACL:S-1-5-11:0/0x0/0x001301bf" "OWNER:S-1-22-1-${ALICE}"; do
	grep -qxF "$want" "$T/child.txt" && ok "child: $want" ||
	    { fail "child: $want"; cat "$T/child.txt"; }
done
grep -q '^ACL:S-1-3-0:' "$T/child.txt" && fail "child: no CREATOR OWNER ACE" ||
    ok "child: no CREATOR OWNER ACE"

# Two locks: bob is denied reading over SMB and, through the POSIX ACL
# written beside the descriptor, locally too; carol (Authenticated Users)
# reads both ways.
smbc "bob%$BOB_PW" "get d\\child $T/bob.out" | grep -q ACCESS_DENIED &&
    ok "bob: SMB read refused" || fail "bob: SMB read refused"
su bob -s /bin/sh -c "cat '$SHARE/d/child'" >/dev/null 2>&1 &&
    fail "bob: local read refused by the kernel" ||
    ok "bob: local read refused by the kernel"
su carol -s /bin/sh -c "cat '$SHARE/d/child'" >/dev/null 2>&1 &&
    ok "carol: local read allowed" || fail "carol: local read allowed"
smbc "carol%carolpw1" "get d\\child $T/carol.out" >/dev/null
cmp -s "$T/carol.out" "$T/secret.txt" && ok "carol: SMB read allowed" ||
    fail "carol: SMB read allowed"

# carol may write (modify) but holds no WRITE_DAC.
smbc "carol%carolpw1" "put $T/secret.txt d\\child" | grep -q NT_STATUS &&
    fail "carol: may write d/child" || ok "carol: may write d/child"
out=$(cacls "carol%carolpw1" 'd\child' -a "ACL:S-1-22-1-$(id -u carol):ALLOWED/0x0/FULL")
echo "$out" | grep -q ACCESS_DENIED && ok "carol: DACL change ACCESS_DENIED" ||
    { fail "carol: DACL change ACCESS_DENIED"; echo "$out"; }

# A parent with a descriptor but nothing inheritable: the new file and
# directory get the creator's default DACL, as on Windows (owner and
# SYSTEM full control, smbtorture's acls.INHERITANCE "default sd"), and
# a POSIX ACL that lets no one else in.
check "alice makes folder e" smbc "alice%$ALICE_PW" "mkdir e"
check "e: only non-inheritable ACEs" cacls "alice%$ALICE_PW" e --sddl --set \
    "O:S-1-22-1-${ALICE}G:S-1-22-2-${AGID}D:(A;;0x1f01ff;;;S-1-22-1-${ALICE})(A;;0x1301bf;;;AU)"
check "alice puts e/f" smbc "alice%$ALICE_PW" "put $T/secret.txt e\\f"
check "alice makes e/sub" smbc "alice%$ALICE_PW" "mkdir e\\sub"
for obj in 'e\f' 'e\sub'; do
	cacls "alice%$ALICE_PW" "$obj" >"$T/def.txt"
	grep '^ACL:' "$T/def.txt" >"$T/def.acl"
	printf 'ACL:S-1-22-1-%s:0/0x0/0x001f01ff\nACL:S-1-5-18:0/0x0/0x001f01ff\n' \
	    "$ALICE" >"$T/def.want"
	cmp -s "$T/def.acl" "$T/def.want" && grep -qxF "OWNER:S-1-22-1-${ALICE}" "$T/def.txt" &&
	    grep -qxF "CONTROL:0x8004" "$T/def.txt" &&
	    ok "$obj: the default DACL (owner, SYSTEM)" ||
	    { fail "$obj: the default DACL (owner, SYSTEM)"; cat "$T/def.txt"; }
done
su carol -s /bin/sh -c "cat '$SHARE/e/f'" >/dev/null 2>&1 &&
    fail "carol: local read of e/f refused by the kernel" ||
    ok "carol: local read of e/f refused by the kernel"
su alice -s /bin/sh -c "cat '$SHARE/e/f'" >/dev/null 2>&1 &&
    ok "alice: local read of e/f allowed" || fail "alice: local read of e/f allowed"
smbc "carol%carolpw1" "get e\\f $T/carol2.out" | grep -q ACCESS_DENIED &&
    ok "carol: SMB read of e/f refused" || fail "carol: SMB read of e/f refused"

# Local accounts cannot write or remove the stored descriptor, even
# the file's owner; they may read it (as getfacl).
su alice -s /bin/sh -c "setfattr -n security.usmbd.sd -v 0x00 '$SHARE/d'" 2>/dev/null &&
    fail "alice cannot forge security.usmbd.sd" ||
    ok "alice cannot forge security.usmbd.sd"
su alice -s /bin/sh -c "setfattr -x security.usmbd.sd '$SHARE/d'" 2>/dev/null &&
    fail "alice cannot remove security.usmbd.sd" ||
    ok "alice cannot remove security.usmbd.sd"
# A compromised worker of alice (alice's uid, the state group) talks to
# the writer itself: it may not lock bob out of bob's file, nor give it
# a descriptor, though it can open the file; its own file it may mark.
echo bobs >"$SHARE/bob.txt"; chown bob "$SHARE/bob.txt"; chmod 0644 "$SHARE/bob.txt"
cat >"$T/evil.py" <<'PYEOF'
import socket, struct, sys, os
sock, path = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sock)
# owner alice, a DACL denying everyone everything
sid = struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), 1, os.getuid())
world = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
ace = struct.pack('<BBHI', 1, 0, 8 + len(world), 0x1f01ff) + world
acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
sd = struct.pack('<BBHIIII', 1, 0, 0x8004, 20 + len(acl), 20 + len(acl), 0, 20) + acl + sid
fd = os.open(path, os.O_RDONLY)
for which in (4, 1, 8, 0):
    s.sendmsg([struct.pack('<II', 1, which) + sd],
               [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack('i', fd))])
    print(hex(struct.unpack('<I', s.recv(4))[0]))
# SDW_OP_INHERIT: a SACL "inherited" from a parent that passes none on,
# on bob's file, then on a file of alice's own
audit = struct.pack('<BBHI', 2, 0xC0, 8 + len(world), 0x1f01ff) + world
sacl = struct.pack('<BBHHH', 2, 0, 8 + len(audit), 1, 0) + audit
ssd = struct.pack('<BBHIIII', 1, 0, 0x8010, 0, 0, 20, 0) + sacl
pfd = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
own = os.open(sys.argv[3], os.O_RDONLY)
for f in (fd, own):
    s.sendmsg([struct.pack('<II', 3, 8) + ssd],
               [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack('ii', f, pfd))])
    print(hex(struct.unpack('<I', s.recv(4))[0]))
PYEOF
echo alices >"$SHARE/alice.txt"; chown alice "$SHARE/alice.txt"; chmod 0644 "$SHARE/alice.txt"
sg=$(getent group usmbd-state | cut -d: -f3)
out=$(setpriv --reuid=alice --regid="$(id -g alice)" --groups="$sg" \
    "$PYTHON" "$T/evil.py" "$T/lock/sdw.sock" "$SHARE/bob.txt" "$SHARE/alice.txt" 2>&1)
[ "$out" = "$(printf '0xc0000022\n0xc0000022\n0xc0000061\n0xc000000d\n0xc0000022\n0xc0000079')" ] &&
    ok "a worker of alice cannot set bob's DACL, owner or SACL, nor an empty descriptor, nor a SACL its parent does not pass on, through the writer" ||
    { fail "a worker of alice cannot set bob's DACL, owner or SACL, nor an empty descriptor, nor a SACL its parent does not pass on, through the writer"; echo "$out"; }
getfattr --absolute-names -n security.usmbd.sd "$SHARE/alice.txt" >/dev/null 2>&1 &&
    fail "alice's file has no forged SACL" || ok "alice's file has no forged SACL"
getfattr --absolute-names -n security.usmbd.sd "$SHARE/bob.txt" >/dev/null 2>&1 &&
    fail "bob's file has no stored descriptor" || ok "bob's file has no stored descriptor"
su bob -s /bin/sh -c "cat '$SHARE/bob.txt'" >/dev/null 2>&1 && ok "bob still reads his file" ||
    fail "bob still reads his file"

# A worker remembers which files it found without a descriptor, by
# inode and ctime (worker/smb2_secdesc.c): a descriptor stored later by
# another process (here root by hand, as the writer would) moves the
# ctime and is seen at the next open on the same connection.
echo cached >"$SHARE/cache.txt"; chown bob "$SHARE/cache.txt"; chmod 0644 "$SHARE/cache.txt"
sleep 3		# older than the settle time: the answer is kept
"$PYTHON" - "$PORT" "$ALICE_PW" "$SHARE/cache.txt" "$BOB" <<'PYEOF' >"$T/cache.out" 2>&1
import os, struct, sys
from impacket import smb3
from impacket.smbconnection import SMBConnection
port, pw, path, bob = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port)
c.login("alice", pw)
s, tid = c._SMBConnection, c.connectTree("share")
def read_open():
    try:
        s.close(tid, s.create(tid, "cache.txt", 0x120089, 7, 0, 1, 0))
        return 0
    except smb3.SessionError as e:
        return e.get_error_code()
first, again = read_open(), read_open()
u = struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), 1, bob)
g = struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), 2, bob)
ace = struct.pack('<BBHI', 0, 0, 8 + len(u), 0x1f01ff) + u
acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
sd = struct.pack('<BBHIIII', 1, 0, 0x8004, 20 + len(acl), 20 + len(acl) + len(u), 0, 20) + acl + u + g
os.setxattr(path, "security.usmbd.sd", sd)
after = read_open()
os.removexattr(path, "security.usmbd.sd")
print("%x %x %x %x" % (first, again, after, read_open()))
PYEOF
[ "$(tail -n 1 "$T/cache.out")" = "0 0 c0000022 0" ] &&
    ok "a descriptor stored after the worker found none is seen at the next open" ||
    { fail "a descriptor stored after the worker found none is seen at the next open"; cat "$T/cache.out"; }

# DENY entries in any order: a DACL with the deny after an allow (not
# canonical) is stored and read back as given, and the NT check takes
# the first ACE that matches each bit: bob's read is refused over SMB
# and, through the mapping, by the kernel; carol (Everyone) reads.
echo ordered >"$T/order.txt"
check "alice puts order.txt" smbc "alice%$ALICE_PW" "put $T/order.txt order.txt"
"$PYTHON" - "$PORT" "$ALICE_PW" "$ALICE" "$BOB" <<'PYEOF' >"$T/order.out" 2>&1
import struct, sys
from impacket.smbconnection import SMBConnection
port, pw, alice, bob = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port)
c.login("alice", pw)
s, tid = c._SMBConnection, c.connectTree("share")
fid = s.create(tid, "order.txt", 0x000E0080, 7, 0x40, 1, 0)	# READ_CONTROL|WRITE_DAC|WRITE_OWNER
def unix(kind, i):
    return struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), kind, i)
def ace(t, mask, sid):
    return struct.pack('<BBHI', t, 0, 8 + len(sid), mask) + sid
wd = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
aces = ace(0, 0x1f01ff, unix(1, alice)) + ace(1, 0x1, unix(1, bob)) + ace(0, 0x120089, wd)
acl = struct.pack('<BBHHH', 2, 0, 8 + len(aces), 3, 0) + aces
s.setInfo(tid, fid, struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0, 20) + acl,
          infoType=3, fileInfoClass=0, additionalInformation=4)
got = s.queryInfo(tid, fid, infoType=3, fileInfoClass=0, additionalInformation=4)
s.close(tid, fid)
off = struct.unpack_from('<I', got, 16)[0]
print("same" if got[off:off + len(acl)] == acl else "differs: " + got.hex())
PYEOF
[ "$(tail -n 1 "$T/order.out")" = same ] && ok "a deny after an allow is stored and read back as given" ||
    { fail "a deny after an allow is stored and read back as given"; cat "$T/order.out"; }
smbc "bob%$BOB_PW" "get order.txt $T/bob2.out" | grep -q ACCESS_DENIED &&
    ok "bob: SMB read of order.txt refused (his deny comes first)" ||
    fail "bob: SMB read of order.txt refused (his deny comes first)"
su bob -s /bin/sh -c "cat '$SHARE/order.txt'" >/dev/null 2>&1 &&
    fail "bob: local read of order.txt refused by the kernel" ||
    ok "bob: local read of order.txt refused by the kernel"
smbc "carol%carolpw1" "get order.txt $T/carol2.out" >/dev/null
cmp -s "$T/carol2.out" "$T/order.txt" && ok "carol: SMB read of order.txt allowed (Everyone)" ||
    fail "carol: SMB read of order.txt allowed (Everyone)"

# A new name's parent found without a descriptor is noted and not read
# again while nothing changes its own attributes (worker/smb2_secdesc.c,
# "Parents known to have none"): on the name cache's slot after a
# case-insensitive lookup (vfs/name.c), else by fanotify marks
# (vfs/dirnote.c: a POSIX create, a `case sensitive = yes` share).  Root
# storing a descriptor with an inheritable ACE on the parent after the
# worker noted "none" is seen by the next create below it on the same
# connection, which inherits the ACE.  sdpar_check WHAT DIR MODE [swap]:
# MODE ci ([share]), posix (the POSIX create context), cs ([cs], the same
# directory as a case-sensitive share, marked like [share]); swap: root
# renames DIR's top directory away and makes DIR again, with the
# descriptor (the old DIR saw no change of its own).
sdpar_check() {
	local what=$1 dir=$2 mode=$3 act=${4:-set} out=$T/${2//\//_}.out

	mkdir -p "$SHARE/$dir"; chown -R alice "$SHARE/${dir%%/*}"
	"$PYTHON" - "$PORT" "$ALICE_PW" "$SHARE" "$(id -u alice)" "$mode" \
	    "$ROOT/t/integ" "$dir" "$act" <<'PYEOF' >"$out" 2>&1
import os, struct, sys
sys.path.insert(0, sys.argv[6])
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection
port, pw, share, uid, mode = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                              int(sys.argv[4]), sys.argv[5])
rel, act = sys.argv[7], sys.argv[8]
path = os.path.join(share, rel)
ctx = None
if mode == "posix":
    from posix_lib import connect, posix_ctx
    c = connect(port, "alice", pw)
    ctx = [posix_ctx(0o644)]
else:
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port)
    c.login("alice", pw)
s, tid = c._SMBConnection, c.connectTree("cs" if mode == "cs" else "share")
d = rel.replace("/", "\\")
def new(name, doc=True):
    # delete on close (the benchmark's pattern), else kept
    return s.create(tid, d + "\\" + name, 0x130197, 7, 0x1040 if doc else 0x40,
                    2, 0x80, createContexts=ctx)
for i in range(3):	# "none" read once, then noted
    s.close(tid, new("n%d.tmp" % i))
everyone = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
u = struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), 1, uid)
g = struct.pack('<BB6sII', 1, 2, (22).to_bytes(6, 'big'), 2, uid)
ace = struct.pack('<BBHI', 0, 0x03, 8 + len(everyone), 0x1f01ff) + everyone
acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
sd = struct.pack('<BBHIIII', 1, 0, 0x8004, 20 + len(acl),
                 20 + len(acl) + len(u), 0, 20) + acl + u + g
if act == "swap":
    top = os.path.join(share, rel.split("/")[0])
    os.rename(top, top + ".old")
    os.makedirs(path)
    for p in (top, path):
        os.chown(p, uid, -1)
os.setxattr(path, "security.usmbd.sd", sd)
fid = new("child.txt", doc=False)
got = s.queryInfo(tid, fid, infoType=s3.SMB2_0_INFO_SECURITY, fileInfoClass=0,
                  additionalInformation=4)
s.close(tid, fid)
# Everyone full control (the kernel's own DACL never has it), inherited
# (0x10 only below an auto-inherited parent)
print("inherited" if any(struct.pack('<BBHI', 0, f, 8 + len(everyone),
    0x1f01ff) + everyone in got for f in (0, 0x10))
    else "not inherited: " + got.hex())
PYEOF
	[ "$(tail -n 1 "$out")" = inherited ] &&
	    getfattr --absolute-names -n security.usmbd.sd "$SHARE/$dir/child.txt" >/dev/null 2>&1 &&
	    ok "a descriptor stored on a parent noted without one is inherited by the next $what below it" ||
	    { fail "a descriptor stored on a parent noted without one is inherited by the next $what below it"; cat "$out"; }
}
sdpar_check create sdpar ci
sdpar_check "POSIX create" sdparp posix
sdpar_check "case-sensitive create" sdparc cs
# Two levels down; and a directory of the path renamed away, the path
# made again with a descriptor (the marks cover every directory from the
# share root down: the rename is seen).
sdpar_check "POSIX create, two levels down" sdup/x posix
sdpar_check "POSIX create, once the path names another directory" sdsw/x posix swap
sdpar_check "case-sensitive create, once the path names another directory" sdswc/x cs swap

# SACLs: sacladm (in `server admin group`) sets and reads them, alice
# (not in it) is refused; verbatim, out of every other query.
"$PYTHON" "$ROOT/t/integ/acl_sacl_client.py" "$PORT" sacladm sacladmpw1 \
    "$ALICE_PW" "$SHARE" >"$T/sacl.out" 2>&1
grep -E '^(ok|FAIL) ' "$T/sacl.out" | while IFS= read -r l; do echo "$l"; done
npass=$(grep -c '^ok ' "$T/sacl.out")
nfail=$(grep -c '^FAIL ' "$T/sacl.out")
[ "$nfail" = 0 ] && [ "$npass" -ge 53 ] &&
    ok "acl_sacl_client.py: $npass checks" ||
    { fail "acl_sacl_client.py: $npass passed, $nfail failed"; tail -n 20 "$T/sacl.out"; }
getfattr --absolute-names -n security.usmbd.sd -e hex "$SHARE/sacl.txt" 2>/dev/null |
    grep -qE '=0x0100[13579bdf][0-9a-f]' && ok "sacl.txt: the SACL stored in security.usmbd.sd" ||
    fail "sacl.txt: the SACL stored in security.usmbd.sd"
out=$(cacls sacladm%sacladmpw1 audit.txt --sddl --query-security-info=8)
echo "$out" | grep -qF 'S:(AU;SAFA;0x001f01ff;;;WD)' && ok "smbcacls (admin) reads the SACL: $out" ||
    { fail "smbcacls (admin) reads the SACL"; echo "$out"; }
out=$(cacls "alice%$ALICE_PW" audit.txt --sddl --query-security-info=8)
echo "$out" | grep -q PRIVILEGE_NOT_HELD && ok "smbcacls (alice): PRIVILEGE_NOT_HELD" ||
    { fail "smbcacls (alice): PRIVILEGE_NOT_HELD"; echo "$out"; }
out=$(cacls sacladm%sacladmpw1 audit.txt --sddl)
echo "$out" | grep -q 'S:' && { fail "smbcacls (admin), default query: no SACL"; echo "$out"; } ||
    ok "smbcacls (admin), default query: no SACL"

# the writer runs with CAP_SYS_ADMIN alone, not as root
sdw=$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | head -n 1)
if [ -n "$sdw" ]; then
	grep -q "^Uid:.*\b0\b" /proc/"$sdw"/status && fail "sdw is not root" || ok "sdw is not root"
	[ "$(awk '/^CapEff/ {print $2}' /proc/"$sdw"/status)" = 0000000000200000 ] &&
	    ok "sdw holds CAP_SYS_ADMIN alone" || fail "sdw holds CAP_SYS_ADMIN alone"
	[ "$(awk '/^Seccomp:/ {print $2}' /proc/"$sdw"/status)" = 2 ] &&
	    [ "$(awk '/^NoNewPrivs:/ {print $2}' /proc/"$sdw"/status)" = 1 ] &&
	    ok "sdw: Seccomp 2, NoNewPrivs 1" || fail "sdw: Seccomp 2, NoNewPrivs 1"
	[ "$sdw" = "$SDW0" ] &&
	    ok "sdw: the same process throughout (its allow-list held)" ||
	    fail "sdw: the same process throughout ($SDW0, now $sdw)"
else
	fail "the sdw process runs"
fi

# A reload that drops `server admin group`: the workers take it at once,
# the writer (which cannot read a config under its allow-list) is
# restarted and serves again.
sed -i '/server admin group/d' "$CONF"
check "reload without an admin group" "$USMBCTL" -s "$CONF" reload
for i in $(seq 1 30); do
	sdw2=$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | head -n 1)
	[ -n "$sdw2" ] && [ "$sdw2" != "$sdw" ] && break
	sleep 0.2
done
[ -n "$sdw2" ] && [ "$sdw2" != "$sdw" ] && ok "reload: a new sdw ($sdw -> $sdw2)" ||
    fail "reload: a new sdw ($sdw -> ${sdw2:-none})"
out=$(cacls sacladm%sacladmpw1 audit.txt --sddl --query-security-info=8)
echo "$out" | grep -q PRIVILEGE_NOT_HELD && ok "reload: sacladm no longer holds the privilege" ||
    { fail "reload: sacladm no longer holds the privilege"; echo "$out"; }
check "reload: the new writer stores alice's DACL change" \
    cacls "alice%$ALICE_PW" d -a "ACL:S-1-1-0:ALLOWED/0x0/0x00000001"

# DACL SET_INFOs of alice's on d in a loop, until the file $2 exists
# (and at least 50 were made); prints "N sets, N errors, slowest N ms"
# last, to $1 (the slowest: how long a worker waited for a writer).
setinfo_loop() {
	"$PYTHON" - "$PORT" "$ALICE_PW" "$2" <<'PYEOF' >"$1" 2>&1
import os, sys, time
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection
port, pw, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port)
c.login("alice", pw)
s, tid = c._SMBConnection, c.connectTree("share")
fid = s.create(tid, "d", 0x00060080, 7, 1, 1, 0)	# READ_CONTROL|WRITE_DAC
dacl = s.queryInfo(tid, fid, infoType=3, fileInfoClass=0,
                   additionalInformation=4)
n = bad = 0
slowest = 0.0
while not os.path.exists(stop) or n < 50:
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_SET_INFO
    p['TreeID'] = tid
    r = s3.SMB2SetInfo()
    r['InfoType'], r['FileInfoClass'] = 3, 0
    r['AdditionalInformation'] = 4
    r['BufferLength'], r['FileID'], r['Buffer'] = len(dacl), fid, dacl
    p['Data'] = r
    t0 = time.monotonic()
    st = s.recvSMB(s.sendSMB(p))['Status']
    slowest = max(slowest, time.monotonic() - t0)
    n += 1
    if st != 0:
        bad += 1
        print("SET_INFO %d: 0x%08x" % (n, st))
print("%d sets, %d errors, slowest %d ms" % (n, bad, slowest * 1000))
PYEOF
}
one_writer() {	# one_writer WHAT
	local i

	for i in $(seq 1 30); do
		[ "$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | wc -l)" = 1 ] && break
		sleep 0.1
	done
	[ "$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | wc -l)" = 1 ] &&
	    ok "one writer after $1" || fail "one writer after $1"
}

# No gap at a reload (daemon/spawn.c spawn_sdw_tick): the new writer
# starts before the old one ends, so descriptor SET_INFOs in a loop
# while `usmbctl reload` runs five times all succeed.
setinfo_loop "$T/reloadloop.out" "$T/stop" &
loop=$!
sleep 1
for i in 1 2 3 4 5; do
	"$USMBCTL" -s "$CONF" reload >/dev/null 2>&1 || fail "reload $i"
	sleep 0.7
done
touch "$T/stop"
wait "$loop"
res=$(tail -n 1 "$T/reloadloop.out")
case $res in
*" sets, 0 errors, "*) ok "SET_INFOs across five reloads: $res" ;;
*) fail "SET_INFOs across five reloads: $res"; head -n 5 "$T/reloadloop.out" ;;
esac
one_writer "the reloads"

# No gap at a crash either: the master keeps the writers' listening
# socket (SDW_LISTEN_FD), so while a killed writer's successor starts, a
# worker's connect waits in the backlog and its request is then served.
# Three kill -9s, 1.2 s apart (a writer is restarted at most once a
# second), while the SET_INFOs run.
setinfo_loop "$T/killloop.out" "$T/stop2" &
loop=$!
sleep 1
killed=0
for i in 1 2 3; do
	w=$(pgrep -P "$SERVER_PID" -f 'usmbd: sdw' | head -n 1)
	[ -n "$w" ] && kill -9 "$w" && killed=$((killed + 1))
	sleep 1.2
done
touch "$T/stop2"
wait "$loop"
res=$(tail -n 1 "$T/killloop.out")
[ "$killed" = 3 ] && ok "three writers killed" || fail "three writers killed ($killed)"
case $res in
*" sets, 0 errors, "*) ok "SET_INFOs across three kill -9s of the writer: $res" ;;
*) fail "SET_INFOs across three kill -9s of the writer: $res"; head -n 5 "$T/killloop.out" ;;
esac
one_writer "the kills"
finish
