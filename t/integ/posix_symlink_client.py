# Client of t/integ/posix.sh: symlinks and special files over SMB3 POSIX
# (issue 16).  The Linux client's way: a CREATE (FILE_CREATE,
# FILE_OPEN_REPARSE_POINT) of an empty file, then FSCTL_SET_REPARSE_POINT
# with a symlink (MS-FSCC 2.1.2.4) or NFS (2.1.2.6) buffer; reading back
# with FSCTL_GET_REPARSE_POINT; opening without the flag stops on the link
# (STATUS_STOPPED_ON_SYMLINK and the MS-SMB2 2.2.2.2.1 response) and never
# gives the target's data; rename and delete of the link itself.
# argv: PORT SHARE_DIR.  Prints "ok DESC" or "FAIL DESC: why" per check.
import os
import pwd
import stat
import struct
import sys

from impacket import smb3
from impacket import smb3structs as s3
from impacket.smbconnection import SessionError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posix_lib import POSIX_LEVEL, connect, dir_decode, info_decode, \
    posix_ctx  # noqa: E402

PORT = int(sys.argv[1])
SHARE = sys.argv[2]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
REPARSE = 0x00200000            # FILE_OPEN_REPARSE_POINT
FSCTL_SET = 0x000900A4
FSCTL_GET = 0x000900A8
TAG_SYMLINK, TAG_NFS = 0xA000000C, 0x80000014
NFS_FIFO, NFS_SOCK, NFS_CHR = 0x4F464946, 0x4B434F53, 0x524843
STOPPED = 0x8000002D
NOT_HANDLED = 0xC0000279
ACCESS_DENIED = 0xC0000022
DATA_INVALID = 0xC0000278
RW_ATTR = s3.FILE_READ_ATTRIBUTES | s3.FILE_WRITE_ATTRIBUTES | s3.DELETE | \
    s3.SYNCHRONIZE


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def code(fn):
    try:
        fn()
        return 0
    except (SessionError, smb3.SessionError) as e:
        return e.get_error_code() if hasattr(e, "get_error_code") \
            else e.error


def symlink_buf(target, flags):
    t = target.encode('utf-16le')
    return struct.pack('<LHHHHHHL', TAG_SYMLINK, 12 + 2 * len(t), 0, 0,
                       len(t), len(t), len(t), flags) + t + t


def nfs_buf(typ, data=b""):
    return struct.pack('<LHHQ', TAG_NFS, 8 + len(data), 0, typ) + data


class Client:
    def __init__(self):
        self.c = connect(PORT, "alice", "alicepw1")
        self.t = self.c.connectTree("share")
        self.srv = self.c.getSMBServer()

    def create(self, name, opts=0, disp=s3.FILE_OPEN, access=RW_ATTR,
               posix=True, mode=0o644):
        return self.srv.create(self.t, name, access, ALL, opts, disp, 0,
                               createContexts=[posix_ctx(mode)] if posix
                               else None)

    def make(self, name, buf, mode=0o644):
        """CREATE + SET_REPARSE_POINT + CLOSE, as the Linux client does."""
        fid = self.create(name, s3.FILE_NON_DIRECTORY_FILE | REPARSE,
                          s3.FILE_CREATE, mode=mode)
        try:
            return code(lambda: self.srv.ioctl(
                self.t, fid, FSCTL_SET, s3.SMB2_0_IOCTL_IS_FSCTL, buf,
                maxOutputResponse=0))
        finally:
            self.srv.close(self.t, fid)

    def get(self, name, posix=True):
        fid = self.create(name, REPARSE, posix=posix)
        try:
            return bytes(self.srv.ioctl(self.t, fid, FSCTL_GET,
                                        s3.SMB2_0_IOCTL_IS_FSCTL, b"",
                                        maxOutputResponse=65536))
        finally:
            self.srv.close(self.t, fid)

    def error_data(self):
        """The ErrorData of the last error response (its one context's
        data on 3.1.1)."""
        raw = self.srv.last['Data']
        raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
        _, count, _, nbytes = struct.unpack_from('<HBBL', raw, 0)
        data = raw[8:8 + nbytes]
        if count:
            dlen = struct.unpack_from('<L', data, 0)[0]
            data = data[8:8 + dlen]
        return data

    def rename(self, fid, new):
        req = s3.FILE_RENAME_INFORMATION_TYPE_2()
        req['ReplaceIfExists'] = 0
        req['RootDirectory'] = b'\0' * 8
        req['FileNameLength'] = len(new) * 2
        req['FileName'] = new.encode('utf-16le')
        self.srv.setInfo(self.t, fid, req, infoType=s3.SMB2_0_INFO_FILE,
                         fileInfoClass=s3.SMB2_FILE_RENAME_INFO)


