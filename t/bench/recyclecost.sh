#!/usr/bin/env bash
# What a recycle bin costs a delete: one impacket connection of alice
# creating and deleting (FILE_DELETE_ON_CLOSE, then CLOSE) N new files on
# [share] (no bin) and on [rb] (`recycle directory = .recycle/%U`), the
# two alternated, her worker under `strace -c` in a last round of each.
# Prints the median, min and max milliseconds per delete, the syscalls per
# delete by name and, when build/t/bench/malloc_count.so is there (make
# perfcheck builds it), the worker's heap allocations in those last runs;
# fails on nothing but a broken setup.
#
#	bash t/bench/recyclecost.sh [N]		deletes per run, default 300
#
# RECYCLECOST_RUNS: timed runs per share (default 5).
. "$(dirname "$0")/../integ/lib.sh"

n=${1:-300}
runs=${RECYCLECOST_RUNS:-5}
integ_init
INTEG_SHARES="[rb]
	path = $T/rb
	read only = no
	recycle directory = .recycle/%U"
mkdir -p "$T/rb"
chmod 1777 "$T/rb"
INTEG_LOG_LEVEL=1 integ_conf
integ_users >/dev/null || exit 1
mc=
if [ -f "$ROOT/build/t/bench/malloc_count.so" ]; then
	mc=$T/mc
	mkdir -p "$mc"
	chmod 1777 "$mc"
	export LD_PRELOAD=$ROOT/build/t/bench/malloc_count.so MALLOC_COUNT_DIR=$mc
fi
integ_start || exit 1
unset LD_PRELOAD MALLOC_COUNT_DIR
# allocs PID: malloc+calloc+realloc+memalign calls of PID so far
allocs() {
	[ -n "$mc" ] && "$ROOT/build/t/bench/malloc_count" "$mc" |
	    awk -v p="pid=$1" '$1 == p { split($2, a, "="); split($3, b, "=");
		split($4, c, "="); split($6, d, "="); print a[2] + b[2] + c[2] + d[2] }'
}
cat >"$T/loop.py" <<'PY'
import os, sys, time
from impacket.smbconnection import SMBConnection
port, pw, share, n, go = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=port)
c.login('alice', pw)
s, t = c.getSMBServer(), c.connectTree(share)
def one(name):
    f = s.create(t, name, 0x00010000 | 0x2 | 0x80, 7, 0x1000, 2, 0)
    s.close(t, f)
one('warm.txt')		# the worker, the bin
open(go + '.ready', 'w').close()
while not os.path.exists(go):
    time.sleep(0.02)
t0 = time.perf_counter()
for i in range(n):
    one('f%d.txt' % i)
print('%.4f' % ((time.perf_counter() - t0) * 1000 / n))
PY
# run SHARE TRACE: one run, its ms per delete on stdout
run() {
	local share=$1 trace=$2 py st= w a0=

	rm -f "$T/go" "$T/go.ready"
	"$PYTHON" "$T/loop.py" "$PORT" "$ALICE_PW" "$share" "$n" "$T/go" \
	    >"$T/py.out" 2>&1 &
	py=$!
	while [ ! -e "$T/go.ready" ]; do
		kill -0 $py 2>/dev/null || { cat "$T/py.out" >&2; return 1; }
		sleep 0.02
	done
	w=$(integ_worker_of alice)
	if [ "$trace" = 1 ]; then
		a0=$(allocs "$w")
		strace -f -s 0 -p "$w" -o "$T/st.$share" 2>/dev/null &
		st=$!
		sleep 0.5
	fi
	touch "$T/go"
	wait $py || { cat "$T/py.out" >&2; return 1; }
	if [ -n "$st" ]; then
		kill -INT $st
		wait $st 2>/dev/null
		strace_tally "$T/st.$share"
		[ -n "$a0" ] && echo "$(( $(allocs "$w") - a0 ))" >"$T/allocs.$share"
	fi
	cat "$T/py.out"
}
med() { sort -n | awk '{v[NR]=$1} END {printf "%.3f (%.3f-%.3f)", v[int((NR+1)/2)], v[1], v[NR]}'; }
: >"$T/ms.share"
: >"$T/ms.rb"
for i in $(seq 1 "$runs"); do
	for share in share rb; do
		run $share 0 >>"$T/ms.$share" || exit 1
	done
done
for share in share rb; do
	run $share 1 >/dev/null || exit 1
	echo "$share: ms per delete, median (min-max) of $runs runs of $n: $(med <"$T/ms.$share")"
	awk -v n="$n" '$4 ~ /^[0-9]+$/ && $NF ~ /^[a-z_0-9]+$/ && $NF != "total" && $4 / n >= 0.5 {
		printf "%s %.2f, ", $NF, $4 / n } $NF == "total" { t = $4 / n }
		END { printf "total %.2f syscalls per delete\n", t }' "$T/st.$share"
	[ -f "$T/allocs.$share" ] &&
	    echo "heap allocations of alice's worker in those $n deletes: $(cat "$T/allocs.$share")"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
