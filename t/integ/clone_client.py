# Client of t/integ/clone.sh: FSCTL_DUPLICATE_EXTENTS_TO_FILE on a share
# whose file system shares blocks and on one that cannot.  argv: PORT,
# the share's directory on disk, then "xfs" (share "xfs", an XFS made
# with reflink: every check), "basic NAME" (another share that clones:
# the bit and one clone) or "plain NAME" (share NAME, which does not).  Prints one line
# "ok DESC" or "FAIL DESC: why" per check; sharing is read on disk with
# FIEMAP.
import fcntl
import os
import struct
import sys

from impacket import smb3structs as s3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state_lib import ALL, login, status_of, lock  # noqa: E402

XFS_DIR = EXT_DIR = sys.argv[2]
FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344
FILE_SUPPORTS_BLOCK_REFCOUNTING = 0x08000000
FileFsAttributeInformation = 5
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_SHARED = 0x2000
LOCK_EXCLUSIVE = 0x2
LOCK_FAIL_IMMEDIATELY = 0x10
UNIT = 4096
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA | s3.FILE_READ_ATTRIBUTES
RO = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def connect(user, share):
    c, _ = login(user)
    return c, c.connectTree(share)


def open_(c, t, name, access=RW, disp=s3.FILE_OPEN):
    return c.getSMBServer().create(t, name, access, ALL,
                                   s3.FILE_NON_DIRECTORY_FILE, disp, 0)


def write(c, t, fid, data, off=0):
    c.getSMBServer().write(t, fid, data, off, len(data))


def read(c, t, fid, off, n):
    out = b""
    while len(out) < n:
        chunk = c.getSMBServer().read(t, fid, off + len(out),
                                      min(65536, n - len(out)))
        if not chunk:
            break
        out += chunk
    return out


def set_eof(c, t, fid, size):
    c.getSMBServer().setInfo(t, fid, inputBlob=struct.pack("<Q", size),
                             infoType=s3.SMB2_0_INFO_FILE,
                             fileInfoClass=s3.SMB2_FILE_END_OF_FILE_INFO)


def fs_attrs(c, t, fid):
    b = c.getSMBServer().queryInfo(t, fid,
                                   infoType=s3.SMB2_0_INFO_FILESYSTEM,
                                   fileInfoClass=FileFsAttributeInformation)
    return struct.unpack_from("<L", b)[0]


def dup(c, t, dst, src, src_off, dst_off, count):
    """FSCTL_DUPLICATE_EXTENTS_TO_FILE on dst: MS-FSCC 2.3.7.2."""
    blob = bytes(src) + struct.pack("<QQQ", src_off, dst_off, count)
    return status_of(lambda: c.getSMBServer().ioctl(
        t, dst, FSCTL_DUPLICATE_EXTENTS_TO_FILE, flags=1, inputBlob=blob,
        maxInputResponse=0, maxOutputResponse=0))


def extents(path):
    """(logical, physical, length, flags) of each extent, by FIEMAP."""
    n = 64
    req = struct.pack("<QQLLLL", 0, 2**64 - 1, FIEMAP_FLAG_SYNC, 0, n, 0)
    buf = bytearray(req + b"\0" * (56 * n))
    with open(path, "rb") as f:
        fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
    mapped = struct.unpack_from("<L", buf, 20)[0]
    out = []
    for i in range(mapped):
        lo, ph, ln, _, _, fl = struct.unpack_from("<QQQQQL", buf, 32 + 56 * i)
        out.append((lo, ph, ln, fl))
    return out


def shared_with(a, b):
    """Every extent of b is flagged shared and lies where a's data is."""
    ea, eb = extents(a), extents(b)
    if not eb:
        return False, "no extents in %s" % b
    phys = {(lo, ph) for lo, ph, _, _ in ea}
    for lo, ph, _, fl in eb:
        if not fl & FIEMAP_EXTENT_SHARED or (lo, ph) not in phys:
            return False, "a: %s b: %s" % (ea, eb)
    return True, ""


def ondisk(name, n):
    with open(os.path.join(XFS_DIR, name), "rb") as f:
        return f.read(n)


def pattern(n, seed):
    return bytes((i * 7 + seed + (i >> 12)) & 0xFF for i in range(n))


