#!/usr/bin/env python3
"""SMB 3.1.1 compression against usmbd (t/integ/compress.sh).

compress_client.py PORT ALICE_PW SHARE_DIR MODE
  MODE on:  negotiate (the answer's context), compressed WRITEs (unchained
            LZ77; chained NONE + Pattern_V1 + LZ77; all NONE), compressed
            ECHO, READs with SMB2_READFLAG_REQUEST_COMPRESSED (compressed
            answer, its signature over the plain message; a plain one
            without the flag or for data that does not compress), the
            `compress data` share, and hostile messages (each on its own
            connection: a clean close, a witness connection goes on).
  MODE off: `smb compression = no`: no context answered, a compressed
            message closes the connection.

The LZ77 runs are made and read by Samba 4.22's samba.compression (written
against Windows' test vectors), an oracle independent of usmbd's coder; the
transform framing (MS-SMB2 2.2.42) is this file's, from the spec.  Prints
"ok ..." / "FAIL ..." lines; "SKIP ..." and exit 0 when the Samba root is
absent.
"""
import copy
import os
import pwd
import random
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SAMBA_ROOT = os.environ.get("SAMBA_REF_ROOT",
                            "/var/cache/usmbd/samba-4.22/root")
try:
    from samba import compression as sc   # PYTHONPATH set by compress.sh
except ImportError as e:
    print("SKIP samba.compression of %s not importable (%s)" %
          (SAMBA_ROOT, e))
    sys.exit(0)

from impacket import crypto                       # noqa: E402
from impacket import smb3structs as s3            # noqa: E402
from impacket.smbconnection import SMBConnection  # noqa: E402

from posix_lib import PosixSMB3, neg_contexts     # noqa: E402
from Cryptodome.Cipher import AES                 # noqa: E402

NONE, LZNT1, LZ77, LZ77H, PATTERN = 0, 1, 2, 3, 4
CHAINED = 1
READ_COMPRESSED = 0x02
SHAREFLAG_COMPRESS_DATA = 0x00100000
FAILS = 0


def ok(cond, what, detail=""):
    global FAILS
    if cond:
        print("ok %s" % what)
    else:
        FAILS += 1
        print("FAIL %s%s" % (what, " -- " + detail if detail else ""))


# ---- the transform, MS-SMB2 2.2.42 ----

def unchained(msg, off, alg=LZ77):
    body = sc.plain_compress(msg[off:])
    return b"\xfcSMB" + struct.pack("<LHHL", len(msg) - off, alg, 0, off) + \
        msg[:off] + body


def chained(parts, osize=None):
    """parts: ("none", bytes) | ("pattern", byte, count) | ("lz77", bytes)
    | ("raw", alg, payload bytes after the header)."""
    out, total = b"", 0
    for i, p in enumerate(parts):
        fl = CHAINED if i == 0 else 0
        if p[0] == "none":
            out += struct.pack("<HHL", NONE, fl, len(p[1])) + p[1]
            total += len(p[1])
        elif p[0] == "pattern":
            out += struct.pack("<HHL", PATTERN, fl, 8) + \
                struct.pack("<BBHL", p[1], 0, 0, p[2])
            total += p[2]
        elif p[0] == "lz77":
            c = sc.plain_compress(p[1])
            out += struct.pack("<HHLL", LZ77, fl, len(c) + 4, len(p[1])) + c
            total += len(p[1])
        else:
            out += struct.pack("<HHL", p[1], fl, len(p[2])) + p[2]
    return b"\xfcSMB" + struct.pack("<L", total if osize is None else osize) + \
        out


def decompress(data):
    """The message a compressed one holds, and how it came."""
    osize, alg, fl = struct.unpack_from("<LHH", data, 4)
    if fl == 0:
        off = struct.unpack_from("<L", data, 12)[0]
        if alg != LZ77:
            raise ValueError("unchained algorithm %d" % alg)
        out = data[16:16 + off] + sc.plain_decompress(data[16 + off:], osize)
        if len(out) != off + osize:
            raise ValueError("unchained size")
        return out, ("unchained", [LZ77])
    pos, out, kinds = 8, b"", []
    while pos < len(data):
        alg, fl, ln = struct.unpack_from("<HHL", data, pos)
        pos += 8
        kinds.append(alg)
        if alg == NONE:
            out += data[pos:pos + ln]
        elif alg == PATTERN:
            b, _, _, n = struct.unpack_from("<BBHL", data, pos)
            out += bytes([b]) * n
        elif alg == LZ77:
            orig = struct.unpack_from("<L", data, pos)[0]
            out += sc.plain_decompress(data[pos + 4:pos + ln], orig)
        else:
            raise ValueError("chained algorithm %d" % alg)
        pos += ln
    if len(out) != osize:
        raise ValueError("chained size %d != %d" % (len(out), osize))
    return out, ("chained", kinds)


