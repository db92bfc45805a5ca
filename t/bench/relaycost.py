#!/usr/bin/python3
"""What a relayed session costs (issue 13, item 7 in part): alice and bob on
one TCP connection (impacket, SMB 3.0, which impacket encrypts), the same
operations on each session, against usmbd (alice's worker holds the socket,
bob's session is relayed to bob's worker) and Debian's Samba (one smbd
serves both).  The client is Python, so wall time is the client's; the
figure that matters is the server's CPU per operation (cgroup, or
/proc of the process tree), whole server, both users' processes.

For usmbd's relayed session it also counts, over its 4 KiB READs and
WRITEs, the syscalls of both workers (strace -c -f) and their allocations (the
malloc_count preload), and asserts no credential syscall and no allocation
per relayed request.

    t/bench/relaycost.py [N]       (root; N operations per figure, 300)

RELAYCOST_PIN=unpinned|pinned|both (default both): pinned runs the client
and every process of each server on CPU 0 (as bench.py's pinned mode), so
the figures compare CPU paths without the cost of waking an idle vCPU.
After the table it prints the extra server CPU of a relayed request (bob
on usmbd minus alice on usmbd) and how each relayed figure compares with
Samba's second session.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

from impacket import smb3, smb3structs as s3  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
RUNS = 3
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA
SHARE_ALL = 7


class Two:
    """One connection, alice's session then bob's."""

    def __init__(self, port):
        self.c = smb3.SMB3("127.0.0.1", "127.0.0.1", sess_port=port,
                           preferredDialect=s3.SMB2_DIALECT_30, timeout=60)
        fresh = self.c._Session
        self.sess, self.tree = {}, {}
        for user, pw in bl.USERS:
            self.c._Session = dict(fresh, TreeConnectTable={}, OpenTable={})
            self.c.login(user, pw)
            self.sess[user] = self.c._Session
            self.tree[user] = self.c.connectTree("share")

    def use(self, user):
        self.c._Session = self.sess[user]
        return self.tree[user]


def close(c, tid, fid):
    try:
        c.close(tid, fid)
    except KeyError:
        pass    # impacket keeps one table of names for the connection


def phases(t, user, meter):
    """{phase: (server CPU us/op, wall us/op)} for user's session."""
    c = t.c
    tid = t.use(user)
    name = "cost_%s" % user
    fid = c.create(tid, name, RW, SHARE_ALL, s3.FILE_NON_DIRECTORY_FILE,
                   s3.FILE_OVERWRITE_IF, 0)
    c.write(tid, fid, b"\1" * (1 << 20), 0, 1 << 20)
    buf = b"\2" * 4096
    out = {}

    def timed(phase, n, fn):
        fn()    # warm
        runs = []
        for _ in range(RUNS):
            w0, c0 = time.monotonic(), meter()
            for _ in range(n):
                fn()
            c1, w1 = meter(), time.monotonic()
            runs.append(((c1 - c0) * 1e6 / n, (w1 - w0) * 1e6 / n))
        out[phase] = sorted(runs)[len(runs) // 2]   # the median run

    timed("write 4 KiB", N, lambda: c.write(tid, fid, buf, 0, 4096))
    timed("read 4 KiB", N, lambda: c.read(tid, fid, 0, 4096))

    def cc():
        f = c.create(tid, name, s3.FILE_READ_DATA, SHARE_ALL,
                     s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
        close(c, tid, f)
    timed("create+close", N, cc)
    timed("read 1 MiB", max(N // 10, 10), lambda: c.read(tid, fid, 0, 1 << 20))
    close(c, tid, fid)
    return out


def workers(srv):
    return [p for p in bl.tree_pids(srv.pid)
            if bl.cmdline(p).startswith("usmbd: worker")]


def meters(srv, t, user, op="read"):
    """Syscalls and allocations of usmbd's workers per 4 KiB READ (op
    "read") or WRITE ("write") of user."""
    c = t.c
    tid = t.use(user)
    fid = c.create(tid, "cost_" + user, RW, SHARE_ALL,
                   s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    buf = b"\3" * 4096
    if op == "read":
        def one():
            c.read(tid, fid, 0, 4096)
    else:
        def one():
            c.write(tid, fid, buf, 0, 4096)
    for _ in range(20):
        one()
    pids = workers(srv)
    if len(pids) < 2:
        sys.exit("relaycost.py: usmbd's workers not found (%s)" % pids)
    m0 = srv.malloc_counts(set(pids))
    st = bl.Strace(pids, os.path.join(srv.dir, "strace.relay"))
    for _ in range(N):
        one()
    counts = st.stop()
    m1 = srv.malloc_counts(set(pids))
    close(c, tid, fid)
    allocs = sum(m1.get(p, (0, 0))[0] - m0.get(p, (0, 0))[0] for p in pids)
    cred = sum(counts.get(k, 0) for k in bl.CRED_ALL)
    return counts, allocs, cred


def main():
    if os.geteuid() != 0:
        sys.exit("relaycost.py: run as root")
    bl.ensure_users()
    why = bl.build_malloc_so()
    if why:
        sys.exit(why)
    fails = 0
    pins = os.environ.get("RELAYCOST_PIN", "both")
    for pin in ("unpinned", "pinned") if pins == "both" else (pins,):
        tmp = bl.make_tmp()     # fresh servers' state for each table
        fails += run(tmp, pin)
        bl.shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if fails else 0)


def run(tmp, pin):
    """One table: both servers, pinned to CPU 0 or not.  Failures."""
    rows, fails = {}, 0
    allcpus = os.sched_getaffinity(0)
    cpus = {0} if pin == "pinned" else allcpus
    os.sched_setaffinity(0, cpus)
    print("\n== %s ==" % pin)
    for cls in (bl.Samba, bl.Usmbd):
        srv = cls(tmp, preload=cls is bl.Usmbd)
        try:
            why = srv.start()
            if why:
                print("%s: not available (%s)" % (srv.name, why))
                continue
            bl.set_affinity(srv.pid, cpus)
            t = Two(srv.port)
            bl.set_affinity(srv.pid, cpus)  # the workers forked since
            for user in ("alice", "bob"):
                rows[(srv.name, user)] = phases(t, user, srv.cpu_seconds)
            for user, op in (("alice", "read"), ("bob", "read"),
                             ("bob", "write")) if cls is bl.Usmbd else ():
                what = "relayed" if user == "bob" else "owner's"
                counts, allocs, cred = meters(srv, t, user, op)
                per = counts["total"] / N
                print("usmbd %s 4 KiB %s: %.1f syscalls per request "
                      "(both workers; %s)" % (what, op.upper(), per,
                                              ", ".join(
                          "%s %.1f" % (k, v / N) for k, v in sorted(
                              counts.items(), key=lambda kv: -kv[1])[:8]
                          if k != "total")))
                print("usmbd %s 4 KiB %s: %d credential syscalls, "
                      "%.2f allocations per request" % (what, op.upper(),
                                                        cred, allocs / N))
                if cred != 0 or allocs >= N:
                    print("FAIL credential syscalls or an allocation per "
                          "relayed request")
                    fails += 1
        finally:
            srv.stop()
    os.sched_setaffinity(0, allcpus)
    print("\n%s: server CPU per operation, us (client wall time per "
          "operation, us), median of %d runs of %d; alice = first session, "
          "bob = second (usmbd: relayed)" % (pin, RUNS, N))
    names = sorted({p for r in rows.values() for p in r})
    print("%-14s" % "" + "".join("%22s" % ("%s %s" % k) for k in rows))
    for p in names:
        print("%-14s" % p + "".join(
            "%22s" % ("%.0f (%.0f)" % rows[k][p]) for k in rows))
    ua, ub = rows.get(("usmbd", "alice")), rows.get(("usmbd", "bob"))
    sb = rows.get(("samba", "bob"))
    for p in names if ua and ub else ():
        extra = ub[p][0] - ua[p][0]
        vs = " (Samba's second session: %.0f, relayed %s)" % (
            sb[p][0], "at or below it" if ub[p][0] <= sb[p][0] else
            "ABOVE it") if sb else ""
        print("%s %s: relayed costs %+.0f us server CPU per request over "
              "the owner's own%s" % (pin, p, extra, vs))
    return fails


if __name__ == "__main__":
    main()
