# The impacket client of t/integ/dirlease.sh: directory leases (issue 16).
#
#	dirlease_client.py PORT SHARE_PATH CMD
#
# CMD grant | other | parent | order | local | localown | nocap; each prints
# lines the script checks.  alice and bob log in with SMB 3.0 (v2 lease
# contexts); the directories dl1..dl5 exist (made 0777 by the script).
import os, struct, sys, time, uuid

from impacket import smb3, smb3structs as s3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state_lib import (ALL, Blob, break_wait, keep_last, lease_state,  # noqa: E402
                       lease_v2, login, resp_contexts)

SHARE_PATH = sys.argv[2]
CAP_DIRECTORY_LEASING = 0x20
BREAK_MID = 0xFFFFFFFFFFFFFFFF


def login3(user, ask_cap=True):
    """SMB 3.0 login; ask_cap: the client's Capabilities include
    DIRECTORY_LEASING (impacket 0.10 sends its module's ENCRYPTION value
    there, so that value is widened while it negotiates).  impacket's own
    directory lease bookkeeping is turned off: it fails on top-level
    names (smb3.py create, parentDir)."""
    saved = smb3.SMB2_GLOBAL_CAP_ENCRYPTION
    if ask_cap:
        smb3.SMB2_GLOBAL_CAP_ENCRYPTION = saved | CAP_DIRECTORY_LEASING
    try:
        c, t = login(user, s3.SMB2_DIALECT_30, keep=True)
    finally:
        smb3.SMB2_GLOBAL_CAP_ENCRYPTION = saved
    conn = c.getSMBServer()._Connection
    conn['SupportsDirectoryLeasing'] = False
    return c, t, conn['ServerCapabilities']


def dir_lease(c, tid, name, key, state=0x7):
    """Opens directory name with a v2 lease context; (fid, granted state)."""
    srv = c.getSMBServer()
    fid = srv.create(tid, name, s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                     ALL, s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0,
                     createContexts=[Blob([lease_v2(key, state)])])
    return fid, lease_state(resp_contexts(srv))


def file_create(c, tid, name, key=None, parent=None):
    srv = c.getSMBServer()
    ctxs = [Blob([lease_v2(key, 0x7, parent)])] if key else None
    return srv.create(tid, name, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA, ALL,
                      s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0,
                      createContexts=ctxs)


def brk(srv, what, key, timeout=5):
    """Waits for a lease break; prints what, whether it is key's, the states."""
    srv._timeout = timeout
    try:
        d = break_wait(srv)
    except Exception:
        print(what, "none", flush=True)
        return None
    cur, new = struct.unpack_from('<LL', d, 24)
    print(what, "key-ok" if d[8:24] == key else "key-wrong",
          "cur=%d new=%d" % (cur, new), flush=True)
    return new


def ack(c, tid, key, state):
    srv = c.getSMBServer()
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_OPLOCK_BREAK
    pkt['TreeID'] = tid
    pkt['Data'] = struct.pack('<HHL', 36, 0, 0) + key + \
        struct.pack('<LQ', state, 0)
    ans = srv.recvSMB(srv.sendSMB(pkt))
    print("ack 0x%x" % ans['Status'], flush=True)


def rearm(c, tid, name, key):
    """After a break to none: the same key asks RH again (an upgrade)."""
    _, st = dir_lease(c, tid, name, key, 0x3)
    print("rearm state=%d" % st, flush=True)


def cmd_grant():
    _, _, caps = login3("alice", ask_cap=False)
    print("unasked cap %d" % (1 if caps & CAP_DIRECTORY_LEASING else 0))
    a, at, caps = login3("alice")
    print("cap %d" % (1 if caps & CAP_DIRECTORY_LEASING else 0))
    _, st = dir_lease(a, at, "dl1", uuid.uuid4().bytes, 0x7)
    print("rwh-asked state=%d" % st)	# RH: never W on a directory
    _, st = dir_lease(a, at, "dl1", uuid.uuid4().bytes, 0x1)
    print("r-asked state=%d" % st)


def cmd_other():
    # bob's create, in bob's worker, breaks alice's lease (alice's worker)
    a, at, _ = login3("alice")
    b, bt, _ = login3("bob")
    key = uuid.uuid4().bytes
    _, st = dir_lease(a, at, "dl1", key)
    print("held state=%d" % st, flush=True)
    fid = file_create(b, bt, "dl1\\bob.txt")
    new = brk(a.getSMBServer(), "create-break", key)
    if new is not None:
        ack(a, at, key, new)
    b.getSMBServer().close(bt, fid)
    rearm(a, at, "dl1", key)
    # and bob's delete of his file, at its close
    b.deleteFile("share", "dl1\\bob.txt")
    new = brk(a.getSMBServer(), "delete-break", key)
    if new is not None:
        ack(a, at, key, new)


def cmd_parent():
    a, at, _ = login3("alice")
    srv = a.getSMBServer()
    dkey = uuid.uuid4().bytes
    _, st = dir_lease(a, at, "dl2", dkey)
    print("held state=%d" % st, flush=True)
    # the owner of the parent lease key creates a file: no break
    file_create(a, at, "dl2\\own.txt", uuid.uuid4().bytes, dkey)
    brk(srv, "parent-key-create", dkey, timeout=2)
    # another key: the break follows the CREATE's response at once on
    # this same connection (Samba's order); impacket keeps what arrived
    # before the answer
    file_create(a, at, "dl2\\other.txt", uuid.uuid4().bytes)
    early = BREAK_MID in srv._Connection['OutstandingResponses']
    print("order", "break-first" if early else "response-first", flush=True)
    new = brk(srv, "other-key-create", dkey, timeout=1)
    if new is not None:
        ack(a, at, dkey, new)


