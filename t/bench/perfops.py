#!/usr/bin/python3
"""perfops: one SMB2 command per request, for `make perfcheck`.

    perfops.py PORT USER PASSWORD N

impacket (python3-impacket) sends exactly the request it is asked for, so
each phase below is N requests of one command and nothing else; the
per-request figures of perfcheck.py are then exact.  The READY/DONE protocol
is smbload's (-P): the client prints "READY phase=CMD", waits for a line on
stdin, sends the N requests, prints "RESULT ..." and "DONE phase=CMD", and
waits again.  Everything a phase needs (the connection, the tree, open
handles, file content) is set up before its READY, so the window holds only
steady-state requests.
"""

import os
import struct
import sys
import time

from impacket import smb3structs as s2
from impacket.nt_errors import STATUS_SUCCESS
from impacket.smb3 import SessionError
from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2_DIALECT_30

GENERIC_RW = 0x00120089 | 0x00120116     # FILE_GENERIC_READ | FILE_GENERIC_WRITE
SHARE_ALL = 7
FILE_OPEN, FILE_OPEN_IF, FILE_OVERWRITE_IF = 1, 3, 5
FILE_DIRECTORY_FILE, FILE_NON_DIRECTORY_FILE = 0x1, 0x40
FILE_DELETE_ON_CLOSE = 0x1000
DELETE = 0x00010000
SMB2_RESTART_SCANS = 0x01                # MS-SMB2 2.2.33


def pause(what, phase):
    print("%s phase=%s" % (what, phase), flush=True)
    sys.stdin.readline()


def window(phase, n, fn):
    pause("READY", phase)
    t0 = time.monotonic()
    for i in range(n):
        fn(i)
    secs = time.monotonic() - t0
    print("RESULT workload=perfops phase=%s ops=%d bytes=0 secs=%.6f truncated=0"
          % (phase, n, secs), flush=True)
    pause("DONE", phase)


def aapl_context():
    """Apple's AAPL server query (worker/fruit.h): server caps, volume
    caps, model; the client offers READ_DIR_ATTR."""
    c = s2.SMB2CreateContext()
    data = struct.pack("<IIQQ", 1, 0, 7, 1 | 4)
    c["Next"] = 0
    c["NameOffset"] = 16
    c["NameLength"] = 4
    c["DataOffset"] = 24
    c["DataLength"] = len(data)
    c["Buffer"] = b"AAPL" + b"\0" * 4 + data
    return c


def query_directory_restart(smb, tid, fid, klass=None):
    """impacket's queryDirectory never sets RESTART_SCANS, so a second call
    would only say STATUS_NO_MORE_FILES: build the request here."""
    pkt = smb.SMB_PACKET()
    pkt["Command"] = s2.SMB2_QUERY_DIRECTORY
    pkt["TreeID"] = tid
    q = s2.SMB2QueryDirectory()
    q["FileInformationClass"] = klass or s2.FILE_FULL_DIRECTORY_INFORMATION
    q["Flags"] = SMB2_RESTART_SCANS
    q["FileIndex"] = 0
    q["FileID"] = fid
    q["OutputBufferLength"] = 65536
    q["FileNameLength"] = 2
    q["Buffer"] = "*".encode("utf-16le")
    pkt["Data"] = q
    ans = smb.recvSMB(smb.sendSMB(pkt))
    if not ans.isValidAnswer(STATUS_SUCCESS):
        raise RuntimeError("QUERY_DIRECTORY failed")


FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4
LOCK_EXCL_NOW, LOCK_UNLOCK = 0x2 | 0x10, 0x4   # MS-SMB2 2.2.26.1


def lock1(smb, tid, fid, off, length, flags, seq):
    """One SMB2 LOCK of one element with LockSequence seq (impacket's
    lock() joins str() of its elements, which Python 3 breaks)."""
    pkt = smb.SMB_PACKET()
    pkt["Command"] = s2.SMB2_LOCK
    pkt["TreeID"] = tid
    pkt["Data"] = struct.pack("<HHL", 48, 1, seq) + bytes(fid) + \
        struct.pack("<QQLL", off, length, flags, 0)
    if not smb.recvSMB(smb.sendSMB(pkt)).isValidAnswer(STATUS_SUCCESS):
        raise RuntimeError("LOCK failed")


