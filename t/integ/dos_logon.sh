#!/bin/bash
# Logon failures as an attacker would use them (issue 20, item 5): a wrong
# password for a known user and any password for an unknown name take the
# same time (the same NTLMv2 work, the same per-account throttle), the
# throttle follows an account across client addresses, failed logons are
# written in batches (nothing in the passdb right after the failure, the
# count a few seconds later), and the optional lockout policy of `usmbctl
# user policy` refuses a locked account until `usmbctl user enable`.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { fail "users"; finish; }
integ_start || { fail "server start"; finish; }
C=$ROOT/t/integ/dos_logon_client.py
ctl() { "$USMBCTL" -s "$CONF" "$@"; }
failed_count() { ctl user show "$1" | awk '/^failed logons:/ { print $3 }'; }

# 6 rounds: alice (wrong password) and a name nobody has, each attempt
# from a fresh address.  The per-account delays (0, 0, 0.5, 1, 2, 4 s)
# apply to both names alike; the times must match round by round.
out=$(timeout 120 "$PYTHON" "$C" "$PORT" times 6 alice zzunknown 2>&1)
echo "$out" | sed 's/^/     /'
[ "$(echo "$out" | grep -c "^round .* STATUS_LOGON_FAILURE STATUS_LOGON_FAILURE$")" = 6 ] &&
    ok "known and unknown names both get LOGON_FAILURE" || fail "statuses"
worst=$(echo "$out" | awk '$1 == "round" { d = $3 - $4; if (d < 0) d = -d; if (d > m) m = d } END { print m + 0 }')
[ "$worst" -lt 150 ] && ok "known and unknown names take the same time (worst round apart by $worst ms)" ||
    fail "timing differs by $worst ms between a known and an unknown name"
t4=$(echo "$out" | awk '$1 == "round" && $2 == 3 { print $3 }')
t1=$(echo "$out" | awk '$1 == "round" && $2 == 0 { print $3 }')
[ "${t4:-0}" -ge 900 ] && [ "${t1:-9999}" -lt 900 ] &&
    ok "the per-account throttle follows alice across addresses (${t1} ms, then ${t4} ms)" ||
    fail "no per-account delay: first ${t1:-?} ms, fourth ${t4:-?} ms"
count_is() { [ "$(failed_count "$1")" = "$2" ]; }
integ_until 8 count_is alice 6
m=$(failed_count alice)
[ "${m:-0}" = 6 ] && ok "alice's 6 failed logons reach the passdb (in batches, every 5 s)" ||
    fail "failed logons recorded: ${m:-?}"
out=$(timeout 30 "$PYTHON" "$C" "$PORT" try alice "$ALICE_PW" 127.0.2.1 2>&1)
case $out in OK*) ok "alice logs in with her password after the failures ($out)" ;;
*) fail "alice after the failures: $out" ;; esac
integ_until 8 count_is alice 0
[ "$(failed_count alice)" = 0 ] && ok "a good logon resets the count" || fail "count not reset"

# Lockout: 3 bad attempts in a row, 1 minute.
check "usmbctl user policy sets bad lockout attempt" ctl user policy "bad lockout attempt" 3
check "usmbctl user policy sets lockout duration" ctl user policy "lockout duration" 1
ctl user policy | grep -q "bad lockout attempt: 3" && ok "the policy reads back" || fail "policy show"
check_fails "a bad policy name is refused" ctl user policy "bad lockout attempts" 3
for i in 1 2 3; do
	timeout 30 "$PYTHON" "$C" "$PORT" try bob wrong$i 127.0.3.$i >/dev/null 2>&1
done
out=$(timeout 30 "$PYTHON" "$C" "$PORT" try bob "$BOB_PW" 127.0.3.9 2>&1)
case $out in STATUS_ACCOUNT_LOCKED_OUT*) ok "bob is locked out after 3 failures, right password or not" ;;
*) fail "bob after 3 failures: $out" ;; esac
grep -q "user bob locked out after 3 failed logons" "$LOG" && ok "the lockout is logged" ||
    fail "no lockout log line"
shows_locked() { ctl user show bob | grep -q "^locked out:"; }
integ_until 8 shows_locked
ctl user show bob | grep -q "^locked out:" && ok "usmbctl user show says bob is locked out" ||
    fail "user show: $(ctl user show bob)"
check "usmbctl user enable bob clears the lockout" ctl user enable bob
out=$(timeout 30 "$PYTHON" "$C" "$PORT" try bob "$BOB_PW" 127.0.3.10 2>&1)
case $out in OK*) ok "bob logs in after enable" ;; *) fail "bob after enable: $out" ;; esac
check "the policy is turned off again" ctl user policy "bad lockout attempt" 0
integ_ping && ok "server alive" || fail "server gone"
finish
