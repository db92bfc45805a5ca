# Client of t/integ/mangle.sh: 8.3 short names seen through impacket.
#
#   mangle_client.py PORT DIR MODE
#
# The shares yes, ill (the default, illegal), no, veto (veto files =
# /secret*/), hide (hide unreadable) and cs (case sensitive) all serve
# DIR, so one file is seen
# through each.  MODE usmbd also checks every short name against an
# independent model of usmbd's scheme (vfs/mangle.h); MODE samba runs the
# same steps against Samba, whose short names are its own.
# Prints "ok ..." / "FAIL ..." lines.
import os
import pwd
import struct
import sys

from impacket import smb, smb3structs as s3
from impacket.smbconnection import SMBConnection

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state_lib import status_of  # noqa: E402

PORT, DIR, MODE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
RA = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES
RW = RA | s3.FILE_WRITE_DATA
FILE_ALTERNATE_NAME_INFORMATION = 21
FILE_RENAME_INFORMATION = 10
FILE_LINK_INFORMATION = 11
ILLEGAL83 = set('*?<>|:\\/"+,[];= ')


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


# -- an independent model of vfs/mangle.h (usmbd's scheme) ---------------
DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
RESERVED = {"AUX", "CON", "NUL", "PRN"} | \
    {"COM%d" % i for i in range(1, 10)} | {"LPT%d" % i for i in range(1, 10)}


def is_83(n):
    if n in (".", ".."):
        return True
    if not n or len(n.encode()) > 12 or n.count(".") > 1:
        return False
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7f or ch in ILLEGAL83
           for ch in n):
        return False
    base, _, ext = n.partition(".")
    if "." in n and (not base or len(base) > 8 or not 1 <= len(ext) <= 3):
        return False
    if "." not in n and len(n) > 8:
        return False
    return base.upper() not in RESERVED


def model(n):
    if is_83(n):
        return n
    h = 0x811c9dc5
    for ch in n:
        u = ch.upper()
        c = ord(u if len(u) == 1 else ch)
        for b in (c & 0xff, (c >> 8) & 0xff, c >> 16):
            h = ((h ^ b) * 0x01000193) & 0xffffffff

    def take(s, mx):
        out = ""
        for ch in s:
            if len(out) >= mx:
                break
            if ch in " .":
                continue
            ok = ch.isascii() and (ch.isalnum() or ch in "_-$")
            out += ch.upper() if ok else "_"
        return out
    lead = len(n) - len(n.lstrip("."))
    dot = n.rfind(".")
    dot = dot if dot >= lead else -1
    s = take(n[:dot] if dot >= 0 else n, 2).ljust(2, "_")
    d = []
    for _ in range(5):
        d.append(DIGITS[h % 36])
        h //= 36
    s += d[4] + d[3] + d[2] + d[1] + "~" + d[0]
    if dot >= 0:
        e = take(n[dot + 1:], 3)
        if e:
            s += "." + e
    return s


# -- the fixture ---------------------------------------------------------
NAMES = ["verylongfilename.txt", "abc.txt", "README", "a b.txt",
         ".profile", "x.tar.gz", "na\u00efve r\u00e9sum\u00e9.doc",
         "secret plans for 2027.txt", "rename target long name.txt",
         "recreate me please.txt", "bob private notes.txt"]


def fixture():
    uid = pwd.getpwnam("alice").pw_uid
    for n in NAMES:
        with open(os.path.join(DIR, n), "w") as fp:
            fp.write("data of %s\n" % n)
        os.chown(os.path.join(DIR, n), uid, -1)
    os.mkdir(os.path.join(DIR, "Long Directory Name"))
    p = os.path.join(DIR, "Long Directory Name", "inner file name.txt")
    with open(p, "w") as fp:
        fp.write("inner\n")
    os.chown(p, uid, -1)
    os.chown(os.path.dirname(p), uid, -1)
    os.symlink("/etc", os.path.join(DIR, "link to outside dir"))


def login(share):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login("alice", "alicepw1")
    return c, c.connectTree(share)


def alt(c, t, name):
    srv = c.getSMBServer()
    fid = srv.create(t, name, s3.FILE_READ_ATTRIBUTES, ALL, 0,
                     s3.FILE_OPEN, 0)
    try:
        b = srv.queryInfo(t, fid, infoType=s3.SMB2_0_INFO_FILE,
                          fileInfoClass=FILE_ALTERNATE_NAME_INFORMATION)
    finally:
        srv.close(t, fid)
    n = struct.unpack_from("<I", b, 0)[0]
    return b[4:4 + n].decode("utf-16-le")


def read(c, t, name):
    srv = c.getSMBServer()
    fid = srv.create(t, name, RA, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN, 0)
    try:
        return srv.read(t, fid, 0, 4096)
    finally:
        srv.close(t, fid)


def opener(c, t, name, disp=s3.FILE_OPEN, access=RA):
    def go():
        srv = c.getSMBServer()
        srv.close(t, srv.create(t, name, access, ALL, 0, disp, 0))
    return go


