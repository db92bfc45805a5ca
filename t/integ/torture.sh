#!/usr/bin/env bash
# smbtorture against usmbd: every test of t/compat/torture.list must pass.
#
# The listed tests are grouped by suite (smb2.read, smb2.dir, ...) and each
# suite runs as one smbtorture invocation naming its tests, so the start-up
# cost is paid once per suite; each invocation has a time limit.  A listed
# test that fails (or is not reported at all) is a failure.  A test of the
# listed suites that passes but is in neither torture.list nor
# torture.xfail is reported as "passes but not listed" (not a failure), so
# the list only grows.
#
# Environment:
#	TORTURE_SUITES="smb2.read smb2.create"  run these whole suites instead
#		of the list (exploration; prints every result, fails nothing)
#	TORTURE_TIMEOUT	seconds per suite invocation (default 120)
#	TORTURE_SERVER=host:port/share  run against another server (e.g. a
#		Samba started for comparison); users alice/bob must exist there
. "$(dirname "$0")/lib.sh"

LIST=$ROOT/t/compat/torture.list
XFAIL=$ROOT/t/compat/torture.xfail
TMO=${TORTURE_TIMEOUT:-120}

command -v smbtorture >/dev/null || { fail "smbtorture is installed"; finish; }

if [ -z "${TORTURE_SERVER:-}" ]; then
	integ_init
	integ_conf
	integ_users
	integ_start || { fail "usmbd starts"; finish; }
	HOST=127.0.0.1 SPORT=$PORT SHARENAME=share
else
	T=$(mktemp -d /tmp/usmbd-torture.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	HOST=${TORTURE_SERVER%%:*}
	rest=${TORTURE_SERVER#*:}
	SPORT=${rest%%/*}
	SHARENAME=${rest#*/}
fi

# torture_run SUITE TEST...: one smbtorture invocation; results go to
# $T/res.SUITE as "success NAME" / "failure NAME" / "skip NAME" lines with
# the full test name (suite.test).
torture_run() {
	local suite=$1 out=$T/out.$1

	shift
	timeout --kill-after=5 "$TMO" smbtorture "//$HOST/$SHARENAME" \
	    -p "$SPORT" -U "alice%$ALICE_PW" \
	    --target=samba3 \
	    --option=torture:sharedelay=100000 \
	    --option=torture:writetimeupdatedelay=500000 \
	    --option=torture:user2name=bob \
	    --option=torture:user2password="$BOB_PW" \
	    --fullname --format=subunit "$@" </dev/null >"$out" 2>&1
	echo "$?" >"$T/rc.$suite"
	# subunit v1 lines: "success: NAME", "failure: NAME [", "skip: NAME"...
	sed -n -E 's/^(success|successful|failure|fail|error|skip|xfail|uxsuccess): ([^ []+).*/\1 \2/p' \
	    "$out" | sed -E 's/^successful /success /; s/^fail /failure /; s/^error /failure /' \
	    >"$T/res.$suite"
}

declare -A want=() xfail=()
while read -r t _; do
	case $t in ''|'#'*) continue ;; esac
	want[$t]=1
done <"$LIST"
while IFS=$'\t' read -r t _; do
	case $t in ''|'#'*) continue ;; esac
	xfail[$t]=1
done <"$XFAIL"

# A test name is suite.test where suite is the first two dotted parts.
suite_of() { local a=${1%%.*} r=${1#*.}; echo "$a.${r%%.*}"; }

if [ -n "${TORTURE_SUITES:-}" ]; then
	for s in $TORTURE_SUITES; do
		torture_run "$s" "$s"
		p=$(grep -c '^success ' "$T/res.$s")
		f=$(grep -c '^failure ' "$T/res.$s")
		k=$(grep -c '^skip ' "$T/res.$s")
		echo "suite $s: $p passed, $f failed, $k skipped (rc $(cat "$T/rc.$s"))"
		sed 's/^/    /' "$T/res.$s"
	done
	echo "0 passed, 0 failed"
	exit 0
fi

# Each suite of the list runs whole, minus its known failures (which may
# hang or take long), so a new pass shows up as "passes but not listed".
declare -A bysuite=() suites=()
for t in "${!want[@]}"; do
	suites[$(suite_of "$t")]=1
done
for s in "${!suites[@]}"; do
	# --list prints suite.test.tcase; the test is the first three parts
	for t in $(smbtorture --list "$s" 2>/dev/null | grep "^$s\\." |
	    cut -d. -f1-3 | sort -u); do
		[ -n "${xfail[$t]:-}" ] || bysuite[$s]+=" $t"
	done
	# a listed test smbtorture does not know still counts (as missing)
	for t in "${!want[@]}"; do
		[ "$(suite_of "$t")" = "$s" ] || continue
		[[ " ${bysuite[$s]:-} " == *" $t "* ]] || bysuite[$s]+=" $t"
	done
done

for s in $(printf '%s\n' "${!bysuite[@]}" | sort); do
	# shellcheck disable=SC2086
	torture_run "$s" ${bysuite[$s]}
	rc=$(cat "$T/rc.$s")
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "suite $s timed out after ${TMO}s"
	for t in $(tr ' ' '\n' <<<"${bysuite[$s]}" | sort); do
		[ -n "$t" ] && [ -n "${want[$t]:-}" ] || continue
		# smbtorture reports the test by its full name
		r=$(awk -v n="$t" '$2 == n { print $1 }' "$T/res.$s" | tail -n 1)
		case $r in
		success) ok "$t" ;;
		skip) fail "$t (skipped)" ;;
		'') fail "$t (no result; rc $rc)"; tail -n 5 "$T/out.$s" | sed 's/^/     /' ;;
		*) fail "$t"
		   awk -v n="$t" 'index($0, n) { p = 1 } p && n2++ < 12' "$T/out.$s" |
		       sed 's/^/     /' ;;
		esac
	done
	# passes of this suite that neither file names
	awk '$1 == "success" { print $2 }' "$T/res.$s" | sort -u | while read -r t; do
		[ -n "${want[$t]:-}" ] || [ -n "${xfail[$t]:-}" ] ||
		    echo "note $t passes but not listed"
	done
done
finish
