#!/bin/bash
# DFS (HACKING.md "DFS"): an msdfs root share with msdfs links (symlinks
# "msdfs:127.0.0.1\target", a two-target one), an msdfs proxy share, and
# a share without msdfs root holding the same symlink.  smbclient follows
# the referrals (ls, get through a link, the proxy); dfs_client.py
# (impacket, raw referral requests) checks the referral fields (V2, V3,
# V4, _EX, PathConsumed, flags, TTL), an msdfs link a user tries to make
# over SMB (refused), PATH_NOT_COVERED for a CREATE
# through a link, the \server\share\ prefix of DFS_OPERATIONS, hostile
# referral requests, a user who cannot search the link's directory, and
# host msdfs = no; links below ordinary directory symlinks (followed in
# the share only), what DFS_OPERATIONS takes as a prefix (impacket sends
# the flag without one), rename and hard-link targets (never DFS paths),
# and [homes] as an msdfs root and, by a reload, an msdfs proxy (the
# caller's own home only).  DFS_SAMBA=1 runs the same steps against
# Debian's Samba (4.17; with SAMBA_SMBD="scripts/samba-ref.sh run smbd"
# 4.22) and prints where it differs.
#
# smbclient opens a referral's target on the default port (445) whatever
# -p said (Samba's and usmbd's referrals alike), so the script runs in a
# network namespace of its own (unshare -n) where 445 is free.
if [ -z "${DFS_NETNS:-}" ]; then
	exec unshare -n env DFS_NETNS=1 bash "$0" "$@"
fi
ip link set lo up || { echo "no loopback in the namespace" >&2; exit 1; }
. "$(dirname "$0")/lib.sh"

integ_init
PORT=445
C=$ROOT/t/integ/dfs_client.py
R=$T/root
mkdir -p "$R/dir" "$R/closed" "$T/plain/dir" "$T/target/sub"
echo hello >"$T/target/file.txt"
echo deep >"$T/target/sub/deep.txt"
echo f >"$R/dir/f.txt"
echo share >"$SHARE/inshare.txt"
ln -s 'msdfs:127.0.0.1\target' "$R/link"
ln -s 'msdfs:127.0.0.1\target,127.0.0.1\share' "$R/two"
ln -s /etc "$R/escape"
ln -s 'msdfs:127.0.0.1\target' "$R/closed/inner"
ln -s 'msdfs:127.0.0.1\target' "$T/plain/link"
# [prof] (path .../%U): alice's directory holds her link; a directory
# named as the template's text (what a local account could plant where
# it may write) holds another, which no referral may read
mkdir -p "$T/prof/alice" "$T/prof/%U"
ln -s 'msdfs:127.0.0.1\target' "$T/prof/alice/alink"
ln -s 'msdfs:127.0.0.1\share' "$T/prof/%U/plink"
ln -s 'msdfs:127.0.0.1\share' "$T/prof/%U/alink"
# links below ordinary directory symlinks (followed within the share only)
mkdir -p "$R/real" "$R/dir/sub" "$T/outside"
ln -s 'msdfs:127.0.0.1\target' "$R/real/deep"
ln -s real "$R/dirsym"
ln -s dirsym "$R/dirsym2"
ln -s ../real "$R/dir/up"
ln -s "$R/real" "$R/abssym"
ln -s loop "$R/loop"
ln -s 'msdfs:127.0.0.1\target' "$T/outside/olink"
ln -s ../outside "$R/outsym"
# [homes] as an msdfs root: each user's home holds a link
mkdir -p "$T/homes/alice" "$T/homes/bob"
ln -s 'msdfs:127.0.0.1\target' "$T/homes/alice/hlink"
ln -s 'msdfs:127.0.0.1\target' "$T/homes/bob/hlink"
chmod -R a+rwX "$T/target" "$T/plain" "$R/dir"
SHARES="[root]
	path = $R
	msdfs root = yes
	read only = no
[plain]
	path = $T/plain
	read only = no
[target]
	path = $T/target
	read only = no
[proxy]
	msdfs proxy = \\127.0.0.1\\target
[denied]
	path = $R
	msdfs root = yes
	hosts deny = 127.0.0.1
[prof]
	path = $T/prof/%U
	msdfs root = yes
[veto]
	path = $R
	msdfs root = yes
	veto files = /closed/
[homes]
	path = $T/homes/%U
	msdfs root = yes
	read only = no"
# anonymous sessions on: they get root referrals, never a link's
INTEG_SHARES=$SHARES integ_conf "restrict anonymous = 0"
integ_users || { echo "cannot create users" >&2; exit 1; }
# dir/closed is alice's alone: bob may not search it
chown alice "$R/closed"
chown -h alice "$R/closed/inner"
chmod 0700 "$R/closed"
mkdir -p "$T/plain/closed"; chown alice "$T/plain/closed"; chmod 0700 "$T/plain/closed"
chown alice "$T/homes/alice"; chown -h alice "$T/homes/alice/hlink"
chown bob "$T/homes/bob"; chown -h bob "$T/homes/bob/hlink"

