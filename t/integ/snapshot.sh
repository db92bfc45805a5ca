#!/usr/bin/env bash
# Previous versions (worker/snapshot.h): a share whose `snapshot directory`
# holds copies of it named @GMT-..., as btrfs/ZFS/rsnapshot jobs make them.
# FSCTL_SRV_ENUMERATE_SNAPSHOTS lists them newest first (and only them: a
# file and a name in another format are not snapshots); a CREATE with a
# TWrp context opens the file or directory of that time; smbclient's
# `allinfo` and its @GMT paths use both.  Nothing in a snapshot changes over
# SMB, although the copies on disk are alice's and writable by her: write
# access is granted as Windows grants it and shown in FileAccessInformation,
# but every WRITE, set info and changing FSCTL is refused
# (MEDIA_WRITE_PROTECTED); no new name or stream, no link or rename out of
# it or into it (NOT_SAME_DEVICE), by TWrp or by the snapshot directory's
# own path.  A user who may not list the snapshot
# directory is offered none; a share without one answers as before.
# smbtorture's smb2.ioctl.shadow_copy, smb2.twrp.openroot and
# smb2.twrp.write run against it.
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_SHARES="[snap]
	path = $T/snap
	read only = no
	snapshot directory = .snapshots

[fold]
	path = $T/fold
	read only = no
	snapshot directory = Kopien-Ä

[hidden]
	path = $T/hidden
	read only = no
	snapshot directory = .snap"
S1=@GMT-2026.01.02-03.04.05
S2=@GMT-2026.02.03-04.05.06
mk() { mkdir -p "$(dirname "$1")"; printf '%s' "$2" >"$1"; }
mk "$T/snap/a.txt" v3
mk "$T/snap/d/b.txt" b2
mk "$T/snap/.snapshots/$S1/a.txt" v1
mk "$T/snap/.snapshots/$S1/d/b.txt" b1
mk "$T/snap/.snapshots/$S2/a.txt" v2
# a named stream (worker/smb2_create.c: an xattr) of the old a.txt
setfattr -n user.usmbd.stream.s1 -v old "$T/snap/.snapshots/$S1/a.txt"
mkdir -p "$T/snap/.snapshots/notasnap"
mk "$T/snap/.snapshots/@GMT-2026.03.01-00.00.00" "a file, not a snapshot"
mk "$T/fold/Kopien-Ä/$S1/a.txt" f1
mk "$T/hidden/h.txt" now
mk "$T/hidden/.snap/$S1/h.txt" then
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
chown -R alice "$T/snap" "$T/hidden" "$T/fold"
chmod 0700 "$T/hidden/.snap"
touch -d '2026-01-02 03:04:05' "$T/snap/.snapshots/$S1/a.txt"
integ_start || exit 1

# names, sizes, times, modes, contents and xattrs (streams, DOS attributes)
sums() {
	{ find "$T/snap/.snapshots" "$T/fold/Kopien-Ä" -printf '%p %s %T@ %m\n' |
	    sort
	  find "$T/snap/.snapshots" "$T/fold/Kopien-Ä" -type f -exec md5sum {} + |
	    sort
	  getfattr -R -d -m - "$T/snap/.snapshots" "$T/fold/Kopien-Ä" 2>/dev/null
	} | md5sum
}
before=$(sums)

"$PYTHON" - "$PORT" "$ALICE_PW" "$S1" "$S2" "$ROOT/t/integ" "$T/snap" "$BOB_PW" > "$T/out.py" 2>&1 <<'PYEOF'
import calendar, struct, sys, time
from impacket.smbconnection import SMBConnection, SessionError
from impacket import smb3, smb3structs as s3
port, apw, S1, S2 = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
OK, NOT_FOUND, INVALID_PARAMETER = 0, 0xC0000034, 0xC000000D
WRITE_PROTECTED, NOT_SAME_DEVICE = 0xC00000A2, 0xC00000D4
INVALID_DEVICE_REQUEST = 0xC0000010
ENUM_SNAPS = 0x00144064
fails = 0

def check(what, cond, detail=''):
    global fails
    print('%s %s%s' % ('ok  ' if cond else 'FAIL', what,
          ' -- ' + str(detail) if detail else ''))
    fails += 0 if cond else 1