def local(path, data, mode=0o666):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def cmd_xfs():
    a, at = connect("alice", "xfs")
    size = 256 * 1024
    data = pattern(size, 1)
    local(os.path.join(XFS_DIR, "src.bin"), data)
    local(os.path.join(XFS_DIR, "dst.bin"), b"")
    src = open_(a, at, "src.bin")
    dst = open_(a, at, "dst.bin")
    attrs = fs_attrs(a, at, src)
    check("xfs share: FileFsAttributeInformation has "
          "FILE_SUPPORTS_BLOCK_REFCOUNTING",
          attrs & FILE_SUPPORTS_BLOCK_REFCOUNTING, "attrs %#x" % attrs)

    st = dup(a, at, dst, src, 0, 0, size)
    check("a clone past the target's end of file succeeds and does not "
          "grow it", st == "OK" and
          os.path.getsize(os.path.join(XFS_DIR, "dst.bin")) == 0,
          "%s, size %d" % (st, os.path.getsize(
              os.path.join(XFS_DIR, "dst.bin"))))
    set_eof(a, at, dst, size)
    st = dup(a, at, dst, src, 0, 0, size)
    got = read(a, at, dst, 0, size)
    check("clone of 256 KiB: SUCCESS, the target reads the source's data",
          st == "OK" and got == data, "%s, equal %s" % (st, got == data))
    ok, why = shared_with(os.path.join(XFS_DIR, "src.bin"),
                          os.path.join(XFS_DIR, "dst.bin"))
    check("the two files share their extents (FIEMAP_EXTENT_SHARED, same "
          "physical blocks)", ok, why)
    write(a, at, dst, b"Z" * 100, UNIT)
    check("a write to the target leaves the source as it was",
          read(a, at, src, 0, size) == data and
          read(a, at, dst, UNIT, 100) == b"Z" * 100)

    st = dup(a, at, dst, src, 100, 0, UNIT)
    check("an unaligned source offset: STATUS_INVALID_PARAMETER",
          st == "STATUS_INVALID_PARAMETER", st)
    st = dup(a, at, dst, src, 0, 0, UNIT + 1)
    check("an unaligned ByteCount inside the source: "
          "STATUS_INVALID_PARAMETER", st == "STATUS_INVALID_PARAMETER", st)
    st = dup(a, at, dst, src, 0, 0, size + UNIT)
    check("a range past the source's last cluster: STATUS_NOT_SUPPORTED",
          st == "STATUS_NOT_SUPPORTED", st)
    st = dup(a, at, src, src, 0, UNIT, 2 * UNIT)
    check("overlapping ranges of one file: STATUS_NOT_SUPPORTED",
          st == "STATUS_NOT_SUPPORTED", st)

    # Windows' copy engine: the target's end of file set to the source's,
    # the count rounded up to a whole cluster.
    tail = pattern(5000, 9)
    local(os.path.join(XFS_DIR, "tail.bin"), tail)
    local(os.path.join(XFS_DIR, "tailcopy.bin"), b"")
    ts = open_(a, at, "tail.bin")
    td = open_(a, at, "tailcopy.bin")
    set_eof(a, at, td, 5000)
    st = dup(a, at, td, ts, 0, 0, 2 * UNIT)
    check("a 5000-byte file cloned whole with the count rounded up to the "
          "cluster: SUCCESS, same data, size kept",
          st == "OK" and read(a, at, td, 0, 5000) == tail and
          os.path.getsize(os.path.join(XFS_DIR, "tailcopy.bin")) == 5000,
          st)
    # its partial last cluster into the middle of a larger target: Linux
    # shares a partial cluster only at the end of both files, so usmbd
    # shares the whole clusters and copies the rest, zeros past the
    # source's end of file (what ReFS's shared cluster would read)
    local(os.path.join(XFS_DIR, "big.bin"), b"b" * (4 * UNIT))
    bd = open_(a, at, "big.bin")
    st = dup(a, at, bd, ts, 0, 0, 2 * UNIT)
    want = tail + b"\0" * (2 * UNIT - 5000) + b"b" * (2 * UNIT)
    ext = extents(os.path.join(XFS_DIR, "big.bin"))
    check("a partial last cluster into the middle of a target: SUCCESS, "
          "the source's bytes then zeros to the cluster's end, the rest "
          "kept, the whole cluster shared",
          st == "OK" and ondisk("big.bin", 8 * UNIT) == want and
          ext and ext[0][0] == 0 and ext[0][3] & FIEMAP_EXTENT_SHARED,
          "%s, equal %s, extents %s" % (st, ondisk("big.bin", 8 * UNIT) ==
                                        want, ext))
    # a target whose end of file cuts the range inside a cluster while
    # the source goes on
    local(os.path.join(XFS_DIR, "short.bin"), b"c" * 5000)
    sd = open_(a, at, "short.bin")
    st = dup(a, at, sd, src, 0, 0, 2 * UNIT)
    check("a range cut by the target's end of file inside a cluster: "
          "SUCCESS, the target reads the source, its size kept",
          st == "OK" and ondisk("short.bin", 3 * UNIT) == data[:5000], st)

    # Byte-range locks: ReFS does not check them for a clone (smbtorture's
    # dup_extents_src_lock / dest_lock, run against Windows Server 2016);
    # a WRITE over the same range is refused.
    b, bt = connect("bob", "xfs")
    bdst = open_(b, bt, "dst.bin")
    lock(b, bt, bdst, 0, 2 * UNIT, LOCK_EXCLUSIVE | LOCK_FAIL_IMMEDIATELY)
    wst = status_of(lambda: write(a, at, dst, b"x", 0))
    st = dup(a, at, dst, src, 0, 0, 2 * UNIT)
    check("bob's exclusive lock on the target: alice's WRITE there is "
          "refused (FILE_LOCK_CONFLICT), her clone there is not (as ReFS)",
          wst == "STATUS_FILE_LOCK_CONFLICT" and st == "OK" and
          ondisk("dst.bin", 2 * UNIT) == data[:2 * UNIT],
          "write %s, clone %s" % (wst, st))

    # bob may only read alice's target
    local(os.path.join(XFS_DIR, "alices.bin"), b"a" * (2 * UNIT), 0o644)
    os.chown(os.path.join(XFS_DIR, "alices.bin"), uid("alice"), -1)
    local(os.path.join(XFS_DIR, "bobs.bin"), data[:2 * UNIT], 0o644)
    os.chown(os.path.join(XFS_DIR, "bobs.bin"), uid("bob"), -1)
    st = status_of(lambda: open_(b, bt, "alices.bin"))
    check("bob cannot open alice's 0644 file for writing",
          st == "STATUS_ACCESS_DENIED", st)
    bro = open_(b, bt, "alices.bin", RO)
    bsrc = open_(b, bt, "bobs.bin")
    st = dup(b, bt, bro, bsrc, 0, 0, 2 * UNIT)
    check("bob's clone into alice's file through his read-only handle: "
          "STATUS_ACCESS_DENIED, her data unchanged",
          st == "STATUS_ACCESS_DENIED" and
          ondisk("alices.bin", 4 * UNIT) == b"a" * (2 * UNIT), st)
    bna = b.getSMBServer().create(bt, "bobs.bin", s3.FILE_READ_ATTRIBUTES,
                                  ALL, s3.FILE_NON_DIRECTORY_FILE,
                                  s3.FILE_OPEN, 0)
    bdst2 = open_(b, bt, "dst.bin")
    st = dup(b, bt, bdst2, bna, 0, 0, UNIT)
    check("a source opened without FILE_READ_DATA: STATUS_ACCESS_DENIED",
          st == "STATUS_ACCESS_DENIED", st)
    st = dup(a, at, dst, b"\xee" * 16, 0, 0, UNIT)
    check("an unknown source FileId: STATUS_INVALID_HANDLE",
          st == "STATUS_INVALID_HANDLE", st)
    st = dup(a, at, dst, bsrc, 0, 0, UNIT)
    check("a source FileId of another session: STATUS_INVALID_HANDLE",
          st == "STATUS_INVALID_HANDLE", st)
    st = status_of(lambda: a.getSMBServer().ioctl(
        at, dst, FSCTL_DUPLICATE_EXTENTS_TO_FILE, flags=1,
        inputBlob=bytes(src) + b"\0" * 23, maxInputResponse=0,
        maxOutputResponse=0))
    check("a 39-byte input: STATUS_INVALID_PARAMETER",
          st == "STATUS_INVALID_PARAMETER", st)


