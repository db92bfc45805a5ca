# Client of t/integ/posix.sh: POSIX delete semantics and POSIX byte-range
# locks on POSIX handles (opened with the POSIX create context), next to
# Windows handles of the same share, and `smb3 unix extensions` per share.
# argv: PORT SHARE_DIR CASE.  Prints "ok DESC" or "FAIL DESC: why" per
# check; the share's directory on disk (argv[2]) is looked at directly.
import os
import struct
import sys
import time

from impacket import smb3, nt_errors
from impacket import smb3structs as s3
from impacket.smbconnection import SessionError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posix_lib import POSIX_TAG, Blob, connect, posix_ctx, \
    resp_contexts  # noqa: E402

PORT = int(sys.argv[1])
SHARE = sys.argv[2]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
DOC = s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA | s3.FILE_READ_ATTRIBUTES
DISPOSITION, DISPOSITION_EX, RENAME = 13, 64, 10
SHARED, EXCL, UNLOCK, NOWAIT = 1, 2, 4, 0x10


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def name_of(e):
    code = e.get_error_code() if hasattr(e, "get_error_code") else e.error
    return nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


def status(fn):
    try:
        fn()
        return "OK"
    except (SessionError, smb3.SessionError) as e:
        return name_of(e)


def login(user="alice", pw="alicepw1", share="share"):
    c = connect(PORT, user, pw)
    return c.getSMBServer(), c.connectTree(share)


def popen(srv, t, name, access=RW | s3.DELETE, disp=s3.FILE_OPEN_IF,
          opts=s3.FILE_NON_DIRECTORY_FILE, share=ALL, posix=True):
    """A POSIX handle (posix=True) or a Windows one."""
    return srv.create(t, name, access, share, opts, disp, 0,
                      createContexts=[posix_ctx(0o666)] if posix else None)


def close(srv, t, fid):
    try:
        srv.close(t, fid)
    except KeyError:
        pass    # impacket keys its file table by name: a second open of it


def wfile(srv, t, fid, data, off=0):
    return srv.write(t, fid, data, off, len(data))


def rename_info(name):
    """FileRenameInformation (MS-FSCC 2.4.37.2), no replace."""
    n = name.encode('utf-16le')
    return struct.pack('<B7xQL', 0, 0, len(n)) + n


def on_disk(name):
    return os.path.exists(os.path.join(SHARE, name))


def listed(srv, t, name):
    """Is name in an SMB listing of the root (a fresh Windows handle)?"""
    try:
        return any(f.get_longname() == name
                   for f in srv.listPath("share", name))
    except (SessionError, smb3.SessionError):
        return False


def rm(srv, t, name, posix=True):
    """The Linux client's unlink: CREATE(DELETE_ON_CLOSE) + CLOSE."""
    close(srv, t, popen(srv, t, name, access=s3.DELETE |
                       s3.FILE_READ_ATTRIBUTES, disp=s3.FILE_OPEN,
                       opts=DOC, posix=posix))


