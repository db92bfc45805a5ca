#!/usr/bin/python3
"""make perfcheck: the counted per-request figures of usmbd (issue 6, item 2).

Counts do not depend on the machine's speed, so CI can assert them:
  * 0 credential syscalls per steady-state READ, WRITE, CREATE, CLOSE
    (also of delete-on-close opens: CREATE_DOC, CLOSE_DOC, and of the SMB3
    POSIX extensions: CREATE_POSIX_DOC, QUERY_INFO_POSIX, CLOSE_POSIX_DOC),
    QUERY_INFO, QUERY_DIRECTORY and ECHO (any of benchlib.CRED_ALL, counted
    by strace -c -f on the process that serves the connection);
  * 0 heap allocations per such request (malloc, calloc, realloc and the
    memalign family, counted by the LD_PRELOAD counter t/bench/malloc_count.c
    in that process);
  * at most 3 syscalls per 4 KiB WRITE (the issue allows 4) and 3 per
    4 KiB READ, of an encrypted session and of an unsigned one (the
    worker's receives go by io_uring: see MAX_SYSCALLS below);
  * the same 3 (and 0 credential syscalls, 0 allocations) per 4 KiB WRITE
    and READ signed with HMAC-SHA256 (2.1), AES-CMAC (3.0), AES-GMAC
    (3.1.1) and encrypted with AES-128-GCM and AES-256-GCM (3.1.1)
    (issue 17; the last three windows driven by smbload, see
    SMBLOAD_WINDOWS);
  * the payload of a 96 KiB unsigned WRITE is spliced (socket -> pipe ->
    file), in at most 7 syscalls, and perfops.py's checks of that path
    (data intact, refused large WRITEs keep the stream framed) pass;
  * 4 MiB WRITEs larger than the receive buffer (a private network
    namespace with tcp_rmem capped: pipe_ns_check) are buffered in the
    connection's pipe and spliced, not copied, and read back intact.
  * a CREATE (delete on close) of a new name in a directory without a
    stored descriptor on a marked share ([marked], issue 14) costs no more
    syscalls than the same on a share where none was ever stored, an
    open of an existing file without one no more either, and an open of
    one with a stored descriptor at most one more (SAME_AS; usmbd only).
  * seed 004's two loops (issue 16 item 3, t/bench/posixbench.py): 0
    allocations per loop in every window, 0 credential syscalls and the
    measured syscalls per loop (SEED_MAX_SYSCALLS) under strace; wall time,
    server CPU and the ratios against Samba 4.22 (when its root is
    installed) printed as INFO lines, never asserted.
The requests come from t/bench/perfops.py (impacket), one command per window.

Environment: PERFCHECK_N requests per command (default 500);
PERFCHECK_SERVER=samba runs the same measurement against Samba, to see the
instrument work (Samba fails most assertions: that is the point of usmbd).
Prints PASS/FAIL per assertion and "perfcheck: N passed, N failed".
"""

import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import statehold  # noqa: E402

COMMANDS = ("READ", "WRITE", "CREATE", "CLOSE", "CREATE_DOC", "CLOSE_DOC", "QUERY_INFO",
            "QUERY_DIRECTORY", "QUERY_DIRECTORY_EA", "ECHO", "WRITE_96K", "READ_PLAIN", "WRITE_4M_SPLIT",
            "WRITE_HMAC", "READ_HMAC", "WRITE_CMAC", "READ_CMAC",
            "WRITE_GMAC", "READ_GMAC", "WRITE_GCM128", "READ_GCM128",
            "WRITE_GCM256", "READ_GCM256",
            "CREATE_POSIX_DOC", "QUERY_INFO_POSIX", "CLOSE_POSIX_DOC",
            "CREATE_DOC_SUB", "CREATE_DOC_MARKED",
            "CREATE_OPEN", "CREATE_OPEN_MARKED", "CREATE_OPEN_STORED",
            "CREATE_OPEN_DFS",
            "CREATE_DOC_CS", "CREATE_DOC_CS_MARKED", "CREATE_POSIX_SUB",
            "CREATE_POSIX_MARKED", "QUERY_DIRECTORY_HIDE",
            "QUERY_DIRECTORY_LONG", "QUERY_DIRECTORY_SHORT",
            "TREE_CONNECT", "TREE_CONNECT_MAXCONN", "TREE_CONNECT_HOMES",
            "QUERY_DIRECTORY_FRUIT", "READ_AFPINFO", "READ_RSRC",
            "LOCK", "UNLOCK", "LOCK_RESILIENT", "UNLOCK_RESILIENT",
            "LOCK_DURABLE", "UNLOCK_DURABLE")
