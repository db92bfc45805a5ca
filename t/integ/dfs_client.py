# Client of t/integ/dfs.sh: what a DFS client sees of an msdfs root, its
# links and an msdfs proxy, field by field, and what hostile referral
# requests get.  argv: port, server kind (usmbd or samba), user, password.
# Prints "ok DESC" / "FAIL DESC: why" against usmbd; against Samba (the
# reference, DFS_SAMBA=1) "same DESC" or "differs DESC: ..." lines, which
# dfs.sh shows but does not count.
import socket
import struct
import sys

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection, SessionError

PORT = int(sys.argv[1])
KIND = sys.argv[2]
USER, PW = sys.argv[3], sys.argv[4]
HOST = "127.0.0.1"
PATH_NOT_COVERED = 0xC0000257
NOT_FOUND = 0xC0000225
OTHER = "bob" if USER == "alice" else "alice"
# What Samba 4.17 answers where usmbd answers otherwise, and why (dfs.sh
# prints them; HACKING.md "DFS" has the list).
SAMBA_DIFFERS = {}


def report(desc, got, want):
    if KIND == "usmbd":
        print(("ok %s" % desc) if got == want else
              ("FAIL %s: got %r, want %r" % (desc, got, want)), flush=True)
    else:
        print(("same %s" % desc) if got == want else
              ("differs %s: samba %r, usmbd %r" % (desc, got, want)),
              flush=True)