def lock_phases(smb, tid, fid, k, suffix):
    """LOCK (k exclusive locks of distinct ranges) then UNLOCK (theirs),
    each request with its own LockSequence: bucket i % 64 + 1, its number
    the pass, so every request changes its entry."""
    def seq(i):
        return ((i % 64 + 1) << 4) | ((i // 64) % 16)
    # warm-up: the state handle's lock buffer grows to k locks once
    for i in range(k):
        lock1(smb, tid, fid, (1 << 40) + i * 16, 8, LOCK_EXCL_NOW, 0)
    for i in range(k):
        lock1(smb, tid, fid, (1 << 40) + i * 16, 8, LOCK_UNLOCK, 0)
    window("LOCK" + suffix, k,
           lambda i: lock1(smb, tid, fid, i * 16, 8, LOCK_EXCL_NOW, seq(i)))
    window("UNLOCK" + suffix, k,
           lambda i: lock1(smb, tid, fid, i * 16, 8, LOCK_UNLOCK, seq(i + k)))


def set_eas(smb, tid, fid, pairs):
    """SET_INFO FileFullEaInformation (MS-FSCC 2.4.15) of pairs."""
    blob = b""
    for i, (name, value) in enumerate(pairs):
        e = struct.pack("<IBBH", 0, 0, len(name), len(value)) + name + b"\0" + value
        if i + 1 < len(pairs):
            e += b"\0" * (-len(e) % 4)
            e = struct.pack("<I", len(e)) + e[4:]
        blob += e
    pkt = smb.SMB_PACKET()
    pkt["Command"] = s2.SMB2_SET_INFO
    pkt["TreeID"] = tid
    r = s2.SMB2SetInfo()
    r["InfoType"] = s2.SMB2_0_INFO_FILE
    r["FileInfoClass"] = 15
    r["BufferLength"] = len(blob)
    r["FileID"] = fid
    r["Buffer"] = blob
    pkt["Data"] = r
    if not smb.recvSMB(smb.sendSMB(pkt)).isValidAnswer(STATUS_SUCCESS):
        raise RuntimeError("SET_INFO FileFullEaInformation failed")


def main():
    if sys.argv[4] == "pipe":      # perfcheck's private network namespace
        pipe_checks(int(sys.argv[1]), sys.argv[2], sys.argv[3], 6)
        return 0
    port, user, pw, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port,
                         preferredDialect=SMB2_DIALECT_30, timeout=30)
    conn.login(user, pw)
    smb = conn.getSMBServer()
    tid = conn.connectTree("share")
    data = b"\xa5" * 4096

    def create(name, disp=FILE_OVERWRITE_IF, opts=FILE_NON_DIRECTORY_FILE):
        return smb.create(tid, name, GENERIC_RW, SHARE_ALL, opts, disp, 0)

    # ECHO
    for _ in range(8):
        smb.echo()
    window("ECHO", n, lambda i: smb.echo())

    # WRITE: 4 KiB records, sequential, into one open file
    fid = create("perf_rw.dat")
    for i in range(8):
        smb.write(tid, fid, data, i * 4096, 4096)
    window("WRITE", n, lambda i: smb.write(tid, fid, data, (8 + i) * 4096, 4096))

    # READ: 4 KiB records of what was written
    for i in range(8):
        smb.read(tid, fid, i * 4096, 4096)
    window("READ", n, lambda i: smb.read(tid, fid, i * 4096, 4096))

    # QUERY_INFO (FileStandardInformation) on the open file
    for _ in range(8):
        smb.queryInfo(tid, fid)
    window("QUERY_INFO", n, lambda i: smb.queryInfo(tid, fid))

    # LOCK and UNLOCK on this plain open (its LockSequenceArray, if the
    # connection checks one, lives in the worker's memory only), then on
    # a resilient open and on a durable one (batch oplock, DHnQ), whose
    # entries also go into their durable record, inside the lock's own
    # write transaction (worker/smb2_lock.c): no transaction more
    k = min(n, 1000)
    lock_phases(smb, tid, fid, k, "")
    smb.close(tid, fid)
    rfid = create("perf_lock_res.dat")
    smb.ioctl(tid, rfid, FSCTL_LMR_REQUEST_RESILIENCY, flags=1,
              inputBlob=struct.pack("<LL", 60000, 0), maxInputResponse=0,
              maxOutputResponse=0)
    lock_phases(smb, tid, rfid, k, "_RESILIENT")
    smb.close(tid, rfid)
    dhnq = s2.SMB2CreateContext()
    dhnq["Next"] = 0
    dhnq["NameOffset"] = 16
    dhnq["NameLength"] = 4
    dhnq["DataOffset"] = 24
    dhnq["DataLength"] = 16
    dhnq["Buffer"] = b"DHnQ" + b"\0" * 4 + b"\0" * 16
    dfid = smb.create(tid, "perf_lock_dur.dat", GENERIC_RW, SHARE_ALL,
                      FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0,
                      oplockLevel=s2.SMB2_OPLOCK_LEVEL_BATCH,
                      createContexts=[dhnq])
    lock_phases(smb, tid, dfid, k, "_DURABLE")
    smb.close(tid, dfid)

    # QUERY_DIRECTORY: a directory of 16 files, listed again and again
    try:
        conn.createDirectory("share", "perf_dir")
    except Exception:
        pass
    for k in range(16):
        smb.close(tid, create("perf_dir\\f%02d" % k))
    dfid = smb.create(tid, "perf_dir", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE, FILE_OPEN, 0)
    for _ in range(4):
        query_directory_restart(smb, tid, dfid)
    window("QUERY_DIRECTORY", n, lambda i: query_directory_restart(smb, tid, dfid))
    smb.close(tid, dfid)
    # QUERY_DIRECTORY_EA: 16 files with two EAs each (EaSize counted per
    # entry, worker/smb2_dir.c dir_entry_xattrs), the same level
    try:
        conn.createDirectory("share", "perf_ea")
    except Exception:
        pass
    for k in range(16):
        efid = create("perf_ea\\f%02d" % k)
        set_eas(smb, tid, efid, [(b"EAONE", b"VALUE1"),
                                 (b"SecondEA", b"a longer value 2")])
        smb.close(tid, efid)
    efid = smb.create(tid, "perf_ea", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE, FILE_OPEN, 0)
    for _ in range(4):
        query_directory_restart(smb, tid, efid)
    window("QUERY_DIRECTORY_EA", n, lambda i: query_directory_restart(smb, tid, efid))
    smb.close(tid, efid)
    if os.environ.get("PERFOPS_MARKED") == "1":
        # usmbd only: the same directory through [hide] (`hide unreadable`;
        # the user's own files, judged from the mode already read)
        htid = conn.connectTree("hide")
        hfid = smb.create(htid, "perf_dir", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE,
                          FILE_OPEN, 0)
        for _ in range(4):
            query_directory_restart(smb, htid, hfid)
        window("QUERY_DIRECTORY_HIDE", n,
               lambda i: query_directory_restart(smb, htid, hfid))
        smb.close(htid, hfid)
        conn.disconnectTree(htid)
        # 8.3 short names: 16 long names listed with FileIdBothDirectory
        # Information through [share] (`mangled names` illegal, the
        # default: no ShortName) and [short] (yes: 16 made per listing)
        try:
            conn.createDirectory("share", "perf_long")
        except Exception:
            pass
        for k in range(16):
            smb.close(tid, create("perf_long\\a long file name %02d.txt" % k))
        for phase, share in (("QUERY_DIRECTORY_LONG", "share"),
                             ("QUERY_DIRECTORY_SHORT", "short")):
            stid = conn.connectTree(share)
            sfid = smb.create(stid, "perf_long", 0x00120089, SHARE_ALL,
                              FILE_DIRECTORY_FILE, FILE_OPEN, 0)
            for _ in range(4):
                query_directory_restart(smb, stid, sfid,
                                        s2.FILEID_BOTH_DIRECTORY_INFORMATION)
            window(phase, n, lambda i: query_directory_restart(
                smb, stid, sfid, s2.FILEID_BOTH_DIRECTORY_INFORMATION))
            smb.close(stid, sfid)
            if share != "share":
                conn.disconnectTree(stid)
        # usmbd only: TREE_CONNECT + TREE_DISCONNECT of a share without
        # and with `max connections` (a slot claimed and given back); not
        # [share]: impacket answers a tree connect to a share it holds
        # from its own table
        for share in ("nomax", "maxconn"):
            for _ in range(4):
                conn.disconnectTree(conn.connectTree(share))
        window("TREE_CONNECT", n,
               lambda i: conn.disconnectTree(conn.connectTree("nomax")))
        window("TREE_CONNECT_MAXCONN", n,
               lambda i: conn.disconnectTree(conn.connectTree("maxconn")))
        # the user's home share from [homes] (path .../%S): resolved and
        # substituted in the worker, no lookup, no allocation
        for _ in range(4):
            conn.disconnectTree(conn.connectTree(user))
        window("TREE_CONNECT_HOMES", n,
               lambda i: conn.disconnectTree(conn.connectTree(user)))
        # usmbd only: the same directory through [fruit] once AAPL is
        # negotiated (READ_DIR_ATTR: Finder info, resource fork size and
        # maximal access in each FileIdBothDirectoryInformation entry)
        ftid = conn.connectTree("fruit")
        smb.close(ftid, smb.create(ftid, "", 0x00120089, SHARE_ALL, 0, FILE_OPEN, 0,
                                   createContexts=[aapl_context()]))
        ffid = smb.create(ftid, "perf_dir", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE,
                          FILE_OPEN, 0)
        both = s2.FILEID_BOTH_DIRECTORY_INFORMATION
        for _ in range(4):
            query_directory_restart(smb, ftid, ffid, both)
        window("QUERY_DIRECTORY_FRUIT", n,
               lambda i: query_directory_restart(smb, ftid, ffid, both))
        smb.close(ftid, ffid)
        # AFP_AfpInfo read on [fruit] (fruit:metadata = netatalk, the
        # default): the record made of netatalk's blob, one fgetxattr
        afp = b"AFP\0\0\0\1\0" + b"\0" * 8 + b"TEXTttxt" + b"\0" * 36
        smb.close(ftid, smb.create(ftid, "perf_afp", 0x0012019f,
                                   SHARE_ALL, 0, 5, 0))
        afid = smb.create(ftid, "perf_afp:AFP_AfpInfo",
                          0x0012019f, SHARE_ALL, 0, 5, 0)   # FILE_OVERWRITE_IF
        smb.write(ftid, afid, afp, 0, len(afp))
        for _ in range(4):
            smb.read(ftid, afid, 0, 60)
        window("READ_AFPINFO", n, lambda i: smb.read(ftid, afid, 0, 60))
        smb.close(ftid, afid)
        conn.deleteFile("fruit", "perf_afp")
        # AFP_Resource read on [fruit] (fruit:resource = file, the
        # default): 4 KiB of the fork entry of ._perf_rsrc, which each
        # READ opens beneath the root, checks and closes
        smb.close(ftid, smb.create(ftid, "perf_rsrc", 0x0012019f,
                                   SHARE_ALL, 0, 5, 0))
        rfid = smb.create(ftid, "perf_rsrc:AFP_Resource",
                          0x0012019f, SHARE_ALL, 0, 5, 0)   # FILE_OVERWRITE_IF
        smb.write(ftid, rfid, b"r" * 4096, 0, 4096)
        for _ in range(4):
            smb.read(ftid, rfid, 0, 4096)
        window("READ_RSRC", n, lambda i: smb.read(ftid, rfid, 0, 4096))
        smb.close(ftid, rfid)
        conn.deleteFile("fruit", "perf_rsrc")
        conn.disconnectTree(ftid)

    # CREATE then CLOSE: m new files opened and held, then all closed.
    # Warm-up: as many opens held and closed first, so the worker's pools
    # of open records have grown to m (steady state), and both windows
    # see only the work of a CREATE and a CLOSE.
    m = min(n, 200)
    warm = [create("perf_w%04d.dat" % i) for i in range(m)]
    for f in warm:
        smb.close(tid, f)
    fids = []
    window("CREATE", m, lambda i: fids.append(create("perf_c%04d.dat" % i)))
    window("CLOSE", m, lambda i: smb.close(tid, fids[i]))

    # The same with FILE_DELETE_ON_CLOSE: each CLOSE removes its file (the
    # delete token, the unlink, the shared state's delete-pending record).
    def create_doc(name):
        return smb.create(tid, name, GENERIC_RW | DELETE, SHARE_ALL,
                          FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE, FILE_OVERWRITE_IF, 0)
    for i in range(8):
        smb.close(tid, create_doc("perf_dw%04d.dat" % i))
    dfids = []
    window("CREATE_DOC", m, lambda i: dfids.append(create_doc("perf_d%04d.dat" % i)))
    window("CLOSE_DOC", m, lambda i: smb.close(tid, dfids[i]))

    posix_phases(port, user, pw, m)
    if os.environ.get("PERFOPS_MARKED") == "1":
        marked_phases(conn, smb, tid, m)
    conn.disconnectTree(tid)
    conn.logoff()
    # Closed here, not whenever the collector frees them: a connection's
    # end arms the worker's 1 s tick (worker/loop.c), whose expiry and
    # disarming (read, timerfd_settime) a later window would count; let
    # it pass before the next windows.
    conn.close()
    time.sleep(2.2)
    splice_checks(port, user, pw, max(8, n // 10))
    signed_windows(port, user, pw, n)
    pipe_checks(port, user, pw, 6)
    # Last: its session leaves the worker's 1 s tick armed for a while
    # (READ_PLAIN, held to 3 syscalls, counted it when this came before)
    if os.environ.get("PERFOPS_MARKED") == "1":
        marked_posix_phases(port, user, pw, m)
    return 0


def signed_windows(port, user, pw, n):
    """WRITE_HMAC, READ_HMAC (SMB 2.1, HMAC-SHA256), WRITE_CMAC, READ_CMAC
    (SMB 3.0, AES-CMAC): 4 KiB WRITEs and READs on a session that signs
    every message and encrypts none (issue 17).  impacket signs when the
    server requires it; here the client asks for it after the negotiate
    (RequireSigning), and leaves encryption off on 3.0."""
    from impacket.smb3structs import SMB2_DIALECT_21

    data = b"\x5a" * 4096
    for dialect, tag in ((SMB2_DIALECT_21, "HMAC"), (SMB2_DIALECT_30, "CMAC")):
        conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port,
                             preferredDialect=dialect, timeout=30)
        smb = conn.getSMBServer()
        smb._Connection["RequireSigning"] = True
        smb._Connection["SupportsEncryption"] = False
        conn.login(user, pw)
        if not smb._Session.get("SigningActivated") or \
                smb._Session["SessionFlags"] & s2.SMB2_SESSION_FLAG_ENCRYPT_DATA:
            raise RuntimeError("the %s session does not sign, or encrypts" % tag)
        tid = conn.connectTree("share")
        fid = smb.create(tid, "perf_sig_%s.dat" % tag, GENERIC_RW, SHARE_ALL,
                         FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
        for i in range(8):
            smb.write(tid, fid, data, i * 4096, 4096)
        window("WRITE_" + tag, n, lambda i: smb.write(tid, fid, data, (8 + i) * 4096, 4096))
        for i in range(8):
            smb.read(tid, fid, i * 4096, 4096)
        window("READ_" + tag, n, lambda i: smb.read(tid, fid, i * 4096, 4096))
        if smb.read(tid, fid, 4096, 4096) != data:
            raise RuntimeError("a signed READ returned other data")
        smb.close(tid, fid)
        conn.disconnectTree(tid)
        conn.logoff()


def posix_phases(port, user, pw, m):
    """Seed 004's requests (issue 16) on a 3.1.1 connection with the SMB3
    POSIX extensions: CREATE with the POSIX create context (delete on
    close), QUERY_INFO of the POSIX level on each handle, CLOSE."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "integ"))
    from posix_lib import POSIX_LEVEL, connect, posix_ctx
    pc = connect(port, user, pw)
    smb = pc.getSMBServer()
    tid = pc.connectTree("share")
    ctx = [posix_ctx(0o644)]

    def create(name):
        return smb.create(tid, name, GENERIC_RW | DELETE, SHARE_ALL,
                          FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE,
                          FILE_OVERWRITE_IF, 0, createContexts=ctx)
    warm = [create("perf_pw%04d" % i) for i in range(m)]
    for f in warm:
        smb.queryInfo(tid, f, fileInfoClass=POSIX_LEVEL)
        smb.close(tid, f)
    fids = []
    window("CREATE_POSIX_DOC", m, lambda i: fids.append(create("perf_p%04d" % i)))
    window("QUERY_INFO_POSIX", m,
           lambda i: smb.queryInfo(tid, fids[i], fileInfoClass=POSIX_LEVEL))
    window("CLOSE_POSIX_DOC", m, lambda i: smb.close(tid, fids[i]))
    pc.logoff()
    pc.close()


def marked_phases(conn, smb, tid, m):
    """Issue 14: a CREATE (delete on close) of a new name in a directory
    without a stored descriptor, on [share] (nothing ever stored) and on
    [marked] (a DACL stored on one file marks the share): the same count.
    The parent is read once, before the window (the warm-up), and noted."""
    mtid = conn.connectTree("marked")
    # Files without a descriptor, older than the worker's settle time
    # (worker/smb2_secdesc.c, SD_NONE_SETTLE_S) by the OPEN windows.
    t0 = time.monotonic()
    for t in (tid, mtid):
        smb.close(t, smb.create(t, "perf_open.txt", GENERIC_RW, SHARE_ALL,
                                FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0))
    fid = smb.create(mtid, "stored.txt", GENERIC_RW | 0x00040000, SHARE_ALL,
                     FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    w = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
    ace = struct.pack('<BBHI', 0, 0, 8 + len(w), 0x1F01FF) + w
    acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
    smb.setInfo(mtid, fid, struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0, 20) + acl,
                infoType=s2.SMB2_0_INFO_SECURITY, fileInfoClass=0, additionalInformation=4)
    smb.close(mtid, fid)
    cstid, mcstid = conn.connectTree("cs"), conn.connectTree("marked_cs")
    for name, t in (("CREATE_DOC_SUB", tid), ("CREATE_DOC_MARKED", mtid),
                    ("CREATE_DOC_CS", cstid), ("CREATE_DOC_CS_MARKED", mcstid)):
        smb.close(t, smb.create(t, "sub", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE,
                                FILE_OPEN_IF, 0))

        def doc(i, t=t, tag=name[len("CREATE_DOC_"):].lower()):
            return smb.create(t, "sub\\perf_%s%04d" % (tag, i), GENERIC_RW | DELETE,
                              SHARE_ALL, FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE,
                              FILE_OVERWRITE_IF, 0)
        for i in range(8):
            smb.close(t, doc(9000 + i))
        fids = []
        window(name, m, lambda i: fids.append(doc(i)))
        for f in fids:
            smb.close(t, f)
    # An open (and close) of an existing file: without a descriptor, the
    # same count on both shares; with one, one fgetxattr more (issue 14,
    # item 6).
    time.sleep(max(0.0, 3.0 - (time.monotonic() - t0)))
    # [dfsroot]: the same directory as an msdfs root; impacket would send
    # DFS_OPERATIONS with names lacking the \\server\\share prefix
    dtid = conn.connectTree("dfsroot")
    smb._Session["TreeConnectTable"][dtid]["IsDfsShare"] = False
    for name, t, path in (("CREATE_OPEN", tid, "perf_open.txt"),
                          ("CREATE_OPEN_DFS", dtid, "perf_open.txt"),
                          ("CREATE_OPEN_MARKED", mtid, "perf_open.txt"),
                          ("CREATE_OPEN_STORED", mtid, "stored.txt")):
        def opn(i, t=t, path=path):
            return smb.create(t, path, 0x00120089, SHARE_ALL, FILE_NON_DIRECTORY_FILE,
                              FILE_OPEN, 0)
        for i in range(8):
            smb.close(t, opn(i))
        # each closed at once: impacket keeps one handle per name
        window(name, m, lambda i: smb.close(t, opn(i)))
    for t in (mtid, cstid, mcstid, dtid):
        conn.disconnectTree(t)


def marked_posix_phases(port, user, pw, m):
    """Issue 14: the same CREATE with the POSIX create context, which looks
    no name up (vfs/dirnote.c notes the parent), on [share] and [marked]."""
    from posix_lib import connect, posix_ctx
    pc = connect(port, user, pw)
    smb = pc.getSMBServer()
    ctx = [posix_ctx(0o644)]
    # what the windows before left to the worker's 1 s tick (connections
    # ended, delete-on-close vouches) has passed by then
    time.sleep(5)
    for name, share in (("CREATE_POSIX_SUB", "share"), ("CREATE_POSIX_MARKED", "marked")):
        t = pc.connectTree(share)
        smb.close(t, smb.create(t, "psub", 0x00120089, SHARE_ALL, FILE_DIRECTORY_FILE,
                                FILE_OPEN_IF, 0))

        def doc(i, t=t, tag=name[len("CREATE_POSIX_"):].lower()):
            return smb.create(t, "psub\\perf_%s%04d" % (tag, i), GENERIC_RW | DELETE,
                              SHARE_ALL, FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE,
                              FILE_OVERWRITE_IF, 0, createContexts=ctx)
        for i in range(8):
            smb.close(t, doc(9000 + i))
        fids = []
        window(name, m, lambda i: fids.append(doc(i)))
        for f in fids:
            smb.close(t, f)
        pc.disconnectTree(t)
    pc.logoff()
    pc.close()


def status_of(fn):
    """The NTSTATUS a request raised, 0 when it succeeded."""
    try:
        fn()
    except SessionError as e:
        return e.get_error_code()
    return 0


def read_all(smb, tid, fid, size):
    """size bytes of fid from offset 0, in 64 KiB READs (less at EOF)."""
    out, off = b"", 0
    while off < size:
        chunk = smb.read(tid, fid, off, min(65536, size - off))
        if not chunk:
            break
        out += chunk
        off += len(chunk)
    return out


def session21(port, user, pw):
    """A fresh unsigned SMB 2.1 connection: (conn, smb, tid)."""
    from impacket.smb3structs import SMB2_DIALECT_21

    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port,
                         preferredDialect=SMB2_DIALECT_21, timeout=30)
    conn.login(user, pw)
    smb = conn.getSMBServer()
    if smb._Session.get("SigningActivated"):
        raise RuntimeError("the SMB 2.1 session signs: the splice path is not exercised")
    return conn, smb, conn.connectTree("share")


def split_write(smb, tid, fid, data, off, cut=48 * 1024, pause=0.2):
    """One WRITE whose frame goes out in two pieces: the header and the
    first bytes of the payload, a pause, then the rest (a client whose
    payload is larger than the server's receive window looks the same)."""
    nb = smb._NetBIOSSession
    orig = nb.send_packet

    def send(pkt):
        raw = struct.pack(">I", len(pkt)) + pkt   # direct TCP: 0 + 24-bit length
        sock = nb.get_socket()
        sock.sendall(raw[:cut])
        time.sleep(pause)
        sock.sendall(raw[cut:])

    nb.send_packet = send
    try:
        return smb.write(tid, fid, data, off, len(data))
    finally:
        nb.send_packet = orig


def pipe_checks(port, user, pw, m):
    """WRITEs larger than the receive window (worker/conn_rx.c,
    RX_WAIT_PIPE): the first 4 MiB WRITE of each of m fresh connections
    (whose receive window is still small; smbclient's uploads of files
    of 4 MiB and more) arrives in two pieces, the rest 10 ms or 200 ms
    after the head.  Woken before the payload is all queued (the window
    closes first), the server buffers it in the connection's pipe as it
    comes, then splices it into the file; queued whole in time, it takes
    the direct splice path: the kernel's timing decides, and either way
    the payload is not copied (perfcheck: splice calls per WRITE).
    (impacket caps its WRITEs at 1 MiB; the cap is raised to 4 MiB, the
    server allows 8.  A 1 MiB payload on loopback is mostly queued whole
    in time.)  The window WRITE_4M_SPLIT holds only those WRITEs (the
    connections and files are set up before it).  Checks that
    fail the run: each reads back intact; a refused one (read-only handle)
    gets the status a 4 KiB WRITE gets and leaves the stream framed; a
    client that disconnects mid-payload leaves the server serving."""

    size = 4 << 20
    pattern = bytes(range(251)) * (size // 251 + 2)     # 251: not page-periodic
    blobs = [pattern[k:k + size] for k in (0, 7)]
    sess = []
    for k in range(m):
        conn, smb, tid = session21(port, user, pw)
        smb._Connection['MaxWriteSize'] = size
        fid = smb.create(tid, "perf_pipe%d.dat" % k, GENERIC_RW, SHARE_ALL,
                         FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
        sess.append((conn, smb, tid, fid))
    window("WRITE_4M_SPLIT", m, lambda i: split_write(
        sess[i][1], sess[i][2], sess[i][3], blobs[i % 2], 0,
        pause=(0.01, 0.2)[i % 2]))
    for k, (conn, smb, tid, fid) in enumerate(sess):
        if read_all(smb, tid, fid, size) != blobs[k % 2]:
            raise RuntimeError("a 4 MiB WRITE sent in pieces did not read back intact")
        smb.close(tid, fid)
        conn.logoff()

    # Refused after buffering: the answer of a 4 KiB WRITE, then framed.
    conn, smb, tid = session21(port, user, pw)
    smb._Connection['MaxWriteSize'] = size
    smb.close(tid, smb.create(tid, "perf_pipe_ro.dat", GENERIC_RW, SHARE_ALL,
                              FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0))
    ro = smb.create(tid, "perf_pipe_ro.dat", 0x00120089, SHARE_ALL,
                    FILE_NON_DIRECTORY_FILE, FILE_OPEN, 0)

    got = status_of(lambda: split_write(smb, tid, ro, blobs[0], 0))
    want = status_of(lambda: smb.write(tid, ro, blobs[0][:4096], 0, 4096))
    if want == 0 or got != want:
        raise RuntimeError("a refused 4 MiB WRITE sent in pieces: status 0x%08x, a 4 KiB "
                           "WRITE gets 0x%08x" % (got, want))
    smb.echo()
    smb.close(tid, ro)
    conn.logoff()

    # Gone mid-payload: the server frees the pipe and serves the others.
    conn, smb, tid = session21(port, user, pw)
    fid = smb.create(tid, "perf_pipe_cut.dat", GENERIC_RW, SHARE_ALL,
                     FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    nb = smb._NetBIOSSession

    def cut_send(pkt):
        raw = struct.pack(">I", len(pkt)) + pkt
        nb.get_socket().sendall(raw[:len(raw) // 2])
        time.sleep(0.2)
        raise ConnectionAbortedError("client gave up mid-payload")

    nb.send_packet = cut_send
    try:
        smb.write(tid, fid, blobs[1], 0, size)
    except ConnectionAbortedError:
        pass
    nb.get_socket().close()
    conn, smb, tid = session21(port, user, pw)
    smb.echo()
    conn.logoff()
    print("PIPECHECK ok: %d WRITEs of 4 MiB sent in pieces intact; a refused one kept "
          "the stream framed; a cut one left the server serving" % m, flush=True)


def splice_checks(port, user, pw, n):
    """The large-WRITE receive path (worker/conn_rx.c): an unsigned,
    unencrypted SMB 2.1 session, so its WRITEs of 64 KiB and more have
    their payload spliced from the socket into the file.  A window of
    WRITE_96K (96 KiB fits the receive window of a fresh connection, so
    each payload is queued whole and takes the splice path), then checks
    that fail the run: the data reads back intact; refused large WRITEs
    (read-only handle, closed handle, offset past the limit) leave the
    stream framed (the next request on the connection is answered); a
    large WRITE to a named stream (an xattr) lands intact.  Then a window
    of READ_PLAIN (4 KiB unsigned READs) and checks of short and
    end-of-file READs."""
    from impacket.smb3structs import SMB2_DIALECT_21

    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port,
                         preferredDialect=SMB2_DIALECT_21, timeout=30)
    conn.login(user, pw)
    smb = conn.getSMBServer()
    if smb._Session.get("SigningActivated"):
        raise RuntimeError("the SMB 2.1 session signs: the splice path is not exercised")
    tid = conn.connectTree("share")
    rec = 96 * 1024
    blob = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(rec * 4))

    def create(name, access=GENERIC_RW, disp=FILE_OVERWRITE_IF):
        return smb.create(tid, name, access, SHARE_ALL, FILE_NON_DIRECTORY_FILE, disp, 0)

    def piece(i):
        k = i % 4
        return blob[k * rec:(k + 1) * rec]

    fid = create("perf_splice.dat")
    for i in range(4):
        smb.write(tid, fid, piece(i), i * rec, rec)
    window("WRITE_96K", n, lambda i: smb.write(tid, fid, piece(i), (4 + i) * rec, rec))
    want = b"".join(piece(i) for i in range(4)) + b"".join(piece(i) for i in range(n))
    if read_all(smb, tid, fid, len(want)) != want:
        raise RuntimeError("spliced WRITEs did not read back intact")

    # READ_PLAIN: 4 KiB unsigned READs (the syscall floor without
    # signing or encryption: t/bench/README.md, "READ: 3 syscalls (io_uring receive)")
    nr = max(8, n * 10)
    # WRITE_96K armed the worker's 1 s housekeeping tick (the stall rule
    # of a spliced payload, worker/conn_rx.c); its last expiry and
    # disarming (read, timerfd_settime) belong to no READ, and on a busy
    # machine they fell into this window: let them pass first.
    time.sleep(2.2)
    for i in range(8):
        smb.read(tid, fid, i * 4096, 4096)
    window("READ_PLAIN", nr, lambda i: smb.read(tid, fid, (i % 64) * 4096, 4096))
    # short READs and END_OF_FILE
    size = len(want)
    for off, ln in ((size - 100, 4096), (size - 1, 1), (5, 4000)):
        if smb.read(tid, fid, off, ln) != want[off:off + ln]:
            raise RuntimeError("a READ at %d of %d bytes is wrong" % (off, ln))
    try:
        smb.read(tid, fid, size, 4096)
        raise RuntimeError("a READ at the end of file did not get END_OF_FILE")
    except SessionError as e:
        if e.get_error_code() != 0xC0000011:
            raise RuntimeError("a READ at the end of file got 0x%08x" % e.get_error_code())

    def refused(what, h, off):
        # The answer of the copy path (a 4 KiB WRITE) is the reference.
        want = status_of(lambda: smb.write(tid, h, piece(0)[:4096], off, 4096))
        got = status_of(lambda: smb.write(tid, h, piece(1), off, rec))
        if want == 0 or got != want:
            raise RuntimeError("%s: status 0x%08x, a 4 KiB WRITE gets 0x%08x" % (what, got, want))
        smb.echo()  # answered: the payload was drained, the stream is framed

    # (another name: impacket's handle table is keyed by file name)
    smb.close(tid, create("perf_splice_ro.dat"))
    ro = create("perf_splice_ro.dat", access=0x00120089, disp=FILE_OPEN)
    refused("large WRITE on a read-only handle", ro, 0)
    smb.close(tid, ro)
    refused("large WRITE on a closed handle", ro, 0)
    refused("large WRITE past the largest file size", fid, 0xFFFFFFF0000)
    if read_all(smb, tid, fid, len(want)) != want:
        raise RuntimeError("a refused WRITE changed the file")
    smb.close(tid, fid)

    sfid = create("perf_splice.dat:big")
    sdata = blob[:65536]
    smb.write(tid, sfid, sdata, 0, len(sdata))
    if read_all(smb, tid, sfid, len(sdata)) != sdata:
        raise RuntimeError("a large WRITE to a stream did not read back intact")
    smb.close(tid, sfid)
    conn.disconnectTree(tid)
    conn.logoff()
    print("SPLICECHECK ok: %d WRITEs of %d bytes intact; refused ones kept the "
          "stream framed; a stream WRITE of 64 KiB intact; short and EOF READs "
          "right" % (n + 4, rec), flush=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:      # the driver reports it as the reason
        print("ERROR %s: %s" % (type(e).__name__, str(e).replace("\n", " ")[:300]), flush=True)
        sys.exit(1)
