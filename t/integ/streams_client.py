#!/usr/bin/python3
"""Stream renames (t/integ/streams.sh).

usage: streams_client.py PORT PASSWORD DIR
  DIR is the local path of the share "share".
Prints "ok ..." / "FAIL ..." lines, one per check.
"""
import os
import struct
import sys

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection
from info_lib import set_info

PORT = int(sys.argv[1])
PW = sys.argv[2]
DIR = sys.argv[3]

FILE_RENAME_INFORMATION = 10
XSTREAM = 'user.usmbd.stream.'
SUCCESS = 0
ACCESS_DENIED = 0xC0000022
INVALID_PARAMETER = 0xC000000D
NAME_COLLISION = 0xC0000035
SHARING_VIOLATION = 0xC0000043
# access masks (MS-SMB2 2.2.13.1)
READ_DATA, WRITE_DATA, APPEND = 0x1, 0x2, 0x4
READ_ATTR, DELETE, SYNC = 0x80, 0x10000, 0x100000
RW = READ_DATA | WRITE_DATA | APPEND | READ_ATTR | DELETE | SYNC
DIR_ALL = 0x1f01ff
SHARE_ALL = 7
FAILED = 0


def report(good, what):
    global FAILED
    if not good:
        FAILED += 1
    print('%s %s' % ('ok' if good else 'FAIL', what))


def login():
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT,
                      preferredDialect=smb3.SMB2_DIALECT_30)
    c.login('alice', PW)
    return c, c.getSMBServer()


def create(s, tid, name, access, disp, options=0x40):
    """(status, fid) of a CREATE (FILE_NON_DIRECTORY_FILE by default)."""
    try:
        return 0, s.create(tid, name, access, SHARE_ALL, options, disp, 0)
    except Exception as e:          # impacket raises SessionError
        return getattr(e, 'error', None) or e.getErrorCode(), None


def rename(s, tid, fid, name, replace):
    """Status of a SET_INFO FileRenameInformation (MS-FSCC 2.4.42.2)."""
    n = name.encode('utf-16-le')
    blob = struct.pack('<B7xQI', 1 if replace else 0, 0, len(n)) + n
    return set_info(s, tid, fid, FILE_RENAME_INFORMATION, blob)


def streams(path):
    return sorted(x[len(XSTREAM):] for x in os.listxattr(path)
                  if x.startswith(XSTREAM))


def content(path):
    with open(path, 'rb') as f:
        return f.read()


def make_stream(s, tid, name, data):
    st, fid = create(s, tid, name, RW, 2)       # FILE_CREATE
    if st == 0 and data:
        s.write(tid, fid, data, 0, len(data))
    return st, fid