def case_delete():
    srv, t = login()
    # unlink while open: the other POSIX handle goes on with the file
    a = popen(srv, t, "ul", disp=s3.FILE_CREATE)
    wfile(srv, t, a, b"before")
    rm(srv, t, "ul")
    check("POSIX rm of an open file: the name is gone on disk at once",
          not on_disk("ul"), repr(os.listdir(SHARE)))
    check("... and from a listing at once", not listed(srv, t, "ul"))
    check("... the open POSIX handle still reads the file",
          srv.read(t, a, 0, 6) == b"before")
    wfile(srv, t, a, b"after", 6)
    check("... and writes it", srv.read(t, a, 0, 11) == b"beforeafter")
    s = status(lambda: close(srv, t, popen(srv, t, "ul", disp=s3.FILE_CREATE)))
    check("... a new file may take the name at once", s == "OK", s)
    s = status(lambda: srv.setInfo(t, a, rename_info("ul_moved"),
                                   infoType=1, fileInfoClass=RENAME))
    check("... a rename through the old handle does not move the new file",
          s == "STATUS_OBJECT_NAME_NOT_FOUND" and on_disk("ul") and
          not on_disk("ul_moved"), s)
    close(srv, t, a)
    check("... the old handle's close leaves the new file alone",
          on_disk("ul") and os.path.getsize(os.path.join(SHARE, "ul")) == 0,
          repr(os.listdir(SHARE)))

    # SET_INFO disposition on a POSIX handle, another POSIX handle open
    a = popen(srv, t, "ud", disp=s3.FILE_CREATE)
    wfile(srv, t, a, b"data")
    b = popen(srv, t, "ud")
    srv.setInfo(t, b, b"\x01", infoType=1, fileInfoClass=DISPOSITION)
    check("disposition on a POSIX handle: delete pending until its close",
          on_disk("ud"))
    close(srv, t, b)
    check("... the name goes at its close, another POSIX handle open",
          not on_disk("ud"), repr(os.listdir(SHARE)))
    check("... which still reads", srv.read(t, a, 0, 4) == b"data")
    close(srv, t, a)
    # FileDispositionInformationEx with FILE_DISPOSITION_POSIX_SEMANTICS
    a = popen(srv, t, "ux", disp=s3.FILE_CREATE)
    b = popen(srv, t, "ux")
    srv.setInfo(t, b, struct.pack('<L', 3), infoType=1,
                fileInfoClass=DISPOSITION_EX)
    close(srv, t, b)
    check("DispositionInformationEx DELETE|POSIX_SEMANTICS: gone at close",
          not on_disk("ux"), repr(os.listdir(SHARE)))
    close(srv, t, a)

    # Windows handles keep Windows semantics
    w = popen(srv, t, "wd", disp=s3.FILE_CREATE, posix=False)
    rm(srv, t, "wd", posix=False)
    check("Windows rm of a file open by a Windows handle: still there",
          on_disk("wd"))
    s = status(lambda: popen(srv, t, "wd", posix=False))
    check("... a new open gets DELETE_PENDING", s == "STATUS_DELETE_PENDING",
          s)
    s = status(lambda: popen(srv, t, "wd"))
    check("... a POSIX open too", s == "STATUS_DELETE_PENDING", s)
    close(srv, t, w)
    check("... gone at the last close", not on_disk("wd"))
    # a POSIX rm next to a Windows handle: Windows semantics for it
    w = popen(srv, t, "mx", disp=s3.FILE_CREATE, posix=False)
    rm(srv, t, "mx")
    check("POSIX rm of a file a Windows handle holds: delete pending",
          on_disk("mx"))
    s = status(lambda: popen(srv, t, "mx", posix=False))
    check("... DELETE_PENDING for a new open", s == "STATUS_DELETE_PENDING",
          s)
    close(srv, t, w)
    check("... gone at the Windows handle's close", not on_disk("mx"))
    # a Windows rm with only POSIX handles left: gone at once (Samba)
    a = popen(srv, t, "wp", disp=s3.FILE_CREATE)
    rm(srv, t, "wp", posix=False)
    check("Windows rm with only a POSIX handle left: gone at once",
          not on_disk("wp"))
    close(srv, t, a)

    # share modes still apply: a handle without FILE_SHARE_DELETE
    w = popen(srv, t, "sm", disp=s3.FILE_CREATE, posix=False,
              share=s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE)
    s = status(lambda: rm(srv, t, "sm"))
    check("POSIX rm of a file open without FILE_SHARE_DELETE: "
          "SHARING_VIOLATION", s == "STATUS_SHARING_VIOLATION", s)
    close(srv, t, w)
    check("... and the file stays", on_disk("sm"))

    # across workers: bob holds a POSIX handle, alice removes the name
    with open(os.path.join(SHARE, "xw"), "w") as f:
        f.write("shared")
    os.chmod(os.path.join(SHARE, "xw"), 0o666)
    bsrv, bt = login("bob", "bobpw1")
    b = popen(bsrv, bt, "xw", access=RW)
    rm(srv, t, "xw")
    check("alice's POSIX rm while bob's worker holds a POSIX handle: gone",
          not on_disk("xw"))
    check("... bob still reads it", bsrv.read(bt, b, 0, 6) == b"shared")
    close(bsrv, bt, b)