# Issue 14: on a share where a descriptor was stored (marked), a CREATE of
# a new name below a directory without one costs what it costs on one
# where none ever was (perfops.py marked_phases; usmbd only): SAME_AS
# holds the first to the second's syscalls per request.
# An open of an existing file without a descriptor: the same count as on
# the unmarked share; with one: one more (its fgetxattr), at most.
SAME_AS = {"CREATE_DOC_MARKED": ("CREATE_DOC_SUB", 0.05),
           "CREATE_OPEN_MARKED": ("CREATE_OPEN", 0.05),
           "CREATE_OPEN_STORED": ("CREATE_OPEN", 1.05),
           # an msdfs root (worker/dfs.h): links are looked for only when
           # a lookup failed, so an open that finds its file pays nothing
           "CREATE_OPEN_DFS": ("CREATE_OPEN", 0.05),
           # creates that look no name up (vfs/dirnote.c): on a
           # `case sensitive = yes` share, and with the POSIX create context
           "CREATE_DOC_CS_MARKED": ("CREATE_DOC_CS", 0.05),
           # (0.1: the worker's 1 s tick falls into these windows, as
           # into CREATE_POSIX_DOC's: SLACK; a read of the parent is +3)
           "CREATE_POSIX_MARKED": ("CREATE_POSIX_SUB", 0.1),
           # `hide unreadable` over the user's own files: no call more
           "QUERY_DIRECTORY_HIDE": ("QUERY_DIRECTORY", 0.05),
           # 8.3 short names listed (`mangled names = yes`): made from the
           # name alone, no call more than the same listing without them
           "QUERY_DIRECTORY_SHORT": ("QUERY_DIRECTORY_LONG", 0.05),
           # `max connections`: the count in the state env costs no call
           "TREE_CONNECT_MAXCONN": ("TREE_CONNECT", 0.05),
           # a home share of [homes], its path substituted: no call more
           "TREE_CONNECT_HOMES": ("TREE_CONNECT", 0.05),
           # READ_DIR_ATTR (worker/fruit.h): per entry of the 16, one
           # access(2) for the maximal access and two lgetxattr (Finder
           # info, resource fork size), no open, nothing allocated; but
           # no llistxattr, as its EaSize is the maximal access: 48 - 16
           # (+0.1: the worker's 1 s tick, as QUERY_DIRECTORY's SLACK;
           # 88.08 was seen once against 56.00).  With fruit:metadata =
           # netatalk (the default, as on perfcheck's [fruit]) an entry
           # asks one llistxattr and then only the xattrs it names: these
           # 16 files have none, 72 against 56 measured; with
           # fruit:resource = file (the default) one openat2 more per
           # entry looks for "._NAME" (ENOENT here): 88, the bound
           "QUERY_DIRECTORY_FRUIT": ("QUERY_DIRECTORY", 32.1),
           # a resilient or durable open's LockSequence entry goes into
           # its durable record in the lock's own write transaction
           # (shm/durable.c shm_durable_lock_seq_txn): no syscall more
           "LOCK_RESILIENT": ("LOCK", 0.05), "UNLOCK_RESILIENT": ("UNLOCK", 0.05),
           "LOCK_DURABLE": ("LOCK", 0.05), "UNLOCK_DURABLE": ("UNLOCK", 0.05),
           # EaSize (worker/smb2_dir.c dir_entry_xattrs): per entry of
           # the 16, one lgetxattr of size 0 per EA (two each), no open
           "QUERY_DIRECTORY_EA": ("QUERY_DIRECTORY", 32.1)}
# LOCK: the wait that receives and sends (io_uring_enter) and the test
# for a local process's kernel lock (fcntl F_OFD_GETLK, worker/smb2_lock.c
# lock_kernel_conflict); UNLOCK the wait alone.
# READ_AFPINFO: a 60-byte read of AFP_AfpInfo on a netatalk share
# (worker/fruit.h fruit_afpinfo_read): the wait (io_uring_enter) and
# one fgetxattr of netatalk's blob, converted in a static buffer.
# READ_RSRC: a 4 KiB read of AFP_Resource kept in "._perf_rsrc"
# (worker/fruit_rsrc.c): the wait, the "._" file's openat2 beneath the
# root, its fstat (a regular file only), the header's pread and the
# fork's, the close: 6.
MAX_SYSCALLS = {"LOCK": 2, "UNLOCK": 1, "READ_AFPINFO": 2, "READ_RSRC": 6,
                "WRITE": 2, "READ": 2, "WRITE_96K": 6, "READ_PLAIN": 2,
                "CREATE_POSIX_DOC": 5, "QUERY_INFO_POSIX": 3, "CLOSE_POSIX_DOC": 6,
                "QUERY_DIRECTORY": 56}
# QUERY_DIRECTORY (16 files made by SMB, FileFullDirectoryInformation,
# restarted), measured: statx 18 (the 16, "." and ".."), listxattrat 16
# (EaSize: no EA listed, no call more), getxattrat 16 (the DOS xattr),
# getdents64 2 (the entries, the end), the lseek of the restart, the
# openat2 and close of "..", one io_uring_enter that receives and sends:
# 56 (40 before EaSize, which added the llistxattr).
# Seed 004 (issue 16): a POSIX create of a new name is the lookup (openat2
# O_PATH), the create (openat2), one statx, the DOS xattr written and the
# wait that receives and sends (one io_uring_enter): the POSIX response
# context comes from that statx, not from a second one.  Its POSIX stat is statx + the DOS xattr; the
# delete-on-close CLOSE is the name check, unlinkat and the two closes.
LABEL = {"READ": "4 KiB encrypted READ (AES-128-CCM, 3.0)",
         "READ_AFPINFO": "60-byte READ of AFP_AfpInfo (netatalk metadata)",
         "READ_RSRC": "4 KiB READ of AFP_Resource (a ._ file)",
         "WRITE": "4 KiB encrypted WRITE (AES-128-CCM, 3.0)",
         "WRITE_96K": "96 KiB unsigned WRITE", "READ_PLAIN": "4 KiB unsigned READ",
         "WRITE_4M_SPLIT": "4 MiB unsigned WRITE larger than the receive window",
         "CREATE_POSIX_DOC": "CREATE with the POSIX create context (delete on close)",
         "QUERY_INFO_POSIX": "QUERY_INFO of the POSIX level",
         "CLOSE_POSIX_DOC": "CLOSE of a POSIX delete-on-close open",
         "CREATE_DOC_SUB": "CREATE (delete on close) of a new name in a directory",
         "CREATE_DOC_MARKED": "CREATE (delete on close) of a new name in a directory "
                              "without a descriptor on a marked share",
         "CREATE_OPEN": "CREATE (open) + CLOSE of an existing file",
         "CREATE_DOC_CS": "CREATE (delete on close) of a new name in a directory "
                          "on a case-sensitive share",
         "CREATE_DOC_CS_MARKED": "CREATE (delete on close) of a new name in a directory "
                                 "without a descriptor on a marked case-sensitive share",
         "CREATE_POSIX_SUB": "CREATE with the POSIX create context (delete on close) "
                             "of a new name in a directory",
         "CREATE_POSIX_MARKED": "CREATE with the POSIX create context (delete on close) "
                                "of a new name in a directory without a descriptor "
                                "on a marked share",
         "CREATE_OPEN_MARKED": "CREATE (open) + CLOSE of an existing file without a "
                               "descriptor on a marked share",
         "CREATE_OPEN_STORED": "CREATE (open) + CLOSE of an existing file with a stored "
                               "descriptor",
         "CREATE_OPEN_DFS": "CREATE (open) + CLOSE of an existing file on an msdfs "
                            "root share",
         "QUERY_DIRECTORY": "QUERY_DIRECTORY (16 files, restarted)",
         "QUERY_DIRECTORY_EA": "QUERY_DIRECTORY (16 files with two EAs each, restarted)",
         "QUERY_DIRECTORY_HIDE": "QUERY_DIRECTORY (16 files, restarted) with hide "
                                 "unreadable",
         "QUERY_DIRECTORY_LONG": "QUERY_DIRECTORY (16 long names, IdBoth, restarted)",
         "QUERY_DIRECTORY_SHORT": "QUERY_DIRECTORY (16 long names, IdBoth, restarted) "
                                  "with 8.3 short names listed",
         "TREE_CONNECT": "TREE_CONNECT + TREE_DISCONNECT",
         "TREE_CONNECT_MAXCONN": "TREE_CONNECT + TREE_DISCONNECT of a share with "
                                 "max connections",
         "TREE_CONNECT_HOMES": "TREE_CONNECT + TREE_DISCONNECT of the user's "
                               "home share ([homes], path with %S)",
         "LOCK": "LOCK (one exclusive range, a LockSequence)",
         "UNLOCK": "UNLOCK (one range, a LockSequence)",
         "LOCK_RESILIENT": "LOCK of a resilient open (its LockSequence recorded)",
         "UNLOCK_RESILIENT": "UNLOCK of a resilient open (its LockSequence recorded)",
         "LOCK_DURABLE": "LOCK of a durable open (its LockSequence recorded)",
         "UNLOCK_DURABLE": "UNLOCK of a durable open (its LockSequence recorded)",
         "QUERY_DIRECTORY_FRUIT": "QUERY_DIRECTORY (16 files, restarted, "
                                  "FileIdBothDirectoryInformation) with AAPL "
                                  "READ_DIR_ATTR"}
