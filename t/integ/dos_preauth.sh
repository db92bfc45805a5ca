#!/bin/bash
# Pre-authentication fairness (issue 20, item 4), as an attacker would try
# it on loopback: 600 slow connections from 40 addresses (127.0.0.2-41)
# sending one byte every 2 s, reconnecting when dropped, while alice logs
# in 20 times in a row from 127.0.0.1: every login succeeds, each within
# 1 s; the gate pool grows past `gate processes` and comes back within
# `max gate processes`.  Then with a pool too small for the flood (max
# gate processes = 2, 128 slots) a full pool drops the oldest
# unauthenticated connection instead of keeping new ones out.  Then a
# binding flood from one address, unsigned and SMB 2.x bindings signed
# with alice's key: each is judged by her worker and answered by the gate
# (REQUEST_NOT_ACCEPTED signed with the session's key for 2.x), no socket
# reaches a worker, few log lines; alice goes on.
. "$(dirname "$0")/lib.sh"

integ_init
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 2048 ] || { fail "ulimit -n $(ulimit -n): need 2048"; finish; }
INTEG_LOG_LEVEL=2
integ_conf "gate processes = 2" "max gate processes = 16"
integ_users || { fail "users"; finish; }
integ_start || { fail "server start"; finish; }

C=$ROOT/t/integ/dos_preauth_client.py

out=$(timeout 180 "$PYTHON" "$C" "$PORT" slowloris 600 40 120 20 alice "$ALICE_PW" 2>&1)
echo "$out" | sed 's/^/     /'
n=$(echo "$out" | awk '$1 == "logins" { print $2 }')
f=$(echo "$out" | awk '$1 == "logins" { print $4 }')
slow=$(echo "$out" | awk '$1 == "slow" { print $2 }')
[ "${n:-0}" = 20 ] && [ "${f:-1}" = 0 ] &&
    ok "20 logins in a row under 600 slow sockets all succeed" ||
    fail "logins under the flood: ${n:-?} done, ${f:-?} failed"
[ "${slow:-1}" = 0 ] && ok "each login took under 1 s ($(echo "$out" |
    awk '$1 == "login-max-ms" { print $2 }') ms at most)" ||
    fail "$slow logins took over 1 s"
grep -q "growing the pool" "$LOG" && ok "the gate pool grew under the flood" ||
    fail "no growth of the gate pool"
ng=$(sed -n 's/.*growing the pool to \([0-9]*\).*/\1/p' "$LOG" | sort -n | tail -1)
[ "${ng:-99}" -le 16 ] && ok "the pool stayed within max gate processes (${ng:-?} gates)" ||
    fail "${ng:-?} gates"
integ_ping && ok "server alive after the flood" || fail "server gone"
integ_stop

# A pool that cannot grow enough: the oldest pre-auth connection goes.
integ_conf "gate processes = 1" "max gate processes = 2"
integ_start || { fail "restart"; finish; }
out=$(timeout 120 "$PYTHON" "$C" "$PORT" slowloris 300 40 60 5 alice "$ALICE_PW" 2>&1)
echo "$out" | sed 's/^/     /'
n=$(echo "$out" | awk '$1 == "logins" { print $2 }')
f=$(echo "$out" | awk '$1 == "logins" { print $4 }')
[ "${n:-0}" = 5 ] && [ "${f:-1}" = 0 ] &&
    ok "a full pool (2 gates, 300 slow sockets): 5 logins succeed" ||
    fail "logins with a full pool: ${n:-?} done, ${f:-?} failed"
grep -q "every slot taken, dropping the oldest" "$LOG" &&
    ok "a full pool drops the oldest unauthenticated connection" ||
    fail "no eviction logged"
integ_stop

