#!/usr/bin/python3
"""EA names and a share without user xattrs (t/integ/files_ea.sh).

usage: files_ea_client.py PORT PASSWORD MODE DIR
  MODE ea:   share "share" at DIR (local path): EA names keep their case
  MODE nox:  share "nox" at DIR, a file system without user xattrs:
             timestamps and attributes set as cp -a does
  MODE sticky SHARE:  share SHARE at DIR: a write time set through a
             handle stays when that handle writes or sets EndOfFile or
             AllocationSize (MS-FSA 2.1.5.14.2, 2.1.5.14.4), a write
             or an EndOfFile set through another handle moves it
Prints "ok ..." / "FAIL ..." lines, one per check.
"""
import os
import struct
import sys
import time

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection
from info_lib import query_info as query, set_info

PORT = int(sys.argv[1])
PW = sys.argv[2]
MODE = sys.argv[3]
DIR = sys.argv[4]

FILE_FULL_EA_INFORMATION = 15
FILE_EA_INFORMATION = 7
FILE_ALL_INFORMATION = 18
FILE_BASIC_INFORMATION = 4
FILE_ALLOCATION_INFORMATION = 19
FILE_END_OF_FILE_INFORMATION = 20
FILE_STREAM_INFORMATION = 22
XPREFIX = 'user.usmbd.ea.'
FAILED = 0


def report(good, what):
    global FAILED
    if not good:
        FAILED += 1
    print('%s %s' % ('ok' if good else 'FAIL', what))


def ea_entry(name, value):
    e = struct.pack('<IBBH', 0, 0, len(name), len(value)) + name + b'\0' + value
    return e + b'\0' * (-len(e) % 4)


def ea_chain(pairs):
    """A FILE_FULL_EA_INFORMATION chain (MS-FSCC 2.4.15)."""
    out = b''
    for i, (n, v) in enumerate(pairs):
        e = ea_entry(n, v)
        if i + 1 < len(pairs):
            e = struct.pack('<I', len(e)) + e[4:]
        out += e
    return out


def get_list(names):
    """A FILE_GET_EA_INFORMATION chain (MS-FSCC 2.4.15.1)."""
    out = b''
    for i, n in enumerate(names):
        e = struct.pack('<IB', 0, len(n)) + n + b'\0'
        e += b'\0' * (-len(e) % 4)
        if i + 1 < len(names):
            e = struct.pack('<I', len(e)) + e[4:]
        out += e
    return out


def parse_eas(buf):
    """[(name, value)] of a FILE_FULL_EA_INFORMATION answer."""
    out, off = [], 0
    while True:
        nxt, _, nl, vl = struct.unpack_from('<IBBH', buf, off)
        name = bytes(buf[off + 8:off + 8 + nl])
        val = bytes(buf[off + 9 + nl:off + 9 + nl + vl])
        out.append((name, val))
        if nxt == 0:
            return out
        off += nxt


class RawContext:
    """A create context given as its name and data."""

    def __init__(self, name, data):
        self.blob = (struct.pack('<IHHHHI', 0, 16, len(name), 0, 24,
                                 len(data)) + name +
                     b'\0' * (8 - len(name)) + data)

    def getData(self):
        return self.blob


def all_eas(s, tid, fid):
    st, buf = query(s, tid, fid, FILE_FULL_EA_INFORMATION)
    if st == 0xC0000052:          # STATUS_NO_EAS_ON_FILE
        return []
    if st != 0:
        return 'status %#x' % st
    return parse_eas(buf)


def local_eas(path):
    return sorted(x[len(XPREFIX):] for x in os.listxattr(path)
                  if x.startswith(XPREFIX))


def login():
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT,
                      preferredDialect=smb3.SMB2_DIALECT_30)
    c.login('alice', PW)
    return c, c.getSMBServer()