def comp_ctx(algs, flags):
    return struct.pack("<HHL", len(algs), 0, flags) + \
        b"".join(struct.pack("<H", a) for a in algs)


class Shim:
    def __init__(self, data):
        self.data = data

    def get_trailer(self):
        return self.data


class CompSMB3(PosixSMB3):
    """impacket 3.1.1 offering SMB2_COMPRESSION_CAPABILITIES (extra: raw
    negotiate contexts appended as given) and compressing the next message
    it sends with self.zmode; compressed answers are decompressed (and
    logged in self.rx) before impacket sees them."""
    offer_posix = False
    extra_ctx = []
    require_signing = False

    def negotiateSession(self, *a, **kw):
        self.RequireMessageSigning = self.require_signing
        return super().negotiateSession(*a, **kw)

    def sendSMB(self, packet):
        if packet['Command'] == s3.SMB2_NEGOTIATE and self.extra_ctx:
            neg = packet['Data']
            lst = neg['NegotiateContextList']
            for t, data in self.extra_ctx:
                lst += b'\0' * (-len(lst) % 8)
                lst += struct.pack('<HHL', t, len(data), 0) + data
            neg['NegotiateContextList'] = lst
            off, cnt, r = struct.unpack('<LHH', neg['ClientStartTime'])
            neg['ClientStartTime'] = struct.pack(
                '<LHH', off, cnt + len(self.extra_ctx), r)
        return super().sendSMB(packet)

    def seal_keys(self):
        """AES-128-CCM keys of the session (MS-SMB2 3.1.4.2, 3.1.1):
        sealing is done here, after compressing (3.1.4.4, then 3.1.4.3)."""
        k, h = self._Session['SessionKey'], self.preauth
        self.c2s = crypto.KDF_CounterMode(k, b"SMBC2SCipherKey\x00", h, 128)
        self.s2c = crypto.KDF_CounterMode(k, b"SMBS2CCipherKey\x00", h, 128)
        self.seal = True

    def seal_msg(self, plain):
        nonce = os.urandom(11)
        aad = nonce + b"\0" * 5 + struct.pack(
            "<LHHQ", len(plain), 0, 1, self._Session['SessionID'])
        ci = AES.new(self.c2s, AES.MODE_CCM, nonce=nonce, mac_len=16)
        ci.update(aad)
        ct, tag = ci.encrypt_and_digest(plain)
        return b"\xfdSMB" + tag + aad + ct

    def unseal(self, data):
        ci = AES.new(self.s2c, AES.MODE_CCM, nonce=data[20:31], mac_len=16)
        ci.update(data[20:52])
        return ci.decrypt_and_verify(data[52:], data[4:20])

    def hook(self):
        nb = self._NetBIOSSession
        self.zmode, self.rx, self.sent, self.seal = None, [], None, False
        send0, recv0 = nb.send_packet, nb.recv_packet

        def send(data):
            if self.zmode is not None:
                data, self.zmode = self.zmode(bytes(data)), None
            if self.seal:
                data = self.seal_msg(bytes(data))
            self.sent = data
            send0(data)

        def recv(timeout=None):
            p = recv0(timeout)
            data, sealed = p.get_trailer(), False
            if self.seal and data[:4] == b"\xfdSMB":
                data, sealed = self.unseal(data), True
            if data[:4] == b"\xfcSMB":
                plain, how = decompress(data)
                self.rx.append((how, len(data), plain, sealed))
                return Shim(plain)
            self.rx.append((None, len(data), data, sealed))
            return Shim(data)
        nb.send_packet, nb.recv_packet = send, recv


def connect(port, pw, ctx=None):
    CompSMB3.extra_ctx = [(3, ctx)] if ctx is not None else []
    srv = CompSMB3("127.0.0.1", "127.0.0.1", sess_port=port,
                   preferredDialect=s3.SMB2_DIALECT_311, timeout=20)
    srv._Connection["SupportsEncryption"] = False
    srv.hook()
    c = SMBConnection(existingConnection=srv)
    return c, srv


