# Client of t/integ/homes.sh (impacket).  argv: COMMAND PORT USER PASSWORD
# then the command's own:
#   tcon SHARE...      one line "tcon SHARE STATUS" per share (a tree
#                      connect, then disconnect)
#   write SHARE NAME   "write SHARE NAME STATUS": creates NAME with 5 bytes
#   enum               "enum NAME NAME..." (NetShareEnumAll level 1, sorted)
#                      then "getinfo NAME STATUS REMARK" for the user's own
#                      name, "homes" and "bob"
#   hold SHARE         connects SHARE and prints "ready"; then reads
#                      commands from stdin: "ls" prints "ls NAME..." of the
#                      tree's root (sorted, without . and ..), "quit" ends
import sys

from impacket import smb3
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection
from impacket.smbconnection import SessionError as ConnError

SessionError = (ConnError, smb3.SessionError)


def status(e):
    try:
        code = e.getErrorCode() if hasattr(e, "getErrorCode") else \
            e.get_error_code()
    except AttributeError:
        return "ERR " + str(e)[:60]
    from impacket.nt_errors import ERROR_MESSAGES
    return ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


def conn(port, user, pw):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port),
                      preferredDialect=s3.SMB2_DIALECT_30)
    c.login(user, pw)
    return c


def cmd_tcon(c, *shares):
    for share in shares:
        try:
            t = c.connectTree(share)
            c.disconnectTree(t)
            print("tcon", share, "STATUS_SUCCESS", flush=True)
        except SessionError as e:
            print("tcon", share, status(e), flush=True)


def cmd_write(c, share, name):
    try:
        t = c.connectTree(share)
        fid = c.createFile(t, name, desiredAccess=s3.FILE_WRITE_DATA |
                           s3.FILE_READ_ATTRIBUTES, creationDisposition=s3.FILE_OVERWRITE_IF)
        c.writeFile(t, fid, b"hello")
        c.closeFile(t, fid)
        print("write", share, name, "STATUS_SUCCESS", flush=True)
    except SessionError as e:
        print("write", share, name, status(e), flush=True)


def cmd_enum(c, user):
    from impacket.dcerpc.v5 import transport, srvs
    rpc = transport.SMBTransport("127.0.0.1", c._sess_port, r"\srvsvc",
                                 smb_connection=c)
    d = rpc.get_dce_rpc()
    d.connect()
    d.bind(srvs.MSRPC_UUID_SRVS)
    r = srvs.hNetrShareEnum(d, 1)
    names = sorted(e["shi1_netname"][:-1] for e in
                   r["InfoStruct"]["ShareInfo"]["Level1"]["Buffer"])
    print("enum", " ".join(names), flush=True)
    for name in (user, "homes", "bob"):
        try:
            g = srvs.hNetrShareGetInfo(d, name + "\x00", 1)
            print("getinfo", name, "OK", g["InfoStruct"]["ShareInfo1"]
                  ["shi1_remark"][:-1], flush=True)
        except Exception as e:  # DCERPCSessionError: its text names it
            s = str(e)
            print("getinfo", name, "NOTFOUND" if "NETNAMENOTFOUND" in s or
                  "0x906" in s else "ERR " + s[:60], flush=True)


def ls_tree(c, tid):
    """The names in the root of tree tid (this tree, not a new one)."""
    from impacket import smb
    srv = c.getSMBServer()
    fid = srv.create(tid, "", s3.FILE_READ_ATTRIBUTES | s3.FILE_READ_DATA,
                     s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE,
                     s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    names = []
    try:
        while True:
            try:
                res = srv.queryDirectory(tid, fid, "*", maxBufferSize=65535,
                                         informationClass=s3.FILE_FULL_DIRECTORY_INFORMATION)
            except SessionError as e:
                if e.get_error_code() == 0x80000006:  # STATUS_NO_MORE_FILES
                    break
                raise
            nxt = 1
            while nxt != 0:
                fi = smb.SMBFindFileFullDirectoryInfo(smb.SMB.FLAGS2_UNICODE)
                fi.fromString(res)
                names.append(fi["FileName"].decode("utf-16le"))
                nxt = fi["NextEntryOffset"]
                res = res[nxt:]
    finally:
        srv.close(tid, fid)
    return sorted(n for n in names if n not in (".", ".."))


def cmd_hold(c, share):
    t = c.connectTree(share)
    print("ready", flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "quit":
            break
        if w[0] == "ls":
            try:
                print("ls", " ".join(ls_tree(c, t)), flush=True)
            except SessionError as e:
                print("ls", status(e), flush=True)
    c.disconnectTree(t)


if __name__ == "__main__":
    cmd, port, user, pw = sys.argv[1:5]
    c = conn(port, user, pw)
    if cmd == "enum":
        cmd_enum(c, user)
    else:
        globals()["cmd_" + cmd](c, *sys.argv[5:])
    c.logoff()
