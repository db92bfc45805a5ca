#!/usr/bin/env bash
# What `force create mode` / `force directory mode` and `inherit
# permissions` cost a CREATE of a new name: syscalls of alice's worker
# (strace -f, tallied) per CREATE (FILE_CREATE, delete on close) + CLOSE of a new
# file and of a new directory, SHAREKEYSCOST_N pairs (default 300) per
# window, on three shares: [plain] without the keys, [force] (force
# create mode = 0020, force directory mode = 2070: the server's umask
# 022 takes bits the keys set, one fchmod puts them back) and [inherit]
# (inherit permissions under a 0777 root: one stat of the parent, and the
# fchmod).  Prints figures, never fails on a slow machine.
# t/bench/README.md "Share keys".
. "$(dirname "$0")/../integ/lib.sh"
N=${SHAREKEYSCOST_N:-300}
integ_init
umask 022
for d in plain force inherit; do
	mkdir -p "$T/$d"
	chmod 0777 "$T/$d"
done
INTEG_SHARES=$(printf '[plain]\n\tpath = %s\n\tread only = no\n\n[force]\n\tpath = %s\n\tread only = no\n\tforce create mode = 0020\n\tforce directory mode = 2070\n\n[inherit]\n\tpath = %s\n\tread only = no\n\tinherit permissions = yes\n' "$T/plain" "$T/force" "$T/inherit")
integ_conf
integ_users
integ_start || exit 1
command -v strace >/dev/null || { echo "no strace: no syscall counts"; exit 0; }
coproc DRV { "$PYTHON" "$ROOT/t/bench/sharekeyscost_client.py" "$PORT" 2>&1; }
read -r line <&"${DRV[0]}"
[ "$line" = ready ] || { echo "driver: $line"; exit 1; }
W=$(integ_worker_of alice)
[ -n "$W" ] || { echo "no worker for alice"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for win in "plain file" "force file" "inherit file" "plain dir" \
    "force dir" "inherit dir"; do
	echo "$win 20" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	[ "$line" = done ] || { echo "driver: $line"; cat <&"${DRV[0]}"; exit 1; }
	strace -f -s 0 -p "$W" -o "$T/strace.out" & sp=$!
	sleep 1
	echo "$win $N" >&"${DRV[1]}"; read -r line <&"${DRV[0]}"
	kill -INT "$sp"; wait "$sp" 2>/dev/null
	strace_tally "$T/strace.out"
	calls=$(awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4 }
	    END { print n }' "$T/strace.out")
	printf '[%s] %-4s %6.2f syscalls per CREATE+CLOSE:' "${win% *}" \
	    "${win#* }" "$(echo "$calls / $N" | bc -l)"
	awk -v n="$N" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
	    printf " %s %.2f", $NF, $4 / n }' "$T/strace.out"
	echo
done
exec {DRV[1]}>&-
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
