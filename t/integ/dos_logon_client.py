# The client of t/integ/dos_logon.sh: timed logons.
#   dos_logon_client.py PORT times ROUNDS KNOWN UNKNOWN
# ROUNDS rounds of one wrong-password logon as KNOWN and one as UNKNOWN,
# each from its own loopback address (127.0.1.N) so only the per-account
# throttle applies; prints "round N KNOWN_MS UNKNOWN_MS STATUS STATUS".
#   dos_logon_client.py PORT try USER PASSWORD ADDR
# One logon from ADDR; prints its status and time.
import socket
import sys
import time

sys.dont_write_bytecode = True
PORT = int(sys.argv[1])


def attempt(user, password, addr):
    from impacket.smbconnection import SMBConnection
    from impacket import nmb
    real = socket.socket

    class Bound(real):
        def connect(self, a):
            self.bind((addr, 0))
            return real.connect(self, a)
    socket.socket = Bound
    t0 = time.monotonic()
    try:
        c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT, timeout=20)
        c.login(user, password)
        st = "OK"
        c.close()
    except Exception as e:
        s = str(e)
        st = s.split()[0] if s.startswith("STATUS_") else \
            next((w for w in s.replace("(", " ").split()
                  if w.startswith("STATUS_")), s[:40])
    finally:
        socket.socket = real
    return int((time.monotonic() - t0) * 1000), st


def cmd_times(rounds, known, unknown):
    for i in range(int(rounds)):
        tk, sk = attempt(known, "wrong-%d" % i, "127.0.1.%d" % (2 * i + 10))
        tu, su = attempt(unknown, "wrong-%d" % i, "127.0.1.%d" % (2 * i + 11))
        print("round", i, tk, tu, sk, su)
        sys.stdout.flush()


def cmd_try(user, password, addr):
    t, st = attempt(user, password, addr)
    print(st, t)


if __name__ == "__main__":
    globals()["cmd_" + sys.argv[2]](*sys.argv[3:])
