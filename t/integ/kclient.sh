#!/usr/bin/env bash
# The CI subset of the kernel-client harness (t/kclient/README.md): Debian
# 12's kernel under qemu, usmbd and then Samba in the guest, mounts over
# every dialect (sealed and signed too) and the unlink cases of issue 22.
# Prints the side-by-side table and "N passed, N failed" (expected failures,
# t/kclient/xfail, count as passed).  Missing packages or kernel: a failure,
# not a skip (scripts/install-deps.sh installs them).  `make kclient` runs
# the full set.
# Each run has a results directory of its own (run.sh empties it first, so
# two runs sharing one broke each other); a passing run's is removed.
cd "$(dirname "$0")/../.." || exit 1
out=${KCLIENT_OUT:-/tmp/usmbd-kclient-ci.$$}
KCLIENT_SUBSET=ci KCLIENT_OUT=$out t/kclient/run.sh
rc=$?
[ -z "${KCLIENT_OUT:-}" ] && [ "$rc" = 0 ] && rm -rf "$out"
exit "$rc"
