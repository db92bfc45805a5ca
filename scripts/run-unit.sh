#!/usr/bin/env bash
# Runs each Check unit test binary given as an argument, sums Check's
# counts ("NN%: Checks: N, Failures: F, Errors: E") and prints one final
# line "unit: N passed, N failed".  A binary that crashes, prints no summary
# or exits non-zero with no failure counted is one failure.
# UNIT_JOBS binaries run at once (default 2, one a core: the suites are
# independent, each in its own temporary directories); the reports come
# in the order given.
set -u
passed=0
failed=0
jobs=${UNIT_JOBS:-2}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

# run_one I BIN: the binary's output in $res/I.out, its exit code in $res/I.rc
run_one() {
	# each suite gets a bounded time; CK_DEFAULT_TIMEOUT bounds each test
	timeout "${UNIT_TIMEOUT:-300}" "$2" >"$res/$1.out" 2>&1
	echo $? >"$res/$1.rc"
}

i=0
running=0
for bin in "$@"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_one "$i" "$bin" &
	running=$((running + 1))
	i=$((i + 1))
done
wait

i=0
for bin in "$@"; do
	name=$(basename "$bin")
	out=$res/$i.out
	rc=$(cat "$res/$i.rc" 2>/dev/null || echo 1)
	i=$((i + 1))
	summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$out" | tail -n 1)
	if [ -n "$summary" ]; then
		n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$summary")
		f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$summary")
		e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$summary")
		bad=$((f + e))
		good=$((n - bad))
		# a clean summary with a failing exit (a leak report, a crash at exit)
		if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
			bad=1
		fi
	else
		good=0
		bad=1
	fi
	passed=$((passed + good))
	failed=$((failed + bad))
	if [ "$bad" -gt 0 ]; then
		echo "--- $name: exit $rc ---"
		cat "$out"
	else
		echo "$name: $good passed"
	fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
