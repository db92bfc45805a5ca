# Plays a compromised owner (t/integ/relaypeer.sh): takes a copy of
# alice's stopped worker's channel to the master and of its client
# socket (pidfd_getfd, as root), and for one fresh verdict of bob each
# shows the master a socket (MSG_RELAY_PEER) and relays (MSG_RELAY):
#   8101  alice's own connection, the master's (from 127.0.0.5)
#   8102  an IPv6 socket bound to ::ffff:127.0.0.3 on the server's port,
#         accepted from 127.0.0.5 (the server also listens on "::")
#   8103  an IPv4 socket bound to 127.0.0.3 on the server's port,
#         accepted from 127.0.0.5
#   argv: PORT PID MSG_AUTH_REQ MSG_AUTH_REP MSG_RELAY MSG_HANDOFF_DONE
#         MSG_RELAY_PEER
# The master's verdicts are read from its log by relaypeer.sh; prints
# "ok DESC" / "FAIL DESC: why" for what it checks itself.
import ctypes
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
PORT, PID = int(sys.argv[1]), int(sys.argv[2])
AUTH_REQ, AUTH_REP = int(sys.argv[3]), int(sys.argv[4])
RELAY, HANDOFF_DONE, RELAY_PEER = (int(sys.argv[5]), int(sys.argv[6]),
                                   int(sys.argv[7]))
# privsep_client.py reads its own argv on import: the same numbers there
sys.argv = [sys.argv[0], str(PORT), str(PID), str(AUTH_REQ), str(AUTH_REP),
            "0", "0", str(RELAY), str(HANDOFF_DONE), "0", "0"]
import privsep_client as pc  # noqa: E402

SYS_PIDFD_GETFD = 438


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def worker_client_socket(pid):
    """The worker's TCP socket on the server's port from 127.0.0.5."""
    libc = ctypes.CDLL(None, use_errno=True)
    pfd = os.pidfd_open(pid)
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith(
                        "socket:"):
                    continue
            except OSError:
                continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pfd, int(name), 0)
            if fd < 0:
                continue
            s = socket.socket(fileno=fd)
            try:
                if (s.family == socket.AF_INET and
                        s.type == socket.SOCK_STREAM and
                        s.getsockname()[1] == PORT and
                        s.getpeername()[0] == "127.0.0.5"):
                    return s
            except OSError:
                pass
            s.detach()
            os.close(fd)
    finally:
        os.close(pfd)
    return None


def accepted_on(family, addr):
    """A connection from 127.0.0.5 accepted on addr:PORT, bound here."""
    lst = socket.socket(family, socket.SOCK_STREAM)
    # the previous case's connection on 127.0.0.3:PORT is in TIME_WAIT
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        lst.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    lst.bind((addr, PORT))
    lst.listen(1)
    cli = socket.socket()
    cli.bind(("127.0.0.5", 0))
    cli.connect(("127.0.0.3", PORT))
    s, _ = lst.accept()
    lst.close()
    return s, cli


def show_and_relay(chan, mid, sock):
    neg, chal, auth, _ = pc.exchange("bob", "bobpw1")
    rep = pc.auth_req(chan, mid, neg, chal, auth)
    if rep is None or rep[0] != 0:
        return "no verdict for bob: %r" % (rep,)
    socket.send_fds(chan, [struct.pack("<LLL", RELAY_PEER, 0, mid)],
                    [sock.fileno()])
    a, b = socket.socketpair()
    body = struct.pack("<Q", 0x5150 + mid) + b"\0" * 64
    socket.send_fds(chan, [struct.pack("<LLL", RELAY, len(body), mid) + body],
                    [b.fileno()])
    b.close()
    time.sleep(0.3)
    a.close()
    return None


def main():
    chan = pc.channel_of(PID)
    own = worker_client_socket(PID)
    check("alice's worker holds her connection from 127.0.0.5",
          own is not None, "no such socket in /proc/%d/fd" % PID)
    if own is None:
        return
    why = show_and_relay(chan, 8101, own)
    check("relay 8101 (her own connection) sent", why is None, why)
    s, c = accepted_on(socket.AF_INET6, "::ffff:127.0.0.3")
    check("an IPv6 socket binds ::ffff:127.0.0.3 on the server's port",
          s.getsockname()[1] == PORT, repr(s.getsockname()))
    why = show_and_relay(chan, 8102, s)
    check("relay 8102 (v4-mapped, own listener) sent", why is None, why)
    s.close()
    c.close()
    s, c = accepted_on(socket.AF_INET, "127.0.0.3")
    why = show_and_relay(chan, 8103, s)
    check("relay 8103 (127.0.0.3, own listener) sent", why is None, why)
    s.close()
    c.close()
    chan.close()


if __name__ == "__main__":
    main()
