# Shared helpers for the integration scripts in t/integ/.  Source it:
#
#	. "$(dirname "$0")/lib.sh"
#	integ_init			# temp dir, free port, cleanup trap
#	integ_conf			# write $CONF (extra [global] lines: arguments)
#	integ_users			# Unix users alice, bob + passdb entries
#	integ_start			# usmbd -F in the background, waits for ping
#	check "ping answers" "$USMBCTL" -s "$CONF" ping
#	finish				# prints "N passed, N failed", exit status
#
# Variables set (read them, do not change them):
#	ROOT		the source tree (parent of t/)
#	USMBD USMBCTL	the binaries under build/ (USMBD may be overridden by
#			the environment, e.g. USMBD=build/asan/usmbd)
#	T		the temp dir of this run (mode 0755, removed at exit;
#			kept when INTEG_KEEP=1)
#	PORT		a free TCP port on 127.0.0.1
#	CONF		$T/usmbd.conf
#	SHARE		$T/share, the path of the share [share] (mode 1777)
#	LOG		$T/usmbd.log: the server's standard error
#	SERVER_PID	pid of the running server, empty when none
#	ALICE_PW BOB_PW	passwords given to alice and bob (alicepw1, bobpw1)
#	PYTHON		the Debian python3 (/usr/bin/python3, which has
#			impacket), whatever python3 comes first in PATH
#
# Functions:
#	integ_init			make $T, pick $PORT, install the EXIT trap,
#					create the `usmbd` and `usmbd-state` system
#					accounts and the `usmbd-state` group when
#					absent.  Must run as root.
#	integ_accounts			the Unix accounts scripts make when
#					absent (the system ones, alice, bob),
#					made once by scripts/run-integ.sh before
#					it runs scripts side by side
#	integ_free_port			print a free 127.0.0.1 TCP port
#	integ_conf [LINE...]		write $CONF: [global] with smb ports,
#					interfaces = 127.0.0.1, pid/lock/private
#					dirs under $T, log level ($INTEG_LOG_LEVEL,
#					default 3), each LINE as an extra [global]
#					line, then $INTEG_GLOBAL (extra global lines,
#					newline separated), a writable [share] at
#					$SHARE, then $INTEG_SHARES (extra sections)
#	integ_user NAME PASSWORD	useradd NAME if absent; add it to the passdb
#	integ_users			integ_user alice alicepw1; integ_user bob bobpw1
#	integ_start [ARG...]		start "$USMBD" -F -s $CONF ARG... in the
#					background (stderr to $LOG) and wait up to
#					10 s for `usmbctl ping`; returns 1 (and
#					prints the log) when it does not come up
#	integ_ping			usmbctl ping, quiet; its exit status
#	integ_stop			SIGTERM the server and wait up to 10 s
#					(SIGKILL after); returns its exit status
#	integ_wait_exit PID SECS	wait for a (non-child) PID to vanish;
#					0 if it did within SECS
#	integ_status_json		usmbctl status --json of this server
#	integ_worker_of USER		pid of USER's worker of this server (not
#					stopping), from integ_status_json; empty
#					when none (other test runs may serve USER
#					too: never pick by name)
#	samba_start DIR PORT SHARES [USER:PASSWORD...]
#					Debian's smbd as the reference: in DIR
#					(its dirs, smb.conf, smbd.log, smbd.out)
#					t/compat/samba.conf.in on 127.0.0.1:PORT
#					with [share] at $SHARE and the sections
#					SHARES; each USER (default alice and bob,
#					their passwords) in its passdb; the lines
#					of $SAMBA_GLOBAL go in [global] (not in a
#					pipeline: it sets SAMBA_PID, SAMBA_DIR).
#					SAMBA_PID is smbd's pid; 0 once smbclient
#					-L answers as the first user, 1 otherwise.
#					SAMBA_SMBD: another smbd command (words),
#					e.g. "scripts/samba-ref.sh run smbd" (4.22)
#	samba_stop			stop it and samba-dcerpcd with its rpcd_*
#					(they outlive smbd); integ_cleanup does
#	ok DESC / fail DESC		count a pass / a failure, print one line
#	check DESC CMD...		run CMD (output to $T/check.out); ok if it
#					exits 0, else fail and show its output
#	check_fails DESC CMD...		the opposite: ok if CMD exits non-zero
#	finish				print exactly one line "N passed, N failed"
#					and exit 1 if anything failed (0 else)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
USMBD=${USMBD:-$ROOT/build/usmbd}
USMBCTL=${USMBCTL:-$ROOT/build/usmbctl}
case $USMBD in /*) ;; *) USMBD=$ROOT/$USMBD ;; esac
case $USMBCTL in /*) ;; *) USMBCTL=$ROOT/$USMBCTL ;; esac
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
ALICE_PW=alicepw1
BOB_PW=bobpw1
T=
PORT=
CONF=
SHARE=
LOG=
SERVER_PID=
INTEG_PASSED=0
INTEG_FAILED=0

integ_cleanup() {
	local rc=$?

	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID" 2>/dev/null
		integ_wait_exit "$SERVER_PID" 5 || kill -KILL "$SERVER_PID" 2>/dev/null
	fi
	samba_stop
	if [ "$INTEG_FAILED" -gt 0 ] && [ -n "$LOG" ] && [ -s "$LOG" ]; then
		echo "--- last lines of $LOG ---" >&2
		tail -n 40 "$LOG" >&2
	fi
	if [ -n "$T" ] && [ -d "$T" ]; then
		if [ "${INTEG_KEEP:-0}" = 1 ]; then
			echo "kept $T" >&2
		else
			rm -rf "$T"
		fi
	fi
	exit $rc
}

integ_init() {
	if [ "$(id -u)" != 0 ]; then
		echo "$0: integration tests must run as root" >&2
		exit 1
	fi
	T=$(mktemp -d /tmp/usmbd-integ.XXXXXX) || exit 1
	chmod 0755 "$T"
	trap integ_cleanup EXIT
	trap 'exit 130' INT TERM
	PORT=$(integ_free_port) || { echo "no free port" >&2; exit 1; }
	CONF=$T/usmbd.conf
	SHARE=$T/share
	LOG=$T/usmbd.log
	mkdir -p "$SHARE"
	chmod 1777 "$SHARE"
	integ_system_accounts
}

# The gates drop to `usmbd`; workers join `usmbd-state`; the state
# process runs as `usmbd-state` (DESIGN.md).
integ_system_accounts() {
	getent group usmbd-state >/dev/null || groupadd -r usmbd-state
	id usmbd >/dev/null 2>&1 ||
	    useradd -r -M -d /nonexistent -s /usr/sbin/nologin usmbd
	id usmbd-state >/dev/null 2>&1 ||
	    useradd -r -M -d /nonexistent -s /usr/sbin/nologin -g usmbd-state \
	    usmbd-state
}

# The Unix accounts every script may make (scripts/run-integ.sh makes
# them before it runs two scripts at once): the system ones, alice, bob.
integ_accounts() {
	local u

	integ_system_accounts || return 1
	for u in alice bob; do
		id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u" ||
		    return 1
	done
}

# strace_tally FILE: turns an `strace -f -s 0 -o FILE` trace, in place,
# into strace -c's table (calls in the fourth column, errors in the fifth,
# the call's name last, a "total" line).  Counted from a trace because
# Debian 12's strace (6.1) leaves out of -c every call it has no name for,
# getxattrat and listxattrat (Linux 6.13) among them, which a worker makes
# per listed entry; they are named here by number (x86-64 and arm64).
strace_tally() {
	awk '
	match($0, /^[0-9]+ +[A-Za-z_][A-Za-z0-9_]*\(/) {
		name = substr($0, RSTART, RLENGTH - 1); sub(/^[0-9]+ +/, "", name)
		if (name == "syscall_0x1d0") name = "getxattrat"
		if (name == "syscall_0x1d1") name = "listxattrat"
		calls[name]++; total++
		if ($0 ~ /= -1 E[A-Z]+/) { errs[name]++; terr++ }
	}
	END {
		for (n in calls)
			printf "%6.2f %11.6f %11d %9d %9d %s\n", 0, 0, 0, calls[n], errs[n] + 0, n
		printf "%6.2f %11.6f %11d %9d %9d %s\n", 100, 0, 0, total + 0, terr + 0, "total"
	}' "$1" >"$1.tally" && mv "$1.tally" "$1"
}

integ_free_port() {
	"$PYTHON" - <<'EOF'
import socket
for _ in range(50):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    if p not in (445, 4450):
        print(p)
        break
EOF
}

integ_conf() {
	local line

	{
		echo "[global]"
		echo "	smb ports = $PORT"
		echo "	interfaces = 127.0.0.1"
		echo "	pid directory = $T/run"
		echo "	lock directory = $T/lock"
		echo "	private dir = $T/private"
		echo "	log level = ${INTEG_LOG_LEVEL:-3}"
		echo "	gate processes = ${INTEG_GATES:-2}"
		for line in "$@"; do
			echo "	$line"
		done
		[ -n "${INTEG_GLOBAL:-}" ] && printf '%s\n' "$INTEG_GLOBAL"
		echo
		echo "[share]"
		echo "	path = $SHARE"
		echo "	read only = no"
		echo "	comment = integration test share"
		[ -n "${INTEG_SHARES:-}" ] && printf '\n%s\n' "$INTEG_SHARES"
		true
	} >"$CONF"
}

integ_user() {
	local name=$1 pw=$2

	id "$name" >/dev/null 2>&1 ||
	    useradd -m -s /bin/bash "$name" || return 1
	printf '%s\n' "$pw" | "$USMBCTL" -s "$CONF" user add "$name" >/dev/null
}

integ_users() {
	integ_user alice "$ALICE_PW" || return 1
	integ_user bob "$BOB_PW" || return 1
}

samba_start() {
	local d=$1 port=$2 shares=$3 u i

	shift 3
	[ $# -gt 0 ] || set -- "alice:$ALICE_PW" "bob:$BOB_PW"
	SAMBA_DIR=$d
	mkdir -p "$d/run" "$d/lock" "$d/state" "$d/cache" "$d/private"
	{
		sed -e "s|@PORT@|$port|; s|@DIR@|$d|g; s|@LOG@|$d/smbd.log|" \
		    -e "s|@LOGLEVEL@|${SAMBA_LOG_LEVEL:-1}|; s|@SHARE@|$SHARE|" \
		    "$ROOT/t/compat/samba.conf.in" |
		    awk -v g="${SAMBA_GLOBAL:-}" \
		    '{ print } /^\[global\]$/ && g != "" { print g }'
		echo
		printf '%s\n' "$shares"
	} >"$d/smb.conf" || return 1
	for u in "$@"; do
		printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
		    smbpasswd -c "$d/smb.conf" -a -s "${u%%:*}" >/dev/null ||
		    return 1
	done
	# shellcheck disable=SC2086 # SAMBA_SMBD is a command and its words
	setsid ${SAMBA_SMBD:-/usr/sbin/smbd} -F --no-process-group -s "$d/smb.conf" \
	    </dev/null >"$d/smbd.out" 2>&1 &
	SAMBA_PID=$!
	for i in $(seq 1 50); do
		timeout 10 smbclient -L 127.0.0.1 -p "$port" -U "${1%%:*}%${1#*:}" \
		    >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

samba_stop() {
	local pids

	[ -n "${SAMBA_DIR:-}" ] || return 0
	if [ -n "${SAMBA_PID:-}" ] && kill -0 "$SAMBA_PID" 2>/dev/null; then
		kill -TERM "$SAMBA_PID" 2>/dev/null
		integ_wait_exit "$SAMBA_PID" 5 || kill -KILL "$SAMBA_PID" 2>/dev/null
	fi
	# smbd's children and samba-dcerpcd with its rpcd_* name the file
	pids=$(pgrep -f -- "$SAMBA_DIR/smb.conf( |$)")
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	SAMBA_DIR=
	SAMBA_PID=
	return 0
}

integ_ping() {
	"$USMBCTL" -s "$CONF" ping >/dev/null 2>&1
}

integ_start() {
	local i

	"$USMBD" -F -s "$CONF" "$@" 2>>"$LOG" &
	SERVER_PID=$!
	for i in $(seq 1 100); do
		integ_ping && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "usmbd did not come up; log:" >&2
	tail -n 40 "$LOG" >&2
	return 1
}

integ_wait_exit() {
	local pid=$1 secs=$2 i

	for i in $(seq 1 $((secs * 20))); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && return 1
	return 0
}

integ_stop() {
	local rc

	[ -n "$SERVER_PID" ] || return 0
	kill -TERM "$SERVER_PID" 2>/dev/null
	if ! integ_wait_exit "$SERVER_PID" 10; then
		kill -KILL "$SERVER_PID" 2>/dev/null
	fi
	wait "$SERVER_PID"
	rc=$?
	SERVER_PID=
	return $rc
}

integ_status_json() {
	"$USMBCTL" -s "$CONF" status --json 2>/dev/null
}

integ_worker_of() {
	integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "worker" and p.get("user") == sys.argv[1] \
       and not p.get("stopping"):
        print(p["pid"]); break' "$1"
}

# integ_until SECS CMD...: runs CMD every 0.2 s until it succeeds or SECS
# have passed; succeeds when CMD did.  For state that lands in batches
# (the passdb's failed-logon counts): a poll ends as soon as it is there.
integ_until() {
	local end=$((SECONDS + $1))

	shift
	while ! "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

ok() {
	INTEG_PASSED=$((INTEG_PASSED + 1))
	echo "ok   $*"
}

fail() {
	INTEG_FAILED=$((INTEG_FAILED + 1))
	echo "FAIL $*"
}

check() {
	local desc=$1

	shift
	if "$@" >"$T/check.out" 2>&1; then
		ok "$desc"
	else
		fail "$desc (exit $?: $*)"
		sed 's/^/     /' "$T/check.out" | tail -n 20
	fi
}

check_fails() {
	local desc=$1

	shift
	if "$@" >"$T/check.out" 2>&1; then
		fail "$desc (unexpectedly succeeded: $*)"
		sed 's/^/     /' "$T/check.out" | tail -n 20
	else
		ok "$desc"
	fi
}

# client_checks LABEL CMD...: runs a client that prints "ok ..." and
# "FAIL ..." lines and records each; a run that printed none, or that
# crashed (a Python traceback), fails under LABEL.
client_checks() {
	local label=$1 out line

	shift
	out=$("$@" 2>&1)
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		esac
	done <<<"$out"
	echo "$out" | grep -q '^\(ok\|FAIL\) ' ||
	    fail "$label ran no check: $(echo "$out" | tail -n 5)"
	echo "$out" | grep -q Traceback &&
	    fail "$label crashed: $(echo "$out" | tail -n 8)"
	return 0
}

finish() {
	echo "$INTEG_PASSED passed, $INTEG_FAILED failed"
	[ "$INTEG_FAILED" -eq 0 ] && exit 0
	exit 1
}
