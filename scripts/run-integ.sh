#!/usr/bin/env bash
# Runs every t/integ/*.sh except the *lib.sh helpers (only those named in $INTEG when it
# is set: space- or comma-separated names, with or without .sh).  Each
# script prints "N passed, N failed" as its last line; the sums go on one
# final line "integration: N passed, N failed".  A script that exits
# non-zero without such a line, or that times out, counts as one failure.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
want=" $(tr ',' ' ' <<<"${INTEG:-}") "
scripts=()
for s in t/integ/*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	case $name in lib | *_lib) continue ;; esac
	if [ -n "${INTEG:-}" ] && [[ "$want" != *" $name "* && "$want" != *" $name.sh "* ]]; then
		continue
	fi
	scripts+=("$s")
done
if [ "${#scripts[@]}" -eq 0 ]; then
	echo "run-integ.sh: no integration scripts matched${INTEG:+ INTEG=$INTEG}" >&2
fi
for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	out=$(mktemp)
	echo "== $name"
	t0=$SECONDS
	timeout --kill-after=10 "${INTEG_TIMEOUT:-900}" bash "$s" </dev/null 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	if [ -n "$last" ]; then
		p=${last%% passed*}
		f=${last#*passed, }
		f=${f%% failed}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1	# failed without saying so
		fi
	else
		p=0
		f=1
		echo "$name: exit $rc without a summary line: counted as one failure"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	echo "== $name: $((SECONDS - t0)) s"
	rm -f "$out"
done
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
