#!/usr/bin/python3
"""Driver of t/bench/leasecost.sh: leased CREATE+CLOSE pairs, one window per
stdin line.

usage: leasecost_client.py PORT PASSWORD
Logs in as alice (SMB 3.0), makes 16 files in [share], prints "ready";
then for each line "MODE N" read from stdin opens and closes the files in
turn N times (read data and attributes, sharing all) and prints "done".
MODE plain: no oplock, no lease; newkey: a lease v2 RWH with a new key
each open (every pair makes and ends a lease, so with data envs a
CREATE claims its key: shm/claim.c); samekey: one key per file, kept
open by a first handle, so each pair's lease already caches its file.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'integ'))
from impacket import smb3structs as s3  # noqa: E402
from impacket.smbconnection import SMBConnection  # noqa: E402
from state_lib import Blob, lease_v2  # noqa: E402

PORT, PW = int(sys.argv[1]), sys.argv[2]
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT,
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login('alice', PW)
s = c._SMBConnection
tid = c.connectTree('share')
names = ['lc%02d.dat' % i for i in range(16)]
for n in names:
    s.close(tid, s.create(tid, n, 0x12019F, 7, 0x40, 5, 0x80))
held = {}
print('ready', flush=True)
serial = 0
for line in sys.stdin:
    mode, count = line.split()
    if mode == 'samekey' and not held:
        for i, n in enumerate(names):
            key = struct.pack('<QQ', 0x5a5a0000 + i, 0)
            held[n] = (key, s.create(tid, n, 0x81, 7, 0, 1, 0, oplockLevel=0xFF,
                                     createContexts=[Blob([lease_v2(key, 7)])]))
    for j in range(int(count)):
        n = names[j % 16]
        if mode == 'plain':
            fid = s.create(tid, n, 0x81, 7, 0, 1, 0)
        else:
            if mode == 'newkey':
                serial += 1
                key = struct.pack('<QQ', serial, 0x1ea5e)
            else:
                key = held[n][0]
            fid = s.create(tid, n, 0x81, 7, 0, 1, 0, oplockLevel=0xFF,
                           createContexts=[Blob([lease_v2(key, 7)])])
        s.close(tid, fid)
    print('done', flush=True)
