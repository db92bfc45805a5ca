#!/usr/bin/env bash
# make bench: usmbd and Samba side by side.  The driver is t/bench/bench.py
# (see t/bench/README.md for its environment variables).
#
# BENCH_CC=reno (or cubic where net.ipv4.tcp_allowed_congestion_control lists it) runs the whole bench, both servers, the
# client and the loopback limits, in a private network namespace whose TCP
# congestion control is that one.  Why: this VM's default is bbr, which
# paces every loopback connection on timers (loopback has no queue to pace
# for it) and makes large transfers bimodal per connection, for either
# server (t/bench/README.md, "2026-12-03 12:00 UTC").  Without BENCH_CC the
# host's setting is used, as a client of this machine would see it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f t/bench/bench.py ]; then
	echo "run-bench.sh: the benchmark driver (t/bench/bench.py) is not there yet; nothing was measured"
	exit 0
fi
if [ -n "${BENCH_CC:-}" ] && [ -z "${BENCH_IN_NETNS:-}" ]; then
	export BENCH_IN_NETNS=1
	exec unshare -n bash -c '
		set -e
		ip link set lo up
		sysctl -q -w net.ipv4.tcp_congestion_control="$BENCH_CC"
		exec python3 t/bench/bench.py "$@"' run-bench "$@"
fi
exec python3 t/bench/bench.py "$@"
