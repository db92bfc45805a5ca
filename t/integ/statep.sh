#!/bin/bash
# The state process as an attacker would meet it (issue 19 items 1 and 6,
# issue 20 item 2; HACKING.md "The state process"):
#  1. the root master maps nothing of the state: no state file in its
#     /proc/PID/maps, the state process runs as usmbd-state, confined;
#  2. a compromised worker -- a process with alice's uid and the state
#     group -- rewrites the LMDB meta pages, then every data page, of the
#     state files (the main env's, then the meta pages of a data env,
#     state-3.mdb, with `state partitions` 8): the master survives, `ping` and `status` answer, the
#     state process is restarted (with a fresh env, the log says so), and
#     bob logs in and works afterwards;
#  3. alice's worker stopped (SIGSTOP) inside a write transaction holds
#     the writer lock: the watchdog has it killed, bob's login and work
#     and `usmbctl ping` go on within the bound, the log says why.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
ALICE_UID=$(id -u alice)
integ_start || exit 1

bob_works() {
	local tag=$1
	echo "$tag" >"$T/bob-$tag.txt"
	timeout 30 smbclient //127.0.0.1/share -p "$PORT" -U "bob%$BOB_PW" \
	    -c "put $T/bob-$tag.txt bob-$tag.txt; get bob-$tag.txt $T/bob-$tag.back" \
	    >"$T/bob.out" 2>&1 && cmp -s "$T/bob-$tag.txt" "$T/bob-$tag.back"
}

state_pid() {
	integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p["role"] == "state" and not p["stopping"]:
        print(p["pid"])
        break'
}