def login(port, pw, ctx=None):
    c, srv = connect(port, pw, ctx)
    c.login("alice", pw)
    return c, srv


def read(srv, tid, fid, off, n, flags=0):
    p = srv.SMB_PACKET()
    p['Command'] = s3.SMB2_READ
    p['TreeID'] = tid
    p['CreditCharge'] = 1 + (n - 1) // 65536
    r = s3.SMB2Read()
    r['Padding'] = 0x50
    r['Reserved'] = flags
    r['FileID'] = fid
    r['Length'] = n
    r['Offset'] = off
    p['Data'] = r
    ans = srv.recvSMB(srv.sendSMB(p))
    if not ans.isValidAnswer(0):
        raise RuntimeError("READ status %#x" % ans['Status'])
    return s3.SMB2Read_Response(ans['Data'])['Buffer']


def signature_ok(srv, plain):
    """The answer is signed over its plain form (signed, then compressed)."""
    if not struct.unpack_from("<L", plain, 16)[0] & 8:
        return False
    m = plain[:48] + b"\0" * 16 + plain[64:]
    return crypto.AES_CMAC(srv._Session['SigningKey'], m, len(m)) == \
        plain[48:64]


def closed(srv, timeout=5):
    """Did the server drop the connection (not just stay silent)?"""
    try:
        srv._NetBIOSSession.recv_packet(timeout)
    except Exception as e:   # a reset or EOF; a timeout is not a close
        return "timed out" not in str(e).lower() and \
            not isinstance(e, socket.timeout)
    return False


def echo_msg(srv):
    """A signed ECHO of the session as it would go on the wire."""
    p = srv.SMB_PACKET()
    p['Command'] = s3.SMB2_ECHO
    p['Data'] = b"\x04\x00\x00\x00"
    srv.zmode = lambda m: m
    srv.sendSMB(p)
    return p


def hostile(port, pw, tid_witness, witness, name, raw, before_login=False,
            ctx=None):
    try:
        c, srv = connect(port, pw, comp_ctx([LZ77, PATTERN], CHAINED)
                         if ctx is None else ctx)
        if not before_login:
            c.login("alice", pw)
        srv._NetBIOSSession.send_packet(raw(srv))
        ok(closed(srv), "hostile %s: connection closed" % name)
    except Exception as e:
        ok(False, "hostile %s: connection closed" % name, repr(e))
    try:
        witness.getSMBServer().echo()
        ok(True, "hostile %s: the witness connection goes on" % name)
    except Exception as e:
        ok(False, "hostile %s: the witness connection goes on" % name,
           repr(e))


def malloc_calls(d):
    """{pid: heap calls} of the live user workers (t/bench/malloc_count.c
    counter files: magic, pid, malloc, calloc, realloc, free, memalign)."""
    out = {}
    for name in os.listdir(d):
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                if b"worker" not in f.read():
                    continue
            with open(os.path.join(d, name), "rb") as f:
                v = struct.unpack("<7Q", f.read(56))
        except (OSError, struct.error):
            continue
        out[int(name)] = v[2] + v[3] + v[4] + v[6]
    return out


def hdr(cmd, mid, sid=0, tid=0, flags=0):
    return struct.pack("<4sHHLHHLLQLLQ16s", b"\xfeSMB", 64, 1, 0, cmd, 1,
                       flags, 0, mid, 0, tid, sid, b"\0" * 16)


