#!/bin/bash
# Samba's caching keys with real clients: `oplocks = no` (no oplock, no
# lease, a second open breaks nothing), `level2 oplocks = no` (batch and
# exclusive alone, never level II, R or RH: none, breaks go to none),
# `veto oplock files` (those names get nothing, others what they ask),
# `smb2 leases = no` (no leasing capability, RqLs ignored, oplocks still
# granted), and a share without the keys as before.  Clients:
# t/integ/oplockkeys_client.py (impacket, SMB 3.0 and 2.1) and smbclient.
#
# OPLOCKKEYS_SAMBA=1 runs the same client against Debian's Samba
# (/usr/sbin/smbd, a private smb.conf from t/compat/samba.conf.in with the
# same shares) and prints its lines prefixed "samba:", not counted: what
# differs is in HACKING.md, "Caching keys".
. "$(dirname "$0")/lib.sh"

integ_init
shares() {	# shares DIR: the shares of the checks, under DIR
	cat <<EOS
[off]
	path = $1/off
	read only = no
	oplocks = no

[level2]
	path = $1/level2
	read only = no
	level2 oplocks = no

[vetoop]
	path = $1/vetoop
	read only = no
	veto oplock files = /*.mdb/*.accdb/

[plain]
	path = $1/plain
	read only = no
EOS
}
for d in off level2 vetoop plain; do
	mkdir -p "$T/$d"
	chmod 0777 "$T/$d"
done
INTEG_SHARES=$(shares "$T")
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/oplockkeys_client.py
run() {		# run PORT SHARE MODE
	client_checks "oplockkeys_client.py $3" "$PYTHON" "$C" "$1" "$2" "$3"
}
run "$PORT" off off
run "$PORT" level2 level2
run "$PORT" vetoop veto
run "$PORT" plain plain

# smbclient (SMB 3.1.1, leases on): a put and a get on each share work
echo "some data" >"$T/data.txt"
for s in off level2 vetoop plain; do
	out=$(smbclient -p "$PORT" -U "alice%$ALICE_PW" "//127.0.0.1/$s" \
	    -c "put $T/data.txt a.mdb; get a.mdb $T/back-$s.txt" 2>&1)
	if cmp -s "$T/data.txt" "$T/back-$s.txt"; then
		ok "smbclient put and get on [$s]"
	else
		fail "smbclient put and get on [$s]: $out"
	fi
done
check "the server is still up" integ_ping

# smb2 leases = no: a server of its own
integ_stop
INTEG_GLOBAL='	smb2 leases = no'
integ_conf
integ_start || exit 1
run "$PORT" plain noleases
out=$(smbclient -p "$PORT" -U "alice%$ALICE_PW" //127.0.0.1/plain \
    -c "get a.mdb $T/back-nl.txt" 2>&1)
if cmp -s "$T/data.txt" "$T/back-nl.txt"; then
	ok "smbclient get with smb2 leases = no"
else
	fail "smbclient get with smb2 leases = no: $out"
fi
check "the server is still up" integ_ping

samba_run() {	# samba_run NAME GLOBAL-LINE MODES...: one smbd, the client
	local S=$T/samba-$1 g=$2 SPORT m d

	shift 2
	SPORT=$(integ_free_port)
	for d in off level2 vetoop plain; do
		mkdir -p "$S/$d"
		chmod 0777 "$S/$d"
	done
	SAMBA_GLOBAL=$g samba_start "$S" "$SPORT" "$(shares "$S")" ||
	    echo "samba: smbd did not come up"
	for m in "$@"; do
		"$PYTHON" "$C" "$SPORT" "${m%%:*}" "${m#*:}" 2>&1 |
		    sed 's/^/samba: /'
	done
	samba_stop
}
if [ "${OPLOCKKEYS_SAMBA:-0}" = 1 ]; then
	samba_run keys "	server min protocol = SMB2_02" off:off level2:level2 \
	    vetoop:veto plain:plain
	samba_run noleases "	smb2 leases = no" plain:noleases
fi
finish
