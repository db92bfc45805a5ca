#!/usr/bin/env bash
# IPC$ and the srvsvc / wkssvc pipes with real clients: smbclient -L and
# rpcclient's netshareenumall, netsharegetinfo, srvinfo, wkssvc_wkstagetinfo;
# lsarpc's SID and name translation with rpcclient and impacket
# (t/integ/lsa_client.py), refused to anonymous and guest sessions.
. "$(dirname "$0")/lib.sh"

integ_init
# Anonymous sessions are refused by default (`restrict anonymous` 2):
# this test lists shares anonymously too.  alice is an srvsvc administrator
# (levels 2 and 502 show paths), bob is not (t/integ/dos.sh checks that).
INTEG_GLOBAL=$'\tnetbios name = IPCTEST\n\tserver string = usmbd ipc test\n\trestrict anonymous = 0\n\tserver admin group = usmbdtadm\n\tmap to guest = bad user'
INTEG_SHARES=$(printf '%s\n' \
	'[docs]' "	path = $SHARE" '	comment = team documents' \
	'[secret]' "	path = $SHARE" '	browseable = no' '	comment = not listed' \
	'[admin$]' "	path = $SHARE" '	comment = hidden by name')
# Enough shares that the level-1 answer (~20 KB) spans several fragments:
# the client reads past the first one with READ after STATUS_BUFFER_OVERFLOW
# or more transceives.
for i in $(seq -w 1 150); do
	INTEG_SHARES+=$'\n'"[bulk$i]"$'\n'"	path = $SHARE"$'\n'"	comment = bulk share number $i with a longish comment"
done
integ_conf
integ_users || { fail "users"; finish; }
getent group usmbdtadm >/dev/null || groupadd usmbdtadm
usermod -a -G usmbdtadm alice
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

if smbclient -L //127.0.0.1 -p "$PORT" -U "alice%$ALICE_PW" >"$T/out" 2>&1 &&
    [ "$(grep -Ec '^[[:space:]]+bulk[0-9]+[[:space:]]+Disk[[:space:]]+bulk share number' "$T/out")" = 150 ] &&
    has 'bulk150[[:space:]]+Disk[[:space:]]+bulk share number 150 with a longish comment$'; then
	ok "smbclient -L lists 150 more shares (a multi-fragment response)"
else
	fail "smbclient -L many shares"
	sed 's/^/     /' "$T/out" | tail -20
fi

# An anonymous (null) session may use IPC$ with `restrict anonymous = 0`.
if smbclient -L //127.0.0.1 -p "$PORT" -N >"$T/out" 2>&1 &&
    has '^[[:space:]]+docs[[:space:]]+Disk[[:space:]]+team documents$'; then
	ok "smbclient -L with an anonymous session"
else
	fail "smbclient -L -N"
	sed 's/^/     /' "$T/out" | tail -20
fi

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

# A transceive whose answer exceeds MaxOutputResponse: STATUS_BUFFER_OVERFLOW
# with the first bytes, the rest of that message by READ (MS-SMB2 3.3.5.15.1).
cat >"$T/ovf.py" <<'EOF2'
import sys, struct
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import *
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=int(sys.argv[1]),
                  preferredDialect=SMB2_DIALECT_21)
c.login('alice', sys.argv[2])
tid = c.connectTree('IPC$')
fid = c.openFile(tid, '\\srvsvc', desiredAccess=0x0012019f, creationOption=0)
bind = bytes.fromhex('05000b03100000004800000001000000b810b810000000000100000000000100'
    'c84f324b7016d30112785a47bf6ee18803000000045d888aeb1cc9119fe808002b10486002000000')
enum = bytes.fromhex('05000003100000005c000000020000004400000000000f00000002000a000000'
    '000000000a0000003100320037002e0030002e0030002e00310000000100000001000000'
    '040002000000000000000000ffffffff0800020000000000')
c.writeFile(tid, fid, bind)
ack = c.readFile(tid, fid, 0, 4280)
assert ack[2] == 12, 'no bind_ack'
srv = c.getSMBServer()
pkt = srv.SMB_PACKET()
pkt['Command'] = SMB2_IOCTL
pkt['TreeID'] = tid
io = SMB2Ioctl()
io['FileID'] = srv._Session['OpenTable'][fid]['FileID'].getData()
io['CtlCode'] = FSCTL_PIPE_TRANSCEIVE
io['MaxInputResponse'] = 0
io['MaxOutputResponse'] = 100
io['InputCount'] = len(enum)
io['Buffer'] = enum
io['OutputOffset'] = 0
io['Flags'] = SMB2_0_IOCTL_IS_FSCTL
pkt['Data'] = io
ans = srv.recvSMB(srv.sendSMB(pkt))
assert ans['Status'] == 0x80000005, 'status %#x' % ans['Status']
first = SMB2Ioctl_Response(ans['Data'])['Buffer']
assert len(first) == 100, len(first)
frag = struct.unpack_from('<H', first, 8)[0]
rest = c.readFile(tid, fid, 0, frag - 100)
assert len(first) + len(rest) == frag, (len(rest), frag)
print('fragment of %d bytes, flags %#x' % (frag, first[3]))
# The answer to 150+ shares spans fragments: read them, one per READ.
flags, n = first[3], 1
while not flags & 2 and n < 100:
    m = c.readFile(tid, fid, 0, 4280)
    assert m[2] == 2 and struct.unpack_from('<H', m, 8)[0] == len(m), 'bad fragment'
    flags, n = m[3], n + 1
