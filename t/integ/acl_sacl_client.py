#!/usr/bin/python3
"""SACLs (t/integ/acl.sh, HACKING.md "Security descriptors").

usage: acl_sacl_client.py PORT ADMIN ADMINPW ALICEPW SHAREDIR
  ADMIN is a member of `server admin group` (SeSecurityPrivilege); alice
  is not.  alice owns sacl.txt (made here); the admin sets its SACL (audit,
  mandatory label, resource attribute and scoped policy ACEs), which reads
  back byte-identical to ACCESS_SYSTEM_SECURITY handles only.
Prints "ok ..." / "FAIL ..." lines, one per check.
"""
import os
import pwd
import struct
import sys

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT = int(sys.argv[1])
ADMIN, ADMINPW, ALICEPW = sys.argv[2], sys.argv[3], sys.argv[4]
SHAREDIR = sys.argv[5]

READ_CONTROL = 0x00020000
WRITE_DAC = 0x00040000
ACCESS_SYSTEM_SECURITY = 0x01000000
MAXIMUM_ALLOWED = 0x02000000
FILE_READ_ATTRIBUTES = 0x80
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_PRIVILEGE_NOT_HELD = 0xC0000061
SACL_PRESENT = 0x0010
FAILED = 0


def report(good, what):
    global FAILED
    if not good:
        FAILED += 1
    print('%s %s' % ('ok' if good else 'FAIL', what))


def sid(auth, *subs):
    return struct.pack('<BB6s', 1, len(subs), auth.to_bytes(6, 'big')) + \
        b''.join(struct.pack('<I', x) for x in subs)


def ace(typ, flags, mask, body):
    body += b'\0' * (-len(body) % 4)
    return struct.pack('<BBHI', typ, flags, 8 + len(body), mask) + body


def claim_blob():
    """A CLAIM_SECURITY_ATTRIBUTE_RELATIVE_V1 (MS-DTYP 2.4.10.1): Dept=7."""
    name = 'Dept\0'.encode('utf-16-le')
    hdr = struct.pack('<IHHII', 20, 0x0001, 0, 0, 1)   # INT64, one value
    voff = 20 + len(name) + 4
    return hdr[:16] + struct.pack('<I', voff) + name + \
        b'\0' * (voff - 20 - len(name)) + struct.pack('<q', 7)


def sacl_bytes():
    aces = [
        # SYSTEM_AUDIT_ACE: Everyone, success and failure, full access
        ace(0x02, 0xC3, 0x001F01FF, sid(1, 0)),
        # SYSTEM_MANDATORY_LABEL_ACE: Medium (S-1-16-8192), NO_WRITE_UP
        ace(0x11, 0x00, 0x00000001, sid(16, 8192)),
        # SYSTEM_RESOURCE_ATTRIBUTE_ACE: Everyone, a claim after the SID
        ace(0x12, 0x00, 0x00000000, sid(1, 0) + claim_blob()),
        # SYSTEM_SCOPED_POLICY_ID_ACE: S-1-17-1 (a central policy id)
        ace(0x13, 0x00, 0x00000000, sid(17, 1)),
    ]
    body = b''.join(aces)
    return struct.pack('<BBHHH', 2, 0, 8 + len(body), len(aces), 0) + body


def sd_sacl_only(sacl):
    """Header (self-relative, SACL present) and the SACL at 20."""
    return struct.pack('<BBHIIII', 1, 0, 0x8000 | SACL_PRESENT, 0, 0, 20,
                       0) + sacl


class RawContext:
    """A create context given as its name and data."""

    def __init__(self, name, data):
        self.blob = (struct.pack('<IHHHHI', 0, 16, len(name), 0, 24,
                                 len(data)) + name +
                     b'\0' * (8 - len(name)) + data)

    def getData(self):
        return self.blob


def login(user, pw):
    c = SMBConnection('127.0.0.1', '127.0.0.1', sess_port=PORT)
    c.login(user, pw)
    return c, c._SMBConnection, c.connectTree('share')