# Issue 17: signed and encrypted 4 KiB READs and WRITEs, each held to the
# 2 syscalls of the unsigned ones (signing and encryption are CPU work on
# the buffers, never a syscall).  HMAC (2.1) and CMAC (3.0) come from
# perfops.py (impacket); GMAC (3.1.1) and AES-GCM (3.1.1, on the [sealed]
# share) from smbload (libsmbclient: impacket has neither), one READ or
# WRITE per call (smbload_windows).
for _c, _what in (("HMAC", "signed (HMAC-SHA256, 2.1)"), ("CMAC", "signed (AES-CMAC, 3.0)"),
                  ("GMAC", "signed (AES-GMAC, 3.1.1)"),
                  ("GCM128", "encrypted (AES-128-GCM, 3.1.1)"),
                  ("GCM256", "encrypted (AES-256-GCM, 3.1.1)")):
    for _op in ("WRITE", "READ"):
        MAX_SYSCALLS["%s_%s" % (_op, _c)] = 2
        LABEL["%s_%s" % (_op, _c)] = "4 KiB %s %s" % (_what, _op)
# The smbload windows: (window, mode of bench.SEC_MODES, smbload workload).
SMBLOAD_WINDOWS = [("%s_%s" % (op, m.upper()), m, op.lower())
                   for m in ("gmac", "gcm128", "gcm256") for op in ("WRITE", "READ")]
# A large unsigned WRITE's payload goes socket -> pipe -> file by splice
# (worker/conn_rx.c): io_uring_enter (the wait and the read of the head,
# 16 KiB; the answer goes out with the next one), FIONREAD, pwrite of the
# head, splice in, splice out = 5; 7 on epoll (epoll_wait, read, send).  At least 2 splice
# calls per WRITE show the payload was not copied through the buffer.
# WRITE_4M_SPLIT: the first 4 MiB WRITE of fresh connections, sent in two
# pieces; the payload outgrows the receive window, so it is buffered in
# the connection's pipe as it arrives (RX_WAIT_PIPE) and spliced pipe ->
# file: splice calls again, where the copy path (the fallback before it)
# makes none.
MIN_SPLICE = {"WRITE_96K": 2, "WRITE_4M_SPLIT": 2}
# A 96 KiB payload now and then reaches the socket in two pieces (loopback
# segmentation), which costs that WRITE one more FIONREAD and epoll_wait:
# seen at 7.08 per request in a CI run (when it was 7).  The average may exceed the count
# by this much; a path that lost the splice would cost far more.
SLACK = {"WRITE_96K": 0.25,
         # the tick again (3.01 seen in perfcheck runs at a load near 5),
         # and a client slower than the 10 ms bound of a wait that sends
         # an answer by the ring (worker/uring.c): one more io_uring_enter
         "READ_PLAIN": 0.1, "READ_AFPINFO": 0.1, "READ_RSRC": 0.1,
         # the worker's 1 s tick (timerfd) falls into some windows
         "CREATE_POSIX_DOC": 0.1, "QUERY_INFO_POSIX": 0.1, "CLOSE_POSIX_DOC": 0.1,
         "QUERY_DIRECTORY": 0.1,
         # the tick again: 2.00 printed, a call or two over in 500
         "LOCK": 0.1, "UNLOCK": 0.1}
