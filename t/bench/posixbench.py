"""Seed 004 side by side (issue 16 item 3): the SMB3 POSIX extensions loops
of t/bench/posixload.py against usmbd and against Samba 4.22 (the newest
Samba that runs here, scripts/samba-ref.sh) with `smb3 unix extensions =
yes`; Debian's Samba 4.17 too when BENCH_SERVERS names `samba` (it does
not answer the POSIX negotiate context: printed as not available).

    posix_doc     CREATE(POSIX ctx, delete on close) + QUERY_INFO(POSIX) + CLOSE
    posix_openqi  CREATE(POSIX ctx) of one file + QUERY_INFO(POSIX) + CLOSE

Loops per phase: BENCH_POSIX_N, else 100,000 x the bench scale (5,000 at
the default `small`, the full 100,000 with BENCH_SCALE=full).  Printed per
server: loops/s, server CPU per loop (the server's cgroup, as every bench
figure), usmbd's ratios against Samba 4.22, then a meter run (a quarter of
the loops, LD_PRELOAD malloc counter and strace -c -f on the serving
processes): syscalls, credential syscalls and heap allocations per loop.

`alternated` runs the same loops window by window on one connection per
server, alternating the servers (t/bench/perfcheck.py's seed 004 part).
"""

import os
import statistics

import benchlib as bl

POSIXLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "posixload.py")
PHASES = ("posix_doc", "posix_openqi")


class Samba422Posix(bl.Samba422):
    GLOBAL_EXTRA = "\tsmb3 unix extensions = yes\n"


class SambaPosix(bl.Samba):
    GLOBAL_EXTRA = "\tsmb3 unix extensions = yes\n"


def loops(f):
    return int(os.environ.get("BENCH_POSIX_N") or max(200, int(100000 * f)))


def one_run(srv, n, timeout, meters=None):
    """{phase: {"ops", "secs", "cpu", ...}} of one posixload run, or an
    error string.  meters: a dir for strace outputs (a meter run)."""
    user, pw = bl.USERS[0]
    c = bl.Paused([bl.PY, POSIXLOAD, str(srv.port), user, pw, str(n)], timeout)
    out, ctx = {}, {}
    for phase, stage in c.events():
        if stage == "READY":
            ctx = {"cpu": srv.cpu_seconds()}
            if meters:
                pids = srv.serving_pids()
                ctx.update(pids=pids, m0=srv.malloc_counts(set(pids)),
                           st=bl.Strace(pids, os.path.join(meters, "strace.%s.%s" % (
                               srv.name, phase))) if pids else None)
        else:
            d = out.setdefault(phase, {})
            d["cpu"] = srv.cpu_seconds() - ctx.get("cpu", 0)
            if meters and ctx.get("pids") is not None:
                m1 = srv.malloc_counts(set(ctx["pids"]))
                d["allocs"] = sum(v[0] for v in m1.values()) - \
                    sum(v[0] for v in ctx["m0"].values())
                d["counted"] = bool(m1)
                d["syscalls"] = ctx["st"].stop() if ctx["st"] else None
        c.go()
    c.finish()
    for r in c.results:
        out.setdefault(r["phase"], {}).update(ops=int(r["ops"]), secs=float(r["secs"]))
    if c.error:
        return c.error
    if not c.results:
        return "no result (client exit %s)" % c.proc.returncode
    return out


