"""Servers and meters shared by bench.py (make bench) and perfcheck.py.

Both servers are started here with private configs under one temp dir on
tmpfs, on 127.0.0.1 and a free port each, with the same users (alice, bob)
and a share on tmpfs; Server.stop() kills them, and every caller stops them
in a finally block (run-bench.sh adds a trap on the pid files as a backstop).

Meters:
  * cpu_seconds(): utime+stime of the server's master and all its live
    descendants, plus cutime+cstime (the children they have reaped), from
    /proc/PID/stat: sampled before and after a window, the difference is the
    CPU the whole server spent in it, whichever process did the work.
  * sched_ns(), sched_delta(): the run time in ns of every thread of the
    server's process tree, from /proc/PID/task/TID/schedstat, sampled before
    and after a window: its CPU with ns precision where /proc/PID/stat
    counts 10 ms ticks.  Counted thread by thread, so a thread that ends
    inside the window takes only its time in the window with it (Samba's
    worker threads come and go; usmbd's io_uring workers too).
  * Strace: `strace -c -f -p PID...` around a window; counts per syscall.
  * malloc counts: the LD_PRELOAD counter t/bench/malloc_count.c, one shared
    file per process under MALLOC_COUNT_DIR, read at any moment.
"""

import glob
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
SMBLOAD = os.path.join(BUILD, "t/bench/smbload")
NETLIMIT = os.path.join(BUILD, "t/bench/netlimit")
CRYPTLIMIT = os.path.join(BUILD, "t/bench/cryptlimit")
MALLOC_SO = os.path.join(BUILD, "t/bench/malloc_count.so")
USMBD = os.environ.get("USMBD", os.path.join(BUILD, "usmbd"))
USMBCTL = os.environ.get("USMBCTL", os.path.join(BUILD, "usmbctl"))
SMBD = "/usr/sbin/smbd"
# bookworm-backports' Samba 4.22, unpacked beside Debian 12's (samba422).
SAMBA_REF = os.path.join(ROOT, "scripts/samba-ref.sh")
PY = "/usr/bin/python3"     # Debian's, which has impacket
USERS = (("alice", "alicepw1"), ("bob", "bobpw1"))
# The idle-sessions workload (issue 6 item 4): 20 more accounts.
IDLE_USERS = tuple(("benchu%02d" % i, "benchpw%02d" % i) for i in range(1, 21))
CLK_TCK = os.sysconf("SC_CLK_TCK")
# What the overhead meters list by name; CRED_ALL is what "0 credential
# syscalls" means (any of them, by any thread of the serving process).
CRED_LISTED = ("setresuid", "setresgid", "setgroups", "geteuid", "getegid")
CRED_ALL = CRED_LISTED + ("setuid", "setgid", "setreuid", "setregid",
                          "setfsuid", "setfsgid", "getuid", "getgid",
                          "getresuid", "getresgid", "getgroups", "capget",
                          "capset")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    for _ in range(50):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        if p not in (445, 4450):
            return p
    raise RuntimeError("no free port")


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def ensure_users(extra=()):
    """Unix accounts alice and bob, any extra ones (and usmbd's own accounts)
    exist.  Extra accounts get no home directory."""
    for name, _ in extra:
        if subprocess.run(["id", name], capture_output=True).returncode:
            subprocess.run(["useradd", "-M", "-d", "/nonexistent", "-s",
                            "/usr/sbin/nologin", name], check=True)
    for name, _ in USERS:
        if subprocess.run(["id", name], capture_output=True).returncode:
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    if subprocess.run(["getent", "group", "usmbd-state"], capture_output=True).returncode:
        subprocess.run(["groupadd", "-r", "usmbd-state"], check=True)
    if subprocess.run(["id", "usmbd"], capture_output=True).returncode:
        subprocess.run(["useradd", "-r", "-M", "-d", "/nonexistent", "-s",
                        "/usr/sbin/nologin", "usmbd"], check=True)


def make_tmp():
    """One temp dir on tmpfs for configs, state and both shares."""
    t = os.environ.get("BENCH_TMP")
    if t:       # made by run-bench.sh, which kills what is left in it at exit
        os.makedirs(t, exist_ok=True)
    else:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        t = tempfile.mkdtemp(prefix="usmbd-bench.", dir=base)
    os.chmod(t, 0o755)
    return t


