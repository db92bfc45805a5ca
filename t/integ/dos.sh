#!/bin/bash
# One user, or no user at all, cannot take the server down (issue 20):
# alice fills what the limits let her while bob works, nobody dies and
# every process maps no more of the state file than it holds; anonymous
# logons are refused by default, and 40 anonymous-style connections
# sending most of a large frame are cut off with bounded memory (in the
# gates, and in a worker for logged-in connections without a disk tree);
# srvsvc tells paths to administrators only and nothing to anonymous
# callers; the anonymous sessions' worker serves IPC$ only, without the
# state group or the state env.
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_SHARES="[secret]
	path = $SHARE
	browseable = no
[aliceonly]
	path = $SHARE
	valid users = alice"
integ_conf "max open files = 120" "max opens per connection = 50" \
    "max locks per open = 6" "max locks per user = 400" \
    "max locks per file = 5" "state map size = 1M"
integ_users || { fail "users"; finish; }
integ_start || { fail "server start"; finish; }
mkdir -p "$SHARE/fill" && chmod 1777 "$SHARE/fill"

C=$ROOT/t/integ/dos_client.py
run() { timeout 120 "$PYTHON" "$C" "$PORT" "$@" 2>&1; }

server_pids() { echo "$SERVER_PID" $(pgrep -P "$SERVER_PID"); }

# Every process that maps state.mdb maps no more than the file holds (a
# larger mapping is a SIGBUS waiting to happen); prints offenders.
map_check() {
	local f=$T/lock/state.mdb size pid len bad=0 n=0
	[ -f "$f" ] || f=$(find "$T" -name state.mdb | head -1)
	size=$(stat -c %s "$f")
	for pid in $(server_pids); do
		[ -r "/proc/$pid/maps" ] || continue
		len=0
		while read -r range _ _ _ _ path; do
			[ "$path" = "$f" ] || continue
			len=$((len + 16#${range#*-} - 16#${range%-*}))
		done <"/proc/$pid/maps"
		[ "${len:-0}" -gt 0 ] && n=$((n + 1))
		if [ -n "$len" ] && [ "$len" -gt "$size" ]; then
			echo "pid $pid maps $len > file $size"
			bad=1
		fi
	done
	[ "$n" -gt 0 ] || { echo "no process maps $f"; bad=1; }
	return $bad
}

pids_before=$(server_pids)

# 3 connections x 50 opens x 6 locks: the limits stop alice at 120 opens
# (50 per connection), 5 locks per file and 400 locks in all.
out=$(run fill 3 50 6)
echo "$out" | sed 's/^/     /'
opened=$(echo "$out" | awk '$1 == "alice-opened" { print $2 }')
locked=$(echo "$out" | awk '$1 == "alice-locked" { print $2 }')
[ "${opened:-0}" = 120 ] && ok "alice's opens stop at max open files (120)" ||
    fail "alice opened ${opened:-?} files, want 120"
echo "$out" | grep -q "alice-open-refused STATUS_INSUFF_SERVER_RESOURCES 30" &&
    ok "the 30 opens past the limit: INSUFF_SERVER_RESOURCES" ||
    fail "open refusals"
[ "${locked:-0}" -le 400 ] && [ "${locked:-0}" -ge 300 ] &&
    ok "alice's locks stop at the per-file and per-user limits ($locked)" ||
    fail "alice took ${locked:-?} locks"
echo "$out" | grep -q "alice-lock-refused STATUS_LOCK_NOT_GRANTED" &&
    ok "locks past a limit: LOCK_NOT_GRANTED" || fail "lock refusals"
echo "$out" | grep -q "bob-failed 0" && ! echo "$out" | grep -q "bob-ok 0$" &&
    ok "bob kept working while alice filled her share" || fail "bob's work failed"
grep -q "user alice: refused, \`max open files\` (120) reached" "$LOG" &&
    ok "the open limit is logged with the user's name" || fail "open limit log line"
grep -Eq "user alice: refused, \`max locks per (user|open)\`|max locks per file" "$LOG" &&
    ok "the lock limits are logged" || fail "lock limit log line"
pids_after=$(server_pids)
for p in $pids_before; do
	case " $pids_after " in *" $p "*) ;; *) fail "process $p died"; died=1 ;; esac
done
[ -z "${died:-}" ] && ok "no process died"
! grep -Eq "SIGBUS|signal 7|Bus error" "$LOG" && ok "no SIGBUS" || fail "SIGBUS in the log"
m=$(map_check) && ok "every process maps at most the state file's size" ||
    fail "mappings past the file: $m"

# A worker killed while holding opens and locks is purged; the master lives.
aw=$(integ_worker_of alice)
if [ -n "$aw" ]; then
	kill -9 "$aw"
	sleep 1
	integ_ping && ok "master alive after alice's worker was killed" ||
	    fail "master gone after the kill"
	! grep -q "purge.*fail\|cannot purge" "$LOG" && ok "the purge of alice's worker ran" ||
	    fail "purge failed: $(grep -i purge "$LOG" | tail -2)"
