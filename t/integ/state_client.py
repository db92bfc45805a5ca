# The impacket client of t/integ/state.sh, state_durable.sh and
# state_doc.sh: alice and bob, served by two workers, on one server.
#   state_client.py PORT COMMAND [ARG...]
# Each command prints what it saw, one fact a line, for the script to grep.
import struct, sys, time, uuid
sys.dont_write_bytecode = True
from state_lib import (ALL, RW, Blob, break_wait, create, ctx, keep_last,
                       lease_ctx, lease_state, lease_v2, lock, login,
                       name_of, resp_contexts, status_of)
from impacket import smb3structs as s3
from impacket import smb3
from impacket.smbconnection import SessionError


def cmd_sharing():
    a, at = login("alice")
    b, bt = login("bob")
    fa = create(a, at, "deny.txt", share=0)
    print("bob-open", status_of(lambda: create(b, bt, "deny.txt")))
    a.closeFile(at, fa)
    print("bob-open-after-close",
          status_of(lambda: b.closeFile(bt, create(b, bt, "deny.txt"))))


def cmd_lock(hold=None):
    a, at = login("alice")
    b, bt = login("bob")
    fa = create(a, at, "locked.txt")
    a.writeFile(at, fa, b"x" * 100)
    lock(a, at, fa, 0, 10, 0x2 | 0x10)
    fb = create(b, bt, "locked.txt")
    print("bob-read", status_of(lambda: b.readFile(bt, fb, 0, 5)))
    print("bob-write", status_of(lambda: b.writeFile(bt, fb, b"y", 3)))
    print("bob-lock", status_of(lambda: lock(b, bt, fb, 5, 1, 0x2 | 0x10)))
    print("bob-read-outside", status_of(lambda: b.readFile(bt, fb, 20, 5)))
    if hold is not None:
        print("holding", flush=True)
        time.sleep(float(hold))
    lock(a, at, fa, 0, 10, 0x4)
    print("bob-lock-after-unlock",
          status_of(lambda: lock(b, bt, fb, 5, 1, 0x2 | 0x10)))


def cmd_lease():
    a, at = login("alice")
    b, bt = login("bob")
    key = uuid.uuid4().bytes
    create(a, at, "leased.txt", contexts=[lease_ctx(key, 0x1)])
    fb = create(b, bt, "leased.txt")
    b.writeFile(bt, fb, b"bob was here")
    srv = a.getSMBServer()
    srv._timeout = 5
    d = srv.recvSMB(0xFFFFFFFFFFFFFFFF)['Data']
    cur, new = struct.unpack_from('<LL', d, 24)
    print("break", "key-ok" if d[8:24] == key else "key-wrong",
          "cur=%d new=%d" % (cur, new))


def cmd_lease_lock():
    # bob's byte-range lock, then bob's SET_INFO EndOfFile, each break
    # alice's read lease (another worker) to none
    a, at = login("alice")
    b, bt = login("bob")
    srv = a.getSMBServer()
    srv._timeout = 5

    def brk(what, key):
        d = break_wait(srv)
        cur, new = struct.unpack_from('<LL', d, 24)
        print(what, "key-ok" if d[8:24] == key else "key-wrong",
              "cur=%d new=%d" % (cur, new))
    k1, k2 = uuid.uuid4().bytes, uuid.uuid4().bytes
    create(a, at, "leased2.txt", contexts=[lease_ctx(k1, 0x1)])
    fb = create(b, bt, "leased2.txt")
    lock(b, bt, fb, 0, 1, 0x2 | 0x10)
    brk("lock-break", k1)
    # no read lease is granted on a file with byte-range locks (as Samba:
    # smb2.lease.lease-epoch): bob's lock goes before alice's next lease
    lock(b, bt, fb, 0, 1, 0x4)
    create(a, at, "leased2.txt", contexts=[lease_ctx(k2, 0x1)])
    b.getSMBServer().setInfo(bt, fb, struct.pack('<Q', 100),
                             infoType=s3.SMB2_0_INFO_FILE, fileInfoClass=20)
    brk("eof-break", k2)


