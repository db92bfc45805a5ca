# The client of the receive-buffer check in t/integ/dos.sh.
#   dos_rxbuf_client.py PORT CONNS USER PASSWORD
# CONNS connections log in as USER (empty: anonymous) and connect to
# IPC$ only, then each sends the 4-byte length of an 8 MiB frame and
# 6.4 MB of it, and holds on.  Prints how many the server cut off
# ("cut N"), then waits for a line on stdin before closing them (so the
# script can measure the server's memory meanwhile).
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
from impacket.smbconnection import SMBConnection

port, n, user, pw = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
conns = []
for i in range(n):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port, timeout=10)
    c.login(user, pw)
    c.connectTree("IPC$")
    conns.append(c)
socks = [c.getSMBServer()._NetBIOSSession.get_socket() for c in conns]
chunk = b"\0" * 65536
dead = set()
for i, s in enumerate(socks):
    s.setblocking(False)
    try:
        s.send(struct.pack(">I", 8 * 1024 * 1024) + b"\xfeSMB")
    except OSError:
        dead.add(i)
        continue
    sent, end = 0, time.monotonic() + 2
    while sent < 100 * len(chunk) and time.monotonic() < end:
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            dead.add(i)
            break
time.sleep(1)
for i, s in enumerate(socks):
    try:
        if s.recv(65536) == b"":
            dead.add(i)
    except BlockingIOError:
        pass
    except OSError:
        dead.add(i)
print("cut", len(dead))
sys.stdout.flush()
sys.stdin.readline()