def lock_raw(srv, t, fid, off, ln, flags):
    """One LOCK element, flags as given (impacket's lock() builds them)."""
    req = s3.SMB2Lock()
    req['LockCount'] = 1
    req['FileID'] = fid
    req['Locks'] = struct.pack('<QQLL', off, ln, flags, 0)
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_LOCK
    pkt['TreeID'] = t
    pkt['Data'] = req

    def go():
        ans = srv.recvSMB(srv.sendSMB(pkt))
        if ans['Status'] != 0:
            raise smb3.SessionError(ans['Status'], ans)
    return status(go)


def rd(srv, t, fid, off, ln):
    return status(lambda: srv.read(t, fid, off, ln))


def wr(srv, t, fid, off, data=b"z"):
    return status(lambda: wfile(srv, t, fid, data, off))


def case_locks():
    srv, t = login()
    a = popen(srv, t, "lk", disp=s3.FILE_CREATE)
    wfile(srv, t, a, b"0123456789" * 10)
    b = popen(srv, t, "lk")
    w1 = popen(srv, t, "lk", posix=False)
    w2 = popen(srv, t, "lk", posix=False)

    s = lock_raw(srv, t, a, 0, 10, EXCL | NOWAIT)
    check("a POSIX handle takes an exclusive lock", s == "OK", s)
    s = rd(srv, t, b, 0, 10) + " " + wr(srv, t, b, 5)
    check("another POSIX handle reads and writes under it (advisory)",
          s == "OK OK", s)
    s = rd(srv, t, w1, 0, 10)
    check("a Windows handle's READ is refused by it",
          s == "STATUS_FILE_LOCK_CONFLICT", s)
    s = lock_raw(srv, t, b, 5, 10, SHARED | NOWAIT)
    check("another POSIX handle's overlapping lock conflicts",
          s == "STATUS_LOCK_NOT_GRANTED", s)
    # fcntl semantics on the owner's own locks
    s = lock_raw(srv, t, a, 5, 10, EXCL | NOWAIT)
    check("the same POSIX handle locks over its own lock (merged)",
          s == "OK", s)
    s = lock_raw(srv, t, a, 0, 15, UNLOCK)
    check("... one unlock of the merged range 0-15 frees it", s == "OK", s)
    s = rd(srv, t, w1, 0, 15)
    check("... a Windows READ of 0-15 passes then", s == "OK", s)
    lock_raw(srv, t, a, 0, 100, EXCL | NOWAIT)
    s = lock_raw(srv, t, a, 40, 20, UNLOCK)
    check("unlock of a sub-range 40-59 of a POSIX lock", s == "OK", s)
    s = rd(srv, t, w1, 40, 20) + " " + rd(srv, t, w1, 30, 5) + " " + \
        rd(srv, t, w1, 70, 5)
    check("... frees it and keeps 0-39 and 60-99",
          s == "OK STATUS_FILE_LOCK_CONFLICT STATUS_FILE_LOCK_CONFLICT", s)
    s = lock_raw(srv, t, a, 10, 10, SHARED | NOWAIT)
    s2 = rd(srv, t, w1, 10, 10) + " " + wr(srv, t, w1, 12)
    check("a shared lock over its own exclusive one converts the range",
          s == "OK" and s2 == "OK STATUS_FILE_LOCK_CONFLICT", s + " " + s2)
    s = lock_raw(srv, t, a, 200, 10, UNLOCK)
    check("a POSIX unlock of an unlocked range succeeds (as fcntl)",
          s == "OK", s)
    lock_raw(srv, t, a, 0, 200, UNLOCK)
    s = rd(srv, t, w1, 0, 100) + " " + wr(srv, t, w1, 50)
    check("... and all is free after unlocking 0-199", s == "OK OK", s)

    # a Windows handle's lock: mandatory for Windows and POSIX handles
    s = lock_raw(srv, t, w1, 0, 10, EXCL | NOWAIT)
    s2 = rd(srv, t, w2, 0, 10)
    check("a Windows handle's lock still refuses another Windows READ",
          s == "OK" and s2 == "STATUS_FILE_LOCK_CONFLICT", s + " " + s2)
    s = rd(srv, t, a, 0, 10)
    check("... and a POSIX handle's READ (Samba 4.23's rules)",
          s == "STATUS_FILE_LOCK_CONFLICT", s)
    s = lock_raw(srv, t, a, 0, 10, SHARED | NOWAIT)
    check("... and a POSIX lock over it", s == "STATUS_LOCK_NOT_GRANTED", s)
    s = lock_raw(srv, t, w1, 0, 5, UNLOCK)
    check("a Windows unlock of a sub-range is still RANGE_NOT_LOCKED",
          s == "STATUS_RANGE_NOT_LOCKED", s)
    lock_raw(srv, t, w1, 0, 10, UNLOCK)

    # a POSIX write lock needs a handle open for writing
    r = popen(srv, t, "lk", access=s3.FILE_READ_DATA)
    s = lock_raw(srv, t, r, 0, 1, EXCL | NOWAIT)
    check("a POSIX exclusive lock on a read-only handle: INVALID_HANDLE",
          s == "STATUS_INVALID_HANDLE", s)
    s = lock_raw(srv, t, r, 0, 1, SHARED | NOWAIT)
    check("... a shared one is granted", s == "OK", s)
    for f in (r, a, b, w1, w2):
        close(srv, t, f)
    case_locks_downgrade(srv, t)


