#!/usr/bin/env bash
# make demo: serves build/demo/share as [demo] on 127.0.0.1:4450 with the
# real daemon in the foreground.  Creates (once) a Unix account `usmbdemo`
# and its passdb entry with the password demo-pass-1.  Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEMO=$ROOT/build/demo
CONF=$DEMO/usmbd.conf
PORT=${DEMO_PORT:-4450}	# DEMO_PORT overrides, e.g. when 4450 is taken
USER_NAME=usmbdemo
PASSWORD=demo-pass-1

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run as root (the master must be able to switch to the demo user)" >&2
	exit 1
fi
for bin in build/usmbd build/usmbctl; do
	if [ ! -x "$bin" ]; then
		echo "demo.sh: $bin is missing; run make first" >&2
		exit 1
	fi
done

if ! getent passwd "$USER_NAME" >/dev/null; then
	useradd -M -s /usr/sbin/nologin "$USER_NAME"
	echo "demo.sh: created Unix account $USER_NAME"
fi

mkdir -p "$DEMO/share" "$DEMO/run/private"
chmod 0755 "$DEMO" "$DEMO/run"
chmod 0700 "$DEMO/run/private"
if [ ! -e "$DEMO/share/README" ]; then
	cat >"$DEMO/share/README" <<'TXT'
This folder is served by usmbd's demo (make demo) as //127.0.0.1/demo.
Files you copy here belong to the Unix account usmbdemo: the worker that
serves you runs as that user, so the kernel checks every access.
TXT
fi
chown -R "$USER_NAME": "$DEMO/share"
chmod 0755 "$DEMO/share"

cat >"$CONF" <<CONF
# Written by scripts/demo.sh; regenerated on every make demo.
[global]
	smb ports = $PORT
	interfaces = 127.0.0.1
	pid directory = $DEMO/run
	lock directory = $DEMO/run
	private dir = $DEMO/run/private
	log level = 1
	server string = usmbd demo
	gate processes = 2

[demo]
	path = $DEMO/share
	comment = usmbd demo share
	read only = no
	valid users = $USER_NAME
CONF

if ! build/usmbctl -s "$CONF" user show "$USER_NAME" >/dev/null 2>&1; then
	printf '%s\n' "$PASSWORD" | build/usmbctl -s "$CONF" user add "$USER_NAME" >/dev/null
	echo "demo.sh: added $USER_NAME to the demo password database"
fi

# The worker runs as usmbdemo: it must be able to reach the folder.
if command -v runuser >/dev/null &&
    ! runuser -u "$USER_NAME" -- test -r "$DEMO/share/README" 2>/dev/null; then
	echo "demo.sh: warning: $USER_NAME cannot reach $DEMO/share (a parent directory" \
	    "is not searchable by others); listing the share will fail" >&2
fi

if command -v ss >/dev/null && ss -Hltn "sport = :$PORT" | grep -q .; then
	echo "demo.sh: port $PORT is already in use (another demo running?)" >&2
	exit 1
fi

echo
echo "Serving $DEMO/share as [demo] on 127.0.0.1:$PORT.  Connect with:"
echo
echo "    smbclient //127.0.0.1/demo -p $PORT -U $USER_NAME%$PASSWORD"
echo
echo "Ctrl-C stops the server."
echo
exec build/usmbd -F -s "$CONF"
