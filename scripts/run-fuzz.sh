#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time over its seed corpus
# (t/fuzz/corpus/<name without fuzz_>/).  New inputs go to a scratch copy so
# the repository's corpus only changes by hand.  Usage: run-fuzz.sh SECONDS BIN...
# FUZZ_KEEP=DIR (make fuzz-long): the working corpus of each target is
# DIR/<name>, kept from run to run so a long campaign goes on where the
# last one stopped; FUZZ_FORK=N runs N fuzzing processes per target.
# FUZZ_JOBS=N runs N targets at once (default 2).
set -u
# The targets are built with recoverable UBSan: without halt_on_error a
# report is only printed and the run still passes.  Halting makes libFuzzer
# save the input as a crash artifact.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
secs=$1; shift
# FUZZ_JOBS targets run at once (default 2, one a core): each target still
# gets its whole time, the run takes half as long.
jobs=${FUZZ_JOBS:-2}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

# fuzz_one BIN: one target's run; its report goes to $res/<name>, and
# $res/<name>.ok exists when it passed.
fuzz_one() {
	local bin=$1 name short work
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
		echo "fuzz $name: ok (${secs}s)" >"$res/$name"
		: >"$res/$name.ok"
	else
		{ echo "fuzz $name: FAILED, see build/fuzz/$name.log"
		  tail -n 30 "build/fuzz/$name.log"; } >"$res/$name"
	fi
	[ -n "${FUZZ_KEEP:-}" ] || rm -rf "$work"
}

running=0
for bin in "$@"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$bin" &
	running=$((running + 1))
done
wait
pass=0; fail=0
for bin in "$@"; do
	name=$(basename "$bin")
	cat "$res/$name" 2>/dev/null || echo "fuzz $name: no result"
	if [ -e "$res/$name.ok" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
