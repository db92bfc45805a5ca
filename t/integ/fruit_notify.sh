#!/usr/bin/env bash
# CHANGE_NOTIFY names on fruit:encoding = native shares, with and without
# hide unreadable (t/integ/fruit_notify.py).  FRUIT_SAMBA=1 runs the same
# steps against Debian's Samba 4.17 too (catia fruit streams_xattr,
# printed, not judged: it sends the names as stored, HACKING.md).
. "$(dirname "$0")/lib.sh"

integ_init
mkdir -p "$T/nat" "$T/hide"
chmod 0777 "$T/nat"
chmod 0755 "$T/hide"
SHARES="[native]
	path = $T/nat
	read only = no
	vfs objects = catia fruit streams_xattr
	fruit:encoding = native
[native_hide]
	path = $T/hide
	read only = no
	hide unreadable = yes
	vfs objects = catia fruit streams_xattr
	fruit:encoding = native"
INTEG_SHARES=$SHARES integ_conf
integ_users

# fresh files for each server: x:y readable by bob, p:q not
hide_files() {
	rm -rf "$T/nat/nw" "$T/hide/x:y" "$T/hide/p:q"
	touch "$T/hide/x:y" "$T/hide/p:q"
	chown alice: "$T/hide/x:y" "$T/hide/p:q"
	chmod 0644 "$T/hide/x:y"
	chmod 0600 "$T/hide/p:q"
}

hide_files
integ_start || { fail "usmbd starts"; finish; }
client_checks fruit_notify "$PYTHON" "$ROOT/t/integ/fruit_notify.py" \
    127.0.0.1 "$PORT" "$ALICE_PW" "$BOB_PW" "$T/nat" "$T/hide"

[ "${FRUIT_SAMBA:-}" = 1 ] || finish
hide_files
SP=$(integ_free_port)
if samba_start "$T/samba" "$SP" "$SHARES"; then
	"$PYTHON" "$ROOT/t/integ/fruit_notify.py" 127.0.0.1 "$SP" \
	    "$ALICE_PW" "$BOB_PW" "$T/nat" "$T/hide" samba 2>&1 |
	    sed 's/^/samba: /'
	samba_stop
else
	fail "Samba starts for the comparison"
fi
finish
