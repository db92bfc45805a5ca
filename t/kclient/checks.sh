#!/bin/bash
# One ordinary-use check of the kernel client, run inside the guest by
# guest.sh as `bash checks.sh NAME` (in a time limit).  Exit 0 = ok; else the
# last line of output is the reason.  Environment from guest.sh:
#	KC_ROOT		the source tree (read-only here)
#	KC_SHARE	the share's directory on the server's disk (ext4 RAM disk)
#	KC_TMPSHARE	the [tmp] share's directory (a tmpfs)
#	KC_SERVER	usmbd or samba (the checks do not look at it)
# Mounts prepared by guest.sh (vers=3.1.1): /mnt/a alice, /mnt/b alice again
# with nosharesock (its own connection, so its own superblock), /mnt/c bob
# with nosharesock.  Each check works in its own directory NAME on the share.
set -u
name=$1
A=/mnt/a
W=$A/$name		# this check's directory through the mount
S=$KC_SHARE/$name	# the same directory on the server's disk
PY=/usr/bin/python3
declare -A PW=([alice]=alicepw1 [bob]=bobpw1)

die() { echo "$*" | tr "\n" " "; echo; exit 1; }
need() { mountpoint -q "$1" || die "$1 is not mounted"; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# kc_mount DIR SHARE USER OPTS: mount.cifs; prints its error on failure.
kc_mount() {
	mkdir -p "$1"
	mount -t cifs "//127.0.0.1/$2" "$1" \
	    -o "username=$3,password=${PW[$3]}${4:+,$4}" 2>&1
}

# wait_gone PATH: up to 5 s (the client's deferred close holds a handle
# open for a second after the last close).
wait_gone() {
	local i
	for i in $(seq 1 50); do
		[ -e "$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# mount_check OPTS: mount, write, read back, see it on the server's disk,
# list, remove, unmount.
mount_check() {
	local m=/mnt/m_$name
	out=$(kc_mount "$m" share alice "$1") || die "mount -o $1 failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	echo "hello $name" >"$m/$name.txt" || die "write failed"
	[ "$(cat "$m/$name.txt")" = "hello $name" ] || die "read back differs"
	[ "$(cat "$KC_SHARE/$name.txt")" = "hello $name" ] ||
	    die "the server's disk does not have the data"
	ls -l "$m" | grep -q "$name.txt" || die "ls does not show the file"
	rm "$m/$name.txt" || die "rm failed"
	wait_gone "$KC_SHARE/$name.txt" || die "the file stays on the server"
	umount "$m" || die "umount failed"
	trap - EXIT
}

setup() {
	need "$A"
	mkdir "$W" || die "mkdir $W failed"
}

# Compare two trees' names, types, file sizes and whole-second mtimes
# (cifs shows its own owner and mode bits, so not those).
same_tree() {
	diff -r "$1" "$2" >/dev/null || die "diff -r $1 $2: contents differ"
	diff <(tree_list "$1") <(tree_list "$2") >/tmp/tree.diff ||
	    { head -n 4 /tmp/tree.diff; die "names, sizes or mtimes differ"; }
}
tree_list() {	# sizes of files only (cifs shows directories as size 0)
	(cd "$1" && { find . -type f -printf '%p %y %s %TY-%Tm-%Td %TH:%TM:%.2TS\n'
	    find . ! -type f -printf '%p %y - %TY-%Tm-%Td %TH:%TM:%.2TS\n'; } | sort)
}

case $name in
mount_2.0)	mount_check vers=2.0 ;;
mount_2.1)	mount_check vers=2.1 ;;
mount_3.0)	mount_check vers=3.0 ;;
mount_3.02)	mount_check vers=3.02 ;;
mount_3.1.1)	mount_check vers=3.1.1 ;;
mount_3.0_seal)	mount_check vers=3.0,seal ;;
mount_3.02_seal) mount_check vers=3.02,seal ;;
mount_3.1.1_seal) mount_check vers=3.1.1,seal ;;
mount_2.0_sign)	mount_check vers=2.0,sign ;;
mount_2.1_sign)	mount_check vers=2.1,sign ;;
mount_3.0_sign)	mount_check vers=3.0,sign ;;
mount_3.1.1_sign) mount_check vers=3.1.1,sign ;;

dd_cmp)
	setup
	dd if=/dev/urandom of=/tmp/dd.src bs=1M count=8 status=none
	dd if=/tmp/dd.src of="$W/f" bs=1M status=none || die "dd to the mount failed"
	drop_caches
	cmp /tmp/dd.src "$W/f" || die "read back through the mount differs"
	cmp /tmp/dd.src "$S/f" || die "the server's disk copy differs"
	dd if="$W/f" of=/tmp/dd.back bs=64k status=none || die "dd from the mount failed"
	cmp /tmp/dd.src /tmp/dd.back || die "dd read back differs" ;;

cp_a)
	setup
	cp -a "$KC_ROOT/proto" "$W/tree" || die "cp -a failed"
	drop_caches
	same_tree "$KC_ROOT/proto" "$W/tree"
	same_tree "$KC_ROOT/proto" "$S/tree" ;;

rename_file)
	setup
	echo one >"$W/a"
	mv "$W/a" "$W/b" || die "mv a b failed"
	[ ! -e "$W/a" ] && [ "$(cat "$W/b")" = one ] || die "wrong names after mv"
	[ ! -e "$S/a" ] && [ "$(cat "$S/b")" = one ] || die "wrong names on the server" ;;

rename_over)
	setup
	echo one >"$W/a"
	echo two >"$W/b"
	mv -f "$W/a" "$W/b" || die "mv over an existing file failed"
	[ ! -e "$W/a" ] && [ "$(cat "$W/b")" = one ] || die "wrong content after mv"
	[ ! -e "$S/a" ] && [ "$(cat "$S/b")" = one ] || die "wrong content on the server" ;;