# smbclient's steps; $1: usmbd or samba (a label)
smbclient_steps() {
	local who=$1 out

	out=$(timeout 30 smbclient //127.0.0.1/root -U "alice%$ALICE_PW" \
	    -c 'ls link\*; ls link\sub\*; ls two\*' 2>&1)
	check "$who: smbclient lists through a link" \
	    grep -q 'file.txt' <<<"$out"
	check "$who: smbclient lists a directory below a link" \
	    grep -q 'deep.txt' <<<"$out"
	rm -f "$T/got"
	timeout 30 smbclient //127.0.0.1/root -U "alice%$ALICE_PW" \
	    -c "get link\\file.txt $T/got" >"$T/get.out" 2>&1
	check "$who: smbclient gets a file through a link" \
	    grep -qx hello "$T/got"
	out=$(timeout 30 smbclient //127.0.0.1/proxy -U "alice%$ALICE_PW" \
	    -c 'ls' 2>&1)
	check "$who: smbclient follows an msdfs proxy share" \
	    grep -q 'file.txt' <<<"$out"
	out=$(timeout 30 smbclient //127.0.0.1/root -U "alice%$ALICE_PW" \
	    -c 'ls' 2>&1)
	check "$who: the root lists a link as a directory and reparse point" \
	    grep -Eq '^  link +Dr ' <<<"$out"
	out=$(timeout 30 smbclient //127.0.0.1/plain -U "alice%$ALICE_PW" \
	    -c 'ls link\*' 2>&1)
	check "$who: on a share without msdfs root the symlink is broken" \
	    grep -q 'NT_STATUS_OBJECT_PATH_NOT_FOUND\|NT_STATUS_OBJECT_NAME_NOT_FOUND' <<<"$out"
	out=$(timeout 30 smbclient //127.0.0.1/plain -U "alice%$ALICE_PW" \
	    -c 'ls' 2>&1)
	check_fails "$who: ... and is not listed" grep -q ' link ' <<<"$out"
	out=$(timeout 30 smbclient //127.0.0.1/root -U "alice%$ALICE_PW" \
	    -c 'ls dirsym\deep\*; ls dir\up\deep\sub\*' 2>&1)
	check "$who: smbclient lists through a link below a directory symlink" \
	    grep -q 'file.txt' <<<"$out"
	check "$who: ... and below a relative ../ symlink" \
	    grep -q 'deep.txt' <<<"$out"
	out=$(timeout 30 smbclient //127.0.0.1/alice -U "alice%$ALICE_PW" \
	    -c 'ls hlink\*' 2>&1)
	check "$who: smbclient lists through a link in the user's home share" \
	    grep -q 'file.txt' <<<"$out"
}

integ_start || exit 1
smbclient_steps usmbd
client_checks "dfs_client.py" "$PYTHON" "$C" "$PORT" usmbd alice "$ALICE_PW"
client_checks "dfs_client.py other" "$PYTHON" "$C" "$PORT" usmbd bob \
    "$BOB_PW" other bob "$BOB_PW"
check "the server is still up" integ_ping

# host msdfs = no, by a reload: no DFS at all
INTEG_SHARES=$SHARES integ_conf "host msdfs = no" "restrict anonymous = 0"
"$USMBCTL" -s "$CONF" reload >/dev/null
client_checks "dfs_client.py off" "$PYTHON" "$C" "$PORT" usmbd alice \
    "$ALICE_PW" off

# [homes] as an msdfs proxy, by a reload: each user's home refers to his
# own directory of another share (%U in the proxy's text)
HOMES_PROXY="[homes]
	path = $T/homes/%U
	msdfs proxy = \\127.0.0.1\\target\\%U"
INTEG_SHARES="${SHARES%%\[homes\]*}$HOMES_PROXY" integ_conf
"$USMBCTL" -s "$CONF" reload >/dev/null
client_checks "dfs_client.py homesproxy" "$PYTHON" "$C" "$PORT" usmbd alice \
    "$ALICE_PW" homesproxy
integ_stop

if [ "${DFS_SAMBA:-0}" = 1 ]; then
	echo "--- Debian's Samba on the same steps (not counted) ---"
	if samba_start "$T/samba" "$PORT" "$SHARES"; then
		pass=$INTEG_PASSED fail=$INTEG_FAILED
		smbclient_steps samba
		"$PYTHON" "$C" "$PORT" samba alice "$ALICE_PW" 2>&1
		"$PYTHON" "$C" "$PORT" samba bob "$BOB_PW" other bob "$BOB_PW" 2>&1
		samba_stop
		samba_start "$T/samba" "$PORT" "${SHARES%%\[homes\]*}$HOMES_PROXY" &&
		    "$PYTHON" "$C" "$PORT" samba alice "$ALICE_PW" homesproxy 2>&1
		INTEG_PASSED=$pass INTEG_FAILED=$fail
		samba_stop
	else
		echo "samba did not start"
	fi
fi
finish