def cmd_plain(share):
    a, at = connect("alice", share)
    local(os.path.join(EXT_DIR, "src.bin"), pattern(2 * UNIT, 3))
    local(os.path.join(EXT_DIR, "dst.bin"), b"\0" * (2 * UNIT))
    src = open_(a, at, "src.bin")
    dst = open_(a, at, "dst.bin")
    attrs = fs_attrs(a, at, src)
    check("[%s] (does not clone): no FILE_SUPPORTS_BLOCK_REFCOUNTING" % share,
          not attrs & FILE_SUPPORTS_BLOCK_REFCOUNTING, "attrs %#x" % attrs)
    st = dup(a, at, dst, src, 0, 0, 2 * UNIT)
    check("[%s]: the FSCTL is STATUS_INVALID_DEVICE_REQUEST, nothing "
          "copied" % share, st == "STATUS_INVALID_DEVICE_REQUEST" and
          read(a, at, dst, 0, 2 * UNIT) == b"\0" * (2 * UNIT), st)


def uid(name):
    import pwd
    return pwd.getpwnam(name).pw_uid


def cmd_basic(share):
    a, at = connect("alice", share)
    size = 256 * 1024
    data = pattern(size, 5)
    local(os.path.join(XFS_DIR, "src.bin"), data)
    local(os.path.join(XFS_DIR, "dst.bin"), b"")
    src = open_(a, at, "src.bin")
    dst = open_(a, at, "dst.bin")
    attrs = fs_attrs(a, at, src)
    check("[%s]: FILE_SUPPORTS_BLOCK_REFCOUNTING" % share,
          attrs & FILE_SUPPORTS_BLOCK_REFCOUNTING, "attrs %#x" % attrs)
    set_eof(a, at, dst, size)
    st = dup(a, at, dst, src, 0, 0, size)
    ok, why = shared_with(os.path.join(XFS_DIR, "src.bin"),
                          os.path.join(XFS_DIR, "dst.bin"))
    check("[%s]: clone of 256 KiB, same data, shared extents" % share,
          st == "OK" and read(a, at, dst, 0, size) == data and ok,
          "%s %s" % (st, why))


if sys.argv[3] == "xfs":
    cmd_xfs()
elif sys.argv[3] == "basic":
    cmd_basic(sys.argv[4])
else:
    cmd_plain(sys.argv[4])
