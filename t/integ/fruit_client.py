#!/usr/bin/env python3
"""impacket checks of t/integ/fruit.sh that smbtorture's vfs.fruit does
not make: the AAPL answer's volume caps (FULL_SYNC on a Time Machine
share, none elsewhere), a malformed AAPL context refused cleanly, the
READ_DIR_ATTR fields of a listing (resource fork size, Finder info,
Unix mode), a share without fruit ignoring AAPL, a read-only share
where no AfpInfo can be written, and delete on close of a resource fork
(kept when it holds data, smbtorture empty_stream's T_DOC step),
and an AfpInfo opened and never written leaving nothing on disk, with
two opens in either order, and refused to USER2, who may not write.
Prints "ok ..." / "FAIL ..." lines.  With "samba" last, only the stream
checks run, reading Samba's streams_xattr names on disk (fruit.sh
FRUIT_SAMBA=1).

usage: fruit_client.py HOST PORT USER PASSWORD SHAREDIR USER2 PASSWORD2 [samba]
"""
import os
import struct
import sys

from impacket import smb3 as s3
from impacket import smb3structs as st
from impacket.smbconnection import SMBConnection

AAPL_ALL = 7                      # server caps, volume caps, model
RDATTR, UNIX_BASED, NFS_ACE = 1, 4, 8


def say(good, what):
    print(("ok   " if good else "FAIL ") + what)


def ctx(name, data):
    c = st.SMB2CreateContext()
    c["Next"] = 0
    c["NameOffset"] = 16
    c["NameLength"] = len(name)
    c["DataOffset"] = 24 if data else 0
    c["DataLength"] = len(data)
    c["Buffer"] = name + b"\0" * ((8 - len(name) % 8) % 8) + data
    return c


def aapl_query(bitmap=AAPL_ALL, caps=RDATTR | UNIX_BASED | NFS_ACE, n=24):
    return struct.pack("<IIQQ", 1, 0, bitmap, caps)[:n]


def raw_create(smb, tid, name, access, disp, opts, contexts):
    """A CREATE whose answer's contexts are returned: (status, fid,
    {name: data})."""
    status, fid, out, _ = raw_create_ex(smb, tid, name, access, disp, opts,
                                        contexts)
    return status, fid, out


def raw_create_ex(smb, tid, name, access, disp, opts, contexts):
    """raw_create, and the CreateAction (or None)."""
    packet = smb.SMB_PACKET()
    packet["Command"] = st.SMB2_CREATE
    packet["TreeID"] = tid
    req = st.SMB2Create()
    req["SecurityFlags"] = 0
    req["RequestedOplockLevel"] = 0
    req["ImpersonationLevel"] = 2
    req["DesiredAccess"] = access
    req["FileAttributes"] = 0
    req["ShareAccess"] = 7
    req["CreateDisposition"] = disp
    req["CreateOptions"] = opts
    req["NameLength"] = len(name) * 2
    req["Buffer"] = name.encode("utf-16le") if name else b"\0"
    buf = b"".join(c.getData() for c in contexts)
    off = len(st.SMB2Packet()) + st.SMB2Create.SIZE + len(req["Buffer"])
    if off % 8:
        req["Buffer"] += b"\0" * (8 - off % 8)
        off = len(st.SMB2Packet()) + st.SMB2Create.SIZE + len(req["Buffer"])
    req["CreateContextsOffset"] = off
    req["CreateContextsLength"] = len(buf)
    req["Buffer"] += buf
    packet["Data"] = req
    ans = smb.recvSMB(smb.sendSMB(packet))
    status = ans["Status"]
    if status != 0:
        return status, None, {}, None
    body = ans["Data"]
    fid = body[64:80]
    action = struct.unpack_from("<I", body, 4)[0]
    coff, clen = struct.unpack_from("<II", body, 80)
    out = {}
    if clen:
        chain = bytes(ans.getData())[coff:coff + clen]
        pos = 0
        while True:
            nxt, noff, nlen, _, doff, dlen = struct.unpack_from(
                "<IHHHHI", chain, pos)
            out[chain[pos + noff:pos + noff + nlen]] = \
                chain[pos + doff:pos + doff + dlen]
            if nxt == 0:
                break
            pos += nxt
    return status, fid, out, action


