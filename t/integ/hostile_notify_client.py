# The client of hostile.sh's notify-swap checks: a WATCH_TREE CHANGE_NOTIFY
# of alice's on a directory of the share, and a directory made below it
# that is replaced by a symlink to a directory outside the share before
# alice's worker reads the inotify event of its creation (the worker is
# stopped meanwhile, as a busy one would be).  The worker must not follow
# the symlink and add a watch there: a file then made outside must not be
# reported to alice.  The same with the new directory's parent swapped.
#
#   hostile_notify_client.py SHARE_NAME SHARE_PATH OUTSIDE MASTER_PID
#
# Prints "CHECK <id> PASS|FAIL <what> -- <detail>" lines (hostile.sh).
import os
import pwd
import signal
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from notify_lib import SMB2_WATCH_TREE, notify_answer, notify_send  # noqa: E402

PORT = int(os.environ["PORT"])
PW = os.environ.get("ALICE_PW", "alicepw1")
ALL_CHANGES = 0x0FFF


def check(cid, ok, desc, detail=""):
    print("CHECK %s %s %s -- %s" % (cid, "PASS" if ok else "FAIL", desc,
                                    detail), flush=True)


def notify_tree(srv, tid, fid):
    return notify_send(srv, tid, fid, ALL_CHANGES, SMB2_WATCH_TREE, 65536)


def notify_names(srv, mid, secs):
    """The names of a CHANGE_NOTIFY's final answer; None on no answer
    within secs (the request stays pending)."""
    got = notify_answer(srv, mid, secs)
    if got is None:
        return None
    if got[0] != 0:
        return ["status 0x%08x" % got[0]]
    return [name for _action, name in got[1]]


def worker_of(master, user):
    """The pid of user's worker among master's children (another test
    run may serve the same user: never pick by name)."""
    uid = pwd.getpwnam(user).pw_uid
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/status" % p) as f:
                fields = dict(ln.split(":", 1) for ln in f if ":" in ln)
        except OSError:
            continue
        if int(fields["PPid"]) == master and \
                int(fields["Uid"].split()[0]) == uid:
            return int(p)
    return None


def main(share, path, outside, master):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login("alice", PW)
    worker = None
    for _ in range(20):		# a new worker may still be starting
        worker = worker_of(master, "alice")
        if worker is not None:
            break
        time.sleep(0.1)
    if worker is None:
        check("notify-swap-setup", False, "alice's worker found")
        return 0
    tid = c.connectTree(share)
    srv = c.getSMBServer()
    os.makedirs(os.path.join(path, "nw"), exist_ok=True)
    os.chmod(os.path.join(path, "nw"), 0o1777)
    fid = srv.create(tid, "nw", s3.FILE_READ_DATA, 7, s3.FILE_DIRECTORY_FILE,
                     s3.FILE_OPEN, 0)
    mid = notify_tree(srv, tid, fid)
    time.sleep(0.3)			# the watch is set up
    # made as a directory, swapped for a symlink before the worker looks
    below = os.path.join(path, "nw", "sub")
    os.kill(worker, signal.SIGSTOP)
    try:
        os.mkdir(below)
        os.rename(below, below + ".real")
        os.symlink(outside, below)
    finally:
        os.kill(worker, signal.SIGCONT)
    first = notify_names(srv, mid, 5)
    check("notify-swap-created", first is not None and "sub" in first,
          "the directory's creation is reported", "changes %s" % (first,))
    time.sleep(0.3)
    mid = notify_tree(srv, tid, fid)
    time.sleep(0.3)
    leak = "notify-leaked-%d" % os.getpid()
    open(os.path.join(outside, leak), "w").close()
    second = notify_names(srv, mid, 2)
    os.unlink(os.path.join(outside, leak))
    leaked = [n for n in second or [] if leak in n]
    check("notify-swap-outside", not leaked,
          "a file made outside the share, behind a directory swapped for "
          "a symlink, is not reported", "changes %s" % (second,))
    # the fix's other side: a plain new subdirectory is still followed
    pending = mid if second is None else None	# still waiting

    def changes_until(name, tries=4):
        nonlocal pending
        seen = []
        for _ in range(tries):
            m = pending if pending is not None else notify_tree(srv, tid, fid)
            pending = None
            got = notify_names(srv, m, 3)
            if got is None:
                pending = m
                break
            seen += got
            if name in got:
                break
        return seen

    os.mkdir(os.path.join(path, "nw", "plain"))
    first = changes_until("plain")
    time.sleep(0.3)
    open(os.path.join(path, "nw", "plain", "inside"), "w").close()
    inside = changes_until("plain\\inside")
    check("notify-tree-follows", "plain\\inside" in inside,
          "a file made in a new subdirectory of a tree watch is reported",
          "changes %s then %s" % (first, inside))
    parent_swap(srv, tid, worker, path, outside)
    c.close()
    return 0


def parent_swap(srv, tid, worker, path, outside):
    """The same one level up: a directory made in a watched subdirectory,
    that subdirectory swapped for a symlink to a directory outside holding
    one of the same name, before the worker reads the creation."""
    top = os.path.join(path, "pw")
    os.makedirs(os.path.join(top, "x"), exist_ok=True)
    os.chmod(top, 0o1777)
    os.chmod(os.path.join(top, "x"), 0o1777)
    os.makedirs(os.path.join(outside, "d"), exist_ok=True)
    fid = srv.create(tid, "pw", s3.FILE_READ_DATA, 7, s3.FILE_DIRECTORY_FILE,
                     s3.FILE_OPEN, 0)
    mid = notify_tree(srv, tid, fid)
    time.sleep(0.3)
    os.kill(worker, signal.SIGSTOP)
    try:
        os.mkdir(os.path.join(top, "x", "d"))
        os.rename(os.path.join(top, "x"), os.path.join(top, "x.real"))
        os.symlink(outside, os.path.join(top, "x"))
    finally:
        os.kill(worker, signal.SIGCONT)
    first = notify_names(srv, mid, 5)
    time.sleep(0.3)
    mid = notify_tree(srv, tid, fid)
    time.sleep(0.3)
    leak = os.path.join(outside, "d", "notify-leaked-%d" % os.getpid())
    open(leak, "w").close()
    second = notify_names(srv, mid, 2)
    os.unlink(leak)
    os.rmdir(os.path.join(outside, "d"))
    leaked = [n for n in second or [] if "notify-leaked" in n]
    check("notify-swap-parent", first is not None and not leaked,
          "a file made outside the share, behind the parent of a new "
          "directory swapped for a symlink, is not reported",
          "changes %s then %s" % (first, second))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
