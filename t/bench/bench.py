#!/usr/bin/python3
"""make bench: usmbd and Debian's Samba side by side (issue 6).

Run by scripts/run-bench.sh after the build; see t/bench/README.md.
Environment:
  BENCH_SCALE     small (default, 0.05 of full), full (the issue's sizes) or a factor
  BENCH_RUNS      runs per figure, default 3 (the median is reported)
  BENCH_PIN       both (default), unpinned, pinned
  BENCH_ONLY      comma-separated workload names to run (default all)
  BENCH_SERVERS   samba,usmbd (default both); samba422 adds bookworm-backports'
                  Samba 4.22 (scripts/samba-ref.sh fetches it on first use)
  BENCH_METERS    1 (default): the strace and malloc meters after the timing
  BENCH_SMBCLIENT 1 (default): smbclient as the second client for (a), (c)
  BENCH_TIMEOUT   seconds one client run may take, default 240
  BENCH_IDLE_N    idle sessions of the memory workload (default 2,000 x scale,
                  at least 20; 2000 = the issue's figure)
  BENCH_SEC       signed and encrypted modes of the secured workloads (issue 17):
                  gmac,cmac,hmac,gcm128,gcm256 (default all), none to skip
"""

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
ALL_CPUS = set(range(os.cpu_count() or 1))
ALICE = "%s%%%s" % bl.USERS[0]
BOB = "%s%%%s" % bl.USERS[1]


def scale_factor():
    s = os.environ.get("BENCH_SCALE", "small")
    if s == "full":
        return 1.0
    if s == "small":
        return 0.05
    return float(s)


