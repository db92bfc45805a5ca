# The attacker and the victim of t/integ/dos_preauth.sh.
#   dos_preauth_client.py PORT slowloris SOCKETS ADDRS SECS LOGINS USER PASSWORD
# Keeps SOCKETS slow pre-authentication connections open from ADDRS
# loopback addresses (127.0.0.2 ...), each sending one byte of a frame every
# 2 s and reconnecting when the server drops it, while USER logs in LOGINS
# times in a row from 127.0.0.1, one a second from 8 s on (a fresh
# connection each: NEGOTIATE, SESSION_SETUP, TREE_CONNECT).  Prints one
# fact a line.
#   dos_preauth_client.py PORT bindflood CONNS USER PASSWORD
# Logs USER in, then opens CONNS connections from 127.0.0.2 that each
# negotiate 3.1.1 and send a SESSION_SETUP binding to USER's session
# (unsigned: it must fail), holding them open; prints how many got an
# answer, how many the server closed, and whether USER still works.
#   dos_preauth_client.py PORT bind2x CONNS PER USER PASSWORD
# Logs USER in over SMB 2.1 (its signing key is the session key), then
# from 127.0.0.2 opens CONNS connections negotiating 2.1 or 2.0.2, each
# sending PER bindings to that live session signed with its key (and one
# unsigned), plus a 3.1.1 connection binding to it; while they are held
# open, counts the descriptors of USER's workers.  Prints the statuses,
# whether each answer is signed with the session's key, and the counts.
import glob
import hashlib
import hmac
import os
import selectors
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
PORT = int(sys.argv[1])


def slow_conn(addr):
    s = socket.socket()
    s.setblocking(False)
    s.bind((addr, 0))
    try:
        s.connect(("127.0.0.1", PORT))
    except BlockingIOError:
        pass
    return s


def login_once(user, password):
    from impacket.smbconnection import SMBConnection
    t0 = time.monotonic()
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT, timeout=10)
    c.login(user, password)
    c.connectTree("share")
    dt = time.monotonic() - t0
    c.close()
    return dt


def cmd_slowloris(nsock, naddr, secs, logins, user, password):
    nsock, naddr, secs, logins = int(nsock), int(naddr), float(secs), int(logins)
    # A NEGOTIATE frame that never completes: a 4-byte length of 200, then
    # one byte every 2 s.
    frame = struct.pack(">I", 200) + b"\xfeSMB" + b"\0" * 196
    sel = selectors.DefaultSelector()
    conns = {}  # socket -> [addr, bytes sent, next send time]
    reconnects = 0

    def add(addr):
        s = slow_conn(addr)
        conns[s] = [addr, 0, time.monotonic() + 0.1]
        sel.register(s, selectors.EVENT_READ)

    for i in range(nsock):
        add("127.0.0.%d" % (2 + i % naddr))
    end = time.monotonic() + secs
    times, failures = [], 0
    started = time.monotonic()
    next_login = started + 8  # let the flood settle first
    done_logins = 0
    while time.monotonic() < end and done_logins < logins:
        now = time.monotonic()
        for s, st in list(conns.items()):
            if now >= st[2] and st[1] < len(frame):
                try:
                    s.send(frame[st[1]:st[1] + 1])
                    st[1] += 1
                except BlockingIOError:
                    pass
                except OSError:
                    pass
                st[2] = now + 2
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                addr = conns.pop(s)[0]
                sel.unregister(s)
                s.close()
                add(addr)
                reconnects += 1
        if time.monotonic() >= next_login:
            try:
                dt = login_once(user, password)
                times.append(dt)
            except Exception as e:
                failures += 1
                times.append(99.0)
                print("login-error", str(e)[:100])
            done_logins += 1
            next_login = time.monotonic() + 0.5
    print("slow-sockets", len(conns))
    print("reconnects", reconnects)
    print("logins", len(times), "failed", failures)
    print("login-max-ms", int(max(times) * 1000) if times else -1)
    print("login-times-ms", " ".join(str(int(t * 1000)) for t in times))
    print("slow", sum(1 for t in times if t > 1.0))
    sys.stdout.flush()
    for s in conns:
        s.close()


def negotiate311():
    # MS-SMB2 2.2.3: dialect 0x311, a preauth context (SHA-512) and an
    # encryption context (AES-128-GCM).
    salt = b"\x11" * 32
    pre = struct.pack("<HHI", 1, 38, 0) + struct.pack("<HHH", 1, 32, 1) + \
        salt
    enc = struct.pack("<HHI", 2, 4, 0) + struct.pack("<HH", 1, 2)
    ctx_off = 64 + 36 + 2
    ctx_off = (ctx_off + 7) & ~7
    body = struct.pack("<HHHHI", 36, 1, 1, 0, 0) + b"\x22" * 16 + \
        struct.pack("<IHH", ctx_off, 2, 0) + struct.pack("<H", 0x311)
    body += b"\0" * (ctx_off - 64 - len(body))
    pre += b"\0" * ((8 - len(pre) % 8) % 8)
    body += pre + enc
    return hdr(0, 0, 0) + body


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


