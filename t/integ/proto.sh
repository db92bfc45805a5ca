#!/bin/bash
# SMB2 protocol core against a running usmbd: dialects, signing,
# encryption, logon failures, SMB1 negotiate, impacket, worker credentials.
. "$(dirname "$0")/lib.sh"

integ_init
# Anonymous logons are tried here (re-authentication, guests): null
# sessions allowed, since `restrict anonymous` 2 (the default) refuses them.
INTEG_GLOBAL=$'\trestrict anonymous = 0'
integ_conf
integ_users
integ_start || { fail "server starts"; finish; }

SMBC="timeout 30 smbclient -p $PORT"
PY=/usr/bin/python3
HAVE_PIPES=0
[ -f "$ROOT/worker/smb2_pipe.c" ] && HAVE_PIPES=1

for m in SMB2_02 SMB2_10 SMB3_00 SMB3_02 SMB3_11; do
	check "ls with $m" $SMBC //127.0.0.1/share -U alice%$ALICE_PW \
	    --option="client min protocol=$m" --option="client max protocol=$m" -c ls
	check "ls with $m, signing required" $SMBC //127.0.0.1/share \
	    -U alice%$ALICE_PW --option="client max protocol=$m" \
	    --option="client min protocol=$m" --option='client signing=required' -c ls
	case $m in
	SMB3*)	check "ls with $m, encrypted" $SMBC //127.0.0.1/share \
		    -U alice%$ALICE_PW --option="client max protocol=$m" \
		    --client-protection=encrypt -c ls ;;
	esac
done
check "IPC\$ tree connect" $SMBC //127.0.0.1/IPC\$ -U alice%$ALICE_PW -c exit
check_fails "unknown share" $SMBC //127.0.0.1/nosuch -U alice%$ALICE_PW -c exit
grep -q NT_STATUS_BAD_NETWORK_NAME "$T/check.out" && ok "unknown share: BAD_NETWORK_NAME" ||
    fail "unknown share: BAD_NETWORK_NAME"
check_fails "wrong password" $SMBC //127.0.0.1/share -U alice%wrongpw -c ls
grep -q NT_STATUS_LOGON_FAILURE "$T/check.out" && ok "wrong password: LOGON_FAILURE" ||
    fail "wrong password: LOGON_FAILURE"
id carol >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin carol
check_fails "user without a passdb entry" $SMBC //127.0.0.1/share -U carol%carolpw1 -c ls
check "SMB1 negotiate offering SMB2 (2.???)" $SMBC //127.0.0.1/share \
    -U alice%$ALICE_PW --option='client min protocol=NT1' -c ls
check_fails "SMB1-only client refused" $SMBC //127.0.0.1/share -U alice%$ALICE_PW \
    --option='client min protocol=NT1' --option='client max protocol=NT1' -c ls
grep -q "SMB1-only client refused" "$LOG" && ok "SMB1-only client refusal is logged" ||
    fail "SMB1-only client refusal is logged"
if [ $HAVE_PIPES = 1 ]; then
	check "smbclient -L lists shares" $SMBC -L //127.0.0.1 -U alice%$ALICE_PW
	grep -q share "$T/check.out" || fail "smbclient -L shows [share]"
fi
for d in 0x0202 0x0210 0x0300; do
	check "impacket login, dialect $d" timeout 30 $PY -c "
from impacket.smbconnection import SMBConnection
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=$PORT, preferredDialect=$d)
c.login('alice', '$ALICE_PW')
assert c.getDialect() == $d, hex(c.getDialect())
if $HAVE_PIPES:
    names = [s['shi1_netname'][:-1] for s in c.listShares()]
    assert 'share' in names, names
c.logoff()
"
done

