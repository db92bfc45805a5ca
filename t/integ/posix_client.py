# Client of t/integ/posix.sh: the SMB3 POSIX extensions (smb3posix.org)
# over impacket's SMB 3.1.1, with the POSIX negotiate context added to its
# NEGOTIATE, the POSIX create context, and the POSIX information level of
# QUERY_INFO and QUERY_DIRECTORY decoded here.  argv: PORT SHARE_DIR CASE.
# Prints one line "ok DESC" or "FAIL DESC: why" per check; the share's
# directory on disk (argv[2]) is looked at directly.
import hashlib
import os
import pwd
import stat
import struct
import sys

from impacket import crypto, smb3, nt_errors
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection, SessionError

PORT = int(sys.argv[1])
SHARE = sys.argv[2]
POSIX_TAG = bytes.fromhex("93AD25509CB411E7B42383DE968BCD7C")
POSIX_LEVEL = 100
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
WIRE_TYPES = [stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK, stat.S_IFCHR,
              stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK]


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def name_of(e):
    code = e.get_error_code() if hasattr(e, "get_error_code") else e.error
    return nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


class PosixSMB3(smb3.SMB3):
    """impacket's SMB3 offering the POSIX negotiate context (0x100) and
    keeping the NEGOTIATE answer and the last packet received.  It keeps
    its own 3.1.1 preauth hash and signing key (MS-SMB2 3.2.5.3.1):
    impacket 0.10's are not the server's."""
    offer_posix = True

    def hash(self, data):
        self.preauth = hashlib.sha512(self.preauth + bytes(data)).digest()

    def sendSMB(self, packet):
        if packet['Command'] == s3.SMB2_NEGOTIATE:
            self.preauth = b'\0' * 64
            neg = packet['Data']
            lst = neg['NegotiateContextList']
            if lst and self.offer_posix:
                lst += b'\0' * (-len(lst) % 8)
                lst += struct.pack('<HHL', 0x100, 16, 0) + POSIX_TAG
                neg['NegotiateContextList'] = lst
                off, cnt, r = struct.unpack('<LHH', neg['ClientStartTime'])
                neg['ClientStartTime'] = struct.pack('<LHH', off, cnt + 1, r)
        mid = super().sendSMB(packet)
        # hashed as sent: sendSMB numbered it
        if packet['Command'] in (s3.SMB2_NEGOTIATE, s3.SMB2_SESSION_SETUP):
            self.hash(packet.getData())
        return mid

    def recvSMB(self, packetID=None):
        p = super().recvSMB(packetID)
        self.last = p
        if p['Command'] == s3.SMB2_NEGOTIATE:
            self.neg_raw = p.getData()
            self.hash(p.getData())
        elif p['Command'] == s3.SMB2_SESSION_SETUP and \
                p['Status'] == 0xC0000016:
            self.hash(p.getData())
        return p

    def login(self, *a, **kw):
        r = super().login(*a, **kw)
        if self._Connection['Dialect'] == s3.SMB2_DIALECT_311:
            self._Session['SigningKey'] = crypto.KDF_CounterMode(
                self._Session['SessionKey'], b"SMBSigningKey\x00",
                self.preauth, 128)
        return r


def neg_contexts(raw):
    """{type: [data...]} of a NEGOTIATE response (MS-SMB2 2.2.4)."""
    count = struct.unpack_from('<H', raw, 64 + 6)[0]
    off = struct.unpack_from('<L', raw, 64 + 60)[0]
    out = {}
    for _ in range(count):
        off = (off + 7) & ~7
        t, ln = struct.unpack_from('<HH', raw, off)
        out.setdefault(t, []).append(raw[off + 8:off + 8 + ln])
        off += 8 + ln
    return out


def login(user="alice", pw="alicepw1", offer=True):
    PosixSMB3.offer_posix = offer
    srv = PosixSMB3("127.0.0.1", "127.0.0.1", sess_port=PORT,
                    preferredDialect=s3.SMB2_DIALECT_311)
    srv._Connection["SupportsEncryption"] = False
    c = SMBConnection(existingConnection=srv)
    c.login(user, pw)
    return c, c.connectTree("share")