def cmd_hold():
    a, at = login("alice")
    create(a, at, "crash.txt", access=RW | 0x10000, share=0)
    # and a byte-range lock on another file: worker death must drop it
    fl = create(a, at, "crashlock.txt")
    lock(a, at, fl, 0, 10, 0x2 | 0x10)
    # a WRITE in her own range reads the lock table: the worker now holds
    # an LMDB reader slot, whatever it served before (state.sh checks the
    # master frees it at the worker's death)
    a.writeFile(at, fl, b"held")
    print("holding", flush=True)
    time.sleep(30)


def cmd_bob_open():
    b, bt = login("bob")
    print("bob-open", status_of(lambda: create(b, bt, "crash.txt")))


def cmd_lease_ack_elsewhere(how):
    # One client (one client GUID), two users: alice's and bob's sessions
    # are served by two workers.  alice holds an RWH lease; another opener
    # makes the server break it (RWH -> RH, ack required, the opener
    # waits); the client acks on bob's connection.  The opener must go on
    # at once, not at the 35 s break timeout.  how: "shared" (bob has an
    # open of the lease too), "none" (bob's worker holds nothing) or
    # "staged" (none, and an overwrite makes the ack start a second break).
    import threading
    guid = "usmbd-one-clnt!!"
    name = "ackx-%s.txt" % how
    a, at = login("alice", guid=guid)
    b, bt = login("bob", guid=guid)
    o, ot = login("alice")	# the opener: another client
    o2, o2t = login("alice")
    key = uuid.uuid4().bytes
    create(a, at, name, contexts=[lease_ctx(key, 0x7)])
    if how == "shared":
        create(b, bt, name, contexts=[lease_ctx(key, 0x7)])
    res = {}

    def opener():
        res['status'] = status_of(lambda: create(o, ot, name))
        res['t'] = time.time()
    th = threading.Thread(target=opener, daemon=True)
    th.start()
    srv = a.getSMBServer()
    srv._timeout = 5
    d = break_wait(srv)
    cur, new = struct.unpack_from('<LL', d, 24)
    print("break", "key-ok" if d[8:24] == key else "key-wrong",
          "cur=%d new=%d" % (cur, new), flush=True)
    bs = b.getSMBServer()

    def ack(state):
        pkt = bs.SMB_PACKET()
        pkt['Command'] = s3.SMB2_OPLOCK_BREAK
        pkt['TreeID'] = bt
        pkt['Data'] = struct.pack('<HHL', 36, 0, 0) + key + \
            struct.pack('<LQ', state, 0)
        ans = bs.recvSMB(bs.sendSMB(pkt))
        print("ack-on-bob 0x%x" % ans['Status'], flush=True)
    if how == "staged":
        # a second opener overwrites while the break is in progress: the
        # ack of RH must start the follow-up break RH -> R, sent to
        # alice's worker (bob's holds no open of the lease)
        def overwriter():
            res['ow'] = status_of(lambda: create(o2, o2t, name,
                                                 disp=s3.FILE_OVERWRITE_IF))
            res['ow_t'] = time.time()
        th2 = threading.Thread(target=overwriter, daemon=True)
        th2.start()
        time.sleep(0.5)
    t0 = time.time()
    ack(new)
    if how == "staged":
        d = break_wait(srv)
        cur, new = struct.unpack_from('<LL', d, 24)
        print("follow-up break", "cur=%d new=%d" % (cur, new), flush=True)
        ack(new)
        # then R -> none, settled at once: no ack asked
        d = break_wait(srv)
        flags, = struct.unpack_from('<L', d, 4)
        cur, new = struct.unpack_from('<LL', d, 24)
        print("last break", "cur=%d new=%d flags=%d" % (cur, new, flags),
              flush=True)
        th2.join(12)
        print("overwriter", res.get('ow', "still waiting"),
              "after %.1f s" % (res.get('ow_t', time.time()) - t0))
    th.join(12)
    if 'status' in res:
        print("opener", res['status'], "after %.1f s" % (res['t'] - t0))
    else:
        print("opener still waiting after 12 s")