print('%d fragments' % n)
try:
    c.readFile(tid, fid, 0, 100)
    print('read on an empty pipe succeeded')
except Exception as e:
    print('empty read:', e)
c.closeFile(tid, fid)
EOF2
if /usr/bin/python3 "$T/ovf.py" "$PORT" "$ALICE_PW" >"$T/out" 2>&1 &&
    has '^fragment of [0-9]+ bytes' && has '^([5-9]|[1-9][0-9]) fragments$' &&
    has 'STATUS_PIPE_EMPTY'; then
	ok "transceive overflow: the rest of the message by READ"
else
	fail "transceive overflow"
	sed 's/^/     /' "$T/out"
fi

# lsarpc: SIDs to names and back, as Windows' Security tab and smbcacls
# ask (worker/pipe_lsarpc.c); the names are Samba's for the same SIDs.
AUID=$(id -u alice) AGID=$(id -g alice) AGN=$(id -gn alice)
# every line of the last command's output as given, each exactly
hasall() {
	local l
	for l in "$@"; do grep -qxF -- "$l" "$T/out" || return 1; done
}
"${RPC[@]}" -c "lookupsids S-1-22-1-$AUID S-1-22-2-$AGID S-1-1-0 S-1-5-11 S-1-5-32-544 S-1-22-1-4000000000 S-1-5-21-1-2-3-500" >"$T/out" 2>&1
if hasall "S-1-22-1-$AUID Unix User\\alice (1)" \
    "S-1-22-2-$AGID Unix Group\\$AGN (2)" 'S-1-1-0 \Everyone (5)' \
    'S-1-5-11 NT AUTHORITY\Authenticated Users (5)' \
    'S-1-5-32-544 BUILTIN\Administrators (4)' \
    'S-1-22-1-4000000000 *unknown*\*unknown* (8)' \
    'S-1-5-21-1-2-3-500 *unknown*\*unknown* (8)'; then
	ok "rpcclient lookupsids: Unix users and groups, well-known SIDs, unknown ones"
else
	fail "rpcclient lookupsids"
	sed 's/^/     /' "$T/out"
fi
"${RPC[@]}" -c "lookupnames alice 'Unix Group\\$AGN' Everyone 'IPCTEST\\bob' 'NT AUTHORITY\\SYSTEM' nosuchuser" >"$T/out" 2>&1
if hasall "alice S-1-22-1-$AUID (User: 1)" \
    "Unix Group\\$AGN S-1-22-2-$AGID (Domain Group: 2)" \
    'Everyone S-1-1-0 (Well-known Group: 5)' \
    "IPCTEST\\bob S-1-22-1-$(id -u bob) (User: 1)" \
    'NT AUTHORITY\SYSTEM S-1-5-18 (Well-known Group: 5)' \
    'nosuchuser S-0-0 (UNKNOWN: 8)'; then
	ok "rpcclient lookupnames: accounts, groups, the server's name as domain, well-known names"
else
	fail "rpcclient lookupnames"
	sed 's/^/     /' "$T/out"
fi
"${RPC[@]}" -c "lsaquery" >"$T/out" 2>&1
hasall 'Domain Name: WORKGROUP' 'Domain Sid: (NULL SID)' &&
    ok "rpcclient lsaquery: a workgroup server, no domain SID (as Samba)" ||
    { fail "rpcclient lsaquery"; sed 's/^/     /' "$T/out"; }
out=$(timeout 60 "$PYTHON" "$ROOT/t/integ/lsa_client.py" "$PORT" alice \
    "$ALICE_PW" IPCTEST "$AUID" "$AGID" 2>&1)
while IFS= read -r line; do
	case $line in
	ok\ *) ok "lsa_client.py: ${line#ok }" ;;
	FAIL\ *) fail "lsa_client.py: ${line#FAIL }" ;;
	esac
done <<<"$out"
grep -q Traceback <<<"$out" && { fail "lsa_client.py ran to its end"; echo "$out" | tail -15; }

# Several calls on one pipe, and the server still answers afterwards.
check "rpcclient: several calls on one connection" \
	"${RPC[@]}" -c 'netshareenumall 1; netsharegetinfo share 2; srvinfo; netshareenumall 0'
check "server still answers" "$USMBCTL" -s "$CONF" ping

finish
