#!/usr/bin/env bash
# Protocol-layer conformance: runs smbtorture against usmbd and against
# Debian's Samba (a private smbd on another free loopback port, users alice
# and bob, every directory in a temp dir; `vfs objects = acl_xattr
# streams_xattr` from samba-vfs-modules, as a Windows-facing share is
# configured: the script refuses to run without them) and prints them side
# by side.  A third column, samba422, is bookworm-backports' Samba 4.22 run
# the same way from its own root (scripts/samba-ref.sh: fetched on demand,
# beside Debian 12's packages, never over them).  Not part of `make test`:
# a tool for growing t/compat/torture.list and t/compat/torture.xfail.
#
#	t/compat/compare.sh [SUITE|TEST ...]		per test
#	t/compat/compare.sh --per-suite [SUITE ...]	per suite
#
# Per test (the default): each test runs in its own smbtorture invocation
# (with a time limit), so a test that hangs or kills its connection costs
# only itself, and the time shown is that test's own.  The servers run at
# the same time.  Prints a table, usmbd vs Samba, per test with the wall time
# of each run, then the totals per suite.
#
# Per suite (--per-suite or COMPARE_MODE=suite): each whole suite runs as one
# invocation through t/integ/torture.sh (TORTURE_SUITES, TORTURE_SERVER),
# first against Samba, then against usmbd; prints pass/fail/skip counts per
# suite.  Faster; the full outputs are $OUT/samba.txt and $OUT/usmbd.txt.
#
# Environment:
#	OUT		results directory (default /tmp/usmbd-compare): per test
#			the smbtorture output, and the tables usmbd.res and
#			samba.res ("NAME<TAB>RESULT SECONDS" lines)
#	COMPARE_MODE	"test" (default) or "suite", as above
#	COMPARE_SERVERS	"usmbd samba" (default), any of usmbd, samba (Debian
#			12's 4.17) and samba422 (bookworm-backports' 4.22,
#			scripts/samba-ref.sh); name one to rerun only that
#			side; the others' last results are read from $OUT
#	COMPARE_TORTURE	"417" (default): Debian 12's smbtorture; "422": the
#			one of Samba 4.22 (scripts/samba-ref.sh), which knows
#			more tests (issue 21); OUT then defaults to
#			/tmp/usmbd-compare-422, so the two never mix.  Per
#			test mode only
#	COMPARE_TIMEOUT	seconds per test (default 60; per suite mode uses
#			TORTURE_TIMEOUT, see t/integ/torture.sh)
#	COMPARE_EXCLUDE	an extended regular expression: tests whose full name
#			matches it are not run (per test mode), e.g. the
#			manual tools smb2.scan, smb2.bench, smb2.hold-*
#	COMPARE_OPTS	extra smbtorture arguments (per test mode), e.g.
#			"--option=torture:localdir=@SHARE@"; @SHARE@ becomes the
#			local path of the server's share (usmbd's or Samba's)
#	USMBD		the usmbd binary (t/integ/lib.sh's default otherwise)
set -u
. "$(dirname "$0")/../integ/lib.sh"

SERVERS=${COMPARE_SERVERS:-usmbd samba}
SAMBA_REF=$ROOT/scripts/samba-ref.sh
case ${COMPARE_TORTURE:-417} in
417|4.17)
	TORTURE=(smbtorture)
	OUT=${OUT:-/tmp/usmbd-compare} ;;
422|4.22)
	TORTURE=("$SAMBA_REF" run smbtorture)
	OUT=${OUT:-/tmp/usmbd-compare-422} ;;
*)	echo "COMPARE_TORTURE is 417 or 422, not $COMPARE_TORTURE" >&2; exit 1 ;;
esac
for srv in $SERVERS; do
	case $srv in usmbd|samba|samba422) ;;
	*) echo "unknown server $srv (usmbd, samba, samba422)" >&2; exit 1 ;;
	esac
done
# samba422 or smbtorture 4.22: the unpacked root, fetched once (network).
if [[ " $SERVERS " == *" samba422 "* ]] || [ "${TORTURE[0]}" != smbtorture ]; then
	"$SAMBA_REF" install >/dev/null || exit 1
fi
TMO=${COMPARE_TIMEOUT:-60}
MODE=${COMPARE_MODE:-test}
if [ "${1:-}" = --per-suite ]; then
	MODE=suite
	shift
fi
case $MODE in
test)
	DEFAULT_SUITES="smb2.connect smb2.session smb2.session-require-signing
	    smb2.session-id smb2.tcon smb2.compound smb2.compound_find
	    smb2.compound_async smb2.credits smb2.secleak smb2.maxfid" ;;
