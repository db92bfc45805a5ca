#!/usr/bin/env python3
"""The lsarpc pipe (worker/pipe_lsarpc.c) with impacket's LSAT/LSAD
encoders, the calls rpcclient does not make: LsarOpenPolicy2,
LsarLookupSids2, LsarLookupNames2 and LsarLookupNames3; 1,000 unknown
names answered within the lookup budget; a guest and an
anonymous session refused; hostile request stubs answered with a fault
or an error, the pipe and the server going on.

usage: lsa_client.py PORT USER PASSWORD NETBIOS UID GID
Prints "ok ..." / "FAIL ..." lines."""
import struct
import sys
import time

from impacket.dcerpc.v5 import lsad, lsat, transport
from impacket.dcerpc.v5.dtypes import RPC_SID
from impacket.dcerpc.v5.rpcrt import DCERPCException

PORT = int(sys.argv[1])
USER, PW, NETBIOS = sys.argv[2], sys.argv[3], sys.argv[4]
UID, GID = int(sys.argv[5]), int(sys.argv[6])
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_SOME_NOT_MAPPED = 0x00000107
STATUS_NONE_MAPPED = 0xC0000073


def report(good, what):
    print('%s %s' % ('ok' if good else 'FAIL', what), flush=True)


def bind(user, pw):
    t = transport.SMBTransport('127.0.0.1', PORT, r'\lsarpc', user, pw)
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(lsat.MSRPC_UUID_LSAT)
    return dce


def code(e):
    return e.get_error_code() if hasattr(e, 'get_error_code') else None


def sid_str(sid):
    return sid.formatCanonical()


def lookups():
    dce = bind(USER, PW)
    pol = lsad.hLsarOpenPolicy2(dce, lsad.POLICY_LOOKUP_NAMES)['PolicyHandle']
    sids = ['S-1-22-1-%d' % UID, 'S-1-22-2-%d' % GID, 'S-1-1-0',
            'S-1-5-32-544', 'S-1-22-1-4000000000']
    try:
        r = lsat.hLsarLookupSids2(dce, pol, sids)
        st = r['ErrorCode']
    except DCERPCException as e:
        r, st = e.get_packet(), code(e)
    doms = [d['Name'] for d in r['ReferencedDomains']['Domains']]
    got = [(n['Use'], n['Name'],
            doms[n['DomainIndex']] if n['DomainIndex'] >= 0 else None)
           for n in r['TranslatedNames']['Names']]
    want = [(1, USER, 'Unix User'), (2, USER, 'Unix Group'),
            (5, 'Everyone', ''), (4, 'Administrators', 'BUILTIN'),
            (8, 'S-1-22-1-4000000000', None)]   # unknown: its string, as Windows
    report(got == want and st == STATUS_SOME_NOT_MAPPED and
           r['MappedCount'] == 4,
           'LsarLookupSids2: %r (status %#x, %d mapped)' %
           (got, st or 0, r['MappedCount']))

    names = [USER, 'Unix Group\\' + USER, NETBIOS + '\\' + USER.upper(),
             'NT AUTHORITY\\Authenticated Users', 'nosuchuser']
    for level, fn in ((2, lsat.hLsarLookupNames2),
                      (3, lsat.hLsarLookupNames3)):
        try:
            r = fn(dce, pol, names)
            st = r['ErrorCode']
        except DCERPCException as e:
            r, st = e.get_packet(), code(e)
        doms = {i: (d['Name'], sid_str(d['Sid'])) for i, d in
                enumerate(r['ReferencedDomains']['Domains'])}
        got = []
        for s in r['TranslatedSids']['Sids']:
            if level == 3:
                sid = sid_str(s['Sid']) if s['Sid'] else None
            elif s['DomainIndex'] >= 0:
                sid = '%s-%d' % (doms[s['DomainIndex']][1], s['RelativeId'])
            else:
                sid = None
            got.append((s['Use'], sid))
        want = [(1, 'S-1-22-1-%d' % UID), (2, 'S-1-22-2-%d' % GID),
                (1, 'S-1-22-1-%d' % UID), (5, 'S-1-5-11'), (8, None)]
        report(got == want and st == STATUS_SOME_NOT_MAPPED,
               'LsarLookupNames%d: %r (status %#x)' % (level, got, st or 0))
    try:
        r = lsat.hLsarLookupNames3(dce, pol, ['nosuchuser', 'nobody\\x'])
        st = r['ErrorCode']
    except DCERPCException as e:
        st = code(e)
    report(st == STATUS_NONE_MAPPED,
           'nothing mapped: STATUS_NONE_MAPPED (%#x)' % (st or 0))
    hostile(dce, pol)
    lsad.hLsarClose(dce, pol)
    dce.disconnect()


