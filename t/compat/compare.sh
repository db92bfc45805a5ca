#!/usr/bin/env bash
# Protocol-layer conformance: runs smbtorture against usmbd and against
# Debian's Samba (a private smbd on another free loopback port, users alice
# and bob, every directory in a temp dir; `vfs objects = acl_xattr
# streams_xattr` from samba-vfs-modules, as a Windows-facing share is
# configured: the script refuses to run without them) and prints the two
# side by side.  Not part of `make test`: a tool for growing
# t/compat/torture.list and t/compat/torture.xfail.
#
#	t/compat/compare.sh [SUITE|TEST ...]		per test
#	t/compat/compare.sh --per-suite [SUITE ...]	per suite
#
# Per test (the default): each test runs in its own smbtorture invocation
# (with a time limit), so a test that hangs or kills its connection costs
# only itself, and the time shown is that test's own.  Both servers run at
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
#	COMPARE_SERVERS	"usmbd samba" (default); name one to rerun only that
#			side; the other side's last results are read from $OUT
#	COMPARE_TIMEOUT	seconds per test (default 60; per suite mode uses
#			TORTURE_TIMEOUT, see t/integ/torture.sh)
#	COMPARE_OPTS	extra smbtorture arguments (per test mode), e.g.
#			"--option=torture:localdir=@SHARE@"; @SHARE@ becomes the
#			local path of the server's share (usmbd's or Samba's)
#	USMBD		the usmbd binary (t/integ/lib.sh's default otherwise)
set -u
. "$(dirname "$0")/../integ/lib.sh"

OUT=${OUT:-/tmp/usmbd-compare}
SERVERS=${COMPARE_SERVERS:-usmbd samba}
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
	DEFAULT_SUITES="smb2.read smb2.rw smb2.create smb2.getinfo
	    smb2.setinfo smb2.dir smb2.rename smb2.delete-on-close-perms
	    smb2.ioctl smb2.streams smb2.timestamps" ;;
*)	echo "COMPARE_MODE is test or suite, not $MODE" >&2; exit 1 ;;
esac
SUITES=${*:-$DEFAULT_SUITES}
mkdir -p "$OUT"
command -v smbtorture >/dev/null || { echo "smbtorture is not installed" >&2; exit 1; }

# The runnable names: `smbtorture --list` prints NAME.TCASE, NAME being the
# suite path plus the test (smb2.session.reauth1.reauth1 -> smb2.session.reauth1).
compare_tests() {
	local s

	for s in $SUITES; do
		smbtorture --list "$s" 2>/dev/null |
		    awk -v s="$s" 'index($0, s) == 1 && (length($0) == length(s) ||
			substr($0, length(s) + 1, 1) == ".")' |
		    sed -E 's/\.[^.]*$//' | awk '!seen[$0]++'
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

# compare_samba_start: a private smbd on a free port, state under $T/samba.
SMBD_PID=
compare_samba_start() {
	local d=$T/samba i u m

	# What a Windows-facing administrator runs: NT ACLs and streams in
	# xattrs (samba-vfs-modules).  Without them Samba is not the reference
	# the table claims: refuse to run rather than fall back.
	for m in acl_xattr streams_xattr; do
		compgen -G "/usr/lib/*/samba/vfs/$m.so" >/dev/null || {
			echo "Samba's $m module is missing: install samba-vfs-modules (scripts/install-deps.sh)" >&2
			return 1
		}
	done

	SPORT=$(integ_free_port)
	mkdir -p "$d/share" "$d/run" "$d/lock" "$d/state" "$d/cache" "$d/private"
	chmod 1777 "$d/share"
	compare_xattr_check "$d/share" || return 1
	cat >"$d/smb.conf" <<EOF
[global]
	smb ports = $SPORT
	interfaces = 127.0.0.1
	bind interfaces only = yes
	disable netbios = yes
	server role = standalone server
	workgroup = WORKGROUP
	pid directory = $d/run
	lock directory = $d/lock
	state directory = $d/state
	cache directory = $d/cache
	private dir = $d/private
	ncalrpc dir = $d/run/ncalrpc
	passdb backend = tdbsam
	log file = $d/smbd.log
	log level = 0
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
	map to guest = never
	server min protocol = SMB2_02
	ea support = yes
	store dos attributes = yes
	vfs objects = acl_xattr streams_xattr

[share]
	path = $d/share
	read only = no
EOF
	for u in "alice:$ALICE_PW" "bob:$BOB_PW"; do
		printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
		    smbpasswd -c "$d/smb.conf" -a -s "${u%%:*}" >/dev/null || return 1
	done
	setsid /usr/sbin/smbd -F --no-process-group -s "$d/smb.conf" \
	    </dev/null >"$d/smbd.out" 2>&1 &
	SMBD_PID=$!
	for i in $(seq 1 50); do
		timeout 10 smbclient -L 127.0.0.1 -p "$SPORT" -U "alice%$ALICE_PW" \
		    >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "smbd did not come up" >&2
	return 1
}