def mode_ea():
    c, s = login()
    tid = c.connectTree('share')
    path = os.path.join(DIR, 'eacase')
    fid = c.createFile(tid, 'eacase', desiredAccess=0x12019f,
                       creationDisposition=5)      # FILE_OVERWRITE_IF

    # what the Linux client does for setxattr user.kcOne, then getxattr
    st = set_info(s, tid, fid, FILE_FULL_EA_INFORMATION,
                  ea_chain([(b'kcOne', b'v1')]))
    got = all_eas(s, tid, fid)
    report(st == 0 and got == [(b'kcOne', b'v1')],
           'an EA set as kcOne comes back as kcOne (%r)' % (got,))
    report(local_eas(path) == ['kcOne'],
           '... and is stored under that spelling (%r)' % local_eas(path))

    # an EA stored upper-cased by an older usmbd is still read
    os.setxattr(path, XPREFIX + 'LEGACY', b'old')
    got = all_eas(s, tid, fid)
    report(sorted(got) == [(b'LEGACY', b'old'), (b'kcOne', b'v1')]
           if isinstance(got, list) else False,
           'an EA an older version stored upper-cased is listed (%r)' % (got,))

    # a set in another case replaces the EA: one EA, the new spelling
    st = set_info(s, tid, fid, FILE_FULL_EA_INFORMATION,
                  ea_chain([(b'KCONE', b'v2'), (b'legacy', b'new')]))
    got = all_eas(s, tid, fid)
    report(st == 0 and isinstance(got, list) and
           sorted(got) == [(b'KCONE', b'v2'), (b'legacy', b'new')],
           'a set of KCONE and legacy replaces kcOne and LEGACY (%r)' % (got,))
    report(local_eas(path) == ['KCONE', 'legacy'],
           '... no second xattr is left (%r)' % local_eas(path))

    # a query naming EAs matches without case, in the list's order; a
    # name with no EA comes back with an empty value
    st, buf = query(s, tid, fid, FILE_FULL_EA_INFORMATION,
                    get_list([b'Legacy', b'nosuch', b'kcone']))
    got = parse_eas(buf) if st == 0 else 'status %#x' % st
    report(got == [(b'legacy', b'new'), (b'nosuch', b''), (b'KCONE', b'v2')],
           'a query with an EA list matches the names without case (%r)'
           % (got,))
    st, _ = query(s, tid, fid, FILE_FULL_EA_INFORMATION, b'\x00' * 3)
    report(st == 0x80000014,
           'a truncated EA list is STATUS_EA_LIST_INCONSISTENT (%#x)' % st)

    # the sizes agree with what the query returns
    st, buf = query(s, tid, fid, FILE_EA_INFORMATION)
    easize = struct.unpack('<I', buf)[0] if st == 0 else -1
    st, buf = query(s, tid, fid, FILE_ALL_INFORMATION)
    allsize = struct.unpack_from("<I", buf, 72)[0] if st in (0, 0x80000005) \
        else -2
    # the length of the list a query of every EA returns (MS-FSCC 2.4.15:
    # entries 4-aligned, no padding after the last; so it depends on the
    # order, here 16 + 18 or 20 + 16)
    st, buf = query(s, tid, fid, FILE_FULL_EA_INFORMATION)
    want = len(buf) if st == 0 and len(buf) in (34, 36) else -3
    report(easize == want and allsize == want,
           'EaSize of FileEaInformation and FileAllInformation: %d, %d '
           '(want %d)' % (easize, allsize, want))

    # deletion by an empty value, the name in yet another case
    st = set_info(s, tid, fid, FILE_FULL_EA_INFORMATION,
                  ea_chain([(b'kCoNe', b'')]))
    got = all_eas(s, tid, fid)
    report(st == 0 and got == [(b'legacy', b'new')],
           'an empty value under kCoNe deletes KCONE (%r)' % (got,))
    st = set_info(s, tid, fid, FILE_FULL_EA_INFORMATION,
                  ea_chain([(b'LEGACY', b'')]))
    got = all_eas(s, tid, fid)
    report(st == 0 and got == [] and local_eas(path) == [],
           'and LEGACY deletes legacy: no EAs left (%r)' % (got,))
    c.closeFile(tid, fid)

    # EAs given with a CREATE (MS-SMB2 2.2.13.2.1) keep their case too
    ctx = RawContext(b'ExtA', ea_chain([(b'MixedCase', b'x'),
                                        (b'lower', b'y')]))
    fid = s.create(tid, 'eacreate', 0x12019f, 7, 0, 5, 0x80,
                   createContexts=[ctx])
    got = all_eas(s, tid, fid)
    report(isinstance(got, list) and
           sorted(got) == [(b'MixedCase', b'x'), (b'lower', b'y')],
           'EAs of a CREATE context keep their case (%r)' % (got,))
    c.closeFile(tid, fid)
    c.deleteFile('share', 'eacreate')
    c.deleteFile('share', 'eacase')
    c.logoff()


def filetime(unix):
    return int(unix * 10000000) + 116444736000000000


