#!/usr/bin/env python3
"""Writes the seeds of t/fuzz/fuzz_createctx.c into DIR (default
t/fuzz/corpus/createctx): valid chains of every context the worker reads,
odd alignments, overlapping offsets, a NextEntryOffset loop, behind the
target's 5-byte prefix (connection byte, CreateContextsOffset, Length).
Not a fuzz target (no fuzz_ prefix).

    python3 t/fuzz/gen_createctx_seeds.py t/fuzz/corpus/createctx
"""
import os
import struct
import sys

# byte 0 of the target: bits 0-2 dialect (4 = 3.1.1, 1 = 2.1, 0 = 2.0.2),
# 3 leasing, 4 POSIX negotiated, 5 the share's smb3 unix extensions
SMB311_ALL = 4 | 0x08 | 0x10 | 0x20
SMB21_LEASE = 1 | 0x08
SMB202 = 0

APP_INSTANCE_ID = bytes.fromhex('45BCA66AEFA7F74A9008FA462E144D74')
# B7D082B9-563B-4F07-A07B-524A8116A010 (MS-SMB2 2.2.13.2.15), on the wire
APP_INSTANCE_VERSION = bytes.fromhex('B982D0B73B56074FA07B524A8116A010')
# 93AD2550-9CB4-11E7-B423-83DE968BCD7C, as it goes on the wire
POSIX = bytes.fromhex('93AD25509CB411E7B42383DE968BCD7C')
HDR = 64            # the request's header; the CREATE body follows it
BODY = 56           # the CREATE request's fixed part


def ctx(name, data=b'', pad_name_to=8):
    """One context, unchained: header, name, data 8-aligned."""
    noff = 16
    end = noff + len(name)
    doff = 0
    if data:
        doff = (end + pad_name_to - 1) // pad_name_to * pad_name_to
    raw = bytearray(struct.pack('<LHHHHL', 0, noff, len(name), 0, doff,
                                len(data)))
    raw += name
    if data:
        raw += b'\0' * (doff - end) + data
    raw += b'\0' * (-len(raw) % 8)
    return raw


def chain(*ctxs):
    out = bytearray()
    for i, c in enumerate(ctxs):
        c = bytearray(c)
        if i + 1 < len(ctxs):
            struct.pack_into('<L', c, 0, len(c))
        out += c
    return bytes(out)


def seed(conn, contexts, off=None, length=None, lead=HDR + BODY):
    """The target's input: conn byte, offset, length, then the request
    with the chain at lead (the offset of a real CREATE's contexts)."""
    req = b'\0' * lead + contexts
    off = lead if off is None else off
    length = len(contexts) if length is None else length
    return bytes([conn]) + struct.pack('<HH', off, length) + req


def lease_v1(key=b'K' * 16, state=7):
    return key + struct.pack('<LLQ', state, 0, 0)


def lease_v2(key=b'K' * 16, parent=b'P' * 16, state=7, flags=4, epoch=1):
    return key + struct.pack('<LLQ', state, flags, 0) + parent + \
        struct.pack('<HH', epoch, 0)


def secd():
    # self-relative, owner and group S-1-5-32-544, a DACL of one ACE
    sid = bytes([1, 2, 0, 0, 0, 0, 0, 5]) + struct.pack('<LL', 32, 544)
    ace = struct.pack('<BBHL', 0, 0, 8 + len(sid), 0x1F01FF) + sid
    acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
    hdr_len = 20
    o_owner = hdr_len
    o_group = o_owner + len(sid)
    o_dacl = o_group + len(sid)
    return struct.pack('<BBHLLLL', 1, 0, 0x8004, o_owner, o_group, 0,
                       o_dacl) + sid + sid + acl


def exta():
    one = struct.pack('<LBBH', 0, 0, 4, 5) + b'user\0hello'
    one += b'\0' * (-len(one) % 4)
    two = struct.pack('<LBBH', 0, 0, 3, 2) + b'abc\0hi'
    first = bytearray(one)
    struct.pack_into('<L', first, 0, len(one))
    return bytes(first) + two


def app_instance():
    return struct.pack('<HH', 20, 0) + b'I' * 16


