# The impacket client of t/integ/netenum.sh: alice and bob hold sessions
# and open files (bob's with two byte-range locks, alice's durable), then
# srvsvc's NetrSessionEnum, NetrFileEnum, NetrFileGetInfo,
# NetrConnectionEnum, NetrFileClose and NetrSessionDel are asked as the
# administrator alice, as the plain user bob and anonymously.
#   netenum_client.py PORT SHAREPATH DONEFILE CONF USMBCTL
# Prints "ok ..." / "FAIL ..." lines (lib.sh client_checks), then "ids
# ALICE BOB" (the FileIds of their opens) and "holding", and keeps the
# opens until DONEFILE exists (at most 30 s), so the script can ask with
# rpcclient and play a compromised worker meanwhile.  Then the closes:
# bob cannot close alice's open; alice closes bob's (NetrFileClose) and
# ends his session (NetrSessionDel), usmbctl close-file closes alice's
# own, carol then opens bob's file exclusively.
import os, struct, subprocess, sys, time
sys.dont_write_bytecode = True
from state_lib import (PASSWORDS, create, ctx, lock, login, status_of)
from srvsvc_lib import rows, s, srvsvc, werr
from impacket.smbconnection import SMBConnection
from impacket import smb3structs as s3
from impacket.dcerpc.v5 import srvs

PORT = int(sys.argv[1])
SHAREPATH = sys.argv[2]
DONE = sys.argv[3]
CONF, USMBCTL = sys.argv[4], sys.argv[5]
ACCESS_DENIED, FILEID_NOT_FOUND, CLIENT_NOT_FOUND = 5, 2314, 2312


def check(desc, cond, detail=""):
    if not cond:
        detail = dump(detail)
    print(("ok   " if cond else "FAIL ") + desc +
          ("" if cond else ": " + repr(detail)), flush=True)


def dump(x):
    """An NDR structure (or a list of them) as plain values, for a FAIL."""
    if isinstance(x, (list, tuple)) or type(x).__name__ == "NDRUniConformantArray":
        return [dump(e) for e in x]
    if hasattr(x, "fields"):
        return {k: (x[k] if isinstance(x[k], int) else s(x[k]))
                for k in x.fields}
    return x


def holders():
    b, bt = login("bob")
    fb = create(b, bt, "bob.txt")
    b.writeFile(bt, fb, b"x" * 64)
    lock(b, bt, fb, 0, 10, 0x2 | 0x10)
    lock(b, bt, fb, 20, 10, 0x1 | 0x10)
    a, at = login("alice")
    # a durable (v1) open with a batch oplock: its record names the file
    fa = a.getSMBServer().create(
        at, "alice.txt", s3.FILE_READ_DATA, s3.FILE_SHARE_READ,
        s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0,
        oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
        createContexts=[ctx(b"DHnQ", b"\0" * 16)])
    return (a, at, fa), (b, bt, fb)


