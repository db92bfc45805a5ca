# Shared impacket client code of the shared-state tests (t/integ/state*.sh):
# log in as alice or bob on the server's PORT, raw SMB2 LOCK and
# CHANGE_NOTIFY, lease and durable create contexts, NTSTATUS names.
# Imported by state_client.py, state_notify.py and state_durable.py (their
# directory is on sys.path when they run as scripts).
import struct, sys
from impacket import smb3structs as s3
from impacket import smb3, nt_errors
from impacket.smbconnection import SMBConnection, SessionError
from notify_lib import notify_answer, notify_send

PORT = int(sys.argv[1])
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA
PASSWORDS = {"alice": "alicepw1", "bob": "bobpw1", "carol": "carolpw1"}


def guid_dialect(guid):
    """An impacket SMB3 that negotiates with a fixed ClientGuid (impacket
    sends it as 16 characters), so two connections are one client."""
    class FixedGuid(smb3.SMB3):
        def negotiateSession(self, *a, **kw):
            self.ClientGuid = guid
            return super().negotiateSession(*a, **kw)
    return FixedGuid


def keep_last(srv):
    """srv.last: the last packet received (for the create contexts)."""
    orig = srv.recvSMB

    def keep(*args, **kw):
        p = orig(*args, **kw)
        srv.last = p
        return p
    srv.recvSMB = keep


def login(user, dialect=s3.SMB2_DIALECT_21, guid=None, keep=False):
    if guid is not None:
        c = SMBConnection(existingConnection=guid_dialect(guid)(
            "127.0.0.1", "127.0.0.1", sess_port=PORT,
            preferredDialect=dialect))
    else:
        c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                          preferredDialect=dialect)
    c.login(user, PASSWORDS[user])
    t = c.connectTree("share")
    if keep:
        keep_last(c.getSMBServer())
    return c, t


def name_of(e):
    code = e.get_error_code() if hasattr(e, "get_error_code") else e.error
    return nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


def status_of(fn):
    try:
        fn()
        return "OK"
    except (SessionError, smb3.SessionError) as e:
        return name_of(e)


def create(c, tid, name, access=RW, share=ALL, disp=s3.FILE_OPEN_IF,
           contexts=None):
    return c.getSMBServer().create(tid, name, access, share,
                                   s3.FILE_NON_DIRECTORY_FILE, disp, 0,
                                   createContexts=contexts)


def lock(c, tid, fid, off, length, flags):
    srv = c.getSMBServer()
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_LOCK
    pkt['TreeID'] = tid
    raw = fid.getData() if hasattr(fid, 'getData') else bytes(fid)
    body = struct.pack('<HHL', 48, 1, 0) + raw + \
        struct.pack('<QQLL', off, length, flags, 0)
    pkt['Data'] = body
    ans = srv.recvSMB(srv.sendSMB(pkt))
    if ans['Status'] != 0:
        raise smb3.SessionError(ans['Status'], ans)


def ctx(name, data):
    """One create context (impacket's SMB2CreateContext)."""
    c = s3.SMB2CreateContext()
    c['NameOffset'] = 16
    c['NameLength'] = 4
    c['DataOffset'] = 24
    c['DataLength'] = len(data)
    c['Buffer'] = name + b'\0' * 4 + data
    return c


def lease_ctx(key, state):
    return ctx(b'RqLs', key + struct.pack('<LLQ', state, 0, 0))


class Blob:
    """Create contexts chained by hand (impacket only concatenates)."""
    def __init__(self, items):
        out = b''
        for i, (name, data) in enumerate(items):
            c = struct.pack('<LHHHHL', 0, 16, 4, 0, 24, len(data)) + name + \
                b'\0' * 4 + data
            if i + 1 < len(items):
                c += b'\0' * (-len(c) % 8)
                c = struct.pack('<L', len(c)) + c[4:]
            out += c
        self.data = out

    def getData(self):
        return self.data


def lease_v2(key, state, parent=None):
    # flag 4: SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET
    return (b'RqLs', key + struct.pack('<LLQ', state, 4 if parent else 0, 0) +
            (parent or b'\0' * 16) + struct.pack('<HH', 0, 0))


def resp_contexts(srv):
    """The create contexts of the last response (keep_last)."""
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    off, ln = struct.unpack_from('<LL', raw, 80)
    buf, out, pos = raw[off - 64:off - 64 + ln], {}, 0
    while pos + 16 <= len(buf):
        nxt, noff, nlen, _, doff, dlen = struct.unpack_from('<LHHHHL', buf, pos)
        out[bytes(buf[pos + noff:pos + noff + nlen])] = \
            bytes(buf[pos + doff:pos + doff + dlen])
        if nxt == 0:
            break
        pos += nxt
    return out


def lease_state(ctxs):
    d = ctxs.get(b'RqLs')
    return struct.unpack_from('<L', d, 16)[0] if d else -1


def break_wait(srv):
    """The next lease break notification's data.  impacket moves its next
    message id back by the notification's CreditCharge (0) minus 1: keep
    its window where it was."""
    w = srv._Connection['SequenceWindow']
    d = srv.recvSMB(0xFFFFFFFFFFFFFFFF)['Data']
    srv._Connection['SequenceWindow'] = w
    return d


def notify_wait(c, tid, dirname, flt):
    """CHANGE_NOTIFY on dirname with filter flt; prints "waiting" once it
    is sent and returns (status, [(action, name)...]) of the final answer
    (past the STATUS_PENDING interim)."""
    srv = c.getSMBServer()
    d = srv.create(tid, dirname, s3.FILE_READ_DATA, ALL,
                   s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    mid = notify_send(srv, tid, d, flt)
    print("waiting", flush=True)
    return notify_answer(srv, mid, 10)


def changes_line(status, changes):
    return "status 0x%x changes %s" % (
        status, " ".join("%d:%s" % a for a in changes))