def cmd_relock(name, how):
    # alice locks, then logs off or drops the connection: bob's lock of
    # the same range must then be granted
    a, at = login("alice", keep=True)
    b, bt = login("bob", keep=True)
    fa = create(a, at, name)
    lock(a, at, fa, 0, 10, 0x2 | 0x10)
    fb = create(b, bt, name, disp=s3.FILE_OPEN)
    print("bob-before", status_of(lambda: lock(b, bt, fb, 0, 10, 0x2 | 0x10)))
    if how == "logoff":
        a.logoff()
    else:
        a.getSMBServer()._NetBIOSSession.close()
    res = "never"
    for i in range(40):
        res = status_of(lambda: lock(b, bt, fb, 0, 10, 0x2 | 0x10))
        if res == "OK":
            break
        time.sleep(0.05)
    print("bob-after", res, "tries", i + 1)


def cmd_bob_lock(name):
    b, bt = login("bob", keep=True)
    fb = create(b, bt, name, disp=s3.FILE_OPEN)
    print("bob-lock", status_of(lambda: lock(b, bt, fb, 0, 10, 0x2 | 0x10)))
    b.closeFile(bt, fb)


def cmd_bob_read(name):
    # a READ checks the locks and breaks no lease
    b, bt = login("bob", keep=True)
    fb = create(b, bt, name, disp=s3.FILE_OPEN)
    print("bob-read", status_of(lambda: b.readFile(bt, fb, 0, 5)))
    b.closeFile(bt, fb)


def cmd_blocking(name):
    # bob's blocking LOCK (no FAIL_IMMEDIATELY) waits in his worker for
    # alice's range (her worker): released by her unlock, or cancelled
    import threading
    a, at = login("alice", keep=True)
    b, bt = login("bob", keep=True)
    fa = create(a, at, name)
    fb = create(b, bt, name, disp=s3.FILE_OPEN)
    bs = b.getSMBServer()

    def blocking(off):
        pkt = bs.SMB_PACKET()
        pkt['Command'] = s3.SMB2_LOCK
        pkt['TreeID'] = bt
        pkt['Data'] = struct.pack('<HHL', 48, 1, 0) + bytes(fb) + \
            struct.pack('<QQLL', off, 10, 0x2, 0)
        mid = bs.sendSMB(pkt)
        res = {}

        def wait():
            bs._timeout = 10
            res['status'] = bs.recvSMB(mid)['Status']	# past the interim
            res['t'] = time.time()
        th = threading.Thread(target=wait, daemon=True)
        th.start()
        return mid, res, th
    for off, how in ((0, "unlock"), (20, "cancel")):
        lock(a, at, fa, off, 10, 0x2 | 0x10)
        mid, res, th = blocking(off)
        time.sleep(0.7)
        waited = 'status' not in res
        t0 = time.time()
        if how == "unlock":
            lock(a, at, fa, off, 10, 0x4)
        else:
            pkt = bs.SMB_PACKET()
            pkt['Command'] = s3.SMB2_CANCEL
            pkt['MessageID'] = mid
            pkt['Data'] = struct.pack('<HH', 4, 0)
            bs.sendSMB(pkt)
        th.join(10)
        print(how, "waited" if waited else "did-not-wait",
              "0x%x" % res.get('status', 0xffffffff),
              "after %.1f s" % (res.get('t', time.time()) - t0), flush=True)


def cmd_doc(name):
    # delete-on-close across workers: alice has it open, bob's
    # delete-on-close handle closes -> delete pending; the file goes with
    # alice's last close.  Steps on each line read from stdin.
    a, at = login("alice", keep=True)
    b, bt = login("bob", keep=True)
    fa = create(a, at, name, access=s3.FILE_READ_DATA)
    bsrv = b.getSMBServer()
    fb = bsrv.create(bt, name, s3.DELETE | s3.FILE_READ_ATTRIBUTES, ALL,
                     s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE,
                     s3.FILE_OPEN, 0)
    bsrv.close(bt, fb)
    print("bob-reopen", status_of(lambda: bsrv.create(bt, name,
          s3.FILE_READ_DATA, ALL, s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)))
    print("exists-before", flush=True)
    sys.stdin.readline()
    a.closeFile(at, fa)
    print("alice-closed", flush=True)
    sys.stdin.readline()


