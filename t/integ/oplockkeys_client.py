# Client of t/integ/oplockkeys.sh: what CREATE grants on a share with
# Samba's caching keys, seen through impacket.
#
#	oplockkeys_client.py PORT SHARE MODE
#
# MODE is what the share [SHARE] (or the server) is configured with:
#	off	oplocks = no
#	level2	level2 oplocks = no
#	veto	veto oplock files = /*.mdb/*.accdb/
#	plain	none of the keys
#	noleases	a plain share on a server with smb2 leases = no
# Prints "ok DESC" or "FAIL DESC: why" per check; DESC carries what was
# granted, so the same run against Samba shows where it differs.
import struct
import sys
import threading
import time
import uuid

from impacket import smb3structs as s3
from impacket import smb3
from impacket.smbconnection import SMBConnection

PORT, SHARE, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
PASSWORDS = {"alice": "alicepw1", "bob": "bobpw1"}
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA
NONE, II, EXCL, BATCH, LEASE = 0, 1, 8, 9, 0xff
R, H, W = 1, 2, 4


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def login(user, dialect=s3.SMB2_DIALECT_30):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=dialect)
    c.login(user, PASSWORDS[user])
    tid = c.connectTree(SHARE)
    srv = c.getSMBServer()
    orig = srv.recvSMB

    def keep(*args, **kw):
        p = orig(*args, **kw)
        if p['Command'] == s3.SMB2_CREATE:
            srv.last = p
        return p
    srv.recvSMB = keep
    return c, tid


class Blob:
    def __init__(self, data):
        self.data = data

    def getData(self):
        return self.data


def rqls(key, state, v2):
    data = key + struct.pack('<LLQ', state, 0, 0)
    if v2:
        data += b'\0' * 16 + struct.pack('<HH', 0, 0)
    return Blob(struct.pack('<LHHHHL', 0, 16, 4, 0, 24, len(data)) +
                b'RqLs' + b'\0' * 4 + data)


def lease_of(raw):
    """The RqLs response context's state, or None when there is none."""
    off, ln = struct.unpack_from('<LL', raw, 80)
    buf, pos = raw[off - 64:off - 64 + ln], 0
    while off and pos + 16 <= len(buf):
        nxt, noff, nlen, _, doff, dlen = struct.unpack_from('<LHHHHL', buf,
                                                            pos)
        if buf[pos + noff:pos + noff + nlen] == b'RqLs':
            return struct.unpack_from('<L', buf, pos + doff + 16)[0]
        if nxt == 0:
            break
        pos += nxt
    return None


def open_(c, tid, name, level, lease=None, key=None, access=RW):
    """(fid, oplock level granted, lease state or None)."""
    srv = c.getSMBServer()
    ctxs = None
    if lease is not None:
        key = key or uuid.uuid4().bytes
        ctxs = [rqls(key, lease, srv.getDialect() >= s3.SMB2_DIALECT_30)]
        level = LEASE
    fid = srv.create(tid, name, access, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN_IF, 0, oplockLevel=level,
                     createContexts=ctxs)
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    return fid, raw[2], lease_of(raw)


def wait_break(c, secs):
    """The next break notification's body, or None after secs."""
    srv = c.getSMBServer()
    w = srv._Connection['SequenceWindow']
    old = srv._timeout
    srv._timeout = secs
    try:
        return bytes(srv.recvSMB(0xFFFFFFFFFFFFFFFF)['Data'])
    except Exception:
        return None
    finally:
        srv._timeout = old
        srv._Connection['SequenceWindow'] = w


def ack(c, tid, body):
    srv = c.getSMBServer()
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_OPLOCK_BREAK
    pkt['TreeID'] = tid
    if len(body) >= 44:	# lease break: ack only when asked to
        if not struct.unpack_from('<L', body, 4)[0] & 1:
            return
        new = struct.unpack_from('<L', body, 28)[0]
        pkt['Data'] = struct.pack('<HHL', 36, 0, 0) + body[8:24] + \
            struct.pack('<LQ', new, 0)
    else:
        pkt['Data'] = struct.pack('<HBBL', 24, body[2], 0, 0) + body[8:24]
    srv.recvSMB(srv.sendSMB(pkt))