def code(e):
    return e.getErrorCode() if hasattr(e, 'getErrorCode') else e.get_error_code()

def ft(token):
    t = calendar.timegm(time.strptime(token, '@GMT-%Y.%m.%d-%H.%M.%S'))
    return (t + 11644473600) * 10000000

def twrp(token):
    c = s3.SMB2CreateContext()
    c['Buffer'] = b'TWrp' + b'\0' * 4 + struct.pack('<Q', ft(token))
    c['NameOffset'] = 16
    c['NameLength'] = 4
    c['DataOffset'] = 24
    c['DataLength'] = 8
    c['Next'] = 0
    return c

def login(share):
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=port)
    c.login('alice', apw)
    return c, c.getSMBServer(), c.connectTree(share)

def create(srv, t, name, access=0x80000000 | 0x1, disp=1, opts=0, token=None):
    """status, fid"""
    try:
        return OK, srv.create(t, name, access, 7, opts, disp, 0,
            createContexts=[twrp(token)] if token else None)
    except (SessionError, smb3.SessionError) as e:
        return code(e), None

def read_all(srv, t, fid):
    return srv.read(t, fid, 0, 4096)

def status(fn):
    try:
        fn()
        return OK
    except (SessionError, smb3.SessionError) as e:
        return code(e)

def write_refused(srv, t, name, token=None, what=''):
    """write access granted, the WRITE refused, the content unchanged"""
    st, fid = create(srv, t, name, access=0x3, token=token)
    check('write access to %s%s: granted' % (name, what), st == OK, hex(st))
    if fid:
        ws = status(lambda: srv.write(t, fid, b'changed', 0, 7))
        check('... its WRITE: MEDIA_WRITE_PROTECTED', ws == WRITE_PROTECTED,
              hex(ws))
        srv.close(t, fid)

def ioctl(srv, t, fid, maxout):
    try:
        return OK, srv.ioctl(t, fid, ENUM_SNAPS, flags=1, inputBlob=b'',
            maxOutputResponse=maxout)
    except (SessionError, smb3.SessionError) as e:
        return code(e), None

def tokens(buf):
    n, ret, size = struct.unpack_from('<III', buf)
    names = buf[12:12 + size].decode('utf-16-le').split('\0')
    return n, ret, size, [x for x in names if x]

c, srv, t = login('snap')
st, root = create(srv, t, '', access=0x1, opts=1)
check('the share root opens', st == OK, hex(st))
st, out = ioctl(srv, t, root, 16)
n, ret, size = struct.unpack_from('<III', out) if out else (0, 0, 0)
check('ENUMERATE_SNAPSHOTS in 16 bytes: 2 snapshots, none returned, '
      'the size of the array', (st, n, ret, size, len(out or b'')) ==
      (OK, 2, 0, 2 * 50 + 2, 16), (hex(st), n, ret, size))
st, out = ioctl(srv, t, root, 4096)
got = tokens(out) if out else None
check('ENUMERATE_SNAPSHOTS: the two snapshots, newest first',
      st == OK and got == (2, 2, 102, [S2, S1]), (hex(st), got))
st, _ = ioctl(srv, t, root, 12)
check('ENUMERATE_SNAPSHOTS with less than 16 bytes: INVALID_PARAMETER',
      st == INVALID_PARAMETER, hex(st))

for tok, name, want in ((S1, 'a.txt', b'v1'), (S2, 'a.txt', b'v2'),
                        (None, 'a.txt', b'v3'), (S1, 'd\\b.txt', b'b1')):
    st, fid = create(srv, t, name, token=tok)
    data = read_all(srv, t, fid) if fid else None
    check('%s at %s reads %r' % (name, tok or 'now', want),
          st == OK and data == want, (hex(st), data))
    if fid:
        srv.close(t, fid)
st, _ = create(srv, t, 'd\\b.txt', token=S2)
check('a file missing from a snapshot: OBJECT_PATH/NAME_NOT_FOUND',
      st in (NOT_FOUND, 0xC000003A), hex(st))
st, _ = create(srv, t, 'a.txt', token='@GMT-2026.01.02-03.04.06')
check('a time with no snapshot: OBJECT_NAME_NOT_FOUND', st == NOT_FOUND,
      hex(st))
