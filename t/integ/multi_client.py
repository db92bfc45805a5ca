# Several users on one TCP connection (t/integ/multi.sh): impacket's SMB3
# object holds one session, so each user's session dict is kept and swapped
# in (message ids and credits stay with the connection, as on the wire).
#   argv: PORT DIALECT MODE [ARGS...]
#     DIALECT: 202, 21 or 30 (impacket derives 3.1.1 keys wrongly)
#     MODE two TAG: alice and bob on one connection: each writes a file of
#          its own, interleaved; alice is refused bob's 0600 "secret", bob
#          reads it; a byte-range lock of bob's refuses alice's read
#          until bob closes; bob's session logs off and alice goes on.
#     MODE kill TAG CMD...: alice and bob, then CMD runs (kills bob's
#          worker); alice goes on, bob's session is gone.
#     MODE many TAG USER:PW...: alice and each user on one connection,
#          every one writes its own file.
#     MODE refused: bob's session on alice's connection is refused
#          (ACCESS_DENIED).
# Prints one line "ok DESC" or "FAIL DESC: why" per check.
import copy
import subprocess
import sys

from impacket import smb3, smb3structs
from impacket.smb3structs import (FILE_READ_DATA, FILE_WRITE_DATA,
                                  FILE_SHARE_READ, FILE_SHARE_WRITE,
                                  FILE_OVERWRITE_IF, FILE_OPEN,
                                  FILE_NON_DIRECTORY_FILE)
from impacket.smbconnection import SessionError

PORT = int(sys.argv[1])
DIALECT = {"202": smb3structs.SMB2_DIALECT_002,
           "21": smb3structs.SMB2_DIALECT_21,
           "30": smb3structs.SMB2_DIALECT_30}[sys.argv[2]]
MODE = sys.argv[3]
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_USER_SESSION_DELETED = 0xC0000203
failed = 0


def check(desc, cond, why=""):
    global failed
    if not cond:
        failed += 1
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


