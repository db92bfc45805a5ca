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
# More than a connection may park (CONN_MAX_PENDING, 64): the rest are
# refused at once with STATUS_INSUFFICIENT_RESOURCES (MS-SMB2 3.3.4.2),
# and every parked one still ends at its handle's close.
out=$(timeout 60 "$PYTHON" "$P" "$PORT" bound - 2>&1 | tail -1)
if [ "$out" = "bound: 64 pending, statuses [('0xc000009a', 2)] past it, cleanup [('0x0000010b', 64)]" ]; then
	ok "66 notifies on one connection: 64 parked, 2 INSUFFICIENT_RESOURCES, 64 NOTIFY_CLEANUP at close"
else
	fail "66 notifies on one connection: $out"
fi
finish