def case_locks_downgrade(srv, t):
    """A blocked shared lock of another handle is granted as soon as the
    holder turns part of its exclusive POSIX range shared (fcntl's
    F_RDLCK over an F_WRLCK), not at its next unlock or close."""
    srv2, t2 = login()
    a = popen(srv, t, "lk")
    c = popen(srv2, t2, "lk")
    lock_raw(srv, t, a, 0, 100, EXCL | NOWAIT)
    req = s3.SMB2Lock()
    req['LockCount'] = 1
    req['FileID'] = c
    req['Locks'] = struct.pack('<QQLL', 0, 10, SHARED, 0)	# blocking
    pkt = srv2.SMB_PACKET()
    pkt['Command'] = s3.SMB2_LOCK
    pkt['TreeID'] = t2
    pkt['Data'] = req
    mid = srv2.sendSMB(pkt)
    time.sleep(0.5)	# parked behind a's lock by now
    s = lock_raw(srv, t, a, 0, 50, SHARED | NOWAIT)
    check("the holder turns 0-49 of its exclusive POSIX lock shared",
          s == "OK", s)
    srv2._timeout = 3
    t0 = time.monotonic()
    try:
        ans = srv2.recvSMB(mid)
        got = "0x%x" % ans['Status']
    except Exception as e:
        got = "no answer (%s)" % type(e).__name__
    took = time.monotonic() - t0
    check("... the other handle's blocked shared lock of 0-9 is granted "
          "at once", got == "0x0" and took < 2, "%s after %.1f s" %
          (got, took))
    w = popen(srv, t, "lk", posix=False)
    s = rd(srv, t, w, 60, 5)
    check("... while 50-99 stays exclusive (a Windows READ there is "
          "refused)", s == "STATUS_FILE_LOCK_CONFLICT", s)
    close(srv, t, w)
    lock_raw(srv2, t2, c, 0, 10, UNLOCK)
    lock_raw(srv, t, a, 0, 100, UNLOCK)
    close(srv2, t2, c)
    close(srv, t, a)


