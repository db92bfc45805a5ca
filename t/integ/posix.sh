#!/bin/bash
# SMB3 POSIX extensions (smb3posix.org, issue 16): the negotiate context
# answered on 3.1.1 when `smb3 unix extensions` is on (the default) and
# offered, the POSIX create context (mode on create, the POSIX response
# with nlink, reparse tag, mode, Unix owner and group SIDs), POSIX handles
# (case-sensitive names, ':' a name character), and the POSIX level of
# QUERY_INFO and QUERY_DIRECTORY (symlinks and fifos shown as what they
# are, never followed), and symlinks, FIFOs and sockets made by a client
# with FSCTL_SET_REPARSE_POINT, read back, never followed, renamed and
# deleted; POSIX delete semantics (a name unlinked at once while POSIX
# handles stay open, Windows handles keeping delete pending) and POSIX
# byte-range locks (advisory between POSIX handles, merged and split as
# fcntl's, a downgrade waking a blocked shared lock at once), and
# `smb3 unix extensions = no` in one share.  Clients:
# t/integ/posix_client.py, posix_symlink_client.py, posix_lk_client.py
# (impacket with the POSIX contexts added, t/integ/posix_lib.py).
. "$(dirname "$0")/lib.sh"

integ_init
# a share where the POSIX create context is ignored (Samba's share key)
mkdir -m 0777 "$T/np"
INTEG_SHARES="[noposix]
path = $T/np
read only = no
smb3 unix extensions = no"
integ_conf
# the POSIX modes asked for are not capped by the default masks
sed -i '/^\[share\]/a create mask = 0777\ndirectory mask = 0777' "$CONF"
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/posix_client.py
chmod 0777 "$SHARE"
ln -s /etc/passwd "$SHARE/link"
mkfifo "$SHARE/fifo"
run() {
	local c=$C
	[ "$1" = symlink ] && c=$ROOT/t/integ/posix_symlink_client.py
	case $1 in delete|locks|owner|shareoff) c=$ROOT/t/integ/posix_lk_client.py ;; esac
	client_checks "$(basename "$c") $1" "$PYTHON" "$c" "$PORT" "$SHARE" "$1"
}
run posix
run unoffered
# POSIX delete semantics and POSIX byte-range locks (posix_lk_client.py)
run delete
run locks
# chown and chgrp through SET_INFO on a POSIX handle, as the kernel allows
run owner
run shareoff
# symlinks and special files made, read, renamed and deleted by a client
mkdir "$SHARE/sub" && echo inner >"$SHARE/sub/inner.txt"
chmod -R a+rwX "$SHARE/sub"
# a file of alice's outside the share, reachable by her, and a link to it
chmod 0711 "$T" && mkdir -m 0755 "$T/out" && echo mine >"$T/out/alice.txt"
chown alice "$T/out/alice.txt" && chmod 0644 "$T/out/alice.txt"
ln -s "$T/out/alice.txt" "$SHARE/lnk_alice"
export OUTSIDE=$T/out/alice.txt
run symlink

# Samba 4.22's smbclient (scripts/samba-ref.sh) negotiates the extensions
# on 3.1.1 and its `posix` command turns on the POSIX create context (mode
# 0 for what it makes, as it sends it; its stat and chmod are SMB1 UNIX
# calls only in 4.22).  Names that differ in case are two files then.
if REF=$("$ROOT/scripts/samba-ref.sh" path 2>/dev/null); then
	echo hello >"$T/local.txt"
	out=$(timeout 60 "$ROOT/scripts/samba-ref.sh" run smbclient \
	    //127.0.0.1/share -p "$PORT" -U alice%alicepw1 -m SMB3 \
	    -c "posix; put $T/local.txt CaseX.txt; put $T/local.txt casex.txt; ls case*" 2>&1)
	if [ -f "$SHARE/CaseX.txt" ] && [ -f "$SHARE/casex.txt" ] &&
	    ! grep -q "doesn't support UNIX CIFS extensions" <<<"$out"; then
		ok "smbclient 4.22 posix: CaseX.txt and casex.txt are two files"
	else
		fail "smbclient 4.22 posix: $(ls "$SHARE"; echo "$out" | tail -n 5)"
	fi
	grep -q "casex.txt" <<<"$out" && ! grep -q "CaseX.txt  " <<<"$out" &&
	    ok "smbclient 4.22 posix: ls case* matches exactly" ||
	    fail "smbclient 4.22 posix ls: $(echo "$out" | tail -n 5)"
	# its symlink and readlink (FSCTL_SET/GET_REPARSE_POINT), and a get
	# through a link out of the share (STOPPED_ON_SYMLINK, no data)
	out=$(timeout 60 "$ROOT/scripts/samba-ref.sh" run smbclient \
	    //127.0.0.1/share -p "$PORT" -U alice%alicepw1 -m SMB3 \
	    -c "posix; symlink CaseX.txt sc_rel; symlink /etc/passwd sc_abs; readlink sc_rel; readlink sc_abs; get link $T/link.got" 2>&1)
	[ "$(readlink "$SHARE/sc_rel")" = CaseX.txt ] &&
	    [ "$(readlink "$SHARE/sc_abs")" = /etc/passwd ] &&
	    [ "$(stat -c %U "$SHARE/sc_rel")" = alice ] &&
	    ok "smbclient 4.22 posix: symlink makes alice's symlinks" ||
	    fail "smbclient 4.22 symlink: $(ls -l "$SHARE"; echo "$out" | tail -n 5)"
	grep -q 'sc_rel -> CaseX.txt' <<<"$out" &&
	    grep -q 'sc_abs -> /etc/passwd' <<<"$out" &&
	    ok "smbclient 4.22 posix: readlink reads them back" ||
	    fail "smbclient 4.22 readlink: $(echo "$out" | tail -n 5)"
	grep -q STOPPED_ON_SYMLINK <<<"$out" && [ ! -s "$T/link.got" ] &&
	    ok "smbclient 4.22 posix: get of a link to /etc/passwd stops on it" ||
	    fail "smbclient 4.22 get link: $(echo "$out" | tail -n 5)"
else
	fail "Samba 4.22 (scripts/samba-ref.sh install) is not installed"
fi
check "the server is still up" integ_ping

# smb3 unix extensions = no: never answered
integ_stop
integ_conf "smb3 unix extensions = no"
integ_start || exit 1
run off
check "the server is still up (extensions off)" integ_ping
finish
