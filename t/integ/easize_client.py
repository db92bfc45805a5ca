#!/usr/bin/python3
"""EaSize in directory listings (t/integ/easize.sh).

usage: easize_client.py PORT PASSWORD DIR SERVER
  DIR is the local path of share "share"; SERVER usmbd or samba (what is
  checked is the same; the script names the server in its lines).
  Makes in DIR/eadir, through SMB: "two" with two EAs, "none" with none,
  "sub" (a directory) with one; locally a symlink "link" -> "two" and a
  file "local" with a user xattr that is not an EA of this server.  Then
  every listing level with an EaSize field (MS-FSCC 2.4.8, 2.4.14,
  2.4.16-2.4.18) must give each entry the EaSize that QUERY_INFO
  FileEaInformation and FileAllInformation give for the same name, and
  that must be the length of the FILE_FULL_EA_INFORMATION list a query of
  every EA returns (MS-FSCC 2.4.15: entries 4-aligned, no padding after
  the last) — computed here from the EAs set.
  Share "noea" (`ea support = no`) at DIR too: EaSize 0 everywhere, a
  query STATUS_NO_EAS_ON_FILE, a set and a create with EAs
  STATUS_EAS_NOT_SUPPORTED (nothing created).
Prints "ok ..." / "FAIL ..." lines, one per check.
"""
import itertools
import os
import struct
import sys
import time

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection
from info_lib import query_info as query, set_info

PORT = int(sys.argv[1])
PW = sys.argv[2]
DIR = sys.argv[3]
SERVER = sys.argv[4]

FILE_FULL_EA_INFORMATION = 15
FILE_EA_INFORMATION = 7
FILE_ALL_INFORMATION = 18
STATUS_NO_EAS_ON_FILE = 0xC0000052
STATUS_EAS_NOT_SUPPORTED = 0xC000004F
# level: (name, offset of the name, EaSize at 64)
LEVELS = {2: ("FileFullDirectoryInformation", 68),
          3: ("FileBothDirectoryInformation", 94),
          37: ("FileIdBothDirectoryInformation", 104),
          38: ("FileIdFullDirectoryInformation", 80),
          60: ("FileIdExtdDirectoryInformation", 88)}
FAILED = 0


def report(good, what):
    global FAILED
    if not good:
        FAILED += 1
    print('%s %s: %s' % ('ok' if good else 'FAIL', SERVER, what))


def ea_chain(pairs):
    """A FILE_FULL_EA_INFORMATION chain (MS-FSCC 2.4.15)."""
    out = b''
    for i, (n, v) in enumerate(pairs):
        e = struct.pack('<IBBH', 0, 0, len(n), len(v)) + n + b'\0' + v
        if i + 1 < len(pairs):
            e += b'\0' * (-len(e) % 4)
            e = struct.pack('<I', len(e)) + e[4:]
        out += e
    return out


def list_sizes(pairs):
    """EaSize: the length of the list of every EA, as a query returns it;
    the set of it in every order (a server lists them in its own)."""
    return {len(ea_chain(list(p))) for p in itertools.permutations(pairs)}


def set_eas(s, tid, fid, blob):
    return set_info(s, tid, fid, FILE_FULL_EA_INFORMATION, blob)


def ea_size(buf, off):
    return struct.unpack_from('<I', buf, off + 64)[0]


def create_attrs(buf, off):
    """(CreationTime, FileAttributes) of the entry at off."""
    return (struct.unpack_from('<Q', buf, off + 8)[0],
            struct.unpack_from('<I', buf, off + 56)[0])


def listing(s, tid, fid, level, pick=ea_size):
    """{name: pick(entry)} of one restarted QUERY_DIRECTORY of level:
    EaSize unless told otherwise."""
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_QUERY_DIRECTORY
    p['TreeID'] = tid
    q = s3.SMB2QueryDirectory()
    q['FileInformationClass'] = level
    q['Flags'] = 1                      # RESTART_SCANS
    q['FileIndex'] = 0
    q['FileID'] = fid
    q['OutputBufferLength'] = 65536
    q['FileNameLength'] = 2
    q['Buffer'] = '*'.encode('utf-16le')
    p['Data'] = q
    a = s.recvSMB(s.sendSMB(p))
    if a['Status'] != 0:
        return 'status %#x' % a['Status']
    buf = s3.SMB2QueryDirectory_Response(a['Data'])['Buffer']
    out, off, noff = {}, 0, LEVELS[level][1]
    while True:
        nxt = struct.unpack_from('<I', buf, off)[0]
        nlen = struct.unpack_from('<I', buf, off + 60)[0]
        name = bytes(buf[off + noff:off + noff + nlen]).decode('utf-16le')
        out[name] = pick(buf, off)
        if nxt == 0:
            return out
        off += nxt


