#!/bin/bash
# The master and the process model, as root: start, ping, status, gates not
# root, gate respawn, SIGHUP with a broken config, a second instance, SIGTERM,
# daemon mode, hosts deny, usmbctl shutdown, and the init script.
set -u
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf "log file = $T/usmbd-file.log"
integ_users || fail "create users alice and bob"

# --- argv ---
check "--version prints the version" sh -c '"$0" --version | grep -q "^usmbd "' "$USMBD"
"$USMBD" --no-such-option >/dev/null 2>&1
check "a usage error exits 2" test $? = 2
"$USMBD" -F -s "$T/missing.conf" >/dev/null 2>&1
check "a missing config exits 2" test $? = 2

# --- not running yet ---
"$USMBCTL" -s "$CONF" ping >/dev/null 2>"$T/err"
rc=$?
check "usmbctl ping without a daemon exits 1" test $rc = 1
check "and says usmbd is not running" grep -q "usmbd is not running (no pidfile at $T/run/usmbd.pid)" "$T/err"

# --- start ---
integ_start || { fail "usmbd starts"; finish; }
ok "usmbd starts and answers ping"
check "pidfile holds the master's pid" test "$(cat "$T/run/usmbd.pid")" = "$SERVER_PID"
check "control socket is mode 0600" test "$(stat -c %a "$T/lock/usmbd.ctl")" = 600
check "private dir is mode 0700" test "$(stat -c %a "$T/private")" = 700
check "server GUID stored (16 bytes)" test "$(stat -c %s "$T/private/server_guid")" = 16
check "master's process title" grep -q "^usmbd: master" "/proc/$SERVER_PID/cmdline"

status_json() {
	"$USMBCTL" -s "$CONF" status --json
}

gate_pids() {
	status_json | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(p["pid"]) for p in d["processes"] if p["role"] == "gate"))'
}

