#!/usr/bin/env bash
# The user worker's two receive paths (worker/uring.h): io_uring when the
# kernel allows it, epoll when it does not (USMBD_IO_URING=0 stands in for
# such a kernel).  On each: the worker holds a ring or not, as it should;
# a client that stops reading with 240 READs (15 MiB, more than both
# socket buffers hold) and an ECHO queued gets every
# answer intact once it reads again (the output stalls while requests wait
# behind it); four connections of one user in one worker move files in
# parallel byte for byte; a client killed mid-transfer leaves the worker
# serving the next one.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users
S=//127.0.0.1/share
L=$T/local
mkdir -p "$L"
head -c $((8 * 1024 * 1024)) /dev/urandom >"$L/f8m"
head -c $((64 * 1024 * 1024)) /dev/urandom >"$SHARE/big.dat"
chmod 0644 "$SHARE/big.dat"

smb() {	# smb COMMANDS
	timeout 120 smbclient "$S" -p "$PORT" -U "alice%$ALICE_PW" -m SMB3 -c "$1" 2>&1
}

worker_has_ring() {	# worker_has_ring PID: its fds include an io_uring
	ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'io_uring'
}

one_mode() {	# one_mode LABEL (yes|no: a ring expected)
	local label=$1 ring=$2 pid pid2 pids i bad out

	integ_start || { fail "$label: usmbd started"; return; }
	check "$label: alice lists the share" smb "ls"
	pid=$(integ_worker_of alice)
	if [ -z "$pid" ]; then
		fail "$label: alice's worker found"
	elif [ "$ring" = yes ]; then
		check "$label: alice's worker receives by io_uring" worker_has_ring "$pid"
	else
		check_fails "$label: alice's worker has no io_uring (epoll only)" worker_has_ring "$pid"
	fi

	out=$(timeout 120 "$PYTHON" "$ROOT/t/integ/uring_client.py" "$PORT" "$ALICE_PW" 2>&1)
	while IFS= read -r line; do
		case $line in
		ok\ *) ok "$label: ${line#ok }" ;;
		FAIL\ *) fail "$label: ${line#FAIL }" ;;
		esac
	done <<<"$out"
	if ! grep -q '^ok a READ after the stall' <<<"$out"; then
		fail "$label: the stalled client ran to its end"
		sed 's/^/     /' <<<"$out" | tail -n 15
	fi

	# Four connections of alice at once, one worker.
	pids=
	for i in 1 2 3 4; do
		smb "put $L/f8m p$i.dat; get p$i.dat $L/p$i.back" >"$T/par.$i" &
		pids="$pids $!"
	done
	wait $pids
	bad=0
	for i in 1 2 3 4; do
		cmp -s "$L/f8m" "$L/p$i.back" || bad=$((bad + 1))
	done
	if [ "$bad" -eq 0 ]; then
		ok "$label: 4 parallel put+get of 8 MiB, byte for byte"
	else
		fail "$label: 4 parallel put+get of 8 MiB ($bad differ)"
		tail -n 5 "$T"/par.*
	fi

	# A client killed mid-get: the worker goes on.
	timeout 60 smbclient "$S" -p "$PORT" -U "alice%$ALICE_PW" -m SMB3 \
	    -c "get big.dat $L/big.part" >/dev/null 2>&1 &
	i=$!
	sleep 0.3
	kill -KILL $i 2>/dev/null
	wait $i 2>/dev/null
	check "$label: a get after a client was killed mid-transfer" \
	    smb "get big.dat $L/big.back"
	check "$label: ... and its bytes are the file's" cmp -s "$SHARE/big.dat" "$L/big.back"
	pid2=$(integ_worker_of alice)
	if [ -n "$pid" ] && [ "$pid" = "$pid2" ]; then
		ok "$label: the same worker served all of it"
	else
		fail "$label: the same worker served all of it ($pid, then $pid2)"
	fi
	rm -f "$L"/*.back "$L/big.part" "$SHARE"/p?.dat
	integ_stop
}

one_mode "io_uring" yes
USMBD_IO_URING=0 one_mode "epoll" no
finish
