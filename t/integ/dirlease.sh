#!/bin/bash
# Directory leases (issue 16; worker/dirlease.h): SMB2_GLOBAL_CAP_
# DIRECTORY_LEASING for SMB 3.x clients that ask, RH (never W) granted on a directory opened
# with a v2 lease context; the lease broken to none by bob's create and
# delete (another user's worker), not by a create of the owner of the
# parent lease key; on the holder's own connection the break follows the
# response of the CREATE, SET_INFO or CLOSE that caused it at once
# (frames read off the socket in order; Samba's order); broken by a local touch and rm on the server
# (inotify), also of a name alice has just closed or holds open, not by
# her own close; no capability and no lease with `smb3 directory leases = no`.
# Client: t/integ/dirlease_client.py.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/dirlease_client.py
for d in dl1 dl2 dl3 dl4 dl5; do
	mkdir -m 0777 "$SHARE/$d"
done
OUT=$T/client.out
run() {
	"$PYTHON" "$C" "$PORT" "$SHARE" "$1" >"$OUT" 2>&1
	grep -q Traceback "$OUT" &&
	    fail "dirlease_client.py $1 crashed: $(tail -n 5 "$OUT")"
	return 0
}
# expect DESC LINE: the client printed exactly LINE
expect() {
	if grep -qxF "$2" "$OUT"; then
		ok "$1"
	else
		fail "$1: wanted \"$2\", got: $(tr '\n' '|' <"$OUT")"
	fi
}

run grant
expect "a client that does not ask is not told (impacket's own)" \
    "unasked cap 0"
expect "SMB 3.0 asking is told the server leases directories" "cap 1"
expect "RWH asked on a directory: RH granted" "rwh-asked state=3"
expect "R asked on a directory: R granted" "r-asked state=1"

run other
expect "alice holds RH on dl1" "held state=3"
expect "bob's create (his worker) breaks alice's lease RH -> none" \
    "create-break key-ok cur=3 new=0"
expect "the break is acknowledged" "ack 0x0"
expect "the same key asks RH again" "rearm state=3"
expect "bob's delete breaks it again" "delete-break key-ok cur=3 new=0"

run parent
expect "alice holds RH on dl2" "held state=3"
expect "no break for the owner of the parent lease key" \
    "parent-key-create none"
expect "another key's create on the holder's connection breaks RH -> none" \
    "other-key-create key-ok cur=3 new=0"
expect "... right after the CREATE's response (Samba's order)" \
    "order response-first"

# on the holder's own connection, frame by frame off the socket: the break
# follows the response of the CREATE, SET_INFO and CLOSE that caused it at
# once, as Samba 4.22 sends it (its smbtorture dirlease tests rely on it)
run order
expect "alice holds RH on dl4" "held state=3"
expect "her own create in dl4: the CREATE response, then the break" \
    "create response-first"
expect "... RH -> none, within 1 s" "create-break key-ok cur=3 new=0"
expect "her SET_INFO (end of file) of a child: its response, then the break" \
    "set_info response-first"
expect "... RH -> none, within 1 s" "setinfo-break key-ok cur=3 new=0"
expect "her CLOSE of a handle that wrote: its response, then the break" \
    "close response-first"
expect "... RH -> none, within 1 s" "close-break key-ok cur=3 new=0"

run local
expect "alice holds RH on dl3" "held state=3"
expect "a local touch on the server breaks the lease (inotify)" \
    "local-touch key-ok cur=3 new=0"
expect "a local rm breaks it again" "local-unlink key-ok cur=3 new=0"

# no time window: what the worker itself did is told apart exactly
run localown
expect "alice holds RH on dl5" "held state=3"
expect "her own open and close of an unwritten handle: no break" \
    "own-close none"
expect "a local append right after her close of the name breaks it" \
    "local-append-after-close key-ok cur=3 new=0"
expect "a local touch of a name she holds open breaks it" \
    "local-touch-open key-ok cur=3 new=0"
check "the server is still up" integ_ping

# smb3 directory leases = no: no capability, directories get no lease
integ_stop
integ_conf "smb3 directory leases = no"
integ_start || exit 1
run nocap
expect "off: no SMB2_GLOBAL_CAP_DIRECTORY_LEASING" "cap 0"
expect "off: a directory gets no lease" "lease state=-1"
check "the server is still up" integ_ping
finish