# The signed and encrypted windows meet the same tick (a timerfd_settime and
# a read in some 500 requests: 3.01 per READ in a CI run), the AES-128-CCM
# ones ("WRITE", "READ") too: 2.00 + one io_uring_enter in 500 requests
# failed them under load, on the builds before and after a change alike.
SLACK.update({"%s_%s" % (_op, _c): 0.1 for _op in ("WRITE", "READ")
              for _c in ("HMAC", "CMAC", "GMAC", "GCM128", "GCM256")})
SLACK.update({"WRITE": 0.1, "READ": 0.1})
# Issue 6 asks for 3 per READ (and at most 4 per WRITE).  The worker waits
# for and receives the next request in one io_uring_enter
# (worker/uring.h), then pread or pwrite; the answer is a ring send
# submitted by the next io_uring_enter, the one that waits for the next
# request (worker/loop.c wk_tx_ring): 2, signed, encrypted or not; WRITE is
# held to the 2 it takes, so a regression shows.  On a kernel or sandbox without io_uring
# the worker falls back to epoll (epoll_wait, read, pread, send = 4): the
# assertion then guards 4 and a TARGET line says the 3 is not met there.
# t/bench/README.md, "READ: 3 syscalls (io_uring receive)".
EPOLL_SYSCALLS = {"READ": 4, "READ_PLAIN": 4, "WRITE": 4, "WRITE_96K": 7,
                  "CREATE_POSIX_DOC": 7, "QUERY_INFO_POSIX": 5, "CLOSE_POSIX_DOC": 8,
                  "QUERY_DIRECTORY": 58}
# The state env's writer-lock hold meter (t/bench/statehold.py): each of
# these windows' requests makes one write transaction of that kind, timed
# by the vDSO's clock (a clock_gettime syscall would show in strace).
HOLD_PHASES = {"CREATE": "create", "CLOSE": "close", "CREATE_DOC": "create",
               "CLOSE_DOC": "close",
               # a LOCK or UNLOCK is one write transaction (OTHER); the
               # resilient and durable ones hold it for their record too
               "LOCK": "other", "UNLOCK": "other",
               "LOCK_RESILIENT": "other", "UNLOCK_RESILIENT": "other",
               "LOCK_DURABLE": "other", "UNLOCK_DURABLE": "other"}
EPOLL_SYSCALLS.update({k: 4 for k in MAX_SYSCALLS if k not in EPOLL_SYSCALLS})
# Known failures: reported as XFAIL with the reason, not counted, and
# XPASS when they start passing so the entry can go.  Keep this short.
KNOWN = {}
PERFOPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfops.py")
# The receive-buffer cap of the private network namespace of the
# RX_WAIT_PIPE check: SO_RCVLOWAT is capped at half of it, so a 4 MiB
# WRITE is never queued whole and must be buffered in the connection's
# pipe (on the host's loopback the kernel mostly queues it whole in time).
NS_RMEM = "4096 65536 262144"


def pipe_ns_child():
    """Runs inside `unshare -n`: loopback up, tcp_rmem capped, a server of
    its own, perfops.py's pipe checks with strace over their window.
    Prints NSFIG ops=N splice=N, or NSERR reason; exit 0 either way."""
    tmp = bl.make_tmp()
    srv = None
    try:
        import subprocess
        r = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, text=True)
        if r.returncode == 0:
            r = subprocess.run(["sysctl", "-q", "-w", "net.ipv4.tcp_rmem=" + NS_RMEM],
                               capture_output=True, text=True)
        if r.returncode:
            print("NSERR cannot set up the namespace: %s" % r.stderr.strip()[:200])
            return 0
        srv = bl.Usmbd(tmp)
        why = srv.start()
        if why:
            print("NSERR %s" % why)
            return 0
        user, pw = bl.USERS[0]
        cl = bl.Paused([bl.PY, PERFOPS, str(srv.port), user, pw, "pipe"], 300)
        st, sc = None, None
        for phase, stage in cl.events():
            if stage == "READY":
                st = bl.Strace(srv.serving_pids(), os.path.join(tmp, "strace.ns"))
            elif st is not None:
                sc = st.stop()
                st = None
            cl.go()
        cl.finish()
        ops = sum(int(r["ops"]) for r in cl.results)
        if cl.error or not sc or not ops:
            print("NSERR %s" % (cl.error or "not measured"))
        else:
            print("NSFIG ops=%d splice=%d read=%d" % (ops, sc.get("splice", 0), sc.get("read", 0)))
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def pipe_ns_check():
    """(ok, detail) of the RX_WAIT_PIPE check in a private network namespace."""
    import subprocess
    r = subprocess.run(["unshare", "-n", bl.PY, os.path.abspath(__file__), "--pipe-ns"],
                       capture_output=True, text=True, timeout=400)
    for line in r.stdout.splitlines():
        if line.startswith("NSFIG "):
            f = dict(kv.split("=") for kv in line.split()[1:])
            per = int(f["splice"]) / int(f["ops"])
            rd = int(f["read"]) / int(f["ops"])
            # The copy path would read the 4 MiB in pieces of at most the
            # receive buffer: dozens of reads.  Here: the head's alone.
            return per >= 2 and rd <= 2, "%s WRITEs, %.2f splice and %.2f read calls per " \
                "WRITE" % (f["ops"], per, rd)
        if line.startswith("NSERR "):
            return False, line[6:]
    return False, "no answer (rc %d): %s" % (r.returncode, r.stderr.strip()[-200:])


def assertions():
    for c in COMMANDS:
        yield c, "cred", "0 credential syscalls per steady-state %s" % c
        yield c, "alloc", "0 heap allocations per steady-state %s" % c
        if c in MAX_SYSCALLS:
            yield c, "sys", "at most %d syscalls per %s" % (MAX_SYSCALLS[c], LABEL[c])
        if c in SAME_AS:
            extra = int(SAME_AS[c][1])
            yield c, "same", "%s syscalls per %s than per %s" % (
                "at most %d more" % extra if extra else "no more", LABEL[c],
                LABEL[SAME_AS[c][0]])
        if c in HOLD_PHASES:
            yield c, "hold", ("the writer lock's hold of each %s is measured (one %s write "
                              "transaction per request, timed, no clock syscall)"
                              % (c, HOLD_PHASES[c]))
            yield c, "env", ("each %s takes one data env's writer lock, never the main "
                             "env's (`state partitions` 8)" % c)
        if c in MIN_SPLICE:
            yield c, "splice", "payload of each %s spliced (at least %d splice calls)" % (
                LABEL[c], MIN_SPLICE[c])