def find(c, t, pattern, klass):
    """[(long name, short name)] of a listing of the share's root."""
    srv = c.getSMBServer()
    fid = srv.create(t, "", RA, ALL, s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    out = []
    try:
        while True:
            try:
                res = srv.queryDirectory(t, fid, pattern,
                                         maxBufferSize=65535,
                                         informationClass=klass)
            except Exception as e:  # NO_MORE_FILES / NO_SUCH_FILE
                if out or "NO_MORE_FILES" in str(e):
                    break
                raise
            off = 0
            while True:
                if klass == s3.FILEID_BOTH_DIRECTORY_INFORMATION:
                    e = smb.SMBFindFileIdBothDirectoryInfo(
                        smb.SMB.FLAGS2_UNICODE)
                else:
                    e = smb.SMBFindFileBothDirectoryInfo(
                        smb.SMB.FLAGS2_UNICODE)
                e.fromString(res[off:])
                sn = e["ShortName"][:e["ShortNameLength"]]
                out.append((e["FileName"].decode("utf-16-le"),
                            sn.decode("utf-16-le")))
                if e["NextEntryOffset"] == 0:
                    break
                off += e["NextEntryOffset"]
    finally:
        srv.close(t, fid)
    return out


def setname(c, t, src, dst, klass, replace):
    def go():
        srv = c.getSMBServer()
        fid = srv.create(t, src, RA | s3.DELETE, ALL, 0, s3.FILE_OPEN, 0)
        try:
            d = dst.encode("utf-16-le")
            blob = struct.pack("<B7xQI", replace, 0, len(d)) + d
            srv.setInfo(t, fid, blob, s3.SMB2_0_INFO_FILE, klass)
        finally:
            srv.close(t, fid)
    return go


def valid_short(s, long_name):
    """A short name of a name that is not 8.3: an 8.3 name with '~'."""
    return is_83(s) and "~" in s and s == s.upper()


def main():
    fixture()
    cy, ty = login("yes")
    ci, ti = login("ill")
    cn, tn = login("no")

    # FileAlternateNameInformation, on every share
    alts = {}
    for n in NAMES:
        a = alt(ci, ti, n)
        alts[n] = a
        if is_83(n):
            check("alt name of 8.3 %r is itself" % n, a == n, a)
        else:
            check("alt name of %r is a short name" % n, valid_short(a, n), a)
            if MODE == "usmbd":
                check("alt name of %r is the model's" % n, a == model(n),
                      "%s != %s" % (a, model(n)))
        check("alt name of %r alike on yes and illegal" % n,
              alt(cy, ty, n) == a)
    a = alt(ci, ti, "")
    check("the share's root has no short name", a == "", a)
    a = alt(cn, tn, "verylongfilename.txt")
    check("mangled names = no: alt name is the name cut to 12",
          a == "verylongfile", a)

    # listings: ShortName with yes, none with illegal and no
    for klass, kn in ((s3.FILEID_BOTH_DIRECTORY_INFORMATION, "IdBoth"),
                      (s3.FILE_BOTH_DIRECTORY_INFORMATION, "Both")):
        got = dict(find(cy, ty, "*", klass))
        for n in NAMES:
            want = "" if is_83(n) else alts[n]
            check("%s listing (yes): ShortName of %r" % (kn, n),
                  got.get(n) == want, "%r != %r" % (got.get(n), want))
        got = dict(find(ci, ti, "*", klass))
        check("%s listing (illegal): no ShortName" % kn,
              all(v == "" for v in got.values()), got)
        got = dict(find(cn, tn, "*", klass))
        check("%s listing (no): no ShortName" % kn,
              all(v == "" for v in got.values()), got)

    s = alts["verylongfilename.txt"]
    # opens by short name, any case; not on a share without short names
    check("open by short name reads the long file",
          read(ci, ti, s) == b"data of verylongfilename.txt\n")
    check("open by short name in lower case",
          read(ci, ti, s.lower()) == b"data of verylongfilename.txt\n")
    st = status_of(opener(cn, tn, s))
    check("mangled names = no: no open by short name",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    # a directory on the way, by its short name
    sd = alt(ci, ti, "Long Directory Name")
    check("a directory's short name", valid_short(sd, "x"), sd)
    check("open DIRSHORT\\long name",
          read(ci, ti, sd + "\\inner file name.txt") == b"inner\n")
    si = alt(ci, ti, "Long Directory Name\\inner file name.txt")
    check("open DIRSHORT\\FILESHORT",
          read(ci, ti, sd + "\\" + si) == b"inner\n")
    # a pattern matches short names too (Windows, Samba)
    pat = s[:3] + "*"
    got = [n for n, _ in find(ci, ti, pat, s3.FILE_BOTH_DIRECTORY_INFORMATION)]
    check("pattern %s matches verylongfilename.txt by its short name" % pat,
          "verylongfilename.txt" in got, got)
    got = [n for n, _ in find(ci, ti, s, s3.FILE_BOTH_DIRECTORY_INFORMATION)]
    check("the short name as a pattern finds the long name",
          got == ["verylongfilename.txt"], got)

    # rename and link targets by short name name the long file
    tgt = alts["rename target long name.txt"]
    with open(os.path.join(DIR, "rename source.txt"), "w") as fp:
        fp.write("renamed\n")
    os.chown(os.path.join(DIR, "rename source.txt"),
             pwd.getpwnam("alice").pw_uid, -1)
    st = status_of(setname(ci, ti, "rename source.txt", tgt,
                           FILE_RENAME_INFORMATION, 0))
    check("rename onto a short name: collision",
          st == "STATUS_OBJECT_NAME_COLLISION", st)
    st = status_of(setname(ci, ti, "rename source.txt", tgt,
                           FILE_LINK_INFORMATION, 0))
    check("hard link onto a short name: collision",
          st == "STATUS_OBJECT_NAME_COLLISION", st)
    st = status_of(setname(ci, ti, "rename source.txt", tgt,
                           FILE_RENAME_INFORMATION, 1))
    on_disk = sorted(os.listdir(DIR))
    check("rename with replace onto a short name replaces the long file",
          st == "OK" and tgt not in on_disk and
          open(os.path.join(DIR, "rename target long name.txt")).read() ==
          "renamed\n", "%s %s" % (st, on_disk))

    # deleted, then created by its short name: the long name comes back
    r = alts["recreate me please.txt"]
    os.unlink(os.path.join(DIR, "recreate me please.txt"))
    st = status_of(opener(ci, ti, r, s3.FILE_CREATE, RW))
    check("created by its short name after a delete: the long name",
          st == "OK" and os.path.exists(
              os.path.join(DIR, "recreate me please.txt")) and
          not os.path.exists(os.path.join(DIR, r)),
          "%s %s" % (st, sorted(os.listdir(DIR))))
    # a name of the shape nobody was given is taken as typed
    st = status_of(opener(ci, ti, "ZZ1234~5.TXT", s3.FILE_CREATE, RW))
    check("a short-shaped name nobody has is created as typed",
          st == "OK" and os.path.exists(os.path.join(DIR, "ZZ1234~5.TXT")),
          st)

    # veto files: not reachable by the short name either
    cv, tv = login("veto")
    sv = alts["secret plans for 2027.txt"]
    st = status_of(opener(cv, tv, "secret plans for 2027.txt"))
    check("vetoed by its long name: not found",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    st = status_of(opener(cv, tv, sv))
    check("vetoed by its short name %s: not found" % sv,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    st = status_of(lambda: find(cv, tv, sv,
                                s3.FILE_BOTH_DIRECTORY_INFORMATION))
    check("vetoed: its short name as a pattern finds nothing",
          st == "STATUS_NO_SUCH_FILE", st)
    with open(os.path.join(DIR, "rename source 2.txt"), "w") as fp:
        fp.write("renamed\n")
    os.chown(os.path.join(DIR, "rename source 2.txt"),
             pwd.getpwnam("alice").pw_uid, -1)
    st = status_of(setname(cv, tv, "rename source 2.txt", sv,
                           FILE_RENAME_INFORMATION, 1))
    # the name is free as far as the share shows: taken as typed
    secret = open(os.path.join(DIR, "secret plans for 2027.txt")).read()
    check("vetoed: a rename onto its short name leaves it untouched",
          secret == "data of secret plans for 2027.txt\n", "%s %r" %
          (st, secret))

    # hide unreadable: bob's private file is not found by its short name
    sb = alts["bob private notes.txt"]
    p = os.path.join(DIR, "bob private notes.txt")
    os.chown(p, pwd.getpwnam("bob").pw_uid, -1)
    os.chmod(p, 0o600)
    ch, th = login("hide")
    got = [n for n, _ in find(ch, th, "*", s3.FILE_BOTH_DIRECTORY_INFORMATION)]
    check("hide unreadable: bob's file not listed",
          "bob private notes.txt" not in got, got)
    st = status_of(opener(ch, th, sb, access=s3.FILE_READ_ATTRIBUTES))
    check("hide unreadable: bob's file not found by its short name",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)

    # case sensitive = yes: the short name as given out, not another case
    cc, tc = login("cs")
    check("case sensitive: open by the short name as given",
          read(cc, tc, s) == b"data of verylongfilename.txt\n")
    st = status_of(opener(cc, tc, s.lower()))
    check("case sensitive: not by another case of it",
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    # hidden by attribute only (a dot file): reachable by its short name
    check("a dot file (hidden attribute) opens by its short name",
          read(cc, tc, alts[".profile"]) == b"data of .profile\n")

    # a link out of the share: the short name gets what the long one gets
    if MODE == "usmbd":
        sl = model("link to outside dir")
        a = status_of(opener(ci, ti, "link to outside dir"))
        b = status_of(opener(ci, ti, sl))
        check("a link out of the share: %s by its short name as by its "
              "long name (%s)" % (b, a), a == b and a != "OK")


main()