st, d = create(srv, t, '', access=0x1, opts=1, token=S1)
listed = None
if d:
    # FileNamesInformation: NextEntryOffset, FileIndex, FileNameLength
    buf, off, listed = srv.queryDirectory(t, d, '*'), 0, []
    while True:
        nxt, _, ln = struct.unpack_from('<III', buf, off)
        listed.append(buf[off + 12:off + 12 + ln].decode('utf-16-le'))
        if nxt == 0:
            break
        off += nxt
    listed.sort()
    srv.close(t, d)
check('the root of a snapshot opens with TWrp and lists its names',
      st == OK and listed == ['.', '..', 'a.txt', 'd'], (hex(st), listed))
try:
    listed = sorted(f.get_longname() for f in c.listPath('snap', '*'))
except Exception as e:
    listed = str(e)
check('the live listing is the live share', 'a.txt' in listed and 'd' in listed,
      listed)

# The names a previous version's handle reports: the client's own, as
# Samba (shadow_copy2) answers, never the snapshot's place on the server.
# FileNormalizedNameInformation is a 3.1.1 class; FileNameInformation is
# not a class SMB2 queries (INVALID_INFO_CLASS), FileAllInformation's
# name is its name.
def names(srv, t, fid):
    def q(cls):
        try:
            return srv.queryInfo(t, fid, fileInfoClass=cls)
        except (SessionError, smb3.SessionError) as e:
            return code(e)
    def name(b, off=0):
        if isinstance(b, int):
            return hex(b)
        n = struct.unpack_from('<I', b, off)[0]
        return b[off + 4:off + 4 + n].decode('utf-16-le')
    return (name(q(18), 96), name(q(48)), name(q(21)))

sys.path.insert(0, sys.argv[5])
from posix_lib import connect as connect311  # 3.1.1 signing impacket lacks
c311 = connect311(port, 'alice', apw, offer=False)
srv311, t311 = c311.getSMBServer(), c311.connectTree('snap')
for tok, name, opts, want in (
        (S1, 'a.txt', 0, ('\\a.txt', 'a.txt', 'a.txt')),
        (S1, 'd\\b.txt', 0, ('\\d\\b.txt', 'd\\b.txt', 'b.txt')),
        (S1, 'd', 1, ('\\d', 'd', 'd')),
        (S1, 'a.txt:s1', 0, ('\\a.txt', 'a.txt:s1', 'a.txt')),
        (S2, '', 1, ('\\', '', '')),
        (None, '.snapshots\\%s\\a.txt' % S1, 0,
         ('\\.snapshots\\%s\\a.txt' % S1,
          '.snapshots\\%s\\a.txt' % S1, 'a.txt'))):
    st, fid = create(srv311, t311, name, opts=opts, token=tok)
    got = names(srv311, t311, fid) if fid else None
    check('names of %r at %s: FileAll, FileNormalizedName, '
          'FileAlternateName %r' % (name, tok or 'its own path', want),
          st == OK and got == want, (hex(st), got))
    if fid:
        srv311.close(t311, fid)
# CHANGE_NOTIFY on a previous version's directory: names relative to
# it (what a job adding to the snapshot on the server makes)
import os, threading
from notify_lib import notify_answer, notify_send
st, nd = create(srv311, t311, 'd', opts=1, token=S1)
if nd:
    sd = os.path.join(sys.argv[6], '.snapshots', S1, 'd')
    was = os.stat(sd)
    mid = notify_send(srv311, t311, nd, 0x1)
    th = threading.Timer(0.5, lambda: open(os.path.join(sd, 'late.txt'),
                                           'w').close())
    th.start()
    got = notify_answer(srv311, mid, 10)
    th.join()
    srv311.close(t311, nd)
    # the snapshot as it was, for the check of it at the end
    os.unlink(os.path.join(sd, 'late.txt'))
    os.utime(sd, ns=(was.st_atime_ns, was.st_mtime_ns))
check('CHANGE_NOTIFY on d at %s: late.txt, relative to it' % S1,
      st == OK and got == (0, [(1, 'late.txt')]), (hex(st), got if nd else None))
c311.logoff()

