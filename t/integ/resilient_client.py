# The impacket client of t/integ/resilient.sh: resilient handles
# (FSCTL_LMR_REQUEST_RESILIENCY, MS-SMB2 3.3.5.15.9) as alice and bob.
#   resilient_client.py PORT DIALECT [guest | flood | hold | reclaim FID]
# DIALECT: 202 (only the refusal), 21 or 30 (impacket's highest).  Prints "ok ..." / "FAIL ..." lines.
import struct, sys, time
sys.dont_write_bytecode = True
from state_lib import ALL, RW, create, ctx, login, status_of
from impacket import smb3structs as s3
from impacket import smb3

FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4
DIALECTS = {"202": s3.SMB2_DIALECT_002, "21": s3.SMB2_DIALECT_21,
            "30": s3.SMB2_DIALECT_30}
D = DIALECTS[sys.argv[2]]
TAG = "(%s)" % sys.argv[2]
EXCL = 0x2 | 0x10           # exclusive, fail immediately
UNLOCK = 0x4


def check(desc, cond, why=""):
    print(("ok %s %s" % (desc, TAG)) if cond else
          ("FAIL %s %s: %s" % (desc, TAG, why)), flush=True)


def lock(c, tid, fid, off, length, flags, seq=0):
    """One LOCK element with LockSequence seq (bucket << 4 | number)."""
    srv = c.getSMBServer()
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_LOCK
    pkt['TreeID'] = tid
    body = struct.pack('<HHL', 48, 1, seq) + bytes(fid) + \
        struct.pack('<QQLL', off, length, flags, 0)
    pkt['Data'] = body
    ans = srv.recvSMB(srv.sendSMB(pkt))
    if ans['Status'] != 0:
        raise smb3.SessionError(ans['Status'], ans)


def resiliency(c, tid, fid, timeout_ms, raw=None):
    data = raw if raw is not None else struct.pack('<LL', timeout_ms, 0)
    return status_of(lambda: c.getSMBServer().ioctl(
        tid, fid, FSCTL_LMR_REQUEST_RESILIENCY, flags=1, inputBlob=data,
        maxInputResponse=0, maxOutputResponse=0))


def drop(c):
    """The TCP connection is lost: no CLOSE, no LOGOFF."""
    c.getSMBServer()._NetBIOSSession.close()


def reconnect(user, fid, name):
    """A new connection asks for the open back with DHnC (3.3.5.9.7)."""
    c, t = login(user, D)
    res = {}

    def rc():
        res['fid'] = c.getSMBServer().create(
            t, name, RW, 0, s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
            createContexts=[ctx(b'DHnC', bytes(fid))])
    return c, t, status_of(rc), res.get('fid')


def open_locked(name, timeout_ms):
    """alice: open (no oplock, no durable context), data, resiliency, then
    a lock with LockSequence bucket 1 number 1 (on 2.1 a LockSequence
    counts only once the open is resilient)."""
    a, at = login("alice", D)
    f = create(a, at, name)
    a.writeFile(at, f, b"resilient data")
    st = resiliency(a, at, f, timeout_ms)
    lock(a, at, f, 0, 10, EXCL, seq=0x11)
    return a, at, f, st


def bob_lock(name):
    b, bt = login("bob", D)
    f = create(b, bt, name)
    st = status_of(lambda: lock(b, bt, f, 0, 10, EXCL))
    b.closeFile(bt, f)
    b.logoff()
    return st


