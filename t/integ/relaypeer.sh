#!/bin/bash
# A lying owner against the real master (HACKING.md "Share keys"): alice's
# worker, compromised, shows the master sockets it made itself for the
# relays of bob's sessions (MSG_RELAY_PEER), the server listening on
# 127.0.0.1 and "::" (the default interfaces listen on both families).
# The master must read an address only from a connection one of its
# listeners accepted: alice's own connection yes; a socket accepted on a
# listener of the owner's, bound to 127.0.0.3 or to ::ffff:127.0.0.3 on
# the server's port, no.  Every kind of socket, and what bob's worker is
# told for each, is in t/unit/check_route_peer.c; this is the check with
# the real daemon and kernel.  Client: t/integ/relaypeer_client.py (the
# channel taken as t/integ/privsep.sh takes it).
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf "interfaces = 127.0.0.1 ::"
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

cat >"$T/msgno.c" <<'C'
#include <stdio.h>
#include "daemon/msg.h"
int main(void) { printf("%d %d %d %d %d\n", MSG_AUTH_REQ, MSG_AUTH_REP, MSG_RELAY, MSG_HANDOFF_DONE, MSG_RELAY_PEER); return 0; }
C
cc -I"$ROOT" -o "$T/msgno" "$T/msgno.c" || { fail "cannot build msgno"; finish; }
read -r AREQ AREP RELAY HDONE RPEER < <("$T/msgno")

# alice's worker, holding her connection from 127.0.0.5
"$PYTHON" - "$PORT" <<'PY' >"$T/hold.out" 2>&1 &
import socket, sys, time
from impacket.smbconnection import SMBConnection
_connect = socket.socket.connect
def connect_from(self, addr):
    self.bind(("127.0.0.5", 0))
    return _connect(self, addr)
socket.socket.connect = connect_from
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]))
c.login("alice", "alicepw1")
print("in", flush=True)
time.sleep(60)
PY
HOLD=$!
for _ in $(seq 50); do grep -q in "$T/hold.out" 2>/dev/null && break; sleep 0.2; done
W=$(integ_worker_of alice)
if [ -z "$W" ]; then
	fail "no worker of alice: $(cat "$T/hold.out")"
else
	kill -STOP "$W"
	out=$("$PYTHON" "$ROOT/t/integ/relaypeer_client.py" "$PORT" "$W" \
	    "$AREQ" "$AREP" "$RELAY" "$HDONE" "$RPEER" 2>&1)
	kill -CONT "$W"
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		esac
	done <<<"$out"
	echo "$out" | grep -q '^ok ' || fail "relaypeer_client.py: $(echo "$out" | tail -n 5)"
	refused() { grep -q "worker $W showed a socket for relay $1 that none of our listeners accepted" "$LOG"; }
	refused 8101 && fail "alice's own connection was refused" ||
	    ok "alice's own connection is read (an address of a connection she holds)"
	n=$(grep -c "session [0-9a-f]* of bob relayed from worker $W" "$LOG")
	[ "$n" = 3 ] && ok "bob's three relays were routed" ||
	    fail "$n relays routed: $(grep relay "$LOG" | tail -n 3)"
	refused 8102 && ok "a v4-mapped socket on the server's port, own listener: no address" ||
	    fail "the v4-mapped socket was taken for the :: listener's"
	refused 8103 && ok "127.0.0.3 on the server's port, own listener: no address" ||
	    fail "a socket bound to 127.0.0.3 was taken for a listener's"
fi
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
check "logins still work" timeout 20 smbclient "//127.0.0.1/share" -p "$PORT" \
    -U "bob%$BOB_PW" -c ls
finish
