#!/bin/bash
# Durable handles across a worker's death (issue 5): DHnQ and DH2Q (lease
# and byte-range lock) reclaimed after kill -9 of the worker, expiry by the
# master, and a full state map (a second server with a 1 MiB map).  Client:
# t/integ/state_client.py.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/state_client.py
run() { "$PYTHON" "$C" "$PORT" "$@" 2>&1; }

# Both users may open these (the kernel judges access by mode bits).
for f in durable dur2 dur2x; do
	: >"$SHARE/$f.txt"
	chmod 0666 "$SHARE/$f.txt"
done

# Durable handle (DHnQ, batch oplock) with a byte-range lock survives
# kill -9 of its worker: a new connection reclaims it (DHnC) by file id,
# the master having marked it disconnected; data and lock come back.
"$PYTHON" "$C" "$PORT" durable-hold >"$T/dh.out" 2>&1 &
dp=$!
for i in $(seq 1 50); do grep -q holding "$T/dh.out" && break; sleep 0.1; done
grep -q "dh granted" "$T/dh.out" && ok "durable handle granted with a batch oplock" ||
    fail "durable handle not granted: $(cat "$T/dh.out")"
fid=$(sed -n 's/^fid //p' "$T/dh.out")
wpid=$(integ_worker_of alice)
if [ -n "$wpid" ] && [ -n "$fid" ]; then
    kill -9 "$wpid"
    integ_wait_exit "$wpid" 5
    kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
    out=""
    for i in $(seq 1 20); do
        out=$(run durable-reconnect "$fid")
        echo "$out" | grep -q "reconnect OK" && break
        sleep 0.1
    done
    echo "$out" | grep -q "reconnect OK" &&
        ok "durable reconnect after kill -9 of the worker" ||
        fail "durable reconnect after kill -9: $out"
    echo "$out" | grep -q "data durable data" &&
        ok "the reclaimed handle reads the file" || fail "reclaimed read: $out"
    echo "$out" | grep -q "unlock OK" &&
        ok "its byte-range lock came back with it" || fail "reclaimed lock: $out"
else
    fail "durable: no worker pid ($wpid) or file id ($fid): $(cat "$T/dh.out")"
    kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
fi

# 5. Durable v2 (DH2Q) with an RH lease v2 and a lock: kill -9 its worker;
# while disconnected status shows it and the lock holds; a new connection
# of the same client reclaims it (DH2C) with its lease and lock.
"$PYTHON" "$C" "$PORT" dh2-hold dur2.txt 60000 >"$T/d2.out" 2>&1 &
dp=$!
for i in $(seq 1 50); do grep -q holding "$T/d2.out" && break; sleep 0.1; done
grep -q "lease 3" "$T/d2.out" && grep -q "dh2 granted" "$T/d2.out" &&
    ok "DH2Q granted with lease RH" || fail "dh2 hold: $(cat "$T/d2.out")"
grep -q "parent ok" "$T/d2.out" &&
    ok "lease v2 answer carries the parent lease key (flag set)" ||
    fail "parent lease key: $(cat "$T/d2.out")"
ids=$(sed -n 's/^ids //p' "$T/d2.out")
wpid=$(integ_worker_of alice)
if [ -n "$wpid" ] && [ -n "$ids" ]; then
	kill -9 "$wpid"
	integ_wait_exit "$wpid" 5
	kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
	integ_status_json >"$T/status3.json"
	"$PYTHON" -c '
import json, sys
o = [x for x in json.load(open(sys.argv[1]))["opens"] if x["path"].endswith("dur2.txt")]
print(o[0]["state"], o[0]["lease"], o[0]["durable"]) if o else print("none")' \
	    "$T/status3.json" >"$T/status3.chk" 2>&1
	grep -qx "disconnected RH True" "$T/status3.chk" &&
	    ok "the master marked it disconnected, lease RH kept (status --json)" ||
	    fail "disconnected durable in status: $(cat "$T/status3.chk")"
	out=$(run bob-read dur2.txt)
	echo "$out" | grep -q "bob-read STATUS_FILE_LOCK_CONFLICT" &&
	    ok "while disconnected its lock still holds (bob's READ conflicts)" ||
	    fail "disconnected lock: $out"
	out=$(run dh2-reconnect dur2.txt $ids)
	echo "$out" | grep -q "reconnect OK" &&
	    ok "DH2C on a new connection after kill -9 of the worker" ||
	    fail "dh2 reconnect: $out"
	echo "$out" | grep -q "lease 3 key-ok" &&
	    ok "the lease came back (RH, same key)" || fail "dh2 lease: $out"
	echo "$out" | grep -q "data durable v2 data" &&
	    ok "the reclaimed handle reads the file" || fail "dh2 read: $out"
	echo "$out" | grep -q "bob-lock STATUS_LOCK_NOT_GRANTED" &&
	    echo "$out" | grep -q "bob-read STATUS_FILE_LOCK_CONFLICT" &&
	    echo "$out" | grep -q "unlock OK" &&
	    ok "the lock came back: bob's lock and read conflict, alice unlocks" ||
	    fail "dh2 lock: $out"
