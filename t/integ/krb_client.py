# Kerberos logons for t/integ/krb.sh that smbclient cannot play.
#   krb_client.py PORT garbage N
# Sends N SESSION_SETUPs whose SPNEGO NegTokenInit names Kerberos first and
# carries a malformed AP-REQ (random bytes, a truncated or mangled
# [APPLICATION 14], absurd DER lengths), each on a fresh connection, and
# prints one line per outcome kind (each from its own loopback address): "status 0xNNNNNNNN COUNT" for answers,
# "closed COUNT" for connections the server dropped.  None may succeed.
#   krb_client.py PORT negoex HOST MODE
# Plays a Windows 10 client: a NegTokenInit listing NegoEx, Kerberos (MS
# and standard OIDs) and NTLMSSP, with an optimistic NegoEx token; then
# the AP-REQ (python3-gssapi, MIT's GSSAPI, the ticket in $KRB5CCNAME),
# checks the server's mechListMIC and sends its own (RFC 4178 5).  MODE:
#   good    the MIC as made; then a signed TREE_CONNECT to share and a
#           CREATE of negoex-<user>.txt; prints "ok" or what failed
#   badmic  one bit of the MIC flipped; prints the final status
#   nomutual  no mutual authentication: the client's MIC goes with the
#           AP-REQ (two legs); prints "ok" or what failed
#   ntlmfirst  NTLMSSP listed before Kerberos; prints the OID chosen
#   twoapreq  a second AP-REQ where the MIC is due; prints the status
#   reauth  good, then the same three legs again on the session (in the
#           user's worker), then a CREATE of negoex-reauth-<user>.txt
#   smb311  good on SMB 3.1.1: the signing key from the preauth hash of
#           the three legs, AES-CMAC
#   krb_client.py PORT multi HOST CC_ALICE CC_BOB [smb311] [CMD...]
# Several users on one connection with Kerberos (HACKING.md "Several users
# on one connection"): SMB 2.1 with signing required by the client; alice
# logs on (three legs, NegoEx first: the gate), then bob on the same
# connection with one leg (an optimistic AP-REQ, mutual authentication:
# relayed to bob's worker, the AP-REP and the final response signed with
# bob's key checked), then bob again with three legs (the owner runs the
# first two, the relay starts at the client's mechListMIC), and with two
# (no optimistic token: the relay starts at the AP-REQ).  Each creates
# km-<name>.txt; alice is refused bob's 0600 kmsecret, bob opens it;
# requests of the three interleave, all signed.  With CMD: it runs (with
# bob's session id), then bob's next request must get
# USER_SESSION_DELETED and alice must go on.  smb311: the same on SMB
# 3.1.1 (AES-CMAC, each session's signing key from its own preauth hash:
# bob's three-leg hash runs in alice's worker for two legs and in bob's
# for the last).  Prints "ok" or what failed.
#   krb_client.py PORT reauthother HOST CC_ALICE CC_BOB
# Re-authentication as another identity with Kerberos (worker/smb2_reauth.c):
# alice's session (an open handle) re-authenticates with bob's ticket
# (three legs in alice's worker): success, the AP-REP and the helper's
# MIC checked; the handle still reads, a CREATE is ACCESS_DENIED; then
# with alice's ticket again a CREATE works.  Prints "ok" or what failed.
#   krb_client.py PORT expire HOST CC_ALICE CC_BOB_SHORT CC_BOB SECS
# bob's relayed session (a ticket of a few seconds) answers
# NETWORK_SESSION_EXPIRED, signed, after SECS; alice goes on; a fresh
# ticket re-authenticates bob's session through the relay.
#   krb_client.py PORT bench HOST LEGS N
# t/bench/krbconnect.sh's timing of a logon of one leg or three.
import hashlib
import hmac
import os
import random
import socket
import struct
import sys

sys.dont_write_bytecode = True
PORT = int(sys.argv[1])

