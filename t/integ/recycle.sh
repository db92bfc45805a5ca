#!/usr/bin/env bash
# Recycle bin (worker/recycle.h): a share with `recycle directory` moves a
# deleted regular file into .recycle/<user>[/its directories] with its
# content, owner and mode; versions keep "Copy #N of NAME"; excluded names,
# excluded directories and files over the maximum size are deleted as
# before, as are directories and files already in the bin; a rename over an
# existing file does not recycle it (nor does Samba's).  Deletes by
# smbclient `rm`, by an impacket FILE_DELETE_ON_CLOSE open and by
# FILE_DISPOSITION_INFORMATION; a named stream goes with its file.  Two
# users deleting the same name get a bin each; another user's
# delete-on-close, closed last by alice, goes into the deleter's bin.  A
# symlink a local account planted at the bin or at a user's directory in
# it (pointing outside the share) is not followed: the outside stays as it
# was and the file is deleted.  A share without the key deletes as before
# and makes no bin.  A directory another user made at bob's bin is not
# used, and a bin on another file system (EXDEV) means a real delete.
#
# RECYCLE_SERVER=samba runs the same client steps against Debian's smbd
# (/usr/sbin/smbd, t/compat/samba.conf.in) with `vfs objects = recycle`
# and the recycle:* options of the same meaning: the checks that fail
# there are where the two differ (HACKING.md "Recycle bin"; Samba 4.17:
# the planted symlinks are followed out of the share, bob's file goes into
# the directory alice made for him, another user's delete is not
# recycled; the bin on another file system fails there only for want of
# usmbd's log line).
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_SHARES="[rb]
	path = $T/rb
	read only = no
	recycle directory = .recycle/%U
	recycle keep tree = yes
	recycle versions = yes
	recycle exclude = *.tmp ~\$*
	recycle exclude dir = scratch
	recycle max size = 1K

[flat]
	path = $T/flat
	read only = no
	recycle directory = .recycle/%U

[xdev]
	path = $T/xdev
	read only = no
	recycle directory = .recycle/%U

[sym]
	path = $T/sym
	read only = no
	recycle directory = .recycle/%U

[sym2]
	path = $T/sym2
	read only = no
	recycle directory = .recycle/%U"
mkdir -p "$T/rb" "$T/flat" "$T/sym" "$T/sym2" "$T/outside" "$T/xdev"
chmod 1777 "$T/rb" "$T/flat" "$T/sym" "$T/sym2" "$T/xdev"
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
# mk OWNER MODE PATH CONTENT
mk() {
	mkdir -p "$(dirname "$3")"
	printf '%s' "$4" >"$3"
	chown "$1" "$3"
	chmod "$2" "$3"
}
mk alice 0640 "$T/rb/f1.txt" one
mk alice 0600 "$T/rb/d/sub/g.txt" gee
chown -R alice "$T/rb/d"
mk alice 0644 "$T/rb/x.tmp" tmp
mk alice 0644 "$T/rb/~\$doc.docx" lock
mk alice 0644 "$T/rb/scratch/s.txt" scratch
chown alice "$T/rb/scratch"
mk alice 0644 "$T/rb/big.bin" "$(head -c 2048 /dev/zero | tr '\0' x)"
mkdir -p "$T/rb/emptydir"
chown alice "$T/rb/emptydir"
mk alice 0644 "$T/rb/same.txt" alice-same
mk alice 0644 "$T/rb/doc.txt" doc
mk alice 0644 "$T/rb/disp.txt" disp
mk alice 0644 "$T/rb/ren-src.txt" src
mk alice 0644 "$T/rb/ren-dst.txt" dst
mk bob 0644 "$T/rb/bobs.txt" bobs
mk alice 0644 "$T/flat/v.txt" v1
mk bob 0644 "$T/flat/b.txt" bee
# alice made bob's bin before him, open to all: not bob's, not used
mkdir -p -m 1777 "$T/flat/.recycle"
mkdir -m 0777 "$T/flat/.recycle/bob"
chown alice "$T/flat/.recycle/bob"
# the bin on another file system: the rename cannot be done (EXDEV)
mk alice 0644 "$T/xdev/x.txt" ex
mkdir -m 1777 "$T/xdev/.recycle"
xdev_mounted=0
mount -t tmpfs -o mode=1777,size=1M usmbd-recycle "$T/xdev/.recycle" &&
    xdev_mounted=1