def hold_verdict(f, ops, sc, kind):
    """(ok, detail) of the hold meter over one window of ops requests."""
    d = f.get("hold")
    if d is None:
        return False, "usmbctl metrics gave no usmbd_state_write_* figures"
    n, hold, wait = statehold.per_txn(d, kind)
    clocks = sc.get("clock_gettime", 0)
    ok = n >= ops and hold > 0 and clocks == 0
    return ok, ("%d %s transactions in %d requests, held %.2f us each (+ %.2f us "
                "taking it), %d clock_gettime syscalls" % (n, kind, ops, hold / 1e3,
                                                           wait / 1e3, clocks))


def env_verdict(f, ops, kind):
    """(ok, detail): the window's write transactions of that kind all went to
    data envs (shm_env_fid), none to the main env's lock."""
    d = f.get("hold")
    if d is None:
        return False, "usmbctl metrics gave no usmbd_state_* figures"
    n, main = d[kind]["txns"], d[kind]["main_txns"]
    ok = n >= ops and main == 0
    return ok, "%d %s transactions in %d requests, %d of them in the main env" % (
        n, kind, ops, main)


def hold_limit(figs):
    """An INFO line: open+close pairs/s one state env admits, from the
    CREATE and CLOSE windows (one client: nobody queues for the lock, so
    wait is mdb_txn_begin's own part, counted in: the lock is held there)."""
    c, z = figs.get("CREATE", {}).get("hold"), figs.get("CLOSE", {}).get("hold")
    if c is None or z is None:
        return
    _, ch, cw = statehold.per_txn(c, "create")
    _, zh, zw = statehold.per_txn(z, "close")
    print("INFO state_env_pairs_per_s=%.0f hold_create_us=%.2f hold_close_us=%.2f "
          "begin_create_us=%.2f begin_close_us=%.2f (1 / (hold+begin of a CREATE + "
          "of a CLOSE), one client, the worker under strace, which slows it: the "
          "LIMIT line of make bench is measured without; t/bench/README.md "
          "\"The state layer's ceiling\")"
          % (statehold.ceiling(ch + cw, zh + zw), ch / 1e3, zh / 1e3, cw / 1e3, zw / 1e3))


def measure(srv, n, tmp):
    """{command: {"ops", "syscalls", "allocs", "pids"}} or an error string."""
    user, pw = bl.USERS[0]
    figs = {}
    cl = bl.Paused([bl.PY, PERFOPS, str(srv.port), user, pw, str(n)], 600)
    ctx = None
    for phase, stage in cl.events():
        if stage == "READY":
            pids = srv.serving_pids()
            # before the meters: the worker's answer is outside the window
            h0 = statehold.sample(srv) if phase in HOLD_PHASES and hasattr(srv, "ctl") else None
            ctx = {"pids": pids, "h0": h0, "m0": srv.malloc_counts(set(pids)),
                   "st": bl.Strace(pids, os.path.join(tmp, "strace." + phase)) if pids else None}
        elif ctx is not None:
            m1 = srv.malloc_counts(set(ctx["pids"]))
            sc = ctx["st"].stop() if ctx["st"] else None
            allocs = sum(v[0] for v in m1.values()) - sum(v[0] for v in ctx["m0"].values())
            figs[phase] = {"pids": ctx["pids"], "syscalls": sc, "allocs": allocs,
                           "counted": bool(m1)}
            if ctx["h0"] is not None:
                figs[phase]["hold"] = statehold.delta(ctx["h0"], statehold.sample(srv))
            ctx = None
        cl.go()
    cl.finish()
    for r in cl.results:
        if r["phase"] in figs:
            figs[r["phase"]]["ops"] = int(r["ops"])
    if cl.error:
        return figs, cl.error
    return figs, None


def smbload_windows(srv, n, tmp):
    """SMBLOAD_WINDOWS measured as measure() does: one smbload run per
    window (-P: the connection, the file and warm-up before READY), its
    strace and malloc counter around the phase.  Returns (figs, error)."""
    import bench
    figs = {}
    for win, mode, wl in SMBLOAD_WINDOWS:
        proto, lines, enc = bench.SEC_MODES[mode]
        conf = os.path.join(tmp, "client-%s.conf" % mode)
        with open(conf, "w") as fh:
            fh.write("[global]\n" + "".join("\t%s\n" % x for x in lines))
        url = srv.url.rsplit("/", 1)[0] + ("/sealed" if enc else "/share")
        argv = [bl.SMBLOAD, "-u", url, "-U", "%s%%%s" % bl.USERS[0], "-t", "300", "-P",
                # The WRITE window writes 8 + n records; the READ window
                # reads 8 of them, then n (never the EOF answer).
                "-w", wl, "-s", str((n + 8 if wl == "write" else n) * 4096), "-r", "4096",
                "-W", "8",
                "-f", "perf_%s.dat" % mode, "-p", proto, "-C", conf]
        cl = bl.Paused(argv, 360)
        ctx = None
        for phase, stage in cl.events():
            if stage == "READY":
                # The connection that went before (perfops' or the previous
                # window's) arms the worker's 1 s housekeeping tick when it
                # goes (worker/loop.c, worker_tick_arm); its last expiry
                # and disarming (read, timerfd_settime) belong to no
                # request of this window: let it pass first.
                time.sleep(2.2)
                pids = srv.serving_pids()
                ctx = {"pids": pids, "m0": srv.malloc_counts(set(pids)),
                       "st": bl.Strace(pids, os.path.join(tmp, "strace." + win)) if pids else None}
            elif ctx is not None:
                m1 = srv.malloc_counts(set(ctx["pids"]))
                sc = ctx["st"].stop() if ctx["st"] else None
                allocs = sum(v[0] for v in m1.values()) - sum(v[0] for v in ctx["m0"].values())
                figs[win] = {"pids": ctx["pids"], "syscalls": sc, "allocs": allocs,
                             "counted": bool(m1)}
                ctx = None
            cl.go()
        cl.finish()
        for r in cl.results:
            if win in figs:
                figs[win]["ops"] = int(r["ops"])
        if cl.error:
            return figs, "smbload %s: %s" % (win, cl.error)
    return figs, None