def as_admin():
    d = srvsvc("alice")
    for level in (0, 1, 2, 10, 502):
        ans = srvs.hNetrSessionEnum(d, NULL, NULL, level)
        r = rows(ans, level, "SessionInfo")
        names = sorted(s(x["sesi%d_cname" % level]) for x in r)
        ok = len(r) >= 3 and all(n == "127.0.0.1" for n in names)
        if level != 0:
            users = [s(x["sesi%d_username" % level]) for x in r]
            ok = ok and "bob" in users and "alice" in users
        if level in (1, 2, 502):
            bob = [x for x in r if s(x["sesi%d_username" % level]) == "bob"]
            ok = ok and any(x["sesi%d_num_opens" % level] == 1 for x in bob)
            ok = ok and all(x["sesi%d_user_flags" % level] == 0 for x in r)
        if level != 0:
            ok = ok and all(0 <= x["sesi%d_time" % level] < 600 for x in r)
        check("NetrSessionEnum level %d as admin: alice's and bob's sessions "
              "from 127.0.0.1%s" % (level, ", bob holds one open"
                                    if level in (1, 2, 502) else ""),
              ok, r)
    ans = srvs.hNetrSessionEnum(d, NULL, "bob\0", 10)
    r = rows(ans, 10, "SessionInfo")
    check("NetrSessionEnum UserName filter: bob's sessions only",
          len(r) >= 1 and all(s(x["sesi10_username"]) == "bob" for x in r), r)
    ans = srvs.hNetrSessionEnum(d, "\\\\10.9.9.9\0", NULL, 10)
    check("NetrSessionEnum ClientName filter: another address has none",
          len(rows(ans, 10, "SessionInfo")) == 0 and ans["TotalEntries"] == 0,
          ans["TotalEntries"])

    ans = srvs.hNetrFileEnum(d, NULL, NULL, 3)
    r = rows(ans, 3, "FileInfo")
    bobf = [x for x in r if s(x["fi3_username"]) == "bob"]
    alif = [x for x in r if s(x["fi3_username"]) == "alice"]
    want = "C:" + SHAREPATH.replace("/", "\\") + "\\alice.txt"
    check("NetrFileEnum level 3: bob's open, read+write, 2 locks",
          len(bobf) == 1 and bobf[0]["fi3_permissions"] == 3 and
          bobf[0]["fi3_num_locks"] == 2, r)
    check("NetrFileEnum level 3: alice's durable open, read, its Windows path",
          len(alif) == 1 and alif[0]["fi3_permissions"] == 1 and
          alif[0]["fi3_num_locks"] == 0 and
          s(alif[0]["fi3_path_name"]) == want, (want, r))
    ans2 = srvs.hNetrFileEnum(d, NULL, NULL, 2)
    ids2 = sorted(x["fi2_id"] for x in rows(ans2, 2, "FileInfo"))
    check("NetrFileEnum level 2: the same ids as level 3",
          ids2 == sorted(x["fi3_id"] for x in r) and
          ans2["TotalEntries"] == len(ids2), (ids2, r))
    ans = srvs.hNetrFileEnum(d, NULL, "alice\0", 3)
    check("NetrFileEnum UserName filter: alice's open only",
          [s(x["fi3_username"]) for x in rows(ans, 3, "FileInfo")] ==
          ["alice"], rows(ans, 3, "FileInfo"))
    if bobf:
        fid = bobf[0]["fi3_id"]
        g = srvs.hNetrFileGetInfo(d, fid, 3)["InfoStruct"]["FileInfo3"]
        check("NetrFileGetInfo level 3 of bob's open",
              g["fi3_id"] == fid and s(g["fi3_username"]) == "bob" and
              g["fi3_num_locks"] == 2 and g["fi3_permissions"] == 3, g)
        g = srvs.hNetrFileGetInfo(d, fid, 2)["InfoStruct"]["FileInfo2"]
        check("NetrFileGetInfo level 2 of bob's open", g["fi2_id"] == fid, g)
        unused = (max(x["fi3_id"] for x in r) + 12345) & 0xFFFFFFFF
        check("NetrFileGetInfo of an unknown id: NERR_FileIdNotFound",
              werr(lambda: srvs.hNetrFileGetInfo(d, unused, 3)) ==
              FILEID_NOT_FOUND)

    ans = srvs.hNetrConnectionEnum(d, "share\0", 1)
    r = rows(ans, 1, "ConnectInfo")
    users = sorted(s(x["coni1_username"]) for x in r)
    check("NetrConnectionEnum level 1 of [share]: alice's and bob's trees",
          "alice" in users and "bob" in users and
          all(s(x["coni1_netname"]) == "share" for x in r), r)
    ans0 = srvs.hNetrConnectionEnum(d, "share\0", 0)
    check("NetrConnectionEnum level 0: the same ids",
          sorted(x["coni0_id"] for x in rows(ans0, 0, "ConnectInfo")) ==
          sorted(x["coni1_id"] for x in r), ans0)
    d.disconnect()


def rename(c, t, fid, to):
    """SET_INFO FileRenameInformation on the handle (MS-FSCC 2.4.42.2)."""
    name = to.encode("utf-16le")
    blob = struct.pack("<B7sQL", 0, b"\0" * 7, 0, len(name)) + name
    c.getSMBServer().setInfo(t, fid, inputBlob=blob,
                             infoType=s3.SMB2_0_INFO_FILE,
                             fileInfoClass=s3.SMB2_FILE_RENAME_INFO)


def paths_of(d, user):
    """{path: FileId} of user's opens, as NetrFileEnum level 3 lists them."""
    r = rows(srvs.hNetrFileEnum(d, NULL, NULL, 3), 3, "FileInfo")
    return {s(x["fi3_path_name"]): x["fi3_id"] for x in r
            if s(x["fi3_username"]) == user}


