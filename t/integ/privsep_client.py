# Plays a compromised worker (t/integ/privsep.sh): takes a copy of alice's
# worker's channel to the master (pidfd_getfd, as root) while that worker
# is stopped, and sends MSG_AUTH_REQs on it as the worker could.
#   argv: PORT PID MSG_AUTH_REQ MSG_AUTH_REP MSG_SESSION_UP BOB_SESSION_ID
#         MSG_RELAY MSG_HANDOFF_DONE MSG_KILL_SESSION MSG_BIND_CHECK_REP
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import os
import select
import socket
import struct
import sys
import time

from impacket import ntlm

sys.dont_write_bytecode = True
from privsep_lib import channel_of  # noqa: E402

PID = int(sys.argv[2])
AUTH_REQ, AUTH_REP = int(sys.argv[3]), int(sys.argv[4])
SESSION_UP, BOB_SID = int(sys.argv[5]), int(sys.argv[6], 16)
RELAY, HANDOFF_DONE = int(sys.argv[7]), int(sys.argv[8])
KILL_SESSION = int(sys.argv[9])
BIND_CHECK_REP = int(sys.argv[10])
AUTH_FLAG_RELAY = 0x4


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def exchange(user, password):
    """A client's NTLMSSP NEGOTIATE and AUTHENTICATE for a CHALLENGE of
    our own (a fresh server challenge), as a worker would forward them."""
    neg = ntlm.getNTLMSSPType1("", "", signingRequired=True)
    av = ntlm.AV_PAIRS()
    av[ntlm.NTLMSSP_AV_HOSTNAME] = "SRV".encode("utf-16le")
    av[ntlm.NTLMSSP_AV_DNS_HOSTNAME] = "srv".encode("utf-16le")
    av[ntlm.NTLMSSP_AV_DOMAINNAME] = "WORKGROUP".encode("utf-16le")
    av[ntlm.NTLMSSP_AV_DNS_DOMAINNAME] = "workgroup".encode("utf-16le")
    av[ntlm.NTLMSSP_AV_TIME] = struct.pack(
        "<q", int((time.time() + 11644473600) * 10000000))
    ch = ntlm.NTLMAuthChallenge()
    ch["flags"] = (ntlm.NTLMSSP_NEGOTIATE_UNICODE |
                   ntlm.NTLMSSP_NEGOTIATE_NTLM |
                   ntlm.NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
                   ntlm.NTLMSSP_NEGOTIATE_TARGET_INFO |
                   ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH |
                   ntlm.NTLMSSP_NEGOTIATE_128 | ntlm.NTLMSSP_NEGOTIATE_SIGN |
                   ntlm.NTLMSSP_NEGOTIATE_VERSION)
    dom = "WORKGROUP".encode("utf-16le")
    ch["domain_len"] = ch["domain_max_len"] = len(dom)
    ch["domain_offset"] = 40 + 16
    ch["challenge"] = os.urandom(8)
    ch["domain_name"] = dom
    tif = av.getData()
    ch["TargetInfoFields_len"] = ch["TargetInfoFields_max_len"] = len(tif)
    ch["TargetInfoFields"] = tif
    ch["TargetInfoFields_offset"] = 40 + 16 + len(dom)
    ch["Version"] = b"\xff" * 8
    ch["VersionLen"] = 8
    chal = ch.getData()
    auth, key = ntlm.getNTLMSSPType3(neg, chal, user, password, "", "", "")
    return neg.getData(), chal, auth.getData(), key


def auth_req(chan, mid, neg, chal, auth):
    """MSG_AUTH_REQ (daemon/authmsg.c) and the master's MSG_AUTH_REP:
    (status, flags, session key, uid, user)."""
    body = b"127.0.0.1".ljust(64, b"\0")
    for blob in (neg, chal, auth):
        body += struct.pack("<L", len(blob)) + blob
    body += struct.pack("<L", 0)	# mech: AUTHMSG_MECH_NTLMSSP
    # mech_types and mic (empty), krb_ctx: Kerberos-only fields
    body += struct.pack("<LLQ", 0, 0, 0)
    chan.send(struct.pack("<LLL", AUTH_REQ, len(body), mid) + body)
    deadline = time.time() + 15
    while time.time() < deadline:
        r, _, _ = select.select([chan], [], [], deadline - time.time())
        if not r:
            break
        m = chan.recv(70000)
        typ, ln, rid = struct.unpack_from("<LLL", m)
        if typ != AUTH_REP or rid != mid:
            continue	# the worker's own traffic
        p = m[12:]
        status, flags = struct.unpack_from("<LL", p)
        key = p[8:24]
        uid = struct.unpack_from("<L", p, 24)[0]
        user = p[32:96].split(b"\0")[0].decode()
        return status, flags, key, uid, user
    return None


