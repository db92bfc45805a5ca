#!/usr/bin/env bash
# IPC$ and the srvsvc / wkssvc pipes with real clients: smbclient -L and
# rpcclient's netshareenumall, netsharegetinfo, srvinfo, wkssvc_wkstagetinfo.
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_GLOBAL=$'\tnetbios name = IPCTEST\n\tserver string = usmbd ipc test'
INTEG_SHARES=$(printf '%s\n' \
	'[docs]' "	path = $SHARE" '	comment = team documents' \
	'[secret]' "	path = $SHARE" '	browseable = no' '	comment = not listed' \
	'[admin$]' "	path = $SHARE" '	comment = hidden by name')
integ_conf
integ_users || { fail "users"; finish; }
integ_start || { fail "server start"; finish; }

RPC=(rpcclient -U "alice%$ALICE_PW" -p "$PORT" 127.0.0.1)

# grep for a whole line pattern in the last command's output.
has() {
	grep -Eq -- "$1" "$T/out"
}

# smbclient -L, with each dialect family.
for proto in SMB2_02 SMB2_10 SMB3_00 SMB3_11; do
	if smbclient -L //127.0.0.1 -p "$PORT" -U "alice%$ALICE_PW" \
	    -m "$proto" >"$T/out" 2>&1 &&
	    has '^[[:space:]]+share[[:space:]]+Disk[[:space:]]+integration test share$' &&
	    has '^[[:space:]]+docs[[:space:]]+Disk[[:space:]]+team documents$' &&
	    has '^[[:space:]]+IPC\$[[:space:]]+IPC[[:space:]]+IPC Service \(usmbd ipc test\)$' &&
	    has '^[[:space:]]+admin\$[[:space:]]+Disk[[:space:]]+hidden by name$' &&
	    ! has 'secret'; then
		ok "smbclient -L lists the browseable shares ($proto)"
	else
		fail "smbclient -L ($proto)"
		sed 's/^/     /' "$T/out"
	fi
done

# Signed and encrypted sessions carry the same pipe traffic.
if smbclient -L //127.0.0.1 -p "$PORT" -U "alice%$ALICE_PW" \
    --client-protection=encrypt >"$T/out" 2>&1 && has '^[[:space:]]+docs[[:space:]]+Disk'; then
	ok "smbclient -L over an encrypted session"
else
	fail "smbclient -L encrypted"
	sed 's/^/     /' "$T/out"
fi

# rpcclient: NetShareEnumAll at levels 0, 1, 2, 502.
if "${RPC[@]}" -c 'netshareenumall 1' >"$T/out" 2>&1 &&
    has '^netname: docs$' && has 'remark:[[:space:]]+team documents$' &&
    has '^netname: IPC\$$' && ! has 'secret'; then
	ok "rpcclient netshareenumall level 1"
else
	fail "rpcclient netshareenumall 1"
	sed 's/^/     /' "$T/out"
fi
if "${RPC[@]}" -c 'netshareenumall 2' >"$T/out" 2>&1 &&
    has '^netname: share$' &&
    has "path:[[:space:]]+C:$(printf '%s' "$SHARE" | sed 's|/|\\\\|g')\$"; then
	ok "rpcclient netshareenumall level 2 (Windows-style path)"
else
	fail "rpcclient netshareenumall 2"
	sed 's/^/     /' "$T/out"
fi
for level in 0 502; do
	if "${RPC[@]}" -c "netshareenumall $level" >"$T/out" 2>&1 &&
	    ! has 'result was|NT_STATUS|WERR'; then
		ok "rpcclient netshareenumall level $level"
	else
		fail "rpcclient netshareenumall $level"
		sed 's/^/     /' "$T/out"
	fi
done

