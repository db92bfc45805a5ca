# Several users on one TCP connection (t/integ/multi.sh): impacket's SMB3
# object holds one session, so each user's session dict is kept and swapped
# in (message ids and credits stay with the connection, as on the wire).
#   argv: PORT DIALECT MODE [ARGS...]
#     DIALECT: 202, 21 or 30 (impacket derives 3.1.1 keys wrongly)
#     MODE two TAG: alice and bob on one connection: each writes a file of
#          its own, interleaved; alice is refused bob's 0600 "secret", bob
#          reads it; a byte-range lock of bob's refuses alice's read
#          until bob closes; bob's session logs off and alice goes on.
#     MODE async TAG: a lease break between them both ways (the waiter's
#          interim answer, the holder's ack, the final answer), a blocking
#          lock of bob's granted by alice's unlock, CANCEL of bob's,
#          bob's CHANGE_NOTIFY completed by alice's new file
#          (SHARE in the environment: the share's directory)
#     MODE ownerlogoff TAG: alice logs off first, bob's session goes on.
#     MODE bigrelay TAG: alice holds IPC$ only; bob's relayed session
#          writes and reads 1 MiB in one frame each.
#     MODE durable TAG: bob's durable v2 handle (DIALECT 30) reclaimed by
#          his relayed session on a new connection of the same client.
#     MODE compound TAG: bob's related CREATE+WRITE+CLOSE in one frame
#          (2.x signing only: DIALECT 202 or 21).
#     MODE mixed TAG: unrelated compounds of alice's and bob's CREATEs
#          (alice, bob, alice, bob and bob, alice), each element signed
#          with its session's key (2.x: DIALECT 202 or 21): each answered
#          under its own session (files mx_TAG_USER_N, owned by USER).
#     MODE hold TAG EXPECT CMD...: alice and bob, then CMD runs with bob's
#          session id (hex) as its last argument; bob's next request
#          succeeds (EXPECT ok) or gets USER_SESSION_DELETED (deleted);
#          alice goes on.
#     MODE inflight TAG CMD...: bob's CHANGE_NOTIFY (interim) and a READ
#          in flight when his worker is stopped, then killed (CMD stop|kill
#          SID): each gets USER_SESSION_DELETED from the owner; alice
#          goes on.
#     MODE inflightsealed TAG CMD...: (DIALECT 30, sealed) bob's
#          CHANGE_NOTIFY waiting in his worker when it is killed (CMD kill
#          SID) gets USER_SESSION_DELETED from the owner, async, in the
#          clear; alice goes on.
#     MODE inflightsync TAG CMD...: (DIALECT 30, sealed) bob's SET_INFO
#          of a security descriptor held in his worker (CMD stop SID
#          stops the descriptor writer) when it is killed (CMD kill SID)
#          gets USER_SESSION_DELETED from the owner within 5 s (his
#          worker's ring); CMD cont SID; alice reads and writes on.
#     MODE inflightsent TAG CMD...: (DIALECT 30, sealed) bob's 1 MiB
#          READs pile up in his worker (first served whole: CMD stopbob
#          SID, CMD resumebob SID); CMD stopbob SID stops it, the
#          READs go out unanswered, CMD stopalice SID stops the owner,
#          CMD contbob SID lets bob's worker answer into the relay until
#          its socket is full, CMD killbob SID kills it, CMD contalice
#          SID lets the owner go on: within 5 s each READ gets its data
#          or USER_SESSION_DELETED (those read behind the first were
#          decrypted ahead, worker/relay_ahead.c); prints "# unanswered
#          N"; alice reads and writes on.
#     MODE stall TAG CMD...: bob's worker stopped (CMD stop), bob's
#          session sends 64 KiB WRITEs until the relay's socket is full
#          and his backlog fills: alice's WRITE and READ on the same
#          connection are answered within 0.3 s each (the owner never
#          waits on bob's relay) and alice on a second one within 2 s;
#          bob's requests get USER_SESSION_DELETED once his backlog
#          waited RELAY_WAIT_MS; CMD cont continues bob's worker (it
#          must be alive) and bob logs on anew.
#     MODE many TAG USER:PW...: alice and each user on one connection,
#          every one writes its own file.
#     MODE refused: bob's session on alice's connection is refused
#          (ACCESS_DENIED).
#     MODE sealeddrop: (DIALECT 30, `relay sealed sessions = no`) bob's
#          first request after his logon comes sealed (impacket seals
#          unasked): the connection drops.
#     MODE reauth TAG: alice's session re-authenticates as bob: alice's
#          open handle still reads and writes, a new CREATE and a
#          TREE_CONNECT are refused (judged as bob, never as alice); back
#          as alice, new opens work again (worker/smb2_reauth.c).  The
#          re-authentication as bob carries the SPNEGO mechListMIC both
#          ways (made by hand: impacket sends and checks none): ours,
#          made by the master with bob's key, must verify, and a wrong
#          one of the client's must fail the logon.
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import copy
import hashlib
import hmac
import os
import struct
import subprocess
import sys
import time

from Cryptodome.Cipher import AES

from impacket import smb3, smb3structs
from impacket.smb3structs import (FILE_READ_DATA, FILE_WRITE_DATA,
                                  FILE_SHARE_READ, FILE_SHARE_WRITE,
                                  FILE_OVERWRITE_IF, FILE_OPEN,
                                  FILE_NON_DIRECTORY_FILE)
from impacket.smbconnection import SessionError

PORT = int(sys.argv[1])
DIALECT = {"202": smb3structs.SMB2_DIALECT_002,
           "21": smb3structs.SMB2_DIALECT_21,
           "30": smb3structs.SMB2_DIALECT_30}[sys.argv[2]]
MODE = sys.argv[3]
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_USER_SESSION_DELETED = 0xC0000203
STATUS_PENDING = 0x00000103
SHARE = os.environ.get("SHARE", "")
failed = 0


def check(desc, cond, why=""):
    global failed
    if not cond:
        failed += 1
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


class FixedGuid(smb3.SMB3):
    """One ClientGuid for every connection (a client that reconnects)."""
    def negotiateSession(self, *a, **kw):
        self.ClientGuid = "usmbd-multi-cli!"
        return super().negotiateSession(*a, **kw)


