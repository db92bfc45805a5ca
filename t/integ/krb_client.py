# Hostile Kerberos logons for t/integ/krb.sh.
#   krb_client.py PORT garbage N
# Sends N SESSION_SETUPs whose SPNEGO NegTokenInit names Kerberos first and
# carries a malformed AP-REQ (random bytes, a truncated or mangled
# [APPLICATION 14], absurd DER lengths), each on a fresh connection, and
# prints one line per outcome kind (each from its own loopback address): "status 0xNNNNNNNN COUNT" for answers,
# "closed COUNT" for connections the server dropped.  None may succeed.
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


def negotiate210():
    body = struct.pack("<HHHHI", 36, 1, 1, 0, 0) + b"\x33" * 16 + \
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


if __name__ == "__main__":
    {"garbage": cmd_garbage}[sys.argv[2]](*sys.argv[3:])