def symlink_error(data):
    """MS-SMB2 2.2.2.2.1 -> (target, unparsed, flags) or None."""
    if len(data) < 28:
        return None
    ln, tag, rtag, rlen, unparsed, so, sl, po, pl, flags = \
        struct.unpack_from('<LLLHHHHHHL', data, 0)
    if tag != 0x4C4D5953 or rtag != TAG_SYMLINK or ln != len(data) - 4:
        return None
    return data[28 + so:28 + so + sl].decode('utf-16le'), unparsed, flags


def case_symlink():
    cl = Client()
    srv, t = cl.srv, cl.t
    uid = pwd.getpwnam("alice").pw_uid
    p = lambda n: os.path.join(SHARE, n)   # noqa: E731

    # creating: a link inside the share and one to /etc/passwd
    bin_ = symlink_buf("sub/inner.txt", 1)
    bout = symlink_buf("/etc/passwd", 0)
    check("SET_REPARSE_POINT symlink -> sub/inner.txt succeeds",
          cl.make("lnk_in", bin_) == 0)
    check("SET_REPARSE_POINT symlink -> /etc/passwd succeeds",
          cl.make("lnk_out", bout) == 0)
    for n, tgt in (("lnk_in", "sub/inner.txt"), ("lnk_out", "/etc/passwd")):
        st = os.lstat(p(n))
        check("%s is a symlink to %s on disk, owned by alice" % (n, tgt),
              stat.S_ISLNK(st.st_mode) and os.readlink(p(n)) == tgt and
              st.st_uid == uid, "%o %s %d" % (st.st_mode, os.readlink(p(n))
                                              if stat.S_ISLNK(st.st_mode)
                                              else "-", st.st_uid))
    # the symlink form's Windows separators (the Linux client sends
    # \etc\passwd even on a POSIX mount): '/' on disk
    check("SET_REPARSE_POINT symlink -> sub\\inner.txt succeeds",
          cl.make("lnk_bs", symlink_buf("sub\\inner.txt", 1)) == 0)
    check("... a symlink to sub/inner.txt on disk",
          os.readlink(p("lnk_bs")) == "sub/inner.txt",
          os.readlink(p("lnk_bs")))
    # an absolute target as the 6.12 client sends it: no leading
    # separator, flags 0
    check("SET_REPARSE_POINT symlink -> etc\\passwd, absolute",
          cl.make("lnk_abs", symlink_buf("etc\\passwd", 0)) == 0)
    check("... a symlink to /etc/passwd on disk",
          os.readlink(p("lnk_abs")) == "/etc/passwd",
          os.readlink(p("lnk_abs")))
    check("/etc/passwd is untouched", os.path.isfile("/etc/passwd") and
          not os.path.islink("/etc/passwd"))

    # reading back, byte-exact
    got = cl.get("lnk_in")
    check("GET_REPARSE_POINT of lnk_in gives back the buffer set",
          got == bin_, got.hex())
    got = cl.get("lnk_out")
    check("GET_REPARSE_POINT of lnk_out gives back the buffer set",
          got == bout, got.hex())
    got = cl.get("lnk_out", posix=False)
    check("... also on a Windows handle opened with OPEN_REPARSE_POINT",
          got == bout, got.hex())
    s = code(lambda: cl.get("sub/inner.txt"))
    check("GET_REPARSE_POINT of a plain file: NOT_A_REPARSE_POINT",
          s == 0xC0000275, hex(s))

    # listed as symlinks
    rfid = cl.create("", s3.FILE_DIRECTORY_FILE,
                     access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                     mode=0)
    ents = dir_decode(srv.queryDirectory(t, rfid, "*",
                                         informationClass=POSIX_LEVEL))
    srv.close(t, rfid)
    for n in ("lnk_in", "lnk_out"):
        e = ents.get(n, {})
        check("%s listed as a symlink reparse point" % n,
              e.get("mode", 0) & 0o170000 == stat.S_IFLNK and
              e.get("tag") == TAG_SYMLINK, repr(e))

    # QUERY_INFO of the link itself
    fid = cl.create("lnk_out", REPARSE)
    d, _ = info_decode(srv.queryInfo(t, fid, fileInfoClass=POSIX_LEVEL))
    check("QUERY_INFO POSIX of lnk_out: a symlink, tag, owner alice",
          d["mode"] & 0o170000 == stat.S_IFLNK and d["tag"] == TAG_SYMLINK
          and d["owner"] == "S-1-22-1-%d" % uid and
          d["attrs"] & 0x400, repr(d))
    basic = bytes(srv.queryInfo(t, fid, fileInfoClass=4))
    check("FileBasicInformation: FILE_ATTRIBUTE_REPARSE_POINT",
          struct.unpack_from('<L', basic, 32)[0] & 0x400, basic.hex())
    tag = bytes(srv.queryInfo(t, fid, fileInfoClass=35))
    check("FileAttributeTagInformation: the symlink tag",
          struct.unpack('<LL', tag) == (struct.unpack_from('<L', basic,
                                                            32)[0],
                                        TAG_SYMLINK), tag.hex())
    s = code(lambda: srv.read(t, fid, 0, 100))
    check("READ on the link's handle gives no data", s != 0, hex(s))
    srv.close(t, fid)

    # never followed: the contents of /etc/passwd never come back
    s = code(lambda: cl.create("lnk_out", access=s3.FILE_READ_DATA))
    target = symlink_error(cl.error_data()) if s == STOPPED else None
    check("a POSIX open of lnk_out: STOPPED_ON_SYMLINK", s == STOPPED,
          hex(s))
    check("... with the symlink error response (/etc/passwd, unparsed 0)",
          target is not None and target[0] == "/etc/passwd" and
          target[1] == 0 and target[2] == 0, repr(target))
    s = code(lambda: cl.create("lnk_out", access=s3.FILE_READ_DATA,
                               posix=False))
    check("a Windows open of lnk_out is refused", s == ACCESS_DENIED,
          hex(s))
    fid = cl.create("lnk_out", REPARSE, access=s3.FILE_READ_DATA |
                    s3.FILE_READ_ATTRIBUTES)
    data = b""
    try:
        data = srv.read(t, fid, 0, 4096)
    except (SessionError, smb3.SessionError):
        pass
    check("reading an OPEN_REPARSE_POINT handle of lnk_out gives nothing",
          b"root:" not in data, repr(data[:40]))
    srv.close(t, fid)

    # a link to a file of alice's outside the share: whatever is done
    # through the link's own handle, the file is never reached
    out = os.environ["OUTSIDE"]
    before = (os.stat(out), os.listxattr(out), open(out, "rb").read())
    s = code(lambda: cl.create("lnk_alice", access=s3.FILE_READ_DATA |
                               s3.FILE_WRITE_DATA, posix=False))
    check("a Windows open of a link to alice's file outside: refused",
          s == ACCESS_DENIED, hex(s))
    fid = cl.create("lnk_alice", REPARSE, posix=False,
                    access=s3.FILE_READ_DATA | s3.FILE_WRITE_DATA |
                    s3.FILE_WRITE_ATTRIBUTES | s3.FILE_WRITE_EA |
                    s3.FILE_READ_ATTRIBUTES)
    tries = [
        code(lambda: srv.writeFile(t, fid, b"evil")),
        code(lambda: srv.setInfo(t, fid, struct.pack('<QQQQLL', 0, 0,
                                                     116444736000000000,
                                                     0, 0, 0),
                                 fileInfoClass=4)),
        code(lambda: srv.setInfo(t, fid, struct.pack('<Q', 0),
                                 fileInfoClass=20)),
        code(lambda: srv.setInfo(t, fid, struct.pack('<LBBH', 0, 0, 4, 4) +
                                 b"evil\0evil", fileInfoClass=15)),
        code(lambda: srv.close(t, cl.create("lnk_alice:evil", REPARSE,
                                            s3.FILE_OPEN_IF, posix=False,
                                            access=s3.FILE_WRITE_DATA))),
    ]
    srv.close(t, fid)
    after = (os.stat(out), os.listxattr(out), open(out, "rb").read())
    check("writes, times, size, EAs, streams through the link's handle "
          "never reach the outside file",
          before[0].st_mtime_ns == after[0].st_mtime_ns and
          before[0].st_size == after[0].st_size and before[1:] == after[1:]
          and after[2] == b"mine\n", "%r %r" % ([hex(x) for x in tries],
                                                  after[1:]))

    # a link before the last component
    check("SET_REPARSE_POINT symlink lnk_dir -> sub",
          cl.make("lnk_dir", symlink_buf("sub", 1)) == 0)
    s = code(lambda: cl.create("lnk_dir/inner.txt",
                               access=s3.FILE_READ_DATA))
    target = symlink_error(cl.error_data()) if s == STOPPED else None
    check("a POSIX open of lnk_dir/inner.txt stops on lnk_dir, 20 bytes "
          "unparsed", target is not None and target[0] == "sub" and
          target[1] == 20 and target[2] == 1, "%x %r" % (s, target))
    fid = cl.create("lnk_dir/inner.txt", access=s3.FILE_READ_DATA,
                    posix=False)
    check("a Windows open of lnk_dir/inner.txt follows it within the share",
          srv.read(t, fid, 0, 100) == b"inner\n")
    srv.close(t, fid)

    # special files
    check("SET_REPARSE_POINT NFS FIFO succeeds",
          cl.make("pfifo", nfs_buf(NFS_FIFO), 0o640) == 0)
    st = os.lstat(p("pfifo"))
    check("pfifo is a FIFO 0640 on disk, owned by alice",
          stat.S_ISFIFO(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640
          and st.st_uid == uid, "%o %d" % (st.st_mode, st.st_uid))
    got = cl.get("pfifo")
    check("GET_REPARSE_POINT of pfifo: the NFS FIFO buffer",
          got == nfs_buf(NFS_FIFO), got.hex())
    check("SET_REPARSE_POINT NFS SOCK succeeds",
          cl.make("psock", nfs_buf(NFS_SOCK)) == 0)
    check("psock is a socket on disk",
          stat.S_ISSOCK(os.lstat(p("psock")).st_mode))
    s = cl.make("pchr", nfs_buf(NFS_CHR, struct.pack('<LL', 1, 3)))
    check("an NFS character device is refused: ACCESS_DENIED",
          s == ACCESS_DENIED and not stat.S_ISCHR(os.lstat(
              p("pchr")).st_mode), hex(s))
    s = cl.make("pbad", symlink_buf("x", 0)[:-2])
    check("a malformed buffer: IO_REPARSE_DATA_INVALID",
          s == DATA_INVALID and stat.S_ISREG(os.lstat(p("pbad")).st_mode),
          hex(s))
    s = code(lambda: cl.create("fifo", access=s3.FILE_READ_DATA,
                               posix=False))
    check("a Windows open of a FIFO without OPEN_REPARSE_POINT: "
          "IO_REPARSE_TAG_NOT_HANDLED", s == NOT_HANDLED, hex(s))

    # rename and delete the objects themselves
    for old, new in (("lnk_in", "lnk_in2"), ("pfifo", "pfifo2")):
        fid = cl.create(old, REPARSE)
        cl.rename(fid, new)
        srv.close(t, fid)
        check("rename %s -> %s moves the object itself" % (old, new),
              not os.path.lexists(p(old)) and os.path.lexists(p(new)) and
              (os.readlink(p(new)) == "sub/inner.txt" if old == "lnk_in"
               else stat.S_ISFIFO(os.lstat(p(new)).st_mode)) and
              os.path.isfile(p("sub/inner.txt")))
    for n in ("lnk_out", "pfifo2", "lnk_dir"):
        fid = cl.create(n, REPARSE | s3.FILE_DELETE_ON_CLOSE)
        srv.close(t, fid)
        check("delete-on-close of %s removes it, not its target" % n,
              not os.path.lexists(p(n)) and os.path.isfile("/etc/passwd")
              and os.path.isdir(p("sub")))


{"symlink": case_symlink}[sys.argv[3]]()
