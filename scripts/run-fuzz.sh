#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time over its seed corpus
# (t/fuzz/corpus/<name without fuzz_>/).  New inputs go to a scratch copy so
# the repository's corpus only changes by hand.  Usage: run-fuzz.sh SECONDS BIN...
# FUZZ_KEEP=DIR (make fuzz-long): the working corpus of each target is
# DIR/<name>, kept from run to run so a long campaign goes on where the
# last one stopped; FUZZ_FORK=N runs N fuzzing processes per target.
set -u
# The targets are built with recoverable UBSan: without halt_on_error a
# report is only printed and the run still passes.  Halting makes libFuzzer
# save the input as a crash artifact.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
secs=$1; shift
pass=0; fail=0
for bin in "$@"; do
	name=$(basename "$bin"); short=${name#fuzz_}
	if [ -n "${FUZZ_KEEP:-}" ]; then
		work=$FUZZ_KEEP/$short
		mkdir -p "$work"
	else
		work=$(mktemp -d)
	fi
	[ -d "t/fuzz/corpus/$short" ] && cp -rn "t/fuzz/corpus/$short/." "$work/" 2>/dev/null
	fork=()
	[ -n "${FUZZ_FORK:-}" ] && fork=(-fork="$FUZZ_FORK")
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${fork[@]}" -artifact_prefix="build/fuzz/$name-" "$work" >"build/fuzz/$name.log" 2>&1; then
		echo "fuzz $name: ok (${secs}s)"; pass=$((pass + 1))
	else
		echo "fuzz $name: FAILED, see build/fuzz/$name.log"; tail -n 30 "build/fuzz/$name.log"
		fail=$((fail + 1))
	fi
	[ -n "${FUZZ_KEEP:-}" ] || rm -rf "$work"
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
