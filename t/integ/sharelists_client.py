# Client of t/integ/sharelists.sh: every write path on a tree the user may
# only read.  argv: PORT, USER, PASSWORD, SHARE, then "denied" (each write
# must fail with ACCESS_DENIED) or "allowed" (each must get past the
# share's rule: success, or a refusal that is not ACCESS_DENIED, such as
# NOT_SUPPORTED for block cloning on a file system without it).  The share
# holds "base.txt" (readable by all).  Prints one line "ok DESC" or
# "FAIL DESC: why" per check.  "setdacl NAME UID" instead stores on NAME a
# DACL granting everything to S-1-22-1-UID alone (the Windows lock:
# another user's kernel permission no longer suffices).
import os
import struct
import sys

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state_lib import status_of  # noqa: E402

PORT, USER, PW, SHARE, MODE = sys.argv[1:6]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RO = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES | s3.READ_CONTROL
WRITE_DAC = 0x00040000
DELETE = 0x00010000
FSCTL_SET_SPARSE = 0x000900C4
FSCTL_SET_ZERO_DATA = 0x000980C8
FSCTL_SET_REPARSE_POINT = 0x000900A4
FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078
FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2
FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344
FileBasicInformation = 4
FileRenameInformation = 10
FileDispositionInformation = 13
FileEndOfFileInformation = 20
DACL_SECURITY_INFORMATION = 4


def verdict(desc, st, also=()):
    denied = st == "STATUS_ACCESS_DENIED" or st in also
    good = denied if MODE == "denied" else not denied
    print(("ok %s %s: %s" % (USER, desc, st)) if good else
          ("FAIL %s %s: %s" % (USER, desc, st)), flush=True)


c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(PORT),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login(USER, PW)
srv = c.getSMBServer()
last = {}
recv = srv.recvSMB


def keep(*a, **kw):
    p = recv(*a, **kw)
    last["p"] = p
    return p


srv.recvSMB = keep
t = c.connectTree(SHARE)
srv.recvSMB = recv
tag = USER
raw = last["p"]["Data"]
raw = raw.getData() if hasattr(raw, "getData") else bytes(raw)
flags, maxacc = struct.unpack_from("<L", raw, 4)[0], \
    struct.unpack_from("<L", raw, 12)[0]
if MODE in ("denied", "allowed"):
    want = 0x001200A9 if MODE == "denied" else 0x001F01FF
    print(("ok" if maxacc == want else "FAIL") +
          " %s TREE_CONNECT maximal access 0x%08x" % (USER, maxacc), flush=True)
if MODE == "setdacl":
    print(("ok" if flags & 0x800 else "FAIL") +
          " [%s] TREE_CONNECT says SMB2_SHAREFLAG_ACCESS_BASED_DIRECTORY_ENUM"
          " (0x%08x)" % (SHARE, flags), flush=True)