# A durable, leased handle of a previous version comes back on a new
# connection of the same client by the client's name (the lease ties the
# handle to it), and still answers that name.
import socket
class FixedGuid(smb3.SMB3):
    def negotiateSession(self, *a, **kw):
        self.ClientGuid = 'usmbd-twrp-dur!!'
        return super().negotiateSession(*a, **kw)
from state_lib import Blob      # contexts chained by hand
def ctxs(items):
    return [Blob(items)]
def dconn(user='alice', pw=apw):
    c = SMBConnection(existingConnection=FixedGuid(
        '127.0.0.1', '127.0.0.1', sess_port=port,
        preferredDialect=s3.SMB2_DIALECT_30))
    c.login(user, pw)
    return c, c.getSMBServer(), c.connectTree('snap')
key, cguid = b'twrp-lease-key!!', b'twrp-create-guid'
lease = (b'RqLs', key + struct.pack('<LLQ', 3, 0, 0) + b'\0' * 16 +
         struct.pack('<HH', 0, 0))
tw = (b'TWrp', struct.pack('<Q', ft(S1)))
dc1, dsrv1, dt1 = dconn()
try:
    dfid = dsrv1.create(dt1, 'a.txt', 0x80000001, 7, 0, 1, 0,
        oplockLevel=0xFF, createContexts=ctxs([lease, tw, (b'DH2Q',
        struct.pack('<LLQ', 60000, 0, 0) + cguid)]))
except (SessionError, smb3.SessionError) as e:
    dfid = None
    check('a durable leased handle of a previous version', False, hex(code(e)))
if dfid:
    dsrv1._NetBIOSSession.get_socket().shutdown(socket.SHUT_RDWR)
    time.sleep(0.5)
    fid = dfid.getData() if hasattr(dfid, 'getData') else bytes(dfid)
    # another user with the same client GUID, lease key, create GUID and
    # name: the handle is alice's, not his
    bc, bsrv, bt = dconn('bob', sys.argv[7])
    try:
        bsrv.create(bt, 'a.txt', 0x80000001, 7, 0, 1, 0, oplockLevel=0xFF,
            createContexts=ctxs([lease, tw,
            (b'DH2C', fid + cguid + struct.pack('<L', 0))]))
        st = OK
    except (SessionError, smb3.SessionError) as e:
        st = code(e)
    check("bob's DH2C of alice's previous-version handle: ACCESS_DENIED",
          st == 0xC0000022, hex(st))
    bc.logoff()
    dc2, dsrv2, dt2 = dconn()
    try:
        rfid = dsrv2.create(dt2, 'a.txt', 0x80000001, 7, 0, 1, 0,
            oplockLevel=0xFF, createContexts=ctxs([lease, tw,
            (b'DH2C', fid + cguid + struct.pack('<L', 0))]))
        st = OK
    except (SessionError, smb3.SessionError) as e:
        rfid, st = None, code(e)
    got = names(dsrv2, dt2, rfid)[0] if rfid else None
    data = read_all(dsrv2, dt2, rfid) if rfid else None
    check('... reconnects by the client name (DH2C, TWrp, the lease), '
          'reads v1, FileAllInformation names \\a.txt',
          st == OK and data == b'v1' and got == '\\a.txt',
          (hex(st), data, got))
    if rfid:
        dsrv2.close(dt2, rfid)
    dc2.logoff()

# Nothing in a snapshot changes.
write_refused(srv, t, 'a.txt', S1, ' (TWrp)')
st, fid = create(srv, t, 'a.txt', access=0x3, token=S1)
if fid:
    ss = status(lambda: srv.ioctl(t, fid, 0x000900C4, flags=1,
                                  inputBlob=b'\x01', maxOutputResponse=0))
    check('FSCTL_SET_SPARSE on it: MEDIA_WRITE_PROTECTED',
          ss == WRITE_PROTECTED, hex(ss))
    fs = status(lambda: srv.flush(t, fid))
    check('... FLUSH succeeds (nothing to write)', fs == OK, hex(fs))
    srv.close(t, fid)
st, _ = create(srv, t, 'a.txt', access=0x10001, opts=0x1000, token=S1)
check('DELETE_ON_CLOSE on a previous version: MEDIA_WRITE_PROTECTED',
      st == WRITE_PROTECTED, hex(st))
