# Client of t/integ/sharekeys.sh: a share's hosts allow / hosts deny for a
# second user's session on the same TCP connection (usmbd relays it to
# bob's worker, HACKING.md "Several users on one connection"), from a
# chosen loopback source address.  alice logs on, then bob on the same
# connection (SMB 3.0: impacket seals it); bob's TREE_CONNECT to each share.
#
#	sharekeys_relay.py PORT SOURCE SHARE...
#
# Prints one line per share: "SHARE OK" or "SHARE NT_STATUS_...".
import copy
import socket
import sys

from impacket import nt_errors, smb3, smb3structs
from impacket.smbconnection import SessionError

PORT, SOURCE = int(sys.argv[1]), sys.argv[2]
_connect = socket.socket.connect


def connect_from(self, addr):
    """Every connection leaves from SOURCE, as a client elsewhere would."""
    self.bind((SOURCE, 0))
    return _connect(self, addr)


socket.socket.connect = connect_from
c = smb3.SMB3("127.0.0.1", "127.0.0.1", sess_port=PORT,
              preferredDialect=smb3structs.SMB2_DIALECT_30, timeout=30)
fresh = copy.deepcopy(c._Session)
c.login("alice", "alicepw1")
alice = c._Session
c._Session = copy.deepcopy(fresh)
c.login("bob", "bobpw1")
if c._Session["SessionID"] == alice["SessionID"]:
    print("FAIL one session", flush=True)
    sys.exit(1)
for share in sys.argv[3:]:
    try:
        tid = c.connectTree(share)
        c.disconnectTree(tid)
        print("%s OK" % share, flush=True)
    except (SessionError, smb3.SessionError) as e:
        code = e.get_error_code()
        name = nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]
        print("%s %s" % (share, name), flush=True)
c.logoff()
c._Session = alice
c.logoff()