if MODE == "setdacl":
    sid = struct.pack("<BB", 1, 2) + (22).to_bytes(6, "big") + \
        struct.pack("<LL", 1, int(sys.argv[7]))
    ace = struct.pack("<BBHL", 0, 0, 8 + len(sid), 0x001F01FF) + sid
    acl = struct.pack("<BBHHH", 2, 0, 8 + len(ace), 1, 0) + ace
    sd = struct.pack("<BBHLLLL", 1, 0, 0x8004, 0, 0, 0, 20) + acl
    fid = srv.create(t, sys.argv[6], RO | WRITE_DAC, ALL,
                     s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    verdict("stores a DACL for %s alone on %s" % (USER, sys.argv[6]),
            status_of(lambda: srv.setInfo(t, fid, sd, s3.SMB2_0_INFO_SECURITY,
                                          0, DACL_SECURITY_INFORMATION)))
    srv.close(t, fid)
    sys.exit(0)


def create(name, access, disp, opts=s3.FILE_NON_DIRECTORY_FILE):
    fid = srv.create(t, name, access, ALL, opts, disp, 0)
    srv.close(t, fid)


# CREATE asking for a write right, or with a disposition that creates
for desc, access, disp in (
        ("CREATE FILE_WRITE_DATA", s3.FILE_WRITE_DATA, s3.FILE_OPEN),
        ("CREATE FILE_APPEND_DATA", s3.FILE_APPEND_DATA, s3.FILE_OPEN),
        ("CREATE FILE_WRITE_ATTRIBUTES", s3.FILE_WRITE_ATTRIBUTES,
         s3.FILE_OPEN),
        ("CREATE DELETE", DELETE, s3.FILE_OPEN),
        ("CREATE WRITE_DAC", WRITE_DAC, s3.FILE_OPEN),
        ("CREATE OVERWRITE_IF", s3.FILE_READ_DATA, s3.FILE_OVERWRITE_IF),
        ("CREATE SUPERSEDE", s3.FILE_READ_DATA, s3.FILE_SUPERSEDE)):
    verdict(desc, status_of(lambda: create("base.txt", access, disp)))
verdict("CREATE FILE_CREATE of a new name", status_of(
    lambda: create("new-%s.txt" % tag, s3.FILE_READ_DATA, s3.FILE_CREATE)))
verdict("CREATE a directory", status_of(
    lambda: create("dir-%s" % tag, s3.FILE_READ_DATA, s3.FILE_CREATE,
                   s3.FILE_DIRECTORY_FILE)))
# a new named stream of an existing file (an xattr written) asking only
# to read: OPEN_IF of the file itself is an open, of a new stream a create
verdict("CREATE OPEN_IF of a new named stream", status_of(
    lambda: create("base.txt:new-%s" % tag, s3.FILE_READ_DATA,
                   s3.FILE_OPEN_IF)))
verdict("CREATE delete-on-close", status_of(
    lambda: create("base.txt", DELETE | s3.FILE_READ_DATA, s3.FILE_OPEN,
                   s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE)
    if MODE == "denied" else None))

# The handle paths: a handle with every right the tree lets the user have
# (read only: a read handle).  Each write through it must be refused.
if MODE == "denied":
    access = RO
else:
    access = RO | s3.FILE_WRITE_DATA | s3.FILE_WRITE_ATTRIBUTES | \
        WRITE_DAC | DELETE
srv.close(t, srv.create(t, "work-%s.txt" % tag, access, ALL,
                        s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0)
          if MODE == "allowed" else
          srv.create(t, "base.txt", RO, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN, 0))
target = "work-%s.txt" % tag if MODE == "allowed" else "base.txt"
fid = srv.create(t, target, access, ALL, s3.FILE_NON_DIRECTORY_FILE,
                 s3.FILE_OPEN, 0)
src = srv.create(t, "base.txt", RO, ALL, s3.FILE_NON_DIRECTORY_FILE,
                 s3.FILE_OPEN, 0)

verdict("WRITE", status_of(lambda: srv.write(t, fid, b"x", 0, 1)))
verdict("SET_INFO FileBasicInformation", status_of(lambda: srv.setInfo(
    t, fid, struct.pack("<QQQQLL", 0, 0, 0, 0, 0x80, 0),
    s3.SMB2_0_INFO_FILE, FileBasicInformation)))
verdict("SET_INFO FileEndOfFileInformation", status_of(lambda: srv.setInfo(
    t, fid, struct.pack("<Q", 4), s3.SMB2_0_INFO_FILE,
    FileEndOfFileInformation)))
sd = srv.queryInfo(t, fid, b"", s3.SMB2_0_INFO_SECURITY, 0,
                   DACL_SECURITY_INFORMATION)
verdict("SET_INFO security (DACL)", status_of(lambda: srv.setInfo(
    t, fid, sd, s3.SMB2_0_INFO_SECURITY, 0, DACL_SECURITY_INFORMATION)))


def ioctl(code, blob, handle=None):
    return srv.ioctl(t, handle or fid, code, s3.SMB2_0_IOCTL_IS_FSCTL,
                     blob, maxOutputResponse=4096)


verdict("FSCTL_SET_SPARSE", status_of(lambda: ioctl(FSCTL_SET_SPARSE,
                                                    b"\x01")))
verdict("FSCTL_SET_ZERO_DATA", status_of(lambda: ioctl(
    FSCTL_SET_ZERO_DATA, struct.pack("<QQ", 0, 1))))
# a symlink reparse buffer (MS-FSCC 2.1.2.4), relative, to "base.txt"
tgt = "base.txt".encode("utf-16-le")
body = struct.pack("<HHHHL", 0, len(tgt), len(tgt), len(tgt), 1) + tgt + tgt
verdict("FSCTL_SET_REPARSE_POINT", status_of(lambda: ioctl(
    FSCTL_SET_REPARSE_POINT,
    struct.pack("<LHH", 0xA000000C, len(body), 0) + body)))
key = ioctl(FSCTL_SRV_REQUEST_RESUME_KEY, b"", src)[:24]
verdict("FSCTL_SRV_COPYCHUNK_WRITE target", status_of(lambda: ioctl(
    FSCTL_SRV_COPYCHUNK_WRITE,
    key + struct.pack("<LL", 1, 0) + struct.pack("<QQLL", 0, 0, 4, 0))))
verdict("FSCTL_DUPLICATE_EXTENTS_TO_FILE target", status_of(lambda: ioctl(
    FSCTL_DUPLICATE_EXTENTS_TO_FILE,
    src.getData() + struct.pack("<QQQ", 0, 0, 4096)
    if hasattr(src, "getData") else bytes(src) +
    struct.pack("<QQQ", 0, 0, 4096))),
    # a file system that cannot clone refuses it before the handle's rights
    ("STATUS_INVALID_DEVICE_REQUEST",) if MODE == "denied" else ())
if MODE == "denied":
    verdict("SET_INFO rename", status_of(lambda: srv.setInfo(
        t, fid, struct.pack("<B7sQL", 0, b"", 0, 8) + "r.tx".encode(
            "utf-16-le"), s3.SMB2_0_INFO_FILE, FileRenameInformation)))
    verdict("SET_INFO delete disposition", status_of(lambda: srv.setInfo(
        t, fid, b"\x01", s3.SMB2_0_INFO_FILE, FileDispositionInformation)))
for h in (src, fid):
    try:
        srv.close(t, h)
    except KeyError:
        pass	# impacket's table keeps one entry per name: two were open
if MODE == "allowed":
    verdict("rename", status_of(lambda: c.rename(
        SHARE, "work-%s.txt" % tag, "moved-%s.txt" % tag)))
    verdict("delete", status_of(lambda: c.deleteFile(
        SHARE, "moved-%s.txt" % tag)))
else:
    verdict("rename", status_of(lambda: c.rename(SHARE, "base.txt",
                                                 "moved.txt")))
    verdict("delete", status_of(lambda: c.deleteFile(SHARE, "base.txt")))
c.logoff()

# POSIX chmod (SMB 3.1.1 POSIX extensions: a DACL of one S-1-5-88-3-MODE
# ACE on a POSIX handle), with the rights the tree allows
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posix_lib import connect, nfs_mode_sd, posix_ctx  # noqa: E402

pc = connect(int(PORT), USER, PW)
psrv = pc.getSMBServer()
pt = pc.connectTree(SHARE)
paccess = s3.READ_CONTROL | s3.FILE_READ_ATTRIBUTES | \
    (WRITE_DAC if MODE == "allowed" else 0)
if MODE == "allowed":
    pfid = psrv.create(pt, "posix-%s.txt" % tag, paccess | s3.FILE_WRITE_DATA,
                       ALL, 0, s3.FILE_OPEN_IF, 0,
                       createContexts=[posix_ctx(0o644)])
else:
    pfid = psrv.create(pt, "base.txt", paccess, ALL, 0, s3.FILE_OPEN, 0,
                       createContexts=[posix_ctx(0)])
verdict("POSIX chmod", status_of(lambda: psrv.setInfo(
    pt, pfid, nfs_mode_sd(0o666), infoType=3, additionalInformation=4)))
psrv.close(pt, pfid)
pc.logoff()