class Multi:
    """One connection, a session dict per user."""

    def __init__(self):
        self.c = FixedGuid("127.0.0.1", "127.0.0.1", sess_port=PORT,
                           preferredDialect=DIALECT, timeout=30)
        self.fresh = copy.deepcopy(self.c._Session)
        self.sess = {}
        self.tree = {}

    def login(self, user, pw):
        self.c._Session = copy.deepcopy(self.fresh)
        self.c.login(user, pw)
        self.sess[user] = self.c._Session
        self.tree[user] = self.c.connectTree("share")

    def use(self, user):
        self.c._Session = self.sess[user]
        return self.tree[user]

    def write(self, user, name, data):
        t = self.use(user)
        f = self.c.create(t, name, FILE_READ_DATA | FILE_WRITE_DATA,
                          FILE_SHARE_READ | FILE_SHARE_WRITE,
                          FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
        self.c.write(t, f, data, 0, len(data))
        self.c.close(t, f)

    def read(self, user, name):
        t = self.use(user)
        f = self.c.create(t, name, FILE_READ_DATA, FILE_SHARE_READ, 0,
                          FILE_OPEN, 0)
        data = self.c.read(t, f, 0, 4096)
        self.c.close(t, f)
        return data


def status_of(fn):
    try:
        fn()
        return 0
    except SessionError as e:
        return e.get_error_code()
    except smb3.SessionError as e:
        return e.get_error_code()


def two(tag):
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    check("alice and bob on one connection",
          m.sess["alice"]["SessionID"] != m.sess["bob"]["SessionID"])
    for i in range(5):
        m.write("alice", "a_%s_%d.txt" % (tag, i), b"alice %d" % i)
        m.write("bob", "b_%s_%d.txt" % (tag, i), b"bob %d" % i)
    check("interleaved writes of both sessions",
          m.read("alice", "a_%s_4.txt" % tag) == b"alice 4" and
          m.read("bob", "b_%s_4.txt" % tag) == b"bob 4")
    st = status_of(lambda: m.read("alice", "secret"))
    check("alice is refused bob's 0600 file", st == STATUS_ACCESS_DENIED,
          "status %08x" % st)
    data = m.read("bob", "secret")
    check("bob reads his 0600 file", data == b"bob's secret\n", repr(data))
    # A byte-range lock of bob's holds alice's off until bob unlocks.
    tb = m.use("bob")
    fb = m.c.create(tb, "lock_%s" % tag, FILE_READ_DATA | FILE_WRITE_DATA,
                    FILE_SHARE_READ | FILE_SHARE_WRITE,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    m.c.write(tb, fb, b"x" * 100, 0, 100)
    lk = smb3structs.SMB2_LOCK_ELEMENT()
    lk["Offset"], lk["Length"] = 0, 10
    lk["Flags"] = smb3structs.SMB2_LOCKFLAG_EXCLUSIVE_LOCK | \
        smb3structs.SMB2_LOCKFLAG_FAIL_IMMEDIATELY
    req = smb3structs.SMB2Lock()
    req["LockCount"] = 1
    req["FileID"] = fb
    req["Locks"] = lk.getData()
    pkt = m.c.SMB_PACKET()
    pkt["Command"] = smb3structs.SMB2_LOCK
    pkt["TreeID"] = tb
    pkt["Data"] = req
    ans = m.c.recvSMB(m.c.sendSMB(pkt))
    check("bob locks a range", ans["Status"] == 0, "%08x" % ans["Status"])
    ta = m.use("alice")
    fa = m.c.create(ta, "lock_%s" % tag, FILE_READ_DATA,
                    FILE_SHARE_READ | FILE_SHARE_WRITE,
                    FILE_NON_DIRECTORY_FILE, FILE_OPEN, 0)
    st = status_of(lambda: m.c.read(ta, fa, 5, 1))
    check("alice's read in bob's locked range is refused",
          st == 0xC0000054, "status %08x" % st)  # FILE_LOCK_CONFLICT
    m.use("bob")
    m.c.close(tb, fb)
    ta = m.use("alice")
    st = status_of(lambda: m.c.read(ta, fa, 5, 1))
    check("alice reads once bob's handle is closed", st == 0,
          "status %08x" % st)
    try:
        m.c.close(ta, fa)
    except KeyError:
        pass    # impacket keeps one table of names for the connection
    m.use("bob")
    m.c.logoff()
    data = m.read("alice", "a_%s_0.txt" % tag)
    check("alice goes on after bob's logoff", data == b"alice 0")
    m.use("alice")
    m.c.logoff()


# ---- raw frames: async answers of both sessions interleave on the wire ----

def recv_any(m, timeout=30):
    """The next frame of the connection, decrypted with its session's key;
    (SMB2Packet, plain bytes)."""
    raw = m.c._NetBIOSSession.recv_packet(timeout).get_trailer()
    if hasattr(m, "sealed"):
        m.sealed.append(raw[:4] == b"\xfdSMB")
    if raw[:4] == b"\xfdSMB":
        th = smb3structs.SMB2_TRANSFORM_HEADER(raw)
        key = [v["DecryptionKey"] for v in m.sess.values()
               if v["SessionID"] == th["SessionID"]][0]
        ciph = AES.new(key, AES.MODE_CCM, th["Nonce"][:11])
        ciph.update(th.getData()[20:])
        raw = ciph.decrypt(raw[len(smb3structs.SMB2_TRANSFORM_HEADER()):])
    return smb3structs.SMB2Packet(raw), raw


def collect(m, want, limit=40):
    """Frames until want(frames) holds; the frames."""
    got = []
    for _ in range(limit):
        if want(got):
            break
        got.append(recv_any(m))
    return got


def final_of(got, mid):
    for p, raw in got:
        if p["MessageID"] == mid and p["Status"] != STATUS_PENDING:
            return p, raw
    return None, None


def interim_of(got, mid):
    for p, raw in got:
        if p["MessageID"] == mid and p["Status"] == STATUS_PENDING:
            return p, raw
    return None, None


def send(m, user, command, tid, data, mid=None):
    m.use(user)
    pkt = m.c.SMB_PACKET()
    pkt["Command"] = command
    pkt["TreeID"] = tid
    if mid is not None:
        pkt["MessageID"] = mid
    pkt["Data"] = data
    return m.c.sendSMB(pkt)


def raw_create(m, user, tid, name, access, disp):
    req = smb3structs.SMB2Create()
    req["SecurityFlags"] = 0
    req["RequestedOplockLevel"] = 0
    req["ImpersonationLevel"] = smb3structs.SMB2_IL_IMPERSONATION
    req["DesiredAccess"] = access
    req["FileAttributes"] = 0
    req["ShareAccess"] = FILE_SHARE_READ | FILE_SHARE_WRITE | 4
    req["CreateDisposition"] = disp
    req["CreateOptions"] = FILE_NON_DIRECTORY_FILE
    req["NameLength"] = len(name) * 2
    req["Buffer"] = name.encode("utf-16le")
    req["CreateContextsOffset"] = 0
    req["CreateContextsLength"] = 0
    return send(m, user, smb3structs.SMB2_CREATE, tid, req)


def raw_lock(m, user, tid, fid, flags):
    body = struct.pack("<HHL", 48, 1, 0) + fid + \
        struct.pack("<QQLL", 0, 10, flags, 0)
    return send(m, user, smb3structs.SMB2_LOCK, tid, body)


def raw_close(m, user, tid, fid):
    mid = send(m, user, smb3structs.SMB2_CLOSE, tid,
               struct.pack("<HHL", 24, 0, 0) + fid)
    collect(m, lambda g: final_of(g, mid)[0] is not None)


def lease_break(tag, holder, waiter):
    """holder has a RWH lease; waiter's open waits (interim) for the break
    the holder acknowledges, then completes."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    name = "lease_%s_%s" % (tag, holder)
    key = os.urandom(16)
    th, tw = m.use(holder), m.tree[waiter]
    lease = smb3structs.SMB2CreateContext()
    lease["NameOffset"], lease["NameLength"] = 16, 4
    lease["DataOffset"], lease["DataLength"] = 24, 32
    lease["Buffer"] = b"RqLs" + b"\0" * 4 + key + struct.pack("<LLQ", 7, 0, 0)
    fh = m.c.create(th, name, FILE_READ_DATA | FILE_WRITE_DATA, 7,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0,
                    oplockLevel=0xFF, createContexts=[lease])
    os.chmod(os.path.join(SHARE, name), 0o666)
    mid = raw_create(m, waiter, tw, name, FILE_READ_DATA | FILE_WRITE_DATA,
                     FILE_OPEN)
    got = collect(m, lambda g: interim_of(g, mid)[0] is not None and
                  any(p["Command"] == smb3structs.SMB2_OPLOCK_BREAK
                      for p, _ in g))
    brk = [raw for p, raw in got if p["Command"] ==
           smb3structs.SMB2_OPLOCK_BREAK]
    check("%s's open waits (interim) for %s's lease break" %
          (waiter, holder), interim_of(got, mid)[0] is not None and
          len(brk) == 1, repr([(p["Command"], hex(p["Status"]))
                               for p, _ in got]))
    new = struct.unpack_from("<L", brk[0], 64 + 28)[0] if brk else 0
    ack = send(m, holder, smb3structs.SMB2_OPLOCK_BREAK, th,
               struct.pack("<HHL", 36, 0, 0) + key +
               struct.pack("<LQ", new, 0))
    got += collect(m, lambda g: final_of(got + g, mid)[0] is not None and
                   final_of(got + g, ack)[0] is not None)
    p, raw = final_of(got, mid)
    a, _ = final_of(got, ack)
    check("%s acks (status %08x), %s's open completes (status %08x)" %
          (holder, a["Status"], waiter, p["Status"]),
          a["Status"] == 0 and p["Status"] == 0)
    raw_close(m, waiter, tw, raw[64 + 64:64 + 80])
    m.use(holder)
    m.c.close(th, fh)


def blocking(tag):
    """A blocking lock of bob's (relayed) waits for alice's unlock;
    CANCEL ends another of bob's; alice's waits for bob's unlock."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    name = "blk_%s" % tag
    ta, tb = m.use("alice"), m.tree["bob"]
    fa = m.c.create(ta, name, FILE_READ_DATA | FILE_WRITE_DATA, 7,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    m.c.write(ta, fa, b"x" * 100, 0, 100)
    os.chmod(os.path.join(SHARE, name), 0o666)
    fa = fa.getData() if hasattr(fa, "getData") else bytes(fa)
    mid = raw_create(m, "bob", tb, name, FILE_READ_DATA | FILE_WRITE_DATA,
                     FILE_OPEN)
    p, raw = final_of(collect(m, lambda g: final_of(g, mid)[0]
                              is not None), mid)
    fb = raw[64 + 64:64 + 80]
    EXCL, UNLOCK, FAIL_NOW = 2, 4, 0x10
    mid = raw_lock(m, "alice", ta, fa, EXCL | FAIL_NOW)
    p, _ = final_of(collect(m, lambda g: final_of(g, mid)[0] is not None),
                    mid)
    check("alice locks a range", p["Status"] == 0, "%08x" % p["Status"])
    wait = raw_lock(m, "bob", tb, fb, EXCL)
    got = collect(m, lambda g: interim_of(g, wait)[0] is not None)
    check("bob's blocking lock waits (interim, relayed)",
          interim_of(got, wait)[0] is not None)
    unl = raw_lock(m, "alice", ta, fa, UNLOCK)
    got = collect(m, lambda g: final_of(g, wait)[0] is not None and
                  final_of(g, unl)[0] is not None)
    p, _ = final_of(got, wait)
    check("alice's unlock grants bob's lock", p["Status"] == 0,
          "%08x" % p["Status"])
    wait = raw_lock(m, "alice", ta, fa, EXCL)
    got = collect(m, lambda g: interim_of(g, wait)[0] is not None)
    mid = raw_lock(m, "bob", tb, fb, EXCL)
    got = collect(m, lambda g: interim_of(g, mid)[0] is not None)
    send(m, "bob", smb3structs.SMB2_CANCEL, tb, struct.pack("<HH", 4, 0),
         mid=mid)
    got = collect(m, lambda g: final_of(g, mid)[0] is not None)
    p, _ = final_of(got, mid)
    check("CANCEL of bob's relayed blocking lock",
          p["Status"] == 0xC0000120, "%08x" % p["Status"])
    unl = raw_lock(m, "bob", tb, fb, UNLOCK)
    got = collect(m, lambda g: final_of(g, wait)[0] is not None)
    p, _ = final_of(got, wait)
    check("bob's unlock grants alice's waiting lock", p["Status"] == 0,
          "%08x" % p["Status"])


def notify(tag):
    """bob's (relayed) CHANGE_NOTIFY on the share's root waits (interim);
    alice makes a file there; bob's notify completes with its name."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    tb = m.use("bob")
    d = m.c.create(tb, "", FILE_READ_DATA, 7, 1, FILE_OPEN, 0)
    d = d.getData() if hasattr(d, "getData") else bytes(d)
    mid = send(m, "bob", smb3structs.SMB2_CHANGE_NOTIFY, tb,
               struct.pack("<HHL16sLL", 32, 0, 4096, d, 0x1, 0))
    got = collect(m, lambda g: interim_of(g, mid)[0] is not None)
    check("bob's CHANGE_NOTIFY waits (interim, relayed)",
          interim_of(got, mid)[0] is not None)
    name = "ntf_%s_alice" % tag
    ta = m.use("alice")
    f = raw_create(m, "alice", ta, name, FILE_READ_DATA | FILE_WRITE_DATA,
                   FILE_OVERWRITE_IF)
    got = collect(m, lambda g: final_of(g, mid)[0] is not None and
                  final_of(g, f)[0] is not None)
    p, raw = final_of(got, mid)
    check("alice's new file completes bob's notify, with its name",
          p["Status"] == 0 and name.encode("utf-16le") in raw,
          "status %08x" % p["Status"])
    p, raw = final_of(got, f)
    raw_close(m, "alice", ta, raw[64 + 64:64 + 80])


def ownerlogoff(tag):
    """alice (the socket's owner) logs off first: bob's session goes on."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.use("alice")
    m.c.logoff()
    m.write("bob", "olo_%s_bob" % tag, b"bob after alice")
    check("bob goes on after alice's logoff (the owner's)",
          m.read("bob", "olo_%s_bob" % tag) == b"bob after alice")
    m.use("bob")
    m.c.logoff()


def bigrelay(tag):
    """alice (the socket's owner) has no disk tree, IPC$ only: her
    connection would keep its 64 KiB buffers.  bob's relayed session
    writes and reads 1 MiB in one frame each: the owner's buffers grow
    for a relayed session as for a disk tree of its own."""
    m = Multi()
    m.c._Session = copy.deepcopy(m.fresh)
    m.c.login("alice", "alicepw1")
    m.sess["alice"] = m.c._Session
    m.tree["alice"] = m.c.connectTree("IPC$")
    m.login("bob", "bobpw1")
    data = bytes(range(256)) * 4096
    got = None
    try:
        m.write("bob", "big_%s_bob.bin" % tag, data)
        t = m.use("bob")
        f = m.c.create(t, "big_%s_bob.bin" % tag, FILE_READ_DATA,
                       FILE_SHARE_READ, 0, FILE_OPEN, 0)
        got = m.c.read(t, f, 0, len(data))
        m.c.close(t, f)
    except Exception as e:  # noqa: the connection dropped
        print("# %r" % e, flush=True)
    check("bob (relayed) writes and reads 1 MiB in one frame each on "
          "alice's IPC$-only connection", got == data,
          "%r bytes back" % (len(got) if got is not None else None))


def durable(tag):
    """bob's (relayed) durable v2 handle outlives the connection: on a new
    connection of the same client his relayed session reclaims it."""
    from state_lib import Blob, lease_v2
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    tb = m.use("bob")
    name = "dur_%s" % tag
    key, cg = os.urandom(16), os.urandom(16)
    dh2q = (b"DH2Q", struct.pack("<LLQ", 60000, 0, 0) + cg)
    fid = m.c.create(tb, name, FILE_READ_DATA | FILE_WRITE_DATA, 7,
                     FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0,
                     oplockLevel=0xFF,
                     createContexts=[Blob([lease_v2(key, 0x7), dh2q])])
    fid = fid.getData() if hasattr(fid, "getData") else bytes(fid)
    m.c.write(tb, fid, b"durable of bob", 0, 14)
    m.c._NetBIOSSession.get_socket().shutdown(2)    # the connection is lost
    m.c._NetBIOSSession.close()
    time.sleep(1)
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    tb = m.use("bob")
    dh2c = (b"DH2C", fid + cg + struct.pack("<L", 0))
    st = status_of(lambda: m.c.create(
        tb, name, FILE_READ_DATA | FILE_WRITE_DATA, 7,
        FILE_NON_DIRECTORY_FILE, FILE_OPEN, 0, oplockLevel=0xFF,
        createContexts=[Blob([lease_v2(key, 0x7), dh2c])]))
    check("bob's relayed session reclaims his durable handle (DH2C) on a "
          "new connection", st == 0, "status %08x" % st)
    if st == 0:
        check("... with its data", m.c.read(tb, fid, 0, 14) == b"durable of bob")
        close(m.c, tb, fid)


def close(c, tid, fid):
    try:
        c.close(tid, fid)
    except KeyError:
        pass    # impacket keeps one table of names for the connection


def sign21(key, msg):
    """HMAC-SHA256 signing of one message of a chain (SMB 2.x)."""
    msg = msg[:48] + b"\0" * 16 + msg[64:]
    return msg[:48] + hmac.new(key, msg, hashlib.sha256).digest()[:16] + \
        msg[64:]


def compound(tag):
    """bob (relayed) sends CREATE+WRITE+CLOSE as one related chain, each
    signed with his key; the three answers come back in one frame."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    tid = m.use("bob")
    sess = m.sess["bob"]
    name = ("cpd_%s" % tag).encode("utf-16le")
    data = b"compound of bob"
    ff = b"\xff" * 16
    bodies = [
        (smb3structs.SMB2_CREATE, struct.pack(
            "<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0, 0x12019f, 0, 7, 5, 0x40,
            120, len(name), 0, 0) + name),
        (smb3structs.SMB2_WRITE, struct.pack(
            "<HHIQ16sIIHHI", 49, 112, len(data), 0, ff, 0, 0, 0, 0, 0) +
            data),
        (smb3structs.SMB2_CLOSE, struct.pack("<HHI16s", 24, 0, 0, ff)),
    ]
    mid0 = m.c._Connection["SequenceWindow"]
    frame = b""
    for i, (cmd, body) in enumerate(bodies):
        last = i + 1 == len(bodies)
        ln = 64 + len(body)
        nxt = 0 if last else (ln + 7) & ~7
        flags = 0x8 | (0x4 if i else 0)
        msg = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 1, 0, cmd, 1,
                          flags, nxt, mid0 + i, 0, tid, sess["SessionID"],
                          b"\0" * 16) + body
        if not last:
            msg += b"\0" * (nxt - ln)
        frame += sign21(sess["SessionKey"], msg)  # 2.x: the session key
    m.c._Connection["SequenceWindow"] = mid0 + len(bodies)
    m.c._NetBIOSSession.send_packet(frame)
    _, raw = recv_any(m)
    st, off = [], 0
    while True:
        st.append(struct.unpack_from("<I", raw, off + 8)[0])
        nxt = struct.unpack_from("<I", raw, off + 20)[0]
        if nxt == 0 or len(st) > 8:
            break
        off += nxt
    check("bob's related CREATE+WRITE+CLOSE chain: three answers",
          st == [0, 0, 0], repr(["%08x" % x for x in st]))
    check("the chain's file has its data",
          m.read("bob", "cpd_%s" % tag) == data)
    m.write("alice", "cpd_%s_alice" % tag, b"alice")
    check("alice goes on after bob's chain",
          m.read("alice", "cpd_%s_alice" % tag) == b"alice")


def split_rsp(raw):
    """The responses of one frame: [(MessageId, Status, SessionId)]."""
    out, off = [], 0
    while True:
        st, = struct.unpack_from("<I", raw, off + 8)
        nxt, mid = struct.unpack_from("<IQ", raw, off + 20)
        sid, = struct.unpack_from("<Q", raw, off + 40)
        out.append((mid, st, sid))
        if nxt == 0 or len(out) > 8:
            return out
        off += nxt


def mixed(tag):
    """Unrelated compounds (MS-SMB2 3.3.5.2.7.1) whose elements are alice's
    and bob's, each signed with its own session's key: each CREATE is
    served by its own user's worker (the file is that user's on disk),
    answered apart or together (3.2.4.1.4: not one frame, any order)."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    for order in (("alice", "bob", "alice", "bob"), ("bob", "alice")):
        mid0 = m.c._Connection["SequenceWindow"]
        frame, want = b"", {}
        for i, user in enumerate(order):
            sess = m.sess[user]
            name = ("mx_%s_%s_%d" % (tag, user, len(order) * 10 + i)) \
                .encode("utf-16le")
            body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0,
                               0x12019f, 0, 7, 5, 0x40, 120, len(name), 0,
                               0) + name
            last = i + 1 == len(order)
            ln = 64 + len(body)
            nxt = 0 if last else (ln + 7) & ~7
            msg = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 1, 0, 5,
                              1, 0x8, nxt, mid0 + i, 0, m.tree[user],
                              sess["SessionID"], b"\0" * 16) + body
            if not last:
                msg += b"\0" * (nxt - ln)
            frame += sign21(sess["SessionKey"], msg)
            want[mid0 + i] = sess["SessionID"]
        m.c._Connection["SequenceWindow"] = mid0 + len(order)
        m.c._NetBIOSSession.send_packet(frame)
        got = {}
        for _ in range(len(order)):
            if len(got) == len(order):
                break
            try:
                raw = m.c._NetBIOSSession.recv_packet(10).get_trailer()
            except Exception as e:  # a timeout: an element unanswered
                print("# %r" % e, flush=True)
                break
            for mid, st, sid in split_rsp(raw):
                got[mid] = (st, sid)
        check("compound %s: each element answered, STATUS_SUCCESS, "
              "under its own session" % "+".join(order),
              all(got.get(k) == (0, v) for k, v in want.items()),
              repr({k: ("%08x" % v[0], "%x" % v[1])
                    for k, v in got.items()}))
    m.write("alice", "mx_%s_after_a" % tag, b"alice")
    m.write("bob", "mx_%s_after_b" % tag, b"bob")
    check("alice and bob go on after the mixed compounds",
          m.read("alice", "mx_%s_after_a" % tag) == b"alice" and
          m.read("bob", "mx_%s_after_b" % tag) == b"bob")


def hold(tag, expect, cmd):
    """CMD runs with bob's session id as its argument and the client's
    end of the connection (getsockname) in MULTI_CLIENT_ADDR and
    MULTI_CLIENT_PORT."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.write("bob", "k_%s_bob.txt" % tag, b"bob")
    addr, port = m.c._NetBIOSSession.get_socket().getsockname()[:2]
    env = dict(os.environ, MULTI_CLIENT_ADDR=addr, MULTI_CLIENT_PORT=str(port))
    subprocess.run(cmd + ["%x" % m.sess["bob"]["SessionID"]], check=False,
                   env=env)
    st = status_of(lambda: m.write("bob", "k_%s_bob2.txt" % tag, b"x"))
    if expect == "deleted":
        check("bob's session is gone: USER_SESSION_DELETED",
              st == STATUS_USER_SESSION_DELETED, "status %08x" % st)
    else:
        check("bob goes on", st == 0, "status %08x" % st)
    m.write("alice", "k_%s_alice.txt" % tag, b"alice")
    check("alice goes on after bob's worker died",
          m.read("alice", "k_%s_alice.txt" % tag) == b"alice")


def forge(tag, cmd, under="alice", sealed=False):
    """bob's worker, compromised, writes into its relay an answer for the
    message id of alice's next request (CMD SID MID DATA: relay_forge.py)
    under alice's session id (forge: worker/relay_state.c
    relay_answer_next) or under its own (forgeown: an id the owner never
    sent it, worker/relay_mids.c; a client finds the request by its id
    alone; forgesealed: sealed, on a relay `relay sealed sessions = no`
    keeps in the clear): the owner must not pass it on.  alice's READ gets her own
    data, bob's relay is closed (his next request: USER_SESSION_DELETED),
    alice goes on."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    name = "fg_%s.txt" % tag
    m.write("alice", name, b"alice's data")
    m.write("bob", "fg_%s_bob.txt" % tag, b"bob")
    t = m.use("alice")
    f = m.c.create(t, name, FILE_READ_DATA, FILE_SHARE_READ, 0, FILE_OPEN, 0)
    mid = m.c._Connection["SequenceWindow"]
    r = subprocess.run(cmd + ["%x" % m.sess[under]["SessionID"],
                              "%d" % mid, "bob's forgery"] +
                       (["sealed"] if sealed else []), check=False)
    check("bob's worker wrote its forged answer into the relay",
          r.returncode == 0, "rc %d" % r.returncode)
    time.sleep(0.5)
    data = m.c.read(t, f, 0, 64)
    check("alice's READ gets her own data, not bob's worker's",
          data == b"alice's data", repr(data))
    m.c.close(t, f)
    st = status_of(lambda: m.write("bob", "fg_%s_bob2.txt" % tag, b"x"))
    check("bob's relay closed: USER_SESSION_DELETED",
          st == STATUS_USER_SESSION_DELETED, "status %08x" % st)
    m.write("alice", "fg_%s_after.txt" % tag, b"alice")
    check("alice goes on", m.read("alice", "fg_%s_after.txt" % tag) == b"alice")