def raw_close(smb, tid, fid):
    """CLOSE of a file id raw_create returned (impacket's close wants
    an open it made itself)."""
    if fid is None:
        return
    packet = smb.SMB_PACKET()
    packet["Command"] = st.SMB2_CLOSE
    packet["TreeID"] = tid
    req = st.SMB2Close()
    req["FileID"] = fid
    packet["Data"] = req
    smb.recvSMB(smb.sendSMB(packet))


def login(host, port, user, pw):
    conn = SMBConnection(host, host, sess_port=port)
    conn.login(user, pw)
    return conn, conn.getSMBServer()


def aapl_checks(host, port, user, pw):
    for share, want_vol in (("fruit", 0), ("tm", 4)):
        conn, smb = login(host, port, user, pw)
        tid = conn.connectTree(share)
        status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                      st.FILE_OPEN, 0,
                                      [ctx(b"AAPL", aapl_query())])
        a = out.get(b"AAPL")
        say(status == 0 and a is not None, "[%s] AAPL answered" % share)
        if a is None:
            continue
        cmd, _, bitmap, scaps, vcaps, _, mlen = struct.unpack_from(
            "<IIQQQII", a)
        say(cmd == 1 and bitmap == AAPL_ALL,
            "[%s] AAPL command and bitmap echoed" % share)
        say(scaps == RDATTR | UNIX_BASED | NFS_ACE | 2,
            "[%s] server caps READ_DIR_ATTR|OSX_COPYFILE|UNIX_BASED|NFS_ACE"
            " (0x%x)" % (share, scaps))
        say(vcaps == want_vol, "[%s] volume caps 0x%x (want 0x%x: FULL_SYNC"
            " only with fruit:time machine)" % (share, vcaps, want_vol))
        say(a[40:40 + mlen].decode("utf-16le") == "MacSamba",
            "[%s] model string fruit:model" % share)
        raw_close(smb, tid, fid)
        # a second answer is not refused (Samba answers each)
        status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                      st.FILE_OPEN, 0,
                                      [ctx(b"AAPL", aapl_query(bitmap=2))])
        say(status == 0 and len(out.get(b"AAPL", b"")) == 24,
            "[%s] a second AAPL query answers only what it asks" % share)
        raw_close(smb, tid, fid)
        for bad, why in ((aapl_query(n=23), "23 bytes"),
                         (aapl_query() + b"\0", "25 bytes"),
                         (struct.pack("<IIQQ", 2, 0, 7, 0), "command 2")):
            status, fid, _ = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                        st.FILE_OPEN, 0, [ctx(b"AAPL", bad)])
            say(status == 0xC000000D,
                "[%s] a malformed AAPL (%s) gets INVALID_PARAMETER (0x%x)"
                % (share, why, status))
            raw_close(smb, tid, fid)
        conn.logoff()
    # no fruit: AAPL is an unknown context, ignored
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("wo_fruit")
    status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                  st.FILE_OPEN, 0,
                                  [ctx(b"AAPL", aapl_query(n=3))])
    say(status == 0 and b"AAPL" not in out,
        "a share without fruit ignores AAPL, even malformed")
    raw_close(smb, tid, fid)
    conn.logoff()