def open_status(s, tid, name, access, disp=1):
    try:
        fid = s.create(tid, name, access, 7, 0, disp, 0x80)
        return 0, fid
    except smb3.SessionError as e:
        return e.get_error_code(), None


def query(s, tid, fid, addl):
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_QUERY_INFO
    p['TreeID'] = tid
    q = s3.SMB2QueryInfo()
    q['FileID'] = fid
    q['InfoType'] = s3.SMB2_0_INFO_SECURITY
    q['FileInfoClass'] = 0
    q['OutputBufferLength'] = 65536
    q['AdditionalInformation'] = addl
    q['InputBufferOffset'] = 0
    q['Buffer'] = b'\x00'
    p['Data'] = q
    a = s.recvSMB(s.sendSMB(p))
    if a['Status'] == 0:
        return 0, bytes(s3.SMB2QueryInfo_Response(a['Data'])['Buffer'])
    return a['Status'], b''


def set_sd(s, tid, fid, addl, blob):
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_SET_INFO
    p['TreeID'] = tid
    r = s3.SMB2SetInfo()
    r['InfoType'] = s3.SMB2_0_INFO_SECURITY
    r['FileInfoClass'] = 0
    r['AdditionalInformation'] = addl
    r['BufferLength'] = len(blob)
    r['FileID'] = fid
    r['Buffer'] = blob
    p['Data'] = r
    return s.recvSMB(s.sendSMB(p))['Status']


def no_sacl(sd):
    ctl, osacl = struct.unpack_from('<H', sd, 2)[0], \
        struct.unpack_from('<I', sd, 12)[0]
    return not (ctl & SACL_PRESENT) and osacl == 0


SACL = sacl_bytes()
WANT = sd_sacl_only(SACL)

# alice makes the file: nothing stored yet
ac, a, atid = login('alice', ALICEPW)
fid = a.create(atid, 'sacl.txt', 0x12019F, 7, 0x40, 5, 0x80)
a.close(atid, fid)

dc, d, dtid = login(ADMIN, ADMINPW)
st, fid = open_status(d, dtid, 'sacl.txt',
                      ACCESS_SYSTEM_SECURITY | READ_CONTROL)
report(st == 0, 'admin: ACCESS_SYSTEM_SECURITY open granted (0x%x)' % st)
if fid is not None:
    st = set_sd(d, dtid, fid, 8, WANT)
    report(st == 0, 'admin: SET of the SACL of alice\'s file (0x%x)' % st)
    st, got = query(d, dtid, fid, 8)
    report(st == 0 and got == WANT,
           'admin: SACL reads back byte-identical (%s)' % got.hex())
    st, got = query(d, dtid, fid, 0xF)
    report(st == 0 and SACL in got and not no_sacl(got),
           'admin: the whole descriptor carries the SACL')
    d.close(dtid, fid)
# MAXIMUM_ALLOWED never adds it, and a handle without it sees none
st, fid = open_status(d, dtid, 'sacl.txt', MAXIMUM_ALLOWED)
if fid is not None:
    st2, _ = query(d, dtid, fid, 8)
    report(st2 == STATUS_ACCESS_DENIED,
           'admin, MAXIMUM_ALLOWED handle: SACL query ACCESS_DENIED (0x%x)'
           % st2)
    st2, got = query(d, dtid, fid, 7)
    report(st2 == 0 and no_sacl(got) and SACL not in got,
           'admin, MAXIMUM_ALLOWED handle: owner/group/DACL query, no SACL')
    d.close(dtid, fid)
else:
    report(False, 'admin: MAXIMUM_ALLOWED open (0x%x)' % st)

# alice, no privilege
for acc, what in ((ACCESS_SYSTEM_SECURITY | READ_CONTROL, 'by name'),
                  (ACCESS_SYSTEM_SECURITY | MAXIMUM_ALLOWED,
                   'with MAXIMUM_ALLOWED')):
    st, fid = open_status(a, atid, 'sacl.txt', acc)
    report(st == STATUS_PRIVILEGE_NOT_HELD,
           'alice: ACCESS_SYSTEM_SECURITY %s: PRIVILEGE_NOT_HELD (0x%x)'
           % (what, st))
    if fid is not None:
        a.close(atid, fid)
