#!/bin/bash
# make lint (run by make check): the layer rules of HACKING.md ("Layers")
# checked from outside.  An #include that breaks them is an error (exit
# status 1); a function over 200 lines or a source file over 1,000 lines
# is a warning (a person should be able to hold a function in their head,
# and a file has one job).  Usage: scripts/lint.sh [FILE...] (default:
# every .c and .h under proto/ shm/ vfs/ worker/ daemon/).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

FUNC_MAX=${LINT_FUNC_MAX:-200}
FILE_MAX=${LINT_FILE_MAX:-1000}

# The basics every layer may use (HACKING.md, "Layers").
BASICS="proto/cur.h proto/unicode.h"
# daemon/ files linked into and used by every process of the daemon:
# configuration, logging and the formats of the messages between processes.
SHARED_DAEMON="daemon/conf.h daemon/log.h daemon/msg.h daemon/authmsg.h daemon/unlinkmsg.h daemon/statemsg.h daemon/krbmsg.h daemon/admmsg.h"
# What the master's own files may take from worker/: the roles main.c
# starts, and the formats of the control messages workers answer.
MASTER_FROM_WORKER="worker/worker.h worker/ctlmsg.h worker/metrics.h"

in_list() {
	local x=$1 y
	shift
	for y in "$@"; do
		[ "$x" = "$y" ] && return 0
	done
	return 1
}

# Is daemon/NAME (a .c or .h) one of the files every process shares?
daemon_shared() {
	case ${1#daemon/} in
	conf.[ch] | conf_*.[ch] | log.[ch] | msg.[ch] | authmsg.[ch] | \
	    unlinkmsg.[ch] | statemsg.[ch] | krbmsg.[ch] | admmsg.[ch])
		return 0 ;;
	esac
	return 1
}

# The rule for FILE including "INC": sets WHY to why it is refused, or to "".
include_refused() {
	local file=$1 inc=$2 from=${1%%/*} to=${2%%/*}

	WHY=

	[ "$from" = "$to" ] && [ "$from" != daemon ] && return 0
	case $from in
	proto)
		WHY="proto/ includes only proto/ (protocol codecs are the bottom layer)" ;;
	shm | vfs)
		in_list "$inc" $BASICS $SHARED_DAEMON ||
		    WHY="$from/ includes only $from/, the basics ($BASICS) and the shared daemon/ files" ;;
	worker)
		case $to in
		proto | shm | vfs) ;;
		daemon)
			in_list "$inc" $SHARED_DAEMON ||
			    WHY="worker/ takes from daemon/ only what every process shares ($SHARED_DAEMON), not the master's own files" ;;
		*)
			WHY="worker/ includes proto/ shm/ vfs/ worker/ and the shared daemon/ files" ;;
		esac ;;
	daemon)
		if daemon_shared "$file"; then
			case $inc in
			proto/*) ;;
			daemon/conf_int.h) ;;
			daemon/*)
				in_list "$inc" $SHARED_DAEMON ||
				    WHY="$file is shared by every process: it may not include the master's own $inc" ;;
			*)
				WHY="$file is shared by every process: it includes only proto/ and the shared daemon/ files" ;;
			esac
			return 0
		fi
		case $to in
		daemon | proto | shm) ;;
		worker)
			in_list "$inc" $MASTER_FROM_WORKER ||
			    WHY="the master never parses SMB: daemon/ takes from worker/ only $MASTER_FROM_WORKER" ;;
		*)
			WHY="daemon/ includes daemon/ proto/ shm/ and from worker/ only $MASTER_FROM_WORKER" ;;
		esac ;;
	esac
	return 0
}

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(ls proto/*.[ch] shm/*.[ch] vfs/*.[ch] worker/*.[ch] \
	    daemon/*.[ch] 2>/dev/null)
fi

errors=0
warnings=0
# Every #include "dir/file.h" as FILE:LINE:INC, in one pass over the files.
while IFS=: read -r f line inc; do
	include_refused "$f" "$inc"
	if [ -n "$WHY" ]; then
		echo "lint: $f:$line: #include \"$inc\": $WHY"
		errors=$((errors + 1))
	fi
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}" |
    sed 's/^\([^:]*\):\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2:\3/')
# LMDB stays behind shm/ (and the master's private passdb).
while IFS=: read -r f line; do
	case $f in
	shm/* | daemon/passdb.c) ;;
	*)
		echo "lint: $f:$line: #include <lmdb.h>: LMDB types stay inside shm/ (and daemon/passdb.c)"
		errors=$((errors + 1)) ;;
	esac
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*<lmdb.h>' "${files[@]}" |
    cut -d: -f1,2)
# Sizes of .c files and of their functions, in the house style: the name
# at column 0, "{" and "}" alone at column 0.
while read -r kind f a b; do
	if [ "$kind" = file ]; then
		echo "lint: warning: $f is $a lines (over $FILE_MAX: two jobs?)"
	else
		echo "lint: warning: $f:$a: $b() is $kind lines (over $FUNC_MAX)"
	fi
	warnings=$((warnings + 1))
done < <(printf '%s\n' "${files[@]}" | grep '\.c$' | xargs awk -v fmax="$FILE_MAX" \
    -v max="$FUNC_MAX" '
	FNR == 1 && NR > 1 && last_n > fmax { print "file", last, last_n }
	FNR == 1 { open = 0 }
	{ last = FILENAME; last_n = FNR }
	/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name); at = FNR }
	/^\{$/ { open = FNR }
	/^\}$/ {
		if (open && FNR - open + 1 > max)
			print FNR - open + 1, FILENAME, at, name
		open = 0
	}
	END { if (last_n > fmax) print "file", last, last_n }
    ')

echo "lint: ${#files[@]} files, $errors errors, $warnings warnings"
[ "$errors" -eq 0 ]