def cmd_durable_hold(name="durable.txt"):
    # batch oplock + DHnQ, some data and a lock, then wait to be killed
    a, at = login("alice")
    srv = a.getSMBServer()
    keep_last(srv)
    fid = srv.create(at, name, RW, 0, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN_IF, 0, oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                     createContexts=[ctx(b'DHnQ', b'\0' * 16)])
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    print("dh", "granted" if b'DHnQ' in raw else "refused")
    a.writeFile(at, fid, b"durable data")
    lock(a, at, fid, 0, 10, 0x2 | 0x10)
    print("fid", fid.hex())
    print("holding", flush=True)
    time.sleep(30)


def cmd_durable_reconnect(fidhex, user="alice", name="durable.txt"):
    # a new connection reclaims the handle by its file id (DHnC)
    a, at = login(user)
    dc = ctx(b'DHnC', bytes.fromhex(fidhex))
    res = {}

    def rc():
        res['fid'] = a.getSMBServer().create(at, name, RW, 0,
            s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
            oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH, createContexts=[dc])
    print("reconnect", status_of(rc))
    if 'fid' in res:
        print("data", a.readFile(at, res['fid'], 0, 12).decode())
        # the lock came back with the handle: unlocking it succeeds
        print("unlock", status_of(lambda: lock(a, at, res['fid'], 0, 10, 0x4)))
        a.closeFile(at, res['fid'])


APP_TAG = bytes.fromhex("45BCA66AEFA7F74A9008FA462E144D74")


def app_ctx(app_id):
    """SMB2_CREATE_APP_INSTANCE_ID: a 16-byte name, StructureSize 20."""
    c = s3.SMB2CreateContext()
    c['NameOffset'] = 16
    c['NameLength'] = 16
    c['DataOffset'] = 32
    c['DataLength'] = 20
    c['Buffer'] = APP_TAG + struct.pack('<HH', 20, 0) + app_id
    return c


def cmd_app_instance():
    # MS-SMB2 3.3.5.9.13: an open with the AppInstanceId of an open from
    # another client closes it; not one from the same client, not
    # another user's, not on SMB 2.1.
    app = uuid.uuid4().bytes

    def hold(user, guid, dialect=s3.SMB2_DIALECT_30):
        c, t = login(user, dialect, guid=guid)
        fid = c.getSMBServer().create(t, "appinst.txt", RW, ALL,
                                      s3.FILE_NON_DIRECTORY_FILE,
                                      s3.FILE_OPEN_IF, 0,
                                      createContexts=[app_ctx(app)])
        return c, t, fid

    def alive(c, t, fid):
        return status_of(lambda: c.getSMBServer().read(t, fid, 0, 1))

    a1 = hold("alice", "usmbd-app-node-1")
    a2 = hold("alice", "usmbd-app-node-1")
    print("same client", alive(*a1))
    b = hold("bob", "usmbd-app-node-3")
    print("other user", alive(*a1), alive(*a2))
    old = hold("alice", "usmbd-app-node-4", s3.SMB2_DIALECT_21)
    print("smb 2.1", alive(*a1), alive(*a2))
    n = hold("alice", "usmbd-app-node-2")
    print("other client", alive(*a1), alive(*a2), alive(*n), alive(*b),
          alive(*old))


DH2_GUID = "usmbd-dh2-clnt!!"	# one client GUID for hold and reconnect


def cmd_dh2_hold(name, tmo):
    # SMB 3.0, DH2Q + lease v2 RH + an exclusive lock, then wait to be killed
    a, at = login("alice", s3.SMB2_DIALECT_30, guid=DH2_GUID, keep=True)
    srv = a.getSMBServer()
    key, cg, parent = (uuid.uuid4().bytes for i in range(3))
    dh2q = (b'DH2Q', struct.pack('<LLQ', int(tmo), 0, 0) + cg)
    fid = srv.create(at, name, RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN_IF, 0, oplockLevel=0xFF,
                     createContexts=[Blob([lease_v2(key, 0x3, parent), dh2q])])
    ctxs = resp_contexts(srv)
    print("lease", lease_state(ctxs))
    d = ctxs.get(b'RqLs', b'')
    print("parent", "ok" if len(d) == 52 and struct.unpack_from('<L', d, 20)[0] & 4
          and d[32:48] == parent else "wrong")
    print("dh2", "granted" if b'DH2Q' in ctxs else "refused")
    a.writeFile(at, fid, b"durable v2 data")
    lock(a, at, fid, 0, 10, 0x2 | 0x10)
    print("ids", bytes(fid).hex(), key.hex(), cg.hex())
    print("holding", flush=True)
    time.sleep(30)


