# Disconnected durable and resilient opens closed by an administrator
# (t/integ/netenum.sh; daemon/admreq.c, worker/statep_close.c).  bob's
# connection drops without LOGOFF or CLOSE, so that no worker holds his
# open any more, only its record in the shared state:
# - sheet1.xlsx: a durable v2 handle (DH2Q, an RH lease): bob cannot
#   close it (ACCESS_DENIED); alice sees it in NetrFileEnum and closes it
#   with NetrFileClose (NERR_Success); it is gone from the list and bob's
#   reconnect (DH2C) fails with OBJECT_NAME_NOT_FOUND.  No other user is
#   blocked by it here: an open that would break its caching purges it
#   (worker/durable.c durable_purge_disconnected, as MS-SMB2 and Samba),
#   and locks are kept only under a W lease, which any other open breaks.
# - sheet2.xlsx: a resilient open (FSCTL_LMR_REQUEST_RESILIENCY, no
#   oplock) sharing only reading: carol's exclusive open gets
#   SHARING_VIOLATION; bob cannot close it; `usmbctl close-file` does;
#   carol's open then succeeds and bob's DHnC fails with
#   OBJECT_NAME_NOT_FOUND.
#   netclose_durable.py PORT CONF USMBCTL
# Prints "ok ..." / "FAIL ..." lines.
import json, struct, subprocess, sys, time, uuid
sys.dont_write_bytecode = True
from state_lib import (Blob, create, lease_v2, login, resp_contexts,
                       status_of)
from srvsvc_lib import rows, s, srvsvc, werr
from impacket import smb3structs as s3
from impacket.dcerpc.v5 import srvs

CONF, USMBCTL = sys.argv[2], sys.argv[3]
GUID = "usmbd-durclose!!"	# bob's client, for the hold and the reconnect
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE
ACCESS_DENIED, FILEID_NOT_FOUND = 5, 2314
FSCTL_LMR_REQUEST_RESILIENCY = 0x001401D4


def check(desc, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + desc +
          ("" if cond else ": " + repr(detail)), flush=True)


def drop(c):
    """The laptop went to sleep: the socket closes, no CLOSE, no LOGOFF."""
    c.getSMBServer()._NetBIOSSession.close()


def hold_durable(name):
    """bob's durable v2 open of name, dropped: what a DH2C needs."""
    c, t = login("bob", s3.SMB2_DIALECT_30, guid=GUID, keep=True)
    srv = c.getSMBServer()
    key, cg = uuid.uuid4().bytes, uuid.uuid4().bytes
    dh2q = (b'DH2Q', struct.pack('<LLQ', 60000, 0, 0) + cg)
    fid = srv.create(t, name, RW, ALL, s3.FILE_NON_DIRECTORY_FILE,
                     s3.FILE_OPEN_IF, 0, oplockLevel=0xFF,
                     createContexts=[Blob([lease_v2(key, 0x3), dh2q])])
    check("bob's %s: durable v2 handle granted" % name,
          b'DH2Q' in resp_contexts(srv))
    c.writeFile(t, fid, b"bob's sheet")
    drop(c)
    return (b'DH2C', bytes(fid) + cg + struct.pack('<L', 0)), key


def hold_resilient(name):
    """bob's resilient open of name sharing only reading, dropped."""
    c, t = login("bob", s3.SMB2_DIALECT_30, guid=GUID)
    fid = create(c, t, name, share=s3.FILE_SHARE_READ)
    c.writeFile(t, fid, b"bob's sheet")
    st = status_of(lambda: c.getSMBServer().ioctl(
        t, fid, FSCTL_LMR_REQUEST_RESILIENCY, flags=1,
        inputBlob=struct.pack('<LL', 60000, 0), maxInputResponse=0,
        maxOutputResponse=0))
    check("bob's %s: resilient" % name, st == "OK", st)
    drop(c)
    return (b'DHnC', bytes(fid)), None


def carol_excl(name):
    """carol reads name sharing nothing (bob's file is his: the kernel
    lets her read it, not write it), so bob's open for writing conflicts."""
    c, t = login("carol")
    st = status_of(lambda: c.closeFile(t, create(
        c, t, name, access=s3.FILE_READ_DATA, share=0, disp=s3.FILE_OPEN)))
    c.logoff()
    return st


