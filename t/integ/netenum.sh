#!/usr/bin/env bash
# srvsvc's session, open-file and connection lists (Computer Management's
# Shared Folders, `net session`, `net file`): alice (in `server admin
# group`) and bob hold sessions and open files; t/integ/netenum_client.py
# (impacket) checks each level field by field as alice, and the refusals
# to bob and to a null session; rpcclient's netsessenum, netfileenum and
# netconnenum run while the opens are held, as alice and as bob; then
# smbtorture's rpc.srvsvc.srvsvc (admin access) NetSessEnum, NetFileEnum
# and NetConnEnum.  Every open is listed with its path: bob's plain open
# of dir/file.txt, renamed through his handle, then closed; carol's plain
# open, held, in rpcclient's netfileenum 3.  Then the closes (daemon/admreq.c): bob's worker,
# stopped and played as a compromised one (netclose_forge.py), asks the
# master to close alice's open and end her sessions and is refused;
# netenum_client.py has bob refused and alice close bob's open and end
# his sessions, usmbctl close-file close alice's, carol open bob's file
# exclusively after; rpcclient netsessdel as bob (refused), of an
# unknown client, and of a held session of bob's; bob's durable open left
# disconnected, closed by alice and by usmbctl close-file
# (netclose_durable.py).
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_GLOBAL=$'\tserver admin group = usmbdtadm\n\trestrict anonymous = 0'
integ_conf
# [share] has no `max connections`: its trees are recorded all the same
integ_users || { fail "users"; finish; }
integ_user carol carolpw1 || { fail "user carol"; finish; }
getent group usmbdtadm >/dev/null || groupadd usmbdtadm
usermod -a -G usmbdtadm alice
gpasswd -d bob usmbdtadm >/dev/null 2>&1 || true
gpasswd -d carol usmbdtadm >/dev/null 2>&1 || true
integ_start || { fail "server start"; finish; }

# The message numbers, from daemon/msg.h itself (netclose_forge.py).
cat >"$T/msgno.c" <<'C'
#include <stdio.h>
#include "daemon/msg.h"
int main(void) { printf("%d %d\n", MSG_ADMIN_REQ, MSG_ADMIN_REP); return 0; }
C
cc -I"$ROOT" -o "$T/msgno" "$T/msgno.c" || { fail "cannot build msgno"; finish; }
read -r AREQ AREP < <("$T/msgno")

has() {
	grep -Eq -- "$1" "$T/out"
}

DONE=$T/netenum.done
rm -f "$DONE"
PYTHONPATH="$ROOT/t/integ" "$PYTHON" "$ROOT/t/integ/netenum_client.py" \
    "$PORT" "$SHARE" "$DONE" "$CONF" "$USMBCTL" >"$T/client.out" 2>&1 &
CLIENT=$!
end=$((SECONDS + 30))
while ! grep -q '^holding$' "$T/client.out" && kill -0 "$CLIENT" 2>/dev/null &&
    [ "$SECONDS" -lt "$end" ]; do
	sleep 0.2
done

RPCA=(rpcclient -U "alice%$ALICE_PW" -p "$PORT" 127.0.0.1)
RPCB=(rpcclient -U "bob%$BOB_PW" -p "$PORT" 127.0.0.1)
# rpcclient's own session is one more: alice's, bob's and its own.
if "${RPCA[@]}" -c 'netsessenum' >"$T/out" 2>&1 &&
    n=$(sed -n 's/^Received \([0-9]*\) entries\.$/\1/p' "$T/out") &&
    [ "${n:-0}" -ge 3 ]; then
	ok "rpcclient netsessenum as alice: $n sessions"
else
	fail "rpcclient netsessenum as alice"; sed 's/^/     /' "$T/out"
fi
if "${RPCA[@]}" -c 'netfileenum 3' >"$T/out" 2>&1 &&
    grep -Fxq "C:${SHARE//\//\\}\\alice.txt" "$T/out"; then
	ok "rpcclient netfileenum 3 as alice: the durable open's Windows path"
else
	fail "rpcclient netfileenum as alice"; sed 's/^/     /' "$T/out"
fi
# carol's plain open (no oplock, no durable handle): listed with its path
if grep -Fxq "C:${SHARE//\//\\}\\carol.txt" "$T/out"; then
	ok "rpcclient netfileenum 3 as alice: carol's plain open's path"
else
	fail "rpcclient netfileenum 3: carol's plain open"; sed 's/^/     /' "$T/out"
fi
# rpcclient prints nothing of a listing it got (impacket checks the fields)
if "${RPCA[@]}" -c 'netconnenum 1 share' >"$T/out" 2>&1 && ! has 'WERR_|NT_STATUS_'; then
	ok "rpcclient netconnenum 1 share as alice: WERR_OK"
else
	fail "rpcclient netconnenum as alice"; sed 's/^/     /' "$T/out"
fi
for cmd in 'netsessenum' 'netfileenum 3' 'netconnenum 1 share'; do
	"${RPCB[@]}" -c "$cmd" >"$T/out" 2>&1
	if has 'WERR_ACCESS_DENIED' && ! has 'alice' && ! has 'Received'; then
		ok "rpcclient $cmd as bob: WERR_ACCESS_DENIED, nothing listed"
	else
		fail "rpcclient $cmd as bob"; sed 's/^/     /' "$T/out"
	fi
done
for cmd in 'netsessdel \\127.0.0.1 alice' 'netsessdel \\127.0.0.1'; do
	"${RPCB[@]}" -c "$cmd" >"$T/out" 2>&1
	if has 'WERR_ACCESS_DENIED'; then
		ok "rpcclient $cmd as bob: WERR_ACCESS_DENIED"
	else
		fail "rpcclient $cmd as bob"; sed 's/^/     /' "$T/out"
	fi