compare_samba_stop() {
	local pids

	[ -n "$SMBD_PID" ] || return 0
	kill -TERM "$SMBD_PID" 2>/dev/null
	integ_wait_exit "$SMBD_PID" 5 || kill -KILL "$SMBD_PID" 2>/dev/null
	SMBD_PID=
	# smbd starts samba-dcerpcd (and its rpcd_* workers) on demand, in
	# their own process group, and they outlive smbd: stop the ones of
	# this instance, found by its private smb.conf path.
	pids=$(pgrep -f -- "--configfile=$T/samba/smb.conf( |$)")
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	return 0
}

# compare_run SERVER PORT: every test against 127.0.0.1:PORT/share; one
# "NAME<TAB>RESULT SECONDS" line per test into $OUT/SERVER.res.new, where RESULT
# is success, failure, skip or none (no result: timeout or crash).
compare_run() {
	local srv=$1 port=$2 t r t0 t1 o opts=() sp

	sp=$SHARE
	[ "$srv" = samba ] && sp=$T/samba/share
	[ -n "${COMPARE_OPTS:-}" ] && read -r -a opts <<<"${COMPARE_OPTS//@SHARE@/$sp}"
	mkdir -p "$OUT/$srv"
	: >"$OUT/$srv.res.new"
	for t in "${TESTS[@]}"; do
		o=$OUT/$srv/$t.out
		t0=$(date +%s.%N)
		timeout --kill-after=5 "$TMO" smbtorture "//127.0.0.1/share" \
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

# compare_suites: the per-suite mode, both sides through t/integ/torture.sh
# (which starts its own usmbd), one after the other.
compare_suites() {
	local srv s u m

	for srv in $SERVERS; do
		case $srv in
		samba)
			compare_users
			compare_samba_start || exit 1
			TORTURE_SERVER=127.0.0.1:$SPORT/share TORTURE_SUITES="$SUITES" \
			    bash "$ROOT/t/integ/torture.sh" >"$OUT/samba.txt" 2>&1
			compare_samba_stop ;;
		usmbd)
			TORTURE_SUITES="$SUITES" \
			    bash "$ROOT/t/integ/torture.sh" >"$OUT/usmbd.txt" 2>&1 ;;
		*)	echo "unknown server $srv" >&2; exit 1 ;;
		esac
	done
	printf '%-30s %-22s %-22s\n' suite "usmbd pass/fail/skip" "samba pass/fail/skip"
	for s in $SUITES; do
		u=$(compare_suite_counts "$OUT/usmbd.txt" "$s")
		m=$(compare_suite_counts "$OUT/samba.txt" "$s")
		printf '%-30s %-22s %-22s\n' "$s" "${u:-?}" "${m:-?}"
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
		integ_conf
		integ_users
		integ_start || exit 1
		compare_run usmbd "$PORT" &
		pids+=($!) ;;
	samba)
		compare_users
		compare_samba_start || exit 1
		compare_run samba "$SPORT" &
		pids+=($!) ;;
	*)	echo "unknown server $srv" >&2; exit 1 ;;
	esac
done
for p in "${pids[@]}"; do wait "$p"; done
for srv in $SERVERS; do compare_merge "$srv"; done

# The table: only the tests asked for this time.
printf '%-62s %-14s %-14s\n' test usmbd samba
declare -A tot=()
for t in "${TESTS[@]}"; do
	u=$(awk -F'\t' -v n="$t" '$1 == n { split($2, a, " "); printf "%s %ss", a[1], a[2] }' "$OUT/usmbd.res" 2>/dev/null)
	m=$(awk -F'\t' -v n="$t" '$1 == n { split($2, a, " "); printf "%s %ss", a[1], a[2] }' "$OUT/samba.res" 2>/dev/null)
	printf '%-62s %-14s %-14s\n' "$t" "${u:--}" "${m:--}"
	for s in $SUITES; do
		case $t in "$s"|"$s".*) ;; *) continue ;; esac
		tot[$s.n]=$(( ${tot[$s.n]:-0} + 1 ))
		[ "${u%% *}" = success ] && tot[$s.u]=$(( ${tot[$s.u]:-0} + 1 ))
		[ "${m%% *}" = success ] && tot[$s.m]=$(( ${tot[$s.m]:-0} + 1 ))
		break
	done
done
echo
printf '%-34s %8s %8s %8s\n' suite tests usmbd samba
au=0 am=0 an=0
for s in $SUITES; do
	printf '%-34s %8s %8s %8s\n' "$s" "${tot[$s.n]:-0}" "${tot[$s.u]:-0}" "${tot[$s.m]:-0}"
	an=$((an + ${tot[$s.n]:-0})) au=$((au + ${tot[$s.u]:-0})) am=$((am + ${tot[$s.m]:-0}))
done
printf '%-34s %8s %8s %8s\n' total "$an" "$au" "$am"
