#!/usr/bin/env bash
# Runs smbtorture suites against Debian's Samba (a private smbd on a free
# loopback port, users alice and bob) and against usmbd, and prints the pass
# counts side by side.  Not part of `make test`: a tool for growing
# t/compat/torture.list.
#
#	t/compat/samba-compare.sh smb2.read smb2.create ...
#
# Full per-test results are kept in $OUT (default /tmp/usmbd-compare).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/usmbd-compare}
SUITES=${*:-smb2.read smb2.rw smb2.create smb2.getinfo smb2.setinfo smb2.dir smb2.rename smb2.delete-on-close-perms smb2.ioctl smb2.streams smb2.timestamps}
mkdir -p "$OUT"

# the users must exist for both servers (t/integ/lib.sh makes them too)
for u in alice bob; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"; done

D=$(mktemp -d /tmp/usmbd-samba.XXXXXX)
chmod 0755 "$D"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SMBD_PID=
cleanup() {
	[ -n "$SMBD_PID" ] && kill "$SMBD_PID" 2>/dev/null
	sleep 0.5
	rm -rf "$D"
}
trap cleanup EXIT
mkdir -p "$D/share" "$D/run" "$D/lock" "$D/state" "$D/cache" "$D/private"
chmod 1777 "$D/share"
cat >"$D/smb.conf" <<EOF
[global]
	smb ports = $PORT
	interfaces = 127.0.0.1
	bind interfaces only = yes
	disable netbios = yes
	server role = standalone server
	workgroup = WORKGROUP
	pid directory = $D/run
	lock directory = $D/lock
	state directory = $D/state
	cache directory = $D/cache
	private dir = $D/private
	ncalrpc dir = $D/run/ncalrpc
	passdb backend = tdbsam
	log file = $D/smbd.log
	log level = 0
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
	map to guest = never
	server min protocol = SMB2_02
	ea support = yes
	store dos attributes = yes
	vfs objects = streams_xattr

[share]
	path = $D/share
	read only = no
EOF
for u in alice:alicepw1 bob:bobpw1; do
	printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
	    smbpasswd -c "$D/smb.conf" -a -s "${u%%:*}" >/dev/null
done
setsid /usr/sbin/smbd -F --no-process-group -s "$D/smb.conf" </dev/null >"$D/smbd.out" 2>&1 &
SMBD_PID=$!
for _ in $(seq 1 50); do
	smbclient -L 127.0.0.1 -p "$PORT" -U alice%alicepw1 >/dev/null 2>&1 && break
	sleep 0.2
done

TORTURE_SERVER=127.0.0.1:$PORT/share TORTURE_SUITES="$SUITES" \
    bash t/integ/torture.sh >"$OUT/samba.txt" 2>&1
TORTURE_SUITES="$SUITES" bash t/integ/torture.sh >"$OUT/usmbd.txt" 2>&1
printf '%-30s %-22s %-22s\n' suite "usmbd pass/fail/skip" "samba pass/fail/skip"
for s in $SUITES; do
	u=$(grep "^suite $s:" "$OUT/usmbd.txt" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1\/\2\/\3/')
	m=$(grep "^suite $s:" "$OUT/samba.txt" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1\/\2\/\3/')
	printf '%-30s %-22s %-22s\n' "$s" "${u:-?}" "${m:-?}"
done