suite)
	[ "${TORTURE[0]}" = smbtorture ] || {
		echo "COMPARE_TORTURE=422 is for the per test mode" >&2; exit 1; }
	DEFAULT_SUITES="smb2.read smb2.rw smb2.create smb2.getinfo
	    smb2.setinfo smb2.dir smb2.rename smb2.delete-on-close-perms
	    smb2.ioctl smb2.streams smb2.timestamps" ;;
*)	echo "COMPARE_MODE is test or suite, not $MODE" >&2; exit 1 ;;
esac
SUITES=${*:-$DEFAULT_SUITES}
mkdir -p "$OUT"
command -v smbtorture >/dev/null || { echo "smbtorture is not installed" >&2; exit 1; }
# The table's columns: each server run now or before (its results in $OUT).
COLS=
for c in usmbd samba samba422; do
	if [[ " $SERVERS " == *" $c "* ]] || [ -s "$OUT/$c.res" ]; then
		COLS="$COLS $c"
	fi
done

# The runnable names: `smbtorture --list` prints NAME.TCASE, NAME being the
# suite path plus the test (smb2.session.reauth1.reauth1 -> smb2.session.reauth1).
compare_tests() {
	local s

	for s in $SUITES; do
		"${TORTURE[@]}" --list "$s" 2>/dev/null |
		    awk -v s="$s" 'index($0, s) == 1 && (length($0) == length(s) ||
			substr($0, length(s) + 1, 1) == ".")' |
		    sed -E 's/\.[^.]*$//' | awk '!seen[$0]++' |
		    { if [ -n "${COMPARE_EXCLUDE:-}" ]; then
			grep -v -E -- "$COMPARE_EXCLUDE"; else cat; fi; }
	done
}
TESTS=()
if [ "$MODE" = test ]; then
	mapfile -t TESTS < <(compare_tests)
	[ ${#TESTS[@]} -gt 0 ] || { echo "no test matches: $SUITES" >&2; exit 1; }
fi

# compare_xattr_check DIR: the file system of DIR keeps the xattrs the
# Samba share needs: security.NTACL (acl_xattr, set as root), user.* (DOS
# attributes, streams_xattr).
compare_xattr_check() {
	local f=$1/.xattr-probe n

	: >"$f" || return 1
	for n in security.NTACL user.DOSATTRIB; do
		setfattr -n "$n" -v 0x00 "$f" 2>/dev/null || {
			echo "$1: the file system refuses the $n xattr, which Samba's acl_xattr/streams_xattr share needs" >&2
			rm -f "$f"
			return 1
		}
	done
	rm -f "$f"
}

# compare_samba_start NAME: a private smbd on a free port, state under
# $T/NAME; NAME is samba (Debian 12's /usr/sbin/smbd) or samba422 (the
# root of scripts/samba-ref.sh, run in its own mount namespace).  Sets
# SPORTS[NAME] and SMBD_PIDS[NAME].
declare -A SPORTS=() SMBD_PIDS=()
compare_samba_start() {
	local name=$1 d=$T/$1 i u m port moddir pid smbd=() smbpasswd=()

	case $name in
	samba)
		smbd=(/usr/sbin/smbd) smbpasswd=(smbpasswd)
		moddir=$(compgen -G '/usr/lib/*/samba/vfs' | head -1) ;;
	samba422)
		smbd=("$SAMBA_REF" run smbd) smbpasswd=("$SAMBA_REF" run smbpasswd)
		moddir=$(compgen -G "$("$SAMBA_REF" path)/usr/lib/*/samba/vfs" | head -1) ;;
	esac
	# What a Windows-facing administrator runs: NT ACLs and streams in
	# xattrs (samba-vfs-modules).  Without them Samba is not the reference
	# the table claims: refuse to run rather than fall back.
	for m in acl_xattr streams_xattr; do
		[ -n "$moddir" ] && [ -e "$moddir/$m.so" ] || {
			echo "$name: Samba's $m module is missing: install samba-vfs-modules (scripts/install-deps.sh)" >&2
			return 1
		}
	done

	port=$(integ_free_port)
	mkdir -p "$d/share" "$d/run" "$d/lock" "$d/state" "$d/cache" "$d/private"
	chmod 1777 "$d/share"
	compare_xattr_check "$d/share" || return 1
	sed -e "s|@PORT@|$port|; s|@DIR@|$d|g; s|@LOG@|$d/smbd.log|" \
	    -e "s|@LOGLEVEL@|0|; s|@SHARE@|$d/share|" \
	    "$ROOT/t/compat/samba.conf.in" >"$d/smb.conf" || return 1
	for u in "alice:$ALICE_PW" "bob:$BOB_PW"; do
		printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
		    "${smbpasswd[@]}" -c "$d/smb.conf" -a -s "${u%%:*}" >/dev/null || return 1
	done
	setsid "${smbd[@]}" -F --no-process-group -s "$d/smb.conf" \
	    </dev/null >"$d/smbd.out" 2>&1 &
	pid=$!
	SMBD_PIDS[$name]=$pid
	SPORTS[$name]=$port
	for i in $(seq 1 50); do
		timeout 10 smbclient -L 127.0.0.1 -p "$port" -U "alice%$ALICE_PW" \
		    >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	echo "$name: smbd did not come up:" >&2
	tail -5 "$d/smbd.out" "$d/smbd.log" >&2 2>/dev/null
	return 1
}