st, fid = open_status(a, atid, 'new-sacl.txt',
                      ACCESS_SYSTEM_SECURITY | READ_CONTROL, disp=2)
report(st == STATUS_PRIVILEGE_NOT_HELD,
       'alice: a create asking ACCESS_SYSTEM_SECURITY: PRIVILEGE_NOT_HELD '
       '(0x%x)' % st)
st, fid = open_status(a, atid, 'sacl.txt', READ_CONTROL | WRITE_DAC)
if fid is not None:
    st, _ = query(a, atid, fid, 8)
    report(st == STATUS_ACCESS_DENIED,
           'alice: SACL query on a normal handle: ACCESS_DENIED (0x%x)' % st)
    st, got = query(a, atid, fid, 7)
    report(st == 0 and no_sacl(got) and SACL not in got,
           'alice: the DACL query of the admin-set file shows no SACL')
    st = set_sd(a, atid, fid, 8, WANT)
    report(st == STATUS_ACCESS_DENIED,
           'alice: SACL set on a normal handle: ACCESS_DENIED (0x%x)' % st)
    # the owner changes her DACL: the stored SACL stays
    st, got = query(a, atid, fid, 4)
    st = set_sd(a, atid, fid, 4, got)
    report(st == 0, 'alice: sets her DACL over the stored SACL (0x%x)' % st)
    a.close(atid, fid)
else:
    report(False, 'alice: READ_CONTROL|WRITE_DAC open (0x%x)' % st)

st, fid = open_status(d, dtid, 'sacl.txt',
                      ACCESS_SYSTEM_SECURITY | READ_CONTROL)
if fid is not None:
    st, got = query(d, dtid, fid, 8)
    report(st == 0 and got == WANT,
           'admin: the SACL kept across alice\'s DACL change')
    st, got = query(d, dtid, fid, 4)
    report(st == 0 and no_sacl(got), 'admin: a DACL query shows no SACL')
    # a NULL SACL (present, no ACL) clears it
    st = set_sd(d, dtid, fid, 8, struct.pack('<BBHIIII', 1, 0,
                0x8000 | SACL_PRESENT, 0, 0, 0, 0))
    st2, got = query(d, dtid, fid, 8)
    report(st == 0 and st2 == 0 and SACL not in got,
           'admin: a NULL SACL replaces it (%s)' % got.hex())
    st = set_sd(d, dtid, fid, 8, WANT)
    d.close(dtid, fid)
# a SecD create context with a SACL: the admin's new file keeps it,
# alice's create is refused
secd_sacl = struct.pack('<BBHHH', 2, 0, 8 + 20, 1, 0) + \
    ace(0x02, 0x40, 0x00120089, sid(1, 0))
secd = struct.pack('<BBHIIII', 1, 0, 0x8000 | SACL_PRESENT, 0, 0, 20, 0) + \
    secd_sacl
try:
    fid = d.create(dtid, 'secd.txt', ACCESS_SYSTEM_SECURITY | 0x12019F, 7,
                   0x40, 2, 0x80, createContexts=[RawContext(b'SecD', secd)])
    st, got = query(d, dtid, fid, 8)
    report(st == 0 and got == secd,
           'admin: a SecD context\'s SACL is stored as given (%s)' % got.hex())
    d.close(dtid, fid)
except smb3.SessionError as e:
    report(False, 'admin: create with a SecD SACL (0x%x)' % e.get_error_code())
try:
    fid = a.create(atid, 'secd-alice.txt', 0x12019F, 7, 0x40, 2, 0x80,
                   createContexts=[RawContext(b'SecD', secd)])
    a.close(atid, fid)
    st = 0
except smb3.SessionError as e:
    st = e.get_error_code()
report(st == STATUS_PRIVILEGE_NOT_HELD,
       'alice: a SecD context with a SACL: PRIVILEGE_NOT_HELD (0x%x)' % st)