mk alice 0644 "$T/sym/s.txt" s
mk alice 0644 "$T/sym2/s.txt" s
mk alice 0644 "$T/share/plain.txt" plain
# planted by a local account: the bin, or alice's directory in it, is a
# symlink to a directory outside the share
mk root 0644 "$T/outside/keep.txt" keep
chmod 1777 "$T/outside"	# following the link would work: it must not
ln -s "$T/outside" "$T/sym/.recycle"
mkdir -m 1777 "$T/sym2/.recycle"
ln -s "$T/outside" "$T/sym2/.recycle/alice"
# samba_shares: the same shares for Debian's Samba, with vfs_recycle
samba_shares() {
	local share opts

	for share in rb flat xdev sym sym2; do
		opts="recycle:repository = .recycle/%U"
		[ "$share" = rb ] && opts="$opts
	recycle:keeptree = yes
	recycle:versions = yes
	recycle:exclude = *.tmp,~\$*
	recycle:exclude_dir = scratch
	recycle:maxsize = 1024"
		printf '\n[%s]\n\tpath = %s\n\tread only = no\n\tvfs objects = recycle acl_xattr streams_xattr\n\t%s\n' \
		    "$share" "$T/$share" "$opts"
	done
}
if [ "${RECYCLE_SERVER:-usmbd}" = samba ]; then
	# Samba makes .recycle 0700 (recycle:directory_mode): bob's bin
	# could not be made; an admin makes the parent as usmbd would
	mkdir -m 1777 "$T/rb/.recycle"
	samba_start "$T/samba" "$PORT" "$(samba_shares)" ||
	    { echo "smbd did not come up" >&2; exit 1; }
	LOG=$T/samba/smbd.log
else
	integ_start || exit 1
fi

outside_sum() { find "$T/outside" -printf '%p %s %m\n' | sort | md5sum; }
outside_before=$(outside_sum)

smb() {	# USER PW SHARE COMMANDS
	timeout 60 smbclient "//127.0.0.1/$3" -p "$PORT" -U "$1%$2" -m SMB3 \
	    -c "$4" >"$T/smb.out" 2>&1
}
# owner mode content of a file
stat3() { [ -f "$1" ] && echo "$(stat -c '%U %a' "$1") $(cat "$1")"; }

smb alice "$ALICE_PW" rb "rm f1.txt"
[ "$(stat3 "$T/rb/.recycle/alice/f1.txt")" = "alice 640 one" ] &&
    [ ! -e "$T/rb/f1.txt" ] &&
    ok "smbclient rm: f1.txt is in .recycle/alice, owner, mode, content kept" ||
    { fail "smbclient rm into the bin"; cat "$T/smb.out"; ls -laR "$T/rb"; }
[ "$(stat -c '%U %a' "$T/rb/.recycle/alice")" = "alice 700" ] &&
    [ "$(stat -c '%a' "$T/rb/.recycle")" = 1777 ] &&
    ok "the bin: .recycle sticky for all (1777), .recycle/alice alice's 0700" ||
    fail "bin modes: $(stat -c '%n %U %a' "$T/rb/.recycle" "$T/rb/.recycle/alice")"