# A relayed session (issue 13): bob's session on alice's connection, served
# by bob's worker through alice's (t/bench/relaycost.py); over its 4 KiB
# READs and WRITEs, both workers together: the owner's io_uring_enter that
# takes the request, the one that forwards it and waits for the answer
# (the answer to the client goes with the next), the relayed worker's
# io_uring_enter (the answer goes with the next) and its pread64/pwrite64.
RELAY_MAX_SYSCALLS = 4
RELAY_OPS = ("read", "write")


def relay_measure(srv, n):
    """{op: (syscalls, allocations, credential syscalls, requests)} of
    both workers over n relayed 4 KiB READs and WRITEs, or an error
    string."""
    import relaycost
    relaycost.N = n
    out = {}
    try:
        t = relaycost.Two(srv.port)
        for user in ("alice", "bob"):
            tid = t.use(user)
            f = t.c.create(tid, "cost_" + user, relaycost.RW, 7,
                           relaycost.s3.FILE_NON_DIRECTORY_FILE,
                           relaycost.s3.FILE_OVERWRITE_IF, 0)
            t.c.write(tid, f, b"\1" * 4096, 0, 4096)
            relaycost.close(t.c, tid, f)
        for op in RELAY_OPS:
            counts, allocs, cred = relaycost.meters(srv, t, "bob", op)
            out[op] = (counts, allocs, cred, n)
    except (Exception, SystemExit) as e:
        return "relayed session: %s" % e
    return out


def relay_report(res):
    """Prints the relayed session's assertions: (passed, failed)."""
    if isinstance(res, dict):
        passed = failed = 0
        for op in RELAY_OPS:
            p, f = relay_report_op(res[op], op.upper())
            passed += p
            failed += f
        return passed, failed
    p, f = relay_report_op(res, "READ")
    p2, f2 = relay_report_op(res, "WRITE")
    return p + p2, f + f2


def relay_report_op(res, what):
    """The assertions of one relayed operation: (passed, failed)."""
    descs = ("0 credential syscalls per relayed 4 KiB %s" % what,
             "0 heap allocations per relayed 4 KiB %s" % what,
             "at most %d syscalls per relayed 4 KiB %s (both workers)"
             % (RELAY_MAX_SYSCALLS, what))
    if isinstance(res, str):
        for d in descs:
            print("FAIL %s: not available (%s)" % (d, res))
        return 0, len(descs)
    counts, allocs, cred, n = res
    per = counts["total"] / n
    top = sorted(((v, k) for k, v in counts.items() if k != "total"),
                 reverse=True)[:6]
    rows = ((cred == 0, "%d in %d requests" % (cred, n)),
            (allocs == 0, "%d in %d requests" % (allocs, n)),
            # +0.1: a wake-up at the window's edge (as SLACK above)
            (per <= RELAY_MAX_SYSCALLS + 0.1, "%.2f per request: %s" % (
                per, ", ".join("%s %.2f" % (k, v / n) for v, k in top))))
    passed = 0
    for d, (ok, detail) in zip(descs, rows):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", d, detail))
        passed += ok
    return passed, len(descs) - passed


# Seed 004 (issue 16 item 3): posixbench.py's two loops, SEED_N per window,
# SEED_ROUNDS rounds alternated between usmbd and Samba 4.22 (when its root
# from scripts/samba-ref.sh is there; never fetched here), then one round
# of usmbd under strace.  Held: usmbd's allocations (every window) and its
# credential syscalls and syscalls per loop (the straced round).  A loop
# is three requests: posix_doc is CREATE_POSIX_DOC + QUERY_INFO_POSIX +
# CLOSE_POSIX_DOC (5 + 3 + 6 above); posix_openqi opens an existing file
# (a lookup, no create, no DOS xattr written: 4), QUERY_INFO_POSIX (3) and
# a CLOSE with nothing to delete (5).  On epoll: two more per request
# (epoll_wait and read instead of io_uring_enter, and the send).
# Wall times, CPU and the ratios against Samba are printed, never held.
SEED_N = int(os.environ.get("PERFCHECK_SEED_N", "100"))
SEED_ROUNDS = 3
SEED_MAX_SYSCALLS = {"posix_doc": 14, "posix_openqi": 12}
SEED_EPOLL_SYSCALLS = {"posix_doc": 20, "posix_openqi": 18}
# the worker's 1 s tick (timerfd read and re-arm) may fall into a window
SEED_SLACK = 0.1


