# Signed anonymous sessions (t/integ/anon_sign.sh).  An anonymous
# NTLMSSP logon's key is the client's random key, RC4-encrypted under a
# zero key in the AUTHENTICATE (MS-NLMP 3.3.1, KEY_EXCH; impacket sends
# one).  A client that signs with it gets signed answers; a bad signature
# is refused; an unsigned request is still served (as Samba 4.22: an
# anonymous session never has signing required).
#   argv: PORT MODE
#     MODE single: a fresh connection, the anonymous session alone (the
#          client asks for signing in its NTLMSSP NEGOTIATE: KEY_EXCH).
#     MODE nokex: the same without KEY_EXCH: the key is 16 zero bytes.
#     MODE relay: alice's session first, then the anonymous one on the
#          same connection (served by the guest account's worker over a
#          relay: run against `server signing = mandatory`).
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import copy
import sys

from impacket import crypto, smb3
from impacket.smb3structs import (SMB2_DIALECT_30, SMB2_FLAGS_SIGNED,
                                  SMB2_TREE_CONNECT, SMB2TreeConnect)

PORT = int(sys.argv[1])
MODE = sys.argv[2]
STATUS_SUCCESS = 0
STATUS_ACCESS_DENIED = 0xC0000022
failed = 0


def check(desc, cond, why=""):
    global failed
    if not cond:
        failed += 1
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def signing_key(session_key):
    # MS-SMB2 3.1.4.2, dialect 3.0 (impacket 0.10's 3.1.1 keys are wrong).
    return crypto.KDF_CounterMode(session_key, b"SMB2AESCMAC\x00",
                                  b"SmbSign\x00", 128)


def tree_connect_raw(c, share, sign_with):
    """TREE_CONNECT signed with sign_with (None: unsigned); returns the
    raw answer (the SMB2 message, no framing)."""
    s = c._Session
    s["SigningActivated"] = sign_with is not None
    if sign_with is not None:
        s["SigningKey"] = sign_with
    tc = SMB2TreeConnect()
    path = "\\\\127.0.0.1\\" + share
    tc["Buffer"] = path.encode("utf-16le")
    tc["PathLength"] = len(path) * 2
    p = c.SMB_PACKET()
    p["Command"] = SMB2_TREE_CONNECT
    p["Data"] = tc
    c.sendSMB(p)
    return c._NetBIOSSession.recv_packet(30).get_trailer()


def verify(raw, key):
    """Is raw (one SMB2 response) signed, and with key?"""
    flags = int.from_bytes(raw[16:20], "little")
    if not flags & SMB2_FLAGS_SIGNED:
        return False
    zeroed = raw[:48] + b"\x00" * 16 + raw[64:]
    return crypto.AES_CMAC(key, zeroed, len(zeroed)) == raw[48:64]


def status(raw):
    return int.from_bytes(raw[8:12], "little")


def anonymous_checks(c, where, zero_key=False):
    s = c._Session
    key = s["SessionKey"]
    if zero_key:
        check("%s: without KEY_EXCH the key is zero" % where,
              key == b"\x00" * 16, repr(key))
    else:
        check("%s: the anonymous session has a key of its own (KEY_EXCH)"
              % where, len(key) == 16 and key != b"\x00" * 16, repr(key))
    good = signing_key(key)
    raw = tree_connect_raw(c, "IPC$", good)
    check("%s: a signed TREE_CONNECT of IPC$ is served" % where,
          status(raw) == STATUS_SUCCESS, "status %08x" % status(raw))
    check("%s: its answer is signed with the anonymous key" % where,
          verify(raw, good), "flags %08x" % int.from_bytes(raw[16:20],
                                                          "little"))
    bad = signing_key(b"\x1f\x2f\x3f" + b"\x00" * 13)
    raw = tree_connect_raw(c, "IPC$", bad)
    check("%s: a TREE_CONNECT signed with another key is refused" % where,
          status(raw) == STATUS_ACCESS_DENIED, "status %08x" % status(raw))
    # (The refusal is signed with the session's key; Samba echoes the
    # request's signature instead: smbtorture accepts both.)
    if MODE != "relay":
        # Relayed sessions must sign (worker/relay.c); this one need not.
        raw = tree_connect_raw(c, "IPC$", None)
        check("%s: an unsigned TREE_CONNECT is served (not required)" % where,
              status(raw) == STATUS_SUCCESS, "status %08x" % status(raw))
        check("%s: and answered unsigned" % where,
              not int.from_bytes(raw[16:20], "little") & SMB2_FLAGS_SIGNED)
    else:
        raw = tree_connect_raw(c, "IPC$", None)
        check("%s: an unsigned TREE_CONNECT of a relayed session is refused"
              % where, status(raw) == STATUS_ACCESS_DENIED,
              "status %08x" % status(raw))
    # The connection is still there: a last signed request is served.
    raw = tree_connect_raw(c, "IPC$", good)
    check("%s: the connection goes on, signed again" % where,
          status(raw) == STATUS_SUCCESS and verify(raw, good),
          "status %08x" % status(raw))


def single(kex):
    c = smb3.SMB3("127.0.0.1", "127.0.0.1", sess_port=PORT,
                  preferredDialect=SMB2_DIALECT_30, timeout=30)
    # impacket asks for KEY_EXCH (and signs) when signing is required.
    c._Connection["RequireSigning"] = kex
    c.login("", "")
    check("anonymous logon", c._Session["SessionID"] != 0)
    anonymous_checks(c, "anonymous alone" + ("" if kex else ", no KEY_EXCH"),
                     zero_key=not kex)


def relay():
    c = smb3.SMB3("127.0.0.1", "127.0.0.1", sess_port=PORT,
                  preferredDialect=SMB2_DIALECT_30, timeout=30)
    fresh = copy.deepcopy(c._Session)
    c.login("alice", "alicepw1")
    alice = c._Session
    t = c.connectTree("share")
    c._Session = copy.deepcopy(fresh)
    c.login("", "")
    anon = c._Session
    check("anonymous logon on alice's connection",
          anon["SessionID"] not in (0, alice["SessionID"]))
    anonymous_checks(c, "anonymous on alice's connection")
    c._Session = alice
    c._Session["SigningActivated"] = True
    f = c.create(t, "anon_relay.txt", 0x3, 0x3, 0x40, 5, 0)
    c.write(t, f, b"alice", 0, 5)
    check("alice goes on", c.read(t, f, 0, 16) == b"alice")
    c.close(t, f)


if MODE == "single":
    single(True)
elif MODE == "nokex":
    single(False)
elif MODE == "relay":
    relay()
sys.exit(1 if failed else 0)
