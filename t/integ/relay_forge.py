#!/usr/bin/env python3
"""Plays a compromised relayed worker (t/integ/multi.sh, multi_client.py
forge): writes into each relay that BOB_PID's worker serves for
ALICE_PID's (the socket's owner) an answer of its own making: a READ
response under session SID for message id MID, carrying DATA, and its
control record (no ids charged, so the window is left as it was).  The
relay socket is taken from bob's worker with pidfd_getfd (root), found
as the stream socket whose peer alice's worker holds (ss -xpn).

Usage: relay_forge.py BOB_PID ALICE_PID SID_HEX MID DATA [sealed]
With "sealed" the answer is a transform (MS-SMB2 2.2.41) naming SID, its
payload the READ response as it is (no key: what a relay may carry
sealed is not the owner's to read).
Exit 0 when at least one relay was written to."""
import ctypes
import os
import re
import struct
import subprocess
import sys

SYS_PIDFD_OPEN = 434
SYS_PIDFD_GETFD = 438


def sockets_of(pid):
    """{inode: fd} of the sockets pid holds."""
    out = {}
    d = "/proc/%d/fd" % pid
    for fd in os.listdir(d):
        try:
            link = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            out[int(m.group(1))] = int(fd)
    return out


def relay_fds(bob, alice):
    """bob's fds of the stream sockets whose peer alice holds."""
    mine = sockets_of(bob)
    theirs = sockets_of(alice)
    fds = []
    ss = subprocess.run(["ss", "-xn"], capture_output=True, text=True).stdout
    for line in ss.splitlines():
        f = line.split()
        if len(f) < 8 or f[0] != "u_str":
            continue
        try:
            local, peer = int(f[5]), int(f[7])
        except ValueError:
            continue
        if local in mine and peer in theirs:
            fds.append(mine[local])
    return fds


def answer(sid, mid, data, sealed=False):
    """A READ response (MS-SMB2 2.2.20) under sid, and its control record
    (worker/relay.h): granted 1, no ids."""
    hdr = b"\xfeSMB" + struct.pack("<HHIHHIIQIIQ16s", 64, 1, 0, 8, 1, 1, 0,
                                   mid, 0xfeff, 0, sid, b"\0" * 16)
    body = struct.pack("<HBBIII", 17, 0x50, 0, len(data), 0, 0) + data
    msg = hdr + body
    if sealed:
        msg = (b"\xfdSMB" + b"\0" * 32 +
               struct.pack("<IHHQ", len(msg), 0, 1, sid) + msg)
    ctl = struct.pack("<HH", 1, 0)
    return (struct.pack(">I", len(msg)) + msg +
            bytes([0xA5]) + len(ctl).to_bytes(3, "big") + ctl)


def main():
    bob, alice, sid, mid, data = (int(sys.argv[1]), int(sys.argv[2]),
                                  int(sys.argv[3], 16), int(sys.argv[4]),
                                  sys.argv[5].encode())
    sealed = len(sys.argv) > 6 and sys.argv[6] == "sealed"
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, bob, 0)
    if pidfd < 0:
        print("pidfd_open: errno %d" % ctypes.get_errno(), file=sys.stderr)
        return 1
    n = 0
    for fd in relay_fds(bob, alice):
        mine = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if mine < 0:
            continue
        try:
            os.write(mine, answer(sid, mid, data, sealed))
            n += 1
        except OSError:
            pass
        os.close(mine)
    os.close(pidfd)
    print("forged an answer on %d relay(s)" % n)
    return 0 if n > 0 else 1


sys.exit(main())