def name_of(level):
    return {NONE: "none", II: "level II", EXCL: "exclusive", BATCH: "batch",
            LEASE: "lease"}.get(level, "0x%x" % level)


def lease_name(st):
    if st is None:
        return "no lease context"
    return "".join(b for b, m in (("R", R), ("W", W), ("H", H))
                   if st & m) or "none"


def one(c, tid, name, level, want, lease=None, want_lease=None):
    fid, got, ls = open_(c, tid, name, level, lease)
    c.closeFile(tid, fid)
    asked = ("lease " + lease_name(lease)) if lease is not None else \
        name_of(level)
    if lease is None:
        check("%s: %s asked, %s granted" % (name, asked, name_of(got)),
              got == want, "want %s" % name_of(want))
    else:
        check("%s: %s asked, oplock %s, %s" % (name, asked, name_of(got),
              lease_name(ls)), got == want and ls == want_lease,
              "want %s, %s" % (name_of(want), lease_name(want_lease)))


def second_open(c, tid, name, level, lease, want_first, want_break,
                want_second, want_second_lease=None):
    """alice holds name; bob opens it: the break alice sees, what bob
    gets, how long bob waited."""
    b, bt = login("bob")
    fid, got, ls = open_(c, tid, name, level, lease)
    first = ls if lease is not None else got
    res = {}

    def bob():
        t0 = time.monotonic()
        # alice made the file (0744): bob reads, which breaks W all the same
        res['open'] = open_(b, bt, name, level, lease,
                            access=s3.FILE_READ_DATA)
        res['secs'] = time.monotonic() - t0
    th = threading.Thread(target=bob)
    th.start()
    body = wait_break(c, 3)
    if body is not None:
        ack(c, tid, body)
    th.join(40)
    brk = None
    if body is not None:
        brk = struct.unpack_from('<L', body, 28)[0] if len(body) >= 44 \
            else body[2]
    bfid, bgot, bls = res.get('open', (None, -1, None))
    second = bls if lease is not None else bgot
    show = lease_name if lease is not None else name_of
    check("%s: first %s, bob's open breaks it to %s, bob gets %s "
          "(%.1f s)" % (name, show(first),
                        "nothing (no break)" if brk is None else show(brk),
                        show(second), res.get('secs', -1)),
          first == want_first and brk == want_break and
          second == (want_second if lease is None else want_second_lease),
          "want first %s, break %s, bob %s" % (
              show(want_first), "none sent" if want_break is None else
              show(want_break), show(want_second if lease is None else
                                     want_second_lease)))
    if bfid is not None:
        b.closeFile(bt, bfid)
    c.closeFile(tid, fid)
    b.logoff()


def dir_lease(name, want):
    """An SMB 3.0 login that announces directory leasing (impacket 0.10
    sends its ENCRYPTION constant as its capabilities: widened while it
    negotiates), then directory name opened with a v2 RH lease."""
    saved = smb3.SMB2_GLOBAL_CAP_ENCRYPTION
    smb3.SMB2_GLOBAL_CAP_ENCRYPTION = saved | 0x20
    try:
        c, tid = login("alice")
    finally:
        smb3.SMB2_GLOBAL_CAP_ENCRYPTION = saved
    conn = c.getSMBServer()._Connection
    conn['SupportsDirectoryLeasing'] = False    # impacket's own bookkeeping
    if not conn['ServerCapabilities'] & 0x20:
        check("directory %s: directory leasing offered" % name, False,
              "SMB2_GLOBAL_CAP_DIRECTORY_LEASING not set")
        return
    srv = c.getSMBServer()
    srv.close(tid, srv.create(tid, name, s3.FILE_READ_ATTRIBUTES, ALL,
                              s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0))
    fid = srv.create(tid, name, s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                     ALL, s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0,
                     oplockLevel=LEASE,
                     createContexts=[rqls(uuid.uuid4().bytes, R | H, True)])
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    ls = lease_of(raw)
    srv.close(tid, fid)
    check("directory %s: lease RH asked, %s" % (name, lease_name(ls)),
          ls == want, "want %s" % lease_name(want))
    c.logoff()