# Binding flood from one address: 300 unsigned bindings to alice's
# session.  Each is judged by alice's worker before any socket moves
# (worker/bindcheck.h): refused in the gate, none parked in the worker.
integ_conf "max workers per user = 1"
integ_start || { fail "restart"; finish; }
out=$(timeout 120 "$PYTHON" "$C" "$PORT" bindflood 300 alice "$ALICE_PW" 2>&1)
echo "$out" | sed 's/^/     /'
a=$(grep -c "127.0.0.2: connection taken over (session 0)" "$LOG")
n=$(echo "$out" | awk '$1 == "bind-answered" { print $2 }')
[ "$a" = 0 ] && ok "no unauthenticated binding reached the worker (0 of 300)" ||
    fail "$a binding connections from one address reached the worker"
[ "${n:-0}" -ge 290 ] && ok "the gates answered the bindings ($n of 300)" ||
    fail "${n:-?} of 300 bindings answered"
echo "$out" | grep -q "^user-works 1" && ok "alice's session goes on" ||
    fail "alice's session after the binding flood"
echo "$out" | grep -q "^login-ms" && ok "alice logs in again after the flood" ||
    fail "login after the binding flood"
integ_ping && ok "server alive" || fail "server gone"

# SMB 2.x bindings with alice's live session id, signed with its key, in
# a loop from one address (MS-SMB2 3.3.5.5: STATUS_REQUEST_NOT_ACCEPTED,
# signed, as smbtorture's bind_negative_smb202 wants), and a 3.1.1
# binding to her 2.1 session (INVALID_PARAMETER): every answer built and
# signed by her worker, written by the gate; no socket reaches the worker
# (its descriptors and the hand-off log stay as they were), at most a
# few log lines for them all.
l0=$(wc -l < "$LOG")
out=$(timeout 120 "$PYTHON" "$C" "$PORT" bind2x 40 7 alice "$ALICE_PW" 2>&1)
echo "$out" | sed 's/^/     /'
n=$(echo "$out" | awk '$1 == "answer" && $3 == "signed-req" && $4 == "0xc00000d0" && $5 == "signed" { print $2 }')
[ "${n:-0}" = 280 ] &&
    ok "280 signed 2.x bindings: REQUEST_NOT_ACCEPTED, signed with the session's key" ||
    fail "signed 2.x bindings: ${n:-0} of 280 answered REQUEST_NOT_ACCEPTED signed"
n=$(echo "$out" | awk '$1 == "answer" && $3 == "unsigned-req" && $4 == "0xc0000022" && $5 == "not-signed" { print $2 }')
[ "${n:-0}" = 40 ] && ok "40 unsigned 2.x bindings: ACCESS_DENIED, unsigned" ||
    fail "unsigned 2.x bindings: ${n:-0} of 40 answered ACCESS_DENIED"
echo "$out" | grep -q "^answer 1 3.1.1-req 0xc000000d signed" &&
    ok "a 3.1.1 binding to a 2.1 session: INVALID_PARAMETER, signed" ||
    fail "3.1.1 binding to a 2.1 session"
fds=$(echo "$out" | awk '$1 == "worker-fds" { print ($3 - $2) }')
[ -n "$fds" ] && [ "$fds" -le 0 ] &&
    ok "alice's worker holds no more descriptors during the flood ($(echo "$out" | awk '$1 == "worker-fds" { print $2 " -> " $3 }'))" ||
    fail "alice's worker descriptors grew by ${fds:-?}"
a=$(tail -n +"$((l0 + 1))" "$LOG" | grep -c "connection taken over (session 0)")
[ "$a" = 0 ] && ok "no binding connection was handed to a worker" ||
    fail "$a binding connections handed to a worker"
b=$(tail -n +"$((l0 + 1))" "$LOG" | grep -ci "bind")
[ "$b" -le 20 ] && ok "log lines about the 321 bindings: $b" ||
    fail "$b log lines about the bindings"
echo "$out" | grep -q "^user-works 1" && ok "alice's session goes on" ||
    fail "alice's session after the 2.x bindings"
integ_ping && ok "server alive" || fail "server gone"
finish