class Blob:
    def __init__(self, data):
        self.data = data

    def getData(self):
        return self.data


def posix_ctx(mode, data=None):
    data = struct.pack('<L', mode) if data is None else data
    return Blob(struct.pack('<LHHHHL', 0, 16, 16, 0, 32, len(data)) +
                POSIX_TAG + data)


def resp_contexts(srv):
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


def sid(buf, pos):
    rev, n = buf[pos], buf[pos + 1]
    auth = int.from_bytes(buf[pos + 2:pos + 8], 'big')
    subs = struct.unpack_from('<%dL' % n, buf, pos + 8)
    return "S-%d-%d%s" % (rev, auth, "".join("-%d" % s for s in subs)), \
        pos + 8 + 4 * n


def cc_decode(buf, pos=0):
    nlink, tag, wmode = struct.unpack_from('<LLL', buf, pos)
    owner, pos = sid(buf, pos + 12)
    group, pos = sid(buf, pos)
    mode = (wmode & 0o7777) | WIRE_TYPES[(wmode >> 12) & 7]
    return {"nlink": nlink, "tag": tag, "mode": mode, "owner": owner,
            "group": group}, pos


def info_decode(buf, pos=0):
    (ct, at, wt, cht, eof, alloc, attrs, ino, dev, _) = \
        struct.unpack_from('<QQQQQQLQLL', buf, pos)
    d, pos = cc_decode(buf, pos + 68)
    d.update(eof=eof, attrs=attrs, ino=ino)
    return d, pos


def dir_decode(buf):
    out, pos = {}, 0
    while True:
        nxt = struct.unpack_from('<L', buf, pos)[0]
        d, p = info_decode(buf, pos + 8)
        nlen = struct.unpack_from('<L', buf, p)[0]
        name = bytes(buf[p + 4:p + 4 + nlen]).decode('utf-16le')
        out[name] = d
        if nxt == 0:
            return out
        pos += nxt


def nfs_mode_sd(mode):
    """A self-relative SD whose DACL is one allow ACE for S-1-5-88-3-mode
    (what the Linux client and Samba use for a chmod)."""
    sid = bytes([1, 3, 0, 0, 0, 0, 0, 5]) + struct.pack('<LLL', 88, 3, mode)
    ace = struct.pack('<BBHL', 0, 0, 8 + len(sid), 0) + sid
    acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
    return struct.pack('<BBHLLLL', 1, 0, 0x8004, 0, 0, 0, 20) + acl


def create(c, t, name, ctxs=None, disp=s3.FILE_OPEN_IF,
           opts=s3.FILE_NON_DIRECTORY_FILE, access=None):
    access = access or (s3.FILE_READ_DATA | s3.FILE_WRITE_DATA |
                        s3.FILE_READ_ATTRIBUTES | s3.DELETE)
    return c.getSMBServer().create(t, name, access, ALL, opts, disp, 0,
                                   createContexts=ctxs)


def status(fn):
    try:
        fn()
        return "OK"
    except (SessionError, smb3.SessionError) as e:
        return name_of(e)