def rdattr_checks(host, port, user, pw, sharedir):
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("fruit")
    status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                  st.FILE_OPEN, 0, [ctx(b"AAPL", aapl_query())])
    raw_close(smb, tid, fid)
    conn.createDirectory("fruit", "rdattr")
    afp = bytearray(60)
    afp[0:8] = b"AFP\0\0\0\1\0"
    afp[16:24] = b"TEXTttxt"
    afp[24:26] = b"\x01\x02"            # Finder flags
    afp[40:42] = b"\x03\x04"            # extended flags
    for name, data in ((r"rdattr\f:AFP_AfpInfo", bytes(afp)),
                       (r"rdattr\f:AFP_Resource", b"r" * 1234)):
        f = smb.create(tid, name, st.FILE_WRITE_DATA, 7, 0,
                       st.FILE_OVERWRITE_IF, 0)
        smb.write(tid, f, data, 0, len(data))
        smb.close(tid, f)
    os.chmod(os.path.join(sharedir, "rdattr", "f"), 0o640)
    # file ids: 0 on the fruit share (fruit:zero_file_id), not on another
    # share of the same connection
    for share, zero in (("fruit", True), ("wo_fruit", False)):
        t2 = conn.connectTree(share)
        status, fid, out = raw_create(smb, t2, r"rdattr\f", st.FILE_READ_ATTRIBUTES,
                                      st.FILE_OPEN, 0, [ctx(b"QFid", b"")])
        raw_close(smb, t2, fid)
        q = out.get(b"QFid", b"")
        say(len(q) == 32 and (q[:8] == b"\0" * 8) == zero,
            "QFid on [%s] after AAPL: file id %s" % (share,
                                                     "0" if zero else "kept"))
    d = smb.create(tid, "rdattr", st.FILE_READ_DATA | st.FILE_LIST_DIRECTORY,
                   7, st.FILE_DIRECTORY_FILE, st.FILE_OPEN, 0)
    raw = smb.queryDirectory(tid, d, "f",
                             informationClass=st.FILEID_BOTH_DIRECTORY_INFORMATION)
    smb.close(tid, d)
    e = bytes(raw)
    ea = struct.unpack_from("<I", e, 64)[0]
    slen, rsize = struct.unpack_from("<HQ", e, 68)
    finder = e[78:94]
    mode = struct.unpack_from("<H", e, 94)[0]
    say(slen == 24, "READ_DIR_ATTR: short name length 24 (%d)" % slen)
    say(rsize == 1234, "READ_DIR_ATTR: resource fork size (%d)" % rsize)
    say(finder[0:8] == b"TEXTttxt" and finder[8:10] == b"\x01\x02" and
        finder[10:12] == b"\x03\x04",
        "READ_DIR_ATTR: type, creator and flags of the Finder info")
    say(mode & 0o7777 == 0o640, "READ_DIR_ATTR: the Unix mode (0%o)" % mode)
    say(ea & 0x2 != 0, "READ_DIR_ATTR: max access says writable (0x%x)" % ea)
    # all-zero Finder info deletes the stream
    f = smb.create(tid, r"rdattr\f:AFP_AfpInfo", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN, 0)
    z = bytearray(afp)
    z[16:48] = b"\0" * 32
    smb.write(tid, f, bytes(z), 0, 60)
    smb.close(tid, f)
    try:
        f = smb.create(tid, r"rdattr\f:AFP_AfpInfo", st.FILE_READ_DATA, 7, 0,
                       st.FILE_OPEN, 0)
        smb.close(tid, f)
        say(False, "an all-zero Finder info removes AFP_AfpInfo")
    except s3.SessionError as err:
        say(err.get_error_code() == 0xC0000034,
            "an all-zero Finder info removes AFP_AfpInfo")
    # a bad signature is refused
    f = smb.create(tid, r"rdattr\f:AFP_AfpInfo", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OVERWRITE_IF, 0)
    try:
        smb.write(tid, f, b"XXXX" + bytes(afp[4:]), 0, 60)
        say(False, "an AfpInfo with a bad signature is refused")
    except s3.SessionError as err:
        say(err.get_error_code() == 0xC000000D,
            "an AfpInfo with a bad signature is refused")
    smb.close(tid, f)
    conn.logoff()


RW_DEL = st.FILE_READ_DATA | st.FILE_WRITE_DATA | st.FILE_READ_ATTRIBUTES | \
    st.DELETE
DELETE_PENDING, NOT_FOUND = 0xC0000056, 0xC0000034
FILE_CREATED, FILE_OVERWRITTEN = 2, 3


def on_disk(sharedir, name, stream, samba):
    """The bytes of a named stream's xattr, or None: usmbd's naming
    (vfs/xattr.c), or Samba's streams_xattr's with samba."""
    x = ("user.DosStream.%s:$DATA" % stream if samba else
         "user.usmbd.stream." + stream)
    try:
        v = os.getxattr(os.path.join(sharedir, name), x)
    except OSError:
        return None
    # streams_xattr stores a NUL after the data
    return v[:-1] if samba and v.endswith(b"\0") else v