def unix_sid(kind, n):
    """S-1-22-1-uid (kind 1) or S-1-22-2-gid (kind 2), binary."""
    return struct.pack('<BB6sLL', 1, 2, (22).to_bytes(6, 'big'), kind, n)


def nfs_sid(kind, n):
    """S-1-5-88-1-uid (kind 1) or S-1-5-88-2-gid (kind 2), binary: the
    Linux client's Unix SIDs with `idsfromsid`."""
    return struct.pack('<BB6sLLL', 1, 3, (5).to_bytes(6, 'big'), 88, kind, n)


def owner_sd(owner=None, group=None):
    """A self-relative descriptor with an owner, a group or both, no DACL."""
    body = (owner or b'') + (group or b'')
    return struct.pack('<BBHLLLL', 1, 0, 0x8000, 20 if owner else 0,
                       20 + len(owner or b'') if group else 0, 0, 0) + body


def secd_ctx(sd, then):
    """An SD_BUFFER create context ("SecD") chained before context then."""
    head = 24 + len(sd)
    pad = (8 - head % 8) % 8
    return Blob(struct.pack('<LHHHHL', head + pad, 16, 4, 0, 24, len(sd)) +
                b'SecD' + bytes(4) + sd + bytes(pad) + then.getData())


def case_owner():
    """chown and chgrp through SET_INFO on a POSIX handle: what the
    kernel lets alice do (her file to a group she is in), nothing more
    (not to bob, not to a group she is not in)."""
    import pwd
    pa, pb = pwd.getpwnam("alice"), pwd.getpwnam("bob")
    path = os.path.join(SHARE, "og")
    with open(path, "w") as f:
        f.write("og")
    os.chown(path, pa.pw_uid, 0)	# alice's, group root
    os.chmod(path, 0o644)
    srv, t = login()
    fid = popen(srv, t, "og", access=s3.READ_CONTROL | s3.WRITE_OWNER |
                s3.FILE_READ_ATTRIBUTES, disp=s3.FILE_OPEN)
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        group=unix_sid(2, pa.pw_gid)), infoType=3, fileInfoClass=0,
        additionalInformation=2))
    st = os.stat(path)
    check("chgrp of alice's file to her own group on a POSIX handle",
          s == "OK" and st.st_gid == pa.pw_gid, "%s gid %d" % (s, st.st_gid))
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        group=unix_sid(2, 0)), infoType=3, fileInfoClass=0,
        additionalInformation=2))
    st = os.stat(path)
    check("... to root's group, which she is not in: refused",
          s != "OK" and st.st_gid == pa.pw_gid, "%s gid %d" % (s, st.st_gid))
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        owner=unix_sid(1, pb.pw_uid)), infoType=3, fileInfoClass=0,
        additionalInformation=1))
    st = os.stat(path)
    check("chown of alice's file to bob: refused (%s), still hers" % s,
          s in ("STATUS_INVALID_OWNER", "STATUS_ACCESS_DENIED") and
          st.st_uid == pa.pw_uid, "%s uid %d" % (s, st.st_uid))
    # the same as the Linux client's idsfromsid spells them: S-1-5-88-x-N
    os.chown(path, pa.pw_uid, 0)
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        group=nfs_sid(2, pa.pw_gid)), infoType=3, fileInfoClass=0,
        additionalInformation=2))
    st = os.stat(path)
    check("chgrp to S-1-5-88-2-GID (her own group): done",
          s == "OK" and st.st_gid == pa.pw_gid, "%s gid %d" % (s, st.st_gid))
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        group=nfs_sid(2, 0)), infoType=3, fileInfoClass=0,
        additionalInformation=2))
    st = os.stat(path)
    check("... to S-1-5-88-2-0 (root's group): refused",
          s != "OK" and st.st_gid == pa.pw_gid, "%s gid %d" % (s, st.st_gid))
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        owner=nfs_sid(1, pb.pw_uid)), infoType=3, fileInfoClass=0,
        additionalInformation=1))
    st = os.stat(path)
    check("chown to S-1-5-88-1-UID of bob: refused (%s), still hers" % s,
          s == "STATUS_INVALID_OWNER" and st.st_uid == pa.pw_uid,
          "%s uid %d" % (s, st.st_uid))
    s = status(lambda: srv.setInfo(t, fid, owner_sd(
        owner=nfs_sid(1, pa.pw_uid)), infoType=3, fileInfoClass=0,
        additionalInformation=1))
    check("chown to S-1-5-88-1-UID of alice herself: done", s == "OK", s)
    close(srv, t, fid)
    # a POSIX create with a SecD context of the Linux client's SIDs
    # (`idsfromsid` sends the caller's uid and gid with every create)
    uid, gid = nfs_sid(1, pa.pw_uid), nfs_sid(2, pa.pw_gid)
    fid = srv.create(t, "ogc", RW | s3.READ_CONTROL, ALL,
                     s3.FILE_NON_DIRECTORY_FILE, s3.FILE_CREATE, 0,
                     createContexts=[secd_ctx(owner_sd(uid, gid),
                                              posix_ctx(0o640))])
    st = os.stat(os.path.join(SHARE, "ogc"))
    sd = srv.queryInfo(t, fid, infoType=3, fileInfoClass=0,
                       additionalInformation=3)
    check("create with owner S-1-5-88-1-UID, group S-1-5-88-2-GID: "
          "alice's, read back as S-1-22-1-UID / S-1-22-2-GID",
          st.st_uid == pa.pw_uid and st.st_gid == pa.pw_gid and
          unix_sid(1, pa.pw_uid) in sd and unix_sid(2, pa.pw_gid) in sd and
          nfs_sid(1, pa.pw_uid) not in sd,
          "%d:%d %s" % (st.st_uid, st.st_gid, bytes(sd).hex()))
    close(srv, t, fid)
    s = status(lambda: srv.create(
        t, "ogr", RW, ALL, s3.FILE_NON_DIRECTORY_FILE, s3.FILE_CREATE, 0,
        createContexts=[secd_ctx(owner_sd(nfs_sid(1, 0), gid),
                                 posix_ctx(0o640))]))
    check("create with owner S-1-5-88-1-0 (root's) as alice: "
          "STATUS_INVALID_OWNER, no file",
          s == "STATUS_INVALID_OWNER" and
          not os.path.lexists(os.path.join(SHARE, "ogr")), s)