def main():
    c, tid = login("alice")
    leasing = c.getSMBServer()._Connection['SupportsFileLeasing']
    if MODE == "noleases":
        check("negotiate: leasing not offered", not leasing,
              "SMB2_GLOBAL_CAP_LEASING set")
        one(c, tid, "nl1.txt", LEASE, NONE, lease=R | W | H, want_lease=None)
        one(c, tid, "nl2.txt", BATCH, BATCH)
        c21, t21 = login("alice", s3.SMB2_DIALECT_21)
        one(c21, t21, "nl3.txt", LEASE, NONE, lease=R | H, want_lease=None)
        return
    check("negotiate: leasing offered", leasing,
          "SMB2_GLOBAL_CAP_LEASING not set")
    if MODE == "off":
        for n, lvl in (("o1.txt", BATCH), ("o2.txt", EXCL), ("o3.txt", II)):
            one(c, tid, n, lvl, NONE)
        one(c, tid, "o4.txt", LEASE, NONE, lease=R | W | H, want_lease=None)
        one(c, tid, "o5.txt", LEASE, NONE, lease=R, want_lease=None)
        c21, t21 = login("alice", s3.SMB2_DIALECT_21)
        one(c21, t21, "o6.txt", LEASE, NONE, lease=R | W | H,
            want_lease=None)
        second_open(c, tid, "o7.txt", BATCH, None, NONE, None, NONE)
        second_open(c, tid, "o8.txt", LEASE, R | W | H, None, None, NONE,
                    None)
        dir_lease("od", None)
    elif MODE == "level2":
        one(c, tid, "l1.txt", BATCH, BATCH)
        one(c, tid, "l2.txt", EXCL, EXCL)
        one(c, tid, "l3.txt", II, NONE)
        one(c, tid, "l4.txt", LEASE, LEASE, lease=R, want_lease=0)
        one(c, tid, "l5.txt", LEASE, LEASE, lease=R | H, want_lease=0)
        one(c, tid, "l6.txt", LEASE, LEASE, lease=R | W | H,
            want_lease=R | W | H)
        second_open(c, tid, "l7.txt", BATCH, None, BATCH, NONE, NONE)
        second_open(c, tid, "l8.txt", LEASE, R | W | H, R | W | H, 0, LEASE,
                    0)
        dir_lease("ld", 0)
    elif MODE == "veto":
        one(c, tid, "db.mdb", BATCH, NONE)
        one(c, tid, "Orders.ACCDB", LEASE, NONE, lease=R | W | H,
            want_lease=None)
        one(c, tid, "notes.txt", BATCH, BATCH)
        one(c, tid, "notes2.txt", LEASE, LEASE, lease=R | W | H,
            want_lease=R | W | H)
        second_open(c, tid, "db2.mdb", BATCH, None, NONE, None, NONE)
        # the key names files: a directory of such a name is leased
        dir_lease("dir.mdb", R | H)
    else:
        one(c, tid, "p1.txt", BATCH, BATCH)
        one(c, tid, "p2.txt", II, II)
        one(c, tid, "p3.txt", LEASE, LEASE, lease=R, want_lease=R)
        one(c, tid, "p4.txt", LEASE, LEASE, lease=R | W | H,
            want_lease=R | W | H)
        second_open(c, tid, "p5.txt", BATCH, None, BATCH, II, II)
        second_open(c, tid, "p6.txt", LEASE, R | W | H, R | W | H, R | H,
                    LEASE, R | H)
        dir_lease("pd", R | H)


main()