def plain_paths():
    """bob's plain open (no oplock, no durable handle) of dir/file.txt:
    listed with its path, renamed, closed (shm/oname.c)."""
    d = srvsvc("alice")
    c, t = login("bob")
    try:
        c.createDirectory("share", "dir")
    except Exception:
        pass
    f = create(c, t, "dir\\file.txt", access=0x00010003)  # + DELETE
    root = "C:" + SHAREPATH.replace("/", "\\")
    want = root + "\\dir\\file.txt"
    got = paths_of(d, "bob")
    check("NetrFileEnum level 3: bob's plain open of dir\\file.txt with "
          "its path", want in got, (want, got))
    if want in got:
        g = srvs.hNetrFileGetInfo(d, got[want], 3)["InfoStruct"]["FileInfo3"]
        check("NetrFileGetInfo level 3 of it: the same path",
              s(g["fi3_path_name"]) == want, g)
    rename(c, t, f, "dir\\renamed.txt")
    got = paths_of(d, "bob")
    check("after bob renames it through his handle: the new path",
          root + "\\dir\\renamed.txt" in got and want not in got, got)
    c.getSMBServer().close(t, f)
    got = paths_of(d, "bob")
    check("after his close: gone from the list",
          not any(p.startswith(root + "\\dir\\") for p in got), got)
    c.logoff()
    d.disconnect()


def carol_holds():
    """carol's plain open of carol.txt, held for rpcclient."""
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT)
    c.login("carol", "carolpw1")
    t = c.connectTree("share")
    return c, t, create(c, t, "carol.txt")


def refused(user, label):
    d = srvsvc(user)
    calls = [
        ("NetrSessionEnum 10", lambda: srvs.hNetrSessionEnum(d, NULL, NULL, 10)),
        ("NetrSessionEnum 502",
         lambda: srvs.hNetrSessionEnum(d, NULL, NULL, 502)),
        ("NetrFileEnum 3", lambda: srvs.hNetrFileEnum(d, NULL, NULL, 3)),
        ("NetrFileEnum 2", lambda: srvs.hNetrFileEnum(d, NULL, NULL, 2)),
        ("NetrFileGetInfo 3", lambda: srvs.hNetrFileGetInfo(d, 1, 3)),
        ("NetrConnectionEnum 1",
         lambda: srvs.hNetrConnectionEnum(d, "share\0", 1)),
        ("NetrFileClose", lambda: srvs.hNetrFileClose(d, 1)),
        ("NetrSessionDel", lambda: srvs.hNetrSessionDel(d, NULL, "alice\0")),
    ]
    for name, fn in calls:
        check("%s as %s: ACCESS_DENIED" % (name, label),
              werr(fn) == ACCESS_DENIED)
    # the refusal carries no entry (impacket raises on the status; the
    # raw answer is checked too)
    req = srvs.NetrSessionEnum()
    req["ServerName"] = NULL
    req["ClientName"] = NULL
    req["UserName"] = NULL
    req["InfoStruct"]["Level"] = 10
    req["InfoStruct"]["SessionInfo"]["tag"] = 10
    req["InfoStruct"]["SessionInfo"]["Level10"]["Buffer"] = NULL
    req["PreferedMaximumLength"] = 0xFFFFFFFF
    req["ResumeHandle"] = NULL
    raw = d.request(req, checkError=False)
    check("the refused NetrSessionEnum as %s carries no entry" % label,
          raw["TotalEntries"] == 0 and
          raw["InfoStruct"]["SessionInfo"]["Level10"]["EntriesRead"] == 0 and
          raw["ErrorCode"] == ACCESS_DENIED, raw["ErrorCode"])
    d.disconnect()


def file_ids(d):
    r = rows(srvs.hNetrFileEnum(d, NULL, NULL, 3), 3, "FileInfo")
    return {s(x["fi3_username"]): x["fi3_id"] for x in r}


def all_file_ids(d):
    r = rows(srvs.hNetrFileEnum(d, NULL, NULL, 3), 3, "FileInfo")
    return [(s(x["fi3_username"]), x["fi3_id"]) for x in r]


def carol_exclusive():
    """carol opens bob.txt for reading, sharing nothing: NTSTATUS name."""
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT)
    c.login("carol", "carolpw1")
    t = c.connectTree("share")
    st = status_of(lambda: c.getSMBServer().create(
        t, "bob.txt", 0x1, 0, 0x40, 1, 0))
    c.close()
    return st


