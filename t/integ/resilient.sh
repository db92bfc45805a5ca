#!/usr/bin/env bash
# Resilient handles (FSCTL_LMR_REQUEST_RESILIENCY, MS-SMB2 3.3.5.15.9) on
# SMB 2.1 and 3.0, with t/integ/resilient_client.py (impacket):
# the request's refusals (short input, a timeout past 300 s, a directory)
# and 2.0.2's; a plain open (no oplock, no durable context) with a lock
# made resilient, its TCP connection dropped: the lock holds, bob's DHnC is
# refused, alice's gets the open back with its data and lock, and a lock
# replayed with its LockSequence is taken for done; after its timeout it is
# gone with its lock; a LOGOFF closes it; a conflicting open gets a sharing
# violation and leaves it; without resiliency nothing is
# kept; kill -9 of the holder's worker keeps it for a new worker, with its
# LockSequenceArray (a lock and an unlock replayed after the reconnect are
# taken for done), and `usmbctl status` (text and --json) shows it as
# resilient with its timeout before and after the kill; a guest
# session is refused; a worker grants 1024 in 300 s, then refuses.  smbtorture's smb2.lock.replay_broken_windows (torture.list, at
# SMB 2.1) checks the LockSequence rules.  Samba 4.17 answers the FSCTL
# STATUS_INVALID_DEVICE_REQUEST (no resilient handles).
. "$(dirname "$0")/lib.sh"

integ_init
# [pub]: a guest's share (an unknown user name logs in as the guest)
mkdir -p "$T/pub" && echo hello >"$T/pub/pub.txt" && chmod -R a+rX "$T/pub"
INTEG_SHARES="[pub]
	path = $T/pub
	guest ok = yes
	read only = yes" integ_conf "map to guest = bad user"
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || { fail "usmbd starts"; finish; }

# 202: only the refusal (MS-SMB2 3.3.5.15.9 lets 2.0.2 be refused)
for d in 202 21 30; do
	: >"$SHARE/res$d.txt"
	chmod 0666 "$SHARE/res$d.txt"
	client_checks "resilient_client.py $d" "$PYTHON" \
	    "$ROOT/t/integ/resilient_client.py" "$PORT" "$d"
done

# a guest may not: every guest session is the same account
client_checks "resilient_client.py guest" "$PYTHON" \
    "$ROOT/t/integ/resilient_client.py" "$PORT" 21 guest

# kill -9 of the worker that holds a resilient open (no oplock, a lock):
# the purge keeps it as it keeps a durable one; a new worker reclaims it.
: >"$SHARE/resk.txt"
chmod 0666 "$SHARE/resk.txt"
"$PYTHON" "$ROOT/t/integ/resilient_client.py" "$PORT" 21 hold >"$T/hold.out" 2>&1 &
hp=$!
integ_until 5 grep -q holding "$T/hold.out"
grep -q "resiliency OK" "$T/hold.out" && ok "resiliency granted (kill -9 case)" ||
    fail "resiliency (kill -9 case): $(cat "$T/hold.out")"
fid=$(sed -n 's/^fid //p' "$T/hold.out")
# usmbctl status shows it as resilient with its timeout, not as durable:
# "resilient STATE DURABLE TIMEOUT_MS" of resk.txt's open, from --json
status_resk() {
	integ_status_json | "$PYTHON" -c '
import json, sys
o = [x for x in json.load(sys.stdin).get("opens", [])
     if x.get("path", "").endswith("resk.txt")]
print("resilient %s %s %s %s" % (o[0]["resilient"], o[0]["state"],
      o[0]["durable"], o[0]["timeout_ms"]) if o else "none")'
}
resk_disconnected() {
	[ "$(status_resk)" = "resilient True disconnected False 60000" ]
}
st=$(status_resk)
[ "$st" = "resilient True open False 60000" ] &&
    ok "status --json: the open is resilient (60000 ms), not durable" ||
    fail "status --json of the resilient open: $st"
"$USMBCTL" -s "$CONF" status >"$T/status.txt" 2>&1
grep -q 'resk\.txt (resilient, 60 s)$' "$T/status.txt" &&
    ok "status: the open shows as \"(resilient, 60 s)\"" ||
    fail "status text: $(grep resk "$T/status.txt")"
wpid=$(integ_worker_of alice)
if [ -n "$wpid" ] && [ -n "$fid" ]; then
	kill -9 "$wpid"
	integ_wait_exit "$wpid" 5
	kill "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
	# purged by the state process: kept, disconnected, still resilient
	integ_until 5 resk_disconnected
	st=$(status_resk)
	[ "$st" = "resilient True disconnected False 60000" ] &&
	    ok "status --json after kill -9: resilient, disconnected" ||
	    fail "status --json after kill -9: $st"
	"$USMBCTL" -s "$CONF" status >"$T/status2.txt" 2>&1
	grep -q 'resk\.txt (resilient, 60 s, disconnected)$' "$T/status2.txt" &&
	    ok "status after kill -9: \"(resilient, 60 s, disconnected)\"" ||
	    fail "status text after kill -9: $(grep resk "$T/status2.txt")"
	# the master has the state process purge it (marked disconnected);
	# the client polls its reconnect
	client_checks "resilient_client.py reclaim" "$PYTHON" \
	    "$ROOT/t/integ/resilient_client.py" "$PORT" 21 reclaim "$fid"
else
	fail "kill -9 case: no worker ($wpid) or file id ($fid)"
	kill "$hp" 2>/dev/null
	wait "$hp" 2>/dev/null
fi

# the grant bound, in the worker started after the kill (no grant yet):
# last, since it leaves that worker refusing for 300 s
client_checks "resilient_client.py flood" "$PYTHON" \
    "$ROOT/t/integ/resilient_client.py" "$PORT" 21 flood
grep -q "alice: 1024 resilient handles granted in 300 s: refused" "$LOG" &&
    ok "the refusal is logged with the user's name" ||
    fail "the grant refusal is not logged"

finish