# ---------------------------------------------------------------- /proc

def _stat_fields(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()     # fields from "state" on


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            ppid = int(_stat_fields(int(d))[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_pids(root):
    """root and all its descendants, alive now."""
    kids = children_map()
    out, todo = [], [root]
    while todo and len(out) < 100000:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def cpu_seconds(root):
    total = 0
    for p in tree_pids(root):
        try:
            f = _stat_fields(p)
        except (OSError, ValueError):
            continue
        # utime stime cutime cstime are fields 14-17 of stat(5)
        total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    return total / CLK_TCK


def sched_ns(root):
    """{tid: ns run so far} of every thread of root's process tree."""
    out = {}
    for p in tree_pids(root):
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                with open("/proc/%d/task/%s/schedstat" % (p, t)) as f:
                    out[int(t)] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return out


def threads_ns(pids):
    """ns run so far by every thread of these processes (a process or
    thread that ended meanwhile counts nothing): the server CPU figure of
    the listing benches (eacost, manglecost, hidecost)."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir("/proc/%s/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def figures_ms(v):
    """median, min and max of a list of ms, as those benches print them."""
    import statistics
    return "median %8.2f ms  min %8.2f  max %8.2f" % (
        statistics.median(v), min(v), max(v))


def alternate(keys, runs, measure, cpu_ns):
    """The listing benches' loop: measure(key) once per key to warm, then
    runs rounds of every key in turn (a drift of the load falls on all
    alike).  Returns ({key: [wall ms]}, {key: [server CPU ms]},
    {key: the last result of measure})."""
    times = {k: [] for k in keys}
    cpu = {k: [] for k in keys}
    last = {k: measure(k) for k in keys}
    for _ in range(runs):
        for k in keys:
            c0 = cpu_ns()
            t0 = time.perf_counter()
            last[k] = measure(k)
            times[k].append((time.perf_counter() - t0) * 1000)
            cpu[k].append((cpu_ns() - c0) / 1e6)
    return times, cpu, last


def sched_delta(before, after):
    """ns run between two sched_ns() samples by the threads alive at the
    second (a thread started since counts whole)."""
    return sum(v - before.get(t, 0) for t, v in after.items())


def rss_kib(root):
    total = 0
    for p in tree_pids(root):
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def mem_kib(root):
    """(processes, summed VmRSS, summed Pss) of a process tree, in KiB.  RSS
    counts a shared page once per process that maps it (Samba's forked
    children share most of theirs); PSS divides it among them."""
    n = rss = pss = 0
    for p in tree_pids(root):
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
            n += 1
        except OSError:
            pass
    return n, rss, pss


def set_affinity(root, cpus):
    """Pin (or unpin) every thread of the server tree; new children inherit."""
    for p in tree_pids(root):
        try:
            for tid in os.listdir("/proc/%d/task" % p):
                try:
                    os.sched_setaffinity(int(tid), cpus)
                except OSError:
                    pass
        except OSError:
            pass


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def socket_pids(port, tree):
    """Pids among `tree` holding an established TCP socket on local `port`."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True).stdout
    pids = {int(m) for m in re.findall(r"pid=(\d+)", out)}
    return sorted(p for p in pids if p in set(tree))


# ---------------------------------------------------------------- cgroups

def cgroup_make(tag):
    """A CPU-accounting cgroup of our own, or None: its counter has ns
    precision and keeps the time of processes that have exited, which
    /proc/PID/stat (10 ms ticks, reaped children only) does not."""
    v2 = "/sys/fs/cgroup/cgroup.controllers"
    roots = ["/sys/fs/cgroup"] if os.path.exists(v2) else ["/sys/fs/cgroup/cpuacct",
                                                          "/sys/fs/cgroup/cpu,cpuacct"]
    for root in roots:
        # Named after run-bench.sh's temp dir, so that its exit trap can
        # remove what a killed driver left.
        run = os.path.basename(os.environ.get("BENCH_TMP", "")) or "usmbd-bench.%d" % os.getpid()
        path = os.path.join(root, "%s.%s" % (run, tag))
        try:
            os.mkdir(path)
        except FileExistsError:
            pass
        except OSError:
            continue
        if cgroup_usage(path) is not None:
            return path
        os.rmdir(path)
    return None


def cgroup_usage(path):
    try:
        if os.path.exists(os.path.join(path, "cpuacct.usage")):
            with open(os.path.join(path, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9
        with open(os.path.join(path, "cpu.stat")) as f:
            for line in f:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError):
        pass
    return None


def cgroup_remove(path):
    # Empty once every process of the server has exited (bounded wait).
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


# ---------------------------------------------------------------- servers

class Server:
    name = "?"

    def __init__(self, tmp, preload=False):
        self.dir = os.path.join(tmp, self.name)
        self.share = os.path.join(self.dir, "share")
        self.port = free_port()
        self.proc = None
        self.log = os.path.join(self.dir, "server.log")
        self.preload = preload
        self.mc_dir = os.path.join(self.dir, "malloc") if preload else None
        self.url = "smb://127.0.0.1:%d/share" % self.port
        self.cg = None
        for d in ("", "share", "run", "lock", "private", "state", "cache", "malloc"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        os.chmod(self.share, 0o1777)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def env(self):
        e = dict(os.environ)
        if self.preload:
            e["LD_PRELOAD"] = MALLOC_SO
            e["MALLOC_COUNT_DIR"] = self.mc_dir
        return e

    def spawn(self, argv):
        self.cg = cgroup_make(self.name + str(self.port))
        procs = os.path.join(self.cg, "cgroup.procs") if self.cg else None

        def enter_cgroup():
            if procs:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
        lf = open(self.log, "ab")
        self.proc = subprocess.Popen(argv, stdout=lf, stderr=lf, stdin=subprocess.DEVNULL,
                                     env=self.env(), start_new_session=True,
                                     preexec_fn=enter_cgroup)
        lf.close()
        with open(os.path.join(self.dir, "server.pid"), "w") as f:
            f.write("%d\n" % self.proc.pid)

    def wait_up(self, secs=15):
        end = time.time() + secs
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            if port_open(self.port):
                return True
            time.sleep(0.1)
        return False

    def log_tail(self, n=5):
        try:
            with open(self.log, errors="replace") as f:
                return " | ".join(l.strip() for l in f.readlines()[-n:])
        except OSError:
            return ""

    def cpu_seconds(self):
        """CPU of the master and every child it ever had, since start."""
        if self.cg:
            v = cgroup_usage(self.cg)
            if v is not None:
                return v
        return cpu_seconds(self.pid)

    def cpu_method(self):
        return "cgroup " + self.cg if self.cg else "/proc/PID/stat of the process tree"

    def stop(self):
        if not self.proc or self.proc.poll() is not None:
            self.proc = None
            if self.cg:
                cgroup_remove(self.cg)
                self.cg = None
            return
        pids = tree_pids(self.proc.pid)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        # Children that outlived their master (they should not): by pid.
        for p in pids[1:]:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        self.proc = None
        if self.cg:
            cgroup_remove(self.cg)
            self.cg = None

    def serving_pids(self):
        return socket_pids(self.port, tree_pids(self.pid))

    def malloc_counts(self, pids=None):
        """{pid: calls} of malloc+calloc+realloc+memalign (frees apart)."""
        out = {}
        if not self.mc_dir:
            return out
        for fn in os.listdir(self.mc_dir):
            if not fn.isdigit() or (pids is not None and int(fn) not in pids):
                continue
            try:
                with open(os.path.join(self.mc_dir, fn), "rb") as f:
                    v = struct.unpack("<7Q", f.read(56))
            except (OSError, struct.error):
                continue
            if v[0] == 0x544e434f4c4c414d:
                out[int(fn)] = (v[2] + v[3] + v[4] + v[6], v[5])
        return out


def samba_conf(port, d, log, level, share):
    """The reference Samba's smb.conf (t/compat/samba.conf.in, shared with
    t/compat/compare.sh and the kernel-client harness)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "compat", "samba.conf.in")
    with open(path) as f:
        text = f.read()
    for k, v in (("@PORT@", port), ("@DIR@", d), ("@LOG@", log),
                 ("@LOGLEVEL@", level), ("@SHARE@", share)):
        text = text.replace(k, str(v))
    return text


def sealed_share(path):
    """The same directory again as a share that requires encryption: the
    bench's encrypted modes use it (issue 17).  libsmbclient 4.17 does not
    seal a session on its own (smbc_setOptionSmbEncryptionLevel only makes
    it require signing); a share flagged ENCRYPT_DATA makes every client
    seal, as a sensitive share does in an office."""
    return """
[sealed]
	path = %s
	read only = no
	smb encrypt = required
""" % path


def marked_share(path):
    """usmbd only: a share below the first (its own root, so its own mark)
    where perfops stores a descriptor, so that the share is marked
    (HACKING.md "Security descriptors", Cost): perfcheck holds a new name
    below a directory without one to the cost it has on an unmarked share
    (issue 14)."""
    m = os.path.join(path, "marked")
    cs = os.path.join(path, "cs")
    homes = os.path.join(path, "homes")
    for d in [m, cs, homes] + [os.path.join(homes, u) for u, _ in USERS]:
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
    # the same with `case sensitive = yes` (no name lookup: vfs/dirnote.c);
    # [hide]: the first share's directory with `hide unreadable`;
    # [short]: the same with `mangled names = yes` (8.3 names listed)
    # [nomax] and [maxconn]: the same without and with `max connections`
    # [fruit]: the same with Apple's extensions (worker/fruit.h)
    # [homes]: each user's home share, its path made with %S
    # (worker/homes.c)
    # [dfsroot]: the first share's directory as an msdfs root (worker/dfs.h)
    return """
[marked]
	path = %s
	read only = no

[marked_cs]
	path = %s
	read only = no
	case sensitive = yes

[cs]
	path = %s
	read only = no
	case sensitive = yes

[hide]
	path = %s
	read only = no
	hide unreadable = yes

[short]
	path = %s
	read only = no
	mangled names = yes

[nomax]
	path = %s
	read only = no

[maxconn]
	path = %s
	read only = no
	max connections = 1000000

[fruit]
	path = %s
	read only = no
	vfs objects = catia fruit streams_xattr

[homes]
	path = %s/%%S
	read only = no
	browseable = no

[dfsroot]
	path = %s
	read only = no
	msdfs root = yes
""" % (m, m, cs, path, path, path, path, path, homes, path)


def xattr_check(d):
    """None if the file system of directory d keeps the xattrs a Samba share
    with acl_xattr and streams_xattr needs (security.NTACL as root, user.*),
    else why not."""
    probe = os.path.join(d, ".xattr-probe")
    try:
        open(probe, "w").close()
        for n in ("security.NTACL", "user.DOSATTRIB"):
            try:
                os.setxattr(probe, n, b"\0")
            except OSError as e:
                return "%s: the file system refuses the %s xattr (%s), which Samba's " \
                    "acl_xattr/streams_xattr share needs" % (d, n, e.strerror)
    finally:
        try:
            os.unlink(probe)
        except OSError:
            pass
    return None


class Samba(Server):
    """Debian's Samba with the modules a Windows-facing share uses: NT ACLs
    and streams in xattrs (samba-vfs-modules), DOS attributes stored."""
    name = "samba"
    VFS = ("acl_xattr", "streams_xattr")
    SMBD = [SMBD]
    SMBPASSWD = ["smbpasswd"]
    MODROOT = ""
    GLOBAL_EXTRA = ""       # lines added to [global] (t/bench/posixbench.py)

    def modules_missing(self):
        return [m for m in self.VFS
                if not glob.glob("%s/usr/lib/*/samba/vfs/%s.so" % (self.MODROOT, m))]

    def prepare(self):
        return None

    def version(self):
        r = subprocess.run(self.SMBD + ["--version"], capture_output=True, text=True)
        return (r.stdout or r.stderr).strip()

    def start(self):
        why = self.prepare()
        if why:
            return why
        miss = self.modules_missing()
        if miss:
            return "Samba's %s module missing: install samba-vfs-modules " \
                "(scripts/install-deps.sh)" % " and ".join(miss)
        err = xattr_check(self.share)
        if err:
            return err
        d = self.dir
        self.conf = os.path.join(d, "smb.conf")
        with open(self.conf, "w") as f:
            f.write(samba_conf(self.port, d, os.path.join(d, "smbd.log"),
                               0, self.share).replace(
                "[global]\n", "[global]\n" + self.GLOBAL_EXTRA, 1) + sealed_share(self.share))
        for name, pw in USERS:
            subprocess.run(self.SMBPASSWD + ["-c", self.conf, "-a", "-s", name],
                           input="%s\n%s\n" % (pw, pw), text=True, check=True,
                           capture_output=True)
        self.spawn(self.SMBD + ["-F", "--no-process-group", "--debug-stdout", "-s", self.conf])
        if not self.wait_up():
            return "smbd did not come up: " + self.log_tail()
        return None

    def add_users(self, users):
        for name, pw in users:
            r = subprocess.run(self.SMBPASSWD + ["-c", self.conf, "-a", "-s", name],
                               input="%s\n%s\n" % (pw, pw), text=True,
                               capture_output=True)
            if r.returncode:
                return "smbpasswd -a %s: %s" % (name, (r.stderr or r.stdout).strip()[:200])
        return None

    def serving_pids(self):
        # The master holds no connection; the forked child serving it does.
        return [p for p in super().serving_pids() if p != self.pid]


class Samba422(Samba):
    """bookworm-backports' Samba 4.22 from scripts/samba-ref.sh's root (fetched
    on first use), in a mount namespace of its own where the 4.22 modules and
    helpers are at the paths smbd was built for; same config as Samba.  The
    pid is smbd's own (samba-ref.sh execs it)."""
    name = "samba422"
    SMBD = [SAMBA_REF, "run", "smbd"]
    SMBPASSWD = [SAMBA_REF, "run", "smbpasswd"]

    def prepare(self):
        r = subprocess.run([SAMBA_REF, "install"], capture_output=True, text=True)
        if r.returncode:
            return "scripts/samba-ref.sh install: " + (r.stderr or r.stdout).strip()[-300:]
        self.MODROOT = r.stdout.strip()
        return None


class Usmbd(Server):
    name = "usmbd"
    BIN, CTL = USMBD, USMBCTL

    def ctl(self, *args, input=None):
        return subprocess.run([self.CTL, "-s", self.conf] + list(args), input=input,
                              text=True, capture_output=True, timeout=20)

    def start(self):
        if not os.access(self.BIN, os.X_OK) or not os.access(self.CTL, os.X_OK):
            return "%s or %s not built" % (os.path.relpath(self.BIN, ROOT),
                                           os.path.relpath(self.CTL, ROOT))
        d = self.dir
        self.conf = os.path.join(d, "usmbd.conf")
        with open(self.conf, "w") as f:
            f.write("""[global]
	smb ports = %(port)d
	interfaces = 127.0.0.1
	pid directory = %(d)s/run
	lock directory = %(d)s/lock
	private dir = %(d)s/private
	log file = %(d)s/usmbd.log
	log level = 0

[share]
	path = %(share)s
	read only = no
""" % {"port": self.port, "d": d, "share": self.share} + sealed_share(self.share) +
                    marked_share(self.share))
        for name, pw in USERS:
            try:
                r = self.ctl("user", "add", name, input=pw + "\n")
            except (OSError, subprocess.TimeoutExpired) as e:
                return "usmbctl user add: %s" % e
            if r.returncode:
                return "usmbctl user add %s: exit %d: %s" % (
                    name, r.returncode, (r.stderr or r.stdout).strip()[:200])
        self.spawn([self.BIN, "-F", "-s", self.conf])
        if not self.wait_up():
            return "usmbd did not come up: " + self.log_tail()
        return None


    def add_users(self, users):
        for name, pw in users:
            try:
                r = self.ctl("user", "add", name, input=pw + "\n")
            except (OSError, subprocess.TimeoutExpired) as e:
                return "usmbctl user add: %s" % e
            if r.returncode:
                return "usmbctl user add %s: exit %d: %s" % (
                    name, r.returncode, (r.stderr or r.stdout).strip()[:200])
        return None


class UsmbdB(Usmbd):
    """A second usmbd build beside the first, for before/after figures in
    one run (BENCH_SERVERS=...,usmbd_b): USMBD_B and USMBCTL_B name its
    binaries (a copy of an earlier build: workers re-exec /proc/self/exe,
    so the copy stays what runs)."""
    name = "usmbd_b"
    BIN = os.environ.get("USMBD_B", "/nonexistent/usmbd_b")
    CTL = os.environ.get("USMBCTL_B", "/nonexistent/usmbctl_b")


# ---------------------------------------------------------------- strace

# A call's first line in an strace -f trace: "PID name(" ("<... name
# resumed>" lines, signals and exits are not calls of their own).
STRACE_CALL = re.compile(r"^\d+\s+([A-Za-z_][A-Za-z0-9_]*)\(")
# The names strace 6.1 does not know yet, by number (the same on x86-64
# and arm64).
STRACE_NAMES = {"syscall_0x1d0": "getxattrat", "syscall_0x1d1": "listxattrat"}


class Strace:
    """strace -f over some pids, from start() to stop(), counted per call.

    Counted from the trace, not with strace -c: Debian 12's strace (6.1)
    leaves out of its -c table every call it has no name for, such as
    getxattrat and listxattrat (Linux 6.13), which the worker makes on
    every listed entry; the trace shows them as syscall_0x1d0 and the
    like, and they count as any other."""

    def __init__(self, pids, out):
        self.out = out
        self.err = out + ".err"
        # -s 0: no string contents, the trace is only there to be counted
        argv = ["strace", "-f", "-s", "0", "-o", out]
        for p in pids:
            argv += ["-p", str(p)]
        self.npids = len(pids)
        with open(self.err, "w") as ef:
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=ef,
                                         start_new_session=True)
        # Go on only once every pid is attached (strace says so on stderr).
        end = time.time() + 10
        while time.time() < end and self.proc.poll() is None:
            with open(self.err) as ef:
                if ef.read().count("attached") >= self.npids:
                    break
            time.sleep(0.02)

    def stop(self):
        """Detach and return {syscall: calls}, 'total' included."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        counts = {}
        try:
            with open(self.out) as f:
                for line in f:
                    m = STRACE_CALL.match(line)
                    if m:
                        name = STRACE_NAMES.get(m.group(1), m.group(1))
                        counts[name] = counts.get(name, 0) + 1
        except OSError:
            pass
        counts["total"] = sum(counts.values())
        return counts


def build_malloc_so():
    """The preload object: compiled here, as the GNUmakefile links every
    t/bench/*.c as a program."""
    src = os.path.join(ROOT, "t/bench/malloc_count.c")
    if os.path.exists(MALLOC_SO) and os.path.getmtime(MALLOC_SO) >= os.path.getmtime(src):
        return None
    os.makedirs(os.path.dirname(MALLOC_SO), exist_ok=True)
    r = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g", "-std=gnu11", "-Wall",
                        "-Wextra", "-Werror", "-Wno-unused-parameter", "-shared", "-fPIC",
                        "-DMALLOC_COUNT_PRELOAD", "-o", MALLOC_SO, src, "-lpthread"],
                       capture_output=True, text=True)
    if r.returncode:
        return "cannot build malloc_count.so: " + r.stderr.strip()[:300]
    return None


# ---------------------------------------------------------------- a paused client

class Paused:
    """A client speaking the READY/DONE protocol of smbload -P (and perfops.py).

    for phase, stage in client.events():  stage is "READY" or "DONE"; the
    client waits after each until go() is called.  RESULT and ERROR lines
    are collected in .results and .error.
    """

    def __init__(self, argv, timeout):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1,
                                     start_new_session=True)
        self.deadline = time.time() + timeout
        self.results = []
        self.error = None
        # A hung client (or server) never prints: the watchdog ends it.
        self.timer = threading.Timer(timeout, self._expire)
        self.timer.daemon = True
        self.timer.start()

    def _expire(self):
        self.error = (self.error or "") + " (no answer within the time limit)"
        self.kill()

    def events(self):
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("READY ") or line.startswith("DONE "):
                kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
                yield kv.get("phase", "?"), line.split()[0]
            elif line.startswith("RESULT "):
                kv = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
                self.results.append(kv)
            elif line.startswith("ERROR "):
                self.error = line[6:]

    def go(self):
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def finish(self):
        self.timer.cancel()
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            self.proc.wait(max(5, self.deadline - time.time()))
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait(5)
        err = self.proc.stderr.read()
        if self.proc.returncode and not self.error:
            self.error = "exit %d: %s" % (self.proc.returncode, err.strip()[-300:])
        return self.proc.returncode
