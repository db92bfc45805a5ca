#!/usr/bin/env bash
# What the caching keys cost a CREATE: one file, db.mdb, served by four
# shares on the same path, [plain] without the keys, [nooplock]
# (oplocks = no), [nolevel2] (level2 oplocks = no) and [vetoop] (veto
# oplock files = /*.mdb/*.accdb/*.dbf/, which matches it), opened with a
# batch oplock asked and closed, by t/bench/oplockcost_client.py:
# OPLOCKCOST_ROUNDS windows (default 9) of OPLOCKCOST_N pairs (default
# 200) per share, alternated, worker CPU and client wall time per pair,
# medians; then strace -c of alice's worker around OPLOCKCOST_OPENS pairs
# (default 300) per share.  Prints figures, never fails on a slow
# machine.  t/bench/README.md "Caching keys".
. "$(dirname "$0")/../integ/lib.sh"
ROUNDS=${OPLOCKCOST_ROUNDS:-9}
N=${OPLOCKCOST_N:-200}
OPENS=${OPLOCKCOST_OPENS:-300}
SHARES="plain nooplock nolevel2 vetoop"
integ_init
mkdir -p "$T/db"
chmod 0777 "$T/db"
INTEG_SHARES=$(printf '[plain]\n\tpath = %s\n\tread only = no\n' "$T/db"
	printf '[nooplock]\n\tpath = %s\n\tread only = no\n\toplocks = no\n' "$T/db"
	printf '[nolevel2]\n\tpath = %s\n\tread only = no\n\tlevel2 oplocks = no\n' "$T/db"
	printf '[vetoop]\n\tpath = %s\n\tread only = no\n\tveto oplock files = /*.mdb/*.accdb/*.dbf/\n' "$T/db")
integ_conf
integ_users
integ_start || exit 1
echo data >"$T/db/db.mdb"
chown alice "$T/db/db.mdb"
smbclient -p "$PORT" -U "alice%$ALICE_PW" //127.0.0.1/plain -c 'ls' >/dev/null 2>&1
W=$(integ_worker_of alice)
[ -n "$W" ] || { echo "no worker for alice"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
"$PYTHON" "$ROOT/t/bench/oplockcost_client.py" "$PORT" "$W" "$ROUNDS" "$N" $SHARES
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

command -v strace >/dev/null || { echo "no strace: no syscall counts"; exit 0; }
coproc DRV { "$PYTHON" "$ROOT/t/bench/oplockcost_client.py" "$PORT" opens 2>&1; }
read -r line <&"${DRV[0]}"
[ "$line" = ready ] || { echo "driver: $line"; exit 1; }
for s in $SHARES; do
	echo "$s 20" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	strace -f -s 0 -p "$W" -o "$T/strace.out" & sp=$!
	sleep 1
	echo "$s $OPENS" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	kill -INT "$sp"; wait "$sp" 2>/dev/null
	strace_tally "$T/strace.out"
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4 }
	    END { print n }' "$T/strace.out")
	printf '[%s] %6.2f syscalls per CREATE+CLOSE:' "$s" \
	    "$(echo "$calls / $OPENS" | bc -l)"
	awk -v n="$OPENS" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
	    printf " %s %.2f", $NF, $4 / n }' "$T/strace.out"
	echo
done
exec {DRV[1]}>&-
