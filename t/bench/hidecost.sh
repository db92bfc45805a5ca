#!/usr/bin/env bash
# What `hide unreadable` costs a listing: bob lists a directory of
# HIDECOST_FILES files (default 10,000) through three shares of usmbd,
# without the key, with it on files of another owner (one faccessat per
# entry) and with it on his own files (judged from the mode already read),
# alternated run by run (t/bench/hidecost_client.py, impacket), then the
# same three by smbclient `ls` (a process per listing).  Prints figures,
# fails on nothing but a broken setup.
#
#	bash t/bench/hidecost.sh
#
# HIDECOST_RUNS: runs per figure (default 9; medians, min, max).
. "$(dirname "$0")/../integ/lib.sh"

n=${HIDECOST_FILES:-10000}
runs=${HIDECOST_RUNS:-9}
integ_init
mkdir -p "$T/others" "$T/own"
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '%s\n' \
	'[off]' "	path = $T/others" \
	'[on]' "	path = $T/others" '	hide unreadable = yes' \
	'[onown]' "	path = $T/own" '	hide unreadable = yes') integ_conf
integ_users || exit 1
(cd "$T/others" && seq -f "file%05g.txt" 1 "$n" | xargs touch)
(cd "$T/own" && seq -f "file%05g.txt" 1 "$n" | xargs touch)
chmod 0644 "$T"/others/* "$T"/own/*
chown -R bob "$T/own"
integ_start || exit 1
# bob's worker, kept by the session below (worker idle timeout)
smbclient -p "$PORT" -m SMB3 //127.0.0.1/off -U "bob%$BOB_PW" -c ls \
    >/dev/null 2>&1 || { echo "smbclient ls failed"; exit 1; }
worker=$(integ_worker_of bob)
[ -n "$worker" ] || { echo "no worker of bob"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "impacket listPath of $n files, $runs alternated runs:"
"$PYTHON" "$ROOT/t/bench/hidecost_client.py" "$PORT" bob "$BOB_PW" "$runs" \
    "$worker" off on onown || exit 1
if command -v strace >/dev/null; then
	echo "system calls of bob's worker in one smbclient ls (strace -f, tallied):"
	for s in off on onown; do
		strace -f -s 0 -o "$T/strace.$s" -p "$worker" 2>/dev/null &
		sp=$!
		sleep 1
		smbclient -p "$PORT" -m SMB3 "//127.0.0.1/$s" -U "bob%$BOB_PW" \
		    -c ls >/dev/null 2>&1
		sleep 0.5
		kill -INT "$sp"
		wait "$sp" 2>/dev/null
		strace_tally "$T/strace.$s"
		printf '%-6s total %s, faccessat2 %s, getdents64 %s\n' "$s" \
		    "$(awk '$NF == "total" {print $4}' "$T/strace.$s")" \
		    "$(awk '$NF == "faccessat2" {print $4}' "$T/strace.$s")" \
		    "$(awk '$NF == "getdents64" {print $4}' "$T/strace.$s")"
	done
fi
echo "smbclient ls (process start included), $runs alternated runs:"
declare -A ms
for r in $(seq "$runs"); do
	for s in off on onown; do
		t0=$(date +%s%N)
		smbclient -p "$PORT" -m SMB3 "//127.0.0.1/$s" -U "bob%$BOB_PW" \
		    -c ls >/dev/null 2>&1 || { echo "smbclient ls $s failed"; exit 1; }
		ms[$s]+="$(( ($(date +%s%N) - t0) / 1000 )) "
	done
done
for s in off on onown; do
	printf '%-12s ' "$s"
	tr ' ' '\n' <<<"${ms[$s]}" | grep . | sort -n | awk '{v[NR]=$1}
	    END {printf "median %8.2f ms  min %8.2f  max %8.2f  (%d runs)\n",
	    v[int((NR+1)/2)]/1000, v[1]/1000, v[NR]/1000, NR}'
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