# a plain audit ACE on a file of its own, for smbcacls to show
fid = d.create(dtid, 'audit.txt', ACCESS_SYSTEM_SECURITY | 0x12019F, 7,
               0x40, 5, 0x80)
plain = ace(0x02, 0xC0, 0x001F01FF, sid(1, 0))
st = set_sd(d, dtid, fid, 8, sd_sacl_only(
    struct.pack('<BBHHH', 2, 0, 8 + len(plain), 1, 0) + plain))
report(st == 0, 'admin: SACL of its own new file (0x%x)' % st)
d.close(dtid, fid)

# --- SACL inheritance (MS-DTYP 2.5.3.4) -------------------------------
SACL_AUTO = 0x0800          # SE_SACL_AUTO_INHERITED
SACL_AUTO_REQ = 0x0200
SACL_PROT = 0x2000
OI, CI, NP, IO, INH, SUCC, FAIL = 0x01, 0x02, 0x04, 0x08, 0x10, 0x40, 0x80
EVERYONE, CO = sid(1, 0), sid(3, 0)
AU = sid(5, 11)
LOW, MEDIUM = sid(16, 4096), sid(16, 8192)


def acl(aces):
    body = b''.join(aces)
    return struct.pack('<BBHHH', 2, 0, 8 + len(body), len(aces), 0) + body


def sd_sacl(sacl, ctl=0):
    return struct.pack('<BBHIIII', 1, 0, 0x8000 | SACL_PRESENT | ctl, 0, 0,
                       20, 0) + sacl


def parent_aces():
    return [
        ace(0x02, OI | CI | SUCC, 0x001F01FF, EVERYONE),
        ace(0x02, OI | CI | IO | FAIL, 0x10000000, CO),     # GENERIC_ALL
        ace(0x11, OI | CI, 0x00000001, MEDIUM),
        ace(0x02, OI | NP | SUCC, 0x00120089, AU),
        ace(0x02, SUCC, 0x00120089, EVERYONE),               # not inherited
        ace(0x12, OI | CI, 0, EVERYONE + claim_blob()),
    ]


def want_file(inh, me):
    return [
        ace(0x02, inh | SUCC, 0x001F01FF, EVERYONE),
        ace(0x02, inh | FAIL, 0x001F01FF, me),
        ace(0x11, inh, 0x00000001, MEDIUM),
        ace(0x02, inh | SUCC, 0x00120089, AU),
        ace(0x12, inh, 0, EVERYONE + claim_blob()),
    ]


def want_dir(inh, me):
    return [
        ace(0x02, inh | OI | CI | SUCC, 0x001F01FF, EVERYONE),
        ace(0x02, inh | FAIL, 0x001F01FF, me),
        ace(0x02, inh | OI | CI | IO | FAIL, 0x10000000, CO),
        ace(0x11, inh | OI | CI, 0x00000001, MEDIUM),
        ace(0x12, inh | OI | CI, 0, EVERYONE + claim_blob()),
    ]


def mkdir(conn, tid, name):
    conn.close(tid, conn.create(tid, name, 0x12019F, 7, 1, 2, 0x10))


def admin_sacl(name, directory=False):
    fid = d.create(dtid, name, ACCESS_SYSTEM_SECURITY | READ_CONTROL, 7,
                   1 if directory else 0x40, 1, 0)
    st, got = query(d, dtid, fid, 8)
    d.close(dtid, fid)
    return st, got


