#!/usr/bin/python3
# A client for t/integ/ops.sh that holds a session, a tree and an open file
# while the script acts on the server, then reports what its next requests
# see.  Usage:
#
#   ops_client.py PORT USER PASSWORD SHARE DIR TAG [lock|waitlock|durable]
#   ops_client.py PORT USER PASSWORD SHARE DIR TAG reconnect FILEID
#
# It logs on, connects SHARE, opens (creates) "held-TAG.txt" ("held.txt" for
# lock/waitlock), optionally takes a byte-range lock (lock: bytes 0-99
# exclusive; waitlock: a blocking lock on the same range, which waits), and
# writes DIR/ready.TAG with its local port.  Then it waits (at most 30 s)
# for DIR/go.TAG and prints one line per probe:
#   query: STATUS   QUERY_INFO on the open file
#   list:  STATUS   a directory listing of the held tree
#   tree:  STATUS   a TREE_CONNECT to SHARE on the same session
# STATUS is OK or the NT status name (or DISCONNECTED).
#
# durable: "held-TAG.txt" (the caller writes its content) is opened with a
# batch oplock and a durable handle request (DHnQ), and "plain-TAG.txt"
# without; the ready file gets a second line, the durable open's FileId in
# hex.  (No WRITE here: impacket's WRITE without multi-credit sends a
# CreditCharge of 0 and then miscounts its message ids.)  reconnect: a new connection and
# session reclaim that FileId with DHnC (MS-SMB2 2.2.13.2.4) and read it;
# prints "reconnect: STATUS" and "read: DATA" at once (no ready/go).
import os
import sys
import time

from impacket import smb3, smb3structs as s3
from impacket.nt_errors import ERROR_MESSAGES
from impacket.smbconnection import SMBConnection, SessionError


def status_name(code):
    return ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


def probe(what, fn):
    try:
        fn()
        print("%s: OK" % what, flush=True)
    except SessionError as e:
        print("%s: %s" % (what, status_name(e.getErrorCode())), flush=True)
    except smb3.SessionError as e:
        print("%s: %s" % (what, status_name(e.get_error_code())), flush=True)
    except Exception as e:  # socket errors: the server dropped us
        print("%s: DISCONNECTED (%s)" % (what, type(e).__name__), flush=True)


def lock(smb, tid, fid, flags):
    # impacket's SMB3.lock joins str()s of the elements (broken on
    # Python 3): build the request here.
    el = s3.SMB2_LOCK_ELEMENT()
    el["Offset"] = 0
    el["Length"] = 100
    el["Flags"] = flags
    packet = smb.SMB_PACKET()
    packet["Command"] = s3.SMB2_LOCK
    packet["TreeID"] = tid
    req = s3.SMB2Lock()
    req["FileID"] = fid
    req["LockCount"] = 1
    req["LockSequence"] = 0
    req["Locks"] = el.getData()
    packet["Data"] = req
    ans = smb.recvSMB(smb.sendSMB(packet))
    ans.isValidAnswer(0)


def create_ctx(name, data):
    # MS-SMB2 2.2.13.2: name at 16, data 8-aligned after it.
    ctx = s3.SMB2CreateContext()
    ctx["Next"] = 0
    ctx["NameOffset"] = 16
    ctx["NameLength"] = len(name)
    ctx["DataOffset"] = 24 if data else 0
    ctx["DataLength"] = len(data)
    ctx["Buffer"] = name + b"\0" * (8 - len(name) % 8 if len(name) % 8
                                     else 0) + data
    return ctx


def reconnect(smb, tid, name, fileid):
    # DHnC: the data is the FileId of the open to reclaim.
    ctx = create_ctx(b"DHnC", fileid)
    return smb.create(tid, name, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                      s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE, 0,
                      s3.FILE_OPEN, 0, oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                      createContexts=[ctx])


def main():
    port, user, pw, share, d, tag = sys.argv[1:7]
    mode = sys.argv[7] if len(sys.argv) > 7 else ""
    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port))
    conn.login(user, pw)
    smb = conn.getSMBServer()
    tid = conn.connectTree(share)
    name = "held.txt" if mode in ("lock", "waitlock") else "held-%s.txt" % tag
    if mode == "reconnect":
        fileid = bytes.fromhex(sys.argv[8])
        fid = []
        probe("reconnect", lambda: fid.append(reconnect(smb, tid, name,
                                                        fileid)))
        if fid:
            print("read: %s" % smb.read(tid, fid[0], 0, 64).decode(
                errors="replace").strip(), flush=True)
        return
    extra = ""
    if mode == "durable":
        fid = smb.create(tid, name, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                         s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE, 0,
                         s3.FILE_OPEN_IF, 0,
                         oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                         createContexts=[create_ctx(b"DHnQ", b"\0" * 16)])
        extra = fid.hex() + "\n"
        pfid = smb.create(tid, "plain-%s.txt" % tag,
                          s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                          s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE, 0,
                          s3.FILE_OPEN_IF, 0)
    else:
        fid = smb.create(tid, name, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                         s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE, 0,
                         s3.FILE_OPEN_IF, 0)
    lport = conn.getSMBServer()._NetBIOSSession.get_socket().getsockname()[1]
    if mode == "lock":
        lock(smb, tid, fid, s3.SMB2_LOCKFLAG_EXCLUSIVE_LOCK |
             s3.SMB2_LOCKFLAG_FAIL_IMMEDIATELY)
    with open(os.path.join(d, "ready." + tag + ".tmp"), "w") as f:
        f.write("%d\n%s" % (lport, extra))
    os.rename(os.path.join(d, "ready." + tag + ".tmp"),
              os.path.join(d, "ready." + tag))
    if mode == "waitlock":
        t0 = time.time()
        probe("waitlock", lambda: lock(smb, tid, fid,
                                       s3.SMB2_LOCKFLAG_EXCLUSIVE_LOCK))
        print("waited: %.1f" % (time.time() - t0), flush=True)
        return
    for _ in range(300):
        if os.path.exists(os.path.join(d, "go." + tag)):
            break
        time.sleep(0.1)
    probe("query", lambda: smb.queryInfo(tid, fid))
    # a directory listing on the held tree (impacket reuses its tree id)
    probe("list", lambda: conn.listPath(share, "*"))
    if mode == "durable":
        probe("plain", lambda: smb.queryInfo(tid, pfid))
    # impacket answers a known share from its cache: make it ask.
    smb._Session["TreeConnectTable"] = {}
    probe("tree", lambda: smb.connectTree(share))


if __name__ == "__main__":
    main()
