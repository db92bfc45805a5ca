#!/bin/bash
# `max connections` of a share (Samba's key: tree connects to the share
# across the whole server), with impacket (t/integ/maxconn_client.py) and
# smbclient as alice and bob, whose trees live in two workers:
#  * with max connections = 2, alice's two tree connects hold the share
#    and bob's third is STATUS_INSUFFICIENT_RESOURCES (smbclient too); a
#    share without the key is not touched;
#  * a TREE_DISCONNECT frees a slot; so do a LOGOFF and a connection the
#    client drops;
#  * kill -9 of alice's worker: her trees are freed by the master's
#    cleanup (the state process's purge), timed;
#  * a reload raising the limit admits more; one lowering it keeps the
#    trees in use (still served) and refuses new ones.
#
# MAXCONN_SAMBA=1 runs the same steps against Debian's Samba afterwards
# (lines prefixed "samba:", not counted; HACKING.md, "Share keys", says
# what differs).
. "$(dirname "$0")/lib.sh"

integ_init
trap '' PIPE	# a holder killed on purpose leaves its fifo without a reader
apps() {	# apps DIR LIMIT
	cat <<EOS
[apps]
	path = $1
	read only = no
	max connections = $2
EOS
}
mkdir -p "$T/apps"
chmod 0777 "$T/apps"
echo hello >"$T/apps/hello.txt"
echo hello >"$SHARE/hello.txt"
INTEG_SHARES=$(apps "$T/apps" 2)
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