fi
check "bob still works" timeout 30 smbclient //127.0.0.1/share -p "$PORT" \
    -U "bob%$BOB_PW" -c "put $CONF bobafter.txt; ls"
m=$(map_check) && ok "mappings consistent after the purge" || fail "$m"

# Anonymous (null) logons: refused by default, with a log line.
check_fails "anonymous smbclient -L refused by default" \
    timeout 30 smbclient -L //127.0.0.1 -p "$PORT" -U% -N
grep -q "anonymous refused (\`restrict anonymous\` = 2)" "$LOG" &&
    ok "the anonymous refusal is logged" || fail "anonymous refusal log line"

# 40 connections that negotiate, then send most of an 8 MiB frame: the
# unauthenticated side takes only small frames; memory stays bounded.
rss() { local t=0 p; for p in $(server_pids); do
	t=$((t + $(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
	done; echo $t; }
before=$(rss)
timeout 60 "$PYTHON" - "$PORT" <<'EOF' >"$T/flood.out" 2>&1
import socket, struct, sys, time
port = int(sys.argv[1])
neg = bytes.fromhex("fe534d42400000000000000000000000000000000000000000000000"
                    "0000000000000000000000000000000000000000000000000000000000000000"
                    "24000200010000000000000000000000000000000000000000000000000000000000"
                    "0000000000000202" "1002")
socks, cut = [], 0
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(struct.pack(">I", len(neg)) + neg)
    socks.append(s)
time.sleep(0.5)
chunk = b"\0" * 65536
dead = set()
for i, s in enumerate(socks):
    try:
        s.sendall(struct.pack(">I", 8 * 1024 * 1024) + b"\xfeSMB" + chunk * 100)
    except OSError:
        dead.add(i)
time.sleep(1)
for i, s in enumerate(socks):
    s.settimeout(0.2)
    try:
        while s.recv(65536):
            pass
        dead.add(i)
    except socket.timeout:
        pass
    except OSError:
        dead.add(i)
print("cut", len(dead))
EOF
after=$(rss)
grep -q "^cut 40$" "$T/flood.out" && ok "all 40 large partial frames were cut off" ||
    fail "flood: $(cat "$T/flood.out")"
[ $((after - before)) -lt 65536 ] &&
    ok "server memory bounded under the flood ($before -> $after KiB)" ||
    fail "server RSS grew from $before to $after KiB"
integ_ping && ok "server alive after the flood" || fail "server gone after the flood"

# srvsvc: bob is no administrator (no `server admin group`): levels 2 and
# 502 are refused; NetShareGetInfo finds no non-browseable share and no
# share whose valid users leave him out.
out=$(run srvsvc bob "$BOB_PW")
echo "$out" | sed 's/^/     /'
echo "$out" | grep -q "^enum 1 OK" && ok "srvsvc enum level 1 for a user" || fail "enum 1"
echo "$out" | grep -q "^enum 2 DENIED" && echo "$out" | grep -q "^enum 502 DENIED" &&
    ok "srvsvc enum levels 2 and 502: ACCESS_DENIED to a non-administrator" ||
    fail "enum 2/502 not denied"
echo "$out" | grep -q "^getinfo share 1 OK" && echo "$out" | grep -q "^getinfo share 2 DENIED" &&
    ok "srvsvc getinfo: level 1 answered, level 2 denied" || fail "getinfo share"
echo "$out" | grep -q "^getinfo secret 1 NOTFOUND" &&
    ok "srvsvc getinfo honours browseable" || fail "getinfo of a non-browseable share"
echo "$out" | grep -q "^getinfo aliceonly 1 NOTFOUND" &&
    ok "srvsvc getinfo honours valid users" || fail "getinfo of alice's share as bob"
out=$(run srvsvc alice "$ALICE_PW")
echo "$out" | grep -q "^getinfo aliceonly 1 OK" &&
    ok "srvsvc getinfo of her share for alice" || fail "getinfo aliceonly as alice: $out"
integ_stop

# restrict anonymous = 1: a null session logs on, srvsvc tells it nothing.
integ_conf "restrict anonymous = 1"
integ_start || { fail "restart"; finish; }
out=$(timeout 30 "$PYTHON" "$C" "$PORT" srvsvc "" "" 2>&1)
echo "$out" | sed 's/^/     /'
echo "$out" | grep -q "^enum 1 DENIED" && ! echo "$out" | grep -q "OK" &&
    ok "srvsvc tells an anonymous caller nothing (restrict anonymous = 1)" ||
    fail "anonymous srvsvc"
integ_stop
integ_conf "restrict anonymous = 0"
integ_start || { fail "restart"; finish; }
out=$(timeout 30 "$PYTHON" "$C" "$PORT" srvsvc "" "" 2>&1)
echo "$out" | grep -q "^enum 1 OK" &&
    ok "srvsvc lists shares to anonymous with restrict anonymous = 0" ||
    fail "anonymous srvsvc with 0: $out"

# The anonymous sessions' worker (the guest account, no share `guest ok`)
# serves IPC$ only: not in the state group, no state file mapped, and it
# still lists shares, while `usmbctl status` answers.
check "anonymous smbclient -L lists the shares" timeout 30 smbclient -N \
    -L //127.0.0.1 -p "$PORT"
grep -q "share" "$T/check.out" || fail "smbclient -L listed no share"
w=$(integ_worker_of nobody)
sgid=$(getent group usmbd-state | cut -d: -f3)
if [ -n "$w" ] && [ -n "$sgid" ]; then
	grep '^Groups:' "/proc/$w/status" | grep -qw "$sgid" &&
	    fail "the IPC\$-only worker is in usmbd-state ($sgid)" ||
	    ok "the IPC\$-only worker is not in usmbd-state"
	grep -q 'state\.mdb' "/proc/$w/maps" &&
	    fail "the IPC\$-only worker maps the state env" ||
	    ok "the IPC\$-only worker maps no state file"
	ls -l "/proc/$w/fd" 2>/dev/null | grep -q 'state\.mdb\|/msg/' &&
	    fail "the IPC\$-only worker holds a state fd" ||
	    ok "the IPC\$-only worker holds no state or mailbox fd"
else
	fail "no anonymous worker (pid '${w}') or no usmbd-state group"
fi
check "usmbctl status answers beside it" "$USMBCTL" -s "$CONF" status
check_fails "an anonymous disk tree connect is refused" timeout 30 \
    smbclient -N //127.0.0.1/share -p "$PORT" -c ls

# Receive buffers stay small until a session has a disk tree: 40 logged-in
# connections (bob, then anonymous) on IPC$ only, each sending 6.4 MB of an
# 8 MiB frame, are cut off and their worker stays small (it took 265 MB
# with 8 MiB buffers from the start).  A disk tree still takes large I/O.
rxflood() {	# USER PASSWORD: prints "cut N" and the worker's RSS in KiB
	local fifo=$T/rx.in hold cl w i
	rm -f "$fifo"; mkfifo "$fifo"
	(sleep 120 >"$fifo") & hold=$!
	timeout 100 "$PYTHON" "$ROOT/t/integ/dos_rxbuf_client.py" "$PORT" 40 "$1" "$2" \
	    <"$fifo" >"$T/rx.out" 2>&1 & cl=$!
	for i in $(seq 60); do grep -q "^cut" "$T/rx.out" && break; sleep 1; done
	cat "$T/rx.out"
	w=$(integ_worker_of "${1:-nobody}")	# anonymous: the guest account
	[ -n "$w" ] && echo "rss $(awk '/^VmRSS/ { print $2 }' "/proc/$w/status")"
	kill "$hold" 2>/dev/null; wait "$cl" 2>/dev/null
}
for who in bob anonymous; do
	if [ $who = bob ]; then out=$(rxflood bob "$BOB_PW"); else out=$(rxflood "" ""); fi
	echo "$out" | sed 's/^/     /'
	r=$(echo "$out" | awk '$1 == "rss" { print $2 }')
	echo "$out" | grep -q "^cut 40$" &&
	    ok "$who: 40 large partial frames on IPC\$-only connections cut off" ||
	    fail "$who: large frames on IPC\$ not cut: $out"
	[ -n "$r" ] && [ "$r" -lt 65536 ] &&
	    ok "$who: the worker stays small under them (${r} KiB)" ||
	    fail "$who: worker RSS ${r:-?} KiB"
done
head -c 20000000 /dev/urandom >"$T/big.bin"
check "a disk tree still takes large writes and reads" timeout 60 smbclient \
    //127.0.0.1/share -p "$PORT" -U "bob%$BOB_PW" \
    -c "put $T/big.bin big.bin; get big.bin $T/big.back"
cmp -s "$T/big.bin" "$T/big.back" && ok "20 MB round trip intact" || fail "big file differs"

# A reload that makes a share `guest ok`: the IPC$-only worker goes (it
# can never get the state), and a guest gets a worker with the state.
check "anonymous IPC\$ before the reload" timeout 30 smbclient -N \
    -L //127.0.0.1 -p "$PORT"
w=$(integ_worker_of nobody)
mkdir -p "$T/pub" && echo hello >"$T/pub/pub.txt" && chmod -R a+rX "$T/pub"
INTEG_SHARES="[pub]
	path = $T/pub
	guest ok = yes
	read only = yes" integ_conf "restrict anonymous = 0" "map to guest = bad user"
check "reload" "$USMBCTL" -s "$CONF" reload
# the worker's line reaches the log through the master, which may write
# it after the worker is gone: wait for it too
[ -n "$w" ] && integ_wait_exit "$w" 10 &&
    integ_until 10 grep -q "a share is \`guest ok\` now: IPC\$-only worker exits" "$LOG" &&
    ok "the IPC\$-only worker exits at the reload, with a log line" ||
    fail "IPC\$-only worker ${w:-?} still there after the reload"
check "a guest reads the new guest ok share" timeout 30 smbclient \
    //127.0.0.1/pub -p "$PORT" -U nosuchuser%whatever -c "get pub.txt $T/pub.back"
w=$(integ_worker_of nobody)
[ -n "$w" ] && grep -q 'state\.mdb' "/proc/$w/maps" &&
    ok "the guest's new worker has the state" ||
    fail "guest worker ${w:-?} has no state"
finish