def main():
    name = "res%s.txt" % sys.argv[2]

    # the request's own rules
    a, at = login("alice", D)
    f = create(a, at, name)
    if sys.argv[2] == "202":
        st = resiliency(a, at, f, 1000)
        check("SMB 2.0.2: STATUS_INVALID_DEVICE_REQUEST",
              st == "STATUS_INVALID_DEVICE_REQUEST", st)
        return
    st = resiliency(a, at, f, 0, raw=b"\0" * 4)
    check("a 4-byte NETWORK_RESILIENCY_REQUEST: STATUS_INVALID_PARAMETER",
          st == "STATUS_INVALID_PARAMETER", st)
    st = resiliency(a, at, f, 301000)
    check("a timeout past the 300 s maximum: STATUS_INVALID_PARAMETER",
          st == "STATUS_INVALID_PARAMETER", st)
    st = resiliency(a, at, f, 300999)
    check("300 whole seconds is the maximum (compared in seconds)",
          st == "OK", st)
    d = a.getSMBServer().create(at, "", s3.FILE_READ_DATA, ALL,
                                s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    st = resiliency(a, at, d, 1000)
    check("a directory: STATUS_NOT_SUPPORTED", st == "STATUS_NOT_SUPPORTED",
          st)
    a.closeFile(at, d)
    a.closeFile(at, f)

    # kept through a lost connection, with its lock; bob cannot have it
    a, at, f, st = open_locked(name, 4000)
    check("FSCTL_LMR_REQUEST_RESILIENCY on a plain open: OK", st == "OK", st)
    drop(a)
    time.sleep(0.3)
    st = bob_lock(name)
    check("its lock holds after the disconnect",
          st == "STATUS_LOCK_NOT_GRANTED", st)
    b, bt, st, _ = reconnect("bob", f, name)
    check("another user's DHnC: STATUS_ACCESS_DENIED",
          st == "STATUS_ACCESS_DENIED", st)
    b.logoff()
    a, at, st, f2 = reconnect("alice", f, name)
    check("DHnC within the timeout gets the open back", st == "OK", st)
    if f2 is None:
        return
    data = a.readFile(at, f2, 0, 14)
    check("the reclaimed open reads the file", data == b"resilient data",
          data)
    # MS-SMB2 3.3.5.14: the lock sent before the disconnect, replayed
    st = status_of(lambda: lock(a, at, f2, 0, 10, EXCL, seq=0x11))
    check("the lock replayed with its LockSequence is taken for done",
          st == "OK", st)
    st = status_of(lambda: lock(a, at, f2, 0, 10, EXCL, seq=0x12))
    check("a new LockSequence on the held range: STATUS_LOCK_NOT_GRANTED",
          st == "STATUS_LOCK_NOT_GRANTED", st)
    st = status_of(lambda: lock(a, at, f2, 0, 10, UNLOCK, seq=0x13))
    check("its byte-range lock came back with it", st == "OK", st)
    lock(a, at, f2, 0, 10, EXCL, seq=0x14)

    # after the timeout: gone, its lock released
    st = resiliency(a, at, f2, 1000)
    check("resiliency asked again on the reclaimed open", st == "OK", st)
    drop(a)
    end = time.time() + 10
    st = bob_lock(name)
    while st != "OK" and time.time() < end:
        time.sleep(0.5)
        st = bob_lock(name)
    check("after the timeout its lock is released", st == "OK", st)
    a, at, st, _ = reconnect("alice", f2, name)
    check("after the timeout DHnC: STATUS_OBJECT_NAME_NOT_FOUND",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    a.logoff()

    # LOGOFF closes a resilient open (only a lost connection keeps it)
    a, at, f, st = open_locked(name, 60000)
    a.logoff()
    st = bob_lock(name)
    check("LOGOFF closes it: its lock is gone", st == "OK", st)
    a, at, st, _ = reconnect("alice", f, name)
    check("LOGOFF closes it: DHnC finds nothing",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    a.logoff()

    # a conflicting open does not close it (no caching to break):
    # the sharing violation a connected client would cause
    a, at = login("alice", D)
    f = create(a, at, name, share=s3.FILE_SHARE_READ)
    st = resiliency(a, at, f, 60000)
    drop(a)
    time.sleep(0.3)
    b, bt = login("bob", D)
    st = status_of(lambda: create(b, bt, name))
    check("a conflicting open while it is kept: STATUS_SHARING_VIOLATION",
          st == "STATUS_SHARING_VIOLATION", st)
    b.logoff()
    a, at, st, f2 = reconnect("alice", f, name)
    check("... and DHnC still gets it back", st == "OK", st)
    if f2 is not None:
        a.closeFile(at, f2)
    a.logoff()

    # the control: a plain open without resiliency is closed at once
    a, at = login("alice", D)
    f = create(a, at, name)
    lock(a, at, f, 0, 10, EXCL)
    drop(a)
    time.sleep(0.3)
    st = bob_lock(name)
    check("without resiliency the lock goes with the connection", st == "OK",
          st)


def hold():
    """For a kill -9 of the worker: a resilient open with a lock, held.
    Its LockSequenceArray then holds bucket 1 (0x11, in open_locked),
    bucket 2 (a lock of 20-29, 0x23) and bucket 3 (a lock of 40-49 and
    its unlock, 0x35 then 0x36): no orderly disconnect saves it."""
    a, at, f, st = open_locked("resk.txt", 60000)
    if st == "OK":
        lock(a, at, f, 20, 10, EXCL, seq=0x23)
        lock(a, at, f, 40, 10, EXCL, seq=0x35)
        lock(a, at, f, 40, 10, UNLOCK, seq=0x36)
    print("resiliency", st)
    print("fid", bytes(f).hex())
    print("holding", flush=True)
    time.sleep(30)


def reclaim(fidhex):
    """After the worker died: the purge kept it; alice gets it back."""
    st = bob_lock("resk.txt")
    check("after kill -9 of its worker the lock holds",
          st == "STATUS_LOCK_NOT_GRANTED", st)
    # the purge (the state process, told by the master) may come later
    end = time.time() + 5
    a, at, st, f = reconnect("alice", bytes.fromhex(fidhex), "resk.txt")
    while st != "OK" and time.time() < end:
        a.logoff()
        time.sleep(0.2)
        a, at, st, f = reconnect("alice", bytes.fromhex(fidhex), "resk.txt")
    check("after kill -9 of its worker DHnC gets it back", st == "OK", st)
    if f is None:
        return
    # MS-SMB2 3.3.5.14: what the client sent before the worker died,
    # replayed after the reconnect, is answered from the array the lock
    # transactions kept in the durable record (the worker's memory died)
    st = status_of(lambda: lock(a, at, f, 20, 10, EXCL, seq=0x23))
    check("after kill -9 a replayed lock (its LockSequence) is taken for "
          "done", st == "OK", st)
    st = status_of(lambda: lock(a, at, f, 40, 10, UNLOCK, seq=0x36))
    check("after kill -9 a replayed unlock is taken for done", st == "OK",
          st)
    st = status_of(lambda: lock(a, at, f, 0, 10, EXCL, seq=0x11))
    check("after kill -9 the first bucket's lock replayed: done", st == "OK",
          st)
    # the entries matched, nothing else: a new number is a new request
    st = status_of(lambda: lock(a, at, f, 20, 10, EXCL, seq=0x24))
    check("after kill -9 a new LockSequence on the held range: "
          "STATUS_LOCK_NOT_GRANTED", st == "STATUS_LOCK_NOT_GRANTED", st)
    st = status_of(lambda: lock(a, at, f, 40, 10, UNLOCK, seq=0x37))
    check("after kill -9 the unlocked range stays unlocked: "
          "STATUS_RANGE_NOT_LOCKED", st == "STATUS_RANGE_NOT_LOCKED", st)
    st = status_of(lambda: lock(a, at, f, 0, 10, UNLOCK, seq=0x41))
    check("... with its lock", st == "OK", st)
    st = status_of(lambda: lock(a, at, f, 20, 10, UNLOCK, seq=0x51))
    check("... and the second", st == "OK", st)
    a.closeFile(at, f)


def guest():
    """A guest (an unknown user mapped to the guest account) on [pub]."""
    from impacket.smbconnection import SMBConnection
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]),
                      preferredDialect=D)
    c.login("nosuchuser", "whatever")
    t = c.connectTree("pub")
    f = c.getSMBServer().create(t, "pub.txt", s3.FILE_READ_DATA, ALL,
                                s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    st = resiliency(c, t, f, 1000)
    check("a guest session: STATUS_ACCESS_DENIED",
          st == "STATUS_ACCESS_DENIED", st)


def flood():
    """A fresh worker grants RESILIENT_GRANTS_MAX (1024) in 300 s, then
    STATUS_INSUFF_SERVER_RESOURCES."""
    a, at = login("alice", D)
    f = create(a, at, "resk.txt")
    n, st = 0, "OK"
    while st == "OK" and n < 1100:
        st = resiliency(a, at, f, 1000)
        n += 1 if st == "OK" else 0
    check("1024 grants, then STATUS_INSUFF_SERVER_RESOURCES",
          n == 1024 and st == "STATUS_INSUFF_SERVER_RESOURCES",
          "%d granted, then %s" % (n, st))
    a.closeFile(at, f)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "guest":
        guest()
    elif len(sys.argv) > 3 and sys.argv[3] == "flood":
        flood()
    elif len(sys.argv) > 3 and sys.argv[3] == "hold":
        hold()
    elif len(sys.argv) > 3:
        reclaim(sys.argv[4])
    else:
        main()