check "status --json parses" sh -c '"$0" -s "$1" status --json | python3 -m json.tool' "$USMBCTL" "$CONF"
check "status --json has the master's pid" sh -c '"$0" -s "$1" status --json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"master\"][\"pid\"] == $2, d
assert d[\"sessions\"] == [] and d[\"opens\"] == []
assert d[\"master\"][\"started\"][:2] == \"20\"
"' "$USMBCTL" "$CONF" "$SERVER_PID"
check "status prints a table" sh -c '"$0" -s "$1" status | grep -q "^PID .*ROLE"' "$USMBCTL" "$CONF"

gates=$(gate_pids)
set -- $gates
check "two gates running (gate processes = 2)" test $# = 2
for pid in $gates; do
	uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")
	gids=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")
	if [ -n "$uids" ] && ! echo " $uids " | grep -q " 0 "; then
		ok "gate $pid runs as non-root (Uid: $uids)"
	else
		fail "gate $pid runs as non-root (Uid: $uids)"
	fi
	check "gate $pid has no root group (Gid: $gids)" sh -c '! echo " $0 " | grep -q " 0 "' "$gids"
	check "gate $pid runs as the usmbd account" test "$(stat -c %U "/proc/$pid")" = usmbd
	check "gate $pid process title" grep -q "^usmbd: gate" "/proc/$pid/cmdline"
	check "the gate account cannot read the private dir" sh -c '! setpriv --reuid=usmbd --regid=usmbd --clear-groups ls "$0" >/dev/null 2>&1' "$T/private"
	check "gate $pid: fd 3 is its channel socket" sh -c 'readlink /proc/$0/fd/3 | grep -q "^socket:"' "$pid"
	check "gate $pid holds none of the master's files (closefrom)" sh -c '! ls -l /proc/$0/fd | grep -q -e usmbd.pid -e usmbd.ctl -e private -e "$1"' "$pid" "$T/usmbd-file.log"
done

# --- kill -9 a gate: replaced within 1 s ---
victim=${gates%% *}
kill -9 "$victim"
replaced=0
for i in $(seq 1 20); do
	sleep 0.05
	now=$(gate_pids)
	set -- $now
	if [ $# = 2 ] && ! echo " $now " | grep -q " $victim "; then
		replaced=1
		break
	fi
done
if [ $replaced = 1 ]; then ok "killed gate $victim replaced within 1 s ($now)"; else fail "killed gate $victim replaced within 1 s (have: $now)"; fi
check "the gate's death is logged with its signal" grep -q "gate $victim killed by signal 9" "$LOG"

# --- a connection reaches a gate ---
check "TCP connect to the smb port is accepted" "$PYTHON" -c "
import socket
s = socket.create_connection(('127.0.0.1', $PORT), timeout=3)
s.close()"

# --- authentication verdicts and the user worker (through smbclient) ---
smb() {
	timeout 20 smbclient -p "$PORT" //127.0.0.1/share "$@" 2>&1
}
check "alice logs on and lists the share" sh -c 'timeout 20 smbclient -p "$0" //127.0.0.1/share -U alice%alicepw1 -c ls' "$PORT"
worker=$(status_json | "$PYTHON" -c '
import json, sys
print(" ".join(str(p["pid"]) for p in json.load(sys.stdin)["processes"] if p["role"] == "worker" and p["user"] == "alice"))')
set -- $worker
check "one worker for alice in status" test $# = 1
if [ $# = 1 ]; then
	auid=$(id -u alice)
	check "alice's worker runs with alice's uid only" test "$(awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/$1/status)" = "$auid $auid $auid $auid"
	check "alice's worker has the usmbd-state group" sh -c 'awk "/^Groups:/" /proc/$0/status | grep -qw "$1"' "$1" "$(getent group usmbd-state | cut -d: -f3)"
	check "alice's worker process title" grep -q "^usmbd: worker alice" "/proc/$1/cmdline"
fi
smb -U alice%wrongpw -c ls >"$T/smb.out"
check "a wrong password is refused (LOGON_FAILURE)" grep -q NT_STATUS_LOGON_FAILURE "$T/smb.out"
check "the failure is logged with address and user" grep -q 'logon failure from 127.0.0.1: user "alice"' "$LOG"
smb -U nosuchuser%pw -c ls >"$T/smb.out"
check "an unknown user is refused (LOGON_FAILURE)" grep -q NT_STATUS_LOGON_FAILURE "$T/smb.out"
"$USMBCTL" -s "$CONF" user disable bob >/dev/null 2>&1
smb -U bob%bobpw1 -c ls >"$T/smb.out"
check "a disabled user is refused (ACCOUNT_DISABLED)" grep -q NT_STATUS_ACCOUNT_DISABLED "$T/smb.out"
"$USMBCTL" -s "$CONF" user enable bob >/dev/null 2>&1
# Three failures from 127.0.0.1 within a minute: the next reply waits.
t0=$(date +%s%N)
smb -U alice%wrongpw -c ls >/dev/null
t1=$(date +%s%N)
check "replies to a failing address are delayed (>= 0.4 s, took $(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -ge 400
check "bob logs on after being enabled again" sh -c 'timeout 20 smbclient -p "$0" //127.0.0.1/share -U bob%bobpw1 -c ls' "$PORT"

# --- SIGHUP with a broken config keeps serving ---
cp "$CONF" "$T/good.conf"
# Line 2, inside [global]: a bad value there is an error, not a warning.
sed -i '1a\	smb ports = not-a-port' "$CONF"
badline=2
kill -HUP "$SERVER_PID"
logged=0
for i in $(seq 1 40); do
	grep -q "$CONF:$badline" "$LOG" && { logged=1; break; }
	sleep 0.05
done
check "broken config on SIGHUP is logged as FILE:LINE" test $logged = 1
# usmbctl itself refuses the broken file: ask with the good copy.
check "still serving after the broken reload (ping)" "$USMBCTL" -s "$T/good.conf" ping
check "still listening after the broken reload" "$PYTHON" -c "
import socket
socket.create_connection(('127.0.0.1', $PORT), timeout=3).close()"
"$USMBCTL" -s "$CONF" reload >/dev/null 2>&1
check "usmbctl reload with a broken config exits 2" test $? = 2
cp "$T/good.conf" "$CONF"
check "usmbctl reload with a good config" "$USMBCTL" -s "$CONF" reload
check "SIGHUP with a good config is logged" sh -c 'kill -HUP $0 && sleep 0.3 && grep -q "reloaded $1" "$2"' "$SERVER_PID" "$CONF" "$LOG"
check "ping after reloads" integ_ping

# --- a reload that changes the port moves the listener ---
newport=$(integ_free_port)
sed -i "s/smb ports = $PORT\$/smb ports = $newport/" "$CONF"
check "reload onto a new port" "$USMBCTL" -s "$CONF" reload
check "the new port accepts" "$PYTHON" -c "
import socket
socket.create_connection(('127.0.0.1', $newport), timeout=3).close()"
check "the old port is closed" "$PYTHON" -c "
import socket
try:
    socket.create_connection(('127.0.0.1', $PORT), timeout=3).close()
except ConnectionRefusedError:
    raise SystemExit(0)
raise SystemExit(1)"
cp "$T/good.conf" "$CONF"
check "reload back to the old port" "$USMBCTL" -s "$CONF" reload

# --- the control socket serves root only ---
check_fails "usmbctl ping as a non-root user is refused" setpriv --reuid=usmbd --regid=usmbd --clear-groups "$USMBCTL" -s "$CONF" ping
# Even through a socket opened up by mistake, SO_PEERCRED must be uid 0.
chmod 0666 "$T/lock/usmbd.ctl"
check_fails "a non-root peer is refused by SO_PEERCRED" setpriv --reuid=usmbd --regid=usmbd --clear-groups "$USMBCTL" -s "$CONF" ping
chmod 0600 "$T/lock/usmbd.ctl"
check "the refusal names the uid" grep -q "control socket: refusing uid $(id -u usmbd)" "$LOG"

# --- a second instance is refused ---
"$USMBD" -F -s "$CONF" >/dev/null 2>"$T/second.err"
rc=$?
check "a second instance exits 1" test $rc = 1
check "and names the running pid" grep -q "usmbd: already running as pid $SERVER_PID (pidfile $T/run/usmbd.pid)" "$T/second.err"

# --- SIGTERM: exit 0, pidfile removed, children gone ---
children=$(gate_pids)
integ_stop
rc=$?
check "SIGTERM: exit status 0" test $rc = 0
check "SIGTERM: pidfile removed" test ! -e "$T/run/usmbd.pid"
check "SIGTERM: control socket removed" test ! -e "$T/lock/usmbd.ctl"
check "SIGTERM: the gates are gone" sh -c 'for p in $0; do kill -0 $p 2>/dev/null && exit 1; done; exit 0' "$children"
"$USMBCTL" -s "$CONF" status >/dev/null 2>&1
check "usmbctl status after stop exits 1" test $? = 1

# --- hosts deny ---
cp "$CONF" "$T/good.conf"
sed -i "s/^\[global\]/[global]\n\thosts deny = 127.0.0.1/" "$CONF"
integ_start || fail "start with hosts deny"
check "a denied host is disconnected" "$PYTHON" -c "
import socket
s = socket.create_connection(('127.0.0.1', $PORT), timeout=3)
s.settimeout(3)
assert s.recv(1) == b''"
check "the refusal is logged" grep -q "connection from 127.0.0.1 refused by hosts allow/deny" "$LOG"
integ_stop
cp "$T/good.conf" "$CONF"

# --- daemon mode ---
"$USMBD" -s "$CONF"
rc=$?
check "daemon mode returns 0" test $rc = 0
dpid=$(cat "$T/run/usmbd.pid" 2>/dev/null)
check "daemon mode wrote the pidfile" test -n "$dpid"
check "the daemon answers ping" integ_ping
check "the daemon is in its own session" test "$(ps -o sid= -p "$dpid" | tr -d ' ')" = "$dpid"
check "the daemon logs to the log file" grep -q "started, config $CONF" "$T/usmbd-file.log"
kill -TERM "$dpid"
check "the daemon stops on SIGTERM" integ_wait_exit "$dpid" 10
check "and removes its pidfile" test ! -e "$T/run/usmbd.pid"

# --- usmbctl shutdown ---
integ_start || fail "start again"
check "usmbctl shutdown" "$USMBCTL" -s "$CONF" shutdown
check "the master is gone after usmbctl shutdown" integ_wait_exit "$SERVER_PID" 5
wait "$SERVER_PID"
check "and exited 0" test $? = 0
SERVER_PID=

# --- the init script ---
INIT=$ROOT/etc/init.d/usmbd
export USMBD_CONF=$CONF USMBD_DAEMON=$USMBD USMBD_CTL=$USMBCTL
"$INIT" status >/dev/null 2>&1
check "init status when stopped exits 3" test $? = 3
check "init start" "$INIT" start
ipid=$(cat "$T/run/usmbd.pid" 2>/dev/null)
check "init start wrote the pidfile" test -n "$ipid"
check "init status when running exits 0" "$INIT" status
"$INIT" start >/dev/null 2>&1
check "init start when running exits 0" test $? = 0
check "init reload" "$INIT" reload
check "init force-reload" "$INIT" force-reload
check "ping after init reload" integ_ping
check "init restart" "$INIT" restart
npid=$(cat "$T/run/usmbd.pid" 2>/dev/null)
check "init restart started a new master" sh -c 'test -n "$0" && test "$0" != "$1"' "$npid" "$ipid"
check "init stop" "$INIT" stop
check "init stop: the master is gone" integ_wait_exit "${npid:-0}" 5
check "init stop: pidfile removed" test ! -e "$T/run/usmbd.pid"
"$INIT" status >/dev/null 2>&1
check "init status after stop exits 3" test $? = 3
check "init stop when stopped exits 0" "$INIT" stop
"$INIT" bogus >/dev/null 2>&1
check "init with an unknown action exits 2" test $? = 2

finish
