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
#	TORTURE_LANES	how many smbtorture processes run at once (default
#		4, each lane on a share of its own; 1 = one after the other)
#	TORTURE_TIMEOUT	seconds per suite invocation (default 300: smb2.lease
#		alone takes ~165 s, its 35 s break timeout and "no break" waits)
#	TORTURE_SERVER=host:port/share  run against another server (e.g. a
#		Samba started for comparison); users alice/bob must exist there
#	TORTURE_LOCALDIR  the share's directory as this host sees it, for the
#		tests that act on the files locally too (torture:localdir,
#		e.g. smb2.samba3misc.localposixlock1); default: usmbd's share,
#		none with TORTURE_SERVER
#	TORTURE_MAX_PROTOCOL=SMB2_10  the client's highest dialect for the
#		TORTURE_SUITES runs (smbtorture's client max protocol)
#
# A line of torture.list may name, after a tab, "max protocol=PROTO": that
# test runs in a unit of its own whose client offers no dialect above
# PROTO (smb2.lock.replay_broken_windows tests SMB 2.1's resilient-handle
# LockSequence and skips itself on 3.x).  A test listed that way only
# runs there alone; one also listed on a line of its own runs both ways
# (smb2.durable-open.* at 3.1.1 and at 2.1), each reported on its own:
# "NAME (max protocol PROTO)".
. "$(dirname "$0")/lib.sh"

LIST=$ROOT/t/compat/torture.list
XFAIL=$ROOT/t/compat/torture.xfail
TMO=${TORTURE_TIMEOUT:-300}

command -v smbtorture >/dev/null || { fail "smbtorture is installed"; finish; }

# Lanes run smbtorture processes side by side (most of their time is
# spent waiting for break and durable timeouts, not computing, so four
# lanes fit on two cores), each on a share of its own so no two
# runs meet on a file name; TORTURE_LANES=1 runs them one after the
# other.  One lane against another server.
LANES=${TORTURE_LANES:-4}
if [ -z "${TORTURE_SERVER:-}" ]; then
	integ_init
	LANE_SHARE=(share)
	LANE_DIR=("${TORTURE_LOCALDIR:-$SHARE}")
	extra=
	for ((l = 1; l < LANES; l++)); do
		d=$T/share$((l + 1))
		mkdir -p "$d"
		chmod 1777 "$d"
		LANE_SHARE+=("share$((l + 1))")
		LANE_DIR+=("${TORTURE_LOCALDIR:-$d}")
		extra+=$(printf '[share%d]\n\tpath = %s\n\tread only = no\n' $((l + 1)) "$d")
		extra+=$'\n'
	done
	# smb2.acls.ACCESSBASED connects to [hideunread] itself (Samba's
	# selftest share of that name)
	mkdir -p "$T/hideunread"
	chmod 1777 "$T/hideunread"
	extra+=$(printf '[hideunread]\n\tpath = %s\n\tread only = no\n\thide unreadable = yes\n' "$T/hideunread")
	extra+=$'\n'
	# smb2.session's anonymous re-authentications (xfail by design) meet
	# the same worker refusal as before the default became 2 (refuse).
	# smb2.dosmode runs on Samba's [dosmode] share: hide files and hide
	# dot files (the default); no other test makes a name "hidefile".
	INTEG_SHARES=$extra integ_conf "restrict anonymous = 0" \
	    "hide files = /hidefile/"
	integ_users
	integ_start || { fail "usmbd starts"; finish; }
	HOST=127.0.0.1 SPORT=$PORT
