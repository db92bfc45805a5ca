#!/bin/bash
# Several users on one TCP connection (issue 13; HACKING.md "Several users
# on one connection"): alice's worker holds the socket, bob's session is
# served by bob's worker over a relay.  Client: t/integ/multi_client.py
# (impacket, one connection, a session per user; dialects 2.0.2, 2.1 and
# 3.0).  MULTI_USERS (default 64) users on one connection in all.
. "$(dirname "$0")/lib.sh"

integ_init
# Signing required: 2.x relays too (the end of this file runs without
# it, and with `relay sealed sessions = no`).  impacket seals every 3.0
# session unasked: those relays are sealed.
integ_conf "server signing = mandatory"
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

printf "bob's secret\n" >"$SHARE/secret"
chown bob: "$SHARE/secret"
chmod 600 "$SHARE/secret"

client() {
	"$PYTHON" "$ROOT/t/integ/multi_client.py" "$PORT" "$@" >"$T/client.out" 2>&1
	local rc=$?
	cat "$T/client.out"
	grep -q '^FAIL' "$T/client.out" && return 1
	return $rc
}

for d in 202 21 30; do
	check "dialect $d: alice and bob on one connection" client "$d" two "$d"
	for i in 0 4; do
		check "dialect $d: alice's file is alice's on disk" \
		    test "$(stat -c %U "$SHARE/a_${d}_$i.txt")" = alice
		check "dialect $d: bob's file is bob's on disk" \
		    test "$(stat -c %U "$SHARE/b_${d}_$i.txt")" = bob
	done
done
export SHARE
for d in 21 30; do
	check "dialect $d: lease breaks, a blocking lock, CANCEL, CHANGE_NOTIFY across the two" \
	    client "$d" async "$d"
done
check "the owner's LOGOFF leaves bob's relayed session serving" \
    client 21 ownerlogoff o
check "bob's 1 MiB WRITE and READ relayed on alice's IPC$-only connection" \
    client 30 bigrelay b
check "dialect 30: bob's durable handle reclaimed by his relayed session on a new connection" \
    client 30 durable 30
for d in 202 21; do
	check "dialect $d: bob's related compound chain, relayed" \
	    client "$d" compound "$d"
	check "dialect $d: the chain's file is bob's on disk" \
	    test "$(stat -c %U "$SHARE/cpd_$d")" = bob