class _Client:
    """One posixload connection to one server, parked between windows at a
    READY (before its first) or at a DONE line: only the window being
    measured runs, never another client's warm-up beside it."""

    def __init__(self, srv, n, phases, timeout):
        user, pw = bl.USERS[0]
        self.srv = srv
        self.c = bl.Paused([bl.PY, POSIXLOAD, str(srv.port), user, pw, str(n)] + phases,
                           timeout)
        self.ev = self.c.events()
        self.at = None

    def wait_ready(self):
        """Waits for the first READY (the connection set up and the first
        phase warmed up): the clients start side by side, before any
        window."""
        self.at = next(self.ev, None)

    def window(self, phase, meters):
        """{"ops", "secs", "cpu_ns", "allocs", "counted", "syscalls"} of the
        next window, which must be of `phase`, or an error string."""
        srv = self.srv
        if self.at and self.at[1] == "DONE":
            self.c.go()
            self.at = next(self.ev, None)
        if self.at != (phase, "READY"):
            return self.c.error or "client: %s where READY phase=%s was due" % (
                " ".join(self.at) if self.at else "its end", phase)
        pids = srv.serving_pids()
        st = bl.Strace(pids, os.path.join(meters, "strace.%s.%s" % (srv.name, phase))) \
            if meters and pids else None
        m0 = srv.malloc_counts(set(pids))
        cpu0 = bl.sched_ns(srv.pid)
        nres = len(self.c.results)
        self.c.go()
        self.at = next(self.ev, None)
        cpu = bl.sched_delta(cpu0, bl.sched_ns(srv.pid))
        m1 = srv.malloc_counts(set(pids))
        sc = st.stop() if st else None
        if self.at != (phase, "DONE") or len(self.c.results) <= nres:
            return self.c.error or "client: no result of window %s" % phase
        r = self.c.results[-1]
        return {"ops": int(r["ops"]), "secs": float(r["secs"]), "cpu_ns": cpu,
                "allocs": sum(v[0] for v in m1.values()) - sum(v[0] for v in m0.values()),
                "counted": bool(m1), "syscalls": sc, "pids": pids}


def alternated(servers, n, rounds, metered=(), meters=None, timeout=300):
    """Seed 004's loops, n per window, on one connection per server (each
    phase warmed up once), alternated window by window: round r of
    posix_doc on each server in turn, then of posix_openqi, then round
    r + 1, so a drift of the machine's load falls on every server alike.
    The servers named in `metered` run one round more, under strace -c -f
    of their serving processes (its files in the directory `meters`).
    Each window samples the server tree's CPU (benchlib.sched_ns, /proc)
    and the malloc counter of the serving processes (a server started
    with preload).  Returns {server name: {"windows": [window dicts with
    "phase" and "round"; "syscalls" only in the metered round], "error":
    None or why its client stopped}}."""
    out, cl, done = {}, {}, False
    try:
        for srv in servers:
            extra = 1 if srv.name in metered else 0
            cl[srv.name] = _Client(srv, n, list(PHASES) * (rounds + extra), timeout)
            out[srv.name] = {"windows": [], "error": None}
        for c in cl.values():
            c.wait_ready()
        for r in range(rounds + 1):
            for phase in PHASES:
                for srv in servers:
                    o = out[srv.name]
                    if o["error"] or (r == rounds and srv.name not in metered):
                        continue
                    w = cl[srv.name].window(phase, meters if r == rounds else None)
                    if isinstance(w, str):
                        o["error"] = w
                        continue
                    w.update(phase=phase, round=r)
                    o["windows"].append(w)
        done = True
    finally:
        for name, c in cl.items():
            # a client told to go on past a stop would run its phases
            # unpaused: killed instead
            if out[name]["error"] or not done:
                c.c.kill()
            c.c.finish()
            if c.c.error and not out[name]["error"]:
                out[name]["error"] = c.c.error
    return out