# Re-authentication (MS-SMB2 3.3.5.5.2) on the user's worker: as alice the
# session keeps its tree and open; as bob or as anonymous it is accepted
# on the master's verdict, the open handle keeps its access, anything new
# (here a CREATE) is refused with ACCESS_DENIED and a log line, and a
# re-authentication as alice makes it alice's again (worker/smb2_reauth.c).
printf 'reauth data\n' >"$SHARE/reauth.txt"
chown alice "$SHARE/reauth.txt"
for d in 0x0210 0x0300; do
	check "re-authentication, dialect $d" timeout 30 $PY -c "
from impacket.smbconnection import SMBConnection, SessionError
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=$PORT, preferredDialect=$d)
c.login('alice', '$ALICE_PW')
tid = c.connectTree('share')
fid = c.openFile(tid, 'reauth.txt')
s = c.getSMBServer()
# impacket re-derives its keys on a successful setup; the server keeps
# the session's first keys (as Samba does), so the client's view is put
# back after each re-authentication.
saved = dict(s._Session)
for user, pw in (('bob', '$BOB_PW'), ('', '')):
    s.login(user, pw)
    s._Session.update(saved)
    assert c.readFile(tid, fid, 0, 6) == b'reauth', 'open lost as %r' % user
    try:
        c.openFile(tid, 'reauth.txt')
        raise SystemExit('a new open served after re-authentication as %r' % user)
    except SessionError as e:
        assert e.getErrorCode() == 0xC0000022, hex(e.getErrorCode())
s.login('alice', '$ALICE_PW')
s._Session.update(saved)
assert c.readFile(tid, fid, 0, 6) == b'reauth', 'open lost after reauth'
c.closeFile(tid, fid)
fid = c.openFile(tid, 'reauth.txt')
c.closeFile(tid, fid)
c.logoff()
"
done
grep -q "session .* of alice re-authenticated as bob: " "$LOG" &&
    ok "re-authentication as bob is logged" ||
    fail "re-authentication as bob is logged"
grep -q "session .* of alice re-authenticated as anonymous: " "$LOG" &&
    ok "anonymous re-authentication is logged" ||
    fail "anonymous re-authentication is logged"
grep -q "of session .* refused: re-authenticated" "$LOG" &&
    ok "the refused CREATE is logged" ||
    fail "the refused CREATE is logged"
grep -q "session .* for alice re-authenticated" "$LOG" &&
    ok "re-authentication as alice is logged" ||
    fail "re-authentication as alice is logged"

# The worker that served alice runs with her ids only and no capabilities
# (a child of this server: other servers may run on the machine).
wpid=$(pgrep -P "$SERVER_PID" -f "^usmbd: worker alice" | head -1)
if [ -n "$wpid" ]; then
	au=$(id -u alice); ag=$(id -g alice)
	st=/proc/$wpid/status
	if grep -q "^Uid:	$au	$au	$au	$au$" $st && grep -q "^Gid:	$ag	$ag	$ag	$ag$" $st &&
	    grep -q "^CapEff:	0000000000000000$" $st && grep -q "^CapPrm:	0000000000000000$" $st; then
		ok "worker runs as alice without capabilities"
	else
		fail "worker runs as alice without capabilities"; cat $st >&2
	fi
else
	fail "worker of alice found"
fi
integ_stop

# server signing = mandatory; smb encrypt = required
integ_conf "server signing = mandatory" "smb encrypt = required"
integ_start || { fail "server restarts"; finish; }
check "mandatory signing + required encryption, SMB3_11" $SMBC //127.0.0.1/share \
    -U alice%$ALICE_PW -c ls
check "mandatory signing + required encryption, SMB3_00" $SMBC //127.0.0.1/share \
    -U alice%$ALICE_PW --option='client max protocol=SMB3_00' -c ls
check_fails "required encryption refuses SMB2_10" $SMBC //127.0.0.1/share \
    -U alice%$ALICE_PW --option='client max protocol=SMB2_10' -c ls
integ_stop