else
	fail "dh2: no worker pid ($wpid) or ids ($ids)"
	kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
fi

# 5. Expiry: a durable open with a 2 s timeout whose worker died is
# removed with its lock by the master; the reconnect then fails.
"$PYTHON" "$C" "$PORT" dh2-hold dur2x.txt 2000 >"$T/d2x.out" 2>&1 &
dp=$!
for i in $(seq 1 50); do grep -q holding "$T/d2x.out" && break; sleep 0.1; done
ids=$(sed -n 's/^ids //p' "$T/d2x.out")
wpid=$(integ_worker_of alice)
if [ -n "$wpid" ] && [ -n "$ids" ]; then
	kill -9 "$wpid"
	integ_wait_exit "$wpid" 5
	kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
	t0=$(date +%s%N)
	first=$(run bob-lock dur2x.txt)
	res=
	for i in $(seq 1 40); do
		sleep 0.5
		res=$(run bob-lock dur2x.txt)
		echo "$res" | grep -q "bob-lock OK" && break
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "$first" | grep -q "bob-lock STATUS_LOCK_NOT_GRANTED" &&
	    echo "$res" | grep -q "bob-lock OK" && [ "$ms" -le 12000 ] &&
	    ok "expired durable open removed with its lock (${ms} ms after the kill)" ||
	    fail "durable expiry: first=$first last=$res after ${ms} ms"
	grep -q "durable open(s) expired" "$LOG" &&
	    ok "the master logs the expiry" || fail "no expiry log line"
	out=$(run dh2-reconnect dur2x.txt $ids)
	echo "$out" | grep -q "reconnect STATUS_OBJECT_NAME_NOT_FOUND" &&
	    ok "a reconnect after the expiry: OBJECT_NAME_NOT_FOUND" ||
	    fail "reconnect after expiry: $out"
else
	fail "dh2 expiry: no worker pid ($wpid) or ids ($ids)"
	kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
fi

# Another user's reconnect of alice's disconnected durable handle, with
# her file id: ACCESS_DENIED (smbtorture smb2.durable-open.reopen6), the
# same answer whether or not bob's own rights would open the file, so it
# tells him nothing of the file; and the handle stays hers to reclaim.
: >"$SHARE/alice-only.txt"
chown alice "$SHARE/alice-only.txt"
chmod 0600 "$SHARE/alice-only.txt"
for f in durable.txt alice-only.txt; do
	"$PYTHON" "$C" "$PORT" durable-hold "$f" >"$T/dho.out" 2>&1 &
	dp=$!
	for i in $(seq 1 50); do grep -q holding "$T/dho.out" && break; sleep 0.1; done
	fid=$(sed -n 's/^fid //p' "$T/dho.out")
	kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
	if [ -z "$fid" ]; then
		fail "durable hold of $f: $(cat "$T/dho.out")"
		continue
	fi
	out=$(run durable-reconnect "$fid" bob "$f")
	echo "$out" | grep -q "reconnect STATUS_ACCESS_DENIED" &&
	    ok "bob's DHnC of alice's durable open of $f: ACCESS_DENIED" ||
	    fail "bob's DHnC of alice's $f: $out"
	out=$(run durable-reconnect "$fid" alice "$f")
	echo "$out" | grep -q "reconnect OK" &&
	    ok "... and alice reclaims it afterwards" ||
	    fail "alice's DHnC of $f after bob's: $out"
done