done
# Unrelated compounds whose elements are alice's and bob's (MS-SMB2
# 3.3.5.2.7.1): split by the owner, each element served by its own
# user's worker (worker/relay.c relay_split)
for d in 202 21; do
	check "dialect $d: alice's and bob's elements in one compound, each served by its user" \
	    client "$d" mixed "$d"
	n=0
	for f in "$SHARE"/mx_"${d}"_*_[0-9]*; do
		u=${f#"$SHARE"/mx_"${d}"_}
		[ "$(stat -c %U "$f")" = "${u%%_*}" ] && n=$((n + 1))
	done
	check "dialect $d: the 6 files of the mixed compounds are each their user's on disk" \
	    test "$n" = 6
done
# Re-authentication as another user (worker/smb2_reauth.c): alice's
# handles go on, nothing new is granted to bob through alice's worker.
for d in 21 30; do
	check "dialect $d: alice re-authenticated as bob keeps her handle, gets nothing new" \
	    client "$d" reauth "$d"
	check "dialect $d: the file made back as alice is alice's on disk" \
	    test "$(stat -c %U "$SHARE/ra_${d}_new.txt")" = alice
done
grep -q "re-authenticated as bob" "$LOG" &&
	ok "the log says the session was re-authenticated as bob" ||
	fail "no log line for the re-authentication as bob"
grep -q "relayed" "$LOG" && ok "the log says the session was relayed" ||
	fail "no relay in the log"

# usmbctl status: each session with its user, the worker serving it and
# the one holding the socket (the master's own table), and the client's
# address and port (the relayed worker has them from the owner's
# hand-off: its own socket is a socketpair)
cat >"$T/status" <<SH
#!/bin/bash
sleep 2	# the client idle: both sessions show the connection's idle time
"$USMBCTL" -s "$CONF" status --json >"$T/status.json"
"$USMBCTL" -s "$CONF" status --sessions >"$T/status.txt"
echo "\$MULTI_CLIENT_ADDR \$MULTI_CLIENT_PORT" >"$T/status.client"
SH
chmod +x "$T/status"
check "status while bob's session is relayed" client 21 hold s ok "$T/status"
check "status --json: bob's session served by bob's worker, socket in alice's" \
    "$PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
w = {p["user"]: p["pid"] for p in j["processes"] if p["role"] == "worker"}
s = [x for x in j["sessions"] if x["user"] == "bob"]
a = [x for x in j["sessions"] if x["user"] == "alice"]
assert s and a, j["sessions"]
assert s[-1]["worker_pid"] == w["bob"] and s[-1]["socket_pid"] == w["alice"], s
assert a[-1]["worker_pid"] == a[-1]["socket_pid"] == w["alice"], a
' "$T/status.json"
check "status --json: the relayed session and the owner's show the client's address and port" \
    "$PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
addr, port = open(sys.argv[2]).read().split()
on = [x for x in j["sessions"] if x["client_port"] == int(port)]
assert sorted(x["user"] for x in on) == ["alice", "bob"], (port, j["sessions"])
for x in on:
    assert x["client_address"] == addr, (addr, x)
b = [x for x in on if x["user"] == "bob"][0]
assert b["socket_pid"] != b["worker_pid"], b
' "$T/status.json" "$T/status.client"
check "status --json: the relayed session shows the connection's idle time, as the owner's" \
    "$PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
addr, port = open(sys.argv[2]).read().split()
idle = {x["user"]: x["idle_seconds"] for x in j["sessions"]
        if x["client_port"] == int(port)}
assert isinstance(idle["alice"], int) and idle["alice"] >= 1, idle
assert idle["bob"] == idle["alice"], idle
' "$T/status.json" "$T/status.client"
check "status --sessions: bob's line says which worker relays it" \
    grep -q "bob .*(relayed by [0-9]*)" "$T/status.txt"

# kill-session of the relayed session: bob's next request is refused,
# alice goes on
cat >"$T/killsess" <<SH
#!/bin/bash
"$USMBCTL" -s "$CONF" kill-session "\$1"
sleep 0.5
SH
chmod +x "$T/killsess"
check "kill-session of bob's relayed session, alice goes on" \
    client 21 hold ks deleted "$T/killsess"

# bob's worker killed -9 while alice goes on
cat >"$T/killbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
pid=\$(integ_worker_of bob)
[ -n "\$pid" ] && kill -9 "\$pid"
sleep 0.5
SH
chmod +x "$T/killbob"
check "bob's worker killed -9, alice goes on" client 21 hold k deleted "$T/killbob"
check "the server is still up" integ_ping

# bob's worker compromised: an answer it writes under alice's session id
# (for her next request, with data of its own) is not passed on; the
# owner closes bob's relay (worker/relay_state.c relay_answer_next)
cat >"$T/forgebob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
exec "$PYTHON" "$ROOT/t/integ/relay_forge.py" "\$(integ_worker_of bob)" \
    "\$(integ_worker_of alice)" "\$@"
SH
chmod +x "$T/forgebob"
check "bob's worker answers under alice's session: not passed on, bob's relay closed, alice goes on" \
    client 21 forge 21 "$T/forgebob"
# ... or under its own, for the id of alice's request (a client finds the
# request by its id alone): not an id the owner sent it
# (worker/relay_mids.c)
check "bob's worker answers alice's request under its own session: not passed on, bob's relay closed, alice goes on" \
    client 21 forgeown 21o "$T/forgebob"
grep -q "sent an answer to a request it was not sent" "$LOG" &&
	ok "the log says bob's worker answered a request it was not sent" ||
	fail "no log line for the answer to a request bob's worker was not sent"
check "the server is still up" integ_ping

# bob's requests in flight when his worker dies: answered by the owner
# (worker/relay_inflight.c).  Signed (2.x): every request it forwarded;
# sealed (3.0, impacket seals it): a request waiting in his worker, whose
# interim answer's control record told the owner its ids in clear.
cat >"$T/stopbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
for p in \$(integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "worker" and p.get("user") == "bob":
        print(p["pid"])'); do
	[ "\$1" = stop ] && kill -STOP "\$p" || kill -9 "\$p"
done
sleep 0.5
SH
chmod +x "$T/stopbob"
for d in 202 21; do
	check "dialect $d: bob's requests in flight when his worker dies get USER_SESSION_DELETED, alice goes on" \
	    client "$d" inflight "$d" "$T/stopbob"
done
check "dialect 30 (sealed): bob's CHANGE_NOTIFY waiting in his worker when it dies gets USER_SESSION_DELETED, alice goes on" \
    client 30 inflightsealed 30 "$T/stopbob"
check "the server is still up" integ_ping
# a sealed request bob's worker had read and holds (no interim answer):
# it waits on the descriptor writer, stopped; the owner answers it from
# the ids bob's worker put in its ring (worker/relay_ring.c)
cat >"$T/sdwbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
case "\$1" in
stop)	integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "sdw":
        print(p["pid"])' >"$T/sdwpids"
	[ -s "$T/sdwpids" ] || exit 1
	for p in \$(cat "$T/sdwpids"); do kill -STOP "\$p"; done ;;
kill)	pid=\$(integ_worker_of bob)
	[ -n "\$pid" ] && kill -9 "\$pid" ;;