def aapl_conn(host, port, user, pw):
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("fruit")
    _, fid, _ = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                           st.FILE_OPEN, 0, [ctx(b"AAPL", aapl_query())])
    raw_close(smb, tid, fid)
    return conn, smb, tid


def status_of(fn):
    try:
        fn()
        return 0
    except s3.SessionError as err:
        return err.get_error_code()


def open_status(smb, tid, name, access=st.FILE_READ_ATTRIBUTES):
    def probe():
        smb.close(tid, smb.create(tid, name, access, 7, 0, st.FILE_OPEN, 0))
    return status_of(probe)


def rsrc_doc_checks(host, port, user, pw, sharedir, samba):
    """smbtorture's empty_stream, T_DOC on AFP_Resource: delete on close
    set through a handle with data access leaves the fork delete pending
    (another open gets DELETE_PENDING), and at the last close a fork
    holding data is kept, as a Mac keeps it; an empty fork goes; other
    streams go."""
    conn, smb, tid = aapl_conn(host, port, user, pw)
    conn.createDirectory("fruit", "rdoc")
    for base in ("rdoc\\a", "rdoc\\b", "rdoc\\c", "rdoc\\d"):
        smb.close(tid, smb.create(tid, base, st.FILE_WRITE_DATA, 7, 0,
                                  st.FILE_OVERWRITE_IF, 0))
    # a: written, then setinfo delete on close
    f = smb.create(tid, "rdoc\\a:AFP_Resource", RW_DEL, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.write(tid, f, b"foo", 0, 3)
    smb.setInfo(tid, f, inputBlob=b"\x01", infoType=1, fileInfoClass=13)
    got = open_status(smb, tid, "rdoc\\a:AFP_Resource")
    say(got == DELETE_PENDING, "AFP_Resource with data, delete on close set"
        " with data access: another open gets DELETE_PENDING (0x%x)" % got)
    smb.close(tid, f)
    data = None
    try:
        f = smb.create(tid, "rdoc\\a:AFP_Resource", st.FILE_READ_DATA, 7, 0,
                       st.FILE_OPEN, 0)
        data = smb.read(tid, f, 0, 16)
        smb.close(tid, f)
    except s3.SessionError:
        pass
    say(data == b"foo", "... and after the last close it is kept, data and"
        " all (%r), as a Mac keeps a resource fork" % data)
    say(on_disk(sharedir, "rdoc/a", "AFP_Resource", samba) == b"foo",
        "... its xattr is on disk")
    # b: written, then a create with delete on close and data access
    f = smb.create(tid, "rdoc\\b:AFP_Resource", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.write(tid, f, b"bar", 0, 3)
    smb.close(tid, f)
    f = smb.create(tid, "rdoc\\b:AFP_Resource", RW_DEL, 7,
                   st.FILE_DELETE_ON_CLOSE, st.FILE_OPEN, 0)
    smb.close(tid, f)
    say(on_disk(sharedir, "rdoc/b", "AFP_Resource", samba) == b"bar",
        "AFP_Resource with data opened with FILE_DELETE_ON_CLOSE and data"
        " access: kept")
    # c: an empty fork made delete pending goes
    f = smb.create(tid, "rdoc\\c:AFP_Resource", RW_DEL, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.setInfo(tid, f, inputBlob=b"\x01", infoType=1, fileInfoClass=13)
    smb.close(tid, f)
    say(on_disk(sharedir, "rdoc/c", "AFP_Resource", samba) is None,
        "an empty AFP_Resource made delete pending is removed")
    # d: any other stream goes, data or not
    f = smb.create(tid, "rdoc\\d:foo", RW_DEL, 7, 0, st.FILE_OPEN_IF, 0)
    smb.write(tid, f, b"foo", 0, 3)
    smb.setInfo(tid, f, inputBlob=b"\x01", infoType=1, fileInfoClass=13)
    smb.close(tid, f)
    got = open_status(smb, tid, "rdoc\\d:foo")
    say(got == NOT_FOUND and on_disk(sharedir, "rdoc/d", "foo", samba)
        is None, "a stream other than AFP_Resource, delete on close: gone"
        " (0x%x)" % got)
    conn.logoff()


def afpinfo_lazy_checks(host, port, user, pw, sharedir, samba, user2,
                        pw2):
    """An AFP_AfpInfo opened with OPEN_IF and never written is a new
    record to its opener and nothing on disk (Samba keeps it in memory
    only); the first write stores it, whichever open writes, in whatever
    order the opens close."""
    conn, smb, tid = aapl_conn(host, port, user, pw)
    conn2, smb2, tid2 = aapl_conn(host, port, user, pw)
    conn.createDirectory("fruit", "lazy")
    for base in ("lazy\\a", "lazy\\b", "lazy\\c", "lazy\\d"):
        smb.close(tid, smb.create(tid, base, st.FILE_WRITE_DATA, 7, 0,
                                  st.FILE_OVERWRITE_IF, 0))
    rec = bytearray(60)
    rec[0:8] = b"AFP\0\0\0\1\0"
    rec[16:24] = b"TEXTttxt"
    rec = bytes(rec)
    # a: opened, read, never written
    status, fid, _, action = raw_create_ex(smb, tid, "lazy\\a:AFP_AfpInfo",
                                           st.FILE_READ_DATA, st.FILE_OPEN_IF,
                                           0, [])
    say(status == 0 and action == FILE_CREATED,
        "OPEN_IF of a new AfpInfo: FILE_CREATED (0x%x, %s)" % (status, action))
    say(on_disk(sharedir, "lazy/a", "AFP_AfpInfo", samba) is None,
        "... nothing on disk while it is open and unwritten")
    raw_close(smb, tid, fid)
    f = smb.create(tid, "lazy\\a:AFP_AfpInfo", st.FILE_READ_DATA, 7, 0,
                   st.FILE_OPEN_IF, 0)
    size = struct.unpack_from("<q", smb.queryInfo(tid, f, fileInfoClass=5),
                              8)[0]
    data = smb.read(tid, f, 0, 60)
    smb.close(tid, f)
    say(size == 60 and data[:3] == b"AFP" and len(data) == 60,
        "... it has 60 bytes and reads as a new record (%d, %r)"
        % (size, bytes(data[:8])))
    say(on_disk(sharedir, "lazy/a", "AFP_AfpInfo", samba) is None and
        open_status(smb, tid, "lazy\\a:AFP_AfpInfo") == NOT_FOUND,
        "... closed unwritten: no xattr left, FILE_OPEN finds none")
    status, fid, _, action = raw_create_ex(smb, tid, "lazy\\a:AFP_AfpInfo",
                                           st.FILE_READ_DATA, st.FILE_OPEN_IF,
                                           0, [])
    raw_close(smb, tid, fid)
    say(status == 0 and action == FILE_CREATED,
        "... and the next OPEN_IF creates it again (%s)" % action)
    # b: two opens; the second writes and closes first, then the first
    # (never written) closes
    fa = smb.create(tid, "lazy\\b:AFP_AfpInfo", st.FILE_READ_DATA, 7, 0,
                    st.FILE_OPEN_IF, 0)
    fb = smb2.create(tid2, "lazy\\b:AFP_AfpInfo",
                     st.FILE_READ_DATA | st.FILE_WRITE_DATA, 7, 0,
                     st.FILE_OPEN_IF, 0)
    smb2.write(tid2, fb, rec, 0, 60)
    smb2.close(tid2, fb)
    smb.close(tid, fa)
    say(on_disk(sharedir, "lazy/b", "AFP_AfpInfo", samba) == rec,
        "two opens: the unwritten one closing last keeps what the other"
        " wrote")
    # c: two opens; the unwritten one closes first, the other writes after
    fa = smb.create(tid, "lazy\\c:AFP_AfpInfo", st.FILE_READ_DATA, 7, 0,
                    st.FILE_OPEN_IF, 0)
    fb = smb2.create(tid2, "lazy\\c:AFP_AfpInfo",
                     st.FILE_READ_DATA | st.FILE_WRITE_DATA, 7, 0,
                     st.FILE_OPEN_IF, 0)
    smb.close(tid, fa)
    smb2.write(tid2, fb, rec, 0, 60)
    smb2.close(tid2, fb)
    say(on_disk(sharedir, "lazy/c", "AFP_AfpInfo", samba) == rec,
        "two opens: the unwritten one closing first, the other writing"
        " after: the record is stored")
    # d: an existing record overwritten is as new until written
    f = smb.create(tid, "lazy\\d:AFP_AfpInfo", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.write(tid, f, rec, 0, 60)
    smb.close(tid, f)
    status, fid, _, action = raw_create_ex(smb, tid, "lazy\\d:AFP_AfpInfo",
                                           st.FILE_READ_DATA | st.FILE_WRITE_DATA,
                                           st.FILE_OVERWRITE_IF, 0, [])
    raw_close(smb, tid, fid)
    got = open_status(smb, tid, "lazy\\d:AFP_AfpInfo")
    say(status == 0 and action == FILE_OVERWRITTEN and got == NOT_FOUND,
        "an AfpInfo overwritten and not written is not there (%s, 0x%x)"
        % (action, got))
    say(on_disk(sharedir, "lazy/d", "AFP_AfpInfo", samba) is None,
        "... and leaves no empty xattr")
    conn2.logoff()
    conn.logoff()
    # another user who may read the file but not write it: no AfpInfo
    # created, as no other stream (the kernel's answer: one access(2))
    os.chmod(os.path.join(sharedir, "lazy", "a"), 0o644)
    connb, smbb, tidb = aapl_conn(host, port, user2, pw2)
    for stream in ("AFP_AfpInfo", "foo"):
        status, fid, _, action = raw_create_ex(
            smbb, tidb, "lazy\\a:" + stream, st.FILE_READ_DATA,
            st.FILE_OPEN_IF, 0, [])
        raw_close(smbb, tidb, fid)
        say(status == 0xC0000022, "%s may not write the file: OPEN_IF of a"
            " new %s is ACCESS_DENIED (0x%x, %s)" % (user2, stream, status,
                                                     action))
    connb.logoff()


def readonly_checks(host, port, user, pw):
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("fruitro")
    status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                  st.FILE_OPEN, 0, [ctx(b"AAPL", aapl_query())])
    say(status == 0 and b"AAPL" in out, "[fruitro] AAPL answered")
    raw_close(smb, tid, fid)
    for disp in (st.FILE_OPEN_IF, st.FILE_OVERWRITE_IF, st.FILE_CREATE):
        try:
            f = smb.create(tid, "file:AFP_AfpInfo", st.FILE_WRITE_DATA, 7, 0,
                           disp, 0)
            smb.close(tid, f)
            say(False, "[fruitro] AfpInfo not opened for writing (disp %d)"
                % disp)
        except s3.SessionError as err:
            say(err.get_error_code() == 0xC0000022,
                "[fruitro] AfpInfo not opened for writing (disp %d)" % disp)
    conn.logoff()


def tm_checks(host, port, user, pw):
    """The Time Machine size: fruit.sh put a sparse bundle of 3 bands of
    8 KiB, one whose Info.plist is a fifo (never waited on) and one whose
    Info.plist is a symlink out of the share (never followed)."""
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("tm")
    fid = smb.create(tid, "", st.FILE_READ_ATTRIBUTES, 7, 0, st.FILE_OPEN, 0)
    raw = smb.queryInfo(tid, fid, infoType=st.SMB2_0_INFO_FILESYSTEM,
                        fileInfoClass=3)      # FileFsSizeInformation
    total, avail, spu, bps = struct.unpack_from("<QQII", raw)
    smb.close(tid, fid)
    say(spu == 2 and bps == 512,
        "[tm] units of two 512-byte sectors (%d x %d)" % (spu, bps))
    # 32K = 32 units; bands 3 x 8 KiB = 24 units used; the fifo's bundle
    # and the symlinked one count nothing
    say(total == 32 and avail == 8,
        "[tm] fruit:time machine max size less the bands: %d total, %d free"
        % (total, avail))
    # F_FULLFSYNC: a Mac's FLUSH of what it wrote, data and resource fork
    # (1000 bytes: an ext4 xattr holds less than a block)
    ok = True
    for name in ("flushed.bin", "flushed.bin:AFP_Resource"):
        f = smb.create(tid, name, st.FILE_WRITE_DATA | st.FILE_READ_DATA, 7,
                       0, st.FILE_OVERWRITE_IF, 0)
        smb.write(tid, f, b"x" * 1000, 0, 1000)
        try:
            smb.flush(tid, f)
        except s3.SessionError:
            ok = False
        smb.close(tid, f)
    say(ok, "[tm] FLUSH (F_FULLFSYNC) of a file and of its resource fork")
    conn.logoff()


def sd_sids(raw):
    from impacket.ldap import ldaptypes
    sd = ldaptypes.SR_SECURITY_DESCRIPTOR(data=bytes(raw))
    return sd, [a["Ace"]["Sid"].formatCanonical() for a in sd["Dacl"].aces]


def nfs_checks(host, port, user, pw, sharedir):
    """fruit:nfs_aces (on in fruit.sh): a Mac's DACL carries the mode,
    owner and group as S-1-5-88 ACEs; one it sets back with another mode
    is a chmod, and no S-1-5-88 ACE is stored."""
    from impacket.ldap import ldaptypes
    path = os.path.join(sharedir, "nfs.txt")
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("fruit")
    status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                  st.FILE_OPEN, 0, [ctx(b"AAPL", aapl_query())])
    raw_close(smb, tid, fid)
    f = smb.create(tid, "nfs.txt", 0x00060000 | st.FILE_READ_DATA, 7, 0,
                   st.FILE_OVERWRITE_IF, 0)    # READ_CONTROL | WRITE_DAC
    os.chmod(path, 0o640)
    stt = os.stat(path)
    raw = smb.queryInfo(tid, f, infoType=3, fileInfoClass=0,
                        additionalInformation=4)
    sd, sids = sd_sids(raw)
    say("S-1-5-88-3-%d" % stt.st_mode in sids and
        "S-1-5-88-1-%d" % stt.st_uid in sids and
        "S-1-5-88-2-%d" % stt.st_gid in sids,
        "NFS ACEs: mode, owner and group in the DACL (%s)" % sids[-3:])
    for a in sd["Dacl"].aces:
        if a["Ace"]["Sid"].formatCanonical().startswith("S-1-5-88-3-"):
            a["Ace"]["Sid"].fromCanonical("S-1-5-88-3-%d" % 0o600)
    smb.setInfo(tid, f, inputBlob=sd.getData(), infoType=3, fileInfoClass=0,
                additionalInformation=4)
    say(os.stat(path).st_mode & 0o777 == 0o600,
        "NFS ACEs: a mode ACE set is a chmod (0%o)" % (os.stat(path).st_mode
                                                      & 0o777))
    smb.close(tid, f)
    conn.logoff()
    # what is stored, seen without AAPL: no S-1-5-88 ACE
    conn, smb = login(host, port, user, pw)
    tid = conn.connectTree("fruit")
    f = smb.create(tid, "nfs.txt", 0x00020000, 7, 0, st.FILE_OPEN, 0)
    _, sids = sd_sids(smb.queryInfo(tid, f, infoType=3, fileInfoClass=0,
                                    additionalInformation=4))
    say(not any(s.startswith("S-1-5-88-") for s in sids),
        "NFS ACEs are not stored (%s)" % sids)
    smb.close(tid, f)
    conn.logoff()


def main():
    host, port, user, pw, sharedir, user2, pw2 = sys.argv[1:8]
    if sys.argv[8:9] == ["samba"]:
        # FRUIT_SAMBA=1: the stream rules only, against Samba, printed
        rsrc_doc_checks(host, int(port), user, pw, sharedir, True)
        afpinfo_lazy_checks(host, int(port), user, pw, sharedir, True,
                            user2, pw2)
        return
    aapl_checks(host, int(port), user, pw)
    rdattr_checks(host, int(port), user, pw, sharedir)
    readonly_checks(host, int(port), user, pw)
    tm_checks(host, int(port), user, pw)
    nfs_checks(host, int(port), user, pw, sharedir)
    rsrc_doc_checks(host, int(port), user, pw, sharedir, False)
    afpinfo_lazy_checks(host, int(port), user, pw, sharedir, False, user2,
                        pw2)


if __name__ == "__main__":
    main()