def workloads(f):
    """(name, issue item, smbload args, mbps matters) at factor f of full."""
    def n(full, least):
        return max(least, int(full * f))
    big = n(GIB, 16 * MIB) // MIB * MIB
    wl = [
        ("upload_1m", "a", ["-w", "upload", "-n", n(1000, 50), "-s", MIB, "-r", 256 * KIB, "-d", "up"], True),
        ("write_4k_rand", "b", ["-w", "write", "-s", big, "-r", 4 * KIB, "-f", "wr.dat"], True),
        ("write_4k_zero", "b", ["-w", "write", "-s", big, "-r", 4 * KIB, "-f", "wr.dat", "-z"], True),
        ("write_8k_rand", "b", ["-w", "write", "-s", big, "-r", 8 * KIB, "-f", "wr.dat"], True),
        ("write_8k_zero", "b", ["-w", "write", "-s", big, "-r", 8 * KIB, "-f", "wr.dat", "-z"], True),
        ("read_4k", "c", ["-w", "read", "-s", big, "-r", 4 * KIB, "-f", "rd.dat"], True),
        ("read_1m", "c", ["-w", "read", "-s", big, "-r", MIB, "-f", "rd.dat"], True),
        ("small_10k", "d", ["-w", "small", "-n", n(10000, 200), "-s", 10 * KIB, "-d", "sm"], True),
        ("createclose", "e", ["-w", "createclose", "-n", n(100000, 1000), "-d", "cc"], False),
        ("openqi", "e", ["-w", "openqi", "-n", n(100000, 1000), "-f", "qi.dat"], False),
        ("connect", "3", ["-w", "connect", "-n", n(1000, 50)], False),
        ("mix16", "f", ["-w", "mix", "-c", 16, "-n", n(100000 // 16, 60), "-d", "mix",
                        "-f", "shared.dat", "-V", BOB], True),
    ]
    only = [x for x in os.environ.get("BENCH_ONLY", "").split(",") if x]
    # A secured workload (W@MODE) named alone brings its plain base, the
    # figure its cost is measured against.
    only += [x.split("@")[0] for x in only if "@" in x]
    return [(a, b, [str(x) for x in c], d) for a, b, c, d in wl if not only or a in only], big


# Issue 17: the workloads run again signed and encrypted.  mode: (dialect,
# client smb.conf lines, encrypted).  Signing: AES-GMAC on 3.1.1, AES-CMAC
# on 3.0.2, HMAC-SHA256 on 2.1; encryption: AES-128-GCM and AES-256-GCM on
# 3.1.1, on the servers' [sealed] share (smb encrypt = required, see
# benchlib.sealed_share), the client offering that one cipher.
SEC_MODES = {
    "gmac": ("SMB3_11", ["client signing = required",
                         "client smb3 signing algorithms = AES-128-GMAC"], False),
    "cmac": ("SMB3_02", ["client signing = required"], False),
    "hmac": ("SMB2_10", ["client signing = required"], False),
    "gcm128": ("SMB3_11", ["client smb encrypt = required",
                           "client smb3 encryption algorithms = AES-128-GCM"], True),
    "gcm256": ("SMB3_11", ["client smb encrypt = required",
                           "client smb3 encryption algorithms = AES-256-GCM"], True),
}
SEALED_URL = "@SEALED@"     # the server's [sealed] share (smbload_argv)
SEC_WORKLOADS = ("upload_1m", "write_4k_rand", "read_4k", "read_1m", "createclose")


def secured_workloads(wls, tmp):
    """WORKLOAD@MODE variants of SEC_WORKLOADS, each with its client
    config (written into tmp) and dialect."""
    modes = [m for m in os.environ.get("BENCH_SEC", ",".join(SEC_MODES)).split(",")
             if m and m != "none"]
    for m in modes:
        if m not in SEC_MODES:
            sys.exit("bench: unknown BENCH_SEC mode %s (%s)" % (m, ",".join(SEC_MODES)))
    only = [x for x in os.environ.get("BENCH_ONLY", "").split(",") if "@" in x]
    out = []
    for m in modes:
        proto, lines, enc = SEC_MODES[m]
        conf = os.path.join(tmp, "client-%s.conf" % m)
        with open(conf, "w") as fh:
            fh.write("[global]\n" + "".join("\t%s\n" % x for x in lines))
        for wl, item, args, mb in wls:
            if wl in SEC_WORKLOADS and (not only or "%s@%s" % (wl, m) in only):
                out.append(("%s@%s" % (wl, m), item,
                            args + ["-p", proto, "-C", conf] +
                            (["-E", "-u", SEALED_URL] if enc else []), mb))
    return out


def prepare_share(srv, big):
    """Files the workloads read but do not create, written straight into the
    share (not through the server: reads are measured even before writes
    work), readable and writable by both users."""
    rd = os.path.join(srv.share, "rd.dat")
    if not os.path.exists(rd) or os.path.getsize(rd) != big:
        with open(rd, "wb") as fo:
            chunk = os.urandom(MIB)
            for _ in range(big // MIB):
                fo.write(chunk)
        os.chmod(rd, 0o644)
    sh = os.path.join(srv.share, "shared.dat")
    with open(sh, "wb") as fo:
        fo.write(b"\0" * MIB)
    os.chmod(sh, 0o666)
    os.makedirs(os.path.join(srv.share, "mix"), exist_ok=True)
    os.chmod(os.path.join(srv.share, "mix"), 0o1777)


def run_client(srv, argv, pinned, timeout, on_ready=None, on_done=None):
    """One paused smbload run; returns ({phase: figures}, error)."""
    bl.set_affinity(srv.pid, {0} if pinned else ALL_CPUS)
    pre = ["taskset", "-c", "0"] if pinned else []
    c = bl.Paused(pre + argv, timeout)
    cpu0, out, ctx = {}, {}, {}
    for phase, stage in c.events():
        if stage == "READY":
            if on_ready:
                ctx[phase] = on_ready(phase)
            cpu0[phase] = srv.cpu_seconds()
        else:
            out.setdefault(phase, {})["cpu"] = srv.cpu_seconds() - cpu0.get(phase, 0)
            if on_done:
                out[phase]["meters"] = on_done(phase, ctx.get(phase))
        c.go()
    c.finish()
    for r in c.results:
        d = out.setdefault(r["phase"], {})
        d.update(ops=int(r["ops"]), bytes=int(r["bytes"]), secs=float(r["secs"]),
                 truncated=int(r["truncated"]))
    if c.error:
        return out, c.error
    if not c.results:
        return out, "no result (client exit %s)" % c.proc.returncode
    return out, None


def smbload_argv(srv, args, timeout):
    # A later -u (the encrypted modes' share) overrides the first.
    sealed = srv.url.rsplit("/", 1)[0] + "/sealed"
    return [bl.SMBLOAD, "-u", srv.url, "-U", ALICE, "-t", str(timeout), "-P"] + \
        [sealed if a == SEALED_URL else a for a in args]


def run_smbclient(srv, what, local, pinned, timeout):
    """smbclient as the second client: (a) mput of the upload set, (c) get."""
    pre = ["taskset", "-c", "0"] if pinned else []
    bl.set_affinity(srv.pid, {0} if pinned else ALL_CPUS)
    if what == "upload":
        cmd = "prompt OFF; mkdir scup; cd scup; lcd %s; mput *" % local
        nbytes = sum(os.path.getsize(os.path.join(local, x)) for x in os.listdir(local))
        nops = len(os.listdir(local))
    else:
        cmd = "get rd.dat /dev/null"
        nbytes = os.path.getsize(os.path.join(srv.share, "rd.dat"))
        nops = 1
    argv = pre + ["smbclient", "//127.0.0.1/share", "-p", str(srv.port), "-U", ALICE,
                  "-m", "SMB3", "-c", cmd]
    cpu0, t0 = srv.cpu_seconds(), time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "smbclient timed out"
    secs, cpu = time.monotonic() - t0, srv.cpu_seconds() - cpu0
    shutil.rmtree(os.path.join(srv.share, "scup"), ignore_errors=True)
    if r.returncode or "NT_STATUS" in r.stdout + r.stderr:
        return None, "smbclient: " + (r.stdout + r.stderr).strip().replace("\n", " | ")[-200:]
    return {"ops": nops, "bytes": nbytes, "secs": secs, "cpu": cpu, "truncated": 0}, None


# ---------------------------------------------------------------- limits

def measure_limits(tmp, f):
    print("== physical limits of this machine (same run) ==")
    lines = []
    for pin in ("unpinned", "pinned"):
        pre = ["taskset", "-c", "0"] if pin == "pinned" else []
        r = subprocess.run(pre + [bl.NETLIMIT, "-t", "20"], capture_output=True,
                           text=True, timeout=60)
        for line in r.stdout.splitlines():
            if line.startswith("LIMIT "):
                lines.append("LIMIT pin=%s %s" % (pin, line[6:]))
    # Issue 17: one core's AES-GCM and MAC throughput of gnutls (cryptlimit
    # pins itself), beside the signed and encrypted figures.
    crypto = {}
    r = subprocess.run([bl.CRYPTLIMIT], capture_output=True, text=True, timeout=60)
    for line in r.stdout.splitlines():
        m = re.match(r"LIMIT crypto=(\w+) mbps=([\d.]+)", line)
        if m:
            crypto[m.group(1)] = float(m.group(2))
            lines.append(line)
    # 256 MiB into a new file on the tmpfs of the shares, 3 times: median.
    for bs, count in (("1M", 256), ("4k", 65536)):
        path = os.path.join(tmp, "dd.bin")
        rates = []
        for _ in range(3):
            r = subprocess.run(["dd", "if=/dev/zero", "of=" + path, "bs=" + bs,
                                "count=%d" % count, "conv=fdatasync"],
                               capture_output=True, text=True, timeout=120)
            m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", r.stderr)
            if m:
                rates.append(int(m.group(1)) / float(m.group(2)) / 1e6)
            os.unlink(path)
        if rates:
            lines.append("LIMIT tmpfs_write_mbps=%.1f min=%.1f max=%.1f bs=%s bytes=%d runs=%d" % (
                statistics.median(rates), min(rates), max(rates), bs,
                count * (MIB if bs == "1M" else 4 * KIB), len(rates)))
    # The TCP set-up every figure of this run shares (see BENCH_CC in
    # scripts/run-bench.sh): congestion control and queueing discipline.
    def sysctl(name):
        try:
            with open("/proc/sys/" + name.replace(".", "/")) as fh:
                return fh.read().strip()
        except OSError:
            return "?"
    lines.append("LIMIT tcp_congestion_control=%s default_qdisc=%s netns=%s" % (
        sysctl("net.ipv4.tcp_congestion_control"), sysctl("net.core.default_qdisc"),
        "private" if os.environ.get("BENCH_IN_NETNS") else "host"))
    for line in lines:
        print(line)
    print()
    return crypto


# ---------------------------------------------------------------- reporting

def summarise(samples):
    """samples: list of figure dicts of one (pin, workload, phase, server)."""
    ok = [s for s in samples if s.get("secs", 0) > 0 and s.get("ops", 0) > 0]
    if not ok:
        return None
    ops = [s["ops"] / s["secs"] for s in ok]
    mbps = [s["bytes"] / s["secs"] / 1e6 for s in ok]
    cpu_op = [s["cpu"] / s["ops"] for s in ok]
    return {
        "runs": len(ok), "ops": statistics.median(ops), "ops_min": min(ops),
        "ops_max": max(ops), "mbps": statistics.median(mbps),
        "cpu_s": statistics.median(s["cpu"] for s in ok),
        "cpu_us_op": statistics.median(cpu_op) * 1e6,
        "n": ok[0]["ops"], "truncated": any(s.get("truncated") for s in ok),
    }


def report(pin, names, servers, figs, unavailable, client="smbload (libsmbclient)"):
    title = {"unpinned": "unpinned: client and servers free on all %d vCPUs" % len(ALL_CPUS),
             "pinned": "pinned: client and servers on CPU 0 (taskset -c 0)"}[pin]
    print("== %s; client %s ==" % (title, client))
    print("%-22s %-8s %6s %12s %-19s %9s %9s %10s %8s %8s" % (
        "workload/phase", "server", "n", "ops/s", "(min-max)", "MB/s", "cpu_s",
        "cpu_us/op", "speedup", "cpu_x"))
    lines = []
    for wl, phase, mbps_matters, via in names:
        key = (pin, wl, phase)
        base = summarise(figs.get(key + ("samba",), []))
        for srv in servers:
            label = "%s/%s" % (wl, phase) if wl.startswith("small") else wl
            if via != "smbload":
                label += " [%s]" % via
            s = summarise(figs.get(key + (srv,), []))
            if s is None:
                why = unavailable.get((pin, wl, srv)) or unavailable.get(srv) or "no figure"
                print("%-22s %-8s %s: not available (%s)" % (label, srv, srv, why))
                lines.append('BENCH pin=%s workload=%s phase=%s client=%s server=%s status=unavailable reason="%s"'
                             % (pin, wl, phase, via, srv, why.replace('"', "'")))
                continue
            speed = cpux = None
            if srv != "samba" and base:
                speed = s["ops"] / base["ops"]
                cpux = base["cpu_us_op"] / s["cpu_us_op"] if s["cpu_us_op"] > 0 else None
            print("%-22s %-8s %6d %12.1f %-19s %9s %9.3f %10.1f %8s %8s%s" % (
                label, srv, s["n"], s["ops"], "(%.0f-%.0f)" % (s["ops_min"], s["ops_max"]),
                "%.1f" % s["mbps"] if mbps_matters else "-", s["cpu_s"], s["cpu_us_op"],
                "%.2fx" % speed if speed else "-", "%.2fx" % cpux if cpux else "-",
                " TRUNCATED" if s["truncated"] else ""))
            lines.append("BENCH pin=%s workload=%s phase=%s client=%s server=%s runs=%d n=%d "
                         "median_ops=%.1f min_ops=%.1f max_ops=%.1f mbps=%.2f cpu_s=%.4f "
                         "cpu_us_per_op=%.1f ratio=%s cpu_ratio=%s truncated=%d" % (
                             pin, wl, phase, via, srv, s["runs"], s["n"], s["ops"], s["ops_min"],
                             s["ops_max"], s["mbps"], s["cpu_s"], s["cpu_us_op"],
                             "%.3f" % speed if speed else "-", "%.3f" % cpux if cpux else "-",
                             s["truncated"]))
    print("(speedup = usmbd ops/s / Samba ops/s; cpu_x = Samba server CPU per op / usmbd's; "
          "both against Debian 12's Samba 4.17 (samba), for samba422 too)")
    print()
    for line in lines:
        print(line)
    print()


# The limit of each mode: gnutls' fastest way to compute it, as
# proto/sign.c does (GMAC: its AEAD AES-GCM over additional data, 2.7x
# its MAC API's GMAC, the cryptlimit line gmac; CMAC: its bulk AES-CBC
# chain, 1.6x its MAC API's CMAC, the line cmac).
SEC_LIMIT = {"gmac": "gmac_aead", "cmac": "cmac_cbc", "hmac": "hmacsha256",
             "gcm128": "aes128gcm", "gcm256": "aes256gcm"}


def report_secured(pin, names, servers, figs, crypto):
    """Issue 17: what signing and encryption cost each server: ops/s of
    W@MODE / ops/s of plain W on the same server (same run), the same for
    server CPU per op, usmbd / Samba in that mode (wall clock and CPU),
    and MB/s against one core of the crypto LIMIT."""
    rows = [n for n in names if "@" in n[0]]
    if not rows:
        return
    print("== signed and encrypted, %s: cost against the same server unsigned, "
          "and against one core of gnutls ==" % pin)
    print("%-24s %-9s %10s %8s %9s %9s %9s %8s %8s %8s" % (
        "workload@mode", "server", "ops/s", "MB/s", "cpu_us/op", "vs_plain", "cpu_plain",
        "speedup", "cpu_x", "of_limit"))
    lines = []
    for wl, phase, mb, _ in rows:
        base, mode = wl.split("@")
        sam = summarise(figs.get((pin, wl, phase, "samba"), []))
        for srv in servers:
            s = summarise(figs.get((pin, wl, phase, srv), []))
            p = summarise(figs.get((pin, base, phase, srv), []))
            if s is None:
                continue
            vs_plain = s["ops"] / p["ops"] if p else None
            cpu_plain = s["cpu_us_op"] / p["cpu_us_op"] if p and p["cpu_us_op"] > 0 else None
            other = sam and srv != "samba"
            vs_samba = s["ops"] / sam["ops"] if other else None
            cpu_x = sam["cpu_us_op"] / s["cpu_us_op"] if other and s["cpu_us_op"] > 0 else None
            lim = crypto.get(SEC_LIMIT[mode])
            of_limit = s["mbps"] / lim if lim and mb else None
            fmt = lambda v, f: f % v if v is not None else "-"  # noqa: E731
            print("%-24s %-9s %10.1f %8s %9.1f %9s %9s %8s %8s %8s" % (
                wl, srv, s["ops"], "%.1f" % s["mbps"] if mb else "-", s["cpu_us_op"],
                fmt(vs_plain, "%.3f"), fmt(cpu_plain, "%.2f"), fmt(vs_samba, "%.2fx"),
                fmt(cpu_x, "%.2fx"), fmt(of_limit, "%.3f")))
            lines.append("BENCHSEC pin=%s workload=%s mode=%s phase=%s server=%s median_ops=%.1f "
                         "mbps=%.2f cpu_us_per_op=%.1f vs_plain=%s cpu_vs_plain=%s vs_samba=%s "
                         "cpu_x=%s of_limit=%s limit=%s" % (
                             pin, base, mode, phase, srv, s["ops"], s["mbps"], s["cpu_us_op"],
                             fmt(vs_plain, "%.3f"), fmt(cpu_plain, "%.3f"), fmt(vs_samba, "%.3f"),
                             fmt(cpu_x, "%.3f"), fmt(of_limit, "%.3f"), SEC_LIMIT[mode]))
    print("(vs_plain = ops/s signed or encrypted / the same server's unsigned SMB 3.1.1 ops/s "
          "in this run; cpu_plain = server CPU per op signed or encrypted / unsigned (what "
          "the mode costs the server); speedup and cpu_x = against Debian 12's Samba 4.17 in "
          "the same mode; of_limit = MB/s / one core's LIMIT crypto=%s MB/s)"
          % "|".join(sorted(set(SEC_LIMIT.values()))))
    print()
    for line in lines:
        print(line)
    print()


# ---------------------------------------------------------------- memory

IDLECONN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idleconn.py")


def run_idle(tmp, n, classes, unavailable):
    """Item 4: n idle sessions of 20 users held open at once, each answering
    ECHO; each server fresh, its tree's memory read before and while they
    are open.  Returns printable lines."""
    print("== memory: %d idle sessions of %d users held open at once (issue 6 item 4; "
          "unpinned, fresh servers) ==" % (n, len(bl.IDLE_USERS)))
    print("%-8s %8s %8s %6s %12s %12s %12s %12s %14s %14s" % (
        "server", "sessions", "answered", "procs", "rss_idle_kib", "rss_kib", "pss_idle_kib",
        "pss_kib", "rss/sess_kib", "pss/sess_kib"))
    d = os.path.join(tmp, "idle")
    os.makedirs(d, exist_ok=True)
    ufile = os.path.join(d, "users")
    with open(ufile, "w") as f:
        for name, pw in bl.IDLE_USERS:
            f.write("%s %s\n" % (name, pw))
    lines, got = [], {}
    for cls in classes:
        srv = cls(d)
        why = unavailable.get(srv.name) or srv.start() or srv.add_users(bl.IDLE_USERS)
        try:
            if why:
                print("%-8s %s: not available (%s)" % (srv.name, srv.name, why))
                lines.append('BENCH workload=idle_sessions server=%s status=unavailable reason="%s"'
                             % (srv.name, why.replace('"', "'")))
                continue
            time.sleep(0.5)
            before = bl.mem_kib(srv.pid)
            c = bl.Paused([bl.PY, IDLECONN, str(srv.port), str(n), ufile, "900"], 960)
            during = None
            for phase, stage in c.events():
                if stage == "READY":
                    time.sleep(0.5)
                    during = bl.mem_kib(srv.pid)
                c.go()
            c.finish()
            res = c.results[0] if c.results else {}
            if c.error or during is None or not res:
                why = c.error or "no result"
                print("%-8s %s: not available (%s)" % (srv.name, srv.name, why))
                lines.append('BENCH workload=idle_sessions server=%s status=unavailable reason="%s"'
                             % (srv.name, why.replace('"', "'")))
                continue
            ok = int(res["ops"])
            rss_per = (during[1] - before[1]) / n
            pss_per = (during[2] - before[2]) / n
            got[srv.name] = during
            print("%-8s %8d %8d %6d %12d %12d %12d %12d %14.1f %14.1f" % (
                srv.name, n, ok, during[0], before[1], during[1], before[2], during[2],
                rss_per, pss_per))
            ratio = ""
            if srv.name != "samba" and "samba" in got:
                ratio = " rss_ratio=%.2f pss_ratio=%.2f" % (
                    got["samba"][1] / max(during[1], 1), got["samba"][2] / max(during[2], 1))
            lines.append("BENCH workload=idle_sessions server=%s sessions=%d answered=%d users=%d "
                         "procs=%d rss_idle_kib=%d rss_kib=%d pss_idle_kib=%d pss_kib=%d "
                         "rss_per_session_kib=%.1f pss_per_session_kib=%.1f open_secs=%s%s" % (
                             srv.name, n, ok, len(bl.IDLE_USERS), during[0], before[1], during[1],
                             before[2], during[2], rss_per, pss_per, res.get("open_secs", "-"),
                             ratio))
        finally:
            srv.stop()
    print("(rss = summed VmRSS of the server's processes, a shared page once per process; "
          "pss = proportional set size, shared pages divided; per session = growth / sessions)")
    print()
    for line in lines:
        print(line)
    print()


# ---------------------------------------------------------------- meters

def meter_hooks(srv, wl, tmp, store):
    """READY/DONE callbacks that strace the serving processes and read the
    malloc counters of the whole tree around one phase."""
    def ready(phase):
        tree = bl.tree_pids(srv.pid)
        # A new connection per op: follow the whole tree from the master.
        pids = tree if wl == "connect" else srv.serving_pids()
        st = bl.Strace(pids, os.path.join(tmp, "strace.%s.%s.%s" % (srv.name, wl, phase))) \
            if pids else None
        return {"pids": pids, "strace": st, "m_serv": srv.malloc_counts(set(pids)),
                "m_tree": srv.malloc_counts()}

    def done(phase, ctx):
        if wl == "connect":     # the processes born (and gone) in the phase too
            ctx["pids"] = bl.tree_pids(srv.pid)
            ctx["m_serv"] = ctx["m_tree"]
            m_serv = srv.malloc_counts()
        else:
            m_serv = srv.malloc_counts(set(ctx["pids"]))
        m_tree = srv.malloc_counts()
        sc = ctx["strace"].stop() if ctx["strace"] else {}

        def delta(a, b):
            return sum(v[0] for v in a.values()) - sum(v[0] for p, v in b.items() if p in a)
        return {"pids": ctx["pids"], "syscalls": sc,
                "alloc_serv": delta(m_serv, ctx["m_serv"]),
                "alloc_tree": delta(m_tree, ctx["m_tree"]),
                "preload_seen": bool(m_tree)}
    return ready, done


def run_meters(tmp, wls, big, servers, unavailable):
    print("== overhead meters (one unpinned run each; servers under strace -c -f and "
          "the LD_PRELOAD malloc counter) ==")
    err = bl.build_malloc_so()
    if err:
        print("meters: not available (%s)" % err)
        return
    mt = os.path.join(tmp, "meters")
    os.makedirs(mt, exist_ok=True)
    print("%-22s %-8s %6s %9s %9s %9s %9s %9s %9s %9s %10s %10s" % (
        "workload/phase", "server", "ops", "sys/op", "setresuid", "setresgid", "setgroups",
        "geteuid", "getegid", "cred/op", "alloc/op", "tree_alloc"))
    lines = []
    for srv_cls in servers:
        srv = srv_cls(mt, preload=True)
        why = unavailable.get(srv.name) or srv.start()
        try:
            if why:
                print("%-22s %-8s %s: not available (%s)" % ("*", srv.name, srv.name, why))
                lines.append('METER workload=* server=%s status=unavailable reason="%s"' % (srv.name, why))
                continue
            prepare_share(srv, big)
            for wl, _, args, _ in wls:
                ready, done = meter_hooks(srv, wl, mt, None)
                # A quarter of the timed size: counts per op do not depend on it.
                margs = list(args)
                for flag in ("-n", "-s"):
                    if flag in margs and wl not in ("read_4k", "read_1m"):
                        i = margs.index(flag) + 1
                        margs[i] = str(max(int(margs[i]) // 4, 64 if flag == "-n" else 4 * MIB))
                out, err = run_client(srv, smbload_argv(srv, margs, 600), False, 900, ready, done)
                if err:
                    print("%-22s %-8s %s: not available (%s)" % (wl, srv.name, srv.name, err))
                    lines.append('METER workload=%s server=%s status=unavailable reason="%s"'
                                 % (wl, srv.name, err.replace('"', "'")))
                    continue
                for phase, d in out.items():
                    m = d.get("meters")
                    ops = d.get("ops", 0)
                    if not m or ops <= 0:
                        continue
                    sc = m["syscalls"]
                    cred = sum(sc.get(x, 0) for x in bl.CRED_ALL)
                    per = {x: sc.get(x, 0) / ops for x in bl.CRED_LISTED}
                    label = "%s/%s" % (wl, phase) if wl.startswith("small") else wl
                    print("%-22s %-8s %6d %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %10.1f %10.1f" % (
                        label, srv.name, ops, sc["total"] / ops, per["setresuid"], per["setresgid"],
                        per["setgroups"], per["geteuid"], per["getegid"], cred / ops,
                        m["alloc_serv"] / ops, m["alloc_tree"] / ops))
                    lines.append("METER workload=%s phase=%s server=%s ops=%d pids=%s syscalls_per_op=%.2f %s "
                                 "cred_per_op=%.3f allocs_per_op=%.2f tree_allocs_per_op=%.2f" % (
                                     wl, phase, srv.name, ops, ",".join(map(str, m["pids"])),
                                     sc["total"] / ops,
                                     " ".join("%s=%.3f" % (k, v) for k, v in per.items()),
                                     cred / ops, m["alloc_serv"] / ops, m["alloc_tree"] / ops))
        finally:
            srv.stop()
    print("(per op = per client operation of the workload: one write, one file, one loop...;"
          " alloc = malloc+calloc+realloc+memalign calls in the serving processes)")
    print()
    for line in lines:
        print(line)
    print()


# ---------------------------------------------------------------- main

def main():
    # Let the finally blocks stop the servers on a signal too.
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda *a: sys.exit(130))
    f = scale_factor()
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    pins = {"both": ["unpinned", "pinned"], "unpinned": ["unpinned"],
            "pinned": ["pinned"]}[os.environ.get("BENCH_PIN", "both")]
    timeout = int(os.environ.get("BENCH_TIMEOUT", "240"))
    wanted = os.environ.get("BENCH_SERVERS", "samba,usmbd").split(",")
    classes = [c for c in (bl.Samba, bl.Samba422, bl.Usmbd, bl.UsmbdB) if c.name in wanted]
    wls, big = workloads(f)
    for prog in (bl.SMBLOAD, bl.NETLIMIT):
        if not os.access(prog, os.X_OK):
            sys.exit("bench: %s not built (make bench builds it)" % prog)
    bl.ensure_users(bl.IDLE_USERS)
    tmp = bl.make_tmp()
    print("bench: %s, scale %s (factor %g), %d runs per figure, big file %d MiB, tmp %s" % (
        time.strftime("%Y-%m-%d %H:%M:%S %Z"), os.environ.get("BENCH_SCALE", "small"), f,
        runs, big // MIB, tmp))
    print("bench: %s; %s" % (subprocess.run([bl.SMBD, "--version"], capture_output=True,
                                             text=True).stdout.strip(),
                              os.path.relpath(bl.USMBD, bl.ROOT)))
    print()
    servers, unavailable, figs = [], {}, {}
    try:
        crypto = measure_limits(tmp, f)
        wls += secured_workloads(wls, tmp)
        for cls in classes:
            srv = cls(tmp)
            why = srv.start()
            if why:
                unavailable[srv.name] = why
                print("%s: not available (%s)" % (srv.name, why))
                srv.stop()
                continue
            prepare_share(srv, big)
            servers.append(srv)
            print("bench: %s on port %d, CPU from %s%s" % (
                srv.name, srv.port, srv.cpu_method(),
                "; " + srv.version() if isinstance(srv, bl.Samba) else ""))
        local = os.path.join(tmp, "local")
        os.makedirs(local, exist_ok=True)
        up_n = int(wls[0][2][wls[0][2].index("-n") + 1]) if wls and wls[0][0] == "upload_1m" else 0
        for i in range(up_n):
            with open(os.path.join(local, "f%05d" % i), "wb") as fo:
                fo.write(os.urandom(MIB))
        names = []
        for wl, _, args, mb in wls:
            phases = ["create", "list", "stat", "read", "delete"] if wl.startswith("small") \
                else [args[1]]
            names += [(wl, p, mb, "smbload") for p in phases]
        if os.environ.get("BENCH_SMBCLIENT", "1") == "1":
            if up_n:
                names.append(("upload_1m", "upload", True, "smbclient"))
            if any(w[0] == "read_1m" for w in wls):
                names.append(("read_1m", "read", True, "smbclient"))
        for pin in pins:
            # Round-robin: run r of every workload (unsigned and its
            # signed and encrypted modes alike), then run r + 1, so that
            # a drift of the machine's load (a shared VM) falls on all of
            # them, not on the modes measured last.
            for r, (wl, _, args, _) in ((r, w) for r in range(runs) for w in wls):
                for srv in servers:
                    if (pin, wl, srv.name) in unavailable:
                        continue
                    bl.log("bench: %s %s run %d/%d %s" % (pin, wl, r + 1, runs, srv.name))
                    out, err = run_client(srv, smbload_argv(srv, args, timeout),
                                          pin == "pinned", timeout + 60)
                    if err:
                        unavailable[(pin, wl, srv.name)] = err
                        continue
                    for phase, d in out.items():
                        if "ops" in d:
                            figs.setdefault((pin, wl, phase, srv.name), []).append(d)
            for wl, phase, _, via in names:
                if via != "smbclient":
                    continue
                for r in range(runs):
                    for srv in servers:
                        if (pin, wl + "/sc", srv.name) in unavailable:
                            continue
                        bl.log("bench: %s %s smbclient run %d/%d %s" % (pin, wl, r + 1, runs, srv.name))
                        d, err = run_smbclient(srv, "upload" if wl == "upload_1m" else "read",
                                               local, pin == "pinned", timeout)
                        if err:
                            unavailable[(pin, wl + "/sc", srv.name)] = err
                            continue
                        figs.setdefault((pin, wl, phase + "", srv.name + "/sc"), []).append(d)
        for srv in servers:
            srv.stop()
        allnames = [c.name for c in classes]
        for pin in pins:
            sm = [n for n in names if n[3] == "smbload"]
            report(pin, sm, allnames, figs, unavailable)
            report_secured(pin, sm, allnames, figs, crypto)
            sc = [n for n in names if n[3] == "smbclient"]
            if sc:
                scfigs = {(k[0], k[1], k[2], k[3][:-3]): v for k, v in figs.items()
                          if k[3].endswith("/sc")}
                scun = dict(unavailable)
                for k, v in unavailable.items():
                    if isinstance(k, tuple) and k[1].endswith("/sc"):
                        scun[(k[0], k[1][:-3], k[2])] = v
                report(pin, sc, allnames, scfigs, scun,
                       "smbclient (one command line each, connection setup included)")
        only = [x for x in os.environ.get("BENCH_ONLY", "").split(",") if x]
        if not only or "idle" in only:
            idle_n = int(os.environ.get("BENCH_IDLE_N", "0")) or max(20, int(2000 * f))
            run_idle(tmp, idle_n, classes,
                     {k: v for k, v in unavailable.items() if isinstance(k, str)})
        if os.environ.get("BENCH_METERS", "1") == "1":
            run_meters(tmp, wls, big, classes, {k: v for k, v in unavailable.items()
                                                if isinstance(k, str)})
        if not only or "posix" in only:
            import posixbench
            posixbench.run_posix(tmp, f, runs, wanted, timeout + 600)
    finally:
        for srv in servers:
            srv.stop()
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("bench: kept %s" % tmp)


if __name__ == "__main__":
    main()
