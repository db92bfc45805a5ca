#!/bin/bash
# No request stays unanswered (issue 21): a request parked in the server
# (STATUS_PENDING: a CHANGE_NOTIFY with nothing to report, a blocking LOCK,
# a CREATE waiting for a lease break that is never acknowledged) gets its
# final answer at once when its handle is closed, its tree disconnected,
# its session logged off, or the client cancels it -- not at a timeout,
# and never not at all; past the bound of parked requests a connection may
# hold, a request is refused at once (t/integ/parked_client.py).
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

P=$ROOT/t/integ/parked_client.py
# KIND END and the answer Windows gives (MS-SMB2 3.3.5.16, 3.3.5.19,
# 3.3.4.16: a closed handle's notify gets NOTIFY_CLEANUP, a cancelled
# request STATUS_CANCELLED).
for c in "notify close 0x0000010b" "notify tdis 0x0000010b" \
    "notify logoff 0x0000010b" "notify cancel 0xc0000120" \
    "lock close any" "lock tdis any" "lock logoff any" \
    "lock cancel 0xc0000120" \
    "create tdis any" "create logoff any" "create cancel 0xc0000120"; do
	set -- $c
	out=$(timeout 30 "$PYTHON" "$P" "$PORT" "$1" "$2" 2>&1 | tail -1)
	case $3 in
	any) want="status 0x[0-9a-f]{8} after [0-4]\." ;;
	*) want="status $3 after [0-4]\." ;;
	esac
	if echo "$out" | grep -q -E "^$1 $2: $want" &&
	    ! echo "$out" | grep -q 'status 0x00000103'; then
		ok "parked $1 answered at $2 (${out#*: })"
	else
		fail "parked $1 answered at $2: $out"
	fi
done
# More than a connection may park (CONN_MAX_PENDING, 511: Samba's max
# async credits less one, as smbtorture 4.22's credits tests count): the
# rest are refused at once with STATUS_INSUFFICIENT_RESOURCES (MS-SMB2
# 3.3.4.2), and every parked one still ends at its handle's close.  Past
# the base slots (64 a connection) parked requests take pages of small
# slots, 7 a connection and CONN_PARK_WORKER_PAGES (64) a worker: the
# tenth connection of one worker parks 128 (its base and the worker's
# last page).  The worker's resident memory is printed before and with
# them parked.
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
bound_run() {	# bound|handles NCONN EXPECT-LINE...
	local kind=$1 n=$2 line w r0 r1 k=0 got=() want
	shift 2
	coproc PK { timeout 300 "$PYTHON" "$P" "$PORT" "$kind" "$n" 2>&1; }
	read -r -t 120 line <&"${PK[0]}"
	w=$(integ_worker_of alice)
	[ "$line" = ready ] && [ -n "$w" ] || {
		fail "$kind $n: $line (worker '$w')"; kill "$PK_PID"; return; }
	r0=$(rss "$w")
	echo go >&"${PK[1]}"
	read -r -t 240 line <&"${PK[0]}"
	[ "$line" = parked ] || { fail "$kind $n: $line"; kill "$PK_PID"; return; }
	r1=$(rss "$w")
	echo "     worker $w VmRSS ${r0} kB logged on, ${r1} kB with them parked" \
	    "($(( (r1 - r0) / n )) kB a connection)"
	echo go >&"${PK[1]}"
	while read -r -t 120 line <&"${PK[0]}" && [ "$line" != done ]; do
		got+=("$line")
	done
	wait "$PK_PID" 2>/dev/null
	for want in "$@"; do
		if [ "${got[$k]:-}" = "$want" ]; then
			ok "$kind $n, connection $((k + 1)): $want"
		else
			fail "$kind $n, connection $((k + 1)): ${got[$k]:-nothing}, want $want"
		fi
		k=$((k + 1))
	done
}
FULL="511 pending, statuses [('0xc000009a', 2)] past it, cleanup [('0x0000010b', 511)]"
bound_run bound 1 "$FULL"
exp=()
for i in 1 2 3 4 5 6 7 8 9; do exp+=("$FULL"); done
exp+=("128 pending, statuses [('0xc000009a', 385)] past it, cleanup [('0x0000010b', 128)]")
bound_run bound 10 "${exp[@]}"
# As smbtorture 4.22's credits.*notify_max_async_credits: 514 handles of
# one directory, a CHANGE_NOTIFY on each, so 511 watches of the worker's
# 1024 parked a connection; the second connection finds its 511 only if
# the first one's refused notifies left no watch behind.
H="511 pending, statuses [('0xc000009a', 3)] past it, cleanup [('0x0000010b', 511)]"
bound_run handles 2 "$H" "$H"
grep -E 'parked requests: page' "$LOG" | tail -1 | sed 's/^/     /'
finish