# IOCTLs of the core (MS-SMB2 3.3.5.15): FSCTL_QUERY_NETWORK_INTERFACE_INFO
# lists the addresses usmbd serves (here only 127.0.0.1, on lo), needs the
# all-ones FileId, and a short MaxOutputResponse gets BUFFER_TOO_SMALL whose
# ERROR body carries the size needed (2.2.2.2; 3.0: no error context);
# 2.x gets NOT_SUPPORTED; an FSCTL nobody knows gets INVALID_DEVICE_REQUEST
# on a file and NOT_SUPPORTED on IPC$; FSCTL_PIPE_WAIT knows our pipes;
# a DFS referral for a name outside any DFS namespace gets NOT_FOUND (host
# msdfs is on by default: t/integ/dfs.sh); FSCTL_CREATE_OR_GET_OBJECT_ID
# gives a stable FILE_OBJECTID_BUFFER built from the inode.
integ_conf
integ_start || { fail "server restarts"; finish; }
echo data >"$SHARE/objid.txt"
check "core IOCTLs: network interfaces, FileId rule, unknown FSCTLs" \
    timeout 30 $PY -c "
import socket, struct, os
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2Ioctl, SMB2Ioctl_Response, SMB2_IOCTL
from impacket import smb3

def conn(d):
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=$PORT, preferredDialect=d)
    c.login('alice', '$ALICE_PW')
    return c

def ioctl(c, tid, fid, code, maxout, inp=b''):
    s = c.getSMBServer()
    p = s.SMB_PACKET()
    p['Command'] = SMB2_IOCTL
    p['TreeID'] = tid
    q = SMB2Ioctl()
    q['FileID'] = fid
    q['CtlCode'] = code
    q['MaxInputResponse'] = 0
    q['MaxOutputResponse'] = maxout
    q['InputCount'] = len(inp)
    if inp:
        q['Buffer'] = inp
    else:
        q['InputOffset'] = 0
        q['Buffer'] = b'\x00'
        q['OutputOffset'] = 0
    q['Flags'] = 1
    p['Data'] = q
    a = s.recvSMB(s.sendSMB(p))
    return a['Status'], a['Data']

NETIF = 0x001401FC
ALL = b'\xff' * 16
c = conn(0x0300)
tid = c.connectTree('share')
st, body = ioctl(c, tid, ALL, NETIF, 65536)
assert st == 0, hex(st)
out = SMB2Ioctl_Response(body)['Buffer']
assert len(out) == 152, len(out)
nxt, idx, cap, _, speed, fam, port = struct.unpack_from('<IIIIQHH', out)
assert nxt == 0 and idx == socket.if_nametoindex('lo'), (nxt, idx)
assert cap & 2 == 0 and speed > 0 and fam == 2 and port == 0, (cap, speed, fam)
assert out[28:32] == socket.inet_aton('127.0.0.1'), out[28:32]
st, body = ioctl(c, tid, ALL, NETIF, 1)
assert st == 0xC0000023, hex(st)
size, ctxs, _, count, need = struct.unpack_from('<HBBII', body)
assert (size, ctxs, count, need) == (9, 0, 4, 152), (size, ctxs, count, need)
st, _ = ioctl(c, tid, b'\xff' * 7 + b'\x7f' + b'\xff' * 7 + b'\x7f', NETIF, 65536)
assert st == 0xC000000D, hex(st)
st, _ = ioctl(c, tid, b'\x00' * 16, NETIF, 65536)
assert st == 0xC000000D, hex(st)
fid = c.openFile(tid, 'objid.txt', desiredAccess=0x81)
try:
    c.getSMBServer().ioctl(tid, fid, ctlCode=0x00090018, flags=1, maxOutputResponse=1024)
    raise AssertionError('unknown FSCTL answered')
except smb3.SessionError as e:
    assert e.error == 0xC0000010, hex(e.error)
