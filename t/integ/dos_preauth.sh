#!/bin/bash
# Pre-authentication fairness (issue 20, item 4), as an attacker would try
# it on loopback: 600 slow connections from 40 addresses (127.0.0.2-41)
# sending one byte every 2 s, reconnecting when dropped, while alice logs
# in 20 times in a row from 127.0.0.1: every login succeeds, each within
# 1 s; the gate pool grows past `gate processes` and comes back within
# `max gate processes`.  Then with a pool too small for the flood (max
# gate processes = 2, 128 slots) a full pool drops the oldest
# unauthenticated connection instead of keeping new ones out.  Then a
# binding flood from one address: at most 256 unauthenticated binding
# connections of one address reach a worker (they stay counted 20 s), the
# gate answers the rest itself; alice goes on.
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

# Binding flood from one address: 300 unsigned bindings to alice's session.
integ_conf "max workers per user = 1"
integ_start || { fail "restart"; finish; }
out=$(timeout 120 "$PYTHON" "$C" "$PORT" bindflood 300 alice "$ALICE_PW" 2>&1)
echo "$out" | sed 's/^/     /'
a=$(grep -c "127.0.0.2: connection taken over (session 0)" "$LOG")
# 256 counted, plus at most the 16 of the address's connections in the
# gates that were let bind while the count was below the cap.
[ "$a" -le 272 ] && [ "$a" -ge 200 ] &&
    ok "unauthenticated bindings parked in the worker stay within the per-address limit ($a of 300)" ||
    fail "$a binding connections from one address reached the worker"
echo "$out" | grep -q "^user-works 1" && ok "alice's session goes on" ||
    fail "alice's session after the binding flood"
echo "$out" | grep -q "^login-ms" && ok "alice logs in again after the flood" ||
    fail "login after the binding flood"
grep -q "waits in workers for channel bindings: no binding on this one" "$LOG" &&
    ok "the gate answers the bindings over the limit itself (logged)" ||
    fail "no refusal logged"
integ_ping && ok "server alive" || fail "server gone"
finish