def app_version():
    return struct.pack('<HHLQQ', 24, 0, 0, 1, 2)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else 't/fuzz/corpus/createctx'
    os.makedirs(out, exist_ok=True)
    seeds = {
        'empty': seed(SMB311_ALL, b'', length=0),
        'mxac_qfid': seed(SMB311_ALL, chain(ctx(b'MxAc'), ctx(b'QFid'))),
        'mxac_ts': seed(SMB311_ALL, chain(ctx(b'MxAc', struct.pack('<Q',
                                                                   1 << 60)))),
        'alsi': seed(SMB311_ALL, chain(ctx(b'AlSi', struct.pack('<Q',
                                                                1 << 20)))),
        'twrp': seed(SMB311_ALL, chain(ctx(b'TWrp', struct.pack(
            '<Q', 133000000000000000)))),
        'secd': seed(SMB311_ALL, chain(ctx(b'SecD', secd()))),
        'exta': seed(SMB311_ALL, chain(ctx(b'ExtA', exta()))),
        'secd_exta_alsi': seed(SMB311_ALL, chain(
            ctx(b'SecD', secd()), ctx(b'ExtA', exta()),
            ctx(b'AlSi', struct.pack('<Q', 4096)))),
        'dhnq': seed(SMB311_ALL, chain(ctx(b'DHnQ', b'\0' * 16))),
        'dhnc': seed(SMB311_ALL, chain(ctx(b'DHnC', struct.pack(
            '<QQ', 0x1234, 0)))),
        'dh2q': seed(SMB311_ALL, chain(ctx(b'DH2Q', struct.pack(
            '<LLQ', 60000, 0, 0) + b'G' * 16))),
        'dh2c': seed(SMB311_ALL, chain(ctx(b'DH2C', struct.pack(
            '<QQ', 0x1234, 0) + b'G' * 16 + struct.pack('<L', 0)))),
        'dh2q_smb21': seed(SMB21_LEASE, chain(ctx(b'DH2Q', struct.pack(
            '<LLQ', 60000, 0, 0) + b'G' * 16))),
        'dhnq_dh2q': seed(SMB311_ALL, chain(
            ctx(b'DHnQ', b'\0' * 16),
            ctx(b'DH2Q', struct.pack('<LLQ', 0, 0, 0) + b'G' * 16))),
        'rqls_v1': seed(SMB311_ALL, chain(ctx(b'RqLs', lease_v1()))),
        'rqls_v2': seed(SMB311_ALL, chain(ctx(b'RqLs', lease_v2()))),
        'rqls_v2_smb21': seed(SMB21_LEASE, chain(ctx(b'RqLs', lease_v2()))),
        'rqls_smb202': seed(SMB202, chain(ctx(b'RqLs', lease_v1()))),
        'rqls_dh2q_mxac_qfid': seed(SMB311_ALL, chain(
            ctx(b'RqLs', lease_v2()),
            ctx(b'DH2Q', struct.pack('<LLQ', 0, 0, 0) + b'G' * 16),
            ctx(b'MxAc'), ctx(b'QFid'))),
        'app_instance': seed(SMB311_ALL, chain(
            ctx(APP_INSTANCE_ID, app_instance()),
            ctx(APP_INSTANCE_VERSION, app_version()),
            ctx(b'DH2Q', struct.pack('<LLQ', 0, 0, 0) + b'G' * 16))),
        'posix': seed(SMB311_ALL, chain(
            ctx(POSIX, struct.pack('<L', 0o644)))),
        'posix_off': seed(SMB311_ALL & ~0x20, chain(
            ctx(POSIX, struct.pack('<L', 0o644)))),
        'unknown': seed(SMB311_ALL, chain(ctx(b'ZZZZ', b'x' * 5),
                                          ctx(b'LongerName', b'y'),
                                          ctx(b'MxAc'))),
    }
    # odd alignments: the chain at an offset that is not 8-aligned
    c = chain(ctx(b'MxAc'), ctx(b'RqLs', lease_v1()))
    seeds['odd_align'] = seed(SMB311_ALL, c, lead=HDR + BODY + 3)
    # data placed before the name, name and data sharing bytes
    raw = bytearray(ctx(b'TWrp', struct.pack('<Q', 1)))
    struct.pack_into('<H', raw, 10, 16)          # DataOffset = the name
    struct.pack_into('<L', raw, 12, 8)
    seeds['overlap_name_data'] = seed(SMB311_ALL, bytes(raw))
    # a context whose data runs past its Next into the following one
    a = bytearray(ctx(b'ExtA', exta()))
    b = ctx(b'MxAc')
    struct.pack_into('<L', a, 0, 24)             # Next inside a's data
    seeds['overlap_next'] = seed(SMB311_ALL, bytes(a) + b)
    # a NextEntryOffset loop: the second points back at the first
    a = bytearray(ctx(b'MxAc'))
    b = bytearray(ctx(b'QFid'))
    struct.pack_into('<L', a, 0, len(a))
    struct.pack_into('<L', b, 0, (-len(a)) & 0xFFFFFFFF)
    seeds['next_loop'] = seed(SMB311_ALL, bytes(a + b))
    # Next pointing at itself (0 would end it: 8 is inside its header)
    a = bytearray(ctx(b'QFid'))
    struct.pack_into('<L', a, 0, 8)
    seeds['next_short'] = seed(SMB311_ALL, bytes(a) + b'\0' * 16)
    # the chain's length running past the request
    seeds['len_past_end'] = seed(SMB311_ALL, chain(ctx(b'MxAc')),
                                 length=4096)
    # 65 contexts: more than CREATE_CTX_MAX
    many = chain(*[ctx(b'MxAc') for _ in range(65)])
    seeds['many'] = seed(SMB311_ALL, many)
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