class Multi:
    """One connection, a session dict per user."""

    def __init__(self):
        self.c = smb3.SMB3("127.0.0.1", "127.0.0.1", sess_port=PORT,
                           preferredDialect=DIALECT, timeout=30)
        self.fresh = copy.deepcopy(self.c._Session)
        self.sess = {}
        self.tree = {}

    def login(self, user, pw):
        self.c._Session = copy.deepcopy(self.fresh)
        self.c.login(user, pw)
        self.sess[user] = self.c._Session
        self.tree[user] = self.c.connectTree("share")

    def use(self, user):
        self.c._Session = self.sess[user]
        return self.tree[user]

    def write(self, user, name, data):
        t = self.use(user)
        f = self.c.create(t, name, FILE_READ_DATA | FILE_WRITE_DATA,
                          FILE_SHARE_READ | FILE_SHARE_WRITE,
                          FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
        self.c.write(t, f, data, 0, len(data))
        self.c.close(t, f)

    def read(self, user, name):
        t = self.use(user)
        f = self.c.create(t, name, FILE_READ_DATA, FILE_SHARE_READ, 0,
                          FILE_OPEN, 0)
        data = self.c.read(t, f, 0, 4096)
        self.c.close(t, f)
        return data


def status_of(fn):
    try:
        fn()
        return 0
    except SessionError as e:
        return e.get_error_code()
    except smb3.SessionError as e:
        return e.get_error_code()


def two(tag):
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    check("alice and bob on one connection",
          m.sess["alice"]["SessionID"] != m.sess["bob"]["SessionID"])
    for i in range(5):
        m.write("alice", "a_%s_%d.txt" % (tag, i), b"alice %d" % i)
        m.write("bob", "b_%s_%d.txt" % (tag, i), b"bob %d" % i)
    check("interleaved writes of both sessions",
          m.read("alice", "a_%s_4.txt" % tag) == b"alice 4" and
          m.read("bob", "b_%s_4.txt" % tag) == b"bob 4")
    st = status_of(lambda: m.read("alice", "secret"))
    check("alice is refused bob's 0600 file", st == STATUS_ACCESS_DENIED,
          "status %08x" % st)
    data = m.read("bob", "secret")
    check("bob reads his 0600 file", data == b"bob's secret\n", repr(data))
    # A byte-range lock of bob's holds alice's off until bob unlocks.
    tb = m.use("bob")
    fb = m.c.create(tb, "lock_%s" % tag, FILE_READ_DATA | FILE_WRITE_DATA,
                    FILE_SHARE_READ | FILE_SHARE_WRITE,
                    FILE_NON_DIRECTORY_FILE, FILE_OVERWRITE_IF, 0)
    m.c.write(tb, fb, b"x" * 100, 0, 100)
    lk = smb3structs.SMB2_LOCK_ELEMENT()
    lk["Offset"], lk["Length"] = 0, 10
    lk["Flags"] = smb3structs.SMB2_LOCKFLAG_EXCLUSIVE_LOCK | \
        smb3structs.SMB2_LOCKFLAG_FAIL_IMMEDIATELY
    req = smb3structs.SMB2Lock()
    req["LockCount"] = 1
    req["FileID"] = fb
    req["Locks"] = lk.getData()
    pkt = m.c.SMB_PACKET()
    pkt["Command"] = smb3structs.SMB2_LOCK
    pkt["TreeID"] = tb
    pkt["Data"] = req
    ans = m.c.recvSMB(m.c.sendSMB(pkt))
    check("bob locks a range", ans["Status"] == 0, "%08x" % ans["Status"])
    ta = m.use("alice")
    fa = m.c.create(ta, "lock_%s" % tag, FILE_READ_DATA,
                    FILE_SHARE_READ | FILE_SHARE_WRITE,
                    FILE_NON_DIRECTORY_FILE, FILE_OPEN, 0)
    st = status_of(lambda: m.c.read(ta, fa, 5, 1))
    check("alice's read in bob's locked range is refused",
          st == 0xC0000054, "status %08x" % st)  # FILE_LOCK_CONFLICT
    m.use("bob")
    m.c.close(tb, fb)
    ta = m.use("alice")
    st = status_of(lambda: m.c.read(ta, fa, 5, 1))
    check("alice reads once bob's handle is closed", st == 0,
          "status %08x" % st)
    try:
        m.c.close(ta, fa)
    except KeyError:
        pass    # impacket keeps one table of names for the connection
    m.use("bob")
    m.c.logoff()
    data = m.read("alice", "a_%s_0.txt" % tag)
    check("alice goes on after bob's logoff", data == b"alice 0")
    m.use("alice")
    m.c.logoff()


def kill(tag, cmd):
    m = Multi()
    m.login("alice", "alicepw1")
    m.login("bob", "bobpw1")
    m.write("bob", "k_%s_bob.txt" % tag, b"bob")
    subprocess.run(cmd, check=False)
    st = status_of(lambda: m.write("bob", "k_%s_bob2.txt" % tag, b"x"))
    check("bob's session ends with its worker",
          st == STATUS_USER_SESSION_DELETED, "status %08x" % st)
    m.write("alice", "k_%s_alice.txt" % tag, b"alice")
    check("alice goes on after bob's worker died",
          m.read("alice", "k_%s_alice.txt" % tag) == b"alice")


def many(tag, users):
    m = Multi()
    m.login("alice", "alicepw1")
    for u in users:
        name, pw = u.split(":")
        m.login(name, pw)
    ok = 0
    for u in users:
        name = u.split(":")[0]
        m.write(name, "m_%s_%s.txt" % (tag, name), name.encode())
        ok += m.read(name, "m_%s_%s.txt" % (tag, name)) == name.encode()
    m.write("alice", "m_%s_alice.txt" % tag, b"alice")
    check("%d users on one connection each wrote a file" % (len(users) + 1),
          ok == len(users), "%d of %d" % (ok, len(users)))


def refused():
    m = Multi()
    m.login("alice", "alicepw1")
    st = status_of(lambda: m.login("bob", "bobpw1"))
    check("bob's session refused on an unsigned connection",
          st == STATUS_ACCESS_DENIED, "status %08x" % st)
    m.c._Session = m.sess["alice"]
    m.write("alice", "refused_alice.txt", b"alice")
    check("alice goes on", m.read("alice", "refused_alice.txt") == b"alice")


if MODE == "two":
    two(sys.argv[4])
elif MODE == "kill":
    kill(sys.argv[4], sys.argv[5:])
elif MODE == "many":
    many(sys.argv[4], sys.argv[5:])
elif MODE == "refused":
    refused()
sys.exit(1 if failed else 0)
