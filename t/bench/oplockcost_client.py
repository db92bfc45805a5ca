# Driver of t/bench/oplockcost.sh: CREATE (a batch oplock asked, read and
# write access) + CLOSE of one existing file through shares on the same
# path that differ only in the caching keys, alternating share by share,
# ROUNDS windows of N pairs each.  Per window it reads the worker's CPU
# time (the first field of /proc/PID/task/*/schedstat, ns) before and
# after, and the client's wall time.  Prints per share the medians and
# spread, per pair.
#
#	oplockcost_client.py PORT WORKER_PID ROUNDS N SHARE...
#	oplockcost_client.py PORT opens
#
# The second form reads lines "SHARE N" on stdin and answers "done" after
# N pairs on SHARE (for strace around them).
import glob
import statistics
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT = int(sys.argv[1])
NAME = "db.mdb"


def session():
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login("alice", "alicepw1")
    return c, c.getSMBServer(), {}


def pairs(srv, trees, c, share, n):
    if share not in trees:
        trees[share] = c.connectTree(share)
    t = trees[share]
    for _ in range(n):
        fid = srv.create(t, NAME, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                         s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE,
                         s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
                         oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH)
        srv.close(t, fid)


def cpu_ns(pid):
    n = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % pid):
        with open(f) as fp:
            n += int(fp.read().split()[0])
    return n


c, srv, trees = session()
if sys.argv[2] == "opens":
    print("ready", flush=True)
    for line in sys.stdin:
        share, n = line.split()
        pairs(srv, trees, c, share, int(n))
        print("done", flush=True)
    sys.exit(0)
PID, ROUNDS, N = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
SHARES = sys.argv[5:]
res = {s: ([], []) for s in SHARES}
for r in range(ROUNDS + 1):
    order = SHARES[r % len(SHARES):] + SHARES[:r % len(SHARES)]
    for share in order:
        t0, c0 = time.perf_counter(), cpu_ns(PID)
        pairs(srv, trees, c, share, N)
        c1, t1 = cpu_ns(PID), time.perf_counter()
        if r == 0:
            continue		# warm: the trees, the dentries
        res[share][0].append((c1 - c0) / 1e3 / N)
        res[share][1].append((t1 - t0) * 1e6 / N)
for share in SHARES:
    cpu, wall = res[share]
    print("%-9s worker CPU per CREATE+CLOSE: median %.1f us (min %.1f, "
          "max %.1f)  client wall: median %.0f us  (%d windows of %d)" % (
              share, statistics.median(cpu), min(cpu), max(cpu),
              statistics.median(wall), len(cpu), N))