def mode_nox():
    c, s = login()
    tid = c.connectTree('nox')
    # cp -a: create, write, set every time and the attributes, close
    ctime, atime, mtime = (filetime(981173106), filetime(1012709106),
                           filetime(1044245106))
    fid = s.create(tid, 'copied', 0x12019f, 7, 0x40, 5, 0x20)
    c.writeFile(tid, fid, b'data' * 1000, 0)
    basic = struct.pack('<QQQQII', ctime, atime, mtime, mtime, 0x20, 0)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, basic)
    report(st == 0, 'SET_INFO of every time and ARCHIVE succeeds (%#x)' % st)
    st, buf = query(s, tid, fid, FILE_BASIC_INFORMATION)
    got = struct.unpack_from('<QQQQI', buf) if st == 0 else None
    report(got is not None and got[1] == atime and got[2] == mtime,
           'the access and write times read back (%r)' % (got,))
    for klass, what in ((FILE_ALL_INFORMATION, 'FileAllInformation'),
                        (FILE_EA_INFORMATION, 'FileEaInformation'),
                        (FILE_STREAM_INFORMATION, 'FileStreamInformation')):
        st, _ = query(s, tid, fid, klass)
        report(st == 0, 'QUERY_INFO %s succeeds (%#x)' % (what, st))
    st, _ = query(s, tid, fid, 0, itype=s3.SMB2_0_INFO_SECURITY, addl=7)
    report(st == 0, 'QUERY_INFO of the security descriptor succeeds (%#x)'
           % st)
    st, _ = query(s, tid, fid, FILE_FULL_EA_INFORMATION)
    report(st == 0xC0000052, 'an EA query: STATUS_NO_EAS_ON_FILE (%#x)' % st)
    st = set_info(s, tid, fid, FILE_FULL_EA_INFORMATION,
                  ea_chain([(b'a', b'b')]))
    report(st == 0xC000004F, 'an EA set: STATUS_EAS_NOT_SUPPORTED (%#x)' % st)
    # only the attributes (setmode): dropped, not refused
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION,
                  struct.pack('<QQQQII', 0, 0, 0, 0, 0x22, 0))
    report(st == 0, 'SET_INFO of HIDDEN alone succeeds (%#x)' % st)
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'copied'))
    report(int(lst.st_mtime) == 1044245106 and int(lst.st_atime) == 1012709106,
           'the file keeps the mtime and atime set (%d, %d)'
           % (lst.st_mtime, lst.st_atime))

    # tar x: a directory made, its times set last
    fid = s.create(tid, 'tdir', 0x12019f, 7, 0x1, 2, 0x10)
    basic = struct.pack('<QQQQII', 0, atime, mtime, 0, 0x10, 0)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, basic)
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'tdir'))
    report(st == 0 and int(lst.st_mtime) == 1044245106,
           'a directory takes its times (%#x, %d)' % (st, lst.st_mtime))
    c.logoff()


def write_time(s, tid, fid):
    st, buf = query(s, tid, fid, FILE_BASIC_INFORMATION)
    return struct.unpack_from('<Q', buf, 16)[0] if st == 0 else None


