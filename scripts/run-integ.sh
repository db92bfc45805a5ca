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
# tally NAME OUT RC SECS: adds a finished script's summary line to the sums.
tally() {
	local name=$1 out=$2 rc=$3 secs=$4 last p f
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
	echo "== $name: $secs s"
}

# The kernel-client script spends its time in one qemu process (software
# emulation, one core) and shares nothing with the others (its server runs
# inside the guest), so it runs beside the rest, started first; its output
# is printed when it ends.  INTEG_SERIAL=1 runs everything in turn.
bg_name=
bg_pid=
bg_out=
for s in "${scripts[@]}"; do
	[ "$(basename "$s" .sh)" = kclient ] && [ "${INTEG_SERIAL:-0}" != 1 ] || continue
	bg_name=kclient
	bg_out=$(mktemp)
	bg_t0=$SECONDS
	echo "== kclient: started in the background"
	( timeout --kill-after=10 "${INTEG_TIMEOUT:-900}" bash "$s" </dev/null >"$bg_out" 2>&1
	  echo $? >"$bg_out.rc"
	  echo $((SECONDS - bg_t0)) >"$bg_out.secs" ) &
	bg_pid=$!
done

for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	[ "$name" = "$bg_name" ] && continue
	out=$(mktemp)
	echo "== $name"
	t0=$SECONDS
	timeout --kill-after=10 "${INTEG_TIMEOUT:-900}" bash "$s" </dev/null 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	tally "$name" "$out" "$rc" $((SECONDS - t0))
	rm -f "$out"
done
if [ -n "$bg_pid" ]; then
	wait "$bg_pid"
	echo "== $bg_name (ran in the background)"
	cat "$bg_out"
	tally "$bg_name" "$bg_out" "$(cat "$bg_out.rc" 2>/dev/null || echo 1)" \
	    "$(cat "$bg_out.secs" 2>/dev/null || echo "?")"
	rm -f "$bg_out" "$bg_out.rc" "$bg_out.secs"
fi
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
