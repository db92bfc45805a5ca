# The impacket client of t/integ/netenum.sh: alice and bob hold sessions
# and open files (bob's with two byte-range locks, alice's durable), then
# srvsvc's NetrSessionEnum, NetrFileEnum, NetrFileGetInfo,
# NetrConnectionEnum, NetrFileClose and NetrSessionDel are asked as the
# administrator alice, as the plain user bob and anonymously.
#   netenum_client.py PORT SHAREPATH DONEFILE
# Prints "ok ..." / "FAIL ..." lines (lib.sh client_checks), then
# "holding" and keeps the opens until DONEFILE exists (at most 30 s), so
# the script can ask with rpcclient meanwhile.
import os, sys, time
sys.dont_write_bytecode = True
from state_lib import PASSWORDS, create, ctx, lock, login
from impacket import smb3structs as s3
from impacket.dcerpc.v5 import srvs, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException

PORT = int(sys.argv[1])
SHAREPATH = sys.argv[2]
DONE = sys.argv[3]
ACCESS_DENIED, FILEID_NOT_FOUND = 5, 2314


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


def srvsvc(user):
    t = transport.SMBTransport("127.0.0.1", PORT, r"\srvsvc",
                               username=user or "",
                               password=PASSWORDS.get(user, ""))
    d = t.get_dce_rpc()
    d.connect()
    d.bind(srvs.MSRPC_UUID_SRVS)
    return d


def werr(fn):
    """The call's WERROR: 0, or the code of the error it returned."""
    try:
        fn()
        return 0
    except DCERPCException as e:
        return e.get_error_code() & 0xFFFF


def rows(ans, level, kind):
    return ans["InfoStruct"][kind]["Level%d" % level]["Buffer"]


def s(v):
    return str(v).rstrip("\0")


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
        check("NetrFileClose is refused (ACCESS_DENIED)",
              werr(lambda: srvs.hNetrFileClose(d, fid)) == ACCESS_DENIED)
        g = srvs.hNetrFileGetInfo(d, fid, 3)["InfoStruct"]["FileInfo3"]
        check("bob's open is still there after the refused close",
              g["fi3_id"] == fid, g)
        unused = (max(x["fi3_id"] for x in r) + 12345) & 0xFFFFFFFF
        check("NetrFileGetInfo of an unknown id: NERR_FileIdNotFound",
              werr(lambda: srvs.hNetrFileGetInfo(d, unused, 3)) ==
              FILEID_NOT_FOUND)
    check("NetrSessionDel is refused (ACCESS_DENIED)",
          werr(lambda: srvs.hNetrSessionDel(d, NULL, "bob\0")) ==
          ACCESS_DENIED)

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


NULL = srvs.NULL
a, b = holders()
as_admin()
refused("bob", "bob")
refused(None, "anonymous")
print("holding", flush=True)
end = time.time() + 30
while not os.path.exists(DONE) and time.time() < end:
    time.sleep(0.1)
a[0].closeFile(a[1], a[2])
b[0].closeFile(b[1], b[2])