def mode_sticky():
    share = sys.argv[5]
    c, s = login()
    tid = c.connectTree(share)
    fixed = filetime(1044245106)        # 2003-02-03 04:05:06 UTC
    only_mtime = struct.pack('<QQQQII', 0, 0, fixed, 0, 0, 0)

    # cp -a as the Linux client may send it: data, the times, more data
    # (its cached writes flushed at close), close
    fid = s.create(tid, 'sticky_own', 0x12019f, 7, 0x40, 5, 0x20)
    c.writeFile(tid, fid, b'a' * 4096, 0)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, only_mtime)
    report(st == 0, '%s: SET_INFO of LastWriteTime succeeds (%#x)'
           % (share, st))
    c.writeFile(tid, fid, b'b' * 4096, 4096)
    c.writeFile(tid, fid, b'c' * 100, 8192)
    got = write_time(s, tid, fid)
    report(got == fixed, '%s: writes through the handle that set the write '
           'time leave it (QUERY_INFO %r, set %d)' % (share, got, fixed))
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'sticky_own'))
    report(int(lst.st_mtime) == 1044245106 and lst.st_size == 8292,
           '%s: after the close the file keeps the mtime set (%d, %d bytes)'
           % (share, lst.st_mtime, lst.st_size))
    fid = s.create(tid, 'sticky_own', 0x80, 7, 0x40, 1, 0)
    got = write_time(s, tid, fid)
    c.closeFile(tid, fid)
    report(got == fixed, '%s: a new open reads the write time set (%r)'
           % (share, got))

    # then the size: EndOfFile grown, AllocationSize grown, EndOfFile 0
    # (a truncation), each through the handle that set the write time,
    # which had not written since; and AllocationSize 0 on one that had
    # (MS-FSA 2.1.5.14.4 / .2: Open.UserSetModificationTime holds)
    fid = s.create(tid, 'sticky_size', 0x12019f, 7, 0x40, 5, 0x20)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, only_mtime)
    for what, klass, size in (('EndOfFile 4096', FILE_END_OF_FILE_INFORMATION,
                               4096),
                              ('AllocationSize 65536',
                               FILE_ALLOCATION_INFORMATION, 65536),
                              ('EndOfFile 0', FILE_END_OF_FILE_INFORMATION,
                               0)):
        st2 = set_info(s, tid, fid, klass, struct.pack('<Q', size))
        got = write_time(s, tid, fid)
        report(st == 0 and st2 == 0 and got == fixed,
               '%s: %s through the handle that set the write time leaves '
               'it (%#x, QUERY_INFO %r, set %d)'
               % (share, what, st2, got, fixed))
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'sticky_size'))
    fid = s.create(tid, 'sticky_size', 0x80, 7, 0x40, 1, 0)
    got = write_time(s, tid, fid)
    c.closeFile(tid, fid)
    report(int(lst.st_mtime) == 1044245106 and lst.st_size == 0 and
           got == fixed,
           '%s: after the close the resized file keeps the write time set '
           '(mtime %d, %d bytes, a new open reads %r)'
           % (share, lst.st_mtime, lst.st_size, got))
    fid = s.create(tid, 'sticky_size_w', 0x12019f, 7, 0x40, 5, 0x20)
    c.writeFile(tid, fid, b'a' * 4096, 0)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, only_mtime)
    st2 = set_info(s, tid, fid, FILE_ALLOCATION_INFORMATION,
                   struct.pack('<Q', 0))
    got = write_time(s, tid, fid)
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'sticky_size_w'))
    report(st == 0 and st2 == 0 and got == fixed and
           int(lst.st_mtime) == 1044245106 and lst.st_size == 0,
           '%s: written, write time set, AllocationSize 0: the write time '
           'stays (%#x, QUERY_INFO %r, mtime %d, %d bytes)'
           % (share, st2, got, lst.st_mtime, lst.st_size))

    # the same handle sets it, another one writes: that write moves it
    fid = s.create(tid, 'sticky_other', 0x12019f, 7, 0x40, 5, 0x20)
    c.writeFile(tid, fid, b'a' * 4096, 0)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, only_mtime)
    # (another connection: impacket keeps one open per name and client)
    c2, s2 = login()
    tid2 = c2.connectTree(share)
    other = s2.create(tid2, 'sticky_other', 0x12019f, 7, 0x40, 1, 0)
    c2.writeFile(tid2, other, b'b' * 4096, 4096)
    c2.closeFile(tid2, other)
    c2.logoff()
    got = write_time(s, tid, fid)
    c.closeFile(tid, fid)
    lst = os.stat(os.path.join(DIR, 'sticky_other'))
    now = time.time()
    report(st == 0 and got is not None and got > fixed and
           abs(lst.st_mtime - now) < 60,
           '%s: a write through another handle moves the write time '
           '(QUERY_INFO %r, mtime %d, now %d)'
           % (share, got, lst.st_mtime, now))

    # ... and so does a size set through another handle, after the one
    # that set it had resized the file itself; its close leaves it moved
    fid = s.create(tid, 'sticky_other_size', 0x12019f, 7, 0x40, 5, 0x20)
    st = set_info(s, tid, fid, FILE_BASIC_INFORMATION, only_mtime)
    st2 = set_info(s, tid, fid, FILE_END_OF_FILE_INFORMATION,
                   struct.pack('<Q', 4096))
    c2, s2 = login()
    tid2 = c2.connectTree(share)
    other = s2.create(tid2, 'sticky_other_size', 0x12019f, 7, 0x40, 1, 0)
    st3 = set_info(s2, tid2, other, FILE_END_OF_FILE_INFORMATION,
                   struct.pack('<Q', 8192))
    got = write_time(s, tid, fid)
    c.closeFile(tid, fid)
    c2.closeFile(tid2, other)
    c2.logoff()
    lst = os.stat(os.path.join(DIR, 'sticky_other_size'))
    now = time.time()
    report(st == 0 and st2 == 0 and st3 == 0 and got is not None and
           got > fixed and abs(lst.st_mtime - now) < 60 and
           lst.st_size == 8192,
           '%s: EndOfFile set through another handle moves the write time '
           '(%#x, QUERY_INFO %r, mtime %d, now %d)'
           % (share, st3, got, lst.st_mtime, now))
    c.logoff()


if __name__ == '__main__':
    {'ea': mode_ea, 'nox': mode_nox, 'sticky': mode_sticky}[MODE]()
    sys.exit(1 if FAILED else 0)