def seed_measure(srv, tmp):
    """(results of posixbench.alternated or an error string, why Samba 4.22
    is not in them or None, seconds taken).  srv: the running usmbd,
    started with the malloc counter."""
    import subprocess
    import posixbench
    t0 = time.monotonic()
    ref, why = None, None
    r = subprocess.run([bl.SAMBA_REF, "path"], capture_output=True, text=True)
    if r.returncode:
        why = "its root is not installed (%s)" % (
            r.stderr.strip() or "scripts/samba-ref.sh path failed")
    else:
        ref = posixbench.Samba422Posix(tmp, preload=True)
        why = ref.start()
        if why:
            ref.stop()
            ref = None
            why = "Samba 4.22 did not start: %s" % why
    d = os.path.join(tmp, "seed004")
    os.makedirs(d, exist_ok=True)
    try:
        res = posixbench.alternated([srv] + ([ref] if ref else []), SEED_N, SEED_ROUNDS,
                                    metered={srv.name}, meters=d)
    except Exception as e:      # reported as usmbd's FAILs, the run goes on
        res = "seed 004: %s: %s" % (type(e).__name__, e)
    finally:
        if ref:
            ref.stop()
    if ref and not isinstance(res, str) and res[ref.name]["error"]:
        why = "Samba 4.22's client stopped: %s" % res[ref.name]["error"]
    return res, why, time.monotonic() - t0


def seed_figures(wins):
    """(median wall ms per loop, its min and max, median CPU us per loop,
    loops) over timed windows."""
    import statistics
    wall = [w["secs"] / w["ops"] * 1e3 for w in wins]
    cpu = [w["cpu_ns"] / w["ops"] / 1e3 for w in wins]
    return (statistics.median(wall), min(wall), max(wall), statistics.median(cpu),
            sum(w["ops"] for w in wins))


def seed_report(res, why, secs):
    """Prints seed 004's figures and assertions: (passed, failed)."""
    import posixbench
    passed = failed = 0
    if isinstance(res, str):
        res, why = {"usmbd": {"windows": [], "error": res}}, why or res
    u = res.get("usmbd", {"windows": [], "error": "not measured"})
    s = res.get("samba422")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print("INFO seed 004 (issue 16 item 3): posixbench.py's loops, %d per window, %d rounds "
          "%s, one impacket connection each; then one round of usmbd under strace; %.1f s "
          "in all.  Wall times, CPU (the server's process tree, /proc/PID/task/*/schedstat) "
          "and ratios are printed, never asserted: they move with the machine's load "
          "(load average %s)"
          % (SEED_N, SEED_ROUNDS, "alternated window by window between usmbd and Samba 4.22 "
             "(smb3 unix extensions = yes)" if s else "of usmbd alone", secs, load))
    if not s:
        print("SKIP seed 004 on Samba 4.22: %s; usmbd's counts are held all the same" % why)
    elif s["error"]:
        print("SKIP seed 004 on Samba 4.22 (part): %s" % s["error"])
    for phase in posixbench.PHASES:
        fig = {}
        for name, r in (("usmbd", u), ("samba422", s)):
            wins = [w for w in (r or {}).get("windows", []) if w["phase"] == phase
                    and w["round"] < SEED_ROUNDS and w["ops"] and w["secs"] > 0]
            if not wins:
                continue
            fig[name] = seed_figures(wins)
            allocs = sum(w["allocs"] for w in wins) / fig[name][4] \
                if all(w["counted"] for w in wins) else float("nan")
            print("INFO seed004 workload=%s server=%s loops=%d wall_ms_per_loop=%.2f "
                  "(%.2f-%.2f) cpu_us_per_loop=%.1f allocs_per_loop=%.2f"
                  % ((phase, name, fig[name][4]) + fig[name][:4] + (allocs,)))
        if len(fig) == 2:
            print("INFO seed004 workload=%s usmbd/samba422 wall_ratio=%.2f cpu_ratio=%.3f "
                  "(below 1: usmbd takes less; printed, not asserted)"
                  % (phase, fig["usmbd"][0] / fig["samba422"][0],
                     fig["usmbd"][3] / fig["samba422"][3]))
        p, f = seed_asserts(phase, [w for w in u["windows"] if w["phase"] == phase],
                            u["error"])
        passed += p
        failed += f
    return passed, failed


def seed_asserts(phase, wins, err):
    """usmbd's counts of one seed 004 loop: (passed, failed)."""
    metered = [w for w in wins if w.get("syscalls")]
    descs = ("0 heap allocations per seed 004 %s loop (usmbd, every window)" % phase,
             "0 credential syscalls per seed 004 %s loop (usmbd)" % phase,
             "at most %d syscalls per seed 004 %s loop (usmbd)"
             % (SEED_MAX_SYSCALLS[phase], phase))
    if err or not metered or not all(w["counted"] for w in wins):
        err = err or ("no straced window" if not metered else "no malloc counter")
        for d in descs:
            print("FAIL %s: not available (%s)" % (d, err))
        return 0, len(descs)
    ops = sum(w["ops"] for w in wins)
    allocs = sum(w["allocs"] for w in wins)
    m = metered[0]
    sc, mops = m["syscalls"], m["ops"]
    cred = {k: sc[k] for k in bl.CRED_ALL if sc.get(k)}
    per = sc["total"] / mops
    limit = SEED_MAX_SYSCALLS[phase]
    epoll = not sc.get("io_uring_enter")
    if epoll:
        limit = SEED_EPOLL_SYSCALLS[phase]
        descs = descs[:2] + (descs[2].replace("at most %d " % SEED_MAX_SYSCALLS[phase],
                                              "at most %d " % limit),)
    top = sorted(((v, k) for k, v in sc.items() if k != "total"), reverse=True)[:6]
    rows = ((allocs == 0, "%d in %d loops" % (allocs, ops)),
            (not cred, "%d in %d loops%s" % (sum(cred.values()), mops, "".join(
                ", %s %d" % kv for kv in cred.items()))),
            (per <= limit + SEED_SLACK, "%.2f per loop: %s%s" % (
                per, ", ".join("%s %.2f" % (k, v / mops) for v, k in top),
                " (no io_uring here: epoll's bound)" if epoll else "")))
    passed = 0
    for d, (ok, detail) in zip(descs, rows):
        print("%s %s: %s (pid %s)" % ("PASS" if ok else "FAIL", d, detail,
                                      ",".join(map(str, m["pids"]))))
        passed += ok
    return passed, len(descs) - passed