else
	LANES=1
	T=$(mktemp -d /tmp/usmbd-torture.XXXXXX)
	trap 'rm -rf "$T"' EXIT
	HOST=${TORTURE_SERVER%%:*}
	rest=${TORTURE_SERVER#*:}
	SPORT=${rest%%/*}
	LANE_SHARE=("${rest#*/}")
	LANE_DIR=("${TORTURE_LOCALDIR:-}")
fi

# torture_run SUITE [LOADLIST [LANE [UNIT]]]: one smbtorture invocation of
# the suite (only the tests of LOADLIST, one full name a line, when given)
# on the lane's share (default the first); results go to $T/res.UNIT
# (UNIT defaults to SUITE) as
# "STATUS<TAB>full test name" lines (names may hold spaces), STATUS one of
# success, failure, skip.
torture_run() {
	local suite=$1 lane=${3:-0} unit=${4:-$1}
	local maxp=${5:-${TORTURE_MAX_PROTOCOL:-}}
	local out=$T/out.$unit
	local LOCALDIR=${LANE_DIR[$lane]}

	timeout --kill-after=5 "$TMO" smbtorture "//$HOST/${LANE_SHARE[$lane]}" \
	    -p "$SPORT" -U "alice%$ALICE_PW" \
	    --target=samba3 \
	    --option=torture:sharedelay=100000 \
	    --option=torture:writetimeupdatedelay=500000 \
	    --option=torture:user2name=bob \
	    --option=torture:user2password="$BOB_PW" \
	    ${LOCALDIR:+--option=torture:localdir="$LOCALDIR"} \
	    ${maxp:+--option=clientmaxprotocol="$maxp"} \
	    --fullname --format=subunit ${2:+--load-list="$2"} "$suite" \
	    </dev/null >"$out" 2>&1
	echo "$?" >"$T/rc.$unit"
	# subunit v1: "success: NAME", "failure: NAME [", "skip: NAME [" ...
	sed -n -E 's/^(success|successful|failure|fail|error|skip|xfail|uxsuccess): (.*)$/\1\t\2/p' \
	    "$out" | sed -E 's/ \[$//; s/^successful\t/success\t/;
	    s/^(fail|error)\t/failure\t/' >"$T/res.$unit"
}

# Every non-comment line of a list: the test name is up to the first tab.
list_names() { grep -v -E '^(#|[[:space:]]*$)' "$1" | cut -f1; }

# want: every listed name; plain: listed without an option (runs at the
# client's highest dialect); variant["NAME<TAB>PROTO"]: listed with "max
# protocol=PROTO" (runs in the unit of that dialect); vonly: listed only
# with a max protocol (not run at the highest dialect)
declare -A want=() xfail=() plain=() variant=() vonly=()
while IFS= read -r t; do want[$t]=1; done < <(list_names "$LIST")
while IFS=$'\t' read -r t o; do
	case $o in
	"max protocol="*) variant["$t"$'\t'"${o#max protocol=}"]=1 ;;
	*) plain[$t]=1 ;;
	esac
done < <(grep -v -E '^(#|[[:space:]]*$)' "$LIST")
for v in "${!variant[@]}"; do
	t=${v%%$'\t'*}
	[ -n "${plain[$t]:-}" ] || vonly[$t]=1
done
while IFS= read -r t; do xfail[$t]=1; done < <(list_names "$XFAIL")

if [ -n "${TORTURE_SUITES:-}" ]; then
	for s in $TORTURE_SUITES; do
		torture_run "$s"
		p=$(grep -c '^success' "$T/res.$s")
		f=$(grep -c '^failure' "$T/res.$s")
		k=$(grep -c '^skip' "$T/res.$s")
		echo "suite $s: $p passed, $f failed, $k skipped (rc $(cat "$T/rc.$s"))"
		sed 's/^/    /; s/\t/ /' "$T/res.$s"
	done
	echo "0 passed, 0 failed"
	exit 0
fi

# Each suite of the list runs whole minus its known failures (which may
# hang or take long), so a new pass shows up as "passes but not listed".
declare -A suites=()
for t in "${!want[@]}"; do
	# the unit of one run: the first two dotted parts (smb2.ioctl runs
	# smb2.ioctl.bug14788.X too; smb2.connect is a test and its own unit)
	s=$(cut -d. -f1-2 <<<"$t")
	suites[$s]=1
done
# The seconds each suite took in CI (2026-12-03, one process each); the
# rest count 3.  A suite heavier than a chunk's worth (CHUNK seconds) is
# split into that many smbtorture processes, its tests dealt round-robin,
# so the longest suite no longer sets the run's length.  The units are
# then put on the lanes heaviest first, each to the lightest lane.
declare -A weight=([smb2.lease]=166 [smb2.oplock]=109 [smb2.replay]=99
    [smb2.notify]=75 [smb2.session]=62 [smb2.timestamps]=16
    [smb2.multichannel]=12 [smb2.create]=10)
CHUNK=${TORTURE_CHUNK:-60}
declare -A unit_w=() unit_proto=()
for s in "${!suites[@]}"; do
	ll=$T/load.$s
	# --list prints "full name.tcase name"
	smbtorture --list "$s" 2>/dev/null | grep -F "$s." | sed 's/\.[^.]*$//' |
	    sort -u | while IFS= read -r t; do
		[ -n "${xfail[$t]:-}" ] || [ -n "${vonly[$t]:-}" ] ||
		    printf '%s\n' "$t"
	done >"$ll"
	for t in "${!plain[@]}"; do
		case $t in "$s".*) grep -qxF "$t" "$ll" || printf '%s\n' "$t" >>"$ll" ;; esac
	done
	# the tests with a highest dialect: one unit per dialect, its list
	# $ll.PROTO (and $ll.variants: "NAME<TAB>PROTO" for the report)
	: >"$ll.variants"
	for v in "${!variant[@]}"; do
		t=${v%%$'\t'*} p=${v#*$'\t'}
		case $t in "$s".*) ;; *) continue ;; esac
		printf '%s\n' "$t" >>"$ll.$p"
		printf '%s\n' "$v" >>"$ll.variants"
		unit_w["$s#$p"]=1
		unit_proto["$s#$p"]=$p
	done
	w=${weight[$s]:-3}
	n=$(((w + CHUNK - 1) / CHUNK))
	[ "$LANES" -gt 1 ] || n=1
	for ((k = 0; k < n; k++)); do
		awk -v n="$n" -v k="$k" '(NR - 1) % n == k' "$ll" >"$ll.$k"
		# nothing left (a suite of max protocol tests only): no unit
		[ -s "$ll.$k" ] || continue
		unit_w["$s#$k"]=$(((w + n - 1) / n))
	done
