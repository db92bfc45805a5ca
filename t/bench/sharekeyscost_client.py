# Driver of t/bench/sharekeyscost.sh: reads lines "SHARE KIND N" on stdin
# and answers "done" after N CREATEs of a new name (KIND file or dir,
# FILE_CREATE with delete on close, so the name goes at the CLOSE) and
# their CLOSEs on SHARE, for strace around them.  Answers "ready" once
# logged on.
#
#	sharekeyscost_client.py PORT
import sys

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT = int(sys.argv[1])
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login("alice", "alicepw1")
srv = c.getSMBServer()
trees = {}
seq = 0
print("ready", flush=True)
for line in sys.stdin:
    share, kind, n = line.split()
    if share not in trees:
        trees[share] = c.connectTree(share)
    t = trees[share]
    opts = s3.FILE_DELETE_ON_CLOSE | (s3.FILE_DIRECTORY_FILE if kind == "dir"
                                      else s3.FILE_NON_DIRECTORY_FILE)
    for _ in range(int(n)):
        seq += 1
        fid = srv.create(t, "n%07d" % seq, s3.GENERIC_ALL,
                         s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE |
                         s3.FILE_SHARE_DELETE, opts, s3.FILE_CREATE, 0)
        srv.close(t, fid)
    print("done", flush=True)