def frame_log(srv):
    """Every frame read from the socket, in order, as (command, message
    id, status): impacket's NetBIOS reads are wrapped, one frame each; a
    sealed one is opened as impacket does (AES-128-CCM)."""
    log, nb = [], srv._NetBIOSSession
    orig = nb.recv_packet

    def rec(*args, **kw):
        p = orig(*args, **kw)
        d = p.get_trailer()
        if d[:4] == b'\xfdSMB':
            th = s3.SMB2_TRANSFORM_HEADER(d)
            aes = smb3.AES.new(srv._Session['DecryptionKey'],
                               smb3.AES.MODE_CCM, th['Nonce'][:11])
            aes.update(th.getData()[20:])
            d = aes.decrypt(d[len(s3.SMB2_TRANSFORM_HEADER()):])
        log.append((struct.unpack_from('<H', d, 12)[0],
                    struct.unpack_from('<Q', d, 24)[0],
                    struct.unpack_from('<L', d, 8)[0]))
        return p
    nb.recv_packet = rec
    return log


def order_of(log, start, cmd):
    """Which came first after log[start:]: the break notification or the
    final response of command cmd."""
    for c, mid, st in log[start:]:
        if c == 0x12 and mid == BREAK_MID:
            return "break-first"
        if c == cmd and st != 0x103:	# not a STATUS_PENDING interim
            return "response-first"
    return "neither"


def cmd_order():
    """The break a change on the holder's own connection causes follows
    the response of the CREATE, SET_INFO and CLOSE that made it at once
    (Samba's order), frame by frame as read from the socket."""
    a, at, _ = login3("alice")
    srv = a.getSMBServer()
    log = frame_log(srv)
    key = uuid.uuid4().bytes
    _, st = dir_lease(a, at, "dl4", key)
    print("held state=%d" % st, flush=True)
    n = len(log)
    fid = file_create(a, at, "dl4\\o.txt")
    print("create", order_of(log, n, s3.SMB2_CREATE), flush=True)
    new = brk(srv, "create-break", key, timeout=1)
    if new is not None:
        ack(a, at, key, new)
    rearm(a, at, "dl4", key)
    n = len(log)
    srv.setInfo(at, fid, struct.pack('<Q', 10), infoType=1,
                fileInfoClass=20)	# FileEndOfFileInformation
    print("set_info", order_of(log, n, s3.SMB2_SET_INFO), flush=True)
    new = brk(srv, "setinfo-break", key, timeout=1)
    if new is not None:
        ack(a, at, key, new)
    rearm(a, at, "dl4", key)
    srv.write(at, fid, b"written", 0, 7)
    n = len(log)
    srv.close(at, fid)	# the close of a handle that wrote
    print("close", order_of(log, n, s3.SMB2_CLOSE), flush=True)
    new = brk(srv, "close-break", key, timeout=1)
    if new is not None:
        ack(a, at, key, new)


def cmd_local():
    a, at, _ = login3("alice")
    srv = a.getSMBServer()
    key = uuid.uuid4().bytes
    _, st = dir_lease(a, at, "dl3", key)
    print("held state=%d" % st, flush=True)
    path = os.path.join(SHARE_PATH, "dl3", "local.txt")
    # touch(1) on the server, by a process that is no SMB client
    with open(path, "w"):
        pass
    new = brk(srv, "local-touch", key)
    if new is not None:
        ack(a, at, key, new)
    rearm(a, at, "dl3", key)
    time.sleep(0.3)
    os.unlink(path)
    new = brk(srv, "local-unlink", key)
    if new is not None:
        ack(a, at, key, new)


def cmd_localown():
    """Local changes of names this worker has just closed or holds open
    break the lease too; the worker's own close of an unwritten handle
    (its IN_CLOSE_WRITE) does not."""
    path = os.path.join(SHARE_PATH, "dl5", "t.txt")
    with open(path, "w") as f:
        f.write("t")
    os.chmod(path, 0o666)
    a, at, _ = login3("alice")
    srv = a.getSMBServer()
    key = uuid.uuid4().bytes
    _, st = dir_lease(a, at, "dl5", key)
    print("held state=%d" % st, flush=True)
    fid = file_create(a, at, "dl5\\t.txt")
    srv.close(at, fid)
    brk(srv, "own-close", key, timeout=1)
    # within the old 2 s window of that close: a local append
    with open(path, "a") as f:
        f.write("x")
    new = brk(srv, "local-append-after-close", key)
    if new is not None:
        ack(a, at, key, new)
    rearm(a, at, "dl5", key)
    fid = file_create(a, at, "dl5\\t.txt")
    os.utime(path)	# touch(1) of the name alice holds open
    new = brk(srv, "local-touch-open", key)
    if new is not None:
        ack(a, at, key, new)
    srv.close(at, fid)


def cmd_nocap():
    a, at, caps = login3("alice")
    print("cap %d" % (1 if caps & CAP_DIRECTORY_LEASING else 0))
    _, st = dir_lease(a, at, "dl1", uuid.uuid4().bytes)
    print("lease state=%d" % st)	# -1: no lease context answered


CMDS = {"grant": cmd_grant, "other": cmd_other, "parent": cmd_parent,
        "local": cmd_local, "nocap": cmd_nocap, "order": cmd_order,
        "localown": cmd_localown}
if __name__ == "__main__":
    CMDS[sys.argv[3]]()