done
declare -a lane_load=() lane_units=()
for ((l = 0; l < LANES; l++)); do lane_load[l]=0; lane_units[l]=; done
for u in $(for u in "${!unit_w[@]}"; do echo "${unit_w[$u]} $u"; done |
    sort -k1,1nr -k2 | cut -d' ' -f2); do
	best=0
	for ((l = 1; l < LANES; l++)); do
		[ "${lane_load[l]}" -lt "${lane_load[best]}" ] && best=$l
	done
	lane_load[best]=$((lane_load[best] + unit_w[$u]))
	lane_units[best]+=" $u"
done
pids=()
for ((l = 0; l < LANES; l++)); do
	(
		for u in ${lane_units[l]}; do
			s=${u%#*} k=${u##*#}
			t0=$SECONDS
			torture_run "$s" "$T/load.$s.$k" "$l" "$u" \
			    "${unit_proto[$u]:-}"
			echo "$((SECONDS - t0))" >"$T/secs.$u"
		done
	) &
	pids+=($!)
done
wait "${pids[@]}"
# A suite's results are those of its units at the highest dialect (the
# numbered ones); a unit of a max protocol keeps its own (res.SUITE#PROTO);
# the suite's rc is the worst of all.
for s in "${!suites[@]}"; do
	cat /dev/null "$T/res.$s#"[0-9]* >"$T/res.$s" 2>/dev/null
	cat /dev/null "$T/out.$s#"[0-9]* >"$T/out.$s" 2>/dev/null
	rc=0 secs=0
	for f in "$T/rc.$s#"*; do
		r=$(cat "$f")
		[ "$r" -gt "$rc" ] && rc=$r
	done
	for f in "$T/secs.$s#"*; do secs=$((secs + $(cat "$f"))); done
	echo "$rc" >"$T/rc.$s"
	echo "$secs" >"$T/secs.$s"
done
for s in $(printf '%s\n' "${!suites[@]}" | sort); do
	ll=$T/load.$s
	rc=$(cat "$T/rc.$s")
	echo "suite $s: $(($(grep -c . "$ll") + $(grep -c . "$ll.variants"))) tests in $(cat "$T/secs.$s") s"
	{ [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && echo "suite $s timed out after ${TMO}s"
	while IFS= read -r t; do
		[ -n "${want[$t]:-}" ] || continue
		r=$(awk -F'\t' -v n="$t" '$2 == n { r = $1 } END { print r }' "$T/res.$s")
		case $r in
		success) ok "$t" ;;
		skip) fail "$t (skipped)" ;;
		'') fail "$t (no result; rc $rc)"; tail -n 5 "$T/out.$s" | sed 's/^/     /' ;;
		*) fail "$t"
		   awk -v n="failure: $t" 'index($0, n) == 1 { p = 1 } p && k++ < 8' \
		       "$T/out.$s" | sed 's/^/     /' ;;
		esac
	done < <(sort "$ll")
	# the tests run at a highest dialect, each judged in its own unit
	while IFS=$'\t' read -r t p; do
		r=$(awk -F'\t' -v n="$t" '$2 == n { r = $1 } END { print r }' \
		    "$T/res.$s#$p" 2>/dev/null)
		case $r in
		success) ok "$t (max protocol $p)" ;;
		skip) fail "$t (max protocol $p; skipped)" ;;
		'') fail "$t (max protocol $p; no result)"
		    tail -n 5 "$T/out.$s#$p" 2>/dev/null | sed 's/^/     /' ;;
		*) fail "$t (max protocol $p)"
		   awk -v n="failure: $t" 'index($0, n) == 1 { p = 1 } p && k++ < 8' \
		       "$T/out.$s#$p" | sed 's/^/     /' ;;
		esac
	done < <(sort "$ll.variants")
	# passes of this suite that neither list names
	awk -F'\t' '$1 == "success" { print $2 }' "$T/res.$s" | sort -u |
	    while IFS= read -r t; do
		[ -n "${want[$t]:-}" ] || [ -n "${xfail[$t]:-}" ] ||
		    echo "note: $t passes but not listed"
	done
done
finish