for pname, pctl, inh in (('sdir', SACL_AUTO | SACL_AUTO_REQ, INH),
                         ('sdir2', 0, 0)):
    mkdir(a, atid, pname)
    fid = d.create(dtid, pname, ACCESS_SYSTEM_SECURITY | READ_CONTROL, 7, 1,
                   1, 0)
    st = set_sd(d, dtid, fid, 8, sd_sacl(acl(parent_aces()), pctl))
    d.close(dtid, fid)
    report(st == 0, 'admin: an inheritable SACL on %s (0x%x)' % (pname, st))
    # alice (no privilege) creates below it: she inherits the SACL
    try:
        a.close(atid, a.create(atid, pname + '\\f.txt', 0x12019F, 7, 0x40,
                               2, 0x80))
        mkdir(a, atid, pname + '\\sub')
        st = 0
    except smb3.SessionError as e:
        st = e.get_error_code()
    report(st == 0, 'alice: creates a file and a directory in %s (0x%x)'
           % (pname, st))
    os.chmod(SHAREDIR + '/' + pname, 0o777)     # the admin creates too
    me = sid(22, 1, os.stat(SHAREDIR + '/' + pname + '/f.txt').st_uid)
    ctl = SACL_PRESENT | (SACL_AUTO if inh else 0)
    for child, want in (('f.txt', want_file(inh, me)),
                        ('sub', want_dir(inh, me))):
        st, got = admin_sacl(pname + '\\' + child, child == 'sub')
        exp = sd_sacl(acl(want), ctl & ~SACL_PRESENT)
        report(st == 0 and got == exp,
               '%s\\%s: the inherited SACL as Windows computes it%s'
               % (pname, child, '' if got == exp else '\n   got  %s\n'
                  '   want %s' % (got.hex(), exp.hex())))
    # a grandchild below sub: CREATOR OWNER's inherit-only copy passes on
    try:
        a.close(atid, a.create(atid, pname + '\\sub\\g.txt', 0x12019F, 7,
                               0x40, 2, 0x80))
        st, got = admin_sacl(pname + '\\sub\\g.txt')
        exp = sd_sacl(acl([
            ace(0x02, inh | SUCC, 0x001F01FF, EVERYONE),
            ace(0x02, inh | FAIL, 0x001F01FF, me),
            ace(0x11, inh, 0x00000001, MEDIUM),
            ace(0x12, inh, 0, EVERYONE + claim_blob())]), ctl & ~SACL_PRESENT)
        report(st == 0 and got == exp,
               '%s\\sub\\g.txt: inherited two levels down (%s)'
               % (pname, got.hex()))
    except smb3.SessionError as e:
        report(False, '%s\\sub\\g.txt (0x%x)' % (pname, e.get_error_code()))

# a parent passing on both its DACL and its SACL: alice's child gets both
mkdir(a, atid, 'sdir3')
dacl_ace = ace(0x00, OI | CI, 0x001F01FF, EVERYONE)
fid = a.create(atid, 'sdir3', READ_CONTROL | WRITE_DAC, 7, 1, 1, 0)
st = set_sd(a, atid, fid, 4, struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0,
                                          20) + acl([dacl_ace]))
a.close(atid, fid)
fid = d.create(dtid, 'sdir3', ACCESS_SYSTEM_SECURITY | READ_CONTROL, 7, 1, 1,
               0)
st2 = set_sd(d, dtid, fid, 8, sd_sacl(acl(parent_aces()),
                                      SACL_AUTO | SACL_AUTO_REQ))
d.close(dtid, fid)
try:
    a.close(atid, a.create(atid, 'sdir3\\f.txt', 0x12019F, 7, 0x40, 2, 0x80))
    st3 = 0
except smb3.SessionError as e:
    st3 = e.get_error_code()
report(st == 0 and st2 == 0 and st3 == 0,
       'sdir3: a DACL and a SACL that pass on, alice creates below '
       '(0x%x 0x%x 0x%x)' % (st, st2, st3))
me = sid(22, 1, os.stat(SHAREDIR + '/sdir3/f.txt').st_uid)
st, got = admin_sacl('sdir3\\f.txt')
report(st == 0 and got == sd_sacl(acl(want_file(INH, me)), SACL_AUTO),
       'sdir3\\f.txt: the inherited SACL beside the inherited DACL')
fid = a.create(atid, 'sdir3\\f.txt', READ_CONTROL, 7, 0x40, 1, 0)
st, got = query(a, atid, fid, 4)
a.close(atid, fid)
report(st == 0 and got == struct.pack('<BBHIIII', 1, 0, 0x8004, 0, 0, 0, 20) +
       acl([ace(0x00, 0, 0x001F01FF, EVERYONE)]),
       'sdir3\\f.txt: the inherited DACL (%s)' % got.hex())

