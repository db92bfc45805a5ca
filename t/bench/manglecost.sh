#!/usr/bin/env bash
# What 8.3 short names cost (HACKING.md "Short names"): bob lists a
# directory of MANGLECOST_FILES long names (default 10,000, none of them
# 8.3) with FileIdBothDirectoryInformation through three shares over it,
# `mangled names` no, illegal (the default: no ShortName listed) and yes
# (a ShortName made per entry), alternated run by run; then opens its
# last file by its long name and by its short name (a miss, then a scan
# of the directory).  t/bench/manglecost_client.py, impacket.  Prints
# figures, fails on nothing but a broken setup.
#
#	bash t/bench/manglecost.sh
#
# MANGLECOST_RUNS: runs per figure (default 9; medians, min, max).
. "$(dirname "$0")/../integ/lib.sh"

n=${MANGLECOST_FILES:-10000}
runs=${MANGLECOST_RUNS:-9}
integ_init
mkdir -p "$T/names"
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '%s\n' \
	'[no]' "	path = $T/names" '	mangled names = no' \
	'[ill]' "	path = $T/names" \
	'[yes]' "	path = $T/names" '	mangled names = yes') integ_conf
integ_users || exit 1
(cd "$T/names" && seq -f "a long file name %05g.txt" 1 "$n" |
    tr '\n' '\0' | xargs -0 touch)
chown -R bob "$T/names"
integ_start || exit 1
smbclient -p "$PORT" -m SMB3 //127.0.0.1/no -U "bob%$BOB_PW" -c 'ls x' \
    >/dev/null 2>&1
worker=$(integ_worker_of bob)
[ -n "$worker" ] || { echo "no worker of bob"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$n long names, $runs alternated runs:"
MANGLECOST_DIR=$T/names "$PYTHON" "$ROOT/t/bench/manglecost_client.py" \
    "$PORT" bob "$BOB_PW" "$runs" "$worker" no ill yes || exit 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