def main():
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda *a: sys.exit(130))
    n = int(os.environ.get("PERFCHECK_N", "500"))
    which = os.environ.get("PERFCHECK_SERVER", "usmbd")
    # perfops.py's [marked] windows: usmbd's config has that share
    os.environ["PERFOPS_MARKED"] = "1" if which == "usmbd" else "0"
    cls = bl.Samba if which == "samba" else bl.Usmbd
    passed = failed = 0
    tmp = bl.make_tmp()
    srv = None
    figs, why = {}, None
    relay = None
    seed = ("the server did not start", None, 0.0)
    try:
        why = bl.build_malloc_so()
        if not why:
            bl.ensure_users()
            srv = cls(tmp, preload=True)
            why = srv.start()
        if not why:
            print("perfcheck: %s on 127.0.0.1:%d, %d requests per command, LD_PRELOAD %s"
                  % (srv.name, srv.port, n, os.path.relpath(bl.MALLOC_SO, bl.ROOT)))
            figs, why = measure(srv, n, tmp)
            if not why:
                more, why = smbload_windows(srv, n, tmp)
                figs.update(more)
            if which == "usmbd":
                relay = relay_measure(srv, min(n, 300))
                seed = seed_measure(srv, tmp)
    finally:
        if srv:
            srv.stop()
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)
    hold_limit(figs)
    for cmd, kind, desc in assertions():
        f = figs.get(cmd)
        if f is None or not f.get("ops") or f.get("syscalls") is None:
            reason = why or ("no serving process found" if f else "not measured")
            print("FAIL %s: %s not available (%s)" % (desc, which, reason))
            failed += 1
            continue
        ops, sc = f["ops"], f["syscalls"]
        if kind == "cred":
            cred = {k: sc[k] for k in bl.CRED_ALL if sc.get(k)}
            ok = not cred
            detail = "%d in %d requests%s" % (sum(cred.values()), ops,
                                              (": " + ", ".join("%s %d" % kv for kv in cred.items()))
                                              if cred else "")
        elif kind == "alloc":
            ok = f["counted"] and f["allocs"] == 0
            detail = ("%d in %d requests (%.2f per request)" % (f["allocs"], ops, f["allocs"] / ops)
                      if f["counted"] else "the malloc counter saw no serving process")
        elif kind == "hold":
            ok, detail = hold_verdict(f, ops, sc, HOLD_PHASES[cmd])
        elif kind == "env":
            ok, detail = env_verdict(f, ops, HOLD_PHASES[cmd])
        elif kind == "same":
            ref = figs.get(SAME_AS[cmd][0]) or {}
            rsc = ref.get("syscalls")
            per = sc["total"] / ops
            rper = rsc["total"] / ref["ops"] if rsc and ref.get("ops") else None
            ok = rper is not None and per <= rper + SAME_AS[cmd][1]
            detail = "%.2f per request against %s" % (
                per, "%.2f" % rper if rper is not None else "nothing measured")
        elif kind == "splice":
            per = sc.get("splice", 0) / ops
            ok = per >= MIN_SPLICE[cmd]
            detail = "%.2f splice calls per request" % per
        else:
            per = sc["total"] / ops
            limit = MAX_SYSCALLS[cmd]
            no_uring = not sc.get("io_uring_enter")
            if no_uring:
                limit = EPOLL_SYSCALLS[cmd]
            ok = per <= limit + SLACK.get(cmd, 0)
            top = sorted(((v, k) for k, v in sc.items() if k != "total"), reverse=True)[:5]
            detail = "%.2f per request: %s" % (per, ", ".join("%s %.2f" % (k, v / ops)
                                                             for v, k in top))
            if no_uring and limit != MAX_SYSCALLS[cmd]:
                desc = desc.replace("at most %d " % MAX_SYSCALLS[cmd], "at most %d " % limit)
                detail += " (no io_uring here: epoll's bound)"
        known = KNOWN.get((cmd, kind))
        verdict = "PASS" if ok else "FAIL"
        if known:
            verdict = "XPASS" if ok else "XFAIL"
        print("%s %s: %s (pid %s)%s" % (verdict, desc, detail, ",".join(map(str, f["pids"])),
                                        (" -- known: " + known) if known and not ok else ""))
        if kind == "sys" and no_uring and cmd in ("READ", "READ_PLAIN"):
            print("TARGET (not counted) at most %d syscalls per %s (issue 6): not met, "
                  "%.2f per request: the worker runs without io_uring on this machine "
                  "(epoll); see t/bench/README.md" % (MAX_SYSCALLS[cmd], LABEL[cmd], per))
        if ok:
            passed += 1
        elif not known:
            failed += 1
    # perfops.py's own checks (the splice path: data intact, refused large
    # WRITEs leave the stream framed) end it with ERROR when they fail.
    # RX_WAIT_PIPE for certain: a receive buffer too small for the payload.
    if which == "usmbd":
        ok, detail = pipe_ns_check()
        print("%s 4 MiB WRITEs larger than the receive buffer (tcp_rmem %s, private network "
              "namespace) buffered in the connection's pipe and spliced, intact, a refused one "
              "framed, a cut one harmless: %s" % ("PASS" if ok else "FAIL", NS_RMEM, detail))
        if ok:
            passed += 1
        else:
            failed += 1
    if which == "usmbd":
        p, f = relay_report(relay if relay is not None else
                            (why or "the server did not start"))
        passed += p
        failed += f
    if which == "usmbd":
        p, f = seed_report(*seed)
        passed += p
        failed += f
    if why:
        print("FAIL perfops ran to its end, with its splice-path checks: %s" % why)
        failed += 1
    else:
        print("PASS perfops ran to its end, with its splice-path checks (data intact, "
              "refused large WRITEs drained)")
        passed += 1
    print("perfcheck: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--pipe-ns"]:
        sys.exit(pipe_ns_child())
    sys.exit(main())
