#!/usr/bin/env bash
# Syscalls per CREATE+CLOSE pair on a share where a descriptor was stored
# (HACKING.md, "Security descriptors", Cost), against one where none was:
# a file without a stored descriptor, one with, and a new name (created
# delete-on-close at the top of the share or in a directory, neither
# with a descriptor; in a directory whose stored DACL passes an ACE on,
# and in one whose stored DACL passes nothing on, so the child gets the
# default DACL: each of those stores a descriptor through the writer).
# strace -c -f on alice's worker, N pairs per window (SDCOST_N, default 500), the files older than
# the ctime settle time (worker/smb2_secdesc.c) so the steady state shows.
. "$(dirname "$0")/../integ/lib.sh"
N=${SDCOST_N:-500}
integ_init
mkdir -p "$T/plain"; chmod 1777 "$T/plain"
INTEG_SHARES=$(printf '[plain]\n\tpath = %s\n\tread only = no\n' "$T/plain") integ_conf
integ_users
integ_start || exit 1
coproc DRV { "$PYTHON" "$ROOT/t/bench/sdcost_client.py" "$PORT" "$ALICE_PW" 2>&1; }
read -r line <&"${DRV[0]}"
[ "$line" = ready ] || { echo "driver: $line"; exit 1; }
sleep 3
W=$(integ_worker_of alice)
for win in "plain plain.txt" "share plain.txt" "share stored.txt" \
    "plain new" "share new" "plain d/new" "share d/new" \
    "share inh/new" "share noinh/new"; do
	echo "$win 20" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"	# warm
	strace -f -s 0 -p "$W" -o "$T/strace.out" & sp=$!
	sleep 1
	echo "$win $N" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	kill -INT "$sp"; wait "$sp" 2>/dev/null
	strace_tally "$T/strace.out"
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4 }
	    END { print n }' "$T/strace.out")
	printf '%-22s %6.2f syscalls per CREATE+CLOSE\n' "[${win% *}] ${win#* }" \
	    "$(echo "$calls / $N" | bc -l)"
	# "% time seconds usecs/call calls [errors] syscall"
	awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { e = NF == 6 ? $5 : 0;
	    printf "\t%-16s %5d calls %5d errors\n", $NF, $4, e }' "$T/strace.out"
done
exec {DRV[1]}>&-