declare -A HFD HPID
# hold NAME PORT USER PW SHARE N: a client holding N trees, in the background
hold() {
	local n=$1 fd

	rm -f "$T/$n.in" "$T/$n.out"
	mkfifo "$T/$n.in"
	# without the other holders' ends of their fifos, or none ends
	(
		for fd in "${HFD[@]}"; do
			[ -n "$fd" ] && eval "exec $fd>&-"
		done
		exec "$PYTHON" "$ROOT/t/integ/maxconn_client.py" "$2" "$3" \
		    "$4" "$5" "$6"
	) <"$T/$n.in" >"$T/$n.out" 2>&1 &
	HPID[$n]=$!
	exec {fd}>"$T/$n.in"
	HFD[$n]=$fd
	wait_line "$n" '^ready$' 20
}
# wait_line NAME REGEX SECS: 0 once the client printed a matching line
wait_line() {
	local i

	for i in $(seq 1 $(($3 * 20))); do
		grep -qE "$2" "$T/$1.out" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
say() {	# say NAME COMMAND
	echo "$2" >&"${HFD[$1]}"
}
unhold() {	# unhold NAME: quit (logoff, close) and wait for it
	local fd=${HFD[$1]}

	[ -n "$fd" ] || return 0
	echo quit >&"$fd" 2>/dev/null
	exec {fd}>&-
	HFD[$1]=
	integ_wait_exit "${HPID[$1]}" 10 || kill -KILL "${HPID[$1]}"
	{ wait "${HPID[$1]}"; } 2>/dev/null
}
# try PORT USER PW SHARE: the status of one tree connect (disconnected after)
try() {
	"$PYTHON" "$ROOT/t/integ/maxconn_client.py" "$1" "$2" "$3" "$4" 1 \
	    </dev/null 2>&1 | sed -n 's/^tree 0 //p'
}
# until_ok SECS CMD...: polls CMD's output until it is OK; prints seconds
until_ok() {
	local secs=$1 t0 r

	shift
	t0=$(date +%s.%N)
	for _ in $(seq 1 $((secs * 10))); do
		r=$("$@")
		if [ "$r" = OK ]; then
			echo "$(date +%s.%N) $t0" | awk '{ printf "%.2f", $1 - $2 }'
			return 0
		fi
		sleep 0.1
	done
	echo "never ($r)"
	return 1
}

# steps PORT SERVER(usmbd|samba): prints "ok ..." / "FAIL ..." lines
steps() {
	local port=$1 srv=$2 r out secs w

	res() {	# res DESC WANT GOT
		if [ "$2" = "$3" ]; then echo "ok   $1"; else
			echo "FAIL $1 (want $2, got $3)"; fi
	}
	reconf() {	# reconf LIMIT: rewrite the limit and reload
		if [ "$srv" = usmbd ]; then
			sed -i "s/max connections = .*/max connections = $1/" \
			    "$CONF"
			"$USMBCTL" -s "$CONF" reload >/dev/null
		else
			sed -i "s/max connections = .*/max connections = $1/" \
			    "$SAMBA_DIR/smb.conf"
			smbcontrol -s "$SAMBA_DIR/smb.conf" all reload-config \
			    >/dev/null 2>&1
		fi
		sleep 0.5
	}

	hold A "$port" alice "$ALICE_PW" apps 2
	res "alice's first tree" "tree 0 OK" "$(grep '^tree 0' "$T/A.out")"
	res "alice's second tree" "tree 1 OK" "$(grep '^tree 1' "$T/A.out")"
	res "bob's third (another worker) refused" \
	    STATUS_INSUFFICIENT_RESOURCES \
	    "$(try "$port" bob "$BOB_PW" apps)"
	out=$(smbclient -p "$port" -U "bob%$BOB_PW" //127.0.0.1/apps -c ls 2>&1)
	res "smbclient's too" NT_STATUS_INSUFFICIENT_RESOURCES \
	    "$(echo "$out" | grep -o NT_STATUS_INSUFFICIENT_RESOURCES | head -1)"
	res "a share without the key connects" OK \
	    "$(try "$port" bob "$BOB_PW" share)"
	say A "drop 1"
	wait_line A '^dropped 1$' 10
	res "a tree disconnect frees a slot" OK \
	    "$(try "$port" bob "$BOB_PW" apps)"
	hold B "$port" bob "$BOB_PW" apps 1
	res "bob holds it again" "tree 0 OK" "$(grep '^tree 0' "$T/B.out")"
	res "alice's next refused" STATUS_INSUFFICIENT_RESOURCES \
	    "$(try "$port" alice "$ALICE_PW" apps)"

	# kill -9 of what serves alice's trees
	if [ "$srv" = usmbd ]; then
		w=$(integ_worker_of alice)
	else
		w=$(smbstatus -s "$SAMBA_DIR/smb.conf" -p 2>/dev/null |
		    awk '$2 == "alice" { print $1 }')
	fi
	if [ -n "$w" ]; then
		kill -KILL $w
		secs=$(until_ok 10 try "$port" alice "$ALICE_PW" apps)
		res "alice's worker killed: her tree freed (${secs}s)" OK \
		    "$( [ "${secs#never}" = "$secs" ] && echo OK || echo "$secs")"
	else
		echo "FAIL no process of alice found"
	fi
	unhold A

	hold C "$port" alice "$ALICE_PW" apps 1
	res "alice holds the second slot" "tree 0 OK" \
	    "$(grep '^tree 0' "$T/C.out")"
	res "full again" STATUS_INSUFFICIENT_RESOURCES \
	    "$(try "$port" bob "$BOB_PW" apps)"
	reconf 3
	res "a reload raising the limit to 3 admits a third" OK \
	    "$(try "$port" bob "$BOB_PW" apps)"
	reconf 1
	say C "open 0"
	wait_line C '^open(ed)? 0' 10
	res "lowered to 1: the trees in use stay served" "opened 0" \
	    "$(grep '^open.* 0' "$T/C.out")"
	res "lowered to 1: a new one refused" STATUS_INSUFFICIENT_RESOURCES \
	    "$(try "$port" bob "$BOB_PW" apps)"
	reconf 2
	unhold B
	res "bob's logoff freed his slot" OK "$(try "$port" bob "$BOB_PW" apps)"
	hold D "$port" bob "$BOB_PW" apps 1
	res "bob holds the second slot" "tree 0 OK" "$(grep '^tree 0' "$T/D.out")"
	kill -KILL "${HPID[C]}"
	{ wait "${HPID[C]}"; } 2>/dev/null
	secs=$(until_ok 10 try "$port" bob "$BOB_PW" apps)
	res "a connection alice's client dropped freed her slot (${secs}s)" \
	    OK "$( [ "${secs#never}" = "$secs" ] && echo OK || echo "$secs")"
	unhold C
	unhold D
	reconf 2
}

# no client outlives the script
reap_holders() {
	local p

	for p in "${HPID[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	HPID=()
	HFD=()
}
steps "$PORT" usmbd >"$T/steps.out"
reap_holders
while read -r line; do
	case $line in
	ok*) ok "${line#ok   }" ;;
	*) fail "${line#FAIL }" ;;
	esac
done <"$T/steps.out"

if [ "${MAXCONN_SAMBA:-0}" = 1 ]; then
	SPORT=$(integ_free_port)
	mkdir -p "$T/samba"
	if samba_start "$T/samba" "$SPORT" "$(apps "$T/apps" 2)"; then
		steps "$SPORT" samba >"$T/samba.out"
		reap_holders
		sed 's/^/samba: /' "$T/samba.out"
	else
		echo "samba: did not start" >&2
	fi
	samba_stop
fi
finish