mk alice 0640 "$T/rb/f1.txt" two
smb alice "$ALICE_PW" rb "rm f1.txt"
[ "$(cat "$T/rb/.recycle/alice/f1.txt")" = one ] &&
    [ "$(cat "$T/rb/.recycle/alice/Copy #1 of f1.txt" 2>/dev/null)" = two ] &&
    ok "versions: the second f1.txt is 'Copy #1 of f1.txt', the first kept" ||
    { fail "versions"; ls -la "$T/rb/.recycle/alice"; }

smb alice "$ALICE_PW" rb "rm d/sub/g.txt"
[ "$(stat3 "$T/rb/.recycle/alice/d/sub/g.txt")" = "alice 600 gee" ] &&
    ok "keep tree: d/sub/g.txt is .recycle/alice/d/sub/g.txt" ||
    { fail "keep tree"; ls -laR "$T/rb/.recycle"; }

smb alice "$ALICE_PW" rb 'rm x.tmp; rm ~$doc.docx; rm scratch/s.txt; rm big.bin; rmdir emptydir'
gone=1
for f in x.tmp '~$doc.docx' scratch/s.txt big.bin emptydir; do
	[ -e "$T/rb/$f" ] && gone=0
	[ -e "$T/rb/.recycle/alice/$f" ] && gone=0
done
[ "$gone" = 1 ] &&
    ok "excluded names (*.tmp, ~\$*), an excluded directory, a file over 1K, a directory: deleted, not in the bin" ||
    { fail "exclusions"; cat "$T/smb.out"; ls -laR "$T/rb"; }

smb alice "$ALICE_PW" rb 'rm .recycle\alice\f1.txt'
[ ! -e "$T/rb/.recycle/alice/f1.txt" ] &&
    [ ! -e "$T/rb/.recycle/alice/.recycle" ] &&
    ok "a file in the bin is deleted for real" ||
    { fail "delete in the bin"; ls -laR "$T/rb/.recycle"; }

smb alice "$ALICE_PW" rb "rm same.txt"
mk bob 0644 "$T/rb/same.txt" bob-same
smb bob "$BOB_PW" rb "rm same.txt"
[ "$(stat3 "$T/rb/.recycle/alice/same.txt")" = "alice 644 alice-same" ] &&
    [ "$(stat3 "$T/rb/.recycle/bob/same.txt")" = "bob 644 bob-same" ] &&
    [ "$(stat -c '%U %a' "$T/rb/.recycle/bob")" = "bob 700" ] &&
    ok "two users deleting the same name: each in his own bin" ||
    { fail "two users"; cat "$T/smb.out"; ls -laR "$T/rb/.recycle"; }

mk alice 0644 "$T/flat/v.txt" v2
smb alice "$ALICE_PW" flat "rm v.txt"
mk alice 0644 "$T/flat/v.txt" v3
smb alice "$ALICE_PW" flat "rm v.txt"
[ "$(cat "$T/flat/.recycle/alice/v.txt")" = v3 ] &&
    [ "$(ls "$T/flat/.recycle/alice" | wc -l)" = 1 ] &&
    ok "without versions the older file in the bin is replaced" ||
    { fail "no versions"; ls -la "$T/flat/.recycle/alice"; }

smb bob "$BOB_PW" flat "rm b.txt"
[ ! -e "$T/flat/b.txt" ] && [ -z "$(ls -A "$T/flat/.recycle/bob")" ] &&
    ok "a directory of another user at bob's bin is not used: his file is deleted" ||
    { fail "another user's directory at the bin"; ls -la "$T/flat"; ls -laR "$T/flat/.recycle"; }

if [ "$xdev_mounted" = 1 ]; then
	smb alice "$ALICE_PW" xdev "rm x.txt"
	r=$?
	[ "$r" = 0 ] && [ ! -e "$T/xdev/x.txt" ] &&
	    [ ! -e "$T/xdev/.recycle/alice/x.txt" ] &&
	    grep -q 'xdev\\x.txt cannot go into the bin .recycle/alice (Invalid cross-device link): deleted' "$LOG" &&
	    ok "a bin on another file system: the file is deleted, logged at level 1" ||
	    { fail "a bin on another file system"; cat "$T/smb.out"; ls -la "$T/xdev" "$T/xdev/.recycle"; grep recycle "$LOG"; }
	umount "$T/xdev/.recycle"
else
	fail "cannot mount a tmpfs for the bin on another file system"
fi

smb alice "$ALICE_PW" sym "rm s.txt"
r1=$?
smb alice "$ALICE_PW" sym2 "rm s.txt"
r2=$?
[ "$r1" = 0 ] && [ "$r2" = 0 ] && [ ! -e "$T/sym/s.txt" ] &&
    [ ! -e "$T/sym2/s.txt" ] && [ "$(outside_sum)" = "$outside_before" ] &&
    [ -L "$T/sym/.recycle" ] && [ -L "$T/sym2/.recycle/alice" ] &&
    ok "a symlink at the bin or at alice's directory in it is not followed: the file is deleted, the outside unchanged" ||
    { fail "planted symlinks"; cat "$T/smb.out"; ls -la "$T/outside"; }

smb alice "$ALICE_PW" share "rm plain.txt"
[ ! -e "$T/share/plain.txt" ] && [ ! -e "$T/share/.recycle" ] &&
    ok "a share without recycle directory deletes as before" ||
    fail "share without the key"

"$PYTHON" - "$PORT" "$ALICE_PW" "$BOB_PW" >"$T/out.py" 2>&1 <<'PYEOF'
import struct, sys
from impacket.smbconnection import SMBConnection, SessionError
from impacket import smb3
port, apw, bpw = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fails = 0

def check(what, cond, detail=''):
    global fails
    print('%s %s%s' % ('ok  ' if cond else 'FAIL', what,
          ' -- ' + str(detail) if detail else ''))
    fails += 0 if cond else 1

def login(user, pw):
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=port)
    c.login(user, pw)
    return c, c.getSMBServer(), c.connectTree('rb')