# rpcclient: NetShareGetInfo at levels 1, 2, 501, 502, 1005; a hidden
# share is found by name; an unknown share and level fail.
if "${RPC[@]}" -c 'netsharegetinfo docs 1' >"$T/out" 2>&1 &&
    has '^netname: docs$' && has 'remark:[[:space:]]+team documents$'; then
	ok "rpcclient netsharegetinfo level 1"
else
	fail "rpcclient netsharegetinfo docs 1"
	sed 's/^/     /' "$T/out"
fi
if "${RPC[@]}" -c 'netsharegetinfo secret 502' >"$T/out" 2>&1 &&
    has '^netname: secret$' && has 'type:[[:space:]]+0x0$' &&
    has 'max_uses:[[:space:]]+-1$'; then
	ok "rpcclient netsharegetinfo level 502 of a non-browseable share"
else
	fail "rpcclient netsharegetinfo secret 502"
	sed 's/^/     /' "$T/out"
fi
for level in 0 2 501 1005; do
	if "${RPC[@]}" -c "netsharegetinfo docs $level" >"$T/out" 2>&1 &&
	    ! has 'result was|NT_STATUS'; then
		ok "rpcclient netsharegetinfo level $level"
	else
		fail "rpcclient netsharegetinfo docs $level"
		sed 's/^/     /' "$T/out"
	fi
done
if "${RPC[@]}" -c 'netsharegetinfo nosuch 1' >"$T/out" 2>&1; has 'WERR_NERR_NETNAMENOTFOUND|WERR_NET_NAME_NOT_FOUND|result was'; then
	ok "rpcclient netsharegetinfo of an unknown share fails"
else
	fail "rpcclient netsharegetinfo nosuch"
	sed 's/^/     /' "$T/out"
fi
if "${RPC[@]}" -c 'netsharegetinfo docs 7' >"$T/out" 2>&1; has 'WERR_INVALID_LEVEL|WERR_UNKNOWN_LEVEL'; then
	ok "rpcclient netsharegetinfo of an unknown level fails"
else
	fail "rpcclient netsharegetinfo docs 7"
	sed 's/^/     /' "$T/out"
fi

# NetServerGetInfo 101 and NetWkstaGetInfo 100.
if "${RPC[@]}" -c srvinfo >"$T/out" 2>&1 && has 'IPCTEST' &&
    has 'usmbd ipc test' && has 'platform_id[[:space:]]+:[[:space:]]+500'; then
	ok "rpcclient srvinfo"
else
	fail "rpcclient srvinfo"
	sed 's/^/     /' "$T/out"
fi
if "${RPC[@]}" -c wkssvc_wkstagetinfo >"$T/out" 2>&1 && ! has 'result was|NT_STATUS'; then
	ok "rpcclient wkssvc_wkstagetinfo"
else
	fail "rpcclient wkssvc_wkstagetinfo"
	sed 's/^/     /' "$T/out"
fi

# impacket drives the pipe with WRITE and READ instead of transceive.
cat >"$T/imp.py" <<'EOF2'
import sys
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2_DIALECT_21
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=int(sys.argv[1]),
                  preferredDialect=SMB2_DIALECT_21)
c.login('alice', sys.argv[2])
for s in c.listShares():
    print('%s|%#x|%s' % (s['shi1_netname'][:-1], s['shi1_type'], s['shi1_remark'][:-1]))
EOF2
if /usr/bin/python3 "$T/imp.py" "$PORT" "$ALICE_PW" >"$T/out" 2>&1 &&
    has '^docs\|0x0\|team documents$' && has '^IPC\$\|0x80000003\|IPC Service'; then
	ok "impacket listShares (WRITE + READ on the pipe)"
else
	fail "impacket listShares"
	sed 's/^/     /' "$T/out"
fi

# Several calls on one pipe, and the server still answers afterwards.
check "rpcclient: several calls on one connection" \
	"${RPC[@]}" -c 'netshareenumall 1; netsharegetinfo share 2; srvinfo; netshareenumall 0'
check "server still answers" "$USMBCTL" -s "$CONF" ping

finish
