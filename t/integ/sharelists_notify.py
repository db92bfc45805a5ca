# Client of t/integ/sharelists.sh: CHANGE_NOTIFY under `hide unreadable`.
# argv: PORT, USER, PASSWORD, SHARE, LOCAL (the share's directory, changed
# here as root while the user watches), MODE: "hide" (the share has the
# key: a change of a name the user's listing hides is not reported, a
# removal is NOTIFY_ENUM_DIR) or "show" (no key: every name reported).
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import os
import pwd
import sys
import threading

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from notify_lib import SMB2_WATCH_TREE, notify_answer, notify_send  # noqa: E402

PORT, USER, PW, SHARE, LOCAL, MODE = sys.argv[1:7]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
NAMES = 0x3			# FILE_NOTIFY_CHANGE_FILE_NAME | DIR_NAME
ADDED, REMOVED, OLD, NEW = 1, 2, 4, 5
NOTIFY_ENUM_DIR = 0x10C
ALICE = pwd.getpwnam("alice").pw_uid
HIDE = MODE == "hide"


def check(desc, cond, why=""):
    print(("ok %s %s: %s" % (MODE, USER, desc)) if cond else
          ("FAIL %s %s: %s: %s" % (MODE, USER, desc, why)), flush=True)


def local(*parts):
    return os.path.join(LOCAL, *parts)