# compare_samba_stop [NAME...]: stop those (default: every one started).
compare_samba_stop() {
	local name pid pids names=("$@")

	[ $# -gt 0 ] || names=("${!SMBD_PIDS[@]}")
	for name in "${names[@]}"; do
		pid=${SMBD_PIDS[$name]:-}
		[ -n "$pid" ] || continue
		kill -TERM "$pid" 2>/dev/null
		integ_wait_exit "$pid" 5 || kill -KILL "$pid" 2>/dev/null
		unset "SMBD_PIDS[$name]"
		# smbd starts samba-dcerpcd (and its rpcd_* workers) on demand,
		# in their own process group, and they outlive smbd: stop the
		# ones of this instance, found by its private smb.conf path.
		pids=$(pgrep -f -- "--configfile=$T/$name/smb.conf( |$)")
		[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	done
	return 0
}

# compare_run SERVER PORT: every test against 127.0.0.1:PORT/share; one
# "NAME<TAB>RESULT SECONDS" line per test into $OUT/SERVER.res.new, where RESULT
# is success, failure, skip or none (no result: timeout or crash).
compare_run() {
	local srv=$1 port=$2 t r t0 t1 o opts=() sp

	sp=$SHARE
	[ "$srv" = usmbd ] || sp=$T/$srv/share
	[ -n "${COMPARE_OPTS:-}" ] && read -r -a opts <<<"${COMPARE_OPTS//@SHARE@/$sp}"
	mkdir -p "$OUT/$srv"
	: >"$OUT/$srv.res.new"
	for t in "${TESTS[@]}"; do
		o=$OUT/$srv/$t.out
		t0=$(date +%s.%N)
		timeout --kill-after=5 "$TMO" "${TORTURE[@]}" "//127.0.0.1/share" \
		    -p "$port" -U "alice%$ALICE_PW" \
		    --target=samba3 \
		    --option=torture:sharedelay=100000 \
		    --option=torture:writetimeupdatedelay=500000 \
		    --option=torture:user2name=bob \
		    --option=torture:user2password="$BOB_PW" \
		    "${opts[@]}" \
		    --fullname --format=subunit "$t" </dev/null >"$o" 2>&1
		t1=$(date +%s.%N)
		# subunit v1: "success: NAME", "failure: NAME [", "skip: NAME"...
		# (names may hold spaces: smb2.charset.Testing wide-a)
		r=$(sed -n -E 's/^(success|successful|failure|fail|error|skip|xfail): (.*)$/\1\t\2/p' "$o" |
		    sed -E 's/ \[$//' |
		    awk -F'\t' -v n="$t" '$2 == n { r = $1 } END { print r }')
		case $r in
		successful) r=success ;; fail|error) r=failure ;; '') r=none ;;
		esac
		printf '%s\t%s %.1f\n' "$t" "$r" "$(echo "$t1 - $t0" | bc)" >>"$OUT/$srv.res.new"
	done
}

# Merge new results into SERVER.res (tests run now replace older lines).
compare_merge() {
	local srv=$1

	touch "$OUT/$srv.res"
	awk -F'\t' 'NR == FNR { n[$1] = $0; next } !($1 in n) { print } END { for (k in n) print n[k] }' \
	    "$OUT/$srv.res.new" "$OUT/$srv.res" | sort >"$OUT/$srv.res.tmp"
	mv "$OUT/$srv.res.tmp" "$OUT/$srv.res"
	rm -f "$OUT/$srv.res.new"
}

