# Client of t/bench/eacost.sh: times whole listings, QUERY_DIRECTORY of
# one class until NO_MORE_FILES, of each share named, alternating the
# shares run by run.  argv: PORT USER PASSWORD RUNS PIDS CLASS SHARE...;
# PIDS is a worker's pid, or "children:PID" for every child of PID (an
# smbd and the child that serves the connection), read at each run;
# CLASS a FileInformationClass number.  Prints per share the entries, the
# sum of their EaSize, and the median, min and max in ms of the client's
# wall time and of the server's CPU time (the threads' /proc schedstat
# run times).
import os
import struct
import sys

import benchlib
from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection

port, user, pw, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pids, klass, shares = sys.argv[5], int(sys.argv[6]), sys.argv[7:]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE


def server_pids():
    if not pids.startswith("children:"):
        return [pids]
    parent = pids.split(":", 1)[1]
    out = [parent]
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % p) as f:
                if f.read().rsplit(")", 1)[1].split()[1] == parent:
                    out.append(p)
        except (OSError, IndexError, ValueError):
            pass
    return out


def cpu_ns():
    return benchlib.threads_ns(server_pids())


figures = benchlib.figures_ms


def listing(srv, tid):
    """(entries, sum of EaSize) of one whole listing."""
    fid = srv.create(tid, "", s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES,
                     ALL, s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    n = ea = 0
    try:
        while True:
            try:
                res = srv.queryDirectory(tid, fid, "*", maxBufferSize=65536,
                                         informationClass=klass)
            except smb3.SessionError:
                break		# NO_MORE_FILES
            off = 0
            while True:
                nxt, = struct.unpack_from("<I", res, off)
                n += 1
                ea += struct.unpack_from("<I", res, off + 64)[0]
                if nxt == 0:
                    break
                off += nxt
    finally:
        srv.close(tid, fid)
    return n, ea


c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login(user, pw)
srv = c.getSMBServer()
tids = {s: c.connectTree(s) for s in shares}
# warmed first: the trees, the dentry and xattr caches
times, cpu, count = benchlib.alternate(
    shares, runs, lambda s: listing(srv, tids[s]), cpu_ns)
for s in shares if runs > 0 else ():
    print("listing %-8s entries %6d  EaSize sum %8d  wall %s | server CPU %s"
          "  (%d runs)" % (s, count[s][0], count[s][1], figures(times[s]),
                           figures(cpu[s]), runs))
c.logoff()
