# Client of t/bench/hidecost.sh: times a whole listing (impacket listPath,
# QUERY_DIRECTORY until NO_MORE_FILES) of each share named, alternating
# the shares run by run so a drift of the load falls on all alike.
# argv: PORT USER PASSWORD RUNS SHARE...; prints per share the median,
# min and max in ms and the number of entries listed.
import statistics
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

port, user, pw, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
shares = sys.argv[5:]
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login(user, pw)
times = {s: [] for s in shares}
count = {}
for s in shares:		# warm: the worker's trees, the dentry cache
    count[s] = len(c.listPath(s, "*"))
for r in range(runs):
    for s in shares:
        t0 = time.perf_counter()
        n = len(c.listPath(s, "*"))
        times[s].append((time.perf_counter() - t0) * 1000)
        count[s] = n
for s in shares:
    v = times[s]
    print("%-12s entries %6d  median %8.2f ms  min %8.2f  max %8.2f  (%d runs)"
          % (s, count[s], statistics.median(v), min(v), max(v), len(v)))
c.logoff()
