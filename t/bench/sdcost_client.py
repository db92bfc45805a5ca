#!/usr/bin/python3
"""Driver of t/bench/sdcost.sh: CREATE+CLOSE pairs, one window per stdin line.

usage: sdcost_client.py PORT PASSWORD
Logs in as alice, connects [share] (marked: a DACL is stored on
stored.txt) and [plain] (nothing stored), makes the files, prints
"ready"; then for each line "SHARE FILE N" read from stdin opens and
closes FILE N times (FILE_READ_DATA | FILE_READ_ATTRIBUTES, as a reader
does; FILE "new", "d/new", "inh/new" or "noinh/new": creates a new name
at the top or in the directory d (no descriptor), inh (a stored DACL
that passes an ACE on) or noinh (a stored DACL that passes nothing on:
the child gets the default DACL), delete on close, and closes it)
and prints "done".
"""
import struct
import sys

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT, PW = int(sys.argv[1]), sys.argv[2]
c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT)
c.login('alice', PW)
s = c._SMBConnection
tids = {'share': c.connectTree('share'), 'plain': c.connectTree('plain')}
for name, tid in tids.items():
    for f in ('plain.txt', 'stored.txt'):
        fid = s.create(tid, f, 0x12019F | 0x00040000, 7, 0x40, 5, 0x80)
        if name == 'share' and f == 'stored.txt':
            # a DACL of one ACE (Everyone: full control): stored, the
            # share marked
            w = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
            ace = struct.pack('<BBHI', 0, 0, 8 + len(w), 0x1F01FF) + w
            acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
            sd = struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0, 20) + acl
            s.setInfo(tid, fid, sd, infoType=s3.SMB2_0_INFO_SECURITY,
                      fileInfoClass=0, additionalInformation=4)
        s.close(tid, fid)
    fid = s.create(tid, 'd', 0x12019F, 7, 1, 3, 0x10)
    s.close(tid, fid)
    if name != 'share':
        continue
    # inh: a DACL that passes Everyone full control on (OI|CI); noinh: one
    # that passes nothing on (its children get the default DACL)
    w = struct.pack('<BB6sI', 1, 1, (1).to_bytes(6, 'big'), 0)
    for d, flags in (('inh', 0x03), ('noinh', 0x00)):
        ace = struct.pack('<BBHI', 0, flags, 8 + len(w), 0x1F01FF) + w
        acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
        sd = struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0, 20) + acl
        fid = s.create(tid, d, 0x12019F | 0x00040000, 7, 1, 3, 0x10)
        s.setInfo(tid, fid, sd, infoType=s3.SMB2_0_INFO_SECURITY,
                  fileInfoClass=0, additionalInformation=4)
        s.close(tid, fid)
print('ready', flush=True)
for line in sys.stdin:
    share, f, n = line.split()
    tid = tids[share]
    for _ in range(int(n)):
        if f.endswith('new'):
            s.close(tid, s.create(tid, f.replace('/', '\\') + '.tmp',
                                  0x130197, 7, 0x1040, 2, 0x80))
        else:
            s.close(tid, s.create(tid, f, 0x81, 7, 0, 1, 0))
    print('done', flush=True)
