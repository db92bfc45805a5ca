#!/bin/bash
# The master as an attacker of a worker would meet it (DESIGN.md, security
# model): a compromised worker (alice's) speaking on its own channel to the
# master.  A verdict with a session key goes only to a worker of the
# verdict's uid (another user's is flagged for relaying, and a relay is
# routed only by a verdict the master kept for it); an exchange is accepted once; a session id another worker
# announced cannot be claimed (bindings are routed by the master's table); an
# answer to a binding check nobody asked goes nowhere.  Client:
# t/integ/privsep_client.py, which takes a copy of the stopped worker's
# channel with pidfd_getfd.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

# The message numbers, from daemon/msg.h itself.
cat >"$T/msgno.c" <<'C'
#include <stdio.h>
#include "daemon/msg.h"
int main(void) { printf("%d %d %d %d %d %d %d\n", MSG_AUTH_REQ, MSG_AUTH_REP, MSG_SESSION_UP, MSG_RELAY, MSG_HANDOFF_DONE, MSG_KILL_SESSION, MSG_BIND_CHECK_REP); return 0; }
C
cc -I"$ROOT" -o "$T/msgno" "$T/msgno.c" || { fail "cannot build msgno"; finish; }
read -r AREQ AREP SUP RELAY HDONE KILLS BREP < <("$T/msgno")

# alice's and bob's workers, kept busy with nothing: started by logins;
# bob's session id is what a compromised alice will claim
"$PYTHON" - "$PORT" <<'PY' >"$T/hold.out" 2>&1 &
import sys, time
from impacket.smbconnection import SMBConnection
for user, pw in (("alice", "alicepw1"), ("bob", "bobpw1")):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]))
    c.login(user, pw)
    c.connectTree("share")
    globals()[user] = c
print("in %x" % bob.getSMBServer()._Session["SessionID"], flush=True)
time.sleep(60)
PY
HOLD=$!
for _ in $(seq 50); do grep -q in "$T/hold.out" 2>/dev/null && break; sleep 0.2; done
BOBSID=$(sed -n 's/^in //p' "$T/hold.out")
W=$(integ_worker_of alice)
if [ -z "$W" ]; then
	fail "no worker of alice: $(cat "$T/hold.out")"
else
	kill -STOP "$W"
	out=$("$PYTHON" "$ROOT/t/integ/privsep_client.py" "$PORT" "$W" "$AREQ" "$AREP" \
	    "$SUP" "$BOBSID" "$RELAY" "$HDONE" "$KILLS" "$BREP" 2>&1)
	kill -CONT "$W"
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		esac
	done <<<"$out"
	echo "$out" | grep -q '^ok ' || fail "privsep_client.py: $(echo "$out" | tail -n 5)"
	grep -q "session key of uid [0-9]* withheld from worker $W" "$LOG" &&
	    ok "the withheld key is logged" || fail "no log line for the withheld key"
	grep -q 'exchange replayed' "$LOG" &&
	    ok "the replay is logged" || fail "no log line for the replay"
	grep -q "worker $W (uid [0-9]*): session $BOBSID not recorded: another worker's id" "$LOG" &&
	    ok "alice's worker cannot claim bob's session id (bindings stay with bob's worker)" ||
	    fail "the claim of bob's session id was not refused: $(grep "$BOBSID" "$LOG" | tail -n 3)"
	! grep -q "killing worker $W" "$LOG" &&
	    ok "an answer to a binding check nobody asked is dropped, the worker kept" ||
	    fail "an unasked binding check answer: $(grep "killing worker $W" "$LOG")"
fi
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
check "logins still work" timeout 20 smbclient "//127.0.0.1/share" -p "$PORT" \
    -U "bob%$BOB_PW" -c ls
finish
