#!/usr/bin/env python3
"""Open+close rate with 1, 2 and 8 clients contending on one directory
(issue 5 item 9), usmbd and Samba side by side, and usmbd's LMDB write
transactions per open+close pair.

    t/bench/contend.py                 # or: make bench-contend
    CONTEND_CLIENTS=1,2,8 CONTEND_N=2000 CONTEND_SECS=8 t/bench/contend.py

Each client is one t/bench/smbload process (libsmbclient, SMB3) with its
own connection; clients alternate between the users alice and bob.  All
of them work in the one directory "contend" of the share:

  createclose  CREATE(new name) + CLOSE + CREATE(DELETE_ON_CLOSE) + CLOSE,
               i.e. two open+close pairs per op, every one an insert into
               and a removal from the same LMDB state; the directory
               changes on every op (Samba: its locking.tdb and the dir)
  openqi       open + fstat + close of the client's own file in the same
               directory: one open+close pair per op, no directory change

Workers: usmbd serves each user in its own worker process; with the
default `max workers per user = 1`, N clients of 2 users get 2 workers
(1 for one client).  The "spread" runs set `max workers per user = 4` so
that 8 clients get 8 workers (4 per user, each worker one connection):
that is the 8-workers-contending figure.  The number of worker processes
alive during each run is printed (`workers=`).

Every client starts its timed loop at the same moment (smbload -P: READY,
then go), and the rate is the sum of the clients' ops over the longest
client's window; each figure is the median of CONTEND_RUNS (3) windows,
with the min-max spread.  LMDB write transactions are counted from the outside:
LMDB's last transaction id of the state env (mdb_stat -n -e
LOCKDIR/state.mdb) before and after the timed window, divided by the
open+close pairs in it.  Output: a table and one line per figure:

  CONTEND server=usmbd workload=createclose clients=8 spread=1 workers=8
      ops=... secs=... ops_per_s=... pairs=... txn=... txn_per_pair=...
      truncated=0

Each client runs CONTEND_N ops (default 2,000, after 20 warm-up ops); the
aggregate rate is the sum of their ops over the slowest client's window
(all start together, so this is conservative: the fastest finish first).
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import statehold  # noqa: E402

CLIENTS = [int(x) for x in os.environ.get("CONTEND_CLIENTS", "1,2,8").split(",") if x]
N = int(os.environ.get("CONTEND_N", "2000"))	# ops per client
SECS = float(os.environ.get("CONTEND_SECS", "60"))	# a client's time limit
WARM = 20
RUNS = int(os.environ.get("CONTEND_RUNS", "3"))	# the median is printed
SERVERS = os.environ.get("CONTEND_SERVERS", "usmbd,samba").split(",")
WORKLOADS = os.environ.get("CONTEND_WORKLOADS", "createclose,openqi").split(",")
# usmbd runs once per `state partitions` value: 1 (one env, one writer lock)
# beside the default 8 (a file's opens in the data env of its inode).
PARTS = [int(x) for x in os.environ.get("CONTEND_PARTS", "1,8").split(",") if x]
PAIRS_PER_OP = {"createclose": 2, "openqi": 1}


class UsmbdSpread(bl.Usmbd):
    """usmbd with extra [global] lines (max workers per user, state partitions)."""

    def __init__(self, tmp, extra, tag, parts):
        self.name = "usmbd" + tag
        self.parts = parts
        self.extra = extra + "\n\tstate partitions = %d" % parts
        super().__init__(tmp)

    def start(self):
        err = super().start()
        if err or not self.extra:
            return err
        # The key is read at start: restart with it in [global].
        self.stop()
        with open(self.conf) as f:
            text = f.read()
        text = text.replace("[share]", "%s\n\n[share]" % self.extra, 1)
        with open(self.conf, "w") as f:
            f.write(text)
        self.spawn([bl.USMBD, "-F", "-s", self.conf])
        if not self.wait_up():
            return "usmbd did not come up: " + self.log_tail()
        return None

    def state_files(self):
        """The main env and the data envs (state-I.mdb, with partitions > 1)."""
        lock = os.path.join(self.dir, "lock")
        return [os.path.join(lock, "state.mdb")] + [
            os.path.join(lock, "state-%d.mdb" % i) for i in range(self.parts)
            if self.parts > 1]

    def last_txn(self):
        """Write transactions so far: the envs' last transaction ids added."""
        total = 0
        for f in self.state_files():
            try:
                r = subprocess.run(["mdb_stat", "-n", "-e", f],
                                   capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                return None
            m = re.search(r"Last transaction ID:\s*(\d+)", r.stdout)
            if not m:
                return None
            total += int(m.group(1))
        return total

    def workers(self):
        """Worker processes serving at least one connection now."""
        try:
            r = self.ctl("status", "--processes", "--json")
        except (OSError, subprocess.TimeoutExpired):
            return None
        if r.returncode:
            return None
        try:
            procs = json.loads(r.stdout).get("processes", [])
        except ValueError:
            return None
        return sum(1 for p in procs
                   if p.get("role") == "worker" and p.get("connections", 0) > 0)


def smbload(srv, user, workload, i):
    name, pw = user
    argv = [bl.SMBLOAD, "-u", srv.url, "-U", "%s%%%s" % (name, pw), "-w", workload,
            "-n", str(N + WARM), "-W", str(WARM), "-t", str(int(SECS)), "-P",
            "-d", "contend"]
    if workload == "openqi":
        argv += ["-f", "contend/own_%s_%d" % (name, i)]
    return bl.Paused(argv, SECS + 60)


def run(srv, workload, nclients):
    """One timed window; returns a dict of the figures or an error string."""
    # One directory every user may create in (sticky: each removes its own).
    d = os.path.join(srv.share, "contend")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o1777)
    clients = [smbload(srv, bl.USERS[i % 2], workload, i) for i in range(nclients)]
    gens = [c.events() for c in clients]
    out = {}
    try:
        for c, g in zip(clients, gens):
            stage = next(g, (None, None))[1]
            if stage != "READY":
                return "client did not get ready: %s" % (c.error or "no READY")
        txn0 = srv.last_txn() if hasattr(srv, "last_txn") else None
        hold0 = statehold.sample(srv) if hasattr(srv, "last_txn") else None
        workers = srv.workers() if hasattr(srv, "workers") else None
        for c in clients:
            c.go()
        for c, g in zip(clients, gens):
            stage = next(g, (None, None))[1]
            if stage != "DONE":
                return "client did not finish: %s" % (c.error or "no DONE")
        txn1 = srv.last_txn() if hasattr(srv, "last_txn") else None
        hold = statehold.delta(hold0, statehold.sample(srv) if hold0 else None)
        for c in clients:
            c.go()
        for g in gens:
            for _ in g:
                pass
    finally:
        for c in clients:
            c.finish()
    ops = 0
    secs = 0.0
    truncated = 0
    for c in clients:
        if c.error or not c.results:
            return "client error: %s" % (c.error or "no RESULT")
        r = c.results[-1]
        ops += int(r["ops"])
        secs = max(secs, float(r["secs"]))
        truncated |= r.get("truncated", "0") != "0"
    out["truncated"] = int(truncated)
    out["ops"] = ops
    out["secs"] = secs
    out["ops_per_s"] = ops / secs if secs > 0 else 0.0
    out["pairs"] = ops * PAIRS_PER_OP[workload]
    out["workers"] = workers
    out["parts"] = getattr(srv, "parts", 0)
    if hold is not None:
        _, out["hold_create"], out["wait_create"] = statehold.per_txn(hold, "create")
        _, out["hold_close"], out["wait_close"] = statehold.per_txn(hold, "close")
    if txn0 is not None and txn1 is not None:
        out["txn"] = txn1 - txn0
        out["txn_per_pair"] = (txn1 - txn0) / out["pairs"] if out["pairs"] else 0.0
    return out