def info_sizes(s, tid, name, is_dir=False):
    """(FileEaInformation, FileAllInformation's EaSize, length of the
    FileFullEaInformation answer) of name, opened as a client opens it."""
    fid = s.create(tid, name, 0x00120089, 7, 1 if is_dir else 0, 1, 0)
    try:
        st, b = query(s, tid, fid, FILE_EA_INFORMATION)
        ea = struct.unpack('<I', b)[0] if st == 0 else 'status %#x' % st
        st, b = query(s, tid, fid, FILE_ALL_INFORMATION)
        al = struct.unpack_from('<I', b, 72)[0] if st in (0, 0x80000005) \
            else 'status %#x' % st
        st, b = query(s, tid, fid, FILE_FULL_EA_INFORMATION)
        full = len(b) if st == 0 else 0 if st == STATUS_NO_EAS_ON_FILE \
            else 'status %#x' % st
    finally:
        s.close(tid, fid)
    return ea, al, full


def login():
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT,
                      preferredDialect=smb3.SMB2_DIALECT_30)
    c.login('alice', PW)
    return c, c.getSMBServer()


def make_files(c, s, tid):
    two = [(b'EAONE', b'VALUE1'), (b'SecondEA', b'a longer value 2')]
    sub = [(b'dirEA', b'x')]
    c.createDirectory('share', 'eadir')
    c.createDirectory('share', 'eadir\\sub')
    for name, eas, opts in (('eadir\\two', two, 0x40),
                            ('eadir\\none', [], 0x40),
                            ('eadir\\sub', sub, 1)):
        fid = s.create(tid, name, 0x0012019f | 0x10 | 0x8, 7, opts,
                       1 if opts == 1 else 5, 0)
        if eas:
            st = set_eas(s, tid, fid, ea_chain(eas))
            report(st == 0, 'EAs set on %s (%#x)' % (name, st))
        s.close(tid, fid)
    os.symlink('two', os.path.join(DIR, 'eadir', 'link'))
    local = os.path.join(DIR, 'eadir', 'local')
    open(local, 'w').close()
    os.chmod(local, 0o666)
    os.setxattr(local, 'user.notanea.%s' % SERVER, b'1')
    return {'two': list_sizes(two), 'none': {0}, 'sub': list_sizes(sub),
            'link': list_sizes(two)}


def mode_listing(c, s):
    tid = c.connectTree('share')
    want = make_files(c, s, tid)
    # an xattr outside the EA namespace of each server: not an EA (Samba
    # takes user.* as EAs: there "local" has one, user.notanea.samba)
    want['local'] = {0} if SERVER == 'usmbd' else \
        list_sizes([(b'notanea.samba', b'1')])
    sizes = {}
    for name in sorted(want):
        sizes[name] = info_sizes(s, tid, 'eadir\\' + name, name == 'sub')
        ea, al, full = sizes[name]
        report(ea == full and al == full and full in want[name],
               '%s: FileEaInformation %r, FileAllInformation %r, the EA '
               'list %r bytes (want one of %s)' % (name, ea, al, full,
                                                   sorted(want[name])))
    dfid = s.create(tid, 'eadir', 0x00120089, 7, 1, 1, 0)
    for level, (lname, _) in sorted(LEVELS.items()):
        got = listing(s, tid, dfid, level)
        if not isinstance(got, dict):
            report(False, '%s answers (%s)' % (lname, got))
            continue
        bad = ['%s %r != %r' % (n, got.get(n), sizes[n][0]) for n in
               sorted(want) if got.get(n) != sizes[n][0]]
        report(not bad, '%s EaSize of every entry = FileEaInformation '
               '(%s)' % (lname, ', '.join(bad) or ', '.join(
                   '%s %d' % (n, got[n]) for n in sorted(want))))
    s.close(tid, dfid)
    link_attrs(s, tid)
    c.disconnectTree(tid)


def link_attrs(s, tid):
    """A symlink's entry shows its target's DOS attributes and creation
    time (kept in the target's DOS xattr), as QUERY_INFO through the link
    answers, at every level."""
    ctime, attrs = 130000000000000000, 0x22     # 2012; HIDDEN | ARCHIVE
    fid = s.create(tid, 'eadir\\two', 0x00120189, 7, 0x40, 1, 0)
    st = set_info(s, tid, fid, 4, struct.pack('<QQQQII', ctime, 0, 0, 0,
                                              attrs, 0))
    s.close(tid, fid)
    report(st == 0, 'two: FileBasicInformation set (%#x)' % st)
    dfid = s.create(tid, 'eadir', 0x00120089, 7, 1, 1, 0)
    for level, (lname, _) in sorted(LEVELS.items()):
        got = listing(s, tid, dfid, level, create_attrs)
        report(isinstance(got, dict) and got.get('two') == (ctime, attrs)
               and got.get('link') == (ctime, attrs),
               '%s: the link lists its target\'s creation time and '
               'attributes (%r)' % (lname, got if not isinstance(got, dict)
                                    else {n: got.get(n) for n in
                                          ('two', 'link')}))
    s.close(tid, dfid)


