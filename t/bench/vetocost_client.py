# Driver of t/bench/vetocost.sh: lists the same directory of N entries
# through two shares, [plain] (no name keys) and [veto5] (a 5-pattern
# veto files list that none of the names matches, so every entry is
# tested against all five), alternating, ROUNDS listings each.  Per
# listing it reads the worker's CPU time (the first field of
# /proc/PID/task/*/schedstat, ns) before and after, and the wall time of
# the whole listing as the client sees it.  Prints per share the median
# and the spread of both.
#
#	vetocost_client.py PORT WORKER_PID ROUNDS
#	vetocost_client.py PORT opens
#
# The second form reads lines "SHARE PATH N" on stdin and answers "done"
# after N CREATE+CLOSE pairs of PATH on SHARE (for strace around them).
import glob
import statistics
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT = int(sys.argv[1])


def opens():
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login("alice", "alicepw1")
    srv = c.getSMBServer()
    trees = {}
    print("ready", flush=True)
    for line in sys.stdin:
        share, path, n = line.split()
        if share not in trees:
            trees[share] = c.connectTree(share)
        t = trees[share]
        for _ in range(int(n)):
            fid = srv.create(t, path, s3.FILE_READ_ATTRIBUTES,
                             s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE, 0,
                             s3.FILE_OPEN, 0)
            srv.close(t, fid)
        print("done", flush=True)
    sys.exit(0)


if sys.argv[2] == "opens":
    opens()
PID, ROUNDS = int(sys.argv[2]), int(sys.argv[3])


def cpu_ns():
    n = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % PID):
        with open(f) as fp:
            n += int(fp.read().split()[0])
    return n


c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login("alice", "alicepw1")
res = {"plain": ([], []), "veto5": ([], [])}
count = {}
for r in range(ROUNDS + 1):
    order = ("plain", "veto5") if r % 2 == 0 else ("veto5", "plain")
    for share in order:
        t0, c0 = time.perf_counter(), cpu_ns()
        n = len(c.listPath(share, "d\\*"))
        c1, t1 = cpu_ns(), time.perf_counter()
        count[share] = n
        if r == 0:
            continue		# warm: the dentries, the connection
        res[share][0].append((c1 - c0) / 1e6)
        res[share][1].append((t1 - t0) * 1e3)
for share in ("plain", "veto5"):
    cpu, wall = res[share]
    print("%-6s %6d entries  worker CPU per listing: median %.1f ms "
          "(min %.1f, max %.1f)  client wall: median %.0f ms  (%d runs)" % (
              share, count[share], statistics.median(cpu), min(cpu),
              max(cpu), statistics.median(wall), len(cpu)))
d = statistics.median(res["veto5"][0]) - statistics.median(res["plain"][0])
print("veto5 - plain: %+.1f ms of worker CPU per listing, %+.2f us per "
      "entry" % (d, d * 1e3 / max(count["plain"], 1)))
