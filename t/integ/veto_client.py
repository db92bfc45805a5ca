# Client of t/integ/veto.sh: Samba's name rules of a share (veto files,
# delete veto files, hide files, hide dot files) seen through impacket.
#
#	veto_client.py PORT SHARE LOCALDIR MODE
#
# LOCALDIR is the share's directory on disk: the vetoed names are made
# there directly (a client cannot make them), and what a request left
# behind is checked there.  MODE is what the share [SHARE] is configured
# with:
#	veto	veto files = /.DS_Store/._*/Thumbs.db/.snapshot/,
#		hide files = /*.bak/, the rest default
#	delete	the same veto files and delete veto files = yes
#	plain	no name keys at all
#	nodot	hide dot files = no
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import os
import pwd
import shutil
import struct
import sys
import threading

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from notify_lib import notify_answer, notify_send  # noqa: E402
from state_lib import status_of  # noqa: E402

PORT, SHARE, LOCAL, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3], \
    sys.argv[4]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RA = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES
HIDDEN = 0x2
FILE_BASIC_INFORMATION = 4
FILE_LINK_INFORMATION = 11
FILE_DISPOSITION_INFORMATION = 13


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def local(*parts):
    return os.path.join(LOCAL, *parts)


def fixture():
    """Every name of the checks, made on disk and given to alice."""
    uid = pwd.getpwnam("alice").pw_uid
    for n in os.listdir(LOCAL):
        p = local(n)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.unlink(p)
    for d in ("d", "d2", "d3", ".snapshot", "sub"):
        os.mkdir(local(d))
    for f in (".DS_Store", "._foo", "Thumbs.db", "keep.txt", "keep2.txt",
              "a.bak", ".hidden", "d/Thumbs.db", "d2/._x", "d2/.DS_Store",
              "d3/Thumbs.db", "d3/other", ".snapshot/inner", "sub/keep"):
        with open(local(f), "w") as fp:
            fp.write("data of %s\n" % f)
    os.mkdir(local("d2/.snapshot"))
    with open(local("d2/.snapshot/deep"), "w") as fp:
        fp.write("x")
    for root, dirs, files in os.walk(LOCAL):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), uid, -1)


def login():
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login("alice", "alicepw1")
    return c, c.connectTree(SHARE)


def opener(c, t, name, disp=s3.FILE_OPEN, opts=0, access=RA):
    def go():
        srv = c.getSMBServer()
        fid = srv.create(t, name, access, ALL, opts, disp, 0)
        srv.close(t, fid)
    return go


def listing(c, path="*"):
    return {f.get_longname(): f.get_attributes()
            for f in c.listPath(SHARE, path)}


def attrs_of(c, t, name):
    srv = c.getSMBServer()
    fid = srv.create(t, name, RA, ALL, 0, s3.FILE_OPEN, 0)
    try:
        blob = srv.queryInfo(t, fid, infoType=s3.SMB2_0_INFO_FILE,
                             fileInfoClass=FILE_BASIC_INFORMATION)
    finally:
        srv.close(t, fid)
    return struct.unpack_from("<I", blob, 32)[0]


def link_to(c, t, src, dst):
    def go():
        srv = c.getSMBServer()
        fid = srv.create(t, src, RA, ALL, 0, s3.FILE_OPEN, 0)
        try:
            d = dst.encode("utf-16-le")
            blob = struct.pack("<B7xQI", 0, 0, len(d)) + d
            srv.setInfo(t, fid, blob, s3.SMB2_0_INFO_FILE,
                        FILE_LINK_INFORMATION)
        finally:
            srv.close(t, fid)
    return go


