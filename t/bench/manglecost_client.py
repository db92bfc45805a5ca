# Client of t/bench/manglecost.sh: times a whole listing of each share
# named, FileIdBothDirectoryInformation (the class of Windows' Explorer
# and smbclient), QUERY_DIRECTORY until NO_MORE_FILES, alternating the
# shares run by run; then the open of a file by its 8.3 short name (the
# not-found path: a scan of the directory) against the open by its long
# name.  argv: PORT USER PASSWORD RUNS WORKER_PID SHARE...; prints per
# share the median, min and max in ms of the client's wall time and of
# the worker's CPU time (its threads' /proc schedstat run times), and
# the entries listed with a ShortName.
import os
import struct
import sys
import time

import benchlib
from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection

port, user, pw, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
worker = sys.argv[5]
shares = sys.argv[6:]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE


def cpu_ns():
    return benchlib.threads_ns([worker])


figures = benchlib.figures_ms


def listing(srv, tid, shorts=None):
    """(entries, entries with a ShortName) of one whole listing; the
    ShortNames in listing order appended to shorts when given."""
    fid = srv.create(tid, "", s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                     ALL, s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    n = short = 0
    try:
        while True:
            try:
                res = srv.queryDirectory(
                    tid, fid, "*", maxBufferSize=65536,
                    informationClass=s3.FILEID_BOTH_DIRECTORY_INFORMATION)
            except smb3.SessionError:
                break		# NO_MORE_FILES
            off = 0
            while True:
                nxt, = struct.unpack_from("<I", res, off)
                n += 1
                short += res[off + 68] != 0	# ShortNameLength
                if shorts is not None and res[off + 68]:
                    shorts.append(res[off + 70:off + 70 + res[off + 68]]
                                  .decode("utf-16-le"))
                if nxt == 0:
                    break
                off += nxt
    finally:
        srv.close(tid, fid)
    return n, short


def open_close(srv, tid, name):
    srv.close(tid, srv.create(tid, name, s3.FILE_READ_ATTRIBUTES, ALL, 0,
                              s3.FILE_OPEN, 0))


c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login(user, pw)
srv = c.getSMBServer()
tids = {s: c.connectTree(s) for s in shares}
# warmed first: the worker's trees, the dentry cache
times, cpu, count = benchlib.alternate(
    shares, runs, lambda s: listing(srv, tids[s]), cpu_ns)
for s in shares:
    print("listing %-4s entries %6d (%6d short)  wall %s | worker CPU %s  "
          "(%d runs)" % (s, count[s][0], count[s][1], figures(times[s]),
                         figures(cpu[s]), runs))

# Opens by short name.  Seen first in a listing, a short name is found by
# a scan of the directory (the last ones listed: the whole directory read
# through); given out before (FileAlternateNameInformation, or that scan),
# this worker remembers it: one stat checks it.
t = tids["yes"]
shorts = []
listing(srv, t, shorts)
last = sorted(os.listdir(os.environ["MANGLECOST_DIR"]))[-1]
fid = srv.create(t, last, s3.FILE_READ_ATTRIBUTES, ALL, 0, s3.FILE_OPEN, 0)
b = srv.queryInfo(t, fid, infoType=s3.SMB2_0_INFO_FILE, fileInfoClass=21)
srv.close(t, fid)
sn = b[4:4 + struct.unpack_from("<I", b, 0)[0]].decode("utf-16-le")
for what, names in (("long name", [last] * runs),
                    ("short name, scanned", shorts[-runs:]),
                    ("short name, remembered", [sn] * runs)):
    wall, cp = [], []
    for name in names:
        c0 = cpu_ns()
        t0 = time.perf_counter()
        open_close(srv, t, name)
        wall.append((time.perf_counter() - t0) * 1000)
        cp.append((cpu_ns() - c0) / 1e6)
    print("open+close by %-22s wall %s | worker CPU %s  (%d runs)"
          % (what, figures(wall), figures(cp), len(names)))
c.logoff()
