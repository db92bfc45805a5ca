# A disconnected durable open closed by an administrator
# (t/integ/netenum.sh; daemon/admreq.c, worker/statep_close.c): bob opens
# a file with a durable v2 handle (DH2Q, an RH lease) sharing only
# reading, and his connection drops without LOGOFF or CLOSE, so that no
# worker holds the open any more, only its record in the shared state.
# carol's exclusive open is refused (SHARING_VIOLATION); bob cannot
# close it (ACCESS_DENIED); alice sees it in NetrFileEnum and closes it
# with NetrFileClose (NERR_Success); carol's open then succeeds and bob's
# reconnect (DH2C) fails with OBJECT_NAME_NOT_FOUND.  The same again with
# `usmbctl close-file`.
#   netclose_durable.py PORT CONF USMBCTL
# Prints "ok ..." / "FAIL ..." lines.
import struct, subprocess, sys, time, uuid
sys.dont_write_bytecode = True
from state_lib import (Blob, create, lease_v2, login, resp_contexts,
                       status_of)
from srvsvc_lib import rows, s, srvsvc, werr
from impacket import smb3structs as s3
from impacket.dcerpc.v5 import srvs

CONF, USMBCTL = sys.argv[2], sys.argv[3]
GUID = "usmbd-durclose!!"	# bob's client, for the hold and the reconnect
RW = s3.FILE_READ_DATA | s3.FILE_WRITE_DATA
ACCESS_DENIED, FILEID_NOT_FOUND = 5, 2314


def check(desc, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + desc +
          ("" if cond else ": " + repr(detail)), flush=True)


def hold_and_drop(name):
    """bob's durable v2 open of name, then his socket closed: (fid, key,
    create GUID) for a reconnect."""
    c, t = login("bob", s3.SMB2_DIALECT_30, guid=GUID, keep=True)
    srv = c.getSMBServer()
    key, cg = uuid.uuid4().bytes, uuid.uuid4().bytes
    dh2q = (b'DH2Q', struct.pack('<LLQ', 60000, 0, 0) + cg)
    fid = srv.create(t, name, RW, s3.FILE_SHARE_READ,
                     s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0,
                     oplockLevel=0xFF,
                     createContexts=[Blob([lease_v2(key, 0x3), dh2q])])
    check("bob's %s: durable v2 handle granted" % name,
          b'DH2Q' in resp_contexts(srv))
    c.writeFile(t, fid, b"bob's sheet")
    srv._NetBIOSSession.close()	# the laptop went to sleep: no LOGOFF
    return fid, key, cg


def carol_excl(name):
    """carol reads name sharing nothing (bob's file is his: the kernel
    lets her read it, not write it), so bob's open for writing conflicts."""
    c, t = login("carol")
    st = status_of(lambda: c.closeFile(t, create(
        c, t, name, access=s3.FILE_READ_DATA, share=0, disp=s3.FILE_OPEN)))
    c.logoff()
    return st


def reconnect(name, fid, key, cg):
    c, t = login("bob", s3.SMB2_DIALECT_30, guid=GUID)
    dh2c = (b'DH2C', bytes(fid) + cg + struct.pack('<L', 0))
    st = status_of(lambda: c.getSMBServer().create(
        t, name, RW, s3.FILE_SHARE_READ, s3.FILE_NON_DIRECTORY_FILE,
        s3.FILE_OPEN, 0, oplockLevel=0xFF,
        createContexts=[Blob([lease_v2(key, 0x3), dh2c])]))
    c.logoff()
    return st


def bobs_id(d, name):
    """The FileId of bob's open of name in alice's NetrFileEnum (level 3),
    waiting up to 3 s for his worker to see the dropped connection."""
    end = time.time() + 3
    while True:
        for x in rows(srvs.hNetrFileEnum(d, srvs.NULL, srvs.NULL, 3), 3,
                      "FileInfo"):
            if s(x["fi3_username"]) == "bob" and \
                    s(x["fi3_path_name"]).endswith("\\" + name):
                return x["fi3_id"]
        if time.time() > end:
            return None
        time.sleep(0.1)


def blocked(name):
    """carol is refused while the disconnected open holds its share mode
    (the worker marks it disconnected a moment after the socket closes)."""
    end = time.time() + 3
    while True:
        st = carol_excl(name)
        if st != "OK" or time.time() > end:
            return st
        time.sleep(0.1)


def one(name, close, how):
    fid, key, cg = hold_and_drop(name)
    st = blocked(name)
    check("%s: carol's exclusive open while bob's durable open is "
          "disconnected: STATUS_SHARING_VIOLATION" % name,
          st == "STATUS_SHARING_VIOLATION", st)
    d = srvsvc("alice")
    fileid = bobs_id(d, name)
    check("%s: alice's NetrFileEnum lists bob's disconnected open" % name,
          fileid is not None)
    if fileid is None:
        return
    db = srvsvc("bob")
    rc = werr(lambda: srvs.hNetrFileClose(db, fileid))
    check("%s: NetrFileClose of it as bob: ACCESS_DENIED" % name,
          rc == ACCESS_DENIED, rc)
    db.disconnect()
    t0 = time.time()
    ok, detail = close(d, fileid)
    check("%s: %s closes bob's disconnected durable open (%.0f ms)" %
          (name, how, (time.time() - t0) * 1000), ok, detail)
    check("%s: gone from NetrFileEnum" % name, bobs_id_now(d, fileid) is None)
    st = carol_excl(name)
    check("%s: carol's exclusive open now succeeds" % name, st == "OK", st)
    st = reconnect(name, fid, key, cg)
    check("%s: bob's reconnect (DH2C): STATUS_OBJECT_NAME_NOT_FOUND" % name,
          st == "STATUS_OBJECT_NAME_NOT_FOUND", st)
    rc = werr(lambda: srvs.hNetrFileClose(d, fileid))
    check("%s: NetrFileClose of it again: NERR_FileIdNotFound" % name,
          rc == FILEID_NOT_FOUND, rc)
    d.disconnect()


def bobs_id_now(d, fileid):
    for x in rows(srvs.hNetrFileEnum(d, srvs.NULL, srvs.NULL, 3), 3,
                  "FileInfo"):
        if x["fi3_id"] == fileid:
            return fileid
    return None


def by_srvsvc(d, fileid):
    rc = werr(lambda: srvs.hNetrFileClose(d, fileid))
    return rc == 0, rc


def by_usmbctl(d, fileid):
    out = subprocess.run([USMBCTL, "-s", CONF, "close-file", str(fileid)],
                         capture_output=True, text=True)
    return (out.returncode == 0 and "1 file(s) closed" in out.stdout,
            out.stdout + out.stderr)


one("sheet1.xlsx", by_srvsvc, "alice's NetrFileClose")
one("sheet2.xlsx", by_usmbctl, "usmbctl close-file")