def cmd_bindflood(nconn, user, password):
    from impacket.smbconnection import SMBConnection
    nconn = int(nconn)
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT, timeout=10)
    c.login(user, password)
    sid = c.getSMBServer()._Session["SessionID"]
    tid = c.connectTree("share")
    # An NTLMSSP NEGOTIATE in a SPNEGO NegTokenInit is not needed: the
    # server must refuse an unsigned binding whatever it carries.
    blob = b"\x60\x06\x06\x04\x2b\x06\x01\x05"
    socks, answered, closed, refused = [], 0, 0, 0
    for i in range(nconn):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", PORT))
            s.sendall(frame(negotiate311()))
            if recv_frame(s) is None:
                refused += 1
                s.close()
                continue
            setup = struct.pack("<HBBIIHHQ", 25, 1, 1, 0, 0, 64 + 24,
                                len(blob), 0) + blob
            s.sendall(frame(hdr(1, 1, sid) + setup))
            r = recv_frame(s)
            if r is None:
                closed += 1
                s.close()
                continue
            answered += 1
            socks.append(s)
        except OSError:
            refused += 1
            s.close()
    print("bind-answered", answered)
    print("bind-closed", closed)
    print("bind-refused", refused)
    # The user's own session goes on.
    try:
        f = c.openFile(tid, "bindflood.txt", desiredAccess=0x12019f,
                       creationDisposition=5)
        c.writeFile(tid, f, b"still here")
        c.closeFile(tid, f)
        print("user-works 1")
    except Exception as e:
        print("user-works 0", str(e)[:80])
    t0 = time.monotonic()
    try:
        login_once(user, password)
        print("login-ms", int((time.monotonic() - t0) * 1000))
    except Exception as e:
        print("login-error", str(e)[:80])
    sys.stdout.flush()
    for s in socks:
        s.close()


def negotiate2(dialect):
    # MS-SMB2 2.2.3: one dialect, signing enabled, no contexts.
    body = struct.pack("<HHHHI", 36, 1, 1, 0, 0) + b"\x33" * 16 + \
        struct.pack("<IHHH", 0, 0, 0, dialect)
    return hdr(0, 0, 0) + body


def binding(mid, sid, key, sign=True):
    # SESSION_SETUP (2.2.5) with SMB2_SESSION_FLAG_BINDING, signed as a
    # 2.x session signs (HMAC-SHA256 of the session key, MS-SMB2 3.1.4.1).
    blob = b"\x60\x06\x06\x04\x2b\x06\x01\x05"
    setup = struct.pack("<HBBIIHHQ", 25, 1, 1, 0, 0, 64 + 24, len(blob),
                        0) + blob
    m = bytearray(hdr(1, mid, sid, 8 if sign else 0) + setup)
    if sign:
        m[48:64] = hmac.new(key, bytes(m), hashlib.sha256).digest()[:16]
    return bytes(m)


def answer_of(r, key):
    # (status, signed with key?)
    st, flags = struct.unpack_from("<I", r, 8)[0], struct.unpack_from(
        "<I", r, 16)[0]
    z = bytearray(r)
    z[48:64] = b"\0" * 16
    good = (flags & 8) != 0 and hmac.compare_digest(
        hmac.new(key, bytes(z), hashlib.sha256).digest()[:16], r[48:64])
    return st, good


def worker_fds(user):
    n = 0
    for d in glob.glob("/proc/[0-9]*"):
        try:
            # The process title: "usmbd: worker USER".
            cmd = open(d + "/cmdline", "rb").read().replace(b"\0", b" ")
            if (b"usmbd: worker " + user.encode() + b" ") in cmd + b" ":
                n += len(os.listdir(d + "/fd"))
        except OSError:
            pass
    return n


def cmd_bind2x(nconn, per, user, password):
    from impacket.smbconnection import SMBConnection
    from impacket.smb3structs import SMB2_DIALECT_21
    nconn, per = int(nconn), int(per)
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT, timeout=10,
                      preferredDialect=SMB2_DIALECT_21)
    c.login(user, password)
    sess = c.getSMBServer()._Session
    sid, key = sess["SessionID"], sess["SessionKey"]
    tid = c.connectTree("share")
    time.sleep(0.5)
    before = worker_fds(user)
    stats = {}
    socks = []

    def count(what):
        stats[what] = stats.get(what, 0) + 1

    for i in range(nconn):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", PORT))
            s.sendall(frame(negotiate2(0x202 if i % 2 else 0x210)))
            if recv_frame(s) is None:
                count("negotiate-closed")
                continue
            for j in range(per + 1):
                s.sendall(frame(binding(1 + j, sid, key, j < per)))
                r = recv_frame(s)
                if r is None:
                    count("closed")
                    break
                st, good = answer_of(r, key)
                count("%s %#x %s" % ("signed-req" if j < per else
                                     "unsigned-req", st,
                                     "signed" if good else "not-signed"))
            socks.append(s)
        except OSError as e:
            count("error " + str(e)[:40])
    # A 3.1.1 connection binding to the 2.1 session: INVALID_PARAMETER.
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", PORT))
        s.sendall(frame(negotiate311()))
        if recv_frame(s) is not None:
            s.sendall(frame(binding(1, sid, key)))
            r = recv_frame(s)
            if r is not None:
                st, good = answer_of(r, key)
                count("3.1.1-req %#x %s" % (st, "signed" if good else
                                            "not-signed"))
        socks.append(s)
    except OSError as e:
        count("error " + str(e)[:40])
    during = worker_fds(user)
    for k in sorted(stats):
        print("answer", stats[k], k)
    print("worker-fds", before, during)
    try:
        f = c.openFile(tid, "bind2x.txt", desiredAccess=0x12019f,
                       creationDisposition=5)
        c.writeFile(tid, f, b"still here")
        c.closeFile(tid, f)
        print("user-works 1")
    except Exception as e:
        print("user-works 0", str(e)[:80])
    sys.stdout.flush()
    for s in socks:
        s.close()


if __name__ == "__main__":
    globals()["cmd_" + sys.argv[2]](*sys.argv[3:])
