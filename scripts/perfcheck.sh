#!/bin/bash
# make perfcheck: assert usmbd's counted per-request figures (issue 6):
# 0 credential syscalls and 0 heap allocations per steady-state READ, WRITE,
# CREATE, CLOSE, QUERY_INFO, QUERY_DIRECTORY and ECHO; at most 4 syscalls
# per 4 KiB WRITE and 3 per READ; for a relayed session (another user's
# on alice's connection, issue 13) 0 credential syscalls, 0 allocations
# and at most 4 syscalls (both workers) per 4 KiB READ and per 4 KiB
# WRITE; seed 004's POSIX loops (issue 16) side by side with Samba 4.22
# when its root is installed, usmbd's allocations and syscalls per loop
# held, the timings printed only; a TREE_CONNECT + TREE_DISCONNECT of a
# share with `max connections` no call more than of one without, and no
# allocation.  The work is done by t/bench/perfcheck.py;
# PERFCHECK_N sets the requests per command, PERFCHECK_SEED_N the seed 004
# loops per window, PERFCHECK_SERVER=samba measures Samba instead (to see
# the instrument work).  Exit status 1 if any fails.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

if [ "$(id -u)" != 0 ]; then
	echo "perfcheck.sh: must run as root (strace -p, users, servers)" >&2
	exit 1
fi
for tool in strace ss /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 ||
	    { echo "perfcheck.sh: $tool is missing" >&2; exit 1; }
done
/usr/bin/python3 -c 'import impacket' 2>/dev/null ||
    { echo "perfcheck.sh: python3-impacket is missing" >&2; exit 1; }

BENCH_TMP=$(mktemp -d /dev/shm/usmbd-perfcheck.XXXXXX) || exit 1
chmod 0755 "$BENCH_TMP"
export BENCH_TMP

# Backstop for the driver's cleanup: the server it started (its own
# process group) and its CPU-accounting cgroup.
perfcheck_cleanup() {
	local f pid

	for f in "$BENCH_TMP"/*/server.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
		    kill -KILL -- "-$pid" 2>/dev/null
	done
	for f in /sys/fs/cgroup/"${BENCH_TMP##*/}".* \
	    /sys/fs/cgroup/cpuacct/"${BENCH_TMP##*/}".*; do
		[ -d "$f" ] && rmdir "$f" 2>/dev/null
	done
	[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$BENCH_TMP"
}
trap perfcheck_cleanup EXIT
trap 'exit 130' INT TERM HUP

/usr/bin/python3 t/bench/perfcheck.py