def rmdir(c, t, name):
    """Open for DELETE, set the disposition (where a directory that is
    not empty is refused), close."""
    def go():
        srv = c.getSMBServer()
        fid = srv.create(t, name, s3.DELETE | s3.FILE_READ_ATTRIBUTES, ALL,
                         s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
        try:
            srv.setInfo(t, fid, b"\x01", s3.SMB2_0_INFO_FILE,
                        FILE_DISPOSITION_INFORMATION)
        finally:
            srv.close(t, fid)
    return go


def hidden(a):
    return bool(a & HIDDEN)


def veto_checks(c, t):
    names = listing(c)
    for n in (".DS_Store", "._foo", "Thumbs.db", ".snapshot"):
        check("%s: %s is not listed" % (MODE, n), n not in names,
              sorted(names))
    check("%s: keep.txt is listed" % MODE, "keep.txt" in names,
          sorted(names))
    sub = listing(c, "d2\\*")
    check("%s: d2 lists no vetoed name" % MODE,
          set(sub) == {".", ".."}, sorted(sub))
    # a listing asking for the name itself (no wildcard) does not find it
    st = status_of(lambda: c.listPath(SHARE, "Thumbs.db"))
    check("%s: a search for Thumbs.db finds nothing" % MODE,
          st == "STATUS_NO_SUCH_FILE", st)
    for n in ("Thumbs.db", "THUMBS.DB", "thumbs.db", "._foo", "._FOO",
              ".ds_store", ".SNAPSHOT", "Thumbs.db:s", "Thumbs.db::$DATA",
              "d\\Thumbs.db", "d\\tHUMBS.db"):
        st = status_of(opener(c, t, n))
        check("%s: open %s is OBJECT_NAME_NOT_FOUND" % (MODE, n),
              st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    for n in (".snapshot\\inner", ".Snapshot\\inner", "d2\\.snapshot\\deep"):
        st = status_of(opener(c, t, n))
        check("%s: open %s is OBJECT_PATH_NOT_FOUND" % (MODE, n),
              st == "STATUS_OBJECT_PATH_NOT_FOUND", st)
    # a trailing dot or space is another name on Linux, not the vetoed one
    st = status_of(opener(c, t, "Thumbs.db."))
    check("%s: open Thumbs.db. (absent) is OBJECT_NAME_NOT_FOUND" % MODE,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    for n in ("._new", "Thumbs.db", "THUMBS.DB:str"):
        st = status_of(opener(c, t, n, s3.FILE_CREATE,
                              s3.FILE_NON_DIRECTORY_FILE,
                              RA | s3.FILE_WRITE_DATA))
        check("%s: create %s is refused (OBJECT_NAME_NOT_FOUND)" % (MODE, n),
              st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    st = status_of(opener(c, t, "sub\\.DS_Store", s3.FILE_CREATE,
                          s3.FILE_DIRECTORY_FILE))
    check("%s: mkdir sub\\.DS_Store is refused" % MODE,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    check("%s: none of them was made" % MODE,
          not os.path.exists(local("._new")) and
          not os.path.exists(local("sub/.DS_Store")),
          str(os.listdir(LOCAL)))
    st = status_of(lambda: c.rename(SHARE, "keep2.txt", "._renamed"))
    check("%s: rename to ._renamed is refused" % MODE,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    st = status_of(lambda: c.rename(SHARE, "keep2.txt", ".snapshot\\x"))
    check("%s: rename into .snapshot is refused" % MODE,
          st == "STATUS_OBJECT_PATH_NOT_FOUND", st)
    st = status_of(link_to(c, t, "keep2.txt", "sub\\Thumbs.db"))
    check("%s: a hard link named sub\\Thumbs.db is refused" % MODE,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    check("%s: keep2.txt is still there, alone" % MODE,
          os.path.exists(local("keep2.txt")) and
          not os.path.exists(local("._renamed")) and
          not os.path.exists(local("sub/Thumbs.db")),
          str(os.listdir(LOCAL)))


def hide_checks(c, t, dot_hidden, bak_hidden):
    names = listing(c)
    check("%s: .hidden listed %s" % (MODE, "HIDDEN" if dot_hidden else
                                     "not hidden"),
          hidden(names.get(".hidden", 0)) == dot_hidden,
          "0x%x" % names.get(".hidden", -1))
    check("%s: a.bak listed %s" % (MODE, "HIDDEN" if bak_hidden else
                                   "not hidden"),
          hidden(names.get("a.bak", 0)) == bak_hidden,
          "0x%x" % names.get("a.bak", -1))
    check("%s: keep.txt listed not hidden" % MODE,
          "keep.txt" in names and not hidden(names["keep.txt"]),
          "0x%x" % names.get("keep.txt", -1))
    check("%s: . and .. are not hidden" % MODE,
          not hidden(names.get(".", 0)) and not hidden(names.get("..", 0)),
          "%s %s" % (names.get("."), names.get("..")))
    a = attrs_of(c, t, ".hidden")
    check("%s: QUERY_INFO of .hidden: %s" % (MODE, "HIDDEN" if dot_hidden
                                              else "not hidden"),
          hidden(a) == dot_hidden, "0x%x" % a)
    a = attrs_of(c, t, "a.bak")
    check("%s: QUERY_INFO of a.bak: %s" % (MODE, "HIDDEN" if bak_hidden
                                            else "not hidden"),
          hidden(a) == bak_hidden, "0x%x" % a)
    a = attrs_of(c, t, "keep.txt")
    check("%s: QUERY_INFO of keep.txt: not hidden" % MODE, not hidden(a),
          "0x%x" % a)


def delete_checks(c, t, on):
    st = status_of(rmdir(c, t, "d"))
    if on:
        check("%s: d (only Thumbs.db) is deleted" % MODE,
              st == "OK" and not os.path.exists(local("d")),
              "%s, on disk: %s" % (st, os.path.exists(local("d"))))
        st = status_of(rmdir(c, t, "d2"))
        check("%s: d2 (._x, .DS_Store, .snapshot/deep) is deleted" % MODE,
              st == "OK" and not os.path.exists(local("d2")),
              "%s, on disk: %s" % (st, os.path.exists(local("d2")) and
                                   os.listdir(local("d2"))))
    else:
        check("%s: d (only Thumbs.db) is DIRECTORY_NOT_EMPTY" % MODE,
              st == "STATUS_DIRECTORY_NOT_EMPTY", st)
        check("%s: d/Thumbs.db is still there" % MODE,
              os.path.exists(local("d/Thumbs.db")))
    st = status_of(rmdir(c, t, "d3"))
    check("%s: d3 (Thumbs.db and other) is DIRECTORY_NOT_EMPTY" % MODE,
          st == "STATUS_DIRECTORY_NOT_EMPTY", st)
    check("%s: d3 keeps both names" % MODE,
          os.path.exists(local("d3/Thumbs.db")) and
          os.path.exists(local("d3/other")))


def notify_changes(c, t, dirname, make):
    """CHANGE_NOTIFY (file names) on dirname while make() runs in another
    thread half a second later; the changes of the final answer."""
    srv = c.getSMBServer()
    d = srv.create(t, dirname, s3.FILE_READ_DATA, ALL,
                   s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    mid = notify_send(srv, t, d, 0x1)	# FILE_NOTIFY_CHANGE_FILE_NAME
    th = threading.Timer(0.5, make)
    th.start()
    got = notify_answer(srv, mid, 10)
    th.join()
    srv.close(t, d)
    if got is None or got[0] != 0:
        return ["status %s" % (hex(got[0]) if got else "none")]
    return [name for _action, name in got[1]]


def link_checks(c, t):
    """Symlinks inside the share whose own names are not vetoed, pointing
    at vetoed names: listed (their names are not vetoed), but nothing is
    reached through them.  Samba 4.17 refuses a vetoed directory reached
    through a link but opens a link to a vetoed file (lnk)."""
    os.symlink("Thumbs.db", local("lnk"))
    os.symlink(".snapshot", local("dlnk"))
    os.symlink("._dangling", local("newlnk"))
    for n, want in (("lnk", "STATUS_OBJECT_NAME_NOT_FOUND"),
                    ("LNK", "STATUS_OBJECT_NAME_NOT_FOUND"),
                    ("dlnk\\inner", "STATUS_OBJECT_PATH_NOT_FOUND"),
                    ("DLNK\\inner", "STATUS_OBJECT_PATH_NOT_FOUND")):
        st = status_of(opener(c, t, n))
        check("%s: open %s (through a link to a vetoed name) is %s" % (
              MODE, n, want[7:]), st == want, st)
    st = status_of(opener(c, t, "dlnk\\new", s3.FILE_CREATE,
                          s3.FILE_NON_DIRECTORY_FILE,
                          RA | s3.FILE_WRITE_DATA))
    check("%s: create dlnk\\new is OBJECT_PATH_NOT_FOUND, nothing made"
          % MODE, st == "STATUS_OBJECT_PATH_NOT_FOUND" and
          not os.path.exists(local(".snapshot/new")), st)
    st = status_of(lambda: c.rename(SHARE, "keep2.txt", "dlnk\\moved"))
    check("%s: rename into dlnk is OBJECT_PATH_NOT_FOUND" % MODE,
          st == "STATUS_OBJECT_PATH_NOT_FOUND" and
          os.path.exists(local("keep2.txt")), st)
    st = status_of(opener(c, t, "newlnk", s3.FILE_OPEN_IF,
                          s3.FILE_NON_DIRECTORY_FILE,
                          RA | s3.FILE_WRITE_DATA))
    check("%s: create through newlnk (-> ._dangling) makes no ._dangling"
          % MODE, not os.path.exists(local("._dangling")), st)
    names = listing(c)
    check("%s: lnk and dlnk are listed (their names are not vetoed)" % MODE,
          "lnk" in names and "dlnk" in names, sorted(names))


def notify_checks(c, t):
    def make():
        for n in ("._evil", "seen.txt"):
            with open(local("sub", n), "w") as fp:
                fp.write("x")
    names = notify_changes(c, t, "sub", make)
    check("%s: CHANGE_NOTIFY reports seen.txt, not ._evil" % MODE,
          "seen.txt" in names and "._evil" not in names, str(names))

    # `hide files` only marks a name hidden in listings: it is listed, so
    # its changes are reported, as Samba does
    def make_bak():
        with open(local("sub", "keep.bak"), "w") as fp:
            fp.write("x")
    names = notify_changes(c, t, "sub", make_bak)
    check("%s: CHANGE_NOTIFY reports keep.bak (hide files)" % MODE,
          names == ["keep.bak"], str(names))


def plain_checks(c, t):
    names = listing(c)
    check("plain: Thumbs.db and .snapshot are listed",
          "Thumbs.db" in names and ".snapshot" in names, sorted(names))
    st = status_of(opener(c, t, "thumbs.db"))
    check("plain: thumbs.db opens", st == "OK", st)
    st = status_of(opener(c, t, ".snapshot\\inner"))
    check("plain: .snapshot\\inner opens", st == "OK", st)
    st = status_of(rmdir(c, t, "d"))
    check("plain: d (Thumbs.db) is DIRECTORY_NOT_EMPTY",
          st == "STATUS_DIRECTORY_NOT_EMPTY", st)


def main():
    fixture()
    c, t = login()
    if MODE == "veto":
        veto_checks(c, t)
        hide_checks(c, t, True, True)
        delete_checks(c, t, False)
        notify_checks(c, t)
        link_checks(c, t)
    elif MODE == "delete":
        delete_checks(c, t, True)
    elif MODE == "plain":
        plain_checks(c, t)
        hide_checks(c, t, True, False)
    elif MODE == "nodot":
        hide_checks(c, t, False, False)
    c.logoff()


main()