def raw(dce, opnum, stub):
    """The fault or NTSTATUS a raw request stub gets."""
    try:
        dce.call(opnum, stub)
        a = dce.recv()
        return 'status %#x' % struct.unpack_from('<I', a, len(a) - 4)[0]
    except DCERPCException as e:
        return 'fault %s' % e
    except Exception as e:  # noqa: a broken pipe would be a failure
        return 'error %r' % e


def hostile(dce, pol):
    h = pol.getData() if hasattr(pol, 'getData') else bytes(pol)
    sid = struct.pack('<IBB6sII', 2, 1, 2, b'\0\0\0\0\0\x16', 1, UID)
    good = (h + struct.pack('<II', 1, 0x20000) + struct.pack('<II', 1, 0x20004)
            + sid + struct.pack('<IIHxxI', 0, 0, 1, 0))
    cases = {
        'truncated': good[:len(good) - 9],
        'count past the array': h + struct.pack('<II', 900, 0x20000) +
        struct.pack('<II', 900, 0x20004) + sid,
        'a SID whose count lies': h + struct.pack('<II', 1, 0x20000) +
        struct.pack('<II', 1, 0x20004) +
        struct.pack('<IBB6sII', 15, 1, 15, b'\0' * 6, 1, 2),
        'a million SIDs': h + struct.pack('<II', 1000000, 0x20000) +
        struct.pack('<I', 1000000),
    }
    for what, stub in cases.items():
        a = raw(dce, 15, stub)
        report(a.startswith('fault'), 'LsarLookupSids, %s: %s' % (what, a))
    a = raw(dce, 15, bytes(20) + good[20:])
    report(a == 'status %#x' % 0xC0000008,
           'LsarLookupSids with a handle never given: INVALID_HANDLE (%s)' % a)
    names = (h + struct.pack('<I', 2) + struct.pack('<I', 2) +
             struct.pack('<HHI', 10, 10, 0x20000) +
             struct.pack('<HHI', 4, 2, 0x20004) +
             struct.pack('<III', 5, 0, 5) + 'alice'.encode('utf-16le') +
             b'\0\0' + struct.pack('<III', 1, 0, 2) + b'a\0b\0' +
             struct.pack('<IIHxxI', 0, 0, 1, 0))
    a = raw(dce, 14, names)
    report(a.startswith('fault'),
           'LsarLookupNames, a Length over its MaximumLength: %s' % a)
    r = lsat.hLsarLookupSids2(dce, pol, ['S-1-22-1-%d' % UID])
    report(r['TranslatedNames']['Names'][0]['Name'] == USER,
           'the pipe answers after the hostile stubs')


def refused(user, pw, what):
    try:
        dce = bind(user, pw)
    except Exception as e:  # noqa
        report(False, '%s binds to lsarpc (%r)' % (what, e))
        return
    try:
        lsad.hLsarOpenPolicy2(dce, lsad.POLICY_LOOKUP_NAMES)
        st = 0
    except DCERPCException as e:
        st = code(e)
    report(st == STATUS_ACCESS_DENIED,
           '%s: LsarOpenPolicy2 ACCESS_DENIED (%#x)' % (what, st or 0))
    # the fixed handle does not help: every call judges its caller
    h = bytes(4) + b'usmbd-lsa-policy'
    a = raw(dce, 15, h + struct.pack('<II', 1, 0x20000) +
            struct.pack('<II', 1, 0x20004) +
            struct.pack('<IBB6sII', 2, 1, 2, b'\0\0\0\0\0\x16', 1, UID) +
            struct.pack('<IIHxxI', 0, 0, 1, 0))
    report(a == 'status %#x' % STATUS_ACCESS_DENIED,
           '%s: LsarLookupSids with the policy handle forged: '
           'ACCESS_DENIED (%s)' % (what, a))
    dce.disconnect()


def costly():
    """1,000 unknown names, each up to four NSS lookups: the worker's
    lookups for one call stop after 1 s (worker/pipe_lsarpc.c
    LSA_BUDGET_MS), and the pipe's runs of the call with a larger buffer
    do not look them up again (6 s here before, 2.3 s a run)."""
    dce = bind(USER, PW)
    pol = lsad.hLsarOpenPolicy2(dce, lsad.POLICY_LOOKUP_NAMES)['PolicyHandle']
    names = ['NoSuchAccount%04d' % i for i in range(1000)]
    t0 = time.time()
    try:
        lsat.hLsarLookupNames3(dce, pol, names)
        st = 0
    except DCERPCException as e:
        st = code(e)
    took = time.time() - t0
    report(st == STATUS_NONE_MAPPED and took < 2.0,
           'LsarLookupNames3 of 1,000 unknown names: NONE_MAPPED in %.2f s '
           '(under 2 s: one call\'s lookups are bounded)' % took)
    r = lsat.hLsarLookupNames3(dce, pol, [USER])
    report(r['MappedCount'] == 1, 'the pipe answers the next call')
    dce.disconnect()


if __name__ == '__main__':
    lookups()
    costly()
    refused('', '', 'an anonymous session')
    refused('nosuchguestuser', 'x', 'a guest session')
