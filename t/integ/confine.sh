#!/bin/bash
# Confinement and the master's distrust of its children (issue 19; HACKING.md,
# "Confinement"): gates and workers run under seccomp (gates also under
# Landlock), a gate killed by SIGSYS is replaced and logins go on, a reload
# replaces the gates, children hold no descriptor of the log and log through
# the master, which escapes what it writes (a user name with a newline
# forges no line), the log file is made 0640, one worker cannot replace
# another's mailbox in msg/, and a worker that cannot open the shared state
# refuses its connections.  The filters' effect on forbidden calls is proved
# in t/unit/check_confine.c (in forked children); a forwarded MSG_UNLINK_AS
# flood in t/unit/check_unlink_as.c (test_forward_flood).
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

login() {	# USER PASSWORD: a login and a directory listing
	smbclient "//127.0.0.1/share" -p "$PORT" -U "$1%$2" -c ls >/dev/null 2>&1
}

gates() {
	integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "gate" and not p.get("stopping"):
        print(p["pid"])'
}

status_field() {	# PID FIELD
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# Points at the log file among PID's descriptors?  (stderr of -F is the log)
writes_log() {	# PID LOGPATH
	local fd

	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

check "alice logs in" login alice "$ALICE_PW"
W=$(integ_worker_of alice)
G=$(gates | sed -n 1p)
[ -n "$W" ] && [ -n "$G" ] || fail "no worker ($W) or gate ($G) to look at"

# 1. seccomp on every child, filter mode (2), no new privileges.
for p in $(gates) $W; do
	role=gate; [ "$p" = "$W" ] && role="alice's worker"
	[ "$(status_field "$p" Seccomp)" = 2 ] &&
	    [ "$(status_field "$p" NoNewPrivs)" = 1 ] &&
	    ok "$role $p: Seccomp 2, NoNewPrivs 1" ||
	    fail "$role $p: Seccomp $(status_field "$p" Seccomp), NoNewPrivs $(status_field "$p" NoNewPrivs)"
done
[ "$(status_field "$SERVER_PID" Seccomp)" = 0 ] &&
    ok "the master itself is not filtered" || fail "master Seccomp $(status_field "$SERVER_PID" Seccomp)"

# 2. No child holds the log; their standard streams are /dev/null.
for p in $G $W; do
	if writes_log "$p" "$LOG"; then
		fail "child $p has a descriptor of $LOG"
	else
		ok "child $p holds no descriptor of the log"
	fi
	[ "$(readlink /proc/"$p"/fd/2)" = /dev/null ] &&
	    ok "child $p: stderr is /dev/null" ||
	    fail "child $p: stderr is $(readlink /proc/"$p"/fd/2)"
done
writes_log "$SERVER_PID" "$LOG" && ok "the master writes the log" ||
    fail "the master has no descriptor of $LOG"
# Lines of children still arrive, through the master, under their pid.
grep -q "usmbd\[$W\] worker alice: " "$LOG" &&
    ok "alice's worker's lines are in the log (through the master)" ||
    fail "no line of worker $W in the log"

# 3. A user name with a newline (and an escape sequence) forges nothing.
"$PYTHON" - "$PORT" <<'EOF' >"$T/forge.out" 2>&1
import sys
from impacket.smbconnection import SMBConnection
for user in ("x\nFAKE-LINE injected by a client", "esc\x1b[2Jname"):
    try:
        c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]))
        c.login(user, "nope")
        print("logged in?!")
    except Exception as e:
        print("refused", e)
EOF
grep -q "refused" "$T/forge.out" && ok "the forged logins are refused" ||
    fail "impacket: $(cat "$T/forge.out")"
sleep 0.5
if grep -q '^FAKE-LINE' "$LOG"; then
	fail "a user name started a line of its own: $(grep -n '^FAKE-LINE' "$LOG")"
else
	ok "no log line starts with the client's text"
fi
grep -qF 'user "x\x0aFAKE-LINE injected by a client"' "$LOG" &&
    ok "the newline is logged as \\x0a" || fail "no escaped user name in the log"
grep -qF 'esc\x1b[2Jname' "$LOG" && ! grep -q $'\x1b' "$LOG" &&
    ok "ESC is logged as \\x1b, never raw" || fail "escape sequence in the log"

# 4. Private mailboxes: msg/ is the master's; msg/PID is its worker's.
M=$T/lock/msg
sgid=$(getent group usmbd-state | cut -d: -f3)
[ "$(stat -c '%a %u %g' "$M")" = "710 0 $sgid" ] &&
    ok "msg/ is 0710 root:usmbd-state" || fail "msg/: $(stat -c '%a %U %G' "$M")"
[ "$(stat -c '%a %U %G' "$M/$W")" = "2710 alice usmbd-state" ] &&
    ok "msg/$W is 2710 alice:usmbd-state" || fail "msg/$W: $(stat -c '%a %U %G' "$M/$W" 2>&1)"
[ -S "$M/$W/s" ] && ok "alice's worker's socket is msg/$W/s" || fail "no socket msg/$W/s"
as_bob() {	# bob with the state group, as his worker runs
	setpriv --reuid=bob --regid=bob --groups="$sgid" -- "$@"
}
before=$(stat -c %i "$M/$W/s")
as_bob rm -f "$M/$W/s" 2>/dev/null
as_bob mv "$M/$W/s" "$M/$W/t" 2>/dev/null
as_bob "$PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])' "$M/$W/s2" 2>/dev/null
[ -S "$M/$W/s" ] && [ "$(stat -c %i "$M/$W/s")" = "$before" ] && [ ! -e "$M/$W/s2" ] &&
    ok "bob cannot remove, rename or add to alice's mailbox" ||
    fail "alice's mailbox changed: $(ls -la "$M/$W")"