def mode_noea(c, s):
    tid = c.connectTree('noea')
    dfid = s.create(tid, 'eadir', 0x00120089, 7, 1, 1, 0)
    for level, (lname, _) in sorted(LEVELS.items()):
        got = listing(s, tid, dfid, level)
        report(isinstance(got, dict) and got.get('two') == 0 and
               got.get('sub') == 0,
               'ea support = no: %s EaSize 0 (%r)' % (lname, got))
    s.close(tid, dfid)
    ea, al, full = info_sizes(s, tid, 'eadir\\two')
    report(ea == 0 and al == 0 and full == 0,
           'ea support = no: FileEaInformation %r, FileAllInformation %r, '
           'query %r (want 0, 0, NO_EAS_ON_FILE)' % (ea, al, full))
    fid = s.create(tid, 'eadir\\two', 0x0012019f | 0x10, 7, 0x40, 1, 0)
    st = set_eas(s, tid, fid, ea_chain([(b'NEW', b'v')]))
    s.close(tid, fid)
    report(st == STATUS_EAS_NOT_SUPPORTED,
           'ea support = no: a set is EAS_NOT_SUPPORTED (%#x)' % st)
    try:
        fid = s.create(tid, 'eadir\\withea', 0x0012019f, 7, 0x40, 2, 0,
                       createContexts=[ExtA(ea_chain([(b'NEW', b'v')]))])
        s.close(tid, fid)
        st = 0
    except smb3.SessionError as e:
        st = e.get_error_code()
    report(st == STATUS_EAS_NOT_SUPPORTED and
           not os.path.exists(os.path.join(DIR, 'eadir', 'withea')),
           'ea support = no: a create with EAs is EAS_NOT_SUPPORTED and '
           'makes nothing (%#x)' % st)
    c.disconnectTree(tid)


class ExtA:
    """The ExtA create context (MS-SMB2 2.2.13.2.1)."""

    def __init__(self, data):
        self.blob = (struct.pack('<IHHHHI', 0, 16, 4, 0, 24, len(data)) +
                     b'ExtA' + b'\0' * 4 + data)

    def getData(self):
        return self.blob


def mode_foreign(c, s):
    """DIR/foreign, made by easize.sh as bob: "priv" (0600) and "pub"
    (0644) with one EA of 1000 bytes each, "link" -> priv, and "swap",
    which bob's loop keeps replacing (a file with an EA RACE of 1000
    bytes, a symlink to /etc/shadow, one to priv, one to /root) while
    alice lists.  EaSize says what alice may read and nothing more: 0
    for priv and whatever leads to it, never a value of another file."""
    tid = c.connectTree('share')
    fid = s.create(tid, 'foreign', 0x00120089, 7, 1, 1, 0)
    want = {'priv': 0, 'link': 0, 'pub': len(ea_chain([(b'PUBNAME',
                                                          b'x' * 1000)]))}
    race_ok = {0, len(ea_chain([(b'RACE', b'x' * 1000)]))}
    seen, n, end = set(), 0, time.time() + float(os.environ.get(
        'EASIZE_RACE_S', '2'))
    while True:
        for level in sorted(LEVELS):
            got = listing(s, tid, fid, level)
            if isinstance(got, str):
                report(False, 'foreign listing %s: %s' % (level, got))
                return
            if n == 0:
                report({k: got.get(k) for k in want} == want,
                       "%s: EaSize of bob's 0600 file and a link to it 0, "
                       "of his 0644 one its EA (%s)" % (LEVELS[level][0],
                                                        got))
            if 'swap' in got:
                seen.add(got['swap'])
        n += 1
        if time.time() >= end:
            break
    report(seen <= race_ok, 'an entry swapped for symlinks while listed '
           '(%d listings): EaSize %s, only the file\'s own or 0' %
           (n * len(LEVELS), sorted(seen)))
    s.close(tid, fid)


def main():
    c, s = login()
    mode_listing(c, s)
    mode_noea(c, s)
    if os.path.isdir(os.path.join(DIR, 'foreign')):
        mode_foreign(c, s)
    c.logoff()
    return 1 if FAILED else 0


if __name__ == '__main__':
    sys.exit(main())