def case_shareoff():
    """[noposix] has `smb3 unix extensions = no`: the context is ignored
    there (a Windows open), while [share] still takes it."""
    srv, t = login(share="noposix")
    fid = srv.create(t, "NoPosix", RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_CREATE, 0, createContexts=[posix_ctx(0o600)])
    check("a POSIX create on a share with the key off: no response context",
          POSIX_TAG not in resp_contexts(srv), repr(resp_contexts(srv)))
    s = status(lambda: srv.create(t, "nOpOSIX", RW, ALL,
                                  s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN,
                                  0, createContexts=[posix_ctx(0o600)]))
    check("... a Windows open there (case-insensitive name found)",
          s == "OK", s)
    s = status(lambda: srv.queryInfo(t, fid, fileInfoClass=100))
    check("... and no POSIX level on it", s == "STATUS_INVALID_LEVEL", s)
    close(srv, t, fid)
    t2 = srv.connectTree("share")
    fid = srv.create(t2, "YesPosix", RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_CREATE, 0, createContexts=[posix_ctx(0o600)])
    check("the same connection's other share still takes it",
          POSIX_TAG in resp_contexts(srv), repr(resp_contexts(srv)))
    close(srv, t2, fid)


{"delete": case_delete, "locks": case_locks, "owner": case_owner,
 "shareoff": case_shareoff}[sys.argv[3]]()