def inflight(tag, cmd):
    """bob's requests in flight when his worker dies get an answer from
    the owner: CMD stop SID stops bob's worker, bob's CHANGE_NOTIFY
    (answered interim before) and a READ sent meanwhile wait; CMD kill
    SID kills it; both get USER_SESSION_DELETED (the notify async, with
    its AsyncId); alice goes on."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.write("bob", "if_%s_bob.txt" % tag, b"bob's")
    tb = m.use("bob")
    d = m.c.create(tb, "", FILE_READ_DATA, 7, 1, FILE_OPEN, 0)
    d = d.getData() if hasattr(d, "getData") else bytes(d)
    f = m.c.create(tb, "if_%s_bob.txt" % tag, FILE_READ_DATA, 7, 0,
                   FILE_OPEN, 0)
    f = f.getData() if hasattr(f, "getData") else bytes(f)
    ntf = send(m, "bob", smb3structs.SMB2_CHANGE_NOTIFY, tb,
               struct.pack("<HHL16sLL", 32, 0, 4096, d, 0x1, 0))
    got = collect(m, lambda g: interim_of(g, ntf)[0] is not None)
    p, raw = interim_of(got, ntf)
    check("bob's CHANGE_NOTIFY waits (interim, relayed)", p is not None)
    async_id = struct.unpack_from("<Q", raw, 32)[0] if p is not None else None
    sid = "%x" % m.sess["bob"]["SessionID"]
    subprocess.run(cmd + ["stop", sid], check=False)
    rd = send(m, "bob", smb3structs.SMB2_READ, tb,
              struct.pack("<HBBIQ16sIIIHHB", 49, 0, 0, 64, 0, f, 0, 0, 0,
                          0, 0, 0))
    subprocess.run(cmd + ["kill", sid], check=False)
    got = collect(m, lambda g: final_of(g, ntf)[0] is not None and
                  final_of(g, rd)[0] is not None, limit=4)
    p, raw = final_of(got, ntf)
    check("bob's waiting CHANGE_NOTIFY: USER_SESSION_DELETED, async",
          p is not None and p["Status"] == STATUS_USER_SESSION_DELETED and
          p["Flags"] & smb3structs.SMB2_FLAGS_ASYNC_COMMAND and
          struct.unpack_from("<Q", raw, 32)[0] == async_id,
          "%r" % (p["Status"] if p is not None else None))
    p, _ = final_of(got, rd)
    check("bob's READ in flight: USER_SESSION_DELETED",
          p is not None and p["Status"] == STATUS_USER_SESSION_DELETED,
          "%r" % (p["Status"] if p is not None else None))
    st = status_of(lambda: m.write("bob", "if_%s_bob2.txt" % tag, b"x"))
    check("bob's next request: USER_SESSION_DELETED",
          st == STATUS_USER_SESSION_DELETED, "status %08x" % st)
    m.write("alice", "if_%s_alice.txt" % tag, b"alice")
    check("alice goes on", m.read("alice", "if_%s_alice.txt" % tag) ==
          b"alice")


def inflight_sealed(tag, cmd):
    """bob's session sealed (3.0: impacket seals it, the owner cannot read
    his requests): his CHANGE_NOTIFY waits in his worker (its interim
    answer sealed), CMD kill SID kills that worker: the owner answers the
    notify USER_SESSION_DELETED, async with its AsyncId, neither signed
    nor sealed (it holds no key of bob's); alice goes on."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    tb = m.use("bob")
    d = m.c.create(tb, "", FILE_READ_DATA, 7, 1, FILE_OPEN, 0)
    d = d.getData() if hasattr(d, "getData") else bytes(d)
    ntf = send(m, "bob", smb3structs.SMB2_CHANGE_NOTIFY, tb,
               struct.pack("<HHL16sLL", 32, 0, 4096, d, 0x1, 0))
    m.sealed = []
    got = collect(m, lambda g: interim_of(g, ntf)[0] is not None)
    p, raw = interim_of(got, ntf)
    check("bob's sealed CHANGE_NOTIFY waits (interim, sealed)",
          p is not None and m.sealed[-1:] == [True])
    async_id = struct.unpack_from("<Q", raw, 32)[0] if p is not None else None
    sid = "%x" % m.sess["bob"]["SessionID"]
    subprocess.run(cmd + ["kill", sid], check=False)
    m.sealed = []
    got = collect(m, lambda g: final_of(g, ntf)[0] is not None, limit=4)
    p, raw = final_of(got, ntf)
    check("bob's waiting sealed CHANGE_NOTIFY: USER_SESSION_DELETED, async, "
          "its AsyncId, in the clear and unsigned",
          p is not None and p["Status"] == STATUS_USER_SESSION_DELETED and
          p["Flags"] & smb3structs.SMB2_FLAGS_ASYNC_COMMAND and
          not p["Flags"] & smb3structs.SMB2_FLAGS_SIGNED and
          struct.unpack_from("<Q", raw, 32)[0] == async_id and
          m.sealed[-1:] == [False],
          "%r" % (p["Status"] if p is not None else None))
    m.write("alice", "ifs_%s_alice.txt" % tag, b"alice")
    check("alice goes on", m.read("alice", "ifs_%s_alice.txt" % tag) ==
          b"alice")


def inflight_sync(tag, cmd):
    """bob's session sealed (3.0): his SET_INFO of a security descriptor
    waits inside his worker (CMD stop SID stops the descriptor writer,
    which that worker waits on synchronously: no interim answer), then
    CMD kill SID kills the worker: the owner answers the SET_INFO
    USER_SESSION_DELETED from the ids the worker had put in its ring
    (worker/relay_ring.c), sync, neither signed nor sealed, within a few
    seconds; CMD cont SID lets the writer go on; alice's READ and WRITE
    go on."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.write("alice", "ify_%s_alice.txt" % tag, b"alice")
    tb = m.use("bob")
    f = m.c.create(tb, "ify_%s_bob.txt" % tag, FILE_READ_DATA |
                   FILE_WRITE_DATA | 0x00040000, 7, FILE_NON_DIRECTORY_FILE,
                   FILE_OVERWRITE_IF, 0)
    f = f.getData() if hasattr(f, "getData") else bytes(f)
    sid = "%x" % m.sess["bob"]["SessionID"]
    # Everyone: full access (a self-relative SD with only a DACL)
    everyone = struct.pack("<BB6sI", 1, 1, (1).to_bytes(6, "big"), 0)
    ace = struct.pack("<BBHI", 0, 0, 8 + len(everyone), 0x001F01FF) + everyone
    dacl = struct.pack("<BBHHH", 2, 0, 8 + len(ace), 1, 0) + ace
    sd = struct.pack("<BBHIIII", 1, 0, 0x8004, 0, 0, 0, 20) + dacl
    body = struct.pack("<HBBIHHI16s", 33, 3, 0, len(sd), 96, 0, 4, f) + sd
    subprocess.run(cmd + ["stop", sid], check=False)
    try:
        si = send(m, "bob", smb3structs.SMB2_SET_INFO, tb, body)
        time.sleep(1)
        t0 = time.monotonic()
        subprocess.run(cmd + ["kill", sid], check=False)
        m.sealed = []
        got = []
        while final_of(got, si)[0] is None and \
                time.monotonic() - t0 < 5 and len(got) < 8:
            got.append(recv_any(m, 6))
        waited = time.monotonic() - t0
    except Exception as e:  # noqa: the timeout of a missing answer
        got, waited = [], None
        print("# %r" % e, flush=True)
    finally:
        subprocess.run(cmd + ["cont", sid], check=False)
    p, raw = final_of(got, si)
    check("bob's sealed SET_INFO read by his worker when it dies: "
          "USER_SESSION_DELETED within 5 s, sync, in the clear, unsigned",
          p is not None and p["Status"] == STATUS_USER_SESSION_DELETED and
          p["Command"] == smb3structs.SMB2_SET_INFO and
          not p["Flags"] & smb3structs.SMB2_FLAGS_ASYNC_COMMAND and
          not p["Flags"] & smb3structs.SMB2_FLAGS_SIGNED and
          m.sealed[-1:] == [False] and waited is not None and waited < 5,
          "%r after %r s" % (p["Status"] if p is not None else None,
                             waited))
    check("alice reads on", m.read("alice", "ify_%s_alice.txt" % tag) ==
          b"alice")
    m.write("alice", "ify_%s_alice2.txt" % tag, b"alice2")
    check("alice writes on", m.read("alice", "ify_%s_alice2.txt" % tag) ==
          b"alice2")


def big_read(m, user, tid, fid, length):
    """A READ of length bytes sent without waiting, charged as impacket's
    read() charges it (one credit a 64 KiB); its message id."""
    m.use(user)
    pkt = m.c.SMB_PACKET()
    pkt["Command"] = smb3structs.SMB2_READ
    pkt["TreeID"] = tid
    pkt["CreditCharge"] = 1 + (length - 1) // 65536
    pkt["Data"] = struct.pack("<HBBIQ16sIIIHHB", 49, 0, 0, length, 0, fid,
                              0, 0, 0, 0, 0, 0)
    mid = m.c.sendSMB(pkt)
    # the ids the charge covers are used (impacket's recvSMB does this)
    m.c._Connection["SequenceWindow"] += pkt["CreditCharge"] - 1
    return mid


def inflight_sent(tag, cmd):
    """bob's session sealed (3.0): his worker has answered READs whose
    answers it could not yet write whole into the relay when it dies
    (HACKING.md "Requests in flight when the relayed worker dies": a
    ring slot is cleared only once its answer is all in the socket).
    First CMD stopbob SID and CMD resumebob SID: four READs read at once
    when bob's worker continues, three of them decrypted ahead, are all
    served whole.  Then CMD stopbob SID stops bob's worker; four 1 MiB
    READs go out without waiting and alice's worker forwards them; CMD stopalice SID stops
    alice's worker (the owner: nothing reads the relay), CMD contbob SID
    lets bob's worker answer until the relay's socket is full, CMD
    killbob SID kills it, CMD contalice SID lets the owner go on.
    Within 5 s each READ gets its 1 MiB or USER_SESSION_DELETED: the
    relayed worker takes a request only once its answer before is out,
    but it decrypts the sealed frames read behind it ahead and notes
    their ids in its ring (worker/relay_ahead.c).  "# unanswered N" says
    how many got nothing (a frame never read from the relay: no process
    alive knows its id; the owner's log counts them).  Alice reads and
    writes on."""
    n = 4
    size = 1 << 20
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.write("alice", "ifz_%s_alice.txt" % tag, b"alice")
    data = bytes(range(256)) * (size // 256)
    m.write("bob", "ifz_%s_bob.bin" % tag, data)
    tb = m.use("bob")
    f = m.c.create(tb, "ifz_%s_bob.bin" % tag, FILE_READ_DATA, 7, 0,
                   FILE_OPEN, 0)
    f = f.getData() if hasattr(f, "getData") else bytes(f)
    sid = "%x" % m.sess["bob"]["SessionID"]
    # First served whole: bob's stopped worker reads the four READs at
    # once when it continues, serves the first and decrypts the rest
    # ahead; their turns serve the plaintext.
    got, waited, reads = [], None, []
    try:
        if subprocess.run(cmd + ["stopbob", sid]).returncode != 0:
            raise RuntimeError("cannot stop bob's worker")
        reads = [big_read(m, "bob", tb, f, size) for _ in range(n)]
        time.sleep(0.5)         # forwarded into bob's relay
        subprocess.run(cmd + ["resumebob", sid], check=True)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20 and \
                any(final_of(got, r)[0] is None for r in reads):
            got.append(recv_any(m, max(0.1, 20 - (time.monotonic() - t0))))
    except Exception as e:  # noqa: the timeout of a missing answer
        print("# %r" % e, flush=True)
    finally:
        subprocess.run(cmd + ["resumebob", sid], check=False)
    check("four READs read at once by bob's worker, three decrypted ahead: "
          "each its whole data",
          reads and all(final_of(got, r)[0] is not None and
                        final_of(got, r)[0]["Status"] == 0 and
                        final_of(got, r)[1][80:80 + size] == data
                        for r in reads),
          "%r" % [final_of(got, r)[0]["Status"]
                  if final_of(got, r)[0] is not None else None
                  for r in reads])
    got, waited, reads = [], None, []
    try:
        if subprocess.run(cmd + ["stopbob", sid]).returncode != 0:
            raise RuntimeError("cannot stop bob's worker")
        reads = [big_read(m, "bob", tb, f, size) for _ in range(n)]
        time.sleep(0.5)         # forwarded into bob's relay
        subprocess.run(cmd + ["stopalice", sid], check=True)
        subprocess.run(cmd + ["contbob", sid], check=True)
        time.sleep(1.5)         # bob's answers fill the relay's socket
        subprocess.run(cmd + ["killbob", sid], check=True)
        t0 = time.monotonic()
        subprocess.run(cmd + ["contalice", sid], check=True)
        while time.monotonic() - t0 < 5 and \
                any(final_of(got, r)[0] is None for r in reads):
            got.append(recv_any(m, max(0.1, 5 - (time.monotonic() - t0))))
        waited = time.monotonic() - t0
    except Exception as e:  # noqa: the timeout of a missing answer
        print("# %r" % e, flush=True)
    finally:
        for a in ("contalice", "contbob"):
            subprocess.run(cmd + [a, sid], check=False)
    answered = [final_of(got, r)[0] for r in reads]
    sts = [p["Status"] if p is not None else None for p in answered]
    print("# READs %r: %r" % (reads, ["%08x" % x if x is not None else None
                                      for x in sts]), flush=True)
    ok = [x for x in sts if x is not None]
    check("bob's first READ, answered by his worker but not all sent when "
          "it died: its data or USER_SESSION_DELETED within 5 s",
          sts[:1] and sts[0] in (0, STATUS_USER_SESSION_DELETED),
          "%r after %r s" % (sts, waited))
    check("READs 2-4, read behind the first and decrypted ahead: each "
          "its data or USER_SESSION_DELETED within 5 s",
          len(sts) == n and all(x in (0, STATUS_USER_SESSION_DELETED)
                                for x in sts[1:]),
          "%r after %r s" % (sts, waited))
    check("every answer is its data or USER_SESSION_DELETED, the data "
          "whole",
          all(x in (0, STATUS_USER_SESSION_DELETED) for x in ok) and
          all(len(raw) >= 80 + size and raw[80:80 + size] == data
              for p, raw in got if p["MessageID"] in reads and
              p["Status"] == 0), "%r" % sts)
    print("# unanswered %d" % sts.count(None), flush=True)
    check("alice reads on", m.read("alice", "ifz_%s_alice.txt" % tag) ==
          b"alice")
    m.write("alice", "ifz_%s_alice2.txt" % tag, b"alice2")
    check("alice writes on", m.read("alice", "ifz_%s_alice2.txt" % tag) ==
          b"alice2")


def raw_write(m, user, tid, fid, off, data):
    body = struct.pack("<HHIQ16sIIHHI", 49, 64 + 48, len(data), off, fid,
                       0, 0, 0, 0, 0) + data
    return send(m, user, smb3structs.SMB2_WRITE, tid, body)


def raw_read(m, user, tid, fid, length):
    return send(m, user, smb3structs.SMB2_READ, tid,
                struct.pack("<HBBIQ16sIIIHHB", 49, 0, 0, length, 0, fid, 0,
                            0, 0, 0, 0, 0))


def timed(fn):
    """(seconds, result or None when it raised)."""
    t0 = time.monotonic()
    try:
        r = fn()
    except Exception as e:  # a timeout, or the connection gone
        print("# %r" % e, flush=True)
        r = None
    return time.monotonic() - t0, r


FAST = 0.3   # the owner never waits on a relay (worker/relay_wq.c)


def stall(tag, cmd):
    """bob's worker stopped while his session fills the relay: alice's
    worker must not wait on it (worker/relay_wq.c; worker/relay.c
    relay_stalled)."""
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m2 = Multi()
    m2.login("alice", "alicepw1")
    m2.write("alice", "st_%s_alice2.txt" % tag, b"second")
    ta = m.use("alice")
    fa = m.c.create(ta, "st_%s_alice.txt" % tag,
                    FILE_READ_DATA | FILE_WRITE_DATA, 7,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    fa = fa.getData() if hasattr(fa, "getData") else bytes(fa)
    tb = m.use("bob")
    fb = m.c.create(tb, "st_%s_bob.txt" % tag,
                    FILE_READ_DATA | FILE_WRITE_DATA, 7,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    fb = fb.getData() if hasattr(fb, "getData") else bytes(fb)
    subprocess.run(cmd + ["stop"], check=False)
    # More than a socketpair's buffer (about 200 KiB): the relay fills.
    chunk = b"b" * 65536
    bob = [raw_write(m, "bob", tb, fb, i * len(chunk), chunk)
           for i in range(10)]
    time.sleep(0.1)
    # alice on the connection with bob's session, while bob's backlog
    # waits in her worker (dropped only RELAY_WAIT_MS after it began)
    t0 = time.monotonic()
    wr = raw_write(m, "alice", ta, fa, 0, b"alice's data")
    dt, got = timed(lambda: collect(m, lambda g: final_of(g, wr)[0]
                                    is not None, limit=64))
    p = final_of(got or [], wr)[0]
    check("alice's WRITE beside bob's answered within %.1f s (%.3f s)"
          % (FAST, dt), p is not None and p["Status"] == 0 and dt < FAST,
          "%r after %.2f s" % (p["Status"] if p else None, dt))
    rd = raw_read(m, "alice", ta, fa, 64)
    dt, got2 = timed(lambda: collect(m, lambda g: final_of(g, rd)[0]
                                     is not None, limit=64))
    p, raw = final_of(got2 or [], rd)
    check("alice's READ beside bob's answered within %.1f s (%.3f s)"
          % (FAST, dt), p is not None and p["Status"] == 0 and
          raw[64 + 16:64 + 16 + 12] == b"alice's data" and dt < FAST,
          "%r after %.2f s" % (p["Status"] if p else None, dt))
    got = (got or []) + (got2 or [])
    check("bob's WRITEs were still waiting meanwhile (none answered)",
          not [x for x in bob if final_of(got, x)[0] is not None])
    # alice on her second connection, served by the same worker
    dt, r = timed(lambda: m2.read("alice", "st_%s_alice2.txt" % tag))
    check("alice on a second connection answered within 2 s (%.2f s)" % dt,
          r == b"second" and dt < 2, "%r after %.2f s" % (r, dt))
    left = [x for x in bob if final_of(got, x)[0] is None]
    if left:
        got += timed(lambda: collect(m, lambda g: all(
            final_of(g, x)[0] is not None for x in left),
            limit=len(left) + 4))[1] or []
    st = [final_of(got, x)[0]["Status"] for x in bob
          if final_of(got, x)[0] is not None]
    check("each of bob's WRITEs: USER_SESSION_DELETED",
          len(st) == len(bob) and
          all(x == STATUS_USER_SESSION_DELETED for x in st),
          "%d answers: %r" % (len(st), ["%08x" % x for x in st]))
    print("# alice waited %.2f s in all" % (time.monotonic() - t0),
          flush=True)
    st = status_of(lambda: m.write("bob", "st_%s_bob2.txt" % tag, b"x"))
    check("bob's next request: USER_SESSION_DELETED",
          st == STATUS_USER_SESSION_DELETED, "status %08x" % st)
    r = subprocess.run(cmd + ["cont"], check=False)
    check("bob's worker continued is alive", r.returncode == 0)
    st = status_of(lambda: m.login("bob", "bobpw1"))
    check("bob logs on anew on the connection", st == 0, "status %08x" % st)
    if st == 0:
        m.write("bob", "st_%s_bob3.txt" % tag, b"bob again")
        check("bob's new session works",
              m.read("bob", "st_%s_bob3.txt" % tag) == b"bob again")
    m.write("alice", "st_%s_alice3.txt" % tag, b"alice")
    check("alice goes on", m.read("alice", "st_%s_alice3.txt" % tag) ==
          b"alice")


def many(tag, users):
    m = Multi()
    m.login("alice", "alicepw1")
    for u in users:
        name, pw = u.split(":")
        m.login(name, pw)
    ok = 0
    for u in users:
        name = u.split(":")[0]
        m.write(name, "m_%s_%s.txt" % (tag, name), name.encode())
        ok += m.read(name, "m_%s_%s.txt" % (tag, name)) == name.encode()
    m.write("alice", "m_%s_alice.txt" % tag, b"alice")
    check("%d users on one connection each wrote a file" % (len(users) + 1),
          ok == len(users), "%d of %d" % (ok, len(users)))


def sealed_drop():
    """A relay in the clear (`relay sealed sessions = no`)
    meets a sealed request: impacket seals each 3.0 session unasked, so
    bob's first request after his logon (TREE_CONNECT) comes sealed.  The
    owner may not pass a sealed answer on (it could not check whose
    request it answers) nor answer the request itself (its message id is
    sealed): the connection drops, alice's session with it."""
    m = Multi()
    m.login("alice", "alicepw1")
    try:
        m.login("bob", "bobpw1")
        got = "bob logged on and connected the share"
    except (SessionError, smb3.SessionError) as e:
        got = "status %08x" % e.get_error_code()
    except Exception:
        got = None
    check("bob's sealed request drops the connection", got is None, got)


def refused():
    m = Multi()
    m.login("alice", "alicepw1")
    st = status_of(lambda: m.login("bob", "bobpw1"))
    check("bob's session refused on an unsigned connection",
          st == STATUS_ACCESS_DENIED, "status %08x" % st)
    m.c._Session = m.sess["alice"]
    m.write("alice", "refused_alice.txt", b"alice")
    check("alice goes on", m.read("alice", "refused_alice.txt") == b"alice")


def reauth_as(m, user, pw):
    """SESSION_SETUP on the current session: a re-authentication.  The
    session keeps the keys of its first logon (MS-SMB2 3.3.5.5.3), so
    impacket's freshly derived ones are put back."""
    keep = {k: v for k, v in m.c._Session.items()
            if "Key" in k or k in ("SigningActivated", "SessionFlags")}
    try:
        return status_of(lambda: m.c.login(user, pw))
    finally:
        m.c._Session.update(keep)


NTLMSSP_OID = bytes.fromhex("2b06010401823702020a")
SPNEGO_OID = bytes.fromhex("2b0601050502")


def der(tag, content):
    n = len(content)
    if n < 0x80:
        ln = bytes([n])
    elif n < 0x100:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82]) + struct.pack(">H", n)
    return bytes([tag]) + ln + content