o1 = c.getSMBServer().ioctl(tid, fid, ctlCode=0x000900C0, flags=1, maxOutputResponse=64)
o2 = c.getSMBServer().ioctl(tid, fid, ctlCode=0x000900C0, flags=1, maxOutputResponse=64)
assert len(o1) == 64 and o1 == o2, (len(o1), o1 == o2)
assert struct.unpack_from('<Q', o1)[0] == os.stat('$SHARE/objid.txt').st_ino
assert o1[32:48] == o1[0:16] and o1[48:64] == b'\x00' * 16
c.closeFile(tid, fid)
ipc = c.connectTree('IPC\$')
st, _ = ioctl(c, ipc, ALL, 0x00090018, 1024)
assert st == 0xC00000BB, hex(st)
def pipe_wait(name):
    n = name.encode('utf-16-le')
    return ioctl(c, ipc, ALL, 0x00110018, 0,
        struct.pack('<QIBB', 0, len(n), 0, 0) + n)[0]
assert pipe_wait('srvsvc') == 0, hex(pipe_wait('srvsvc'))
assert pipe_wait('nosuch') == 0xC0000034, hex(pipe_wait('nosuch'))
st, _ = ioctl(c, ipc, ALL, 0x00060194, 1024, b'\x04\x00' + 'x'.encode('utf-16-le'))
assert st == 0xC0000225, hex(st)
c.logoff()
c = conn(0x0210)
tid = c.connectTree('share')
st, _ = ioctl(c, tid, ALL, NETIF, 65536)
assert st == 0xC00000BB, hex(st)
c.logoff()
"
integ_stop

# Multichannel (HACKING.md, Channel binding): a second connection binds to
# a session and serves its opens (smbtorture smb2.session.bind1: the file
# opened on the first connection is queried through the second; bind2:
# three connections, two sessions, channels dropping).
if command -v smbtorture >/dev/null; then
	integ_conf
	integ_start || { fail "server restarts"; finish; }
	for t in bind1 bind2; do
		out=$T/mc.$t
		timeout 120 smbtorture //127.0.0.1/share -p "$PORT" \
		    -U "alice%$ALICE_PW" --target=samba3 "smb2.session.$t" \
		    </dev/null >"$out" 2>&1
		if grep -q "^success: $t" "$out"; then
			ok "multichannel: smb2.session.$t"
		else
			fail "multichannel: smb2.session.$t"; tail -n 5 "$out" >&2
		fi
	done
	grep -q "as a channel" "$LOG" && ok "channel binding is logged" ||
	    fail "channel binding is logged"
	integ_stop
	# With several workers per user the channels of a session might
	# land in different workers: MULTI_CHANNEL is not advertised.
	integ_conf "max workers per user = 2"
	integ_start || { fail "server restarts"; finish; }
	out=$T/mc.noadv
	timeout 60 smbtorture //127.0.0.1/share -p "$PORT" \
	    -U "alice%$ALICE_PW" --target=samba3 smb2.session.bind1 \
	    </dev/null >"$out" 2>&1
	grep -q "^skip: bind1" "$out" &&
	    ok "no MULTI_CHANNEL with several workers per user" ||
	    { fail "no MULTI_CHANNEL with several workers per user"; tail -n 5 "$out" >&2; }
	integ_stop
fi
# ChannelSequence (MS-SMB2 3.3.5.2.10): on 3.x a WRITE carrying a
# ChannelSequence older than the open's (the newest seen on the handle)
# fails with FILE_NOT_AVAILABLE, a newer one moves the open's on, a READ
# with an older one is served; on 2.1 the field is not looked at.
integ_conf
integ_start || { fail "server restarts"; finish; }
check "ChannelSequence: stale WRITE refused on 3.x, ignored on 2.1" \
    timeout 30 $PY -c "
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2Write, SMB2_WRITE

def conn(d):
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=$PORT, preferredDialect=d)
    c.login('alice', '$ALICE_PW')
    return c