DELETE, READ, WRITE_ATTR = 0x00010000, 0x1, 0x100
ALL_SHARE = 7
ca, sa, ta = login('alice', apw)
# FILE_DELETE_ON_CLOSE (0x1000) on an open, then its close
fid = sa.create(ta, 'doc.txt', DELETE | READ, ALL_SHARE, 0x1000, 1, 0)
sa.close(ta, fid)
print('step doc')
# FILE_DISPOSITION_INFORMATION (13) on a handle
fid = sa.create(ta, 'disp.txt', DELETE | READ, ALL_SHARE, 0, 1, 0)
sa.setInfo(ta, fid, b'\x01', 1, 13)
sa.close(ta, fid)
print('step disp')
# FILE_RENAME_INFORMATION (10) with ReplaceIfExists over ren-dst.txt
fid = sa.create(ta, 'ren-src.txt', DELETE | READ, ALL_SHARE, 0, 1, 0)
name = 'ren-dst.txt'.encode('utf-16-le')
sa.setInfo(ta, fid, struct.pack('<B7xQI', 1, 0, len(name)) + name, 1, 10)
sa.close(ta, fid)
print('step rename')
# bob's delete of his own file while alice holds it open: alice's close
# is the last; the file goes into bob's bin
fa = sa.create(ta, 'bobs.txt', READ, ALL_SHARE, 0, 1, 0)
cb, sb, tb = login('bob', bpw)
fb = sb.create(tb, 'bobs.txt', DELETE | READ, ALL_SHARE, 0, 1, 0)
sb.setInfo(tb, fb, b'\x01', 1, 13)
sb.close(tb, fb)
sa.close(ta, fa)
print('step crossuser')
# a file with a named stream: the stream goes into the bin with it
fid = sa.create(ta, 'strm.txt', 0x2 | 0x1 | DELETE, ALL_SHARE, 0, 5, 0)
sa.writeFile(ta, fid, b'base')
sa.close(ta, fid)
fid = sa.create(ta, 'strm.txt:s1', 0x2 | 0x1, ALL_SHARE, 0, 5, 0)
sa.writeFile(ta, fid, b'streamdata')
sa.close(ta, fid)
fid = sa.create(ta, 'strm.txt', DELETE | READ, ALL_SHARE, 0x1000, 1, 0)
sa.close(ta, fid)
try:
    fid = sa.create(ta, '.recycle\\alice\\strm.txt:s1', READ, ALL_SHARE, 0, 1, 0)
    data = sa.read(ta, fid, 0, 100)
    sa.close(ta, fid)
except Exception as e:
    data = repr(e)
print('stream in the bin: %r' % (data,))
PYEOF
cat "$T/out.py"
grep -q 'step crossuser' "$T/out.py" || fail "impacket steps ran"
[ "$(stat3 "$T/rb/.recycle/alice/doc.txt")" = "alice 644 doc" ] &&
    [ ! -e "$T/rb/doc.txt" ] &&
    ok "impacket FILE_DELETE_ON_CLOSE: doc.txt in the bin" ||
    fail "delete-on-close into the bin"
[ "$(stat3 "$T/rb/.recycle/alice/disp.txt")" = "alice 644 disp" ] &&
    [ ! -e "$T/rb/disp.txt" ] &&
    ok "impacket FILE_DISPOSITION_INFORMATION: disp.txt in the bin" ||
    fail "disposition into the bin"
[ "$(cat "$T/rb/ren-dst.txt")" = src ] &&
    [ ! -e "$T/rb/.recycle/alice/ren-dst.txt" ] &&
    ok "a rename over an existing file does not recycle the one replaced (as Samba)" ||
    fail "rename over an existing file"
grep -q "stream in the bin: b'streamdata'" "$T/out.py" &&
    [ ! -e "$T/rb/strm.txt" ] &&
    ok "a file's named stream goes into the bin with it" ||
    fail "a stream into the bin"
for i in $(seq 1 50); do
	[ -e "$T/rb/.recycle/bob/bobs.txt" ] && break
	sleep 0.1
done
[ "$(stat3 "$T/rb/.recycle/bob/bobs.txt")" = "bob 644 bobs" ] &&
    [ ! -e "$T/rb/bobs.txt" ] && [ ! -e "$T/rb/.recycle/alice/bobs.txt" ] &&
    ok "bob's delete closed last by alice: in bob's bin, by bob's worker" ||
    { fail "cross-user delete"; ls -laR "$T/rb/.recycle"; grep -i 'delete on close\|recycle' "$LOG" | tail; }

finish