def login():
    c = SMBConnection(HOST, HOST, sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login(USER, PW)
    return c


def status(fn):
    try:
        fn()
        return "SUCCESS"
    except (SessionError, smb3.SessionError) as e:
        code = e.getErrorCode() if hasattr(e, "getErrorCode") \
            else e.get_error_code()
        return "0x%08X" % (code & 0xFFFFFFFF)


def u16z(s):
    return s.encode("utf-16-le") + b"\0\0"


def req(level, name):
    return struct.pack("<H", level) + u16z(name)


def req_ex(level, name, site=None):
    n = u16z(name)
    d = struct.pack("<H", len(n)) + n
    if site is not None:
        sz = site.encode("utf-16-le")
        d += struct.pack("<H", len(sz)) + sz
    return struct.pack("<HHI", level, 1 if site is not None else 0,
                       len(d)) + d


def referral(c, tid, blob, ex=False, maxout=8192):
    return c.getSMBServer().ioctl(
        tid, None, s3.FSCTL_DFS_GET_REFERRALS_EX if ex else
        s3.FSCTL_DFS_GET_REFERRALS, flags=s3.SMB2_0_IOCTL_IS_FSCTL,
        inputBlob=blob, maxOutputResponse=maxout)


def ustr(b, off):
    end = off
    while b[end:end + 2] != b"\0\0":
        end += 2
    return b[off:end].decode("utf-16-le")


def parse(b):
    """RESP_GET_DFS_REFERRAL (MS-DFSC 2.2.4) read by hand."""
    consumed, n, flags = struct.unpack_from("<HHI", b, 0)
    ents, off = [], 8
    for _ in range(n):
        ver, size, stype, eflags = struct.unpack_from("<HHHH", b, off)
        if ver == 2:
            _, ttl, po, ao, no = struct.unpack_from("<IIHHH", b, off + 8)
        else:
            ttl, po, ao, no = struct.unpack_from("<IHHH", b, off + 8)
        ents.append(dict(ver=ver, size=size, type=stype, flags=eflags,
                         ttl=ttl, path=ustr(b, off + po),
                         alt=ustr(b, off + ao), addr=ustr(b, off + no)))
        off += size
    return dict(consumed=consumed, n=n, flags=flags, ents=ents)


def ref(c, tid, blob, ex=False):
    """the parsed answer, or the status string of a refusal"""
    try:
        return parse(referral(c, tid, blob, ex))
    except (SessionError, smb3.SessionError) as e:
        code = e.getErrorCode() if hasattr(e, "getErrorCode") \
            else e.get_error_code()
        return "0x%08X" % (code & 0xFFFFFFFF)


def g(r, fn):
    """fn of an answer; a refusal's status as it is"""
    return r if isinstance(r, str) else fn(r)


def summary(r):
    if isinstance(r, str):
        return r
    e = r["ents"][0]
    return (r["consumed"], r["flags"], e["ver"], e["type"], e["ttl"],
            e["path"], [x["addr"] for x in r["ents"]])


def main():
    c = login()
    srv = c.getSMBServer()
    report("NEGOTIATE offers SMB2_GLOBAL_CAP_DFS",
           bool(srv._Connection["ServerCapabilities"] & s3.SMB2_GLOBAL_CAP_DFS),
           True)
    ipc = c.connectTree("IPC$")
    root = c.connectTree("root")
    te = srv._Session["TreeConnectTable"][root]
    # impacket keeps neither flags nor caps: ask its packet again
    report("the msdfs root is a DFS share (SHARE_CAP_DFS)",
           te["IsDfsShare"], True)
    plain = c.connectTree("plain")
    report("a share without msdfs root is not",
           srv._Session["TreeConnectTable"][plain]["IsDfsShare"], False)

    # root referral (Samba's self referral), V3
    rootp = "\\%s\\root" % HOST
    r = ref(c, ipc, req(3, rootp))
    report("root referral on IPC$ (V3)", summary(r),
           (len(rootp) * 2, 3, 3, 1, 600, rootp, [rootp]))
    # a link: level 4 gets V4, PathConsumed in bytes up to the link
    lp = rootp + "\\link"
    r = ref(c, ipc, req(4, lp + "\\sub\\deep.txt"))
    report("link referral (V4): consumed, flags, target", summary(r),
           (len(lp) * 2, 2, 4, 0, 600, lp, ["\\%s\\target" % HOST]))
    report("V4 marks the first entry as the target set's start",
           g(r, lambda r: r["ents"][0]["flags"]), 4)
    r = ref(c, root, req(3, "\\%s\\root\\two" % HOST))
    report("two-target link on the share itself",
           g(r, lambda r: [e["addr"] for e in r["ents"]]),
           ["\\%s\\target" % HOST, "\\%s\\share" % HOST])
    r = ref(c, ipc, req(2, lp))
    report("level 2 gets V2 entries", g(r, lambda r: (
        r["ents"][0]["ver"], r["ents"][0]["size"])), (2, 22))
    r = ref(c, ipc, req(1, lp))
    report("level 1 gets V2 entries too (as Samba)",
           g(r, lambda r: r["ents"][0]["ver"]), 2)
    r = ref(c, ipc, req_ex(4, lp, "site"), ex=True)
    report("FSCTL_DFS_GET_REFERRALS_EX with a site name",
           g(r, lambda r: summary(r)[2:]), (4, 0, 600, lp, ["\\%s\\target" % HOST]))
    r = ref(c, ipc, req(3, "\\%s\\ROOT\\LINK\\x" % HOST))
    report("names in another case",
           g(r, lambda r: (r["consumed"], r["ents"][0]["addr"])),
           (len(lp) * 2, "\\%s\\target" % HOST))
    r = ref(c, ipc, req(3, "\\\\%s\\root\\link" % HOST))
    report("two leading backslashes: one is counted (as Samba)",
           g(r, lambda r: r["consumed"]), len(lp) * 2)
    r = ref(c, ipc, req(3, "\\%s\\proxy" % HOST))
    report("msdfs proxy: the share refers to its target",
           g(r, lambda r: (r["flags"], r["ents"][0]["type"],
                           r["ents"][0]["addr"])),
           (2, 0, "\\%s\\target" % HOST))
    report("msdfs proxy: TREE_CONNECT refused (as Samba)",
           status(lambda: c.connectTree("proxy")), "0xC00000CC")

    # names that are no link
    for desc, name, want in [
            ("a directory, no link", rootp + "\\dir\\f.txt", "0xC0000225"),
            ("a missing name", rootp + "\\nothere", "0xC0000225"),
            ("a share without msdfs root", "\\%s\\plain\\link" % HOST,
             "0xC0000225"),
            ("an unknown share", "\\%s\\nosuch" % HOST, "0xC0000225"),
            ("another server's name", "\\otherhost\\root\\link",
             "0xC0000225"),
            ("no leading backslash", "%s\\root" % HOST, "0xC0000225"),
            ("..", rootp + "\\dir\\..\\link", "0xC000003B"),
            ("a symlink out of the share", rootp + "\\escape",
             "0xC0000225"),
    ]:
        report("referral for %s" % desc,
               status(lambda: referral(c, ipc, req(3, name))), want)
    report("a link of a share whose hosts deny refuses the client",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\denied\\link" % HOST))), "0xC0000022")
    # a share whose path has %U, asked on IPC$: the link in the user's
    # own directory (the path his TREE_CONNECT makes), never one in a
    # directory named as the template's text
    r = ref(c, ipc, req(3, "\\%s\\prof\\alink" % HOST))
    report("a %U share's link asked on IPC$: the user's directory",
           g(r, lambda r: r["ents"][0]["addr"]), "\\%s\\target" % HOST)
    report("a %U share's link asked on IPC$: not the template's directory",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\prof\\plink" % HOST))), "0xC0000225")
    # a link in a vetoed directory: as hidden from a referral as from a
    # CREATE; the share's other links answer
    report("a link in a directory of `veto files`: no referral",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\veto\\closed\\inner" % HOST))), "0xC0000225")
    r = ref(c, ipc, req(3, "\\%s\\veto\\link" % HOST))
    report("... the share's other links answer",
           g(r, lambda r: r["ents"][0]["addr"]), "\\%s\\target" % HOST)
    # an anonymous session: a root referral, no link's
    a = SMBConnection(HOST, HOST, sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    a.login("", "")
    aipc = a.connectTree("IPC$")
    report("an anonymous session gets the root referral",
           g(ref(a, aipc, req(3, rootp)), lambda r: r["ents"][0]["addr"]),
           rootp)
    report("an anonymous session gets no link referral",
           status(lambda: referral(a, aipc, req(3, lp))), "0xC0000022")
    a.logoff()
    # hostile requests
    for desc, blob, ex, want in [
            ("one byte", b"\x03", False, "0xC000000D"),
            ("an odd name length", req(3, lp)[:-1], False, "0xC000000D"),
            ("no NUL (taken whole)", req(3, lp)[:-2], False, "SUCCESS"),
            ("a lone surrogate", struct.pack("<H", 3) + b"\\\0\x00\xd8\0\0",
             False, "0xC0000161"),
            ("a 60000-byte name", req(3, "\\" + "a" * 30000), False,
             "0xC0000033"),
            ("_EX RequestDataLength past the end",
             struct.pack("<HHI", 4, 0, 4000) + b"\0\0", True, "0xC000000D"),
            ("_EX name length past RequestData",
             struct.pack("<HHIH", 4, 0, 2, 200), True, "0xC000000D"),
    ]:
        report("hostile referral request: %s" % desc,
               status(lambda: referral(c, ipc, blob, ex=ex,
                                       maxout=65536)), want)
    report("answer longer than MaxOutputResponse: BUFFER_OVERFLOW",
           status(lambda: referral(c, ipc, req(3, lp), maxout=16)),
           "0x80000005")

    # CREATE through a link, with and without the DFS prefix
    def open_(tid, name, dfs=False):
        te = srv._Session["TreeConnectTable"][tid]
        keep = te["IsDfsShare"]
        te["IsDfsShare"] = dfs		# impacket: the flag, name as given
        norm = smb3.ntpath.normpath
        smb3.ntpath.normpath = lambda p: p	# and no ".." folded away
        try:
            fid = srv.create(tid, name, s3.FILE_READ_DATA, 7, 0,
                             s3.FILE_OPEN, 0)
            srv.close(tid, fid)
        finally:
            te["IsDfsShare"] = keep
            smb3.ntpath.normpath = norm
    report("CREATE link\\file.txt: PATH_NOT_COVERED",
           status(lambda: open_(root, "link\\file.txt")), "0xC0000257")
    report("CREATE link itself: PATH_NOT_COVERED",
           status(lambda: open_(root, "link")), "0xC0000257")
    report("CREATE dir\\f.txt (no link): opens",
           status(lambda: open_(root, "dir\\f.txt")), "SUCCESS")
    report("CREATE with DFS_OPERATIONS and \\server\\share\\ prefix",
           status(lambda: open_(root, "%s\\root\\dir\\f.txt" % HOST, True)),
           "SUCCESS")
    report("CREATE with DFS_OPERATIONS through a link",
           status(lambda: open_(root, "%s\\root\\link\\file.txt" % HOST,
                                True)), "0xC0000257")
    report("CREATE with DFS_OPERATIONS, ':' in the share name",
           status(lambda: open_(root, "%s\\ro:ot\\dir\\f.txt" % HOST,
                                True)), "0xC0000033")
    report("CREATE with DFS_OPERATIONS and .. after the prefix",
           status(lambda: open_(root, "%s\\root\\..\\x" % HOST, True)),
           "0xC000003B")
    report("plain share: DFS_OPERATIONS ignored, the prefix is a name",
           status(lambda: open_(plain, "%s\\plain\\dir\\f.txt" % HOST,
                                True)), "0xC000003A")
    report("plain share: an msdfs symlink is an ordinary (broken) one",
           status(lambda: open_(plain, "link\\file.txt")), "0xC000003A")
    report("a symlink out of the root share is still refused",
           status(lambda: open_(root, "escape\\passwd")), "0xC0000022")
    planted(c, root, ipc)
    symlinks(c, ipc, root, open_)
    dfs_flag(c, root, open_)
    set_names(c, root)
    homes(c, ipc, root, open_)
    c.logoff()


def symlinks(c, ipc, root, open_):
    """links below ordinary symlinks: followed as the lookup follows them,
    never out of the share"""
    for desc, rel, want in [
            ("a directory symlink", "dirsym\\deep", "deep"),
            ("two symlinks in a row", "dirsym2\\deep", "deep"),
            ("a relative ../ symlink", "dir\\up\\deep", "deep"),
    ]:
        r = ref(c, ipc, req(3, "\\%s\\root\\%s\\sub\\x" % (HOST, rel)))
        report("referral for a link below %s" % desc,
               g(r, lambda r: (r["consumed"], r["ents"][0]["addr"])),
               (len("\\%s\\root\\%s" % (HOST, rel)) * 2,
                "\\%s\\target" % HOST))
        report("CREATE through a link below %s: PATH_NOT_COVERED" % desc,
               status(lambda: open_(root, rel + "\\file.txt")),
               "0xC0000257")
    # RESOLVE_BENEATH: an absolute symlink, even into the share, is no way
    for desc, name, want in [
            ("a symlink out of the share", "outsym\\olink\\file.txt",
             "0xC0000022"),
            ("an absolute symlink", "abssym\\deep\\file.txt", "0xC0000022"),
            ("a symlink loop", "loop\\x", "0xC0000022"),
            ("a missing name behind a symlink", "dirsym\\nothere\\x",
             "0xC000003A"),
    ]:
        report("CREATE through %s: the lookup's own answer" % desc,
               status(lambda: open_(root, name)), want)
        report("referral through %s: NOT_FOUND" % desc,
               status(lambda: referral(c, ipc, req(
                   3, "\\%s\\root\\%s" % (HOST, name)))), "0xC0000225")


def dfs_flag(c, root, open_):
    """SMB2_FLAGS_DFS_OPERATIONS: a prefix only when it names this tree's
    share or this server; impacket's names (no prefix) are taken whole"""
    srv = c.getSMBServer()
    te = srv._Session["TreeConnectTable"][root]

    def mk(name, dfs, disp=s3.FILE_CREATE):
        te["IsDfsShare"] = dfs
        try:
            fid = srv.create(root, name, s3.FILE_READ_DATA | s3.DELETE, 7,
                             0, disp, 0)
            srv.close(root, fid)
        finally:
            te["IsDfsShare"] = True
    report("DFS_OPERATIONS, no prefix: dir\\sub\\new.txt is created there",
           status(lambda: mk("dir\\sub\\new.txt", True)), "SUCCESS")
    report("... and is dir\\sub\\new.txt, not new.txt",
           (status(lambda: mk("dir\\sub\\new.txt", False, s3.FILE_OPEN)),
            status(lambda: mk("new.txt", False, s3.FILE_OPEN))),
           ("SUCCESS", "0xC0000034"))
    for desc, name, want in [
            ("an unknown server and this share (an alias)",
             "alias.example\\ROOT\\dir\\f.txt", "SUCCESS"),
            ("the host name and another share",
             "%s\\other\\dir\\f.txt" % socket.gethostname(), "SUCCESS"),
            ("an unknown server and another share: taken whole",
             "otherhost\\other\\dir\\f.txt", "0xC000003A"),
            ("one component: taken whole", "nothere.txt", "0xC0000034"),
            ("two components: taken whole", "dir\\f.txt", "SUCCESS"),
            ("':' in a name taken whole is a stream",
             "dir\\f.txt:s", "0xC0000034"),
    ]:
        report("DFS_OPERATIONS with %s" % desc,
               status(lambda: open_(root, name, True)), want)
    status(lambda: delete(srv, root, "dir\\sub\\new.txt"))


def delete(srv, tid, name):
    te = srv._Session["TreeConnectTable"][tid]
    keep, te["IsDfsShare"] = te["IsDfsShare"], False
    try:
        fid = srv.create(tid, name, s3.DELETE, 7, 0x1000, s3.FILE_OPEN, 0)
        srv.close(tid, fid)
    finally:
        te["IsDfsShare"] = keep


def set_name(srv, tid, fid, klass, name, dfs):
    """a raw SET_INFO rename (10) or link (11), DFS_OPERATIONS if dfs"""
    n16 = name.encode("utf-16-le")
    p = srv.SMB_PACKET()
    p["Command"] = s3.SMB2_SET_INFO
    p["TreeID"] = tid
    if dfs:
        p["Flags"] = s3.SMB2_FLAGS_DFS_OPERATIONS
    r = s3.SMB2SetInfo()
    r["InfoType"] = s3.SMB2_0_INFO_FILE
    r["FileInfoClass"] = klass
    blob = struct.pack("<B7xQI", 0, 0, len(n16)) + n16
    r["BufferLength"] = len(blob)
    r["FileID"] = fid
    r["Buffer"] = blob
    p["Data"] = r
    return "0x%08X" % srv.recvSMB(srv.sendSMB(p))["Status"]


def set_names(c, root):
    """rename and hard-link targets are never DFS paths (Windows 2022,
    Samba 4.22): the flag takes no prefix off them"""
    srv = c.getSMBServer()
    te = srv._Session["TreeConnectTable"][root]
    te["IsDfsShare"] = False
    fid = srv.create(root, "dir\\ren.txt", s3.FILE_READ_DATA | s3.DELETE, 7,
                     0, s3.FILE_OVERWRITE_IF, 0)
    te["IsDfsShare"] = True
    pre = "%s\\root\\" % HOST
    for klass, what, target in [(10, "rename", "dir\\ren2.txt"),
                                (11, "hard link", "dir\\hl.txt")]:
        report("DFS_OPERATIONS %s to \\server\\share\\dir\\x: the prefix is "
               "a name" % what,
               set_name(srv, root, fid, klass, pre + target, True),
               "0xC000003A")
        report("DFS_OPERATIONS %s to dir\\x: share-relative" % what,
               set_name(srv, root, fid, klass, target, True), "0x00000000")
    srv.close(root, fid)
    report("... both names are there",
           (status(lambda: delete(srv, root, "dir\\ren2.txt")),
            status(lambda: delete(srv, root, "dir\\hl.txt"))),
           ("SUCCESS", "SUCCESS"))


def homes(c, ipc, root, open_):
    """[homes] with msdfs root: the caller's own home as a share of its
    own; another user's name is as no share at all"""
    srv = c.getSMBServer()
    hp = "\\%s\\%s" % (HOST, USER)
    r = ref(c, ipc, req(3, hp))
    report("root referral for the user's own home", summary(r),
           (len(hp) * 2, 3, 3, 1, 600, hp, [hp]))
    r = ref(c, ipc, req(3, "\\%s\\homes" % HOST))
    report("root referral for \\server\\homes",
           g(r, lambda r: (r["flags"], r["ents"][0]["type"])), (3, 1))
    hl = "\\%s\\%s\\hlink" % (HOST, USER.upper())
    r = ref(c, ipc, req(3, hl + "\\x"))
    report("link referral in the own home (another case)",
           g(r, lambda r: (r["consumed"], r["ents"][0]["addr"])),
           (len(hl) * 2, "\\%s\\target" % HOST))
    r = ref(c, root, req(3, hl + "\\x"))
    report("... asked on a tree of another share",
           g(r, lambda r: r["ents"][0]["addr"]), "\\%s\\target" % HOST)
    for desc, name in [
            ("another user's home", "\\%s\\%s" % (HOST, OTHER)),
            ("a link in another user's home",
             "\\%s\\%s\\hlink\\x" % (HOST, OTHER)),
            ("a user that does not exist", "\\%s\\nosuchuser9" % HOST),
    ]:
        report("referral for %s: NOT_FOUND (as no share)" % desc,
               status(lambda: referral(c, ipc, req(3, name))), "0xC0000225")
    h = c.connectTree(USER)
    report("the own home is a DFS share",
           srv._Session["TreeConnectTable"][h]["IsDfsShare"], True)
    report("CREATE through a link in the home: PATH_NOT_COVERED",
           status(lambda: open_(h, "hlink\\file.txt")), "0xC0000257")
    r = ref(c, h, req(3, hl + "\\x"))
    report("link referral on the home's own tree",
           g(r, lambda r: r["ents"][0]["addr"]), "\\%s\\target" % HOST)
    h2 = c.connectTree("homes")
    report("\\server\\homes: DFS_OPERATIONS with an alias and \"homes\"",
           status(lambda: open_(h2, "alias.example\\homes\\hlink\\file.txt",
                                True)), "0xC0000257")
    report("... and with an alias and the user's name",
           status(lambda: open_(h2, "alias.example\\%s\\hlink\\file.txt"
                                % USER, True)), "0xC0000257")


def homes_proxy():
    """[homes] with msdfs proxy = \\127.0.0.1\\target\\%U"""
    c = login()
    ipc = c.connectTree("IPC$")
    hp = "\\%s\\%s" % (HOST, USER)
    r = ref(c, ipc, req(3, hp))
    report("homes msdfs proxy: the own home refers to its %U target",
           g(r, lambda r: (r["consumed"], r["flags"], r["ents"][0]["type"],
                           r["ents"][0]["addr"])),
           (len(hp) * 2, 2, 0, "\\%s\\target\\%s" % (HOST, USER)))
    report("homes msdfs proxy: another user's home: NOT_FOUND",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\%s" % (HOST, OTHER)))), "0xC0000225")
    report("homes msdfs proxy: TREE_CONNECT refused (as Samba)",
           status(lambda: c.connectTree(USER)), "0xC00000CC")
    c.logoff()


def planted(c, root, ipc):
    """alice may write in the root: may she make an msdfs link over SMB
    (a symlink by FSCTL_SET_REPARSE_POINT, as the Linux client makes
    one) and send every other user's client where she likes?"""
    srv = c.getSMBServer()
    te = srv._Session["TreeConnectTable"][root]
    dfs, te["IsDfsShare"] = te["IsDfsShare"], False
    lnk = "msdfs:evilhost\\share".encode("utf-16le")
    # MS-FSCC 2.1.2.4 (flags 1: relative) and 2.1.2.6 (NFS_SPECFILE_LNK)
    forms = {"symlink": struct.pack("<LHHHHHHL", 0xA000000C, 12 + 2 * len(lnk),
                                    0, 0, len(lnk), len(lnk), len(lnk), 1)
             + lnk + lnk,
             "NFS symlink": struct.pack("<LHHQ", 0x80000014, 8 + len(lnk),
                                        0, 0x014B4E4C) + lnk}
    for form, buf in forms.items():
        name = "dir\\planted" + form[0]
        fid = srv.create(root, name, s3.FILE_READ_ATTRIBUTES |
                         s3.FILE_WRITE_ATTRIBUTES | s3.DELETE, 7,
                         s3.FILE_NON_DIRECTORY_FILE | 0x00200000,
                         s3.FILE_CREATE, 0)
        got = status(lambda: srv.ioctl(root, fid, 0x000900A4,
                                       s3.SMB2_0_IOCTL_IS_FSCTL, buf,
                                       maxOutputResponse=0))
        srv.close(root, fid)
        report("an msdfs link made over SMB (%s): refused" % form, got,
               "0xC0000022")
        report("... and no referral sends a client through it (%s)" % form,
               status(lambda: referral(c, ipc, req(
                   3, "\\%s\\root\\%s" % (HOST, name)))), "0xC0000225")
        status(lambda: c.deleteFile("root", name))
    te["IsDfsShare"] = dfs


def other(user, pw):
    """a user who may not enter dir/closed: its links are not his"""
    global USER, PW
    USER, PW = user, pw
    c = login()
    ipc = c.connectTree("IPC$")
    report("a link in a directory the user cannot search: ACCESS_DENIED",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\root\\closed\\inner\\x" % HOST))), "0xC0000022")
    report("a %U share's link of another user's directory: not his",
           status(lambda: referral(c, ipc, req(
               3, "\\%s\\prof\\alink" % HOST))), "0xC0000225")
    root = c.connectTree("root")
    plain = c.connectTree("plain")
    srv = c.getSMBServer()
    # impacket sends DFS_OPERATIONS on a DFS share with no \\server\\share
    # prefix, which Samba (4.22) and usmbd strip as one: not here
    srv._Session["TreeConnectTable"][root]["IsDfsShare"] = False

    def st(tid, name):
        return status(lambda: srv.create(tid, name, s3.FILE_READ_DATA, 7, 0,
                                         s3.FILE_OPEN, 0))
    # the same answer as for any name there: nothing tells a link is there
    got = st(root, "closed\\inner\\x")
    report("CREATE through it: what a name there gets, no PATH_NOT_COVERED",
           (got, st(plain, "closed\\inner\\x")), ("0xC0000022", "0xC0000022"))
    c.logoff()


def off():
    """host msdfs = no: no DFS capability, no referrals"""
    c = login()
    srv = c.getSMBServer()
    report("host msdfs = no: no SMB2_GLOBAL_CAP_DFS",
           bool(srv._Connection["ServerCapabilities"] & s3.SMB2_GLOBAL_CAP_DFS),
           False)
    ipc = c.connectTree("IPC$")
    report("host msdfs = no: FS_DRIVER_REQUIRED",
           status(lambda: referral(c, ipc, req(3, "\\%s\\root" % HOST))),
           "0xC000019C")
    root = c.connectTree("root")
    report("host msdfs = no: the root is no DFS share",
           srv._Session["TreeConnectTable"][root]["IsDfsShare"], False)
    c.logoff()


if __name__ == "__main__":
    mode = sys.argv[5] if len(sys.argv) > 5 else "main"
    {"main": main, "off": off, "homesproxy": homes_proxy,
     "other": lambda: other(sys.argv[6], sys.argv[7])}[mode]()