def run_posix(tmp, f, runs, wanted, timeout):
    n = loops(f)
    classes = [c for c, name in ((SambaPosix, "samba"), (Samba422Posix, "samba422"),
                                 (bl.Usmbd, "usmbd"))
               if name in wanted or name != "samba"]
    print("== seed 004: SMB3 POSIX extensions loops, %d per phase, %d runs "
          "(client t/bench/posixload.py, impacket over SMB 3.1.1; unpinned) ==" % (n, runs))
    d = os.path.join(tmp, "posix")
    os.makedirs(d, exist_ok=True)
    figs, why = {}, {}
    for cls in classes:
        srv = cls(d)
        err = srv.start()
        try:
            for r in range(runs if not err else 0):
                bl.log("bench: posix run %d/%d %s" % (r + 1, runs, srv.name))
                res = one_run(srv, n, timeout)
                if isinstance(res, str):
                    err = res
                    break
                for phase, v in res.items():
                    figs.setdefault((srv.name, phase), []).append(v)
            if err:
                why[srv.name] = err
        finally:
            srv.stop()
    print("%-14s %-9s %7s %10s %-17s %11s %9s %8s" % (
        "workload", "server", "n", "loops/s", "(min-max)", "cpu_us/loop", "speedup", "cpu_x"))
    lines = []
    med = {}
    for phase in PHASES:
        for cls in classes:
            name = cls.name
            ok = [v for v in figs.get((name, phase), []) if v.get("secs", 0) > 0]
            if not ok:
                w = why.get(name, "no figure")
                print("%-14s %-9s %s: not available (%s)" % (phase, name, name, w))
                lines.append('BENCH workload=%s server=%s status=unavailable reason="%s"'
                             % (phase, name, w.replace('"', "'")[:300]))
                continue
            rate = [v["ops"] / v["secs"] for v in ok]
            cpu = statistics.median(v["cpu"] / v["ops"] for v in ok) * 1e6
            med[(name, phase)] = (statistics.median(rate), cpu)
            base = med.get(("samba422", phase))
            speed = statistics.median(rate) / base[0] if base and name == "usmbd" else None
            cpux = base[1] / cpu if base and name == "usmbd" and cpu > 0 else None
            print("%-14s %-9s %7d %10.1f %-17s %11.1f %9s %8s" % (
                phase, name, ok[0]["ops"], statistics.median(rate),
                "(%.0f-%.0f)" % (min(rate), max(rate)), cpu,
                "%.2fx" % speed if speed else "-", "%.2fx" % cpux if cpux else "-"))
            lines.append("BENCH workload=%s server=%s runs=%d n=%d median_loops=%.1f "
                         "cpu_us_per_loop=%.1f ratio=%s cpu_ratio=%s" % (
                             phase, name, len(ok), ok[0]["ops"], statistics.median(rate), cpu,
                             "%.3f" % speed if speed else "-", "%.3f" % cpux if cpux else "-"))
    print("(speedup = usmbd loops/s / Samba 4.22's; cpu_x = Samba 4.22 server CPU per loop / "
          "usmbd's; the python client bounds loops/s, the server CPU is the server's own)")
    print()
    for line in lines:
        print(line)
    print()
    posix_meters(tmp, max(100, n // 4), [c for c in classes if c.name not in why], timeout)


def posix_meters(tmp, n, classes, timeout):
    print("== seed 004 meters: %d loops per phase under strace -c -f and the malloc "
          "counter (serving processes) ==" % n)
    err = bl.build_malloc_so()
    if err:
        print("posix meters: not available (%s)" % err)
        return
    d = os.path.join(tmp, "posix_meters")
    os.makedirs(d, exist_ok=True)
    print("%-14s %-9s %7s %10s %10s %11s" % ("workload", "server", "loops", "sys/loop",
                                             "cred/loop", "alloc/loop"))
    lines = []
    for cls in classes:
        srv = cls(d, preload=True)
        why = srv.start()
        try:
            res = why or one_run(srv, n, timeout, meters=d)
            if isinstance(res, str):
                print("%-14s %-9s %s: not available (%s)" % ("*", srv.name, srv.name, res))
                continue
            for phase in PHASES:
                v = res.get(phase, {})
                sc = v.get("syscalls")
                if not v.get("ops") or sc is None:
                    print("%-14s %-9s %s: not measured" % (phase, srv.name, srv.name))
                    continue
                ops = v["ops"]
                cred = sum(sc.get(x, 0) for x in bl.CRED_ALL)
                alloc = v["allocs"] / ops if v.get("counted") else float("nan")
                print("%-14s %-9s %7d %10.1f %10.2f %11.2f" % (
                    phase, srv.name, ops, sc["total"] / ops, cred / ops, alloc))
                lines.append("METER workload=%s server=%s loops=%d syscalls_per_loop=%.2f "
                             "cred_per_loop=%.3f allocs_per_loop=%.2f" % (
                                 phase, srv.name, ops, sc["total"] / ops, cred / ops, alloc))
        finally:
            srv.stop()
    print()
    for line in lines:
        print(line)
    print()


if __name__ == "__main__":
    import sys
    bl.ensure_users()
    t = bl.make_tmp()
    try:
        run_posix(t, 0.05 if len(sys.argv) < 2 else float(sys.argv[1]), 1,
                  os.environ.get("BENCH_SERVERS", "samba422,usmbd").split(","), 600)
    finally:
        import shutil
        shutil.rmtree(t, ignore_errors=True)
