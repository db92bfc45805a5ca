#!/usr/bin/env bash
# `change notify = no` (Samba's global key): every CHANGE_NOTIFY on a
# directory handle is answered STATUS_NOT_IMPLEMENTED at once, no watch
# parked, and the connection goes on.  smbtorture's
# smb2.change_notify_disabled.notfiy_disabled (Samba runs it on its
# selftest's simpleserver, whose [global] says change notify = no) runs
# here, on a server configured so; t/integ/torture.sh cannot run it (its
# one server keeps notifications on for smb2.notify), so
# t/compat/torture.xfail points here.  Samba 4.17 with change notify = no
# passes it too (smbtorture 4.17 and 4.22, measured 2026-12-05).  The same request on a default
# server parks (STATUS_PENDING) and is answered NOTIFY_CLEANUP at close.
. "$(dirname "$0")/lib.sh"

command -v smbtorture >/dev/null || { fail "smbtorture is installed"; finish; }
integ_init
integ_conf "change notify = no"
integ_users
integ_start || { fail "usmbd starts"; finish; }

t=smb2.change_notify_disabled.notfiy_disabled
out=$(timeout --kill-after=5 60 smbtorture "//127.0.0.1/share" -p "$PORT" \
    -U "alice%$ALICE_PW" --target=samba3 --fullname "$t" 2>&1)
if grep -q "^success: $t" <<<"$out"; then
	ok "smbtorture $t"
else
	fail "smbtorture $t"
	tail -n 8 <<<"$out" | sed 's/^/     /'
fi

# and Samba 4.22's smbtorture, when scripts/samba-ref.sh has unpacked it
if "$ROOT/scripts/samba-ref.sh" path >/dev/null 2>&1; then
	out=$(timeout --kill-after=5 60 "$ROOT/scripts/samba-ref.sh" run \
	    smbtorture "//127.0.0.1/share" -p "$PORT" -U "alice%$ALICE_PW" \
	    --target=samba3 --fullname "$t" 2>&1)
	if grep -q "^success: $t" <<<"$out"; then
		ok "smbtorture 4.22 $t"
	else
		fail "smbtorture 4.22 $t"
		tail -n 8 <<<"$out" | sed 's/^/     /'
	fi
fi

# the answer, then the connection still serves (impacket); on a server
# with notifications on, the same request parks
notify() {	# notify PORT: prints "NOTIFY-STATUS ENTRIES" (hex, listing size)
	"$PYTHON" - "$1" "$ALICE_PW" <<'PY'
import sys
from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=int(sys.argv[1]),
                  preferredDialect=smb3.SMB2_DIALECT_30)
c.login('alice', sys.argv[2])
s = c.getSMBServer()
tid = c.connectTree('share')
fid = s.create(tid, 'nd', 0x1, 7, 0x1, 3, 0)    # LIST_DIRECTORY, OPEN_IF dir
p = s.SMB_PACKET()
p['Command'] = s3.SMB2_CHANGE_NOTIFY
p['TreeID'] = tid
r = s3.SMB2ChangeNotify()
r['Flags'] = 1                                  # WATCH_TREE
r['OutputBufferLength'] = 1000
r['FileID'] = fid
r['CompletionFilter'] = 0x3                     # FILE_NAME | DIR_NAME
p['Data'] = r
mid_n = s.sendSMB(p)
# then a CLOSE: a parked notify is answered NOTIFY_CLEANUP by it
p = s.SMB_PACKET()
p['Command'] = s3.SMB2_CLOSE
p['TreeID'] = tid
r = s3.SMB2Close()
r['FileID'] = fid
p['Data'] = r
mid_c = s.sendSMB(p)
st_c = s.recvSMB(mid_c)['Status']
st_n = s.recvSMB(mid_n)['Status']
ls = c.listPath('share', 'nd\\*')
print('%#x' % st_n, len(ls), '%#x' % st_c)
PY
}
res=$(notify "$PORT" 2>&1)
case $res in
"0xc0000002 2 0x0") ok "CHANGE_NOTIFY answers NOT_IMPLEMENTED at once, the connection goes on ($res)" ;;
*) fail "CHANGE_NOTIFY answers NOT_IMPLEMENTED at once, the connection goes on ($res)" ;;
esac
integ_stop

# the default (change notify = yes): parked, then NOTIFY_CLEANUP at close
integ_conf
integ_start || { fail "usmbd starts again"; finish; }
res=$(notify "$PORT" 2>&1)
case $res in
"0x10b 2 0x0") ok "with the default the same request parks, NOTIFY_CLEANUP at close ($res)" ;;
*) fail "with the default the same request parks, NOTIFY_CLEANUP at close ($res)" ;;
esac
finish