def main():
    c, s = login()
    tid = c.connectTree('share')
    st, d = create(s, tid, 'sr', DIR_ALL, 3, 1)  # OPEN_IF, a directory
    report(st == 0, 'directory sr made (%#x)' % st)
    if st != 0:
        return
    c.closeFile(tid, d)
    local = os.path.join(DIR, 'sr')

    # 1. a named stream becomes the (empty) unnamed one, with its data;
    # a watcher of the directory (another connection) hears of it
    st, h = make_stream(s, tid, 'sr\\one.txt:s1', b'stream data')
    c2, s2 = login()
    tid2 = c2.connectTree('share')
    wd = s2.create(tid2, 'sr', 0x1, SHARE_ALL, 1, 1, 0)
    p = s2.SMB_PACKET()
    p['Command'] = s3.SMB2_CHANGE_NOTIFY
    p['TreeID'] = tid2
    r = s3.SMB2ChangeNotify()
    r['OutputBufferLength'] = 1000
    r['FileID'] = wd
    r['CompletionFilter'] = 0x8                 # FILE_NOTIFY_CHANGE_SIZE
    p['Data'] = r
    mid_w = s2.sendSMB(p)
    got = rename(s, tid, h, '::$DATA', False)
    report(got == NAME_COLLISION,
           'to the unnamed stream without ReplaceIfExists: '
           'OBJECT_NAME_COLLISION (%#x)' % got)
    got = rename(s, tid, h, '::$DATA', True)
    f1 = os.path.join(local, 'one.txt')
    report(got == SUCCESS and content(f1) == b'stream data' and
           streams(f1) == [],
           'to the unnamed stream with ReplaceIfExists: the file has the '
           'data, the stream is gone (%#x, %r, %r)'
           % (got, content(f1), streams(f1)))
    a = s2.recvSMB(mid_w)
    heard = bytes(a['Data'])
    report(a['Status'] == 0 and 'one.txt'.encode('utf-16-le') in heard,
           'the watcher hears the file change (%#x)' % a['Status'])
    s2.close(tid2, wd)
    c2.logoff()
    # the handle now reads and writes the file's data
    data = s.read(tid, h, 0, 100)
    s.write(tid, h, b'STREAM', 0, 6)
    c.closeFile(tid, h)
    report(data == b'stream data' and content(f1) == b'STREAM data',
           'the handle now stands for the unnamed stream (%r, %r)'
           % (data, content(f1)))
    st, h = create(s, tid, 'sr\\one.txt', RW, 1)  # FILE_OPEN, DELETE
    report(st == 0, 'the file opens with DELETE after that close (%#x)'
           % st)
    if h is not None:
        c.closeFile(tid, h)

    # 2. not over a non-empty unnamed stream
    st, h0 = make_stream(s, tid, 'sr\\two.txt', b'main')
    c.closeFile(tid, h0)
    st, h = make_stream(s, tid, 'sr\\two.txt:s2', b'side')
    got = rename(s, tid, h, '::$DATA', True)
    f2 = os.path.join(local, 'two.txt')
    report(got == INVALID_PARAMETER and content(f2) == b'main' and
           len(streams(f2)) == 1,
           'not over a non-empty unnamed stream: INVALID_PARAMETER, both '
           'kept (%#x, %r, %r)' % (got, content(f2), streams(f2)))
    c.closeFile(tid, h)

    # 3. not while the unnamed stream is open
    st, h = make_stream(s, tid, 'sr\\three.txt:s3', b'x')
    st, hb = create(s, tid, 'sr\\three.txt', READ_DATA | SYNC, 1)
    got = rename(s, tid, h, '::$DATA', True)
    f3 = os.path.join(local, 'three.txt')
    report(got == ACCESS_DENIED and content(f3) == b'' and
           len(streams(f3)) == 1,
           'not while the unnamed stream is open: ACCESS_DENIED (%#x)'
           % got)
    c.closeFile(tid, hb)
    c.closeFile(tid, h)

    # 4. a stream renamed by a path: the destination directory's open
    # first, then refused
    st, h = make_stream(s, tid, 'sr\\four.txt:s4', b'y')
    got = rename(s, tid, h, 'sr\\four.txt:s5', True)
    report(got == INVALID_PARAMETER,
           'stream renamed by a path: INVALID_PARAMETER (%#x)' % got)
    st, d = create(s, tid, 'sr', DIR_ALL, 1, 1)
    got = rename(s, tid, h, 'sr\\four.txt:s5', True)
    report(got == SHARING_VIOLATION,
           'the same with the directory open with DELETE: '
           'SHARING_VIOLATION (%#x)' % got)
    got = rename(s, tid, h, 'sr\\other.txt', True)
    report(got == SHARING_VIOLATION,
           'a stream renamed to another file there: SHARING_VIOLATION '
           '(%#x)' % got)
    c.closeFile(tid, d)
    f4 = os.path.join(local, 'four.txt')
    report(len(streams(f4)) == 1 and
           not os.path.exists(os.path.join(local, 'other.txt')),
           'nothing moved (%r)' % streams(f4))
    c.closeFile(tid, h)

    # 5. the kernel judges the write: a file its owner cannot write
    st, h = make_stream(s, tid, 'sr\\five.txt:s6', b'z')
    c.closeFile(tid, h)
    f5 = os.path.join(local, 'five.txt')
    os.chmod(f5, 0o444)
    st, h = create(s, tid, 'sr\\five.txt:s6', READ_DATA | DELETE | SYNC, 1)
    got = rename(s, tid, h, '::$DATA', True) if st == 0 else st
    report(st == 0 and got == ACCESS_DENIED and content(f5) == b'' and
           len(streams(f5)) == 1,
           'a read-only file: ACCESS_DENIED, nothing moved (open %#x, '
           'rename %#x, %r)' % (st, got, content(f5)))
    if h is not None:
        c.closeFile(tid, h)

    # 6. CREATE options as Windows answers them (MS-SMB2 2.2.13,
    # smb2.create.gentest): each bit alone on an OPEN_IF
    answers = {}
    for bit in range(32):
        opt = 1 << bit
        if opt in (0x1, 0x1000):        # DIRECTORY_FILE, DELETE_ON_CLOSE
            continue
        st, h = create(s, tid, 'sr\\opts.txt', READ_DATA | SYNC, 3, opt)
        answers[opt] = st
        if h is not None:
            c.closeFile(tid, h)
    unsup = sum(o for o, st in answers.items() if st == 0xC00000BB)
    inval = sum(o for o, st in answers.items() if st == INVALID_PARAMETER)
    okm = sum(o for o, st in answers.items() if st == SUCCESS)
    report(unsup == 0x00102080 and inval == 0xff000000 and
           okm == 0x00efcf7e,
           'create options: NOT_SUPPORTED %#010x, INVALID_PARAMETER %#010x, '
           'accepted %#010x' % (unsup, inval, okm))
    c.logoff()


if __name__ == '__main__':
    main()
    sys.exit(1 if FAILED else 0)