def write(c, tid, fid, csn, data=b'abcd'):
    s = c.getSMBServer()
    p = s.SMB_PACKET()
    p['Command'] = SMB2_WRITE
    p['TreeID'] = tid
    # 3.x: the ChannelSequence field; 2.1: the same bytes (Status)
    k = 'ChannelSequence' if 'ChannelSequence' in [f[0] for f in p.structure] else 'Status'
    p[k] = csn
    w = SMB2Write()
    w['FileID'] = fid
    w['Length'] = len(data)
    w['Offset'] = 0
    w['Buffer'] = data
    p['Data'] = w
    return s.recvSMB(s.sendSMB(p))['Status']

FNA = 0xC0000467
c = conn(0x0300)
tid = c.connectTree('share')
fid = c.createFile(tid, 'chanseq.txt')
got = [write(c, tid, fid, n) for n in (0, 5, 4, 5, 6, 0x8006, 0xffff)]
assert got == [0, 0, FNA, 0, 0, FNA, FNA], [hex(x) for x in got]
assert c.readFile(tid, fid, 0, 4) == b'abcd'	# ChannelSequence 0: older, a read
c.closeFile(tid, fid)
c.logoff()
c = conn(0x0210)
tid = c.connectTree('share')
fid = c.createFile(tid, 'chanseq.txt')
got = [write(c, tid, fid, n) for n in (7, 0)]
assert got == [0, 0], [hex(x) for x in got]
c.closeFile(tid, fid)
c.logoff()
"

# More sessions on one connection (DESIGN.md: a worker is one Unix user):
# a second one of alice works, one of bob is relayed to bob's worker
# (HACKING.md, "Several users on one connection") with a log line, and
# alice's first session goes on.
out=$(PORT=$PORT ALICE_PW=$ALICE_PW BOB_PW=$BOB_PW timeout 30 $PY \
    "$ROOT/t/integ/hostile_client.py" sessions 2>&1)
a1=$(awk '$1 == "alice1" { print $2, $3 }' <<<"$out")
a2=$(awk '$1 == "alice2" { print $2, $3 }' <<<"$out")
if [ "${a1#* }" = 0x00000000 ] && [ "${a2#* }" = 0x00000000 ] &&
    [ "${a1% *}" != "${a2% *}" ]; then
	ok "a second session of the same user on a connection"
else
	fail "a second session of the same user on a connection"; echo "$out"
fi
if awk '$1 == "bob" { exit $3 != "0x00000000" }' <<<"$out" &&
    grep -q "^bob " <<<"$out" && grep -q "^echo 0x00000000" <<<"$out"; then
	ok "another user's session on the connection: relayed, the first goes on"
else
	fail "another user's session on the connection: relayed, the first goes on"
	echo "$out"
fi
grep -q "session [0-9a-f]* of bob relayed from worker [0-9]* (uid [0-9]*) to worker [0-9]*" "$LOG" &&
    ok "another user's session is logged" || fail "another user's session is logged"
integ_stop

# Guests (map to guest = bad user: an unknown user name logs in as the
# guest account) reach only shares with guest ok; anonymous (null)
# sessions (empty user name; smbclient -N sends "root", a guest here) only
# IPC$; a known user with a wrong password is still refused.
mkdir -p "$T/pub" && echo hello >"$T/pub/pub.txt" && chmod -R a+rX "$T/pub"
# Also a share of alice only that requires encryption (smbclient turns
# encryption on for a tree only in a session it signs: signing required).
mkdir -p "$T/enc" && chown alice "$T/enc"
INTEG_SHARES="[pub]
	path = $T/pub
	guest ok = yes
	read only = yes

[enc]
	path = $T/enc
	read only = no
	smb encrypt = required
	valid users = alice" integ_conf "map to guest = bad user"
integ_start || fail "server restarts"
check "share with smb encrypt = required, SMB3_11" $SMBC //127.0.0.1/enc \
    -U alice%$ALICE_PW --option="client max protocol=SMB3_11" \
    --option="client signing = required" -c ls