def mkfile(name, mode):
    """A file of alice's made with its final mode (never readable by the
    watcher for a moment), as root."""
    fd = os.open(local(name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode)
    os.write(fd, b"x")
    os.fchmod(fd, mode)
    os.fchown(fd, ALICE, -1)
    os.close(fd)


def mkdir(name, mode):
    os.mkdir(local(name), mode)
    os.chmod(local(name), mode)
    os.chown(local(name), ALICE, -1)


def watch(c, t, make, flags=0, flt=NAMES):
    """CHANGE_NOTIFY (names, or flt) on the share's root while make() runs
    half a second later; (status, [(action, name)...]) of the answer."""
    srv = c.getSMBServer()
    d = srv.create(t, "", s3.FILE_READ_DATA, ALL, s3.FILE_DIRECTORY_FILE,
                   s3.FILE_OPEN, 0)
    mid = notify_send(srv, t, d, flt, flags)
    th = threading.Timer(0.5, make)
    th.start()
    got = notify_answer(srv, mid, 10)
    th.join()
    srv.close(t, d)
    return got if got is not None else (None, [])


def main():
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(PORT),
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login(USER, PW)
    t = c.connectTree(SHARE)
    p = MODE[0]		# names of their own per share: both run on one dir

    # new files: alice's 0600 one hidden, the 0644 one after it reported
    def create():
        mkfile(p + "n_secret.txt", 0o600)
        mkdir(p + "n_private", 0o700)
        mkfile(p + "n_public.txt", 0o644)
    st, ch = watch(c, t, create)
    names = [n for _a, n in ch]
    # (without the key the answer may go before the last change is made)
    if HIDE:
        check("new 0644 file reported", st == 0 and
              (ADDED, p + "n_public.txt") in ch, (st, ch))
    check("new 0600 file and 0700 directory %s" %
          ("left out" if HIDE else "reported"),
          (p + "n_secret.txt" not in names and
           p + "n_private" not in names) if HIDE else
          p + "n_secret.txt" in names,
          (st, ch))

    # renames: a hidden file's old and new names both left out, a
    # readable one's both reported
    def rename():
        os.rename(local(p + "n_secret.txt"), local(p + "n_secret2.txt"))
        os.rename(local(p + "n_public.txt"), local(p + "n_public2.txt"))
    st, ch = watch(c, t, rename)
    names = [n for _a, n in ch]
    if HIDE:
        check("rename of the 0644 file: old and new names",
              st == 0 and (OLD, p + "n_public.txt") in ch and
              (NEW, p + "n_public2.txt") in ch, (st, ch))
    check("rename of the 0600 file %s" %
          ("left out" if HIDE else "reported"),
          (p + "n_secret.txt" not in names and
           p + "n_secret2.txt" not in names) if HIDE else
          (p + "n_secret.txt" in names and p + "n_secret2.txt" in names),
          (st, ch))

    # a removal: the name is gone, nothing tells whether the user could
    # read it; with the key the client is told to list again
    def remove():
        os.unlink(local(p + "n_secret2.txt"))
    st, ch = watch(c, t, remove)
    if HIDE:
        check("removal of the 0600 file: NOTIFY_ENUM_DIR, no name",
              st == NOTIFY_ENUM_DIR and ch == [], (st, ch))
    else:
        check("removal of the 0600 file reported",
              st == 0 and (REMOVED, p + "n_secret2.txt") in ch, (st, ch))

    # a local name with a colon is a file name, not a stream of the
    # readable file before it
    mkfile(p + "c_pub", 0o644)

    def colon():
        mkfile(p + "c_pub:secret", 0o600)
        mkfile(p + "c_marker", 0o644)
    st, ch = watch(c, t, colon)
    names = [n for _a, n in ch]
    check("a 0600 file named c_pub:secret %s" %
          ("left out (not judged as a stream of c_pub)" if HIDE else
           "reported"),
          st == 0 and (p + "c_pub:secret" not in names) == HIDE, (st, ch))

    # what a listing never shows: a symlink out of the share (to a file
    # anyone may read) and a fifo; judging them opens neither
    def special():
        os.symlink("/etc/hostname", local(p + "l_out"))
        os.mkfifo(local(p + "f_fifo"), 0o666)
        mkfile(p + "s_marker", 0o644)
    st, ch = watch(c, t, special)
    names = [n for _a, n in ch]
    if HIDE:
        check("a symlink out of the share and a fifo left out",
              st == 0 and p + "l_out" not in names and
              p + "f_fifo" not in names and p + "s_marker" in names,
              (st, ch))
    else:
        check("a symlink out of the share reported", st == 0 and
              p + "l_out" in names, (st, ch))

    # a write to ntacl.txt, whose stored DACL (sharelists.sh) lets only
    # alice read it though the kernel lets bob: the Windows lock hides it
    def write():
        for n in ("ntacl.txt", "public.txt"):
            with open(local(n), "a") as fp:
                fp.write("more")
    st, ch = watch(c, t, write, flt=0x10)	# FILE_NOTIFY_CHANGE_LAST_WRITE
    names = [n for _a, n in ch]
    if HIDE:
        check("a write to a file its DACL does not let bob read left out, "
              "public.txt's reported", st == 0 and "ntacl.txt" not in names
              and "public.txt" in names, (st, ch))
    else:
        check("a write to ntacl.txt reported", st == 0 and
              "ntacl.txt" in names, (st, ch))

    # WATCH_TREE: below a subdirectory too
    os.makedirs(local(p + "tree"), exist_ok=True)
    os.chmod(local(p + "tree"), 0o777)

    def below():
        mkfile(os.path.join(p + "tree", "t_secret.txt"), 0o600)
        mkfile(os.path.join(p + "tree", "t_public.txt"), 0o644)
    st, ch = watch(c, t, below, SMB2_WATCH_TREE)
    names = [n for _a, n in ch]
    if HIDE:
        check("WATCH_TREE: the 0644 file below reported",
              st == 0 and p + "tree\\t_public.txt" in names, (st, ch))
    check("WATCH_TREE: the 0600 file below %s" %
          ("left out" if HIDE else "reported"),
          (p + "tree\\t_secret.txt" not in names) == HIDE, (st, ch))

    # a file moved from a readable place to the share root, its mode
    # 0600: judged by its new name, both halves left out
    def move_in():
        os.rename(local(p + "tree", "t_secret.txt"), local(p + "m.txt"))
        mkfile(p + "marker.txt", 0o644)
    st, ch = watch(c, t, move_in, SMB2_WATCH_TREE)
    names = [n for _a, n in ch]
    check("move of a 0600 file between watched directories %s" %
          ("left out" if HIDE else "reported"),
          st == 0 and ((p + "m.txt" not in names and
                        p + "tree\\t_secret.txt" not in names) if HIDE else
                       (p + "m.txt" in names)), (st, ch))
    c.logoff()


main()