def case_posix():
    c, t = login()
    srv = c.getSMBServer()
    ctxs = neg_contexts(srv.neg_raw)
    check("the POSIX negotiate context is answered with our GUID",
          ctxs.get(0x100) == [POSIX_TAG], repr(ctxs.get(0x100)))
    pw = pwd.getpwnam("alice")
    owner, group = "S-1-22-1-%d" % pw.pw_uid, "S-1-22-2-%d" % pw.pw_gid

    fid = create(c, t, "PosixFile", [posix_ctx(0o640)],
                 disp=s3.FILE_CREATE)
    rc = resp_contexts(srv).get(POSIX_TAG)
    check("a POSIX create gets the POSIX response context", rc is not None,
          repr(resp_contexts(srv)))
    if rc is not None:
        d, _ = cc_decode(rc)
        check("its mode is a regular file 0640",
              d["mode"] == stat.S_IFREG | 0o640, oct(d["mode"]))
        check("its nlink is 1, reparse tag 0",
              d["nlink"] == 1 and d["tag"] == 0, repr(d))
        check("owner and group are the Unix SIDs", d["owner"] == owner and
              d["group"] == group, "%s %s" % (d["owner"], d["group"]))
    st = os.stat(os.path.join(SHARE, "PosixFile"))
    check("the file is 0640 on disk", stat.S_IMODE(st.st_mode) == 0o640,
          oct(st.st_mode))
    srv.writeFile(t, fid, b"x" * 5)
    q = srv.queryInfo(t, fid, fileInfoClass=POSIX_LEVEL)
    d, _ = info_decode(q)
    check("QUERY_INFO FILE_POSIX_INFORMATION: eof, mode, owner, inode",
          d["eof"] == 5 and d["mode"] == stat.S_IFREG | 0o640 and
          d["owner"] == owner and d["ino"] == st.st_ino, repr(d))

    # case sensitive on a POSIX handle, insensitive without
    s = status(lambda: srv.close(t, create(c, t, "posixfile",
                                            disp=s3.FILE_CREATE)))
    check("without the context, posixfile is PosixFile (collision)",
          s == "STATUS_OBJECT_NAME_COLLISION", s)
    fid2 = create(c, t, "posixfile", [posix_ctx(0o600)],
                  disp=s3.FILE_CREATE)
    check("with it, posixfile is another name",
          os.path.exists(os.path.join(SHARE, "posixfile")) and
          os.path.exists(os.path.join(SHARE, "PosixFile")),
          repr(os.listdir(SHARE)))
    srv.close(t, fid2)
    s = status(lambda: srv.close(t, create(c, t, "POSIXFILE",
                                            [posix_ctx(0o600)],
                                            disp=s3.FILE_OPEN)))
    check("a POSIX open of POSIXFILE finds neither",
          s == "STATUS_OBJECT_NAME_NOT_FOUND", s)

    # the POSIX level needs a POSIX handle
    fid3 = create(c, t, "PosixFile")
    s = status(lambda: srv.queryInfo(t, fid3, fileInfoClass=POSIX_LEVEL))
    check("QUERY_INFO POSIX level on a Windows handle: INVALID_LEVEL",
          s == "STATUS_INVALID_LEVEL", s)
    srv.close(t, fid3)

    # POSIX pathname rules: ':' is a name character
    fid4 = create(c, t, "a:b", [posix_ctx(0o644)], disp=s3.FILE_CREATE)
    srv.close(t, fid4)
    check("a POSIX create of a:b makes a file named a:b",
          os.path.isfile(os.path.join(SHARE, "a:b")), repr(os.listdir(SHARE)))

    # a directory with its mode
    dfid = create(c, t, "pdir", [posix_ctx(0o750)], disp=s3.FILE_CREATE,
                  opts=s3.FILE_DIRECTORY_FILE,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    d, _ = cc_decode(resp_contexts(srv)[POSIX_TAG])
    check("a POSIX mkdir: directory 0750 in the response and on disk",
          d["mode"] == stat.S_IFDIR | 0o750 and stat.S_IMODE(os.stat(
              os.path.join(SHARE, "pdir")).st_mode) == 0o750, oct(d["mode"]))
    srv.close(t, dfid)

    # a listing of the POSIX level through a POSIX handle of the root
    rfid = create(c, t, "", [posix_ctx(0)], opts=s3.FILE_DIRECTORY_FILE,
                  disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    ents = dir_decode(srv.queryDirectory(t, rfid, "*",
                                         informationClass=POSIX_LEVEL))
    check("QUERY_DIRECTORY POSIX: PosixFile 0640 with the Unix owner",
          ents.get("PosixFile", {}).get("mode") == stat.S_IFREG | 0o640 and
          ents["PosixFile"]["owner"] == owner, repr(ents.get("PosixFile")))
    lk = ents.get("link", {})
    check("a symlink is listed as a symlink reparse point, not followed",
          lk.get("mode", 0) & 0o170000 == stat.S_IFLNK and
          lk.get("tag") == 0xA000000C and lk.get("attrs", 0) & 0x400,
          repr(lk))
    ff = ents.get("fifo", {})
    check("a fifo is listed as a fifo",
          ff.get("mode", 0) & 0o170000 == stat.S_IFIFO, repr(ff))
    check("both spellings listed", "posixfile" in ents and "a:b" in ents,
          repr(sorted(ents)))
    srv.close(t, rfid)
    # impacket ignores enumRestart: a fresh handle for a new pattern
    rfid = create(c, t, "", [posix_ctx(0)], opts=s3.FILE_DIRECTORY_FILE,
                  disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    one = dir_decode(srv.queryDirectory(t, rfid, "posixfile",
                                        informationClass=POSIX_LEVEL))
    check("a POSIX listing matches names exactly", list(one) == ["posixfile"],
          repr(list(one)))
    srv.close(t, rfid)
    wfid = create(c, t, "", opts=s3.FILE_DIRECTORY_FILE, disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    s = status(lambda: srv.queryDirectory(t, wfid, "*",
                                          informationClass=POSIX_LEVEL))
    check("QUERY_DIRECTORY POSIX level on a Windows handle: INVALID_LEVEL",
          s == "STATUS_INVALID_LEVEL", s)
    srv.close(t, wfid)

    # chmod: a DACL of one ACE for S-1-5-88-3-MODE on a POSIX handle
    cfid = create(c, t, "PosixFile", [posix_ctx(0)], disp=s3.FILE_OPEN,
                  access=s3.READ_CONTROL | s3.WRITE_DAC |
                  s3.FILE_READ_ATTRIBUTES)
    srv.setInfo(t, cfid, nfs_mode_sd(0o604), infoType=3,
                additionalInformation=4)
    d, _ = info_decode(srv.queryInfo(t, cfid, fileInfoClass=POSIX_LEVEL))
    check("chmod 0604 through the NFS mode SID (on disk and POSIX stat)",
          stat.S_IMODE(os.stat(os.path.join(SHARE, "PosixFile")).st_mode) ==
          0o604 and d["mode"] == stat.S_IFREG | 0o604, oct(d["mode"]))
    srv.close(t, cfid)
    s = status(lambda: create(c, t, "bad", [posix_ctx(0, b"\0\0\0")]))
    check("a POSIX context of 3 bytes: INVALID_PARAMETER",
          s == "STATUS_INVALID_PARAMETER", s)
    try:
        srv.close(t, fid)
    except KeyError:
        pass    # impacket keys opens by name: fid3 took its entry


def case_off():
    """The server does not answer the context (config no, or not offered);
    a POSIX create context is then ignored."""
    c, t = login()
    srv = c.getSMBServer()
    ctxs = neg_contexts(srv.neg_raw)
    check("no POSIX negotiate context in the answer", 0x100 not in ctxs,
          repr(ctxs))
    fid = create(c, t, "OffFile", [posix_ctx(0o600)], disp=s3.FILE_CREATE)
    check("a POSIX create context is ignored (no response context)",
          POSIX_TAG not in resp_contexts(srv), repr(resp_contexts(srv)))
    srv.close(t, fid)


def case_unoffered():
    c, t = login(offer=False)
    srv = c.getSMBServer()
    check("not offered: not answered", 0x100 not in neg_contexts(srv.neg_raw))
    fid = create(c, t, "Unoffered", [posix_ctx(0o600)], disp=s3.FILE_CREATE)
    check("not negotiated: the create context is ignored",
          POSIX_TAG not in resp_contexts(srv), repr(resp_contexts(srv)))
    srv.close(t, fid)


{"posix": case_posix, "off": case_off,
 "unoffered": case_unoffered}[sys.argv[3]]()
