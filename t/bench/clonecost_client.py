# Client of t/bench/clonecost.sh: the wall time of copying one file on the
# server, as alice over SMB 3.0 with impacket: FSCTL_DUPLICATE_EXTENTS_TO_FILE
# (one request) against server-side copy (FSCTL_SRV_REQUEST_RESUME_KEY, then
# FSCTL_SRV_COPYCHUNK_WRITE of 16 chunks of 1 MiB a request, the server's
# limits), each into a new file whose end of file was set first, alternated
# run by run.  argv: PORT SHARE DIR MIB RUNS [copy]; DIR is the share's
# directory on disk (the source is written there), "copy" times only the
# server-side copy (a share that cannot clone).  Prints one line of medians.
import os
import statistics
import struct
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT, SHARE, DIR = int(sys.argv[1]), sys.argv[2], sys.argv[3]
SIZE, RUNS = int(sys.argv[4]) << 20, int(sys.argv[5])
COPY_ONLY = len(sys.argv) > 6 and sys.argv[6] == "copy"
FSCTL_DUPLICATE_EXTENTS_TO_FILE = 0x00098344
FSCTL_SRV_REQUEST_RESUME_KEY = 0x00140078
FSCTL_SRV_COPYCHUNK_WRITE = 0x001480F2
MIB = 1 << 20
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA | s3.FILE_READ_ATTRIBUTES

c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login("alice", "alicepw1")
t = c.connectTree(SHARE)
srv = c.getSMBServer()
with open(os.path.join(DIR, "cost.src"), "wb") as f:
    for _ in range(SIZE // MIB):
        f.write(os.urandom(MIB))
os.chmod(os.path.join(DIR, "cost.src"), 0o666)
os.sync()
src = srv.create(t, "cost.src", RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                 s3.FILE_OPEN, 0)


def target(name):
    fid = srv.create(t, name, RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OVERWRITE_IF, 0)
    srv.setInfo(t, fid, inputBlob=struct.pack("<Q", SIZE),
                infoType=s3.SMB2_0_INFO_FILE,
                fileInfoClass=s3.SMB2_FILE_END_OF_FILE_INFO)
    return fid


def clone():
    dst = target("cost.clone")
    t0 = time.perf_counter()
    srv.ioctl(t, dst, FSCTL_DUPLICATE_EXTENTS_TO_FILE, flags=1,
              inputBlob=bytes(src) + struct.pack("<QQQ", 0, 0, SIZE),
              maxInputResponse=0, maxOutputResponse=0)
    dt = time.perf_counter() - t0
    srv.close(t, dst)
    return dt


def copy():
    dst = target("cost.copy")
    t0 = time.perf_counter()
    key = srv.ioctl(t, src, FSCTL_SRV_REQUEST_RESUME_KEY, flags=1,
                    maxInputResponse=0, maxOutputResponse=32)[:24]
    off = 0
    while off < SIZE:
        n = min(16, (SIZE - off) // MIB)
        chunks = b"".join(struct.pack("<QQLL", off + i * MIB, off + i * MIB,
                                      MIB, 0) for i in range(n))
        srv.ioctl(t, dst, FSCTL_SRV_COPYCHUNK_WRITE, flags=1,
                  inputBlob=key + struct.pack("<LL", n, 0) + chunks,
                  maxInputResponse=0, maxOutputResponse=12)
        off += n * MIB
    dt = time.perf_counter() - t0
    srv.close(t, dst)
    return dt


def fig(v):
    return "median %.2f ms (min %.2f, max %.2f)" % (
        statistics.median(v) * 1e3, min(v) * 1e3, max(v) * 1e3)


a, b = [], []
for r in range(RUNS):
    if COPY_ONLY:
        b.append(copy())
    elif r % 2:
        a.append(clone())
        b.append(copy())
    else:
        b.append(copy())
        a.append(clone())
line = "[%s] %d MiB, %d runs: " % (SHARE, SIZE // MIB, RUNS)
if not COPY_ONLY:
    line += "duplicate extents %s; " % fig(a)
print(line + "copychunk (%d requests) %s" % (
    (SIZE + 16 * MIB - 1) // (16 * MIB), fig(b)), flush=True)