SPNEGO_OID = bytes.fromhex("2b0601050502")
KRB5_OID = bytes.fromhex("2a864886f712010202")
KRB5_MS_OID = bytes.fromhex("2a864882f712010202")


def der(tag, content):
    n = len(content)
    if n < 0x80:
        ln = bytes([n])
    elif n < 0x100:
        ln = bytes([0x81, n])
    else:
        ln = bytes([0x82]) + struct.pack(">H", n)
    return bytes([tag]) + ln + content


def hdr(cmd, mid, sid, flags=0):
    return b"\xfeSMB" + struct.pack("<HHIHHIIQIIQ16s", 64, 1, 0, cmd, 1,
                                    flags, 0, mid, 0, 0, sid, b"\0" * 16)


def frame(b):
    return struct.pack(">I", len(b)) + b


def recv_frame(s):
    h = b""
    while len(h) < 4:
        d = s.recv(4 - len(h))
        if not d:
            return None
        h += d
    n = struct.unpack(">I", h)[0]
    b = b""
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d:
            return None
        b += d
    return b


def negotiate210(secmode=1):
    body = struct.pack("<HHHHI", 36, 1, secmode, 0, 0) + b"\x33" * 16 + \
        struct.pack("<Q", 0) + struct.pack("<H", 0x210)
    return hdr(0, 0, 0) + body


def session_setup(blob):
    body = struct.pack("<HBBIIHHQ", 25, 0, 1, 0, 0, 64 + 24, len(blob), 0)
    return hdr(1, 1, 0) + body + blob


def spnego_init(mech_token, oid):
    mech_types = der(0x30, der(0x06, oid) + der(0x06, KRB5_OID))
    init = der(0x30, der(0xa0, mech_types) + der(0xa2, der(0x04, mech_token)))
    return der(0x60, der(0x06, SPNEGO_OID) + der(0xa0, init))


def bad_token(rng, i):
    kind = i % 5
    if kind == 0:
        inner = rng.randbytes(rng.randint(0, 300))
    elif kind == 1:
        # AP-REQ ::= [APPLICATION 14] SEQUENCE {...}, cut short
        ap = der(0x6e, der(0x30, der(0xa0, der(0x02, b"\x05")) +
                           der(0xa1, der(0x02, b"\x0e")) +
                           rng.randbytes(rng.randint(0, 200))))
        inner = ap[:rng.randint(1, len(ap))]
    elif kind == 2:
        # a length that claims far more than there is
        inner = b"\x6e\x84\x7f\xff\xff\xff" + rng.randbytes(40)
    elif kind == 3:
        inner = der(0x6e, der(0x30, rng.randbytes(rng.randint(0, 400))))
    else:
        inner = b"\x6e\x80" + rng.randbytes(rng.randint(0, 64))  # indefinite
    tok_id = b"\x01\x00"
    return der(0x60, der(0x06, KRB5_OID) + tok_id + inner)


