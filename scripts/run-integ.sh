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

# Scripts that spend their time waiting, not computing, and share nothing
# with the others run beside the rest, started first; their output is
# printed when they end.  The kernel client spends its time in one qemu
# process (software emulation, one core; its server runs inside the
# guest); the Kerberos script waits for tickets to expire, with a KDC and
# krb5.conf of its own (KRB5_CONFIG).  INTEG_SERIAL=1 runs everything in
# turn.
BACKGROUND=" kclient krb "
bg_names=()
bg_pids=()
bg_outs=()
is_bg() {
	[ "${INTEG_SERIAL:-0}" != 1 ] && [[ "$BACKGROUND" == *" $1 "* ]]
}
for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	is_bg "$name" || continue
	if [ "${#bg_names[@]}" -eq 0 ]; then
		# The accounts every script makes when absent are made once
		# here, before two scripts can race to useradd the same one.
		bash -c '. t/integ/lib.sh && integ_accounts' ||
		    echo "run-integ.sh: could not make the test accounts"
	fi
	out=$(mktemp)
	echo "== $name: started in the background"
	( t0=$SECONDS
	  timeout --kill-after=10 "${INTEG_TIMEOUT:-900}" bash "$s" </dev/null >"$out" 2>&1
	  echo $? >"$out.rc"
	  echo $((SECONDS - t0)) >"$out.secs" ) &
	bg_names+=("$name")
	bg_pids+=($!)
	bg_outs+=("$out")
done

for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	is_bg "$name" && continue
	out=$(mktemp)
	echo "== $name"
	t0=$SECONDS
	timeout --kill-after=10 "${INTEG_TIMEOUT:-900}" bash "$s" </dev/null 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	tally "$name" "$out" "$rc" $((SECONDS - t0))
	rm -f "$out"
done
for i in "${!bg_names[@]}"; do
	wait "${bg_pids[$i]}"
	out=${bg_outs[$i]}
	echo "== ${bg_names[$i]} (ran in the background)"
	cat "$out"
	tally "${bg_names[$i]}" "$out" "$(cat "$out.rc" 2>/dev/null || echo 1)" \
	    "$(cat "$out.secs" 2>/dev/null || echo "?")"
	rm -f "$out" "$out.rc" "$out.secs"
done
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