def der_read(b, off):
    tag, n = b[off], b[off + 1]
    off += 2
    if n & 0x80:
        k = n & 0x7f
        n = int.from_bytes(b[off:off + k], "big")
        off += k
    return tag, off, off + n


def neg_resp_fields(blob):
    # {0: negState, 1: supportedMech, 2: responseToken, 3: mechListMIC}
    out = {}
    if not blob:
        return out
    _, s, e = der_read(blob, 0)
    _, s, e = der_read(blob, s)
    while s < e:
        t, cs, ce = der_read(blob, s)
        _, vs, ve = der_read(blob, cs)
        out[t & 0x1f] = blob[vs:ve]
        s = ce
    return out


def ntlm_mic(flags, key, mode, data):
    """The NTLMSSP MAC of data, sequence number 0 (MS-NLMP 3.4.4.2)."""
    from impacket import ntlm
    from Cryptodome.Cipher import ARC4
    handle = ARC4.new(ntlm.SEALKEY(flags, key, mode)).encrypt
    return ntlm.MAC(flags, handle, ntlm.SIGNKEY(flags, key, mode), 0,
                    data).getData()


def setup_raw(c, blob):
    """A SESSION_SETUP on the current session: (status, security blob)."""
    ss = smb3structs.SMB2SessionSetup()
    ss["SecurityMode"] = 1
    ss["Flags"] = 0
    ss["SecurityBufferLength"] = len(blob)
    ss["Buffer"] = blob
    p = c.SMB_PACKET()
    p["Command"] = smb3structs.SMB2_SESSION_SETUP
    p["Data"] = ss
    ans = c.recvSMB(c.sendSMB(p))
    r = smb3structs.SMB2SessionSetup_Response(ans["Data"]) \
        if ans["Status"] in (0, 0xC0000016) else None
    return ans["Status"], (r["Buffer"] if r is not None else b"")