# A reload between the disconnect and the reconnect: the share's rules
# now decide, not those of the open.  Its name vetoed:
# OBJECT_NAME_NOT_FOUND; alice put in `read list`: ACCESS_DENIED for her
# write handle; the rules as before: the handle back (each refusal leaves
# it disconnected, a reconnect that succeeds closes it).
: >"$SHARE/relist.txt"
chmod 0666 "$SHARE/relist.txt"
cp "$CONF" "$T/conf.orig"
reload_with() {
	cp "$T/conf.orig" "$CONF"
	[ -n "$1" ] && printf '\t%s\n' "$1" >>"$CONF"
	"$USMBCTL" -s "$CONF" reload >/dev/null 2>&1
	sleep 0.5
}
"$PYTHON" "$C" "$PORT" durable-hold relist.txt >"$T/dhr.out" 2>&1 &
dp=$!
for i in $(seq 1 50); do grep -q holding "$T/dhr.out" && break; sleep 0.1; done
fid=$(sed -n 's/^fid //p' "$T/dhr.out")
kill "$dp" 2>/dev/null; wait "$dp" 2>/dev/null
if [ -n "$fid" ]; then
	# the name a DHnC carries is not the handle's (MS-SMB2 3.3.5.9.7
	# ignores it): the stored name is judged
	reload_with "veto files = /relist.txt/"
	out=$(run durable-reconnect "$fid" alice other.txt)
	echo "$out" | grep -q "reconnect STATUS_OBJECT_NAME_NOT_FOUND" &&
	    ok "after a reload vetoing its name: OBJECT_NAME_NOT_FOUND, whatever name the DHnC carries" ||
	    fail "DHnC of a vetoed name: $out"
	reload_with "read list = alice"
	out=$(run durable-reconnect "$fid" alice relist.txt)
	echo "$out" | grep -q "reconnect STATUS_ACCESS_DENIED" &&
	    ok "after a reload putting alice in read list: her write handle's DHnC is ACCESS_DENIED" ||
	    fail "DHnC under read list: $out"
	reload_with ""
	out=$(run durable-reconnect "$fid" alice relist.txt)
	echo "$out" | grep -q "reconnect OK" &&
	    ok "the rules as before: she reclaims it" ||
	    fail "DHnC after the rules were restored: $out"
else
	fail "durable hold of relist.txt: $(cat "$T/dhr.out")"
fi

# SMB2_CREATE_APP_INSTANCE_ID (MS-SMB2 3.3.5.9.13): alice's open from
# another client with the same AppInstanceId closes hers (FILE_CLOSED on
# its next request) and only those: not from the same client GUID, not
# bob's (another user's), not one on SMB 2.1.
printf x >"$SHARE/appinst.txt"
chmod 0666 "$SHARE/appinst.txt"
out=$(run app-instance)
echo "$out" | grep -qx "same client OK" &&
    ok "app instance: another open from the same client leaves the first" ||
    fail "app instance, same client: $out"
echo "$out" | grep -qx "other user OK OK" &&
    ok "app instance: bob's open with the id leaves alice's" ||
    fail "app instance, another user: $out"
echo "$out" | grep -qx "smb 2.1 OK OK" &&
    ok "app instance: an SMB 2.1 open with the id leaves them" ||
    fail "app instance, SMB 2.1: $out"
echo "$out" | grep -qx "other client STATUS_FILE_CLOSED STATUS_FILE_CLOSED OK OK OK" &&
    ok "app instance: from another client, alice's SMB 3 opens with the id closed, no one else's" ||
    fail "app instance, another client: $out"

# 1. A full map: a server with `state map size = 1M`; durable opens with
# long paths fill it.  The client gets INSUFF_SERVER_RESOURCES, the log
# says so, closing frees room, and LMDB reads the env back intact.  One
# env (`state partitions = 1`): each env maps `state map size`, and 1,000
# opens spread over 8 would fill none (a full data env beside others:
# t/unit/check_shm_parts.c test_map_grows_per_env).
integ_stop
integ_conf "state map size = 1M" "state partitions = 1"
: >"$LOG"
if integ_start; then
	mkdir -p "$SHARE/fill/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))"
	chmod -R 0777 "$SHARE/fill"
	out=$(run fill)
	n=$(echo "$out" | sed -n 's/^opened \([0-9]*\) then.*/\1/p')
	echo "$out" | grep -q "then STATUS_INSUFF_SERVER_RESOURCES" &&
	    ok "map full after $n durable opens: INSUFF_SERVER_RESOURCES" ||
	    fail "map full status: $out"
	grep -q "the LMDB map is full" "$LOG" &&
	    ok "the log says the map is full" || fail "no map-full log line"
	echo "$out" | grep -q "after-open OK" &&
	    echo "$out" | grep -q "after-lock OK" &&
	    ok "after the closes a new open and lock are recorded" ||
	    fail "after full: $out"
	check "mdb_stat reads every database of the env" \
	    mdb_stat -n -a "$T/lock/state.mdb"
	check "mdb_dump walks every record" \
	    sh -c 'mdb_dump -n -a "$0" >/dev/null' "$T/lock/state.mdb"
	n=$("$USMBCTL" -s "$CONF" status --json | "$PYTHON" -c '
import json, sys; print(len(json.load(sys.stdin)["opens"]))')
	[ "$n" = 0 ] && ok "no open left recorded after the closes" ||
	    fail "opens left: $n"
else
	fail "server with a 1 MiB map did not start"
fi

finish
