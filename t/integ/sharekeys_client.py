# Client of t/integ/sharekeys.sh: one TREE_CONNECT per share through
# impacket, from a chosen loopback source address (Samba lets 127.0.0.1
# and ::1 in unless a deny list names them, so a per-share `hosts allow`
# is seen refusing from 127.0.0.2).
#
#	sharekeys_client.py PORT SOURCE USER PASSWORD SHARE...
#
# Prints one line per share: "SHARE OK" or "SHARE NT_STATUS_...".
import socket
import sys

from impacket import nt_errors
from impacket.smbconnection import SMBConnection, SessionError

PORT, SOURCE, USER, PW = int(sys.argv[1]), sys.argv[2], sys.argv[3], \
    sys.argv[4]
_connect = socket.socket.connect


def connect_from(self, addr):
    """Every connection leaves from SOURCE, as a client elsewhere would."""
    self.bind((SOURCE, 0))
    return _connect(self, addr)


socket.socket.connect = connect_from
conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT)
conn.login(USER, PW)
for share in sys.argv[5:]:
    try:
        tid = conn.connectTree(share)
        conn.disconnectTree(tid)
        print("%s OK" % share, flush=True)
    except SessionError as e:
        code = e.getErrorCode()
        name = nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]
        print("%s %s" % (share, name), flush=True)
conn.logoff()