def reauth_mic(m, user, pw, badmic=False):
    """Re-authentication of the current session as user with the
    mechListMICs (RFC 4178 5): (status, whether the server's verifies)."""
    from impacket import ntlm
    mech_types = der(0x30, der(0x06, NTLMSSP_OID))
    t1 = ntlm.getNTLMSSPType1("", "", True)
    init = der(0x60, der(0x06, SPNEGO_OID) + der(0xa0, der(0x30, der(
        0xa0, mech_types) + der(0xa2, der(0x04, t1.getData())))))
    st, blob = setup_raw(m.c, init)
    if st != 0xC0000016:
        return st, False
    t3, key = ntlm.getNTLMSSPType3(t1, neg_resp_fields(blob)[2], user, pw,
                                   "", "", "")
    flags = t3["flags"]
    mic = bytearray(ntlm_mic(flags, key, "Client", mech_types))
    if badmic:
        mic[-1] ^= 1
    st, blob = setup_raw(m.c, der(0xa1, der(0x30, der(
        0xa2, der(0x04, t3.getData())) + der(0xa3, der(0x04, bytes(mic))))))
    f = neg_resp_fields(blob)
    return st, f.get(3) == ntlm_mic(flags, key, "Server", mech_types)


def reauth(tag):
    m = Multi()
    m.login("alice", "alicepw1")
    t = m.use("alice")
    name = "ra_%s.txt" % tag
    f = m.c.create(t, name, FILE_READ_DATA | FILE_WRITE_DATA,
                   FILE_SHARE_READ | FILE_SHARE_WRITE,
                   FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    m.c.write(t, f, b"alice's data", 0, 12)
    st, mic_ok = reauth_mic(m, "bob", "bobpw1")
    check("alice's session re-authenticates as bob", st == 0, "status %08x" % st)
    check("our mechListMIC, made with bob's key, verifies", mic_ok)
    check("alice's old handle still reads",
          m.c.read(t, f, 0, 64) == b"alice's data")
    st = status_of(lambda: m.c.write(t, f, b"more", 12, 4))
    check("alice's old handle still writes", st == 0, "status %08x" % st)
    for what, n, disp in (("a new file", "ra_%s_new.txt" % tag,
                           FILE_OVERWRITE_IF),
                          ("alice's file", name, FILE_OPEN),
                          ("bob's secret", "secret", FILE_OPEN)):
        st = status_of(lambda: m.c.create(t, n, FILE_READ_DATA,
                                          FILE_SHARE_READ, 0, disp, 0))
        check("as bob, a CREATE of %s is refused" % what,
              st == STATUS_ACCESS_DENIED, "status %08x" % st)
    if SHARE:
        check("as bob, no new file on disk",
              not os.path.exists(os.path.join(SHARE, "ra_%s_new.txt" % tag)))
    # (impacket answers a second connect to "share" from its own table)
    st = status_of(lambda: m.c.connectTree("IPC$"))
    check("as bob, a TREE_CONNECT is refused",
          st == STATUS_ACCESS_DENIED, "status %08x" % st)
    st = reauth_as(m, "alice", "alicepw1")
    check("re-authenticated as alice again", st == 0, "status %08x" % st)
    st = status_of(lambda: m.c.close(t, m.c.create(
        t, "ra_%s_new.txt" % tag, FILE_READ_DATA | FILE_WRITE_DATA,
        FILE_SHARE_READ, FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)))
    check("as alice again, a new CREATE works", st == 0, "status %08x" % st)
    check("the old handle reads on",
          m.c.read(t, f, 0, 64) == b"alice's datamore")
    m.c.close(t, f)
    # The client's MIC is checked (by the master, which has bob's key).
    st, _ = reauth_mic(m, "bob", "bobpw1", badmic=True)
    check("a wrong client mechListMIC as bob: LOGON_FAILURE",
          st == 0xC000006D, "status %08x" % st)


if MODE == "two":
    two(sys.argv[4])
elif MODE == "async":
    lease_break(sys.argv[4], "alice", "bob")
    lease_break(sys.argv[4], "bob", "alice")
    blocking(sys.argv[4])
    notify(sys.argv[4])
elif MODE == "ownerlogoff":
    ownerlogoff(sys.argv[4])
elif MODE == "bigrelay":
    bigrelay(sys.argv[4])
elif MODE == "durable":
    durable(sys.argv[4])
elif MODE == "compound":
    compound(sys.argv[4])
elif MODE == "hold":
    hold(sys.argv[4], sys.argv[5], sys.argv[6:])
elif MODE == "forge":
    forge(sys.argv[4], sys.argv[5:])
elif MODE == "forgeown":
    forge(sys.argv[4], sys.argv[5:], under="bob")
elif MODE == "forgesealed":
    forge(sys.argv[4], sys.argv[5:], under="bob", sealed=True)
elif MODE == "sealeddrop":
    sealed_drop()
elif MODE == "inflight":
    inflight(sys.argv[4], sys.argv[5:])
elif MODE == "inflightsealed":
    inflight_sealed(sys.argv[4], sys.argv[5:])
elif MODE == "inflightsync":
    inflight_sync(sys.argv[4], sys.argv[5:])
elif MODE == "inflightsent":
    inflight_sent(sys.argv[4], sys.argv[5:])
elif MODE == "mixed":
    mixed(sys.argv[4])
elif MODE == "stall":
    stall(sys.argv[4], sys.argv[5:])
elif MODE == "many":
    many(sys.argv[4], sys.argv[5:])
elif MODE == "refused":
    refused()
elif MODE == "reauth":
    reauth(sys.argv[4])
sys.exit(1 if failed else 0)
