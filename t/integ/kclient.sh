#!/usr/bin/env bash
# The CI subset of the kernel-client harness (t/kclient/README.md): Debian
# 12's kernel under qemu, usmbd and then Samba in the guest, mounts over
# every dialect (sealed and signed too) and the unlink cases of issue 22.
# Prints the side-by-side table and "N passed, N failed" (expected failures,
# t/kclient/xfail, count as passed).  Missing packages or kernel: a failure,
# not a skip (scripts/install-deps.sh installs them).  `make kclient` runs
# the full set.
cd "$(dirname "$0")/../.." || exit 1
KCLIENT_SUBSET=ci KCLIENT_OUT=${KCLIENT_OUT:-/tmp/usmbd-kclient-ci} \
    exec t/kclient/run.sh