rename_open)
	# rename a file another fd holds open, then read through that fd
	setup
	echo data >"$W/a"
	exec 3<"$W/a"
	mv "$W/a" "$W/b" || die "mv of an open file failed"
	[ "$(cat <&3)" = data ] || die "the open fd reads wrong data after mv"
	exec 3<&-
	[ "$(cat "$S/b")" = data ] && [ ! -e "$S/a" ] || die "wrong names on the server" ;;

rename_dir)
	setup
	mkdir -p "$W/d1/sub"
	echo x >"$W/d1/sub/f"
	mv "$W/d1" "$W/d2" || die "mv of a directory failed"
	[ "$(cat "$W/d2/sub/f")" = x ] && [ ! -e "$W/d1" ] || die "wrong tree after mv"
	[ "$(cat "$S/d2/sub/f")" = x ] && [ ! -e "$S/d1" ] || die "wrong tree on the server" ;;

rename_dir_over)
	# rename(2) of a directory over an empty one replaces it (POSIX)
	setup
	mkdir -p "$W/d1" "$W/d2"
	echo x >"$W/d1/f"
	mv -T "$W/d1" "$W/d2" || die "mv -T over an empty directory failed"
	[ "$(cat "$W/d2/f")" = x ] && [ ! -e "$W/d1" ] || die "wrong tree after mv" ;;

rm_rf)
	setup
	for d in a a/b a/b/c a/x; do
		mkdir "$W/$d" || die "mkdir $d failed"
		for i in 1 2 3 4 5 6; do echo "$d $i" >"$W/$d/f$i"; done
	done
	rm -rf "$W/a" || die "rm -rf failed"
	[ ! -e "$W/a" ] || die "the tree is still visible"
	wait_gone "$S/a" || die "the tree stays on the server: $(find "$S/a" | head -n 3 | tr '\n' ' ')" ;;

truncate)
	setup
	head -c 100000 /dev/urandom >/tmp/tr.src
	cp /tmp/tr.src "$W/f"
	truncate -s 1048576 "$W/f" || die "truncate up failed"
	[ "$(stat -c %s "$W/f")" = 1048576 ] || die "size after truncate up: $(stat -c %s "$W/f")"
	drop_caches
	cmp -n 100000 /tmp/tr.src "$W/f" || die "data before the old end changed"
	cmp -i 100000:0 -n 948576 "$W/f" /dev/zero || die "the extension is not zeros"
	truncate -s 5000 "$W/f" || die "truncate down failed"
	drop_caches
	[ "$(stat -c %s "$W/f")" = 5000 ] || die "size after truncate down: $(stat -c %s "$W/f")"
	[ "$(stat -c %s "$S/f")" = 5000 ] || die "server size after truncate down: $(stat -c %s "$S/f")"
	cmp -n 5000 /tmp/tr.src "$W/f" || die "data after truncate down differs" ;;

sparse)
	setup
	head -c 4096 /dev/urandom >/tmp/sp.src
	truncate -s 64M "$W/f" || die "truncate -s 64M failed"
	dd if=/tmp/sp.src of="$W/f" bs=4k seek=8192 conv=notrunc status=none ||
	    die "dd seek failed"
	drop_caches
	[ "$(stat -c %s "$W/f")" = 67108864 ] || die "size: $(stat -c %s "$W/f")"
	dd if="$W/f" bs=4k skip=8192 count=1 status=none | cmp - /tmp/sp.src ||
	    die "the written block reads back wrong"
	cmp -n 33554432 "$W/f" /dev/zero || die "the hole does not read as zeros"
	cmp -i 33558528:0 -n 33550336 "$W/f" /dev/zero || die "the tail does not read as zeros"
	kb=$(du -k "$S/f" | cut -f1)
	[ "$kb" -lt 4096 ] || die "the server's file is not sparse ($kb KiB allocated)" ;;

mmap)
	setup
	$PY - "$W/f" "$S/f" <<'EOF' || exit 1
import mmap, os, sys
w, s = sys.argv[1], sys.argv[2]
n = 256 * 1024
pat = bytes((i * 7 + 3) & 0xff for i in range(n))
with open(w, "wb") as f:
    f.truncate(n)
with open(w, "r+b") as f:
    m = mmap.mmap(f.fileno(), n)
    m[:] = pat
    m.flush()
    m.close()
os.sync()
open("/proc/sys/vm/drop_caches", "w").write("3")
with open(w, "rb") as f:
    m = mmap.mmap(f.fileno(), n, prot=mmap.PROT_READ)
    if m[:] != pat:
        sys.exit("mmap read back through the mount differs")
    m.close()
if open(s, "rb").read() != pat:
    sys.exit("the server's disk copy differs from what mmap wrote")
EOF
	;;

tar)
	setup
	tar -C "$KC_ROOT" -cf /tmp/t.tar proto || die "tar c on the host tree failed"
	mkdir "$W/x"
	tar -C "$W/x" -xf /tmp/t.tar || die "tar x onto the mount failed"
	drop_caches
	same_tree "$KC_ROOT/proto" "$W/x/proto"
	tar -C "$W/x" -cf "$W/back.tar" proto || die "tar c from the mount failed"
	rm -rf /tmp/tx && mkdir /tmp/tx
	tar -C /tmp/tx -xf "$W/back.tar" || die "tar x of the archive made on the mount failed"
	same_tree "$KC_ROOT/proto" /tmp/tx/proto ;;

