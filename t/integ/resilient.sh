#!/usr/bin/env bash
# Resilient handles (FSCTL_LMR_REQUEST_RESILIENCY, MS-SMB2 3.3.5.15.9) on
# SMB 2.1 and 3.0, with t/integ/resilient_client.py (impacket):
# the request's refusals (short input, a timeout past 300 s, a directory)
# and 2.0.2's; a plain open (no oplock, no durable context) with a lock
# made resilient, its TCP connection dropped: the lock holds, bob's DHnC is
# refused, alice's gets the open back with its data and lock, and a lock
# replayed with its LockSequence is taken for done; after its timeout it is
# gone with its lock; a LOGOFF closes it; without resiliency nothing is
# kept.  smbtorture's smb2.lock.replay_broken_windows (torture.list, at
# SMB 2.1) checks the LockSequence rules.  Samba 4.17 answers the FSCTL
# STATUS_INVALID_DEVICE_REQUEST (no resilient handles).
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || { fail "usmbd starts"; finish; }

# 202: only the refusal (MS-SMB2 3.3.5.15.9 lets 2.0.2 be refused)
for d in 202 21 30; do
	: >"$SHARE/res$d.txt"
	chmod 0666 "$SHARE/res$d.txt"
	client_checks "resilient_client.py $d" "$PYTHON" \
	    "$ROOT/t/integ/resilient_client.py" "$PORT" "$d"
done

finish