def main():
    port, pw, share, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], \
        sys.argv[4]
    both = comp_ctx([LZ77, PATTERN], CHAINED)

    if mode == "relay":
        # bob's session on alice's connection (HACKING.md "Several users
        # on one connection"): the owner decompresses, then routes; a
        # client that requires signing gets bob's session relayed signed
        CompSMB3.require_signing = True
        c, srv = connect(port, pw, both)
        conn_pre, fresh = srv.preauth, copy.deepcopy(srv._Session)
        c.login("alice", pw)
        ta = c.connectTree("share")
        sa = srv._Session
        srv._Session, srv.preauth = copy.deepcopy(fresh), conn_pre
        c.login("bob", sys.argv[5])
        tb = c.connectTree("share")
        fb = c.createFile(tb, "bob_z.bin")
        text = b"".join(b"bob's line %06d\n" % i for i in range(4000))
        srv.zmode = lambda m: chained([("none", m[:112]),
                                       ("lz77", m[112:])])
        srv.write(tb, fb, text, 0, len(text))
        path = os.path.join(share, "bob_z.bin")
        with open(path, "rb") as f:
            ok(f.read() == text and os.stat(path).st_uid ==
               pwd.getpwnam("bob").pw_uid,
               "relayed session: bob's compressed WRITE, decompressed by "
               "the owner, written by bob's worker")
        data = read(srv, tb, fb, 0, len(text), READ_COMPRESSED)
        ok(data == text and srv.rx[-1][0] is None,
           "relayed session: its READ answered plain (a relayed worker "
           "never compresses)")
        c.closeFile(tb, fb)
        srv._Session = sa
        fa = c.createFile(ta, "alice_z.bin")
        srv.zmode = lambda m: unchained(m, 112)
        srv.write(ta, fa, text, 0, len(text))
        data = read(srv, ta, fa, 0, len(text), READ_COMPRESSED)
        ok(data == text and srv.rx[-1][0] is not None,
           "the owner's own session on that connection: compressed both "
           "ways")
        return
    if mode == "samba":
        # printed, not counted: what a reference server answers
        c, srv = login(port, pw, both)
        print("samba: compression context answered: %s" %
              neg_contexts(srv.neg_raw).get(3))
        m = hdr(0x0D, 1000, srv._Session['SessionID']) + b"\x04\x00\x00\x00"
        srv._NetBIOSSession.send_packet(chained([("none", m)]))
        print("samba: a compressed ECHO closes the connection: %s" %
              closed(srv))
        return
    if mode == "off":
        c, srv = login(port, pw, both)
        ok(3 not in neg_contexts(srv.neg_raw),
           "smb compression = no: no compression context answered")
        m = hdr(0x0D, 1000) + b"\x04\x00\x00\x00"
        srv._NetBIOSSession.send_packet(chained([("none", m)]))
        ok(closed(srv), "smb compression = no: a compressed ECHO closes "
           "the connection")
        return

    # ---- negotiate (MS-SMB2 3.3.5.4) ----
    c, srv = connect(port, pw, both)
    ctx = neg_contexts(srv.neg_raw).get(3)
    ok(ctx == [comp_ctx([LZ77, PATTERN], CHAINED)],
       "negotiate: LZ77 and Pattern_V1, chained, in the client's order",
       repr(ctx))
    c, srv = connect(port, pw, comp_ctx([PATTERN, LZNT1, LZ77], CHAINED))
    ok(neg_contexts(srv.neg_raw).get(3) ==
       [comp_ctx([PATTERN, LZ77], CHAINED)],
       "negotiate: LZNT1 left out, the client's order kept")
    c, srv = connect(port, pw, comp_ctx([LZ77, PATTERN], 0))
    ok(neg_contexts(srv.neg_raw).get(3) == [comp_ctx([LZ77], 0)],
       "negotiate: unchained: LZ77 only (Pattern_V1 travels chained)")
    c, srv = connect(port, pw, comp_ctx([LZNT1, LZ77H], CHAINED))
    ok(3 not in neg_contexts(srv.neg_raw),
       "negotiate: no common algorithm: no context in the answer")
    for name, bad in (("no algorithm", comp_ctx([], 0)),
                      ("short list", struct.pack("<HHL", 3, 0, 0) +
                       struct.pack("<H", LZ77))):
        try:
            connect(port, pw, bad)
            ok(False, "negotiate: %s: INVALID_PARAMETER" % name)
        except Exception as e:
            ok("INVALID_PARAMETER" in str(e),
               "negotiate: %s: INVALID_PARAMETER" % name, str(e))
    CompSMB3.extra_ctx = [(3, both), (3, both)]
    try:
        srv = CompSMB3("127.0.0.1", "127.0.0.1", sess_port=port,
                       preferredDialect=s3.SMB2_DIALECT_311, timeout=20)
        ok(False, "negotiate: two compression contexts: INVALID_PARAMETER")
    except Exception as e:
        ok("INVALID_PARAMETER" in str(e),
           "negotiate: two compression contexts: INVALID_PARAMETER", str(e))

    # ---- compressed WRITEs (3.3.5.2.1.2) ----
    c, srv = login(port, pw, both)
    tid = c.connectTree("share")
    fid = c.createFile(tid, "z.bin")
    text = b"".join(b"line %06d of a compressible office document\n" % i
                    for i in range(1500))
    srv.zmode = lambda m: unchained(m, 112)
    srv.write(tid, fid, text, 0, len(text))
    ok(len(srv.sent) < len(text) // 4,
       "WRITE unchained LZ77: %d bytes sent for %d" % (len(srv.sent),
                                                         len(text)))
    with open(os.path.join(share, "z.bin"), "rb") as f:
        ok(f.read() == text, "WRITE unchained LZ77: the data on disk")

    blob = b"\0" * 20000 + text[:30000] + b"\xff" * 15000
    srv.zmode = lambda m: chained([("none", m[:112]),
                                   ("pattern", 0, 20000),
                                   ("lz77", m[112 + 20000:112 + 50000]),
                                   ("pattern", 0xFF, 15000)])
    srv.write(tid, fid, blob, 100000, len(blob))
    with open(os.path.join(share, "z.bin"), "rb") as f:
        f.seek(100000)
        ok(f.read() == blob, "WRITE chained NONE + Pattern_V1 + LZ77 + "
           "Pattern_V1: the data on disk (%d bytes sent for %d)" %
           (len(srv.sent), len(blob)))
    small = b"plain bytes in NONE payloads " * 10
    srv.zmode = lambda m: chained([("none", m[:40]), ("none", m[40:])])
    srv.write(tid, fid, small, 200000, len(small))
    with open(os.path.join(share, "z.bin"), "rb") as f:
        f.seek(200000)
        ok(f.read() == small, "WRITE chained, NONE payloads only")
    # 1 MiB that compresses to a few hundred KiB: a frame past the
    # receive prefix and the ring's 64 KiB, both ways
    rng = random.Random(7)
    big = b"".join(b"record %08d value %05d %s\n" % (
        i, rng.randrange(100000), bytes(rng.randrange(65, 91) for _ in
                                        range(6))) for i in range(30000))
    big = big[:1 << 20]
    srv.zmode = lambda m: unchained(m, 112)
    srv.write(tid, fid, big, 1 << 20, len(big))
    sent = len(srv.sent)
    data = read(srv, tid, fid, 1 << 20, len(big), READ_COMPRESSED)
    how, wire, _, _ = srv.rx[-1]
    ok(data == big and how is not None and 65536 < sent < len(big) and
       65536 < wire < len(big),
       "1 MiB WRITE and READ compressed (%d and %d bytes on the wire)" %
       (sent, wire))
    p = srv.SMB_PACKET()
    p['Command'] = s3.SMB2_ECHO
    p['Data'] = b"\x04\x00\x00\x00"
    srv.zmode = lambda m: unchained(m, 0)
    ans = srv.recvSMB(srv.sendSMB(p))
    ok(ans['Status'] == 0, "ECHO compressed whole (unchained, Offset 0)")

    # ---- compressed READ answers (3.3.5.12, 3.1.4.4) ----
    data = read(srv, tid, fid, 0, len(text), READ_COMPRESSED)
    how, wire, plain, _ = srv.rx[-1]
    ok(data == text and how is not None and how[0] == "chained",
       "READ with REQUEST_COMPRESSED: compressed (chained) answer, the "
       "data as on disk (%d bytes for %d)" % (wire, len(text)), repr(how))
    ok(how is not None and LZ77 in how[1] and wire < len(text) // 4,
       "READ compressed: LZ77 payload, under a quarter of the size")
    ok(signature_ok(srv, plain), "READ compressed: signed over the plain "
       "message (signed, then compressed)")
    data = read(srv, tid, fid, 100000, len(blob), READ_COMPRESSED)
    how, wire, plain, _ = srv.rx[-1]
    ok(data == blob and how is not None and how[1][:2] == [NONE, PATTERN]
       and how[1][-1] == PATTERN,
       "READ compressed: Pattern_V1 for the leading and trailing runs "
       "(%d bytes for %d)" % (wire, len(blob)), repr(how))
    data = read(srv, tid, fid, 0, len(text))
    ok(data == text and srv.rx[-1][0] is None,
       "READ without the flag: a plain answer")
    rnd = os.urandom(65536)
    srv.write(tid, fid, rnd, 300000, len(rnd))
    data = read(srv, tid, fid, 300000, len(rnd), READ_COMPRESSED)
    ok(data == rnd and srv.rx[-1][0] is None,
       "READ of random data with the flag: plain (nothing saved)")
    data = read(srv, tid, fid, 0, 1000, READ_COMPRESSED)
    ok(data == text[:1000] and srv.rx[-1][0] is None,
       "READ of 1000 bytes with the flag: plain (under 4 KiB)")
    c.closeFile(tid, fid)

    # unchained connection: the answer is unchained LZ77
    c2, srv2 = login(port, pw, comp_ctx([LZ77], 0))
    t2 = c2.connectTree("share")
    f2 = c2.openFile(t2, "z.bin")
    data = read(srv2, t2, f2, 0, len(text), READ_COMPRESSED)
    ok(data == text and srv2.rx[-1][0] is not None and
       srv2.rx[-1][0][0] == "unchained",
       "READ compressed on an unchained connection: unchained LZ77",
       repr(srv2.rx[-1][0]))
    c2.closeFile(t2, f2)

    # the compress data share: flag in TREE_CONNECT, READs compressed
    tz = c.connectTree("zshare")
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    flags = struct.unpack_from("<L", raw, 4)[0]
    ok(flags & SHAREFLAG_COMPRESS_DATA,
       "compress data share: SMB2_SHAREFLAG_COMPRESS_DATA", hex(flags))
    fz = c.createFile(tz, "zz.bin")
    srv.write(tz, fz, text, 0, len(text))
    data = read(srv, tz, fz, 0, len(text))
    ok(data == text and srv.rx[-1][0] is not None,
       "compress data share: a READ without the flag answered compressed")
    c.closeFile(tz, fz)
    traw = c.connectTree("share")
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    ok(not struct.unpack_from("<L", raw, 4)[0] & SHAREFLAG_COMPRESS_DATA,
       "a share without compress data: no SHAREFLAG_COMPRESS_DATA")
    c.disconnectTree(traw)

    # ---- no heap allocation per compressed request (the worker's) ----
    mc = os.environ.get("COMPRESS_MC_DIR")
    if mc:
        fm = c.createFile(tid, "m.bin")

        def one():
            srv.zmode = lambda m: chained([("none", m[:112]),
                                          ("lz77", m[112:])])
            srv.write(tid, fm, text, 0, len(text))
            read(srv, tid, fm, 0, len(text), READ_COMPRESSED)
        one()
        m0 = malloc_calls(mc)
        for _ in range(50):
            one()
        m1 = malloc_calls(mc)
        ok(m0 and m1 and sum(m0.values()) > 0 and
           sum(m1.values()) - sum(m0.values()) == 0,
           "0 heap allocations in the worker for 50 compressed WRITEs and 50"
           " compressed READ answers (%s)" % {p: m1[p] - m0.get(p, 0)
                                            for p in m1})
        c.closeFile(tid, fm)

    # ---- sealed: compressed, then encrypted (3.1.4.4 before 3.1.4.3) ----
    c4, srv4 = login(port, pw, both)
    ts = c4.connectTree("sealed")
    srv4.seal_keys()
    fs = c4.createFile(ts, "s.bin")
    srv4.zmode = lambda m: chained([("none", m[:112]),
                                   ("pattern", 0, 20000),
                                   ("lz77", m[112 + 20000:112 + 50000]),
                                   ("pattern", 0xFF, 15000)])
    srv4.write(ts, fs, blob, 0, len(blob))
    with open(os.path.join(os.path.dirname(share.rstrip("/")), "sealed",
                           "s.bin"), "rb") as f:
        ok(f.read() == blob and srv4.sent[:4] == b"\xfdSMB" and
           len(srv4.sent) < len(blob) // 2,
           "sealed WRITE, compressed inside the transform: the data on disk"
           " (%d bytes sent for %d)" % (len(srv4.sent), len(blob)))
    data = read(srv4, ts, fs, 0, len(blob), READ_COMPRESSED)
    how, wire, plain, sealed = srv4.rx[-1]
    ok(data == blob and sealed and how is not None,
       "sealed READ with REQUEST_COMPRESSED: sealed answer holding the "
       "compressed message (%d bytes for %d)" % (wire, len(blob)), repr(how))
    srv4._NetBIOSSession.send_packet(srv4.seal_msg(
        b"\xfcSMB" + struct.pack("<LHHL", 0xFFFFFFF0, LZ77, 0, 0) + b"\xff" * 64))
    srv4.seal = False
    ok(closed(srv4), "hostile sealed decompression bomb: connection closed")

    # ---- hostile messages: each closes its connection, no other ----
    wc, wsrv = login(port, pw, both)
    wt = wc.connectTree("share")
    hostile(port, pw, wt, wc, "decompression bomb (4 GiB claimed)",
            lambda s: b"\xfcSMB" + struct.pack("<LHHL", 0xFFFFFFF0, LZ77,
                                               0, 0) + b"\xff" * 64)
    hostile(port, pw, wt, wc, "bomb just past the negotiated size",
            lambda s: chained([("pattern", 0, 8 * 1024 * 1024 + 273)]))
    hostile(port, pw, wt, wc, "Pattern_V1 longer than the segment",
            lambda s: chained([("none", hdr(0x0D, 50, s._Session['SessionID'])),
                               ("pattern", 0, 1 << 20)],
                              osize=68))
    # an LZ77 match 100 bytes back at output position 4
    lz_bad = struct.pack("<L", 0x0FFFFFFF) + b"\xfeSMB" + \
        struct.pack("<H", (99 << 3) | 0)
    hostile(port, pw, wt, wc, "LZ77 offset before the output",
            lambda s: b"\xfcSMB" + struct.pack("<LHHL", 100, LZ77, 0, 0) +
            lz_bad)
    hostile(port, pw, wt, wc, "chained lengths that do not add up",
            lambda s: chained([("none", hdr(0x0D, 51,
                                            s._Session['SessionID']) +
                                b"\x04\0\0\0")], osize=200))
    hostile(port, pw, wt, wc, "chained payload past the message",
            lambda s: b"\xfcSMB" + struct.pack("<LHHL", 100, NONE, CHAINED,
                                               1000) + b"x" * 10)
    hostile(port, pw, wt, wc, "truncated transform header",
            lambda s: b"\xfcSMB\x10\0\0\0")
    hostile(port, pw, wt, wc, "algorithm not negotiated (LZNT1)",
            lambda s: b"\xfcSMB" + struct.pack("<LHHL", 68, LZNT1, 0, 0) +
            b"\0" * 40)
    hostile(port, pw, wt, wc, "compressed transform inside (sealed inside)",
            lambda s: chained([("none", b"\xfdSMB" + b"\0" * 60)]))
    hostile(port, pw, wt, wc, "compressed SESSION_SETUP (before a session)",
            lambda s: chained([("none", hdr(1, 1) + struct.pack(
                "<HBBLLHHQ", 25, 0, 1, 0, 0, 88, 4, 0) + b"NTLM")]),
            before_login=True)
    hostile(port, pw, wt, wc, "compressed message on a connection that "
            "did not negotiate compression",
            lambda s: chained([("none", hdr(0x0D, 52,
                                            s._Session['SessionID']) +
                                b"\x04\0\0\0")]), ctx=comp_ctx([LZNT1], 0))
    # compressed NEGOTIATE: the first message of a connection
    try:
        sk = socket.create_connection(("127.0.0.1", port), timeout=5)
        neg = hdr(0, 0) + struct.pack("<HHHHL16sLHH", 36, 1, 1, 0, 0,
                                      b"\0" * 16, 0, 0, 0) + b"\x11\x03"
        m = chained([("none", neg)])
        sk.sendall(struct.pack(">L", len(m)) + m)
        try:
            got = sk.recv(100)
        except ConnectionResetError:
            got = b""
        ok(got == b"", "hostile compressed NEGOTIATE: connection closed "
           "with no answer", repr(got[:8]))
        sk.close()
    except Exception as e:
        ok(False, "hostile compressed NEGOTIATE: connection closed", repr(e))
    wf = wc.openFile(wt, "z.bin")
    ok(wc.readFile(wt, wf, 0, 100) == text[:100],
       "after the hostile messages the witness still reads")
    wc.closeFile(wt, wf)
    c3, _ = login(port, pw, both)
    ok(c3.listPath("share", "*") is not None,
       "after the hostile messages a new login works")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        import traceback
        traceback.print_exc()
        ok(False, "client ran to its end", repr(e))
    sys.exit(1 if FAILS else 0)