# a SecD context's SACL (the admin's) and the inherited one (MS-DTYP
# 2.5.3.4.2): explicit first, then the parent's below an auto-inherited
# parent; protected, only the resource attribute ACE gets through
mine = ace(0x02, SUCC, 0x00120089, EVERYONE)
dsid = sid(22, 1, pwd.getpwnam(ADMIN).pw_uid)
for name, ctl, want, wctl in (
        ('sdir\\merge.txt', 0, [mine] + want_file(INH, dsid), SACL_AUTO),
        ('sdir\\prot.txt', SACL_PROT,
         [mine, ace(0x12, INH, 0, EVERYONE + claim_blob())],
         SACL_AUTO | SACL_PROT),
        ('sdir2\\merge.txt', 0, [mine], 0)):
    try:
        fid = d.create(dtid, name, ACCESS_SYSTEM_SECURITY | 0x12019F, 7,
                       0x40, 2, 0x80, createContexts=[
                           RawContext(b'SecD', sd_sacl(acl([mine]), ctl))])
        st, got = query(d, dtid, fid, 8)
        d.close(dtid, fid)
        exp = sd_sacl(acl(want), wctl)
        report(st == 0 and got == exp,
               'admin: %s: SecD SACL with the inherited one%s'
               % (name, '' if got == exp else '\n   got  %s\n   want %s'
                  % (got.hex(), exp.hex())))
    except smb3.SessionError as e:
        report(False, 'admin: %s (0x%x)' % (name, e.get_error_code()))

# --- labels, resource attributes, scoped policy ids (MS-DTYP 2.4.7) -----
LABEL, ATTRIBUTE, SCOPE, BACKUP = 0x10, 0x20, 0x40, 0x10000
WRITE_OWNER = 0x00080000
A_AUDIT = ace(0x02, 0xC3, 0x001F01FF, sid(1, 0))
A_LABEL = ace(0x11, 0x00, 0x00000001, MEDIUM)
A_ATTR = ace(0x12, 0x00, 0x00000000, sid(1, 0) + claim_blob())
A_SCOPE = ace(0x13, 0x00, 0x00000000, sid(17, 1))
A_LOW = ace(0x11, 0x00, 0x00000001, LOW)


def admin_reads(name):
    st, got = admin_sacl(name)
    return got if st == 0 else ('0x%x' % st).encode()


report(admin_reads('sacl.txt') == WANT, 'sacl.txt holds the four-ACE SACL')
st, fid = open_status(a, atid, 'sacl.txt', READ_CONTROL)
if fid is not None:
    for addl, want, what in (
            (LABEL, sd_sacl(acl([A_LABEL])), 'the label ACE alone'),
            (ATTRIBUTE, sd_sacl(acl([A_ATTR])), 'the resource attribute alone'),
            (LABEL | ATTRIBUTE, sd_sacl(acl([A_LABEL, A_ATTR])), 'both')):
        st, got = query(a, atid, fid, addl)
        report(st == 0 and got == want,
               'alice, READ_CONTROL: query 0x%x gives %s (%s)'
               % (addl, what, got.hex()))
    for addl in (SCOPE, BACKUP, 8):
        st, _ = query(a, atid, fid, addl)
        report(st == STATUS_ACCESS_DENIED,
               'alice, READ_CONTROL: query 0x%x ACCESS_DENIED (0x%x)'
               % (addl, st))
    st = set_sd(a, atid, fid, LABEL, sd_sacl(acl([A_LOW])))
    report(st == STATUS_ACCESS_DENIED,
           'alice, no WRITE_OWNER: label set ACCESS_DENIED (0x%x)' % st)
    a.close(atid, fid)
st, fid = open_status(a, atid, 'sacl.txt',
                      READ_CONTROL | WRITE_DAC | WRITE_OWNER)