sqlite)
	# SQLite's locks (a byte past 1 GiB, shared ranges, unlocks of part
	# of a range) fail as SMB byte-range locks on Samba as well ("database
	# is locked"): SQLite on cifs is run with -o nobrl (locks kept by the
	# client), as its users are told to.
	setup
	m=/mnt/sq
	out=$(kc_mount "$m" share alice vers=3.1.1,nobrl) || die "mount -o nobrl failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	{
		echo "create table t(id integer primary key, v text);"
		for i in $(seq 1 40); do
			echo "begin; insert into t(v) values('row $i'); update t set v = v || '!' where id = $i; commit;"
		done
	} | sqlite3 -bail "$m/$name/db" 2>&1 || die "sqlite3 transactions failed"
	[ "$(sqlite3 "$m/$name/db" 'select count(*) from t where v like "row %!"')" = 40 ] ||
	    die "wrong row count"
	[ "$(sqlite3 "$m/$name/db" 'pragma integrity_check')" = ok ] || die "integrity_check failed"
	[ "$(sqlite3 "$S/db" 'select count(*) from t')" = 40 ] || die "the server's copy is wrong" ;;

git)
	setup
	export HOME=/tmp GIT_AUTHOR_NAME=kc GIT_AUTHOR_EMAIL=kc@example.org \
	    GIT_COMMITTER_NAME=kc GIT_COMMITTER_EMAIL=kc@example.org
	git config --global --add safe.directory '*'
	cd "$W" || die "cd"
	git init -q repo || die "git init failed"
	cd repo || die "cd repo"
	cp "$KC_ROOT"/proto/*.h . || die "cp failed"
	git add . && git commit -qm one || die "git commit 1 failed"
	echo change >>"$(ls *.h | head -n 1)"
	git mv "$(ls *.h | tail -n 1)" renamed.h || die "git mv failed"
	git commit -qam two || die "git commit 2 failed"
	[ "$(git log --oneline | wc -l)" = 2 ] || die "git log does not show 2 commits"
	git fsck --strict 2>&1 | grep -v '^Checking' && die "git fsck complains"
	git gc -q || die "git gc failed"
	git status --porcelain | grep -q . && die "the tree is dirty after commit"
	true ;;

dirlease_listing)
	# Directory leases (issue 16): a listing /mnt/a holds (cached under
	# a directory lease where the client asks for one: 6.x caches
	# directories it lists for dir_cache_timeout, 30 s) shows at once a
	# name made through /mnt/b (another connection) and one made and one
	# removed by a local process on the server: the lease was broken.
	setup
	need /mnt/b
	echo one >"$W/one"
	seen() {	# seen NAME yes|no: within 0.5 s, well below 30 s
		local i
		for i in 1 2 3 4 5; do
			if ls "$W" | grep -qx "$1"; then
				[ "$2" = yes ] && return 0
			else
				[ "$2" = no ] && return 0
			fi
			sleep 0.1
		done
		return 1
	}
	ls "$W" >/dev/null && ls "$W" >/dev/null
	echo two >"/mnt/b/$name/two" || die "create through /mnt/b failed"
	seen two yes || die "a name made through /mnt/b is not listed in /mnt/a"
	ls "$W" >/dev/null
	echo three >"$S/three"
	seen three yes || die "a name made on the server's disk is not listed"
	ls "$W" >/dev/null
	rm "$S/one"
	seen one no || die "a name removed on the server's disk is still listed" ;;

lock_two_mounts|lock_two_users)
	# fcntl locks taken through one mount are seen through another mount
	# (another connection): a conflicting lock fails, a disjoint one
	# succeeds, and the range is free after the unlock.
	setup
	other=/mnt/b
	[ "$name" = lock_two_users ] && other=/mnt/c
	need "$other"
	echo "lock test data" >"$S/f"
	chmod 0666 "$S/f"
	$PY - "$W/f" "$other/$name/f" <<'EOF' || exit 1
import fcntl, subprocess, sys
a, b = sys.argv[1], sys.argv[2]
probe = """
import fcntl, sys
f = open(sys.argv[1], "r+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, int(sys.argv[3]), int(sys.argv[2]))
except OSError:
    sys.exit(3)
"""
def other(start, length):
    return subprocess.run([sys.executable, "-c", probe, b, str(start),
                           str(length)], timeout=60).returncode
fa = open(a, "r+")
fcntl.lockf(fa, fcntl.LOCK_EX | fcntl.LOCK_NB, 100, 0)
r = other(0, 10)
if r != 3:
    sys.exit("the other mount got a lock that conflicts (exit %d)" % r)
r = other(200, 10)
if r != 0:
    sys.exit("the other mount could not take a disjoint lock (exit %d)" % r)
fcntl.lockf(fa, fcntl.LOCK_UN, 100, 0)
r = other(0, 10)
if r != 0:
    sys.exit("the other mount could not lock after the unlock (exit %d)" % r)
EOF
	;;

unlink_hardlink_open)
	# Issue 22 case 1: ul1 and its hard link ul2; ul1 open; rm ul2; close:
	# the server keeps ul1 and drops ul2.
	setup
	echo "keep me" >"$W/ul1"
	ln "$W/ul1" "$W/ul2" || die "ln failed"
	exec 3<"$W/ul1"
	out=$(rm "$W/ul2" 2>&1) || die "rm ul2 failed: $out"
	exec 3<&-
	sleep 2
	[ -e "$S/ul1" ] || die "data loss: the server no longer has ul1"
	[ "$(cat "$S/ul1")" = "keep me" ] || die "the server's ul1 has lost its data"
	wait_gone "$S/ul2" || die "the server still has ul2"
	[ "$(cat "$W/ul1")" = "keep me" ] || die "ul1 unreadable through the mount"
	[ ! -e "$W/ul2" ] || die "ul2 still visible through the mount" ;;

unlink_open)
	# Issue 22 case 2: rm of a file this client holds open (6.1 sends a
	# compound CREATE with DELETE_ON_CLOSE + CLOSE).
	setup
	echo data >"$W/f"
	exec 3<"$W/f"
	out=$(rm "$W/f" 2>&1) || die "rm of an open file failed: $out"
	exec 3<&-
	wait_gone "$S/f" || die "the file stays on the server after the close"
	[ ! -e "$W/f" ] || die "the file is still visible through the mount" ;;

xattr_user)
	# Issue 22 case 3: a user xattr's name comes back as it was set.
	setup
	echo x >"$W/f"
	setfattr -n user.kcone -v x "$W/f" 2>&1 || die "setfattr failed"
	v=$(getfattr --absolute-names --only-values -n user.kcone "$W/f" 2>&1) ||
	    die "getfattr -n user.kcone failed: $v; listed: $(getfattr --absolute-names -d "$W/f" 2>&1 | tr '\n' ' ')"
	[ "$v" = x ] || die "getfattr returned '$v'" ;;

symlink_native)
	# Issue 16: ln -s on an ordinary (not posix) mount: the client sets a
	# symlink reparse point (FSCTL_SET_REPARSE_POINT), a real symlink on
	# the server.  Such a mount sees a link inside the share as its target
	# (a Windows handle follows it, as Samba's `follow symlinks`), so the
	# link and one made on the server read as the file they point to.
	setup
	echo x >"$W/t" && ln -s t "$W/l" 2>&1 || die "ln -s failed"
	[ -L "$S/l" ] && [ "$(readlink "$S/l")" = t ] ||
	    die "not a symlink to t on the server: $(ls -l "$S")"
	ln -s t "$S/srv"
	drop_caches
	[ "$(cat "$W/l")" = x ] && [ "$(cat "$W/srv")" = x ] ||
	    die "reading through the links: $(ls -l "$W" | tr '\n' ' ')" ;;

chmod_cifsacl)
	# Issue 22 case 4: chmod on a cifsacl mount (mode from the ACL).
	m=/mnt/acl
	out=$(kc_mount "$m" share alice cifsacl) || die "mount -o cifsacl failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	mkdir -p "$m/$name" && echo x >"$m/$name/f" || die "create failed"
	out=$(chmod 604 "$m/$name/f" 2>&1) || die "chmod 604 failed: $out"
	mode=$(stat -c %a "$m/$name/f")
	[ "$mode" = 604 ] || die "mode after chmod 604 is $mode" ;;

second_user)
	# Issue 22 case 5: bob mounts the same server while alice's mount
	# exists (the client shares alice's connection: a second session).
	need "$A"
	m=/mnt/bob
	out=$(kc_mount "$m" share bob vers=3.1.1) || die "bob's mount failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	mkdir -p "$m/$name" && echo bob >"$m/$name/f" || die "bob cannot create a file"
	[ "$(stat -c %U "$KC_SHARE/$name/f")" = bob ] ||
	    die "the server created bob's file as $(stat -c %U "$KC_SHARE/$name/f")"
	ls "$A" >/dev/null || die "alice's mount broke" ;;

multiuser)
	# Issue 13: one multiuser mount (root's, as alice), on which each
	# local user gets a session of their own (cifscreds keys) over the
	# mount's one TCP connection; the server acts as each of them.
	m=/mnt/mu
	as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups "$@"; }
	conns() { ss -Htn state established '( dport = :445 )' | awk '{ print $3 }' | sort; }
	before=$(conns)
	out=$(kc_mount "$m" share alice vers=3.1.1,multiuser,sec=ntlmssp,nosharesock) ||
	    die "multiuser mount failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	mine=$(comm -13 <(echo "$before") <(conns))
	[ "$(wc -w <<<"$mine")" = 1 ] || die "the mount made connections: '$mine'"
	mkdir "$m/$name" || die "mkdir as root (alice's session) failed"
	chmod 1777 "$S"
	# The guest has no login session keyring (no PAM), and cifscreds
	# would make one for itself alone: each user joins a session keyring
	# first (keyctl KEYCTL_JOIN_SESSION_KEYRING), adds the key and makes
	# a file in it, so the client finds the key at that uid's first use
	# of the mount; the uid's session then stays with the mount.
	for u in alice bob; do
		out=$(printf '%s\n' "${PW[$u]}" | as "$u" $PY -c '
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).syscall(250, 1, None) < 0:
    sys.exit("keyctl join: %s" % os.strerror(ctypes.get_errno()))
os.execvp("sh", ["sh", "-c", sys.argv[1]])' \
		    "cifscreds add -u $u 127.0.0.1 && echo $u-data >'$m/$name/f${u:0:1}'" 2>&1) ||
		    die "cifscreds add and a create as $u failed: $out"
	done
	[ "$(stat -c %U "$S/fa")" = alice ] || die "alice's file is $(stat -c %U "$S/fa")'s on the server"
	[ "$(stat -c %U "$S/fb")" = bob ] || die "bob's file is $(stat -c %U "$S/fb")'s on the server"
	chmod 0600 "$S/fa" "$S/fb"
	drop_caches
	out=$(as bob cat "$m/$name/fa" 2>&1) && die "bob read alice's 0600 file: $out"
	case $out in *"Permission denied"*) ;; *) die "bob reading alice's 0600 file: $out" ;; esac
	[ "$(as bob cat "$m/$name/fb")" = bob-data ] || die "bob cannot read his own 0600 file"
	[ "$(as alice cat "$m/$name/fa")" = alice-data ] || die "alice cannot read her own 0600 file"
	for i in 1 2 3 4 5 6 7 8; do
		as alice sh -c "echo a$i >>'$m/$name/fa'" || die "alice's append $i failed"
		as bob sh -c "echo b$i >>'$m/$name/fb'" || die "bob's append $i failed"
		[ "$(as alice tail -n 1 "$m/$name/fa")" = "a$i" ] || die "alice reads back wrong data ($i)"
		[ "$(as bob tail -n 1 "$m/$name/fb")" = "b$i" ] || die "bob reads back wrong data ($i)"
	done
	[ "$(tail -n 1 "$S/fa")$(tail -n 1 "$S/fb")" = a8b8 ] || die "the server's files lack the appends"
	[ "$(stat -c %U%a "$S/fa") $(stat -c %U%a "$S/fb")" = "alice600 bob600" ] ||
	    die "owners and modes on the server: $(stat -c '%U %a' "$S/fa" "$S/fb")"
	# still one connection, now with a session per user on it: the
	# client's view (the connection's block in DebugData lists bob's
	# session besides the mount's) and, on usmbd, the server's
	[ "$(comm -13 <(echo "$before") <(conns))" = "$mine" ] ||
	    die "other connections appeared: $(comm -13 <(echo "$before") <(conns))"
	cat /proc/fs/cifs/DebugData
	$PY - "$(id -u bob)" <<'EOF' || exit 1
import re, sys
bob = int(sys.argv[1])
data = open("/proc/fs/cifs/DebugData").read()
blocks = re.split(r"(?m)^\d+\) ConnectionId", data)[1:]
mine = [b for b in blocks if re.search(r"Cred User: %d\b" % bob, b)]
if len(mine) != 1:
    sys.exit("%d client connections hold a session of bob's uid" % len(mine))
users = re.findall(r"Cred User: (\d+)", mine[0])
if len(users) < 2:
    sys.exit("the connection with bob's session has sessions of uids %s" % users)
print("client: one connection, sessions of uids", users)
EOF
	if [ "$KC_SERVER" = usmbd ]; then
		"$KC_ROOT/build/usmbctl" -s /run/kc/usmbd.conf status --json >/tmp/mu.json ||
		    die "usmbctl status failed"
		$PY - /tmp/mu.json "${mine##*:}" <<'EOF' || exit 1
import json, sys
st = json.load(open(sys.argv[1]))
port = int(sys.argv[2])
print(json.dumps(st["sessions"], indent=1))
# the mount's connection (its client port) carries the mount's session,
# alice's, in her worker, and bob's, served by his worker, its socket
# held by alice's (relayed).  Other bob sessions (guest.sh's /mnt/c) are
# on connections of their own.
on = [s for s in st["sessions"] if s["client_port"] == port]
if sorted(s["user"] for s in on) != ["alice", "bob"]:
    sys.exit("sessions on the mount's connection (port %d): %s" % (port, on))
a = [s for s in on if s["user"] == "alice"][0]
b = [s for s in on if s["user"] == "bob"][0]
owner = a["worker_pid"]
if a["socket_pid"] != owner or b["socket_pid"] != owner or \
        b["worker_pid"] == owner:
    sys.exit("bob's session is not relayed by alice's worker %d: %s" %
             (owner, on))
# the connection does not require signing: relayed sealed (ENCRYPT_DATA,
# `relay sealed sessions = yes`, the default)
if b["signing"] != "required" or b["encryption"] != "on":
    sys.exit("bob's relayed session: signing %s, encryption %s" %
             (b["signing"], b["encryption"]))
print("server: alice's session on port %d in worker %d, bob's relayed to "
      "worker %d" % (port, owner, b["worker_pid"]))
EOF
	fi
	umount "$m" || die "umount failed"
	trap - EXIT ;;

times_tmpfs_touch|times_tmpfs_cp_a|times_tmpfs_tar)
	# Issue 22 case 6: timestamps on a share whose filesystem has no user
	# xattrs (the 6.1 guest's tmpfs).
	m=/mnt/t
	if ! mountpoint -q "$m"; then
		out=$(kc_mount "$m" tmp alice vers=3.1.1) || die "mount of [tmp] failed: $out"
	fi
	mkdir "$m/$name" || die "mkdir failed"
	case $name in
	times_tmpfs_touch)
		echo x >"$m/$name/f"
		out=$(touch -d '2001-02-03 04:05:06' "$m/$name/f" 2>&1) || die "touch -d failed: $out"
		drop_caches
		want=$(date -d '2001-02-03 04:05:06' +%s)
		[ "$(stat -c %Y "$m/$name/f")" = "$want" ] || die "mtime not set through the mount"
		[ "$(stat -c %Y "$KC_TMPSHARE/$name/f")" = "$want" ] || die "mtime not set on the server" ;;
	times_tmpfs_cp_a)
		out=$(cp -a "$KC_ROOT/proto" "$m/$name/tree" 2>&1) || die "cp -a failed: $(echo "$out" | head -n 1)"
		drop_caches
		same_tree "$KC_ROOT/proto" "$m/$name/tree" ;;
	times_tmpfs_tar)
		tar -C "$KC_ROOT" -cf /tmp/t.tar proto
		out=$(tar -C "$m/$name" -xf /tmp/t.tar 2>&1) || die "tar x failed: $(echo "$out" | head -n 1)"
		drop_caches
		same_tree "$KC_ROOT/proto" "$m/$name/proto" ;;
	esac ;;

reconnect)
	# Every server process holding a client connection is killed; the
	# mount must reconnect by itself and go on (new opens, and a file that
	# was open before, read again).  Runs last: it cuts every mount.
	setup
	echo before >"$W/f"
	exec 3<"$W/f"
	pids=$(ss -Htnp state established '( sport = :445 )' |
	    grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
	[ -n "$pids" ] || die "no server process holds a connection"
	kill -9 $pids
	ok=
	for i in $(seq 1 60); do
		if [ "$(cat "$W/f" 2>/dev/null)" = before ]; then ok=1; break; fi
		sleep 1
	done
	[ -n "$ok" ] || die "no reconnect within 60 s"
	echo after >"$W/g" || die "write after reconnect failed"
	[ "$(cat "$S/g")" = after ] || die "the server has not the file written after reconnect"
	v=$(cat <&3 2>&1) || die "the fd opened before the reconnect fails: $v"
	[ "$v" = before ] || die "the fd opened before the reconnect reads '$v'"
	exec 3<&- ;;

posix_*)
	# Issue 16: the SMB3 POSIX extensions (`mount -o posix`).  Each on a
	# posix mount of its own, in its own directory.
	m=/mnt/px_$name
	popts=vers=3.1.1,posix
	# chown and chgrp reach the server only on a cifsacl (or modefromsid)
	# mount: without, 6.12 drops them silently and 6.1 fails them with
	# EINVAL (no uid-to-SID mapping: the cifs.idmap upcall is not there).
	# idsfromsid: the client's own mapping, S-1-5-88-1-UID / -2-GID; it
	# also names the caller as the owner of every create, so the file is
	# made by alice; noperm: 6.1 shows a posix mount's files as the
	# mount's uid (root), and the server judges as alice anyway.
	[ "$name" = posix_chown ] && popts=$popts,cifsacl,idsfromsid,noperm
	out=$(kc_mount "$m" share alice "$popts") ||
	    die "mount -o $popts failed: $out"
	trap 'umount "$m" 2>/dev/null' EXIT
	grep -q "$m .*posix" /proc/mounts ||
	    die "the mount is not a posix one: $(grep " $m " /proc/mounts)"
	mkdir "$m/$name" || die "mkdir failed"
	P=$m/$name
	case $name in
	posix_stat)
		# mode and owner as the server has them
		(umask 027; echo x >"$P/f") || die "create failed"
		[ "$(stat -c %a "$P/f")" = "$(stat -c %a "$S/f")" ] ||
		    die "mode $(stat -c %a "$P/f") through the mount, $(stat -c %a "$S/f") on the server"
		# (the owner shown depends on the client's SID mapping: with no
		# cifs.idmap helper S-1-22-1-uid is the mount's uid)
		[ "$(stat -c %U "$S/f")" = alice ] || die "the server's file is not alice's"
		[ "$(stat -c %h "$P/f")" = 1 ] || die "nlink $(stat -c %h "$P/f")" ;;
	posix_chmod)
		echo x >"$P/f" && chmod 0751 "$P/f" || die "chmod failed"
		[ "$(stat -c %a "$S/f")" = 751 ] || die "mode on the server $(stat -c %a "$S/f")"
		drop_caches
		[ "$(stat -c %a "$P/f")" = 751 ] || die "mode through the mount $(stat -c %a "$P/f")" ;;
	posix_chown)
		# alice may give her file her own group, not bob's group, not
		# to bob (the client's checks pass as root: the server judges)
		setpriv --reuid=alice --regid=alice --init-groups \
		    sh -c "echo x >'$P/f'" || die "create as alice failed"
		[ "$(stat -c %U "$S/f")" = alice ] || die "the new file is not alice's"
		chgrp root "$S/f" && drop_caches
		chgrp alice "$P/f" || die "chgrp to alice's group failed"
		[ "$(stat -c %G "$S/f")" = alice ] ||
		    die "chgrp alice: group $(stat -c %G "$S/f") on the server"
		chgrp bob "$P/f" 2>/dev/null && die "chgrp to bob's group succeeded (as alice)"
		chown bob "$P/f" 2>/dev/null && die "chown to bob succeeded (as alice)"
		[ "$(stat -c %U:%G "$S/f")" = alice:alice ] ||
		    die "owner and group $(stat -c %U:%G "$S/f") on the server" ;;
	posix_case)
		echo lower >"$P/abc" && echo upper >"$P/ABC" || die "create failed"
		[ "$(cat "$S/abc")" = lower ] && [ "$(cat "$S/ABC")" = upper ] ||
		    die "abc and ABC are not two files on the server: $(ls "$S")"
		[ "$(ls "$P" | wc -l)" = 2 ] || die "ls shows $(ls "$P")" ;;
	posix_symlink)
		# a real symlink on the server (FSCTL_SET_REPARSE_POINT), the
		# target stored as given, even one leading out of the share
		echo x >"$P/t" && ln -s t "$P/l" || die "ln -s failed"
		[ "$(readlink "$P/l")" = t ] || die "readlink: $(readlink "$P/l")"
		[ -L "$S/l" ] && [ "$(readlink "$S/l")" = t ] ||
		    die "not a symlink to t on the server: $(ls -l "$S")"
		[ "$(stat -c %U "$S/l")" = alice ] || die "the link is not alice's"
		drop_caches
		[ "$(cat "$P/l")" = x ] || die "reading through the link"
		ln -s /etc/passwd "$P/out" || die "ln -s /etc/passwd failed"
		[ "$(readlink "$S/out")" = /etc/passwd ] ||
		    die "the server's link: $(readlink "$S/out" | od -c | head -2)"
		[ "$(readlink "$P/out")" = /etc/passwd ] ||
		    die "the link through the mount: $(readlink "$P/out")"
		mv "$P/l" "$P/l2" && rm "$P/out" || die "mv or rm of a link failed"
		[ -L "$S/l2" ] && [ ! -e "$S/out" ] && [ -f /etc/passwd ] &&
		    [ "$(cat "$S/t")" = x ] || die "after mv and rm: $(ls -l "$S")" ;;
	posix_mkfifo)
		mkfifo -m 0640 "$P/p" || die "mkfifo failed"
		[ -p "$P/p" ] || die "not a fifo through the mount"
		[ -p "$S/p" ] && [ "$(stat -c %U "$S/p")" = alice ] ||
		    die "not alice's fifo on the server: $(ls -l "$S")"
		rm "$P/p" && [ ! -e "$S/p" ] || die "rm of the fifo failed" ;;
	posix_unlink_open)
		# POSIX delete semantics: rm of a file an fd holds open takes
		# the name at once (no delete pending behind the open), the
		# fd still reads (from the server: caches dropped), and a new
		# file may take the name at once.  (Once it has, the client
		# says ESTALE on the old fd: it revalidates an open file by its
		# old name and finds another inode there, whatever the server.)
		echo data >"$P/f" || die "create failed"
		exec 3<"$P/f"
		out=$(rm "$P/f" 2>&1) || die "rm of an open file failed: $out"
		[ ! -e "$S/f" ] || die "the name stays on the server while open"
		drop_caches
		v=$(cat <&3 2>&1)
		[ "$v" = data ] || die "the open fd no longer reads the data: $v"
		echo new >"$P/f" || die "a new file of that name: refused"
		exec 3<&-
		sleep 2		# the client's deferred close
		[ "$(cat "$S/f")" = new ] || die "the new file: $(ls -l "$S")"
		rm "$P/f" && wait_gone "$S/f" || die "rm of the new file failed" ;;
	posix_lock)
		# POSIX byte-range locks are advisory between POSIX handles:
		# another posix mount (its own connection) reads and writes
		# under an fcntl lock, while its conflicting lock still fails
		m2=/mnt/px2_$name
		out=$(kc_mount "$m2" share alice vers=3.1.1,posix,nosharesock) ||
		    die "second posix mount failed: $out"
		trap 'umount "$m" "$m2" 2>/dev/null' EXIT
		echo "lock test data" >"$P/f" || die "create failed"
		$PY - "$P/f" "$m2/$name/f" <<'EOF' || exit 1
import fcntl, subprocess, sys
a, b = sys.argv[1], sys.argv[2]
probe = """
import fcntl, os, sys
f = open(sys.argv[1], "r+b", buffering=0)
if sys.argv[2] == "io":
    try:
        os.pread(f.fileno(), 4, 0)
        os.pwrite(f.fileno(), b"LOCK", 0)
    except OSError as e:
        sys.exit("I/O under the lock: %s" % e)
    sys.exit(0)
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 0)
except OSError:
    sys.exit(3)
"""
def other(what):
    return subprocess.run([sys.executable, "-c", probe, b, what],
                          timeout=60).returncode
fa = open(a, "r+")
fcntl.lockf(fa, fcntl.LOCK_EX | fcntl.LOCK_NB, 100, 0)
r = other("io")
if r != 0:
    sys.exit("the other posix mount's I/O under the lock failed (%s)" % r)
r = other("lock")
if r != 3:
    sys.exit("the other posix mount got a conflicting lock (exit %d)" % r)
fcntl.lockf(fa, fcntl.LOCK_UN, 100, 0)
r = other("lock")
if r != 0:
    sys.exit("the other posix mount could not lock after the unlock (%d)" % r)
EOF
		[ "$(head -c 4 "$S/f")" = LOCK ] || die "the write under the lock is not on the server"
		umount "$m2" || die "umount of the second mount failed" ;;
	*)	die "no check named $name" ;;
	esac
	umount "$m" || die "umount failed"
	trap - EXIT ;;

snapshot)
	# Previous versions: the [snap] share's snapshot of 2026-01-02
	# 03:04:05 UTC mounted with snapshot= (the client sends TWrp with
	# every open): the old contents, listed and read; no write reaches
	# the snapshot.  The live mount sees the live file.
	tok=@GMT-2026.01.02-03.04.05
	nt=$(( ($(date -u -d '2026-01-02 03:04:05' +%s) + 11644473600) * 10000000 ))
	old=/srv/kc/snap/.snapshots/$tok/$name
	mkdir -p "$old" /srv/kc/snap/$name
	echo old >"$old/f"
	echo new >/srv/kc/snap/$name/f
	chown -R alice /srv/kc/snap/.snapshots /srv/kc/snap/$name
	m=/mnt/snap_now m2=/mnt/snap_old
	out=$(kc_mount $m snap alice "") || die "mount of [snap] failed: $out"
	trap 'umount $m $m2 2>/dev/null' EXIT
	out=$(kc_mount $m2 snap alice "snapshot=$nt") ||
	    die "mount -o snapshot=$nt failed: $out"
	[ "$(cat $m/$name/f)" = new ] || die "the live mount reads $(cat $m/$name/f)"
	[ "$(cat $m2/$name/f)" = old ] || die "the snapshot mount reads $(cat $m2/$name/f)"
	[ "$(ls $m2/$name)" = f ] || die "the snapshot lists $(ls $m2/$name)"
	echo changed >"$m2/$name/f" 2>/dev/null && die "a write to the snapshot succeeded"
	touch "$m2/$name/g" 2>/dev/null && die "a file was made in the snapshot"
	[ "$(cat "$old/f")" = old ] && [ ! -e "$old/g" ] ||
	    die "the snapshot on the server's disk changed"
	umount $m2 || die "umount of the snapshot failed"
	umount $m || die "umount failed"
	trap - EXIT ;;

dfs_link)
	# DFS: [dfs] is an msdfs root whose link (msdfs:127.0.0.1\share,
	# guest.sh) refers to [share]; the client asks the referral after
	# PATH_NOT_COVERED and reads and lists the file through the link.
	echo "through dfs" >/srv/kc/share/$name.txt
	chown alice /srv/kc/share/$name.txt
	m=/mnt/dfs
	out=$(kc_mount $m dfs alice "vers=3.1.1") || die "mount of [dfs] failed: $out"
	trap 'umount -l $m 2>/dev/null' EXIT
	got=$(cat $m/link/$name.txt 2>&1) || die "read through the link failed: $got"
	[ "$got" = "through dfs" ] || die "read through the link gave: $got"
	ls $m/link | grep -qx "$name.txt" || die "the link lists: $(ls $m/link 2>&1)"
	echo more >"$m/link/$name.new" || die "write through the link failed"
	[ "$(cat /srv/kc/share/$name.new)" = more ] || die "the write is not in [share]"
	umount $m || die "umount failed"
	trap - EXIT ;;

home_share)
	# [homes] (guest.sh: path /srv/kc/home/%U, valid users = %S): alice
	# mounts her home by her name, and a file she writes there is hers on
	# the server's disk, in her directory; bob's home is refused to her.
	m=/mnt/home_alice m2=/mnt/home_bob
	out=$(kc_mount $m alice alice "vers=3.1.1") || die "mount of [alice] failed: $out"
	trap 'umount $m $m2 2>/dev/null' EXIT
	echo "at home" >"$m/$name.txt" || die "write in alice's home failed"
	f=/srv/kc/home/alice/$name.txt
	[ "$(cat "$f" 2>&1)" = "at home" ] || die "the file is not in /srv/kc/home/alice"
	[ "$(stat -c %U "$f")" = alice ] || die "the file is $(stat -c %U "$f")'s on disk"
	ls "$m" | grep -qx "$name.txt" || die "the home lists: $(ls "$m" 2>&1)"
	out=$(kc_mount $m2 bob alice "vers=3.1.1") &&
	    die "alice mounted bob's home: $(ls $m2 2>&1)"
	[ ! -e /srv/kc/home/bob/$name.txt ] || die "a file appeared in bob's home"
	umount $m || die "umount failed"
	trap - EXIT ;;

quota)
	# Disk quotas: the disk a user sees is his quota.  [quota] is an XFS
	# with user and group quotas (guest.sh).  alice (20 MiB soft, 24
	# MiB hard): df shows 20 MiB, all free, then 15 MiB free after 5
	# MiB; a write past the hard limit fails; then nothing is free.
	# bob (no user quota, 8 MiB on his primary group): 8 MiB.
	Q=/srv/kcq
	mountpoint -q $Q || die "no XFS with quotas in the guest"
	MiB=$((1024 * 1024))
	xfs_quota -x -c "limit -u bsoft=20m bhard=24m alice" $Q ||
	    die "xfs_quota limit -u failed"
	xfs_quota -x -c "limit -g bsoft=8m bhard=8m $(id -gn bob)" $Q ||
	    die "xfs_quota limit -g failed"
	m=/mnt/q_alice mb=/mnt/q_bob
	out=$(kc_mount $m quota alice "") || die "mount of [quota] failed: $out"
	trap 'umount $m $mb 2>/dev/null' EXIT
	# near A B SLACK: within SLACK bytes
	near() { [ $(( $1 > $2 ? $1 - $2 : $2 - $1 )) -le $3 ]; }
	dfb() { df -B1 --output=size,avail "$1" | tail -n 1; }
	read -r size avail <<<"$(dfb $m)"
	near "$size" $((20 * MiB)) 65536 && near "$avail" $((20 * MiB)) 65536 ||
	    die "alice's disk: $size bytes, $avail free (want 20 MiB, 20 MiB)"
	dd if=/dev/urandom of=$m/$name-5m bs=1M count=5 conv=fsync 2>/dev/null ||
	    die "a 5 MiB write failed"
	# until the client's deferred close lets XFS trim what it preallocated
	for i in $(seq 1 50); do
		read -r size avail <<<"$(dfb $m)"
		near "$avail" $((15 * MiB)) $MiB && break
		sleep 0.1
	done
	near "$size" $((20 * MiB)) 65536 && near "$avail" $((15 * MiB)) $MiB ||
	    die "after 5 MiB: $size bytes, $avail free (want 20 MiB, 15 MiB)"
	dd if=/dev/zero of=$m/$name-30m bs=1M count=30 conv=fsync 2>/dev/null &&
	    die "a 30 MiB write past the 24 MiB hard limit succeeded"
	read -r size avail <<<"$(dfb $m)"
	[ "$avail" = 0 ] && [ "$size" -gt $((20 * MiB)) ] ||
	    die "over the soft limit: $size bytes, $avail free (want > 20 MiB, 0)"
	out=$(kc_mount $mb quota bob "") || die "bob's mount of [quota] failed: $out"
	read -r size avail <<<"$(dfb $mb)"
	near "$size" $((8 * MiB)) 65536 && near "$avail" $((8 * MiB)) 65536 ||
	    die "bob's disk: $size bytes, $avail free (want his group's 8 MiB)"
	rm -f $m/$name-5m $m/$name-30m
	xfs_quota -x -c "limit -u bsoft=0 bhard=0 alice" $Q
	xfs_quota -x -c "limit -g bsoft=0 bhard=0 $(id -gn bob)" $Q
	umount $mb $m || die "umount failed"
	trap - EXIT ;;

*)	die "no check named $name" ;;
esac
exit 0