done
"${RPCA[@]}" -c 'netsessdel \\10.9.9.9' >"$T/out" 2>&1
if has 'CLIENTNAMENOTFOUND|CLIENT_NAME_NOT_FOUND|0x00000908'; then
	ok "rpcclient netsessdel of a client with no session as alice: NERR_ClientNameNotFound"
else
	fail "rpcclient netsessdel of an unknown client"; sed 's/^/     /' "$T/out"
fi
# A compromised worker of bob asks for alice's open and sessions.
read -r _ ALICE_FID _ < <(grep '^ids ' "$T/client.out")
W=$(integ_worker_of bob)
if [ -z "$W" ] || [ -z "$ALICE_FID" ]; then
	fail "no worker of bob ($W) or no FileId of alice's open ($ALICE_FID)"
else
	kill -STOP "$W"
	# the master traced: its group lookups (NSS files: /etc/group) for
	# the 42 refused requests
	strace -p "$SERVER_PID" -e trace=openat -o "$T/master.trace" 2>/dev/null &
	STR=$!
	sleep 0.5	# strace attached
	client_checks netclose_forge.py env PYTHONPATH="$ROOT/t/integ" \
	    "$PYTHON" "$ROOT/t/integ/netclose_forge.py" "$W" "$AREQ" "$AREP" \
	    "$ALICE_FID"
	kill "$STR"; wait "$STR" 2>/dev/null
	n=$(grep -c '"/etc/group"' "$T/master.trace")
	if [ "$n" -le 4 ]; then
		ok "a refused worker's flood costs the master one group lookup a second ($n opens of /etc/group)"
	else
		fail "the master looked the groups up for each refused request ($n opens of /etc/group)"
	fi
	kill -CONT "$W"
	check "the master logs the refused worker" grep -q \
	    "worker $W (bob, uid [0-9]*) asked for an administrator's srvsvc NetrFileClose: refused" "$LOG"
fi
touch "$DONE"
wait "$CLIENT"
client_checks netenum_client.py cat "$T/client.out"
# rpcclient netsessdel of a session bob holds (smbclient waiting on input)
mkfifo "$T/bobin"
smbclient "//127.0.0.1/share" -U "bob%$BOB_PW" -p "$PORT" <"$T/bobin" \
    >"$T/bob.out" 2>&1 &
BOBC=$!
exec 7>"$T/bobin"
bob_in() {
	integ_status_json | "$PYTHON" -c '
import json, sys
sys.exit(not any(s["user"] == "bob" for s in json.load(sys.stdin)["sessions"]))'
}
integ_until 10 bob_in || fail "bob's smbclient did not log in"
"${RPCA[@]}" -c 'netsessdel \\127.0.0.1 bob' >"$T/out" 2>&1
if ! has 'WERR_|NT_STATUS_'; then
	ok "rpcclient netsessdel \\\\127.0.0.1 bob as alice: WERR_OK"
else
	fail "rpcclient netsessdel of bob's session"; sed 's/^/     /' "$T/out"
fi
echo 'ls' >&7
exec 7>&-
wait "$BOBC"
if grep -Eq 'NT_STATUS_(USER_SESSION_DELETED|CONNECTION_(RESET|DISCONNECTED)|END_OF_FILE|PIPE_BROKEN)' "$T/bob.out"; then
	ok "bob's smbclient: its session was ended"
else
	fail "bob's smbclient after netsessdel"; sed 's/^/     /' "$T/bob.out"
fi
# smbtorture's own checks of the three lists (every level it knows)
for t in NetSessEnum NetFileEnum NetConnEnum; do
	if smbtorture "ncacn_np:127.0.0.1[smb2]" -U "alice%$ALICE_PW" \
	    --option="smb ports=$PORT" "rpc.srvsvc.srvsvc (admin access).$t" \
	    >"$T/out" 2>&1 && has "^success: srvsvc \(admin access\)\.$t\$"; then
		ok "smbtorture rpc.srvsvc.srvsvc (admin access).$t"
	else
		fail "smbtorture $t"; tail -n 15 "$T/out" | sed 's/^/     /'
	fi
done
# bob's durable open left disconnected (his socket dropped): closed by
# alice's NetrFileClose, then by usmbctl close-file (netclose_durable.py,
# worker/statep_close.c)
client_checks netclose_durable.py env PYTHONPATH="$ROOT/t/integ" \
    "$PYTHON" "$ROOT/t/integ/netclose_durable.py" "$PORT" "$CONF" "$USMBCTL"
# A worker that dies while the master waits for its answer
# (netclose_gone.py): carol's, which her smbclient keeps.
mkfifo "$T/carolin"
smbclient "//127.0.0.1/share" -U "carol%carolpw1" -p "$PORT" <"$T/carolin" \
    >"$T/carol.out" 2>&1 &
CAROLC=$!
exec 7>"$T/carolin"
carol_worker() {
	W=$(integ_worker_of carol) && [ -n "$W" ]
}
if integ_until 10 carol_worker; then
	client_checks netclose_gone.py env PYTHONPATH="$ROOT/t/integ" \
	    "$PYTHON" "$ROOT/t/integ/netclose_gone.py" "$PORT" "$W"
else
	fail "carol's smbclient did not log in"
fi
exec 7>&-
wait "$CAROLC"
check "server still answers" "$USMBCTL" -s "$CONF" ping
finish