def print_limit(rows):
    """The LIMIT lines, for each `state partitions` value measured: the
    open+close pairs per second one env's writer lock admits, 1 / (hold of a
    CREATE + hold of a CLOSE), from usmbd's one-client createclose window
    (nobody else queues for the lock, so the wait is mdb_txn_begin's own
    work, counted in), and N times that for N data envs (files spread over
    N independent locks by inode: the ceiling for opens of different files;
    one file's opens stay behind one lock); and the same from the most
    contended window, where preemption inside a transaction shows."""
    for parts in sorted({r.get("parts", 0) for name, spread, wl, n, r in rows
                         if name == "usmbd"}):
        mine = [(n, spread, r) for name, spread, wl, n, r in rows
                if name == "usmbd" and wl == "createclose" and "hold_create" in r
                and r.get("parts", 0) == parts]
        if not mine:
            continue
        k = max(parts, 1)
        n, spread, r = min(mine, key=lambda x: x[0])
        one = statehold.ceiling(r["hold_create"] + r["wait_create"],
                                r["hold_close"] + r["wait_close"])
        print("LIMIT state_env_pairs_per_s=%.0f parts=%d state_pairs_per_s=%.0f "
              "clients=%d hold_create_us=%.2f hold_close_us=%.2f begin_create_us=%.2f "
              "begin_close_us=%.2f (one env: 1 / (hold+begin of a CREATE + of a "
              "CLOSE); all %d: %d x that, for different files; t/bench/README.md "
              "\"The state layer's ceiling\")" % (
                  one, parts, one * k, n, r["hold_create"] / 1e3, r["hold_close"] / 1e3,
                  r["wait_create"] / 1e3, r["wait_close"] / 1e3, k, k))
        n, spread, r = max(mine, key=lambda x: (x[0], x[1]))
        one = statehold.ceiling(r["hold_create"], r["hold_close"])
        print("LIMIT state_env_pairs_per_s_contended=%.0f parts=%d "
              "state_pairs_per_s_contended=%.0f clients=%d spread=%d "
              "hold_create_us=%.2f hold_close_us=%.2f wait_create_us=%.2f "
              "wait_close_us=%.2f (1 / (hold of a CREATE + of a CLOSE) under "
              "contention: a holder preempted inside its transaction shows here)" % (
                  one, parts, one * k, n, spread,
                  r["hold_create"] / 1e3, r["hold_close"] / 1e3,
                  r["wait_create"] / 1e3, r["wait_close"] / 1e3))