def reconnect(name, dh, key):
    c, t = login("bob", s3.SMB2_DIALECT_30, guid=GUID)
    blob = Blob([lease_v2(key, 0x3), dh]) if key else Blob([dh])
    st = status_of(lambda: c.getSMBServer().create(
        t, name, RW, ALL if key else s3.FILE_SHARE_READ,
        s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
        oplockLevel=0xFF if key else 0, createContexts=[blob]))
    c.logoff()
    return st


def ids(d, name):
    """FileIds of the opens of name in alice's NetrFileEnum (level 3)."""
    return [x["fi3_id"] for x in rows(srvs.hNetrFileEnum(
        d, srvs.NULL, srvs.NULL, 3), 3, "FileInfo")
        if s(x["fi3_path_name"]).endswith("\\" + name)]


def listing(d):
    return [(s(x["fi3_username"]), s(x["fi3_path_name"]), x["fi3_id"])
            for x in rows(srvs.hNetrFileEnum(d, srvs.NULL, srvs.NULL, 3), 3,
                          "FileInfo")]


def state_of(name):
    """The open's state in `usmbctl status --json` (the state process's
    view): "disconnected" once bob's worker let go of it."""
    out = subprocess.run([USMBCTL, "-s", CONF, "status", "--json"],
                         capture_output=True, text=True)
    try:
        opens = json.loads(out.stdout).get("opens", [])
    except ValueError:
        return None
    st = [o.get("state") for o in opens
          if str(o.get("path", "")).endswith(name)]
    return st[0] if len(st) == 1 else st


def until(fn, ok, secs=3):
    """fn() until ok(result) or secs have passed: bob's worker marks the
    open disconnected a moment after his socket closes."""
    end = time.time() + secs
    while True:
        r = fn()
        if ok(r) or time.time() > end:
            return r
        time.sleep(0.1)


def one(name, hold, blocked, want, close, how):
    dh, key = hold(name)
    st = until(lambda: state_of(name), lambda r: r == "disconnected")
    check("%s: bob's open is disconnected (usmbctl status)" % name,
          st == "disconnected", st)
    if blocked:
        st = until(lambda: blocked(name), lambda r: r == want)
        check("%s: carol, while bob's open is disconnected: %s" %
              (name, want), st == want, st)
    d = srvsvc("alice")
    found = until(lambda: ids(d, name), lambda r: len(r) == 1)
    check("%s: alice's NetrFileEnum lists bob's disconnected open" % name,
          len(found) == 1, listing(d))
    if len(found) != 1:
        return
    db = srvsvc("bob")
    rc = werr(lambda: srvs.hNetrFileClose(db, found[0]))
    check("%s: NetrFileClose of it as bob: ACCESS_DENIED" % name,
          rc == ACCESS_DENIED, rc)
    db.disconnect()
    if blocked:
        st = blocked(name)
        check("%s: still held after bob's refused close (%s)" % (name, st),
              st == want, st)
    else:
        check("%s: still listed after bob's refused close" % name,
              ids(d, name) == found, listing(d))
    t0 = time.time()
    ok, detail = close(d, found[0])
    check("%s: %s closes bob's disconnected open (%.0f ms)" %
          (name, how, (time.time() - t0) * 1000), ok, detail)
    check("%s: gone from NetrFileEnum" % name, ids(d, name) == [],
          ids(d, name))
    if blocked:
        st = blocked(name)
        check("%s: carol now gets OK" % name, st == "OK", st)
    st = reconnect(name, dh, key)
    check("%s: bob's reconnect (%s): STATUS_OBJECT_NAME_NOT_FOUND" %
          (name, dh[0].decode()), st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    rc = werr(lambda: srvs.hNetrFileClose(d, found[0]))
    check("%s: NetrFileClose of it again: NERR_FileIdNotFound" % name,
          rc == FILEID_NOT_FOUND, rc)
    d.disconnect()


def by_srvsvc(d, fileid):
    rc = werr(lambda: srvs.hNetrFileClose(d, fileid))
    return rc == 0, rc


def by_usmbctl(d, fileid):
    out = subprocess.run([USMBCTL, "-s", CONF, "close-file", str(fileid)],
                         capture_output=True, text=True)
    return (out.returncode == 0 and "1 file(s) closed" in out.stdout,
            out.stdout + out.stderr)


one("sheet1.xlsx", hold_durable, None, None, by_srvsvc, "alice's NetrFileClose")
one("sheet2.xlsx", hold_resilient, carol_excl, "STATUS_SHARING_VIOLATION",
    by_usmbctl, "usmbctl close-file")