def cmd_dh2_reconnect(name, fidhex, keyhex, cghex, hold=None):
    # a new connection of the same client reclaims it (DH2C + the lease)
    fid, key, cg = (bytes.fromhex(x) for x in (fidhex, keyhex, cghex))
    a, at = login("alice", s3.SMB2_DIALECT_30, guid=DH2_GUID, keep=True)
    srv = a.getSMBServer()
    dh2c = (b'DH2C', fid + cg + struct.pack('<L', 0))
    res = {}

    def rc():
        res['fid'] = srv.create(at, name, RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                                s3.FILE_OPEN, 0, oplockLevel=0xFF,
                                createContexts=[Blob([lease_v2(key, 0x3), dh2c])])
    print("reconnect", status_of(rc), flush=True)
    if 'fid' in res:
        ctxs = resp_contexts(srv)
        print("lease", lease_state(ctxs),
              "key-ok" if ctxs.get(b'RqLs', b'')[:16] == key else "key-wrong")
        print("data", a.readFile(at, res['fid'], 0, 15).decode())
        # another client, another worker: the lock is alice's again
        b, bt = login("bob", keep=True)
        fb = create(b, bt, name, disp=s3.FILE_OPEN)
        print("bob-lock", status_of(lambda: lock(b, bt, fb, 0, 10, 0x2 | 0x10)))
        print("bob-read", status_of(lambda: b.readFile(bt, fb, 0, 5)))
        print("holding", flush=True)
        if hold is not None:
            time.sleep(float(hold))
        print("unlock", status_of(lambda: lock(a, at, res['fid'], 0, 10, 0x4)))
        a.closeFile(at, res['fid'])


def cmd_fill():
    # durable opens with long paths until the state map is full
    a, at = login("alice", keep=True)
    srv = a.getSMBServer()
    d = "fill\\" + "d" * 200 + "\\" + "e" * 200
    dhq = (b'DHnQ', b'\0' * 16)
    fids, first_err = [], None
    for i in range(1000):
        try:
            fids.append(srv.create(at, d + "\\%04d" % i + "f" * 200, RW, ALL,
                s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0,
                oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                createContexts=[Blob([dhq])]))
        except (SessionError, smb3.SessionError) as e:
            first_err = name_of(e)
            break
    print("opened", len(fids), "then", first_err, flush=True)
    for f in fids:
        srv.close(at, f)
    print("closed", flush=True)
    # room again: a new open and a new lock are recorded
    f = create(a, at, "after-full.txt")
    print("after-open OK")
    print("after-lock", status_of(lambda: lock(a, at, f, 0, 1, 0x2 | 0x10)))
    srv.close(at, f)


COMMANDS = {
    "sharing": cmd_sharing, "lock": cmd_lock, "lease": cmd_lease,
    "lease-lock": cmd_lease_lock, "hold": cmd_hold, "bob-open": cmd_bob_open,
    "lease-ack-elsewhere": cmd_lease_ack_elsewhere, "relock": cmd_relock,
    "bob-lock": cmd_bob_lock, "bob-read": cmd_bob_read,
    "blocking": cmd_blocking, "doc": cmd_doc,
    "durable-hold": cmd_durable_hold,
    "app-instance": cmd_app_instance,
    "durable-reconnect": cmd_durable_reconnect,
    "dh2-hold": cmd_dh2_hold, "dh2-reconnect": cmd_dh2_reconnect,
    "fill": cmd_fill,
}

if __name__ == "__main__":
    COMMANDS[sys.argv[2]](*sys.argv[3:])
