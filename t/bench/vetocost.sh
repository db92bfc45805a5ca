#!/usr/bin/env bash
# What `veto files` costs a listing: one directory of VETOCOST_N entries
# (default 10,000) served by two shares on the same path, [plain] without
# name keys and [veto5] with five patterns that match none of the names
# (every entry is tested against all five), listed alternately
# VETOCOST_ROUNDS times each (default 9) by t/bench/vetocost_client.py,
# which prints the worker's CPU time per listing (schedstat) and the
# client's wall time, medians.  Prints figures, never fails on a slow
# machine.  t/bench/README.md "Name rules".
. "$(dirname "$0")/../integ/lib.sh"
N=${VETOCOST_N:-10000}
ROUNDS=${VETOCOST_ROUNDS:-9}
integ_init
mkdir -p "$T/big/d"
chmod 0777 "$T/big"
"$PYTHON" - "$T/big/d" "$N" <<'PY'
import os, sys
for i in range(int(sys.argv[2])):
    open(os.path.join(sys.argv[1], "file%05d.dat" % i), "w").close()
PY
INTEG_SHARES=$(printf '[plain]\n\tpath = %s\n\n[veto5]\n\tpath = %s\n\tveto files = /.DS_Store/._*/Thumbs.db/*.tmp/~$*/\n' "$T/big" "$T/big")
integ_conf
integ_users
integ_start || exit 1
# a logon first, so that alice's worker exists
smbclient -p "$PORT" -U "alice%$ALICE_PW" //127.0.0.1/plain -c 'ls' >/dev/null 2>&1
W=$(integ_worker_of alice)
[ -n "$W" ] || { echo "no worker for alice"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" "$ROOT/t/bench/vetocost_client.py" "$PORT" "$W" "$ROUNDS"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Syscalls of alice's worker per CREATE+CLOSE (FILE_READ_ATTRIBUTES) of an
# existing file, on each share: at the top, and in d (a directory: the
# same names, one component more).  strace -c, VETOCOST_OPENS pairs.
OPENS=${VETOCOST_OPENS:-300}
command -v strace >/dev/null || { echo "no strace: no syscall counts"; exit 0; }
touch "$T/big/top.dat"
coproc DRV { "$PYTHON" "$ROOT/t/bench/vetocost_client.py" "$PORT" opens 2>&1; }
read -r line <&"${DRV[0]}"
[ "$line" = ready ] || { echo "driver: $line"; exit 1; }
for win in "plain top.dat" "veto5 top.dat" "plain d/file00042.dat" \
    "veto5 d/file00042.dat"; do
	echo "${win/\//\\} 20" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	strace -f -s 0 -p "$W" -o "$T/strace.out" & sp=$!
	sleep 1
	echo "${win/\//\\} $OPENS" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	kill -INT "$sp"; wait "$sp" 2>/dev/null
	strace_tally "$T/strace.out"
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4 }
	    END { print n }' "$T/strace.out")
	printf '[%s] %-16s %6.2f syscalls per CREATE+CLOSE:' "${win% *}" \
	    "${win#* }" "$(echo "$calls / $OPENS" | bc -l)"
	awk -v n="$OPENS" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
	    printf " %s %.2f", $NF, $4 / n }' "$T/strace.out"
	echo
done
exec {DRV[1]}>&-