def main():
    for prog in (bl.SMBLOAD,):
        if not os.access(prog, os.X_OK):
            print("contend: %s is not built (make)" % prog, file=sys.stderr)
            return 1
    bl.ensure_users()
    tmp = bl.make_tmp()
    rows = []
    configs = []
    for s in SERVERS:
        if s == "usmbd":
            for p in PARTS:
                configs.append(("usmbd", 0, lambda p=p: UsmbdSpread(
                    tmp, "", "-p%d" % p, p)))
                if any(n > 2 for n in CLIENTS):
                    configs.append(("usmbd", 1, lambda p=p: UsmbdSpread(
                        tmp, "\tmax workers per user = 4", "-spread-p%d" % p, p)))
        elif s == "samba":
            configs.append(("samba", 0, lambda: bl.Samba(tmp)))
    failed = 0
    for name, spread, make in configs:
        srv = make()
        err = srv.start()
        if err:
            print("CONTEND server=%s status=unavailable reason=%r" % (name, err))
            srv.stop()
            failed += 1
            continue
        try:
            for wl in WORKLOADS:
                for n in CLIENTS:
                    if spread and n <= 2:
                        continue	# the same as the default mapping
                    runs = [run(srv, wl, n) for _ in range(RUNS)]
                    bad = [x for x in runs if isinstance(x, str)]
                    r = bad[0] if bad else sorted(
                        runs, key=lambda x: x["ops_per_s"])[len(runs) // 2]
                    if not bad:
                        r["min"] = min(x["ops_per_s"] for x in runs)
                        r["max"] = max(x["ops_per_s"] for x in runs)
                        r["txn_per_pair_max"] = max(x.get("txn_per_pair", 0)
                                                    for x in runs)
                    if isinstance(r, str):
                        print("CONTEND server=%s workload=%s clients=%d spread=%d "
                              "status=failed reason=%r" % (name, wl, n, spread, r))
                        failed += 1
                        continue
                    line = ("CONTEND server=%s workload=%s clients=%d spread=%d "
                            "parts=%s workers=%s runs=%d ops=%d secs=%.3f ops_per_s=%.1f "
                            "min_ops_per_s=%.1f max_ops_per_s=%.1f pairs=%d" %
                            (name, wl, n, spread, r["parts"] or "-",
                             r["workers"] if r["workers"] is not None
                             else "-", RUNS, r["ops"], r["secs"], r["ops_per_s"],
                             r["min"], r["max"], r["pairs"]))
                    if "txn" in r:
                        line += " txn=%d txn_per_pair=%.3f txn_per_pair_max=%.3f" % (
                            r["txn"], r["txn_per_pair"], r["txn_per_pair_max"])
                    if "hold_create" in r:
                        line += (" hold_create_us=%.2f hold_close_us=%.2f wait_create_us=%.2f"
                                 " wait_close_us=%.2f" % (
                                     r["hold_create"] / 1e3, r["hold_close"] / 1e3,
                                     r["wait_create"] / 1e3, r["wait_close"] / 1e3))
                    line += " truncated=%d" % r["truncated"]
                    print(line, flush=True)
                    rows.append((name, spread, wl, n, r))
        finally:
            srv.stop()
    print()
    print("open+close pairs per second, median of %d runs (min-max)" % RUNS)
    print("%-8s %-12s %7s %5s %7s %6s %22s %9s" % ("server", "workload", "clients", "parts",
                                                 "workers", "spread", "open+close/s",
                                                 "txn/pair"))
    for name, spread, wl, n, r in rows:
        k = PAIRS_PER_OP[wl]
        print("%-8s %-12s %7d %5s %7s %6s %8.0f (%5.0f-%5.0f) %9s" % (
            name, wl, n, r["parts"] or "-", r["workers"] if r["workers"] is not None else "-",
            "yes" if spread else "no", r["ops_per_s"] * k, r["min"] * k, r["max"] * k,
            "%.3f" % r["txn_per_pair"] if "txn_per_pair" in r else "-"))
    print_limit(rows)
    if not os.environ.get("BENCH_KEEP"):
        subprocess.run(["rm", "-rf", tmp])
    return 1 if failed else 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print("contend: %.0f s" % (time.time() - t0))
    sys.exit(rc)