st, _ = create(srv, t, 'a.txt:new', access=0x3, disp=3, token=S1)
check('OPEN_IF of a new stream of a previous version: not made',
      st == NOT_FOUND, hex(st))
st, _ = create(srv, t, 'a.txt', access=0x1, disp=5, token=S1)
check('OVERWRITE_IF of a previous version: MEDIA_WRITE_PROTECTED',
      st == WRITE_PROTECTED, hex(st))
st, _ = create(srv, t, 'new.txt', access=0x1, disp=3, token=S1)
check('a new name in a snapshot: MEDIA_WRITE_PROTECTED',
      st == WRITE_PROTECTED, hex(st))
write_refused(srv, t, '.snapshots\\%s\\a.txt' % S1)
st, _ = create(srv, t, '.snapshots\\%s\\new.txt' % S1, access=0x1, disp=2)
check('a new file in the snapshot directory: MEDIA_WRITE_PROTECTED',
      st == WRITE_PROTECTED, hex(st))
st, _ = create(srv, t, '.snapshots\\x', access=0x1, disp=2, opts=1)
check('a new directory in the snapshot directory: MEDIA_WRITE_PROTECTED',
      st == WRITE_PROTECTED, hex(st))
st, fid = create(srv, t, 'a.txt', access=0x02000000, token=S1)
check('MAXIMUM_ALLOWED on a previous version opens', st == OK, hex(st))
if fid:
    acc = struct.unpack('<I', srv.queryInfo(t, fid, infoType=1,
                        fileInfoClass=8)[:4])[0]
    check('... its FileAccessInformation shows the write rights its mode '
          'grants, as Windows shows them', acc is not None and
          acc & 0x000D0156 == 0x000D0156 and acc & 0x1, hex(acc or 0))
    for klass, blob, want, what in (
            (4, b'\0' * 32 + struct.pack('<I', 0x2) + b'\0' * 4,
             WRITE_PROTECTED, 'attributes (FileBasicInformation)'),
            (20, struct.pack('<Q', 0), WRITE_PROTECTED, 'EndOfFile'),
            (13, b'\x01', WRITE_PROTECTED, 'delete on close'),
            (11, struct.pack('<B7xQI', 0, 0, 18) + 'stolen.txt'.encode('utf-16-le')[:18],
             NOT_SAME_DEVICE, 'a hard link out of it'),
            (10, struct.pack('<B7xQI', 0, 0, 20) + 'renamed.txt'.encode('utf-16-le')[:20],
             NOT_SAME_DEVICE, 'a rename')):
        try:
            srv.setInfo(t, fid, blob, 1, klass)
            st = OK
        except (SessionError, smb3.SessionError) as e:
            st = code(e)
        check('set %s on a previous version: %s' % (what, hex(want)),
              st == want, hex(st))
    srv.close(t, fid)
st, fid = create(srv, t, 'a.txt', access=0x00010000 | 0x1)
check('DELETE access to the live file', st == OK, hex(st))
if fid:
    name = ('.snapshots\\%s\\b.txt' % S1).encode('utf-16-le')
    for klass, what in ((10, 'a rename'), (11, 'a hard link')):
        try:
            srv.setInfo(t, fid, struct.pack('<B7xQI', 0, 0, len(name)) + name,
                        1, klass)
            st = OK
        except (SessionError, smb3.SessionError) as e:
            st = code(e)
        check('%s of a live file into a snapshot: NOT_SAME_DEVICE' % what,
              st == NOT_SAME_DEVICE, hex(st))
    srv.close(t, fid)

# Another spelling of a non-ASCII snapshot directory, which only the name
# lookup's Unicode case folding finds: judged on the name found.
c3, srv3, t3 = login('fold')
write_refused(srv3, t3, 'kopien-\u00e4\\%s\\a.txt' % S1,
              what=' (another case of a non-ASCII snapshot directory)')
st, fid = create(srv3, t3, 'kopien-\u00e4\\%s\\a.txt' % S1)
check('... which reads it', st == OK and read_all(srv3, t3, fid) == b'f1',
      hex(st))

# A share without a snapshot directory answers as before.
c2, srv2, t2 = login('share')
st, r2 = create(srv2, t2, '', access=0x1, opts=1)
st, _ = ioctl(srv2, t2, r2, 4096)
check('no snapshot directory: ENUMERATE_SNAPSHOTS is INVALID_DEVICE_REQUEST',
      st == INVALID_DEVICE_REQUEST, hex(st))
