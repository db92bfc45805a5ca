#!/usr/bin/env bash
# make compat-new: the whole smb2 family of Samba 4.22's smbtorture (issue
# 21), one smbtorture process per test, against usmbd and Samba 4.22 side
# by side (t/compat/compare.sh with COMPARE_TORTURE=422 and the servers
# usmbd and samba422; the root comes from scripts/samba-ref.sh, beside
# Debian 12's Samba, never over it).  Then checks usmbd's results against
# t/compat/torture422.list (must pass) and t/compat/torture422.xfail (known
# failures, each with its reason).  Not part of `make test`: with a 60 s
# limit per test it takes about an hour on two shared cores.
#
#	t/compat/compat-new.sh [SUITE|TEST ...]	(default: smb2, everything)
#
# The manual tools are left out: smb2.scan.* and smb2.bench.* (scanners and
# benchmarks, not tests), smb2.hold-oplock and smb2.hold-sharemode (they
# hold a file until killed).  Tests whose names hold spaces
# ("smb2.charset.Testing wide-a") run and count like the others.
#
# Environment: as compare.sh (OUT, default /tmp/usmbd-compare-422;
# COMPARE_SERVERS, default "usmbd samba422"; COMPARE_TIMEOUT ...).
# Exit status: 1 when a test of torture422.list that was run failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export COMPARE_TORTURE=422
export COMPARE_SERVERS=${COMPARE_SERVERS:-usmbd samba422}
export COMPARE_EXCLUDE=${COMPARE_EXCLUDE:-'^smb2\.(scan|bench|hold-oplock|hold-sharemode)(\.|$)'}
export OUT=${OUT:-/tmp/usmbd-compare-422}
LIST=$here/torture422.list
XFAIL=$here/torture422.xfail

# Remember which tests this run asks for: the check below looks only at them.
start=$(date +%s)
"$here/compare.sh" "${@:-smb2}" || exit 1
case " $COMPARE_SERVERS " in *" usmbd "*) ;; *) exit 0 ;; esac

names() { grep -v -E '^(#|[[:space:]]*$)' "$1" 2>/dev/null | cut -f1; }
declare -A want=() xfail=()
while IFS= read -r t; do want[$t]=1; done < <(names "$LIST")
while IFS= read -r t; do xfail[$t]=1; done < <(names "$XFAIL")
bad=0 new=0
echo
echo "usmbd against $(basename "$LIST") and $(basename "$XFAIL") (tests run since $(date -u -d "@$start" +%H:%M) UTC):"
# compare.sh's table file keeps older runs' lines: look only at this run's
# outputs (newer than its start).
while IFS=$'\t' read -r t rs; do
	o=$OUT/usmbd/$t.out
	[ -e "$o" ] && [ "$(stat -c %Y "$o")" -ge "$start" ] || continue
	r=${rs%% *}
	if [ -n "${want[$t]:-}" ] && [ "$r" != success ]; then
		echo "FAIL $t: $r (listed as must-pass)"
		bad=$((bad + 1))
	elif [ -z "${want[$t]:-}" ] && [ -z "${xfail[$t]:-}" ]; then
		echo "note: $t: $r, in neither list"
		new=$((new + 1))
	elif [ -n "${xfail[$t]:-}" ] && [ "$r" = success ]; then
		echo "note: $t passes but is in $(basename "$XFAIL")"
	fi
done <"$OUT/usmbd.res"
echo "$bad must-pass failures, $new tests in neither list"
[ "$bad" -eq 0 ]