next=$(( $(cat /proc/sys/kernel/ns_last_pid) + 7 ))
as_bob mkdir "$M/$next" 2>/dev/null
as_bob "$PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])' "$M/$next" 2>/dev/null
[ ! -e "$M/$next" ] && ok "bob cannot squat the mailbox of a worker to come" ||
    fail "bob made $M/$next"
# bob's worker can still reach alice's (that is what the mailboxes are for)
as_bob "$PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(sys.argv[1])' "$M/$W/s" 2>"$T/reach.err" &&
    ok "a worker of another user can still send to it" ||
    fail "bob cannot reach alice's socket: $(cat "$T/reach.err")"
# The mailbox goes with its worker.
kill -KILL "$W"
for i in $(seq 1 50); do [ -e "$M/$W" ] || break; sleep 0.1; done
[ ! -e "$M/$W" ] && ok "a dead worker's mailbox is removed by the master" ||
    fail "msg/$W left behind"

# 5. A gate killed by SIGSYS (what its filter does on a forbidden call)
# takes nothing with it: the master replaces it, logins go on.
kill -SYS "$G"
integ_wait_exit "$G" 5 && ok "gate $G died of SIGSYS" || fail "gate $G still there"
sleep 1.5
grep -q "gate $G killed by signal 31" "$LOG" && ok "the master logs the gate's death" ||
    fail "no log line for gate $G"
check "logins work after the gate's death" login alice "$ALICE_PW"
check "the master still answers" integ_ping

# 6. Reload replaces the gates: a confined gate cannot read the config.
old=$(gates | sort | tr '\n' ' ')
"$USMBCTL" -s "$CONF" reload >/dev/null 2>&1
for i in $(seq 1 30); do
	new=$(gates | sort | tr '\n' ' ')
	[ -n "$new" ] && [ "$new" != "$old" ] && ! echo " $old " | grep -q " ${new%% *} " && break
	sleep 0.2
done
[ -n "$new" ] && [ "$new" != "$old" ] && ok "reload replaced the gates ($old-> $new)" ||
    fail "gates after reload: $new (before: $old)"
check "logins work after the reload" login bob "$BOB_PW"

# 7. The drop counters are visible.
"$USMBCTL" -s "$CONF" metrics >"$T/metrics" 2>&1
grep -q '^usmbd_forward_dropped_total 0$' "$T/metrics" &&
    grep -q '^usmbd_log_lines_dropped_total ' "$T/metrics" &&
    ok "usmbctl metrics shows the forwarding and log drop counters" ||
    fail "metrics: $(grep dropped "$T/metrics")"

# 8. A worker that cannot open the shared state refuses to serve.
integ_stop
: >"$LOG"
integ_start || exit 1
# the state process must have its envs open first (it keeps them)
for i in $(seq 1 50); do
	grep -q "state process [0-9]* ready" "$LOG" && break
	sleep 0.1
done
chmod 0600 "$T/lock/state.mdb"
if login alice "$ALICE_PW"; then
	fail "alice was served without the shared state"
else
	ok "without the shared state alice's login is refused"
fi
# The worker writes its line as it refuses; under load that can follow the
# client's failure by a while, so wait for it (bounded) rather than a fixed time.
for _ in $(seq 50); do
	grep -q "refusing the connections of alice: no shared state" "$LOG" && break
	sleep 0.1
done
grep -q "refusing the connections of alice: no shared state" "$LOG" &&
    ok "the worker logs why" || fail "no refusal line in the log"
chmod 0660 "$T/lock/state.mdb"
check "with the state back alice is served" login alice "$ALICE_PW"
integ_stop

# 9. Daemon mode with a log file: made 0640, and no child holds it.
L=$T/logdir/usmbd.log
mkdir -p "$T/logdir"
integ_conf "log file = $L"
"$USMBD" -s "$CONF" 2>>"$LOG"
MP=$(cat "$T/run/usmbd.pid" 2>/dev/null)
for i in $(seq 1 50); do integ_ping && break; sleep 0.1; done
check "alice logs in (daemon mode)" login alice "$ALICE_PW"
[ "$(stat -c %a "$L" 2>&1)" = 640 ] && ok "the log file is made 0640" ||
    fail "log file mode $(stat -c %a "$L" 2>&1)"
W=$(integ_worker_of alice)
G=$(gates | sed -n 1p)
bad=
for p in $G $W; do
	writes_log "$p" "$L" && bad="$bad $p"
done
[ -n "$W" ] && [ -n "$G" ] && [ -z "$bad" ] &&
    ok "no child (gate $G, worker $W) holds the log file" ||
    fail "children holding $L:$bad (gate $G worker $W)"
grep -q "usmbd\[$W\] worker alice: " "$L" &&
    ok "the worker's lines reach the log file" || fail "no worker line in $L"
[ -n "$MP" ] && kill -TERM "$MP" && integ_wait_exit "$MP" 10 &&
    ok "the daemon stops" || fail "daemon $MP did not stop"

finish