check "share with smb encrypt = required, SMB3_00" $SMBC //127.0.0.1/enc \
    -U alice%$ALICE_PW --option="client max protocol=SMB3_00" \
    --option="client signing = required" -c ls
check_fails "share with smb encrypt = required refuses SMB2_10" $SMBC //127.0.0.1/enc \
    -U alice%$ALICE_PW --option="client max protocol=SMB2_10" -c ls
grep -q "share enc requires encryption the session cannot do" "$LOG" ||
    fail "refused unencryptable tree connect is logged"
check "unencrypted request on a tree that requires encryption: ACCESS_DENIED" \
    timeout 30 $PY -c "
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2Create, SMB2_CREATE
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=$PORT, preferredDialect=0x0300)
c.login('alice', '$ALICE_PW')
tid = c.connectTree('enc')
s = c.getSMBServer()
assert s._Session['TreeConnectTable'][tid]['EncryptData'], 'share flag ENCRYPT_DATA'
fid = c.createFile(tid, 'enc.txt')		# encrypted: served
c.closeFile(tid, fid)
# impacket encrypts every 3.x session of its own accord: plain from here
s._Session['SessionFlags'] &= ~0x4
s._Session['TreeConnectTable'][tid]['EncryptData'] = False
p = s.SMB_PACKET()
p['Command'] = SMB2_CREATE
p['TreeID'] = tid
cr = SMB2Create()
cr['DesiredAccess'] = 0x80
cr['ShareAccess'] = 7
cr['CreateDisposition'] = 1
cr['Buffer'] = 'enc.txt'.encode('utf-16le')
cr['NameLength'] = len(cr['Buffer'])
p['Data'] = cr
st = s.recvSMB(s.sendSMB(p))['Status']
assert st == 0xC0000022, hex(st)
"
check_fails "valid users: bob refused" $SMBC //127.0.0.1/enc -U bob%$BOB_PW -c ls
grep -q NT_STATUS_ACCESS_DENIED "$T/check.out" &&
    grep -q "user bob refused share enc (valid/invalid users)" "$LOG" &&
    ok "valid users refusal: ACCESS_DENIED and a log line" ||
    fail "valid users refusal: ACCESS_DENIED and a log line"
check "guest (unknown user) lists a guest ok share" $SMBC //127.0.0.1/pub \
    -U nosuchuser%whatever -c ls
grep -q pub.txt "$T/check.out" || fail "guest ls shows pub.txt"
grep -q "unknown user nosuchuser mapped to guest" "$LOG" &&
    ok "guest mapping is logged" || fail "guest mapping is logged"
check_fails "guest refused a share without guest ok" $SMBC //127.0.0.1/share \
    -U nosuchuser%whatever -c ls
grep -q NT_STATUS_ACCESS_DENIED "$T/check.out" &&
    grep -q "guest refused share share (guest ok = no)" "$LOG" &&
    ok "guest refusal: ACCESS_DENIED and a log line" ||
    fail "guest refusal: ACCESS_DENIED and a log line"
check_fails "known user with a wrong password is not mapped to guest" \
    $SMBC //127.0.0.1/pub -U alice%wrongpw -c ls
grep -q NT_STATUS_LOGON_FAILURE "$T/check.out" ||
    fail "wrong password with map to guest: LOGON_FAILURE"
check "anonymous session on IPC\$" $SMBC //127.0.0.1/IPC\$ -U% -c exit
check_fails "anonymous session refused a guest ok disk share" $SMBC //127.0.0.1/pub -U% -c ls
grep -q NT_STATUS_ACCESS_DENIED "$T/check.out" &&
    grep -q "anonymous session refused share pub" "$LOG" &&
    ok "anonymous refusal: ACCESS_DENIED and a log line" ||
    fail "anonymous refusal: ACCESS_DENIED and a log line"
integ_stop
finish
