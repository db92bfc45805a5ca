#!/bin/bash
# CHANGE_NOTIFY across workers (issue 5): alice's request parks in her
# worker, what bob's worker does completes it -- through inotify, or a
# NOTIFY worker message where inotify cannot tell (t/integ/state_notify.py).
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

N=$ROOT/t/integ/state_notify.py

# CHANGE_NOTIFY across users: alice's worker watches a directory (its
# inotify), bob's worker creates a file in it; alice's parked request
# completes with FILE_ACTION_ADDED for the name.
mkdir -p "$SHARE/watched" && chmod 1777 "$SHARE/watched"
"$PYTHON" "$N" "$PORT" watch watched 0x3 >"$T/nw.out" 2>&1 &
np=$!
for i in $(seq 1 50); do grep -q waiting "$T/nw.out" && break; sleep 0.1; done
sleep 0.3
"$PYTHON" "$N" "$PORT" bob-create "from-bob.txt" >"$T/bc.out" 2>&1
for i in $(seq 1 50); do grep -q changes "$T/nw.out" && break; sleep 0.1; done
kill "$np" 2>/dev/null; wait "$np" 2>/dev/null
grep -q "status 0x0 changes 1:from-bob.txt" "$T/nw.out" &&
    ok "bob's create completes alice's CHANGE_NOTIFY (another worker)" ||
    fail "notify across workers: $(cat "$T/nw.out" "$T/bc.out")"

# A watched directory deleted by another user's worker: bob's close of his
# delete-on-close handle leaves it delete pending behind alice's handle,
# and alice's parked CHANGE_NOTIFY (in her worker) completes with
# STATUS_DELETE_PENDING through a NOTIFY worker message.
mkdir -p "$SHARE/rmwatched" && chown bob "$SHARE/rmwatched" &&
    chmod 0777 "$SHARE/rmwatched"
"$PYTHON" "$N" "$PORT" watch-status rmwatched >"$T/rw.out" 2>&1 &
rwp=$!
for i in $(seq 1 50); do grep -q waiting "$T/rw.out" && break; sleep 0.1; done
sleep 0.3
"$PYTHON" "$N" "$PORT" bob-rmdir rmwatched >"$T/rd.out" 2>&1
for i in $(seq 1 50); do grep -q status "$T/rw.out" && break; sleep 0.1; done
kill "$rwp" 2>/dev/null; wait "$rwp" 2>/dev/null
grep -q "status 0xc0000056" "$T/rw.out" &&
    ok "bob deletes alice's watched directory: her CHANGE_NOTIFY gets DELETE_PENDING" ||
    fail "notify of a deleted directory across workers: $(cat "$T/rw.out" "$T/rd.out")"

# A rename by another user's worker inside a watched directory: alice's
# CHANGE_NOTIFY gets the pair RENAMED_OLD_NAME (4) + RENAMED_NEW_NAME (5).
"$PYTHON" "$N" "$PORT" watch watched 0x3 >"$T/nr.out" 2>&1 &
nrp=$!
for i in $(seq 1 50); do grep -q waiting "$T/nr.out" && break; sleep 0.1; done
sleep 0.3
"$PYTHON" "$N" "$PORT" bob-rename 'watched\from-bob.txt' \
    'watched\renamed-by-bob.txt' >"$T/nrb.out" 2>&1
for i in $(seq 1 50); do grep -q changes "$T/nr.out" && break; sleep 0.1; done
kill "$nrp" 2>/dev/null; wait "$nrp" 2>/dev/null
grep -q "status 0x0 changes 4:from-bob.txt 5:renamed-by-bob.txt" "$T/nr.out" &&
    ok "bob's rename gives alice's CHANGE_NOTIFY the old/new name pair" ||
    fail "rename notify across workers: $(cat "$T/nr.out" "$T/nrb.out")"

# Changes inotify cannot express (named streams and EAs live in xattrs:
# inotify says IN_ATTRIB of the base file): the worker making them tells
# the watchers, here bob's worker tells alice's through a NOTIFY message
# (the watch is recorded in the shared state).  A STREAM_NAME-only watch
# gets FILE_ACTION_ADDED_STREAM (6) "file:stream"; an EA-only watch
# FILE_ACTION_MODIFIED (3) of the file.
nx() { "$PYTHON" "$N" "$PORT" "$@" 2>&1; }
nx bob-file >"$T/nxf.out"
for t in "0x200 bob-stream 6:xattr.txt:stream STREAM_NAME" \
    "0x80 bob-ea 3:xattr.txt EA"; do
	set -- $t
	nx watch watched "$1" >"$T/nxw.out" &
	nxp=$!
	for i in $(seq 1 50); do grep -q waiting "$T/nxw.out" && break; sleep 0.1; done
	sleep 0.3
	nx "$2" >"$T/nxb.out"
	for i in $(seq 1 50); do grep -q changes "$T/nxw.out" && break; sleep 0.1; done
	kill "$nxp" 2>/dev/null; wait "$nxp" 2>/dev/null
	grep -qx "status 0x0 changes $3" "$T/nxw.out" &&
	    ok "bob's $2 completes alice's $4-only CHANGE_NOTIFY with $3" ||
	    fail "$4 notify across workers: $(cat "$T/nxw.out" "$T/nxb.out" "$T/nxf.out")"
done

finish