st, _ = create(srv2, t2, '', access=0x1, opts=1, token=S1)
check('no snapshot directory: TWrp is OBJECT_NAME_NOT_FOUND',
      st == NOT_FOUND, hex(st))
sys.exit(1 if fails else 0)
PYEOF
rc=$?
cat "$T/out.py"
n_ok=$(grep -c '^ok' "$T/out.py")
n_fail=$(grep -c '^FAIL' "$T/out.py")
if [ "$rc" = 0 ] && [ "$n_fail" = 0 ] && [ "$n_ok" -gt 20 ]; then
	ok "previous versions over impacket: $n_ok checks"
else
	fail "previous versions over impacket: $n_ok ok, $n_fail failed (rc $rc)"
fi
if [ "$(sums)" = "$before" ]; then
	ok "the snapshot directory is as it was (names, sizes, times, modes, contents, xattrs)"
else
	fail "the snapshot directory changed"
	find "$T/snap/.snapshots" -ls
fi
[ -e "$T/snap/stolen.txt" ] || [ -e "$T/snap/renamed.txt" ] &&
    fail "a name was made out of a snapshot"

# smbclient: allinfo lists the previous versions; an @GMT path reads one.
out=$(timeout 60 smbclient //127.0.0.1/snap -p "$PORT" -U "alice%$ALICE_PW" \
    -m SMB3 -c "allinfo a.txt; get $S1/a.txt $T/got.txt" 2>&1)
if grep -q "$S2" <<<"$out" && grep -q "$S1" <<<"$out" &&
    [ "$(cat "$T/got.txt" 2>/dev/null)" = v1 ]; then
	ok "smbclient: allinfo shows both snapshots, get $S1/a.txt reads v1"
else
	fail "smbclient: allinfo and an @GMT path"; echo "$out"
fi

# bob may not list alice's snapshot directory: no previous versions.
out=$(timeout 60 smbclient //127.0.0.1/hidden -p "$PORT" -U "bob%$BOB_PW" \
    -m SMB3 -c "allinfo h.txt" 2>&1)
out2=$(timeout 60 smbclient //127.0.0.1/hidden -p "$PORT" -U "bob%$BOB_PW" \
    -m SMB3 -c "get $S1/h.txt $T/bob.txt" 2>&1)
if grep -q "^write_time:" <<<"$out" && ! grep -q "@GMT" <<<"$out" &&
    grep -q NT_STATUS_OBJECT_NAME_NOT_FOUND <<<"$out2" &&
    [ ! -e "$T/bob.txt" ]; then
	ok "a user who may not list the snapshot directory is offered none"
else
	fail "a user who may not list the snapshot directory"; echo "$out$out2"
fi

# smbtorture: the enumeration, the root of a snapshot by TWrp, a previous
# version opened for writing (granted, each change refused) and a named
# stream of a previous version read;
# also with Samba 4.22's smbtorture where scripts/samba-ref.sh installed it.
TORTURES=4.17
"$ROOT/scripts/samba-ref.sh" path >/dev/null 2>&1 &&
    TORTURES="4.17 4.22"
for v in $TORTURES; do
	for t in smb2.ioctl.shadow_copy smb2.twrp.openroot smb2.twrp.write \
	    smb2.twrp.stream; do
		o=$T/torture.$v.$t
		if [ "$v" = 4.17 ]; then
			run=(smbtorture)
		else
			run=("$ROOT/scripts/samba-ref.sh" run smbtorture)
		fi
		timeout 120 "${run[@]}" //127.0.0.1/snap -p "$PORT" \
		    -U "alice%$ALICE_PW" --option=torture:twrp_snapshot=$S1 \
		    --option=torture:twrp_file=a.txt \
		    --option=torture:twrp_stream=s1 \
		    --option=torture:twrp_stream_size=3 "$t" >"$o" 2>&1
		if grep -q -x "success: ${t##*.}" "$o"; then
			ok "smbtorture ($v) $t"
		else
			fail "smbtorture ($v) $t"; tail -5 "$o"
		fi
	done
done

finish