cont)	for p in \$(cat "$T/sdwpids"); do kill -CONT "\$p"; done ;;
esac
exit 0
SH
chmod +x "$T/sdwbob"
check "dialect 30 (sealed): bob's SET_INFO held in his worker when it dies gets USER_SESSION_DELETED, alice goes on" \
    client 30 inflightsync 30 "$T/sdwbob"
for i in 1 2 3 4 5 6; do	# the line reaches the log through the master
	grep -q "sealed request its worker had read get USER_SESSION_DELETED" \
	    "$LOG" && break
	sleep 0.5
done
grep -q "sealed request its worker had read get USER_SESSION_DELETED" "$LOG" &&
	ok "the log says the owner answered it from the ring" ||
	fail "no log line for the ring's request"
check "the server is still up" integ_ping
# sealed answers bob's worker built but had not all written into the relay
# when it died (the owner stopped, not reading): their slots in the ring
# are cleared only once the answer is all in the socket, so the owner
# answers them; the READs read behind the first were decrypted ahead and
# noted (worker/relay_ahead.c), so they are answered too; any it never
# read (none, usually) are counted in the log
cat >"$T/sentbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
# bytes waiting in the receive queues of the unix sockets process \$1 holds
unixq() { ss -Hxp | awk -v p="pid=\$1," 'index(\$0, p) { n += \$3 } END { print n + 0 }'; }
case "\$1" in
stopbob)
	integ_status_json | "$PYTHON" -c '
import json, sys
for s in json.load(sys.stdin).get("sessions", []):
    if s["session_id"] == sys.argv[1]:
        print(s["worker_pid"], s["socket_pid"])' "\$2" >"$T/sentpids"
	read -r bob alice <"$T/sentpids"
	[ -n "\$alice" ] && [ "\$bob" != "\$alice" ] || exit 1
	kill -STOP "\$bob" ;;
stopalice)	# once bob's stopped worker has the READs queued
	read -r bob alice <"$T/sentpids"
	for i in \$(seq 1 100); do [ "\$(unixq "\$bob")" -gt 0 ] && break; sleep 0.1; done
	kill -STOP "\$alice" ;;
contbob)	# and wait until his answer fills the owner's side of the relay
	read -r bob alice <"$T/sentpids"; kill -CONT "\$bob" 2>/dev/null
	for i in \$(seq 1 100); do [ "\$(unixq "\$alice")" -gt 65536 ] && break; sleep 0.1; done ;;
resumebob) read -r bob alice <"$T/sentpids"; kill -CONT "\$bob" ;;
killbob) read -r bob alice <"$T/sentpids"; kill -9 "\$bob" ;;
contalice) read -r bob alice <"$T/sentpids"; kill -CONT "\$alice" ;;
esac
SH
chmod +x "$T/sentbob"
check "dialect 30 (sealed): bob's four 1 MiB READs, the first answered but not all written into the relay when his worker dies, all get an answer, alice goes on" \
    client 30 inflightsent 30 "$T/sentbob"
lost=$(sed -n 's/^# unanswered \([0-9]*\)$/\1/p' "$T/client.out")
for i in 1 2 3 4 5 6; do	# the line reaches the log through the master
	grep -q "sealed requests\? ([0-9]* bytes) its worker never decrypted" \
	    "$LOG" && break
	sleep 0.5
done
if [ "${lost:-0}" -gt 0 ]; then
	grep -q ": $lost sealed requests\? ([0-9]* bytes) its worker never decrypted" \
	    "$LOG" && ok "the log counts the $lost READs bob's worker never decrypted" ||
		fail "no log line counting the $lost READs never decrypted"
else
	ok "every READ was answered (none left undecrypted)"
fi
check "the server is still up" integ_ping

# bob's worker stopped by bob (his uid owns it) while his session fills
# the relay: alice's worker waits on it at most RELAY_WAIT_MS (1 s), then
# bob's session on that connection ends (worker/relay.c relay_stalled)
cat >"$T/sigbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
if [ "\$1" = stop ]; then
	integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "worker" and p.get("user") == "bob":
        print(p["pid"])' >"$T/bobpids"
	[ -s "$T/bobpids" ] || exit 1
	for p in \$(cat "$T/bobpids"); do kill -STOP "\$p"; done
	exit 0