if fid is not None:
    st = set_sd(a, atid, fid, LABEL, sd_sacl(acl([A_LOW])))
    got = admin_reads('sacl.txt')
    exp = sd_sacl(acl([A_AUDIT, A_ATTR, A_SCOPE, A_LOW]))
    report(st == 0 and got == exp,
           'alice (owner, WRITE_OWNER): sets a label; the rest of the SACL '
           'stays (%s)' % got.hex())
    st, got = query(a, atid, fid, LABEL)
    report(st == 0 and got == sd_sacl(acl([A_LOW])),
           'alice: reads her label back (%s)' % got.hex())
    st = set_sd(a, atid, fid, SCOPE, sd_sacl(acl([])))
    report(st == STATUS_ACCESS_DENIED,
           'alice: scope set without ACCESS_SYSTEM_SECURITY: ACCESS_DENIED '
           '(0x%x)' % st)
    st = set_sd(a, atid, fid, ATTRIBUTE, sd_sacl(acl([])))
    got = admin_reads('sacl.txt')
    report(st == 0 and got == sd_sacl(acl([A_AUDIT, A_SCOPE, A_LOW])),
           'alice (WRITE_DAC): clears the resource attributes only (%s)'
           % got.hex())
    st = set_sd(a, atid, fid, LABEL, sd_sacl(acl([])))
    got = admin_reads('sacl.txt')
    report(st == 0 and got == sd_sacl(acl([A_AUDIT, A_SCOPE])),
           'alice: clears her label; audit and scope stay (%s)' % got.hex())
    a.close(atid, fid)
else:
    report(False, 'alice: WRITE_OWNER|WRITE_DAC open of sacl.txt (0x%x)' % st)

# a label set that brings none on a file with nothing stored stores nothing
fid = a.create(atid, 'nolabel.txt', READ_CONTROL | WRITE_OWNER | 0x12019F, 7,
               0x40, 5, 0x80)
st = set_sd(a, atid, fid, LABEL, sd_sacl(acl([])))
a.close(atid, fid)
try:
    os.getxattr(SHAREDIR + '/nolabel.txt', 'security.usmbd.sd')
    stored = True
except OSError:
    stored = False
report(st == 0 and not stored,
       'alice: an empty label set on a plain file succeeds and stores '
       'nothing (0x%x)' % st)

# a SACL with no label is left as it was by a label set that brings none
before = admin_reads('audit.txt')
fid = d.create(dtid, 'audit.txt', ACCESS_SYSTEM_SECURITY | READ_CONTROL |
               WRITE_OWNER, 7, 0x40, 1, 0)
st = set_sd(d, dtid, fid, LABEL, sd_sacl(acl([ace(0x02, 0x40, 0x1, AU)])))
st2, got = query(d, dtid, fid, 8)
report(st == 0 and got == before,
       'admin: a label set without a label leaves a label-less SACL as it '
       'was (%s)' % got.hex())
A_AUDIT_PLAIN = ace(0x02, 0xC0, 0x001F01FF, sid(1, 0))     # audit.txt's
st = set_sd(d, dtid, fid, LABEL, sd_sacl(acl([A_LOW])))
st2, got = query(d, dtid, fid, 8)
report(st == 0 and got == sd_sacl(acl([A_AUDIT_PLAIN, A_LOW])),
       'admin: a label added after the audit ACE (%s)' % got.hex())
st = set_sd(d, dtid, fid, LABEL, sd_sacl(acl([])))
st2, got = query(d, dtid, fid, 8)
report(st == 0 and got == before,
       'admin: the label removed, the SACL byte-identical again')
# BACKUP: everything, for who holds READ_CONTROL and ACCESS_SYSTEM_SECURITY
st, got = query(d, dtid, fid, BACKUP)
owner_off = struct.unpack_from('<I', got, 4)[0] if st == 0 else 0
report(st == 0 and owner_off != 0 and A_AUDIT_PLAIN in got and A_LOW not in got,
       'admin: BACKUP query gives owner, group, DACL and SACL (0x%x)' % st)
d.close(dtid, fid)

sys.exit(1 if FAILED else 0)