# compare_suites: the per-suite mode, each server through t/integ/torture.sh
# (which starts its own usmbd), one after the other.
compare_suites() {
	local srv s c line

	for srv in $SERVERS; do
		case $srv in
		samba|samba422)
			compare_users
			compare_samba_start "$srv" || exit 1
			TORTURE_SERVER=127.0.0.1:${SPORTS[$srv]}/share TORTURE_SUITES="$SUITES" \
			    bash "$ROOT/t/integ/torture.sh" >"$OUT/$srv.txt" 2>&1
			compare_samba_stop "$srv" ;;
		usmbd)
			TORTURE_SUITES="$SUITES" \
			    bash "$ROOT/t/integ/torture.sh" >"$OUT/usmbd.txt" 2>&1 ;;
		esac
	done
	line=$(printf '%-30s' suite)
	for c in $COLS; do line+=$(printf ' %-22s' "$c pass/fail/skip"); done
	echo "$line"
	for s in $SUITES; do
		line=$(printf '%-30s' "$s")
		for c in $COLS; do
			line+=$(printf ' %-22s' "$(compare_suite_counts "$OUT/$c.txt" "$s" | grep . || echo '?')")
		done
		echo "$line"
	done
}

# compare_suite_counts FILE SUITE: "passed/failed/skipped" from torture.sh's
# "suite NAME: N passed, N failed, N skipped" line.
compare_suite_counts() {
	grep "^suite $2:" "$1" 2>/dev/null |
	    sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1\/\2\/\3/'
}

# The Samba side needs the Unix users (integ_users makes them for usmbd).
compare_users() {
	id alice >/dev/null 2>&1 || useradd -m -s /bin/bash alice
	id bob >/dev/null 2>&1 || useradd -m -s /bin/bash bob
}

# compare_group TEST: the line of the totals TEST counts in: the suite
# asked for that holds it, or, for a whole family asked for by one word
# ("smb2"), its first two dotted parts (smb2.lease).
compare_group() {
	local s

	for s in $SUITES; do
		case $1 in "$s"|"$s".*) ;; *) continue ;; esac
		case $s in *.*) echo "$s" ;; *) cut -d. -f1-2 <<<"$1" ;; esac
		return
	done
}

# compare_groups: every line of the totals, in order.
compare_groups() {
	local s t

	for s in $SUITES; do
		case $s in
		*.*) echo "$s" ;;
		*) for t in "${TESTS[@]}"; do
			case $t in "$s".*) cut -d. -f1-2 <<<"$t" ;; esac
		   done | sort -u ;;
		esac
	done
}

integ_init
trap 'compare_samba_stop; integ_cleanup' EXIT
if [ "$MODE" = suite ]; then
	compare_suites
	exit 0
fi
pids=()
for srv in $SERVERS; do
	case $srv in
	usmbd)
		# as t/integ/torture.sh: smb2.session's anonymous logins reach
		# the worker (and its refusal) instead of the gate's
		integ_conf "restrict anonymous = 0"
		integ_users
		integ_start || exit 1
		compare_run usmbd "$PORT" &
		pids+=($!) ;;
	samba|samba422)
		compare_users
		compare_samba_start "$srv" || exit 1
		compare_run "$srv" "${SPORTS[$srv]}" &
		pids+=($!) ;;
	esac
done
for p in "${pids[@]}"; do wait "$p"; done
for srv in $SERVERS; do compare_merge "$srv"; done

# The table: only the tests asked for this time.
[ "${TORTURE[0]}" = smbtorture ] || echo "client: $("${TORTURE[@]}" --version 2>&1 | head -1)"
line=$(printf '%-62s' test)
for c in $COLS; do line+=$(printf ' %-14s' "$c"); done
echo "$line"
declare -A tot=() res=()
for t in "${TESTS[@]}"; do
	line=$(printf '%-62s' "$t")
	for c in $COLS; do
		res[$c]=$(awk -F'\t' -v n="$t" '$1 == n { split($2, a, " "); printf "%s %ss", a[1], a[2] }' "$OUT/$c.res" 2>/dev/null)
		line+=$(printf ' %-14s' "${res[$c]:--}")
	done
	echo "$line"
	g=$(compare_group "$t")
	[ -n "$g" ] || continue
	tot[$g.n]=$(( ${tot[$g.n]:-0} + 1 ))
	for c in $COLS; do
		[ "${res[$c]%% *}" = success ] && tot[$g.$c]=$(( ${tot[$g.$c]:-0} + 1 ))
	done
done
echo
line=$(printf '%-34s %8s' suite tests)
for c in $COLS; do line+=$(printf ' %8s' "$c"); done
echo "$line"
declare -A all=()
for s in $(compare_groups); do
	line=$(printf '%-34s %8s' "$s" "${tot[$s.n]:-0}")
	all[n]=$(( ${all[n]:-0} + ${tot[$s.n]:-0} ))
	for c in $COLS; do
		line+=$(printf ' %8s' "${tot[$s.$c]:-0}")
		all[$c]=$(( ${all[$c]:-0} + ${tot[$s.$c]:-0} ))
	done
	echo "$line"
done
line=$(printf '%-34s %8s' total "${all[n]:-0}")
for c in $COLS; do line+=$(printf ' %8s' "${all[$c]:-0}"); done
echo "$line"
