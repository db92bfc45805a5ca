#!/usr/bin/env bash
# Syscalls per leased CREATE+CLOSE pair (t/bench/README.md, "The lease-key
# claim"): strace -c -f on alice's worker, N pairs per window
# (LEASECOST_N, default 500), `state partitions` LEASECOST_PARTS (default
# 8).  Windows: no lease; a lease v2 RWH with a new key each pair (the
# CREATE claims the key, the CLOSE ends the lease); a lease whose key
# already caches the file (a first handle holds it).
. "$(dirname "$0")/../integ/lib.sh"
N=${LEASECOST_N:-500}
integ_init
INTEG_GLOBAL=$(printf '\tstate partitions = %s\n' "${LEASECOST_PARTS:-8}") integ_conf
integ_users
integ_start || exit 1
coproc DRV { "$PYTHON" "$ROOT/t/bench/leasecost_client.py" "$PORT" "$ALICE_PW" 2>&1; }
read -r line <&"${DRV[0]}"
[ "$line" = ready ] || { echo "driver: $line"; exit 1; }
W=$(integ_worker_of alice)
for win in plain newkey samekey; do
	echo "$win 32" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"	# warm
	strace -f -s 0 -p "$W" -o "$T/strace.out" & sp=$!
	sleep 1
	echo "$win $N" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	kill -INT "$sp"; wait "$sp" 2>/dev/null
	strace_tally "$T/strace.out"
	# the state's write transactions so far, by kind (OTHER: the claims)
	"$USMBCTL" -s "$CONF" metrics | grep 'usmbd_state_write_transactions_total'
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4 }
	    END { print n }' "$T/strace.out")
	printf '%-8s %6.2f syscalls per CREATE+CLOSE\n' "$win" \
	    "$(echo "$calls / $N" | bc -l)"
	awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { e = NF == 6 ? $5 : 0;
	    printf "\t%-16s %5d calls %5d errors\n", $NF, $4, e }' "$T/strace.out"
done
exec {DRV[1]}>&-