def cmd_garbage(n):
    rng = random.Random(15)
    seen = {}
    for i in range(int(n)):
        # A fresh loopback address each: failures from one address are
        # answered ever slower (daemon/auth.c), which is not what we test.
        s = socket.create_connection(("127.0.0.1", PORT), timeout=10,
                                     source_address=("127.0.%d.%d" % (
                                         1 + i // 200, 10 + i % 200), 0))
        try:
            s.sendall(frame(negotiate210()))
            if recv_frame(s) is None:
                seen["closed"] = seen.get("closed", 0) + 1
                continue
            oid = KRB5_MS_OID if i % 2 else KRB5_OID
            s.sendall(frame(session_setup(spnego_init(bad_token(rng, i),
                                                      oid))))
            r = recv_frame(s)
            if r is None:
                key = "closed"
            else:
                key = "status 0x%08x" % struct.unpack_from("<I", r, 8)[0]
            seen[key] = seen.get(key, 0) + 1
        except OSError:
            seen["closed"] = seen.get("closed", 0) + 1
        finally:
            s.close()
    for k in sorted(seen):
        print(k, seen[k])


NEGOEX_OID = bytes.fromhex("2b06010401823702021e")
NTLMSSP_OID = bytes.fromhex("2b06010401823702020a")
GSS_INQ_SSPI_SESSION_KEY = "1.2.840.113554.1.2.2.5.5"


def der_read(b, off):
    # (tag, content start, content end) of the TLV at off
    tag = b[off]
    n = b[off + 1]
    off += 2
    if n & 0x80:
        k = n & 0x7f
        n = int.from_bytes(b[off:off + k], "big")
        off += k
    return tag, off, off + n


def neg_resp_fields(blob):
    # {0: negState, 1: supportedMech, 2: responseToken, 3: mechListMIC}
    if not blob:
        return {}
    tag, s, e = der_read(blob, 0)
    assert tag == 0xa1, "not a NegTokenResp: %r" % blob[:8]
    tag, s, e = der_read(blob, s)
    out = {}
    while s < e:
        t, cs, ce = der_read(blob, s)
        _, vs, ve = der_read(blob, cs)
        out[t & 0x1f] = blob[vs:ve]
        s = ce
    return out


def neg_resp(token=None, mic=None):
    body = b""
    if token is not None:
        body += der(0xa2, der(0x04, token))
    if mic is not None:
        body += der(0xa3, der(0x04, mic))
    return der(0xa1, der(0x30, body))


class Smb:
    def __init__(self, port, source):
        # Its own loopback address: the failures it provokes must not
        # slow down (daemon/auth.c's throttle) the logons of 127.0.0.1.
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                          source_address=(source, 0))
        self.mid = 0
        self.sid = 0
        self.tid = 0
        self.key = None
        self.cmac = False       # 3.1.1: AES-CMAC signing
        self.preauth = None     # 3.1.1: the session's preauth hash

    def call(self, cmd, body):
        h = bytearray(hdr(cmd, self.mid, self.sid))
        struct.pack_into("<I", h, 36, self.tid)
        self.mid += 1
        m = bytearray(h + body)
        if self.key is not None:
            struct.pack_into("<I", m, 16, 0x8)   # SMB2_FLAGS_SIGNED
            if self.cmac:
                from impacket import crypto
                sig = crypto.AES_CMAC(self.key, bytes(m), len(m))
            else:
                sig = hmac.new(self.key, bytes(m), hashlib.sha256).digest()
            m[48:64] = sig[:16]
        self.sent = bytes(m)
        self.s.sendall(frame(bytes(m)))
        while True:
            r = recv_frame(self.s)
            if r is None:
                raise OSError("connection closed")
            st = struct.unpack_from("<I", r, 8)[0]
            if st != 0x103:     # STATUS_PENDING: the answer follows
                self.last = r
                return st, r

    def setup(self, blob):
        body = struct.pack("<HBBIIHHQ", 25, 0, 1, 0, 0, 64 + 24, len(blob),
                           0) + blob
        st, r = self.call(1, body)
        if self.preauth is not None:
            # MS-SMB2 3.2.5.3.1: every request, and every response but
            # the final one.
            self.preauth = hashlib.sha512(self.preauth + self.sent).digest()
            if st == 0xc0000016:
                self.preauth = hashlib.sha512(self.preauth + r).digest()
        self.sid = struct.unpack_from("<Q", r, 40)[0]
        off, ln = struct.unpack_from("<HH", r, 64 + 4)
        return st, r[off:off + ln]


def negoex_init(mech_types, token):
    init = der(0x30, der(0xa0, mech_types) + der(0xa2, der(0x04, token)))
    return der(0x60, der(0x06, SPNEGO_OID) + der(0xa0, init))


def negoex_logon(c, host, mode, creds=None):
    """The three legs (two for nomutual) on c; the context, or a string
    saying what went wrong (badmic: the final status)."""
    import gssapi
    order = [NEGOEX_OID, KRB5_MS_OID, KRB5_OID, NTLMSSP_OID]
    if mode == "ntlmfirst":
        order = [NEGOEX_OID, NTLMSSP_OID, KRB5_MS_OID, KRB5_OID]
    mech_types = der(0x30, b"".join(der(0x06, o) for o in order))
    negoex_tok = b"NEGOEXTS" + os.urandom(40)
    st, blob = c.setup(negoex_init(mech_types, negoex_tok))
    f = neg_resp_fields(blob)
    if mode == "ntlmfirst":
        return "status 0x%08x mech %s" % (st, f.get(1, b"").hex())
    if st != 0xc0000016 or f.get(0) != b"\x03" or f.get(1) != KRB5_MS_OID \
            or 2 in f:
        return "first answer: status 0x%08x fields %r" % (st, f)
    flags = [gssapi.RequirementFlag.integrity,
             gssapi.RequirementFlag.out_of_sequence_detection]
    if mode != "nomutual":
        flags.append(gssapi.RequirementFlag.mutual_authentication)
    name = gssapi.Name("cifs@" + host, gssapi.NameType.hostbased_service)
    ctx = gssapi.SecurityContext(name=name, mech=gssapi.MechType.kerberos,
                                 usage="initiate", flags=flags, creds=creds)
    apreq = ctx.step()
    mic = None
    if mode == "nomutual":
        if not ctx.complete:
            return "the initiator wants more legs without mutual auth"
        mic = ctx.get_signature(mech_types)
    st, blob = c.setup(neg_resp(apreq, mic))
    f = neg_resp_fields(blob)
    if mode == "nomutual":
        if st != 0 or f.get(0) != b"\x00" or 3 not in f:
            return "AP-REQ with MIC: status 0x%08x fields %r" % (st, f)
        ctx.verify_signature(mech_types, f[3])
        return ctx
    if st != 0xc0000016 or f.get(0) != b"\x01" or 2 not in f or 3 not in f:
        return "AP-REQ answer: status 0x%08x fields %r" % (st, f)
    ctx.step(f[2])              # the AP-REP
    if not ctx.complete:
        return "the AP-REP did not complete the context"
    ctx.verify_signature(mech_types, f[3])   # raises when it is wrong
    if mode == "twoapreq":
        # A second AP-REQ instead of the MIC: it must not pass without it.
        ctx2 = gssapi.SecurityContext(name=name,
                                      mech=gssapi.MechType.kerberos,
                                      usage="initiate", flags=flags)
        st, blob = c.setup(neg_resp(ctx2.step()))
        return "status 0x%08x" % st
    mic = bytearray(ctx.get_signature(mech_types))
    if mode == "badmic":
        mic[-1] ^= 1
    st, blob = c.setup(neg_resp(mic=bytes(mic)))
    if mode == "badmic":
        return "status 0x%08x" % st
    f = neg_resp_fields(blob) if blob else {}
    if st != 0 or f.get(0) != b"\x00":
        return "MIC answer: status 0x%08x fields %r" % (st, f)
    return ctx


def negoex_create(c, name):
    fname = name.encode("utf-16-le")
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0,
                       0x12019f, 0x80, 7, 3, 0x40, 64 + 56, len(fname),
                       0, 0) + fname
    st, r = c.call(5, body)
    if st != 0:
        return "CREATE: status 0x%08x" % st
    fid = r[64 + 64:64 + 80]
    st, r = c.call(6, struct.pack("<HHI", 24, 0, 0) + fid)
    return None if st == 0 else "CLOSE: status 0x%08x" % st


def negotiate311(c, secmode=1):
    # One dialect, 3.1.1, with the preauth integrity context (SHA-512);
    # the connection's preauth hash is that of this request and answer.
    ctx = struct.pack("<HHI", 1, 38, 0) + struct.pack("<HHH", 1, 32, 1) + \
        os.urandom(32)
    off = 64 + 36 + 2
    pad = (8 - off % 8) % 8
    body = struct.pack("<HHHHI", 36, 1, secmode, 0, 0) + os.urandom(16) + \
        struct.pack("<IHH", off + pad, 1, 0) + struct.pack("<H", 0x311) + \
        b"\0" * pad + ctx
    st, r = c.call(0, body)
    h = hashlib.sha512(b"\0" * 64 + c.sent).digest()
    c.preauth = hashlib.sha512(h + r).digest()
    c.cmac = True
    return st


def cmd_negoex(host, mode):
    import gssapi
    import gssapi.raw
    from impacket import crypto
    modes = ["good", "badmic", "nomutual", "ntlmfirst", "twoapreq", "reauth",
             "smb311"]
    c = Smb(PORT, "127.0.3.%d" % (1 + modes.index(mode)))
    if mode == "smb311":
        st = negotiate311(c)
        if st != 0:
            print("NEGOTIATE 3.1.1: status 0x%08x" % st)
            return
    else:
        c.call(0, negotiate210()[64:])
    ctx = negoex_logon(c, host, mode if mode in modes[:5] else "good")
    if isinstance(ctx, str) or mode in ("nomutual",):
        print(ctx if isinstance(ctx, str) else "ok")
        return
    key = gssapi.raw.inquire_sec_context_by_oid(
        ctx, gssapi.OID.from_int_seq(GSS_INQ_SSPI_SESSION_KEY))[0]
    c.key = (bytes(key) + b"\0" * 16)[:16]
    if c.cmac:
        # MS-SMB2 3.2.5.3.1: 3.1.1's signing key, from the preauth hash
        # of all three legs (the final response left out).
        c.key = crypto.KDF_CounterMode(c.key, b"SMBSigningKey\0",
                                       c.preauth, 128)
    path = ("\\\\%s\\share" % host).encode("utf-16-le")
    st, r = c.call(3, struct.pack("<HHHH", 9, 0, 64 + 8, len(path)) + path)
    if st != 0:
        print("TREE_CONNECT: status 0x%08x" % st)
        return
    c.tid = struct.unpack_from("<I", r, 36)[0]
    user = os.environ.get("USER", "x")
    err = negoex_create(c, "negoex-%s.txt" % user)
    if err is None and mode == "reauth":
        # Re-authentication on the same session, now in the user's
        # worker: the same three legs; the session keeps its keys.
        ctx = negoex_logon(c, host, "good")
        if isinstance(ctx, str):
            err = "re-authentication: " + ctx
        else:
            err = negoex_create(c, "negoex-reauth-%s.txt" % user)
    print(err or "ok")


def session_key(ctx):
    import gssapi
    import gssapi.raw
    key = gssapi.raw.inquire_sec_context_by_oid(
        ctx, gssapi.OID.from_int_seq(GSS_INQ_SSPI_SESSION_KEY))[0]
    return (bytes(key) + b"\0" * 16)[:16]


def signed_by(r, key, cmac=False):
    """Is response r signed with key (HMAC-SHA256, or 3.x's AES-CMAC)?"""
    if not struct.unpack_from("<I", r, 16)[0] & 0x8:
        return False
    m = bytearray(r)
    m[48:64] = b"\0" * 16
    if cmac:
        from impacket import crypto
        return crypto.AES_CMAC(key, bytes(m), len(m))[:16] == r[48:64]
    return hmac.new(key, bytes(m), hashlib.sha256).digest()[:16] == r[48:64]


def one_leg_logon(c, host, creds, legs=1):
    """An optimistic AP-REQ in the NegTokenInit, Kerberos first, mutual
    authentication (legs 2: the NegTokenInit without it, accept-incomplete
    naming Kerberos, then the AP-REQ in a NegTokenResp); the context and
    the final response, or a string."""
    import gssapi
    mech_types = der(0x30, der(0x06, KRB5_MS_OID) + der(0x06, KRB5_OID) +
                     der(0x06, NTLMSSP_OID))
    name = gssapi.Name("cifs@" + host, gssapi.NameType.hostbased_service)
    ctx = gssapi.SecurityContext(
        name=name, mech=gssapi.MechType.kerberos, usage="initiate",
        creds=creds, flags=[gssapi.RequirementFlag.integrity,
                            gssapi.RequirementFlag.mutual_authentication])
    if legs == 2:
        init = der(0x30, der(0xa0, mech_types))
        st, blob = c.setup(der(0x60, der(0x06, SPNEGO_OID) +
                               der(0xa0, init)))
        f = neg_resp_fields(blob)
        if st != 0xc0000016 or f.get(0) != b"\x01" or \
                f.get(1) != KRB5_MS_OID:
            return "two legs, first: status 0x%08x fields %r" % (st, f), None
        st, blob = c.setup(neg_resp(ctx.step()))
    else:
        st, blob = c.setup(negoex_init(mech_types, ctx.step()))
    f = neg_resp_fields(blob)
    if st != 0 or f.get(0) != b"\x00" or 2 not in f:
        return "one leg: status 0x%08x fields %r" % (st, f), None
    ctx.step(f[2])              # the AP-REP
    if not ctx.complete:
        return "one leg: the AP-REP did not complete the context", None
    return ctx, c.last


class Who:
    """One session of the connection: its id, key and tree."""

    def __init__(self, c, name):
        self.c = c
        self.name = name
        self.sid = self.tid = 0
        self.key = None

    def use(self):
        self.c.sid, self.c.key, self.c.tid = self.sid, self.key, self.tid
        return self.c

    def keep(self):
        self.sid, self.key, self.tid = self.c.sid, self.c.key, self.c.tid

    def connect(self, host):
        c = self.use()
        path = ("\\\\%s\\share" % host).encode("utf-16-le")
        st, r = c.call(3, struct.pack("<HHHH", 9, 0, 64 + 8, len(path)) +
                       path)
        if st != 0:
            return "%s: TREE_CONNECT: status 0x%08x" % (self.name, st)
        self.tid = struct.unpack_from("<I", r, 36)[0]
        if not signed_by(r, self.key, self.c.cmac):
            return "%s: TREE_CONNECT answer not signed with the key" % \
                self.name
        return None

    def create(self, fname):
        return negoex_create(self.use(), fname)


def multi_logon(c, host, creds, legs, who):
    """A new session on c as who: one leg or three; None or an error."""
    c.sid, c.key, c.tid = 0, None, 0
    if c.cmac:
        c.preauth = c.conn_preauth      # a new session's hash starts there
    if legs < 3:
        ctx, final = one_leg_logon(c, host, creds, legs)
        if isinstance(ctx, str):
            return ctx
    else:
        ctx = negoex_logon(c, host, "good", creds)
        if isinstance(ctx, str):
            return "%s: %s" % (who.name, ctx)
        final = c.last
    who.sid = c.sid
    who.key = session_key(ctx)
    if c.cmac:
        # MS-SMB2 3.2.5.3.1: 3.1.1's signing key, from the session's
        # preauth hash (its requests and answers but the final one).
        from impacket import crypto
        who.key = crypto.KDF_CounterMode(who.key, b"SMBSigningKey\0",
                                         c.preauth, 128)
    if not signed_by(final, who.key, c.cmac):
        return "%s: the final SESSION_SETUP answer is not signed with " \
            "the session's key" % who.name
    return who.connect(host)


def cmd_multi(host, cc_alice, cc_bob, *cmd):
    import subprocess
    import gssapi
    ca = gssapi.Credentials(usage="initiate", store={"ccache": cc_alice})
    cb = gssapi.Credentials(usage="initiate", store={"ccache": cc_bob})
    smb311 = cmd[:1] == ("smb311",)
    cmd = cmd[1:] if smb311 else cmd
    c = Smb(PORT, "127.0.4.3" if smb311 else "127.0.4.1")
    if smb311:
        st = negotiate311(c, 2)
        if st != 0:
            print("NEGOTIATE 3.1.1: status 0x%08x" % st)
            return
        c.conn_preauth = c.preauth
    else:
        c.call(0, negotiate210(2)[64:])     # signing required by the client
    a, b, b2 = Who(c, "alice"), Who(c, "bob"), Who(c, "bob2")
    b3 = Who(c, "bob3")
    err = multi_logon(c, host, ca, 3, a) or \
        multi_logon(c, host, cb, 1, b) or multi_logon(c, host, cb, 3, b2) or \
        multi_logon(c, host, cb, 2, b3)
    if err:
        print(err)
        return
    if len({a.sid, b.sid, b2.sid, b3.sid}) != 4:
        print("session ids not distinct: %x %x %x %x" % (a.sid, b.sid,
                                                        b2.sid, b3.sid))
        return
    for w in (a, b, b2, b3, a, b):
        err = w.create("km-%s.txt" % w.name)
        if err:
            print("%s: %s" % (w.name, err))
            return
    err = a.create("kmsecret")
    if err != "CREATE: status 0xc0000022":
        print("alice opens bob's 0600 file: %s" % (err or "granted"))
        return
    for w in (b, b2):
        err = w.create("kmsecret")
        if err:
            print("%s opens his 0600 file: %s" % (w.name, err))
            return
    if cmd:
        subprocess.run(list(cmd) + ["%x" % b.sid], check=False)
        err = b.create("km-bob-after.txt")
        if err != "CREATE: status 0xc0000203":
            print("bob after his worker died: %s" % (err or "served"))
            return
        err = a.create("km-alice-after.txt")
        if err:
            print("alice after bob's worker died: %s" % err)
            return
    print("ok")


def cmd_expire(host, cc_alice, cc_bob_short, cc_bob, secs):
    """bob's relayed session ends with his short ticket; a fresh one
    re-authenticates it through the relay, in bob's worker."""
    import time
    import gssapi
    ca = gssapi.Credentials(usage="initiate", store={"ccache": cc_alice})
    cs = gssapi.Credentials(usage="initiate",
                            store={"ccache": cc_bob_short})
    cb = gssapi.Credentials(usage="initiate", store={"ccache": cc_bob})
    c = Smb(PORT, "127.0.4.4")
    c.call(0, negotiate210(2)[64:])
    a, b = Who(c, "alice"), Who(c, "bob")
    err = multi_logon(c, host, ca, 3, a) or multi_logon(c, host, cs, 1, b) \
        or b.create("ke-bob.txt")
    if err:
        print(err)
        return
    time.sleep(float(secs))
    err = b.create("ke-bob-late.txt")
    if err != "CREATE: status 0xc000035c" or not signed_by(c.last, b.key):
        print("bob after his ticket's end: %s (signed %s)" %
              (err or "served", signed_by(c.last, b.key)))
        return
    err = a.create("ke-alice.txt")
    if err:
        print("alice after bob's session expired: " + err)
        return
    # A fresh ticket on bob's session: routed to his worker, which asks
    # the master itself (its own user's verdict, the key its own).
    c = b.use()
    ctx, final = one_leg_logon(c, host, cb)
    if isinstance(ctx, str):
        print("re-authentication: " + ctx)
        return
    if c.sid != b.sid or not signed_by(final, b.key):
        print("re-authentication: session %x, signed %s" %
              (c.sid, signed_by(final, b.key)))
        return
    print(b.create("ke-bob-again.txt") or "ok")


def cmd_reauthother(host, cc_alice, cc_bob):
    import gssapi
    ca = gssapi.Credentials(usage="initiate", store={"ccache": cc_alice})
    cb = gssapi.Credentials(usage="initiate", store={"ccache": cc_bob})
    c = Smb(PORT, "127.0.4.2")
    c.call(0, negotiate210(2)[64:])
    a = Who(c, "alice")
    err = multi_logon(c, host, ca, 3, a)
    if err:
        print(err)
        return
    c = a.use()
    fname = "kr-alice.txt".encode("utf-16-le")
    body = struct.pack("<HBBIQQIIIIIHHII", 57, 0, 0, 2, 0, 0,
                       0x12019f, 0x80, 7, 5, 0x40, 64 + 56, len(fname),
                       0, 0) + fname
    st, r = c.call(5, body)
    if st != 0:
        print("CREATE: status 0x%08x" % st)
        return
    fid = r[64 + 64:64 + 80]
    data = b"alice's words"
    st, r = c.call(9, struct.pack("<HHIQ16sIIHHI", 49, 64 + 48, len(data),
                                  0, fid, 0, 0, 0, 0, 0) + data)
    if st != 0:
        print("WRITE: status 0x%08x" % st)
        return
    # bob's ticket on alice's session, the three legs in alice's worker
    ctx = negoex_logon(c, host, "good", cb)
    if isinstance(ctx, str):
        print("re-authentication as bob: " + ctx)
        return
    if not signed_by(c.last, a.key):
        print("re-authentication as bob: answer not signed with alice's key")
        return
    st, r = c.call(8, struct.pack("<HBBIQ16sIIIHH", 49, 0, 0, 64, 0, fid,
                                  0, 0, 0, 0, 0) + b"\0")
    if st != 0 or r[64 + 16:64 + 16 + len(data)] != data:
        print("as bob, alice's handle reads: status 0x%08x" % st)
        return
    err = negoex_create(c, "kr-bob-new.txt")
    if err != "CREATE: status 0xc0000022":
        print("as bob, a new CREATE: %s" % (err or "granted"))
        return
    ctx = negoex_logon(c, host, "good", ca)
    if isinstance(ctx, str):
        print("re-authentication as alice again: " + ctx)
        return
    err = negoex_create(c, "kr-alice-again.txt")
    print(err or "ok")


def cmd_bench(host, legs, n):
    """t/bench/krbconnect.sh: N logons of LEGS legs (1: an optimistic
    AP-REQ, Kerberos first; 3: NegoEx first, request-mic, the AP-REQ, the
    client's MIC), each on a fresh 2.1 connection, then LOGOFF.  The
    ticket for cifs/HOST comes from the ccache after the first, so the KDC
    is not in the loop.  Prints RESULT legs= ops= secs=, or what failed."""
    import time
    legs, n = int(legs), int(n)
    t0 = None
    for i in range(n + 1):
        if i == 1:
            t0 = time.monotonic()   # the first one warms the ccache up
        c = Smb(PORT, "127.0.5.1")
        c.call(0, negotiate210()[64:])
        if legs == 1:
            ctx, _ = one_leg_logon(c, host, None)
        else:
            ctx = negoex_logon(c, host, "good")
        if isinstance(ctx, str):
            print(ctx)
            return
        c.key = session_key(ctx)
        st, _ = c.call(2, struct.pack("<HH", 4, 0))
        if st != 0:
            print("LOGOFF: status 0x%08x" % st)
            return
        c.s.close()
    print("RESULT legs=%d ops=%d secs=%.3f" % (legs, n,
                                              time.monotonic() - t0))


if __name__ == "__main__":
    {"garbage": cmd_garbage, "negoex": cmd_negoex, "multi": cmd_multi,
     "reauthother": cmd_reauthother, "bench": cmd_bench,
     "expire": cmd_expire}[sys.argv[2]](*sys.argv[3:])
