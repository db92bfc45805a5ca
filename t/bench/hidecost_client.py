# Client of t/bench/hidecost.sh: times a whole listing (impacket listPath,
# QUERY_DIRECTORY until NO_MORE_FILES) of each share named, alternating
# the shares run by run so a drift of the load falls on all alike.
# argv: PORT USER PASSWORD RUNS WORKER_PID SHARE...; prints per share the
# median, min and max in ms of the client's wall time and of the server
# worker's CPU time (the sum of its threads' /proc schedstat run times,
# less noisy under load), and the number of entries listed.
import benchlib
import sys

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

port, user, pw, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
worker = sys.argv[5]
shares = sys.argv[6:]


def cpu_ns():
    """The worker's run time so far, all threads (io_uring's included)."""
    return benchlib.threads_ns([worker])


figures = benchlib.figures_ms


c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login(user, pw)
# warmed first: the worker's trees, the dentry cache
times, cpu, count = benchlib.alternate(
    shares, runs, lambda s: len(c.listPath(s, "*")), cpu_ns)
for s in shares:
    print("%-6s entries %6d  wall %s | worker CPU %s  (%d runs)"
          % (s, count[s], figures(times[s]), figures(cpu[s]), runs))
c.logoff()