fi
for p in \$(cat "$T/bobpids"); do kill -CONT "\$p"; done
sleep 0.5
for p in \$(cat "$T/bobpids"); do
	s=\$(awk '{ print \$3 }' "/proc/\$p/stat" 2>/dev/null)
	[ -n "\$s" ] && [ "\$s" != T ] && [ "\$s" != Z ] || exit 1
done
SH
chmod +x "$T/sigbob"
check "bob's worker stopped with his relay full: alice's connections go on" \
    client 21 stall 21 "$T/sigbob"
grep -q "its worker (uid [0-9]*) took no request" "$LOG" &&
	ok "the log names bob's stalled worker" ||
	fail "no log line for bob's stalled worker"
check "the server is still up" integ_ping

# alice's worker (the socket's owner) killed -9: the connection is gone
# and bob's worker ends his session (no session of his is left)
cat >"$T/killalice" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
pid=\$(integ_worker_of alice)
[ -n "\$pid" ] && kill -9 "\$pid"
sleep 1
"$USMBCTL" -s "$CONF" status --json >"$T/status2.json"
SH
chmod +x "$T/killalice"
"$PYTHON" "$ROOT/t/integ/multi_client.py" "$PORT" 21 hold ka deleted \
    "$T/killalice" >/dev/null 2>&1
check "the owner killed: no session of bob's is left" "$PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert not [x for x in j["sessions"] if x["user"] == "bob"], j["sessions"]
' "$T/status2.json"
check "the server is still up" integ_ping

# many users on one connection
n=${MULTI_USERS:-64}
users=()
for i in $(seq -w 2 "$n"); do
	integ_user "mu$i" "mupw$i" >/dev/null 2>&1 ||
		{ fail "cannot create user mu$i"; finish; }
	users+=("mu$i:mupw$i")
done
check "$n users on one connection" client 21 many m "${users[@]}"
owned=0
for u in "${users[@]}"; do
	name=${u%%:*}
	[ "$(stat -c %U "$SHARE/m_m_$name.txt" 2>/dev/null)" = "$name" ] &&
		owned=$((owned + 1))
done
check "each user's file is that user's on disk" test "$owned" = "${#users[@]}"
# the relayed worker's control records keep the owner's window exact
grep -q "outside the window" "$LOG" &&
	fail "the owner's window refused ids of a relayed session" ||
	ok "every id of the relayed sessions fits the owner's window"
check "the server is still up" integ_ping
integ_stop

# Without signing required, 2.x cannot make bob's requests prove
# themselves: his session is refused, alice's goes on.  On 3.0 it is
# relayed sealed (ENCRYPT_DATA; `relay sealed sessions = yes`, the
# default).
integ_conf
integ_start || exit 1
check "unsigned 2.1: another user's session refused" client 21 refused
grep -q "server signing = mandatory" "$LOG" &&
	ok "the log says which setting allows it" ||
	fail "no log line naming the setting"
check "unsigned 3.0: alice and bob on one connection, bob's session sealed" \
    client 30 two 30s
check "dialect 30s: bob's file is bob's on disk" \
    test "$(stat -c %U "$SHARE/b_30s_4.txt")" = bob
integ_stop

# `relay sealed sessions = no`: a relay only in the clear, where the
# owner checks each answer.  Unsigned 3.0: refused, as 2.x.
integ_conf "relay sealed sessions = no"
integ_start || exit 1
check "unsigned 3.0, relay sealed sessions = no: another user's session refused" \
    client 30 refused
grep -q "sealed on SMB 3 with .relay sealed sessions = yes." "$LOG" &&
	ok "the log names relay sealed sessions" ||
	fail "no log line naming relay sealed sessions"
integ_stop

# ... with signing required: a relay in the clear works, and a sealed
# request on it drops the connection.
integ_conf "server signing = mandatory" "relay sealed sessions = no"
integ_start || exit 1
check "signed 2.1, relay sealed sessions = no: alice and bob on one connection" \
    client 21 two 21c
check "bob's worker sends a sealed answer on a relay kept in the clear: not passed on, bob's relay closed, alice goes on" \
    client 21 forgesealed 21s "$T/forgebob"
grep -q "sent an answer sealed on a relay in the clear" "$LOG" &&
	ok "the log says bob's worker sent a sealed answer on a clear relay" ||
	fail "no log line for the sealed answer on a clear relay"
check "signed 3.0 sealed by the client, relay sealed sessions = no: the connection drops" \
    client 30 sealeddrop
grep -q "a relay carries sealed traffic only with .relay sealed sessions = yes.; disconnecting" "$LOG" &&
	ok "the log says why the connection dropped" ||
	fail "no log line for the dropped connection"
check "the server is still up" integ_ping
finish