def relay(chan, mid):
    """MSG_RELAY naming request mid, with one end of a socketpair: the
    master's MSG_HANDOFF_DONE status, or None."""
    a, b = socket.socketpair()
    body = struct.pack("<Q", 0x1234) + b"\0" * 64
    socket.send_fds(chan, [struct.pack("<LLL", RELAY, len(body), mid) + body],
                    [b.fileno()])
    b.close()
    deadline = time.time() + 15
    try:
        while time.time() < deadline:
            r, _, _ = select.select([chan], [], [], deadline - time.time())
            if not r:
                break
            m = chan.recv(70000)
            typ, ln, rid = struct.unpack_from("<LLL", m)
            if typ == HANDOFF_DONE and rid == mid:
                return struct.unpack_from("<L", m, 12)[0]
        return None
    finally:
        a.close()


def main():
    chan = channel_of(PID)
    neg, chal, auth, bkey = exchange("bob", "bobpw1")
    rep = auth_req(chan, 7001, neg, chal, auth)
    check("the master answers a worker's forwarded exchange", rep is not None,
          "no MSG_AUTH_REP")
    if rep is None:
        return
    check("bob's verdict on alice's worker's channel carries no session key",
          rep[2] == b"\0" * 16 and rep[2] != bkey,
          "status 0x%08x key %s" % (rep[0], rep[2].hex()))
    check("... but still names bob (the worker relays it or refuses it)",
          rep[0] == 0 and rep[4] == "bob", "status 0x%08x user %r" % (rep[0], rep[4]))
    check("... flagged as another user's session to relay",
          rep[1] & AUTH_FLAG_RELAY, "flags 0x%x" % rep[1])
    st = relay(chan, 7999)
    check("MSG_RELAY naming no verdict is refused (ACCESS_DENIED)",
          st == 0xC0000022, "status %r" % (st,))

    neg, chal, auth, akey = exchange("alice", "alicepw1")
    rep = auth_req(chan, 7002, neg, chal, auth)
    check("alice's own exchange gets her key (the channel works)",
          rep is not None and rep[0] == 0 and rep[2] == akey,
          "reply %r" % (rep,))
    st = relay(chan, 7002)
    check("MSG_RELAY naming alice's own verdict is refused (ACCESS_DENIED)",
          st == 0xC0000022, "status %r" % (st,))
    rep = auth_req(chan, 7003, neg, chal, auth)
    check("the same exchange sent again is refused",
          rep is not None and rep[0] != 0 and rep[2] == b"\0" * 16,
          "reply %r" % (rep,))
    neg, chal, auth, bkey = exchange("bob", "bobpw1")
    rep = auth_req(chan, 7004, neg, chal, auth)
    rep2 = auth_req(chan, 7005, neg, chal, auth)
    check("bob's exchange replayed is a logon failure, not a verdict",
          rep2 is not None and rep2[0] == 0xC000006D,
          "reply %r" % (rep2,))
    # An answer to a binding check nobody asked: a refusal of bob's
    # session (signed or not) for some gate's client.  Nobody waits for
    # it under that id: ignored, the worker stays (its channel answers
    # the claim below).
    rsp = b"\xfeSMB" + struct.pack("<HHIHHIIQIIQ16s", 64, 1, 0xC00000D0, 1,
                                    1, 9, 0, 1, 0, 0, BOB_SID, b"\0" * 16)
    rsp += struct.pack("<HBBIB", 9, 0, 0, 0, 0)
    p = struct.pack("<II", 0xC00000D0, len(rsp)) + rsp
    chan.send(struct.pack("<LLL", BIND_CHECK_REP, len(p), 4242) + p)
    # claim bob's session, so that his channel bindings come here
    chan.send(struct.pack("<LLLQ", SESSION_UP, 8, 0, BOB_SID))
    # refused: the master ends the claimant's session of that id (a
    # worker without the state env meets ids only in the master's table)
    got = None
    deadline = time.time() + 5
    while got is None and time.time() < deadline:
        r, _, _ = select.select([chan], [], [], deadline - time.time())
        if not r:
            break
        m = chan.recv(70000)
        typ, ln, rid = struct.unpack_from("<LLL", m)
        if typ == KILL_SESSION:
            got = (rid, m[12:])
    check("a claimed id is refused: the master ends the claimant's session",
          got == (0, struct.pack("<Q", BOB_SID)), "got %r" % (got,))
    chan.close()


if __name__ == "__main__":
    main()