wait_state_pid() {
	local i p
	for i in $(seq 100); do
		p=$(state_pid)
		[ -n "$p" ] && [ "$p" != "${1:-}" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

# ---- 1. who maps what ----
SP=$(wait_state_pid) || fail "no state process"
if [ -n "$SP" ]; then
	u=$(ps -o user= -p "$SP" | tr -d ' ')
	[ "$u" = usmbd-state ] && ok "the state process runs as usmbd-state" ||
	    fail "the state process runs as '$u'"
	grep -q '^Seccomp:[[:space:]]*2' "/proc/$SP/status" &&
	    ok "the state process runs under seccomp" ||
	    fail "the state process has no seccomp filter"
	grep -q 'state.mdb' "/proc/$SP/maps" &&
	    ok "the state process maps state.mdb" ||
	    fail "the state process does not map state.mdb"
fi
grep -q 'state\.' "/proc/$SERVER_PID/maps" &&
    fail "the root master maps a state file: $(grep state\\. /proc/$SERVER_PID/maps)" ||
    ok "the root master maps no state file"
ls -l "/proc/$SERVER_PID/fd" 2>/dev/null | grep -q 'state\.' &&
    fail "the root master holds a state file open" ||
    ok "the root master holds no state file open"
check "bob works before the attack" bob_works before
check "status answers" "$USMBCTL" -s "$CONF" status
grep -q 'bob' "$T/check.out" && ok "status shows bob's session (from the state process)" ||
    fail "status does not show bob: $(cat "$T/check.out")"

# ---- 2. a compromised worker rewrites the state files ----
attack() {
	local file=state.mdb what=$1

	# a data env's file: its meta pages
	[ "$what" = data-meta ] && { file=state-3.mdb; what=meta; }
	# alice's uid, the state group: what a compromised worker of hers has.
	setpriv --reuid=alice --regid=alice --groups=usmbd-state \
	    "$PYTHON" - "$T/lock/$file" "$what" <<'PY'
import os, sys
path, what = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR)
size = os.fstat(fd).st_size
page = 4096
if what == "meta":
    # both meta pages: magic, version, root pointers, txn ids
    for p in (0, 1):
        os.pwrite(fd, bytes([0x41]) * (page - 16), p * page + 16)
else:
    # every page after the metas that holds something: forged records
    used = min(size, 64 * page)
    for p in range(2, used // page):
        os.pwrite(fd, os.urandom(page), p * page)
os.close(fd)
PY
}

for what in meta records data-meta; do
	OLD=$(state_pid)
	lines=$(wc -l <"$LOG")
	if attack "$what"; then
		ok "alice's uid with the state group rewrote the $what pages"
	else
		fail "the $what attack could not write the state file"
	fi
	# Anyone may ask now: the state process reads the env at its next
	# counts (2 s), status or purge.
	"$USMBCTL" -s "$CONF" status >/dev/null 2>&1
	# A state process that loops on the rewritten tree is killed after
	# 15 s of silence (daemon/statectl.h STATECTL_SILENT_MS).
	fresh=0
	for _ in $(seq 400); do
		tail -n +"$lines" "$LOG" | grep -q 'started a fresh state env' &&
		    { fresh=1; break; }
		sleep 0.1
	done
	kill -0 "$SERVER_PID" 2>/dev/null && ok "$what: the master survives" ||
	    fail "$what: the master died"
	check "$what: usmbctl ping answers" timeout 5 "$USMBCTL" -s "$CONF" ping
	check "$what: usmbctl status answers" timeout 5 "$USMBCTL" -s "$CONF" status
	[ "$fresh" = 1 ] && ok "$what: the log says the state env was made afresh" ||
	    fail "$what: no fresh env in the log: $(tail -n +"$lines" "$LOG" | grep -i state | tail -n 5)"
	NEW=$(wait_state_pid "$OLD") && ok "$what: a new state process ($NEW)" ||
	    fail "$what: no new state process (was $OLD)"
	[ -e "$T/lock/state.mdb.bad" ] && [ -e "$T/lock/state-3.mdb.bad" ] &&
	    ok "$what: the old envs are kept aside (state.mdb.bad, state-3.mdb.bad)" ||
	    fail "$what: no state.mdb.bad or state-3.mdb.bad"
	check "$what: bob logs in and works afterwards" bob_works "$what"
done
grep -q 'SIGSEGV\|AddressSanitizer' "$LOG" &&
    ok "(a state process crashed on the files, as expected)" || true

# ---- 3. a stopped writer ----
integ_stop
mv "$LOG" "$T/usmbd-attack.log"
# Only alice's worker stops itself, once, inside its first write
# transaction (shm/env.c shm_wcommit).
export USMBD_TEST_STOP_IN_WRITE=$ALICE_UID
integ_start || { fail "no restart with the hook"; finish; }
unset USMBD_TEST_STOP_IN_WRITE
# alice's login makes her worker write (its session): it stops there.
timeout 60 smbclient //127.0.0.1/share -p "$PORT" -U "alice%$ALICE_PW" \
    -c ls >"$T/alice.out" 2>&1 &
ALICE=$!
AW= SEEN=
for _ in $(seq 100); do
	for p in $(pgrep -P "$SERVER_PID" -f 'usmbd: worker alice'); do
		[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && AW=$p
	done
	[ -n "$AW" ] && break
	# On a loaded machine the watchdog (about 1 s) may have killed it
	# before this loop saw it stopped: the log then says so.
	SEEN=$(sed -n -E 's/.*master: worker ([0-9]+) alice is stopped \(T\) holding.*/\1/p' "$LOG" | head -n 1)
	[ -n "$SEEN" ] && break
	sleep 0.1
done
if [ -z "$AW" ] && [ -n "$SEEN" ]; then
	ok "alice's worker $SEEN stopped inside a write transaction and was killed by the watchdog before this test looked"
	check "usmbctl ping answers" timeout 2 "$USMBCTL" -s "$CONF" ping
	integ_wait_exit "$SEEN" 5 && ok "the stopped worker was killed" ||
	    fail "the stopped worker $SEEN still exists"
elif [ -z "$AW" ]; then
	fail "alice's worker did not stop inside its write"
else
	ok "alice's worker $AW is stopped inside a write transaction"
	t0=$(date +%s%N)
	check "usmbctl ping answers at once" timeout 2 "$USMBCTL" -s "$CONF" ping
	check "bob logs in and works while alice's worker is stopped" bob_works stopped
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$ms" -lt 10000 ] && ok "bob's work took $ms ms (bound: 10 s)" ||
	    fail "bob's work took $ms ms"
	grep -q "worker $AW alice is stopped (T) holding the state's writer lock" "$LOG" &&
	    ok "the log names the stopped holder and what was done" ||
	    fail "no watchdog line: $(grep -i 'writer' "$LOG" | tail -n 3)"
	integ_wait_exit "$AW" 5 && ok "the stopped worker was killed" ||
	    fail "the stopped worker $AW still exists"
fi
wait "$ALICE" 2>/dev/null
# (Every new worker of alice's would stop again: the hook is the server's.)
check "bob works afterwards" bob_works after
check "usmbctl status answers" timeout 5 "$USMBCTL" -s "$CONF" status
finish
