#!/usr/bin/env bash
# Why 8 workers on 2 vCPUs hold the state's writer lock longer
# (t/bench/README.md, "8 workers on 2 vCPUs: the writer lock"): runs
# t/bench/contend.py's 8-client createclose window with 8 workers
# (`max workers per user = 4`), and while it runs counts, over the 8
# workers for PROBE_SECS (3) seconds, the futex calls (the writer lock
# sleeping and waking), context switches (perf stat), the involuntary
# ones (preemptions: /proc/PID/status), page faults and CPU time, each
# divided by the open+close pairs of that time (the envs' LMDB write
# transactions / 2).  One line per `state partitions` value:
#
#   PROBE parts=8 workers=8 pairs=8405 futex_per_pair=.005 cs_per_pair=1.815
#       invol_per_pair=.0123 faults_per_pair=.001 cpu_us_per_pair=106.34 load=6.86
#
#   bash t/bench/contendprobe.sh            # PROBE_PARTS="1 8", PROBE_SECS=3
# USMBD/USMBCTL name another build (as for contend.py).  Needs perf.
set -u
here=$(cd "$(dirname "$0")" && pwd)
secs=${PROBE_SECS:-3}
sum_status() {	# FIELD PIDS: a /proc/PID/status counter added up
	local f=$1 n=0 p
	shift
	for p in "$@"; do
		n=$((n + $(awk -v f="$f:" '$1 == f { print $2 }' /proc/"$p"/status)))
	done
	echo "$n"
}
last_txn() {	# the envs' last transaction ids added up
	local n=0 f
	for f in "$@"; do
		n=$((n + $(mdb_stat -n -e "$f" | sed -n 's/.*Last transaction ID: *//p')))
	done
	echo "$n"
}
for P in ${PROBE_PARTS:-1 8}; do
	T=$(mktemp -d /dev/shm/contendprobe.XXXXXX)
	BENCH_TMP=$T BENCH_KEEP=1 CONTEND_SERVERS=usmbd CONTEND_PARTS=$P \
	    CONTEND_CLIENTS=8 CONTEND_WORKLOADS=createclose CONTEND_RUNS=1 \
	    CONTEND_N=${PROBE_N:-5000} "$here/contend.py" >"$T/contend.out" 2>&1 &
	bg=$!
	D=$T/usmbd-spread-p$P
	pids=
	for _ in $(seq 600); do
		m=$(cat "$D/server.pid" 2>/dev/null)
		[ -n "$m" ] && pids=$(ps -o pid=,args= --ppid "$m" | awk '/worker/ { print $1 }')
		[ "$(echo $pids | wc -w)" -ge 8 ] && break
		sleep 0.2
	done
	sleep 1.5	# all 8 in their timed loop
	envs=$D/lock/state.mdb
	[ "$P" -gt 1 ] && for i in $(seq 0 $((P - 1))); do envs="$envs $D/lock/state-$i.mdb"; done
	t0=$(last_txn $envs)
	nv0=$(sum_status nonvoluntary_ctxt_switches $pids)
	perf stat -x, -e context-switches,task-clock,page-faults,syscalls:sys_enter_futex \
	    -p "$(echo $pids | tr ' ' ,)" -- sleep "$secs" 2>"$T/perf.out"
	nv1=$(sum_status nonvoluntary_ctxt_switches $pids)
	t1=$(last_txn $envs)
	pairs=$(((t1 - t0) / 2))
	ev() { awk -F, -v e="$1" '$3 == e { print $1 }' "$T/perf.out"; }
	per() { echo "scale=4; $1 / $pairs" | bc; }
	echo "PROBE parts=$P workers=$(echo $pids | wc -w) pairs=$pairs" \
	    "futex_per_pair=$(per "$(ev syscalls:sys_enter_futex)")" \
	    "cs_per_pair=$(per "$(ev context-switches)")" \
	    "invol_per_pair=$(per $((nv1 - nv0)))" \
	    "faults_per_pair=$(per "$(ev page-faults)")" \
	    "cpu_us_per_pair=$(per "$(ev task-clock) * 1000")" \
	    "load=$(cut -d' ' -f1 /proc/loadavg)"
	wait "$bg"
	grep '^CONTEND .*spread=1' "$T/contend.out" | grep -o 'ops_per_s=[0-9.]*\|[a-z]*_c[a-z]*_us=[0-9.]*' | tr '\n' ' '
	echo
	rm -rf "$T"
done
