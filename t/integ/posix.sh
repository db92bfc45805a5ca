#!/bin/bash
# SMB3 POSIX extensions (smb3posix.org, issue 16): the negotiate context
# answered on 3.1.1 when `smb3 unix extensions` is on (the default) and
# offered, the POSIX create context (mode on create, the POSIX response
# with nlink, reparse tag, mode, Unix owner and group SIDs), POSIX handles
# (case-sensitive names, ':' a name character), and the POSIX level of
# QUERY_INFO and QUERY_DIRECTORY (symlinks and fifos shown as what they
# are, never followed).  Client: t/integ/posix_client.py (impacket with
# the POSIX contexts added).
. "$(dirname "$0")/lib.sh"

integ_init
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
	local out line
	out=$("$PYTHON" "$C" "$PORT" "$SHARE" "$1" 2>&1)
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		esac
	done <<<"$out"
	echo "$out" | grep -q '^\(ok\|FAIL\) ' ||
	    fail "posix_client.py $1 ran no check: $(echo "$out" | tail -n 5)"
	echo "$out" | grep -q Traceback &&
	    fail "posix_client.py $1 crashed: $(echo "$out" | tail -n 5)"
	return 0
}
run posix
run unoffered
check "the server is still up" integ_ping

# smb3 unix extensions = no: never answered
integ_stop
integ_conf "smb3 unix extensions = no"
integ_start || exit 1
run off
check "the server is still up (extensions off)" integ_ping
finish