def closes(a, b):
    (ac, at, fa), (bc, bt, fb) = a, b
    d = srvsvc("alice")
    ids = file_ids(d)
    db = srvsvc("bob")
    check("NetrFileClose of alice's open as bob: ACCESS_DENIED",
          werr(lambda: srvs.hNetrFileClose(db, ids["alice"])) ==
          ACCESS_DENIED)
    check("NetrSessionDel of alice as bob: ACCESS_DENIED",
          werr(lambda: srvs.hNetrSessionDel(db, NULL, "alice\0")) ==
          ACCESS_DENIED)
    db.disconnect()
    check("alice's open is still there and readable after bob's refused "
          "close and the forged request",
          file_ids(d).get("alice") == ids["alice"] and
          status_of(lambda: ac.readFile(at, fa, 0, 1)) == "OK", file_ids(d))
    unused = (max(ids.values()) + 12345) & 0xFFFFFFFF
    check("NetrFileClose of an unknown id: NERR_FileIdNotFound",
          werr(lambda: srvs.hNetrFileClose(d, unused)) == FILEID_NOT_FOUND)
    check("before the close carol cannot open bob's file exclusively",
          carol_exclusive() == "STATUS_SHARING_VIOLATION")
    t0 = time.time()
    rc = werr(lambda: srvs.hNetrFileClose(d, ids["bob"]))
    check("NetrFileClose of bob's open as alice: NERR_Success (%.0f ms)" %
          ((time.time() - t0) * 1000), rc == 0, rc)
    check("bob's next READ on the closed handle: STATUS_FILE_CLOSED",
          status_of(lambda: bc.readFile(bt, fb, 0, 1)) ==
          "STATUS_FILE_CLOSED")
    check("the open is gone from NetrFileEnum", "bob" not in file_ids(d),
          file_ids(d))
    check("carol now opens bob's file exclusively (share mode and locks "
          "released)", carol_exclusive() == "OK")
    check("bob's session still works (a new open)",
          status_of(lambda: create(bc, bt, "bob2.txt")) == "OK")
    # alice's own open, closed by her worker inside its wait for the master
    fa2 = create(ac, at, "alice2.txt")
    mine = [i for u, i in all_file_ids(d) if u == "alice" and
            i != ids["alice"]]
    rc = werr(lambda: srvs.hNetrFileClose(d, mine[0])) if mine else -1
    check("NetrFileClose of alice's own second open as alice: NERR_Success",
          rc == 0 and status_of(lambda: ac.readFile(at, fa2, 0, 1)) ==
          "STATUS_FILE_CLOSED", (mine, rc))
    # usmbctl close-file: alice's own durable open, by the same id
    out = subprocess.run([USMBCTL, "-s", CONF, "close-file",
                          str(ids["alice"])], capture_output=True, text=True)
    check("usmbctl close-file %d: 1 file closed" % ids["alice"],
          out.returncode == 0 and "1 file(s) closed" in out.stdout,
          out.stdout + out.stderr)
    check("alice's next READ on it: STATUS_FILE_CLOSED",
          status_of(lambda: ac.readFile(at, fa, 0, 1)) == "STATUS_FILE_CLOSED")
    out = subprocess.run([USMBCTL, "-s", CONF, "close-file", "0x7fff1234"],
                         capture_output=True, text=True)
    check("usmbctl close-file of an unknown id fails (exit 1)",
          out.returncode == 1 and "no open file" in out.stderr + out.stdout,
          (out.returncode, out.stdout + out.stderr))
    check("NetrSessionDel of a user with no session: "
          "NERR_ClientNameNotFound",
          werr(lambda: srvs.hNetrSessionDel(d, NULL, "nosuchuser\0")) ==
          CLIENT_NOT_FOUND)
    check("NetrSessionDel of bob's sessions as alice: NERR_Success",
          werr(lambda: srvs.hNetrSessionDel(d, NULL, "bob\0")) == 0)
    try:
        st = status_of(lambda: create(bc, bt, "bob3.txt"))
    except Exception:
        st = "DISCONNECTED"
    check("bob's next request: his session is gone (%s)" % st,
          st in ("STATUS_USER_SESSION_DELETED", "DISCONNECTED"), st)
    # alice ends her own sessions, the one asking among them: her
    # worker drops their connections (worker/ctlmsg.c), this call's too
    try:
        rc = werr(lambda: srvs.hNetrSessionDel(d, NULL, "alice\0"))
    except Exception:
        rc = "DISCONNECTED"
    try:
        st = status_of(lambda: ac.readFile(at, fa, 0, 1))
    except Exception:
        st = "DISCONNECTED"
    d2 = srvsvc("alice")
    check("NetrSessionDel of alice's own sessions as alice (%s): her "
          "other connection is gone (%s), she logs in again" % (rc, st),
          st in ("STATUS_USER_SESSION_DELETED", "DISCONNECTED") and
          "alice" not in [u for u, _ in all_file_ids(d2)], st)
    d2.disconnect()


NULL = srvs.NULL
a, b = holders()
as_admin()
refused("bob", "bob")
refused(None, "anonymous")
plain_paths()
held_by_carol = carol_holds()
d0 = srvsvc("alice")
ids0 = file_ids(d0)
d0.disconnect()
print("ids %d %d" % (ids0.get("alice", 0), ids0.get("bob", 0)), flush=True)
print("holding", flush=True)
end = time.time() + 30
while not os.path.exists(DONE) and time.time() < end:
    time.sleep(0.1)
closes(a, b)
