# Client of t/integ/maxconn.sh: tree connects that stay connected, through
# impacket, each on its own TCP connection (one session, one tree).
#
#	maxconn_client.py PORT USER PASSWORD SHARE N
#
# Opens N connections, each logged on as USER with one TREE_CONNECT to
# SHARE, and prints "tree I OK" or "tree I NT_STATUS_..." for each, then
# "ready".  Then it reads commands, one a line, answering each:
#	drop I	TREE_DISCONNECT of tree I (its session stays): "dropped I"
#	open I	an open and close of hello.txt through tree I (no new tree
#		connect): "opened I" or "open I NT_STATUS_..."
#	quit	logoff and close every connection: "bye"
# End of input is quit.  Killed, it leaves its connections to the kernel.
import sys

from impacket import nt_errors
from impacket.smbconnection import SMBConnection, SessionError

PORT, USER, PW, SHARE, N = int(sys.argv[1]), sys.argv[2], sys.argv[3], \
    sys.argv[4], int(sys.argv[5])


def status(e):
    code = e.getErrorCode()
    return nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


conns = []
for i in range(N):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT)
    c.login(USER, PW)
    try:
        tid = c.connectTree(SHARE)
        print("tree %d OK" % i, flush=True)
    except SessionError as e:
        tid = None
        print("tree %d %s" % (i, status(e)), flush=True)
    conns.append((c, tid))
print("ready", flush=True)
for line in sys.stdin:
    w = line.split()
    if not w or w[0] == "quit":
        break
    c, tid = conns[int(w[1])]
    if w[0] == "drop":
        c.disconnectTree(tid)
        conns[int(w[1])] = (c, None)
        print("dropped %s" % w[1], flush=True)
    elif w[0] == "open":
        try:
            c.closeFile(tid, c.openFile(tid, "hello.txt",
                                        desiredAccess=0x120089))
            print("opened %s" % w[1], flush=True)
        except SessionError as e:
            print("open %s %s" % (w[1], status(e)), flush=True)
for c, tid in conns:
    try:
        c.logoff()
        c.close()
    except Exception:
        pass
print("bye", flush=True)
